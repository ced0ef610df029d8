"""Hugging Face `datasets` sources (a task's `hf_dataset`), offline, on data built here with `datasets`.

End to end a classification task on json files and a tagging task on a save_to_disk folder (metrics checked
against scikit-learn and seqeval), a changed file invalidating every cache, the refusals of an unpinned Hub
source, the offline error naming the fetch command, and the schema's file:line errors.
"""

from __future__ import annotations

import hashlib
import json
import types
from pathlib import Path

import pytest
from lazy import lazy
from needs import needs

from metabench import plugins
from metabench.config.index import TaskIndex, validate_paths
from metabench.data import itemcache
from metabench.errors import ConfigError, DataError
from metabench.hookspecs import hookimpl
from metabench.runner import RunOptions, run
from metabench.store import read_results, read_samples

pytestmark = needs("datasets")
datasets = lazy("datasets")

TAGS = ["O", "B-METAPHOR", "I-METAPHOR"]
CLS_TASK = """
task: hf_cls
kind: classification
hf_dataset:
  path: json
  data_files: {train: data/train.jsonl, test: data/test.jsonl}
  columns: {id: uid, text: sentence, label: label}
splits: {train: train, test: test}
labels: {names: [literal, metaphorical], positive: metaphorical}
metrics: [accuracy, {name: f1, args: {positive: metaphorical}}]
"""
TAG_TASK = """
task: hf_tag
kind: tagging
hf_dataset:
  path: ./tagged
  columns: {words: tokens, tags: tags}
splits: {train: train, test: test}
labels: {scheme: BIO, positive: METAPHOR, names: [O, B-METAPHOR, I-METAPHOR]}
metrics: [span_f1, token_f1]
"""


def _plugin(tasks: Path) -> types.ModuleType:
    module = types.ModuleType("hf_tasks_plugin")
    module.metabench_register_tasks = hookimpl(lambda register: register(str(tasks)))
    return module


@pytest.fixture
def folder(tmp_path, monkeypatch):
    """A task folder of its own and a fresh cache."""
    monkeypatch.setenv("METABENCH_CACHE_DIR", str(tmp_path / "cache"))
    tasks = tmp_path / "tasks"
    (tasks / "data").mkdir(parents=True)
    return tasks


def _registry(tasks: Path):
    return plugins.load(extra_plugins=(_plugin(tasks),))


def _write_jsonl(path: Path, rows: list[dict]) -> None:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")


def _cls_rows(prefix: str, n: int) -> list[dict]:
    return [{"uid": f"{prefix}-{i}", "sentence": f"sentence {i} of {prefix}", "topic": i % 2,
             "label": "metaphorical" if i % 3 == 0 else "literal"} for i in range(n)]


def _run(tasks: Path, task: str, model: str = "majority"):
    (outcome,) = run(_registry(tasks), task, [model], RunOptions(output_dir=tasks.parent / "runs", progress=False))
    assert outcome.status == "ok", outcome.message
    return outcome


@pytest.mark.slow
def test_classification_from_json_files_end_to_end(folder):
    from sklearn.metrics import accuracy_score, f1_score

    train, test = _cls_rows("train", 30), _cls_rows("test", 12)
    _write_jsonl(folder / "data" / "train.jsonl", train)
    _write_jsonl(folder / "data" / "test.jsonl", test)
    (folder / "hf_cls.yaml").write_text(CLS_TASK, encoding="utf-8")

    outcome = _run(folder, "hf_cls")
    results, samples = read_results(outcome.run_dir), read_samples(outcome.run_dir)
    golds, preds = [s["gold"] for s in samples], [s["prediction"] for s in samples]
    assert [s["id"] for s in samples] == [r["uid"] for r in test]
    assert golds == [r["label"] for r in test]
    assert set(preds) == {"literal"}  # the training majority (20 of 30)
    aggregate = results["metrics"]["aggregate"]
    assert aggregate["accuracy"]["mean"] == pytest.approx(accuracy_score(golds, preds))
    assert aggregate["f1"]["mean"] == pytest.approx(f1_score(golds, preds, pos_label="metaphorical", zero_division=0))
    assert results["task"]["dataset"] == "hf.hf_cls"
    assert results["data"]["files"] == {
        f"hf.hf_cls:data/{name}.jsonl": hashlib.sha256((folder / "data" / f"{name}.jsonl").read_bytes()).hexdigest()
        for name in ("train", "test")}
    (used,) = results["task"]["datasets"]
    assert used["source"]["path"] == "json" and used["source"]["revision"] is None
    assert results["task"]["config"]["hf_dataset"]["columns"] == {"id": "uid", "text": "sentence", "label": "label"}


