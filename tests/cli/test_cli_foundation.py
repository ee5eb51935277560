"""CLI exit codes and messages for validate, catalog, schema and --version."""

from __future__ import annotations

import json

from typer.testing import CliRunner

from plan.planner.cli.app import app
from tests.conftest import SCENARIOS

runner = CliRunner()


def test_version():
    result = runner.invoke(app, ["--version"])
    assert result.exit_code == 0 and result.stdout.startswith("plan ")


def test_validate_all_shipped_scenarios():
    result = runner.invoke(app, ["validate", *map(str, SCENARIOS)])
    assert result.exit_code == 0, result.output
    assert result.stdout.count("ok: ") == len(SCENARIOS)


def test_validate_bad_file_exit_2_one_line(base_scenario, write_scenario):
    base_scenario["jobs"][0]["model"] = "qwen2.5-72"
    path = write_scenario(base_scenario)
    result = runner.invoke(app, ["validate", str(path)])
    assert result.exit_code == 2
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1
    assert lines[0].startswith(f"error: {path}: jobs[0].model: unknown model 'qwen2.5-72'; did you "
                               "mean")
    assert "Traceback" not in result.output


def test_validate_missing_file():
    result = runner.invoke(app, ["validate", "no/such/file.yaml"])
    assert result.exit_code == 2 and "not found" in result.stderr


def test_catalog_json_lists_required_ids():
    gpus = json.loads(runner.invoke(app, ["catalog", "gpus", "--format", "json"]).stdout)
    assert {"rtx4090", "h800", "ascend-910b", "rubin-nvl72"} <= {g["id"] for g in gpus}
    models = json.loads(runner.invoke(app, ["catalog", "models", "--format", "json"]).stdout)
    assert {"qwen2.5-72b", "glm-4-9b", "deepseek-v3"} <= {m["id"] for m in models}
    offers = json.loads(runner.invoke(app, ["catalog", "offers", "--format", "json"]).stdout)
    assert all(o["source"] and o["as_of"] for o in offers)


def test_catalog_table_and_unknown_section():
    assert runner.invoke(app, ["catalog", "platforms"]).exit_code == 0
    assert runner.invoke(app, ["catalog", "prices"]).exit_code == 2


def test_schema_is_json_schema_with_scenario_fields():
    schema = json.loads(runner.invoke(app, ["schema"]).stdout)
    assert schema["type"] == "object"
    assert {"name", "budget", "deadline", "jobs", "owned", "policy"} <= set(schema["properties"])
