"""Writes the table of committed fine-tuned-decoder runs into docs/decoders.md (between its markers), or checks it.

    python tools/decoder_cost_table.py            # rewrite the block from leaderboard/runs
    python tools/decoder_cost_table.py --check    # exit 1 if the page disagrees with the runs (a test runs this)

Every figure comes from a run's results.json: the scores, the training budget (``model.info.budget``), the
checkpoint's training summary (examples, epochs, seconds per epoch, also when a later run loaded the checkpoint)
and the adapter's own decoding time and repair count. No figure on the page is typed by hand.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PAGE = ROOT / "docs" / "decoders.md"
BEGIN, END = "<!-- decoder-tagger-runs:begin (tools/decoder_cost_table.py) -->", "<!-- decoder-tagger-runs:end -->"
METRICS = ("span_f1", "inv_f1", "oov_f1", "span_precision", "span_recall")


def rows(runs_dir: Path) -> list[list[str]]:
    out = []
    for path in sorted(runs_dir.glob("*/*/results.json")):
        results = json.loads(path.read_text(encoding="utf-8"))
        model = results["model"]
        if model.get("family") != "decoder_finetune":
            continue
        info, aggregate = model.get("info") or {}, results["metrics"]["aggregate"]
        fit = next(iter(info.get("checkpoints", {}).values()), {})
        outputs = info.get("outputs", {})
        budget = ", ".join(f"{k}={v}" for k, v in (info.get("budget") or {}).items()) or "task recipe"
        partial = results["n_items"] < results.get("n_test_items", results["n_items"])
        per_100 = 100 * outputs["predict_s"] / outputs["predicted_items"] if outputs.get("predicted_items") else None
        repaired = f"{outputs['repaired_outputs']} / {outputs['predicted_items']}" if outputs.get("predicted_items") else "—"
        out.append([
            results["task"]["name"], model["spec"], f"{results['n_items']}" + (" (partial: --limit)" if partial else ""),
            budget, *(f"{100 * aggregate[m]['mean']:.2f}" for m in METRICS),
            str(fit.get("train_examples", "—")), str(len(fit.get("history", [])) or "—"),
            f"{fit['epoch_s']:.0f}" if "epoch_s" in fit else "—", f"{fit['train_cpu_s']:.0f}" if "train_cpu_s" in fit else "—",
            f"{per_100:.0f}" if per_100 is not None else "—",
            repaired, f"{info.get('device', '?')}, {info.get('method', '?')}, beams {info.get('beams', '?')}",
        ])
    return out


def table(runs_dir: Path) -> str:
    header = ["task", "model", "test items", "budget", "span F1", "Inv", "Oov", "P", "R", "train sentences", "epochs",
              "s / epoch", "training CPU s", "s / 100 test sentences", "repaired outputs", "device, method, beams"]
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(cell.replace("|", "\\|") for cell in row) + " |" for row in rows(runs_dir)]
    if len(lines) == 2:
        lines.append("| (no committed runs) |" + " |" * (len(header) - 1))
    return "\n".join(lines)


def render(page: str, runs_dir: Path) -> str:
    start, end = page.index(BEGIN) + len(BEGIN), page.index(END)
    return page[:start] + "\n" + table(runs_dir) + "\n" + page[end:]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="exit 1 if the page's table differs from the runs'")
    parser.add_argument("--runs", type=Path, default=ROOT / "leaderboard" / "runs")
    args = parser.parse_args(argv)
    page = PAGE.read_text(encoding="utf-8")
    wanted = render(page, args.runs)
    if args.check:
        if wanted != page:
            print(f"{PAGE}: the fine-tuned decoder table differs from {args.runs}; run python tools/decoder_cost_table.py")
            return 1
        return 0
    PAGE.write_text(wanted, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
