"""`--tasks core`: one task per family at its main protocol, a meaningful subset for encoders and decoders alike,
and every member explained in docs/core-suite.md."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def index():
    from metabench.config.index import TaskIndex
    from metabench.plugins import default_registry

    return TaskIndex(default_registry())


def _family_of(index, name: str) -> str:
    return index.tasks[name].family  # the task file's folder under its task folder (a plugin's too)


def test_core_is_a_group_that_gives_encoders_and_decoders_each_a_report_card(index):
    members = index.select("core")
    assert len(members) == len(set(members))
    by_family = {family: [n for n in members if getattr(index.tasks[n].config.protocol, family) is not None]
                 for family in ("encoder", "decoder")}
    for family, names in by_family.items():
        datasets = {_family_of(index, n) for n in names}
        assert len(names) >= 10 and len(datasets) >= 5, (family, names)
    assert set(by_family["encoder"]) | set(by_family["decoder"]) == set(members)  # none that no model runs


def test_core_holds_no_task_built_for_one_model(index):
    from metabench.config.index import MODEL_SPECIFIC

    assert not set(index.select("core")) & set(index.tags[MODEL_SPECIFIC])


def _named(cell: str) -> set[str]:
    """The task names a table cell writes: `a`, `b_{x,y}` (braces expand), `@view` after a full `name@view`."""
    names, last = set(), ""
    for span in re.findall(r"`([^`]+)`", cell):
        if span.startswith("@"):
            span = last.partition("@")[0] + span
        expanded = [span]
        while any("{" in e for e in expanded):
            e = next(e for e in expanded if "{" in e)
            head, options, tail = re.match(r"(.*?)\{([^}]*)\}(.*)", e).groups()
            expanded.remove(e)
            expanded.extend(head + option + tail for option in options.split(","))
        names.update(expanded)
        last = span
    return names


def test_every_core_member_is_explained_in_the_docs(index):
    text = (ROOT / "docs" / "core-suite.md").read_text(encoding="utf-8")
    explained = set().union(*(_named(line.split("|")[1]) for line in text.splitlines() if line.startswith("| `")))
    assert set(index.groups["core"].task) == explained
