"""Decoders on the board (#56 items 2, 5 and 6): the headline table gives each way a decoder answered a row of its
own, labelled from the run's recorded ``answering``; a generated run's format-failure rate is printed beside its
number on every surface (board, compare, the run's closing table, the Hub export, compare published); the field's
LLM results are published rows typed from shared/papers/llm_results.md, with their caveats, never ranked.

The runs are the scripted decoder's on the toy benchmark (every item, in a second), declared as the headline group
here so the table is built from them; the LLM rows are read from metabench's own published_results.yaml."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from test_answering import Scripted

from metabench.hookspecs import hookimpl
from metabench.kinds.answered import FORMAT_FAILURE
from metabench.report.answering_label import way
from metabench.report.published import Published, load_published
from metabench.runner import RunOptions, run
from metabench.runs.stored import find_runs

LLM_RESULTS = Path(__file__).resolve().parents[3] / "shared" / "papers" / "llm_results.md"
MODELS = ["majority", "scripted", "scripted:shots=2", "scripted:answer=generated",
          "scripted:answer=generated,parse=lenient"]


class Small(Scripted):
    """The scripted decoder, reporting a parameter count as the HF decoders do (the floor note reads it)."""

    def info(self):
        return {"num_parameters": 134_515_008}


class Plugin:
    def __init__(self, folder: Path):
        self.folder = folder

    @hookimpl
    def metabench_register_models(self, register):
        register("scripted", f"{__name__}:Small", description="test decoder with scripted answers")

    @hookimpl
    def metabench_register_tasks(self, register):
        register(str(self.folder))


@pytest.fixture
def registry(monkeypatch, tmp_path):
    import decoder_tasks_plugin
    import toy_plugin

    from metabench import plugins
    from metabench.report.leaderboard import headline

    groups = tmp_path / "groups"
    groups.mkdir()
    (groups / "toy_headline.yaml").write_text("group: toy_headline\ntask: [toy_bench]\n", encoding="utf-8")
    monkeypatch.setattr(headline, "HEADLINE_GROUP", "toy_headline")
    monkeypatch.setenv("METABENCH_DATA_DIR", str(toy_plugin.DATA_DIR))
    monkeypatch.setenv("METABENCH_CACHE_DIR", str(tmp_path / "cache"))
    return plugins.load(extra_plugins=(toy_plugin, decoder_tasks_plugin, Plugin(groups)))


@pytest.fixture
def runs(registry, tmp_path):
    outcomes = run(registry, "toy_bench", MODELS, RunOptions(output_dir=tmp_path / "runs", progress=False))
    assert [o.status for o in outcomes] == ["ok"] * len(MODELS), [o.message for o in outcomes]
    found = {r.record.model.spec: r for r in find_runs([tmp_path / "runs"])}
    assert set(found) == set(MODELS)
    return found, outcomes


def _board(registry, runs):
    from metabench.report.leaderboard.board import build_board

    return build_board(registry, list(runs.values()), jobs=1)


def test_each_way_a_decoder_answered_is_a_headline_row_labelled_from_its_answering(registry, runs):
    from metabench.report.leaderboard.markdown import render

    found, _ = runs
    board = _board(registry, found)
    rows = {row.label: row for row in board.headline.rows}
    assert set(rows) == {"majority", "scripted · zero-shot scored", "scripted · 2-shot scored",
                         "scripted · zero-shot generated", "scripted · zero-shot generated · lenient parse"}
    assert rows["majority"].answering is None and rows["scripted · 2-shot scored"].model == "scripted:shots=2"
    generated = found["scripted:answer=generated"]
    rate = generated.record.mean(FORMAT_FAILURE)
    assert rate and rows["scripted · zero-shot generated"].cells["toy_bench"].unread == pytest.approx(rate)
    assert rows["scripted · zero-shot scored"].cells["toy_bench"].unread is None  # scored: nothing unread
    notes = " ".join(board.headline.notes)
    assert "135M parameters" in notes and "a floor" in notes and "not the state of the art" in notes
    markdown = render(board)
    value = generated.record.mean(generated.record.primary_metric)
    line = next(line for line in markdown.splitlines() if line.startswith("| scripted · zero-shot generated |"))
    assert f"{value:.4f} · {rate * 100:.1f} % unread" in line
    assert "a floor for what a decoder does" in markdown
    # the overview (every table, not only the headline) and the site print the rate beside the number too
    overview = markdown[markdown.index("## Overview"):]
    assert f"{value:.4f} · {rate * 100:.1f} % unread" in overview


def test_the_site_shows_the_labels_the_rate_and_the_floor_note(registry, runs, tmp_path):
    from metabench.report.leaderboard.site import write

    found, _ = runs
    write(_board(registry, found), tmp_path / "site")
    index = (tmp_path / "site" / "index.html").read_text(encoding="utf-8")
    start = index.index('id="headline-table"')
    table = re.sub(r"<[^>]+>", "", index[start:index.index("</table>", start)])  # the text a reader sees
    assert "zero-shot generated" in table and "2-shot scored" in table
    rate = found["scripted:answer=generated"].record.mean(FORMAT_FAILURE)
    assert f"{rate * 100:.1f} % unread" in table
    assert 'class="note decoder-note"' in index
    task_page = next((tmp_path / "site" / "tasks").glob("toy_bench*.html")).read_text(encoding="utf-8")
    assert f"{rate * 100:.1f} % unread" in task_page
    model_pages = {page.name: page.read_text(encoding="utf-8") for page in (tmp_path / "site" / "models").glob("*.html")}
    assert sum(f"{rate * 100:.1f} % unread" in page for page in model_pages.values()) == 1
    assert sum("% unread" in page for page in model_pages.values()) == 2  # the strict and the lenient generated runs


def test_a_smoke_run_keeps_its_partial_place_with_its_label_and_rate(registry, tmp_path):
    from metabench.report.leaderboard.board import build_board
    from metabench.report.leaderboard.markdown import render

    outcomes = run(registry, "toy_bench", ["scripted:answer=generated"],
                   RunOptions(output_dir=tmp_path / "smoke", progress=False, limit=9))
    assert [o.status for o in outcomes] == ["ok"]
    board = build_board(registry, find_runs([tmp_path / "smoke"]), jobs=1)
    assert board.headline.rows == []  # a --limit run fills no cell
    (smoke,) = board.headline.smoke
    assert smoke.label == "scripted · zero-shot generated" and smoke.n_items == 9 and smoke.unread is not None
    assert f"scripted · zero-shot generated on toy_bench (9 items, {smoke.value:.4f} · " in render(board)


def test_an_older_decoder_run_without_answering_reads_by_its_sections_kind(runs):
    found, _ = runs
    scored, generated = found["scripted"].record, found["scripted:answer=generated"].record
    assert way(scored) == "zero-shot scored" and way(generated) == "zero-shot generated"
    assert way(scored.evolve(answering=None)) == "zero-shot scored"  # protocol.decoder has kind: choice
    assert way(generated.evolve(answering=None)) == "zero-shot generated"  # protocol.decoder_generated: generation
    assert way(found["majority"].record) is None


def test_the_rate_is_beside_the_number_in_compare_the_closing_table_and_the_hub_export(registry, runs, tmp_path):
    from metabench.export.hf_eval_results import export, read
    from metabench.report.compare import compare_pair, format_comparisons
    from metabench.report.summary import summary_table

    found, outcomes = runs
    generated = found["scripted:answer=generated"]
    text = f"{generated.record.mean(FORMAT_FAILURE) * 100:.1f} % unread"
    row = next(line for line in summary_table(outcomes).splitlines() if "scripted:answer=generated " in line)
    assert f"{generated.record.mean('f1'):.4f} · {text}" in row
    assert "unread" not in next(line for line in summary_table(outcomes).splitlines() if "scripted  " in line)
    comparison = compare_pair(registry, found["scripted"], generated, "f1")
    assert comparison.baseline_unread is None and comparison.candidate_unread is not None
    printed = format_comparisons([comparison], [], correction="holm", alpha=0.05, confidence=0.95)
    assert f"{generated.record.mean('f1'):.4f} · {text}" in printed and "no parser read" in printed
    (written,) = export(registry, [generated], tmp_path / "hub", dataset_id="org/toy")
    notes = read(written.path)[0]["notes"]
    assert notes["unread"] == text and notes["answering"] == "zero-shot generated"
    (scored,) = export(registry, [found["scripted"]], tmp_path / "hub2", dataset_id="org/toy")
    assert read(scored.path)[0]["notes"]["unread"] == "—"


def test_compare_published_prints_a_decoders_caveats_and_our_rate(registry, runs):
    from metabench.report.published import beside_runs, format_beside

    found, _ = runs
    entry = Published(task="toy_bench", system="Some-70B", value=71.5, scale="percent", metric="f1",
                      definition="F1", protocol="differs", differences="T = 0.3", citation="a paper",
                      source="Table 1", answering="3-shot generated", sample="likely a 100-item sample",
                      other_metric="accuracy, not F1")
    rows = beside_runs([entry], [found["scripted:answer=generated"]], [], registry)
    printed = format_beside(rows)
    assert "likely a 100-item sample; another metric: accuracy, not F1; no interval" in printed
    assert "differs, 3-shot generated" in printed and "% unread" in printed


# ---------------------------------------------------------------------------------- the field's LLM results

def _llm() -> list[Published]:
    return [e for e in load_published() if e.answering is not None]


def test_the_llm_numbers_are_typed_as_llm_results_md_prints_them():
    if not LLM_RESULTS.is_file():
        pytest.skip("shared/papers/llm_results.md is not beside this checkout")
    table = "\n".join(line for line in LLM_RESULTS.read_text(encoding="utf-8").splitlines() if line.startswith("| "))
    printed = set(re.findall(r"(?<![\d.])(\d*\.\d+)", table))
    entries = _llm()
    assert len(entries) >= 60
    for entry in entries:
        forms = {f"{entry.value:.2f}", f"{entry.value:.3f}", f"{entry.value:.2f}".lstrip("0"),
                 f"{entry.value:.3f}".lstrip("0")}
        assert forms & printed, (entry.task, entry.system, entry.value)
    by = {(e.task, e.system): e for e in entries}
    assert by[("m4x_det_en_mono", "Gemma-7b-it, fine-tuned tagger")].value == 52.61
    assert by[("m4x_det_en_mono_vua20", "Llama-3.1-8B-Instruct, fine-tuned tagger")].value == 26.78
    assert by[("m4x_nli_3shot_es", "GPT-4o (snapshot not named)")].value == 83.62
    assert by[("munch_word_judge_implicit", "LLaMA-13B")].interval == "SD .18 over the 3 prompts"
    assert by[("figqa_endings_dev", "GPT-3 Davinci, zero-shot")].value == 0.684
    # what the file says could not be read is not filled: no TSI, DMD or CDA number, no GPT-3.5 Recall@10
    assert not [e for e in entries if any(name in e.citation for name in ("TSI", "DMD", "CDA", "Scaffolding"))]


def test_an_llm_number_says_how_it_was_answered_and_its_caveats():
    by = {(e.task, e.system): e for e in _llm()}
    agc = by[("moh_x_cv", "GPT-4o (AGC-Bench)")]
    assert agc.answering == "zero-shot generated" and agc.value == 0.38
    assert agc.caveats[0].startswith("likely a 100-item sample")
    assert "another metric: exact-match accuracy, not F1" in agc.caveats[1] and agc.caveats[-1] == "no interval"
    assert "T = 0.7" in agc.differences and "provenance D" in agc.differences
    tagger = by[("m4x_det_en_mono", "Qwen2.5-7B-Instruct, fine-tuned tagger")]
    assert tagger.answering == "fine-tuned" and tagger.caveats == ["no interval"]
    assert by[("m4x_nli_zs_en", "Llama-3.3-70B-Instruct")].answering == "zero-shot generated"
    assert by[("m4x_nli_3shot_en", "Llama-3.3-70B-Instruct")].answering == "3-shot generated"
    with pytest.raises(ValueError, match="answering"):
        Published(task="t", system="s", value=1, scale="percent", metric="f1", definition="d", protocol="same",
                  citation="c", source="s", answering="prompted somehow")


def test_llm_rows_sit_on_the_headline_unranked_with_their_caveats():
    from metabench.config.index import TaskIndex
    from metabench.plugins import default_registry
    from metabench.report.leaderboard.headline import _published_rows

    from metabench.report.leaderboard.schema import HeadlineColumn

    columns = [HeadlineColumn(name="m4x_det_en_mono", type="task", metric="span_f1", higher_is_better=True),
               HeadlineColumn(name="munch_word_judge_implicit_p1", type="task", metric="accuracy",
                              higher_is_better=True),
               HeadlineColumn(name="moh_x_cv", type="group", metric="f1", higher_is_better=True)]
    rows = {r.system: r.cells for r in _published_rows(load_published(), columns,
                                                       TaskIndex(default_registry()).groups)}
    gemma = rows["Gemma-7b-it, fine-tuned tagger"]["m4x_det_en_mono"]
    assert gemma.answering == "fine-tuned" and gemma.caveats == ["no interval"] and not gemma.best
    assert rows["XLM-RoBERTa-large"]["m4x_det_en_mono"].best  # the encoders' 59.24 stays the best published
    llama = rows["LLaMA-13B"]["munch_word_judge_implicit_p1"]  # the mean over the 3 prompts, said beside it
    assert llama.caveats[0] == "for munch_word_judge_implicit, the mean of its 3 members"
    agc = rows["GPT-4o-mini (AGC-Bench)"]["munch_word_judge_implicit_p1"]
    assert agc.caveats[1].startswith("another pool") and not agc.best  # another pool: never the best
    assert "moh_x_cv" not in rows["GPT-4o (AGC-Bench)"]  # accuracy, not the column's F1: not in the table
