"""Task families (the folder under tasks/): `metabench ls tasks` groups by them with counts, --tasks selects one."""

from __future__ import annotations

import pytest

from metabench.cli import main
from metabench.config.listing import LISTED_UP_TO
from metabench.errors import ConfigError


@pytest.fixture(scope="module")
def index():
    from metabench.config.index import TaskIndex
    from metabench.plugins import default_registry

    return TaskIndex(default_registry())


def test_a_family_is_the_folder_and_a_tasks_name(index):
    assert index.families["vua"] == ["vua18_seq", "vua20_melbert", "vua20_seq", "vua_verb", "vua_verb_melbert"]
    assert "hard" not in index.tags and "hard" not in index.groups  # selected as a family, nothing else
    assert index.select("hard") == index.families["hard"] and all(n.startswith("hard_mi_") for n in index.select("hard"))
    assert index.tasks["boisson_moh_lexical_f0@masked"].family == "artifacts"  # view tasks keep their file's family
    assert sum(len(names) for names in index.families.values()) == len(index.tasks)
    with pytest.raises(ConfigError, match="unknown task, tag, group or family 'hardd' \\(did you mean 'hard'\\?\\)"):
        index.select("hardd")


@pytest.mark.slow
def test_ls_tasks_groups_by_family_with_counts(index, capsys):
    assert main(["ls", "tasks"]) == 0
    out = capsys.readouterr().out
    for family, names in index.families.items():
        heading = next(line for line in out.splitlines() if line.startswith(f"{family} ("))
        assert heading.startswith(f"{family} ({len(names)} task")
        listed = [name for name in names if f"  {name} " in out]
        assert listed == (names if len(names) <= LISTED_UP_TO else []), family
    assert "every task: metabench ls tasks artifacts" in out and "boisson_card_n (45)" in out
    assert len(out.splitlines()) < len(index.tasks) / 2
    assert out.rstrip().endswith("`ls tasks core`: the core suite)")


def test_ls_tasks_selection_lists_it_flat(index, capsys):
    assert main(["ls", "tasks", "artifacts"]) == 0
    rows = capsys.readouterr().out.splitlines()[2:]
    assert [row.split()[0] for row in rows] == index.families["artifacts"]
    assert main(["ls", "tasks", "nope"]) == 2 and "unknown task, tag, group or family 'nope'" in capsys.readouterr().err
    assert main(["ls", "models", "vua"]) == 2 and "takes no selection" in capsys.readouterr().err


def test_all_leaves_out_tasks_built_for_one_model(index):
    """hard_mi_minilm_l6* test any model on MiniLM's HARD set: not in everyone's `all`, still selectable."""
    from metabench.config.index import MODEL_SPECIFIC

    bound = index.tags[MODEL_SPECIFIC]
    assert bound == index.families["hard"] and len(bound) == 7
    everything = index.select("all")
    assert not set(bound) & set(everything) and len(everything) == len(index.tasks) - len(bound)
    assert index.select("hard_mi_minilm_l6") == ["hard_mi_minilm_l6"] and index.select("hard_metaphors") == bound
    assert set(index.select("hard_mi_*")) == set(bound)
