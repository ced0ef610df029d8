"""Loader for the example sentences (shipped inside the package: the spec's ``root`` points at them)."""

from __future__ import annotations

from metabench.plugin_api import read_table, TextItem


def load(ctx, split: str) -> list[TextItem]:
    path = ctx.path("sentences.tsv")
    return [
        TextItem(id=row["id"], text=row["sentence"], label=row["label"])
        for _line, row in read_table(path, delimiter="\t")
        if row["split"] == split
    ]
