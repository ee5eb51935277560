"""Candidate building across processes: a cold build's layout searches run ahead, in this process
and in forked helpers, so that the build itself (one process, in order, as always) reads them back
as a warm build does.

A cold build is nearly all layout searches (rubin_buy_or_rent: 1,288 searches, 26 of its 27 s of
CPU). Searches of different (model, method, GPU) share nothing (the GPU is in every search's key,
and another model or method asks other searches), while one model and method on one GPU share theirs
across platforms, billings and jobs of other sizes. So the searches are split into units, one per
(model card, method, GPU) in the build's order, each walking the ladders of its jobs on its GPU with
a builder of its own (`_Ahead`: the build's own `_job_candidates`, its options cut to the unit's
GPU), which asks exactly the searches the build will ask there. The processes take units in turn
from a shared counter (which took which changes no answer); their searches go to the estimate store
(planner/estimate/store.py), a private temporary one where the store is off.

The helpers only fill caches: the build decides everything, so its answer is the sequential one
whatever the number of processes, the load, or a helper's failure (a search no helper stored is
searched by the build itself).

When: on Linux (fork), with more than one usable CPU (`os.sched_getaffinity`),
`PLAN_BUILD_PROCESSES` set to `auto` or a number above 1 (it is off unless asked: on a machine
other work keeps busy, the helpers' share of the candidate work they repeat made cold builds slower
in wall time as well as in CPU: lab_six_jobs 20 -> 38 s at load 4-8 on 2 cores), never in a
process that multiprocessing started (a batch worker: no pools within pools) nor in a Ray worker
(`forbid`); and only once a probe (the first job's ladders on the first GPU that asks any search,
searched here) asked a search no cache held: a warm build reads all of them back, and there is
nothing to share out.
Helpers start once this process has spent PAYS_AFTER_S on the units with some left: a build
shorter than that stays in one process.

Helpers ignore Ctrl-C and die with this process (Linux's parent-death signal). On Ctrl-C, a cut by
the time limit (which covers this phase: build_deadline.py) or any failure here they are ended at
once; what they stored is whole searches (one SQLite transaction each flush), never a part of one.
"""

from __future__ import annotations

import contextlib
import ctypes
import multiprocessing
import os
import shutil
import signal
import sys
import tempfile
import time
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from multiprocessing.connection import wait
from multiprocessing.process import BaseProcess
from pathlib import Path
from typing import Any

import plan.planner.estimate.store as estimate_store
from plan.models.loading import LoadedScenario
from plan.models.scenario import Job
from plan.planner import build_deadline
from plan.planner.candidates.build import CandidateBuilder
from plan.planner.candidates.estimating import EstimateCache
from plan.planner.candidates.job_builds import JobBuild
from plan.planner.candidates.job_twins import twin_shape
from plan.planner.candidates.options import _Option
from plan.planner.candidates.windows import instance_shape
from plan.planner.estimate import search
from plan.planner.interrupts import ignore_sigint, sigint_deferred

ENV = "PLAN_BUILD_PROCESSES"
"""Processes a build's searches may use: `auto`, the usable CPUs (at most MAX_PROCESSES); a
number, that many; unset, `1` or `off`, this process alone."""
MAX_PROCESSES = 8
"""assumed: the most processes used (`auto`, or a larger number). Each helper is a copy of this
process (memory), and a build's units run out (rubin_buy_or_rent has 56, most of them small)."""
PAYS_AFTER_S = 1.0
"""assumed: CPU seconds this process spends on units before it starts helpers. A shorter build is
over before a helper pays for itself: forking, and reading its searches back from the store
(student_no_ops: a 0.6 s build took 0.6 s here with a helper searching half of it)."""
STOP_WAIT_S = 5.0
"""How long an ended helper is waited for before it is killed."""
PR_SET_PDEATHSIG = 1  # (linux/prctl.h)

_forbidden = False


def forbid() -> None:
    """No helpers for builds in this process (a Ray worker: Ray gave it one CPU)."""
    global _forbidden
    _forbidden = True


def processes() -> int:
    """How many processes may search a build's units: 1 where helpers are off or unsafe."""
    if _forbidden or sys.platform != "linux" or multiprocessing.parent_process() is not None:
        return 1
    setting = os.environ.get(ENV, "").strip().lower()
    if setting == "auto":
        return min(len(os.sched_getaffinity(0)), MAX_PROCESSES)
    # (a stated count is taken even beyond the usable CPUs: the tests run helpers on one)
    return max(1, min(int(setting), MAX_PROCESSES)) if setting.isdigit() else 1


