"""The Ray backend: the same work function as Ray tasks, on a running cluster or a local Ray
instance.

Ray is an optional extra (`pip install 'plan[ray]'`); it is imported here only, when this backend
runs.
"""

from __future__ import annotations

import importlib.util
import logging
import socket
from collections.abc import Iterator, Sequence
from typing import Any

from plan.models.file_words import os_reason
from plan.models.said import say_as
from plan.planner.batch.local import failed_row
from plan.planner.batch.rows import Row
from plan.planner.batch.tasks import Task
from plan.planner.batch.work import run_task
from plan.planner.candidates import searches_ahead

# (the commands to type stay as they are typed, in every language)
INSTALL_HINT = say_as("batch.ray_missing", "--backend ray needs Ray, which is not installed; "
                      "install it with: {command} (in a checkout: {checkout})",
                      command="pip install 'plan[ray]'", checkout="pip install -e '.[ray]'")


class RayMissingError(RuntimeError):
    """Ray is not installed; the message says how to install it."""


class RayStartError(RuntimeError):
    """Ray could not be started or reached at the given address; one line."""


def ray_available() -> bool:
    return importlib.util.find_spec("ray") is not None


CONNECT_TIMEOUT_S = 5.0


def _check_reachable(address: str) -> None:
    """Ray retries an unreachable address for minutes; a plain TCP probe answers in seconds."""
    target = address.removeprefix("ray://")
    host, sep, port = target.rpartition(":")
    if not sep or not port.isdigit() or not host:
        return  # "auto" and other forms Ray resolves itself
    try:
        socket.create_connection((host, int(port)), timeout=CONNECT_TIMEOUT_S).close()
    except OSError as exc:
        raise RayStartError(say_as("batch.ray_unreachable", "--backend ray: nothing answers at "
                                   "{address} ({reason}); is the Ray head running ({command})?",
                                   address=repr(address), reason=os_reason(exc),
                                   command="ray start --head")) from None


def _init(ray: Any, jobs: int, address: str | None) -> bool:
    """Connect to `address`, or start a local instance with `jobs` CPUs. True if we started it
    (and stop it)."""
    if ray.is_initialized():
        # the caller's instance (a test fixture, a notebook): use it and leave it running
        return False
    options: dict[str, Any] = {"logging_level": logging.WARNING, "log_to_driver": False}
    if address:
        _check_reachable(address)
    try:
        if address:
            ray.init(address=address, **options)
        # "local": always a new instance of our own, even if a `ray start` cluster runs on this
        # machine
        else:
            ray.init(address="local", num_cpus=jobs, include_dashboard=False, **options)
    except Exception as exc:
        what = (say_as("batch.ray_reach", "reach Ray at {address}", address=repr(address))
                if address else say_as("batch.ray_start_local", "start a local Ray instance"))
        detail = " ".join(str(exc).split())[:300]  # (Ray's own words: data, as written)
        raise RayStartError(say_as("batch.ray_failed", "--backend ray: could not {what}: {kind}: "
                                   "{detail}", what=what, kind=type(exc).__name__,
                                   detail=detail)) from None
    return True


CHUNKS_PER_CPU = 4
"""Chunks per CPU the cluster offers: enough that a slow chunk does not leave CPUs idle at the end,
few enough that each worker solves runs of variants of one file (whose candidates it builds once,
planner/candidates/reuse.py) rather than one variant per task."""
MAX_CHUNK = 64  # rows a finished chunk hands back at once (and an interrupt drops at most)


def chunks(tasks: Sequence[Task], cpus: int) -> list[list[Task]]:
    """`tasks` cut, in order, into runs of at most MAX_CHUNK, about CHUNKS_PER_CPU per CPU: each
    run is a file's consecutive variants where there are many (build_tasks orders them so)."""
    size = max(1, min(MAX_CHUNK, -(-len(tasks) // max(1, cpus * CHUNKS_PER_CPU))))
    return [list(tasks[i:i + size]) for i in range(0, len(tasks), size)]


def run_chunk(tasks: Sequence[Task]) -> list[tuple[int, Row]]:
    """One Ray task: the rows of a run of variants, solved in order in one worker process (one
    CPU: its builds start no helpers)."""
    searches_ahead.forbid()
    return [(task.index, run_task(task)) for task in tasks]


def run_ray(
    tasks: Sequence[Task], jobs: int, address: str | None = None
) -> Iterator[tuple[int, Row]]:
    """Yield (task.index, row) as chunks of tasks finish; each chunk asks for one CPU.

    Variants go in chunks (`chunks`), not one Ray task each: a Ray task costs milliseconds to
    schedule and a fresh worker builds its candidates again, so one task per variant ran at a
    quarter of the process pool's pace. On a remote cluster (`address`), every node needs this
    package and its dependencies installed. Raises RayMissingError when Ray is not installed,
    RayStartError when it cannot start or connect.
    """
    if not ray_available():
        raise RayMissingError(INSTALL_HINT)
    import ray

    started_here = _init(ray, jobs, address)
    try:
        cpus = int(ray.cluster_resources().get("CPU", jobs)) or jobs
        remote = ray.remote(num_cpus=1, max_retries=1)(run_chunk)
        refs = {remote.remote(chunk): chunk for chunk in chunks(tasks, cpus)}
        pending = list(refs)
        try:
            while pending:
                done, pending = ray.wait(pending, num_returns=1)
                for ref in done:
                    try:
                        rows = ray.get(ref)
                    # the worker died or Ray lost the chunk: a row each, not the end
                    except Exception as exc:
                        rows = [(task.index, failed_row(task, exc, "batch.where.ray"))
                                for task in refs[ref]]
                    yield from rows
        finally:
            for ref in pending:
                ray.cancel(ref, force=True)
    finally:
        if started_here:
            ray.shutdown()
