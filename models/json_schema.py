"""The scenario file's JSON Schema (Draft 2020-12), accepting what the loader accepts: quantities as
a number or a patterned string, and every alias a field may be written under (`deadline` or
`deadline_h`).

What a schema cannot see is left to `plan validate`: catalog ids, cross-references between jobs,
sites and pools, and rules between fields (min_gpus <= max_gpus)."""

from __future__ import annotations

import copy
from typing import Any

from pydantic import AliasChoices, BaseModel

from plan.models.scenario import Scenario

DRAFT = "https://json-schema.org/draft/2020-12/schema"


def _models(root: type[BaseModel]) -> dict[str, type[BaseModel]]:
    """Every pydantic model reachable from `root`, by class name (the schema's $defs keys)."""
    found: dict[str, type[BaseModel]] = {}
    todo: list[object] = [root]
    while todo:
        item = todo.pop()
        if isinstance(item, type) and issubclass(item, BaseModel):
            if item.__name__ in found:
                continue
            found[item.__name__] = item
            todo += [f.annotation for f in item.model_fields.values()]
        todo += list(getattr(item, "__args__", ()) or ())
    return found


def _add_aliases(schema: dict[str, Any], model: type[BaseModel]) -> None:
    properties = schema.get("properties", {})
    for name, info in model.model_fields.items():
        alias = info.validation_alias
        if not isinstance(alias, AliasChoices):
            continue
        names = [c for c in alias.choices if isinstance(c, str)]
        shown = next((n for n in names if n in properties), name)
        for other in [name, *names]:
            if other not in properties and shown in properties:
                properties[other] = copy.deepcopy(properties[shown])


def scenario_schema() -> dict[str, Any]:
    """The JSON Schema of a scenario file."""
    schema = Scenario.model_json_schema(by_alias=True, mode="validation")
    models = _models(Scenario)
    _add_aliases(schema, Scenario)
    for name, definition in schema.get("$defs", {}).items():
        if name in models:
            _add_aliases(definition, models[name])
    return {
        "$schema": DRAFT,
        "title": "plan scenario",
        "description": "A training situation for `plan solve` (see docs/scenario.md).",
        **schema,
    }
