"""The local backend: a process pool on this machine (or this process alone for --jobs 1)."""

from __future__ import annotations

import multiprocessing
import os
import sys
from collections.abc import Iterator, Sequence
from concurrent.futures import Future, ProcessPoolExecutor, as_completed

from plan.planner import i18n
from plan.planner.batch.rows import Row
from plan.planner.batch.tasks import Task
from plan.planner.batch.work import run_task
from plan.planner.batch.worker_life import init_worker
from plan.planner.i18n.said import local, said_of, say


def failed_row(task: Task, exc: BaseException, where: str) -> Row:
    """The row of a task whose worker died (killed, out of memory): run_task itself never raises.
    `where`: batch.where.worker or batch.where.ray."""
    detail = " ".join(str(exc).split())
    # Ray's messages carry whole tracebacks
    detail = detail if len(detail) <= 200 else detail[:200] + " ..."
    # English, keyed (the results file's data; the table says it again in the reader's language)
    error = say("batch.worker_failed", where=say(where), kind=type(exc).__name__, detail=detail)
    return Row(
        file=str(task.path),
        variant=task.variant,
        status="error",
        total_cost=None,
        currency="",
        makespan_h=None,
        plan="",
        solve_time_s=0.0,
        hash=task.hash,
        error=error,
    )


def _serial(tasks: Sequence[Task]) -> Iterator[tuple[int, Row]]:
    for task in tasks:
        yield task.index, run_task(task)


def _start_pool(jobs: int) -> ProcessPoolExecutor:
    context = multiprocessing.get_context("forkserver")
    context.set_forkserver_preload(["plan.planner.batch.work"])
    return ProcessPoolExecutor(max_workers=jobs, mp_context=context, initializer=init_worker,
                               initargs=(os.getpid(),))


FILES_PER_WORKER = 8
"""Open files a pool worker costs this process and the forkserver (its pipes, sentinels and the
forkserver's own), with FILES_FOR_POOL for the pool itself and the results file: below that the
forkserver's children die while starting and print their tracebacks, which no caller can catch."""
FILES_FOR_POOL = 32


def _too_few_files(workers: int) -> str:
    """Why a pool of `workers` would run out of file descriptors (RLIMIT_NOFILE), or ''."""
    try:
        import resource

        soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
    except (ImportError, OSError, ValueError):  # no such limit on this system
        return ""
    need = FILES_FOR_POOL + FILES_PER_WORKER * workers
    if soft == resource.RLIM_INFINITY or soft >= need:
        return ""
    return say("batch.few_files", soft=soft, need=need, workers=workers)


def _warn(line: str) -> None:
    print(i18n.t("warning.frame", line=local(line)), file=sys.stderr)


def _stop_workers(pool: ProcessPoolExecutor) -> None:
    """End the workers now (Ctrl-C): what they were solving is dropped, not waited for."""
    processes = dict(getattr(pool, "_processes", None) or {})
    for process in processes.values():
        if process.is_alive():
            process.terminate()
    pool.shutdown(wait=False, cancel_futures=True)
    for process in processes.values():
        process.join(timeout=5)


def run_local(tasks: Sequence[Task], jobs: int) -> Iterator[tuple[int, Row]]:
    """Yield (task.index, row) as tasks finish. `jobs` processes; with one, everything runs in this
    process.

    Workers come from a forkserver that has already imported the planner: each is a cheap fork of a
    clean process (no threads of ours copied), and the planner's imports are paid once, not per
    worker. Workers ignore Ctrl-C and exit when this process dies; on Ctrl-C here they are ended at
    once. A pool that cannot start (no semaphores, no /dev/shm, a process limit) is said in one
    line, and the tasks run one at a time in this process instead.
    """
    if jobs <= 1 or len(tasks) <= 1:
        yield from _serial(tasks)
        return
    short = _too_few_files(min(jobs, len(tasks)))
    if short:
        _warn(say("batch.serial_instead", reason=short))
        yield from _serial(tasks)
        return
    try:
        pool = _start_pool(min(jobs, len(tasks)))
        futures: dict[Future[Row], Task] = {pool.submit(run_task, task): task for task in tasks}
    except (OSError, ValueError, RuntimeError, ImportError) as exc:
        _warn(say("batch.serial_instead", reason=say("batch.pool_failed", jobs=jobs,
                                                     kind=type(exc).__name__,
                                                     detail=said_of(exc))))
        yield from _serial(tasks)
        return
    try:
        for future in as_completed(futures):
            task = futures[future]
            try:
                row = future.result()
            except Exception as exc:
                row = failed_row(task, exc, "batch.where.worker")
            yield task.index, row
    except BaseException:  # Ctrl-C, or the consumer stopped early: drop what has not finished
        _stop_workers(pool)
        raise
    pool.shutdown(wait=True, cancel_futures=True)
