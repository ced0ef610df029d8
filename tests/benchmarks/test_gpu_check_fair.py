"""The GPU check's fair comparisons (issue #57 item 3), on the CPU and cheaply: the dry-run plan names every fairness
rule and the profile file, and the in-process scoring comparison runs both sides warm, alternated, at least three
times, agreeing, with a profile of each; the tagger's decode cap is the longest gold tagged copy. The full CPU smoke
run of every path is tests/core/test_gpu_check.py's (slow)."""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest

from mirror import REPO, mirror_dir

# slow: the plan builds the check's shapes (~40 s of CPU) and the scoring loads a model per side, over the quick
# tier's budget; CI runs both tiers
pytestmark = [pytest.mark.mirror, pytest.mark.slow]


def _gpu_check():
    sys.path.insert(0, str(REPO / "benchmarks"))
    spec = importlib.util.spec_from_file_location("gpu_check", REPO / "benchmarks" / "gpu_check.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def tiny_llama(tmp_path_factory):
    if mirror_dir() is None:
        pytest.skip("needs the data mirror (METABENCH_DATA_DIR)")
    sys.path.insert(0, str(REPO / "tests" / "decoders"))
    from tiny import build_tiny_llama

    return build_tiny_llama(tmp_path_factory.mktemp("tiny-llama"), max_positions=4096)


def test_the_dry_run_names_every_fairness_rule_and_the_profile_file(tmp_path):
    if mirror_dir() is None:
        pytest.skip("needs the data mirror (METABENCH_DATA_DIR)")
    env = {**os.environ, "METABENCH_DATA_DIR": str(mirror_dir()), "OUT": str(tmp_path / "out"),
           "GPU_CHECK_WORK": str(tmp_path / "work"), "PYTHON": sys.executable}
    done = subprocess.run(["bash", str(REPO / "benchmarks" / "gpu_check.sh"), "--dry-run"], env=env, cwd=REPO,
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    plan = json.loads(done.stdout[: done.stdout.rindex("}") + 1])
    assert set(plan["fairness"]) == {"scoring", "profile", "tagger", "encoder", "models"}
    assert plan["outputs"] == ["gpu_check.json", "gpu_check_profile.txt"]
    assert plan["sizes"]["repeat"] >= 3 and plan["sizes"]["encoder_repetitions"] >= 3
    assert not (tmp_path / "work").exists() and not (tmp_path / "out").exists()


def _ctx(tmp_path) -> SimpleNamespace:
    module = _gpu_check()
    return SimpleNamespace(device="cpu", dtype="float32", sizes=module.SIZES["cpu-smoke"], work=tmp_path, profiles=[])


def test_fair_scoring_runs_both_sides_warm_alternated_and_profiled(tiny_llama, tmp_path):
    module = _gpu_check()
    ctx = _ctx(tmp_path)
    out = module.fair_scoring("munch_word_judge_implicit_p1", 4, tiny_llama, ctx)
    assert out["requests"] == 16 and out["same_argmax"] == out["items"] == 4
    assert out["max_abs_loglikelihood_diff"] < 1e-4 and out["max_abs_loglikelihood_diff_softmax_float32"] < 1e-4
    for side in ("metabench", "lm_eval"):
        summary = out[side]
        assert summary["repetitions"] == ctx.sizes["repeat"] >= 3
        assert 0 < summary["wall_s_min"] <= summary["wall_s_median"]
        assert summary["model_s_median"] > 0 and summary["forwards"] > 0
        assert summary["gpu_idle_share"] is None  # no device kernels on the CPU
    # one read of the host per batch of items on metabench's side, one per request (or more) on lm-eval's
    assert out["metabench"]["syncs"] < out["lm_eval"]["syncs"]
    (profile,) = ctx.profiles
    assert "metabench" in profile and "lm_eval" in profile and "aten::" in profile


def test_the_tagger_decode_cap_is_the_longest_gold_tagged_copy(tiny_llama):
    module = _gpu_check()
    cap = module.gold_decode_cap(Path(tiny_llama), 6)
    assert cap["sentences"] == 6 and cap["max_new_tokens"] >= cap["gold_mean_tokens"] > 1
    assert "gold" in cap["rule"]
