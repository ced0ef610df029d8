"""docs/hard-metaphors.md's results tables, generated from committed runs and gap reports (`metabench report docs`).

The gap tables read the reports `metabench hard gap ... --json` wrote under ``<runs>/hard_gap/`` (the test
statistics and the per-phi-bin rates, computed from the two runs named inside); the detector table reads the
runs themselves.
"""

from __future__ import annotations

import json

from metabench.plugin_api import REDUCED, docs_table as markdown, docs_names as names


def _reports(context, tasks: str) -> list[dict]:
    folder = context.runs_dir / "hard_gap"
    return [json.loads((folder / f"gap_{task}.json").read_text(encoding="utf-8")) for task in names(tasks)]


def _p(value: float) -> str:
    return f"{value:.2g}" if value < 0.001 else f"{value:.2f}"


def gap_table(context, tasks: str) -> list[str]:
    """One detector on HARD(M) vs VUA-Verb: precision and recall, the gap, Welch's t and the z-test, per report."""
    rows, paper = [], None
    for report in _reports(context, tasks):
        paper = report.get("paper", paper)
        # reports written before the tests took distinct sentences counted every copy of a repeated negative
        tested = report.get("unit", "items, copies counted (report predates distinct units)")
        for test in report["tests"]:
            unit = "predicted metaphors" if test["metric"] == "precision" else "metaphors"
            rows.append([report["hard_run"]["task"], test["metric"], f"{test['vua']:.3f}", f"{test['hard']:.3f}",
                         f"{test['gap']:+.3f}", f"{test['t']:.2f}, {_p(test['p_t'])}", f"{test['z']:.2f}, {_p(test['p_z'])}",
                         f"{test['n_vua']:,} / {test['n_hard']:,} {unit}", tested])
    if paper:
        for metric in ("precision", "recall"):
            values = paper[metric]
            rows.append([f"*paper: {paper['model'].split(':')[0]}*", f"*{metric}*", f"*{values['vua']:.3f}*",
                         f"*{values['hard']:.2f}*", f"*{values['gap']:+.2f}*", "*p < 0.001*", "", "", ""])
    return markdown(["HARD task", "metric", "VUA-Verb", "HARD", "gap (HARD − VUA)", "Welch t, p", "z, p",
                     "units VUA / HARD", "HARD units tested"], rows)


def bins_table(context, tasks: str) -> list[str]:
    """Recall on HARD(M) by phi bin (the paper's Fig 5b), metaphors per bin in brackets."""
    reports = _reports(context, tasks)
    bins = sorted({b["phi_bin"] for r in reports for b in r["hard_by_phi"]})
    rows = []
    for report in reports:
        found = {b["phi_bin"]: b for b in report["hard_by_phi"]}
        rows.append([report["hard_run"]["task"], *(f"{found[b]['recall']:.3f} ({found[b]['metaphors']})" if b in found
                                                   else "—" for b in bins)])
    return markdown(["HARD task", *(f"phi {b}" for b in bins)], rows)


def detector_table(context, task: str) -> list[str]:
    """Every committed run of one task: precision, recall, F1, accuracy, macro-F1 (first seed's mean over seeds)."""
    rows = []
    for run in context.runs:
        if run.record.task.name != task:
            continue
        value = lambda metric: f"{run.record.mean(metric):.3f}" if run.record.aggregate(metric) else "—"  # noqa: E731
        section = run.record.task.config.protocol.section(run.record.protocol)
        protocol_seeds = section.seeds if section is not None and isinstance(section.seeds, int) else None
        why = [f"{len(run.record.seeds)} of {protocol_seeds} seeds"] if protocol_seeds and len(run.record.seeds) < protocol_seeds else []
        why += ["reduced training"] if any(key in run.record.model.spec for key in REDUCED) else []
        why += ["--limit"] if run.partial else []
        rows.append([run.record.model.spec, *(value(m) for m in ("precision", "recall", "f1", "accuracy", "macro_f1")),
                     "PARTIAL: " + ", ".join(why) if why else "full"])
    return markdown(["model", "precision", "recall", "F1", "accuracy", "macro-F1", "status"], rows)


def phi_bins_table(context, tables: str, model: str, task: str = "vua_verb") -> list[str]:
    """One VUA-Verb run by phi bin of each committed phi table (``hard vua-phi --save``): recall (metaphors)
    [95 % Wilson interval] and precision (predicted metaphors), first seed, as `compare hardness --phi-table`."""
    from ..phi_table import load_table  # noqa: PLC0415
    from .hardness import hardness_row  # noqa: PLC0415

    run = next(r for r in context.runs if r.record.task.name == task and r.record.model.spec == model)
    found = [hardness_row(run, load_table(context.runs_dir / "hard_phi" / name)) for name in names(tables)]
    bins = list(dict.fromkeys(b["phi_bin"] for row in found for b in row["bins"]))
    rows = []
    for name in bins:
        cells = []
        for row in found:
            b = next((b for b in row["bins"] if b["phi_bin"] == name), None)
            if b is None:
                cells += ["—", "—"]
                continue
            low, high = b["recall_ci"]
            recall = "—" if b["recall"] is None else f"{b['recall']:.3f} ({b['metaphors']:,}) [{low:.2f}, {high:.2f}]"
            precision = "—" if b["precision"] is None else f"{b['precision']:.3f} ({b['predicted_metaphors']:,})"
            cells += [recall, precision]
        rows.append([name, *cells])
    header = ["phi bin"]
    for row in found:
        header += [f"{row['phi_source']}: recall", "precision"]
    return markdown(header, rows)
