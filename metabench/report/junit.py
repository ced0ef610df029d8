"""The gate's checks as a JUnit XML report, the format CI servers (GitHub, GitLab, Jenkins) render as tests.

One testcase per task × metric (classname ``metabench.gate.<task>``, name the metric): a regression is a
``<failure type="regression">``, an inconclusive check a ``<failure type="inconclusive">`` (a ``<skipped>``
with ``--inconclusive-ok``, which CI shows without failing), and every case carries its one-line detail
(values, Δ, CI, p, MDE) in the message or in ``<system-out>``. Written with junitparser (the ``ci`` extra),
imported only when ``--junit`` is given.
"""

from __future__ import annotations

from pathlib import Path

from ..errors import MetabenchError
from .gate import INCONCLUSIVE, REGRESSION, GateReport, detail_line

SUITE = "metabench gate"


def write_junit(report: GateReport, path: Path) -> None:
    """Write ``report`` to ``path`` as one JUnit test suite."""
    try:
        from junitparser import Failure, JUnitXml, Skipped, TestCase, TestSuite
    except ImportError as exc:
        raise MetabenchError("--junit needs the junitparser package",
                             hint="pip install 'metabench[ci]' (or pip install junitparser)") from exc
    suite = TestSuite(SUITE)
    for comparison, verdict in zip(report.comparisons, report.verdicts):
        case = TestCase(comparison.metric, f"metabench.gate.{comparison.task}", 0.0)
        detail = detail_line(comparison, verdict)
        if verdict.status == REGRESSION:
            case.result = [Failure(detail, REGRESSION)]
        elif verdict.status == INCONCLUSIVE:
            case.result = [Skipped(detail) if report.inconclusive_ok else Failure(detail, INCONCLUSIVE)]
        case.system_out = detail
        suite.add_testcase(case)
    suite.update_statistics()
    document = JUnitXml()
    document.add_testsuite(suite)
    try:
        document.write(str(path), pretty=True)
    except OSError as exc:
        raise MetabenchError(f"--junit {path}: cannot write it ({exc.strerror})",
                             hint="name a file in a folder that exists and is writable") from exc
