"""Starting or joining Ray, for the two things that use it: the run matrix (``--launcher ray``) and a task's
hyperparameter search (``models/search.py``).

A module of its own, below both, so that the search (an adapter's concern) never imports the launch layer
that runs jobs: one way to start Ray (loopback only, no dashboard, no usage report, patient registration
timeouts) for every caller.
"""

from __future__ import annotations

import os

from .connections import RAY_CONNECT, RAY_JOIN, probe, split_host_port, within
from .errors import MetabenchError

# Forwarded to workers started on other nodes (local workers inherit the driver's environment anyway).
_FORWARDED_PREFIXES = ("METABENCH_", "HF_", "TRANSFORMERS_", "TOKENIZERS_")


def import_ray():
    try:
        import ray  # noqa: PLC0415 - optional dependency, only for --launcher ray
    except ImportError:
        raise MetabenchError(
            "--launcher ray needs the `ray` package", hint="pip install 'metabench[ray]' (or pip install ray)"
        ) from None
    return ray


def start(address: str | None, workers: int | None) -> None:
    """Start a local Ray (``address=None``) or join the cluster at ``address``."""
    if workers is not None and workers < 1:
        raise MetabenchError(f"--workers {workers}: Ray needs at least one worker", hint="e.g. --workers 2")
    if not address:
        # Bind every Ray service to 127.0.0.1: Ray otherwise resolves "127.0.0.1" to the machine's outward
        # address (its ENABLE_RAY_CLUSTER switch, read from this variable by the driver and every child).
        os.environ["RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER"] = "0"
    ray = import_ray()
    if ray.is_initialized():
        return
    if not address:
        import ray._private.ray_constants as constants  # noqa: PLC0415 - ray may have been imported already

        constants.ENABLE_RAY_CLUSTER = False
    os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")  # no usage report leaves the machine
    # Ray's agents and workers register within 30-60 s by default; on a loaded machine the first imports take
    # longer than that and Ray aborts its own start-up. Waiting is cheaper than failing the run.
    os.environ.setdefault("RAY_agent_register_timeout_ms", "600000")
    os.environ.setdefault("RAY_worker_register_timeout_seconds", "600")
    os.environ.setdefault("RAY_raylet_start_wait_time_s", "600")
    env_vars = {k: v for k, v in os.environ.items() if k.startswith(_FORWARDED_PREFIXES)}
    # No log forwarding: workers print nothing a run needs (errors come back as results), and forwarding
    # costs a thread and a pipe per worker.
    common = {"include_dashboard": False, "log_to_driver": False, "configure_logging": False,
              "runtime_env": {"env_vars": env_vars}}
    if address:
        _reachable(address)
        # A cluster on this machine's loopback (`ray start --head --node-ip-address 127.0.0.1`): the driver
        # must say it is on 127.0.0.1 too, or it looks for a raylet on the outward address and waits forever.
        local = address.rpartition(":")[0] in ("127.0.0.1", "localhost")
        try:
            within(RAY_JOIN, lambda: ray.init(address=address, **({"_node_ip_address": "127.0.0.1"} if local else {}), **common),
                   what=f"joining the Ray cluster at --ray-address {address}",
                   fix="check that `ray status --address ADDRESS` works from this machine (the head's recorded address "
                       "must be reachable from here)")
        except (ConnectionError, RuntimeError, ValueError) as exc:  # something listens there, but not a Ray we can join
            raise MetabenchError(f"cannot join the Ray cluster at --ray-address {address}: {type(exc).__name__}: "
                                 f"{str(exc).splitlines()[0][:300] if str(exc) else ''}",
                                 hint="check that `ray status --address ADDRESS` works from this machine and that "
                                      "its Ray and Python versions match this one") from None
    else:
        # No worker processes started ahead of need (the actors are the only workers a run uses).
        os.environ.setdefault("RAY_prestart_worker_first_driver", "0")
        ray.init(address="local", num_cpus=workers or os.cpu_count() or 1, _node_ip_address="127.0.0.1",
                 object_store_memory=256 * 1024**2, **common)


def _reachable(address: str) -> None:
    """``ray.init`` on an address where no cluster listens retries for ever: probe it first, within
    ``METABENCH_RAY_CONNECT_TIMEOUT_S``. ``auto`` (the cluster this machine's ``ray start`` recorded) is Ray's own."""
    if address == "auto":
        return
    host, port = split_host_port(address, option="--ray-address", example="127.0.0.1:6379 (or ray://HOST:10001)")
    probe(host, port, limit=RAY_CONNECT, what="a Ray cluster (--ray-address)",
          fix="start one there (`ray start --head --port PORT`) or correct --ray-address; without --ray-address "
              "metabench starts a local Ray", grpc=True)
