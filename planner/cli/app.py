"""The `plan` command line. Each command group lives in its own module; this file only wires them."""

from __future__ import annotations

import os
import sys
from typing import Annotated

import typer

from planner import __version__
from planner.cli.batch_cmd import batch_command
from planner.cli.catalog_cmd import catalog_command
from planner.cli.estimate_cmd import estimate_command
from planner.cli.pareto_cmd import pareto_command
from planner.cli.solve_cmd import explain_command, solve_command
from planner.cli.validate_cmd import schema_command, validate_command
from planner.interrupts import EXIT_INTERRUPTED, interrupt_behind, interrupted_line

app = typer.Typer(
    name="plan",
    help="Plan LLM training compute: GPU, count, layout, platform and billing, under your constraints.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)
app.command("solve")(solve_command)
app.command("explain")(explain_command)
app.command("pareto")(pareto_command)
app.command("validate")(validate_command)
app.command("estimate")(estimate_command)
app.command("catalog")(catalog_command)
app.command("schema")(schema_command)
app.command("batch")(batch_command)


def _version(value: bool) -> None:
    if value:
        typer.echo(f"plan {__version__}")
        raise typer.Exit(0)


@app.callback()
def _root(
    version: Annotated[bool, typer.Option("--version", callback=_version, is_eager=True,
                                          help="print the version and exit")] = False,
) -> None:
    """Plan LLM training compute."""


def main() -> None:
    """Entry point: no traceback reaches a user unless PLAN_DEBUG is set."""
    try:
        app()
    except SystemExit as exc:
        interrupt = interrupt_behind(exc)  # typer turns Ctrl-C into a silent exit 130
        if interrupt is None:
            raise
        print(interrupted_line(interrupt), file=sys.stderr)
        sys.exit(EXIT_INTERRUPTED)
    except KeyboardInterrupt as exc:  # one policy for every command: see planner.interrupts
        print(interrupted_line(exc), file=sys.stderr)
        sys.exit(EXIT_INTERRUPTED)
    except Exception as exc:  # a bug, not bad input: say so in one line
        if os.environ.get("PLAN_DEBUG"):
            raise
        print(f"internal error: {type(exc).__name__}: {exc} (set PLAN_DEBUG=1 for details; please report)",
              file=sys.stderr)
        sys.exit(70)


if __name__ == "__main__":
    main()
