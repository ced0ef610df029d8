"""``leaderboard.json``: the board itself, for scripts and for other sites."""

from __future__ import annotations

import json
from pathlib import Path

from .schema import Board


def write(board: Board, out_dir: Path) -> list[Path]:
    path = out_dir / "leaderboard.json"
    # one line, no indentation: the board of every committed run is read by programs, and indented it passed 4 MB
    path.write_text(json.dumps(board.to_dict(), ensure_ascii=False, allow_nan=False) + "\n",
                    encoding="utf-8")
    return [path]
