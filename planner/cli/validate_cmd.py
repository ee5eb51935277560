"""`plan validate FILE...` and `plan schema`."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from plan.models.errors import InputError
from plan.models.loading import load_scenario
from plan.planner.cli.common import ExitCode, console, print_json, printable
from plan.planner.cli.lang_option import Language, lang_option
from plan.planner.i18n import t
from plan.planner.i18n.said import local, say
from plan.planner.plain_text import plain


def validate_command(
    files: Annotated[list[Path], typer.Argument(help="scenario files")],
    lang: Annotated[Language | None, lang_option()] = None,
) -> None:
    """Check scenario files: schema, cross-references and catalog ids. Exit 2 if any is bad."""
    bad = 0
    for path in files:
        try:
            loaded = load_scenario(path)
        except InputError as exc:
            bad += 1
            for line in exc.problems:
                typer.echo(t("error.frame", line=plain(local(line))), err=True)
            continue
        s = loaded.scenario
        console.print(printable(local(say("validate.ok", path=str(path), name=repr(s.name),
                                          jobs=len(s.jobs), pools=len(s.owned)))))
    if bad:
        raise typer.Exit(ExitCode.BAD_INPUT)


def schema_command(lang: Annotated[Language | None, lang_option()] = None) -> None:
    """Print the JSON Schema (Draft 2020-12) of the scenario file, for editor completion and checks.

    Save it (`plan schema > plan-scenario.schema.json`) and start a scenario with the line
    `# yaml-language-server: $schema=./plan-scenario.schema.json` for VS Code's YAML extension."""
    from plan.models.json_schema import scenario_schema

    print_json(scenario_schema())
