"""``metabench export lm-eval`` of a benchmark's decoder ways (#56): a task whose own kind is not prompted is
exported through its ``protocol.decoder`` (scored) and ``protocol.decoder_generated`` (generated) sections, and
lm-eval loads what is written; the generated way's filters read answers as metabench's strict parser does."""

from __future__ import annotations

import json

import pytest

#: Answers a strict parser must read or refuse: casing, quotes, markdown, a final period, aliases, preambles.
ANSWERS = ["metaphorical", " Metaphorical.", '"literal"', "**metaphor**", "`Literal`.", "The answer is literal",
           "metaphorical, I think", "", "literal\nbecause", "literally", "non-literal", "  LITERAL  "]
LETTERS = ["B", "(C)", "d.", "Option A", "option b", "**A**", "A or B", "E", "Answer: A", "", " c "]


def _load(out, names):
    from lm_eval.tasks import TaskManager

    return TaskManager(include_path=str(out), include_defaults=False).load(list(names))["tasks"]


def _filtered(task, answers: list[str]) -> list[str]:
    """The answers after the task's one filter pipeline (as lm-eval built it from the YAML) applied to them as a
    model's responses."""
    (ensemble,) = task._filters
    responses = [[a] for a in answers]
    for make in ensemble.filters:
        responses = make().apply(responses, [{}] * len(answers))
    return [r if isinstance(r, str) else r[0] for r in responses]


@pytest.fixture
def toy_export(decoder_registry, tmp_path):
    from metabench.export.lmeval import export_lmeval

    out = tmp_path / "export"
    return out, {e.task: e for e in export_lmeval(decoder_registry, "toy_bench", out, limit=6)}


def test_a_benchmarks_decoder_sections_are_exported_as_its_scored_and_generated_tasks(toy_export, decoder_registry):
    from metabench.config.index import TaskIndex
    from metabench.jobs import build_kind, prepare

    out, done = toy_export
    assert set(done) == {"toy_bench_scored", "toy_bench_generated"}  # the task's own kind has no prompt
    assert (done["toy_bench_scored"].output_type, done["toy_bench_generated"].output_type) == (
        "multiple_choice", "generate_until")
    task = TaskIndex(decoder_registry).load("toy_bench")
    scored = prepare(decoder_registry, task, limit=6, kind=build_kind(decoder_registry, task, "decoder")).kind.prompted
    rows = [json.loads(line) for line in open(out / "data" / "toy_bench_scored.jsonl")]
    items = prepare(decoder_registry, task, limit=6).test.items
    for row, item in zip(rows, items):  # the section's template and options, the task's golds
        request = scored.request(item)
        assert row["query"] == request.context and row["choices"] == list(request.options)
        assert row["choices"][row["gold"]].strip() == item.label
    text = (out / "toy_bench_scored.yaml").read_text()
    assert "metric: f1\n    aggregation: f1" in text  # the positive label is the second choice: lm-eval's f1 is ours
    generated = (out / "toy_bench_generated.yaml").read_text()
    assert "metabench_protocol: \"decoder_generated\"" in generated and "metabench_section_sha256" in generated
    assert {json.loads(line)["gold"] for line in open(out / "data" / "toy_bench_generated.jsonl")} <= {
        "literal", "metaphorical"}


def test_lm_eval_loads_the_exported_ways_and_its_filters_read_answers_as_the_strict_parser(toy_export):
    from metabench.kinds import parsers

    out, done = toy_export
    tasks = _load(out, sorted(done))
    assert set(tasks) == set(done) and all(len(list(t.eval_docs)) == 6 for t in tasks.values())
    assert tasks["toy_bench_scored"].OUTPUT_TYPE == "multiple_choice"
    generated = tasks["toy_bench_generated"]
    assert generated.OUTPUT_TYPE == "generate_until"
    ours = [parsers.parse_label_strict(a, ["literal", "metaphorical"], {"metaphor": "metaphorical"}) for a in ANSWERS]
    assert _filtered(generated, ANSWERS) == [p.value if p.ok else "[invalid]" for p in ours]
    assert sum(p.ok for p in ours) >= 5 and sum(not p.ok for p in ours) >= 5  # both sides of the parser tried


