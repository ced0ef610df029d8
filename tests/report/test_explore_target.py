"""Where `metabench explore` writes its page when not told (#50 item 7): beside the runs it reads, never into the
current folder (a clone's root in the README's flow); for runs inside a leaderboard site, into the cache."""

from __future__ import annotations

import shutil

import metabench
from metabench.cli import main


def _runs(toy_registry, folder):
    evaluation = metabench.evaluate("toy_cls", ["majority", "lookup"], output_dir=folder, launcher="serial",
                                    progress=False, registry=toy_registry)
    return [evaluation.get("toy_cls", model).run_dir for model in ("majority", "lookup")]


def test_the_page_goes_beside_the_runs_not_into_the_current_folder(toy_registry, tmp_path, monkeypatch, capsys):
    monkeypatch.setattr("metabench.plugins.default_registry", lambda: toy_registry)
    majority, lookup = _runs(toy_registry, tmp_path / "runs")
    here = tmp_path / "clone"
    here.mkdir()
    monkeypatch.chdir(here)
    assert main(["explore", str(majority), str(lookup / "results.json")]) == 0
    page = tmp_path / "runs" / "toy_cls" / "explore-toy_cls-majority-vs-lookup.html"
    assert page.is_file() and str(page) in capsys.readouterr().out
    assert list(here.iterdir()) == []


def test_runs_inside_a_leaderboard_site_send_the_page_to_the_cache(toy_registry, tmp_path, monkeypatch, capsys):
    monkeypatch.setattr("metabench.plugins.default_registry", lambda: toy_registry)
    monkeypatch.setenv("METABENCH_CACHE_DIR", str(tmp_path / "cache"))
    majority, _ = _runs(toy_registry, tmp_path / "made")
    site = tmp_path / "leaderboard"
    shutil.copytree(tmp_path / "made", site / "runs")
    (site / "leaderboard.json").write_text("{}", encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    assert main(["explore", str(site / "runs" / "toy_cls" / "majority")]) == 0
    page = tmp_path / "cache" / "explore" / "toy_cls" / "explore-toy_cls-majority.html"
    assert page.is_file() and str(page) in capsys.readouterr().out
    assert not list(site.rglob("*.html"))
