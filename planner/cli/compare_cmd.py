"""`plan compare FILE --job J`: one job under every billing mode and platform the scenario allows
(planner/compare.py), as a table, JSON or markdown."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.table import Table

from plan.models.errors import InputError
from plan.planner.build_deadline import BuildTimeout
from plan.planner.cli.common import console, fail, print_json, printable, stop_no_solution
from plan.planner.cli.solve_cmd import SolveFormat, _load
from plan.planner.compare import CompareRow, Comparison, compare_job
from plan.planner.session import Session

COLUMNS = ("billing", "platform", "GPUs", "job cost", "plan vs best", "run time", "last ends",
           "exp. interr.", "holds", "payback")


def compare_command(
    file: Annotated[Path, typer.Argument(help="scenario file")],
    job: Annotated[str, typer.Option("--job", help="the job (or recurring job) to compare")],
    output: Annotated[SolveFormat, typer.Option("--format")] = SolveFormat.table,
    overlay: Annotated[
        Path | None, typer.Option("--catalog", help="catalog overlay (your quotes)")
    ] = None,
) -> None:
    """One job's best layout under every billing mode and platform: cost, time, interruptions,
    payback; the cheapest marked. A recurring job is compared over all its instances.

    Exit codes: 0 compared, 2 bad input, 3 no answer within the time limit.
    """
    loaded = _load(file, overlay)
    try:
        session = Session.from_loaded(loaded)
        result = compare_job(session, job)
    except BuildTimeout as exc:
        stop_no_solution(str(exc))
    except InputError as exc:
        fail(exc)
    except ValueError as exc:
        fail(f"--job: {exc}")
    if output is SolveFormat.json:
        print_json(result.to_dict())
    elif output is SolveFormat.markdown:
        typer.echo(render_markdown(result))
    else:
        render_table(result)


def _money(value: float | None, currency: str, signed: bool = False) -> str:
    if value is None:
        return ""
    return f"{value:+,.0f}" if signed else f"{value:,.0f} {currency}"


def _hours(value: float | None) -> str:
    if value is None:
        return ""
    return f"{value:,.1f} h" if value < 48 else f"{value / 24:,.1f} d"


def cells(row: CompareRow, currency: str) -> list[str]:
    """A row with a plan, in COLUMNS order; marks: * cheapest, (best) the best plan's choice,
    (unproven) its solve stopped at the work limit."""
    marks = "".join(text for text, on in ((" *", row.cheapest), (" (best)", row.in_best),
                                           (" (unproven)", not row.proven)) if on)
    return [row.billing, row.platform, row.choice, _money(row.job_cost, currency) + marks,
            _money(row.delta_cost, currency, signed=True), _hours(row.run_h),
            f"day {row.end_h / 24:,.1f}" if row.end_h is not None else "",
            f"{row.interruptions:g}" if row.interruptions is not None else "", row.held,
            row.payback]


def lines_below(result: Comparison) -> list[str]:
    """What the table does not hold: the legend, instances left free, the pairs without a plan
    and why (one line each), and what the policy leaves out."""
    lines = ["* cheapest plan; (best) the best plan's own choice; job cost: its bills and its "
             "share of what it holds; plan vs best: the whole plan's cost against the best plan"]
    lines += [f"{r.billing} on {r.platform}: {r.note}" for r in result.rows if r.note]
    lines += [f"{r.billing} on {r.platform}: cannot: {r.reason}" for r in result.rows
              if r.status != "feasible"]
    return lines + result.notes


def _title(result: Comparison) -> str:
    over = (f" over its {len(result.instances)} instances ({result.instances[0]} .. "
            f"{result.instances[-1]})" if len(result.instances) > 1 else "")
    best = (f"; best plan {result.best_cost:,.0f} {result.currency}"
            if result.best_cost is not None else "")
    return f"{result.job}{over}, forced onto each billing mode and platform{best}"


def render_table(result: Comparison) -> None:
    table = Table(title=printable(_title(result)))
    for name in COLUMNS:
        table.add_column(name, overflow="fold")
    for row in result.rows:
        if row.status == "feasible":
            table.add_row(*(printable(c) for c in cells(row, result.currency)))
    console.print(table)
    for line in lines_below(result):
        console.print(printable(f"- {line}"))


def render_markdown(result: Comparison) -> str:
    lines = [f"## {_title(result)}", "", "| " + " | ".join(COLUMNS) + " |",
             "|" + "---|" * len(COLUMNS)]
    for row in result.rows:
        if row.status == "feasible":
            lines.append("| " + " | ".join(c.replace("|", "\\|")
                                           for c in cells(row, result.currency)) + " |")
    lines += ["", *(f"- {line}" for line in lines_below(result))]
    return "\n".join(lines)
