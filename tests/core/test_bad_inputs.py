"""The bad-input suite (issue 10): hostile and careless inputs of every class, run through the CLI in-process.

Every case asserts the exit status, that the message names where the problem is (file:line, field or option)
and what to do about it, and that no traceback is printed. The classes: task files (YAML limits, includes,
schema, templates), run parameters, run files read by the reporters, plugins, cache and output faults.
"""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import sys
import textwrap
import types
from pathlib import Path

import pytest

from cli_inprocess import GOOD_TASK as GOOD
from cli_inprocess import check as _check, cli, good_run as _good_run, registry  # noqa: F401 - cli, registry: fixtures
from metabench import plugins
from metabench.cli import main
from metabench.hookspecs import hookimpl

ENCODER = GOOD.replace("  baseline: {seeds: 1}\n", "  encoder:\n    finetune: {epochs: 3}\n")
SEARCH = ENCODER + "    search: {metric: accuracy, space: {SPACE}}\n"

PROMPTED = """\
task: bad_prompt_task
kind: generation
dataset: toy_cls
splits: {test: test}
kind_args: {gold_field: label}
metrics: [accuracy]
protocol:
  decoder:
    template: TEMPLATE
"""


# ------------------------------------------------------------------------------------------- task files

#: (id, file text, where the message must point, the fix it must name). ``{f}`` is the file's path.
TASK_FILES = [
    ("unknown-key", GOOD + "metrix: [accuracy]\n", "{f}:9: unknown key 'metrix'", "did you mean 'metrics'"),
    ("missing-key", GOOD.replace("kind: classification\n", ""), "required key 'kind' is missing", "docs/task-yaml.md"),
    ("yaml-syntax", GOOD + "labels: [a, b\n", "{f}:", "invalid YAML"),
    ("tab-indent", GOOD + "extra:\n\t- a\n", "{f}:10", "check indentation"),
    ("duplicate-key", GOOD + "kind: tagging\n", "{f}:9: key 'kind' appears twice", "remove one of them"),
    ("python-tag", GOOD + "x: !!python/object/apply:os.system ['true']\n", "{f}:9", "plain values only"),
    ("not-a-mapping", "- task: x\n", "{f}:1", "must be a mapping"),
    ("empty-file", "\n", "{f}:1", "start the file with `task: <name>`"),
    ("alias-bomb", "task: x\na: &a [l,l,l,l,l,l,l,l,l,l]\n" + "".join(
        f"{c}: &{c} [*{p},*{p},*{p},*{p},*{p},*{p},*{p},*{p},*{p},*{p}]\n" for p, c in zip("abcdef", "bcdefg")),
     "{f}:", "METABENCH_MAX_YAML_NODES"),
    ("deep-nesting", "task: " + "[" * 5000 + "]" * 5000 + "\n", "{f}:1: nested more than 50 levels", "METABENCH_MAX_YAML_DEPTH"),
    ("recursive-alias", "task: &a [*a]\n", "{f}:1", "METABENCH_MAX_YAML_DEPTH"),
    ("oversize", GOOD + "# " + "x" * 1_000_100 + "\n", "{f}: larger than 1,000,000 bytes", "METABENCH_MAX_YAML_BYTES"),
    ("include-escape", "include: ../../../../../../etc/passwd\n" + GOOD, "{f}:1: include '../../../../../../etc/passwd' escapes the task root", "inside the task folder"),
    ("include-absolute", "include: /etc/hostname\n" + GOOD, "{f}:1: include '/etc/hostname' escapes", "inside the task folder"),
    ("include-missing", "include: _nope.yaml\n" + GOOD, "{f}:1: included file '_nope.yaml' not found", "relative to the including file"),
    ("include-not-a-name", "include: [1, 2]\n" + GOOD, "{f}:1", "include must be a file name"),
    ("unknown-kind", GOOD.replace("kind: classification", "kind: clasification"), "{f}:2: unknown kind 'clasification'", "did you mean 'classification'"),
    ("unknown-dataset", GOOD.replace("dataset: toy_cls", "dataset: toy_clz"), "{f}:3: unknown dataset 'toy_clz'", "metabench ls datasets"),
    ("unknown-metric", GOOD.replace("[accuracy, macro_f1]", "[acuracy]"), "{f}:6: unknown metric 'acuracy'", "did you mean 'accuracy'"),
    ("metric-arg-misspelt", GOOD.replace("[accuracy, macro_f1]", "[{name: f1, args: {positiv: metaphorical}}]"),
     "{f}:6: metric 'f1' has no argument 'positiv'", "did you mean 'positive'"),
    ("primary-not-a-metric", GOOD + "primary_metric: f1\n", "{f}:9: primary_metric 'f1' is not among", "use one of"),
    ("seeds-negative", GOOD.replace("seeds: 1", "seeds: -4"), "{f}:8: protocol.baseline.seeds", "greater than or equal to 1"),
    ("seeds-repeated", GOOD.replace("seeds: 1", "seeds: [0, 0, 0]"), "{f}:8: protocol.baseline.seeds", "listed twice"),
    ("seeds-huge", GOOD.replace("seeds: 1", "seeds: [99999999999999999999]"), "{f}:8: protocol.baseline.seeds.0", "less than or equal to 2147483647"),
    ("seeds-zero", GOOD.replace("seeds: 1", "seeds: 0"), "{f}:8: protocol.baseline.seeds", "greater than or equal to 1"),
    ("seeds-empty", GOOD.replace("seeds: 1", "seeds: []"), "{f}:8: protocol.baseline.seeds", "at least 1 item"),
    ("seeds-text", GOOD.replace("seeds: 1", "seeds: many"), "{f}:8: protocol.baseline.seeds", "'many'"),
    ("kind-args-unknown", GOOD + "kind_args: {markr: pme}\n", "{f}:9: kind_args.markr: unknown key", "kind 'classification' takes kind_args"),
    ("splits-unknown-role", GOOD.replace("test: test}", "test: test, tset: test}"), "{f}:4", "unknown key 'splits.tset'"),
    ("bad-task-name", GOOD.replace("task: bad_input_task", "task: Bad Name"), "{f}:1: task", "docs/task-yaml.md"),
    ("metadata-version", GOOD + "metadata: {version: -1}\n", "{f}:9: metadata.version", "greater than or equal to 0"),
    ("not-utf8", None, "{f}: not UTF-8 text", "save the file as UTF-8"),
    ("template-repeat", PROMPTED.replace("TEMPLATE", "\"{{ 'a' * 2000000000 }}\""), "{f}:9: prompt template: stopped, a repetition",
     "METABENCH_MAX_TEMPLATE_CHARS"),
    ("template-format-width", PROMPTED.replace("TEMPLATE", "\"{{ '{:>2000000000}'.format(text) }}\""), "{f}:9", "METABENCH_MAX_TEMPLATE_CHARS"),
    ("template-percent-width", PROMPTED.replace("TEMPLATE", "\"{{ '%2000000000s' % text }}\""), "{f}:9", "METABENCH_MAX_TEMPLATE_CHARS"),
    ("template-filter-width", PROMPTED.replace("TEMPLATE", "\"{{ text|center(2000000000) }}\""), "{f}:9", "METABENCH_MAX_TEMPLATE_CHARS"),
    ("template-concat-doubling", PROMPTED.replace("TEMPLATE", "\"{% set ns = namespace(s='ab') %}{% for i in range(40) %}"
                                                  "{% set ns.s = ns.s ~ ns.s %}{% endfor %}{{ ns.s }}\""), "{f}:9", "METABENCH_MAX_TEMPLATE_CHARS"),
    ("template-output", PROMPTED.replace("TEMPLATE", "\"{% for i in range(20000) %}" + "x" * 60 + "{% endfor %}\""),
     "{f}:9: prompt template: stopped, the output passed", "METABENCH_MAX_TEMPLATE_CHARS"),
    ("template-loop-forever", PROMPTED.replace("TEMPLATE", "\"{% for a in range(99999) %}{% for b in range(99999) %}"
                                               "{% set x = 1 %}{% endfor %}{% endfor %}\""), "{f}:9: prompt template: stopped, rendering took longer",
     "METABENCH_TEMPLATE_TIMEOUT_S"),
    ("template-power", PROMPTED.replace("TEMPLATE", "\"{{ 2 ** 2 ** 99 }}\""), "{f}:9", "an exponent"),
    ("template-unsafe", PROMPTED.replace("TEMPLATE", "\"{{ text.__class__.__mro__ }}\""), "{f}:9", "unsafe"),
    ("template-syntax", PROMPTED.replace("TEMPLATE", "\"{{ text \""), "{f}:9: the prompt template does not compile", "Jinja2"),
    ("template-missing", PROMPTED.replace("    template: TEMPLATE\n", "    fewshot: 0\n"), "{f}:7", "needs `protocol.decoder.template`"),
    # issue 23: nonsense that passed validate
    ("seeds-true", GOOD.replace("seeds: 1", "seeds: true"), "{f}:8: protocol.baseline.seeds", "Input should be a valid integer"),
    ("seeds-list-of-bools", GOOD.replace("seeds: 1", "seeds: [true, false]"), "{f}:8: protocol.baseline.seeds", "valid integer"),
    ("epochs-huge", ENCODER.replace("epochs: 3", "epochs: 1e20"), "{f}:9: protocol.encoder.finetune.epochs", "less than or equal to 1000"),
    ("epochs-inf", ENCODER.replace("epochs: 3", "epochs: .inf"), "{f}:9: protocol.encoder.finetune.epochs", "less than or equal to 1000"),
    ("search-batch-zero", SEARCH.replace("SPACE", "batch_size: {low: 0, high: 32}"), "{f}:10", "batch_size: 0..32 leaves the allowed values, from 1"),
    ("search-batch-choice-zero", SEARCH.replace("SPACE", "batch_size: [0, 8]"), "{f}:10", "batch_size: 0..8 leaves the allowed values"),
    ("search-lr-negative", SEARCH.replace("SPACE", "lr: {low: -1, high: 0.1}"), "{f}:10", "lr: -1..0.1 leaves the allowed values, above 0"),
    ("search-epochs-huge", SEARCH.replace("SPACE", "epochs: [1, 100000]"), "{f}:10", "at most 1000"),
    ("name-of-a-registered-task", GOOD.replace("bad_input_task", "toy_cls"), "{f}:1: the name 'toy_cls' is already used by", "rename it"),
]


