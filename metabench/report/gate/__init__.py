"""The CI gate: does a candidate regress on any task compared with a stored baseline? Three answers.

A check (one task and metric) is a **regression** when the candidate is worse than the baseline by more than
the tolerance (absolute in metric units, or relative to the baseline's value; respecting ``higher_is_better``)
*and* the paired test (chosen as in `compare`) is significant at ``alpha`` after correcting over every gated
task and metric. Either condition alone is not enough: a large drop on a tiny test set may be noise, and a
significant drop of 0.1 points may be acceptable.

The default level is ``ALPHA`` = 0.005, not compare's 0.05. A gate answers a one-sided question (only a drop
fails), so with Holm over its checks a candidate no worse than the baseline fails at most alpha / 2 of the time:
0.25 % at the default. A CI gate runs on every change, and issue 38 asks for at most 1 false fail in 200 null
gates; at 0.25 % per gate 200 gates show at most one with probability 91 % (binomial), where compare's 0.05
(2.5 %, five expected) cannot. It is also the level Benjamin et al. (2018) propose for claiming a new finding,
which a failed merge is. ``--alpha 0.05`` gives the earlier behaviour; `metabench stats calibrate` replays 200
null comparisons through the gate at both levels (docs/reporting.md, "False fails").

A check that is not a regression **passes** only when the data could have shown one: the test's minimum
detectable effect (at 80 % power and the level the correction demands of a single check, alpha / m for m
checks) is within the tolerance, or the CI already excludes any drop beyond it. Otherwise it is
**inconclusive**: with these items (or seeds) the test cannot detect the tolerance that was set, so
"no significant drop" would be a statement about the test, not about the checkpoint.

Exit codes (``metabench gate``): 0 every check passes, 1 at least one regression, 3 no regression but
at least one inconclusive check (0 with ``--inconclusive-ok``), 2 unusable input (missing files, run files
that fail their schema, runs that do not pair, a baseline task the candidate lacks, a metric no paired test
can check) or any internal error: CI reads 1 as "regression", so a crash is never 1.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

from ...errors import MetabenchError
from ...printable import escape
from ...registry import Registry
from ..calibration_misses import PREFIX
from ..compare import Comparison, Options, adjust, compare_pair, comparison_rows, correction_phrase
from .flips import flip_line
from ...runs.stored import Run, by_task

REGRESSION, PASS, INCONCLUSIVE = "regression", "pass", "inconclusive"
#: exit status of a gate with no regression but an inconclusive check (documented in docs/reporting.md)
EXIT_INCONCLUSIVE = 3
_SLACK = 1e-12  # a drop equal to the tolerance is allowed, whatever the floating-point rounding
#: the gate's default significance level (two-sided p, as compare prints it; why: the module docstring)
ALPHA = 0.005


@dataclass(frozen=True)
class Tolerance:
    """How much worse the candidate may be: ``value`` in metric units, or a share of the baseline's value."""

    value: float
    relative: bool = False

    @classmethod
    def parse(cls, text: str, option: str = "--tolerance") -> Tolerance:
        """``0.01`` (absolute, metric units) or ``2%`` (relative to the baseline's value)."""
        relative = text.strip().endswith("%")
        try:
            value = float(text.strip().rstrip("%")) / (100 if relative else 1)
        except ValueError:
            value = math.nan
        if not value >= 0:  # also refuses NaN
            raise MetabenchError(
                f"{option} {text!r}: must be a number of 0 or more, absolute in metric units (0.01 = one point) "
                "or relative with % (2% = 2 % of the baseline's value)", hint=f"e.g. {option} 0.01 or {option} 2%"
            )
        return cls(value, relative)

    def of(self, baseline_value: float) -> float:
        """The tolerance in metric units for a check whose baseline scored ``baseline_value``."""
        return self.value * abs(baseline_value) if self.relative else self.value

    def __str__(self) -> str:
        return f"{self.value * 100:g}%" if self.relative else f"{self.value:g}"


@dataclass(frozen=True)
class Verdict:
    """One check's answer: ``status`` (regression, pass or inconclusive), ``label`` (what was seen) and the
    tolerance in metric units it was held to."""

    status: str
    label: str
    tolerance: float


