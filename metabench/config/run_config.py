"""Run configs: ``metabench run --config run.yaml``, a run's settings in a file instead of on the command line.

The keys are :func:`metabench.evaluate`'s arguments, under the names of the command-line flags (``tasks``,
``models``, ``seeds``, ``limit``, ``launcher``, ``output``...; :class:`RunConfig` lists them all). The file is
read as strictly as a task file: an unknown key is an error naming the file, the line and the closest valid
key, and a flag given on the command line replaces the file's value (so a file may leave ``tasks`` or
``models`` to the command line; a run needs both from one or the other). Relative paths (``output``,
``data_dir``) are relative to the folder the command runs in, as the flags' are. Values are not coerced:
``limit: true`` or ``limit: "20"`` is an error naming the line (YAML would make the first ``--limit 1``), and
a key given twice is refused as in a task file.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Literal

from pydantic import Field, StrictBool, StrictInt, ValidationError

from ..errors import ConfigError
from .loader import RawConfig, config_error
from .schema import Seeds, Strict
from .yamlsource import load_located

NonEmpty = Annotated[str, Field(min_length=1)]


class RunConfig(Strict):
    """One run: what ``metabench run`` would be given as flags."""

    tasks: NonEmpty | list[NonEmpty] | None = Field(None, description="task names, globs, tags or groups (`--tasks`)")
    models: NonEmpty | list[NonEmpty] | None = Field(None, description="model specs, e.g. majority (`--model`)")
    seeds: Seeds | None = Field(None, description="a seed count or a list of seeds (`--seeds`); default: the task's")
    limit: Annotated[StrictInt, Field(ge=1)] | None = Field(None, description="only the first N test items (`--limit`)")
    launcher: Literal["auto", "serial", "processes", "ray"] | None = Field(None, description="`--launcher`")
    output: NonEmpty | None = Field(None, description="where run folders go (`--output-dir`, default runs)")
    data_dir: NonEmpty | None = Field(None, description="the data mirror (`--data-dir`)")
    workers: Annotated[StrictInt, Field(ge=1)] | None = Field(None, description="`--workers`")
    repeat: StrictInt | None = Field(None, description="draws per item and seed of sampled generation, majority "
                                     "answer scored (`--repeat`)")
    ray_address: NonEmpty | None = Field(None, description="`--ray-address`")
    cache: StrictBool = Field(True, description="false: neither read nor write the answer cache (`--no-cache`)")
    progress: StrictBool = Field(True, description="false: no progress (`--no-progress`); true: bars on a terminal, a "
                                 "plain line every 30 s where stderr is a log")
    overwrite: StrictBool = Field(False, description="replace finished runs whose answers differ (`--overwrite`)")
    log_responses: StrictBool = Field(False, description="keep each generated answer's text in samples.jsonl "
                                      "(`--log-responses`)")


#: RunConfig key -> metabench.evaluate keyword, where they differ.
_KEYWORDS = {"output": "output_dir", "cache": "use_cache"}


def read_run_config(path: Path) -> dict:
    """The run config at ``path`` as keyword arguments of :func:`metabench.evaluate` (only the keys it sets)."""
    located = load_located(Path(path))
    if not isinstance(located.data, dict):
        raise ConfigError(f"{path}:1: a run config must be a mapping of keys (tasks:, models:, ...)",
                          hint="see examples/run.yaml")
    raw = RawConfig(Path(path), located.data, located)
    try:
        config = RunConfig.model_validate(located.data)
    except ValidationError as exc:
        raise config_error(raw, RunConfig, exc, hint="the keys are listed in docs/python-api.md (Run configs)") from None
    return {_KEYWORDS.get(key, key): value for key, value in config.model_dump(exclude_unset=True).items()}