@pytest.mark.parametrize("name, text, where, fix", TASK_FILES, ids=[c[0] for c in TASK_FILES])
def test_task_file(cli, tmp_path, monkeypatch, name, text, where, fix):
    monkeypatch.setenv("METABENCH_TEMPLATE_TIMEOUT_S", "0.3")
    folder = tmp_path / "tasks" / "sub"
    folder.mkdir(parents=True)
    path = folder / f"{name}.yaml"
    if text is None:
        path.write_bytes(GOOD.encode() + "# caf\xe9\n".encode("latin-1"))
    else:
        path.write_text(textwrap.dedent(text))
    code, out = cli("validate", tmp_path / "tasks")
    assert code == 1, out
    _check(out, (where.format(f=path), fix, "0 valid, 1 invalid"))


def test_include_cycle_and_group_cycle(cli, tmp_path):
    (tmp_path / "a.yaml").write_text("include: b.yaml\n" + GOOD)
    (tmp_path / "b.yaml").write_text("include: a.yaml\n")
    code, out = cli("validate", tmp_path / "a.yaml")
    assert code == 1 and "include cycle" in out and "remove one of the includes" in out


def test_validate_a_missing_path(cli, tmp_path):
    code, out = cli("validate", tmp_path / "nowhere.yaml")
    assert code == 1 and f"{tmp_path / 'nowhere.yaml'}: file not found" in out


