"""`metabench gate --junit/--summary` and GitHub annotations, for a regression, a pass and an inconclusive gate."""

from __future__ import annotations

from xml.etree import ElementTree

import pytest
from junitparser import Failure, JUnitXml, Skipped

from metabench.report.gate.annotations import _escape
from metabench.store import read_samples


@pytest.fixture
def pair(toy_runs, copy_run, repredict):
    """toy_cls lookup (40 items) and a copy with 6 correct answers made wrong: Δ = -0.15, McNemar p = 0.031."""
    baseline = copy_run(toy_runs / "toy_cls" / "lookup", "baseline")
    candidate = copy_run(baseline, "candidate")
    right = [r for r in read_samples(candidate) if r["scores"]["correct"]][:6]
    repredict(candidate, {r["id"]: "literal" if r["gold"] == "metaphorical" else "metaphorical" for r in right})
    return baseline, candidate


# (gate options, exit status, JUnit result type, annotation level)
CASES = {
    "regression": (["--tolerance", "0.1", "--alpha", "0.05"], 1, Failure,
                   "::error title=metabench gate%3A regression in toy_cls accuracy::"),
    "pass": (["--tolerance", "0.4"], 0, None, None),
    "inconclusive": (["--tolerance", "0.05", "--alpha", "0.01"], 3, Failure,
                     "::warning title=metabench gate%3A inconclusive in toy_cls accuracy::"),
    "inconclusive-ok": (["--tolerance", "0.05", "--alpha", "0.01", "--inconclusive-ok"], 0, Skipped, "::notice"),
}


@pytest.mark.parametrize("case", CASES)
def test_junit_summary_and_annotations(case, cli, pair, tmp_path, monkeypatch):
    options, status, result_type, annotation = CASES[case]
    monkeypatch.setenv("GITHUB_ACTIONS", "true")
    junit, summary = tmp_path / "gate.xml", tmp_path / "summary.md"
    code, out, err = cli("gate", "--baseline", pair[0], "--candidate", pair[1], *options, "--resamples", "2000",
                         "--junit", junit, "--summary", summary)
    assert code == status, out + err

    # the attributes CI servers' JUnit readers require (Jenkins' junit-10.xsd, GitLab, GitHub reporter actions)
    root = ElementTree.parse(junit).getroot()
    assert root.tag == "testsuites"
    (suite_element,) = root.findall("testsuite")
    assert {"name", "tests", "failures", "errors"} <= set(suite_element.attrib)
    for element in suite_element.findall("testcase"):
        assert {"name", "classname", "time"} <= set(element.attrib)
        assert all(child.tag in ("failure", "skipped", "system-out") for child in element)
    (suite,) = list(JUnitXml.fromfile(str(junit)))
    (case_,) = list(suite)
    assert (suite.name, case_.classname, case_.name) == ("metabench gate", "metabench.gate.toy_cls", "accuracy")
    assert (suite.tests, suite.failures, suite.skipped) == (1, int(result_type is Failure), int(result_type is Skipped))
    assert "toy_cls accuracy: 0.7250 -> 0.5750 (drop 0.1500" in case_.system_out
    if result_type is None:
        assert case_.is_passed
    else:
        (result,) = case_.result
        assert isinstance(result, result_type)
        for needle in ("Δ -0.1500", "CI [", "mcnemar p adj", "MDE 0."):
            assert needle in result.message
        if result_type is Failure:
            assert result.type == case.split("-")[0]

    text = summary.read_text()
    assert text.startswith("### metabench gate: ")
    assert "| task | metric | baseline | candidate | Δ | 95% CI | MDE |" in text
    assert "| toy_cls | accuracy | 0.7250 | 0.5750 | -0.1500 | [" in text

    assert not any(line.startswith("::") for line in out.splitlines())  # stdout stays the report
    commands = [line for line in err.splitlines() if line.startswith("::")]
    if annotation is None:
        assert commands == []
    else:
        (command,) = commands
        assert command.startswith(annotation) and "drop 0.1500" in command


def test_summary_appends_and_annotations_only_in_github_actions(cli, pair, tmp_path, monkeypatch):
    monkeypatch.delenv("GITHUB_ACTIONS", raising=False)
    summary = tmp_path / "summary.md"
    summary.write_text("earlier step\n")
    code, out, err = cli("gate", "--baseline", pair[0], "--candidate", pair[1], "--tolerance", "0.1",
                         "--alpha", "0.05", "--resamples", "500", "--summary", summary)
    assert code == 1 and "::error" not in out + err
    text = summary.read_text()
    assert text.startswith("earlier step\n### metabench gate: FAIL: regression")


def test_unwritable_outputs_exit_2(cli, pair, tmp_path):
    code, _, err = cli("gate", "--baseline", pair[0], "--candidate", pair[1], "--resamples", "500",
                       "--junit", tmp_path / "missing" / "gate.xml")
    assert code == 2 and "--junit" in err and "cannot write it" in err


def test_workflow_command_escaping():
    assert _escape("50% drop\nnext") == "50%25 drop%0Anext"
    assert _escape("a: b, c", property_value=True) == "a%3A b%2C c"
