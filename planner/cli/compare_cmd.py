"""`plan compare FILE --job J`: one job under every billing mode and platform the scenario allows
(planner/compare.py), as a table, JSON or markdown."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.table import Table

from plan.models.errors import InputError
from plan.models.said import say_as
from plan.planner import i18n
from plan.planner.build_deadline import BuildTimeout
from plan.planner.cli.common import console, fail, print_json, printable, stop_no_solution
from plan.planner.cli.lang_option import Language, lang_option
from plan.planner.cli.solve_cmd import SolveFormat, _load
from plan.planner.compare import CompareRow, Comparison, compare_job
from plan.planner.i18n.numbers import money, signed_money
from plan.planner.i18n.said import local
from plan.planner.session import Session

COLUMNS = ("billing", "platform", "GPUs", "job cost", "plan vs best", "run time", "last ends",
           "exp. interr.", "holds", "payback")  # keys of the headers (compare.col.*)


def compare_command(
    file: Annotated[Path, typer.Argument(help="scenario file")],
    job: Annotated[str, typer.Option("--job", help="the job (or recurring job) to compare")],
    output: Annotated[SolveFormat, typer.Option("--format")] = SolveFormat.table,
    overlay: Annotated[
        Path | None, typer.Option("--catalog", help="catalog overlay (your quotes)")
    ] = None,
    lang: Annotated[Language | None, lang_option()] = None,
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
        stop_no_solution(exc.args[0])  # (keyed: said in the reader's language)
    except InputError as exc:
        fail(exc)
    except ValueError as exc:
        fail(say_as("cli.option_problem", "{option}: {problem}", option="--job",
                    problem=exc.args[0]))
    if output is SolveFormat.json:
        print_json(result.to_dict())
    elif output is SolveFormat.markdown:
        typer.echo(render_markdown(result))
    else:
        render_table(result)


def _money(value: float | None, currency: str, signed: bool = False) -> str:
    if value is None:
        return ""
    if signed:
        return signed_money(value, currency) if i18n.speaks_chinese() else f"{value:+,.0f}"
    return money(value, currency)


def _hours(value: float | None) -> str:
    if value is None:
        return ""
    return (i18n.t("compare.hours", h=value) if value < 48
            else i18n.t("compare.days", d=value / 24))


def cells(row: CompareRow, currency: str) -> list[str]:
    """A row with a plan, in COLUMNS order; marks: * cheapest, (best) the best plan's choice,
    (unproven) its solve stopped at the work limit."""
    marks = "".join(i18n.t(key) for key, on in (("compare.mark_cheapest", row.cheapest),
                                                ("compare.mark_best", row.in_best),
                                                ("compare.mark_unproven", not row.proven)) if on)
    return [i18n.word("billing", row.billing), row.platform, row.choice,
            _money(row.job_cost, currency) + marks,
            _money(row.delta_cost, currency, signed=True), _hours(row.run_h),
            i18n.t("compare.day", d=row.end_h / 24) if row.end_h is not None else "",
            f"{row.interruptions:g}" if row.interruptions is not None else "", local(row.held),
            local(row.payback)]


def lines_below(result: Comparison) -> list[str]:
    """What the table does not hold: the legend, instances left free, the pairs without a plan
    and why (one line each), and what the policy leaves out."""
    lines = [i18n.t("compare.legend")]
    lines += [i18n.t("compare.row_note", billing=i18n.word("billing", r.billing),
                     platform=r.platform, note=local(r.note)) for r in result.rows if r.note]
    lines += [i18n.t("compare.row_cannot", billing=i18n.word("billing", r.billing),
                     platform=r.platform, reason=local(r.reason)) for r in result.rows
              if r.status != "feasible"]
    return lines + [local(note) for note in result.notes]


def _title(result: Comparison) -> str:
    over = (i18n.t("compare.over", n=len(result.instances), first=result.instances[0],
                   last=result.instances[-1]) if len(result.instances) > 1 else "")
    best = (i18n.t("compare.best", cost=money(result.best_cost, result.currency))
            if result.best_cost is not None else "")
    return i18n.t("compare.title", job=result.job, over=over, best=best)


def render_table(result: Comparison) -> None:
    table = Table(title=printable(_title(result)))
    for name in COLUMNS:
        table.add_column(i18n.t(f"compare.col.{name}"), overflow="fold")
    for row in result.rows:
        if row.status == "feasible":
            table.add_row(*(printable(c) for c in cells(row, result.currency)))
    console.print(table)
    for line in lines_below(result):
        console.print(printable(f"- {line}"))


def render_markdown(result: Comparison) -> str:
    lines = [f"## {_title(result)}", "",
             "| " + " | ".join(i18n.t(f"compare.col.{name}") for name in COLUMNS) + " |",
             "|" + "---|" * len(COLUMNS)]
    for row in result.rows:
        if row.status == "feasible":
            lines.append("| " + " | ".join(c.replace("|", "\\|")
                                           for c in cells(row, result.currency)) + " |")
    lines += ["", *(f"- {line}" for line in lines_below(result))]
    return "\n".join(lines)