@dataclass
class GateReport:
    comparisons: list[Comparison]
    verdicts: list[Verdict]
    notes: list[str]
    tolerance: Tolerance
    alpha: float
    correction: str
    inconclusive_ok: bool = False

    def with_status(self, status: str) -> list[Comparison]:
        return [c for c, v in zip(self.comparisons, self.verdicts) if v.status == status]

    @property
    def regressions(self) -> list[Comparison]:
        return self.with_status(REGRESSION)

    @property
    def inconclusive(self) -> list[Comparison]:
        return self.with_status(INCONCLUSIVE)

    @property
    def outcome(self) -> str:
        if self.regressions:
            return REGRESSION
        return INCONCLUSIVE if self.inconclusive else PASS

    @property
    def exit_code(self) -> int:
        if self.regressions:
            return 1
        return EXIT_INCONCLUSIVE if self.inconclusive and not self.inconclusive_ok else 0

    def as_dict(self) -> dict:
        return {
            "passed": self.exit_code == 0, "outcome": self.outcome, "exit_code": self.exit_code,
            "tolerance": str(self.tolerance), "alpha": self.alpha, "correction": self.correction,
            "inconclusive_ok": self.inconclusive_ok, "notes": self.notes,
            "comparisons": [dict(c.as_dict(), verdict=v.label, status=v.status, tolerance=v.tolerance)
                            for c, v in zip(self.comparisons, self.verdicts)],
        }


def verdict(comparison: Comparison, tolerance: float, alpha: float) -> Verdict:
    """Regression, pass or inconclusive (rules in the module docstring); ``tolerance`` in metric units."""
    c = comparison
    significant = c.p_adjusted is not None and c.p_adjusted <= alpha
    if c.drop <= 0:
        label = "better" if significant and c.drop < 0 else "no drop"
    elif not significant:
        label = "worse, not significant"
    elif c.drop > tolerance + _SLACK:
        return Verdict(REGRESSION, "REGRESSION", tolerance)
    else:
        label = "worse, within tolerance"
    if _rules_out(c, tolerance):
        return Verdict(PASS, label, tolerance)
    mde = "unknown" if c.mde is None else f"{c.mde:.4g}"
    return Verdict(INCONCLUSIVE, f"{label}; INCONCLUSIVE: MDE {mde} > tolerance {tolerance:.4g}", tolerance)


def _rules_out(c: Comparison, tolerance: float) -> bool:
    """Could the data have shown a drop beyond ``tolerance``, or do they exclude one?"""
    if c.mde is not None and c.mde <= tolerance + _SLACK:
        return True
    worst_drop = -c.ci_low if c.higher_is_better and c.ci_low is not None else c.ci_high
    if c.ci_low is None or worst_drop is None:
        return False
    return worst_drop <= tolerance + _SLACK


def _one_per_task(runs: list[Run], option: str) -> dict[str, Run]:
    out = {}
    for task, group in by_task(runs).items():
        if len(group) > 1:
            raise MetabenchError(
                f"{option} has {len(group)} runs of task '{task}' ({', '.join(repr(r.record.model.spec) for r in group)}); "
                "the gate needs one run per task on each side",
                hint=f"pass the run folders of one model, e.g. {group[0].path}",
            )
        out[task] = group[0]
    return out


def _verified(registry: Registry, runs: list[Run]) -> None:
    """A gate on a run whose files disagree would pass or fail on a false number: unusable input (exit 2)."""
    from ...runs.verify import verify_runs

    _, rejected, _ = verify_runs(registry, runs)
    if rejected:
        raise MetabenchError(
            "run(s) rejected by verification: " + "; ".join(f"{v.run.path}: {'; '.join(v.problems)}" for v in rejected),
            hint="apply the fix given with each reason; re-running the evaluation (answers are cached) rewrites "
                 "a run's files",
        )


