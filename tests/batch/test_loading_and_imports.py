"""The loader entry point sweeps use agrees with `load_scenario`; Ray is imported only to run on it."""

from __future__ import annotations

import subprocess
import sys

import pytest

from models.errors import InputError
from models.loading import load_scenario, load_scenario_data
from models.yaml_io import read_yaml
from tests.conftest import BASE_SCENARIO, REPO, SCENARIOS


@pytest.mark.parametrize("path", SCENARIOS, ids=lambda p: p.name)
def test_same_result_as_load_scenario_for_shipped_scenarios(path):
    from_file = load_scenario(path)
    from_data = load_scenario_data(read_yaml(path), path)
    assert from_data.scenario == from_file.scenario and from_data.models == from_file.models


@pytest.mark.parametrize("change", [
    {"jobs": [{**BASE_SCENARIO["jobs"][0], "model": "llama3-8"}]},  # unknown catalog id
    {"currency": "XYZ"},  # no exchange rate
    {"budget": "-1"},  # schema
    {"catalog": "missing-quotes.yaml"},  # overlay file not found
])
def test_same_errors_as_load_scenario(change, write_scenario):
    data = {**BASE_SCENARIO, **change}
    path = write_scenario(data)
    with pytest.raises(InputError) as from_file:
        load_scenario(path)
    with pytest.raises(InputError) as from_data:
        load_scenario_data(data, path)
    assert from_data.value.problems == from_file.value.problems


def test_cli_does_not_import_ray():
    code = "import sys, planner.cli.app, planner.batch; print('ray' in sys.modules)"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO, check=True)
    assert done.stdout.strip() == "False"
