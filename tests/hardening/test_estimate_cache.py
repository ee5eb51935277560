"""The persistent estimate cache holds data only, and what it gives back is checked: a tampered,
corrupted or foreign row is a miss (recomputed), never a different plan; a folder others may write
is not used."""

from __future__ import annotations

import dataclasses
import json
import os
import pickle
import sqlite3
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from plan.models.catalog import builtin_catalog
from plan.models.layout import Layout
from plan.planner.estimate import Cluster, LayoutSpec, search, search_layout
from plan.planner.estimate import store as estimate_store
from tests.conftest import REPO

STUDENT = REPO / "scenarios" / "student_no_ops.yaml"


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    folder = tmp_path / "cache"
    monkeypatch.setenv(estimate_store.CACHE_ENV, str(folder))
    search._search.cache_clear()
    yield folder
    search._search.cache_clear()


def _search() -> search.SearchResult:
    catalog = builtin_catalog()
    return search_layout(catalog.model("llama3-8b"), "lora", Cluster.of(catalog.gpu("h100-sxm"), 8),
                         LayoutSpec(seq_len=2048))


def _stored(folder: Path) -> list[tuple[str, str]]:
    with sqlite3.connect(folder / "estimates.sqlite3") as db:
        return db.execute("SELECT key, value FROM estimates").fetchall()


def _rewrite(folder: Path, change: Callable[[dict[str, Any]], None], keep_checksum: bool) -> None:
    """Edit every stored row; with `keep_checksum` the checksum is made to match (a careful
    forger)."""
    with sqlite3.connect(folder / "estimates.sqlite3") as db:
        for key, text in db.execute("SELECT key, value FROM estimates").fetchall():
            data = json.loads(text)
            if "best" not in data:
                continue  # a least-memory row (test_a_forged_least_memory_row_is_a_miss)
            change(data)
            new = json.dumps(data)
            checksum = estimate_store._checksum(key, new) if keep_checksum else "0" * 64
            db.execute(
                "UPDATE estimates SET value = ?, checksum = ? WHERE key = ?", (new, checksum, key)
            )


def _scale_best(factor: float, field: str) -> Callable[[dict[str, Any]], None]:
    def change(data: dict[str, Any]) -> None:
        if data["best"] is not None:
            data["best"][field] *= factor
    return change


def _nan_memory(data: dict[str, Any]) -> None:
    if data["best"] is not None:
        data["best"]["memory"][0] = float("nan")


def _another_layout_word(data: dict[str, Any]) -> None:
    if data["best"] is not None:
        data["best"]["layout"][4] = "__import__('os')"


def _time_and_throughput_together(data: dict[str, Any]) -> None:
    """Every derived figure scaled with the step time: only the step's parts give it away."""
    best = data["best"]
    if best is not None:
        for name in ("step_time_s",):
            best[name] /= 100
        for name in ("tokens_per_s", "tokens_per_s_per_gpu", "model_tflops_per_gpu", "mfu"):
            best[name] *= 100


@pytest.mark.parametrize(
    "change",
    [
        _scale_best(0.01, "tokens_per_s"),
        _scale_best(100, "step_time_s"),
        _nan_memory,
        _another_layout_word,
        _time_and_throughput_together,
    ],
    ids=["throughput", "step-time", "nan-memory", "layout-word", "consistent-rates"],
)
@pytest.mark.parametrize("keep_checksum", [False, True], ids=["edited", "forged"])
def test_a_tampered_row_is_recomputed_and_the_answer_unchanged(
        cache: Path, change: Callable[[dict[str, Any]], None], keep_checksum: bool) -> None:
    honest = _search()
    estimate_store.flush()
    assert _stored(cache), "the search was stored"
    _rewrite(cache, change, keep_checksum)
    search._search.cache_clear()
    again = _search()
    assert again == honest and again.best is not None and honest.best is not None
    assert again.best.to_dict() == honest.best.to_dict()


def _search_on(gpus: int) -> search.SearchResult:
    catalog = builtin_catalog()
    return search_layout(
        catalog.model("llama3-8b"),
        "lora",
        Cluster.of(catalog.gpu("h100-sxm"), gpus),
        LayoutSpec(seq_len=2048),
    )


