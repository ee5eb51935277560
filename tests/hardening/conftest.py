"""Shared helpers for the hardening tests: hostile scenarios written to files, `plan` in-process."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest
import yaml
from typer.testing import CliRunner

from plan.planner.cli.app import app
from tests.hardening.hostile_base import HOSTILE_BASE, set_field

ALLOWED_EXITS = {0, 1, 2, 3, 130}


def with_field(dotted: str, value: Any) -> dict[str, Any]:
    data = copy.deepcopy(HOSTILE_BASE)
    set_field(data, dotted, value)
    return data


def invoke(*args: str) -> tuple[int, str, str, BaseException | None]:
    """`plan ARGS` in this process: exit code, stdout, stderr and any exception that escaped
    typer."""
    result = CliRunner().invoke(app, list(args))
    escaped = (
        result.exception
        if result.exception and not isinstance(result.exception, SystemExit)
        else None
    )
    return result.exit_code, result.stdout, result.stderr, escaped


@pytest.fixture
def write_scenario(tmp_path: Path):
    def write(data: dict[str, Any] | str, name: str = "s.yaml") -> Path:
        path = tmp_path / name
        path.write_text(data if isinstance(data, str) else yaml.safe_dump(data, allow_unicode=True),
                        encoding="utf-8")
        return path
    return write
