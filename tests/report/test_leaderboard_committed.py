"""The committed leaderboard (leaderboard/, built by `metabench leaderboard build leaderboard/runs -o leaderboard/`)
says what docs/headline-runs.md says about the same runs."""

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


@pytest.mark.parametrize("group", ["moh_x_cv", "trofi_cv"])
def test_headline_docs_and_overview_show_the_constant_answer_beside_minilm(group):
    """#35 item 3: for MOH-X and TroFi, docs/headline-runs.md and the committed overview print the best constant
    answer's F1 beside MiniLM's (the same value, rounded) and the ≈ mark."""
    docs = (ROOT / "docs" / "headline-runs.md").read_text(encoding="utf-8")
    row = next(line for line in docs.splitlines() if line.startswith(f"| {group} "))
    constant = float(re.search(r"\| ≈? ?(\d\.\d{4}) \(constant", row)[1])
    assert "≈ chance in" in row
    index = (ROOT / "leaderboard" / "index.html").read_text(encoding="utf-8")
    name = f">{group.replace('_', '_<wbr>')}</button>"
    table = next(t for t in index.split("<table")[1:] if name in t)
    headers = table.split("</thead>")[0].split("<th ")[1:]  # the model column first, as the cells after the row's <th>
    column = next(i for i, header in enumerate(headers) if name in header)
    cell = _overview_cell(table, "hf-minilm-l6-920c3635", column)
    assert "≈" in cell and f"const {constant:.3f}" in cell, cell
    assert re.search(r"≈ chance in \d+ of 10 folds", cell)
    markdown = (ROOT / "leaderboard" / "leaderboard.md").read_text(encoding="utf-8")
    group_row = next(line for line in markdown.splitlines() if line.startswith(f"| {group} | hf:minilm-l6 |"))
    assert f"const {constant:.4f}, ≈ chance in" in group_row
