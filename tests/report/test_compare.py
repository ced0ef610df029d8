"""`metabench compare`: the right test for each pair, numbers equal to the stats functions, clear refusals."""

from __future__ import annotations

import json
import shutil

import numpy as np
import pytest

from metabench import stats
from metabench.errors import MetabenchError, RunFileError
from metabench.metrics.tagging import f1_from_counts
from metabench.runs.align import AlignmentError, pair
from metabench.report.compare import Options, adjust, compare_pair, compare_runs
from metabench.runs.stored import find_runs, load_run
from metabench.stats.power import mcnemar_mde, normal_mde, paired_t_mde
from metabench.stats.seed_order import almost_stochastic_order
from metabench.store import read_results, read_samples, write_run

FAST = Options(n_resamples=2000)


def _correct(run_dir) -> list[int]:
    return [int(r["scores"]["correct"]) for r in read_samples(run_dir)]


def _other(label: str) -> str:
    return "literal" if label == "metaphorical" else "metaphorical"


def test_mcnemar_on_constructed_pair_matches_stats(report_registry, toy_runs, copy_run, repredict):
    baseline = toy_runs / "toy_cls" / "lookup"
    candidate = copy_run(baseline, "worse")
    rows = read_samples(candidate)
    right = [r for r in rows if r["scores"]["correct"]][:9]
    wrong = [r for r in rows if not r["scores"]["correct"]][:2]
    repredict(candidate, {**{r["id"]: _other(r["gold"]) for r in right}, **{r["id"]: r["gold"] for r in wrong}})
    comparison = compare_pair(report_registry, load_run(baseline), load_run(candidate), "accuracy", FAST)
    expected = stats.mcnemar(_correct(baseline), _correct(candidate))
    assert comparison.test == "mcnemar"
    assert (expected.b, expected.c) == (9, 2)
    assert comparison.pvalue == pytest.approx(expected.pvalue, rel=1e-12)
    assert comparison.delta == pytest.approx(-7 / 40)
    assert comparison.ci_low < comparison.delta < comparison.ci_high  # paired bootstrap CI of the accuracy difference
    assert comparison.mde == pytest.approx(mcnemar_mde(40, 11 / 40).mde) and "Connor" in comparison.mde_method


def test_mcnemar_chi2_variant_and_forced_tests(report_registry, make_run, tmp_path):
    a = [1] * 30 + [0] * 10
    b = [1] * 22 + [0] * 8 + [1] * 6 + [0] * 4
    run_a = load_run(make_run(tmp_path / "a", model="a", correct={0: a}))
    run_b = load_run(make_run(tmp_path / "b", model="b", correct={0: b}))
    chi2 = compare_pair(report_registry, run_a, run_b, "accuracy", Options(test="mcnemar_chi2"))
    assert chi2.pvalue == pytest.approx(stats.mcnemar(a, b, method="chi2").pvalue)
    boot = compare_pair(report_registry, run_a, run_b, "accuracy", Options(test="bootstrap", n_resamples=3000, seed=4))
    expected = stats.paired_bootstrap(a, b, n_resamples=3000, seed=4)
    assert (boot.pvalue, boot.ci_low, boot.ci_high) == pytest.approx((expected.pvalue, expected.ci_low, expected.ci_high))
    assert boot.mde == pytest.approx(normal_mde(expected.std_error, 40).mde)  # from the spread of the resampled deltas
    with pytest.raises(MetabenchError, match="independent item sets"):
        compare_pair(report_registry, run_a, run_b, "accuracy", Options(test="fisher"))
    with pytest.raises(MetabenchError, match="unknown test 'mcnemr'.*did you mean 'mcnemar'"):
        compare_pair(report_registry, run_a, run_b, "accuracy", Options(test="mcnemr"))


