"""Baselines that need no machine learning: the floor every model result is read against.

- ``majority``: the most frequent training answer (per word for tagging).
- ``random``: a seeded draw per item, uniform over the labels/options (``strategy=prior`` draws from the
  training distribution instead). The draw depends only on (seed, item input), not on batch or order, so
  resumed and cached runs give the same answers.
- ``constant``: one given answer (``label=...`` or, for choice tasks, ``index=...``).
- ``lookup``: the majority training answer of an identical input (per word for tagging), else the global
  majority — the lexical-memorisation baseline that exposes construction artifacts. ``key=expression``
  keys on the item's target expression instead (its lemma or string, on expression-level tasks): the
  majority label of the same PME in training, whatever the context (Boisson et al.'s artifact baseline).
  Where the input hides the expression (the ``masked`` view) the job is skipped with that reason: a
  baseline, like a model, reads only what the view shows.

None of them can generate text: they say so for generation tasks, which are skipped. ``majority``, ``lookup``
and ``random:strategy=prior`` learn from the training split, so tasks without one (the MUNCH judgement tasks,
NewsMet prompted choice) are skipped for them too: the only answer distribution such a task has is its test
labels', and reading it would leak them. ``random`` (uniform) and ``constant`` serve those tasks.
"""

from __future__ import annotations

import hashlib
import random
from collections import Counter, defaultdict

from ..errors import AdapterError, UnsupportedError
from ..requests import ChoiceRequest, ClassifyRequest, TagRequest, Training
from .base import Adapter, AdapterSettings


def _most_common(counter: Counter):
    """Most frequent value; ties broken by the value's sort order, so results never depend on data order."""
    best = max(counter.values())
    return min(value for value, count in counter.items() if count == best)


#: A baseline answers thousands of items in a millisecond: its answers are not cached per item
#: (``cache_answers``), and large batches keep the per-batch overhead (progress, timing) negligible.
BASELINE_BATCH = 4096


class _TrainedBaseline(Adapter):
    needs_training = True
    serves = (TagRequest, ClassifyRequest, ChoiceRequest)
    default_batch_size = BASELINE_BATCH
    cache_answers = False

    def _key(self, request):
        return request.key

    def fit(self, training: Training | None) -> None:
        self._check_training(training)
        self._global: Counter = Counter()
        self._by_key: dict = defaultdict(Counter)
        for request, gold in zip(training.requests, training.golds):
            if isinstance(request, TagRequest):
                for word, tag in zip(request.words, gold):
                    self._global[tag] += 1
                    self._by_key[word][tag] += 1
            else:
                self._global[gold] += 1
                self._by_key[self._key(request)][gold] += 1
        self._majority = _most_common(self._global)

    def _check_training(self, training: Training | None) -> None:
        if training is None or not training.golds:
            raise AdapterError(
                f"model '{self.name}' needs the task's training split, and this task has none",
                hint="give the task `splits.train`, or use --model constant / random",
            )


class Majority(_TrainedBaseline):
    name = "majority"
    seeded = False

    def fit(self, training: Training | None) -> None:
        """Counts the gold answers alone (per word for tagging, whose golds are tag sequences): the requests
        are never looked at, so the runner never renders them (``Training.requests`` is built on first use)."""
        self._check_training(training)
        golds = training.golds
        if any(issubclass(t, (list, tuple)) for t in set(map(type, golds))):
            self._global = Counter(tag for gold in golds for tag in (gold if isinstance(gold, (list, tuple)) else (gold,)))
        else:  # one label per item: counted in C (a Boisson training fold is ~10^4 golds, fitted per view and fold)
            self._global = Counter(golds)
        self._majority = _most_common(self._global)

    def reads_requests(self, request_type: type | None) -> bool:
        """Only a tag sequence's length (its words) is read; a label or an option index needs no request. A
        subclass with its own ``predict`` may read more, so it is given every request."""
        if type(self).predict is not Majority.predict:
            return True
        return request_type is None or issubclass(request_type, TagRequest)

    def predict(self, requests, seed):
        return [tuple(self._majority for _ in r.words) if isinstance(r, TagRequest) else self._majority for r in requests]


