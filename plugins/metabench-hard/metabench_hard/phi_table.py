"""Portable phi tables: the phi of VUA-Verb test items under one SOR model, as a file that travels with runs.

The phi of an item lives in the cache of the machine that trained the SOR (``hard vua-phi`` writes it into the
HARD(M) build). ``metabench hard vua-phi --save leaderboard/runs`` also writes it as ``hard_phi.json`` under
``<dir>/hard_phi/<name>/``, beside the runs, so that ``compare hardness --phi-table`` and the leaderboard (which finds the
tables below the run folders it is given) can break any VUA-Verb run down by hardness on a machine without
that cache. The table names the SOR model, its settings (steps above all: a 150-step SOR is not the paper's) and
the build, and holds only ids and phi values: no text or label from the data.
"""

from __future__ import annotations

import json
from dataclasses import asdict
from pathlib import Path

from metabench.plugin_api import escape, MetabenchError, read_text, write_inside

TABLE_FILE = "hard_phi.json"
FORMAT = "metabench-hard-phi/1"


def table_name(model: str, sor_changed: dict, mine_changed: dict) -> str:
    """Folder name of a table: the model's short name, then every non-default SOR and mining setting."""
    base = model.split(":", 1)[-1].replace("pretrained=", "").replace("/", "_")
    extra = [f"{k}={v}" for k, v in sorted({**sor_changed, **mine_changed}.items())]
    return "_".join([base, *extra])


def label(model: str, settings, mine_changed: dict | None = None) -> str:
    """'SOR(hf:minilm-l6), 900 steps' (+ other non-default settings): how every table and page names its source."""
    changed = {k: v for k, v in settings.changed().items() if k != "steps"}
    extra = "".join(f", {k}={v}" for k, v in sorted({**changed, **(mine_changed or {})}.items()))
    return f"SOR({model}), {settings.steps} steps{extra}"


def make_table(model: str, settings, mine, build: Path, vua_rows: list[dict], counts: dict) -> dict:
    """The table of one build: VUA-Verb test ids with a phi (the rest counted in ``counts``)."""
    from .store import MineSettings  # noqa: PLC0415

    meta = json.loads((build / "build.json").read_text(encoding="utf-8"))
    mine_changed = {k: v for k, v in asdict(mine).items() if getattr(MineSettings(), k) != v}
    return {
        "format": FORMAT,
        "label": label(model, settings, mine_changed),
        "sor_model": model,
        "sor_steps": settings.steps,
        "sor_settings": asdict(settings),
        "sor_changed": settings.changed(),
        "sor_wall_seconds": meta.get("sor_wall_seconds"),
        "mine_settings": asdict(mine),
        "mine_changed": mine_changed,
        "sor_key": meta["sor_key"],
        "build": build.name,
        "dataset": "vua_verb",
        "split": "test",
        "counts": counts,
        "phi": {r["id"]: r["phi"] for r in vua_rows if r["phi"] is not None},
    }


def save_table(table: dict, out_dir: Path) -> Path:
    """The table under ``out_dir`` (``--save DIR``), never through a symlink out of it (:mod:`metabench.safe_paths`)."""
    folder = out_dir / "hard_phi" / table_name(table["sor_model"], table["sor_changed"], table["mine_changed"])
    out_dir.mkdir(parents=True, exist_ok=True)
    path = folder / TABLE_FILE
    write_inside(out_dir, path, json.dumps(table, indent=1, sort_keys=True) + "\n")
    return path


#: What every reader of a table takes from it (the hardness rows, the board's section), with its type.
_FIELDS = {"label": str, "sor_model": str, "sor_steps": int, "dataset": str, "split": str}


def load_table(path: Path) -> dict:
    """A table from its file or its folder; a clear error for anything else."""
    file = path / TABLE_FILE if path.is_dir() else path
    try:
        table = json.loads(read_text(file))
    except FileNotFoundError:
        raise MetabenchError(f"{file}: no phi table here",
                             hint="write one with: metabench hard vua-phi --model M --save leaderboard/runs") from None
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise MetabenchError(f"{file}: not a readable phi table ({exc})") from None
    if not isinstance(table, dict) or table.get("format") != FORMAT or not isinstance(table.get("phi"), dict):
        raise MetabenchError(f"{file}: not a phi table (expected \"format\": \"{FORMAT}\" and a \"phi\" mapping)",
                             hint="write one with: metabench hard vua-phi --model M --save leaderboard/runs")
    wrong = [key for key, kind in _FIELDS.items() if not isinstance(table.get(key), kind) or isinstance(table.get(key), bool)]
    if wrong:
        raise MetabenchError(f"{escape(file)}: not a phi table: \"{wrong[0]}\" is {escape(repr(table.get(wrong[0]))[:80])}, "
                             f"not {_FIELDS[wrong[0]].__name__ if isinstance(_FIELDS[wrong[0]], type) else 'a number'}",
                             hint="write one with: metabench hard vua-phi --model M --save leaderboard/runs")
    if table["dataset"] != "vua_verb" or table["split"] != "test":
        raise MetabenchError(f"{escape(file)}: a phi table of {escape(table['dataset'])} {escape(table['split'])} items; "
                             "metabench builds them for vua_verb test items only",
                             hint="write one with: metabench hard vua-phi --model M --save leaderboard/runs")
    bad = [k for k, v in table["phi"].items() if isinstance(v, bool) or not isinstance(v, (int, float)) or not 0 <= v <= 1]
    if bad:
        raise MetabenchError(f"{file}: phi of item {bad[0]!r} is {table['phi'][bad[0]]!r}, not a number in [0, 1]")
    table["path"] = str(file)
    return table


def find_tables(paths: list[Path]) -> list[dict]:
    """Every phi table below ``paths`` (folders searched recursively, files taken as they are), sorted by path."""
    files = []
    for path in paths:
        if path.is_file():
            if path.name == TABLE_FILE:
                files.append(path)
        elif path.is_dir():
            files.extend(p for p in path.rglob(TABLE_FILE)
                         if not any(part.startswith(".") for part in p.relative_to(path).parts))
    return [load_table(f) for f in sorted(set(files))]


def cached_table(registry, model: str, sor_text: str = "", mine_text: str = "") -> dict:
    """The table of this machine's HARD(model) build: VUA-Verb test phi (after ``hard vua-phi``) and the phi of
    the build's own instances under their HARD item ids (``hard:<id>``), so hard_mi runs break down too."""
    from .sor import SORSettings  # noqa: PLC0415
    from .store import find_build, parse_mine_settings  # noqa: PLC0415
    from .vua_phi import PHI_FILE  # noqa: PLC0415

    settings, mine = SORSettings.parse(sor_text), parse_mine_settings(mine_text)
    build = find_build(model, settings, mine, registry)
    vua_file = build / PHI_FILE
    vua_rows = [json.loads(line) for line in vua_file.read_text(encoding="utf-8").splitlines()] if vua_file.is_file() else []
    table = make_table(model, settings, mine, build, vua_rows, {"vua_phi_computed": vua_file.is_file()})
    for line in (build / "instances.jsonl").read_text(encoding="utf-8").splitlines():
        row = json.loads(line)
        if row["phi"] is not None:
            table["phi"][f"hard:{row['id']}"] = row["phi"]
    table["datasets"] = [table["dataset"], "hard_metaphors"]
    table["path"] = str(build)
    return table


def datasets(table: dict) -> list[str]:
    """The datasets whose items a table holds the phi of: VUA-Verb's (a portable table), and a build's own
    instances too (`cached_table`)."""
    return list(table.get("datasets") or [table["dataset"]])
