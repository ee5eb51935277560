"""`plan report`: one self-contained HTML page for a scenario's plan, to send to a PI."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from plan.models.said import say_as
from plan.planner import i18n
from plan.planner.cli.common import ExitCode, fail
from plan.planner.cli.lang_option import Language, lang_option
from plan.planner.plain_text import plain

if TYPE_CHECKING:
    from plan.models.loading import LoadedScenario
    from plan.planner.pareto.front import ParetoFront
    from plan.planner.plan import SolveResult

_EXIT = {"optimal": ExitCode.OK, "feasible": ExitCode.OK, "infeasible": ExitCode.INFEASIBLE,
         "unknown": ExitCode.NO_SOLUTION, "cut": ExitCode.NO_SOLUTION}


def check_report_path(path: Path, inputs: list[Path] | None = None, what: str = "-o") -> None:
    """Refuse a report path that is not .html, or that the writer would refuse (a missing folder, a
    symlink, one of the command's `inputs`): before the solve."""
    from plan.planner.output_target import OutputRefused, check_output_file

    if path.suffix.lower() not in (".html", ".htm"):
        fail(say_as("cli.report_html", "{path}: the report is an HTML page; name it .html",
                    path=plain(path)))
    try:
        check_output_file(path, inputs or [], what)
    except OutputRefused as exc:
        fail(exc.args[0])


def write_report(
    path: Path, result: SolveResult, loaded: LoadedScenario, front: ParetoFront | None = None
) -> None:
    from plan.planner.atomic_file import WriteFailed, write_atomically
    from plan.planner.report_html import report_html

    try:
        write_atomically(path, report_html(result, loaded, front))
    except OSError as exc:  # the writer's WriteFailed: one line naming the path and the cause
        fail(str(WriteFailed.from_os_error(path, exc)))


def report_command(
    file: Annotated[Path, typer.Argument(help="scenario file")],
    output: Annotated[Path, typer.Option("-o", "--output", help="the HTML page to write")],
    pareto: Annotated[
        bool, typer.Option("--pareto", help="add the cost/time front (a solve per point)")
    ] = False,
    overlay: Annotated[
        Path | None, typer.Option("--catalog", help="catalog overlay (your quotes)")
    ] = None,
    calibration: Annotated[
        Path | None,
        typer.Option(
            "--calibration", help="calibration overlay from plan calibrate (your measured speed)"
        ),
    ] = None,
    lang: Annotated[Language | None, lang_option()] = None,
) -> None:
    """Write one self-contained HTML page: the best plan, alternatives, a Gantt chart per platform
    and pool, cost by job and billing line, memory per GPU against the card, the assumptions (and
    the Pareto front).

    Exit codes: 0 written, 1 infeasible (the page says why), 2 bad input, 3 no solution within the
    limits, or an answer the wall-clock safety net cut.
    """
    from plan.models.errors import InputError
    from plan.models.loading import load_scenario
    from plan.planner.output_target import scenario_inputs
    from plan.planner.solve import solve

    check_report_path(output)
    try:
        from plan.planner.calibrate.use import with_calibration

        loaded = with_calibration(load_scenario(file, (overlay,) if overlay else ()), calibration)
    except InputError as exc:
        fail(exc)
    i18n.adopt(loaded.scenario.lang)
    check_report_path(output, scenario_inputs(loaded, overlay, calibration))
    result = solve(loaded)
    front = None
    if pareto and result.plans:
        from plan.planner.pareto.front import pareto_front
        from plan.planner.session import Session

        front = pareto_front(Session.from_loaded(loaded))
    write_report(output, result, loaded, front)
    typer.echo(i18n.t("report.wrote", path=plain(output)))
    raise typer.Exit(_EXIT[result.status])
