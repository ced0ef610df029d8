"""Hardness breakdowns: VUA-Verb runs per phi bin of a SOR model, in `compare` and on the leaderboard."""

from __future__ import annotations

import json

import pytest
from statsmodels.stats.proportion import proportion_confint

from metabench.errors import MetabenchError
from metabench_hard.phi_table import FORMAT, find_tables, load_table, save_table, table_name
from metabench_hard.report.hardness import hardness_row
from metabench.runs.stored import load_run
from metabench.store import write_run

M, L = "metaphor", "literal"


def _vua_run(path, model="det", pairs=None, dataset="vua_verb", task="vua_verb"):
    """A detection run on a VUA-Verb-like task: (gold, prediction) per item v0, v1, ..."""
    pairs = pairs or ([(M, M)] * 6 + [(M, L)] * 4 + [(L, L)] * 8 + [(L, M)] * 2 + [(M, M)] * 3 + [(M, L)] * 7)
    samples = [{"id": f"v{i}", "seed": 3, "gold": g, "prediction": p, "scores": {"correct": float(g == p)}}
               for i, (g, p) in enumerate(pairs)]
    per_seed = {"3": {"accuracy": sum(g == p for g, p in pairs) / len(pairs)}}
    results = {
        "schema_version": 1, "created": "2026-01-01T00:00:00+00:00",
        "task": {"name": task, "version": 1, "config_hash": "v" * 64, "kind": "classification",
                 "dataset": dataset, "primary_metric": "accuracy", "source": "synthetic", "plugin": "tests",
                 "config": {"metrics": ["accuracy"], "labels": {"names": [L, M], "positive": M}}},
        "data": {"files": {}}, "model": {"spec": model, "adapter": model, "family": "baseline", "args": {},
                                         "fingerprint": model, "info": {}},
        "seeds": [3], "limit": None, "n_items": len(pairs), "higher_is_better": {"accuracy": True},
        "metrics": {"per_seed": per_seed, "aggregate": {"accuracy": {"mean": per_seed["3"]["accuracy"], "std": 0.0, "n": 1}}},
    }
    write_run(path, results, samples)
    return path


def _table(steps=900):
    # v0-v9: 10 metaphors + v10-v19 literal in 0.0-0.2 / 0.6-0.8; v20-v29 (10 metaphors) have no phi
    phi = {f"v{i}": 0.1 for i in range(5)} | {f"v{i}": 0.7 for i in range(5, 20)}
    return {"format": FORMAT, "label": f"SOR(hf:minilm-l6), {steps} steps", "sor_model": "hf:minilm-l6",
            "sor_steps": steps, "sor_settings": {"steps": steps},
            "sor_changed": {} if steps == 900 else {"steps": steps, "context_words": 10},
            "mine_settings": {}, "mine_changed": {}, "sor_key": "k", "build": "b", "dataset": "vua_verb",
            "split": "test", "counts": {}, "phi": phi}


def test_breakdown_counts_and_wilson_intervals_match_statsmodels(tmp_path):
    row = hardness_row(load_run(_vua_run(tmp_path / "run")), _table())
    bins = {b["phi_bin"]: b for b in row["bins"]}
    assert list(bins) == ["0.0-0.2", "0.6-0.8", "no phi"]
    low = bins["0.0-0.2"]  # v0-v4: all metaphors predicted metaphor
    assert (low["items"], low["metaphors"], low["recall"], low["predicted_metaphors"]) == (5, 5, 1.0, 5)
    mid = bins["0.6-0.8"]  # v5 (M,M), v6-v9 (M,L), v10-v17 (L,L), v18-v19 (L,M)
    assert (mid["metaphors"], mid["recall"], mid["predicted_metaphors"], mid["precision"]) == (5, 0.2, 3, pytest.approx(1 / 3))
    assert mid["recall_ci"] == pytest.approx(proportion_confint(1, 5, alpha=0.05, method="wilson"))
    assert mid["precision_ci"] == pytest.approx(proportion_confint(1, 3, alpha=0.05, method="wilson"))
    assert bins["no phi"]["recall"] == pytest.approx(0.3) and row["items_with_phi"] == 20 and row["seed"] == 3
    narrow = hardness_row(load_run(tmp_path / "run"), _table(), confidence=0.8)["bins"][1]["recall_ci"]
    assert narrow[1] - narrow[0] < mid["recall_ci"][1] - mid["recall_ci"][0]


def test_a_run_without_any_phi_is_an_error(tmp_path):
    table = _table() | {"phi": {"x1": 0.5}}
    with pytest.raises(MetabenchError, match="none of its 30 items has a phi"):
        hardness_row(load_run(_vua_run(tmp_path / "run")), table)


