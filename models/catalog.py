"""The catalog: models, GPUs, platforms and exchange rates, built in and optionally overlaid.

The built-in data files live in `models/data/` and ship inside the installed package. An overlay
(a scenario's `catalog:` file, or `--catalog`) adds entries or overrides them by id; a platform
entry changes only what it names (plan.models.catalog_merge), and the catalog keeps a line per
change (plan.models.catalog_diff) for `plan catalog diff` and every answer's assumptions.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from functools import lru_cache
from importlib import resources
from pathlib import Path
from typing import Any, TypeVar

import yaml
from pydantic import BaseModel, ValidationError

from plan.models.catalog_diff import catalog_changes
from plan.models.catalog_merge import merge_platform, repeated_entries
from plan.models.errors import (
    MAX_PROBLEMS,
    InputError,
    UnknownIdError,
    capped,
    validation_problems,
)
from plan.models.gpu import GPU
from plan.models.model_card import ModelCard
from plan.models.platform import ExchangeRates, Platform
from plan.models.said import say_as
from plan.models.validation_words import listed
from plan.models.yaml_io import read_yaml

T = TypeVar("T", bound=BaseModel)

_SECTIONS = ("models", "gpus", "platforms", "exchange_rates")


def _index(items: Iterable[T]) -> dict[str, T]:
    return {item.id: item for item in items}  # type: ignore[attr-defined]


@dataclass(frozen=True)
class Catalog:
    models: dict[str, ModelCard]
    gpus: dict[str, GPU]
    platforms: dict[str, Platform]
    exchange_rates: ExchangeRates
    sources: tuple[str, ...] = field(default=("built-in",))
    # what each overlay changed, one line each ("overlay.yaml: platform p: features.encryption
    # false -> true"), for `plan catalog diff` and the assumptions of every answer
    changes: tuple[str, ...] = ()

    # --- lookups by id or alias; unknown ids raise UnknownIdError with the closest ids ---
    def model(self, wanted: str) -> ModelCard:
        return _lookup("model", wanted, self.models)

    def gpu(self, wanted: str) -> GPU:
        return _lookup("GPU", wanted, self.gpus)

    def platform(self, wanted: str) -> Platform:
        return _lookup("platform", wanted, self.platforms)

    def resolve_gpu_id(self, wanted: str) -> str:
        return self.gpu(wanted).id

    def to_currency(self, amount: float, from_currency: str, to_currency: str) -> float:
        return self.exchange_rates.convert(amount, from_currency, to_currency)

    def overlay(self, data: Mapping[str, Any], label: str) -> Catalog:
        """A new catalog with `data` (same layout as the built-in files) laid over this one."""
        unknown = set(data) - set(_SECTIONS)
        if unknown:
            raise InputError([say_as("rule.overlay_unknown_section", "{label}: {section}: unknown "
                                     "section; allowed: {allowed}", label=label,
                                     section=sorted(unknown)[0], allowed=listed(_SECTIONS))])
        repeated = repeated_entries(data, label)
        if repeated:
            raise InputError(repeated)
        problems: list[str] = []
        fine: list[str] = []
        models = dict(self.models)
        models.update(_index(_parse_each(data.get("models"), ModelCard, label, "models",
                                         problems, fine)))
        gpus = dict(self.gpus)
        gpus.update(_index(_parse_each(data.get("gpus"), GPU, label, "gpus", problems, fine)))
        platforms = dict(self.platforms)
        merged = [merge_platform(self.platforms, raw)
                  for raw in _as_list(data.get("platforms"), label, "platforms")]
        platforms.update(_index(_parse_each(merged, Platform, label, "platforms", problems,
                                            fine)))
        rates = self.exchange_rates
        if data.get("exchange_rates") is not None:
            raw_rates = data["exchange_rates"]
            if isinstance(raw_rates, Mapping):
                new_rates = raw_rates.get("rates", {})
                # A `rates` that is not a mapping is left as written, for validation to name.
                merged_rates = (
                    {**self.exchange_rates.rates, **new_rates}
                    if isinstance(new_rates, Mapping)
                    else new_rates
                )
                raw_rates = {**self.exchange_rates.model_dump(), **raw_rates, "rates": merged_rates}
            try:
                rates = _parse_one(raw_rates, ExchangeRates, label, "exchange_rates")
                fine.append("exchange_rates")
            except InputError as exc:
                problems += exc.problems
        if problems:
            raise InputError(_with_fine_entries(problems, fine, label))
        catalog = Catalog(models, gpus, platforms, rates, (*self.sources, label))
        catalog.check()
        changes = tuple(f"{label}: {line}" for line in catalog_changes(self, catalog))
        return dataclasses.replace(catalog, changes=(*self.changes, *changes))

    def check(self) -> None:
        """Cross-references: offers name known GPUs; ids and aliases are unique per kind."""
        problems: list[str] = []
        for platform in self.platforms.values():
            for i, offer in enumerate(platform.offers):
                if offer.gpu not in self.gpus:
                    hint = str(UnknownIdError("GPU", offer.gpu, self._names(self.gpus),
                                              fold=fold_name))
                    problems.append(f"catalog: platforms.{platform.id}.offers[{i}].gpu: {hint}")
                if (
                    offer.currency not in self.exchange_rates.rates
                    and offer.currency != self.exchange_rates.base
                ):
                    problems.append(say_as(
                        "rule.offer_no_rate", "catalog: platforms.{platform}.offers[{i}].currency: "
                        "no exchange rate for {currency}", platform=platform.id, i=i,
                        currency=offer.currency))
            for i, purchase in enumerate(platform.purchase):
                if purchase.gpu not in self.gpus:
                    problems.append(f"catalog: platforms.{platform.id}.purchase[{i}].gpu: unknown "
                                    f"GPU {purchase.gpu!r}")
        for kind, table in (
            ("model", self.models),
            ("GPU", self.gpus),
            ("platform", self.platforms),
        ):
            seen: dict[str, str] = {}
            for item in table.values():
                for name in (item.id, *item.aliases):
                    key = fold_name(name)
                    if key in seen and seen[key] != item.id:
                        problems.append(f"catalog: {kind} name {name!r} used by both {seen[key]} "
                                        f"and {item.id}")
                    seen[key] = item.id
        if problems:
            raise InputError(problems)

    @staticmethod
    def _names(table: Mapping[str, Any]) -> dict[str, str]:
        """Every id and alias, with the id it names."""
        return {n: item.id for item in table.values() for n in (item.id, *item.aliases)}


# Han, kana and hangul: a change between one of these and Latin letters or digits is a word boundary
# ("昇腾910B" is "昇腾 910B"), since such names are written with and without the space.
_CJK = "\u2e80-\u9fff\uac00-\ud7af\uf900-\ufaff"
_SCRIPT_CHANGE = re.compile(rf"(?<=[{_CJK}])(?=[a-z0-9])|(?<=[a-z0-9])(?=[{_CJK}])")


@lru_cache(maxsize=4096)
def fold_name(name: str) -> str:
    """A catalog name as lookups compare it: case, the separator between words and a change of
    script ignored, so `h100-80gb`, `H100 80GB`, `h100_80gb` are one name, and `华为云ModelArts`,
    `华为云 ModelArts` another (the catalog refuses two entries that fold alike)."""
    folded = re.sub(r"[\s_-]+", "-", name.strip().lower())
    return _SCRIPT_CHANGE.sub("-", folded)


@lru_cache(maxsize=1)
def vendor_words() -> frozenset[str]:
    """Vendor names as written before a part's name (nvidia-smi's "NVIDIA A100-SXM4-80GB", "华为
    昇腾910B"), from the built-in gpus.yaml's `vendors:` (ids and aliases, folded)."""
    data = yaml.load(_builtin_text("gpus.yaml"), Loader=_FAST_LOADER)  # noqa: S506 (a SafeLoader)
    return frozenset(fold_name(str(n)) for v in data.get("vendors", [])
                     for n in (v["id"], *v.get("aliases", [])))


