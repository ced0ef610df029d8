"""Subset gaps (met vs no-met): unpaired tests per seed, task pairing by name, refusals."""

from __future__ import annotations

import json

import pytest

from metabench import stats
from metabench.errors import MetabenchError
from metabench.report.analyses.gaps import subset_gap, subset_pairs
from metabench.runs.stored import load_run


def test_subset_tasks_pair_by_name():
    names = ["m4x_nli_zs_en_xnli_dev_met", "m4x_nli_zs_en_xnli_dev_no_met", "m4x_nli_ft_nomet_en_met",
             "m4x_nli_ft_nomet_en_no_met", "m4x_nli_ft_all_en_met", "x_nomet", "x_met", "vua_literal", "vua_metaphor",
             "m4x_nli_zs_es_esxnli_no_met", "unrelated"]
    assert subset_pairs(names) == [
        ("m4x_nli_ft_nomet_en_no_met", "m4x_nli_ft_nomet_en_met"),  # "nomet" names the training set here: no pair
        ("m4x_nli_zs_en_xnli_dev_no_met", "m4x_nli_zs_en_xnli_dev_met"),
        ("vua_literal", "vua_metaphor"),
        ("x_nomet", "x_met"),
    ]


@pytest.fixture
def subset_runs(make_run, tmp_path):
    nomet = make_run(tmp_path / "t_nomet" / "m", task="t_nomet", correct={0: [1] * 45 + [0] * 15, 1: [1] * 40 + [0] * 20},
                     ids=[f"n{i}" for i in range(60)])
    met = make_run(tmp_path / "t_met" / "m", task="t_met", correct={0: [1] * 12 + [0] * 18, 1: [1] * 20 + [0] * 10},
                   ids=[f"m{i}" for i in range(30)])
    return nomet, met


def test_gap_per_seed_matches_the_unpaired_tests(subset_runs):
    nomet, met = (load_run(p) for p in subset_runs)
    gaps = subset_gap(nomet, met)
    assert [g.seed for g in gaps] == [0, 1]
    first = gaps[0]
    assert (first.correct_a, first.n_a, first.correct_b, first.n_b) == (45, 60, 12, 30)
    assert first.gap == pytest.approx(12 / 30 - 45 / 60)
    ci = stats.proportion_difference_ci(45, 60, 12, 30)
    assert (first.ci_low, first.ci_high) == pytest.approx((ci.ci_low, ci.ci_high))
    assert first.p_z == pytest.approx(stats.two_proportion_z(45, 60, 12, 30).pvalue)
    assert first.pvalue == pytest.approx(stats.fisher_exact(45, 60, 12, 30).pvalue)


def test_gap_refuses_other_models_same_task_and_shared_items(subset_runs, make_run, tmp_path):
    nomet, met = (load_run(p) for p in subset_runs)
    other = load_run(make_run(tmp_path / "o", task="t_met", model="other", correct={0: [1, 0]}, ids=["m0", "m1"]))
    with pytest.raises(MetabenchError, match="one model on two subsets, but A is model 'm' and B is model 'other'"):
        subset_gap(nomet, other)
    with pytest.raises(MetabenchError, match="both runs are task 't_nomet'"):
        subset_gap(nomet, nomet)
    overlapping = load_run(make_run(tmp_path / "x", task="t_met", correct={0: [1, 0]}, ids=["n0", "m1"]))
    with pytest.raises(MetabenchError, match=r"share 1 item id\(s\), e.g. \['n0'\]"):
        subset_gap(nomet, overlapping)


def test_cli_gap(cli, subset_runs):
    nomet, met = subset_runs
    code, out, err = cli("compare", "gap", nomet, met)
    assert code == 0, err
    assert "gap (B−A)" in out and "mean gap over 2 seeds" in out and "p Fisher (Holm)" in out
    code, old, err = cli("compare", "--gap", nomet, met)  # the old flag: the same output, and the verb named
    assert code == 0 and old == out and "--gap is deprecated: use `metabench compare gap RUN...`" in err
    code, out, _ = cli("compare", "gap", nomet, met, "--json", "--correction", "none")
    gaps = json.loads(out)["gaps"]
    assert [g["p_adjusted"] for g in gaps] == [g["pvalue"] for g in gaps]
    code, _, err = cli("compare", "gap", nomet)
    assert code == 2 and "gap takes exactly two runs" in err


def test_cli_gap_refuses_a_run_that_fails_verification(cli, subset_runs):
    """A met run whose accuracy was raised in results.json alone disagrees with its samples: gap never reads it."""
    nomet, met = subset_runs
    results = json.loads((met / "results.json").read_text())
    results["metrics"]["per_seed"]["0"]["accuracy"] = 0.99
    (met / "results.json").write_text(json.dumps(results))
    code, out, err = cli("compare", "gap", nomet, met)
    assert code == 2 and out == ""
    assert "compare gap: 1 run(s) failed verification and are not read" in err and f"{met} (left out): rejected: " in err
