"""Views change only what they should: on every Boisson dataset, ``masked`` differs from ``default`` only
inside the expression, ``pme_only`` is exactly the expression, and the paper's running example matches §3.1."""

from __future__ import annotations

import pytest

from metabench_artifacts.recipes import RECIPES
from metabench.kinds.views import PME_CLOSE, PME_OPEN, expression_span, render
from metabench.data.items import TextItem
from metabench.errors import DataError

from .conftest import ALL

pytestmark = pytest.mark.mirror


def test_paper_running_example():
    text = "The latest developments move us closer to a dark age."
    item = TextItem(id="x", text=text, label="metaphor", spans=((44, 48),))
    assert render(item, text, "default") == "The latest developments move us closer to a <PME>dark</PME> age."
    assert render(item, text, "pme_only") == "dark"
    assert render(item, text, "masked") == "The latest developments move us closer to a <masked> age."
    assert render(item, text, "masked", mask="[MASK]") == "The latest developments move us closer to a [MASK] age."


def test_discontinuous_expression_runs_from_first_to_last_word():
    text = "Do not rock the political boat now"
    item = TextItem(id="x", text=text, label="metaphor", spans=((7, 11), (26, 30)))
    assert render(item, text, "pme_only") == "rock the political boat"
    assert render(item, text, "masked") == "Do not <masked> now"


def test_target_index_without_spans_and_missing_target():
    item = TextItem(id="x", text="dark age", label="metaphor", target_index=0)
    assert render(item, item.text, "masked") == "<masked> age"
    with pytest.raises(DataError, match="target"):
        render(TextItem(id="y", text="dark age", label="metaphor"), "dark age", "masked")


@pytest.mark.parametrize("name", ALL)
def test_views_differ_only_inside_the_span(pool, name):
    regime = "random" if "random" in RECIPES[name].regimes else "original"
    items = pool(name, regime)
    assert items
    for item in items:
        start, end = expression_span(item, item.text)
        default, masked = render(item, item.text, "default"), render(item, item.text, "masked")
        assert default == item.text[:start] + PME_OPEN + item.text[start:end] + PME_CLOSE + item.text[end:]
        assert masked[:start] == default[:start] == item.text[:start]
        suffix = len(item.text) - end
        assert masked[len(masked) - suffix:] == default[len(default) - suffix:] == item.text[end:]
        assert masked[start:len(masked) - suffix] == "<masked>"
        assert render(item, item.text, "pme_only") == item.text[start:end]
