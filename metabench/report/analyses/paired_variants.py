"""Paired metaphor effect: one model on the same items with their metaphor (``original``) and without it
(``paraphrase_<generator>``), over the item ids both runs hold.

`compare` pairs runs of *one* task and refuses two tasks; `gaps` tests two tasks as *independent* item
sets. Variant tasks are neither: two tasks whose items share ids because they are the same items rewritten
(``metaphor_llm_paraphrases``: an original and its literal paraphrases share ``<set>:<row>``). That is the
strongest design for a metaphor effect — each item is its own control — so it gets paired tests:

- both runs have the same 2+ seeds: a paired t-test on the per-seed accuracies over the shared ids;
- otherwise one seed each: McNemar's exact test on per-item correctness, with a paired bootstrap CI of
  the accuracy change.

The effect is ``metaphor - literal`` (original minus paraphrase), the sign convention of the unpaired gaps:
negative = metaphors are harder. Items only one side holds (the IMPLI Mistral file lacks 5 originals) are
left out and counted. Gold answers must agree on every shared id, else the runs are not variants of one
item set and this refuses.

Variant tasks are found by name: a task with the part ``original`` pairs with the task named the same with
``paraphrase_<generator>`` in its place (``mlp_impli_original_nli_zero`` ↔
``mlp_impli_paraphrase_mistral_nli_zero``).
"""

from __future__ import annotations

from functools import partial

from dataclasses import asdict, dataclass, field

from ...errors import MetabenchError
from ...runs.align import AlignmentError, check_same_gold, describe, item_rows
from ..compare import CORRECTIONS, _finite, correction_phrase, format_p
from ...runs.stored import Run

ORIGINAL, PARAPHRASE = "original", "paraphrase"


@dataclass
class VariantEffect:
    """Accuracy on the metaphorical originals minus accuracy on their literal paraphrases, same items."""

    model: str
    original_task: str
    paraphrase_task: str
    n_items: int
    only_original: int
    only_paraphrase: int
    seeds: list[int]
    accuracy_original: float
    accuracy_paraphrase: float
    effect: float
    ci_low: float | None
    ci_high: float | None
    test: str
    statistic: float | None
    pvalue: float | None
    discordant: dict = field(default_factory=dict)
    p_adjusted: float | None = None
    notes: list[str] = field(default_factory=list)

    def as_dict(self) -> dict:
        return asdict(self)


def generator(task: str) -> str | None:
    """The paraphrase generator a variant task names (``..._paraphrase_mistral_...`` -> ``mistral``)."""
    tokens = task.split("_")
    for i, token in enumerate(tokens[:-1]):
        if token == PARAPHRASE:
            return tokens[i + 1]
    return None


def is_variant_of(original: str, paraphrase: str) -> bool:
    """Whether ``paraphrase`` is ``original`` with its ``original`` part replaced by ``paraphrase_<gen>``."""
    tokens = original.split("_")
    gen = generator(paraphrase)
    if ORIGINAL not in tokens or gen is None:
        return False
    i = tokens.index(ORIGINAL)
    return "_".join(tokens[:i] + [PARAPHRASE, gen] + tokens[i + 1:]) == paraphrase


def variant_pairs(runs: list[Run]) -> list[tuple[Run, Run]]:
    """(original run, paraphrase run) of every model on every pair of variant tasks among ``runs``, in the order
    of ``runs``. Only runs of one model can pair, so each run is set against its model's runs alone (823
    committed runs: ~680,000 pairs of every run with every other, ~116,000 within a model)."""
    by_model: dict[str, list[Run]] = {}
    for run in runs:
        by_model.setdefault(run.record.model.spec, []).append(run)
    return [(a, b) for a in runs for b in by_model[a.record.model.spec] if is_variant_of(a.record.task.name, b.record.task.name)]


def shared_correctness(original: Run, paraphrase: Run) -> tuple[list[str], list[tuple], list[tuple], int, int]:
    """(shared ids, per-seed correctness of each shared item in each run, #only-original, #only-paraphrase)."""
    rows_o, rows_p = item_rows(original), item_rows(paraphrase)
    shared = sorted(rows_o.keys() & rows_p.keys())
    if not shared:
        raise AlignmentError(
            f"{describe(original)} (task '{original.record.task.name}') and {describe(paraphrase)} (task '{paraphrase.record.task.name}') "
            "share no item id, so they are not variants of one item set",
            hint="--paired-variants compares an original task with its paraphrase task (same ids); "
                 "use --gap for two different item sets",
        )
    check_same_gold(shared, rows_o, rows_p,
                    lambda wrong: f"{len(wrong)} shared item id(s) have different gold answers in '{original.record.task.name}' "
                                  f"and '{paraphrase.record.task.name}', e.g. {wrong[:3]}: the tasks are not variants of the same "
                                  "items",
                    hint="variant tasks must rewrite the same items and keep their gold labels")
    for run, rows in ((original, rows_o), (paraphrase, rows_p)):
        if any("correct" not in r["scores"] for i in shared for r in rows[i]):
            raise MetabenchError(f"{describe(run)}: samples have no per-item 'correct' score, so no accuracy change")
    correct_o = [tuple(r["scores"]["correct"] for r in rows_o[i]) for i in shared]
    correct_p = [tuple(r["scores"]["correct"] for r in rows_p[i]) for i in shared]
    return shared, correct_o, correct_p, len(rows_o.keys() - rows_p.keys()), len(rows_p.keys() - rows_o.keys())


