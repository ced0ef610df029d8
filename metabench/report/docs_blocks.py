"""Results tables in docs/ are generated from committed runs, never typed: `metabench report docs`.

A page marks each generated table with an opening and a closing comment; the opening names the table and its
arguments::

    <!-- generated: boisson-views model=hf:minilm-l6 (metabench report docs) -->
    | cell | ... |
    <!-- end generated -->

`regenerate` replaces every such body with what the named generator prints from the runs today, and
`metabench report docs --check` (and the test that calls it) fails when a page differs, so a number in a
results table can only change with the runs it comes from. Generators are looked up by name in ``TABLES``
(lazy ``module:function`` targets, so importing this module imports no report code); each takes the
`DocsContext` and the block's arguments and returns the table's Markdown lines.
"""

from __future__ import annotations

import difflib
import importlib
import re
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path

from ..bounded_read import read_text
from ..errors import MetabenchError, did_you_mean
from ..safe_paths import inside, write_text

#: table name -> "module:function" (the function: (DocsContext, **args) -> list of Markdown lines)
TABLES = {
    "boisson-views": "metabench.report.docs_artifacts:views_table",
    "boisson-gameability": "metabench.report.docs_artifacts:gameability_table",
    "boisson-majority": "metabench.report.docs_artifacts:majority_table",
    "boisson-baselines": "metabench.report.docs_artifacts:baselines_table",
    "boisson-samples": "metabench.report.docs_artifacts:samples_table",
    "boisson-paper-f1": "metabench.report.docs_artifacts:paper_f1_table",
    "paired-effects": "metabench.report.docs_paraphrase:paired_effects_table",
    "hard-gap": "metabench.report.docs_hard:gap_table",
    "hard-bins": "metabench.report.docs_hard:bins_table",
    "hard-detector": "metabench.report.docs_hard:detector_table",
    "hard-phi-bins": "metabench.report.docs_hard:phi_bins_table",
    "headline": "metabench.report.docs_headline:headline_table",
    "suite": "metabench.report.docs_suite:suite_table",
    "dry-run": "metabench.report.docs_suite:dry_run_block",
    "decoder-taggers": "metabench.report.docs_decoders:taggers_table",
    "calibration": "metabench.report.docs_calibration:calibration_table",
    "gate-false-fails": "metabench.report.docs_calibration:gate_table",
}

OPEN = re.compile(r"^<!-- generated: (?P<name>[\w-]+)(?P<args>(?: [\w-]+=\S+)*) \(metabench report docs\) -->$")
CLOSE = "<!-- end generated -->"
_OPENING = "<!-- generated:"


@dataclass
class DocsContext:
    """What generators read: the committed runs (loaded once, lazily) and the registry (for the task index)."""

    runs_dir: Path
    registry: object
    _cache: dict = field(default_factory=dict)

    @cached_property
    def runs(self) -> list:
        """The runs that passed verification and were checked against the data: a number in the docs is never
        one a run only claims (a rejected or unverified run is left out; `metabench leaderboard build` lists why)."""
        from ..runs.stored import find_runs  # noqa: PLC0415
        from ..runs.verify import verify_runs  # noqa: PLC0415

        _, _, verdicts = verify_runs(self.registry, find_runs([self.runs_dir]))
        return [v.run for v in verdicts.values() if v.ok and v.unverified is None]

    @cached_property
    def index(self):
        from ..config.index import TaskIndex  # noqa: PLC0415

        return TaskIndex(self.registry)

    def memo(self, key, compute):
        """One computation shared by the tables that need it (e.g. the gameability rows)."""
        if key not in self._cache:
            self._cache[key] = compute()
        return self._cache[key]


@dataclass(frozen=True)
class Block:
    """One generated table in a page: its name and arguments, and the line numbers of its two comments."""

    name: str
    args: dict
    open_line: int  # 1-based
    close_line: int