# ------------------------------------------------------------------------------------------ parameters

#: (id, arguments after `metabench`, exit status, needles: the option and the fix)
PARAMETERS = [
    ("limit-negative", ["--limit", "-1"], 2, ("--limit -1: must be 1 or more", "leave --limit out")),
    ("limit-zero", ["--limit", "0"], 2, ("--limit 0: must be 1 or more",)),
    ("limit-text", ["--limit", "ten"], 2, ("--limit 'ten': must be a whole number (1 or more)", "leave --limit out")),
    ("seeds-repeated", ["--seeds", "1,1"], 2, ("--seeds 1,1: seed(s) [1] listed twice", "list distinct seeds")),
    ("seeds-negative", ["--seeds=-1,2"], 2, ("--seeds -1,2: seed -1 is out of range", "seeds are 0 to")),
    ("seeds-huge", ["--seeds", "0,99999999999999999999"], 2, ("seed 99999999999999999999 is out of range",)),
    ("seeds-count-zero", ["--seeds", "0"], 2, ("--seeds 0: a seed count must be between 1 and", "--seeds 0,")),
    ("seeds-count-huge", ["--seeds", "100000000"], 2, ("a seed count must be between 1 and 1000",)),
    ("seeds-text", ["--seeds", "a,b"], 2, ("--seeds 'a,b': expected a count", "(0,1,2)")),
    ("seeds-empty", ["--seeds", ","], 2, ("--seeds ',': names no seed", "--seeds 3")),
    ("tasks-empty", ["--tasks", ","], 2, ("--tasks ',': names no task", "metabench ls tasks")),
    ("tasks-unknown", ["--tasks", "toy_clz"], 2, ("unknown task, tag, group or family 'toy_clz'", "did you mean 'toy_cls'")),
    ("tasks-pattern", ["--tasks", "zzz_*"], 2, ("--tasks: the pattern 'zzz_*' matches no task", "metabench ls tasks")),
    ("model-unknown", ["--model", "majorty"], 2, ("--model majorty: unknown", "did you mean 'majority'")),
    ("model-empty-name", ["--model", ":x=1"], 2, ("--model ':x=1': empty adapter name", "--model majority")),
    ("model-bad-argument", ["--model", "constant:lable=literal"], 2, ("--model constant:lable=literal: model 'constant' takes no argument 'lable'", "did you mean 'label'")),
    ("model-pretrained-alone", ["--model", "minilm-l6"], 2, ("'minilm-l6' is a pretrained model", "did you mean 'hf:minilm-l6'")),
]