def _tagged_folder(path: Path) -> datasets.DatasetDict:
    features = datasets.Features({"tokens": datasets.Sequence(datasets.Value("string")),
                                  "tags": datasets.Sequence(datasets.ClassLabel(names=TAGS)), "genre": datasets.Value("string")})

    def rows(n, shift):
        out = {"tokens": [], "tags": [], "genre": []}
        for i in range(n):
            words = ["the", "storm", "of", "words", "hit", "him"][: 3 + (i + shift) % 4]
            tags = [1 if w in ("storm", "hit") else 0 for w in words]
            if i % 4 == 0 and len(words) > 3:
                tags[3] = 2  # "of storm" ... an I- tag after an O: seqeval reads it as a span start
            out["tokens"].append(words)
            out["tags"].append(tags)
            out["genre"].append("news" if i % 2 else "fiction")
        return out

    built = datasets.DatasetDict({"train": datasets.Dataset.from_dict(rows(16, 0), features=features),
                                  "test": datasets.Dataset.from_dict(rows(9, 1), features=features)})
    built.save_to_disk(str(path))
    return built


@pytest.mark.slow
def test_tagging_from_a_save_to_disk_folder_end_to_end(folder):
    from seqeval.metrics import f1_score

    built = _tagged_folder(folder / "tagged")
    (folder / "hf_tag.yaml").write_text(TAG_TASK, encoding="utf-8")

    outcome = _run(folder, "hf_tag")
    results, samples = read_results(outcome.run_dir), read_samples(outcome.run_dir)
    golds = [list(s["gold"]) for s in samples]
    assert golds == [[TAGS[t] for t in tags] for tags in built["test"]["tags"]]  # class ids read as names
    preds = [list(s["prediction"]) for s in samples]
    assert results["metrics"]["aggregate"]["span_f1"]["mean"] == pytest.approx(f1_score(golds, preds))
    assert [s["id"] for s in samples] == [f"test:{i}" for i in range(9)]
    source = results["task"]["datasets"][0]["source"]
    assert source["fingerprints"] == {"train": built["train"]._fingerprint, "test": built["test"]._fingerprint}
    assert "hf.hf_tag:dataset_dict.json" in results["data"]["files"]
    assert any(name.endswith(".arrow") for name in results["data"]["files"])


@pytest.mark.slow
def test_a_changed_file_invalidates_the_item_cache_the_memo_and_the_answers(folder):
    test = _cls_rows("test", 12)
    _write_jsonl(folder / "data" / "train.jsonl", _cls_rows("train", 30))
    _write_jsonl(folder / "data" / "test.jsonl", test)
    (folder / "hf_cls.yaml").write_text(CLS_TASK, encoding="utf-8")
    first = read_results(_run(folder, "hf_cls", "lookup").run_dir)
    again = read_results(_run(folder, "hf_cls", "lookup").run_dir)
    assert again["timings"]["cached_items"] == again["n_items"]  # unchanged: served from the caches

    for row in test:  # every test label flipped: the same ids, other golds
        row["label"] = "literal" if row["label"] == "metaphorical" else "metaphorical"
    _write_jsonl(folder / "data" / "test.jsonl", test)
    registry = _registry(folder)
    task = TaskIndex(registry).load("hf_cls")
    (outcome,) = run(registry, "hf_cls", ["lookup"], RunOptions(output_dir=folder.parent / "changed", progress=False))
    changed = read_results(outcome.run_dir)
    key = "hf.hf_cls:data/test.jsonl"
    assert changed["data"]["files"][key] == hashlib.sha256((folder / "data" / "test.jsonl").read_bytes()).hexdigest()
    assert changed["data"]["files"][key] != first["data"]["files"][key]
    assert changed["timings"]["cached_items"] == 0
    flipped = 1 - first["metrics"]["aggregate"]["accuracy"]["mean"]
    assert changed["metrics"]["aggregate"]["accuracy"]["mean"] == pytest.approx(flipped)
    spec = registry.resolve("dataset", task.config.dataset)
    assert itemcache.get(itemcache.key(spec, "test", {})) is not None  # the new file's items, under a new key


@pytest.mark.slow
@pytest.mark.parametrize("revision, said", [(None, "no revision"), ("v1.0", "revision 'v1.0'"),
                                            ("1a2b3c4", "revision '1a2b3c4'")])
