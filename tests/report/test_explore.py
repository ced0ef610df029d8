"""`metabench explore`: the join of runs with their items, the page's filters in headless Chromium, and where
the page may not go (a leaderboard site)."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

import metabench
from metabench.cli import main
from metabench.report.explore.join import explore
from metabench.report.explore.page import write_page
from metabench.runs.stored import load_run
from metabench.stats.paired import mcnemar

from headless import LAPTOP, browser  # noqa: F401 - the shared headless Chromium fixture

REPO = Path(__file__).resolve().parents[2]
SCREENSHOT = REPO / "docs" / "explore-pair.png"
COMMITTED = REPO / "leaderboard" / "runs" / "m4x_det_en_mono"


@pytest.fixture
def toy_runs(toy_registry, tmp_path):
    evaluation = metabench.evaluate("toy_cls", ["majority", "lookup"], output_dir=tmp_path / "runs",
                                    launcher="serial", progress=False, registry=toy_registry)
    return [load_run(evaluation.get("toy_cls", model).run_dir) for model in ("lookup", "majority")]


def _right(run) -> dict[str, bool]:
    return {s["id"]: s["gold"] == s["prediction"] for s in run.samples}


def test_one_run_joins_every_sample_with_its_item(toy_registry, toy_runs):
    import toy_plugin  # the toy data's own file, read without metabench

    exploration = explore(toy_registry, toy_runs[:1])
    lines = (toy_plugin.DATA_DIR / "toy" / "cls_test.tsv").read_text(encoding="utf-8").splitlines()
    header = lines[0].split("\t")
    rows = [dict(zip(header, line.split("\t"))) for line in lines[1:]]
    assert len(exploration.rows) == len(rows) == toy_runs[0].record.n_items
    by_id = {row.id: row for row in exploration.rows}
    right = _right(toy_runs[0])
    for record in rows:
        row = by_id[record["id"]] if record.get("id") in by_id else None
        if row is None:
            continue
        assert record["text"] in row.text.values() and row.gold == record["label"]
    assert all(row.answers[0].correct == right[row.id] for row in exploration.rows)
    assert exploration.counts()["correct_0"] == sum(right.values())
    assert set(exploration.facets["gold label"]) == {r.gold for r in exploration.rows}


def test_two_runs_give_mcnemars_discordant_items(toy_registry, toy_runs):
    exploration = explore(toy_registry, toy_runs)
    a, b = (_right(run) for run in toy_runs)
    ids = sorted(a)
    expected = mcnemar([a[i] for i in ids], [b[i] for i in ids])
    counts = exploration.counts()
    assert (counts["only_a"], counts["only_b"]) == (expected.b, expected.c)
    assert counts["both"] + counts["neither"] + expected.b + expected.c == len(ids)


def test_explore_refuses_bad_usage(toy_registry, toy_runs, tmp_path, monkeypatch, capsys):
    monkeypatch.setattr("metabench.plugins.default_registry", lambda: toy_registry)
    site = tmp_path / "site"
    site.mkdir()
    (site / "leaderboard.json").write_text("{}", encoding="utf-8")
    lookup = str(toy_runs[0].path)
    assert main(["explore", lookup, "-o", str(site / "pages" / "x.html")]) == 2
    assert "is a leaderboard site" in capsys.readouterr().err and not (site / "pages").exists()
    assert main(["explore", lookup, lookup, lookup]) == 2
    assert "one or two runs" in capsys.readouterr().err
    assert main(["explore", lookup, "--seed", "7", "-o", str(tmp_path / "x.html")]) == 2
    assert "--seed 7" in capsys.readouterr().err
    assert main(["explore", lookup, "-o", str(tmp_path / "page.html")]) == 0
    assert (tmp_path / "page.html").is_file() and "keep it local" in capsys.readouterr().err


# ------------------------------------------------------------------------------------------ in a browser


def _open(browser, page: Path) -> None:
    browser.get(page.as_uri())
    errors = [e for e in browser.get_log("browser") if e["level"] in ("SEVERE", "ERROR")]
    assert not errors, f"{page}: console errors {errors}"


def _choose(browser, css: str, value: str) -> int:
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import Select

    Select(browser.find_element(By.CSS_SELECTOR, css)).select_by_value(value)
    shown = int(browser.find_element(By.ID, "shown").text)
    visible = browser.execute_script("return document.querySelectorAll('#items tbody tr:not([hidden])').length")
    assert shown == visible
    return shown


@pytest.mark.slow
def test_the_page_filters_in_a_browser(browser, toy_registry, toy_runs, tmp_path):
    from selenium.webdriver.common.by import By

    exploration = explore(toy_registry, toy_runs)
    page = write_page(exploration, tmp_path / "pair.html")
    _open(browser, page)
    counts = exploration.counts()
    assert _choose(browser, "#f-correct", "discordant") == counts["only_a"] + counts["only_b"]
    assert _choose(browser, "#f-correct", "only_b") == counts["only_b"]
    assert _choose(browser, "#f-correct", "") == len(exploration.rows)
    label = exploration.facets["gold label"][0]
    expected = sum(row.facets["gold label"] == label for row in exploration.rows)
    assert _choose(browser, "select.facet[data-facet='gold label']", label) == expected
    box = browser.find_element(By.ID, "f-text")
    word = next(row for row in exploration.rows if row.facets["gold label"] == label).text["text"].split()[0]
    box.send_keys(word)
    shown = int(browser.find_element(By.ID, "shown").text)
    assert 1 <= shown == sum(row.facets["gold label"] == label and word.lower() in " ".join(
        [row.id, *row.text.values(), row.gold, *(a.prediction for a in row.answers), *row.facets.values()]).lower()
        for row in exploration.rows)

    single = write_page(explore(toy_registry, toy_runs[1:]), tmp_path / "one.html")
    _open(browser, single)
    wrong = sum(not ok for ok in _right(toy_runs[1]).values())
    assert _choose(browser, "#f-correct", "wrong") == wrong


def test_hostile_text_renders_as_text(browser, toy_registry, toy_runs, tmp_path):
    exploration = explore(toy_registry, toy_runs[:1])
    exploration.rows[0].text["text"] = "<script>alert(1)</script><b>x</b>"
    exploration.runs[0]["model"] = "<img src=x onerror=alert(2)>"
    page = write_page(exploration, tmp_path / "hostile.html")
    _open(browser, page)
    body = browser.execute_script("return document.body.innerText")
    assert "<script>alert(1)</script><b>x</b>" in body and "<img src=x onerror=alert(2)>" in body


@pytest.mark.slow
@pytest.mark.skipif(not (COMMITTED / "lookup").is_dir(), reason="the committed runs are not in this checkout")
def test_a_committed_pair_and_its_screenshot(browser, tmp_path, monkeypatch):
    """`metabench explore` on two committed runs, read with this machine's mirror; the docs' picture is this
    page (METABENCH_UPDATE_SCREENSHOT=1 rewrites it)."""
    from mirror import mirror_dir

    if mirror_dir() is None:
        pytest.skip("the data mirror is not on this machine")
    page = tmp_path / "m4x.html"
    monkeypatch.chdir(REPO)  # the page names the runs as given: relative to the checkout
    runs = [str(folder.relative_to(REPO)) for folder in (COMMITTED / "lookup", COMMITTED / "majority")]
    assert main(["explore", runs[0], "-o", str(tmp_path / "one.html")]) == 0  # one committed run
    _open(browser, tmp_path / "one.html")
    wrong = sum(not ok for ok in _right(load_run(COMMITTED / "lookup")).values())
    assert _choose(browser, "#f-correct", "wrong") == wrong
    assert main(["explore", *runs, "-o", str(page)]) == 0
    _open(browser, page)
    discordant = _choose(browser, "#f-correct", "discordant")
    lookup, majority = _right(load_run(COMMITTED / "lookup")), _right(load_run(COMMITTED / "majority"))
    assert discordant == sum(lookup[i] != majority[i] for i in lookup)
    browser.set_window_size(*LAPTOP)
    shot = tmp_path / "explore.png"
    assert browser.save_screenshot(str(shot))
    if os.environ.get("METABENCH_UPDATE_SCREENSHOT") == "1":
        shutil.copyfile(shot, SCREENSHOT)
    assert SCREENSHOT.is_file(), "run this test once with METABENCH_UPDATE_SCREENSHOT=1 and commit the picture"
    assert SCREENSHOT.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_item_fields_and_meta_become_facets_text_and_phi_bins():
    from metabench.data.items import TextItem
    from metabench.report.explore.join import _classify, _row

    items = [TextItem(id=f"i{n}", text=f"sentence number {n} with its own words", label="metaphor" if n % 2 else "literal",
                      pos="VERB", target_index=n, meta={"phi": n / 10, "gloss": f"gloss {n}", "line": n})
             for n in range(60)]
    facets, texts = _classify(items)
    assert set(facets) == {"label", "pos", "language", "meta.phi"} and set(texts) == {"text", "meta.gloss"}
    # target_index and meta.line (60 distinct numbers: positions, not categories) are left out
    row = _row(items[7], [{"id": "i7", "gold": "metaphor", "prediction": "literal", "seed": 0}], facets, texts, "t@masked")
    assert row.facets == {"label": "metaphor", "pos": "VERB", "language": items[7].language, "φ bin": "0.60–0.80",
                          "view": "masked", "gold label": "metaphor"}
    assert row.text == {"text": "sentence number 7 with its own words", "gloss": "gloss 7"}
    assert not row.answers[0].correct
    binned = [TextItem(id="h", text="x", label="metaphor", meta={"phi": 0.1, "phi_bin": "0.0-0.2"})]
    assert "meta.phi_bin" in _classify(binned)[0] and "meta.phi" not in _classify(binned)[0]  # the items' own bins
