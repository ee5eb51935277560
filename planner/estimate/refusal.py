"""A layout refusal as the estimator and the search's spec check raise it: 'field: problem' (each
problem a keyed sentence, said again in the reader's language), several joined by '; '. `plan
estimate` rewrites the first field as the option the user typed (`--tp: ...`)."""

from __future__ import annotations

from collections.abc import Sequence

from plan.planner.i18n.said import Joined, Said, say, say_as

__all__ = ["field_problem", "joined"]


def field_problem(field: str, problem: str) -> Said:
    """'tp: 3 does not divide the 8 GPUs': the field a refusal names, and what is wrong."""
    return say_as("refusal.field", "{field}: {problem}", field=field, problem=problem)


def joined(problems: Sequence[str]) -> str:
    """The problems as one message, '; ' between them (one problem: itself)."""
    if len(problems) == 1:
        return problems[0]
    return say("refusal.joined", problems=Joined(list(problems)))
