"""Every answer that used an overlay lists its changes among its assumptions (issue 51 item 2): the
信创 case, confidential data on ModelArts (which the catalog sources as encrypting), with an overlay
that adds one feature, keeps the platform's other features (dedicated hardware) and plans there."""

from __future__ import annotations

import json
from pathlib import Path

import yaml
from typer.testing import CliRunner

from plan.planner.cli.app import app

REPO = Path(__file__).resolve().parents[2]
runner = CliRunner()


def test_an_answer_lists_what_its_overlay_changed(tmp_path):
    (tmp_path / "enc.yaml").write_text(yaml.safe_dump(
        {"platforms": [{"id": "huawei-modelarts", "features": {"env_snapshot": True}}]}),
        encoding="utf-8")
    scenario = yaml.safe_load((REPO / "scenarios" / "domestic_ascend.yaml").read_text("utf-8"))
    scenario["catalog"] = "enc.yaml"
    scenario["jobs"] = scenario["jobs"][:1]
    scenario["jobs"][0]["data"]["sensitivity"] = "confidential"
    scenario["solver"] |= {"work_limit": 5, "top_k": 1}
    path = tmp_path / "xinchuang.yaml"
    path.write_text(yaml.safe_dump(scenario, allow_unicode=True), encoding="utf-8")
    result = runner.invoke(app, ["solve", str(path), "--format", "json"])
    assert result.exit_code == 0, result.output
    plan = json.loads(result.stdout)["plans"][0]
    assert plan["jobs"][0]["platform"] == "huawei-modelarts"
    change = (f"catalog overlay {tmp_path / 'enc.yaml'}: platform huawei-modelarts: "
              "features.env_snapshot false -> true")
    assert plan["assumptions"][0] == change
    # The dedicated (monthly, yearly) pools keep dedicated hardware; only the shared hourly pool,
    # as the catalog sources it, lacks it.
    assert plan["jobs"][0]["billing"] != "hourly"
    assert all("(hourly)" in line for line in plan["explanation"] if "dedicated_hardware" in line)
