"""The results tables in docs/ are what `metabench report docs` prints from the committed runs, byte for byte."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from metabench.errors import MetabenchError
from metabench.report.docs.blocks import DocsContext, find_blocks, regenerate, update

ROOT = Path(__file__).resolve().parents[2]
RUNS = ROOT / "leaderboard" / "runs"
GAP = "<!-- generated: hard-gap tasks=hard_mi_minilm_l6_sor300 (metabench report docs) -->"


@pytest.fixture(scope="module")
def registry():
    from metabench.plugins import default_registry

    return default_registry()


@pytest.mark.slow
@pytest.mark.heavy
def test_docs_tables_match_the_committed_runs(registry):
    """A typed or stale figure in a generated table fails here; `metabench report docs` rewrites the page."""
    changed = update(ROOT / "docs", RUNS, registry, check=True)
    assert not changed, "docs differ from the runs; run `metabench report docs`:\n" + "\n".join(d for _, d in changed)


def test_every_results_page_has_generated_tables():
    for page, least in (("artifacts.md", 3), ("hard-metaphors.md", 3), ("paraphrase-controls.md", 1),
                        ("decoders.md", 1)):
        text = (ROOT / "docs" / page).read_text(encoding="utf-8")
        assert len(find_blocks(Path(page), text)) >= least


def test_a_changed_number_is_found_and_rewritten(tmp_path, registry):
    page = tmp_path / "page.md"
    context = DocsContext(RUNS, registry)
    good = regenerate(page, f"intro\n{GAP}\n<!-- end generated -->\nafter\n", context)
    assert "| hard_mi_minilm_l6_sor300 | precision | 0.658 | 0.503 | -0.155 |" in good
    page.write_text(good.replace("0.503", "0.530"), encoding="utf-8")
    (changed, diff), = update(page, RUNS, registry, check=True)
    assert changed == page and "-| hard_mi_minilm_l6_sor300 | precision | 0.658 | 0.530" in diff
    assert page.read_text(encoding="utf-8") != good  # --check writes nothing
    update(page, RUNS, registry, check=False)
    assert page.read_text(encoding="utf-8") == good and good.startswith("intro\n") and good.endswith("after\n")


def test_the_cli_check_exits_1_on_a_stale_page(tmp_path, cli):
    page = tmp_path / "page.md"
    page.write_text(f"{GAP}\n| typed |\n<!-- end generated -->\n", encoding="utf-8")
    code, out, err = cli("report", "docs", "--check", "--docs", page, "--runs", RUNS)
    assert code == 1 and "+| hard_mi_minilm_l6_sor300 |" in out and "1 page(s) differ" in err
    assert cli("report", "docs", "--docs", page, "--runs", RUNS)[0] == 0
    assert cli("report", "docs", "--check", "--docs", page, "--runs", RUNS)[0] == 0


def test_a_marker_in_a_code_example_is_not_a_block():
    assert find_blocks(Path("page.md"), f"```markdown\n{GAP}\n| example |\n<!-- end generated -->\n```\n") == []


@pytest.mark.parametrize(("text", "message"), [
    ("<!-- generated: hard-gaps tasks=x (metabench report docs) -->\n<!-- end generated -->",
     "page.md:1: unknown generated table 'hard-gaps' (did you mean 'hard-gap'?)"),
    ("x\n" + GAP + "\n| a |", "page.md:2: generated block 'hard-gap' is never closed"),
    ("<!-- generated: hard-gap tasks -->", "page.md:1: malformed marker"),
    ("<!-- end generated -->", "page.md:1: '<!-- end generated -->' without an opening marker"),
])
def test_marker_mistakes_name_the_file_and_line(text, message):
    with pytest.raises(MetabenchError, match="^" + re.escape(message)):
        find_blocks(Path("page.md"), text)
