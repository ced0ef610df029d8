"""Hardness breakdowns: recall and precision of VUA-Verb detection runs per phi bin of a SOR model (issue 13.5).

"Recall on the metaphors that confuse model M": each VUA-Verb test item carries the overlap phi that M's
sense-only representation gives its WordNet sense (:mod:`metabench_hard.vua_phi`), read from a phi table
(:mod:`metabench_hard.phi_table`). A run is broken down by Fig 5b's bins (0-0.2, ..., 0.6-0.8, 0.8-1.0) plus
"no phi" (verbs outside the build, senses without a gloss match or with too few pool instances), each with its
item count and Wilson intervals, on the run's first seed (as ``metabench hard gap``; the seed is named).

Used by ``metabench compare hardness`` and by the leaderboard's hardness tables. Every row names
the SOR model and its training steps: a breakdown by a 150-step SOR is not one by the paper's 900 steps.
"""

from __future__ import annotations

from metabench.plugin_api import escape, MetabenchError, Run
from ..phi_table import datasets


def _one_seed(run: Run) -> tuple[int, list[dict]]:
    from ..gap import one_seed  # noqa: PLC0415

    samples = one_seed(run.samples, str(run.path))
    return samples[0]["seed"], samples


def matching_runs(runs: list[Run], table: dict) -> list[Run]:
    """The runs a table can break down: those of tasks on its dataset (VUA-Verb test)."""
    return [r for r in runs if r.record.task.dataset in datasets(table)]


def hardness_row(run: Run, table: dict, confidence: float = 0.95) -> dict:
    """One run by phi bin of one table; an error when none of its items has a phi there."""
    from ..gap import breakdown  # noqa: PLC0415

    if run.record.task.dataset not in datasets(table):
        raise MetabenchError(f"{escape(run.path)}: a run of {escape(run.record.task.dataset)}, and the phi table "
                             f"{escape(table.get('path', ''))} was built for {escape(table['dataset'])}: its phi are "
                             "another dataset's items'",
                             hint=f"pass runs of a task on {escape(table['dataset'])}, or a table built for "
                                  f"{escape(run.record.task.dataset)}")
    seed, samples = _one_seed(run)
    phi = table["phi"]
    covered = sum(s["id"] in phi for s in samples)
    if not covered:
        raise MetabenchError(f"{run.path}: none of its {len(samples)} items has a phi in {table.get('path', 'the table')}",
                             hint=f"the table covers {table['dataset']} {table['split']} items; pass runs of that task")
    return {
        "phi_source": table["label"], "sor_model": table["sor_model"], "sor_steps": table["sor_steps"],
        "table": table.get("path"), "task": run.record.task.name, "model": run.record.model.spec, "run": str(run.path), "seed": seed,
        "partial": run.partial, "items": len(samples), "items_with_phi": covered, "confidence": confidence,
        "bins": breakdown(samples, phi, confidence=confidence),
    }


def hardness_rows(runs: list[Run], tables: list[dict], confidence: float = 0.95) -> list[dict]:
    """Every (table, matching run) pair, for the leaderboard (runs without a covered item are left out)."""
    rows = []
    for table in tables:
        for run in matching_runs(runs, table):
            try:
                rows.append(hardness_row(run, table, confidence))
            except MetabenchError:
                continue
    return rows


def format_hardness(rows: list[dict]) -> str:
    from ..gap import format_breakdown  # noqa: PLC0415

    out = []
    for row in rows:
        partial = " (partial run)" if row["partial"] else ""
        out += [f"{escape(row['task'])} · {escape(row['model'])}{partial} · seed {row['seed']} — phi of "
                f"{escape(row['phi_source'])}",
                f"{row['items_with_phi']} of {row['items']} items have a phi; "
                f"{row['confidence']:.0%} Wilson intervals", "", format_breakdown(row["bins"]), ""]
    return "\n".join(out)