def test_bootstrap_recomputes_span_f1_from_resampled_counts(report_registry, toy_runs):
    a, b = load_run(toy_runs / "toy_tag" / "lookup"), load_run(toy_runs / "toy_tag" / "random")
    options = Options(n_resamples=2000, seed=3)
    comparison = compare_pair(report_registry, a, b, "span_f1", options)
    assert comparison.test == "bootstrap"  # random has 2 seeds but lookup only one
    assert comparison.baseline_value == a.record.aggregate("span_f1").mean == 1.0
    assert comparison.candidate_value == pytest.approx(b.record.aggregate("span_f1").mean)

    # the same bootstrap written out by hand: items resampled, F1 from summed counts, mean over random's seeds
    aligned = pair(a, b)

    def counts(rows):
        return np.array([[[r["scores"][f"span_{k}"] for k in ("tp", "fp", "fn")] for r in item] for item in rows])

    def f1(records):
        return float(np.mean([f1_from_counts(dict(zip(("tp", "fp", "fn"), seed)))["f1"] for seed in records.sum(axis=0)]))

    expected = stats.paired_bootstrap(counts(aligned.rows_a), counts(aligned.rows_b), f1, n_resamples=2000, seed=3)
    assert expected.metric_b == pytest.approx(comparison.candidate_value)
    assert (comparison.delta, comparison.ci_low, comparison.ci_high, comparison.pvalue) == pytest.approx(
        (expected.delta, expected.ci_low, expected.ci_high, expected.pvalue))
    assert comparison.ci_high < 0 and comparison.pvalue < 0.01

    # randomisation exchanges items between the runs: each drawn item must keep its own counts
    majority = load_run(toy_runs / "toy_tag" / "majority")
    swapped = compare_pair(report_registry, majority, a, "span_f1", Options(test="randomisation", n_resamples=500, seed=1))
    aligned = pair(majority, a)
    expected = stats.approximate_randomisation(counts(aligned.rows_a), counts(aligned.rows_b), f1, n_resamples=500, seed=1)
    assert (swapped.delta, swapped.pvalue) == pytest.approx((expected.delta, expected.pvalue))


@pytest.mark.parametrize("metric", ["f1", "macro_f1", "accuracy"])
def test_classification_metrics_rebuilt_from_gold_and_predictions(report_registry, toy_runs, metric):
    majority, random = load_run(toy_runs / "toy_cls" / "majority"), load_run(toy_runs / "toy_cls" / "random")
    comparison = compare_pair(report_registry, majority, random, metric, Options(n_resamples=500))
    # the recomputation agrees with results.json, or compare_pair would have refused
    assert comparison.delta == pytest.approx(random.record.aggregate(metric).mean - majority.record.aggregate(metric).mean)
    assert comparison.test == "bootstrap" and 0 < comparison.pvalue <= 1
    # majority predicts one label only, random both: macro F1's label set is each run's own, as in the metric
    lookup = load_run(toy_runs / "toy_cls" / "lookup")
    swapped = compare_pair(report_registry, majority, lookup, metric, Options(test="randomisation", n_resamples=500))
    assert swapped.test == "randomisation" and swapped.ci_method.startswith("bootstrap")


def test_randomisation_refuses_runs_with_other_seeds(report_registry, toy_runs):
    majority, random = load_run(toy_runs / "toy_cls" / "majority"), load_run(toy_runs / "toy_cls" / "random")
    for metric in ("f1", "accuracy"):
        with pytest.raises(MetabenchError, match=r"exchanges the runs' outputs item by item, so both need the same seeds"):
            compare_pair(report_registry, majority, random, metric, Options(test="randomisation", n_resamples=100))


def test_two_runs_with_seeds_use_paired_t_and_wilcoxon_on_request(report_registry, toy_runs):
    a = load_run(toy_runs / "toy_cls" / "random")
    b = next(r for r in find_runs([toy_runs / "toy_cls"]) if r.record.model.spec == "random:strategy=prior")
    comparison = compare_pair(report_registry, a, b, "macro_f1", FAST)
    expected = stats.paired_t(a.record.per_seed("macro_f1"), b.record.per_seed("macro_f1"))
    assert comparison.test == "paired_t"
    assert (comparison.pvalue, comparison.ci_low, comparison.ci_high) == pytest.approx(
        (expected.pvalue, expected.ci_low, expected.ci_high))
    differences = np.subtract(b.record.per_seed("macro_f1"), a.record.per_seed("macro_f1"))
    # the spread of two differences scaled to be median-unbiased (few_units): the plain one promises too much power
    assert comparison.mde == pytest.approx(paired_t_mde(2, np.std(differences, ddof=1) * 1.482602218505602).mde)
    assert comparison.reason.startswith("both runs have the same 2+ seeds")
    order = almost_stochastic_order(a.record.per_seed("macro_f1"), b.record.per_seed("macro_f1"))
    assert (comparison.aso["eps_min"], comparison.aso["eps_min_reverse"]) == (order.eps_min, order.eps_min_reverse)
    wilcoxon = compare_pair(report_registry, a, b, "macro_f1", Options(test="wilcoxon", n_resamples=500))
    assert wilcoxon.pvalue == stats.wilcoxon(a.record.per_seed("macro_f1"), b.record.per_seed("macro_f1")).pvalue
    assert wilcoxon.ci_method.startswith("bootstrap")  # Wilcoxon has no interval: the items' bootstrap gives one


