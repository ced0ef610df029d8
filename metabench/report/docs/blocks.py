"""Results tables in docs/ are generated from committed runs, never typed: `metabench report docs`.

A page marks each generated table with an opening and a closing comment; the opening names the table and its
arguments::

    <!-- generated: boisson-views model=hf:minilm-l6 (metabench report docs) -->
    | cell | ... |
    <!-- end generated -->

`regenerate` replaces every such body with what the named generator prints from the runs today, and
`metabench report docs --check` (and the test that calls it) fails when a page differs, so a number in a
results table can only change with the runs it comes from. Generators are registered by name through the
``metabench_register_docs_blocks`` hook (lazy ``module:function`` targets, so importing this module imports no
report code; the paper families and plugins register their own, like ``report/plugin.py`` the rest); each takes
the `DocsContext` and the block's arguments and returns the table's Markdown lines.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Collection
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path

from ...bounded_read import read_text
from ...errors import MetabenchError, did_you_mean
from ...registry import Registry
from ...safe_paths import inside, write_text

#: model arguments that cut the training budget below the task's protocol (a table marks their rows PARTIAL)
REDUCED = ("max_train", "epochs=", "steps=")

OPEN = re.compile(r"^<!-- generated: (?P<name>[\w-]+)(?P<args>(?: [\w-]+=\S+)*) \(metabench report docs\) -->$")
CLOSE = "<!-- end generated -->"
_OPENING = "<!-- generated:"


@dataclass
class DocsContext:
    """What generators read: the committed runs (loaded once, lazily) and the registry (for the task index)."""

    runs_dir: Path
    registry: Registry
    _cache: dict = field(default_factory=dict)

    @cached_property
    def runs(self) -> list:
        """The runs that passed verification and were checked against the data: a number in the docs is never
        one a run only claims (a rejected or unverified run is left out; `metabench leaderboard build` lists why)."""
        from ...runs.stored import find_runs  # noqa: PLC0415
        from ...runs.verify import verify_runs  # noqa: PLC0415

        _, _, verdicts = verify_runs(self.registry, find_runs([self.runs_dir]))
        return [v.run for v in verdicts.values() if v.ok and v.unverified is None]

    @cached_property
    def index(self):
        from ...config.index import TaskIndex  # noqa: PLC0415

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


def registered_blocks(registry=None) -> list[str]:
    """The names of the registered generated tables (``registry`` default: this process's)."""
    if registry is None:
        from ...plugins import default_registry  # noqa: PLC0415

        registry = default_registry()
    return registry.names("docs_block")


def find_blocks(path: Path, text: str, known: Collection[str] | None = None) -> list[Block]:
    """Every generated block of a page (outside code fences); a malformed or unclosed marker, or one naming no
    table in ``known`` (default: the registered ones), is an error naming file:line."""
    known = registered_blocks() if known is None else known
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
            if name not in known:
                raise MetabenchError(f"{path}:{number}: unknown generated table '{name}'{did_you_mean(name, known)}",
                                     hint=f"known tables: {', '.join(sorted(known))} (a plugin adds one with "
                                     "metabench_register_docs_blocks; `metabench plugins` lists what failed to load)")
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
    generator = context.registry.resolve("docs_block", block.name, where=f"{path}:{block.open_line}")
    try:
        return generator(context, **block.args)
    except TypeError as exc:  # an argument the generator does not take
        raise MetabenchError(f"{path}:{block.open_line}: table '{block.name}': {exc}") from None


def regenerate(path: Path, text: str, context: DocsContext) -> str:
    """The page with every generated block's body replaced by what its generator prints today."""
    lines = text.split("\n")
    out, position = [], 0
    for block in find_blocks(path, text, registered_blocks(context.registry)):
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


def names(value: str) -> list[str]:
    """A block argument's ';'-separated list (commas belong to model specs)."""
    return [v for v in value.split(";") if v]


def markdown(header: list[str], rows: list[list]) -> list[str]:
    """A Markdown table; '|' inside a cell is escaped."""
    cell = lambda value: str(value).replace("|", "\\|")  # noqa: E731
    return ["| " + " | ".join(map(cell, header)) + " |", "|" + "---|" * len(header),
            *("| " + " | ".join(map(cell, row)) + " |" for row in rows)]