def test_an_unpinned_hub_source_is_refused_with_file_and_line(folder, revision, said):
    pin = "" if revision is None else f"\n  revision: {revision}"
    (folder / "hub.yaml").write_text(CLS_TASK.replace("task: hf_cls", "task: hub").replace(
        "  path: json\n  data_files: {train: data/train.jsonl, test: data/test.jsonl}",
        f"  path: someone/metaphors{pin}"), encoding="utf-8")
    with pytest.raises(ConfigError) as caught:
        TaskIndex(_registry(folder)).load("hub")
    line = 6 if revision is not None else 4
    assert f"{folder / 'hub.yaml'}:{line}: hf_dataset 'someone/metaphors' is a Hub source with {said}" in caught.value.message
    assert "revision: main" in caught.value.hint and "40-hex" in caught.value.hint


@pytest.mark.slow
@pytest.mark.parametrize("revision", ["main", "0123456789abcdef0123456789abcdef01234567"])
def test_offline_a_hub_source_missing_from_the_cache_names_the_command_that_fetches_it(folder, monkeypatch, revision):
    monkeypatch.setenv("HF_DATASETS_OFFLINE", "1")
    (folder / "hub.yaml").write_text(CLS_TASK.replace("task: hf_cls", "task: hub").replace(
        "  path: json\n  data_files: {train: data/train.jsonl, test: data/test.jsonl}",
        f"  path: someone/metaphors\n  revision: {revision}"), encoding="utf-8")
    with pytest.raises(DataError) as caught:
        TaskIndex(_registry(folder)).load("hub")
    message = caught.value.message
    assert f"hf_dataset 'someone/metaphors' at revision {revision} is not in the local cache" in message
    assert str(folder / "hub.yaml") in message
    assert f"hf download someone/metaphors --repo-type dataset --revision {revision} --cache-dir" in caught.value.hint


COMMIT = "0123456789abcdef0123456789abcdef01234567"
CARD = """---
license: cc-by-4.0
dataset_info:
  splits:
  - name: train
    num_examples: 30
  - name: test
    num_examples: {test}
---
# someone/metaphors
"""


def _hub_snapshot(folder: Path, test_rows: int = 12) -> Path:
    """What `hf download --cache-dir` leaves (snapshots/<commit>/, refs/main) and a task reading it at main."""
    from metabench.data.hf_source import hub_cache

    repo = hub_cache() / "datasets--someone--metaphors"
    snapshot = repo / "snapshots" / COMMIT
    (snapshot / "data").mkdir(parents=True, exist_ok=True)
    (repo / "refs").mkdir(exist_ok=True)
    (repo / "refs" / "main").write_text(COMMIT, encoding="utf-8")
    _write_jsonl(snapshot / "data" / "train.jsonl", _cls_rows("train", 30))
    _write_jsonl(snapshot / "data" / "test.jsonl", _cls_rows("test", 12))
    (snapshot / "README.md").write_text(CARD.replace("{test}", str(test_rows)), encoding="utf-8")
    (folder / "hub.yaml").write_text(CLS_TASK.replace("task: hf_cls", "task: hub").replace(
        "  path: json\n", "  path: someone/metaphors\n  revision: main\n"), encoding="utf-8")
    return snapshot


@pytest.mark.slow
def test_a_run_fails_only_the_job_of_a_source_it_cannot_have(folder, monkeypatch):
    """Partial results survive: the unfetched Hub source fails its job with the fetch command, the rest run."""
    monkeypatch.setenv("HF_DATASETS_OFFLINE", "1")
    _write_jsonl(folder / "data" / "train.jsonl", _cls_rows("train", 30))
    _write_jsonl(folder / "data" / "test.jsonl", _cls_rows("test", 12))
    (folder / "hf_cls.yaml").write_text(CLS_TASK, encoding="utf-8")
    (folder / "hub.yaml").write_text(CLS_TASK.replace("task: hf_cls", "task: hub").replace(
        "  path: json\n", f"  path: someone/metaphors\n  revision: {COMMIT}\n"), encoding="utf-8")
    outcomes = run(_registry(folder), "hf_cls,hub", ["majority"], RunOptions(output_dir=folder.parent / "runs", progress=False))
    assert [(o.task, o.status) for o in outcomes] == [("hf_cls", "ok"), ("hub", "failed")]
    assert f"at revision {COMMIT} is not in the local cache" in outcomes[1].message
    assert "hf download someone/metaphors" in outcomes[1].message


@pytest.mark.slow
def test_a_hub_snapshot_in_the_cache_loads_offline_and_records_its_commit(folder, monkeypatch):
    _hub_snapshot(folder)
    monkeypatch.setenv("HF_DATASETS_OFFLINE", "1")

    results = read_results(_run(folder, "hub").run_dir)
    (used,) = results["task"]["datasets"]
    assert (used["source"]["revision"], used["source"]["requested_revision"]) == (COMMIT, "main")
    assert used["licence"] == "cc-by-4.0"  # from the dataset card, as a manifest dataset's spec gives it
    assert set(results["data"]["files"]) == {"hf.hub:data/train.jsonl", "hf.hub:data/test.jsonl", "hf.hub:README.md"}
    assert results["n_items"] == 12


