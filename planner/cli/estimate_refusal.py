"""`plan estimate`'s line for a refused layout: the field the estimator or the search's spec check
names ('tp: ...') written as the option the user typed ('--tp: ...'); a keyed refusal stays keyed,
said again in the reader's language."""

from __future__ import annotations

import re

from plan.planner.i18n.said import Joined, Said, say, say_as

__all__ = ["as_cli_message", "refusal_line"]

_OPTION_OF_FIELD = {"micro_batch": "--micro-batch", "global_batch": "--global-batch",
                    "seq_len": "--seq-len", "lora_rank": "--lora-rank", "tp x pp x dp": "--tp/--pp",
                    "tp x pp x cp x dp": "--tp/--pp/--cp", "gpus": "--gpus",
                    "virtual_pipeline": "--vpp"}


def as_cli_message(message: str) -> str:
    """'tp: ...' -> '--tp: ...' so the user sees the option they typed (a keyed refusal stays
    keyed, said again in the reader's language)."""
    if isinstance(message, Said) and message.key == "refusal.joined":
        first, *rest = message.fields["problems"].parts
        return say("refusal.joined", problems=Joined([as_cli_message(first), *rest]))
    if isinstance(message, Said) and message.key == "refusal.field":
        name = message.fields["field"]
        return say_as("cli.option_problem", "{option}: {problem}",
                      option=_OPTION_OF_FIELD.get(name, "--" + name.replace("_", "-")),
                      problem=message.fields["problem"])
    match = re.match(r"([a-z_ x]+):", message)
    if not match:
        return message
    name = match.group(1)
    option = _OPTION_OF_FIELD.get(name, "--" + name.replace("_", "-"))
    return option + message[len(name):]


def _message(exc: ValueError) -> str:
    """The refusal a ValueError carries, keyed where it was made so."""
    first = exc.args[0] if exc.args else None
    return first if isinstance(first, str) else str(exc)


def refusal_line(exc: ValueError) -> str:
    """The refusal a ValueError of the estimate carries, as the command line tells it."""
    return as_cli_message(_message(exc))
