"""The plugin API's deprecations have a date (issue 59 item 2): every place in metabench that warns about a
deprecated form is listed here with the metabench version that removes it, and a test fails once metabench reaches
that version with the form still there. The dict faces of 0.1 (``Run.results``, ``Run(path, dict)``,
``JobOutcome.results``, a metric summary indexed by key, results.json dicts given to the group functions, the
untyped reporter, ``runner.run(launch=)``, ``gate(max_drop=)`` and the moved modules' aliases) were removed
instead: metabench is 0.1.0 and its only plugins are in-tree (docs/plugins.md, change log). In this suite the
plugin API's deprecation warning is an error (pyproject.toml, ``filterwarnings``), so no test, and no in-tree
plugin, leans on a deprecated form without saying so with ``pytest.warns``.
"""

from __future__ import annotations

import ast
import warnings
from pathlib import Path

import pytest

from metabench.version import __version__

PACKAGE = Path(__file__).resolve().parents[2] / "metabench"

#: (module, the function that warns) -> (the metabench version that removes the deprecated form, what it is).
KEPT: dict[tuple[str, str], tuple[str, str]] = {
    ("metabench/models/spec.py", "_build_old_style"): (
        "0.2", "an adapter whose __init__ takes no registry= and settings= (plugin API 1): a third party's adapter "
               "written before API 2 may do so, and the change log promised it one minor version"),
    ("metabench/runs/stored.py", "Run.__getattr__"): (
        "0.2", "the record's answers a Run forwarded (run.task, run.model, run.seeds, run.aggregate(m)...): a Run is "
               "its folder, its record and its samples, so read run.record.task.name, run.record.seeds... (issue 59 "
               "item 5); a plugin's report written against the forwarding names keeps working one minor version"),
    ("metabench/report/leaderboard/schema.py", "Part._key"): (
        "0.2", "a board part read as a dict (board['tasks'], entry.get('marks')) by a section view: kept while the "
               "board's builders, which still assemble the JSON's dict, are retyped (issue 59 item 1)"),
}


def _version(text: str) -> tuple[int, ...]:
    return tuple(int(part) for part in text.split("+")[0].split(".")[:3] if part.isdigit())


def deprecation_sites(root: Path) -> set[tuple[str, str]]:
    """(module, enclosing function's qualified name) of every call under ``root`` that warns with a
    ``DeprecationWarning`` (or ``PluginAPIDeprecationWarning``)."""
    found = set()
    for path in sorted(root.rglob("*.py")):
        module = path.relative_to(root.parent).as_posix()

        def visit(node: ast.AST, scope: str) -> None:
            for child in ast.iter_child_nodes(node):
                if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                    visit(child, f"{scope}.{child.name}" if scope else child.name)
                    continue
                if isinstance(child, ast.Call):
                    func = child.func
                    name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
                    if name in ("warn", "warn_explicit") and "DeprecationWarning" in ast.unparse(child):
                        found.add((module, scope or "<module>"))
                visit(child, scope)

        visit(ast.parse(path.read_text(encoding="utf-8")), "")
    return found


def test_every_deprecation_is_listed_with_the_version_that_removes_it():
    """A new deprecated form is added here with its removal version; a removed one leaves the list with it."""
    assert deprecation_sites(PACKAGE) == set(KEPT)
    assert all(_version(version) > (0, 1) and len(why) > 40 for version, why in KEPT.values())


def test_no_deprecated_form_outlives_its_removal_version():
    due = [f"{module}:{function} (remove in {version})" for (module, function), (version, _) in KEPT.items()
           if _version(__version__) >= _version(version)]
    assert due == [], f"metabench {__version__} still has deprecated forms due for removal"


def test_the_suite_makes_the_plugin_apis_deprecation_an_error():
    from metabench.errors import PluginAPIDeprecationWarning

    with pytest.raises(PluginAPIDeprecationWarning):
        warnings.warn("a deprecated form", PluginAPIDeprecationWarning, stacklevel=1)


def test_the_dict_faces_are_gone():
    from metabench.launch.outcomes import JobOutcome
    from metabench.run_record import MetricSummary
    from metabench.runs.stored import Run, load_run
    from metabench.store import COMMITTED_RUNS, run_folders

    run = load_run(run_folders(PACKAGE.parent / COMMITTED_RUNS)[0])
    assert not hasattr(run, "results") and not hasattr(JobOutcome("t", "m", "ok"), "results")
    with pytest.raises(TypeError, match="RunRecord"):
        Run(run.path, run.record.raw)
    with pytest.raises(TypeError):
        MetricSummary(mean=0.5, std=0.0, n=1)["mean"]  # read .mean
    for moved in ("metabench.report.runs", "metabench.report.docs_blocks", "metabench.report.gate_replay"):
        with pytest.raises(ModuleNotFoundError):
            __import__(moved)


def test_the_names_run_forwarded_from_its_record_warn_and_still_answer():
    """``Run`` is its folder, record and samples (issue 59 item 5): the 13 answers it forwarded from its record
    still answer until 0.2, each with the warning naming what to read instead; any other name is no attribute."""
    from metabench.errors import PluginAPIDeprecationWarning
    from metabench.runs.stored import FORWARDED, load_run
    from metabench.store import COMMITTED_RUNS, run_folders

    run = load_run(run_folders(PACKAGE.parent / COMMITTED_RUNS)[0])
    record, metric = run.record, run.record.primary_metric
    expected = {"task": record.task.name, "model": record.model.spec, "seeds": record.seeds,
                "primary_metric": metric, "n_items": record.n_items, "protocol_seeds": record.protocol_seeds,
                "budget": record.budget, "datasets": record.datasets, "groups": record.groups,
                "paper_view": record.paper_view}
    called = {"higher_is_better": record.higher_is_better_for(metric), "aggregate": record.aggregate(metric),
              "per_seed": record.per_seed(metric)}
    assert set(expected) | set(called) == set(FORWARDED) and len(FORWARDED) == 13
    for name in FORWARDED:
        with pytest.warns(PluginAPIDeprecationWarning, match=rf"Run\.{name} is deprecated: read run\.record\."):
            value = getattr(run, name)
        assert (value(metric) if name in called else value) == (called[name] if name in called else expected[name])
    with pytest.raises(AttributeError):
        run.results  # noqa: B018 - removed before (the dict face), not forwarded
