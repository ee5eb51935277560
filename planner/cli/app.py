"""The `plan` command line. Each command lives in its own module; this file only wires them.

A command's module (and what it imports: the solver, without pandas (plan.constraints.sat), and the
estimator) is imported only when that command runs, so `plan --version` and `plan validate` start in
a blink.
"""

from __future__ import annotations

import functools
import importlib
import os
import sys
from collections.abc import Callable, Sequence
from contextvars import ContextVar
from typing import Annotated, Any, NoReturn

import typer

from plan.planner import __version__, i18n
from plan.planner.cli.help_words import help_in_language
from plan.planner.cli.lang_option import Language, lang_option
from plan.planner.collector import collector_paused
from plan.planner.interrupts import EXIT_INTERRUPTED, interrupt_behind, interrupted_line
from plan.planner.os_errors import SYSTEM_LIMITS, reason_of
from plan.planner.plain_text import plain

# command name -> (module, function); the order is the order of `plan --help`.
COMMANDS: dict[str, tuple[str, str]] = {
    "solve": ("plan.planner.cli.solve_cmd", "solve_command"),
    "explain": ("plan.planner.cli.solve_cmd", "explain_command"),
    "compare": ("plan.planner.cli.compare_cmd", "compare_command"),
    "pareto": ("plan.planner.cli.pareto_cmd", "pareto_command"),
    "validate": ("plan.planner.cli.validate_cmd", "validate_command"),
    "estimate": ("plan.planner.cli.estimate_cmd", "estimate_command"),
    "catalog": ("plan.planner.cli.catalog_cmd", "catalog_command"),
    "schema": ("plan.planner.cli.validate_cmd", "schema_command"),
    "batch": ("plan.planner.cli.batch_cmd", "batch_command"),
    "export": ("plan.planner.cli.export_cmd", "export_command"),
    "report": ("plan.planner.cli.report_cmd", "report_command"),
    "calibrate": ("plan.planner.cli.calibrate_cmd", "calibrate_command"),
}

CACHE_HELP = "do not read or write the persistent estimate cache (also: PLAN_CACHE_DIR=off)"


def _version(value: bool) -> None:
    if value:
        typer.echo(f"plan {__version__}")
        raise typer.Exit(0)


def _no_cache(value: bool) -> None:
    if value:
        os.environ["PLAN_CACHE_DIR"] = "off"


# the Ctrl-C a command ended on (typer turns it into a bare 130)
_interrupts: list[KeyboardInterrupt] = []


_root_language: ContextVar[Language | None] = ContextVar("plan_root_language", default=None)
"""`plan --lang X COMMAND ...`: the language of a command whose own --lang is unset."""


def _noting_interrupts(command: Callable[..., Any]) -> Callable[..., Any]:
    """The command, remembering the interrupt it ends on so that `main` can say what was kept."""

    @functools.wraps(command)
    def run(*args: Any, **kwargs: Any) -> Any:
        try:
            with i18n.kept_language():  # --lang and a scenario's lang: last for this command
                if "lang" in kwargs:  # a command with --lang (plan.planner.cli.lang_option)
                    named = kwargs["lang"] or _root_language.get()
                    i18n.choose(named.value if named else None)
                return command(*args, **kwargs)
        except KeyboardInterrupt as exc:
            _interrupts.append(exc)
            raise

    return run


def build_app(names: Sequence[str] | None = None) -> typer.Typer:
    """The app with the named commands (all of them when None)."""
    cli = typer.Typer(
        name="plan",
        help="Plan LLM training compute: GPU, count, layout, platform and billing, under your "
             "constraints. Scenario, model-card and overlay formats: docs/README.md (and `plan "
             "schema`).",
        no_args_is_help=True,
        add_completion=False,
        pretty_exceptions_enable=False,
    )
    for name in COMMANDS if names is None else names:
        module, function = COMMANDS[name]
        cli.command(name)(_noting_interrupts(getattr(importlib.import_module(module), function)))

    @cli.callback()
    def _root(
        version: Annotated[
            bool,
            typer.Option(
                "--version", callback=_version, is_eager=True, help="print the version and exit"
            ),
        ] = False,
        no_cache: Annotated[
            bool, typer.Option("--no-cache", callback=_no_cache, help=CACHE_HELP)
        ] = False,
        # (`main` has chosen the language from the command line already: so that `plan --lang zh
        # --help` is read, and `--lang` may come before the command's name)
        lang: Annotated[Language | None, lang_option()] = None,
    ) -> None:
        _root_language.set(lang)
        """Plan LLM training compute."""

    return cli


