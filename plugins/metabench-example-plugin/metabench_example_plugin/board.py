"""The plugin's own leaderboard section: every model's run of the plugin's task, beside the cue-words rule.

Registered with ``metabench_register_board_sections`` (``plugin.py``). The board calls ``cue_words_section`` once
per build with the runs it ranks; ``data`` lands in ``leaderboard.json`` under the section's name, and the table
(in the paper-view layout) is shown by every built-in reporter: leaderboard.md and the site's paper-tables page.
The section's own view, ``templates/cue_words.html`` (registered with ``html=``), shows its rows on the task's
page as well.
"""

from __future__ import annotations

from metabench.plugin_api import BoardInputs, BoardSection

TASK = "example_cue_words"
#: metric name -> column label; balanced accuracy is the plugin's own metric (metrics.py)
METRICS = {"balanced_accuracy": "balanced accuracy", "accuracy": "accuracy", "f1": "F1 (metaphorical)"}


def cue_words_section(inputs: BoardInputs) -> BoardSection:
    """One row per model that ran the plugin's task (mean over seeds); no table when none did."""
    runs = sorted((r for r in inputs.runs if r.record.task.name == TASK), key=lambda r: (r.partial, r.record.model.spec))
    rows = [{"model": r.record.model.spec, "n_items": r.record.n_items, "partial": r.partial,
             **{m: r.record.mean(m) for m in METRICS}} for r in runs]
    if not rows:
        return BoardSection({"rows": []})
    table = {
        "key": "example_cue_words", "paper": "metabench example plugin", "number": "Cue words",
        "title": "the cue-words rule against every other model run on the example sentences",
        "header": ["task", "model", *METRICS.values(), "test items"],
        "rows": [{"labels": [TASK], "model": r.record.model.spec + (" (partial)" if r.partial else ""), "source": "metabench",
                  "cells": [*(_cell(r.record.mean(m)) for m in METRICS), str(r.record.n_items)]} for r in runs],
        "tasks": [TASK], "missing_tasks": [],
        "notes": ["(partial): a --limit run on part of the test split"] if any(r.partial for r in runs) else [],
    }
    return BoardSection({"rows": rows}, [table])


def _cell(value: float | None) -> str:
    return "—" if value is None else f"{value:.3f}"