@pytest.mark.slow
def test_a_hub_config_name_picks_the_cards_config(folder, monkeypatch):
    """`name:` is datasets' config name: the card's `configs` say which files each config reads."""
    snapshot = _hub_snapshot(folder)
    _write_jsonl(snapshot / "data" / "small_test.jsonl", _cls_rows("test", 5))
    (snapshot / "README.md").write_text(
        "---\nconfigs:\n- config_name: full\n  data_files: [{split: train, path: data/train.jsonl}, "
        "{split: test, path: data/test.jsonl}]\n- config_name: small\n  data_files: [{split: train, path: "
        "data/train.jsonl}, {split: test, path: data/small_test.jsonl}]\ndataset_info:\n- config_name: small\n"
        "  splits: [{name: train, num_bytes: 1, num_examples: 30}, {name: test, num_bytes: 1, num_examples: 5}]\n"
        "---\n", encoding="utf-8")
    (folder / "hub.yaml").write_text(CLS_TASK.replace("task: hf_cls", "task: hub").replace(
        "  path: json\n  data_files: {train: data/train.jsonl, test: data/test.jsonl}\n",
        "  path: someone/metaphors\n  name: small\n  revision: main\n"), encoding="utf-8")
    monkeypatch.setenv("HF_DATASETS_OFFLINE", "1")
    results = read_results(_run(folder, "hub").run_dir)
    assert results["n_items"] == 5 and results["task"]["datasets"][0]["source"]["name"] == "small"
    registry = _registry(folder)
    TaskIndex(registry).load("hub")
    assert registry.resolve("dataset", "hf.hub").counts["items"] == {"train": 30, "test": 5}  # the small config's

    (folder / "hub.yaml").write_text((folder / "hub.yaml").read_text().replace("name: small", "name: smal"))
    message = _failed_message(folder, "hub")
    assert "hf_dataset 'someone/metaphors' split 'test':" in message
    assert "Config 'smal' not found. Available: ['full', 'small']" in message


@pytest.mark.slow
def test_data_verify_checks_a_sources_files_and_the_rows_its_card_declares(folder, monkeypatch, capsys):
    from metabench.cli import main

    monkeypatch.setenv("HF_DATASETS_OFFLINE", "1")
    registry = _registry(folder)
    monkeypatch.setattr(plugins, "default_registry", lambda: registry)
    _hub_snapshot(folder)
    assert main(["data", "verify", "--tasks", "hub"]) == 0
    out = capsys.readouterr().out
    assert "hf.hub" in out and "3/3 ok" in out and "4/4 ok" in out and "all datasets verified" in out
    assert "rows read as items test" in out

    _hub_snapshot(folder, test_rows=13)  # the card says 13 test rows, the loader reads 12
    assert main(["data", "verify", "--tasks", "hub"]) == 1
    out = capsys.readouterr().out
    assert "items test" in out and "13" in out and "verification FAILED" in out


@pytest.mark.slow
def test_a_pinned_commit_in_the_cache_is_read_without_asking_the_hub(folder, monkeypatch):
    """Online, a pinned snapshot already fetched is looked up locally, once per process, never downloaded."""
    import huggingface_hub

    from metabench.data import hf_source

    _hub_snapshot(folder)
    (folder / "hub.yaml").write_text((folder / "hub.yaml").read_text().replace("revision: main", f"revision: {COMMIT}"))
    for name in ("HF_DATASETS_OFFLINE", "HF_HUB_OFFLINE"):
        monkeypatch.setenv(name, "0")
    monkeypatch.setenv("METABENCH_ALLOW_DOWNLOAD", "1")
    asked, real = [], huggingface_hub.snapshot_download
    monkeypatch.setattr(huggingface_hub, "snapshot_download",
                        lambda *a, **kw: asked.append(kw["local_files_only"]) or real(*a, **kw))
    monkeypatch.setattr(hf_source, "_SNAPSHOTS", {})
    registry = _registry(folder)
    TaskIndex(registry).load("hub")
    TaskIndex(registry).load("hub")
    assert asked == [True]
    assert registry.resolve("dataset", "hf.hub").source["revision"] == COMMIT


