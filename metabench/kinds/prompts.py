"""Prompt rendering for decoder tasks: sandboxed Jinja2 templates over an item's fields.

A task's ``protocol.decoder.template`` is a Jinja2 template. It is rendered in a
``jinja2.sandbox.SandboxedEnvironment`` with ``StrictUndefined`` (a misspelt field is an error naming the
fields that exist, never an empty string), no autoescaping and ``keep_trailing_newline`` (the template's
bytes are the prompt's bytes: what the YAML block holds is exactly what the model sees, so prompts can be
checked byte for byte against a paper).

Templates come from task files, which are input: the sandbox stops attribute tricks, and ``_Limited`` adds
what it lacks, bounds on size and time (``metabench.limits``). Repetition (``'a' * 2000000000``), powers,
concatenation and every call or filter with a huge count are refused before they allocate; the output is
streamed and cut at ``METABENCH_MAX_TEMPLATE_CHARS``; a render running longer than
``METABENCH_TEMPLATE_TIMEOUT_S`` is stopped (in the main thread, by a timer signal). ``validate`` renders
each template once on a probe item under the same limits (``probe_render``).

The fields are the item's dataclass fields (``sentence``, ``premise``, ``words``...), ``meta``, ``item``
itself, and whatever the task's *preparer* adds. Preparers are named, built-in functions (YAML never names
code by import path): they compute derived fields such as MUNCH's shuffled options and their gold letter.
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import re
import signal
import threading
from contextlib import contextmanager
from functools import lru_cache
from typing import Any, Callable

from pydantic import Field

from .. import limits
from ..errors import ConfigError, MetabenchError, did_you_mean
from .base import KindArgs

LETTERS = "ABCDEFGHIJ"


class TemplateLimitError(Exception):
    """A template went past a limit on untrusted text (size or time)."""


def _too_big(value: Any) -> bool:
    cap = limits.TEMPLATE_CHARS.value
    if isinstance(value, bool):
        return False
    if isinstance(value, int):
        return abs(value) > cap
    if isinstance(value, (str, bytes, list, tuple)):
        return len(value) > cap
    return False


def _wide_format(text: Any) -> bool:
    """A format string asking for a field wider than the limit (``'%2000000000s'``, ``'{:>2000000000}'``)."""
    return isinstance(text, str) and any(int(run) > limits.TEMPLATE_CHARS.value for run in re.findall(r"\d{7,}", text))


def _checked(fn: Callable) -> Callable:
    """A filter or callable that refuses arguments or results past the size limit."""

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        if any(_too_big(a) for a in (*args, *kwargs.values()) if isinstance(a, int)) or (
                fn.__name__ == "do_format" and args and _wide_format(args[0])):
            raise TemplateLimitError(f"a count above {limits.TEMPLATE_CHARS.value:,.0f} was passed to '{fn.__name__}'")
        result = fn(*args, **kwargs)
        if _too_big(result):
            raise TemplateLimitError(f"'{fn.__name__}' made a value longer than {limits.TEMPLATE_CHARS.value:,.0f}")
        return result

    return wrapper


def _environment_class():
    from jinja2.sandbox import SandboxedEnvironment

    class _Limited(SandboxedEnvironment):
        """The sandbox with size checks on the operators and calls that can allocate without bound."""

        intercepted_binops = frozenset({"*", "**", "+", "%"})

        def __init__(self, **kwargs):
            super().__init__(**kwargs)
            self.filters = {name: _checked(fn) for name, fn in self.filters.items()}

        def call_binop(self, context, operator, left, right):
            if operator == "%" and _wide_format(left):
                raise TemplateLimitError(f"a '%' format wider than {limits.TEMPLATE_CHARS.value:,.0f}")
            if operator == "**" and isinstance(right, (int, float)) and abs(right) > 64:
                raise TemplateLimitError(f"an exponent of {right} (at most 64)")
            if operator == "*":
                count, seq = (left, right) if isinstance(left, int) else (right, left)
                if isinstance(count, int) and isinstance(seq, (str, list, tuple)) and len(seq) * count > limits.TEMPLATE_CHARS.value:
                    raise TemplateLimitError(f"a repetition making {len(seq) * count:,} items")
            if operator == "+" and isinstance(left, (str, list, tuple)) and isinstance(right, type(left)):
                if len(left) + len(right) > limits.TEMPLATE_CHARS.value:
                    raise TemplateLimitError(f"a concatenation making {len(left) + len(right):,} items")
            return super().call_binop(context, operator, left, right)

        def wrap_str_format(self, value):
            wrapped = super().wrap_str_format(value)
            if wrapped is not None and _wide_format(value.__self__):
                raise TemplateLimitError(f"a format wider than {limits.TEMPLATE_CHARS.value:,.0f}")
            return wrapped

        def call(__self, __context, __obj, *args, **kwargs):  # noqa: N805 - jinja's signature
            if any(_too_big(a) for a in (*args, *kwargs.values()) if isinstance(a, int)):
                raise TemplateLimitError(f"a count above {limits.TEMPLATE_CHARS.value:,.0f} passed to a call")
            result = super().call(__context, __obj, *args, **kwargs)
            if _too_big(result):
                raise TemplateLimitError(f"a call made a value longer than {limits.TEMPLATE_CHARS.value:,.0f}")
            return result

    return _Limited


@lru_cache(maxsize=1)
def environment():
    from jinja2 import StrictUndefined

    return _environment_class()(undefined=StrictUndefined, keep_trailing_newline=True, autoescape=False)


def _checked_join(join: Callable) -> Callable:
    """The ``~`` operator (jinja's ``str_join``): ``{% set ns.s = ns.s ~ ns.s %}`` in a loop doubles a string."""

    def str_join(seq):
        result = join(seq)
        if len(result) > limits.TEMPLATE_CHARS.value:
            raise TemplateLimitError(f"a '~' concatenation made {len(result):,} characters")
        return result

    return str_join


@lru_cache(maxsize=512)
def compile_template(source: str):
    template = environment().from_string(source)
    namespace = template.root_render_func.__globals__  # the compiled module's globals, shared by its blocks
    namespace["str_join"] = _checked_join(namespace["str_join"])
    return template


@contextmanager
def _deadline(seconds: float):
    """Interrupt the render after ``seconds`` (a timer signal: main thread only; elsewhere unbounded)."""
    if threading.current_thread() is not threading.main_thread() or not hasattr(signal, "setitimer"):
        yield
        return

    def expired(signum, frame):
        raise TemplateLimitError(f"rendering took longer than {seconds:g} s")

    previous = signal.signal(signal.SIGALRM, expired)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def _render_limited(template, fields: dict[str, Any]) -> str:
    cap = limits.TEMPLATE_CHARS.value
    parts, size = [], 0
    with _deadline(limits.TEMPLATE_SECONDS.value):
        for chunk in template.generate(**fields):
            size += len(chunk)
            if size > cap:
                raise TemplateLimitError(f"the output passed {cap:,.0f} characters")
            parts.append(chunk)
    return "".join(parts)


def check_template(source: str, where: str) -> None:
    """Raise ConfigError (naming ``where``) if the template does not compile."""
    from jinja2 import TemplateSyntaxError

    try:
        compile_template(source)
    except TemplateSyntaxError as exc:
        raise ConfigError(
            f"{where}: the prompt template does not compile: {exc.message} (template line {exc.lineno})",
            hint="templates are Jinja2: fields in {{ ... }}, statements in {% ... %}",
        ) from None


def item_fields(item) -> dict[str, Any]:
    """The template namespace of an item: its dataclass fields, ``item`` and a few conveniences."""
    fields: dict[str, Any] = {}
    if dataclasses.is_dataclass(item):
        fields.update({f.name: getattr(item, f.name) for f in dataclasses.fields(item)})
    elif isinstance(item, dict):
        fields.update(item)
    else:
        fields.update(vars(item))
    if "words" in fields and "text" not in fields:
        fields["text"] = " ".join(fields["words"])
    fields["item"] = item
    return fields


def render(source: str, fields: dict[str, Any], *, what: str = "prompt") -> str:
    """Render a template; a missing field raises a MetabenchError listing the available ones."""
    from jinja2 import UndefinedError
    from jinja2.exceptions import SecurityError

    try:
        return _render_limited(compile_template(source), fields)
    except TemplateLimitError as exc:
        raise MetabenchError(
            f"{what} template: stopped, {exc}",
            hint=f"limits on untrusted templates: {limits.TEMPLATE_CHARS.env} (characters), "
            f"{limits.TEMPLATE_SECONDS.env} (seconds); see docs/reliability.md",
        ) from None
    except UndefinedError as exc:
        names = sorted(k for k in fields if k != "item")
        missing = str(exc.message or "").split("'")
        guess = did_you_mean(missing[1], names) if len(missing) > 2 else ""
        raise MetabenchError(
            f"{what} template: {exc.message}{guess}",
            hint=f"fields available for this item: {', '.join(names)}",
        ) from None
    except SecurityError as exc:
        raise MetabenchError(f"{what} template: refused by the sandbox: {exc}",
                             hint="templates may read an item's fields, not call into Python") from None
    except (RecursionError, MemoryError, OverflowError) as exc:
        raise MetabenchError(f"{what} template: stopped, {type(exc).__name__}",
                             hint="simplify the template (a recursive macro? a huge number?)") from None
    except Exception as exc:  # noqa: BLE001 - a template is input: any failure in it is the task file's fault
        raise MetabenchError(f"{what} template: {type(exc).__name__}: {exc}",
                             hint="fix the template in the task file (docs/decoders.md shows the fields)") from None


class _Probe(str):
    """A stand-in for any item field: indexable, iterable (three probes), with any attribute; used to render a
    template once in ``validate`` without the dataset."""

    def __new__(cls, text: str = "probe"):
        return super().__new__(cls, text)

    def __getattr__(self, name: str):
        if name.startswith("__"):
            raise AttributeError(name)
        return _Probe(f"{self}.{name}")

    def __getitem__(self, key):
        return _Probe(f"{self}[{key!r}]")

    def __iter__(self):
        return iter([_Probe(f"{self}[{i}]") for i in range(3)])

    def __len__(self):
        return 3


def probe_render(source: str, where: str, *, what: str = "prompt") -> None:
    """Render a template once on probe values under the limits: a template that would blow up on every item
    is a config error at `validate` time, naming the file:line, not a crash hours into a run."""
    from jinja2 import meta

    names = meta.find_undeclared_variables(environment().parse(source))
    try:
        render(source, {name: _Probe(name) for name in names}, what=what)
    except MetabenchError as exc:
        if any(word in exc.message for word in ("stopped", "refused by the sandbox", "is unsafe")):
            raise ConfigError(f"{where}: {exc.message}", hint=exc.hint) from None


# ------------------------------------------------------------------------------------------- preparers


def coin(seed: int, key: str) -> bool:
    """A fair, seeded coin per key: the same answer on every machine and in every order."""
    return bool(hashlib.sha256(f"{seed}\x00{key}".encode()).digest()[0] & 1)


def munch_judgement(item, seed: int) -> dict[str, Any]:
    """MUNCH paraphrase judgement: shuffle the two candidates (the release lists the apt one first and asks
    users to shuffle), then map the gold: apt+inapt → the letter of the apt option, apt+apt → C,
    inapt+inapt → D. The order is a seeded coin per item id, so it is fixed, logged (the seed is in the task
    config) and identical across the three prompts and the three conditions of a setup."""
    options, labels = tuple(item.options), tuple(item.labels)
    if len(options) != 2 or len(labels) != 2:
        raise MetabenchError(f"MUNCH item '{item.id}': expected 2 options with 2 labels, got {options!r} / {labels!r}")
    swapped = coin(seed, item.id)
    if swapped:
        options, labels = options[::-1], labels[::-1]
    if labels == ("apt", "apt"):
        gold = 2
    elif labels == ("inapt", "inapt"):
        gold = 3
    elif set(labels) == {"apt", "inapt"}:
        gold = labels.index("apt")
    else:
        raise MetabenchError(f"MUNCH item '{item.id}': labels must be apt/inapt, got {labels!r}")
    expected = {"apt_apt": 2, "inapt_inapt": 3}.get(getattr(item, "answer_type", ""), None)
    if expected is not None and expected != gold:
        raise MetabenchError(f"MUNCH item '{item.id}': answer_type {item.answer_type} disagrees with labels {labels!r}")
    return {
        "option_a": options[0],
        "option_b": options[1],
        "swapped": swapped,
        "gold": gold,
        "gold_letter": LETTERS[gold],
    }


def highlight(sentence: str, span: tuple[int, int], inner: str | None = None, mark: str = "*") -> str:
    start, end = span
    return f"{sentence[:start]}{mark}{sentence[start:end] if inner is None else inner}{mark}{sentence[end:]}"


def munch_generation(item, seed: int) -> dict[str, Any]:
    """MUNCH paraphrase generation (Table 8): the sentence with the target highlighted ``*word*`` and the
    copy with the target replaced by ``*[blank]*`` (the release's ``{tw_replaced_by_blank}``)."""
    span = tuple(item.span)
    return {
        "highlighted": highlight(item.sentence, span),
        "blanked": highlight(item.sentence, span, "[blank]"),
        "gold": tuple(item.answers),
    }


def target_word(item, seed: int) -> dict[str, Any]:
    """A target-word item (VUA-Verb, MOH-X, TroFi: is this word metaphorical here?): ``sentence``, the ``target``
    as it appears in it (its character spans, else the whitespace word at ``target_index``, as the encoders'
    ``<PME>`` marker finds it) and ``marked``, the sentence with the target between asterisks."""
    from .views import expression_span

    span = expression_span(item, item.text)
    return {"sentence": item.text, "target": item.text[span[0]:span[1]], "marked": highlight(item.text, span)}


def sentence_words(item, seed: int) -> dict[str, Any]:
    """Token tagging by generation: the sentence as one string (words joined by spaces)."""
    return {"sentence": " ".join(item.words), "gold": tuple(item.tags)}


PREPARERS: dict[str, Callable[[Any, int], dict[str, Any]]] = {
    "munch_judgement": munch_judgement,
    "munch_generation": munch_generation,
    "sentence_words": sentence_words,
    "target_word": target_word,
}


def get_preparer(name: str | None, where: str = "kind_args.prepare"):
    if name is None:
        return None
    try:
        return PREPARERS[name]
    except KeyError:
        raise ConfigError(
            f"{where}: unknown preparer '{name}'{did_you_mean(name, PREPARERS)}",
            hint=f"built-in preparers: {', '.join(sorted(PREPARERS))}",
        ) from None


# --------------------------------------------------------------------------------------- prompted kinds


class PromptedMixin:
    """What the choice and generation kinds share: the decoder prompt, the preparer and few-shot examples."""

    FEWSHOT_SEED = 1234
    FEWSHOT_DELIMITER = "\n\n"

    @classmethod
    def check_prompt(cls, config, raw) -> None:
        decoder = config.protocol.decoder
        if decoder is None or decoder.template is None:
            raise ConfigError(
                f"{raw.where('protocol')}: kind '{config.kind}' builds prompts: it needs `protocol.decoder.template`",
                hint="e.g. protocol: {decoder: {template: \"Sentence: {{ sentence }}\\nAnswer:\"}}",
            )
        for key in ("template", "system"):
            source = getattr(decoder, key)
            if source is not None:
                check_template(source, raw.where("protocol", "decoder", key))
                probe_render(source, raw.where("protocol", "decoder", key), what="prompt" if key == "template" else key)
        get_preparer(config.kind_args.get("prepare"), raw.where("kind_args", "prepare"))

    @property
    def decoder(self):
        return self.config.protocol.decoder

    def fields(self, item) -> dict[str, Any]:
        fields = item_fields(item)
        preparer = get_preparer(self.args.prepare)
        if preparer is not None:
            fields.update(preparer(item, self.args.shuffle_seed))
        return fields

    def prompt(self, item) -> str:
        text = render(self.decoder.template, self.fields(item))
        shots = getattr(self, "_shots", None)
        if shots:
            return self.FEWSHOT_DELIMITER.join([*shots, text])
        return text

    def system_prompt(self, item) -> str | None:
        return None if self.decoder.system is None else render(self.decoder.system, self.fields(item), what="system")

    def fewshot_target(self, item) -> str:
        """The answer text appended to a few-shot example (kinds override)."""
        raise NotImplementedError

    def fit_context(self, train_items: list) -> None:
        """Few-shot examples: ``protocol.decoder.fewshot`` training items, drawn once with a fixed seed, unless
        the task names ``splits.fewshot`` (then :meth:`fit_fewshot` draws them from that split)."""
        self._draw_shots([] if self.config.splits.fewshot is not None else train_items)

    def fit_fewshot(self, items: list) -> None:
        """Few-shot examples drawn from the task's ``splits.fewshot`` items, as :meth:`fit_context` would from train."""
        self._draw_shots(items)

    def use_shots(self, k: int) -> None:
        """``shots=K`` (a decoder's argument, metabench.answering): K demonstrations per prompt instead of the
        section's ``fewshot``, drawn again for every seed (:meth:`reseed`) from the pool the task gives (its
        training split: for a fold of a k-fold benchmark, that fold's training folds, never its test items)."""
        self._per_seed_shots = k

    def reseed(self, seed: int) -> bool:
        """Draw this seed's demonstrations (with ``shots=K``); whether requests now differ from another seed's."""
        k = getattr(self, "_per_seed_shots", None)
        if k is None:
            return False
        self._select(self._pool, k, random_state=seed)
        return True

    def demonstrations(self) -> list[str]:
        """The ids of the items shown as demonstrations, in prompt order."""
        return [str(item.id) for item in getattr(self, "_chosen", [])]

    def _draw_shots(self, pool: list) -> None:
        self._pool = list(pool)
        k = getattr(self, "_per_seed_shots", None)
        if k is None:
            k = self.decoder.fewshot if self.decoder is not None else 0
        self._select(self._pool, k, random_state=self.FEWSHOT_SEED)

    def _select(self, pool: list, k: int, *, random_state: int) -> None:
        import random

        self._chosen = random.Random(random_state).sample(pool, min(k, len(pool))) if k and pool else []
        self._shots = [render(self.decoder.template, self.fields(i)) + self.fewshot_target(i) for i in self._chosen]


class PromptedArgs(KindArgs):
    """kind_args every prompted kind takes."""

    prepare: str | None = Field(
        None, description="built-in item preparer adding template fields and the gold (munch_judgement, munch_generation, sentence_words)"
    )
    shuffle_seed: int = Field(20240311, description="seed of preparers that shuffle options (logged in the config)")