def paired_effect(original: Run, paraphrase: Run, *, confidence: float = 0.95, n_resamples: int = 10_000,
                  seed: int = 0) -> VariantEffect:
    """The paired metaphor effect of one model (rules in the module docstring)."""
    from ...stats import mcnemar, paired_bootstrap, paired_t  # noqa: PLC0415

    if original.record.model.spec != paraphrase.record.model.spec:
        raise MetabenchError(
            f"a paired metaphor effect compares one model on two variants, but the runs are models "
            f"'{original.record.model.spec}' and '{paraphrase.record.model.spec}'",
            hint="pass one model's runs on the original task and on a paraphrase task",
        )
    shared, correct_o, correct_p, only_o, only_p = shared_correctness(original, paraphrase)
    n = len(shared)
    effect_of = partial(VariantEffect, model=original.record.model.spec, original_task=original.record.task.name,
                        paraphrase_task=paraphrase.record.task.name, n_items=n, only_original=only_o, only_paraphrase=only_p)
    if len(original.record.seeds) >= 2 and original.record.seeds == paraphrase.record.seeds:
        k = len(original.record.seeds)
        acc_o = [sum(c[j] for c in correct_o) / n for j in range(k)]
        acc_p = [sum(c[j] for c in correct_p) / n for j in range(k)]
        result = paired_t(acc_p, acc_o, confidence=confidence)  # B - A = original - paraphrase
        effect = effect_of(
            seeds=original.record.seeds, accuracy_original=sum(acc_o) / k, accuracy_paraphrase=sum(acc_p) / k,
            effect=result.mean_difference, ci_low=_finite(result.ci_low), ci_high=_finite(result.ci_high),
            test="paired_t", statistic=_finite(result.statistic), pvalue=_finite(result.pvalue),
        )
        if result.note:
            effect.notes.append(result.note)
        return effect
    if len(original.record.seeds) != 1 or len(paraphrase.record.seeds) != 1:
        raise MetabenchError(
            f"{describe(original)} has seeds {original.record.seeds} and {describe(paraphrase)} has seeds "
            f"{paraphrase.record.seeds}: a paired effect needs one seed each (McNemar) or the same 2+ seeds (paired t)",
            hint="rerun both with the same --seeds (answers already computed come from the cache)",
        )
    flat_o, flat_p = [bool(c[0]) for c in correct_o], [bool(c[0]) for c in correct_p]
    test = mcnemar(flat_p, flat_o)  # b: paraphrase right, original wrong
    boot = paired_bootstrap(flat_p, flat_o, "mean", n_resamples=n_resamples, seed=seed, confidence=confidence)
    return effect_of(
        seeds=[original.record.seeds[0]], accuracy_original=sum(flat_o) / n, accuracy_paraphrase=sum(flat_p) / n,
        effect=boot.delta, ci_low=boot.ci_low, ci_high=boot.ci_high, test="mcnemar", statistic=float(test.statistic),
        pvalue=float(test.pvalue),
        discordant={"literal_right_metaphor_wrong": test.b, "metaphor_right_literal_wrong": test.c},
    )


def format_effects(effects: list[VariantEffect], *, correction: str, alpha: float, confidence: float) -> str:
    from tabulate import tabulate  # noqa: PLC0415

    rows = []
    for e in effects:
        significant = e.p_adjusted is not None and e.p_adjusted <= alpha
        rows.append([
            e.model, e.original_task, e.paraphrase_task, e.n_items, f"{e.accuracy_original:.4f}",
            f"{e.accuracy_paraphrase:.4f}", f"{e.effect:+.4f}",
            "—" if e.ci_low is None else f"[{e.ci_low:+.4f}, {e.ci_high:+.4f}]", e.test, format_p(e.pvalue),
            format_p(e.p_adjusted) + (" *" if significant else ""),
        ])
    name = CORRECTIONS[correction][0]
    headers = ["model", "original (metaphor)", "paraphrase (literal)", "shared items", "acc original",
               "acc paraphrase", "effect (orig−para)", f"{confidence:.0%} CI", "test", "p", f"p ({name})"]
    lines = [tabulate(rows, headers=headers, disable_numparse=True), ""]
    lines.append(f"PAIRED: the same items with and without the metaphor; {correction_phrase(correction, len(effects))}; "
                 f"* = significant at alpha {alpha}; negative effect = metaphors harder.")
    for e in effects:
        if e.only_original or e.only_paraphrase:
            lines.append(f"note: {e.model} {e.paraphrase_task}: {e.only_original} item(s) only in the original run, "
                         f"{e.only_paraphrase} only in the paraphrase run, left out")
        lines.extend(f"note: {e.model} {e.paraphrase_task}: {n}" for n in e.notes)
    return "\n".join(lines)
