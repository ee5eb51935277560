"""The local backend: a process pool on this machine (or this process alone for --jobs 1)."""

from __future__ import annotations

import multiprocessing
from collections.abc import Iterator, Sequence
from concurrent.futures import Future, ProcessPoolExecutor, as_completed

from planner.batch.rows import INTERNAL_ERROR, Row
from planner.batch.tasks import Task
from planner.batch.work import run_task


def failed_row(task: Task, exc: BaseException, where: str) -> Row:
    """The row of a task whose worker died (killed, out of memory): run_task itself never raises."""
    detail = " ".join(str(exc).split())
    detail = detail if len(detail) <= 200 else detail[:200] + " ..."  # Ray's messages carry whole tracebacks
    return Row(file=str(task.path), variant=task.variant, status="error", total_cost=None, currency="",
               makespan_h=None, plan="", solve_time_s=0.0, hash=task.hash,
               error=f"{INTERNAL_ERROR}{where} failed: {type(exc).__name__}: {detail}")


def run_local(tasks: Sequence[Task], jobs: int) -> Iterator[tuple[int, Row]]:
    """Yield (task.index, row) as tasks finish. `jobs` processes; with one, everything runs in this process.

    Workers come from a forkserver that has already imported the planner: each is a cheap fork of a
    clean process (no threads of ours copied), and the planner's imports are paid once, not per worker.
    """
    if jobs <= 1 or len(tasks) <= 1:
        for task in tasks:
            yield task.index, run_task(task)
        return
    context = multiprocessing.get_context("forkserver")
    context.set_forkserver_preload(["planner.batch.work"])
    pool = ProcessPoolExecutor(max_workers=min(jobs, len(tasks)), mp_context=context)
    try:
        futures: dict[Future[Row], Task] = {pool.submit(run_task, task): task for task in tasks}
        for future in as_completed(futures):
            task = futures[future]
            try:
                row = future.result()
            except Exception as exc:
                row = failed_row(task, exc, "worker process")
            yield task.index, row
    finally:  # on Ctrl-C or an early stop: drop what has not started
        pool.shutdown(wait=True, cancel_futures=True)