def test_seed_tests_refuse_runs_with_other_seeds_and_the_default_pairs_items(report_registry, make_run, tmp_path):
    a = load_run(make_run(tmp_path / "a", correct={0: [1, 0, 1], 1: [1, 1, 1]}))
    b = load_run(make_run(tmp_path / "b", model="b", correct={0: [1, 0, 0], 2: [0, 1, 1]}))
    with pytest.raises(AlignmentError, match=r"pairs runs seed by seed, but .* has seeds \[0, 1\] and .* has seeds \[0, 2\]"):
        compare_pair(report_registry, a, b, "accuracy", Options(test="paired_t"))
    default = compare_pair(report_registry, a, b, "accuracy", FAST)  # items still pair: bootstrap, with a note
    assert default.test == "bootstrap" and "seeds differ ([0, 1] vs [0, 2])" in default.notes[0]


def test_refuses_different_item_sets_and_says_why(report_registry, toy_runs, short_runs):
    with pytest.raises(AlignmentError) as error:
        compare_pair(report_registry, load_run(toy_runs / "toy_cls" / "lookup"), load_run(short_runs / "toy_cls" / "lookup@limit=30"), "accuracy")
    message = error.value.message
    assert "10 item id(s) in A are not in B, e.g. 'test-30', 'test-31', 'test-32', ..." in message
    assert "B are not in A" not in message


def test_refuses_other_task_config_gold_and_incomplete_runs(report_registry, make_run, tmp_path):
    base = load_run(make_run(tmp_path / "a", correct={0: [1, 0, 1]}))
    other_task = load_run(make_run(tmp_path / "b", task="other", correct={0: [1, 0, 1]}))
    with pytest.raises(AlignmentError, match="is task 'syn' but .* is task 'other'"):
        pair(base, other_task)
    edited = load_run(make_run(tmp_path / "c", config_hash="d" * 64, correct={0: [1, 0, 1]}))
    with pytest.raises(AlignmentError, match="configured differently: config hash cccccccccccc .* dddddddddddd"):
        pair(base, edited)
    incomplete = make_run(tmp_path / "d", correct={0: [1, 0, 1], 1: [1, 1, 1]})
    write_run(incomplete, read_results(incomplete), read_samples(incomplete)[:-1], overwrite=True)
    with pytest.raises(AlignmentError, match=r"1 item\(s\) have no sample at seed 1, e.g. 'item-2'"):
        pair(base, load_run(incomplete))
    regold = make_run(tmp_path / "e", correct={0: [1, 0, 1]})
    rows = read_samples(regold)
    rows[1]["gold"] = "no"
    write_run(regold, read_results(regold), rows, overwrite=True)
    with pytest.raises(AlignmentError, match=r"1 item\(s\) have different gold answers .* e.g. 'item-1'"):
        pair(base, load_run(regold))