def _without_vendor(folded: str) -> str:
    """A folded name without the vendor word before it (a Han vendor word may run into the next
    word: 华为昇腾910b)."""
    for word in vendor_words():
        if folded.startswith(word + "-"):
            return folded[len(word) + 1:]
        if re.match(rf"[{_CJK}]", word) and folded.startswith(word) and len(folded) > len(word):
            return folded[len(word):]
    return folded


def name_words(name: str) -> frozenset[str]:
    """A name's words in any order, without a vendor word: "H100 80GB SXM", "SXM H100 80GB" and the
    card's full name "NVIDIA H100 80GB SXM" are one set."""
    return frozenset(fold_name(name).split("-")) - vendor_words()


def _lookup(kind: str, wanted: str, table: Mapping[str, T]) -> T:
    if wanted in table:
        return table[wanted]
    folded = fold_name(wanted)
    for name in dict.fromkeys((folded, _without_vendor(folded))):
        for item in table.values():
            if name == fold_name(item.id) or name in (fold_name(a) for a in item.aliases):  # type: ignore[attr-defined]
                return item
    # the same words in another order, or an entry's full name: taken only where one entry has them
    words = name_words(wanted)
    same = [
        item
        for item in table.values()
        if words in {name_words(n) for n in (item.id, *item.aliases, getattr(item, "name", ""))}  # type: ignore[attr-defined]
    ]
    if len(same) == 1:
        return same[0]
    raise UnknownIdError(kind, wanted, Catalog._names(table), fold=fold_name)