class Lookup(_TrainedBaseline):
    name = "lookup"
    seeded = False
    allowed_args = ("key",)

    def __init__(self, args, *, registry=None, settings: AdapterSettings | None = None):
        super().__init__(args, registry=registry, settings=settings)
        self.key_by = self.args.get("key", "input")
        if self.key_by not in ("input", "expression"):
            raise AdapterError(f"model 'lookup': key={self.key_by!r} is not 'input' or 'expression'",
                               hint="e.g. --model lookup:key=expression")

    def _key(self, request):
        if self.key_by == "input":
            return request.key
        expression = getattr(request, "expression", None)
        if expression is None:  # a skip, not a failure: the input does not show what this model keys on
            raise UnsupportedError(
                "model 'lookup:key=expression' keys on the target expression, and this task's input does not show "
                "it (a task without kind_args.marker: pme, or a view that hides it, such as masked)",
                hint="use plain lookup, which keys on the input the view shows",
                reason="the input hides the target expression",
            )
        return expression

    def _answer(self, key):
        counts = self._by_key.get(key)
        return _most_common(counts) if counts else self._majority

    def predict(self, requests, seed):
        return [
            tuple(self._answer(w) for w in r.words) if isinstance(r, TagRequest) else self._answer(self._key(r))
            for r in requests
        ]


class RandomBaseline(_TrainedBaseline):
    name = "random"
    needs_training = False  # the default uniform draw; strategy=prior learns from the training split
    allowed_args = ("strategy",)

    def __init__(self, args, *, registry=None, settings: AdapterSettings | None = None):
        super().__init__(args, registry=registry, settings=settings)
        self.strategy = self.args.get("strategy", "uniform")
        if self.strategy not in ("uniform", "prior"):
            raise AdapterError(f"model 'random': strategy={self.strategy!r} is not 'uniform' or 'prior'")
        self.needs_training = self.strategy == "prior"

    def fit(self, training):
        if self.strategy == "prior":
            super().fit(training)

    def _draw(self, rng: random.Random, choices):
        if self.strategy == "prior":
            values = sorted(self._global)
            return rng.choices(values, weights=[self._global[v] for v in values])[0]
        return rng.choice(list(choices))

    def predict(self, requests, seed):
        out = []
        for r in requests:
            digest = hashlib.sha256(f"{seed}\x00{r.key}".encode()).digest()
            rng = random.Random(int.from_bytes(digest[:8], "big"))
            if isinstance(r, TagRequest):
                out.append(tuple(self._draw(rng, r.labels) for _ in r.words))
            elif isinstance(r, ChoiceRequest):
                out.append(rng.randrange(len(r.options)))
            else:
                out.append(self._draw(rng, r.labels))
        return out


class Constant(Adapter):
    name = "constant"
    seeded = False
    serves = (TagRequest, ClassifyRequest, ChoiceRequest)
    default_batch_size = BASELINE_BATCH
    cache_answers = False
    allowed_args = ("label", "index")

    def __init__(self, args, *, registry=None, settings: AdapterSettings | None = None):
        super().__init__(args, registry=registry, settings=settings)
        if ("label" in self.args) == ("index" in self.args):
            raise AdapterError(
                "model 'constant' needs exactly one of label=... (tagging, classification) or index=... (choice)",
                hint="e.g. --model constant:label=literal",
            )

    def predict(self, requests, seed):
        out = []
        for r in requests:
            if isinstance(r, ChoiceRequest):
                if "index" not in self.args:
                    raise AdapterError("model 'constant' on a choice task needs index=N", hint="e.g. --model constant:index=0")
                out.append(int(self.args["index"]))
                continue
            label = self.args.get("label")
            if label is None or label not in r.labels:
                raise AdapterError(
                    f"model 'constant': label={label!r} is not one of the task's labels {list(r.labels)}",
                    hint=f"e.g. --model constant:label={r.labels[0]}" if r.labels else None,
                )
            out.append(tuple(label for _ in r.words) if isinstance(r, TagRequest) else label)
        return out
