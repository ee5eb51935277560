"""A cold build's searches run ahead across processes (candidates/searches_ahead.py): the problem is
the one a build in one process gives, field for field, with the store on or off and whatever a
helper does; a warm build starts no helper; a batch worker never starts one."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

import pytest

from plan.models.loading import load_scenario
from plan.models.problem import Problem
from plan.planner.batch import local
from plan.planner.candidates import reuse, searches_ahead, shared_estimates
from plan.planner.candidates.build import CandidateBuilder
from plan.planner.estimate import search
from plan.planner.estimate import store as estimate_store


def _fresh() -> None:
    """What a new process starts with: no built problem, no search in memory."""
    reuse._BUILT.clear()
    shared_estimates.forget()
    search._search.cache_clear()
    search._least_found.cache_clear()
    search._least_memory.cache_clear()


@pytest.fixture
def fresh(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """No search in memory, before and after; helpers start at once (these builds are short)."""
    monkeypatch.setattr(searches_ahead, "PAYS_AFTER_S", 0.0)
    _fresh()
    yield
    _fresh()


@pytest.fixture
def searched_by(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    """A file each process appends to, one line per unit it searched (pid and GPU): forked helpers
    write it too."""
    log = tmp_path / "searched.log"
    real = searches_ahead._Ahead.search

    def logged(self: searches_ahead._Ahead, unit: Any) -> None:
        real(self, unit)
        with open(log, "a", encoding="utf-8") as out:
            out.write(f"{os.getpid()} {unit.gpu}/{unit.jobs[0].id}\n")

    monkeypatch.setattr(searches_ahead._Ahead, "search", logged)
    return log


def _lines(log: Path) -> list[tuple[int, str]]:
    if not log.exists():
        return []
    return [(int(pid), unit) for pid, unit in
            (line.split() for line in log.read_text(encoding="utf-8").splitlines())]


def _built(path: Path, processes: str, monkeypatch: pytest.MonkeyPatch) -> Problem:
    monkeypatch.setenv(searches_ahead.ENV, processes)
    _fresh()
    return reuse.build_problem(load_scenario(path))


def _scenario(base_scenario: dict[str, Any], write_scenario: Any) -> Path:
    """Two jobs of other models (two units on every GPU) and a twin of the first."""
    twin = {**base_scenario["jobs"][0], "id": "a-again"}
    base_scenario["jobs"].append(twin)
    return write_scenario(base_scenario)  # type: ignore[no-any-return]


@pytest.mark.parametrize("store", ["off", "on"])
def test_the_problem_is_the_one_process_s(store, base_scenario, write_scenario, searched_by,
                                          fresh, tmp_path, monkeypatch) -> None:
    path = _scenario(base_scenario, write_scenario)
    cache, temporary = tmp_path / "cache", tmp_path / "temporary"
    temporary.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(temporary))
    monkeypatch.setenv(estimate_store.CACHE_ENV, "off")
    alone = _built(path, "1", monkeypatch)
    assert _lines(searched_by) == []
    monkeypatch.setenv(estimate_store.CACHE_ENV, str(cache) if store == "on" else "off")
    ahead = _built(path, "3", monkeypatch)
    assert ahead == alone
    searched = _lines(searched_by)
    pids = {pid for pid, _ in searched}
    assert os.getpid() in pids and len(pids) > 1, "this process and a helper searched units"
    # every unit once (the probe's own first, then each unit of the build by one process)
    units = [unit for _, unit in searched[1:]]
    assert len(units) == len(set(units)) > 3
    # (not the twin: its searches are a's)
    assert {unit.split("/")[1] for unit in units} == {"a", "b"}
    # the private store is gone with the build; the user's store holds the helpers' searches
    assert list(temporary.iterdir()) == []
    assert (cache / "estimates.sqlite3").is_file() == (store == "on")


def test_a_warm_build_starts_no_helper(base_scenario, write_scenario, searched_by, fresh,
                                       tmp_path, monkeypatch) -> None:
    path = _scenario(base_scenario, write_scenario)
    monkeypatch.setenv(estimate_store.CACHE_ENV, str(tmp_path / "cache"))
    cold = _built(path, "1", monkeypatch)
    warm = _built(path, "3", monkeypatch)
    assert warm == cold
    assert [pid for pid, _ in _lines(searched_by)] == [os.getpid()]  # the probe alone


def test_a_deferring_build_probes_past_a_gpu_it_asks_nothing_of(
        base_scenario, write_scenario, searched_by, fresh, monkeypatch) -> None:
    """Where every option of the first job's first GPU breaks a rule, a deferring build asks that
    GPU no search: the probe goes on to the next GPU, finds the build cold and starts helpers
    (rubin_buy_or_rent: the probe stopped there, so no helper ever ran)."""
    path = _scenario(base_scenario, write_scenario)
    monkeypatch.setenv(estimate_store.CACHE_ENV, "off")
    loaded = load_scenario(path)
    first_gpu = searches_ahead._Ahead(loaded, {}, defer=True).gpus(
        loaded.scenario.jobs[0])[0]
    real = CandidateBuilder.violations

    def first_gpu_breaks(self: CandidateBuilder, job: Any, option: Any) -> dict[str, str]:
        broken = real(self, job, option)
        return {**broken, "policy": "a test rule"} if option.place.gpu == first_gpu else broken

    monkeypatch.setattr(CandidateBuilder, "violations", first_gpu_breaks)

    def built(processes: str) -> Problem:
        monkeypatch.setenv(searches_ahead.ENV, processes)
        _fresh()
        return reuse.build_problem_and_builder(load_scenario(path), defer=True)[0]

    alone = built("1")
    assert _lines(searched_by) == []
    assert built("3") == alone
    searched = _lines(searched_by)
    assert searched[0][1] == f"{first_gpu}/a"  # the probe asked nothing here, and went on
    assert len({pid for pid, _ in searched}) > 1, "helpers searched units"


def test_a_short_build_starts_no_helper(base_scenario, write_scenario, searched_by, fresh,
                                        monkeypatch) -> None:
    path = _scenario(base_scenario, write_scenario)
    monkeypatch.setenv(estimate_store.CACHE_ENV, "off")
    alone = _built(path, "1", monkeypatch)
    monkeypatch.setattr(searches_ahead, "PAYS_AFTER_S", 1e9)
    assert _built(path, "3", monkeypatch) == alone
    searched = _lines(searched_by)
    assert {pid for pid, _ in searched} == {os.getpid()} and len(searched) > 3


def _failing_helper(self: searches_ahead._Ahead, unit: Any) -> None:
    raise MemoryError("a helper that fails")


def _dying_helper(self: searches_ahead._Ahead, unit: Any) -> None:
    os._exit(9)


@pytest.mark.parametrize("failure", [_failing_helper, _dying_helper])
def test_a_helper_that_fails_leaves_its_searches_to_the_build(failure, base_scenario,
                                                              write_scenario, fresh, monkeypatch
                                                              ) -> None:
    path = _scenario(base_scenario, write_scenario)
    monkeypatch.setenv(estimate_store.CACHE_ENV, "off")
    alone = _built(path, "1", monkeypatch)
    parent = os.getpid()
    real = searches_ahead._Ahead.search

    def search_or_fail(self: searches_ahead._Ahead, unit: Any) -> None:
        if os.getpid() != parent:
            failure(self, unit)
        real(self, unit)

    monkeypatch.setattr(searches_ahead._Ahead, "search", search_or_fail)
    assert _built(path, "2", monkeypatch) == alone


def test_a_failure_here_leaves_every_search_to_the_build(base_scenario, write_scenario, fresh,
                                                          monkeypatch) -> None:
    path = _scenario(base_scenario, write_scenario)
    monkeypatch.setenv(estimate_store.CACHE_ENV, "off")
    alone = _built(path, "1", monkeypatch)

    def broken(*_: Any) -> list[Any]:
        raise RuntimeError("units could not be listed")

    monkeypatch.setattr(searches_ahead, "units", broken)
    assert _built(path, "2", monkeypatch) == alone


@pytest.mark.parametrize(("setting", "count"), [("1", 1), ("off", 1), ("0", 1), ("2", 2),
                                                ("99", searches_ahead.MAX_PROCESSES),
                                                ("many", 1)])
def test_the_setting(setting, count, monkeypatch) -> None:
    monkeypatch.setenv(searches_ahead.ENV, setting)
    assert searches_ahead.processes() == count


def test_unset_is_one_process_and_auto_the_usable_cpus(monkeypatch) -> None:
    monkeypatch.delenv(searches_ahead.ENV, raising=False)
    assert searches_ahead.processes() == 1
    monkeypatch.setenv(searches_ahead.ENV, "auto")
    usable = min(len(os.sched_getaffinity(0)), searches_ahead.MAX_PROCESSES)
    assert searches_ahead.processes() == usable


def test_no_helpers_in_a_batch_worker_nor_a_ray_worker(monkeypatch) -> None:
    monkeypatch.setenv(searches_ahead.ENV, "4")
    assert searches_ahead.processes() == 4
    pool: ProcessPoolExecutor = local._start_pool(1)  # the batch's own pool
    try:
        assert pool.submit(searches_ahead.processes).result(timeout=60) == 1
    finally:
        pool.shutdown()
    monkeypatch.setattr(searches_ahead, "_forbidden", False)
    searches_ahead.forbid()  # what a Ray worker's chunk does first
    assert searches_ahead.processes() == 1


# `plan` whose helpers stall in their first unit (a search that runs on): the parent waits for them
# after its own units, until it is interrupted or killed.
STALLING_PLAN = (
    "import os, time, sys\n"
    "from plan.planner.candidates import searches_ahead\n"
    "searches_ahead.PAYS_AFTER_S = 0.0\n"
    "real, parent, marker = searches_ahead._Ahead.search, os.getpid(), sys.argv.pop(1)\n"
    "def search(self, unit):\n"
    "    if os.getpid() != parent:\n"
    "        open(marker, 'w').close()\n"
    "        time.sleep(600)\n"
    "    real(self, unit)\n"
    "searches_ahead._Ahead.search = search\n"
    "sys.argv = ['plan', *sys.argv[1:]]\n"
    "from plan.planner.cli.app import main\n"
    "main()\n"
)


def _alive(pid: int) -> bool:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text(encoding="utf-8")
    except OSError:
        return False
    return stat[stat.rindex(")") + 2] != "Z"


@pytest.mark.parametrize("end", ["ctrl-c", "killed"])
def test_helpers_end_with_the_build(end, base_scenario, write_scenario, tmp_path) -> None:
    path = _scenario(base_scenario, write_scenario)
    started = tmp_path / "helper-started"
    env = {**os.environ, searches_ahead.ENV: "2", estimate_store.CACHE_ENV: "off"}
    proc = subprocess.Popen(
        [sys.executable, "-c", STALLING_PLAN, str(started), "solve", str(path)], env=env,
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    ends = time.monotonic() + 120
    while not started.exists():
        assert time.monotonic() < ends and proc.poll() is None, proc.communicate()
        time.sleep(0.05)
    helpers = [int(pid) for pid in Path(f"/proc/{proc.pid}/task/{proc.pid}/children")
               .read_text().split()]
    assert helpers and all(_alive(pid) for pid in helpers)
    # Ctrl-C reaches the whole group, as a terminal's does; a killed parent says nothing
    os.killpg(proc.pid, signal.SIGINT) if end == "ctrl-c" else proc.kill()
    out, err = proc.communicate(timeout=60)
    if end == "ctrl-c":
        assert proc.returncode == 130 and out == ""
        assert err.strip().splitlines() == ["interrupted: nothing was kept (an interrupted "
                                            "search is not a result)"]
    ends = time.monotonic() + 10
    while any(_alive(pid) for pid in helpers) and time.monotonic() < ends:
        time.sleep(0.05)
    assert not any(_alive(pid) for pid in helpers)