@pytest.mark.slow
def test_parquet_files_in_a_local_folder(folder):
    from sklearn.metrics import accuracy_score

    (folder / "pq").mkdir()
    for split, n in (("train", 30), ("test", 12)):
        datasets.Dataset.from_list(_cls_rows(split, n)).to_parquet(str(folder / "pq" / f"{split}.parquet"))
    (folder / "hf_cls.yaml").write_text(CLS_TASK.replace(
        "  path: json\n  data_files: {train: data/train.jsonl, test: data/test.jsonl}",
        "  path: ./pq\n  data_files: {train: train.parquet, test: test.parquet}"), encoding="utf-8")
    outcome = _run(folder, "hf_cls")
    samples = read_samples(outcome.run_dir)
    golds, preds = [s["gold"] for s in samples], [s["prediction"] for s in samples]
    assert golds == [r["label"] for r in _cls_rows("test", 12)]
    assert read_results(outcome.run_dir)["metrics"]["aggregate"]["accuracy"]["mean"] == pytest.approx(
        accuracy_score(golds, preds))


@pytest.mark.slow
def test_a_folder_of_data_files_names_its_splits_when_one_is_missing(folder):
    """Without data_files datasets finds the splits from the file names, so a missing one shows at loading."""
    (folder / "files").mkdir()
    _write_jsonl(folder / "files" / "train.jsonl", _cls_rows("train", 6))
    _write_jsonl(folder / "files" / "test.jsonl", _cls_rows("test", 4))
    (folder / "hf_cls.yaml").write_text(CLS_TASK.replace(
        "  path: json\n  data_files: {train: data/train.jsonl, test: data/test.jsonl}", "  path: ./files").replace(
        "{train: train, test: test}", "{train: train, test: validation}"), encoding="utf-8")
    message = _failed_message(folder, "hf_cls")
    assert "hf_dataset './files' has no split 'validation'" in message and "train, test" in message


@pytest.mark.parametrize("hf_dataset, where, expected", [
    ("{path: json, data_files: data/x.jsonl, columns: {text: s, lable: l}}", 4,
     "hf_dataset.columns: unknown item field 'lable' (did you mean 'label'?)"),
    ("{path: json, data_files: data/x.jsonl, columns: {words: w}}", 4, "make no item: give words + tags"),
    ("{path: json, columns: {text: s, label: l}}", 4, "packaged builder: it reads data_files"),
    ("{path: ./nowhere, columns: {text: s, label: l}}", 4, "hf_dataset.path './nowhere' does not exist"),
    ("{path: ./bad.yaml, columns: {text: s, label: l}}", 4, "hf_dataset.path './bad.yaml' is a file, not a folder"),
    ("{path: json, data_files: {test: ../x.jsonl}, columns: {text: s, label: l}}", 4,
     "hf_dataset.data_files '../x.jsonl' leaves the source's folder"),
    ("{path: ./data, revision: main, columns: {text: s, label: l}}", 4, "hf_dataset.revision is for Hub sources"),
    ("{path: 'not a hub id', revision: main, columns: {text: s, label: l}}", 4, "is neither a Hub id"),
    ("{path: json, data_files: data/x.jsonl, columns: {text: s, label: l}, revison: x}", 4, "unknown key 'hf_dataset.revison' (did you mean 'revision'?)"),
])
def test_hf_dataset_mistakes_are_errors_with_file_and_line(folder, hf_dataset, where, expected):
    text = CLS_TASK.split("hf_dataset:")[0] + f"hf_dataset: {hf_dataset}\n" + CLS_TASK.split("label: label}\n")[1]
    (folder / "bad.yaml").write_text(text, encoding="utf-8")
    ((path, error),) = validate_paths([folder / "bad.yaml"], _registry(folder))
    assert error is not None and expected in error, error
    assert f"{folder / 'bad.yaml'}:{where}" in error


def test_dataset_and_hf_dataset_together_are_refused(folder):
    (folder / "both.yaml").write_text(CLS_TASK.replace("kind: classification", "kind: classification\ndataset: toy"),
                                      encoding="utf-8")
    ((_path, error),) = validate_paths([folder / "both.yaml"], _registry(folder))
    assert "give `dataset` (a registered dataset) or `hf_dataset` (a datasets source), not both" in error


@pytest.mark.slow
def test_a_split_the_source_lacks_is_an_error_naming_its_splits(folder):
    _write_jsonl(folder / "data" / "train.jsonl", _cls_rows("train", 3))
    _write_jsonl(folder / "data" / "test.jsonl", _cls_rows("test", 3))
    (folder / "hf_cls.yaml").write_text(CLS_TASK.replace("test: test}\nlabels", "test: tset}\nlabels"), encoding="utf-8")
    with pytest.raises(ConfigError) as caught:
        TaskIndex(_registry(folder)).load("hf_cls")
    assert "dataset 'hf.hf_cls' has no split 'tset' (did you mean 'test'?)" in caught.value.message
    assert f"{folder / 'hf_cls.yaml'}:" in caught.value.message


