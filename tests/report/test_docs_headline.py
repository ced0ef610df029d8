"""The headline table prints the runs' own numbers: mean ± std, seeds against the protocol, summed wall time."""

from __future__ import annotations

from metabench.report.docs_blocks import DocsContext
from metabench.report.docs_headline import headline_table
from metabench.report.runs import find_runs


def test_headline_rows_come_from_the_runs(report_registry, toy_runs):
    context = DocsContext(toy_runs, report_registry)
    [run] = [r for r in find_runs([toy_runs]) if r.task == "toy_tag" and r.model == "random"]
    header, _, row, missing = headline_table(context, model="random", tasks="toy_tag;no_such_task")
    cells = [c.strip() for c in row.strip("|").split("|")]
    value = run.aggregate("span_f1")
    assert cells[:5] == ["toy_tag", "span_f1", f"{value['mean']:.4f} ± {value['std']:.4f}", "2 of 2",
                         f"{run.n_items:,}"]
    assert cells[5] == f"{run.results['timings']['total_s'] / 60:.1f} min"
    assert "no complete committed run" in missing and "wall time" in header
