"""The `--lang` option every command that prints takes, and `plan` itself (`plan --lang zh ...`):
a module of its own, so that the root command's start-up (`plan --version`) imports no more than
typer for it."""

from __future__ import annotations

from enum import Enum
from typing import Any

import typer


class Language(str, Enum):
    en = "en"
    zh = "zh"


def lang_option() -> Any:
    """The `--lang` option: the language of what people read (tables, markdown, the HTML page,
    error lines); JSON never changes with it. Unset: the scenario's `lang:`, else the locale. The
    command's parameter must be named `lang`: `plan.planner.cli.app` chooses the language from it
    for the command's run alone (from `plan --lang` where the command's own is unset)."""
    return typer.Option("--lang", case_sensitive=False,
                        help="en or zh (default: the scenario's lang:, else LANG/LC_ALL zh*)")
