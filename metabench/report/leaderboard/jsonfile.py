"""``leaderboard.json``: the board itself, for scripts and for other sites."""

from __future__ import annotations

import json
from pathlib import Path


def write(board: dict, out_dir: Path) -> list[Path]:
    path = out_dir / "leaderboard.json"
    path.write_text(json.dumps(board, indent=2, ensure_ascii=False, allow_nan=False) + "\n", encoding="utf-8")
    return [path]
