"""Hyperparameter search before an encoder's final fit, on Ray Tune (a task's ``protocol.encoder.search``).

Boisson et al. (2023) tune every cell with BOHB, 50 trials on Ray Tune, and report the best trial. This module
turns a task's ``search`` block into that run; the adapter supplies the trial (one fine-tuning with the
trial's hyperparameters, through :func:`metabench.models.finetune.train`) and trains the winner afterwards.

- **Algorithms**: ``bohb`` is Ray Tune's ``TuneBOHB`` (hpbandster's KDE model over ConfigSpace) with
  ``HyperBandForBOHB``, as the paper; ``optuna`` is ``OptunaSearch`` (TPE) with ``HyperBandScheduler``,
  ``AsyncHyperBandScheduler`` (``asha``) or no scheduler: the fallback where hpbandster does not install.
  Both are seeded by the run seed, so a seed repeats its search when trials run one at a time.
- **Early stopping**: a trial reports its validation scores after every epoch (``training_iteration`` =
  epoch, ``max_t`` = the largest epoch count searched). HyperBand *pauses* trials at its milestones and
  resumes the best ones, so under ``hyperband`` a trial also hands its training state (the loop's resume
  state) to Ray as a checkpoint after each epoch, and a resumed trial continues where it stopped
  (:class:`TrialReporter`); ASHA only stops trials, so it needs none.
- **Ray**: a local Ray started as the ``--launcher ray`` run matrix starts it (:func:`metabench.ray_start.start`:
  the CPUs given, no dashboard, loopback only, no usage report), shut down afterwards if this search started
  it. :class:`ResultLog` keeps every report on the driver; Ray's own files live in a scratch folder removed
  after the search.
- **Result**: every trial's configuration, per-epoch validation scores, whether it ran all its epochs, and
  its score; the best trial among those that ran all their epochs (a trial the scheduler stopped early is
  scored on fewer epochs than its configuration asks for, so it is recorded but not chosen).
"""

from __future__ import annotations

import math
import os
import shutil
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ..errors import MetabenchError

#: Search-space keys that are ``finetune`` settings (``seed`` is the training seed).
FINETUNE_KEYS = ("lr", "batch_size", "epochs", "weight_decay", "warmup_ratio")
_STATE = "state.pt"


def plain(value: Any) -> Any:
    """numpy scalars (BOHB's suggestions) as Python numbers, so configurations serialise and compare."""
    return value.item() if hasattr(value, "item") else value


def domains(space) -> dict:
    """The search space as Ray Tune domains: a list is a choice, a range (log-)uniform (``randint`` for integers)."""
    from ray import tune

    from ..config.schema import IntRange

    out = {}
    for name, value in space.searched().items():
        if isinstance(value, list):
            out[name] = tune.choice(list(value))
        elif isinstance(value, IntRange):  # Tune's integer upper bounds are exclusive
            out[name] = (tune.lograndint if value.log else tune.randint)(value.low, value.high + 1)
        else:
            out[name] = (tune.loguniform if value.log else tune.uniform)(value.low, value.high)
    return out


def max_epochs(space, default_epochs: float) -> int:
    """HyperBand's ``max_t``: the most epochs any trial can run."""
    epochs = space.epochs
    if epochs is None:
        return math.ceil(default_epochs)
    return int(max(epochs) if isinstance(epochs, list) else epochs.high)


def reduced(search, trials: int | None = None, max_epochs: int | None = None):
    """The task's search under the budget knobs (``search_trials``, ``search_max_epochs``): fewer trials, and
    the epochs dimension capped, for a machine that cannot afford the paper's 50 trials of up to 12 epochs."""
    update: dict[str, Any] = {} if trials is None else {"trials": trials}
    if max_epochs is not None:
        epochs = search.space.epochs
        if epochs is None:
            raise MetabenchError("search_max_epochs: the task's search does not search epochs",
                                 hint="shorten the recipe with epochs= instead")
        low = min(epochs) if isinstance(epochs, list) else epochs.low
        if low > max_epochs:
            raise MetabenchError(f"search_max_epochs={max_epochs} is below the search's fewest epochs ({low})")
        capped = ([e for e in epochs if e <= max_epochs] if isinstance(epochs, list)
                  else epochs.model_copy(update={"high": min(epochs.high, max_epochs)}))
        update["space"] = search.space.model_copy(update={"epochs": capped})
    return search.model_copy(update=update)