def test_pairs_and_spans_become_their_items():
    """Rows to items directly: a premise-hypothesis pair, and a text with spans, target index and extra columns."""
    from metabench.data.hf_items import to_items
    from metabench.data.items import NLIPair, TextItem

    pairs = datasets.Dataset.from_dict(
        {"p": ["It rains.", "He froze."], "h": ["It is wet.", "He stopped."], "y": [0, 2]},
        features=datasets.Features({"p": datasets.Value("string"), "h": datasets.Value("string"),
                                    "y": datasets.ClassLabel(names=["entailment", "neutral", "contradiction"])}))
    assert to_items(pairs, {"premise": "p", "hypothesis": "h", "label": "y"}, "test", "x") == [
        NLIPair(id="test:0", premise="It rains.", hypothesis="It is wet.", label="entailment"),
        NLIPair(id="test:1", premise="He froze.", hypothesis="He stopped.", label="contradiction")]
    texts = datasets.Dataset.from_dict({"s": ["a sharp mind", "the cold war"], "l": ["met", "met"],
                                        "sp": [[2, 7], [4, 8]], "t": [1, 1], "k": ["x1", "x2"], "src": ["a", "b"]})
    items = to_items(texts, {"id": "k", "text": "s", "label": "l", "spans": "sp", "target_index": "t"}, "train", "x")
    assert items == [TextItem(id="x1", text="a sharp mind", label="met", spans=((2, 7),), target_index=1),
                     TextItem(id="x2", text="the cold war", label="met", spans=((4, 8),), target_index=1)]
    assert [i.meta for i in items] == [{"src": "a"}, {"src": "b"}]


def _failed_message(tasks: Path, task: str) -> str:
    (outcome,) = run(_registry(tasks), task, ["majority"], RunOptions(output_dir=tasks.parent / "runs", progress=False))
    assert outcome.status == "failed"
    return outcome.message


@pytest.mark.slow
def test_a_column_of_mixed_types_is_an_error_naming_the_column(folder):
    for split in ("train", "test"):  # in one split only, datasets JSON-encodes the whole column as strings
        rows = _cls_rows(split, 4)
        rows[2]["sentence"] = ["not", "text"]
        _write_jsonl(folder / "data" / f"{split}.jsonl", rows)
    (folder / "hf_cls.yaml").write_text(CLS_TASK, encoding="utf-8")
    message = _failed_message(folder, "hf_cls")
    assert f"{folder / 'hf_cls.yaml'}:4: hf_dataset 'json': columns.text: column 'sentence' holds Json" in message


@pytest.mark.slow
def test_a_row_that_does_not_fit_names_the_split_and_row(folder):
    rows = [{"w": ["a", "storm"], "t": ["O", "B-METAPHOR"]}, {"w": ["a", "b", "c"], "t": ["O", "O"]}]
    _write_jsonl(folder / "data" / "test.jsonl", rows)
    _write_jsonl(folder / "data" / "train.jsonl", rows[:1])
    (folder / "hf_tag.yaml").write_text(TAG_TASK.replace(
        "  path: ./tagged\n  columns: {words: tokens, tags: tags}",
        "  path: json\n  data_files: {train: data/train.jsonl, test: data/test.jsonl}\n  columns: {words: w, tags: t}"),
        encoding="utf-8")
    assert "hf_dataset 'json': split 'test' row 1: 3 words but 2 tags" in _failed_message(folder, "hf_tag")


@pytest.mark.slow
def test_an_unlabelled_class_id_fails_its_row(folder):
    """Hub test splits often hold label -1 (no gold): no name to read, so the row is an error, not a class."""
    features = datasets.Features({"sentence": datasets.Value("string"),
                                  "label": datasets.ClassLabel(names=["literal", "metaphorical"])})
    rows = {"sentence": ["a", "b", "c"], "label": [0, 1, 1]}
    built = datasets.DatasetDict({"train": datasets.Dataset.from_dict(rows, features=features),
                                  "test": datasets.Dataset.from_dict({**rows, "label": [0, -1, 1]}, features=features)})
    built.save_to_disk(str(folder / "unlabelled"))
    (folder / "hf_cls.yaml").write_text(CLS_TASK.replace(
        "  path: json\n  data_files: {train: data/train.jsonl, test: data/test.jsonl}\n"
        "  columns: {id: uid, text: sentence, label: label}",
        "  path: ./unlabelled\n  columns: {text: sentence, label: label}"), encoding="utf-8")
    assert "hf_dataset './unlabelled': split 'test' row 1: class id -1 is none of the column's 2 names" in \
        _failed_message(folder, "hf_cls")


