"""The report's layout column names the stacks `plan export --to` writes each job for (issue 50
item 4): the same list as rendering every stack, so the page and `plan export` agree."""

from __future__ import annotations

import html
import re

from plan.models.loading import load_scenario
from plan.planner.export import STACKS, ExportError, build_layout, render_stack
from plan.planner.report_html import report_html
from plan.planner.session import SolveOptions
from plan.planner.solve import solve
from tests.conftest import REPO
from tests.planner.builders import WALL_NET_S

SCENARIO = REPO / "docs" / "examples" / "phd_qlora_grant.yaml"


def test_the_layout_column_lists_the_stacks_that_export_each_job():
    loaded = load_scenario(SCENARIO)
    result = solve(loaded, SolveOptions(time_limit_s=WALL_NET_S))
    page = html.unescape(report_html(result, loaded))
    jobs = {j.id: j for j in loaded.scenario.jobs}
    for jp in result.plans[0].jobs:
        layout = build_layout(jp, jobs[jp.job], loaded.models[jp.job], loaded.catalog.gpu(jp.gpu))
        runs = []
        for stack in STACKS:
            try:
                render_stack(layout, stack)
            except ExportError:
                continue
            runs.append(stack)
        assert runs, jp.job
        row = re.search(rf'<tr data-job="{re.escape(jp.job)}">(.*?)</tr>', page, re.S)
        assert row is not None
        assert f"{jp.stack} execution model; exports: --to {', '.join(runs)}" in row[1]
