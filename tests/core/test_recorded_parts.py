"""The record's copies of the task config and of the adapter's facts are typed (issue 59 item 5): reports read
``record.task.config`` (a :class:`RecordedConfig`) and ``record.model.info`` (an :class:`AdapterInfo`) by attribute,
never by key, and a key the models do not declare (an older run's, a plugin adapter's) is kept and written back
byte for byte (tests/core/test_run_record.py holds every committed run to its bytes)."""

from __future__ import annotations

import ast
import json
from pathlib import Path

from metabench.run_record import AdapterInfo, RecordedConfig, RunRecord
from metabench.store import COMMITTED_RUNS, RESULTS, _body, read_record, run_folders

ROOT = Path(__file__).resolve().parents[2]
SOURCES = [ROOT / "metabench", *sorted((ROOT / "plugins").glob("*/metabench_*"))]
COPIES = ("task.config", "model.info")


def key_reads(source: str) -> list[str]:
    """Every ``<...>.task.config[...]`` / ``.get(...)`` (and the same of ``model.info``) in ``source``."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Subscript):
            value = node.value
        elif (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
              and node.func.attr in ("get", "pop", "setdefault", "items", "keys")):
            value = node.func.value
        else:
            continue
        if isinstance(value, ast.BoolOp):  # (record.task.config or {}).get(...)
            value = value.values[0]
        if ast.unparse(value).endswith(COPIES):
            found.append(ast.unparse(node))
    return found


def test_no_module_reads_the_recorded_config_or_the_adapter_info_by_key():
    reads = {f"{path.relative_to(ROOT)}: {read}" for root in SOURCES for path in sorted(root.rglob("*.py"))
             for read in key_reads(path.read_text(encoding="utf-8"))}
    assert reads == set()


def test_the_scan_finds_the_shapes_the_readers_had():
    source = ('def f(run, record):\n    a = run.record.task.config["labels"]["names"]\n'
              '    b = (record.task.config or {}).get("protocol")\n    c = record.model.info.get("budget")\n'
              '    return a, b, c, run.record.task.config.labels.names\n')
    assert len(key_reads(source)) == 3


def test_unknown_keys_are_kept_typed_ones_read_and_the_bytes_unchanged():
    folder = run_folders(ROOT / COMMITTED_RUNS)[0]
    raw = json.loads((folder / RESULTS).read_text(encoding="utf-8"))
    raw["task"]["config"]["a_later_key"] = {"kept": [1, 2.0]}
    raw["task"]["config"]["protocol"]["a_plugins_family"] = {"seeds": [3, 4], "its_own": 0}
    raw["model"]["info"] = {"device": "cpu", "budget": {"epochs": "1"}, "an_adapters_fact": 7, "cost": 0}
    record = RunRecord.read(raw)
    config, info = record.task.config, record.model.info
    assert isinstance(config, RecordedConfig) and isinstance(info, AdapterInfo)
    assert config.protocol.section("a_plugins_family").seeds == [3, 4] and config.has("a_later_key")
    assert info.device == "cpu" and record.budget == {"epochs": "1"} and info.cost == 0 and type(info.cost) is int
    assert record.as_json() == raw and _body(folder, record) == _body(folder, RunRecord.read(raw))
    assert json.dumps(record.as_json(), sort_keys=True) == json.dumps(raw, sort_keys=True)


def test_the_recorded_config_answers_what_readers_computed_by_hand():
    record = read_record(ROOT / COMMITTED_RUNS / "vua18_seq" / "hf_minilm-l6")
    config = record.task.config
    assert config.metadata.cluster is not None and config.metadata.cluster.name
    assert config.primary == record.task.primary_metric and config.primary in config.metric_names
    assert config.metric_args("nope") is None and record.protocol_seeds == 5