@pytest.mark.parametrize("name, args, code, needles", PARAMETERS, ids=[c[0] for c in PARAMETERS])
def test_run_parameter(cli, tmp_path, name, args, code, needles):
    base = {"--tasks": "toy_cls", "--model": "majority"}
    given = {a.split("=")[0] for a in args if a.startswith("--")}
    full = [x for k, v in base.items() if k not in given for x in (k, v)] + args + ["-o", tmp_path / "runs", "--no-progress"]
    status, out = cli(*full)
    assert status == code, out
    _check(out, needles)
    assert not list((tmp_path / "runs").rglob("results.json")) if (tmp_path / "runs").exists() else True


#: (id, arguments, exit status, needles) for the reporters' own options.
REPORT_OPTIONS = [
    ("compare-alpha", ["compare", "RUNS", "--alpha", "2"], 2, ("--alpha 2.0: must lie strictly between 0 and 1",)),
    ("compare-alpha-nan", ["compare", "RUNS", "--alpha", "nan"], 2, ("--alpha nan: must lie strictly between 0 and 1",)),
    ("compare-confidence", ["compare", "RUNS", "--confidence", "1"], 2, ("--confidence 1.0: must lie strictly between",)),
    ("compare-resamples-zero", ["compare", "RUNS", "--resamples", "0"], 2, ("--resamples 0: must be between 1 and",)),
    ("compare-resamples-huge", ["compare", "RUNS", "--resamples", "1000000000"], 2, ("--resamples 1000000000", "10000")),
    ("compare-seed", ["compare", "RUNS", "--seed", "-3"], 2, ("--seed -3: must be between 0",)),
    ("gate-max-drop", ["gate", "--baseline", "RUN", "--candidate", "RUN", "--max-drop", "-1"], 2, ("--max-drop '-1': must be a number of 0 or more",)),
    ("gate-max-drop-nan", ["gate", "--baseline", "RUN", "--candidate", "RUN", "--max-drop", "nan"], 2, ("--max-drop 'nan'",)),
    ("gate-tolerance", ["gate", "--baseline", "RUN", "--candidate", "RUN", "--tolerance", "two%"], 2,
     ("--tolerance 'two%': must be a number", "e.g. --tolerance 0.01 or --tolerance 2%")),
    ("gate-tolerance-twice", ["gate", "--baseline", "RUN", "--candidate", "RUN", "--tolerance", "0.1", "--max-drop", "0.1"],
     2, ("--tolerance and --max-drop are the same setting",)),
    ("gate-alpha", ["gate", "--baseline", "RUN", "--candidate", "RUN", "--alpha", "0"], 2, ("--alpha 0.0: must lie strictly",)),
    ("board-alpha", ["leaderboard", "build", "RUNS", "-o", "site", "--alpha", "7"], 2, ("--alpha 7.0",)),
    ("board-output-is-file", ["leaderboard", "build", "RUNS", "-o", "afile"], 2, ("-o afile: is a file, not a folder", "choose a folder")),
    ("compare-nowhere", ["compare", "nowhere"], 2, ("nowhere: no such file or folder", "pass run folders")),
    ("compare-empty-folder", ["compare", "empty"], 2, ("empty: no runs here", "--output-dir")),
]


