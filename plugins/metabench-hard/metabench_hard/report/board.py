"""The leaderboard's hardness section: every VUA-Verb run by phi bin of each phi table found beside the runs.

Registered by ``hard/plugin.py`` as the board section ``hardness`` (``reads="hard_phi.json"``: the tables
``metabench hard vua-phi --save`` writes), with its own views: ``templates/hardness.html`` on the site and
``markdown.lines`` in leaderboard.md (the reporters call them through the board's ``section_views``).
"""

from __future__ import annotations

from typing import Any, Union

from pydantic import BaseModel, Field

from metabench.plugin_api import BoardInputs, BoardSection, slug
from ..phi_table import find_tables
from .hardness import hardness_rows


Number = Union[int, float]


class PhiTableInfo(BaseModel):
    """A phi table found beside the runs: whose SOR model, trained how long, covering which items."""

    label: str = Field(description="how the table is named")
    sor_model: str = Field(description="the SOR model's encoder")
    sor_steps: int = Field(description="SOR training steps (the paper's: 900)")
    sor_wall_seconds: Number | None = Field(None, description="SOR training wall time")
    items_with_phi: int = Field(description="items the table gives a phi")
    differs: str = Field(description="SOR settings that differ from the paper's, besides steps")
    dataset: str = Field(description="the dataset the phi covers")
    split: str = Field(description="its split")


class HardnessRow(BaseModel):
    """A VUA-Verb run broken down by phi bin of one table (`hardness.hardness_rows`, local paths left out)."""

    phi_source: str = Field(description="the phi table's label")
    sor_model: str = Field(description="its SOR model")
    sor_steps: int = Field(description="its SOR steps")
    task: str = Field(description="the run's task")
    model: str = Field(description="the run's model")
    seed: int = Field(description="the seed broken down (the run's first)")
    partial: bool = Field(description="a partial run")
    items: int = Field(description="test items")
    items_with_phi: int = Field(description="of which with a phi")
    confidence: Number = Field(description="the Wilson intervals' confidence")
    bins: list[dict[str, Any]] = Field(description="per phi bin: items, metaphors, recall and precision with intervals")
    model_slug: str = Field(description="the model's page")
    task_slug: str = Field(description="the task's page")


class HardnessSection(BaseModel):
    """The section's data: typed by this family (board sections are typed by the plugin that registers them)."""

    tables: list[PhiTableInfo]
    rows: list[HardnessRow]


def hardness_section(inputs: BoardInputs) -> BoardSection:
    """Per phi table (a SOR model's phi of VUA-Verb test items), every ranked VUA-Verb run by phi bin."""
    phi_tables = find_tables(list(inputs.sources))
    tables = [{"label": t["label"], "sor_model": t["sor_model"], "sor_steps": t["sor_steps"],
               "sor_wall_seconds": t.get("sor_wall_seconds"), "items_with_phi": len(t["phi"]),
               "differs": ", ".join(f"{k}={v}" for k, v in sorted(t.get("sor_changed", {}).items()) if k != "steps"),
               "dataset": t["dataset"], "split": t["split"]} for t in phi_tables]
    rows = hardness_rows(inputs.runs, phi_tables, inputs.options.confidence)
    for row in rows:
        row["model_slug"], row["task_slug"] = slug(row["model"]), slug(row["task"])
        row.pop("run"), row.pop("table")  # local paths: the published files name none
    return BoardSection(HardnessSection(tables=tables, rows=rows))
