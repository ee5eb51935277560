"""The one error type bad input raises: a list of one-line problems, each naming file and field."""

from __future__ import annotations

import difflib
import re
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from plan.models.said import Said, say_as
from plan.models.validation_words import keyed_message, listed

# Lines one error shows: 50,000 unknown fields are one mistake repeated, not 50,000 lines to read.
MAX_PROBLEMS = 20


class _More(Said):
    """The closing "... and K more" line, which keeps K so that capping twice still counts right."""

    hidden: int


def _more(count: int, shown: list[str]) -> _More:
    """The closing line, naming the file the last line shown names ('file: field: what')."""
    where = shown[-1].split(": ", 1)[0] + ": " if shown and ": " in shown[-1] else ""
    said = say_as("rule.more_problems",
                  "{where}... and {count:,} more problems (the first {shown} are shown)",
                  where=where, count=count, shown=len(shown))
    line = _More(said)
    line.key, line.fields, line.hidden = said.key, said.fields, count
    return line


def capped(problems: list[str], unworded: int = 0, limit: int = MAX_PROBLEMS) -> list[str]:
    """At most `limit` lines, then one saying how many more there were (`unworded`: problems
    found but not put into words)."""
    lines = [p for p in problems if not isinstance(p, _More)]
    more = unworded + sum(p.hidden for p in problems if isinstance(p, _More))
    more += max(0, len(lines) - limit)
    shown = lines[:limit]
    return [*shown, _more(more, shown)] if more else lines


class InputError(Exception):
    """Bad user input. `problems` are complete one-line messages: 'file: field: what is wrong'."""

    def __init__(self, problems: Iterable[str]) -> None:
        self.problems = capped(list(problems)) or ["invalid input"]
        super().__init__("\n".join(self.problems))


class UnknownIdError(KeyError):
    """An id that is not in the catalog; the message lists the closest known ids.

    `known`: every name, or a mapping of each name (id or alias) to the id it names, so that a
    suggested alias shows its id ('智星云' (zhixingyun)); `fold`: how names compare (case, spaces,
    scripts), lower case by default."""

    def __init__(self, kind: str, wanted: str, known: Iterable[str] | Mapping[str, str],
                 fold: Callable[[str], str] | None = None) -> None:
        self.kind = kind
        self.wanted = wanted
        ids = known if isinstance(known, Mapping) else None
        self.message: str = say_as(
            "rule.unknown_id", "unknown {kind} {wanted}{hint}",
            kind=_KIND_WORDS[kind]() if kind in _KIND_WORDS else kind, wanted=repr(wanted),
            hint=did_you_mean(wanted, known, ids=ids, fold=fold))
        super().__init__(self.message)

    def __str__(self) -> str:
        return self.message


# Han, kana and hangul: names in these scripts are matched in part too (腾讯 finds 腾讯云TI-ONE)
_CJK = re.compile("[\u2e80-\u9fff\uac00-\ud7af\uf900-\ufaff]")


def did_you_mean(wanted: str, known: Iterable[str], limit: int = 3,
                 ids: Mapping[str, str] | None = None,
                 fold: Callable[[str], str] | None = None) -> str:
    """'; did you mean ...?' with the closest names (spelling, or a Chinese name written in part),
    one per id where `ids` maps names to ids; else '; known: ...'."""
    candidates = sorted(set(known))
    key = fold or str.lower
    by_key: dict[str, str] = {}
    for name in candidates:
        by_key.setdefault(key(name), name)
    target = key(wanted)
    close = difflib.get_close_matches(target, list(by_key), n=limit, cutoff=0.5)
    if _CJK.search(target) and len(target) >= 2:
        close += [k for k in by_key if k not in close and _CJK.search(k)
                  and (target in k or (len(k) >= 2 and k in target))]
    shown: dict[str, str] = {}
    for k in close:
        name = by_key[k]
        owner = ids.get(name, name) if ids is not None else name
        if owner not in shown:
            shown[owner] = repr(name) + (f" ({owner})" if owner != name else "")
    if shown:
        first, *rest = list(shown.values())[:limit]
        names: str = first
        for name in rest:  # 'a' or 'b' or 'c', each 'or' said in the reader's language
            names = say_as("rule.choices", "{head} or {last}", head=names, last=name)
        return say_as("rule.did_you_mean", "; did you mean {names}?", names=names)
    # (the separator in the reader's language: 'a, b' / 'a、b')
    return say_as("rule.known", "; known: {names}{more}", names=listed(candidates[:12]),
                  more=" ..." if len(candidates) > 12 else "")


def field_names(model: type, loc: tuple[object, ...]) -> list[str]:
    """The field names (and their aliases) a pydantic model accepts at `loc` (its parent's path)."""
    from pydantic import AliasChoices, BaseModel

    current: object = model
    for part in loc:
        if isinstance(part, int) or not (
            isinstance(current, type) and issubclass(current, BaseModel)
        ):
            continue
        fields = current.model_fields
        found = fields.get(str(part)) or next(
            (f for f in fields.values() if isinstance(f.validation_alias, AliasChoices)
             and part in f.validation_alias.choices), None)
        if found is None:
            return []
        current = _model_in(found.annotation)
    if not (isinstance(current, type) and issubclass(current, BaseModel)):
        return []
    names: list[str] = []
    for name, info in current.model_fields.items():
        names.append(name)
        if isinstance(info.validation_alias, AliasChoices):
            names += [c for c in info.validation_alias.choices if isinstance(c, str)]
    return names