@pytest.mark.parametrize("keep_checksum", [False, True], ids=["copied", "forged"])
def test_rows_are_plain_json_and_a_row_under_another_key_is_a_miss(
    cache: Path, keep_checksum: bool
) -> None:
    honest = {gpus: _search_on(gpus) for gpus in (2, 8)}
    estimate_store.flush()
    rows = _stored(cache)
    assert len(rows) >= 2 and all(isinstance(json.loads(text), dict) for _, text in rows)
    # each row's value moved to every other key
    with sqlite3.connect(cache / "estimates.sqlite3") as db:
        for key, _ in rows:
            for other_key, text in rows:
                if other_key != key:
                    checksum = estimate_store._checksum(key, text) if keep_checksum else "0" * 64
                    db.execute(
                        "UPDATE estimates SET value = ?, checksum = ? WHERE key = ?",
                        (text, checksum, key),
                    )
                    break
    search._search.cache_clear()
    assert {gpus: _search_on(gpus) for gpus in (2, 8)} == honest


def test_a_pickle_from_an_earlier_version_is_never_loaded(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = tmp_path / "cache"
    folder.mkdir(mode=0o700)
    marker = tmp_path / "ran"

    class Boom:
        def __reduce__(self) -> tuple[Any, ...]:
            return (os.system, (f"touch {marker}",))

    with sqlite3.connect(folder / "estimates.sqlite3") as db:
        db.execute("CREATE TABLE results (key TEXT PRIMARY KEY, value BLOB NOT NULL, stored REAL "
                   "NOT NULL)")
        db.execute("INSERT INTO results VALUES (?, ?, 0)", ("k", pickle.dumps(Boom())))
    monkeypatch.setenv(estimate_store.CACHE_ENV, str(folder))
    search._search.cache_clear()
    assert _search().best is not None
    assert not marker.exists()
    with sqlite3.connect(folder / "estimates.sqlite3") as db:
        tables = {name for (name,) in db.execute("SELECT name FROM sqlite_master WHERE type = "
                                                 "'table'")}
    assert "results" not in tables, "the old pickles were dropped"
    search._search.cache_clear()


def test_a_new_cache_folder_is_private(cache: Path) -> None:
    _search()
    estimate_store.flush()
    assert (cache.stat().st_mode & 0o777) == 0o700
    assert (cache / "estimates.sqlite3").stat().st_mode & 0o077 == 0


@pytest.mark.skipif(not hasattr(os, "getuid"), reason="POSIX permissions")
@pytest.mark.parametrize("mode", [0o777, 0o770, 0o722])
def test_a_folder_others_may_write_is_not_used_with_one_line(tmp_path: Path, mode: int) -> None:
    folder = tmp_path / "shared"
    folder.mkdir()
    folder.chmod(mode)
    env = dict(os.environ, PLAN_CACHE_DIR=str(folder))
    done = subprocess.run(
        [sys.executable, "-m", "plan.planner.cli.app", "solve", str(STUDENT)],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    warnings = [line for line in done.stderr.splitlines() if "estimate cache" in line]
    assert len(warnings) == 1 and "other users" in warnings[0] and str(folder) in warnings[0]
    assert "Traceback" not in done.stderr
    assert not (folder / "estimates.sqlite3").exists(), "nothing read or written there"


@pytest.mark.skipif(not hasattr(os, "getuid"), reason="POSIX permissions")
def test_the_unused_cache_line_is_said_in_chinese(tmp_path: Path) -> None:
    folder = tmp_path / "shared"
    folder.mkdir()
    folder.chmod(0o777)
    env = dict(os.environ, PLAN_CACHE_DIR=str(folder))
    done = subprocess.run(
        [sys.executable, "-m", "plan.planner.cli.app", "solve", str(STUDENT), "--lang", "zh"],
        cwd=REPO, env=env, capture_output=True, text=True, timeout=300,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    warnings = [line for line in done.stderr.splitlines() if str(folder) in line]
    assert warnings == [f"警告：估算缓存 {folder} 其他用户可以写入，未使用（它必须只属于当前用户："
                        "对该文件夹执行 chmod 700，或设置 PLAN_CACHE_DIR）"]


@pytest.mark.skipif(not hasattr(os, "getuid"), reason="POSIX permissions")
def test_a_symlinked_cache_file_is_not_used(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = tmp_path / "cache"
    folder.mkdir(mode=0o700)
    (folder / "estimates.sqlite3").symlink_to(tmp_path / "elsewhere.sqlite3")
    monkeypatch.setenv(estimate_store.CACHE_ENV, str(folder))
    assert estimate_store.store() is None
    assert not (tmp_path / "elsewhere.sqlite3").exists()


def test_values_that_are_not_plain_finite_json_are_not_kept(tmp_path: Path) -> None:
    store = estimate_store.EstimateStore(tmp_path / "c")
    store.put("nan", {"x": float("nan")})
    store.put("object", {"x": object()})
    store.put("fine", {"x": [1, 2.5, "a"]})
    store.flush()
    assert store.get("nan") is None and store.get("object") is None
    assert store.get("fine") == {"x": [1, 2.5, "a"]}
    store.close()


def _solve_json(env: dict[str, str]) -> dict[str, Any]:
    done = subprocess.run(
        [sys.executable, "-m", "plan.planner.cli.app", "solve", str(STUDENT), "--format", "json"],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=True,
    )
    data = json.loads(done.stdout)
    data.pop("solve_time_s", None)
    return dict(data)


def test_a_plan_from_a_forged_cache_is_the_plan_from_none(tmp_path: Path) -> None:
    folder = tmp_path / "cache"
    env = dict(os.environ, PLAN_CACHE_DIR=str(folder))
    honest = _solve_json(env)
    _rewrite(folder, _time_and_throughput_together, keep_checksum=True)
    assert _solve_json(env) == honest


_AT = {f.name: i for i, f in enumerate(dataclasses.fields(Layout))}


def _nothing_fits() -> search.SearchResult:
    catalog = builtin_catalog()
    return search_layout(catalog.model("llama3-70b"), "full_finetune",
                         Cluster.of(catalog.gpu("rtx4090"), 2), LayoutSpec())


def _least_rows(folder: Path) -> list[tuple[str, dict[str, Any]]]:
    return [(key, data) for key, text in _stored(folder)
            if "least" in (data := json.loads(text))]


def _fresh_process_search() -> search.SearchResult:
    """As a new process finds it: nothing held in memory, only the store."""
    search._search.cache_clear()
    search._least_found.cache_clear()
    search._least_memory.cache_clear()
    return _nothing_fits()


def test_a_least_memory_row_is_reused_and_gives_the_scan_s_figures(
        cache: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    honest = _fresh_process_search()
    gib, closest = honest.least_memory_gib, honest.closest
    assert gib is not None and closest is not None and gib > 24
    assert closest.memory.total_gib == gib
    estimate_store.flush()
    assert len(_least_rows(cache)) == 1

    def no_scan(key: object) -> None:
        raise AssertionError("scanned again although the store holds the layout")

    monkeypatch.setattr(search, "_least_scan", no_scan)
    again = _fresh_process_search()
    assert again.least_memory_gib == gib
    assert again.closest is not None and again.closest.to_dict() == closest.to_dict()


@pytest.mark.parametrize("field", ["gpus", "seq_len", "word", "format"])
def test_a_forged_least_memory_row_is_a_miss(cache: Path, field: str) -> None:
    honest = _fresh_process_search()
    gib = honest.least_memory_gib
    estimate_store.flush()
    with sqlite3.connect(cache / "estimates.sqlite3") as db:
        for key, data in _least_rows(cache):
            row = data["least"]
            if field == "gpus":
                row[_AT["dp"]] *= 2  # a layout of another GPU count
            elif field == "seq_len":
                row[_AT["seq_len"]] //= 2
            elif field == "word":
                row[_AT["recompute"]] = "__import__('os')"
            else:
                data["format"] = -1
            new = json.dumps(data)
            db.execute("UPDATE estimates SET value = ?, checksum = ? WHERE key = ?",
                       (new, estimate_store._checksum(key, new), key))
    again = _fresh_process_search()
    assert gib is not None and again.least_memory_gib == gib
