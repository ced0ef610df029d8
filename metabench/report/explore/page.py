"""Writing the explore page: one static HTML file, its rows rendered here (escaped), filtered by a small script.

The page holds dataset text from the user's own mirror, which the datasets' licences may forbid publishing, so
it is written only where the user says, and never into a leaderboard site (a folder holding leaderboard.json,
or below one): the published board carries ids and scores only.
"""

from __future__ import annotations

import os
from pathlib import Path

from jinja2 import Environment, FileSystemLoader, StrictUndefined

from ...errors import MetabenchError
from ...printable import escape
from ...safe_paths import write_text
from .join import Exploration

HERE = Path(__file__).parent


def check_target(path: Path) -> None:
    """Refuse a target inside a leaderboard site (also through a symlink at the name or in its folders): the page
    carries licensed text, the board must not."""
    for folder in dict.fromkeys([path.parent.resolve(), *path.parent.resolve().parents, *path.resolve().parents]):
        if _is_file(folder / "leaderboard.json"):
            raise MetabenchError(
                f"-o {escape(path)}: {escape(folder)} is a leaderboard site, and the explore page holds dataset text from your "
                "mirror, which must not be published with it",
                hint="write the page outside the leaderboard, e.g. -o explore.html")


def write_page(exploration: Exploration, path: Path) -> Path:
    check_target(path)
    env = Environment(loader=FileSystemLoader(HERE / "templates"), autoescape=True, undefined=StrictUndefined,
                      trim_blocks=True, lstrip_blocks=True)
    html = env.get_template("explore.html").render(x=exploration, counts=exploration.counts(),
                                                   mcnemar=_mcnemar(exploration))
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        write_text(path.parent, path, html)  # renamed over the name: a symlink planted there is replaced, not followed
    except OSError as exc:
        raise MetabenchError(f"-o {escape(path)}: the page could not be written ({exc.strerror or exc})",
                             hint="write it into a folder you can write to, e.g. -o ~/explore.html") from None
    return path


def writable_folder(folder: Path) -> bool:
    """Whether a page can be made in ``folder`` (or in the folder that would hold it, where it is not there yet)."""
    existing = next((f for f in (folder, *folder.parents) if _exists(f)), None)
    return existing is not None and existing.is_dir() and os.access(existing, os.W_OK | os.X_OK)


def _is_file(path: Path) -> bool:
    """``path.is_file()``, False where a folder on the way may not be searched (not the site's, as far as we can tell)."""
    try:
        return path.is_file()
    except OSError:
        return False


def _exists(path: Path) -> bool:
    try:
        return path.exists()
    except OSError:
        return False


def _mcnemar(exploration: Exploration) -> dict | None:
    """The exact McNemar test on the discordant items (the rows the pair filter shows), as compare runs it."""
    if len(exploration.runs) != 2:
        return None
    from ...stats.paired import mcnemar_from_counts

    counts = exploration.counts()
    b, c = counts["only_a"], counts["only_b"]
    return {"b": b, "c": c, "p": mcnemar_from_counts(b, c, n=counts["items"]).pvalue}
