"""The catalog: models, GPUs, platforms and exchange rates, built in and optionally overlaid.

The built-in data files live in `models/data/` and ship inside the installed package. An overlay
(a scenario's `catalog:` file, or `--catalog`) adds entries or overrides them by id; for platforms,
an overlay's offers replace the built-in offer for the same (gpu, billing) and add the rest.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from functools import lru_cache
from importlib import resources
from pathlib import Path
from typing import Any, TypeVar

import yaml
from pydantic import BaseModel, ValidationError

from plan.models.errors import InputError, UnknownIdError, validation_problems
from plan.models.gpu import GPU
from plan.models.model_card import ModelCard
from plan.models.platform import ExchangeRates, Platform
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
            raise InputError(
                [f"{label}: {sorted(unknown)[0]}: unknown section; allowed: {', '.join(_SECTIONS)}"]
            )
        repeated = _repeated_entries(data, label)
        if repeated:
            raise InputError(repeated)
        models = dict(self.models)
        models.update(_index(_parse_list(data.get("models"), ModelCard, label, "models")))
        gpus = dict(self.gpus)
        gpus.update(_index(_parse_list(data.get("gpus"), GPU, label, "gpus")))
        platforms = dict(self.platforms)
        for raw in _as_list(data.get("platforms"), label, "platforms"):
            merged = _merge_platform(platforms, raw)
            platforms.update(_index(_parse_list([merged], Platform, label, "platforms")))
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
            rates = _parse_one(raw_rates, ExchangeRates, label, "exchange_rates")
        catalog = Catalog(models, gpus, platforms, rates, (*self.sources, label))
        catalog.check()
        return catalog

    def check(self) -> None:
        """Cross-references: offers name known GPUs; ids and aliases are unique per kind."""
        problems: list[str] = []
        for platform in self.platforms.values():
            for i, offer in enumerate(platform.offers):
                if offer.gpu not in self.gpus:
                    hint = str(UnknownIdError("GPU", offer.gpu, self._names(self.gpus)))
                    problems.append(f"catalog: platforms.{platform.id}.offers[{i}].gpu: {hint}")
                if (
                    offer.currency not in self.exchange_rates.rates
                    and offer.currency != self.exchange_rates.base
                ):
                    problems.append(f"catalog: platforms.{platform.id}.offers[{i}].currency: "
                                    f"no exchange rate for {offer.currency}")
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
    def _names(table: Mapping[str, Any]) -> list[str]:
        return [n for item in table.values() for n in (item.id, *item.aliases)]


@lru_cache(maxsize=4096)
def fold_name(name: str) -> str:
    """A catalog name as lookups compare it: case and the separator between words ignored, so
    `h100-80gb`, `H100 80GB` and `h100_80gb` are one name (the catalog refuses two entries that fold
    alike)."""
    return re.sub(r"[\s_-]+", "-", name.strip().lower())


VENDOR_WORDS = frozenset({"nvidia", "huawei", "amd"})
VENDOR_PREFIX = re.compile(rf"^({'|'.join(sorted(VENDOR_WORDS))})-")
"""The vendor word nvidia-smi and spec sheets put before a part's name ("NVIDIA A100-SXM4-80GB"): a
name not known with it is looked up without it."""


def name_words(name: str) -> frozenset[str]:
    """A name's words in any order, without a vendor word: "H100 80GB SXM", "SXM H100 80GB" and the
    card's full name "NVIDIA H100 80GB SXM" are one set."""
    return frozenset(fold_name(name).split("-")) - VENDOR_WORDS


def _lookup(kind: str, wanted: str, table: Mapping[str, T]) -> T:
    if wanted in table:
        return table[wanted]
    folded = fold_name(wanted)
    for name in dict.fromkeys((folded, VENDOR_PREFIX.sub("", folded))):
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
    raise UnknownIdError(kind, wanted, Catalog._names(table))


def _as_list(raw: Any, label: str, section: str) -> list[Any]:
    if raw is None:
        return []
    if not isinstance(raw, list):
        raise InputError([f"{label}: {section}: expected a list of entries"])
    return raw


def _parse_list(raw: Any, schema: type[T], label: str, section: str) -> list[T]:
    items, problems = [], []
    for i, entry in enumerate(_as_list(raw, label, section)):
        try:
            items.append(schema.model_validate(entry))
        except ValidationError as exc:
            name = entry.get("id", i) if isinstance(entry, Mapping) else i
            name = name if isinstance(name, str | int) and len(str(name)) <= 128 else i
            problems += validation_problems(exc, label, f"{section}[{name}]")
    if problems:
        raise InputError(problems)
    return items


def _parse_one(raw: Any, schema: type[T], label: str, section: str) -> T:
    try:
        return schema.model_validate(raw)
    except ValidationError as exc:
        raise InputError(validation_problems(exc, label, section)) from None


