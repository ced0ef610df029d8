"""docs/decoders.md's table of fine-tuned decoder runs is what tools/decoder_cost_table.py makes of the committed
runs: a figure typed by hand, or a run added without regenerating the page, fails here."""

from __future__ import annotations

import json
import runpy
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
TOOL = runpy.run_path(str(ROOT / "tools" / "decoder_cost_table.py"))


def test_the_page_matches_the_committed_runs():
    assert TOOL["main"](["--check"]) == 0


def test_a_run_becomes_a_row_with_its_budget_and_costs(tmp_path):
    run = tmp_path / "m4x_det_en_mono_decoder" / "hf-decoder_x"
    run.mkdir(parents=True)
    aggregate = {m: {"mean": v, "std": 0.0, "n": 1} for m, v in zip(TOOL["METRICS"], (0.1, 0.2, 0.3, 0.4, 0.5))}
    info = {"budget": {"max_train": "400", "epochs": "1"}, "device": "cpu", "method": "lora", "beams": 1,
            "checkpoints": {"0": {"train_examples": 400, "history": [{"epoch": 1}], "epoch_s": 1234.4,
                                   "train_cpu_s": 250.2}},
            "outputs": {"predict_s": 50.0, "predicted_items": 20, "repaired_outputs": 0}}
    results = {"task": {"name": "m4x_det_en_mono_decoder"}, "n_items": 20, "n_test_items": 3630,
               "model": {"family": "decoder_finetune", "spec": "hf-decoder:x,finetune=true", "info": info},
               "metrics": {"aggregate": aggregate}}
    (run / "results.json").write_text(json.dumps(results))
    [row] = TOOL["rows"](tmp_path)
    assert row == ["m4x_det_en_mono_decoder", "hf-decoder:x,finetune=true", "20 (partial: --limit)",
                   "max_train=400, epochs=1", "10.00", "20.00", "30.00", "40.00", "50.00", "400", "1", "1234", "250", "250",
                   "0 / 20", "cpu, lora, beams 1"]
