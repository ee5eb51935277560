"""`plan pareto`: the cost/time front of a scenario, exported and drawn."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import contextmanager
from enum import Enum
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.progress import (
    BarColumn,
    SpinnerColumn,
    TaskProgressColumn,
    TextColumn,
    TimeElapsedColumn,
)
from rich.progress import Progress as RichProgress
from rich.table import Table

from plan.models.errors import InputError
from plan.models.loading import load_scenario
from plan.planner import i18n
from plan.planner.atomic_file import WriteFailed
from plan.planner.build_deadline import BuildTimeout
from plan.planner.cli.common import (
    ExitCode,
    console,
    fail,
    printable,
    stop_no_solution,
    time_limit_option,
    work_limit_option,
)
from plan.planner.cli.lang_option import Language, lang_option
from plan.planner.i18n import t, word
from plan.planner.i18n.numbers import amount, currency_unit
from plan.planner.i18n.said import local, say
from plan.planner.output_target import OutputRefused, check_output_file, scenario_inputs
from plan.planner.pareto.export import FRONT_SUFFIXES, write_front
from plan.planner.pareto.front import ParetoFront, Progress, pareto_front, time_unit
from plan.planner.pareto.plot import PLOT_SUFFIXES, write_plot
from plan.planner.plain_text import plain
from plan.planner.session import Session, SolveOptions


class XAxis(str, Enum):
    cost = "cost"


PARETO_TIME_S = 1200.0  # default wall-clock safety net for a whole front (work decides first)
PARETO_WORK = 240.0  # default deterministic time for a whole front
TABLE_ROWS = 25  # points listed in the terminal; the rest are counted ("and N more in the JSON")


class YAxis(str, Enum):
    time = "time"


class ZAxis(str, Enum):
    risk = "risk"


_EXIT = {"optimal": ExitCode.OK, "feasible": ExitCode.OK, "infeasible": ExitCode.INFEASIBLE,
         "unknown": ExitCode.NO_SOLUTION, "cut": ExitCode.NO_SOLUTION}


# The command's arguments and options, each with its help text.
FileArg = Annotated[Path, typer.Argument(help="scenario file")]
XArg = Annotated[XAxis, typer.Option("--x", help="horizontal axis")]
YArg = Annotated[YAxis, typer.Option("--y", help="vertical axis (time = makespan)")]
ZArg = Annotated[
    ZAxis | None, typer.Option("--z", help="third axis: risk = expected interruptions")
]
PointsArg = Annotated[
    int | None,
    typer.Option(
        "--points",
        min=2,
        max=500,
        help="at most this many points, evenly spread in time (default: every point of the "
        "exact front)",
    ),
]
OutputArg = Annotated[Path | None, typer.Option("-o", "--output", help="front.csv or front.json")]
PlotArg = Annotated[Path | None, typer.Option("--plot", help="front.png, front.svg or front.html")]
RelaxLimitsArg = Annotated[
    bool,
    typer.Option(
        "--relax-limits", help="lift the budget and deadlines to show what lies beyond them"
    ),
]
TimeLimitArg = Annotated[float | None, time_limit_option("all solves")]
WorkLimitArg = Annotated[float | None, work_limit_option("all solves")]
OverlayArg = Annotated[Path | None, typer.Option("--catalog", help="catalog overlay (your quotes)")]
QuietArg = Annotated[bool, typer.Option("--quiet", "-q", help="no progress bar on stderr")]
CalibrationArg = Annotated[
    Path | None,
    typer.Option(
        "--calibration", help="calibration overlay from plan calibrate (your measured speed)"
    ),
]


def pareto_command(
    file: FileArg,
    x: XArg = XAxis.cost,
    y: YArg = YAxis.time,
    z: ZArg = None,
    points: PointsArg = None,
    output: OutputArg = None,
    plot: PlotArg = None,
    relax_limits: RelaxLimitsArg = False,
    time_limit: TimeLimitArg = None,
    work_limit: WorkLimitArg = None,
    overlay: OverlayArg = None,
    quiet: QuietArg = False,
    calibration: CalibrationArg = None,
    lang: Annotated[Language | None, lang_option()] = None,
) -> None:
    """The exact cost/time Pareto front: for each finishing time, the cheapest plan.

    Exit codes: 0 the whole front found, 1 infeasible, 2 bad input, 3 no plan within the limits or
    a front the limits cut short (`complete: false`: the points found are shown).
    """
    # Checked before the solves, which can take minutes.
    for path, allowed in ((output, FRONT_SUFFIXES), (plot, PLOT_SUFFIXES)):
        if path is not None and path.suffix.lower() not in allowed:
            fail(say("file.unsupported", path=plain(path), allowed=", ".join(allowed)))
    try:
        from plan.planner.calibrate.use import with_calibration

        loaded = with_calibration(load_scenario(file, (overlay,) if overlay else ()), calibration)
    except InputError as exc:
        fail(exc)
    i18n.adopt(loaded.scenario.lang)
    try:
        inputs = scenario_inputs(loaded, overlay, calibration)
        for path, option in ((output, "-o"), (plot, "--plot")):
            if path is not None:
                check_output_file(path, inputs, option)
    except OutputRefused as exc:
        fail(exc.args[0])
    # Every point is a full solve: give the whole walk more work and time than one solve by default.
    solver = loaded.scenario.solver
    try:
        session = Session.from_loaded(loaded, SolveOptions(
            time_limit_s=time_limit or max(PARETO_TIME_S, solver.time_limit_s),
            work_limit=work_limit or max(PARETO_WORK, solver.work_limit)), defer=True)
    except BuildTimeout as exc:
        stop_no_solution(exc.args[0])  # (keyed: said in the reader's language)
    except InputError as exc:  # figures the solver cannot hold (plan.planner.cpsat.overflow_guard)
        fail(exc)
    try:
        with walk_progress(quiet) as on_point:
            front = pareto_front(
                session,
                max_points=points,
                z=z.value if z else None,
                relax_limits=relax_limits,
                on_point=on_point,
            )
    except InputError as exc:  # figures the solver cannot hold (see plan.planner.cpsat.run)
        fail(exc)
    _print(front)
    _write_outputs(front, output, plot)
    incomplete = front.status in ("optimal", "feasible") and not front.complete
    raise typer.Exit(ExitCode.NO_SOLUTION if incomplete else _EXIT[front.status])


def _write_outputs(front: ParetoFront, output: Path | None, plot: Path | None) -> None:
    """Write the front and the plot; a failure is one line, exit 2 (3 when the other file was
    written: it is kept, and said so)."""
    written: list[Path] = []
    for path, write in ((output, write_front), (plot, write_plot)):
        if path is None:
            continue
        try:
            write(front, path)
        except ImportError as exc:  # (the install hint: keyed)
            fail(exc.args[0] if exc.args and isinstance(exc.args[0], str) else str(exc))
        except WriteFailed as exc:
            kept = (t("pareto.kept", paths=", ".join(plain(p) for p in written)) if written
                    else t("pareto.nothing_written"))
            print(t("error.frame", line=t("pareto.write_failed", problem=local(str(exc)),
                                          kept=kept)), file=sys.stderr)
            raise typer.Exit(ExitCode.NO_SOLUTION if written else ExitCode.BAD_INPUT) from None
        written.append(path)
        console.print(printable(t("file.wrote", path=plain(path))))


@contextmanager
def walk_progress(quiet: bool) -> Iterator[Progress | None]:
    """A progress bar on stderr while the front is walked (none when quiet or not on a terminal):
    points found, the share of the cheapest-to-fastest span covered, elapsed time."""
    err = Console(stderr=True)
    if quiet or not err.is_terminal:
        yield None
        return
    bar = RichProgress(
        SpinnerColumn(),
        TextColumn("{task.description}"),
        BarColumn(),
        TaskProgressColumn(),
        TimeElapsedColumn(),
        console=err,
        transient=True,
    )
    task = bar.add_task("walking the front", total=1.0)

    def on_point(found: int, share: float) -> None:
        bar.update(task, completed=share, description=f"{found} point(s) found")

    with bar:
        yield on_point


def _print(front: ParetoFront) -> None:
    unit, per = time_unit(front) if front.points else ("days", 24.0)
    console.print(t("pareto.headline", name=f"[bold]{printable(front.scenario)}[/bold]",
                    n=len(front.points), status=word("status", front.status),
                    incomplete="" if front.complete else t("pareto.incomplete"),
                    s=f"{front.solve_time_s:.2f}"))
    if front.points:
        table = Table()
        for column in (
            "#",
            t("table.cost", cur=currency_unit(front.currency)),
            t("html.col.time", unit=t(f"html.unit.{unit}")),
            *([t("pareto.risk")] if front.z else []),
            t("table.plan"),
        ):
            table.add_column(column, overflow="fold")
        for n, p in enumerate(front.points[:TABLE_ROWS], start=1):
            mark = "" if p.within_budget and p.meets_deadlines else t("pareto.beyond")
            table.add_row(
                str(n),
                amount(p.cost),
                f"{p.makespan_h / per:,.2f}",
                *([f"{p.risk:.3f}"] if p.risk is not None else []),
                printable(_label(p) + mark),
            )
        console.print(table)
        if len(front.points) > TABLE_ROWS:
            console.print(t("pareto.more", n=len(front.points) - TABLE_ROWS))
    for note in front.notes:
        console.print(printable(t("pareto.note", note=local(note))))


def _label(point: Any) -> str:
    """The point's plan in words (`label()`), its billing modes in the reader's language."""
    jobs = point.plan.jobs
    if len(jobs) == 1:
        j = jobs[0]
        return f"{j.gpus}x {j.gpu}, {j.platform}, {word('billing', j.billing)}"
    return "; ".join(f"{j.job}: {j.gpus}x {j.gpu} {j.platform} {word('billing', j.billing)}"
                     for j in jobs)
