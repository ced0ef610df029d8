"""docs/reporting.md's calibration tables, rendered from the record `metabench stats calibrate --write` committed
(``benchmarks/results/calibration.json``, next to the repository's committed runs): the simulation takes minutes,
so `metabench report docs` reads its figures instead of rerunning it, and a test fails when the record is stale."""

from __future__ import annotations

import json
from pathlib import Path

from ...errors import MetabenchError
from ..calibration import GATE_HEADER, HEADER, RECORD, gate_rows, table_rows
from .blocks import markdown


def _record(context, file: str) -> dict:
    path = Path(context.runs_dir).resolve().parents[1] / file
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise MetabenchError(f"{path}: no calibration record", hint="run `metabench stats calibrate --write`") from None


def calibration_table(context, file: str = str(RECORD)) -> list[str]:
    """Procedure × task shape → type-I, coverage, printed MDE, power, and the targets missed."""
    record = _record(context, file)
    settings = record["settings"]
    return [*markdown(HEADER, table_rows(record)), "",
            f"{settings['replications']} simulated test sets per hypothesis, procedure and seed pair (the seeds "
            "column: every pair of the committed runs' first three seeds is simulated, each its own row), "
            f"{settings['resamples']} "
            f"bootstrap resamples in each, {settings['seed_replications']} simulated paired t's over seeds, seed "
            f"{settings['seed']} ({settings['correction_replications']} families for Holm and BH); ± is the "
            "Monte-Carlo standard error, for the power counting the error of the MDE it is measured at."]


def gate_table(context, file: str = str(RECORD)) -> list[str]:
    """The gate's false fails on null replays, and what its default level promises for as many gates."""
    import scipy.stats

    from ..gate import ALPHA

    record = _record(context, file)
    replays = record["settings"]["gate_replays"]
    rate = ALPHA / 2  # only a drop fails: a one-sided test at alpha / 2
    return [*markdown(GATE_HEADER, gate_rows(record)), "",
            f"By design, a null gate at the default `--alpha {ALPHA:g}` fails at most α / 2 = {100 * rate:g} % of the "
            f"time (Holm keeps it so across checks), so {replays} null gates show at most one false fail with "
            f"probability {100 * scipy.stats.binom.cdf(1, replays, rate):.0f} % (binomial); at `--alpha 0.05`, "
            f"{100 * scipy.stats.binom.cdf(1, replays, 0.025):.0f} %."]
