"""`plan batch`: many scenarios and sweep variants, one row each, on a process pool or on Ray."""

from __future__ import annotations

import contextlib
import os
import sys
from collections import Counter
from collections.abc import Sequence
from enum import Enum
from functools import partial
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    SpinnerColumn,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)
from rich.table import Table

from plan.models.layout import Objective
from plan.models.limits import MAX_WORKERS
from plan.models.said import say_as
from plan.planner import i18n
from plan.planner.batch import (
    ResultsFileError,
    Row,
    SweepError,
    Tally,
    Task,
    build_tasks,
    expand_grid,
    expand_paths,
    parse_sweeps,
    ray_backend,  # imports Ray itself only when a batch runs on it
    results_format,
    run_batch,
)
from plan.planner.batch.local import run_local
from plan.planner.batch.output_lock import OutputLockError, locked_output
from plan.planner.batch.results_file import StoredRows, read_results
from plan.planner.batch.runner import Backend
from plan.planner.batch.sweep import MAX_RUN_VARIANTS, Variant
from plan.planner.cli.common import console, fail, printable, time_limit_option, work_limit_option
from plan.planner.cli.lang_option import Language, lang_option
from plan.planner.i18n import t, word
from plan.planner.i18n.numbers import money
from plan.planner.i18n.plan_words import stored_plan_summary
from plan.planner.i18n.said import Joined, local, say
from plan.planner.session import SolveOptions

STATUS_STYLE = {
    "optimal": "green",
    "feasible": "green",
    "infeasible": "yellow",
    "unknown": "yellow",
    "cut": "yellow",
    "error": "red",
}


class BackendChoice(str, Enum):
    local = "local"
    ray = "ray"


def _ray_backend(jobs: int, address: str | None) -> Backend:
    if not ray_backend.ray_available():
        fail(ray_backend.INSTALL_HINT)
    return partial(ray_backend.run_ray, jobs=jobs, address=address)


TABLE_ROWS_WITH_FILE = 200
"""Rows the terminal table shows when the results file holds them all: drawing 10,000 rows took
30 s (rich measures every cell), most of a finished batch's resume, for a table nobody reads."""


def _render(rows: Sequence[Row], out: Console, output: Path | None = None) -> None:
    shown = rows if output is None else rows[:TABLE_ROWS_WITH_FILE]
    title = t("batch.title", n=len(rows))
    if len(shown) < len(rows):
        title += t("batch.title_first", shown=len(shown), path=printable(str(output)))
    table = Table(title=title, show_lines=False)
    for column, justify in (
        ("#", "right"),
        (t("batch.col.file"), "left"),
        (t("batch.col.variant"), "left"),
        (t("batch.col.status"), "left"),
        (t("batch.col.gap"), "right"),
        (t("batch.col.cost"), "right"),
        (t("batch.col.days"), "right"),
        (t("batch.col.plan"), "left"),
        (t("batch.col.seconds"), "right"),
    ):
        table.add_column(column, justify=justify, overflow="fold")  # type: ignore[arg-type]
    for i, row in enumerate(shown, 1):
        cost = money(row.total_cost, row.currency) if row.total_cost is not None else ""
        days = f"{row.makespan_h / 24:,.2f}" if row.makespan_h is not None else ""
        style = STATUS_STYLE.get(row.status, "")
        gap = f"{row.gap:.1%}" if row.gap is not None else ""
        table.add_row(str(i), printable(row.file), printable(row.variant),
                      f"[{style}]{word('status', row.status)}[/{style}]", gap, cost, days,
                      printable(_row_words(row)), f"{row.solve_time_s:.2f}")
    out.print(table)


def _row_words(row: Row) -> str:
    """A row's plan or error in the reader's language: a row's error keeps its message keys from
    the worker (a Said pickles with them); its plan is read back through its English template,
    which also serves rows re-used from the results file (they hold no error: error rows are
    always solved again)."""
    return stored_plan_summary(row.plan) if row.plan else local(row.error)