@dataclass(frozen=True)
class _Unit:
    """The searches of some jobs (one model card and method) on one GPU."""

    gpu: str
    jobs: tuple[Job, ...]


class _Ahead(CandidateBuilder):
    """A builder that walks units' ladders for their searches: its candidates are dropped. Each
    job's options are listed once (the list of a 64-job quarter's jobs: 1.2 s), then cut to the
    unit's GPU."""

    def __init__(self, loaded: LoadedScenario, estimates: EstimateCache, defer: bool) -> None:
        super().__init__(loaded, estimates, defer=defer)
        self._listed: dict[str, list[_Option]] = {}
        self._gpu = ""

    def _options(self, job: Job) -> list[_Option]:
        listed = self._listed.get(job.id)
        if listed is None:
            listed = self._listed[job.id] = super()._options(job)
        return [option for option in listed if option.place.gpu == self._gpu]

    def gpus(self, job: Job) -> list[str]:
        """The GPUs of the job's options, in their order."""
        self._gpu = ""
        self._options(job)
        return list(dict.fromkeys(option.place.gpu for option in self._listed[job.id]))

    def search(self, unit: _Unit) -> None:
        """Ask the unit's searches, as the build's `job_build` would."""
        self._gpu = unit.gpu
        for job in unit.jobs:
            self.removed, self.clusters_of, self.asked, self._moves = [], {}, {}, {}
            self._job_candidates(job, 0, instance_shape(job))


def jobs_searched(jobs: Sequence[Job], kept: Mapping[str, JobBuild]) -> list[Job]:
    """The jobs whose searches a build asks, in its order: not those it keeps from another build,
    nor a recurring job's later instances or a twin of an earlier job (the same searches)."""
    shapes: set[str] = set()
    searched = []
    for job in jobs:
        taken = kept.get(job.id)
        shape = instance_shape(job) if job.series is not None else twin_shape(job)
        if (taken is not None and taken.job == job) or shape in shapes:
            continue
        shapes.add(shape)
        searched.append(job)
    return searched


def units(ahead: _Ahead, jobs: Sequence[Job]) -> list[_Unit]:
    """The jobs' searches by (model card, method, GPU), in the order the build asks them."""
    grouped: dict[tuple[str, str, str], list[Job]] = {}
    for job in jobs:
        build_deadline.check()  # (listing a job's options: 0.02 s; hundreds of jobs are seconds)
        card = ahead.loaded.models[job.id]
        for gpu in ahead.gpus(job):
            grouped.setdefault((card.id, str(job.method), gpu), []).append(job)
    return [_Unit(gpu, tuple(group)) for (_, _, gpu), group in grouped.items()]


@contextlib.contextmanager
def searched_ahead(loaded: LoadedScenario, estimates: EstimateCache,
                   kept: Mapping[str, JobBuild], defer: bool = False) -> Iterator[None]:
    """Run the block (the build) after its searches were run ahead across processes, where that
    pays (see the module's docstring); where the store is off and helpers ran, the block reads
    theirs from a private store, removed afterwards. `defer`: the build's (it searches no option
    that breaks a rule)."""
    count = processes()
    jobs = jobs_searched(loaded.scenario.jobs, kept) if count > 1 else []
    with contextlib.ExitStack() as private:
        if jobs:
            _search_ahead(_Ahead(loaded, estimates, defer), jobs, count, private)
        yield


def _search_ahead(ahead: _Ahead, jobs: Sequence[Job], count: int,
                  private: contextlib.ExitStack) -> None:
    """The probe; then, if it searched anything, the units here, and across `count` processes once
    this process has spent PAYS_AFTER_S on them with units left (`private`: what holds a private
    store open for the build, where the store is off). Any failure here ends the helpers and leaves
    the rest to the build (which says a cut by the time limit itself, at its first check)."""
    persistent = estimate_store.store()
    helpers: list[BaseProcess] = []
    try:
        started = time.process_time()
        if not _probe(ahead, jobs, persistent):
            return  # (warm: nothing searched)
        todo = units(ahead, jobs)
        counter = multiprocessing.get_context("fork").Value("q", 0)
        while _take(ahead, todo, counter):
            if time.process_time() - started >= PAYS_AFTER_S:
                if persistent is None:
                    _open_private(private)
                _start(ahead, todo, counter, count - 1, helpers)
                break
        while _take(ahead, todo, counter):
            pass
        _wait(helpers)
    except Exception:  # (the build searches what was not searched here)
        return
    finally:
        _stop(helpers)