def test_tables_round_trip_and_bad_tables_are_named(tmp_path):
    table = _table(150)
    path = save_table(table, tmp_path / "runs")
    assert path == tmp_path / "runs" / "hard_phi" / "minilm-l6_context_words=10_steps=150" / "hard_phi.json"
    assert load_table(path.parent)["phi"] == table["phi"]
    (tmp_path / "runs" / ".old").mkdir()
    save_table(table, tmp_path / "runs" / ".old")  # set-aside copies are not found
    assert [t["path"] for t in find_tables([tmp_path / "runs"])] == [str(path)]
    assert table_name("hf:pretrained=/m/roberta", {}, {"words": "all"}) == "_m_roberta_words=all"
    path.write_text(json.dumps(table | {"phi": {"v1": 1.5}}))
    with pytest.raises(MetabenchError, match="'v1' is 1.5, not a number in"):
        load_table(path)
    path.write_text("{}")
    with pytest.raises(MetabenchError, match="not a phi table"):
        load_table(path)
    with pytest.raises(MetabenchError, match="no phi table here"):
        load_table(tmp_path / "nowhere")


def test_compare_phi_table(cli, tmp_path):
    run = _vua_run(tmp_path / "runs" / "vua_verb" / "det", task="synthetic_vua_verb")  # read through verification: not named vua_verb
    table = save_table(_table(), tmp_path / "tables")
    code, out, err = cli("compare", "--phi-table", table, run)
    assert code == 0, err
    assert "phi of SOR(hf:minilm-l6), 900 steps" in out and "20 of 30 items have a phi" in out
    assert "| 0.6-0.8 | 15 | 5 | 0.200 [0.04, 0.62] | 3 | 0.333 [0.06, 0.79] |" in out
    code, out, _ = cli("compare", "--phi-table", table, run, "--json")
    assert code == 0 and json.loads(out)["hardness"][0]["bins"][0]["recall"] == 1.0
    code, _, err = cli("compare", "--phi-table", table, "--phi-model", "hf:x", run)
    assert code == 2 and "give one" in err
    code, _, err = cli("compare", "--phi-table", table, "--gap", run, run)
    assert code == 2 and "no other comparison option" in err
    code, _, err = cli("compare", "--phi-table", tmp_path / "nowhere.json", run)
    assert code == 2 and "no phi table here" in err


def test_hard_breakdown_is_the_same_verb_as_compare_phi_table(cli, tmp_path):
    run = _vua_run(tmp_path / "runs" / "vua_verb" / "det", task="synthetic_vua_verb")  # read through verification: not named vua_verb
    table = save_table(_table(), tmp_path / "tables")
    for flags in ((), ("--json",)):
        code, out, err = cli("hard", "breakdown", "--phi-table", table, run, *flags)
        assert code == 0, err
        assert out == cli("compare", "--phi-table", table, run, *flags)[1]
    with pytest.raises(SystemExit) as stopped:  # argparse: one of --phi-table and --model is required
        cli("hard", "breakdown", run)
    assert stopped.value.code == 2


def test_leaderboard_shows_hardness_with_its_sor_model(report_registry, tmp_path):
    from metabench.report.leaderboard import build_site

    runs = tmp_path / "runs"
    # a synthetic run on VUA-Verb's dataset under a task name no registry knows: named vua_verb, it would be
    # checked against VUA-Verb's data and rejected
    _vua_run(runs / "vua_verb" / "det", task="synthetic_vua_verb")
    _vua_run(runs / "other" / "det", dataset="other", task="other")  # a run of another dataset: no breakdown
    save_table(_table(150), runs)
    out = tmp_path / "site"
    build_site(report_registry, [runs], out, n_resamples=200)
    board = json.loads((out / "leaderboard.json").read_text())
    (row,) = board["hardness"]["rows"]
    assert row["task"] == "synthetic_vua_verb" and row["sor_steps"] == 150 and "run" not in row and "table" not in row
    markdown = (out / "leaderboard.md").read_text()
    assert "## Hardness" in markdown and "PARTIAL SOR: 150 of the paper's 900 steps" in markdown
    assert "differ from the paper's: context_words=10." in markdown
    assert "| 0.6-0.8 | 15 | 5 | 0.200 (0.036, 0.624) | 3 | 0.333 (0.061, 0.792) |" in markdown
    gaps = (out / "gaps.html").read_text()
    assert "φ of SOR(hf:minilm-l6), 150 steps" in gaps and "PARTIAL SOR" in gaps
    task_page = (out / "tasks" / f"{row['task_slug']}.html").read_text()
    assert "Hardness" in task_page and "[0.036, 0.624]" in task_page
    # a table folder passed beside a run folder is a source of tables, not a folder without runs
    again = tmp_path / "again"
    build_site(report_registry, [runs / "vua_verb", runs / "hard_phi"], again, n_resamples=200)
    assert len(json.loads((again / "leaderboard.json").read_text())["hardness"]["rows"]) == 1
