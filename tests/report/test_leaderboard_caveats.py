"""What the site prints beside a number (#35 items 3-5) and how it lays names out (#39 item 6)."""

from __future__ import annotations

import json
import re


def test_heatmap_labels_fit_inside_the_picture():
    """#39 item 6: the longest model label, at its estimated width, starts inside the SVG (x ≥ 0)."""
    from metabench.report.leaderboard.svg import heatmap, text_width

    models = ["hf-decoder:smollm2-135m,batch_size=20,parser=label", "hf:minilm-l6,threads=1,epochs=1", "m"]
    svg = heatmap(models, [("Detection", [("t", {m: (0.5, "tip") for m in models})])], title="heat")
    labels = re.findall(r'<text x="([\d.]+)" y="[\d.]+" text-anchor="end">([^<]+)</text>', svg)
    assert len(labels) == 3
    for x, text in labels:
        assert float(x) - text_width(text) >= 0, text
    assert int(re.search(r'width="(\d+)"', svg)[1]) <= 1137  # still unscaled in a 1366 px laptop window


def test_model_names_wrap_only_after_a_separator(site):
    """#39 item 6: a model name is unbreakable parts (nowrap) with a <wbr> only after ':', ',', '=' ..., so a
    narrow column never shows 'hf:minil|m-l6'; the task table uses it."""
    from metabench.report.leaderboard.site import _model_name

    assert str(_model_name("hf:minilm-l6,threads=1")) == (
        '<span class="name"><span class="nw">hf:</span><wbr><span class="nw">minilm-l6,</span><wbr>'
        '<span class="nw">threads=</span><wbr><span class="nw">1</span></span>')
    assert "&lt;script&gt;" in str(_model_name("<script>"))
    css = (site / "assets" / "site.css").read_text()
    assert ".name .nw { white-space: nowrap; }" in css and ".name { overflow-wrap: normal;" in css
    page = (site / "tasks" / "toy_cls.html").read_text()
    assert '<span class="name"><span class="nw">lookup</span></span>' in page


def test_gaps_page_puts_pairs_with_a_gap_before_pairs_that_tie(report_registry, make_run, tmp_path):
    """#39 item 6: the gaps page's stated order: a pair where every model scores 0.5 on both subsets comes after
    a pair with a real gap, whatever their names' order."""
    from metabench.report.compare import Options
    from metabench.report.leaderboard import site
    from metabench.report.leaderboard.board import build_board
    from metabench.runs.stored import find_runs

    for prefix, nomet, met in (("a", 30, 15), ("b", 40, 10)):  # a: 0.5 and 0.5 (a tie); b: a gap
        make_run(tmp_path / f"{prefix}_nomet" / "m", task=f"{prefix}_nomet", model="m",
                 correct={0: [1] * nomet + [0] * (60 - nomet)}, ids=[f"{prefix}n{i}" for i in range(60)])
        make_run(tmp_path / f"{prefix}_met" / "m", task=f"{prefix}_met", model="m",
                 correct={0: [1] * met + [0] * (30 - met)}, ids=[f"{prefix}m{i}" for i in range(30)])
    board = build_board(report_registry, find_runs([tmp_path]), options=Options(n_resamples=100), published=[])
    out = tmp_path / "site"
    site.write(board, out)
    headings = re.findall(r'<h2><a href="tasks/([a-z_]+)\.html">', (out / "gaps.html").read_text())
    assert headings[:2] == ["b_nomet", "a_nomet"]


def test_a_lenient_unstable_paraphrase_run_is_labelled(report_registry, make_run, tmp_path):
    """#35 items 4-5: a paraphrase control read with parser label is labelled lenient, and a run whose seeds span
    more than the rule's range is unstable, on the task page, in leaderboard.md and in the JSON."""
    from metabench.report.leaderboard import markdown, site
    from metabench.report.leaderboard.board import build_board
    from metabench.report.compare import Options
    from metabench.report.analyses.seed_stability import UNSTABLE_RANGE
    from metabench.runs.stored import find_runs

    run = make_run(tmp_path / "mlp_x_original" / "d", task="mlp_x_original", model="d",
                   correct={0: [1] * 12 + [0] * 8, 1: [1] * 18 + [0] * 2})  # 0.60 and 0.90
    path = run / "results.json"
    results = json.loads(path.read_text())
    results["task"]["config"].update(kind="generation", kind_args={"parser": "label"}, tag=["metaphor_llm_paraphrases"])
    results["model"]["family"] = "decoder"
    path.write_text(json.dumps(results))
    board = build_board(report_registry, find_runs([tmp_path]), options=Options(n_resamples=100), published=[])
    entry = board.tasks[0].entries[0]
    caveats = entry.caveats
    assert caveats.lenient_parser and caveats.stability.unstable and 0.30 > UNSTABLE_RANGE
    assert caveats.notes[0].startswith("per seed 0.600 / 0.900: unstable across seeds (range 0.300")
    out = tmp_path / "site"
    site.write(board, out)
    page = (out / "tasks" / "mlp_x_original.html").read_text()
    assert ">lenient parser</span>" in page and ">unstable</span>" in page and 'id="caveats"' in page
    text = markdown.render(board)
    assert "(unstable) (lenient parser)" in text and "Read with care:" in text