def _algorithm(search, metric: str, mode: str, seed: int):
    if search.algorithm == "bohb":
        try:
            import ConfigSpace  # noqa: F401, PLC0415 - TuneBOHB imports them only when it builds its space
            import hpbandster  # noqa: F401, PLC0415
            from ray.tune.search.bohb import TuneBOHB  # noqa: PLC0415
        except ImportError:
            raise MetabenchError(
                "search algorithm 'bohb' needs the hpbandster and ConfigSpace packages",
                hint="pip install 'metabench[search]', or set protocol.encoder.search.algorithm: optuna",
            ) from None
        return TuneBOHB(metric=metric, mode=mode, seed=seed)
    try:
        from ray.tune.search.optuna import OptunaSearch  # noqa: PLC0415
    except ImportError:
        raise MetabenchError("search algorithm 'optuna' needs the optuna package",
                             hint="pip install 'metabench[search]'") from None
    return OptunaSearch(metric=metric, mode=mode, seed=seed)


def _scheduler(search, max_t: int):
    from ray.tune.schedulers import AsyncHyperBandScheduler, HyperBandForBOHB, HyperBandScheduler

    if search.scheduler == "none":
        return None
    if search.scheduler == "asha":
        return AsyncHyperBandScheduler(time_attr="training_iteration", max_t=max_t)
    cls = HyperBandForBOHB if search.algorithm == "bohb" else HyperBandScheduler
    return cls(time_attr="training_iteration", max_t=max_t)


def pauses(search) -> bool:
    """Whether the scheduler pauses trials (they then need a checkpoint to resume from)."""
    return search.scheduler == "hyperband"


class TrialReporter:
    """Inside a trial: the resume store :func:`~metabench.models.finetune.train` saves its state to, and the
    per-epoch report to Ray Tune, which carries that state as the trial's checkpoint when ``checkpoint``."""

    def __init__(self, scratch: Path, checkpoint: bool):
        self.folder = Path(scratch)
        self.checkpoint = checkpoint
        self.pending = False

    def load_partial(self, key: str):
        import torch
        from ray import tune

        found = tune.get_checkpoint()
        if found is None:
            return None
        with found.as_directory() as folder:
            return torch.load(Path(folder) / _STATE, map_location="cpu", weights_only=False)

    def save_partial(self, key: str, state: dict) -> None:
        if self.checkpoint:
            import torch

            self.folder.mkdir(parents=True, exist_ok=True)
            torch.save(state, self.folder / _STATE)
            self.pending = True

    def report(self, epoch: int, scores: dict[str, float]) -> None:
        from ray import tune

        metrics = {"epoch": epoch, **scores}
        if self.pending:  # Ray copies the folder into the trial's storage, so the next epoch may overwrite it
            self.pending = False
            tune.report(metrics, checkpoint=tune.Checkpoint.from_directory(str(self.folder)))
        else:
            tune.report(metrics)


def _result_log(metric: str):
    """A Ray Tune callback recording, on the driver, each trial's configuration and per-epoch scores, and
    deleting a finished trial's checkpoints (only a paused trial needs its own)."""
    from ray.tune import Callback

    class ResultLog(Callback):
        def __init__(self):
            self.trials: dict[str, dict] = {}

        def on_trial_start(self, iteration, trials, trial, **info):
            self.trials.setdefault(trial.trial_id, {"config": {k: plain(v) for k, v in trial.config.items()},
                                                    "reports": []})

        def on_trial_result(self, iteration, trials, trial, result, **info):
            entry = self.trials.setdefault(trial.trial_id, {"config": dict(trial.config), "reports": []})
            entry["reports"].append({"epoch": int(result["epoch"]), metric: float(result[metric])})

        def on_trial_complete(self, iteration, trials, trial, **info):
            path = getattr(trial, "local_path", None) or getattr(trial, "path", None)
            if path and Path(path).is_dir():
                for folder in Path(path).glob("checkpoint_*"):
                    shutil.rmtree(folder, ignore_errors=True)

    return ResultLog()


