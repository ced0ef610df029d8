"""The gate's report as Markdown, for ``$GITHUB_STEP_SUMMARY`` or a pull-request comment.

A heading with the outcome, one table row per check (values, Δ, CI, MDE, test, adjusted p, verdict) and the
notes. The file is appended to, as GitHub expects of the step summary (several steps may write to it); a
new path is simply created. Cell text is escaped so that a ``|`` in a task or model name cannot break the
table.
"""

from __future__ import annotations

from pathlib import Path

from ...errors import MetabenchError
from ...printable import escape
from ..compare import comparison_rows
from . import GateReport, summary_line

_TITLES = {"regression": "FAIL: regression", "inconclusive": "INCONCLUSIVE", "pass": "PASS"}


def _cell(text: str) -> str:
    return escape(text).replace("\\", "\\\\").replace("|", "\\|")


def summary_markdown(report: GateReport, confidence: float) -> str:
    """The Markdown text of the report."""
    headers = ["task", "metric", "baseline", "candidate", "Δ", f"{confidence:.0%} CI", "MDE", "test", "p", "p adj",
               "tolerance", "verdict"]
    rows = [row[:2] + row[4:] + [f"{v.tolerance:.4g}", v.label]
            for row, v in zip(comparison_rows(report.comparisons, report.alpha), report.verdicts)]
    lines = [f"### metabench gate: {_TITLES[report.outcome]}", "",
             "| " + " | ".join(headers) + " |", "|" + "---|" * len(headers)]
    lines.extend("| " + " | ".join(_cell(c) for c in row) + " |" for row in rows)
    lines += ["", _cell(summary_line(report).rstrip(":")), "",
              f"Δ = candidate − baseline; a regression is worse by more than the tolerance ({report.tolerance}) with "
              f"p adjusted ({report.correction}) ≤ {report.alpha:g}; MDE = the smallest drop the test detects."]
    lines.extend(f"- note: {_cell(n)}" for n in report.notes)
    return "\n".join(lines) + "\n"


def write_summary(report: GateReport, path: Path, confidence: float) -> None:
    """Append the Markdown report to ``path``."""
    try:
        with open(path, "a", encoding="utf-8") as handle:
            handle.write(summary_markdown(report, confidence))
    except OSError as exc:
        raise MetabenchError(f"--summary {path}: cannot write it ({exc.strerror})",
                             hint="name a file in a folder that exists and is writable") from exc
