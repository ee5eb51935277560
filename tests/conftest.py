"""Shared fixtures: a minimal valid scenario, written to a temporary file through the public loader."""

from __future__ import annotations

import copy
import os
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml

# Tests never touch the user's estimate cache: each test session gets its own, fresh folder (also
# inherited by the CLI subprocesses the tests start).
os.environ["PLAN_CACHE_DIR"] = tempfile.mkdtemp(prefix="plan-test-cache-")

REPO = Path(__file__).resolve().parents[1]
SCENARIOS = sorted((REPO / "scenarios").glob("*.yaml"))

BASE_SCENARIO: dict[str, Any] = {
    "name": "tiny",
    "budget": "10k",
    "deadline": "7d",
    "sites": [{"id": "lab", "jurisdiction": "cn"}],
    "owned": [{"id": "lab-4090", "site": "lab", "gpu": "rtx4090", "count": 2, "gpus_per_node": 2,
               "cost_per_gpu_hour": 0.5}],
    "jobs": [
        {"id": "a", "model": "llama3-8b", "method": "qlora", "lora_rank": 16, "tokens": "10M",
         "seq_len": 2048, "data": {"sensitivity": "public", "at": "lab"}},
        {"id": "b", "model": "qwen2.5-7b", "method": "lora", "tokens": "10M", "seq_len": 2048,
         "after": ["a"]},
    ],
}


@pytest.fixture
def base_scenario() -> dict[str, Any]:
    return copy.deepcopy(BASE_SCENARIO)


@pytest.fixture
def write_scenario(tmp_path: Path) -> Callable[[Any], Path]:
    def write(data: Any, name: str = "scenario.yaml") -> Path:
        path = tmp_path / name
        path.write_text(data if isinstance(data, str) else yaml.safe_dump(data, allow_unicode=True),
                        encoding="utf-8")
        return path

    return write
