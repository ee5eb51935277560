"""Jurisdictions as ISO-style codes on sites, platforms and residency rules (issue 13 item 4)."""

from __future__ import annotations

import pytest

from plan.models.errors import InputError
from plan.models.job import DataSpec
from plan.models.jurisdiction import within
from plan.models.loading import load_scenario
from plan.models.scenario import Site
from plan.planner.session import Session


@pytest.mark.parametrize(
    ("required", "jurisdiction", "regions", "ok"),
    [
        ("cn", "cn", (), True),
        ("cn", "us", (), False),
        ("us", "us", (), True),
        ("eu", "de", (), True),
        ("eu", "us", (), False),
        ("sg", "cn", ("sg",), True),
        ("de", "eu", (), False),
        ("us", "global", (), False),
    ],
)
def test_within(required, jurisdiction, regions, ok):
    assert within(required, jurisdiction, regions) is ok


@pytest.mark.parametrize("value", ["any", "cn", "on_premises", "us", "eu", "SG"])
def test_residency_accepts_codes_and_the_old_words(value):
    assert DataSpec(residency=value).residency == value.lower() if value != "on_premises" else True


@pytest.mark.parametrize("value", ["china", "u", "usa", "", 1])
def test_residency_refuses_with_the_forms_allowed(value):
    with pytest.raises(ValueError, match="jurisdiction code"):
        DataSpec(residency=value)


def test_site_code_is_checked():
    assert Site(id="x", jurisdiction="US").jurisdiction == "us"
    with pytest.raises(ValueError, match="ISO 3166"):
        Site(id="x", jurisdiction="global")


@pytest.mark.parametrize("residency", ["cn", "us", "sg", "eu"])
def test_residency_keeps_only_places_in_that_jurisdiction(write_scenario, residency):
    loaded = load_scenario(write_scenario({
        "name": "r", "jobs": [{"id": "a", "model": "llama3-8b", "method": "lora", "tokens": "20M",
                               "data": {"residency": residency}}]}))
    problem = Session.from_loaded(loaded).problem
    allowed = [c for c in problem.all_candidates() if not c.violations]
    for candidate in allowed:
        platform = loaded.catalog.platforms[candidate.platform]
        assert within(residency, platform.jurisdiction, platform.regions)
    platforms = {c.platform for c in allowed}
    expected = {
        p.id
        for p in loaded.catalog.platforms.values()
        if within(residency, p.jurisdiction, p.regions)
    }
    assert platforms <= expected
    if residency == "sg":
        assert platforms == {"tencent-ti-one"}  # Chinese, with a Singapore region


def test_unknown_residency_in_a_file_is_one_line(write_scenario):
    with pytest.raises(InputError) as info:
        load_scenario(
            write_scenario(
                {
                    "name": "r",
                    "jobs": [
                        {
                            "id": "a",
                            "model": "llama3-8b",
                            "method": "lora",
                            "tokens": "1M",
                            "data": {"residency": "China"},
                        }
                    ],
                }
            )
        )
    assert len(info.value.problems) == 1 and "jobs[0].data.residency" in info.value.problems[0]


def test_a_jurisdiction_no_platform_is_in_is_infeasible_with_the_relaxation_to_any(write_scenario):
    from plan.planner.solve import solve

    loaded = load_scenario(write_scenario({
        "name": "r", "jobs": [{"id": "a", "model": "llama3-8b", "method": "lora", "tokens": "10M",
                               "data": {"residency": "de"}}]}))
    result = solve(loaded)
    assert result.status == "infeasible"
    assert any(c.constraint == "residency/a" for c in result.conflicts)
    assert any(r.field == "jobs[a].data.residency" and r.to == "any" for r in result.relaxations)