def summarise(log: dict[str, dict], *, metric: str, mode: str, best_epoch: bool,
              planned_epochs: Callable[[dict], int]) -> tuple[list[dict], dict]:
    """Trials in start order with their scores, and the best one. A trial's score is its last epoch's
    ``metric`` (``best_epoch``: its best epoch's, when the final fit selects epochs too)."""
    better = max if mode == "max" else min
    trials = []
    for number, entry in enumerate(log.values()):
        scores = [r[metric] for r in entry["reports"]]
        epochs_run = entry["reports"][-1]["epoch"] if entry["reports"] else 0
        trials.append({
            "trial": number,
            "config": entry["config"],
            "validation": scores,
            "epochs_run": epochs_run,
            "completed": epochs_run >= planned_epochs(entry["config"]),
            "score": (better(scores) if best_epoch else scores[-1]) if scores else None,
        })
    candidates = [t for t in trials if t["completed"] and t["score"] is not None]
    if not candidates:
        raise MetabenchError(f"the search finished no trial ({len(trials)} started)",
                             hint="look for errors in the trials above; raise protocol.encoder.search.trials")
    sign = 1 if mode == "max" else -1
    best = max(candidates, key=lambda t: (sign * t["score"], -t["trial"]))  # the earliest trial on ties
    return trials, {"trial": best["trial"], "config": best["config"], "score": best["score"]}


def run(search, trainable: Callable, *, metric: str, seed: int, default_epochs: float, cpus: int,
        cpus_per_trial: int, gpus_per_trial: int, storage: Path, best_epoch: bool) -> dict:
    """Run ``search`` on a local Ray; ``trainable(config)`` is one trial. Returns the record for results.json."""
    from ..ray_start import import_ray, start

    ray = import_ray()
    # Quiet: verbose=0 silences only the legacy progress output, and checkpointing paused trials every epoch
    # is what this search does on purpose.
    os.environ.setdefault("RAY_AIR_NEW_OUTPUT", "0")
    os.environ.setdefault("TUNE_WARN_EXCESSIVE_EXPERIMENT_CHECKPOINT_SYNC_THRESHOLD_S", "0")
    os.environ.setdefault("TUNE_DISABLE_AUTO_CALLBACK_LOGGERS", "1")  # the JSON one (the result grid reads it) only
    from ray import tune
    from ray.tune.logger import JsonLoggerCallback

    if ray.is_initialized() and ray.get_runtime_context().get_actor_id() is not None:
        # A job of the Ray run matrix: its trials would wait for CPUs that the matrix's workers hold.
        raise MetabenchError("a search (search=true) cannot run inside a `--launcher ray` worker",
                             hint="run searched models with the default (serial) launcher")
    mode = "min" if metric == "loss" else "max"
    max_t = max_epochs(search.space, default_epochs)
    cpus = max(cpus, cpus_per_trial)  # fewer CPUs than one trial asks for would leave every trial pending
    started_ray = not ray.is_initialized()
    start(None, cpus)
    log = _result_log(metric)
    started = time.perf_counter()
    try:
        tuner = tune.Tuner(
            tune.with_resources(trainable, {"cpu": cpus_per_trial, "gpu": gpus_per_trial}),
            param_space=domains(search.space),
            tune_config=tune.TuneConfig(
                metric=metric, mode=mode, search_alg=_algorithm(search, metric, mode, seed),
                scheduler=_scheduler(search, max_t), num_samples=search.trials,
                max_concurrent_trials=max(1, cpus // cpus_per_trial), reuse_actors=True,
            ),
            run_config=tune.RunConfig(
                name="search", storage_path=str(storage), verbose=0, callbacks=[log, JsonLoggerCallback()],
                checkpoint_config=tune.CheckpointConfig(num_to_keep=1),
                failure_config=tune.FailureConfig(fail_fast=True),
            ),
        )
        grid = tuner.fit()
    finally:
        if started_ray:
            ray.shutdown()
    failed = [r.error for r in grid if r.error is not None]
    if failed:
        raise MetabenchError(f"a search trial failed: {failed[0]}")
    default = math.ceil(default_epochs)
    trials, best = summarise(log.trials, metric=metric, mode=mode, best_epoch=best_epoch,
                             planned_epochs=lambda config: int(config.get("epochs", default)))
    return {
        "algorithm": search.algorithm,
        "scheduler": search.scheduler,
        "trials_requested": search.trials,
        "metric": metric,
        "mode": mode,
        "max_t": max_t,
        "score": "best epoch" if best_epoch else "last epoch",
        "space": search.space.model_dump(mode="json", exclude_none=True),
        "search_s": round(time.perf_counter() - started, 3),
        "trials": trials,
        "best": best,
    }
