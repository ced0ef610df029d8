"""``metabench power``: how small a change a task can detect, planned from a baseline's stored runs.

Before gating a checkpoint on a task, or claiming a gain on it, one should know what the task can resolve
(Card et al. 2020). Given the baseline's run of a task (or of every member of an ``aggregate: mean`` group,
e.g. the ten MOH-X folds), the plan is:

* the spread of the baseline's metric over its items, by bootstrap (any metric, F1 included; the task's
  declared clusters, e.g. documents, resampled whole; a group's metric is the mean of its members', so its
  standard error is sqrt(sum SE_k^2) / K);
* a paired comparison with a candidate as good as the baseline has Var(delta) = 2 (1 - rho) SE^2, rho being
  the correlation of the two models' per-item results (0: independent errors, the pessimistic planning
  case; fine-tuned variants of one model are typically strongly correlated); the MDE is
  (z_{1-alpha/2} + z_power) sqrt(Var(delta)), one row per assumed rho, with t quantiles of K - 1 degrees of
  freedom instead of z for K declared clusters, as `compare` reads a cluster bootstrap (`stats.few_units`);
* for accuracy-type metrics at one seed, also McNemar's MDE (what `compare`/`gate` would run) with the
  discordance independent errors give, 2 p (1 - p).

With a candidate's runs at hand, `metabench compare` reports the MDE from the observed pairing instead.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field

from ...errors import MetabenchError
from ...registry import Registry
from ...stats.few_units import t_reference
from ...stats.power import bootstrap_std_error, mcnemar_mde, normal_mde
from ...runs.align import pair
from ...runs.clusters import cluster_members, clustered, declared
from ...runs.decompose import item_metrics
from ...runs.stored import Run, by_task

#: the correlations of per-item results a plan shows by default
CORRELATIONS = (0.0, 0.5, 0.8)


@dataclass
class PowerPlan:
    """The MDE of ``metric`` on ``target`` for each assumption (rows: assumption, mde, method)."""

    target: str
    metric: str
    model: str
    tasks: list[str]
    n_items: int
    value: float
    std_error: float
    alpha: float
    power: float
    unit: str = "items"
    rows: list[dict] = field(default_factory=list)

    def as_dict(self) -> dict:
        return asdict(self)


def _select(runs: list[Run], target: str) -> list[Run]:
    """The runs of ``target`` (a task, or every member of a group), one model, every member present."""
    chosen = [r for r in runs if r.record.task.name == target or target in {g.name for g in r.record.groups}]
    if not chosen:
        found = sorted({r.record.task.name for r in runs})
        raise MetabenchError(f"no run of task or group '{target}' among --baseline (tasks there: {', '.join(found)})",
                             hint="pass the baseline's run folders of that task, or of every member of the group")
    models = sorted({r.record.model.spec for r in chosen})
    if len(models) > 1:
        raise MetabenchError(f"--baseline holds runs of {len(models)} models for '{target}' ({', '.join(models)})",
                             hint="name one with --model, or pass one model's run folders")
    members = next((list(g.members) for g in chosen[0].record.groups if g.name == target), [target])
    grouped = by_task(chosen)
    missing = [m for m in members if m not in grouped]
    if missing:
        raise MetabenchError(f"'{target}' averages {len(members)} tasks, but --baseline has no run of "
                             f"{', '.join(missing)}", hint="pass the runs of every member (e.g. all folds)")
    for task, group in grouped.items():
        if len(group) > 1:
            raise MetabenchError(f"--baseline has {len(group)} runs of task '{task}'",
                                 hint=f"pass one of them, e.g. {group[0].path}")
    return [grouped[m][0] for m in members]


def plan(registry: Registry, runs: list[Run], target: str, *, metric: str | None = None, alpha: float = 0.05,
         power: float = 0.8, correlations=CORRELATIONS, n_resamples: int = 2000, seed: int = 0) -> PowerPlan:
    """The MDE plan of ``target`` (rules in the module docstring)."""
    members = _select(runs, target)
    metric = metric or members[0].record.primary_metric
    errors, values, correct, unit, clusters = [], [], [], "items", 0
    for run in members:
        if run.record.mean(metric) is None:
            raise MetabenchError(f"{run.path} has no value for metric '{metric}'")
        aligned = pair(run, run)
        item, _ = item_metrics(aligned, metric, registry)
        if item is None:
            raise MetabenchError(f"task '{run.record.task.name}': {metric} cannot be rebuilt from the samples, so its spread over "
                                 "items is unknown", hint="plan on a metric with per-item samples (--metric)")
        spec = declared(run)
        if spec:  # the task's clusters (documents) are what a comparison would resample
            item, unit = clustered(item, cluster_members(aligned.ids, spec, run.record.task.name)), spec.name
            clusters += len(item.records)
        errors.append(bootstrap_std_error(item.records, item.metric, n_resamples=n_resamples, seed=seed))
        values.append(item.value)
        correct.append(item.correct)
    k = len(members)
    std_error = math.sqrt(sum(e * e for e in errors)) / k
    n_items = sum(r.record.n_items for r in members)
    if not std_error > 0:  # one item, or the same result on every item: no spread to plan from (MDE ±0.0000)
        raise MetabenchError(
            f"'{target}': the baseline's {metric} does not vary over its {n_items} item(s) (bootstrap standard "
            "error 0), so no detectable effect can be planned from it",
            hint="plan from a baseline run with more items and results that differ between items (not a constant "
                 "predictor)")
    result = PowerPlan(target, metric, members[0].record.model.spec, [r.record.task.name for r in members], n_items, sum(values) / k,
                       std_error, alpha, power, unit)
    for rho in correlations:
        spread = math.sqrt(2 * (1 - rho)) * std_error
        if clusters:
            mde = t_reference(0.0, spread, clusters, alpha=alpha, power=power).mde
            method = f"bootstrap standard error of the baseline, t({clusters - 1})"
        else:
            mde = normal_mde(spread, n_items, alpha=alpha, power=power).mde
            method = "bootstrap standard error of the baseline"
        result.rows.append({"assumption": f"per-item correlation {rho:g}", "mde": mde, "method": method})
    answered = [c for c in correct if c is not None]
    if len(answered) == len(correct):
        accuracy = sum(float(c.sum()) for c in answered) / n_items
        psi = 2 * accuracy * (1 - accuracy)
        mde = mcnemar_mde(n_items, psi, alpha=alpha, power=power).mde
        result.rows.append({"assumption": f"McNemar, discordance {psi:.3f} (independent errors)", "mde": mde,
                            "method": "Connor 1987"})
    return result


def format_plan(p: PowerPlan) -> str:
    from tabulate import tabulate

    where = p.target if p.tasks == [p.target] else f"{p.target} (mean of {len(p.tasks)} tasks)"
    lines = [f"{where}: {p.metric} of {p.model} = {p.value:.4f} over {p.n_items} items; bootstrap standard error "
             f"{p.std_error:.4f} (resampling {p.unit})", ""]
    lines.append(tabulate([[r["assumption"], f"±{r['mde']:.4f}", r["method"]] for r in p.rows],
                          headers=["candidate vs baseline", "MDE", "from"], disable_numparse=True))
    best = p.rows[0]["mde"]
    lines += ["", f"With {p.n_items} items a paired test at alpha {p.alpha:g} detects a change of ±{best:.4f} in {p.metric} "
              f"({best * 100:.1f} points) with {p.power:.0%} power when the candidate's errors are independent of the "
              "baseline's; correlated errors (a fine-tuned variant) make smaller changes detectable."]
    return "\n".join(lines)
