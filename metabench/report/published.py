"""Published results of other systems, shown beside metabench's runs and never ranked with them.

A reader who sees "MiniLM: 0.62 token F1 on VUA-18" needs to know where published systems stand on the
same task and metric, and whether their number was measured the same way. ``published_results.yaml`` holds
those numbers as data, one entry per (task, system): the value as printed, the metric as its source defines
it, whether the protocol matches metabench's task (same split, same metric definition) and if not how it
differs, and the citation. They appear on task pages and in ``metabench compare published``, always
labelled "published, not re-run here": no test pairs them with our runs (their items and predictions are
not ours), so they get no rank and no ★.

A decoder's number (the field's LLM results) says how the model answered (``answering``: zero-shot, k-shot or
fine-tuned; scored or generated), as our decoder rows do, and what a reader must know beside it: whether the paper
scored a sample of the test set or another pool (``sample``), another metric than the task's (``other_metric``),
and what spread it gave (``interval``; none of these papers gives an interval). :attr:`Published.caveats` turns
them into the few words printed beside the number on the board and in ``compare published``.

The file is validated strictly (unknown keys with the closest valid one, file:line errors), so a typo
cannot silently drop a field.
"""

from __future__ import annotations

import difflib
import re
from functools import lru_cache
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from ..config.yamlsource import load_located
from ..errors import ConfigError

PUBLISHED_FILE = Path(__file__).with_name("published_results.yaml")
#: How a published decoder answered: the words our decoder rows use (`answering_label.way`), or "not stated".
ANSWERING = re.compile(r"fine-tuned|(zero-shot|few-shot|\d+-shot) (scored|generated|scored or generated \(not stated\))")


class Published(BaseModel):
    """One published number for one metabench task (or aggregate group)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    task: str = Field(description="the metabench task or aggregate group the number is for")
    system: str = Field(description="the published system, as its source names it")
    value: float = Field(description="the number as printed")
    scale: Literal["percent", "fraction"] = Field(description="how the number is printed")
    metric: str = Field(description="the metabench metric it corresponds to (the task's primary metric, usually)")
    definition: str = Field(description="the metric as the source defines it")
    protocol: Literal["same", "differs", "unclear"] = Field(description="same split and metric definition as metabench?")
    differences: str = Field("", description="how the protocol differs (required unless protocol is same)")
    citation: str = Field(description="the paper (or release) the number comes from")
    source: str = Field(description="where in it: table, section, README")
    answering: str | None = Field(None, description="a decoder's number: how it answered (zero-shot, k-shot or "
                                  "fine-tuned; scored or generated); absent for an encoder's")
    sample: str = Field("", description="a decoder's number: how the items it scored differ from the task's test "
                        "split (a sample, another pool); empty when they are the split")
    other_metric: str = Field("", description="a decoder's number: how the paper's metric differs from the task's "
                              "metric; empty when it is the same")
    interval: str = Field("", description="a decoder's number: the spread the paper gives (an SD over prompts, "
                          "over runs); empty when it gives none")

    @model_validator(mode="after")
    def _explained(self):
        if self.protocol != "same" and not self.differences.strip():
            raise ValueError(f"protocol is '{self.protocol}' but 'differences' does not say how")
        if self.answering is not None and not ANSWERING.fullmatch(self.answering):
            raise ValueError(f"answering '{self.answering}' is not 'fine-tuned' or '<zero-shot|few-shot|K-shot> "
                             "<scored|generated|scored or generated (not stated)>'")
        if self.answering is None and (self.sample or self.other_metric or self.interval):
            raise ValueError("sample, other_metric and interval describe a decoder's number: give its 'answering'")
        if self.scale == "percent" and not 0 <= self.value <= 100 or self.scale == "fraction" and not 0 <= self.value <= 1:
            raise ValueError(f"value {self.value} is outside the range of a {self.scale}")
        return self

    @property
    def fraction(self) -> float:
        """The value on metabench's scale (metrics are fractions)."""
        return self.value / 100 if self.scale == "percent" else self.value

    @property
    def caveats(self) -> list[str]:
        """What is printed beside a decoder's number: its sample, its other metric, and that it has no interval
        (with the spread the paper gave, if any); [] for an encoder's number (its protocol says enough)."""
        if self.answering is None:
            return []
        found = [self.sample] if self.sample else []
        found += [f"another metric: {self.other_metric}"] if self.other_metric else []
        return found + ["no interval" + (f" ({self.interval})" if self.interval else "")]

    def as_dict(self) -> dict:
        return {**self.model_dump(), "fraction": self.fraction, "caveats": self.caveats}


def load_published(path: Path = PUBLISHED_FILE) -> list[Published]:
    """Every entry of a published-results file, validated; a mistake is a `ConfigError` naming file:line."""
    return list(_load(Path(path)))


@lru_cache(maxsize=4)
def _load(path: Path) -> tuple[Published, ...]:
    located = load_located(path)
    if not isinstance(located.data, list):
        raise ConfigError(f"{path}:1: expected a list of published results (one '- task: ...' entry each)")
    fields = list(Published.model_fields)
    entries = []
    for index, raw in enumerate(located.data):
        where = located.where((index,), str(path))
        if not isinstance(raw, dict):
            raise ConfigError(f"{where}: expected an entry with the keys {', '.join(fields)}")
        for key in raw:
            if key not in fields:
                close = difflib.get_close_matches(str(key), fields, n=1)
                raise ConfigError(f"{located.where((index, key), str(path))}: unknown key '{key}'",
                                  hint=f"did you mean '{close[0]}'?" if close else f"valid keys: {', '.join(fields)}")
        try:
            entries.append(Published.model_validate(raw))
        except ValidationError as exc:
            error = exc.errors()[0]
            key = error["loc"][0] if error["loc"] else None
            spot = located.where((index, key) if key is not None else (index,), str(path))
            text = "missing key " + repr(key) if error["type"] == "missing" else error["msg"].removeprefix("Value error, ")
            raise ConfigError(f"{spot}: {text}",
                              hint=f"entry {index + 1} ({raw.get('system', '?')} on {raw.get('task', '?')}); "
                              "the keys are documented in metabench/report/published.py") from None
    return tuple(entries)


