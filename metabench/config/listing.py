"""`metabench ls tasks`: hundreds of tasks shown by family, so the listing is read, not scrolled.

A family is the folder a task file sits in (``tasks/<family>/``). A small family lists its tasks; a large one
(the Boisson grid, every Meta4XNLI cell) is one line with its tags, the names a user selects a slice of it by,
and `metabench ls tasks FAMILY` lists it whole. Any --tasks selection lists flat: `ls tasks core`, `ls tasks all`.
"""

from __future__ import annotations

from .index import TaskIndex

#: A family with more tasks than this is summarised by its tags instead of listed.
LISTED_UP_TO = 25


def family_lines(index: TaskIndex, verbose: bool = False) -> list[str]:
    """Every family: a heading with its count, then its tasks (or, for a large family, its tags)."""
    lines = []
    for family, names in index.families.items():
        kinds = _counted(index.tasks[n].config.kind for n in names)
        lines += ["", f"{family} ({len(names)} task{'s' * (len(names) != 1)}: {kinds})"]
        if len(names) <= LISTED_UP_TO:
            lines += ["  " + line for line in task_table(index, names, verbose)]
            continue
        inside = set(names)
        tags = [(tag, len(members)) for tag, members in index.tags.items()
                if set(members) <= inside and len(members) < len(names) and tag != family]
        shown = ", ".join(f"{tag} ({count})" for tag, count in sorted(tags, key=lambda t: (-t[1], t[0]))[:12])
        if tags:
            lines.append(f"  select a part by tag: {shown}{' ...' if len(tags) > 12 else ''}")
        lines.append(f"  every task: metabench ls tasks {family}")
    families = len(index.families)
    lines += ["", f"{len(index.tasks)} tasks in {families} families. --tasks takes a family, group, tag, task, glob "
              "or all; `metabench ls tasks SELECTION` lists one (`ls tasks core`: the core suite)"]
    return lines[1:]


def task_table(index: TaskIndex, names: list[str], verbose: bool = False) -> list[str]:
    from tabulate import tabulate

    rows = [[n, index.tasks[n].config.kind, index.tasks[n].config.dataset, ",".join(index.tasks[n].config.tag)]
            + ([index.tasks[n].config.metadata.source] if verbose else []) for n in names]
    return tabulate(rows, headers=["task", "kind", "dataset", "tags"] + (["source"] if verbose else [])).split("\n")


def _counted(values) -> str:
    counts: dict[str, int] = {}
    for value in values:
        counts[value] = counts.get(value, 0) + 1
    return ", ".join(f"{value} {count}" for value, count in sorted(counts.items(), key=lambda c: (-c[1], c[0])))
