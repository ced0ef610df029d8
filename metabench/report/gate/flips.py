"""The flip-rate line of a comparison whose runs drew each answer several times (``--repeat``).

A run made with ``--repeat N`` records each item's majority answer as its prediction and score (what compare
and gate test) and, beside it, how often the item's draws left the majority (its flip rate). An item that flips
between draws is one whose verdict a single draw would decide by chance; this line says how many there are on
each side and how many of the items whose majority verdict differs between the two runs are among them, so
a reader can tell a regression from a flaky decoder's noise.
"""

from __future__ import annotations

from ...printable import escape


def flip_line(baseline, candidate) -> str | None:
    """One line for a pair of runs (``metabench.runs.stored.Run``) of the same task, or None when neither
    repeated its draws (nothing to say)."""
    base, cand = baseline.record.repeat, candidate.record.repeat
    if not base and not cand:
        return None
    task = escape(candidate.record.task.name)
    if not (base and cand):
        repeated, single = ("candidate", "baseline") if cand else ("baseline", "candidate")
        draws = (cand or base).n
        return (f"task '{task}': the {repeated}'s answers are majorities of {draws} draws, the {single}'s single "
                f"draws, so the comparison mixes the two; evaluate the {single} with --repeat {draws} for a "
                "like-for-like gate")
    rows_b, rows_c = _rows(baseline), _rows(candidate)
    shared = rows_b.keys() & rows_c.keys()
    flipping = {key for key in shared if rows_b[key]["flip_rate"] > 0 or rows_c[key]["flip_rate"] > 0}
    differ = {key for key in shared if rows_b[key]["scores"] != rows_c[key]["scores"]}
    return (f"task '{task}': majority of {cand.n} (candidate) and {base.n} (baseline) draws per item; "
            f"flip rate: candidate {cand.mean_flip_rate:.3f} ({cand.flipping_items} item(s) flip), baseline "
            f"{base.mean_flip_rate:.3f} ({base.flipping_items}); of the {len(differ)} item(s) whose majority "
            f"verdict differs between the runs, {len(differ & flipping)} flip between draws in either run")


def _rows(run) -> dict[tuple, dict]:
    """(item id, seed) -> samples row; a row written before --repeat existed counts as not flipping."""
    return {(row["id"], row["seed"]): {"scores": row["scores"], "flip_rate": row.get("flip_rate", 0.0)}
            for row in run.samples}
