"""The typed board (issue 47 item 2): `build_board` returns a `Board`, leaderboard.json is its JSON byte for byte,
docs/leaderboard-format.md is generated from it, and a reporter gets the typed board (``typed=True``) or, registered
the old way, the JSON's dict with a deprecation warning."""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import pytest

from metabench.errors import PluginAPIDeprecationWarning
from metabench.report.leaderboard.schema import Board, BoardTask, Comparison, Entry, format_markdown

ROOT = Path(__file__).resolve().parents[2]
BOARD = ROOT / "leaderboard" / "leaderboard.json"


def test_the_format_page_is_generated_from_the_board_model():
    page = ROOT / "docs" / "leaderboard-format.md"
    assert page.read_text(encoding="utf-8") == format_markdown(), (
        "docs/leaderboard-format.md is stale: run `metabench schema leaderboard > docs/leaderboard-format.md`")
    for name in ("Board", "BoardTask", "Entry", "Comparison", "Marks", "Caveats", "Headline", "Group"):
        assert f"## `{name}`" in format_markdown()


def test_the_committed_board_reads_typed_and_writes_back_byte_for_byte(tmp_path):
    from metabench.report.leaderboard import jsonfile

    text = BOARD.read_text(encoding="utf-8")
    board = Board.model_validate(json.loads(text))
    assert isinstance(board.tasks[0], BoardTask) and isinstance(board.tasks[0].entries[0], Entry)
    compared = [e.vs_best for t in board.tasks for e in t.entries if e.vs_best is not None]
    assert compared and all(isinstance(c, Comparison) for c in compared)
    # a parts map keyed by data (metrics by name) holds typed parts
    entry = board.tasks[0].entries[0]
    assert entry.metrics[board.tasks[0].primary_metric].mean is not None
    with warnings.catch_warnings():
        warnings.simplefilter("error", PluginAPIDeprecationWarning)  # the json reporter reads no part as a dict
        (written,) = jsonfile.write(board, tmp_path)
    assert written.read_text(encoding="utf-8") == text


def test_a_field_the_board_does_not_declare_is_kept_and_a_damaged_one_is_refused():
    board = Board.model_validate({"schema_version": 2, "tasks": [{"name": "t", "entries": [], "later_field": 1}],
                                  "a_plugins_section": {"rows": []}})
    assert board.tasks[0].later_field == 1 and board.section("a_plugins_section") == {"rows": []}
    assert board.to_dict()["tasks"][0]["later_field"] == 1
    with pytest.raises(KeyError, match="no section 'missing'"):
        board.section("missing")
    with pytest.raises(ValueError, match="n_items"):
        Board.model_validate({"schema_version": 2, "tasks": [{"name": "t", "n_items": "many"}]})


def test_reading_the_board_as_a_dict_still_works_with_a_deprecation_warning():
    board = Board.model_validate({"schema_version": 2, "n_runs": 3, "tasks": [{"name": "t"}]})
    with pytest.warns(PluginAPIDeprecationWarning, match=r"Board\['n_runs'\].*\.n_runs"):
        assert board["n_runs"] == 3
    with pytest.warns(PluginAPIDeprecationWarning):
        assert board.get("title", "none") == "none"  # not in the file: the dict form's default
    with pytest.warns(PluginAPIDeprecationWarning):
        assert "tasks" in board and "title" not in board


def _reporter_plugin(typed: bool):
    """A third party's reporter: records what type of board it was given."""
    import types

    from metabench import hookimpl

    seen: list = []

    def write(board, out_dir: Path) -> list[Path]:
        seen.append(board)
        path = out_dir / "seen.txt"
        path.write_text(type(board).__name__)
        return [path]

    module = types.ModuleType(f"reporter_plugin_{typed}")

    @hookimpl
    def metabench_register_reporters(register):
        register("seen", write, description="records the board's type", **({"typed": True} if typed else {}))

    module.metabench_register_reporters = metabench_register_reporters
    return module, seen


@pytest.mark.parametrize("typed", [True, False])
def test_a_reporter_gets_the_typed_board(toy_runs, tmp_path, typed):
    """Every reporter gets the `Board`: the untyped dict form (a registration without ``typed=True``) was removed
    in 0.1 (docs/plugins.md change log); ``typed=True`` is still accepted, and means nothing more."""
    from metabench import plugins
    from metabench.report.leaderboard import build_site

    module, seen = _reporter_plugin(typed)
    registry = plugins.load(extra_plugins=(module,))
    build_site(registry, [toy_runs], tmp_path / "out", formats=["seen", "json"], n_resamples=50)
    assert isinstance(seen[0], Board)


@pytest.mark.slow
def test_the_site_of_the_committed_board_reads_no_part_as_a_dict(tmp_path):
    """The templates are held here (the scanner reads Python only): every page of the committed board renders with
    the deprecated dict form an error."""
    from metabench.report.leaderboard import site

    board = Board.model_validate(json.loads(BOARD.read_text(encoding="utf-8")))
    with warnings.catch_warnings():
        warnings.simplefilter("error", PluginAPIDeprecationWarning)
        written = site.write(board, tmp_path)
    pages = [p for p in written if p.suffix == ".html"]
    assert len(pages) == len(board.tasks) + len(board.models) + 3  # index, gaps, papers


def test_the_pm_filter_reads_the_boards_summaries_and_a_sections_own_json():
    """A plugin's template may apply ``pm`` to its own JSON ({"mean", "std", "n"}) as before the board was typed."""
    from metabench.report.leaderboard.numbers import mean_std
    from metabench.report.leaderboard.schema import Summary

    assert mean_std({"mean": 0.5, "std": 0.1, "n": 3}) == mean_std(Summary(mean=0.5, std=0.1, n=3)) == "0.5000 ± 0.1000"
    assert mean_std({"mean": 0.25, "n": 1}) == "0.2500" and mean_std(None) == mean_std({}) == "—"
