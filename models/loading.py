"""Load a scenario file into validated domain objects, checking every id against the catalog."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from plan.models.catalog import Catalog, load_catalog, load_model_card
from plan.models.errors import InputError, UnknownIdError, validation_problems
from plan.models.model_card import ModelCard
from plan.models.money import builtin_rates, converting
from plan.models.platform import ExchangeRates
from plan.models.said import say_as
from plan.models.scenario import Scenario
from plan.models.yaml_io import read_yaml


@dataclass(frozen=True)
class LoadedScenario:
    """A scenario with its catalog (built-in plus overlays) and each job's resolved model card."""

    path: Path
    scenario: Scenario
    catalog: Catalog
    models: dict[str, ModelCard]  # by job id
    # amounts written in another currency, and the rate that converted them
    money_notes: tuple[str, ...] = ()


def is_model_file(ref: str) -> bool:
    # Hugging Face style names ("meta-llama/Meta-Llama-3-8B") are catalog aliases, not paths.
    return ref.endswith((".yaml", ".yml")) or ref.startswith(("./", "../", "/", "~", ".\\"))


def resolve_model(ref: str, catalog: Catalog, base_dir: Path) -> ModelCard:
    """A catalog id or alias, or the path of a model-card YAML file (relative to `base_dir`)."""
    if is_model_file(ref):
        path = Path(ref)
        return load_model_card(path if path.is_absolute() else base_dir / path)
    return catalog.model(ref)


def load_scenario(path: Path, extra_overlays: tuple[Path, ...] = ()) -> LoadedScenario:
    """Read, validate and cross-check a scenario. Raises InputError listing every problem found."""
    return load_scenario_data(read_yaml(path, what="scenario file"), path, extra_overlays)


def _check(problems: list[str], label: str, field: str, lookup: object) -> None:
    try:
        lookup()  # type: ignore[operator]
    except UnknownIdError as exc:
        problems.append(_unknown_line(label, field, exc))


def _unknown_line(label: str, field: str, exc: UnknownIdError) -> str:
    """'file: field: unknown GPU 'x'; did you mean ...?', said again in the reader's language."""
    return say_as("rule.field_problem", "{label}: {path}: {message}", label=label, path=field,
                  message=exc.message)


def _purchase_problems(scenario: Scenario, catalog: Catalog, label: str) -> list[str]:
    """Each purchase quote names a GPU the catalog can buy: the quote overrides the price, life and
    lead time, the catalog entry supplies power, staff and node size."""
    problems: list[str] = []
    listed = {p.gpu for platform in catalog.platforms.values() for p in platform.purchase}
    for i, quote in enumerate(scenario.purchase):
        try:
            gpu = catalog.gpu(quote.gpu).id
        except UnknownIdError as exc:
            problems.append(_unknown_line(label, f"purchase[{i}].gpu", exc))
            continue
        if gpu not in listed:
            problems.append(f"{label}: purchase[{i}].gpu: the catalog has no purchase entry for "
                            f"{gpu} (it has: {', '.join(sorted(listed)) or 'none'}); add one in a "
                            "catalog overlay (power, staff, life) and quote your price here")
    return problems


def load_scenario_data(
    raw: object, path: Path, extra_overlays: tuple[Path, ...] = ()
) -> LoadedScenario:
    """Validate already-parsed scenario data (e.g. a file's YAML with one field changed) as if read
    from `path`.

    Relative references (catalog overlay, model-card files) resolve against `path.parent`, and every
    message names `path`, exactly as `load_scenario` does. Raises InputError listing every problem.
    """
    label = str(path)
    if not isinstance(raw, Mapping):
        raise InputError([f"{label}: expected a mapping of scenario fields (name, jobs, ...), "
                          f"got {type(raw).__name__}"])
    scenario, money_notes = _validate(raw, label)

    overlays: list[Path] = []
    if scenario.catalog:
        overlay = Path(scenario.catalog)
        overlay = overlay if overlay.is_absolute() else path.parent / overlay
        if not overlay.exists():
            raise InputError([f"{label}: catalog: overlay file {scenario.catalog!r} not found "
                              f"(looked at {overlay})"])
        overlays.append(overlay)
    catalog = load_catalog([*overlays, *extra_overlays])
    if money_notes and catalog.exchange_rates != builtin_rates():
        scenario, money_notes = _validate(raw, label, catalog.exchange_rates)  # the overlay's rates
    problems: list[str] = []
    models: dict[str, ModelCard] = {}
    for i, job in enumerate(scenario.jobs):
        try:
            models[job.id] = resolve_model(job.model, catalog, path.parent)
        except UnknownIdError as exc:
            problems.append(_unknown_line(label, f"jobs[{i}].model", exc))
        except InputError as exc:
            problems += [f"{label}: jobs[{i}].model: {p}" for p in exc.problems]
    for i, pool in enumerate(scenario.owned):
        _check(problems, label, f"owned[{i}].gpu", lambda g=pool.gpu: catalog.gpu(g))
    policy = scenario.policy
    for field, ids in (
        ("allow_platforms", policy.allow_platforms),
        ("forbid_platforms", policy.forbid_platforms),
    ):
        for j, pid in enumerate(ids):
            _check(problems, label, f"policy.{field}[{j}]", lambda p=pid: catalog.platform(p))
    for field, ids in (("allow_gpus", policy.allow_gpus), ("forbid_gpus", policy.forbid_gpus)):
        for j, gid in enumerate(ids):
            _check(problems, label, f"policy.{field}[{j}]", lambda g=gid: catalog.gpu(g))
    problems += _purchase_problems(scenario, catalog, label)
    site_ids = {s.id for s in scenario.sites}
    for i, site in enumerate(scenario.sites):
        for j, link in enumerate(site.links):
            if link.to not in site_ids:
                _check(
                    problems,
                    label,
                    f"sites[{i}].links[{j}].to",
                    lambda p=link.to: catalog.platform(p),
                )
    rates = catalog.exchange_rates
    if scenario.currency != rates.base and scenario.currency not in rates.rates:
        problems.append(f"{label}: currency: no exchange rate for {scenario.currency!r}; "
                        f"known: {', '.join([rates.base, *sorted(rates.rates)])}")
    for i, job in enumerate(scenario.jobs):
        card = models.get(job.id)
        if card and job.seq_len > card.max_positions:
            problems.append(f"{label}: jobs[{i}].seq_len: {job.seq_len} exceeds {card.id}'s "
                            f"max_positions {card.max_positions}")
    if problems:
        raise InputError(problems)
    return LoadedScenario(path=path, scenario=scenario, catalog=catalog, models=models,
                          money_notes=tuple(money_notes))


def _validate(
    raw: Mapping[str, Any], label: str, rates: ExchangeRates | None = None
) -> tuple[Scenario, list[str]]:
    """The scenario, and a line per amount converted from the currency it named."""
    try:
        with converting(raw.get("currency", "CNY"), rates) as money:
            return Scenario.model_validate(raw), money.notes
    except ValidationError as exc:
        raise InputError(validation_problems(exc, label, model=Scenario)) from None
