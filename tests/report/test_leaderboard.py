"""`metabench leaderboard build`: the files, the numbers in leaderboard.json, escaping, rebuilds."""

from __future__ import annotations

import hashlib
import json
import re

import pytest

from metabench.report.leaderboard.board import slug
from metabench.report.leaderboard.site_files import CONTENT_MARKS

HOSTILE = "<script>alert(1)</script>"
ESCAPED = "&lt;script&gt;alert(1)&lt;/script&gt;"


def test_site_files_and_hand_written_readme(site):
    for name in ("index.html", "gaps.html", "papers.html", "leaderboard.md", "leaderboard.json", "assets/site.css",
                 "assets/site.js", "tasks/toy_cls.html", "tasks/toy_tag.html", "tasks/t_met.html", "models/lookup.html",
                 f"models/{slug(HOSTILE)}.html"):
        assert (site / name).is_file(), name
    assert (site / "README.md").read_text() == "hand-written, must survive builds\n"
    html = "".join(p.read_text() for p in site.rglob("*.html"))
    assert "http://" not in html.replace('xmlns="http://www.w3.org/2000/svg"', "") and "https://" not in html


def test_board_ranks_tests_against_the_best_and_names_the_correction(site):
    board = json.loads((site / "leaderboard.json").read_text())
    assert board["correction"] == {"method": "holm", "name": "Holm"} and board["alpha"] == 0.05
    tasks = {t["name"]: t for t in board["tasks"]}
    tag = tasks["toy_tag"]
    assert tag["best"] == "lookup" and tag["primary_metric"] == "span_f1"
    assert tag["datasets"] == [{"name": "toy_tagging", "roles": ["test", "train"], "licence": "CC0", "citation": ""}]
    entries = {e["model"]: e for e in tag["entries"]}
    assert entries["lookup"]["rank"] == 1 and entries["lookup"]["vs_best"] is None
    assert entries["majority"]["vs_best"]["test"] == "bootstrap" and entries["majority"]["vs_best"]["significant"]
    # lookup scores 1 on every resample and majority 0: no spread, so no MDE; random's differ by resample
    assert entries["majority"]["vs_best"]["mde"] is None
    assert entries["random"]["vs_best"]["unit"] == "sentences" and entries["random"]["vs_best"]["mde"] > 0
    page = (site / "tasks" / "toy_tag.html").read_text()
    assert ">MDE</button>" in page and f"±{entries['random']['vs_best']['mde']:.4f}" in page
    assert "bootstrap (sentences)" in page
    assert "| rank | model | span_f1 | n | seeds | Δ vs best | CI | MDE | test |" in (site / "leaderboard.md").read_text()
    assert entries["random"]["metrics"]["span_f1"]["n"] == 2 and len(entries["random"]["per_seed"]) == 2
    cls = {e["model"]: e for e in tasks["toy_cls"]["entries"]}
    tied = [cls[m] for m in (HOSTILE, "lookup", "majority")]  # equal accuracy: shared rank, McNemar p = 1
    assert [e["rank"] for e in tied] == [1, 1, 1]
    assert all(e["vs_best"]["test"] == "mcnemar" and not e["vs_best"]["significant"] for e in tied if e["vs_best"])
    assert cls["random"]["rank"] == 5 and cls["random"]["vs_best"]["significant"]
    gaps = {(g["model"], g["reference_task"], g["subset_task"]): g for g in board["gaps"]["rows"]}
    assert gaps[("m", "t_nomet", "t_met")]["gap"] == 12 / 30 - 45 / 60
    assert len(board["paper_tables"]) == 9


