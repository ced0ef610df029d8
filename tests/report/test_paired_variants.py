"""Paired metaphor effect: original vs paraphrase runs over shared ids, tests as the stats functions give."""

from __future__ import annotations

import json

import pytest

from metabench import stats
from metabench.errors import MetabenchError
from metabench.runs.align import AlignmentError
from metabench.report.analyses.paired_variants import is_variant_of, paired_effect, variant_pairs
from metabench.runs.stored import load_run
from metabench.store import read_results, read_samples, write_run


def test_variant_tasks_pair_by_name():
    assert is_variant_of("mlp_impli_original_nli_zero", "mlp_impli_paraphrase_mistral_nli_zero")
    assert not is_variant_of("mlp_impli_original_nli_zero", "mlp_flute_paraphrase_mistral_nli_zero")
    assert not is_variant_of("mlp_impli_original_nli_zero", "mlp_impli_paraphrase_mistral_chain")


@pytest.fixture
def variants(make_run, tmp_path):
    ids = [f"s:{i}" for i in range(40)]
    original = make_run(tmp_path / "o", task="t_original_p", correct={0: [1] * 20 + [0] * 20}, ids=ids)
    # the paraphrase run lacks two originals (as the IMPLI Mistral file) and has one item of its own
    para_ids = ids[2:] + ["s:99"]
    para = make_run(tmp_path / "p", task="t_paraphrase_gen_p", correct={0: [1] * 18 + [1] * 12 + [0] * 8 + [1]},
                    ids=para_ids)
    return load_run(original), load_run(para)


def test_single_seed_effect_is_mcnemar_over_shared_ids(variants):
    original, para = variants
    assert variant_pairs([para, original]) == [(original, para)]
    effect = paired_effect(original, para, n_resamples=2000)
    shared_o = [1] * 18 + [0] * 20  # ids s:2..s:39 in the original run
    shared_p = [1] * 30 + [0] * 8
    assert (effect.n_items, effect.only_original, effect.only_paraphrase) == (38, 2, 1)
    assert effect.effect == pytest.approx(18 / 38 - 30 / 38)
    expected = stats.mcnemar(shared_p, shared_o)
    assert effect.test == "mcnemar" and effect.pvalue == pytest.approx(expected.pvalue)
    assert effect.discordant == {"literal_right_metaphor_wrong": expected.b, "metaphor_right_literal_wrong": expected.c}
    assert effect.ci_low < effect.effect < effect.ci_high < 0


def test_seeds_give_a_paired_t_on_per_seed_accuracy(make_run, tmp_path):
    ids = [f"s:{i}" for i in range(10)]
    o = load_run(make_run(tmp_path / "o", task="t_original", ids=ids,
                          correct={0: [1] * 5 + [0] * 5, 1: [1] * 6 + [0] * 4, 2: [1] * 4 + [0] * 6}))
    p = load_run(make_run(tmp_path / "p", task="t_paraphrase_x", ids=ids,
                          correct={0: [1] * 8 + [0] * 2, 1: [1] * 7 + [0] * 3, 2: [1] * 9 + [0]}))
    effect = paired_effect(o, p)
    expected = stats.paired_t([0.8, 0.7, 0.9], [0.5, 0.6, 0.4])
    assert effect.test == "paired_t" and effect.pvalue == pytest.approx(expected.pvalue)
    assert effect.effect == pytest.approx(-0.3) and (effect.ci_low, effect.ci_high) == pytest.approx(
        (expected.ci_low, expected.ci_high))


def test_refuses_disjoint_ids_other_gold_and_other_models(variants, make_run, tmp_path):
    original, _ = variants
    disjoint = load_run(make_run(tmp_path / "d", task="t_paraphrase_gen_p", correct={0: [1, 0]}, ids=["x", "y"]))
    with pytest.raises(AlignmentError, match="share no item id"):
        paired_effect(original, disjoint)
    other = load_run(make_run(tmp_path / "m", task="t_paraphrase_gen_p", model="other", correct={0: [1]}, ids=["s:0"]))
    with pytest.raises(MetabenchError, match="one model on two variants"):
        paired_effect(original, other)
    regold = make_run(tmp_path / "g", task="t_paraphrase_gen_p", correct={0: [1, 1]}, ids=["s:0", "s:1"])
    samples = read_samples(regold)
    samples[0]["gold"] = "no"
    write_run(regold, read_results(regold), samples, overwrite=True)  # consistent files, a different gold
    with pytest.raises(AlignmentError, match=r"^1 shared item id\(s\) have different gold answers in 't_original_p' and "
                                             r"'t_paraphrase_gen_p', e.g. \['s:0'\]: the tasks are not variants") as error:
        paired_effect(original, load_run(regold))
    assert error.value.hint == "variant tasks must rewrite the same items and keep their gold labels"


