"""The files a report writes beside what it prints (``gate --junit/--summary``), checked before anything is written.

Two options naming one file (``--junit X --summary X``) would leave invalid XML with Markdown appended; an
option naming one of the report's inputs, or any file inside a run folder (``--junit base/t/m/results.json``),
would destroy the run the verdict rests on. Each path is compared by its real location (symlinks followed),
so a link to a run's file is refused like the file itself.
"""

from __future__ import annotations

import os
from pathlib import Path

from ..errors import MetabenchError
from ..store import RESULTS, SAMPLES, SAMPLES_GZ


def check_outputs(outputs: dict[str, Path | None], inputs: list[Path]) -> None:
    """Refuse an output (option -> path) that is another output, an input, a folder, or inside a run folder."""
    seen: dict[Path, str] = {}
    real_inputs = [Path(os.path.realpath(p)) for p in inputs]
    for option, path in outputs.items():
        if path is None:
            continue
        real = Path(os.path.realpath(path))
        if real in seen:
            raise MetabenchError(f"{option} {path}: the same file as {seen[real]}; each output needs its own file",
                                 hint=f"e.g. {seen[real]} gate.xml and {option} gate.md")
        seen[real] = f"{option} {path}"
        if real.is_dir():
            raise MetabenchError(f"{option} {path}: is a folder, not a file", hint=f"name a file, e.g. {option} {path / 'gate.out'}")
        for given, real_input in zip(inputs, real_inputs):
            if real == real_input:
                raise MetabenchError(f"{option} {path}: is one of the runs read ({given}); writing it would destroy "
                                     "the input the report rests on", hint="write the report outside the run folders")
        run = next((folder for folder in real.parents if _is_run(folder)), None)
        if run is not None:
            raise MetabenchError(f"{option} {path}: lies inside the run folder {run}; writing there would change "
                                 "a run (its files are checked as one unit)", hint="write the report outside run folders")


def _is_run(folder: Path) -> bool:
    return any((folder / name).exists() for name in (RESULTS, SAMPLES, SAMPLES_GZ))
