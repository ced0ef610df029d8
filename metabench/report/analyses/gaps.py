"""Subset gaps: how a model's accuracy on metaphorical items differs from its accuracy on the others.

Meta4XNLI's core interpretation finding is that NLI accuracy on pairs with metaphors ("met") is below
accuracy on pairs without ("no met"). The two subsets hold *different* items, so no paired test applies:
the gap is tested as two independent proportions, with the pooled two-proportion z-test and Fisher's exact
test (the one to trust for small subsets), and its CI is Newcombe's hybrid score interval.

The gap is ``B - A``: subset run minus reference run (met minus no-met, metaphor minus literal), so a
negative gap means metaphors are harder. Runs with several seeds give one gap per seed: pooling seeds
would count each item several times as if they were independent observations.

Subset tasks are found by name: a task whose name has the part ``no_met`` (or ``nomet``, or ``literal``) is
paired with the task named the same with ``met`` (or ``metaphor``) in its place, e.g.
``m4x_nli_zs_en_xnli_dev_no_met`` and ``m4x_nli_zs_en_xnli_dev_met``; ``..._literal`` also pairs with
``..._figurative`` (IMPLI contexts) and with each FLUTE type (``..._simile``, ``..._idiom``, ``..._sarcasm``).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

from ...errors import MetabenchError
from ...stats import fisher_exact, proportion_difference_ci, two_proportion_z
from ...runs.align import describe, item_rows
from ..compare import CORRECTIONS, correction_phrase, format_p
from ...runs.stored import Run

#: (reference, subset) parts of task names: ``..._no_met`` pairs with ``..._met`` (the built-in Meta4XNLI tasks)
SUBSET_TOKENS = (("no_met", "met"), ("nomet", "met"), ("literal", "metaphor"), ("literal", "figurative"),
                 ("literal", "simile"), ("literal", "idiom"), ("literal", "sarcasm"))


@dataclass
class Gap:
    """Accuracy on subset task B minus accuracy on reference task A, for one model at one seed."""

    model: str
    reference_task: str
    subset_task: str
    seed: int
    correct_a: int
    n_a: int
    correct_b: int
    n_b: int
    accuracy_a: float
    accuracy_b: float
    gap: float
    ci_low: float
    ci_high: float
    z: float
    p_z: float
    pvalue: float  # Fisher's exact test
    p_adjusted: float | None = None

    def as_dict(self) -> dict:
        return asdict(self)


def subset_pairs(task_names) -> list[tuple[str, str]]:
    """(reference task, subset task) pairs among ``task_names``, by the naming convention above."""
    names = set(task_names)
    pairs = []
    for name in sorted(names):
        tokens = name.split("_")
        for reference, subset in SUBSET_TOKENS:
            part = reference.split("_")
            for i in range(len(tokens) - len(part) + 1):
                other = "_".join(tokens[:i] + subset.split("_") + tokens[i + len(part):])
                if tokens[i:i + len(part)] == part and other in names:
                    pairs.append((name, other))
    return pairs


def _correctness(run: Run) -> dict[str, tuple[float, ...]]:
    rows = item_rows(run)
    if any("correct" not in r["scores"] for slots in rows.values() for r in slots):
        raise MetabenchError(f"{describe(run)}: samples have no per-item 'correct' score, so there is no accuracy gap")
    return {item: tuple(r["scores"]["correct"] for r in slots) for item, slots in rows.items()}


def subset_gap(a: Run, b: Run, *, confidence: float = 0.95) -> list[Gap]:
    """The accuracy gap B - A of one model on two disjoint subset tasks, one `Gap` per shared seed."""
    if a.record.model.spec != b.record.model.spec:
        raise MetabenchError(
            f"a gap compares one model on two subsets, but A is model '{a.record.model.spec}' and B is model '{b.record.model.spec}'",
            hint="pass the runs of one model on the two subset tasks (e.g. the met and no-met tasks)",
        )
    if a.record.task.name == b.record.task.name:
        raise MetabenchError(
            f"both runs are task '{a.record.task.name}': a gap compares two subset tasks",
            hint="to compare two models on the same items use `metabench compare RUN_A RUN_B`",
        )
    correct_a, correct_b = _correctness(a), _correctness(b)
    shared_ids = correct_a.keys() & correct_b.keys()
    if shared_ids:
        raise MetabenchError(
            f"tasks '{a.record.task.name}' and '{b.record.task.name}' share {len(shared_ids)} item id(s), e.g. {sorted(shared_ids)[:3]}; "
            "the gap tests assume two independent item sets",
            hint="subset tasks must hold disjoint items (met vs no-met); for the same items use `metabench compare`",
        )
    seeds = [s for s in a.record.seeds if s in b.record.seeds]
    if not seeds:
        raise MetabenchError(f"{describe(a)} has seeds {a.record.seeds} and {describe(b)} has seeds {b.record.seeds}: none in common")
    gaps = []
    for seed in seeds:
        k_a = int(sum(v[a.record.seeds.index(seed)] for v in correct_a.values()))
        k_b = int(sum(v[b.record.seeds.index(seed)] for v in correct_b.values()))
        n_a, n_b = len(correct_a), len(correct_b)
        z = two_proportion_z(k_a, n_a, k_b, n_b)
        ci = proportion_difference_ci(k_a, n_a, k_b, n_b, confidence=confidence)
        gaps.append(Gap(
            model=a.record.model.spec, reference_task=a.record.task.name, subset_task=b.record.task.name, seed=seed,
            correct_a=k_a, n_a=n_a, correct_b=k_b, n_b=n_b, accuracy_a=k_a / n_a, accuracy_b=k_b / n_b,
            gap=ci.difference, ci_low=ci.ci_low, ci_high=ci.ci_high, z=z.statistic, p_z=z.pvalue,
            pvalue=fisher_exact(k_a, n_a, k_b, n_b).pvalue,
        ))
    return gaps


def gap_pairs(runs: list[Run]) -> list[tuple[Run, Run]]:
    """(reference run, subset run) of every model on every pair of subset tasks among ``runs``."""
    index = {(r.record.task.name, r.record.model.spec): r for r in runs}
    return [
        (run, index[(subset, model)])
        for reference, subset in subset_pairs({r.record.task.name for r in runs})
        for (task, model), run in index.items()
        if task == reference and (subset, model) in index
    ]


def format_gaps(gaps: list[Gap], *, correction: str, alpha: float, confidence: float) -> str:
    from tabulate import tabulate

    rows = [
        [g.model, g.reference_task, g.subset_task, g.seed, f"{g.correct_a}/{g.n_a} = {g.accuracy_a:.4f}",
         f"{g.correct_b}/{g.n_b} = {g.accuracy_b:.4f}", f"{g.gap:+.4f}", f"[{g.ci_low:+.4f}, {g.ci_high:+.4f}]",
         f"{g.z:+.2f}", format_p(g.p_z), format_p(g.pvalue),
         format_p(g.p_adjusted) + (" *" if g.p_adjusted is not None and g.p_adjusted <= alpha else "")]
        for g in gaps
    ]
    name = CORRECTIONS[correction][0]
    headers = ["model", "A (reference)", "B (subset)", "seed", "accuracy A", "accuracy B", "gap (B−A)",
               f"{confidence:.0%} CI (Newcombe)", "z", "p (z)", "p (Fisher)", f"p Fisher ({name})"]
    lines = [tabulate(rows, headers=headers, disable_numparse=True), ""]
    if len(gaps) > 1:
        mean = sum(g.gap for g in gaps) / len(gaps)
        lines.append(f"mean gap over {len(gaps)} seeds: {mean:+.4f}")
    lines.append(f"independent item sets: two-proportion z and Fisher's exact test; "
                 f"{correction_phrase(correction, len(gaps))} (Fisher); * = significant at alpha {alpha}.")
    return "\n".join(lines)

