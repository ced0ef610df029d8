"""``leaderboard.md``: the leaderboard as Markdown, for reading in a repository browser or a pull request.

Text from run files is escaped: Markdown renderers pass raw HTML through, and a ``|`` would break a table.
"""

from __future__ import annotations

import html
from pathlib import Path

from ..compare import format_ci, format_p
from ..paper_views import MISSING
from .numbers import mean_std, signed


def escape(text) -> str:
    return html.escape(str(text)).replace("|", "\\|").replace("\n", " ")


def _table(headers: list, rows: list[list]) -> list[str]:
    lines = ["| " + " | ".join(escape(h) for h in headers) + " |", "|" + "---|" * len(headers)]
    lines.extend("| " + " | ".join(escape(c) for c in row) + " |" for row in rows)
    return lines + [""]


def _mark(entry: dict) -> str:
    if entry["rank"] == 1:
        return " ★"
    return " ▼" if (entry["vs_best"] or {}).get("significant") else ""


def render(board: dict) -> str:
    correction = board["correction"]["name"]
    out = [
        f"# {escape(board['title'])}", "",
        f"{board['n_runs']} runs, the latest from {board['latest_run']}; metabench {board['metabench']}. "
        f"★ best model of the task (ties share it); ▼ significantly worse than the best ({correction}-adjusted p ≤ {board['alpha']} "
        "within the task; paired test on the shared items). Values: mean ± std over seeds.", "",
        "## Overview", "",
    ]
    cells = {(e["model"], t["name"]): e for t in board["tasks"] for e in t["entries"]}
    rows = []
    for model in board["models"]:
        row = [model["name"]]
        for task in board["tasks"]:
            found = cells.get((model["name"], task["name"]))
            row.append(MISSING if not found else mean_std(found["metrics"][task["primary_metric"]]) + _mark(found))
        rows.append(row)
    out += _table(["model"] + [f"{t['name']} ({t['primary_metric']})" for t in board["tasks"]], rows)

    for task in board["tasks"]:
        out += [f"## {escape(task['name'])}", "",
                f"Dataset {escape(task['dataset'])}; licence: {escape(task['licence'] or 'not stated')}; "
                f"{task['n_items']} test items; primary metric {escape(task['primary_metric'])}.", ""]
        if task["citation"]:
            out += [f"Cite: {escape(task['citation'])}", ""]
        rows = []
        for e in task["entries"]:
            v = e["vs_best"] or {}
            rows.append([
                e["rank"], e["model"] + _mark(e), mean_std(e["metrics"][task["primary_metric"]]), len(e["seeds"]),
                f"not comparable: {v['error']}" if "error" in v else signed(v.get("delta")),
                format_ci(v.get("ci_low"), v.get("ci_high")),
                v.get("test") or MISSING, format_p(v.get("p_adjusted")),
            ])
        out += _table(["rank", "model", task["primary_metric"], "seeds", "Δ vs best", "CI", "test", f"p ({correction})"], rows)

    if board["gaps"]["rows"]:
        out += ["## Metaphor gaps", "",
                f"Accuracy on B minus accuracy on A, independent items: Fisher's exact test per seed, {correction}-adjusted.", ""]
        rows = [[r["model"], r["reference_task"], r["subset_task"], f"{r['accuracy_a']:.4f}", f"{r['accuracy_b']:.4f}",
                 signed(r["gap"]), ", ".join(format_p(s["p_adjusted"]) for s in r["seeds"]),
                 f"{r['significant_seeds']} of {len(r['seeds'])}"] for r in board["gaps"]["rows"]]
        out += _table(["model", "A", "B", "accuracy A", "accuracy B", "gap", "p Fisher adj (per seed)", "significant seeds"], rows)

    out += ["## Paper tables", "", "Rows marked *paper* are the papers' printed numbers for their own models.", ""]
    for t in board["paper_tables"]:
        out += [f"### {escape(t['paper'])}, {t['number']}: {escape(t['title'])}", ""]
        rows = [r["labels"] + [("*paper* " if r["source"] == "paper" else "") + r["model"]] + r["cells"] for r in t["rows"]]
        out += _table(t["header"], rows)
        if t["missing_tasks"]:
            out += [f"No runs yet for: {escape(', '.join(t['missing_tasks']))}.", ""]
    return "\n".join(out)


def write(board: dict, out_dir: Path) -> list[Path]:
    path = out_dir / "leaderboard.md"
    path.write_text(render(board), encoding="utf-8")
    return [path]
