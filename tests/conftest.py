"""Shared fixtures: a minimal valid scenario, written to a temporary file through the public
loader."""

from __future__ import annotations

import copy
import os
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import settings

from plan.models.loading import load_scenario
from plan.planner.candidates import build_problem
from plan.planner.session import Session

# Tests never touch the user's estimate cache: each test session gets its own, fresh folder (also
# inherited by the CLI subprocesses the tests start).
os.environ["PLAN_CACHE_DIR"] = tempfile.mkdtemp(prefix="plan-test-cache-")
# Builds search in this process alone (what a test counts of a build is then this process's, on any
# machine); tests/planner/test_searches_ahead.py starts helpers itself, and
# PLAN_BUILD_PROCESSES=auto runs the whole suite with them.
os.environ.setdefault("PLAN_BUILD_PROCESSES", "1")

# Property tests draw the same examples on every run (CI included), so a result never depends on
# the draw; HYPOTHESIS_PROFILE=explore draws fresh ones, to look for new failing cases.
settings.register_profile("repeatable", derandomize=True, print_blob=True)
settings.register_profile("explore", derandomize=False, print_blob=True)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "repeatable"))

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


def generous_session(path: Path) -> Session:
    """A session on a scenario file with limits no test reaches (600 s, 1000 work units): what a
    test compares is then the proven answer, never a cut-off one."""
    loaded = load_scenario(path)
    settings = loaded.scenario.solver.model_copy(update={"time_limit_s": 600, "work_limit": 1000})
    return Session(build_problem(loaded), settings, loaded.scenario.objective, loaded=loaded)


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


class _EditorLoader(yaml.SafeLoader):
    """YAML as an editor's schema check reads it (yaml-language-server): `2027-01-01` is a string,
    not a date object, which JSON has no type for."""


_EditorLoader.yaml_implicit_resolvers = {
    first: [(tag, regexp) for tag, regexp in resolvers if tag != "tag:yaml.org,2002:timestamp"]
    for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
}


def yaml_as_json(text: str) -> Any:
    return yaml.load(text, Loader=_EditorLoader)
