"""The launchers' garbage-collector settings: a performance switch of the launch layer, with its measured
reason, around the jobs a process computes (the serial launcher's loop, a worker's batch).

A job itself does not know about it: :func:`metabench.launch.execute.execute` only says when its data is
loaded (:func:`freeze_loaded`), which does nothing outside :func:`collecting_less`.
"""

from __future__ import annotations

import gc
from contextlib import contextmanager


@contextmanager
def collecting_less():
    """Run with Python's cyclic garbage collector triggered 140x less often (it is only for reference cycles,
    which runs hardly make). A run holds ~10^6 parsed items and builds ~10^5 small objects per job (requests,
    per-item scores, samples); at the default threshold (700 allocations) every collection re-traverses the
    young ones and the older generations fill fast: a `--tasks all --model majority` with the data already
    parsed took 43.4 CPU s at the default and 31.9 s at a threshold of 200,000. Each job's loaded data is also
    frozen out of the collector's reach until the run ends (:func:`freeze_loaded`)."""
    global _freezing
    saved, was_freezing = gc.get_threshold(), _freezing
    gc.set_threshold(100_000, 50, 100)
    _freezing = True
    try:
        yield
    finally:
        _freezing = was_freezing
        gc.set_threshold(*saved)
        if not was_freezing:
            gc.unfreeze()  # what the run froze is collectable again, as if nothing had been frozen


#: Inside :func:`collecting_less`: each job's loaded data is frozen out of the collector's reach.
_freezing = False


def freeze_loaded() -> None:
    """Move every object alive now — the parsed slices and pools a job just loaded, kept for the jobs after
    it — out of the cyclic collector's generations (``gc.freeze``) until the run ends. They are acyclic
    and long-lived; every collection of the oldest generation re-traversed them (the first collection after
    a load was a quarter of the data-loading time of a run with the data already parsed). Garbage frozen
    with them is still freed by reference counting; only a reference cycle made before the freeze waits for
    the end of the run."""
    if _freezing:
        gc.freeze()
