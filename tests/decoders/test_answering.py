"""One benchmark, every model kind (metabench.answering, #56): a decoder answers a task's own items, golds and
metrics scored or generated, its answers stored in the task's form; shots never leak; the plan names each way."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from metabench import answering
from metabench.errors import AdapterError
from metabench.hookspecs import hookimpl
from metabench.kinds import parsers
from metabench.models.base import Adapter
from metabench.requests import ChoiceRequest, GenerateRequest
from metabench.runner import RunOptions, run
from metabench.store import read_results, read_samples


class Scripted(Adapter):
    """A decoder whose answers the test writes: option 1 when the prompt holds an even number of characters, and
    generated text that reads strictly for every third item only."""

    name, family = "scripted", "decoder"
    serves = (ChoiceRequest, GenerateRequest)
    allowed_args = ("api",) + answering.ARGS

    def default_answer(self) -> str:
        return "generated" if self.args.get("api") == "chat" else "scored"

    def check_request_type(self, request_type, task):
        super().check_request_type(request_type, task)
        if self.args.get("api") == "chat" and issubclass(request_type, ChoiceRequest):
            from metabench.errors import UnsupportedError

            raise UnsupportedError("chat cannot score", reason="chat cannot score")

    def predict(self, requests, seed):
        out = []
        for r in requests:
            if isinstance(r, ChoiceRequest):
                index = len(r.context) % 2
                out.append({"index": index, "loglikelihoods": [-1.0 - index, -1.0 - (1 - index)]})
            else:
                n = len(r.prompt)
                out.append(["**Metaphorical.**", " literal", "I would say it is literal"][n % 3])
        return out


class ScriptedPlugin:
    @hookimpl
    def metabench_register_models(self, register):
        register("scripted", f"{__name__}:Scripted", description="test decoder with scripted answers")


@pytest.fixture
def registry(monkeypatch, tmp_path):
    import decoder_tasks_plugin
    import toy_plugin

    from metabench import plugins

    monkeypatch.setenv("METABENCH_DATA_DIR", str(toy_plugin.DATA_DIR))
    monkeypatch.setenv("METABENCH_CACHE_DIR", str(tmp_path / "cache"))
    return plugins.load(extra_plugins=(toy_plugin, decoder_tasks_plugin, ScriptedPlugin()))


def _run(registry, tmp_path, models):
    outcomes = run(registry, "toy_bench", list(models), RunOptions(output_dir=tmp_path / "runs", progress=False))
    assert [o.status for o in outcomes] == ["ok"] * len(models), [o.message for o in outcomes]
    return {o.model: o.run_dir for o in outcomes}


def test_a_decoder_answers_the_benchmarks_own_items_golds_and_metrics(registry, tmp_path):
    dirs = _run(registry, tmp_path, ["majority", "scripted", "scripted:answer=generated", "scripted:api=chat"])
    records = {m: read_results(d) for m, d in dirs.items()}
    samples = {m: read_samples(d) for m, d in dirs.items()}
    assert records["scripted"]["protocol"] == "decoder"
    assert records["scripted:answer=generated"]["protocol"] == "decoder_generated"
    assert records["scripted:api=chat"]["protocol"] == "decoder_generated"  # a chat API generates by default
    for model, record in records.items():
        assert record["task"]["kind"] == "classification"  # scored by the task's own kind, whoever answered
        assert [s["gold"] for s in samples[model]] == [s["gold"] for s in samples["majority"]]
        assert {s["prediction"] for s in samples[model]} <= {"literal", "metaphorical", "invalid"}
    assert records["majority"].get("answering") is None
    assert records["scripted"]["answering"]["mode"] == "scored"
    generated = records["scripted:answer=generated"]
    assert generated["answering"]["mode"] == "generated" and generated["answering"]["parser"] == "label_strict"
    # the strict parser reads '**Metaphorical.**' and ' literal', not 'I would say it is literal'
    rows = samples["scripted:answer=generated"]
    assert not any("response" in s for s in rows)  # a model's text is kept only with --log-responses
    unread = sum(s["prediction"] == "invalid" for s in rows)
    assert 0 < unread < len(rows)
    assert generated["metrics"]["per_seed"]["0"]["format_failure_rate"] == pytest.approx(unread / len(rows))
    assert all(s["scores"]["correct"] == 0.0 for s in rows if s["prediction"] == "invalid")
    assert "format_failure_rate" not in records["scripted"]["metrics"]["aggregate"]  # an argmax always reads


def test_runs_of_every_model_kind_pair_in_compare_and_verify(registry, tmp_path):
    from metabench.report.compare import compare_runs
    from metabench.runs.stored import load_run
    from metabench.runs.verify import verify_runs

    dirs = _run(registry, tmp_path, ["majority", "scripted", "scripted:answer=generated"])
    runs = [load_run(d) for d in dirs.values()]
    passed, rejected, verdicts = verify_runs(registry, runs)
    assert len(passed) == 3 and not rejected, [v.problems for v in rejected]
    assert "format_failure_rate" in verdicts[id(runs[2])].checked  # rebuilt from the stored predictions
    comparisons, notes = compare_runs(registry, runs, baseline="majority")
    assert len(comparisons) == 2 and not notes, notes
    assert {c.n_items for c in comparisons} == {len(read_samples(dirs["majority"]))}


def test_a_generated_runs_readings_are_read_again_from_its_stored_responses(registry, tmp_path):
    """With --log-responses each generated answer's text is kept (``response``); verification parses it again with
    the task's section, so a forger who turns unread answers into golds, every score, metric and digest
    recomputed, is caught."""
    from forgery import forge_consistently

    from metabench.runs.stored import load_run
    from metabench.runs.verify import verify_runs

    (outcome,) = run(registry, "toy_bench", ["scripted:answer=generated"],
                     RunOptions(output_dir=tmp_path / "runs", progress=False, log_responses=True))
    run_dir = outcome.run_dir
    rows = read_samples(run_dir)
    assert {r["response"] for r in rows} <= {"**Metaphorical.**", " literal", "I would say it is literal"}
    assert all((r["prediction"] == "invalid") == (r["response"] == "I would say it is literal") for r in rows)
    passed, rejected, _ = verify_runs(registry, [load_run(run_dir)])
    assert passed and not rejected, [v.problems for v in rejected]
    unread = {r["id"]: r["gold"] for r in rows if r["prediction"] == "invalid"}
    forge_consistently(registry, run_dir, predictions=unread)
    passed, rejected, _ = verify_runs(registry, [load_run(run_dir)])
    assert not passed and len(rejected) == 1
    assert any("what the task's parser reads from its stored response" in p for p in rejected[0].problems)


def test_parse_lenient_reads_the_first_label_and_says_so(registry, tmp_path):
    dirs = _run(registry, tmp_path, ["scripted:answer=generated", "scripted:answer=generated,parse=lenient"])
    strict, lenient = (read_results(d) for d in dirs.values())
    assert lenient["answering"]["parser"] == "label" and lenient["answering"]["lenient"] is True
    assert strict["answering"]["lenient"] is False
    lenient_rows = read_samples(dirs["scripted:answer=generated,parse=lenient"])
    assert not any(s["prediction"] == "invalid" for s in lenient_rows)


def test_a_way_asked_for_by_name_and_missing_is_a_named_skip(registry, tmp_path):
    outcomes = run(registry, "toy_cls", ["scripted:answer=generated"],
                   RunOptions(output_dir=tmp_path / "runs", progress=False))
    assert [o.status for o in outcomes] == ["skipped"]
    assert "no generated protocol" in outcomes[0].message and "protocol.decoder_generated" in outcomes[0].hint


@pytest.mark.parametrize("args, message", [
    ({"answer": "sampled"}, "not scored or generated"),
    ({"shots": "-1"}, "whole number from 0"),
    ({"shots": "1000"}, "whole number from 0"),
    ({"parse": "fuzzy"}, "not strict or lenient"),
])
def test_bad_answering_arguments_are_clear_errors(args, message):
    with pytest.raises(AdapterError, match=message):
        answering.parse_args(args, "hf-decoder")


@pytest.mark.parametrize("text, value", [
    ("Metaphorical.", "metaphorical"), ("  **literal** ", "literal"), ("‘literal’", "literal"),
    ("metaphor", "metaphorical"), ("The answer is literal", parsers.INVALID), ("literal, because", parsers.INVALID),
    ("", parsers.INVALID),
])
def test_the_strict_label_parser_reads_one_label_and_nothing_else(text, value):
    got = parsers.parse_label_strict(text, ["literal", "metaphorical"], {"metaphor": "metaphorical"})
    assert got.value == value and got.ok == (value != parsers.INVALID)


@pytest.mark.parametrize("text, ok", [("A", True), ("(B)", True), ("Option C", True), ("D.", True),
                                      ("A because", False), ("The answer is B", False)])
def test_the_strict_letter_parser(text, ok):
    assert parsers.parse_letter_strict(text).ok is ok


@pytest.mark.parametrize("text, ok", [("fell, apart", True), ("none", True),
                                      ("The metaphorical words are: fell", False),
                                      ("The market fell apart after the news", False)])
def test_the_strict_word_list_parser(text, ok):
    words = "The market fell apart after the news".split()
    assert parsers.parse_word_list_strict(text, words).ok is ok


# ------------------------------------------------------------------------------- the real benchmarks


def test_sections_with_their_own_kind_leave_the_task_hash_and_key_the_answers(real_registry):
    from metabench.config.index import TaskIndex

    task = TaskIndex(real_registry).load("vua_verb")
    section = task.config.protocol.decoder
    edited = section.model_copy(update={"template": section.template + " "})
    changed = task.config.model_copy(update={"protocol": task.config.protocol.model_copy(update={"decoder": edited})})
    from metabench.config.loader import config_hash

    assert config_hash(changed) == task.hash  # the task (its items, golds, metrics) did not change
    assert answering.answer_fingerprint("f", edited) != answering.answer_fingerprint("f", section)
    assert answering.answer_fingerprint("f", task.config.protocol.encoder) == "f"  # other sections: as before


def test_every_headline_benchmark_is_planned_for_every_decoder_way(real_registry, tmp_path):
    from metabench.config.index import TaskIndex
    from metabench.dry_run import plan_jobs
    from metabench.runner import plan

    index = TaskIndex(real_registry)
    options = RunOptions(output_dir=tmp_path / "runs", progress=False)
    ways = {}
    for model in ("hf-decoder:smollm2-135m", "openai:gpt-4o-mini", "hf-decoder:smollm2-135m,finetune=true"):
        planned = plan_jobs(real_registry, plan(index, "headline", [model], options), cache_path=None, runs_from=None)
        ways[model] = {j.task.split("_fold")[0]: (j.status, j.way, j.reason) for j in planned.jobs}
    local, chat, tuned = ways.values()
    assert all(status == "run" for status, _, _ in local.values()), local
    assert {t for t, (_, way, _) in local.items() if way == "generated"} == {"vua18_seq", "vua20_seq", "m4x_det_en_mono"}
    assert all(status == "run" and way == "generated" for status, way, _ in chat.values()), chat
    # fine-tuned: the tagger on the token-level benchmarks, a classification head on the others; MUNCH (zero-shot in
    # its paper, no training recipe) is the one named skip
    assert {t for t, (status, _, _) in tuned.items() if status == "skipped"} == {"munch_word_judge_implicit_p1"}
    assert "no training recipe" in tuned["munch_word_judge_implicit_p1"][2]
    assert all(way == "fine-tuned" for status, way, _ in tuned.values() if status == "run"), tuned


def test_demonstrations_never_leave_a_folds_training_folds(real_registry):
    from metabench.config.index import TaskIndex
    from metabench.jobs import build_kind, prepare

    from mirror import mirror_dir

    if mirror_dir() is None:
        pytest.skip("needs the data mirror (METABENCH_DATA_DIR or ../shared/data): the real MOH-X and TroFi folds")
    index = TaskIndex(real_registry)
    choice = answering.parse_args({"shots": "5"}, "hf-decoder")
    for name in [f"moh_x_cv_fold{k}" for k in range(10)] + ["trofi_cv_fold0", "trofi_cv_fold9"]:
        task = index.load(name)
        kind = build_kind(real_registry, task, "decoder", choice)
        data = prepare(real_registry, task, kind=kind)
        test_ids = {str(i.id) for i in data.test.items}
        train_ids = {str(i.id) for i in data.splits["train"].items}
        draws = []
        for seed in range(5):
            assert kind.reseed(seed)
            shown = kind.demonstrations()
            assert len(shown) == 5 and set(shown) <= train_ids and not set(shown) & test_ids, (name, seed)
            draws.append(tuple(shown))
            assert kind.request(data.test.items[0]).context.count("Answer:") == 6  # 5 shown, then the item
        assert len(set(draws)) > 1  # drawn per seed
        kind.reseed(3)
        assert tuple(kind.demonstrations()) == draws[3]  # fixed by the seed


def test_a_deprecated_prompted_task_warns_naming_its_benchmark(real_registry, tmp_path, caplog):
    from metabench.config.index import TaskIndex
    from metabench.runner import plan, warn_superseded

    options = RunOptions(output_dir=tmp_path / "runs", progress=False)
    with caplog.at_level("WARNING", logger="metabench"):
        warn_superseded(plan(TaskIndex(real_registry), "newsmet_prompted_choice", ["majority"], options))
    assert "deprecated" in caplog.text and "'newsmet_det'" in caplog.text
    index = TaskIndex(real_registry)
    for name in index.select("all"):
        successor = index.load(name, defer_data=True).config.metadata.superseded_by
        assert successor is None or successor in index.select("all"), name


def test_the_tagger_joins_meta4xnli_detection_without_moving_its_hash(real_registry):
    """m4x_det_en_mono gained the tagger as a way (``decoder_finetune`` with ``kind: tagging``): its encoder runs,
    committed before, keep their hash; its hashed twin m4x_det_en_mono_decoder keeps its own; the tagger's answers
    key on the section, so an edited recipe never reuses them."""
    import json

    from metabench.config.index import TaskIndex

    index = TaskIndex(real_registry)
    root = Path(__file__).parents[2] / "leaderboard" / "runs"
    for name, run in (("m4x_det_en_mono", "hf_minilm-l6"), ("m4x_det_en_mono_decoder", "")):
        recorded = json.loads((root / name / run / "results.json").read_text())["task"]["config_hash"]
        assert index.load(name, defer_data=True).hash == recorded, name
    section = index.load("m4x_det_en_mono", defer_data=True).config.protocol.decoder_finetune
    assert section is not None and section.kind == "tagging"
    edited = section.model_copy(update={"instruction": "Tag the metaphors!"})
    assert answering.answer_fingerprint("f", edited) != answering.answer_fingerprint("f", section) != "f"


def test_fig_qa_answers_a_chat_model_by_letter_though_its_endings_carry_none(real_registry):
    """Fig-QA's options have no labels: its generated way letters them (``letters: AB``), and the letter read back
    is stored as the ending's index, so chat runs pair with scored ones item by item."""
    from metabench.config.index import TaskIndex
    from metabench.data.items import ChoiceItem
    from metabench.jobs import build_kind

    task = TaskIndex(real_registry).load("figqa_endings_dev", defer_data=True)
    kind = build_kind(real_registry, task, "decoder_generated", answering.parse_args({}, "openai"))
    item = ChoiceItem(id="q", context="Her words were honey", choices=("They were sweet.", "They were sticky."), answer=0)
    prompt = kind.request(item).prompt
    assert "A: They were sweet." in prompt and "B: They were sticky." in prompt
    assert [kind.prediction(item, text) for text in ("B", " (A)", "Option B", "They were sweet.", "")] == [1, 0, 1, -1, -1]
