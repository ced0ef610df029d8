"""The same runs give the same site, byte for byte, and no page prints a Python object.

A page that prints ``<built-in method items of dict object at 0x7f…>`` (a template reading ``b.items`` off a
dict) is wrong and changes with every build, so a commit of a rebuild shows churn instead of what moved. The
runs here are committed ones that reach every kind of page: the VUA-Verb runs with the SOR φ tables (the
hardness tables, where the repr appeared), a metaphor/literal pair (the gaps page), and a Boisson cell with
its views (the paper tables).
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
RUNS = REPO / "leaderboard" / "runs"
SUBSET = ["vua_verb", "hard_phi", "m4x_int_en_ft_all_met", "m4x_int_en_ft_all_nomet",
          "boisson_moh_lexical_f0@default", "boisson_moh_lexical_f0@pme_only"]
#: The subset builds' bootstrap resamples: what is tested (the same bytes from two builds, no repr on a page) holds
#: at any number of draws, and 1,000 cut a build from 11.6 to 8.6 CPU-s (the committed site, read by the last test,
#: is built with the default 10,000).
RESAMPLES = 1_000
#: what a Python object's repr looks like in text: an address, or the angle-bracket forms of callables
REPR = re.compile(r"0x[0-9a-fA-F]{6,}|<built-in|<function|<bound method|<method|object at ")


def _files(site: Path) -> dict[str, bytes]:
    return {p.relative_to(site).as_posix(): p.read_bytes() for p in sorted(site.rglob("*")) if p.is_file()}


def _reprs(files: dict[str, bytes]) -> list[str]:
    found = []
    for name, data in files.items():
        text = data.decode("utf-8", errors="replace")
        found += [f"{name}: {m[0]!r} in …{text[max(0, m.start() - 60):m.end() + 20]}…" for m in REPR.finditer(text)]
    return found


@pytest.fixture(scope="module")
def subset_sites(report_registry, tmp_path_factory):
    """The subset built twice into two folders, then once more over the first: (the folder holding a and b, and
    each build's written, changed and removed files). Once per test session: the pytest-xdist workers share it
    (the first builds it under a lock, the others wait and read its summary), as `committed_site` is shared:
    three builds are half a minute of CPU, and the tests reading them run on both workers."""
    import json
    import os
    from types import SimpleNamespace

    from metabench.filelock import locked
    from metabench.report.leaderboard import build_site

    runs = [RUNS / name for name in SUBSET]
    missing = [str(p) for p in runs if not p.exists()]
    assert not missing, f"committed runs the test reads are gone: {missing}"
    shared = tmp_path_factory.getbasetemp()
    base = (shared.parent if os.environ.get("PYTEST_XDIST_WORKER") else shared) / "determinism"
    summary = base / "builds.json"
    with locked(base.parent / "determinism.lock"):
        if not summary.is_file():
            builds = [build_site(report_registry, runs, base / folder, n_resamples=RESAMPLES) for folder in "aba"]
            summary.write_text(json.dumps([{field: [str(p) for p in getattr(build, field)]
                                            for field in ("written", "changed", "removed")} for build in builds]))
    first, second, again = (SimpleNamespace(**{field: [Path(p) for p in paths] for field, paths in build.items()})
                            for build in json.loads(summary.read_text()))
    return base, first, second, again


@pytest.mark.slow
def test_two_builds_of_the_same_runs_are_byte_identical(subset_sites):
    base, first, second, _ = subset_sites
    a, b = _files(base / "a"), _files(base / "b")
    assert sorted(a) == sorted(b)
    assert [name for name in a if a[name] != b[name]] == []
    assert {"gaps.html", "tasks/vua_verb.html", "papers.html"} <= set(a)
    assert len(first.changed) == len(first.written) == len(second.written)  # a fresh folder: every file is new


def test_a_rebuild_of_the_same_runs_rewrites_nothing(subset_sites):
    base, first, _, again = subset_sites
    assert again.written == first.written
    assert again.changed == [] and again.removed == []


@pytest.mark.slow
def test_a_rebuild_rewrites_only_the_pages_whose_bytes_changed(report_registry, tmp_path):
    from metabench.errors import MetabenchError
    from metabench.report.leaderboard import build_site

    runs = [RUNS / "vua_verb", RUNS / "hard_phi"]
    site = tmp_path / "site"
    build_site(report_registry, runs, site)
    page = site / "tasks" / "vua_verb.html"
    page.write_text(page.read_text() + "edited\n")
    stamp = (site / "index.html").stat().st_mtime_ns
    with pytest.raises(MetabenchError, match="holds 1 file"):  # edited since: not provably the build's any more
        build_site(report_registry, runs, site)
    rebuilt = build_site(report_registry, runs, site, force=True)
    assert rebuilt.changed == [page]
    assert (site / "index.html").stat().st_mtime_ns == stamp
    assert "edited" not in page.read_text()


def test_no_generated_page_prints_a_python_object(subset_sites):
    base, *_ = subset_sites
    files = _files(base / "a")
    assert _reprs(files) == []
    hardness = files["gaps.html"].decode()
    assert re.search(r'<th scope="row">[^<]+</th><td class="num">\d+</td>', hardness), "hardness bins lost their item counts"


def test_the_committed_board_prints_no_python_object():
    """The committed leaderboard.md and leaderboard.json, as `metabench leaderboard build` last wrote them."""
    files = {name: (REPO / "leaderboard" / name).read_bytes() for name in ("leaderboard.md", "leaderboard.json")}
    assert _reprs(files) == []


@pytest.mark.slow
def test_the_site_of_every_committed_run_prints_no_python_object(committed_site):
    """Every page of the site built from all the committed runs (the HTML is built, not committed)."""
    files = _files(committed_site)
    assert len(files) > 100
    assert _reprs(files) == []


def test_footers_carry_nothing_that_changes_with_the_runs(subset_sites):
    base, *_ = subset_sites
    footers = {re.search(r"<footer>(.*?)</footer>", data.decode(), re.S)[1]
               for name, data in _files(base / "a").items() if name.endswith(".html")}
    # one footer per depth of page (links are relative), nothing else varies
    assert len({re.sub(r'href="[./]*', 'href="', f) for f in footers}) == 1
    assert not re.search(r"\d{4}-\d\d-\d\d|\d+ runs", next(iter(footers)))