@pytest.mark.slow
@pytest.mark.parametrize("name, args, code, needles", REPORT_OPTIONS, ids=[c[0] for c in REPORT_OPTIONS])
def test_report_option(cli, tmp_path, name, args, code, needles):
    runs = tmp_path / "runs"
    _good_run(runs / "syn" / "a")
    _good_run(runs / "syn" / "b", prediction="no")
    (tmp_path / "afile").write_text("mine")
    (tmp_path / "empty").mkdir()
    args = [runs if a == "RUNS" else runs / "syn" / "a" if a == "RUN" else a for a in args]
    status, out = cli(*args)
    assert status == code, out
    _check(out, needles)


# ------------------------------------------------------------------------------------- run files (reporter)

def _edit_results(run: Path, change) -> None:
    results = json.loads((run / "results.json").read_text())
    results = change(results)
    (run / "results.json").write_text(json.dumps(results) if not isinstance(results, str) else results)


def _edit_samples(run: Path, text: str) -> None:
    (run / "samples.jsonl").write_text(text)
    import hashlib

    results = json.loads((run / "results.json").read_text())
    results["samples_sha256"] = hashlib.sha256(text.encode()).hexdigest()
    (run / "results.json").write_text(json.dumps(results))


def _del(path: str):
    def change(results):
        keys = path.split(".")
        target = results
        for key in keys[:-1]:
            target = target[key]
        del target[keys[-1]]
        return results
    return change


def _set(path: str, value):
    def change(results):
        keys = path.split(".")
        target = results
        for key in keys[:-1]:
            target = target[key]
        target[keys[-1]] = value
        return results
    return change


#: (id, how the candidate run is damaged, needles: file + field + fix)
RUN_FILES = [
    ("results-a-list", lambda r: _edit_results(r, lambda x: "[1, 2]"), ("results.json: expected a JSON object, found list", "metabench run")),
    ("results-not-json", lambda r: _edit_results(r, lambda x: "{\"task\": "), ("results.json:1: not valid JSON", "re-run the evaluation")),
    ("results-not-utf8", lambda r: (r / "results.json").write_bytes(b"\xff\xfe{"), ("results.json: not UTF-8 text", "metabench run")),
    ("results-no-task", lambda r: _edit_results(r, _del("task")), ("results.json: field 'task' must be a dict (missing)", "re-run")),
    ("results-no-task-name", lambda r: _edit_results(r, _del("task.name")), ("field 'task.name' must be a str (missing)", "re-run")),
    ("results-no-model", lambda r: _edit_results(r, _del("model")), ("field 'model' must be a dict (missing)", "re-run")),
    ("results-no-metrics", lambda r: _edit_results(r, _del("metrics")), ("field 'metrics' must be a dict (missing)", "re-run")),
    ("results-model-spec-list", lambda r: _edit_results(r, _set("model.spec", ["x"])), ("field 'model.spec' must be a str (a list)", "re-run")),
    ("results-seeds-empty", lambda r: _edit_results(r, _set("seeds", [])), ("field 'seeds' must be a non-empty list of integers", "re-run")),
    ("results-seeds-text", lambda r: _edit_results(r, _set("seeds", "0")), ("field 'seeds' must be a list (a str)", "re-run")),
    ("results-nan", lambda r: _edit_results(r, lambda x: json.dumps(x).replace('"mean": 0', '"mean": NaN').replace('"accuracy": 0', '"accuracy": NaN')),
     ("results.json: holds NaN", "re-run the evaluation")),
    ("results-infinity", lambda r: _edit_results(r, lambda x: json.dumps(x).replace('"std": 0.0', '"std": Infinity')), ("holds Infinity", "re-run")),
    ("results-metric-text", lambda r: _edit_results(r, _set("metrics.per_seed", {"0": {"accuracy": "high"}})),
     ("field 'metrics.per_seed.0.accuracy' must be a number or null", "re-run")),
    ("results-aggregate-list", lambda r: _edit_results(r, _set("metrics.aggregate", {"accuracy": [1]})),
     ("field 'metrics.aggregate.accuracy' must be a mapping", "re-run")),
    ("results-schema-version", lambda r: _edit_results(r, _set("schema_version", 99)), ("results schema version 99", "upgrade metabench")),
    ("results-no-digest", lambda r: _edit_results(r, _del("samples_sha256")), ("field 'samples_sha256' is missing", "tools/migrate_runs.py")),
    ("samples-other-run", lambda r: (r / "samples.jsonl").write_text((r / "samples.jsonl").read_text().replace('"no"', '"yes"')),
     ("samples.jsonl: does not match the 'samples_sha256'", "copy both files of one run folder together")),
    ("samples-missing", lambda r: (r / "samples.jsonl").unlink(), ("samples.jsonl: missing", "copy the whole run folder")),
    ("samples-broken-line", lambda r: _edit_samples(r, '{"id": "i0", "seed": 0, "scores": {}}\n{"id": \n'), ("samples.jsonl:2: not a valid sample line", "re-run")),
    ("samples-line-a-list", lambda r: _edit_samples(r, '[1, 2]\n'), ("samples.jsonl:1: expected a JSON object, found list", "re-run")),
    # two rows on one line: read as one JSON array of lines, it would pass as two good rows
    ("samples-two-rows-one-line", lambda r: _edit_samples(r, '{"id": "i0", "seed": 0, "scores": {}}\n{"id": "i1", "seed": 0, '
                                                          '"scores": {}}, {"id": "i2", "seed": 0, "scores": {}}\n'),
     ("samples.jsonl:2: not a valid sample line (Extra data", "re-run")),
    ("samples-no-id", lambda r: _edit_samples(r, '{"seed": 0, "scores": {}}\n'), ("samples.jsonl:1: field 'id'", "re-run")),
    ("samples-seed-text", lambda r: _edit_samples(r, '{"id": "i0", "seed": "0", "scores": {}}\n'), ("samples.jsonl:1: field 'seed' must be a int", "re-run")),
    ("samples-nan-score", lambda r: _edit_samples(r, '{"id": "i0", "seed": 0, "scores": {"correct": NaN}}\n'), ("samples.jsonl:1: not a valid sample line", "re-run")),
]
#: Damage that leaves results.json readable: verification rejects the run (compare: not compared, gate: exit 2)
REJECTED_BY_VERIFICATION = {"results-no-digest", "samples-other-run", "samples-missing", "samples-broken-line",
                            "samples-line-a-list", "samples-two-rows-one-line", "samples-no-id", "samples-seed-text", "samples-nan-score"}