def _as_list(raw: Any, label: str, section: str) -> list[Any]:
    if raw is None:
        return []
    if not isinstance(raw, list):
        raise InputError([say_as("rule.overlay_not_list", "{label}: {section}: expected a list of "
                                 "entries", label=label, section=section)])
    return raw


def _parse_list(raw: Any, schema: type[T], label: str, section: str, first: int = 0) -> list[T]:
    """The entries, each validated; InputError naming each bad one by its id, else its index in
    the section (counted from `first`)."""
    items, problems = [], []
    for i, entry in enumerate(_as_list(raw, label, section), start=first):
        try:
            items.append(schema.model_validate(entry))
        except ValidationError as exc:
            name = entry.get("id", i) if isinstance(entry, Mapping) else i
            name = name if isinstance(name, str | int) and len(str(name)) <= 128 else i
            problems += validation_problems(exc, label, f"{section}[{name}]", model=schema)
    if problems:
        raise InputError(problems)
    return items


def _with_fine_entries(problems: list[str], fine: list[str], label: str) -> list[str]:
    """The problems, then one line naming the entries that had none (kept within the line cap)."""
    if not fine:
        return problems
    more = (say_as("rule.and_more", " and {count} more", count=len(fine) - 12)
            if len(fine) > 12 else "")
    # one line of the cap left for this one (a "... and K more" line then follows it)
    return [*capped(problems, limit=MAX_PROBLEMS - 1),
            say_as("rule.overlay_fine", "{label}: the other entries are fine: {shown}{more}",
                   label=label, shown=", ".join(fine[:12]), more=more)]


def _parse_each(raw: Any, schema: type[T], label: str, section: str, problems: list[str],
                fine: list[str]) -> list[T]:
    """The entries of one section that validate; each one that does not adds its problems, each one
    that does its name to `fine` (so an error can say which entries were not the problem)."""
    items = []
    for i, entry in enumerate(_as_list(raw, label, section)):
        try:
            item = _parse_list([entry], schema, label, section, first=i)[0]
        except InputError as exc:  # (its lines name the entry: keyed, said in the reader's words)
            problems += exc.problems
            continue
        items.append(item)
        fine.append(f"{section}[{getattr(item, 'id', i)}]")
    return items


def _parse_one(raw: Any, schema: type[T], label: str, section: str) -> T:
    try:
        return schema.model_validate(raw)
    except ValidationError as exc:
        raise InputError(validation_problems(exc, label, section)) from None


def _builtin_text(name: str) -> str:
    return resources.files("plan.models").joinpath("data", name).read_text(encoding="utf-8")


_BUILTIN: Catalog | None = None
_FAST_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def builtin_catalog() -> Catalog:
    """The catalog shipped with the package (parsed once per process)."""
    global _BUILTIN
    if _BUILTIN is None:
        def section(file: str, key: str) -> Any:
            # The shipped files are trusted and well formed: libyaml's loader reads them ten times
            # faster than the checked reader that user files go through.
            data = yaml.load(_builtin_text(file), Loader=_FAST_LOADER)  # noqa: S506 (a SafeLoader)
            return data[key] if key else data

        catalog = Catalog(
            models=_index(
                _parse_list(section("models.yaml", "models"), ModelCard, "built-in", "models")
            ),
            gpus=_index(_parse_list(section("gpus.yaml", "gpus"), GPU, "built-in", "gpus")),
            platforms=_index(
                _parse_list(
                    section("platforms.yaml", "platforms"), Platform, "built-in", "platforms"
                )
            ),
            exchange_rates=_parse_one(
                section("exchange_rates.yaml", ""), ExchangeRates, "built-in", "exchange_rates"
            ),
        )
        catalog.check()
        _BUILTIN = catalog
    return _BUILTIN


def load_catalog(overlays: Iterable[Path] = ()) -> Catalog:
    """The built-in catalog with each overlay file applied in order."""
    catalog = builtin_catalog()
    for path in overlays:
        data = read_yaml(path, what="catalog overlay")
        if not isinstance(data, Mapping):
            raise InputError([say_as("rule.overlay_not_mapping", "{label}: expected a mapping with "
                                     "sections {sections}", label=str(path),
                                     sections=listed(_SECTIONS))])
        catalog = catalog.overlay(data, str(path))
    return catalog


def load_model_card(path: Path) -> ModelCard:
    """A standalone model-card YAML file (for models the catalog lacks)."""
    data = read_yaml(path, what="model card")
    return _parse_one(data, ModelCard, str(path), "")