def test_controls_stack_both_sides_of_each_shared_item(variants, monkeypatch):
    from metabench.report.analyses import controls as controls_module

    original, para = variants
    features = {f"s:{i}": (i / 100, 10 + i % 7) for i in range(100)}
    monkeypatch.setattr(controls_module, "item_features", lambda registry, run: features)
    result = controls_module.controls(None, original, para, paired=True)
    assert (result.regression.n, result.regression.clusters) == (76, 38)
    assert result.regression.covariance.startswith("conditional") or result.regression.note
    assert sum(b.n_metaphor for b in result.bins) == sum(b.n_literal for b in result.bins) == 38
    unpaired = controls_module.controls(None, original, para, paired=False)
    assert unpaired.regression.n == 40 + 39 and unpaired.regression.clusters is None


def test_gaps_page_shows_paired_effects_and_says_why_controls_are_missing(variants, report_registry, tmp_path):
    from metabench.report.leaderboard import build_site

    original, para = variants
    build_site(report_registry, [original.path, para.path], tmp_path / "site")
    page = (tmp_path / "site" / "gaps.html").read_text()
    assert "Paired metaphor effects" in page and "t_paraphrase_gen_p" in page
    assert f"{18 / 38 - 30 / 38:+.4f}" in page and "mcnemar" in page
    assert "no controls:" in page and "not registered here" in page
    board = json.loads((tmp_path / "site" / "leaderboard.json").read_text())
    assert board["gaps"]["paired"]["layout"][0]["paraphrases"]["gen"]["n_items"] == 38


def test_gaps_page_renders_fitted_paired_controls(make_run, report_registry, tmp_path, monkeypatch):
    import random

    from metabench.report.leaderboard import build_site
    from metabench.report.analyses.surface import SurfaceFeatures

    rng = random.Random(7)
    ids = [f"s:{i}" for i in range(120)]
    original = make_run(tmp_path / "o", task="u_original_p", ids=ids, correct={0: [rng.random() < 0.5 for _ in ids]})
    para = make_run(tmp_path / "p", task="u_paraphrase_gen_p", ids=ids, correct={0: [rng.random() < 0.6 for _ in ids]})
    features = {task: {item: (rng.random(), rng.randint(8, 40)) for item in ids} for task in ("u_original_p", "u_paraphrase_gen_p")}
    monkeypatch.setattr(SurfaceFeatures, "__call__", lambda self, run: features[run.record.task.name])
    build_site(report_registry, [original, para], tmp_path / "site")
    board = json.loads((tmp_path / "site" / "leaderboard.json").read_text())
    row = board["gaps"]["controls"]["rows"][0]
    assert row["regression"]["note"] is None, row["regression"]["note"]
    assert row["design"] == "paired" and row["length_coef"] is not None and row["regression"]["covariance"].startswith("conditional")
    assert row["regression"]["verdict"] in (tmp_path / "site" / "gaps.html").read_text().replace("&#39;", "'")


def test_paper_layout_names_the_prompt_type_by_suffix_scored_apart_from_generated():
    from metabench.report.analyses.metaphor_effects import _paper_layout

    def row(task):
        return {"original_task": task, "model": "m", "accuracy_original": 0.5, "accuracy_paraphrase": 0.5,
                "effect": 0.0, "n_items": 4, "significant": False, "partial": False, "generator": "Mistral-7B"}

    layout = _paper_layout([row("mlp_flute_original_nli_zero"), row("mlp_flute_original_nli_zero_ll"),
                            row("mlp_flute_original_sick")])
    assert [e["prompt"] for e in layout] == ["nli-zero", "nli-zero, scored (label-word log-likelihood)",
                                             "encoder (SICK-trained)"]
