"""The CI gate: does a candidate regress on any task compared with a stored baseline?

A task regresses when the candidate is worse than the baseline by more than ``max_drop`` (in the units of
the metric, respecting ``higher_is_better``) *and* the paired test (chosen as in `compare`) is significant
at ``alpha`` after correcting over every gated task and metric. Either condition alone is not enough: a
large drop on a tiny test set may be noise, and a significant drop of 0.1 points may be acceptable.

Exit codes (``metabench gate``): 0 no regression, 1 at least one regression, 2 unusable input (missing
files, run files that fail their schema, runs that do not pair, a baseline task the candidate lacks, a metric
no paired test can check) or any internal error: CI reads 1 as "regression", so a crash is never 1.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..errors import MetabenchError
from ..registry import Registry
from .compare import Comparison, Options, adjust, compare_pair, comparison_rows, correction_phrase
from .runs import Run, by_task

REGRESSION = "REGRESSION"
_SLACK = 1e-12  # a drop equal to max_drop is allowed, whatever the floating-point rounding


@dataclass
class GateReport:
    comparisons: list[Comparison]
    verdicts: list[str]
    notes: list[str]
    max_drop: float
    alpha: float
    correction: str

    @property
    def regressions(self) -> list[Comparison]:
        return [c for c, v in zip(self.comparisons, self.verdicts) if v == REGRESSION]

    @property
    def exit_code(self) -> int:
        return 1 if self.regressions else 0

    def as_dict(self) -> dict:
        return {
            "passed": not self.regressions, "max_drop": self.max_drop, "alpha": self.alpha,
            "correction": self.correction, "notes": self.notes,
            "comparisons": [dict(c.as_dict(), verdict=v) for c, v in zip(self.comparisons, self.verdicts)],
        }


def verdict(comparison: Comparison, max_drop: float, alpha: float) -> str:
    significant = comparison.p_adjusted is not None and comparison.p_adjusted <= alpha
    if comparison.drop <= 0:
        return "better" if significant and comparison.drop < 0 else "no drop"
    if not significant:
        return "worse, not significant"
    return "worse, within --max-drop" if comparison.drop <= max_drop + _SLACK else REGRESSION


def _one_per_task(runs: list[Run], option: str) -> dict[str, Run]:
    out = {}
    for task, group in by_task(runs).items():
        if len(group) > 1:
            raise MetabenchError(
                f"{option} has {len(group)} runs of task '{task}' ({', '.join(repr(r.model) for r in group)}); "
                "the gate needs one run per task on each side",
                hint=f"pass the run folders of one model, e.g. {group[0].path}",
            )
        out[task] = group[0]
    return out


def gate(
    registry: Registry, baseline: list[Run], candidate: list[Run], *, metrics: list[str] | None = None,
    max_drop: float = 0.0, alpha: float = 0.05, correction: str = "holm", options: Options = Options(),
) -> GateReport:
    """Compare the candidate's run of every baseline task with the baseline's (tasks matched by name)."""
    if not max_drop >= 0:  # also refuses NaN
        raise MetabenchError(f"--max-drop {max_drop}: must be 0 or more (in metric units, e.g. 0.01 = one point)")
    if not 0 < alpha < 1:
        raise MetabenchError(f"--alpha {alpha}: must lie strictly between 0 and 1 (e.g. 0.05)")
    base, cand = _one_per_task(baseline, "--baseline"), _one_per_task(candidate, "--candidate")
    missing = [task for task in base if task not in cand]
    if missing:
        raise MetabenchError(
            f"--candidate has no run of task(s) {', '.join(missing)}, which the baseline has "
            f"(candidate tasks: {', '.join(cand) or 'none'})",
            hint="evaluate the candidate on the baseline's tasks, or pass the baseline runs of the tasks to gate",
        )
    notes = [f"task '{task}' has no baseline run: not gated" for task in cand if task not in base]
    comparisons = []
    for task, run in base.items():
        for metric in metrics or [run.primary_metric]:
            comparison = compare_pair(registry, run, cand[task], metric, options)
            if comparison.pvalue is None:
                raise MetabenchError(
                    f"task '{task}': {'; '.join(comparison.notes)}",
                    hint="gate on a metric with per-item samples (--metric), or give both runs 2+ seeds",
                )
            comparisons.append(comparison)
    adjust(comparisons, correction)
    verdicts = [verdict(c, max_drop, alpha) for c in comparisons]
    return GateReport(comparisons, verdicts, notes, max_drop, alpha, correction)


def format_report(report: GateReport, confidence: float) -> str:
    from tabulate import tabulate

    rows = [row[:2] + row[4:] + [v] for row, v in zip(comparison_rows(report.comparisons, report.alpha), report.verdicts)]
    headers = ["task", "metric", "baseline", "candidate", "Δ", f"{confidence:.0%} CI", "test", "p", "p adj", "verdict"]
    lines = [tabulate(rows, headers=headers, disable_numparse=True), ""]
    lines.append(f"Δ = candidate − baseline; {correction_phrase(report.correction, len(report.comparisons))}; "
                 f"regression = worse by more than {report.max_drop:g} and p adj ≤ {report.alpha:g}.")
    lines.extend(f"note: {n}" for n in report.notes)
    if report.regressions:
        lines.append(f"gate: FAIL, {len(report.regressions)} regression(s):")
        lines.extend(
            f"  {c.task} {c.metric}: {c.baseline_value:.4f} -> {c.candidate_value:.4f} (drop {c.drop:.4f} > "
            f"{report.max_drop:g}, {c.test} p adj {c.p_adjusted:.4g})"
            for c in report.regressions
        )
    else:
        lines.append(f"gate: PASS, no significant regression beyond {report.max_drop:g} on {len(report.comparisons)} check(s)")
    return "\n".join(lines)