def _merge_platform(platforms: Mapping[str, Platform], raw: Any) -> Any:
    """Overlay one platform entry: fields replace, offers merge by (gpu, billing), and capacity
    limits by (gpu, billing modes), so an overlay can raise one quota and keep the rest."""
    # Anything of the wrong type (an id that is a list, `offers: 5`) is left as written: the schema
    # then names the field, exactly as for the built-in catalog.
    if (
        not isinstance(raw, Mapping)
        or not isinstance(raw.get("id"), str)
        or raw["id"] not in platforms
    ):
        return raw
    base = platforms[raw["id"]].model_dump()
    merged = {**base, **raw}
    raw_offers = raw.get("offers", []) or []
    if isinstance(raw_offers, list):
        offers = {_offer_key(o): o for o in base["offers"]}
        for offer in raw_offers:
            offers[_offer_key(offer)] = offer
        merged["offers"] = list(offers.values())
    raw_limits = raw.get("limits")
    if isinstance(raw_limits, Mapping):
        raw_capacity = raw_limits.get("capacity", []) or []
        capacity = {_capacity_key(c): c for c in base["limits"]["capacity"]}
        if isinstance(raw_capacity, list):
            for entry in raw_capacity:
                capacity[_capacity_key(entry)] = entry
        merged["limits"] = {
            **base["limits"],
            **raw_limits,
            "capacity": list(capacity.values()) if isinstance(raw_capacity, list) else raw_capacity,
        }
    return merged


def _repeated_entries(data: Mapping[str, Any], label: str) -> list[str]:
    """Two entries of one overlay for the same model, GPU or platform, or one platform entry with
    two offers (or capacity limits) for the same GPU and billing: merged, the last would silently
    win."""
    problems: list[str] = []
    for section in ("models", "gpus", "platforms"):
        entries = data.get(section)
        if not isinstance(entries, list):
            continue  # the schema names a section of the wrong type
        problems += _repeats(entries, section, label, "id", lambda e: e.get("id"))
        if section != "platforms":
            continue
        for i, platform in enumerate(entries):
            if not isinstance(platform, Mapping):
                continue
            where = f"{section}[{i}]"
            if isinstance(platform.get("offers"), list):
                problems += _repeats(platform["offers"], f"{where}.offers", label,
                                     "GPU and billing", _offer_key)
            limits = platform.get("limits")
            if isinstance(limits, Mapping) and isinstance(limits.get("capacity"), list):
                problems += _repeats(limits["capacity"], f"{where}.limits.capacity", label,
                                     "GPU and billing", _capacity_key, none_is_any=True)
    return problems


def _repeats(entries: list[Any], where: str, label: str, what: str, key_of: Any,
             none_is_any: bool = False) -> list[str]:
    """`none_is_any`: a missing part of the key means "every" (a capacity limit without `gpu`),
    not a missing field."""
    first: dict[Any, int] = {}
    problems: list[str] = []
    for i, entry in enumerate(entries):
        if not isinstance(entry, Mapping):
            continue
        key = _hashable(key_of(entry), entry)  # an unusable key is the entry's own: never repeated
        if key is None or (isinstance(key, tuple) and None in key and not none_is_any):
            continue  # no id (or GPU, billing): the schema names the missing field
        if key in first:
            parts = key if isinstance(key, tuple) else (key,)
            shown = " ".join("+".join(map(str, p)) if isinstance(p, tuple) else str(p)
                             for p in parts)
            problems.append(f"{label}: {where}[{i}]: the same {what} as {where}[{first[key]}] "
                            f"({shown[:80]}); one entry each, or the last would silently win")
        else:
            first[key] = i
    return problems


def _hashable(key: Any, entry: Any) -> Any:
    try:
        hash(key)
    except TypeError:
        # a list where an id belongs: keep the entry, and let validation name the problem
        return id(entry)
    return key


def _offer_key(entry: Any) -> Any:
    if not isinstance(entry, Mapping):
        return id(entry)
    return _hashable((entry.get("gpu"), entry.get("billing")), entry)


def _capacity_key(entry: Any) -> Any:
    if not isinstance(entry, Mapping):
        return id(entry)  # not a mapping: keep it, and let validation name the problem
    billing = entry.get("billing") or []
    try:
        key = entry.get("gpu"), tuple(sorted(billing)) if isinstance(billing, list) else billing
    except TypeError:
        return id(entry)
    return _hashable(key, entry)


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
            raise InputError([f"{path}: expected a mapping with sections {', '.join(_SECTIONS)}"])
        catalog = catalog.overlay(data, str(path))
    return catalog


def load_model_card(path: Path) -> ModelCard:
    """A standalone model-card YAML file (for models the catalog lacks)."""
    data = read_yaml(path, what="model card")
    return _parse_one(data, ModelCard, str(path), "")
