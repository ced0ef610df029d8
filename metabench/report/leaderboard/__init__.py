"""The published leaderboard: runs → one board (``board``) → every registered reporter writes its files.

Reporters are registered through ``metabench_register_reporters`` (the built-ins: ``markdown``, ``json``,
``html``); each is ``write(board: dict, out_dir: Path) -> list[Path]``, so a plugin adds an output format
without touching the statistics.
"""

from __future__ import annotations

from pathlib import Path

from ...errors import MetabenchError
from ...registry import Registry
from ..compare import Options
from ..runs import find_runs
from .board import build_board


def build_site(registry: Registry, paths: list[Path], out_dir: Path, *, formats: list[str] | None = None,
               title: str = "metabench leaderboard", correction: str = "holm", alpha: float = 0.05,
               n_resamples: int = 10_000) -> list[Path]:
    """Build the board from the runs under ``paths`` and run the reporters into ``out_dir``."""
    names = formats or registry.names("reporter")
    if not names:
        raise MetabenchError("no leaderboard reporters are registered",
                             hint="the built-in plugin metabench.report.plugin registers markdown, json and html")
    writers = [registry.resolve("reporter", name, where="--format") for name in names]
    board = build_board(registry, find_runs(paths), title=title, correction=correction, alpha=alpha,
                        options=Options(n_resamples=n_resamples))
    out_dir.mkdir(parents=True, exist_ok=True)
    return [path for write in writers for path in write(board, out_dir)]
