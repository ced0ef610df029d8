"""``--repeat N``: every draw answered with its own sampling seed and cached apart, the majority scored, flip
rates recorded, deterministic jobs and bad N refused, the dry run counting draws, the gate on majorities."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest

import sampling_plugin
from metabench.errors import MetabenchError
from metabench.launch.repeats import TIE_RULE, check, sampling_seed, vote
from metabench.runner import RunOptions, run
from metabench.store import read_results, read_samples

COIN = "coin:p=0.5,steady=0.3"


@pytest.fixture
def registry(monkeypatch, tmp_path):
    """Built-ins, the toy data and prompted tasks, and the ``coin`` sampling decoder, logging what it answers."""
    import decoder_tasks_plugin
    import toy_plugin

    from metabench import plugins

    monkeypatch.setenv("METABENCH_DATA_DIR", str(toy_plugin.DATA_DIR))
    monkeypatch.setenv("METABENCH_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("COIN_LOG", str(tmp_path / "coin.log"))
    return plugins.load(extra_plugins=(toy_plugin, decoder_tasks_plugin, sampling_plugin))


def _run(registry, tmp_path, folder, tasks="toy_generate", model=COIN, **options):
    outcomes = run(registry, tasks, [model], RunOptions(output_dir=tmp_path / folder, progress=False, **options))
    assert all(o.status == "ok" for o in outcomes), [o.message for o in outcomes]
    return outcomes


def _computed(tmp_path) -> list[tuple[int, str]]:
    log = tmp_path / "coin.log"
    lines = log.read_text().splitlines() if log.exists() else []
    return [(int(seed), key) for seed, key in (line.split("\t") for line in lines)]


def test_vote_takes_the_most_drawn_answer_and_the_first_drawn_on_a_tie():
    assert vote(["a", "b", "b"]).winner == 1 and vote(["a", "b", "b"]).votes == 2
    assert vote(["a", "b", "b"]).flip_rate == pytest.approx(1 / 3)
    assert vote(["b", "a", "a", "b"]).winner == 0  # a 2-2 tie: the answer drawn first
    assert vote(["c", "a", "b", "a", "b"]).winner == 1  # a and b tie at 2: a was drawn first (draw 1)
    assert vote(["x"] * 4).flip_rate == 0
    assert "tie" in TIE_RULE and "first" in TIE_RULE


@pytest.mark.slow
def test_draws_are_voted_recorded_and_scored_on_the_majority(registry, tmp_path):
    (outcome,) = _run(registry, tmp_path, "runs", repeat=5, seeds=[0, 3])
    assert outcome.run_dir.name.endswith("@repeat=5")
    results, samples = read_results(outcome.run_dir), read_samples(outcome.run_dir)
    block = results["repeat"]
    assert block["n"] == 5 and block["tie_rule"] == TIE_RULE and "majority" in block["answers"]
    assert block["sampling_seeds"]["3"] == [sampling_seed(3, r) for r in range(5)]
    assert block["sampling_seeds"]["3"][0] == 3 and len(set(block["sampling_seeds"]["3"])) == 5
    assert len(samples) == 40 * 2  # one row per item and seed, as every reader expects
    correct = {"0": [], "3": []}
    for row in samples:
        labels = ["metaphorical" if "metaph" in d["prediction"].lower() else "literal" for d in row["draws"]]
        best = max(labels.count(label) for label in set(labels))
        assert row["majority_votes"] == best
        assert row["flip_rate"] == pytest.approx(1 - best / 5)
        winner = next(i for i, label in enumerate(labels) if labels.count(label) == best)  # 5 draws: no tie
        assert row["prediction"] == row["draws"][winner]["prediction"]
        assert row["scores"] == row["draws"][winner]["scores"]
        assert [d["sampling_seed"] for d in row["draws"]] == block["sampling_seeds"][str(row["seed"])]
        correct[str(row["seed"])].append(row["scores"]["correct"])
    flips = [row["flip_rate"] for row in samples]
    assert block["mean_flip_rate"] == pytest.approx(sum(flips) / len(flips)) and 0 < block["mean_flip_rate"] < 0.4
    assert block["flipping_items"] == sum(f > 0 for f in flips) < len(samples)  # steady items never flip
    for seed, values in correct.items():  # the headline is the majority answers' accuracy
        assert results["metrics"]["per_seed"][seed]["accuracy"] == pytest.approx(sum(values) / len(values))
        assert len(block["per_seed"][seed]["accuracy_per_draw"]) == 5


@pytest.mark.slow
def test_each_draw_is_computed_once_and_cached_apart(registry, tmp_path):
    (single,) = _run(registry, tmp_path, "plain", seeds=[0])
    plain = _computed(tmp_path)
    assert {seed for seed, _ in plain} == {0} and len(plain) == 40
    (repeated,) = _run(registry, tmp_path, "runs", repeat=3, seeds=[0])
    computed = _computed(tmp_path)[len(plain):]
    # draw 0 is the plain run's own answers (its cache rows); draws 1 and 2 are sampled afresh, with their seeds
    assert sorted({seed for seed, _ in computed}) == sorted([sampling_seed(0, 1), sampling_seed(0, 2)])
    assert len(computed) == 80
    plain_answers = {s["id"]: s["prediction"] for s in read_samples(single.run_dir)}
    samples = read_samples(repeated.run_dir)
    assert all(row["draws"][0]["prediction"] == plain_answers[row["id"]] for row in samples)
    assert any(len({d["prediction"] for d in row["draws"]}) > 1 for row in samples)  # the draws differ

    _run(registry, tmp_path, "again", repeat=3, seeds=[0])
    assert len(_computed(tmp_path)) == 120  # nothing computed again
    _run(registry, tmp_path, "more", repeat=4, seeds=[0])
    fourth = _computed(tmp_path)[120:]
    assert {seed for seed, _ in fourth} == {sampling_seed(0, 3)} and len(fourth) == 40  # only the new draw


@pytest.mark.parametrize("value", [0, -1, 101, 2.5, True, "3"])
def test_a_bad_repeat_is_refused(registry, tmp_path, value):
    with pytest.raises(MetabenchError, match="--repeat"):
        run(registry, "toy_generate", [COIN], RunOptions(output_dir=tmp_path / "runs", progress=False, repeat=value))


@pytest.mark.parametrize(("tasks", "model", "why"), [
    ("toy_choice", COIN, "ChoiceRequest"),  # scored options
    ("toy_cls", "majority", "baseline"),
])
def test_deterministic_jobs_are_refused_before_anything_runs(registry, tmp_path, tasks, model, why):
    with pytest.raises(MetabenchError, match=f"--repeat 3: task .* cannot repeat: .*{why}") as caught:
        run(registry, tasks, [model], RunOptions(output_dir=tmp_path / "runs", progress=False, repeat=3))
    assert "temperature" in caught.value.hint
    assert not (tmp_path / "coin.log").exists()


def test_greedy_generation_is_refused():
    from metabench.requests import GenerateRequest

    task = SimpleNamespace(name="greedy", config=SimpleNamespace(protocol=SimpleNamespace(decoder=SimpleNamespace(temperature=0.0))))
    adapter = SimpleNamespace(name="coin", family="decoder")
    kind = SimpleNamespace(request_type=lambda: GenerateRequest)
    with pytest.raises(MetabenchError, match="temperature is 0"):
        check(task, "coin", adapter, kind, 2)
    check(task, "coin", adapter, kind, 1)  # one draw is always allowed


def test_the_dry_run_counts_the_draws(registry, tmp_path):
    from metabench.dry_run import plan_lines, plan_run

    _run(registry, tmp_path, "runs", seeds=[0])  # records the split's size, which the toy dataset does not declare
    plan = plan_run("toy_generate", [COIN], repeat=4, output_dir=tmp_path / "runs", registry=registry)
    (job,) = plan.jobs
    assert job.draws == 4 and job.test_answers == 40 * 2 * 4
    assert job.run_dir.name.endswith("@repeat=4")
    assert any("× 4 draws (--repeat)" in line for line in plan_lines(plan))
    refused = plan_run("toy_choice", [COIN], repeat=4, output_dir=tmp_path / "runs", registry=registry)
    assert refused.jobs[0].status == "failed" and "--repeat 4" in refused.jobs[0].reason


@pytest.mark.slow
def test_the_gate_compares_majorities_and_reports_flips(registry, tmp_path):
    from metabench.report.gate import gate
    from metabench.runs.stored import load_run

    (base,) = _run(registry, tmp_path, "base", repeat=5)
    (cand,) = _run(registry, tmp_path, "cand", model="coin:p=0.6,steady=0.3", repeat=5)
    (single,) = _run(registry, tmp_path, "single", model="coin:p=0.6,steady=0.3")
    baseline, candidate = load_run(base.run_dir), load_run(cand.run_dir)
    report = gate(registry, [baseline], [candidate])
    (comparison,) = report.comparisons
    assert comparison.baseline_value == pytest.approx(baseline.record.raw["metrics"]["aggregate"]["accuracy"]["mean"])
    (line,) = [n for n in report.notes if "flip rate" in n]
    rows_b = {(r["id"], r["seed"]): r for r in baseline.samples}
    rows_c = {(r["id"], r["seed"]): r for r in candidate.samples}
    differ = [k for k in rows_b if rows_b[k]["scores"] != rows_c[k]["scores"]]
    flipping = [k for k in differ if rows_b[k]["flip_rate"] > 0 or rows_c[k]["flip_rate"] > 0]
    assert f"of the {len(differ)} item(s) whose majority verdict differs between the runs, {len(flipping)} flip" in line
    assert f"candidate {candidate.record.raw['repeat']['mean_flip_rate']:.3f}" in line

    mixed = gate(registry, [baseline], [load_run(single.run_dir)])
    assert any("the baseline's answers are majorities of 5 draws, the candidate's single draws" in n for n in mixed.notes)


def test_a_real_sampling_decoder_draws_differently_and_reproducibly(decoder_registry, tmp_path, tiny_gpt2):
    """The tiny random GPT-2 through HFLM: each draw's sampling seed changes what is sampled, and the same
    command samples the same draws again (no cache: both runs compute every draw)."""
    model = f"hf-decoder:{tiny_gpt2},batch_size=4"
    first, again = (run(decoder_registry, "toy_generate", [model],
                        RunOptions(output_dir=tmp_path / name, progress=False, limit=4, seeds=[0], repeat=3,
                                   use_cache=False))[0] for name in ("a", "b"))
    assert first.status == "ok", first.message
    samples = read_samples(first.run_dir)
    assert samples == read_samples(again.run_dir)
    assert any(len({d["prediction"] for d in row["draws"]}) > 1 for row in samples)


def test_the_command_line_and_a_run_config_take_repeat(registry, tmp_path, monkeypatch, capsys):
    from metabench import plugins
    from metabench.cli import main
    from metabench.config.run_config import read_run_config

    monkeypatch.setattr(plugins, "default_registry", lambda: registry)
    out = tmp_path / "runs"
    assert main(["--tasks", "toy_generate", "--model", COIN, "--repeat", "2.5", "-o", str(out)]) == 2
    assert "--repeat 2.5: must be a whole number" in capsys.readouterr().err
    assert main(["--tasks", "toy_choice", "--model", COIN, "--repeat", "3", "-o", str(out)]) == 2
    assert "cannot repeat" in capsys.readouterr().err and not out.exists()
    assert main(["--tasks", "toy_generate", "--model", COIN, "--repeat", "3", "--seeds", "0,", "-o", str(out)]) == 0
    assert "majority of 3 draws, flip rate" in capsys.readouterr().out
    config = tmp_path / "run.yaml"
    config.write_text("tasks: toy_generate\nmodels: coin\nrepeat: 3\n")
    assert read_run_config(config)["repeat"] == 3
    config.write_text("tasks: toy_generate\nmodels: coin\nrepeat: '3'\n")
    with pytest.raises(MetabenchError, match="repeat"):
        read_run_config(config)


@pytest.mark.slow
def test_the_simulation_quoted_in_the_decoders_docs_prints_what_the_page_shows():
    """docs/decoders.md quotes tools/sim_repeat_gate.py's output (seeded, so deterministic): rerun the quoted command
    and hold the page to what it prints, so the figures there change only with the tool."""
    repo = Path(__file__).resolve().parents[2]
    page = (repo / "docs" / "decoders.md").read_text(encoding="utf-8")
    quoted = re.search(r"```\n\$ \.venv/bin/python (tools/sim_repeat_gate\.py[^\n]*)\n(.*?)```", page, re.S)
    assert quoted, "docs/decoders.md no longer quotes tools/sim_repeat_gate.py"
    done = subprocess.run([sys.executable, *quoted[1].split()], cwd=repo, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert done.stdout == quoted[2], "docs/decoders.md: paste the command's output again"
