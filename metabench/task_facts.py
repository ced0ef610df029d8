"""What a run records about its task beyond the config: every dataset it uses, the groups it averages into and
the paper-table cells it fills.

The reporter reads only run files (see ``metabench.report``): a leaderboard built on another machine, or
where the plugin that made a run is not installed, has no registry or task index to ask. So the runner
writes these facts into ``results.json`` (``task.datasets``, ``task.groups``, ``task.paper_view``) at the
moment it still knows them, and every report takes them from there.
"""

from __future__ import annotations

from .errors import MetabenchError


def datasets_used(registry, slices: dict[str, list[tuple[str, str, dict]]]) -> list[dict]:
    """Every dataset any split role reads, with its roles, licence and citation (cross-domain and
    SICK-trained tasks use two) from the task's slices per split role (``LoadedTask.slices``), and for a
    `datasets` source its path, revision and fingerprints. A dataset this registry does not know is credited
    with empty fields."""
    roles: dict[str, list[str]] = {}
    for role, resolved in slices.items():
        for dataset, _, _ in resolved:
            if role not in roles.setdefault(dataset, []):
                roles[dataset].append(role)
    out = []
    for name, used_as in roles.items():
        try:
            spec = registry.get("dataset", name).target
        except MetabenchError:
            spec = None
        entry = {"name": name, "roles": used_as, "licence": getattr(spec, "licence", "") or "",
                 "citation": getattr(spec, "citation", "") or ""}
        source = getattr(spec, "source", None)
        if source is not None:  # a datasets source: what it was and which commit and fingerprints were read
            entry["source"] = {k: source[k] for k in ("path", "name", "revision", "requested_revision",
                                                      "data_files", "fingerprints")}
        out.append(entry)
    return out


def task_facts(registry, task) -> dict:
    """The ``task.datasets``, ``task.groups`` and ``task.paper_view`` entries of a run's results (``task`` is a
    `LoadedTask` from `TaskIndex.load`, which found its groups)."""
    return {
        "datasets": datasets_used(registry, task.slices),
        "groups": task.groups,
        "paper_view": [binding.model_dump(mode="json") for binding in task.config.metadata.paper_views()],
    }
