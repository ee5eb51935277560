"""The persistent estimate cache: reused across runs and processes, never changes an answer, never
fails a run, stays bounded; and the commands that need no solver do not import it."""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from plan.models.catalog import builtin_catalog
from plan.models.gpu import GPU
from plan.models.loading import load_scenario
from plan.models.model_card import ModelCard
from plan.models.problem import Problem
from plan.planner import candidates
from plan.planner.candidates import build_problem
from plan.planner.estimate import Cluster, LayoutSpec, search, search_layout
from plan.planner.estimate import store as estimate_store
from tests.conftest import REPO

MEDICAL = REPO / "scenarios" / "medical_hybrid.yaml"


@pytest.fixture
def h100() -> GPU:
    return builtin_catalog().gpu("h100-sxm")


@pytest.fixture
def llama8b() -> ModelCard:
    return builtin_catalog().model("llama3-8b")


@pytest.fixture
def cache_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    folder = tmp_path / "cache"
    monkeypatch.setenv(estimate_store.CACHE_ENV, str(folder))
    search._search.cache_clear()
    # each build below must go to the estimator, not reuse a built problem
    candidates._BUILT.clear()
    yield folder
    search._search.cache_clear()


def _count_searches(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    calls = [0]
    real = search._searched

    def counting(key: search._Key) -> search.SearchResult:
        calls[0] += 1
        return real(key)

    monkeypatch.setattr(search, "_searched", counting)
    return calls


def test_a_second_process_reuses_every_search(
    cache_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    calls = _count_searches(monkeypatch)
    first = build_problem(load_scenario(MEDICAL))
    computed = calls[0]
    assert computed > 10 and (cache_dir / "estimates.sqlite3").is_file()
    search._search.cache_clear()  # what a new process starts with
    candidates._BUILT.clear()
    again = build_problem(load_scenario(MEDICAL))
    assert calls[0] == computed, "every search of the second build came from the store"
    def summary(problem: Problem) -> list[tuple[object, ...]]:
        return [
            (c.platform, c.gpu, c.gpus, c.billing, c.hours, c.cost, c.memory_gib_per_gpu, c.layout)
            for job in problem.jobs
            for c in problem.candidates[job]
        ]

    assert summary(again) == summary(first)


def test_variants_differing_in_budget_or_deadline_share_every_estimate(
        cache_dir: Path, monkeypatch: pytest.MonkeyPatch, write_scenario, base_scenario) -> None:
    calls = _count_searches(monkeypatch)
    build_problem(load_scenario(write_scenario(base_scenario)))
    computed = calls[0]
    search._search.cache_clear()
    candidates._BUILT.clear()
    variant = dict(base_scenario, budget="3k", deadline="3d")
    build_problem(load_scenario(write_scenario(variant, "variant.yaml")))
    assert computed > 0 and calls[0] == computed


def test_a_changed_gpu_entry_is_a_different_key(
    cache_dir: Path, h100: GPU, llama8b: ModelCard
) -> None:
    card_spec = LayoutSpec(seq_len=2048)
    card = llama8b
    slower = h100.model_copy(
        update={"memory_bandwidth_gb_per_s": h100.memory_bandwidth_gb_per_s / 2}
    )
    fast = search_layout(card, "lora", Cluster.of(h100, 8), card_spec).best
    search._search.cache_clear()
    slow = search_layout(card, "lora", Cluster.of(slower, 8), card_spec).best
    assert fast is not None and slow is not None
    assert slow.step_time_s >= fast.step_time_s


def test_a_corrupt_or_unwritable_cache_never_fails_a_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, h100: GPU, llama8b: ModelCard
) -> None:
    card = llama8b
    folder = tmp_path / "cache"
    folder.mkdir()
    (folder / "estimates.sqlite3").write_bytes(b"this is not a database" * 100)
    monkeypatch.setenv(estimate_store.CACHE_ENV, str(folder))
    search._search.cache_clear()
    assert search_layout(card, "lora", Cluster.of(h100, 2), LayoutSpec()).best is not None
    blocked = tmp_path / "file-not-folder"
    blocked.write_text("x")
    monkeypatch.setenv(estimate_store.CACHE_ENV, str(blocked))
    search._search.cache_clear()
    assert estimate_store.store() is None
    assert search_layout(card, "lora", Cluster.of(h100, 2), LayoutSpec()).best is not None
    search._search.cache_clear()


def test_off_turns_it_off(monkeypatch: pytest.MonkeyPatch) -> None:
    for value in ("off", "0", ""):
        monkeypatch.setenv(estimate_store.CACHE_ENV, value)
        assert estimate_store.store() is None


def test_the_store_stays_under_its_size_bound(tmp_path: Path) -> None:
    store = estimate_store.EstimateStore(tmp_path, max_mib=1)
    # 20 rows of 30 kB fit in the three quarters of a MiB a trim keeps, so the whole newest batch
    # stays (with 40 kB one row of it went, which one by the order of the key digests, that is, by
    # the code's hash)
    blob = os.urandom(15_000).hex()  # 30 kB of text: the store keeps JSON values
    for batch in range(5):
        for i in range(20):
            store.put(f"key-{batch}-{i}", blob)
        store.flush()
    size = (tmp_path / "estimates.sqlite3").stat().st_size
    assert size <= 1.5 * 2**20, size
    assert all(store.get(f"key-4-{i}") == blob for i in range(20)), "the newest rows are kept"
    assert store.get("key-0-0") is None, "the oldest rows were dropped"
    store.close()


def test_concurrent_writers_lose_nothing(tmp_path: Path) -> None:
    script = (
        "import sys; from pathlib import Path; from plan.planner.estimate.store import "
        "EstimateStore\ns = EstimateStore(Path(sys.argv[1])); w = sys.argv[2]\nfor i in "
        "range(200):\n    s.put(f'{w}-{i}', i)\n    if i % 10 == 9: s.flush()\ns.close()\n"
    )
    procs = [
        subprocess.Popen([sys.executable, "-c", script, str(tmp_path), f"w{n}"], cwd=REPO)
        for n in range(3)
    ]
    assert all(p.wait(timeout=120) == 0 for p in procs)
    store = estimate_store.EstimateStore(tmp_path)
    assert all(store.get(f"w{n}-{i}") == i for n in range(3) for i in range(200))


def _solve_json(env: dict[str, str]) -> dict[str, object]:
    out = subprocess.run(
        [sys.executable, "-m", "plan.planner.cli.app", "solve", str(MEDICAL), "--format", "json"],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=True,
    ).stdout
    data = json.loads(out)
    data.pop("solve_time_s", None)
    return data


def test_same_plan_with_the_cache_off_cold_and_warm(tmp_path: Path) -> None:
    env = dict(os.environ, PLAN_CACHE_DIR=str(tmp_path / "c"))
    cold = _solve_json(env)
    warm = _solve_json(env)
    off = _solve_json(dict(os.environ, PLAN_CACHE_DIR="off"))
    assert cold == warm == off


@pytest.mark.parametrize("args", [["--version"], ["validate", str(MEDICAL)], ["schema"],
                                  ["validate", "--help", "--lang", "zh"]])
def test_light_commands_import_neither_the_solver_nor_pandas(args: list[str]) -> None:
    probe = ("import sys, runpy\n"
             f"sys.argv = ['plan', *{args!r}]\nfrom plan.planner.cli.app import main\ntry:\n    "
             "main()\nexcept SystemExit:\n    pass\nheavy = [m for m in ('ortools', 'pandas', "
             "'networkx', 'plan.planner.solve') if m in sys.modules]\nprint('HEAVY', heavy, "
             "file=sys.stderr)\n")
    done = subprocess.run(
        [sys.executable, "-c", probe], cwd=REPO, capture_output=True, text=True, timeout=60
    )
    assert "HEAVY []" in done.stderr, done.stderr[-500:]


def test_many_small_rows_keep_the_file_itself_under_the_bound(tmp_path: Path) -> None:
    """Estimates are many small rows, whose text is only part of the file: the trim brings the
    database (its pages, wherever they are: file or write-ahead log) under the bound, so opening
    the store again finds nothing to trim (each open of a store left over its bound rewrote it
    whole)."""
    store = estimate_store.EstimateStore(tmp_path, max_mib=1)
    for batch in range(16):
        for i in range(400):
            store.put(f"key-{batch}-{i}", {"layout": f"tp=1 pp=1 dp={i}", "mfu": i / 1000})
        store.flush()
    store.close()
    rows, size = _rows_and_size(tmp_path / "estimates.sqlite3")
    assert 0 < rows < 16 * 400 and size <= 2**20, (rows, size)


def _rows_and_size(path: Path) -> tuple[int, int]:
    import sqlite3

    with contextlib.closing(sqlite3.connect(path)) as db:
        rows = db.execute("SELECT count(*) FROM estimates").fetchone()[0]
        pages = db.execute("PRAGMA page_count").fetchone()[0]
        page_size = db.execute("PRAGMA page_size").fetchone()[0]
    return int(rows), int(pages * page_size)
