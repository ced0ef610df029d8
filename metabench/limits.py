"""Limits on untrusted input: task YAML files, the Jinja prompt templates in them, and every file read from a user.

Task files come from plugins and from users' folders, so they are input, not code: a YAML alias bomb must not
expand without bound, and a template must not allocate gigabytes or loop for ever. Each limit is generous for
real tasks (the largest built-in task file is a few KiB, the longest built-in prompt a few thousand characters)
and can be raised through the environment variable named beside it. docs/reliability.md lists them.
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass

from .errors import MetabenchError


@dataclass(frozen=True)
class Limit:
    """A bound and the variable that moves it. ``most``: the largest value the variable may set; ``inf``,
    ``nan`` or ``1e30`` would pass a positive check and fail later, far from the variable (``int(inf)``, a
    timer that overflows), so each is refused where it is read."""

    name: str
    env: str
    default: float
    unit: str
    most: float = 1e15

    @property
    def value(self) -> float:
        raw = os.environ.get(self.env)
        if raw is None or not raw.strip():
            return self.default
        try:
            value = float(raw)
        except ValueError:
            value = math.nan
        if not 0 < value <= self.most:  # also false for nan
            raise MetabenchError(f"{self.env}={raw!r}: expected a positive number of at most {self.most:g} ({self.unit})",
                                 hint=f"unset it for the default, {self.default:g} {self.unit}")
        return value


YAML_BYTES = Limit("task file size", "METABENCH_MAX_YAML_BYTES", 1_000_000, "bytes")
YAML_NODES = Limit("YAML values after alias expansion", "METABENCH_MAX_YAML_NODES", 100_000, "values")
YAML_DEPTH = Limit("YAML nesting depth", "METABENCH_MAX_YAML_DEPTH", 50, "levels")
TEMPLATE_CHARS = Limit("template output", "METABENCH_MAX_TEMPLATE_CHARS", 1_000_000, "characters")
TEMPLATE_SECONDS = Limit("template render time", "METABENCH_TEMPLATE_TIMEOUT_S", 2.0, "seconds", most=86_400)

#: Run files, phi tables, manifests and every other file a command reads from a user (``bounded_read.py``): the
#: largest committed samples.jsonl is under 4 MB (larger ones are gzipped), so the default leaves two orders of
#: magnitude of room while a symlink to a huge file cannot take the machine's memory.
INPUT_BYTES = Limit("size of a file read from a user", "METABENCH_MAX_INPUT_BYTES", 256_000_000, "bytes")

#: Sample rows one run may hold, whatever its results.json claims (``store.read_samples`` holds a run to its own
#: ``n_items`` × seeds first): the largest committed run has 17,619 rows, so this leaves fifty times that while a
#: samples file of millions of short lines (a few hundred bytes of gzip) cannot fill the memory with row objects.
SAMPLE_ROWS = Limit("sample rows of one run", "METABENCH_MAX_SAMPLE_ROWS", 1_000_000, "rows")

#: Files and bytes a ``hf_dataset`` source folder may hold (``data/hf_source.py`` lists and hashes every one):
#: a source is a few data files; ``path: /usr`` by mistake would otherwise hash a whole system folder.
SOURCE_FILES = Limit("files of a hf_dataset source", "METABENCH_MAX_SOURCE_FILES", 10_000, "files")
SOURCE_BYTES = Limit("bytes of a hf_dataset source", "METABENCH_MAX_SOURCE_BYTES", 20_000_000_000, "bytes")

#: Training epochs a task file (``protocol.encoder.finetune.epochs``, a search range) or a model argument
#: (``epochs=``) may ask for: the papers train for 3-20; ``epochs=1e20`` is a typo that would never finish.
MAX_EPOCHS = 1000

#: Beams a decoding model argument (``beams=``) may ask for: the taggers use 1-5; each beam is a copy of the
#: generation state, so ``beams=100000`` only fails, after the model has loaded, for want of memory.
MAX_BEAMS = 64

ALL = (YAML_BYTES, YAML_NODES, YAML_DEPTH, TEMPLATE_CHARS, TEMPLATE_SECONDS, INPUT_BYTES, SAMPLE_ROWS, SOURCE_FILES,
       SOURCE_BYTES)
