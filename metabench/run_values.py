"""The values a run is asked for — tasks, models, seeds — checked and normalised one way, for the Python API
(``metabench.evaluate``), the command line and ``--dry-run`` alike."""

from __future__ import annotations

from collections.abc import Sequence

from .errors import MetabenchError

Names = str | Sequence[str]


def listed(value: Names, what: str) -> list[str]:
    """A name or a list of names as a list; none, one that is not a name, or one given twice (the same model twice
    planned every job twice, two runs racing for one folder) is an error naming ``what``."""
    values = [value] if isinstance(value, str) else list(value) if isinstance(value, (list, tuple)) else []
    if not values or not all(isinstance(v, str) and v.strip() for v in values):
        raise MetabenchError(f"{what}: expected a name or a list of names, got {value!r}",
                             hint="e.g. evaluate('m4x_det_en_mono', ['majority', 'lookup'])")
    twice = sorted({v for v in values if values.count(v) > 1})
    if twice:
        raise MetabenchError(f"{what}: {', '.join(map(repr, twice))} given twice", hint="list each one once")
    return values


def joined(value: Names, what: str) -> str:
    """:func:`listed`, joined as a ``--tasks`` selection."""
    return ",".join(listed(value, what))


def seed_list(seeds: int | Sequence[int] | None, where: str = "seeds") -> list[int] | None:
    """A seed count (``5``: seeds 0..4) or a list of distinct seeds, checked against a task file's bounds.

    ``where`` names the option in errors (the CLI passes ``--seeds``)."""
    from .config.schema import MAX_SEED, MAX_SEEDS

    if seeds is None:
        return None
    if isinstance(seeds, bool) or isinstance(seeds, str) or not isinstance(seeds, (int, Sequence)):
        raise MetabenchError(f"{where} {seeds!r}: expected a count (5) or a list of seeds ([0, 1, 2])")
    if isinstance(seeds, int):
        if not 1 <= seeds <= MAX_SEEDS:
            raise MetabenchError(f"{where} {seeds}: a seed count must be between 1 and {MAX_SEEDS}",
                                 hint="for seed 0 alone give a list: seeds=[0], --seeds 0,")
        return list(range(seeds))
    values = list(seeds)
    shown = f"{where} {','.join(map(str, values))}"
    if not values:
        raise MetabenchError(f"{where}: the list names no seed", hint="e.g. --seeds 3, --seeds 0,1,2 or seeds=[0, 1, 2]")
    bad = [v for v in values if isinstance(v, bool) or not isinstance(v, int) or not 0 <= v <= MAX_SEED]
    if bad:
        raise MetabenchError(f"{shown}: seed {bad[0]!r} is out of range", hint=f"seeds are 0 to {MAX_SEED}")
    repeated = sorted({v for v in values if values.count(v) > 1})
    if repeated:
        raise MetabenchError(f"{shown}: seed(s) {repeated} listed twice", hint="each seed runs once; list distinct seeds")
    if len(values) > MAX_SEEDS:
        raise MetabenchError(f"{where}: {len(values)} seeds, at most {MAX_SEEDS}")
    return values
