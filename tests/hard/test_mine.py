"""Mining phi per verb, HARD(M) selection with nearest literal negatives, statistics, and the derived dataset."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np
import pytest

from metabench.data.datasets.common import LIT, MET
from metabench_hard.mine import mine_word_phi, phi_bin, select_hard, statistics
from metabench_hard.pool import Instance, SenseLabels
from metabench_hard.store import MineSettings

sys.path.insert(0, str(Path(__file__).parent.parent / "encoders"))

MET_KEY, LIT_KEY, OTHER = "push%2:32:00::", "push%2:38:00::", "push%2:41:00::"


def at(*degrees):
    r = np.radians(degrees)
    return np.stack([np.cos(r), np.sin(r)], axis=1)


def word():
    """'push': 4 metaphorical instances (one at 85 degrees, among the literal ones), 4 literal, 4 unlabelled."""
    angles = [0, 2, 4, 85, 90, 92, 94, 96, 180, 182, 184, 186]
    keys = [MET_KEY] * 4 + [LIT_KEY] * 4 + [OTHER] * 4
    instances = [Instance(f"s:{i}", ("they", "push", "it", str(i)), 1, k) for i, k in enumerate(keys)]
    labels = SenseLabels({MET_KEY: MET, LIT_KEY: LIT}, {MET_KEY: "make publicity for", LIT_KEY: "move with force"}, {})
    return instances, at(*angles), labels


def test_phi_literal_negatives_and_selection():
    instances, vectors, labels = word()
    rows = mine_word_phi(instances, vectors, labels, MineSettings())
    by_id = {r["id"]: r for r in rows}
    # s:3 sits among the literal cluster: its 3 nearest are literal -> phi 0; s:0's 3 nearest are s:1, s:2, s:3
    assert by_id["s:3"]["phi"] == 0 and by_id["s:0"]["phi"] == pytest.approx(1.0)
    assert by_id["s:3"]["nearest_literal"] == "s:4" and by_id["s:0"]["nearest_literal"] == "s:4"
    assert by_id["s:8"]["label"] == "unlabelled" and by_id["s:8"]["nearest_literal"] is None
    assert by_id["s:0"]["gloss"] == "make publicity for"
    pairs = select_hard(rows, 0.8)
    assert [(h["id"], n["id"]) for h, n in pairs] == [("s:3", "s:4")]
    assert [h["id"] for h, _ in select_hard(rows, 1.01)] == ["s:0", "s:1", "s:2", "s:3"]


def test_statistics_follow_table_4():
    instances, vectors, labels = word()
    rows = mine_word_phi(instances, vectors, labels, MineSettings())
    stats = statistics(rows, 1.01)
    assert stats["hard_metaphors"] == stats["literal_negatives"] == 4 and stats["examples"] == 8
    assert stats["hard_without_literal"] == 0
    assert stats["distinct_literal_sentences"] == 1 and stats["words"] == 1 and stats["senses"] == 1
    assert stats["examples_per_word"] == 8 and stats["tokens_per_example"] == 4
    assert stats["phi_histogram_metaphorical"] == {"0.0-0.2": 1, "0.2-0.4": 0, "0.4-0.6": 0, "0.6-0.8": 0, "0.8-1.0": 3}
    assert statistics(rows, 0.8)["examples"] == 2 and statistics(rows, 0.8)["pool_instances"] == 12


def test_hard_metaphors_without_a_literal_partner_are_kept_by_default():
    """The authors keep a hard metaphor whose verb has no literal instance; unpaired=drop is the strict 1:1."""
    row = lambda i, label, phi, literal: {"id": i, "word": "fly.v", "sense": f"{label}:k", "label": label, "phi": phi,  # noqa: E731
                                          "nearest_literal": literal, "words": ["a", "b"]}
    rows = [row("m1", MET, 0.1, "l1"), row("m2", MET, 0.3, None), row("m3", MET, 0.9, None), row("l1", LIT, 0.5, None)]
    assert [(h["id"], n and n["id"]) for h, n in select_hard(rows, 0.8)] == [("m1", "l1"), ("m2", None)]
    assert [h["id"] for h, _ in select_hard(rows, 0.8, "drop")] == ["m1"]
    kept, dropped = statistics(rows, 0.8), statistics(rows, 0.8, "drop")
    assert (kept["hard_metaphors"], kept["literal_negatives"], kept["examples"]) == (2, 1, 3)
    assert (dropped["hard_metaphors"], dropped["examples"]) == (1, 2) and kept["hard_without_literal"] == 1


def test_the_pool_gate_and_the_rate_gate_act_separately():
    """The authors' two gates: a 2-instance sense stays in the pool (a neighbour of the others) but gets no phi
    under the default rate gate (4, the paper's "at least four"); each gate moves its own thing only."""
    instances, vectors, labels = word()
    instances, vectors = instances[2:], vectors[2:]  # the metaphorical sense keeps 2 instances: s:2 (4°), s:3 (85°)
    assert (MineSettings().pool_min_instances, MineSettings().rate_min_instances) == (2, 4)
    phi = lambda settings: {r["id"]: r["phi"] for r in mine_word_phi(instances, vectors, labels, settings)}  # noqa: E731
    default = phi(MineSettings())
    assert default["s:2"] is None and default["s:3"] is None  # in the pool, not rated
    # ... but in the pool: the literal s:4 (90°) counts s:3 (85°) among its 3 nearest, so its phi is 2/3
    assert default["s:4"] == pytest.approx(2 / 3)
    rated = phi(MineSettings(rate_min_instances=2))  # the rate gate lowered: the same pool, now s:2, s:3 rated
    assert rated["s:2"] is not None and rated["s:3"] is not None
    assert {k: v for k, v in rated.items() if k not in ("s:2", "s:3")} == {
        k: v for k, v in default.items() if k not in ("s:2", "s:3")}  # nobody else's phi moves
    out = phi(MineSettings(pool_min_instances=4))  # the pool gate raised: s:2, s:3 leave the pool
    assert out["s:2"] is None and out["s:3"] is None and out["s:4"] == pytest.approx(1.0)
    assert {k for k, v in out.items() if v is not None} == {k for k, v in default.items() if v is not None}


def test_legacy_min_instances_sets_both_gates_and_keeps_the_build_key():
    """``min_instances=4`` (the committed hard_mi_* tasks) is pool 4 and rate 4, with a FutureWarning, and its
    cache keys are those of the builds made before the split (so the tasks still find their runs' builds)."""
    import hashlib

    from metabench.errors import MetabenchError
    from metabench_hard.sor import SORSettings
    from metabench_hard.store import build_key, index_entry, parse_mine_settings

    with pytest.warns(FutureWarning, match="pool_min_instances=4,rate_min_instances=4"):
        legacy = parse_mine_settings("min_instances=4")
    assert (legacy.pool_min_instances, legacy.rate_min_instances) == (4, 4)
    assert legacy == parse_mine_settings("pool_min_instances=4,rate_min_instances=4")
    old_payload = {"min_instances": 4, "k_rule": "n_minus_1", "inventory": "all", "max_length": 128,
                   "words": "candidates"}  # asdict(MineSettings) before the split
    old = lambda payload: hashlib.sha256(json.dumps(payload, sort_keys=True, default=str).encode()).hexdigest()  # noqa: E731
    assert build_key("sor", "pool", legacy) == old({"version": "hard-mine/1", "sor": "sor", "pool": "pool",
                                                    "mine": old_payload})
    from dataclasses import asdict
    assert index_entry("fp", SORSettings(), legacy) == old({"base": "fp", "settings": asdict(SORSettings()),
                                                            "mine": old_payload})
    assert build_key("sor", "pool", MineSettings()) != build_key("sor", "pool", parse_mine_settings(
        "pool_min_instances=2,rate_min_instances=2"))  # the new default is a new build
    with pytest.raises(MetabenchError, match="cannot be combined"):
        parse_mine_settings("min_instances=4,rate_min_instances=5")
    with pytest.raises(MetabenchError, match="rate_min_instances=2 < pool_min_instances=3"):
        parse_mine_settings("pool_min_instances=3,rate_min_instances=2")


def test_phi_bins_are_fig_5b_bins():
    assert [phi_bin(x) for x in (0, 0.19, 0.2, 0.79, 0.8, 1.0)] == [
        "0.0-0.2", "0.0-0.2", "0.2-0.4", "0.6-0.8", "0.8-1.0", "0.8-1.0"]
    assert phi_bin(None) == "" and phi_bin(float("nan")) == ""


def test_dataset_reads_a_build_by_model_fingerprint(monkeypatch, tmp_path):
    from tiny_bert import build_tiny_bert

    from metabench import plugins
    from metabench.data.load import load_split
    from metabench.errors import NotBuiltError
    from metabench_hard.sor import SORSettings
    from metabench_hard.store import build_dir, record_build, resolve_model

    monkeypatch.setenv("METABENCH_CACHE_DIR", str(tmp_path / "cache"))
    model = str(build_tiny_bert(tmp_path / "tiny"))
    registry = plugins.load()
    with pytest.raises(NotBuiltError, match="not been built") as raised:
        load_split(registry, "hard_metaphors", "test", {"model": model})
    assert "metabench hard mine --model" in raised.value.hint
    instances, vectors, labels = word()
    folder = build_dir("k1")
    folder.mkdir(parents=True)
    (folder / "build.json").write_text("{}")
    (folder / "instances.jsonl").write_text(
        "".join(json.dumps(r) + "\n" for r in mine_word_phi(instances, vectors, labels, MineSettings())))
    record_build(resolve_model(model).fingerprint, SORSettings(), MineSettings(), "k1", model)
    loaded = load_split(registry, "hard_metaphors", "test", {"model": model, "xi": 0.5})
    assert [(i.id, i.label) for i in loaded.items] == [("hard:s:3", MET), ("lit:s:3", LIT)]
    hard, negative = loaded.items
    assert hard.text[slice(*hard.spans[0])] == "push" and hard.meta["phi_bin"] == "0.0-0.2"
    assert negative.meta["negative_of"] == "s:3" and negative.meta["instance"] == "s:4"
    assert list(loaded.files) == ["hard/k1/instances.jsonl"]
    assert len(load_split(registry, "hard_metaphors", "test", {"model": model, "xi": 1.01}).items) == 8


def test_fidelity_matching_and_agreement():
    import scipy.stats

    from metabench_hard.fidelity import _compare, _match

    exact = {("a%2:30:00::", "he may absorb the ideas ."): 0.25}
    by_sense = {"a%2:30:00::": [("he may absorb the ideas .", 0.25), ("she did absorb the new costs of it .", 0.5)]}
    assert _match("a%2:30:00::", "he  may absorb the ideas .", exact, by_sense) == (0.25, "exact")
    assert _match("a%2:30:00::", "she did absorb the new costs of it", exact, by_sense) == (0.5, "similar")
    assert _match("a%2:30:00::", "nothing like it", exact, by_sense) == (None, "absent")
    pairs = [(0.1, 0.2), (0.5, 0.9), (0.7, 0.6), (0.9, 0.95)]
    result = _compare(pairs, 0.8, scipy.stats)
    assert result["spearman"] == pytest.approx(scipy.stats.spearmanr([0.1, 0.5, 0.7, 0.9], [0.2, 0.9, 0.6, 0.95]).statistic, abs=1e-4)
    assert result["agreement"] == 0.75 and (result["hard_theirs"], result["hard_ours"]) == (3, 2)


def test_unbuilt_hard_task_named_by_a_short_model_name_is_a_skip(monkeypatch, tmp_path, capsys):
    """The loader has no registry from the runner: `model: hf:minilm-l6` must still resolve (a skip, not a failure)."""
    from metabench.cli import main

    monkeypatch.setenv("METABENCH_CACHE_DIR", str(tmp_path / "cache"))
    code = main(["--tasks", "hard_mi_minilm_l6", "--model", "majority", "-o", str(tmp_path / "runs"), "--no-progress"])
    out = capsys.readouterr()
    assert code == 0, out.err
    assert "0 failed" in out.out and "dataset not built yet" in out.out + out.err
