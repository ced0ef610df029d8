"""The leaderboard of the committed runs (`metabench leaderboard build leaderboard/runs -o leaderboard/`: the
committed leaderboard.md, and the HTML site built from the same runs into a temporary folder) says what
docs/headline-runs.md says about them."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _overview_cell(index: str, model_slug: str, column: int) -> str:
    """The text of one overview cell: the row of ``model_slug`` in the table whose header holds the column."""
    row = index[index.index(f'models/{model_slug}.html'):]
    row = row[:row.index("</tr>")]
    return re.sub(r"<[^>]+>", " ", row.split("<td")[column].split(">", 1)[1])  # the cell's text, not its attributes


def _documented_constant(group: str) -> float:
    docs = (ROOT / "docs" / "headline-runs.md").read_text(encoding="utf-8")
    row = next(line for line in docs.splitlines() if line.startswith(f"| {group} "))
    assert "≈ chance in" in row
    return float(re.search(r"\| ≈? ?(\d\.\d{4}) \(constant", row)[1])


@pytest.mark.parametrize("group", ["moh_x_cv", "trofi_cv"])
def test_headline_docs_and_committed_markdown_show_the_constant_answer_beside_minilm(group):
    """#35 item 3: for MOH-X and TroFi, docs/headline-runs.md and the committed leaderboard.md print the best
    constant answer's F1 beside MiniLM's (the same value, rounded) and the ≈ mark."""
    constant = _documented_constant(group)
    markdown = (ROOT / "leaderboard" / "leaderboard.md").read_text(encoding="utf-8")
    group_row = next(line for line in markdown.splitlines() if line.startswith(f"| {group} | hf:minilm-l6 |"))
    assert f"const {constant:.4f}, ≈ chance in" in group_row


@pytest.mark.slow  # builds the site of every committed run (once per session)
@pytest.mark.parametrize("group", ["moh_x_cv", "trofi_cv"])
def test_headline_docs_and_overview_show_the_constant_answer_beside_minilm(group, committed_site):
    """The same on the overview page of the site the committed runs build."""
    constant = _documented_constant(group)
    index = (committed_site / "index.html").read_text(encoding="utf-8")
    name = f">{group.replace('_', '_<wbr>')}</button>"
    table = next(t for t in index.split("<table")[1:] if name in t)
    headers = table.split("</thead>")[0].split("<th ")[1:]  # the model column first, as the cells after the row's <th>
    column = next(i for i, header in enumerate(headers) if name in header)
    cell = _overview_cell(table, "hf-minilm-l6-920c3635", column)
    assert "≈" in cell and f"const {constant:.3f}" in cell, cell
    assert re.search(r"≈ chance in \d+ of 10 folds", cell)
