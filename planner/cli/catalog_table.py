"""The `plan catalog` tables: short columns that fit an 80-150 column terminal, one line a row.

Provenance (each entry's source text) is long; it shows with `--sources`, and in full with `--format
json`."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from plan.planner.i18n import t

Cell = Callable[[dict[str, Any]], Any]


def _get(*path: str) -> Cell:
    def cell(row: dict[str, Any]) -> Any:
        value: Any = row
        for key in path:
            value = value.get(key) if isinstance(value, dict) else None
        return value

    return cell


def _flag(row: dict[str, Any]) -> str:
    """'assumed' or 'preliminary' where the entry (or its fabric) says so; '' otherwise."""
    marks = [t(f"flag.{word}") for word in ("assumed", "preliminary") if row.get(word)]
    if not marks and isinstance(row.get("fabric"), dict) and row["fabric"].get("assumed"):
        marks.append(t("flag.fabric_assumed"))
    if row.get("gpus_per_node_assumption"):
        marks.append(t("flag.node_assumed"))
    if row.get("derived"):
        marks.append(t("flag.derived", base=row["derived"].get("from")))
    return t("flag.sep").join(marks)


def _link(row: dict[str, Any]) -> str:
    link = row.get("intra_node_link") or {}
    speed = link.get("bandwidth_gb_per_s")
    return f"{link.get('kind', '')} {speed:g} GB/s" if speed else str(link.get("kind", ""))


def _fabric(row: dict[str, Any]) -> str:
    fabric = row.get("fabric") or {}
    speed = fabric.get("gbps_per_gpu")
    return f"{fabric.get('kind', '')} {speed:g} Gb/s/GPU" if speed else str(fabric.get("kind", ""))


def _where(row: dict[str, Any]) -> str:
    regions = row.get("regions") or []
    return row.get("jurisdiction", "") + (f" (+{', '.join(regions)})" if regions else "")


def _params(row: dict[str, Any]) -> str:
    params = row.get("params")
    return f"{params / 1e9:.2f}B" if isinstance(params, int | float) else ""


def _money(key: str) -> Cell:
    def cell(row: dict[str, Any]) -> str:
        value = row.get(key)
        return f"{value:,.0f}" if isinstance(value, int | float) else ""

    return cell


def _price(row: dict[str, Any]) -> str:
    value = row.get("price_per_gpu_period")
    if not isinstance(value, int | float):
        return ""
    # cents shown from 100 up (a yearly price is five or six digits), four figures below
    return f"{value:,.2f}" if value >= 100 else f"{value:,.4g}"


COLUMNS: dict[str, list[tuple[str, Cell]]] = {
    "models": [
        ("id", _get("id")),
        ("params", _params),
        ("layers", _get("layers")),
        ("hidden", _get("hidden_size")),
        ("heads", _get("num_heads")),
        ("kv", _get("num_kv_heads")),
        ("vocab", _get("vocab_size")),
        ("max pos", _get("max_positions")),
        ("flag", _flag),
    ],
    "gpus": [
        ("id", _get("id")),
        ("GiB", _get("memory_gib")),
        ("bf16 TF", _get("peak_tflops", "bf16")),
        ("fp8 TF", _get("peak_tflops", "fp8")),
        ("link", _link),
        ("/node", _get("gpus_per_node")),
        ("flag", _flag),
    ],
    "platforms": [
        ("id", _get("id")),
        ("kind", _get("kind")),
        ("jurisdiction", _where),
        ("fabric", _fabric),
        ("offers", _get("offers")),
        ("flag", _flag),
    ],
    "offers": [
        ("platform", _get("platform")),
        ("gpu", _get("gpu")),
        ("billing", _get("billing")),
        ("price/GPU/period", _price),
        ("cur", _get("currency")),
        ("as_of", _get("as_of")),
        ("flag", _flag),
    ],
    "purchases": [
        ("platform", _get("platform")),
        ("plan id", _get("plan_platform")),
        ("gpu", _get("gpu")),
        ("per GPU", _money("capex_per_gpu")),
        ("server", _money("server_price")),
        ("cur", _get("currency")),
        ("life y", _get("life_years")),
        ("lead d", _get("lead_time_days")),
        ("as_of", _get("as_of")),
        ("flag", _flag),
    ],
    "limits": [
        ("platform", _get("platform")),
        ("gpu", _get("gpu")),
        ("billing", _get("billing")),
        ("max", _get("max_gpus")),
        ("reserved max", _get("reservation_max_gpus")),
        ("start h", _get("startup_h")),
        ("reserved start h", _get("reservation_startup_h")),
        ("as_of", _get("as_of")),
        ("flag", _flag),
    ],
}


# The columns that name an entry; `--sources` shows these and the source text.
KEYS = {"models": 1, "gpus": 1, "platforms": 1, "offers": 3, "purchases": 2, "limits": 3}


def _text(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, float):
        return f"{value:g}"
    return str(value)


def _source(row: dict[str, Any]) -> str:
    """The entry's source; a derived price says its rule first (its figure follows the base's)."""
    rule = row.get("derived_rule")
    return (t("catalog.derived_source", rule=rule) if rule else "") + _text(row.get("source"))


def print_catalog_table(section: str, rows: list[dict[str, Any]], *, sources: bool) -> None:
    """One short line per entry; with `sources`, each entry's source text below it."""
    from rich.cells import cell_len
    from rich.console import Console
    from rich.table import Table

    from plan.planner.cli.common import printable

    hint = "" if sources else t("catalog.hint")
    units = t("catalog.units_gpus") if section == "gpus" else ""
    table = Table(title=t("catalog.title", section=t(f"section.{section}"), count=len(rows),
                          units=units, hint=hint), show_lines=sources)
    columns = COLUMNS[section][:KEYS[section]] if sources else COLUMNS[section]
    for name, _ in columns:
        header = t(f"col.{name}")
        table.add_column(header, no_wrap=True, overflow="ellipsis",
                         min_width=min(cell_len(header), 8))
    if sources:
        table.add_column(t("catalog.source"), overflow="fold", ratio=1, min_width=30)
    for row in rows:  # overlay text is the user's: markup escaped, control characters shown as '?'
        cells = [printable(_text(cell(row))) for _, cell in columns]
        table.add_row(*cells, *([printable(_source(row))] if sources else []))
    # The terminal's own width (COLUMNS when set; 80 when not a terminal), not the plan tables'
    # fixed 140.
    Console(highlight=False, soft_wrap=False).print(table)
