"""The adapter interface: how a model backend answers requests.

An adapter belongs to a *family* — ``encoder`` (fine-tuned in-suite), ``decoder`` (prompted/scored) or
``baseline`` — which picks the task's protocol section. The runner calls ``fit`` once per (task, seed)
only when some item still needs an answer, then ``predict`` on batches. Adapters never read task YAML.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from typing import Any, ClassVar

from ..errors import AdapterError, UnsupportedError
from ..requests import Request, Training


@dataclass(frozen=True)
class AdapterSettings:
    """Run-wide settings an adapter is built with (plain values, so a job description can be pickled).

    ``use_cache``: whether persistent caches may be read and written (``--no-cache`` turns it off: e.g.
    fine-tuned checkpoints then live in a temporary folder). ``progress``: whether to show progress bars.
    """

    use_cache: bool = True
    progress: bool = True


class Adapter:
    """Base class. ``args`` are the ``--model name:k=v,...`` arguments, already split into a dict.

    ``registry`` is the run's registry (what registered short names such as ``pretrained=minilm-l6`` and metric
    names resolve against; None for an adapter used on its own, which then accepts only local paths) and
    ``settings`` the run-wide :class:`AdapterSettings`. :func:`metabench.models.spec.build_adapter` passes both;
    a subclass that defines ``__init__`` takes them as keyword arguments and hands them on to ``super()``.
    """

    name: ClassVar[str] = ""
    family: ClassVar[str] = "baseline"
    #: Request types this adapter can answer; anything else is refused with a clear error.
    serves: ClassVar[tuple[type, ...]] = ()
    #: Argument a bare value fills: ``hf:minilm-l6`` means ``hf:pretrained=minilm-l6``.
    positional_arg: ClassVar[str | None] = None
    #: False for deterministic adapters: they run one seed whatever the task asks.
    seeded: ClassVar[bool] = True
    #: True when ``fit`` needs the training split.
    needs_training: ClassVar[bool] = False
    allowed_args: ClassVar[tuple[str, ...]] = ()
    #: Items per ``predict`` call unless ``batch_size=`` says otherwise; a batch is also what the answer cache
    #: commits at once (what a killed run loses at most).
    default_batch_size: ClassVar[int] = 64
    #: False when answering costs less than storing the answers: the baselines. Their per-item answers then
    #: skip the answer cache (~450k SQLite rows were 20 of the 116 s of a cold ``--tasks all --model
    #: majority``); a finished job is still remembered whole (:mod:`metabench.job_memo`).
    cache_answers: ClassVar[bool] = True

    def __init__(self, args: dict[str, str], *, registry=None, settings: AdapterSettings | None = None):
        self.check_args(args)
        self.args = dict(args)
        self.registry = registry
        settings = settings or AdapterSettings()
        self.use_cache = settings.use_cache
        self.progress = settings.progress

    @classmethod
    def check_args(cls, args: dict[str, str]) -> None:
        """An argument the adapter does not take is an error naming the closest one it does, and a budget or
        decoding argument out of its bounds (``training_budget.BOUNDS``: ``epochs=inf``, ``beams=100000``) is an
        error too. Called before any job runs (bad usage, not a failed job) and again when the adapter is built."""
        allowed = cls.accepted_args()
        unknown = sorted(set(args) - set(allowed))
        if unknown:
            from ..errors import did_you_mean

            raise AdapterError(
                f"model '{cls.name}' takes no argument '{unknown[0]}'{did_you_mean(unknown[0], allowed)}",
                hint=f"its arguments are: {', '.join(allowed) or '(none)'}",
            )
        from .training_budget import check_budget_args

        check_budget_args(args)

    @classmethod
    def accepted_args(cls) -> tuple[str, ...]:
        """The argument names :meth:`check_args` accepts: ``allowed_args``, unless the class hands over to
        others (``hf``)."""
        return cls.allowed_args

    def reads_requests(self, request_type: type | None) -> bool:
        """Whether ``predict`` looks at requests of this type (default: yes; ``None``: a kind that does not
        declare its type). An adapter answering from its fitted state alone says no and is given ``None`` per
        item: the runner then renders no prompts or inputs (~400k classification inputs in `--tasks all`)."""
        return True

    def check_request_type(self, request_type: type, task: str) -> None:
        if not issubclass(request_type, self.serves):
            served = ", ".join(t.__name__ for t in self.serves) or "nothing"
            raise UnsupportedError(
                f"model '{self.name}' cannot serve task '{task}': it answers {served}, the task sends "
                f"{request_type.__name__}",
                hint="choose another --model for this task, or leave the task out of --tasks",
                reason=f"cannot answer {request_type.__name__}",
            )

    def fingerprint(self) -> str:
        """Identifies the model's answers: the cache never mixes two fingerprints."""
        payload = json.dumps({"adapter": self.name, "args": self.args}, sort_keys=True)
        return hashlib.sha256(payload.encode()).hexdigest()

    def task_fingerprint(self, protocol) -> str:
        """The fingerprint of this model's answers on a task whose protocol section for the adapter's family is
        ``protocol``: :meth:`fingerprint`, unless the adapter reads a setting the task's config hash leaves out
        (``protocol.encoder.search``, read only by a model that switches the search on)."""
        return self.fingerprint()

    def info(self) -> dict[str, Any]:
        """Facts about the model recorded in results.json."""
        return {}

    def fit(self, training: Training | None) -> None:
        """Prepare for one (task, seed). ``training`` is None when the task has no training split."""

    def predict(self, requests: list[Request], seed: int) -> list[Any]:
        raise NotImplementedError

    def batch_size(self) -> int:
        return int(self.args.get("batch_size", self.default_batch_size))