# The command's arguments and options, each with its help text.
PathsArg = Annotated[
    list[str],
    typer.Argument(help="scenario files, folders (their *.yaml/*.yml) or glob patterns"),
]
OutputArg = Annotated[
    Path | None,
    typer.Option(
        "--output",
        "-o",
        help="results.csv or results.jsonl; re-running with the same file skips rows already "
        "solved",
    ),
]
JobsArg = Annotated[
    int | None,
    typer.Option(
        "--jobs",
        "-j",
        min=1,
        max=1024,
        help="scenarios solved at once (default: CPU count; on a Ray cluster given by "
        "--address, its size)",
    ),
]
BackendArg = Annotated[BackendChoice, typer.Option(help="where to solve")]
AddressArg = Annotated[
    str | None,
    typer.Option(
        help="Ray cluster address, e.g. auto or ray://head:10001 (default: a new local Ray "
        "with --jobs CPUs)"
    ),
]
SweepArg = Annotated[
    list[str] | None,
    typer.Option(
        "--sweep",
        help="FIELD=A,B,C or FIELD=START..STOP:STEP, e.g. budget=100k..500k:50k; repeat for a grid",
    ),
]
ObjectiveArg = Annotated[Objective | None, typer.Option(help="override each scenario's objective")]
TimeLimitArg = Annotated[float | None, time_limit_option("per scenario (default: each's own)")]
WorkLimitArg = Annotated[float | None, work_limit_option("per scenario (default: each's own)")]
ReuseUnprovenArg = Annotated[
    bool,
    typer.Option(
        "--reuse-unproven",
        help="on resume, also re-use rows not proven optimal (feasible, no solution in time); "
        "by default they are solved again",
    ),
]
WorkersArg = Annotated[
    int | None,
    typer.Option(
        min=1,
        max=MAX_WORKERS,
        help="CP-SAT workers per scenario (default 1: the parallelism is across scenarios)",
    ),
]
OverlayArg = Annotated[
    Path | None, typer.Option("--catalog", help="catalog overlay for every scenario")
]
CalibrationArg = Annotated[
    Path | None,
    typer.Option(
        "--calibration", help="calibration overlay from plan calibrate, for every scenario"
    ),
]
MaxVariantsArg = Annotated[
    int,
    typer.Option(
        "--max-variants",
        min=1,
        help="most rows (scenario files x sweep variants) one run may ask for; raise it for a "
        "larger run",
    ),
]


def batch_command(
    paths: PathsArg,
    output: OutputArg = None,
    jobs: JobsArg = None,
    backend: BackendArg = BackendChoice.local,
    address: AddressArg = None,
    sweep: SweepArg = None,
    objective: ObjectiveArg = None,
    time_limit: TimeLimitArg = None,
    work_limit: WorkLimitArg = None,
    reuse_unproven: ReuseUnprovenArg = False,
    workers: WorkersArg = None,
    overlay: OverlayArg = None,
    calibration: CalibrationArg = None,
    max_variants: MaxVariantsArg = MAX_RUN_VARIANTS,
    lang: Annotated[Language | None, lang_option()] = None,
) -> None:
    """Solve many scenarios (and sweep variants of each): one row each, in input order.

    Exit codes: 0 all solved, 1 some infeasible, without a solution in time or bad, 2 nothing could
    be read.
    """
    # --lang (else the locale: a scenario's lang: is one file's, not the table's) says the table
    # and the lines around it; the results file is data, the same in every language
    if address and backend is not BackendChoice.ray:
        fail(say_as("cli.address_ray", "--address is for --backend ray"))
    if overlay is not None and not overlay.is_file():
        fail(say_as("cli.overlay_missing", "{path}: --catalog overlay file not found",
                    path=overlay))
    held = contextlib.ExitStack()  # the results file's lock, released however the command ends
    with held:
        previous = _previous_rows(output, held)
        variants = _variants(sweep, calibration)
        jobs = jobs or os.cpu_count() or 1
        run: Backend = (_ray_backend(jobs, address) if backend is BackendChoice.ray
                        else partial(run_local, jobs=jobs))

        # Top-1 only: a row shows the best plan, so alternatives would be solved for nothing. One
        # CP-SAT worker per scenario unless asked: the batch already keeps every core busy with
        # separate scenarios.
        options = SolveOptions(objective=objective.value if objective else None, top_k=1,
                               time_limit_s=time_limit, work_limit=work_limit, workers=workers or 1)
        inputs = expand_paths(paths)
        if len(inputs) * len(variants) > max_variants:
            fail(say_as("cli.sweep_too_many", "--sweep: {files} scenario file(s) x {variants} "
                        "variant(s) = {rows} rows; at most {most} per run (--max-variants N "
                        "raises it)", files=len(inputs), variants=len(variants),
                        rows=len(inputs) * len(variants), most=max_variants))
        items: list[Task | Row] = list(
            build_tasks(inputs, variants, (overlay,) if overlay else (), options)
        )
        # through a symlink: its file is kept
        target = output.resolve() if output is not None else None
        rows, reused = _solve_with_progress(items, run, target, previous, reuse_unproven)
        _render(rows, console, output)
        raise typer.Exit(_report(rows, reused, output))


