"""Published results: the data file is valid and cited, its tasks exist, and the board shows them unranked."""

from __future__ import annotations

import json

import pytest

from metabench.errors import ConfigError
from metabench.report.leaderboard.board import build_board
from metabench.report.leaderboard.schema import Board
from metabench.report.leaderboard.site import write as write_site
from metabench.report.published import Published, load_published
from metabench.runs.stored import find_runs


def test_the_published_file_is_cited_and_names_real_tasks_and_metrics(report_registry):
    from metabench.config.index import TaskIndex
    from metabench.plugins import default_registry

    entries = load_published()
    assert len(entries) >= 15 and all(e.citation and e.source and e.definition for e in entries)
    assert all(e.differences for e in entries if e.protocol != "same")
    index = TaskIndex(default_registry())
    for entry in entries:
        names = index.groups[entry.task].task if entry.task in index.groups else [entry.task]
        for name in names:
            metrics = [m.name for m in index.tasks[name].config.metric_specs()]
            assert entry.metric in metrics, (entry.task, entry.system, entry.metric)


@pytest.mark.parametrize(("text", "message"), [
    ("- task: t\n  sytem: x\n", "published.yaml:2: unknown key 'sytem'"),
    ("- task: t\n  system: x\n  value: 1\n  scale: percent\n  metric: f1\n  definition: d\n  protocol: differs\n"
     "  citation: c\n  source: s\n", "published.yaml:1: protocol is 'differs' but 'differences' does not say how"),
    ("- task: t\n  system: x\n  value: 140\n  scale: percent\n  metric: f1\n  definition: d\n  protocol: same\n"
     "  citation: c\n  source: s\n", "outside the range of a percent"),
    ("- task: t\n  system: x\n", "published.yaml:1: missing key 'value'"),
])
def test_mistakes_in_the_file_name_file_line_and_fix(tmp_path, text, message):
    path = tmp_path / "published.yaml"
    path.write_text(text)
    with pytest.raises(ConfigError) as caught:
        load_published(path)
    assert message in str(caught.value)
    if "sytem" in text:
        assert "did you mean 'system'?" in str(caught.value)


def test_board_shows_published_beside_ours_never_ranked(report_registry, toy_runs, tmp_path):
    published = [Published(task="toy_tag", system="SOTA-tagger", value=91.5, scale="percent", metric="span_f1",
                           definition="span F1", protocol="differs", differences="another split",
                           citation="Someone 2030", source="Table 1")]
    board = build_board(report_registry, find_runs([toy_runs]), options=__import__("metabench.report.compare",
                        fromlist=["Options"]).Options(n_resamples=200), published=published)
    tag = board.task("toy_tag")
    assert "SOTA-tagger" not in {e.model for e in tag.entries}  # never a ranked entry
    [row] = tag.published
    best = next(e for e in tag.entries if e.star)
    assert row.fraction == 0.915 and row.ours.model == best.model
    assert row.ours.delta == pytest.approx(best.metrics["span_f1"].mean - 0.915)
    write_site(Board.model_validate(json.loads(json.dumps(board.to_dict()))), tmp_path)
    page = (tmp_path / "tasks" / "toy_tag.html").read_text()
    assert "Published, not re-run here" in page and "SOTA-tagger" in page and "another split" in page


def test_compare_published_prints_ours_beside_the_published_numbers(cli, toy_runs, monkeypatch):
    from metabench.report import published as module

    monkeypatch.setattr(module, "load_published", lambda: [Published(
        task="toy_cls", system="Paper-X", value=0.8, scale="fraction", metric="accuracy", definition="accuracy",
        protocol="same", citation="X 2031", source="Table 9")])
    code, out, err = cli("compare", toy_runs / "toy_cls" / "lookup", "--published")
    assert code == 0, err
    assert "Published, not re-run here" in out and "Paper-X" in out and "lookup [1 seed]" in out


def test_a_group_level_number_sits_under_the_group_means(report_registry, make_run, tmp_path):
    """A published 10-fold number (e.g. MOH-X) is for a group: shown beside each model's group mean."""
    runs = tmp_path / "runs"
    for task, correct in (("g_f0", [1, 1, 0, 0]), ("g_f1", [1, 1, 1, 0])):
        path = make_run(runs / task / "m", task=task, model="m", correct={0: correct})
        results = json.loads((path / "results.json").read_text())
        results["task"]["groups"] = [{"name": "g", "members": ["g_f0", "g_f1"], "source": ""}]
        (path / "results.json").write_text(json.dumps(results))
    published = [Published(task="g", system="Fold-SOTA", value=0.7, scale="fraction", metric="accuracy",
                           definition="accuracy, 2 folds", protocol="same", citation="Y 2032", source="Table 2")]
    from metabench.report.compare import Options

    board = build_board(report_registry, find_runs([runs]), options=Options(n_resamples=100), published=published)
    [row] = board.published_groups
    assert [o.to_dict() for o in row.ours] == [{"model": "m", "value": pytest.approx(0.625),
                                                "delta": pytest.approx(-0.075)}]
    write_site(Board.model_validate(json.loads(json.dumps(board.to_dict()))), tmp_path / "site")
    assert "Fold-SOTA" in (tmp_path / "site" / "index.html").read_text()
