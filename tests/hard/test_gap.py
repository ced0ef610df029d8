"""The HARD-vs-VUA gap: unit selection, Welch t and pooled z against scipy/statsmodels, phi-bin breakdown."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.stats
from statsmodels.stats.proportion import proportions_ztest

from metabench.errors import MetabenchError
from metabench_hard.gap import breakdown, distinct, gap_test, sentence_units


def samples(pairs, prefix):
    return [{"id": f"{prefix}{i}", "gold": g, "prediction": p, "seed": 0} for i, (g, p) in enumerate(pairs)]


M, L = "metaphor", "literal"
VUA = samples([(M, M)] * 40 + [(M, L)] * 10 + [(L, L)] * 45 + [(L, M)] * 5, "v")
HARD = samples([(M, M)] * 12 + [(M, L)] * 8 + [(L, L)] * 11 + [(L, M)] * 9, "h")


def test_recall_gap_matches_scipy_and_statsmodels():
    result = gap_test(VUA, HARD, "recall")
    assert (result.vua, result.hard, result.n_vua, result.n_hard) == (0.8, 0.6, 50, 20)
    assert result.gap == pytest.approx(-0.2)
    x, y = np.array([1] * 40 + [0] * 10), np.array([1] * 12 + [0] * 8)
    expected = scipy.stats.ttest_ind(y, x, equal_var=False)
    assert (result.t, result.p_t) == pytest.approx((expected.statistic, expected.pvalue))
    z, p = proportions_ztest([12, 40], [20, 50])
    assert (result.z, result.p_z) == pytest.approx((z, p))


def test_precision_units_are_the_predicted_metaphors():
    result = gap_test(VUA, HARD, "precision")
    assert (result.n_vua, result.n_hard) == (45, 21)
    assert result.vua == pytest.approx(40 / 45) and result.hard == pytest.approx(12 / 21)


def test_no_units_is_an_error_not_a_nan():
    silent = samples([(M, L)] * 5 + [(L, L)] * 5, "s")
    with pytest.raises(MetabenchError, match="too few units"):
        gap_test(VUA, silent, "precision")


def test_breakdown_by_phi_bin():
    phi = {"h0": 0.1, "h1": 0.15, "h12": 0.7, "h13": 0.75}
    rows = {r["phi_bin"]: r for r in breakdown(HARD[:20], phi)}
    assert rows["0.0-0.2"]["metaphors"] == 2 and rows["0.0-0.2"]["recall"] == 1.0
    assert rows["0.6-0.8"]["recall"] == 0.0
    assert rows["no phi"]["metaphors"] == 16 and rows["no phi"]["recall"] == pytest.approx(10 / 16)
    assert list(rows)[-1] == "no phi"


def test_precision_is_tested_on_distinct_sentences():
    """Three metaphors share one literal negative (the build's nearest_literal): the copies are one unit, so the
    test counts that sentence once, against the scipy test on the distinct units written out by hand."""
    rows = [{"id": f"m{i}", "nearest_literal": "lit0"} for i in range(3)] + [{"id": "m3", "nearest_literal": "lit1"},
                                                                            {"id": "m4", "nearest_literal": None}]
    unit_of = sentence_units(rows)
    assert unit_of["lit:m0"] == unit_of["lit:m2"] == "lit0" and "lit:m4" not in unit_of
    hard = ([{"id": f"hard:m{i}", "gold": M, "prediction": M, "seed": 0} for i in range(5)]
            + [{"id": f"lit:m{i}", "gold": L, "prediction": M, "seed": 0} for i in range(3)]  # one sentence, 3 copies
            + [{"id": "lit:m3", "gold": L, "prediction": L, "seed": 0}])
    units = distinct(hard, unit_of)
    assert [s["id"] for s in units] == ["hard:m0", "hard:m1", "hard:m2", "hard:m3", "hard:m4", "lit:m0", "lit:m3"]
    result = gap_test(VUA, units, "precision")
    assert (result.n_hard, result.hard) == (6, pytest.approx(5 / 6))  # counting copies: 8 units, 5/8
    expected = scipy.stats.ttest_ind(np.array([1] * 5 + [0]), np.array([1] * 40 + [0] * 5), equal_var=False)
    assert (result.t, result.p_t) == pytest.approx((expected.statistic, expected.pvalue))


def test_gap_takes_the_hard_runs_settings_and_a_missing_build_names_them():
    from types import SimpleNamespace

    from metabench_hard.commands import _settings_of
    from metabench_hard.sor import SORSettings
    from metabench_hard.store import MineSettings, parse_mine_settings, settings_flags

    recorded = {"sor": "steps=300,context_words=10", "mine": "min_instances=4", "xi": 0.8}
    run = SimpleNamespace(record=SimpleNamespace(task=SimpleNamespace(config=SimpleNamespace(dataset_args=recorded))))
    args = SimpleNamespace(sor="", mine="")
    _settings_of(run, args)
    assert (args.sor, args.mine) == ("steps=300,context_words=10", "min_instances=4")
    given = SimpleNamespace(sor="steps=150", mine="")
    _settings_of(run, given)  # a flag given on the command line wins
    assert (given.sor, given.mine) == ("steps=150", "min_instances=4")
    with pytest.warns(FutureWarning):  # min_instances=4: both gates 4, so only the pool gate differs from default
        flags = settings_flags(SORSettings.parse(args.sor), parse_mine_settings(args.mine))
    assert flags == " --sor steps=300,context_words=10 --mine pool_min_instances=4"
    assert parse_mine_settings(flags.split("--mine ")[1]) == parse_mine_settings("pool_min_instances=4,rate_min_instances=4")
    assert settings_flags(SORSettings(), MineSettings()) == ""