def find_blocks(path: Path, text: str) -> list[Block]:
    """Every generated block of a page (outside code fences); a malformed or unclosed marker is an error naming
    file:line."""
    blocks, current, fenced = [], None, False
    for number, line in enumerate(text.split("\n"), start=1):
        if line.startswith("```") and current is None:  # a marker shown in a code example is not a block
            fenced = not fenced
        elif fenced:
            continue
        elif line.startswith(_OPENING):
            if current is not None:
                raise MetabenchError(f"{path}:{number}: a generated block opens inside the one opened at line "
                                     f"{current[2]}", hint=f"close that block with '{CLOSE}'")
            match = OPEN.match(line)
            if match is None:
                raise MetabenchError(f"{path}:{number}: malformed marker {line!r}",
                                     hint="write '<!-- generated: NAME key=value ... (metabench report docs) -->'")
            name = match["name"]
            if name not in TABLES:
                raise MetabenchError(f"{path}:{number}: unknown generated table '{name}'{did_you_mean(name, TABLES)}",
                                     hint=f"known tables: {', '.join(sorted(TABLES))}")
            args = dict(pair.split("=", 1) for pair in match["args"].split())
            current = (name, args, number)
        elif line == CLOSE:
            if current is None:
                raise MetabenchError(f"{path}:{number}: '{CLOSE}' without an opening marker")
            blocks.append(Block(current[0], current[1], current[2], number))
            current = None
    if current is not None:
        raise MetabenchError(f"{path}:{current[2]}: generated block '{current[0]}' is never closed",
                             hint=f"end it with a line '{CLOSE}'")
    return blocks


def render(block: Block, context: DocsContext, path: Path) -> list[str]:
    module, _, attr = TABLES[block.name].partition(":")
    generator = getattr(importlib.import_module(module), attr)
    try:
        return generator(context, **block.args)
    except TypeError as exc:  # an argument the generator does not take
        raise MetabenchError(f"{path}:{block.open_line}: table '{block.name}': {exc}") from None


def regenerate(path: Path, text: str, context: DocsContext) -> str:
    """The page with every generated block's body replaced by what its generator prints today."""
    lines = text.split("\n")
    out, position = [], 0
    for block in find_blocks(path, text):
        out.extend(lines[position:block.open_line])
        out.extend(render(block, context, path))
        position = block.close_line - 1
    out.extend(lines[position:])
    return "\n".join(out)


def pages(docs: Path) -> list[Path]:
    return sorted(docs.glob("*.md")) if docs.is_dir() else [docs]


def update(docs: Path, runs_dir: Path, registry, *, check: bool) -> list[tuple[Path, str]]:
    """(page, unified diff) for every page whose generated tables differ from the runs; written unless ``check``.

    Only pages whose real location lies in ``--docs`` are read or rewritten (a page linked to a file elsewhere,
    ``/dev/zero`` or a pipe is refused, naming it), each read with the bound on any file from a user, and a
    rewritten page replaces its name (``safe_paths``), never writing through a link."""
    context = DocsContext(runs_dir, registry)
    root = docs if docs.is_dir() else docs.parent
    changed = []
    for path in pages(docs):
        text = _read_page(root, path)
        if _OPENING not in text:
            continue
        new = regenerate(path, text, context)
        if new != text:
            diff = "".join(difflib.unified_diff(text.splitlines(True), new.splitlines(True), str(path), f"{path} (runs)"))
            changed.append((path, diff))
            if not check:
                write_text(root, path, new)
    return changed


def _read_page(root: Path, path: Path) -> str:
    inside(root, path, action="read or rewrite")
    try:
        return read_text(path)
    except (FileNotFoundError, IsADirectoryError):
        raise MetabenchError(f"{path}: not a readable page (a folder, or a link to nothing)",
                             hint="pass --docs a Markdown page or a folder of them") from None
    except UnicodeDecodeError as exc:
        raise MetabenchError(f"{path}: not UTF-8 text (byte {exc.start})", hint="save the page as UTF-8") from None


def markdown(header: list[str], rows: list[list]) -> list[str]:
    """A Markdown table; '|' inside a cell is escaped."""
    cell = lambda value: str(value).replace("|", "\\|")  # noqa: E731
    return ["| " + " | ".join(map(cell, header)) + " |", "|" + "---|" * len(header),
            *("| " + " | ".join(map(cell, row)) + " |" for row in rows)]
