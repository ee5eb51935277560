"""Who may rent (issue 47 item 7): a rental on a US cloud by a team in China is flagged beside the
plan with the BIS rule and its source; `policy.only_available: true` rules it out; a US team, or a
scenario whose renter is unknown, gets no flag; a bad renter rule is one line, exit 2."""

from __future__ import annotations

import json
from typing import Any

import pytest
import yaml
from typer.testing import CliRunner

from plan.models.catalog import builtin_catalog
from plan.models.errors import InputError
from plan.models.loading import load_scenario
from plan.planner import i18n
from plan.planner.candidates import build_problem
from plan.planner.cli.app import app
from plan.planner.i18n.said import local
from tests.planner.catalog_runs import run_catalog_scenario

runner = CliRunner()
SFT = {"id": "sft", "model": "qwen2.5-7b", "method": "sft", "tokens": "2B", "seq_len": 4096,
       "deadline": "30d", "data": {"sensitivity": "public"}}
US_CLOUDS = ("lambda", "aws")
BIS_SOURCE = "akingump.com"


def _fields(jurisdiction: str | None, **policy: Any) -> dict[str, Any]:
    """Lambda (a US cloud) and RunPod (no stated rule) only; Lambda is the cheaper of the two."""
    sites = [] if jurisdiction is None else [{"id": "lab", "jurisdiction": jurisdiction}]
    return {"budget": "1M", "currency": "CNY", "sites": sites,
            "policy": {"allow_platforms": ["lambda", "runpod"], **policy}}


def _flags(notes: list[str]) -> list[str]:
    return [note for note in notes if note.startswith("availability: renting")]


def test_a_china_team_renting_a_us_cloud_is_flagged(base_scenario, write_scenario):
    _, _, result = run_catalog_scenario(base_scenario, write_scenario, [SFT], **_fields("cn"))
    plan = result.plans[0]
    assert plan.jobs[0].platform == "lambda"
    (flag,) = _flags(plan.assumptions)
    assert "on lambda from cn" in flag and "BIS guidance" in flag
    assert BIS_SOURCE in flag and "2025-05-21" in flag  # the rule's source and date
    assert "policy.only_available: true rules it out" in flag
    with i18n.kept_language():  # said again in Chinese, the catalog's rule quoted as written
        i18n.choose("zh")
        chinese = local(flag)
    assert chinese.startswith("可得性：") and "policy.only_available: true 可将其排除" in chinese
    assert BIS_SOURCE in chinese and "2025-05-21" in chinese


def test_only_available_moves_the_plan_off_the_us_cloud(base_scenario, write_scenario):
    fields = _fields("cn", only_available=True)
    _, problem, result = run_catalog_scenario(base_scenario, write_scenario, [SFT], **fields)
    plan = result.plans[0]
    assert plan.jobs[0].platform not in US_CLOUDS
    assert not _flags(plan.assumptions)  # ruled out, so nothing left to flag
    on_lambda = [c for c in problem.all_candidates() if c.platform == "lambda"]
    assert on_lambda and all("policy.only_available" in c.violations for c in on_lambda)
    path = write_scenario({**base_scenario, **fields})  # what run_catalog_scenario solved
    answer = runner.invoke(app, ["explain", str(path), "--why-not", "job=sft platform=lambda",
                                 "--format", "json"])
    assert answer.exit_code == 0, answer.output
    why = json.loads(answer.stdout)
    assert why["status"] == "infeasible"
    assert any(c["constraint"] == "policy.only_available" and BIS_SOURCE in c["detail"]
               for c in why["conflicts"])