def test_a_letter_parser_is_exported_as_the_same_strict_filter(decoder_registry, tmp_path):
    """MUNCH's generated way (letter_strict) in lm-eval's terms, without the data: the filter from the export's
    function on a generation kind with letters ABCD."""
    from types import SimpleNamespace

    from metabench.export import lmeval
    from metabench.kinds import parsers

    kind = SimpleNamespace(args=SimpleNamespace(parser="letter_strict", letters="ABCD"),
                           decoder=SimpleNamespace(until=["\n"], max_new_tokens=3),
                           request=lambda item: SimpleNamespace(prompt="Q"), gold=lambda item: "B")
    task = SimpleNamespace(name="letters", config=SimpleNamespace(primary_metric="accuracy"))
    yaml_text, rows, _, _ = lmeval._generated(task, kind, [SimpleNamespace(id="x")])
    (tmp_path / "data.jsonl").write_text(json.dumps(rows[0]) + "\n")
    (tmp_path / "letters.yaml").write_text(
        f"task: letters\ndataset_path: json\ndataset_kwargs:\n  data_files:\n    test: {json.dumps(str(tmp_path / 'data.jsonl'))}\n"
        "test_split: test\ndoc_to_text: query\n" + yaml_text)
    (task_obj,) = _load(tmp_path, ["letters"]).values()
    ours = [parsers.parse_letter_strict(a, "ABCD") for a in LETTERS]
    theirs = _filtered(task_obj, LETTERS)
    assert theirs == [p.value if p.ok else "[invalid]" for p in ours], list(zip(LETTERS, theirs))


def test_the_headline_benchmarks_export_every_decoder_way(real_registry, tmp_path):
    """Every headline benchmark has a way lm-eval can run: scored where the task has one, generated everywhere."""
    from metabench.export.lmeval import export_lmeval

    from mirror import mirror_dir

    if mirror_dir() is None:
        pytest.skip("needs the data mirror (METABENCH_DATA_DIR or ../shared/data)")
    selection = "vua18_seq,vua_verb,moh_x_cv_fold0,m4x_int_en_ft_all_nomet,munch_word_judge_implicit_p1,newsmet_det"
    done = {e.task: e for e in export_lmeval(real_registry, selection, tmp_path, limit=4)}
    assert set(done) == {"vua18_seq_generated", "vua_verb_scored", "vua_verb_generated", "moh_x_cv_fold0_scored",
                         "moh_x_cv_fold0_generated", "m4x_int_en_ft_all_nomet_scored",
                         "m4x_int_en_ft_all_nomet_generated", "munch_word_judge_implicit_p1",
                         "munch_word_judge_implicit_p1_generated", "newsmet_det_scored", "newsmet_det_generated"}
    tasks = _load(tmp_path, sorted(done))
    assert all(len(list(t.eval_docs)) == 4 for t in tasks.values())
    rows = [json.loads(line) for line in open(tmp_path / "data" / "newsmet_det_scored.jsonl")]
    assert all(r["choices"] == [" literal", " metaphorical"] for r in rows)  # 'metaphor' second: lm-eval's f1 is ours
    munch = [json.loads(line)["gold"] for line in open(tmp_path / "data" / "munch_word_judge_implicit_p1_generated.jsonl")]
    assert set(munch) <= set("ABCD")  # the letter the prompt asks for, not the option's index
    assert "process_tags" in (tmp_path / "vua18_seq_generated.yaml").read_text()
    assert any("cannot align" in note for note in done["vua18_seq_generated"].notes)


@pytest.mark.slow
def test_lm_eval_scores_the_scored_way_with_the_benchmarks_own_f1(toy_export, tiny_decoder):
    """The same options scored by metabench and by lm-eval: lm-eval's f1 is the positive label's F1 over the
    answers metabench's scorer gives (the options reordered, where needed, changes no log-likelihood)."""
    from lm_eval.evaluator import simple_evaluate
    from lm_eval.tasks import TaskManager

    from metabench.requests import ChoiceRequest

    out, _ = toy_export
    results = simple_evaluate(model=tiny_decoder.lm, tasks=["toy_bench_scored", "toy_bench_generated"],
                              task_manager=TaskManager(include_path=str(out), include_defaults=False),
                              bootstrap_iters=0)
    rows = [json.loads(line) for line in open(out / "data" / "toy_bench_scored.jsonl")]
    chosen = [a["index"] for a in tiny_decoder.predict([ChoiceRequest(r["query"], tuple(r["choices"])) for r in rows],
                                                       seed=0)]
    tp = sum(c == 1 and r["gold"] == 1 for c, r in zip(chosen, rows))
    fp = sum(c == 1 and r["gold"] == 0 for c, r in zip(chosen, rows))
    fn = sum(c == 0 and r["gold"] == 1 for c, r in zip(chosen, rows))
    f1 = 2 * tp / (2 * tp + fp + fn) if tp else 0.0
    assert results["results"]["toy_bench_scored"]["f1,none"] == pytest.approx(f1)
    assert 0.0 <= results["results"]["toy_bench_generated"]["exact_match,strict"] <= 1.0