@pytest.mark.slow
def test_data_verify_reads_every_row_and_names_one_that_does_not_fit(folder, monkeypatch, capsys):
    from metabench.cli import main

    _write_jsonl(folder / "data" / "tags.jsonl", [{"w": ["a", "b", "c"], "t": ["O", "O"]}])
    (folder / "hf_tag.yaml").write_text(TAG_TASK.replace(
        "  path: ./tagged\n  columns: {words: tokens, tags: tags}",
        "  path: json\n  data_files: {train: data/tags.jsonl, test: data/tags.jsonl}\n  columns: {words: w, tags: t}"),
        encoding="utf-8")
    registry = _registry(folder)
    monkeypatch.setattr(plugins, "default_registry", lambda: registry)
    assert main(["data", "verify", "--tasks", "hf_tag"]) == 1
    out = capsys.readouterr().out
    assert "split 'train' row 0: 3 words but 2 tags" in out and "verification FAILED" in out


@pytest.mark.slow
def test_without_datasets_installed_the_job_names_the_extra(folder, monkeypatch):
    import sys

    _write_jsonl(folder / "data" / "train.jsonl", _cls_rows("train", 3))
    _write_jsonl(folder / "data" / "test.jsonl", _cls_rows("test", 3))
    (folder / "hf_cls.yaml").write_text(CLS_TASK, encoding="utf-8")
    monkeypatch.setitem(sys.modules, "datasets", None)  # `import datasets` fails as if it were not installed
    message = _failed_message(folder, "hf_cls")
    assert f"{folder / 'hf_cls.yaml'}:4: hf_dataset 'json' needs the optional package 'datasets'" in message
    assert "pip install 'metabench[hf]'" in message


@pytest.mark.slow
def test_tasks_on_registered_datasets_record_no_hf_dataset(toy_registry, tmp_path):
    (outcome,) = run(toy_registry, "toy_cls", ["majority"], RunOptions(output_dir=tmp_path / "runs", progress=False))
    results = read_results(outcome.run_dir)
    assert "hf_dataset" not in results["task"]["config"]
    assert all("source" not in d for d in results["task"]["datasets"])


