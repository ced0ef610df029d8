"""`metabench compare`: one verb per analysis, each with a --help that teaches (#37 item 4); a plugin's analysis is
a verb too, registered through `metabench_register_compare_analyses` (#47 item 4: compare names no family)."""

from __future__ import annotations

import sys

import pytest

from metabench import plugins
from metabench.commands.compare import DEPRECATED, VERBS

#: the analyses the paper families register
FAMILIES = {"artifacts": ("artifacts",), "hardness": ("phi_table", "phi_model")}


def _description(registry, verb: str) -> str:
    return VERBS[verb][1] if verb in VERBS else registry.resolve("compare_analysis", verb).description


@pytest.mark.parametrize("verb", [*sorted(VERBS), *FAMILIES])
def test_each_analysis_is_a_verb_with_its_own_help(cli, capsys, report_registry, verb):
    with pytest.raises(SystemExit) as done:
        cli("compare", verb, "--help")
    out = capsys.readouterr().out
    assert done.value.code == 0
    assert out.startswith(f"usage: metabench compare {verb} ") and "RUN" in out
    assert _description(report_registry, verb)[:40] in " ".join(out.split())
    assert f"examples:\n  metabench compare {verb} " in out


def test_compare_help_lists_the_verbs_and_names_them_in_each_old_flag(cli, capsys, report_registry):
    assert {name: report_registry.resolve("compare_analysis", name).old_dests for name in FAMILIES} == FAMILIES
    with pytest.raises(SystemExit):
        cli("compare", "--help")
    out = " ".join(capsys.readouterr().out.split())
    assert all(f" {verb} " in out for verb in [*VERBS, *FAMILIES])
    assert all(f"use `metabench compare {verb}" in out for verb in [*DEPRECATED.values(), *FAMILIES])


ECHO_PLUGIN = """
from metabench import hookimpl
from metabench.commands.analyses import Analysis


def _echo(args, runs, registry) -> int:  # the old flag's path has compare's options, without --times
    print(f"echo {getattr(args, 'times', 1)}x {len(runs)} run(s) {'json' if args.json else 'table'}")
    return 0


ECHO = Analysis(description="Say how many runs were found, a given number of times (a plugin's analysis).",
                examples="  metabench compare echo runs/", run=_echo,
                arguments=lambda parser: parser.add_argument("--times", type=int, default=1),
                old_flags=lambda group: group.add_argument("--echo", action="store_true", help="use `compare echo`"),
                old_dests=("echo",))


@hookimpl
def metabench_register_compare_analyses(register):
    for name, target in ANALYSES.items():
        register(name, target, description=f"the {name} analysis")
"""


@pytest.fixture
def with_plugin(monkeypatch, capsys, tmp_path):
    """``metabench ARGS`` in-process with one more plugin (METABENCH_PLUGIN_MODULES, as the command line is built from
    it) registering ``analyses`` (name -> target)."""
    from metabench.cli import main

    def invoke(analyses: dict, *args) -> tuple[int, str, str]:
        folder = tmp_path / f"plugin{len(list(tmp_path.iterdir()))}"
        folder.mkdir()
        (folder / "echo_plugin.py").write_text(ECHO_PLUGIN + f"\nANALYSES = {analyses!r}\n", encoding="utf-8")
        monkeypatch.syspath_prepend(str(folder))
        sys.modules.pop("echo_plugin", None)
        monkeypatch.setenv("METABENCH_PLUGIN_MODULES", "echo_plugin")
        monkeypatch.setattr(plugins, "default_registry", lambda: plugins.load())
        capsys.readouterr()
        code = main([str(a) for a in args])
        captured = capsys.readouterr()
        return code, captured.out, captured.err

    yield invoke
    sys.modules.pop("echo_plugin", None)


def test_a_plugin_registers_an_analysis_as_a_verb_of_compare(with_plugin, toy_runs):
    echo = {"echo": "echo_plugin:ECHO"}
    code, out, _ = with_plugin(echo, "compare", "echo", toy_runs / "toy_cls" / "majority", "--times", "3")
    assert (code, out) == (0, "echo 3x 1 run(s) table\n")
    code, out, err = with_plugin(echo, "compare", "--echo", toy_runs / "toy_cls" / "majority", "--json")
    assert (code, out) == (0, "echo 1x 1 run(s) json\n")  # the old flag runs it on compare's own options
    assert "--echo is deprecated: use `metabench compare echo RUN...`" in err


def test_a_broken_or_clashing_analysis_is_left_out_naming_its_plugin(with_plugin, capsys):
    with pytest.raises(SystemExit):
        with_plugin({"gap": "echo_plugin:ECHO", "broken": "metabench.commands.compare:VERBS"}, "compare", "--help")
    captured = capsys.readouterr()
    assert "compare analysis 'gap' takes a name compare has" in captured.err
    assert "compare analysis 'broken'" in captured.err and "not an instance of metabench.commands.analyses.Analysis" \
        in captured.err and captured.err.count("quarantined plugin 'echo_plugin'") == 2
    help_text = " ".join(captured.out.split())
    assert "paired-variants" in help_text and " broken " not in help_text and "the gap analysis" not in help_text
