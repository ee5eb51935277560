"""A recurring job's instances share the first instance's candidates, but each breaks the rules as
itself: its rule groups (`ops_skill/ID-05`), reasons and assumptions name it, so relaxing one
instance's rule never switches another's, and 'ruled out by' lines cite the right instance."""

from __future__ import annotations

from pathlib import Path

from plan.models.loading import load_scenario
from plan.planner.candidates import build_problem
from plan.planner.candidates.windows import instance_renamer

ROOT = Path(__file__).resolve().parents[2]
PER_JOB_RULES = ("ops_skill/", "sensitivity/", "residency/", "compatibility/")


def test_each_instance_breaks_rules_under_its_own_name():
    problem = build_problem(load_scenario(ROOT / "scenarios/finance_year.yaml"))
    instances = [job for job in problem.jobs if job.startswith("monthly-sft-")]
    assert len(instances) == 12
    seen: dict[str, set[str]] = {job: set() for job in instances}
    for job in instances:
        for c in problem.candidates[job]:
            for group in c.violations:
                if group.startswith(PER_JOB_RULES):
                    assert group.endswith(f"/{job}"), (job, group)
                    seen[job].add(group)
            for text in (*c.violations.values(), *c.assumptions):
                others = [j for j in instances if j != job and j in text.split()]
                assert not others, (job, text)
    # the scenario's ops skill rules out some option of every instance (the premise of the test)
    assert all(any(g.startswith("ops_skill/") for g in groups) for groups in seen.values())
    for removed in problem.removed:
        if removed.job in instances and "/" in removed.rule:
            assert removed.rule.endswith(f"/{removed.job}"), removed


def test_an_instance_id_is_renamed_as_a_whole_word_only():
    own = instance_renamer("run-01", "run-05")
    assert own("ops_skill/run-01") == "ops_skill/run-05"
    assert own("run-01: data moves over run-010's link, as run-01.") == (
        "run-05: data moves over run-010's link, as run-05.")


def test_a_renamed_reason_is_still_said_in_the_readers_language():
    from plan.models.said import Said, say_as
    from plan.planner import i18n
    from plan.planner.i18n.said import local

    reason = say_as("rule.transfer_assumed", "{job}: data moves {at} -> {target} over an "
                    "assumed {gbps:g} Gb/s internet link{stated}", job="run-01", at="lab",
                    target="cloud", gbps=1.0, stated="")
    renamed = instance_renamer("run-01", "run-05")(reason)
    assert isinstance(renamed, Said) and renamed.startswith("run-05: ")
    with i18n.kept_language():
        i18n.choose("zh")
        said = local(renamed)
    assert "run-05" in said and "run-01" not in said and said != str(renamed)
