"""Every plan of every shipped scenario and docs example: each stack either exports files that parse
and keep the layout identities, or refuses with one reason naming the stack and the capability it
lacks; and the plan names a stack that runs it, as the reports say (issue 50 item 4)."""

from __future__ import annotations

import html
import re

import pytest

from plan.models.loading import load_scenario
from plan.planner.export import STACKS, ExportError, build_layout, render_stack
from plan.planner.export.writer import execution_model, exporting_stacks, stack_label
from plan.planner.report import render_markdown
from plan.planner.report_html import report_html
from plan.planner.session import SolveOptions
from plan.planner.solve import solve
from tests.conftest import REPO, SCENARIOS
from tests.export.helpers import check_identities
from tests.planner.builders import WALL_NET_S

SHIPPED = [*SCENARIOS, *sorted((REPO / "docs" / "examples").glob("*.yaml"))]


@pytest.fixture(scope="module", params=SHIPPED, ids=[p.stem for p in SHIPPED])
def solved(request):
    loaded = load_scenario(request.param)
    return loaded, solve(loaded, SolveOptions(time_limit_s=WALL_NET_S))


def test_every_plan_exports_consistently_or_names_what_is_missing(solved):
    loaded, result = solved
    jobs = {j.id: j for j in loaded.scenario.jobs}
    for plan in result.plans:
        for jp in plan.jobs:
            exported, reasons = 0, []
            layout = build_layout(jp, jobs[jp.job], loaded.models[jp.job])
            assert not layout.identities()
            for stack in STACKS:
                try:
                    files, notes = render_stack(layout, stack)
                except ExportError as exc:
                    message = str(exc)
                    reasons.append(message)
                    assert "\n" not in message and message.split(":")[0] in (
                        stack,
                        "accelerate",
                        "torchrun-fsdp",
                    )
                    continue
                exported += 1
                check_identities(stack, layout, files)
                assert all(isinstance(n, str) and n for n in notes)
            # Every job exports to some stack, except one that keeps activations in host memory
            # without recomputing them (torchtune's policy): none of the six stacks has it, and each
            # says so.
            if layout.recompute != "offload":
                assert exported >= 1, f"{jp.job} of plan {plan.rank} exports to no stack: {reasons}"
            elif exported == 0:
                assert all("offload" in r or "LoRA" in r for r in reasons), reasons


def test_every_job_is_planned_on_an_execution_some_export_runs(solved):
    """The execution model a job was timed with (Megatron, DeepSpeed, FSDP) is what at least one of
    its exports runs: LoRA on Megatron through LLaMA-Factory's Megatron-Bridge backend, never only
    through a stack that runs another execution (offloaded activations without recomputation,
    which no stack runs, excepted as above)."""
    loaded, result = solved
    jobs = {j.id: j for j in loaded.scenario.jobs}
    for plan in result.plans:
        for jp in plan.jobs:
            layout = build_layout(jp, jobs[jp.job], loaded.models[jp.job],
                                  loaded.catalog.gpu(jp.gpu))
            runs = {stack: execution_model(layout, stack) for stack in exporting_stacks(layout)}
            if layout.recompute != "offload" or runs:
                assert jp.framework in runs.values(), (plan.rank, jp.job, jp.framework, runs)


def test_the_reports_name_the_stacks_plan_export_writes(solved):
    """The HTML layout column names the plan's execution model and exactly the `plan export --to`
    stacks that write the job (LLaMA-Factory with the backend its launch.sh selects); the markdown
    names the execution model with the layout numbers export writes."""
    loaded, result = solved
    if not result.plans:
        return
    page = html.unescape(report_html(result, loaded))
    markdown = render_markdown(result)
    jobs = {j.id: j for j in loaded.scenario.jobs}
    for jp in result.plans[0].jobs:
        layout = build_layout(jp, jobs[jp.job], loaded.models[jp.job], loaded.catalog.gpu(jp.gpu))
        labels = [stack_label(layout, stack) for stack in exporting_stacks(layout)]
        row = re.search(rf'<tr data-job="{re.escape(jp.job)}">(.*?)</tr>', page, re.S)
        assert row is not None
        said = (f"--to {', '.join(labels)}" if labels else "no export writes this layout")
        assert f"{jp.framework} execution model; exports: {said}" in row[1] or (
            not labels and f"{jp.framework} execution model; no export" in row[1]), row[1]
        lines = [line for line in markdown.splitlines() if line.startswith(f"- {jp.job}: ")]
        assert any(f"{jp.framework}: tp={layout.tp} pp={layout.pp}" in line
                   and f"dp={layout.dp} zero={layout.zero}" in line for line in lines), jp.job