COMMANDS = {
    "compare": lambda base, cand, out: ["compare", base, cand],
    "gate": lambda base, cand, out: ["gate", "--baseline", base, "--candidate", cand],
    "leaderboard": lambda base, cand, out: ["leaderboard", "build", base.parent, "-o", out],
}


@pytest.mark.slow
@pytest.mark.parametrize("command", list(COMMANDS))
@pytest.mark.parametrize("name, damage, needles", RUN_FILES, ids=[c[0] for c in RUN_FILES])
def test_run_file(cli, tmp_path, command, name, damage, needles):
    base = _good_run(tmp_path / "runs" / "syn" / "base")
    candidate = _good_run(tmp_path / "runs" / "syn" / "cand", prediction="no")
    damage(candidate)
    status, out = cli(*COMMANDS[command](base, candidate, tmp_path / "site"))
    _check(out, (str(candidate),) + needles)
    if command == "leaderboard" and name in REJECTED_BY_VERIFICATION:
        # docs/reporting.md (issue 25): the site is built without the run, which is listed with its reasons
        # (paths relative to the runs folder) and makes the build exit 1
        assert status == 1, out
        board = json.loads((tmp_path / "site" / "leaderboard.json").read_text())
        assert [r["run"] for r in board["rejected_runs"]] == ["cand"]
        _check("; ".join(board["rejected_runs"][0]["reasons"]), needles)
        assert str(tmp_path) not in json.dumps(board)
        return
    assert status == 2, out  # never 1: for `gate`, 1 means "regression"
    assert not (tmp_path / "site" / "leaderboard.json").exists()


def test_gate_exit_codes_are_total(cli, tmp_path, monkeypatch):
    base = _good_run(tmp_path / "base" / "syn" / "m")
    same = _good_run(tmp_path / "same" / "syn" / "m")
    worse = _good_run(tmp_path / "worse" / "syn" / "m", n=60, prediction="no")
    better = _good_run(tmp_path / "base60" / "syn" / "m", n=60)
    assert cli("gate", "--baseline", base, "--candidate", same)[0] == 0
    assert cli("gate", "--baseline", better, "--candidate", worse)[0] == 1
    from metabench.report import gate

    def crash(*args, **kwargs):
        raise RuntimeError("a bug")

    monkeypatch.setattr(gate, "compare_pair", crash)
    code, out = cli("gate", "--baseline", better, "--candidate", worse)
    assert code == 2 and "internal error: RuntimeError: a bug" in out and "METABENCH_DEBUG=1" in out