def test_samples_that_do_not_match_results_are_caught(report_registry, toy_runs, copy_run):
    candidate = copy_run(toy_runs / "toy_cls" / "lookup", "tampered")
    rows = read_samples(candidate)
    rows[0]["scores"]["correct"] = 1.0 - rows[0]["scores"]["correct"]
    (candidate / "samples.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    with pytest.raises(RunFileError, match="samples.jsonl: does not match the 'samples_sha256' in results.json"):
        compare_pair(report_registry, load_run(toy_runs / "toy_cls" / "lookup"), load_run(candidate), "accuracy")
    write_run(candidate, read_results(candidate), rows, overwrite=True)  # consistent digest, inconsistent scores
    with pytest.raises(MetabenchError, match="recomputed from samples.jsonl is .* but results.json reports"):
        compare_pair(report_registry, load_run(toy_runs / "toy_cls" / "lookup"), load_run(candidate), "accuracy")


def test_metric_without_item_records_gets_a_note_not_a_p_value(report_registry, toy_runs):
    comparison = compare_pair(report_registry, load_run(toy_runs / "toy_tag" / "lookup"),
                              load_run(toy_runs / "toy_tag" / "majority"), "inv_f1")
    assert comparison.pvalue is None and comparison.test is None
    assert "inv_f1 cannot be rebuilt from per-item samples" in comparison.notes[0]


def test_output_folder_compares_every_model_with_the_baseline_and_corrects(report_registry, toy_runs):
    runs = find_runs([toy_runs])
    comparisons, notes = compare_runs(report_registry, runs, baseline="lookup", options=FAST)
    assert {(c.task, c.candidate) for c in comparisons} == {
        (t, m) for t in ("toy_tag", "toy_cls") for m in ("majority", "random", "random:strategy=prior")
    }
    assert all(c.baseline == "lookup" for c in comparisons) and not notes
    adjust(comparisons, "holm")
    expected = stats.holm([c.pvalue for c in comparisons])
    assert [c.p_adjusted for c in comparisons] == pytest.approx(list(expected))
    adjust(comparisons, "bh")
    assert [c.p_adjusted for c in comparisons] == pytest.approx(list(stats.benjamini_hochberg([c.pvalue for c in comparisons])))


def test_cli_compare_table_json_and_errors(cli, toy_runs, short_runs):
    code, out, err = cli("compare", toy_runs / "toy_cls" / "majority", toy_runs / "toy_cls" / "lookup" / "results.json",
                         "--metric", "accuracy", "--metric", "macro_f1", "--resamples", "500")
    assert code == 0, err
    assert "mcnemar" in out and "p (Holm)" in out and "over 2 comparison(s) by Holm" in out
    assert "MDE" in out and "test mcnemar: a proportion of correct items at one seed" in out
    code, out, _ = cli("compare", toy_runs / "toy_cls" / "random", toy_runs / "toy_cls" / "random_strategy=prior",
                       "--resamples", "500")
    assert code == 0 and "test paired_t: both runs have the same 2+ seeds" in out
    assert "almost stochastic order over 2 vs 2 seeds: eps_min(candidate better) = " in out
    code, out, _ = cli("compare", toy_runs, "--baseline", "majority", "--json", "--correction", "bh", "--resamples", "500")
    payload = json.loads(out)
    assert code == 0 and payload["correction"] == "bh" and len(payload["comparisons"]) == 6
    code, _, err = cli("compare", toy_runs / "toy_cls" / "lookup", short_runs / "toy_cls" / "lookup@limit=30")
    assert code == 2 and "lookup@limit=30 is the only run over its items (30 items, --limit 30)" in err
    assert "the task's other runs hold other items (lookup: 40 items)" in err
    code, _, err = cli("compare", toy_runs / "toy_cls" / "lookup", toy_runs / "toy_tag" / "lookup")
    assert code == 2 and "nothing could be paired" in err
    code, _, err = cli("compare", toy_runs / "nowhere")
    assert code == 2 and "no such file or folder" in err
    code, _, err = cli("compare", toy_runs, "--baseline", "gpt-17")
    assert code == 2 and "no run of the --baseline model 'gpt-17'" in err


def _ranking_run(path, model, ranks, macro_f1_stored):
    """A generation-like run: per-item reciprocal ranks, raw text predictions the kind would have parsed."""
    from metabench.store import write_run

    samples = [{"id": f"i{n}", "seed": 0, "gold": "entailment", "prediction": f" Entailment. ({n})",
                "scores": {"reciprocal_rank": 1 / r, "correct": float(r == 1)}} for n, r in enumerate(ranks)]
    per_seed = {"mrr": sum(1 / r for r in ranks) / len(ranks), "accuracy_at_1": ranks.count(1) / len(ranks),
                "macro_f1": macro_f1_stored}
    results = {
        "schema_version": 1, "created": "2026-01-01T00:00:00+00:00",
        "task": {"name": "gen", "version": 1, "config_hash": "e" * 64, "kind": "generation", "dataset": "d",
                 "primary_metric": "mrr", "source": "", "plugin": "tests",
                 "config": {"metrics": ["mrr", "accuracy_at_1", "macro_f1"], "labels": {}}},
        "data": {"files": {}}, "model": {"spec": model}, "seeds": [0], "limit": None, "n_items": len(ranks),
        "higher_is_better": {}, "metrics": {"per_seed": {"0": per_seed},
                                           "aggregate": {k: {"mean": v, "std": 0.0, "n": 1} for k, v in per_seed.items()}},
    }
    write_run(path, results, samples)
    return load_run(path)


def test_conventional_readings_are_kept_only_when_they_reproduce_the_metric(report_registry, tmp_path):
    a = _ranking_run(tmp_path / "a", "a", [1, 2, 1, 5, 1, 3, 1, 1], 0.9)
    b = _ranking_run(tmp_path / "b", "b", [2, 4, 1, 5, 3, 3, 2, 1], 0.4)
    mrr = compare_pair(report_registry, a, b, "mrr", Options(n_resamples=500))
    assert mrr.test == "bootstrap" and mrr.delta == pytest.approx(b.record.aggregate("mrr").mean - a.record.aggregate("mrr").mean)
    top1 = compare_pair(report_registry, a, b, "accuracy_at_1", FAST)
    assert top1.test == "mcnemar"
    # the raw predictions are not the labels macro_f1 saw: no reading, no test, and no false alarm either
    macro = compare_pair(report_registry, a, b, "macro_f1", FAST)
    assert macro.test is None and "cannot be rebuilt" in macro.notes[0]


def test_compare_tests_each_item_set_of_a_task(cli, toy_runs, short_pairs, tmp_path):
    """A folder with a task's full runs and its --limit runs (the README's runs, then its run config): both
    pairs are tested, each named by its run folders, and nothing is left out."""
    mixed = tmp_path / "mixed"
    for source in (toy_runs / "toy_cls" / "majority", toy_runs / "toy_cls" / "lookup",
                   short_pairs / "toy_cls" / "majority@limit=30", short_pairs / "toy_cls" / "lookup@limit=30"):
        shutil.copytree(source, mixed / "toy_cls" / source.name)
    code, out, err = cli("compare", mixed, "--baseline", "majority", "--resamples", "200", "--json")
    assert code == 0, err
    pairs = {(c["baseline_run"].rsplit("/", 1)[-1], c["candidate_run"].rsplit("/", 1)[-1], c["n_items"])
             for c in json.loads(out)["comparisons"]}
    full = json.loads((toy_runs / "toy_cls" / "lookup" / "results.json").read_text())["n_items"]
    assert pairs == {("majority", "lookup", full), ("majority@limit=30", "lookup@limit=30", 30)}
    code, out, err = cli("compare", mixed, "--baseline", "majority", "--resamples", "200")
    assert "lookup@limit=30" in out.split("\n\n")[0] and "not compared" not in out


def test_compare_over_a_folder_pairs_what_it_can(cli, toy_runs, short_runs, tmp_path):
    """A full run, a --limit run and a task with one run in one folder: the full pair is compared, each run
    that cannot be compared is one line with its reason and task, and the exit status is 0."""
    mixed = tmp_path / "mixed"
    for source, target in ((toy_runs / "toy_cls" / "majority", "toy_cls/majority"),
                           (toy_runs / "toy_cls" / "lookup", "toy_cls/lookup"),
                           (short_runs / "toy_cls" / "lookup@limit=30", "toy_cls/lookup@limit=30"),
                           (toy_runs / "toy_tag" / "lookup", "toy_tag/lookup")):
        shutil.copytree(source, mixed / target)
    code, out, err = cli("compare", mixed, "--baseline", "majority", "--resamples", "200")
    assert code == 0, err
    table = out.split("\n\n")[0]
    assert table.count("toy_cls") == 1 and "toy_tag" not in table  # one comparison: full lookup vs majority
    counted = [line for line in out.splitlines() if line.startswith("not compared: ")]
    assert counted == ["not compared: 1 × the only run over its items (task toy_cls)",
                       "not compared: 1 × a single run of the task (task toy_tag)"], out
    code, out, err = cli("compare", mixed, "--baseline", "majority", "--resamples", "200", "--verbose")
    skipped = [line for line in out.splitlines() if line.startswith("not compared: ")]
    assert len(skipped) == 2, out
    assert any("toy_cls" in line and "lookup@limit=30 is the only run over its items (30 items, --limit 30)" in line
               for line in skipped)
    assert any("toy_tag" in line and "a single run (lookup)" in line for line in skipped)
    code, _, err = cli("compare", mixed / "toy_tag", mixed / "toy_cls" / "lookup@limit=30", "--baseline", "majority")
    assert code == 2 and "nothing could be paired" in err and "toy_tag" in err and "toy_cls" in err


@pytest.mark.slow
def test_the_resampling_unit_reaches_the_comparison_from_the_api_and_the_command_line(capsys):
    """``--unit token`` on vua18_seq resamples words: it was dropped on the way to the comparison (#35)."""
    from metabench.api import compare
    from metabench.cli import main
    from mirror import REPO

    runs = [REPO / "leaderboard" / "runs" / "vua18_seq" / "majority",
            REPO / "leaderboard" / "runs" / "vua18_seq" / "hf_minilm-l6"]
    by_unit = {unit: compare(runs, metrics="token_f1", test="bootstrap", resamples=200, unit=unit).comparisons[0]
               for unit in ("auto", "token")}
    assert by_unit["token"].unit == "tokens" and by_unit["auto"].unit != "tokens"
    assert (by_unit["token"].ci_low, by_unit["token"].ci_high) != (by_unit["auto"].ci_low, by_unit["auto"].ci_high)
    assert main(["compare", *map(str, runs), "--metric", "token_f1", "--test", "bootstrap", "--resamples", "200",
                 "--unit", "token"]) == 0
    assert "bootstrap (tokens)" in capsys.readouterr().out
