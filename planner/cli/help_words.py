"""Every command's `--help` in the reader's language (issue 51 item 6). The help strings stay
English in the code: they are the keys of plan.planner.i18n.help_zh. When the language is Chinese
(`main` has chosen it from `--lang` or the locale before click parses anything, so before an eager
`--help` renders), the command tree is said again from that table, and typer's own words around
the help (panel titles, `[default: ...]`, the usage prefix) are swapped for that rendering alone.
English help is left untouched."""

from __future__ import annotations

import functools
import inspect
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from plan.planner import i18n

# typer.rich_utils' names for its words around the help, and the English each holds
TYPER_WORDS = {
    "ARGUMENTS_PANEL_TITLE": "Arguments",
    "OPTIONS_PANEL_TITLE": "Options",
    "COMMANDS_PANEL_TITLE": "Commands",
    "DEFAULT_STRING": "[default: {}]",
    "REQUIRED_LONG_STRING": "[required]",
}


def commands_of(root: Any) -> Iterator[Any]:
    """The click command `root` and every command under it."""
    yield root
    for command in getattr(root, "commands", {}).values():
        yield from commands_of(command)


def params_of(command: Any) -> list[Any]:
    """The command's options and arguments, with the `--help` click adds (made here, once: click
    keeps the one it made first)."""
    helper = command.get_help_option(command.context_class(command, info_name=command.name))
    return [*command.params, *([helper] if helper is not None else [])]


def help_key(text: str) -> str:
    """The table's key for a help string: a docstring's indentation removed, as typer shows it."""
    return inspect.cleandoc(text)


def _said(text: str | None) -> str | None:
    from plan.planner.i18n.help_zh import HELP

    return HELP.get(help_key(text), text) if text else text


def _usage_in_chinese(command: Any, ctx: Any, formatter: Any) -> None:
    """click's usage line (Command.format_usage) with the Chinese prefix."""
    from plan.planner.i18n.help_zh import FRAME

    pieces = command.collect_usage_pieces(ctx)
    formatter.write_usage(ctx.command_path, " ".join(pieces), prefix=FRAME["Usage: "])


def say_in_chinese(root: Any) -> None:
    """The help of `root` and of every command under it, its options and arguments, in Chinese."""
    from plan.planner.i18n.help_zh import FRAME

    for command in commands_of(root):
        command.help = _said(command.help)
        for param in params_of(command):
            param.help = _said(getattr(param, "help", None))
        command.options_metavar = FRAME.get(command.options_metavar, command.options_metavar)
        if hasattr(command, "subcommand_metavar"):
            command.subcommand_metavar = FRAME.get(command.subcommand_metavar,
                                                   command.subcommand_metavar)
        # an instance's own usage line: the prefix is an argument click never passes
        command.format_usage = functools.partial(_usage_in_chinese, command)


def _folding(make_text: Any, **fields: Any) -> Any:
    """typer's help text, broken at the edge of its table cell: a Chinese sentence has no space
    to break at, and rich would cut it short with '…' (typer's cells are made to end so)."""
    text = make_text(**fields)
    if hasattr(text, "overflow"):
        text.overflow = "fold"
    return text


@contextmanager
def help_in_language(root: Any) -> Iterator[None]:
    """While it lasts, `root` renders its help in the current language."""
    if i18n.language() != "zh":
        yield
        return
    from typer import rich_utils

    from plan.planner.i18n.help_zh import FRAME

    say_in_chinese(root)
    before = {name: getattr(rich_utils, name, None) for name in (*TYPER_WORDS, "_make_rich_text")}
    for name, english in TYPER_WORDS.items():
        if before[name] == english:  # another typer's words are left as they are
            setattr(rich_utils, name, FRAME[english])
    if before["_make_rich_text"] is not None:
        rich_utils._make_rich_text = functools.partial(_folding, before["_make_rich_text"])
    try:
        yield
    finally:
        for name, value in before.items():
            if value is not None:
                setattr(rich_utils, name, value)
