"""`plan catalog models|gpus|platforms|offers|purchases|limits`: what the catalog knows, with
sources; `plan catalog diff --catalog FILE`: what an overlay changes in it."""

from __future__ import annotations

from enum import Enum
from pathlib import Path
from typing import Annotated, Any

import typer

from plan.models.catalog import Catalog, load_catalog
from plan.models.derived_prices import rule_words
from plan.models.errors import InputError
from plan.planner import i18n
from plan.planner.cli.common import OutputFormat, fail, print_json
from plan.planner.cli.lang_option import Language, lang_option


class Section(str, Enum):
    models = "models"
    gpus = "gpus"
    platforms = "platforms"
    offers = "offers"
    purchases = "purchases"
    limits = "limits"
    diff = "diff"


def _rows(catalog: Catalog, section: Section) -> list[dict[str, Any]]:
    if section is Section.models:
        return [m.model_dump(exclude_none=True) for m in catalog.models.values()]
    if section is Section.gpus:
        return [g.model_dump(exclude_none=True) for g in catalog.gpus.values()]
    if section is Section.platforms:
        return [{k: v for k, v in p.model_dump(exclude_none=True).items() if k != "offers"}
                | {"offers": len(p.offers)} for p in catalog.platforms.values()]
    if section is Section.purchases:
        return [
            {
                "platform": p.id,
                "plan_platform": b.plan_platform,  # what plans and --why-not name
                **b.model_dump(exclude_none=True),
                "server_price": b.capex_per_gpu
                * (b.unit or catalog.gpus[b.gpu].gpus_per_node),
            }
            for p in catalog.platforms.values()
            for b in p.purchase
        ]
    if section is Section.limits:
        return [{"platform": p.id, "gpu": c.gpu or "any", "billing": ", ".join(c.billing) or "any",
                 **c.model_dump(exclude_none=True, exclude={"gpu", "billing"})}
                for p in catalog.platforms.values() for c in p.limits.capacity]
    return [{"platform": p.id, **o.model_dump(exclude_none=True, by_alias=True)}
            | ({"derived_rule": rule_words(o.billing, o.derived.model_dump(by_alias=True))}
               if o.derived else {})
            for p in catalog.platforms.values() for o in p.offers]


def catalog_command(
    section: Annotated[Section, typer.Argument(help="what to list")],
    output: Annotated[
        OutputFormat, typer.Option("--format", help="table or json")
    ] = OutputFormat.table,
    overlay: Annotated[list[Path] | None, typer.Option("--catalog", help="overlay file(s)")] = None,
    sources: Annotated[
        bool, typer.Option("--sources", help="add each entry's source to the table")
    ] = False,
    lang: Annotated[Language | None, lang_option()] = None,
) -> None:
    """List the catalog's models, GPUs, platforms, offers (derived prices marked), purchase prices
    or capacity limits, each with its source; `diff` lists what the --catalog overlays change."""
    if section is Section.diff and not overlay:
        fail("catalog diff: name the overlay file(s) with --catalog FILE")
    try:
        catalog = load_catalog(overlay or [])
    except InputError as exc:
        fail(exc)
    if section is Section.diff:
        _print_changes(catalog, output)
        return
    rows = _rows(catalog, section)
    if output is OutputFormat.json:
        print_json(rows)
        return
    from plan.planner.cli.catalog_table import print_catalog_table

    print_catalog_table(section.value, rows, sources=sources)


def _print_changes(catalog: Catalog, output: OutputFormat) -> None:
    """One line per change (`overlay.yaml: platform p: features.encryption false -> true`)."""
    if output is OutputFormat.json:
        print_json([{"overlay": line.split(": ", 1)[0], "change": line.split(": ", 1)[1]}
                    for line in catalog.changes])
        return
    from plan.planner.plain_text import plain

    files = ", ".join(catalog.sources[1:])
    print(plain(i18n.t("catalog.changes", files=files, count=len(catalog.changes))))
    for line in catalog.changes:
        print(f"  {plain(line)}")
