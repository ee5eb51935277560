"""`plan catalog models|gpus|platforms|offers|purchases|limits`: what the catalog knows, with sources."""

from __future__ import annotations

from enum import Enum
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.table import Table

from models.catalog import Catalog, load_catalog
from models.errors import InputError
from planner.cli.common import OutputFormat, console, fail, print_json, printable


class Section(str, Enum):
    models = "models"
    gpus = "gpus"
    platforms = "platforms"
    offers = "offers"
    purchases = "purchases"
    limits = "limits"


def _rows(catalog: Catalog, section: Section) -> list[dict[str, Any]]:
    if section is Section.models:
        return [m.model_dump(exclude_none=True) for m in catalog.models.values()]
    if section is Section.gpus:
        return [g.model_dump(exclude_none=True) for g in catalog.gpus.values()]
    if section is Section.platforms:
        return [{k: v for k, v in p.model_dump(exclude_none=True).items() if k != "offers"}
                | {"offers": len(p.offers)} for p in catalog.platforms.values()]
    if section is Section.purchases:
        return [{"platform": p.id, **b.model_dump(exclude_none=True),
                 "server_price": b.capex_per_gpu * (b.gpus_per_node or catalog.gpus[b.gpu].gpus_per_node)}
                for p in catalog.platforms.values() for b in p.purchase]
    if section is Section.limits:
        return [{"platform": p.id, "gpu": c.gpu or "any", "billing": ", ".join(c.billing) or "any",
                 **c.model_dump(exclude_none=True, exclude={"gpu", "billing"})}
                for p in catalog.platforms.values() for c in p.limits.capacity]
    return [{"platform": p.id, **o.model_dump(exclude_none=True)}
            for p in catalog.platforms.values() for o in p.offers]


_COLUMNS: dict[Section, list[str]] = {
    Section.models: ["id", "params", "layers", "hidden_size", "num_heads", "num_kv_heads", "vocab_size",
                     "assumed", "source"],
    Section.gpus: ["id", "memory_gib", "peak_tflops", "intra_node_link", "gpus_per_node", "source"],
    Section.platforms: ["id", "kind", "jurisdiction", "fabric", "offers", "source"],
    Section.offers: ["platform", "gpu", "billing", "price_per_gpu_period", "currency", "as_of", "assumed",
                     "source"],
    Section.purchases: ["platform", "gpu", "capex_per_gpu", "server_price", "currency", "gpus_per_node",
                        "life_years", "lead_time_days", "as_of", "assumed", "source"],
    Section.limits: ["platform", "gpu", "billing", "max_gpus", "reservation_max_gpus", "startup_h",
                     "reservation_startup_h", "as_of", "assumed", "source"],
}


_MONEY_COLUMNS = {"capex_per_gpu", "server_price"}


def _cell(value: Any, column: str = "") -> str:
    if column in _MONEY_COLUMNS and isinstance(value, float):
        return f"{value:,.0f}"
    if isinstance(value, float) and value >= 1e6:
        return f"{value / 1e9:.2f}B"
    if isinstance(value, dict):
        return " ".join(f"{k}={v}" for k, v in value.items() if v is not None and k != "source")
    return str(value)


def catalog_command(
    section: Annotated[Section, typer.Argument(help="what to list")],
    output: Annotated[OutputFormat, typer.Option("--format", help="table or json")] = OutputFormat.table,
    overlay: Annotated[list[Path] | None, typer.Option("--catalog", help="overlay file(s)")] = None,
) -> None:
    """List the catalog's models, GPUs, platforms, offers, purchase prices or capacity limits, each with its source."""
    try:
        catalog = load_catalog(overlay or [])
    except InputError as exc:
        fail(exc)
    rows = _rows(catalog, section)
    if output is OutputFormat.json:
        print_json(rows)
        return
    table = Table(title=f"catalog {section.value} ({len(rows)})", show_lines=False)
    for column in _COLUMNS[section]:
        table.add_column(column, overflow="fold", max_width=60 if column == "source" else None)
    for row in rows:
        table.add_row(*(printable(_cell(row.get(c, ""), c)) for c in _COLUMNS[section]))
    console.print(table)