def for_task(entries: list[Published], task: str, groups: tuple[str, ...] | list[str] = ()) -> list[dict]:
    """The entries for a task and for the aggregate groups it belongs to (each marked with what it is for)."""
    return [{**e.as_dict(), "for_group": e.task != task} for e in entries if e.task == task or e.task in groups]


def beside_runs(entries: list[Published], runs, groups: list[dict], registry=None) -> list[dict]:
    """For ``compare published``: each entry whose task (or group) the runs cover, with every model's value
    on the entry's metric (complete runs; a group's mean from ``groups.group_rows``) and Δ = ours − published.

    With a ``registry``, a row on the runs' primary metric also carries the best constant answer on the same
    items with the ≈ chance mark (``trivial.beside``, the rule the docs' headline table uses) and, per run, the
    probable answer-format failure flag of a decoder (``trivial.below_chance``) or a classifier's collapsed fit
    (``trivial.collapsed_fit``)."""
    from .trivial import below_chance, beside, collapsed_fit
    from .unread import run_rate

    ours: dict[str, list[dict]] = {}
    for run in runs:
        if not run.partial:
            ours.setdefault(run.record.task.name, []).append({"model": run.record.model.spec, "seeds": len(run.record.seeds), "runs": [run],
                                                  "aggregate": {name: summary.as_json() for name, summary
                                                                in run.record.metrics.aggregate.items()}})
    for row in groups:
        if not row["missing"]:
            members = [r for r in runs if not r.partial and r.record.model.spec == row["model"] and r.record.task.name in row["member_tasks"]]
            ours.setdefault(row["group"], []).append({"model": row["model"], "seeds": None, "runs": members,
                                                      "aggregate": row["aggregate"]})
    rows = []
    for entry in entries:
        for mine in ours.get(entry.task, []):
            value = (mine["aggregate"].get(entry.metric) or {})
            if value.get("mean") is None:
                continue
            rates = [rate for rate in map(run_rate, mine["runs"]) if rate is not None]
            row = {**entry.as_dict(), "model": mine["model"], "seeds": mine["seeds"], "ours": value["mean"],
                   "ours_std": value.get("std"), "delta": value["mean"] - entry.fraction, "constant": None, "flags": [],
                   "unread": sum(rates) / len(rates) if rates else None}
            if registry is not None and mine["runs"] and all(r.record.primary_metric == entry.metric for r in mine["runs"]):
                row["constant"] = beside(registry, mine["runs"], value["mean"])
                row["flags"] = [f"{r.record.task.name}: {flag}" for r in mine["runs"]
                                if (flag := below_chance(registry, r) or collapsed_fit(r)) is not None]
            rows.append(row)
    return rows


def format_beside(rows: list[dict]) -> str:
    from tabulate import tabulate

    from .trivial import ALPHA, COLLAPSE_RULE, FORMAT_RULE
    from .unread import LEGEND, beside

    if not rows:
        return "published: no published result for the tasks or groups of these runs (metabench/report/published_results.yaml)"
    table = [[r["task"], r["metric"], r["system"],
              f"{r['fraction']:.4f}" + (f" ({'; '.join(r['caveats'])})" if r.get("caveats") else ""),
              r["protocol"] + (f", {r['answering']}" if r.get("answering") else ""),
              r["model"] + (f" [{r['seeds']} seed{'s' if r['seeds'] != 1 else ''}]" if r["seeds"] else " [group mean]"),
              beside(f"{r['ours']:.4f}" + (f" ± {r['ours_std']:.4f}" if r["ours_std"] else ""), r.get("unread")),
              f"{r['delta']:+.4f}",
              r.get("constant") or "—"]
             for r in rows]
    lines = ["Published, not re-run here: never ranked with our runs (Δ = ours − published).",
             tabulate(table, headers=["task", "metric", "published system", "published", "protocol", "our model",
                                      "ours (mean ± std)", "Δ", "best constant answer, same items"],
                      disable_numparse=True), ""]
    seen = set()
    for r in rows:
        if (r["task"], r["system"]) not in seen:
            seen.add((r["task"], r["system"]))
            lines.append(f"{r['task']} · {r['system']}: {r['citation']} ({r['source']})"
                         + (f"; protocol {r['protocol']}: {r['differences']}" if r["differences"] else ""))
    if any(r.get("answering") for r in rows):
        lines.append("A published decoder's protocol says how it answered (zero-shot, k-shot or fine-tuned; scored or "
                     "generated); beside its number, whether the paper scored a sample or another pool, another "
                     "metric, and that it gave no interval.")
    if any(r.get("unread") is not None for r in rows):
        lines.append(LEGEND + ".")
    flags = list(dict.fromkeys(f"{r['model']} on {flag}" for r in rows for flag in r.get("flags", [])))
    if flags:
        lines += ["", f"rule: {FORMAT_RULE}", f"rule: collapsed fit: {COLLAPSE_RULE}", *(f"flag: {flag}" for flag in flags)]
    if any(r.get("constant") for r in rows):
        lines.append("best constant answer: every gold label answered for every item, scored on the run's own items "
                     "and golds (a k-fold group: per fold, then their mean); ≈ chance: not significantly better "
                     f"by compare's paired test at alpha {ALPHA} (docs/reporting.md)")
    return "\n".join(lines)
