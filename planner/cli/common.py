"""Shared CLI plumbing: output format choice, error reporting, exit codes."""

from __future__ import annotations

import json
import math
import sys
from enum import Enum, IntEnum
from typing import Any, NoReturn

import typer
from rich.console import Console
from rich.markup import escape

from plan.models.errors import InputError
from plan.planner import i18n
from plan.planner.i18n.said import local
from plan.planner.plain_text import json_text, plain


class ExitCode(IntEnum):
    OK = 0
    INFEASIBLE = 1
    BAD_INPUT = 2
    NO_SOLUTION = 3
    INTERRUPTED = 130


class OutputFormat(str, Enum):
    table = "table"
    json = "json"


console = Console(highlight=False, soft_wrap=False, width=140)


def printable(text: str) -> str:
    """User or overlay text made safe for the rich console: markup escaped, control characters,
    escapes, newlines and bidi overrides written escaped (`plan.planner.plain_text`)."""
    return escape(plain(text))


def fail(problems: InputError | list[str] | str) -> NoReturn:
    """Print each problem as one line on stderr (input text in it escaped) and exit with code 2."""
    lines = problems.problems if isinstance(problems, InputError) else (
        [problems] if isinstance(problems, str) else problems)
    for line in lines:
        print(i18n.t("error.frame", line=plain(local(line))), file=sys.stderr)
    raise typer.Exit(ExitCode.BAD_INPUT)


def finite(value: float | None) -> float | None:
    """Typer callback for float options: .inf and nan slip through click's ranges; refuse them
    here."""
    if value is not None and not math.isfinite(value):
        raise typer.BadParameter(f"{value} is not a finite number")
    return value


def stop_no_solution(message: str) -> NoReturn:
    """No answer within the limits (e.g. the time ran out while building candidates): one line,
    exit 3."""
    print(i18n.t("error.no_solution", line=plain(local(message))), file=sys.stderr)
    raise typer.Exit(ExitCode.NO_SOLUTION)


def print_json(data: Any) -> None:
    text = json.dumps(data, indent=2, ensure_ascii=False, default=str)
    sys.stdout.write(json_text(text) + "\n")


def time_limit_option(scope: str) -> Any:
    """The `--time-limit` option (the wall-clock safety net) of a command, `scope` its help."""
    from plan.models.limits import MAX_SOLVER_LIMIT

    return typer.Option("--time-limit", min=0.1, max=MAX_SOLVER_LIMIT, callback=finite,
                        help=f"wall-clock safety net, seconds, {scope}")


def work_limit_option(scope: str) -> Any:
    """The `--work-limit` option (CP-SAT's deterministic time) of a command, `scope` its help."""
    from plan.models.limits import MAX_SOLVER_LIMIT

    return typer.Option("--work-limit", min=0.01, max=MAX_SOLVER_LIMIT, callback=finite,
                        help=f"deterministic time, {scope} (the stop that does not depend on load)")