def test_hostile_model_name_is_text_everywhere(site):
    for page in site.rglob("*.html"):
        assert HOSTILE not in page.read_text(), page
    assert ESCAPED in (site / "index.html").read_text()
    assert ESCAPED in (site / "gaps.html").read_text()  # the SVG plot labels too
    assert f"<h1>{ESCAPED}</h1>" in (site / "models" / f"{slug(HOSTILE)}.html").read_text()
    markdown = (site / "leaderboard.md").read_text()
    assert HOSTILE not in markdown and r"\<script\>alert(1)\</script\>" in markdown
    assert not re.search(r"&[#a-z0-9]+;", markdown)  # Markdown escapes, never HTML entities


@pytest.mark.slow
def test_cli_build_formats_and_stale_pages(cli, toy_runs, tmp_path):
    out = tmp_path / "board"
    (out / "tasks").mkdir(parents=True)
    (out / "tasks" / "my_notes.html").write_text("the user's own page")
    stale = f'{CONTENT_MARKS[".html"]}stale, from an earlier build'  # it carries the generator mark
    (out / "tasks" / "removed_task.html").write_text(stale)
    stale_digest = hashlib.sha256(stale.encode()).hexdigest()  # the list proves it by content
    (out / ".metabench-generated.json").write_text(json.dumps({"tasks/removed_task.html": stale_digest,
                                                               "../outside.txt": stale_digest}))
    (tmp_path / "outside.txt").write_text("not the site's")
    code, _, err = cli("leaderboard", "build", toy_runs, "-o", out, "--resamples", "500")
    assert code == 0, err
    assert not (out / "tasks" / "removed_task.html").exists() and (out / "tasks" / "toy_cls.html").exists()
    assert (out / "tasks" / "my_notes.html").read_text() == "the user's own page"  # deleted only what it generated
    assert (tmp_path / "outside.txt").exists()
    first = (out / "leaderboard.json").read_text()
    assert str(tmp_path) not in first and '"run": "' in first  # run folders relative to the site, never absolute
    code, _, _ = cli("leaderboard", "build", toy_runs, "-o", out, "--resamples", "500")
    assert (out / "leaderboard.json").read_text() == first  # same runs, same board: rebuilds leave no diff
    only = tmp_path / "json_only"
    code, stdout, _ = cli("leaderboard", "build", toy_runs, "-o", only, "--format", "json", "--resamples", "200")
    assert code == 0 and sorted(p.name for p in only.iterdir()) == [".metabench-generated.json", "leaderboard.json"]
    code, _, err = cli("leaderboard", "build", toy_runs, "-o", only, "--format", "pdf")
    assert code == 2 and "unknown reporter 'pdf'" in err


def test_tests_and_reporters_are_registered(cli, report_registry):
    code, out, _ = cli("ls", "tests")
    names = ["mcnemar", "mcnemar_chi2", "bootstrap", "randomisation", "paired_t", "wilcoxon", "two_proportion_z",
             "fisher", "permutation"]
    assert code == 0 and all(n in out for n in names)
    for name in names:
        entry = report_registry.get("test", name)
        assert callable(entry.load()) and entry.meta["input"] in {"correctness", "records", "seeds", "proportions", "samples"}
    code, out, _ = cli("ls", "reporters")
    assert code == 0 and all(n in out for n in ("markdown", "json", "html"))