# ---------------------------------------------------------------------------------------------- plugins

def _module(name: str, **hooks) -> types.ModuleType:
    module = types.ModuleType(name)
    for hook, fn in hooks.items():
        setattr(module, hook, hookimpl(fn) if hook.startswith("metabench_") else fn)
    return module


def _raises(register):
    raise RuntimeError("boom")


def _clash(register):
    register("majority", "somewhere:Else")


def _bad_call(register):
    register(42)


def _missing_folder(register):
    register("/no/such/folder")


def _typo(register):
    pass


PLUGINS = [
    ("misspelt-hook", {"metabench_register_modles": _typo}, "'metabench_register_modles' is not a metabench hook", "did you mean"),
    ("hook-raises", {"metabench_register_models": _raises}, "metabench_register_models raised RuntimeError: boom", "upgrade or fix"),
    ("name-clash", {"metabench_register_models": _clash}, "model 'majority' is registered twice", "rename one of them"),
    ("bad-register-call", {"metabench_register_models": _bad_call}, "called register(42, None)", 'register("name"'),
    ("missing-task-folder", {"metabench_register_tasks": _missing_folder}, "registered task folder '/no/such/folder'", "absolute folder path"),
    ("import-fails", None, "METABENCH_PLUGIN_MODULES names 'bad_input_plugin_import-fails', which is not importable",
     "add the folder holding it to PYTHONPATH"),
]


@pytest.mark.parametrize("name, hooks, problem, fix", PLUGINS, ids=[c[0] for c in PLUGINS])
def test_broken_plugin_is_quarantined(cli, monkeypatch, name, hooks, problem, fix):
    module_name = f"bad_input_plugin_{name}"
    if hooks is not None:
        monkeypatch.setitem(sys.modules, module_name, _module(module_name, **hooks))
    monkeypatch.setenv("METABENCH_PLUGIN_MODULES", f"toy_plugin,{module_name}")
    monkeypatch.setattr(plugins, "default_registry", lambda: plugins.load())
    code, out = cli("ls", "models")
    assert code == 0 and "majority" in out
    _check(out, (f"quarantined plugin '{module_name}'", problem, fix))
    if hooks is not None:
        assert __file__ in out  # file:line of the broken hook
    code, out = cli("plugins")
    assert code == 0 and "1 problem(s)" in out and problem in out
    code, out = cli("--strict", "plugins")
    assert code == 2 and problem in out
    monkeypatch.setenv("METABENCH_STRICT", "1")
    code, out = cli("ls", "models")
    assert code == 2 and problem in out and "strict mode" in out


def test_task_name_clash_between_task_folders(cli, tmp_path, monkeypatch):
    folder = tmp_path / "plugin_tasks"
    folder.mkdir()
    (folder / "clash.yaml").write_text(GOOD.replace("bad_input_task", "toy_cls"))

    def tasks(register):
        register(str(folder))

    monkeypatch.setitem(sys.modules, "zz_bad_input_clash", _module("zz_bad_input_clash", metabench_register_tasks=tasks))
    monkeypatch.setenv("METABENCH_PLUGIN_MODULES", "toy_plugin,zz_bad_input_clash")
    monkeypatch.setattr(plugins, "default_registry", lambda: plugins.load())
    code, out = cli("ls", "tasks")
    assert code == 0 and "toy_cls" in out
    _check(out, (f"{folder / 'clash.yaml'}:1: task name 'toy_cls' is registered by plugin 'toy_plugin'",
                 "and by plugin 'zz_bad_input_clash'", "METABENCH_DISABLE_PLUGINS=zz_bad_input_clash"))


# ----------------------------------------------------------------------------------- cache and output faults

def test_corrupt_answer_cache(cli, tmp_path):
    (tmp_path / "cache").mkdir()
    (tmp_path / "cache" / "answers.sqlite").write_bytes(os.urandom(4096))
    code, out = cli("--tasks", "toy_cls", "--model", "majority", "-o", tmp_path / "runs")
    assert code == 2
    _check(out, (f"{tmp_path / 'cache' / 'answers.sqlite'}: the answer cache cannot be used", "--no-cache", "to rebuild it"))
    assert cli("--tasks", "toy_cls", "--model", "majority", "-o", tmp_path / "runs", "--no-cache")[0] == 0


