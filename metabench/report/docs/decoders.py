"""docs/decoders.md's table of decoders fine-tuned as taggers, generated from the committed runs (`metabench
report docs`): scores, the training budget, and what training and decoding cost, all as each run recorded them.

Costs come from the adapter's record: the checkpoint's training summary (examples, epochs, wall and CPU seconds;
also when a later run loaded the checkpoint instead of training) and its own decoding time and repair count.
"""

from __future__ import annotations

from .blocks import markdown

METRICS = ("span_f1", "inv_f1", "oov_f1", "span_precision", "span_recall")


def tagger_row(run) -> list[str]:
    info = run.record.model.info
    fit: dict = next(iter((info.checkpoints or {}).values()), {})
    outputs = info.outputs or {}
    done = outputs.get("predicted_items")
    why = ([f"--limit: {run.record.n_items} of {run.test_split_size or '?'} test items"] if run.partial else []) + \
        ([f"budget {', '.join(f'{k}={v}' for k, v in run.record.budget.items())}"] if run.record.budget else [])
    return [
        run.record.task.name, run.record.model.spec, str(run.record.n_items), *(f"{100 * run.record.mean(m):.2f}" for m in METRICS),
        str(fit.get("train_examples", "—")), str(len(fit.get("history", [])) or "—"),
        f"{fit['epoch_s']:.0f}" if "epoch_s" in fit else "—", f"{fit['train_cpu_s']:.0f}" if "train_cpu_s" in fit else "—",
        f"{100 * outputs['predict_s'] / done:.0f}" if done else "—", _repaired(outputs, done, run),
        f"{info.device or '?'}, {info.method or '?'}, beams {'?' if info.beams is None else info.beams}",
        "PARTIAL: " + "; ".join(why) if why else "full",
    ]


def _repaired(outputs: dict, done: int | None, run) -> str:
    """Repairs among the outputs this run decoded; answers it read from the answer cache (decoded by an earlier
    process, whose own run recorded their repairs) are named, so the count is not read as covering them."""
    if not done:
        return "—"
    cached = run.record.timings.cached_items if run.record.timings is not None else 0
    return f"{outputs['repaired_outputs']} / {done}" + (f" ({cached} more read from the answer cache)" if cached else "")


def taggers_table(context) -> list[str]:
    rows = [tagger_row(run) for run in sorted(context.runs, key=lambda r: (r.record.task.name, r.record.model.spec))
            if run.record.model.family == "decoder_finetune"]
    return markdown(["task", "model", "test items", "span F1", "Inv", "Oov", "P", "R", "train sentences", "epochs",
                     "wall s / epoch", "training CPU s", "wall s / 100 test sentences", "repaired outputs",
                     "device, method, beams", "status"], rows or [["(no committed runs)"] + [""] * 15])
