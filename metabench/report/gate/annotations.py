"""GitHub Actions workflow commands for the gate: ``::error`` per regression, ``::warning`` per inconclusive check.

Printed only when ``GITHUB_ACTIONS=true`` (set by the runner), so the lines appear as annotations on the
run and the pull request instead of cluttering a terminal; on stderr, which the runner reads as well, so that
stdout stays the report (``--json`` output remains parseable). Values are escaped as the runner requires
(``%``, CR and LF in messages; also ``:`` and ``,`` in properties), after every other control character is
escaped (:mod:`metabench.printable`).
"""

import os

from ...printable import escape
from . import INCONCLUSIVE, REGRESSION, GateReport, detail_line

_LEVEL = {REGRESSION: "error", INCONCLUSIVE: "warning"}


def _escape(text: str, *, property_value: bool = False) -> str:
    text = escape(text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A"))
    return text.replace(":", "%3A").replace(",", "%2C") if property_value else text


def annotations(report: GateReport) -> list[str]:
    """One workflow command per regression (error) and inconclusive check (warning, notice when allowed)."""
    lines = []
    for comparison, verdict in zip(report.comparisons, report.verdicts):
        level = _LEVEL.get(verdict.status)
        if level is None:
            continue
        if verdict.status == INCONCLUSIVE and report.inconclusive_ok:
            level = "notice"
        title = _escape(f"metabench gate: {verdict.status} in {comparison.task} {comparison.metric}",
                        property_value=True)
        lines.append(f"::{level} title={title}::{_escape(detail_line(comparison, verdict))}")
    return lines


def in_github_actions() -> bool:
    return os.environ.get("GITHUB_ACTIONS") == "true"
