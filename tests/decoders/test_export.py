"""``metabench export lm-eval``: lm-eval loads the exported tasks and scores the very same requests."""

from __future__ import annotations

import json

import pytest
from tolerance import approx_f32


@pytest.fixture
def exported(decoder_registry, tmp_path):
    from metabench.export.lmeval import export_lmeval

    out = tmp_path / "export"
    done = export_lmeval(decoder_registry, "toy_choice,toy_generate,toy_rank", out, limit=8)
    return out, {e.task: e for e in done}


def test_export_writes_yaml_data_and_utils(exported, decoder_registry):
    out, done = exported
    assert set(done) == {"toy_choice", "toy_generate", "toy_rank"}
    assert (out / "metabench_lmeval_utils.py").is_file() and (out / "README.md").is_file()
    rows = [json.loads(line) for line in open(out / "data" / "toy_choice.jsonl")]
    assert len(rows) == 8 and rows[0]["choices"] == [" literal", " metaphorical"]
    assert rows[0]["query"].startswith("Sentence: ") and rows[0]["query"].endswith("Answer:")
    text = (out / "toy_choice.yaml").read_text()
    assert "output_type: multiple_choice" in text and 'target_delimiter: ""' in text
    assert "process_results: !function metabench_lmeval_utils.process_label" in (out / "toy_generate.yaml").read_text()
    assert "seeded runs" in " ".join(done["toy_generate"].notes)
    assert "ranking task" in " ".join(done["toy_rank"].notes)


@pytest.mark.slow
def test_lm_eval_scores_the_exported_choice_task_like_metabench(exported, tiny_decoder):
    from lm_eval.evaluator import simple_evaluate
    from lm_eval.tasks import TaskManager

    from metabench.requests import ChoiceRequest

    out, _ = exported
    manager = TaskManager(include_path=str(out), include_defaults=False)
    results = simple_evaluate(model=tiny_decoder.lm, tasks=["toy_choice", "toy_generate"], task_manager=manager,
                              log_samples=True, bootstrap_iters=0)
    rows = [json.loads(line) for line in open(out / "data" / "toy_choice.jsonl")]
    ours = tiny_decoder.predict([ChoiceRequest(r["query"], tuple(r["choices"])) for r in rows], seed=0)
    theirs = {s["doc"]["id"]: s for s in results["samples"]["toy_choice"]}
    for row, answer in zip(rows, ours):
        lls = [float(r[0]) for r in theirs[row["id"]]["filtered_resps"]]
        assert answer["loglikelihoods"] == approx_f32(lls)
        assert answer["index"] == max(range(len(lls)), key=lambda i: (lls[i], -i))
    accuracy = sum(a["index"] == r["gold"] for a, r in zip(ours, rows)) / len(rows)
    assert results["results"]["toy_choice"]["acc,none"] == pytest.approx(accuracy)
    generated = results["results"]["toy_generate"]
    assert 0.0 <= generated["acc,none"] <= 1.0 and "parse_ok,none" in generated


@pytest.mark.slow
def test_export_cli(tmp_path, monkeypatch, capsys):
    import toy_plugin

    from metabench import plugins
    from metabench.cli import main

    monkeypatch.setenv("METABENCH_DATA_DIR", str(toy_plugin.DATA_DIR))
    monkeypatch.setenv("METABENCH_PLUGIN_MODULES", "toy_plugin,decoder_tasks_plugin")
    plugins.default_registry.cache_clear()
    try:
        assert main(["export", "lm-eval", str(tmp_path / "x"), "--tasks", "toy_choice", "--limit", "3"]) == 0
    finally:
        plugins.default_registry.cache_clear()
    assert "toy_choice: 3 items, multiple_choice" in capsys.readouterr().out
    assert (tmp_path / "x" / "toy_choice.yaml").is_file()


@pytest.mark.slow
def test_exported_tags_do_not_collide_with_lm_eval_tasks(exported):
    import yaml
    from lm_eval.tasks import TaskManager

    out, done = exported
    ours = set(done)
    for path in out.glob("*.yaml"):
        ours.update(yaml.safe_load(path.read_text().replace("!function", "")).get("tag", []))
    assert "metabench_metaphor" in ours
    builtin = set(TaskManager().all_tasks)
    assert "metabench" in builtin  # lm-eval's own, unrelated benchmark: the name the export used to shadow
    assert not ours & builtin, ours & builtin