def _previous_rows(output: Path | None, held: contextlib.ExitStack) -> StoredRows:
    """The rows a results file holds already, its lock entered on `held` (none without a file).
    Stored rows that fail their check are named in one line: they are solved again."""
    if output is None:
        return StoredRows([], [])
    if not output.parent.is_dir():
        fail(say_as("cli.folder_missing", "{path}: folder {folder} not found", path=output,
                    folder=output.parent))
    try:
        results_format(output)
        # Before any work: the folder is writable, and no other run writes this file (see
        # output_lock).
        held.enter_context(locked_output(output))
        stored = read_results(output)
    except (ResultsFileError, OutputLockError) as exc:
        fail(exc.args[0])
    if stored.problems:
        _warn_left_out(output, stored.problems)
    return stored


def _warn_left_out(output: Path, problems: list[str]) -> None:
    """One line on stderr naming the stored rows that failed their check (the first three)."""
    more = len(problems) - 3
    shown = Joined([*problems[:3], *([say("batch.and_more", n=more)] if more > 0 else [])])
    line = say("batch.stored_failed", path=output, n=len(problems), shown=shown)
    print(i18n.t("warning.frame", line=local(line)), file=sys.stderr)


def _variants(sweep: list[str] | None, calibration: Path | None) -> list[Variant]:
    """The sweep's variants of each scenario, each given the calibration overlay if there is one."""
    try:
        variants = expand_grid(parse_sweeps(sweep or []))
    except SweepError as exc:
        fail(exc.args[0])
    if calibration is not None:
        from plan.models.errors import InputError
        from plan.planner.batch.sweep import Assignment
        from plan.planner.calibrate import Calibration

        try:
            Calibration.load(calibration)
        except InputError as exc:
            fail(exc)
        # Every variant gets the file, as if its scenario said `calibration:` (its bytes join the
        # resume hash).
        setting = Assignment((), "calibration", (), str(calibration.resolve()))
        variants = [Variant(v.label, (*v.assignments, setting)) for v in variants]
    return variants


def _report(rows: list[Row], reused: int, output: Path | None) -> int:
    """Print the tally (and a line on stderr when nothing could be read); the exit code."""
    tally = Tally.of(rows)
    resumed = t("batch.reused", n=reused, path=output) if reused else ""
    wrote = t("batch.wrote", path=output) if output else ""
    console.print(printable(f"{tally.line()}{resumed}{wrote}"))
    if tally.exit_code() == 2:
        print(i18n.t("error.frame", line=i18n.t("batch.nothing_read")), file=sys.stderr)
    return tally.exit_code()


def _progress_count(what: str, n: int) -> str:
    """'3 solved', '2 re-used', '1 infeasible': a count the progress bar shows."""
    if what == "solved":
        return t("batch.tally.solved", n=n)
    if what == "re-used":
        return t("batch.progress.reused", n=n)
    return t("batch.progress.status", n=n, status=word("status", what))


def _solve_with_progress(items: list[Task | Row], run: Backend, output: Path | None,
                         previous: StoredRows, reuse_unproven: bool) -> tuple[list[Row], int]:
    counts: Counter[str] = Counter()
    progress = Progress(
        SpinnerColumn(),
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        TextColumn(t("batch.progress.eta")),
        TimeRemainingColumn(),
        console=Console(stderr=True),
        transient=True,
        disable=not sys.stderr.isatty(),
    )
    bar = progress.add_task(t("batch.progress.solving"), total=len(items))

    def on_row(_: int, row: Row, reused: bool) -> None:
        counts["solved" if row.status in ("optimal", "feasible") else row.status] += 1
        counts["re-used"] += reused
        progress.update(bar, advance=1, description=t("batch.tally_sep").join(
            _progress_count(what, n) for what, n in counts.items() if n))

    try:
        with progress:
            outcome = run_batch(items, run, output=output, previous=previous.rows, on_row=on_row,
                                reuse_unproven=reuse_unproven, rewrite=not previous.clean)
    except ray_backend.RayStartError as exc:
        fail(exc.args[0])  # (keyed: said in the reader's language)
    return outcome.rows, outcome.reused


