"""`plan catalog` tables fit an 80-150 column terminal, one line per entry (issue 13 item 9)."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from plan.planner.cli.app import app

runner = CliRunner()
SECTIONS = ["models", "gpus", "platforms", "offers", "purchases", "limits"]


def _count(section: str) -> int:
    result = runner.invoke(app, ["catalog", section, "--format", "json"])
    assert result.exit_code == 0
    return len(json.loads(result.stdout))


@pytest.mark.parametrize("width", [80, 120, 150])
@pytest.mark.parametrize("section", SECTIONS)
def test_one_line_per_entry_within_the_width(section, width):
    result = runner.invoke(app, ["catalog", section], env={"COLUMNS": str(width)})
    assert result.exit_code == 0
    lines = result.stdout.rstrip("\n").splitlines()
    assert max(len(line) for line in lines) <= width
    entries = _count(section)
    assert entries <= len(lines) <= entries + 6  # title (up to two lines), header box, bottom rule


@pytest.mark.parametrize("section", SECTIONS)
def test_sources_are_one_option_away(section):
    table = runner.invoke(app, ["catalog", section, "--sources"], env={"COLUMNS": "120"})
    assert table.exit_code == 0 and "source" in table.stdout
    rows = json.loads(runner.invoke(app, ["catalog", section, "--format", "json"]).stdout)
    assert all(row.get("source") for row in rows)
