"""The gate's checks as a JUnit XML report, the format CI servers (GitHub, GitLab, Jenkins) render as tests.

One testcase per task × metric (classname ``metabench.gate.<task>``, name the metric): a regression is a
``<failure type="regression">``, an inconclusive check a ``<failure type="inconclusive">`` (a ``<skipped>``
with ``--inconclusive-ok``, which CI shows without failing), and every case carries its one-line detail
(values, Δ, CI, p, MDE) in the message or in ``<system-out>``. Written with junitparser (the ``ci`` extra),
imported only when ``--junit`` is given. Every string is escaped first (:mod:`metabench.printable`): a control
character in a task name is not XML at all, and the file is read where CI logs are.
"""

from __future__ import annotations

from pathlib import Path

from ...errors import MetabenchError
from ...printable import escape
from ...safe_paths import write_text
from . import INCONCLUSIVE, REGRESSION, GateReport, detail_line

SUITE = "metabench gate"
_XML_DECLARATION = '<?xml version="1.0" encoding="utf-8"?>\n'


def write_junit(report: GateReport, path: Path) -> None:
    """Write ``report`` to ``path`` as one JUnit test suite."""
    try:
        from junitparser import Failure, JUnitXml, Skipped, TestCase, TestSuite
    except ImportError as exc:
        raise MetabenchError("--junit needs the junitparser package",
                             hint="pip install 'metabench[ci]' (or pip install junitparser)") from exc
    suite = TestSuite(SUITE)
    for comparison, verdict in zip(report.comparisons, report.verdicts):
        case = TestCase(escape(comparison.metric), escape(f"metabench.gate.{comparison.task}"), 0.0)
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
    if not path.parent.is_dir():
        raise MetabenchError(f"--junit {path}: cannot write it (its folder {path.parent} does not exist)",
                             hint="name a file in a folder that exists and is writable")
    try:  # a new file renamed over the name: a symlink planted there is replaced, never written through
        write_text(path.parent, path, _XML_DECLARATION + document.tostring().decode("utf-8") + "\n")
    except OSError as exc:
        raise MetabenchError(f"--junit {path}: cannot write it ({exc.strerror})",
                             hint="name a file in a folder that exists and is writable") from exc
