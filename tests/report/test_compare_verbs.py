"""`metabench compare`: one verb per analysis, each with a --help that teaches (#37 item 4)."""

from __future__ import annotations

import pytest

from metabench.commands.compare import DEPRECATED, VERBS


@pytest.mark.parametrize("verb", sorted(VERBS))
def test_each_analysis_is_a_verb_with_its_own_help(cli, capsys, verb):
    with pytest.raises(SystemExit) as done:
        cli("compare", verb, "--help")
    out = capsys.readouterr().out
    assert done.value.code == 0
    assert out.startswith(f"usage: metabench compare {verb} ") and "RUN" in out
    assert VERBS[verb][1][:40] in " ".join(out.split()) and f"examples:\n  metabench compare {verb} " in out


def test_compare_help_lists_the_verbs_and_names_them_in_each_old_flag(cli, capsys):
    with pytest.raises(SystemExit):
        cli("compare", "--help")
    out = " ".join(capsys.readouterr().out.split())
    assert all(f" {verb} " in out for verb in VERBS)
    assert all(f"use `metabench compare {verb}" in out for verb in set(DEPRECATED.values()))
