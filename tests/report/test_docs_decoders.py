"""docs/decoders.md's fine-tuned decoder table: what one run's record becomes (the page itself is checked against
the committed runs by test_docs_tables.py)."""

from __future__ import annotations

from pathlib import Path

from metabench.report.docs.decoders import METRICS, tagger_row
from metabench.run_record import RunRecord
from metabench.runs.stored import Run


def test_a_budget_run_with_a_limit_is_a_partial_row_with_its_costs():
    info = {"budget": {"max_train": "400", "epochs": "1"}, "device": "cpu", "method": "lora", "beams": 1,
            "checkpoints": {"0": {"train_examples": 400, "history": [{"epoch": 1}], "epoch_s": 1234.4,
                                  "train_cpu_s": 250.2}},
            "outputs": {"predict_s": 50.0, "predicted_items": 20, "repaired_outputs": 0}}
    aggregate = {m: {"mean": v, "std": 0.0, "n": 1} for m, v in zip(METRICS, (0.1, 0.2, 0.3, 0.4, 0.5))}
    results = {"schema_version": 1, "task": {"name": "m4x_det_en_mono_decoder", "primary_metric": METRICS[0]},
               "n_items": 20, "n_test_items": 3630, "seeds": [0],
               "model": {"family": "decoder_finetune", "spec": "hf-decoder:x,finetune=true", "info": info},
               "metrics": {"per_seed": {}, "aggregate": aggregate}}
    assert tagger_row(Run(Path("r"), RunRecord.read(results))) == [
        "m4x_det_en_mono_decoder", "hf-decoder:x,finetune=true", "20", "10.00", "20.00", "30.00", "40.00", "50.00",
        "400", "1", "1234", "250", "250", "0 / 20", "cpu, lora, beams 1",
        "PARTIAL: --limit: 20 of 3630 test items; budget max_train=400, epochs=1"]
    results["n_items"], info["budget"] = 3630, None
    assert tagger_row(Run(Path("r"), RunRecord.read(results)))[-1] == "full"


def test_answers_read_from_the_cache_are_named_beside_the_repair_count():
    info = {"method": "lora", "checkpoints": {}, "outputs": {"predict_s": 30.0, "predicted_items": 6, "repaired_outputs": 0}}
    aggregate = {m: {"mean": 0.0, "std": 0.0, "n": 1} for m in METRICS}
    results = {"schema_version": 1, "task": {"name": "t", "primary_metric": METRICS[0]}, "n_items": 10,
               "n_test_items": 10, "seeds": [0], "timings": {"cached_items": 4},
               "model": {"family": "decoder_finetune", "spec": "hf-decoder:x,finetune=true", "info": info},
               "metrics": {"per_seed": {}, "aggregate": aggregate}}
    row = tagger_row(Run(Path("r"), RunRecord.read(results)))
    assert row[12:14] == ["500", "0 / 6 (4 more read from the answer cache)"]  # cost per 100 over the 6 decoded
