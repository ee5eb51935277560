"""`plan solve` and `plan explain --why-not`."""

from __future__ import annotations

from enum import Enum
from pathlib import Path
from typing import Annotated

import typer

from plan.models.errors import InputError
from plan.models.layout import Objective
from plan.models.limits import MAX_GAP
from plan.models.loading import LoadedScenario, load_scenario
from plan.models.said import say_as
from plan.models.validation_words import listed
from plan.planner import i18n
from plan.planner.build_deadline import BuildTimeout
from plan.planner.cli.common import (
    ExitCode,
    console,
    fail,
    finite,
    print_json,
    printable,
    stop_no_solution,
    time_limit_option,
    work_limit_option,
)
from plan.planner.cli.lang_option import Language, lang_option
from plan.planner.cpsat.model import Bounds
from plan.planner.explain.why_not import parse_why_not, why_not
from plan.planner.i18n.plan_words import delta
from plan.planner.i18n.said import local
from plan.planner.report import render_markdown, render_table
from plan.planner.session import Session, SolveOptions
from plan.planner.solve import solve


class SolveFormat(str, Enum):
    table = "table"
    json = "json"
    markdown = "markdown"


_EXIT = {"optimal": ExitCode.OK, "feasible": ExitCode.OK, "infeasible": ExitCode.INFEASIBLE,
         "unknown": ExitCode.NO_SOLUTION, "cut": ExitCode.NO_SOLUTION}


def _load(file: Path, overlay: Path | None, calibration: Path | None = None) -> LoadedScenario:
    from plan.planner.calibrate.use import with_calibration

    try:
        loaded = with_calibration(load_scenario(file, (overlay,) if overlay else ()), calibration)
    except InputError as exc:
        fail(exc)
    i18n.adopt(loaded.scenario.lang)
    return loaded


def solve_command(
    file: Annotated[Path, typer.Argument(help="scenario file")],
    objective: Annotated[
        Objective | None, typer.Option(help="override the scenario's objective")
    ] = None,
    top: Annotated[int | None, typer.Option("--top", min=1, max=20, help="plans to return")] = None,
    gap: Annotated[
        float | None,
        typer.Option(
            min=0.0, max=MAX_GAP, callback=finite, help="alternatives within this fraction"
        ),
    ] = None,
    time_limit: Annotated[float | None, time_limit_option("all solves")] = None,
    work_limit: Annotated[float | None, work_limit_option("all solves")] = None,
    output: Annotated[SolveFormat, typer.Option("--format")] = SolveFormat.table,
    overlay: Annotated[
        Path | None, typer.Option("--catalog", help="catalog overlay (your quotes)")
    ] = None,
    report: Annotated[
        Path | None, typer.Option("--report", help="also write a self-contained HTML report")
    ] = None,
    calibration: Annotated[
        Path | None,
        typer.Option(
            "--calibration", help="calibration overlay from plan calibrate (your measured speed)"
        ),
    ] = None,
    lang: Annotated[Language | None, lang_option()] = None,
) -> None:
    """Find the optimal plan and near-optimal alternatives, with explanations.

    Exit codes: 0 solved, 1 infeasible (with explanation), 2 bad input, 3 no solution within the
    work limit, or an answer the wall-clock safety net cut (status cut).
    """
    if report is not None:
        from plan.planner.cli.report_cmd import check_report_path

        check_report_path(report)
    loaded = _load(file, overlay, calibration)
    if report is not None:
        from plan.planner.output_target import scenario_inputs

        check_report_path(report, scenario_inputs(loaded, overlay, calibration), "--report")
    options = SolveOptions(objective=objective.value if objective else None, top_k=top, gap=gap,
                           time_limit_s=time_limit, work_limit=work_limit)
    try:
        result = solve(loaded, options)
    except InputError as exc:  # figures the solver cannot hold (see plan.planner.cpsat.run)
        fail(exc)
    if output is SolveFormat.json:
        print_json(result.to_dict())
    elif output is SolveFormat.markdown:
        typer.echo(render_markdown(result))
    else:
        render_table(result, console)
    if report is not None:
        from plan.planner.cli.report_cmd import write_report

        write_report(report, result, loaded)
    raise typer.Exit(_EXIT[result.status])


def explain_command(
    file: Annotated[Path, typer.Argument(help="scenario file")],
    why_not_spec: Annotated[str, typer.Option("--why-not", help='e.g. "job=sft platform=aliyun-pai '
                                                                'gpu=h800 '
                                                                'gpus=16 billing=hourly"')],
    output: Annotated[SolveFormat, typer.Option("--format")] = SolveFormat.table,
    overlay: Annotated[Path | None, typer.Option("--catalog", help="catalog overlay")] = None,
    lang: Annotated[Language | None, lang_option()] = None,
) -> None:
    """Why not X? Force an option and report its extra cost, or the rules it breaks."""
    try:
        spec = parse_why_not(why_not_spec)
    except ValueError as exc:
        fail(say_as("cli.option_problem", "{option}: {problem}", option="--why-not",
                    problem=exc.args[0]))
    loaded = _load(file, overlay)
    try:
        session = Session.from_loaded(loaded)
    except BuildTimeout as exc:
        stop_no_solution(exc.args[0])  # (keyed: said in the reader's language)
    except InputError as exc:  # figures the solver cannot hold (plan.planner.cpsat.overflow_guard)
        fail(exc)
    catalog = loaded.catalog
    try:
        if "gpu" in spec:
            spec["gpu"] = catalog.gpu(spec["gpu"]).id
        if "platform" in spec and spec["platform"] not in {o.id for o in loaded.scenario.owned}:
            spec["platform"] = catalog.platform(spec["platform"]).id
    except KeyError as exc:
        fail(say_as("cli.option_problem", "{option}: {problem}", option="--why-not",
                    problem=getattr(exc, "message", str(exc))))
    if "job" in spec and spec["job"] not in session.problem.jobs:
        fail(say_as("cli.why_not_job", "--why-not: job: unknown job {job}; jobs: {jobs}",
                    job=repr(spec["job"]), jobs=listed(session.problem.jobs)))
    try:
        best = session.best(Bounds())
    except InputError as exc:
        fail(exc)
    if best.status == "unknown":
        fail(say_as("cli.work_limit", "{file}: no plan within the work limit; raise "
                    "solver.work_limit, then ask again", file=file))
    answer = why_not(session, spec, best if best.solved else None)
    if output is SolveFormat.json:
        print_json(answer.to_dict())
        return
    console.print(i18n.t("whynot.head", spec=printable(why_not_spec),
                         status=i18n.word("whynot_status", answer.status)))
    if answer.status == "feasible" and answer.plan is not None:
        cost, time = delta(answer.delta_cost or 0.0, loaded.scenario.currency,
                           answer.delta_makespan_h or 0.0)
        console.print(i18n.t("whynot.possible", cost=cost, time=time))
        for line in answer.plan.explanation:
            console.print(printable(f"  - {local(line)}"))
    for conflict in answer.conflicts:
        console.print(printable(i18n.t("whynot.conflict", constraint=conflict.constraint,
                                       detail=local(conflict.detail))))
    for reason in answer.reasons:
        console.print(printable(f"  - {local(reason)}"))