def _module(path: Path) -> types.ModuleType:
    import importlib.util

    spec = importlib.util.spec_from_file_location(path.stem, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.slow
def test_the_example_runs_with_majority(tmp_path, monkeypatch):
    """examples/hf-datasets as its README says: write the folder, load the plugin, run majority."""
    import shutil

    from sklearn.metrics import accuracy_score

    monkeypatch.setenv("METABENCH_CACHE_DIR", str(tmp_path / "cache"))
    example = Path(__file__).parents[2] / "examples" / "hf-datasets"
    copy = tmp_path / "hf-datasets"
    shutil.copytree(example, copy, ignore=shutil.ignore_patterns("data"))
    make_folder = _module(copy / "make_folder.py")
    make_folder.write(copy / "data" / "metaphor_sentences")
    registry = plugins.load(extra_plugins=(_module(copy / "hf_example_plugin.py"),))

    (outcome,) = run(registry, "hf_example_cls", ["majority"], RunOptions(output_dir=tmp_path / "runs", progress=False))
    assert outcome.status == "ok", outcome.message
    train = [make_folder.LABELS[label] for _, label in make_folder.SENTENCES["train"]]
    golds = [make_folder.LABELS[label] for _, label in make_folder.SENTENCES["test"]]
    majority = max(sorted(set(train)), key=train.count)
    samples = read_samples(outcome.run_dir)
    assert [s["gold"] for s in samples] == golds and {s["prediction"] for s in samples} == {majority}
    accuracy = read_results(outcome.run_dir)["metrics"]["aggregate"]["accuracy"]["mean"]
    assert accuracy == pytest.approx(accuracy_score(golds, [majority] * len(golds)))


@pytest.mark.slow
def test_spawned_workers_register_the_source_themselves(folder, tmp_path, monkeypatch):
    """A spawned worker's registry holds only what plugins register: it builds the task's spec from the job."""
    import os
    import sys

    from metabench.launch import processes as process_launcher
    from launcher_runs import ok_runs

    _write_jsonl(folder / "data" / "train.jsonl", _cls_rows("train", 30))
    _write_jsonl(folder / "data" / "test.jsonl", _cls_rows("test", 12))
    (folder / "hf_cls.yaml").write_text(CLS_TASK, encoding="utf-8")
    (folder / "hf_tag.yaml").write_text(TAG_TASK, encoding="utf-8")
    _tagged_folder(folder / "tagged")
    (tmp_path / "hf_spawn_plugin.py").write_text(
        "from metabench.hookspecs import hookimpl\n\n\n@hookimpl\ndef metabench_register_tasks(register):\n"
        f"    register({str(folder)!r})\n", encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setenv("METABENCH_PLUGIN_MODULES", "hf_spawn_plugin")
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([str(tmp_path), *sys.path]))
    monkeypatch.setattr(process_launcher.multiprocessing, "get_all_start_methods", lambda: ["spawn"])

    def launch(name, launcher):
        monkeypatch.setenv("METABENCH_CACHE_DIR", str(tmp_path / f"{name}-cache"))
        options = RunOptions(output_dir=tmp_path / name, progress=False, launcher=launcher,
                             workers=2 if launcher == "processes" else None)
        return run(plugins.load(), "hf_cls,hf_tag", ["majority", "lookup"], options)

    spawned, serial = launch("spawned", "processes"), launch("serial", "serial")
    assert [o.status for o in spawned] == ["ok"] * 4, [o.message for o in spawned]
    assert ok_runs(spawned) == ok_runs(serial)


@pytest.mark.slow
def test_listing_and_validating_a_source_task_import_no_datasets(folder, tmp_path):
    """`datasets` is imported only when a split is parsed: `ls` and `validate` of a source task stay light."""
    import os
    import subprocess
    import sys

    (folder / "tagged").mkdir()
    (folder / "tagged" / "dataset_dict.json").write_text('{"splits": ["train", "test"]}', encoding="utf-8")
    (folder / "hf_tag.yaml").write_text(TAG_TASK, encoding="utf-8")
    (tmp_path / "hf_light_plugin.py").write_text(
        "from metabench.hookspecs import hookimpl\n\n\n@hookimpl\ndef metabench_register_tasks(register):\n"
        f"    register({str(folder)!r})\n", encoding="utf-8")
    code = ("import sys; from metabench.cli import main; main(['ls', 'tasks']); main(['validate', sys.argv[1]]); "
            "print('HEAVY=' + ','.join(m for m in ('datasets', 'huggingface_hub', 'pyarrow', 'torch') if m in sys.modules))")
    env = {**os.environ, "METABENCH_PLUGIN_MODULES": "hf_light_plugin",
           "PYTHONPATH": os.pathsep.join([str(tmp_path), *sys.path])}
    out = subprocess.run([sys.executable, "-c", code, str(folder / "hf_tag.yaml")], capture_output=True, text=True,
                         env=env, timeout=120)
    assert out.returncode == 0, out.stderr
    assert "hf_tag" in out.stdout and "1 valid" in out.stdout
    assert out.stdout.strip().endswith("HEAVY="), out.stdout


@pytest.mark.slow
def test_a_dry_run_of_a_source_task_writes_nothing(folder):
    """The plan hashes the source's files to key its jobs, but records no stamp in the cache (#36): a dry run
    leaves the cache and the output folder as they were."""
    from metabench.dry_run import plan_run

    _write_jsonl(folder / "data" / "train.jsonl", _cls_rows("train", 30))
    _write_jsonl(folder / "data" / "test.jsonl", _cls_rows("test", 12))
    (folder / "hf_cls.yaml").write_text(CLS_TASK, encoding="utf-8")
    cache, runs = folder.parent / "cache", folder.parent / "runs"

    def files() -> set[Path]:
        return {p for root in (cache, runs) if root.exists() for p in root.rglob("*")}

    before = files()
    planned = plan_run("hf_cls", "majority", output_dir=runs, registry=_registry(folder))
    assert [(p.task, p.status) for p in planned.jobs] == [("hf_cls", "run")]
    assert files() == before
    _run(folder, "hf_cls")  # a real run records the stamps as before
    assert (cache / "verified-files.json").is_file()


@pytest.mark.slow
@pytest.mark.parametrize("split", ["test", "train"])
def test_a_gold_label_outside_the_label_names_fails_naming_the_item(folder, split):
    """A label the task does not name would be scored as a class no model can answer (#36): the job fails,
    naming the item, the label and the fix."""
    rows = {"train": _cls_rows("train", 12), "test": _cls_rows("test", 6)}
    rows[split][3]["label"] = "idiomatic"
    for name, part in rows.items():
        _write_jsonl(folder / "data" / f"{name}.jsonl", part)
    (folder / "hf_cls.yaml").write_text(CLS_TASK, encoding="utf-8")
    message = _failed_message(folder, "hf_cls")
    assert f"item '{split}-3': gold label 'idiomatic' is not in labels.names ['literal', 'metaphorical']" in message