def test_a_partial_run_is_ranked_only_against_runs_over_the_same_items(cli, toy_runs, short_runs, tmp_path):
    """A --limit 30 run beside full runs: its own item set, its n shown, marked partial, never a ★ and never
    compared with the full runs (whose ranks and ★ it does not change)."""
    import shutil

    both = tmp_path / "both"
    shutil.copytree(toy_runs, both)
    shutil.copytree(short_runs / "toy_tag" / "lookup@limit=30", both / "toy_tag" / "lookup_short")
    results = both / "toy_tag" / "lookup_short" / "results.json"
    data = json.loads(results.read_text())
    data["model"]["spec"] = "lookup-on-30-items"  # another model name, so the board keeps both entries
    results.write_text(json.dumps(data))
    out = tmp_path / "board"
    code, _, err = cli("leaderboard", "build", both, "-o", out, "--resamples", "200")
    assert code == 0, err
    board = json.loads((out / "leaderboard.json").read_text())
    task = next(t for t in board["tasks"] if t["name"] == "toy_tag")
    entries = {e["model"]: e for e in task["entries"]}
    short = entries["lookup-on-30-items"]
    assert short["partial"] and short["n_items"] == 30 and short["item_set"] == 1 and not short["star"]
    assert short["vs_best"] is None  # the only run over those 30 items: nothing to compare with
    full = [e for e in task["entries"] if e["item_set"] == 0]
    assert all(not e["partial"] and e["n_items"] == task["n_items"] > 30 for e in full)
    stars = [e for e in task["entries"] if e["star"]]
    assert stars and {e["item_set"] for e in stars} == {0}  # no ★ shared across item sets
    assert [s["n_items"] for s in task["item_sets"]] == [task["n_items"], 30]
    assert "lookup-on-30-items ◐ n=30" in (out / "leaderboard.md").read_text()
    assert (out / "models" / "lookup.html").is_file()


def test_board_builds_from_run_files_where_the_plugin_is_not_installed(toy_runs):
    """The toy plugin's runs, reported by a metabench without the toy plugin: datasets (licence), groups and
    paper-view cells come from results.json, not from the registry."""
    from metabench import plugins
    from metabench.report.compare import Options
    from metabench.report.leaderboard.board import build_board
    from metabench.runs.stored import find_runs

    registry = plugins.load()
    assert not registry.has("dataset", "toy_tagging")
    board = build_board(registry, find_runs([toy_runs]), options=Options(n_resamples=50))
    tag = board.task("toy_tag")
    assert tag.datasets[0].licence == "CC0" and tag.family == "detection"
    table = next(t for t in board.paper_tables if t.key == "meta4xnli_table_14")
    assert any(r.source == "metabench" and r.cells[0] != "—" for r in table.rows)


def test_heatmap_of_many_tasks_is_stacked_so_labels_are_never_scaled_down():
    """120 tasks in one family: three stacked blocks, none wider than a 1366 px laptop leaves the page (1137 px),
    so the browser never shrinks the 12 px labels."""
    import re

    from metabench.report.leaderboard.svg import HEATMAP_COLUMNS, heatmap

    tasks = [(f"t{i}", {"m": (i / 120, f"t{i}")}) for i in range(120)]
    svg = heatmap(["m"], [("Detection", tasks)], title="heat")
    width = int(re.search(r'width="(\d+)"', svg)[1])
    assert width <= 1137 and HEATMAP_COLUMNS * 18 + 200 <= 1137
    assert [t for t in ("Detection (1 of 3)", "Detection (2 of 3)", "Detection (3 of 3)") if t in svg] == [
        "Detection (1 of 3)", "Detection (2 of 3)", "Detection (3 of 3)"]
    assert svg.count('class="cell"') == 120


def test_gaps_page_opens_on_a_real_gap_not_on_zero_against_zero(report_registry, make_run, tmp_path):
    from metabench.report.compare import Options
    from metabench.report.leaderboard.board import build_board
    from metabench.runs.stored import find_runs

    for model, nomet, met in (("a-zero", 0, 0), ("b-model", 40, 10)):
        make_run(tmp_path / "t_nomet" / model, task="t_nomet", model=model, correct={0: [1] * nomet + [0] * (60 - nomet)},
                 ids=[f"n{i}" for i in range(60)])
        make_run(tmp_path / "t_met" / model, task="t_met", model=model, correct={0: [1] * met + [0] * (30 - met)},
                 ids=[f"m{i}" for i in range(30)])
    board = build_board(report_registry, find_runs([tmp_path]), options=Options(n_resamples=100), published=[])
    rows = board.gaps.rows
    assert [(r.model, r.degenerate) for r in rows] == [("b-model", False), ("a-zero", True)]
