"""A small batch: two quick scenarios, one infeasible, one malformed, written in a temporary folder.

`tiny` (two LoRA/QLoRA jobs) costs about 1.1 CNY and `student` (one LoRA job) about 159 CNY, each
solved in well under a second; `grant` (two QLoRA jobs) trades GPUs for time (59-115 CNY);
`short_budget` is `tiny` with a 1 CNY budget (infeasible); `broken` is not YAML at all.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml
from typer.testing import CliRunner

from plan.planner.batch import Row, read_rows
from plan.planner.cli.app import app
from tests.conftest import BASE_SCENARIO, REPO

runner = CliRunner()
# The work limit decides each solve; the wall clock is only a net far above it (a 5-s net cut an
# infeasible variant's explanation on a busy CI machine, and the ray and local rows then differed)
FAST_SOLVER = {"time_limit_s": 300, "workers": 1, "seed": 0, "top_k": 1, "gap": 0.1}


def _tiny() -> dict[str, Any]:
    data = copy.deepcopy(BASE_SCENARIO)
    data["solver"] = dict(FAST_SOLVER)
    return data


def _shipped(name: str) -> dict[str, Any]:
    data = yaml.safe_load((REPO / "scenarios" / f"{name}.yaml").read_text(encoding="utf-8"))
    data["solver"] = dict(FAST_SOLVER)
    return data


def _student() -> dict[str, Any]:
    return _shipped("student_no_ops")


@pytest.fixture
def batch_files(tmp_path: Path) -> dict[str, Path]:
    """name -> path, for: tiny, student, short_budget (infeasible), broken (malformed YAML)."""
    folder = tmp_path / "scenarios"
    folder.mkdir()
    short = _tiny()
    short["name"], short["budget"] = "short-budget", 1
    texts = {
        "tiny": yaml.safe_dump(_tiny()),
        "student": yaml.safe_dump(_student()),
        "short_budget": yaml.safe_dump(short),
        "broken": "name: broken\njobs: [ {id: a, model: llama3-8b\n",
    }
    paths = {}
    for name, text in texts.items():
        paths[name] = folder / f"{name}.yaml"
        paths[name].write_text(text, encoding="utf-8")
    return paths


@pytest.fixture
def student_file(tmp_path: Path) -> Path:
    path = tmp_path / "student.yaml"
    path.write_text(yaml.safe_dump(_student()), encoding="utf-8")
    return path


def plan_batch(*args: str) -> Any:
    """Run `plan batch ARGS...` in this process; the result has exit_code, stdout, stderr."""
    return runner.invoke(app, ["batch", *args])


@pytest.fixture
def run_cli() -> Callable[..., Any]:
    return plan_batch


def rows_of(path: Path) -> list[Row]:
    return read_rows(path)


def timeless(rows: list[Row]) -> list[Row]:
    return [r.without_time() for r in rows]


@pytest.fixture
def grant_file(tmp_path: Path) -> Path:
    path = tmp_path / "grant.yaml"
    path.write_text(yaml.safe_dump(_shipped("grant_qlora_compare")), encoding="utf-8")
    return path