def _model_in(annotation: object) -> object:
    """The pydantic model inside an annotation such as `list[Job]`, `Policy | None`."""
    from pydantic import BaseModel

    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation
    for arg in getattr(annotation, "__args__", ()) or ():
        found = _model_in(arg)
        if found is not None:
            return found
    return None


def validation_problems(
    exc: object, label: str, prefix: str = "", model: type | None = None
) -> list[str]:
    """Turn a pydantic ValidationError into one line per problem: 'file: field.path: message'.

    With `model` (the class validated), an unknown field gets the closest field names of its
    section."""
    from pydantic import ValidationError

    assert isinstance(exc, ValidationError)
    lines: list[str] = []
    errors = exc.errors(include_url=False)
    for err in errors[:MAX_PROBLEMS]:  # the rest are counted, not worded (capped below)
        if err["type"] == "scenario_reference":
            lines += [say_as("rule.label_problem", "{label}: {problem}", label=label,
                             problem=problem) for problem in err["ctx"]["problems"]]
            continue
        path = prefix
        for part in err["loc"]:
            if isinstance(part, int):
                path += f"[{part}]"
            elif str(part).startswith("function-") or part in {"str", "int", "float"}:
                continue  # pydantic's internal validator names mean nothing to a user
            else:
                path += ("." if path else "") + str(part)
        message = keyed_message(err, err["msg"].removeprefix("Value error, "))
        if err["type"] == "extra_forbidden":
            known = field_names(model, tuple(err["loc"][:-1])) if model is not None else []
            message = (say_as("rule.unknown_field", "unknown field{hint}",
                              hint=did_you_mean(str(err["loc"][-1]), known)) if known
                       else say_as("rule.unknown_field_typo", "unknown field (typo?)"))
        elif err["type"] == "literal_error":
            message = _literal_problem(err, message)
        elif err["type"] in _BOUND_PROBLEMS:
            bound = next(iter((err.get("ctx") or {}).values()), None)
            message = _BOUND_PROBLEMS[err["type"]](_shown(err.get("input")), _shown(bound))
        elif err["type"] == "finite_number":
            message = say_as("rule.not_finite",
                             "got {value}; must be a finite number (not .inf or .nan)",
                             value=_shown(err.get("input")))
        lines.append(say_as("rule.field_problem", "{label}: {path}: {message}", label=label,
                            path=path or say_as("rule.top_level", "(top level)"), message=message))
    return capped(lines, max(0, len(errors) - MAX_PROBLEMS))


def _literal_problem(err: Mapping[str, Any], message: str) -> str:
    """'got 'x'; input should be 'a', 'b' or 'c'', keyed where pydantic's message has that shape
    (its own text, lower-cased, otherwise)."""
    plain = f"got {err.get('input')!r}; {message.lower()}"
    expected = str((err.get("ctx") or {}).get("expected", ""))
    if message.lower() != f"input should be {expected}".lower():
        return plain
    head, _, last = expected.rpartition(" or ")
    choices = (say_as("rule.choices", "{head} or {last}", head=head, last=last) if head
               else expected)
    said = say_as("rule.literal", "got {value}; input should be {choices}",
                  value=repr(err.get("input")), choices=choices)
    return said if said == plain else plain


_BOUND_PROBLEMS: dict[str, Callable[[str, str], str]] = {
    "less_than_equal": lambda value, bound: say_as(
        "rule.bound_less_than_equal", "got {value}; must be at most {bound}", value=value,
        bound=bound),
    "less_than": lambda value, bound: say_as(
        "rule.bound_less_than", "got {value}; must be below {bound}", value=value, bound=bound),
    "greater_than_equal": lambda value, bound: say_as(
        "rule.bound_greater_than_equal", "got {value}; must be at least {bound}", value=value,
        bound=bound),
    "greater_than": lambda value, bound: say_as(
        "rule.bound_greater_than", "got {value}; must be above {bound}", value=value,
        bound=bound),
}
_KIND_WORDS: dict[str, Callable[[], str]] = {  # the kinds of id the catalog looks up
    "GPU": lambda: say_as("rule.kind_gpu", "GPU"),
    "model": lambda: say_as("rule.kind_model", "model"),
    "platform": lambda: say_as("rule.kind_platform", "platform"),
}


def _shown(value: object) -> str:
    """A number as people write it (1e+12, not 1000000000000); other values as repr, cut to 60
    characters."""
    if isinstance(value, float | int) and not isinstance(value, bool):
        return f"{value:,}" if isinstance(value, int) and abs(value) < 10**7 else f"{value:g}"
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."
