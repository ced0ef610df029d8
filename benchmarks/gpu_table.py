"""docs/gpu.md's results table, generated from the GPU runs committed under benchmarks/results/ (gpu-*.json, each
the JSON ``benchmarks/gpu_check.sh`` wrote on a GPU machine): one row per target of issue #34, the card, driver,
torch and date of the run beside every figure. ``--write`` rewrites the block, ``--check`` exits 1 if it is stale
(tests/core/test_gpu_check.py runs the check).

    python benchmarks/gpu_table.py            # print the block
    python benchmarks/gpu_table.py --write    # put it into docs/gpu.md
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
RESULTS = REPO / "benchmarks" / "results"
PAGE = REPO / "docs" / "gpu.md"
BEGIN = "<!-- gpu-results: python benchmarks/gpu_table.py --write -->"
END = "<!-- end gpu-results -->"


def _get(report: dict, *keys):
    value = report
    for key in keys:
        if not isinstance(value, dict) or key not in value:
            return None
        value = value[key]
    return value


def _fmt(value, pattern: str) -> str:
    return "—" if value is None else pattern.format(value)


def rows(report: dict) -> list[tuple[str, str, str]]:
    """(target, measured, verdict) for one GPU run."""
    one = _get(report, "paths", "scoring_one_token", "ratio_requests_per_s")
    multi = _get(report, "paths", "scoring_multi", "ratio_requests_per_s")
    dll = max((v for v in (_get(report, "paths", p, "max_abs_loglikelihood_diff") for p in ("scoring_one_token", "scoring_multi"))
               if v is not None), default=None)
    warm = _get(report, "paths", "first_gpu_work", "warm", "before_first_forward_s")
    bf16 = _get(report, "paths", "encoder_bf16", "step_speedup_bf16")
    # one run per dtype (the first GPU run's JSON) or repetitions with their F1 under "f1"
    f1 = tuple(_get(report, "paths", "encoder_bf16", "f1", dtype) or _get(report, "paths", "encoder_bf16", dtype, "f1")
               for dtype in ("float32", "bfloat16"))
    ends = (_get(report, "paths", "scoring_one_token", "ratio_end_to_end"), _get(report, "paths", "scoring_multi", "ratio_end_to_end"))
    load = _get(report, "paths", "first_gpu_work", "warm", "model_load_s")
    tagger = _get(report, "paths", "tagger", "wall_s")
    grammar = _get(report, "paths", "grammar_overhead", "processor_share_of_step")
    hours = (_get(report, "paths", "projection_8b", "t12_recipe_hours"), _get(report, "paths", "projection_8b", "core_hours"))

    def verdict(value, ok) -> str:
        return "not measured" if value is None else ("met" if ok(value) else "missed")

    return [
        ("hf-decoder scoring ≥ 1.0× lm-eval HFLM requests/s, one-token options", _fmt(one, "{:.2f}×"), verdict(one, lambda v: v >= 1.0)),
        ("hf-decoder scoring ≥ 1.3× lm-eval HFLM requests/s, multi-token options", _fmt(multi, "{:.2f}×"), verdict(multi, lambda v: v >= 1.3)),
        ("per-option |Δ log-likelihood| ≤ 1e-2 in bf16", _fmt(dll, "{:.1e}"), verdict(dll, lambda v: v <= 1e-2)),
        ("end to end: lm-eval CLI seconds / metabench seconds, one-token and multi-token options (context)",
         " and ".join(_fmt(v, "{:.2f}×") for v in ends), "context"),
        ("first GPU work ≤ 5 s after start, warm hash memo", _fmt(warm, "{:.1f} s") + (f" (model load {load:.1f} s)" if load is not None else ""),
         verdict(warm, lambda v: v <= 5)),
        ("encoder fine-tune step bf16 autocast ≥ 1.8× fp32", _fmt(bf16, "{:.2f}×") + (f" (F1 {f1[0]:.4f} → {f1[1]:.4f})" if None not in f1 else ""),
         verdict(bf16, lambda v: v >= 1.8)),
        ("tagger: 1,000 LoRA sentences + 1,000 constrained decodes ≤ 60 s", _fmt(tagger, "{:.1f} s"), verdict(tagger, lambda v: v <= 60)),
        ("grammar ≤ 10 % of a decoding step", _fmt(grammar, "{:.1%}"), verdict(grammar, lambda v: v <= 0.10)),
        ("projected: Meta4XNLI T12/T13 recipe, 8B shape, one seed", _fmt(hours[0], "{:.1f} h"), "projection"),
        ("projected: `--tasks core` scoring, 8B shape", _fmt(hours[1], "{:.1f} h"), "projection"),
    ]


def _machine(report: dict) -> tuple:
    """The calls of one GPU check split over several calls (``--only``) share card, driver, versions and day."""
    env = report.get("environment", {})
    return (env.get("card"), env.get("driver"), env.get("torch"), env.get("transformers"), env.get("lm_eval"),
            str(env.get("date", ""))[:10])


def merged(paths: list[Path]) -> list[tuple[list[Path], dict]]:
    """The committed JSONs, those of one machine and day as one run: a path measured in two calls is an error
    (which one would the table show?)."""
    runs: dict[tuple, tuple[list[Path], dict]] = {}
    for path in paths:
        report = json.loads(path.read_text())
        names, run = runs.setdefault(_machine(report), ([], {**report, "paths": {}}))
        twice = sorted(set(run["paths"]) & set(report.get("paths", {})))
        if twice:
            raise SystemExit(f"{path}: {', '.join(twice)} measured again in {', '.join(n.name for n in names)}; "
                             "keep one JSON per path and machine-day")
        names.append(path)
        run["paths"].update(report.get("paths", {}))
    return list(runs.values())


def block() -> str:
    reports = sorted(RESULTS.glob("gpu-*.json"))
    lines = [BEGIN]
    if not reports:
        lines.append("No GPU run is committed yet, so every GPU target is open. A run of `bash benchmarks/gpu_check.sh` "
                     "on a GPU machine writes the JSON; commit it as `benchmarks/results/gpu-<card>-<date>.json`.")
    for paths, report in merged(reports):
        env = report.get("environment", {})
        files = " + ".join(f"**{path.name}**" for path in paths)
        lines += ["", f"{files}: {env.get('card', '?')}, driver {env.get('driver', '?')}, torch {env.get('torch', '?')}, "
                      f"transformers {env.get('transformers', '?')}, lm-eval {env.get('lm_eval', '?')}, "
                      f"{str(env.get('date', '?'))[:10]}; random-weight models of real shapes "
                      "(timings and scorer agreement are real, accuracies are not)", "",
                  "| target | measured | verdict |", "|---|---|---|"]
        lines += [f"| {target.replace('|', chr(92) + '|')} | {measured} | {verdict} |" for target, measured, verdict in rows(report)]
    lines.append(END)
    return "\n".join(lines)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--write", action="store_true")
    parser.add_argument("--check", action="store_true")
    args = parser.parse_args(argv)
    text = PAGE.read_text(encoding="utf-8")
    start, end = text.index(BEGIN), text.index(END) + len(END)
    new = text[:start] + block() + text[end:]
    if args.check:
        if new != text:
            print(f"{PAGE}: the GPU results table is stale: run python benchmarks/gpu_table.py --write", file=sys.stderr)
            return 1
        return 0
    if args.write:
        PAGE.write_text(new, encoding="utf-8")
    else:
        print(block())
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
