"""`plan export`: the chosen plan's layout as launch configs for one training stack."""

from __future__ import annotations

from enum import Enum
from pathlib import Path
from typing import Annotated

import typer

from plan.models.said import say_as
from plan.models.validation_words import listed
from plan.planner import i18n
from plan.planner.cli.common import ExitCode, fail
from plan.planner.cli.lang_option import Language, lang_option
from plan.planner.i18n.said import local, say, word
from plan.planner.plain_text import plain


class Stack(str, Enum):
    torchrun_fsdp = "torchrun-fsdp"
    deepspeed = "deepspeed"
    megatron = "megatron"
    torchtitan = "torchtitan"
    llamafactory = "llamafactory"
    accelerate = "accelerate"


# The command's arguments and options, each with its help text.
FileArg = Annotated[Path, typer.Argument(help="scenario file")]
ToArg = Annotated[Stack, typer.Option("--to", help="training stack to write configs for")]
OutDirArg = Annotated[Path, typer.Option("-o", "--out", help="folder to write into")]
PlanRankArg = Annotated[int, typer.Option("--plan", min=1, help="which plan (1 = best)")]
JobArg = Annotated[
    str | None, typer.Option("--job", help="one job id (default: every job of the plan)")
]
OverlayArg = Annotated[Path | None, typer.Option("--catalog", help="catalog overlay (your quotes)")]
CalibrationArg = Annotated[
    Path | None,
    typer.Option(
        "--calibration", help="calibration overlay from plan calibrate (your measured speed)"
    ),
]
TargetVersionArg = Annotated[
    str | None,
    typer.Option(
        "--target-version",
        help="release of the stack you will run (llamafactory: e.g. 0.9.5 or main; torchtitan: "
        "0.2.2); refused when that release cannot run the export",
    ),
]


def export_command(
    file: FileArg,
    to: ToArg,
    out_dir: OutDirArg,
    plan_rank: PlanRankArg = 1,
    job: JobArg = None,
    overlay: OverlayArg = None,
    calibration: CalibrationArg = None,
    target_version: TargetVersionArg = None,
    lang: Annotated[Language | None, lang_option()] = None,
) -> None:
    """Write the plan's layout as launch configs for torchrun-fsdp, deepspeed, megatron, torchtitan,
    llamafactory or accelerate, with a README.md of the commands in order.

    Exit codes: 0 written, 1 infeasible, 2 bad input or a layout the stack cannot express, 3 no
    solution.
    """
    from plan.models.errors import InputError
    from plan.models.loading import load_scenario
    from plan.planner.atomic_file import WriteFailed
    from plan.planner.export import ExportError, build_layout, write_export
    from plan.planner.export.versions import bad_target, check_target
    from plan.planner.export.writer import folder_note
    from plan.planner.output_target import OutputRefused, component_map, scenario_inputs
    from plan.planner.solve import solve

    try:
        from plan.planner.calibrate.use import with_calibration

        loaded = with_calibration(load_scenario(file, (overlay,) if overlay else ()), calibration)
    except InputError as exc:
        fail(exc)
    jobs = {j.id: j for j in loaded.scenario.jobs}
    if target_version is not None and (why := bad_target(to.value, target_version)):
        fail(why)
    if job is not None and job not in jobs:
        fail(say_as("cli.unknown_job", "--job: unknown job {job}; jobs: {jobs}", job=repr(job),
                    jobs=listed(jobs)))
    result = solve(loaded)
    if not result.plans:
        line = say("export.no_plan", file=plain(file), status=word("status", result.status))
        typer.echo(local(line), err=True)
        raise typer.Exit(
            ExitCode.INFEASIBLE if result.status == "infeasible" else ExitCode.NO_SOLUTION
        )
    if plan_rank > len(result.plans):
        fail(say_as("cli.plan_beyond", "--plan: {rank} is beyond the {n} plan(s) found",
                    rank=plan_rank, n=len(result.plans)))
    plan = result.plans[plan_rank - 1]
    chosen = [jp for jp in plan.jobs if job is None or jp.job == job]
    try:
        layouts = [build_layout(jp, jobs[jp.job], loaded.models[jp.job], loaded.catalog.gpu(jp.gpu))
                   for jp in chosen]
        for layout in layouts:
            try:
                if target_version is not None:
                    check_target(layout, to.value, target_version)
            except ExportError as exc:
                raise ExportError(say_as("export.writer_job", "job {job}: {problem}",
                                         job=layout.job, problem=exc.args[0])) from None
        plan_line = (f"Plan {plan.rank} of `{file.name}` ({result.proof()}): {plan.summary()}; "
                     f"total {plan.total_cost:,.0f} {result.currency}, {plan.makespan_h / 24:,.1f} "
                     "days.")
        written = write_export(out_dir, to.value, layouts, plan_line, plan.assumptions,
                               scenario_inputs(loaded, overlay, calibration))
    except ExportError as exc:
        fail(say_as("cli.option_problem", "{option}: {problem}", option=f"--to {to.value}",
                    problem=exc.args[0]))
    except (OutputRefused, WriteFailed) as exc:
        fail(say_as("cli.nothing_written", "{problem}; nothing was written",
                    problem=exc.args[0] if isinstance(exc, OutputRefused) else str(exc)))
    if len(layouts) > 1:
        for job_id, folder in component_map([layout.job for layout in layouts]).items():
            if folder != job_id:
                typer.echo(i18n.t("line.note", note=local(folder_note(job_id, folder))),
                           err=True)
    for path in written:
        typer.echo(plain(path))
