"""How much a YAML text would build, counted from its parse events before anything is built.

A file under the byte cap can still build millions of values (a 5 MB list of `- 1` lines is 1.2 M
nodes, and the pure-Python composer took minutes and gigabytes to build it), and an alias bomb
("billion laughs") is small on disk and huge once expanded. The events come from libyaml where
PyYAML has it, one at a time: counting stops at the first value past the limit, so a refusal costs
about as much as reading the allowed number of values, whatever the file holds.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import yaml

from plan.models.errors import InputError
from plan.models.said import say_as

# libyaml's parser where PyYAML has it: about 10x faster than the pure-Python one
PARSER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


@dataclass
class _Open:
    """A sequence or mapping being read: where its expanded count started, and its tallest child."""

    anchor: str | None
    count_before: int
    height: int = 0


def check_budget(text: str, label: str, *, max_nodes: int, max_depth: int) -> None:
    """Raise InputError (one line naming the cause and the line) where `text` would build more than
    `max_nodes` values with every alias expanded, or nest deeper than `max_depth` levels (aliases
    count as the values they stand for). Malformed YAML passes through as yaml.YAMLError."""
    written = expanded = 0
    used_alias = False
    sizes: dict[str, tuple[int, int]] = {}  # anchor -> (values once expanded, height)
    stack: list[_Open] = []

    def add(size: int, height: int, mark: Any) -> None:
        """One value of `size` values once expanded and `height` levels, at the current depth."""
        nonlocal expanded
        expanded += size
        if len(stack) + height > max_depth:
            raise InputError([say_as("rule.yaml_nested", "{label}:{where} nested deeper than "
                                     "{depth} levels; refused", label=label, where=_line(mark),
                                     depth=max_depth)])
        if expanded > max_nodes:
            by_aliases = used_alias and written <= max_nodes
            raise InputError([_too_many(label, mark, max_nodes, by_aliases)])

    def ended(height: int) -> None:
        if stack:
            stack[-1].height = max(stack[-1].height, height)

    for event in yaml.parse(text, Loader=PARSER):
        if isinstance(event, yaml.ScalarEvent):
            written += 1
            add(1, 1, event.start_mark)
            ended(1)
            if event.anchor:
                sizes[event.anchor] = (1, 1)
        elif isinstance(event, yaml.AliasEvent):
            written += 1
            used_alias = True
            # an unknown anchor counts as one value here; composing names it
            size, height = sizes.get(event.anchor or "", (1, 1))
            add(size, height, event.start_mark)
            ended(height)
        elif isinstance(event, yaml.CollectionStartEvent):
            written += 1
            add(1, 1, event.start_mark)  # the collection itself is a value
            stack.append(_Open(event.anchor, expanded - 1))
        elif isinstance(event, yaml.CollectionEndEvent) and stack:
            done = stack.pop()
            ended(done.height + 1)
            if done.anchor:
                sizes[done.anchor] = (expanded - done.count_before, done.height + 1)


def _line(mark: Any) -> str:
    return say_as("rule.yaml_line", " line {line}:", line=mark.line + 1) if mark is not None else ""


def _too_many(label: str, mark: Any, limit: int, by_aliases: bool) -> str:
    if by_aliases:
        return say_as("rule.yaml_alias_bomb", "{label}:{where} YAML aliases expand to more than "
                      "{limit:,} values; refused (write the values out, or use fewer aliases)",
                      label=label, where=_line(mark), limit=limit)
    return say_as("rule.yaml_too_many", "{label}:{where} more than {limit:,} YAML values (mapping "
                  "keys, list items and scalars); refused: a scenario, catalog overlay or run "
                  "description needs far fewer", label=label, where=_line(mark), limit=limit)