@pytest.mark.parametrize(("sites", "renter", "flagged"), [
    ([{"id": "lab", "jurisdiction": "us"}], None, False),
    ([], None, False),  # no site: the renter is unknown, nothing to check
    ([{"id": "a", "jurisdiction": "cn"}, {"id": "b", "jurisdiction": "us"}], None, False),
    ([{"id": "a", "jurisdiction": "cn"}, {"id": "b", "jurisdiction": "us"}], "cn", True),
    ([], "cn", True),
    ([{"id": "lab", "jurisdiction": "cn"}], "us", False),  # stated, it wins over the sites
])
def test_the_renter_is_the_scenarios(base_scenario, write_scenario, sites, renter, flagged):
    """The renter's jurisdiction: `renter_jurisdiction`, else the sites' when they agree."""
    base_scenario.update(_fields(None), sites=sites, owned=[], jobs=[SFT])
    if renter is not None:
        base_scenario["renter_jurisdiction"] = renter
    problem = build_problem(load_scenario(write_scenario(base_scenario)))
    rented = [c for c in problem.all_candidates() if c.platform in ("lambda", "runpod")]
    assert {c.platform for c in rented} == {"lambda", "runpod"}
    for c in rented:
        assert bool(_flags(c.assumptions)) == (flagged and c.platform == "lambda"), c.platform


def test_the_us_clouds_carry_the_rule_with_its_source():
    catalog = builtin_catalog()
    for platform_id in US_CLOUDS:
        platform = catalog.platforms[platform_id]
        assert platform.jurisdiction == "us"
        assert all(rule.source.startswith("https://") and rule.as_of
                   for rule in platform.renter_rules)
        for offer in platform.offers:
            assert platform.renter_rule(offer.gpu, "cn") is not None
            assert platform.renter_rule(offer.gpu, "us") is None


@pytest.mark.parametrize(("rule", "words"), [
    ({"available_in": ["us"], "not_available_to": ["cn"]}, "exactly one of available_in"),
    ({}, "exactly one of available_in"),
    ({"not_available_to": []}, "list is empty"),
    ({"not_available_to": ["china"]}, "expected a jurisdiction code"),
    ({"not_available_to": ["cn"], "gpus": ["h20"]}, "names GPUs it does not rent ['h20']"),
])
def test_a_bad_renter_rule_is_one_line(rule, words):
    entry = {"rule": "a rule", "source": "https://example.org", "as_of": "2025-05", **rule}
    with pytest.raises(InputError) as caught:
        builtin_catalog().overlay({"platforms": [{"id": "lambda", "renter_rules": [entry]}]},
                                  "o.yaml")
    (problem,) = caught.value.problems
    assert problem.startswith("o.yaml: platforms[lambda]") and words in problem, problem
    assert "\n" not in problem


def test_a_bad_renter_rule_exits_2(tmp_path, base_scenario):
    (tmp_path / "over.yaml").write_text(yaml.safe_dump({"platforms": [{"id": "lambda",
        "renter_rules": [{"not_available_to": ["cn"], "rule": "r", "as_of": "2025-05"}]}]}))
    base_scenario["catalog"] = "over.yaml"
    path = tmp_path / "s.yaml"
    path.write_text(yaml.safe_dump(base_scenario))
    result = runner.invoke(app, ["solve", str(path)])
    assert result.exit_code == 2
    lines = [line for line in result.output.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("error: "), result.output
    assert "over.yaml: platforms[lambda].renter_rules[0].source" in lines[0]


def test_a_relaxation_names_only_available_for_a_rental(base_scenario, write_scenario):
    """Only US clouds allowed and `only_available` on: no plan; lifting the policy is named with
    what it lets the plan rent."""
    fields = _fields("cn", only_available=True)
    fields["policy"]["allow_platforms"] = list(US_CLOUDS)
    _, _, result = run_catalog_scenario(base_scenario, write_scenario, [SFT], **fields)
    assert result.status == "infeasible"
    lifted = [r for r in result.relaxations if r.field == "policy.only_available"]
    assert lifted, [r.detail for r in result.relaxations]
    assert str(lifted[0].to).startswith("false, to rent ")
    assert any(f"on {platform}" in str(lifted[0].to) for platform in US_CLOUDS)