def commands_needed(args: Sequence[str]) -> list[str] | None:
    """The commands this command line can reach: the one it names, none for a bare `--version`, or
    all (None) for help and for a name that is not a command (so the error can suggest one)."""
    words = [a for a in args if not a.startswith("-")]
    if words:
        return [words[0]] if words[0] in COMMANDS else None
    if "--help" in args or not args:
        return None
    return []


def named_language(args: Sequence[str]) -> str | None:
    """The language a command line names (`--lang zh`, `--lang=zh`), if a known one."""
    for i, arg in enumerate(args):
        value = args[i + 1] if arg == "--lang" and i + 1 < len(args) else (
            arg.split("=", 1)[1] if arg.startswith("--lang=") else None)
        if value and value.lower() in i18n.LANGUAGES:
            return value.lower()
    return None


def __getattr__(name: str) -> typer.Typer:
    """`plan.planner.cli.app.app`: the full app, for tests and embedding."""
    if name == "app":
        return build_app()
    raise AttributeError(name)


def main() -> None:
    """Entry point: no traceback reaches a user unless PLAN_DEBUG is set."""
    try:  # typer >= 0.2x vendors click as typer._click; older typer raises click's own exceptions
        from typer._click import exceptions as cli_errors
    except ImportError:  # pragma: no cover - depends on the installed typer
        from click import exceptions as cli_errors  # type: ignore[no-redef]

    # the language of the error lines printed here, before or after the command's own choice
    i18n.choose(named_language(sys.argv[1:]))
    try:
        # the command's modules: many objects, all kept (plan.planner.collector)
        with collector_paused():
            cli = build_app(commands_needed(sys.argv[1:]))
        command = typer.main.get_command(cli)
        with help_in_language(command):  # --help in Chinese too
            code = command.main(args=sys.argv[1:], prog_name="plan", standalone_mode=False)
    except cli_errors.NoArgsIsHelpError:  # bare `plan`: typer has printed the help
        sys.exit(2)
    # a bad option or value: one line, like every other input error
    except cli_errors.UsageError as exc:
        from plan.planner.cli.usage_words import usage_line

        where = exc.ctx.command_path + i18n.t("sep") if exc.ctx else ""
        line = plain(where + usage_line(" ".join(exc.format_message().split())))
        print(i18n.t("error.frame", line=line), file=sys.stderr)
        sys.exit(2)
    except typer.Abort as exc:  # click's answer to Ctrl-C, and to an EOFError (not an interrupt)
        interrupt = interrupt_behind(exc)
        if interrupt is None and isinstance(exc.__cause__, Exception):
            _fail_on(exc.__cause__)
        print(interrupted_line(interrupt or KeyboardInterrupt()), file=sys.stderr)
        sys.exit(EXIT_INTERRUPTED)
    except cli_errors.ClickException as exc:
        print(i18n.t("error.frame", line=plain(exc.format_message())), file=sys.stderr)
        sys.exit(exc.exit_code)
    except KeyboardInterrupt as exc:  # one policy for every command: see plan.planner.interrupts
        print(interrupted_line(exc), file=sys.stderr)
        sys.exit(EXIT_INTERRUPTED)
    except Exception as exc:
        _fail_on(exc)
    if code == EXIT_INTERRUPTED and _interrupts:
        print(interrupted_line(_interrupts[-1]), file=sys.stderr)
    sys.exit(code if isinstance(code, int) else 0)


def _fail_on(exc: Exception) -> NoReturn:
    """An exception no command handled: the machine's limits (a full disk, too many open files) are
    one line naming the path, exit 2; anything else is a bug, said in one line, exit 70."""
    if os.environ.get("PLAN_DEBUG"):
        raise exc
    if isinstance(exc, OSError) and exc.errno in SYSTEM_LIMITS:
        where = f"{plain(exc.filename)}: " if exc.filename else ""
        print(i18n.t("error.frame", line=f"{where}{reason_of(exc)}"), file=sys.stderr)
        sys.exit(2)
    print(i18n.t("error.internal", kind=type(exc).__name__, detail=plain(exc)), file=sys.stderr)
    sys.exit(70)


if __name__ == "__main__":
    main()