def gate(
    registry: Registry, baseline: list[Run], candidate: list[Run], *, metrics: list[str] | None = None,
    tolerance: Tolerance = Tolerance(0.0), alpha: float = ALPHA, correction: str = "holm",
    options: Options = Options(), inconclusive_ok: bool = False,
) -> GateReport:
    """Compare the candidate's run of every baseline task with the baseline's (tasks matched by name)."""
    if not 0 < alpha < 1:
        raise MetabenchError(f"--alpha {alpha}: must lie strictly between 0 and 1 (e.g. 0.05)")
    _verified(registry, baseline + candidate)
    base, cand = _one_per_task(baseline, "--baseline"), _one_per_task(candidate, "--candidate")
    missing = [task for task in base if task not in cand]
    if missing:
        raise MetabenchError(
            f"--candidate has no run of task(s) {', '.join(missing)}, which the baseline has "
            f"(candidate tasks: {', '.join(cand) or 'none'})",
            hint="evaluate the candidate on the baseline's tasks, or pass the baseline runs of the tasks to gate",
        )
    notes = [f"task '{task}' has no baseline run: not gated" for task in cand if task not in base]
    checks = len(base) * len(metrics or [None])
    # a single check must reach alpha / m under Holm or BH (their first step): the MDE is computed there
    options = replace(options, alpha=alpha if correction == "none" else alpha / checks)
    comparisons = []
    for task, run in base.items():
        for metric in metrics or [run.record.primary_metric]:
            comparison = compare_pair(registry, run, cand[task], metric, options)
            if comparison.pvalue is None:
                raise MetabenchError(
                    f"task '{task}': {'; '.join(comparison.notes)}",
                    hint="gate on a metric with per-item samples (--metric), or give both runs 2+ seeds",
                )
            comparisons.append(comparison)
    adjust(comparisons, correction)
    notes += [line for task, run in base.items() if (line := flip_line(run, cand[task])) is not None]
    verdicts = [verdict(c, tolerance.of(c.baseline_value), alpha) for c in comparisons]
    return GateReport(comparisons, verdicts, notes, tolerance, alpha, correction, inconclusive_ok)


def format_report(report: GateReport, confidence: float) -> str:
    from tabulate import tabulate

    rows = [row[:2] + row[4:] + [v.label]
            for row, v in zip(comparison_rows(report.comparisons, report.alpha), report.verdicts)]
    headers = ["task", "metric", "baseline", "candidate", "Δ", f"{confidence:.0%} CI", "MDE", "test", "p", "p adj",
               "verdict"]
    lines = [tabulate(rows, headers=headers, disable_numparse=True), ""]
    lines.append(f"Δ = candidate − baseline; {correction_phrase(report.correction, len(report.comparisons))}; "
                 f"regression = worse by more than the tolerance ({report.tolerance}) and p adj ≤ {report.alpha:g}; "
                 "MDE = the smallest |Δ| the test detects at --power, at the level one check must reach.")
    lines.extend(f"note: {escape(n)}" for n in report.notes)
    lines.extend(f"warning: {escape(c.task)} {escape(c.metric)}: {escape(n)}"
                 for c in report.comparisons for n in c.notes if n.startswith(PREFIX))
    lines.append(summary_line(report))
    lines.extend(f"  {detail_line(c, v)}" for c, v in zip(report.comparisons, report.verdicts) if v.status != PASS)
    return "\n".join(lines)


def summary_line(report: GateReport) -> str:
    """The verdict of the whole gate in one line."""
    checks = len(report.comparisons)
    if report.regressions:
        return f"gate: FAIL, {len(report.regressions)} regression(s) in {checks} check(s):"
    if report.inconclusive:
        suffix = " (--inconclusive-ok: passing)" if report.inconclusive_ok else ""
        return (f"gate: INCONCLUSIVE, {len(report.inconclusive)} of {checks} check(s) cannot detect a drop of "
                f"{report.tolerance} with these items{suffix}:")
    return f"gate: PASS, no regression beyond {report.tolerance} on {checks} check(s)"


def detail_line(c: Comparison, v: Verdict) -> str:
    """One check in a sentence: values, drop, tolerance, test, adjusted p and MDE (also the JUnit message), its
    names escaped (:mod:`metabench.printable`): it is printed, annotated and written where CI reads it."""
    p = "—" if c.p_adjusted is None else f"{c.p_adjusted:.4g}"
    mde = "—" if c.mde is None else f"{c.mde:.4f}"
    ci = "—" if c.ci_low is None else f"[{c.ci_low:+.4f}, {c.ci_high:+.4f}]"
    return (f"{escape(c.task)} {escape(c.metric)}: {c.baseline_value:.4f} -> {c.candidate_value:.4f} (drop {c.drop:.4f}, tolerance "
            f"{v.tolerance:.4g}; Δ {c.delta:+.4f}, CI {ci}, {escape(c.test)} p adj {p}, MDE {mde}): {v.label}")