def test_truncated_answer_cache(cli, tmp_path):
    assert cli("--tasks", "toy_cls", "--model", "majority", "-o", tmp_path / "runs")[0] == 0
    db = tmp_path / "cache" / "answers.sqlite"
    sqlite3.connect(db).execute("PRAGMA wal_checkpoint(TRUNCATE)").close()
    for extra in db.parent.glob("answers.sqlite-*"):
        extra.unlink()
    db.write_bytes(db.read_bytes()[:1500])
    code, out = cli("--tasks", "toy_cls", "--model", "lookup", "-o", tmp_path / "runs")
    assert code in (1, 2)
    _check(out, ("answers.sqlite: the answer cache cannot be used", "--no-cache"))


def test_cache_folder_is_a_file(cli, tmp_path, monkeypatch):
    (tmp_path / "cachefile").write_text("x")
    monkeypatch.setenv("METABENCH_CACHE_DIR", str(tmp_path / "cachefile"))
    code, out = cli("--tasks", "toy_cls", "--model", "majority", "-o", tmp_path / "runs")
    assert code == 2 and "the answer cache cannot be used" in out and "--no-cache" in out


def test_output_folder_is_a_file(cli, tmp_path):
    (tmp_path / "runs").write_text("mine")
    code, out = cli("--tasks", "toy_cls", "--model", "majority", "-o", tmp_path / "runs")
    assert code == 2 and f"--output-dir {tmp_path / 'runs'}: this is a file" in out and "choose a folder" in out
    assert (tmp_path / "runs").read_text() == "mine"


def test_run_folder_path_is_a_file_fails_before_the_work(cli, tmp_path):
    (tmp_path / "runs" / "toy_cls").mkdir(parents=True)
    (tmp_path / "runs" / "toy_cls" / "majority").write_text("mine")
    code, out = cli("--tasks", "toy_cls", "--model", "majority", "-o", tmp_path / "runs", "--no-progress")
    assert code == 1 and "majority: exists and is not a folder" in out and "move that file away" in out
    assert not (tmp_path / "cache" / "answers.sqlite").exists() or "0/40" not in out


def test_broken_pipe_is_quiet(cli, monkeypatch):
    class ClosedPipe:
        def write(self, text):
            raise BrokenPipeError(32, "Broken pipe")

        def flush(self):
            pass

    monkeypatch.setattr(sys, "stdout", ClosedPipe())
    assert main(["ls", "tasks"]) == 141


# ------------------------------------------------------------------------------ nothing outside the output

HOSTILE_TASKS = [c for c in TASK_FILES if c[0].startswith(("include", "alias", "deep", "recursive", "template", "python"))]


def test_hostile_inputs_write_nothing_outside_the_output_folder(cli, tmp_path, monkeypatch):
    """Hostile task files and model names, validated and run: every file that appears is under the output
    folder or the cache."""
    monkeypatch.setenv("METABENCH_TEMPLATE_TIMEOUT_S", "0.3")
    tasks = tmp_path / "hostile"
    tasks.mkdir()
    for name, text, _, _ in HOSTILE_TASKS:
        (tasks / f"{name}.yaml").write_text(textwrap.dedent(text))
    before = {p for p in tmp_path.parent.rglob("*")}
    code, _ = cli("validate", tasks)
    assert code == 1
    for model in ("constant:label=../../../escaped", "constant:label=/etc/passwd", "random:strategy=../../x"):
        cli("--tasks", "toy_cls", "--model", model, "-o", tmp_path / "out", "--no-progress")
    after = {p for p in tmp_path.parent.rglob("*")}
    outside = [p for p in after - before if not p.is_relative_to(tmp_path / "out") and not p.is_relative_to(tmp_path / "cache")]
    assert outside == []
    assert not Path("/etc/passwd").is_relative_to(tmp_path)  # the path-like model arguments became folder names
    assert all(p.parent.parent == tmp_path / "out" for p in (tmp_path / "out").rglob("results.json"))


def test_the_suite_has_at_least_a_hundred_cases():
    count = (len(TASK_FILES) + 3 + len(PARAMETERS) + len(REPORT_OPTIONS) + len(RUN_FILES) * len(COMMANDS) + 1
             + len(PLUGINS) + 1 + 7 + 1)
    assert count >= 100, count