def _probe(ahead: _Ahead, jobs: Sequence[Job],
           persistent: estimate_store.EstimateStore | None) -> bool:
    """Whether the build is cold: whether the first search its jobs ask, GPU by GPU in the build's
    order, was searched rather than read back. A deferring build asks no search of a GPU whose
    options all break a rule (rubin_buy_or_rent's first job on its first GPU), so the probe goes
    on to the next until one is asked; where none is, there is nothing to share out."""
    asked, searched = search.searches_asked(), _searched(persistent)
    for job in jobs:
        for gpu in ahead.gpus(job):
            ahead.search(_Unit(gpu, (job,)))
            if search.searches_asked() != asked:
                return _searched(persistent) != searched
    return False


def _searched(persistent: estimate_store.EstimateStore | None) -> int:
    """A count that grows with each search this process runs: the results it will store, or with
    the store off, the searches it did not hold."""
    return persistent.unflushed if persistent is not None else search.searches_missed()


def _open_private(private: contextlib.ExitStack) -> None:
    """A private store for this process and its helpers until the build is done, then removed."""
    folder = Path(tempfile.mkdtemp(prefix="plan-searches-"))
    private.callback(shutil.rmtree, folder, ignore_errors=True)
    private.enter_context(estimate_store.private_store(folder))


def _start(ahead: _Ahead, todo: Sequence[_Unit], counter: Any, count: int,
           helpers: list[BaseProcess]) -> None:
    """Up to `count` helpers, forked, taking units from `counter` as this process does (fewer where
    fewer units are left than that), each put in `helpers` as it starts. Ctrl-C waits until they
    are started (so that each is in `helpers`, to be ended) and ignore it."""
    left = len(todo) - counter.value
    for stream in (sys.stdout, sys.stderr):  # (nothing of this process's is left to copy)
        stream.flush()
    context = multiprocessing.get_context("fork")
    with sigint_deferred(), contextlib.suppress(OSError, ValueError):  # (no more processes)
        for _ in range(min(count, left - 1)):
            helper = context.Process(target=_helper, args=(ahead, todo, counter, os.getpid()),
                                     daemon=True)
            helper.start()
            helpers.append(helper)


def _take(ahead: _Ahead, todo: Sequence[_Unit], counter: Any) -> bool:
    """Search the next unit no process took; False when none was left."""
    with counter.get_lock():
        index = counter.value
        counter.value += 1
    if index >= len(todo):
        return False
    ahead.search(todo[index])
    return True


def _helper(ahead: _Ahead, todo: Sequence[_Unit], counter: Any, parent: int) -> None:
    """A forked helper: its own store connection; Ctrl-C is the parent's to decide. A failure ends
    it quietly (its unit is searched by the build)."""
    ignore_sigint()
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})  # (blocked by `_start`)
    _die_with(parent)
    estimate_store.forked()
    try:
        while _take(ahead, todo, counter):
            estimate_store.flush()  # (its searches, readable at once)
    except BaseException:
        os._exit(1)
    # (not multiprocessing's own exit, which flushes this copy of the parent's stdout and stderr)
    os._exit(0)


def _die_with(parent: int) -> None:
    """End this helper when the process that forked it dies, however it dies (SIGKILL included):
    Linux's parent-death signal; if that parent is gone already, now."""
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
    if os.getppid() != parent:
        os._exit(1)


def _wait(helpers: Sequence[BaseProcess]) -> None:
    """Until every helper is done; BuildTimeout once the build's time limit has passed."""
    left = [helper.sentinel for helper in helpers]
    while left:
        done = wait(left, timeout=build_deadline.remaining_s())
        if not done:
            build_deadline.check()
        left = [sentinel for sentinel in left if sentinel not in done]


def _stop(helpers: Sequence[BaseProcess]) -> None:
    """End the helpers still running and reap them all."""
    for helper in helpers:
        if helper.is_alive():
            helper.terminate()
    for helper in helpers:
        helper.join(STOP_WAIT_S)
        if helper.is_alive():
            helper.kill()
            helper.join()
