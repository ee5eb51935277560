"""A scenario states its training stack's maturity (`stack_maturity`, issue 49 item 2): a
pre-training job on a stack stated `new` takes band.NEW_STACK_FACTOR more hours on the same layout,
fine-tuning is unaffected (no published whole fine-tuning run to scale), a job's own value beats the
scenario's, the answer says the rule as an assumption in English and Chinese, in table, markdown
and JSON, and a bad value is one line naming the file, the field and the words allowed."""

from __future__ import annotations

import copy
import dataclasses
import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from typer.testing import CliRunner

from plan.models.loading import load_scenario
from plan.models.problem import Candidate, Problem
from plan.planner.candidates import build_problem
from plan.planner.candidates.build import CandidateBuilder
from plan.planner.candidates.reuse import kept_jobs
from plan.planner.cli.app import app
from plan.planner.estimate.band import NEW_STACK_FACTOR, STACK_MATURITIES
from tests.conftest import REPO

# One 8-GPU H100 node the team owns; a small pre-training run and a fine-tuning run of the same
# model, each on the pool only (a few candidates, built in seconds).
SCENARIO: dict[str, Any] = {
    "name": "maturity",
    "budget": "1M",
    "deadline": "60d",
    "sites": [{"id": "lab", "jurisdiction": "cn"}],
    "owned": [{"id": "lab-h100", "site": "lab", "gpu": "h100-sxm", "count": 8,
               "gpus_per_node": 8, "cost_per_gpu_hour": 10}],
    "jobs": [
        {"id": "pre", "model": "qwen3-0.6b", "method": "pretrain", "tokens": "2B",
         "seq_len": 2048, "billing": ["owned"]},
        {"id": "tune", "model": "qwen3-0.6b", "method": "full_finetune", "tokens": "50M",
         "seq_len": 2048, "billing": ["owned"]},
    ],
}
NEW_NOTE = "stack stated new"
MATURE_NOTE = "stack stated mature"
ENV = {"LANG": "C.UTF-8", "LC_ALL": "C.UTF-8", "LANGUAGE": "", "COLUMNS": "200"}


def _data(scenario_maturity: str | None = None, **job_maturity: str) -> dict[str, Any]:
    data = copy.deepcopy(SCENARIO)
    if scenario_maturity is not None:
        data["stack_maturity"] = scenario_maturity
    for job in data["jobs"]:
        if job["id"] in job_maturity:
            job["stack_maturity"] = job_maturity[job["id"]]
    return data


def _write(tmp_path: Path, data: dict[str, Any], name: str = "scenario.yaml") -> Path:
    path = tmp_path / name
    path.write_text(yaml.safe_dump(data), encoding="utf-8")
    return path


def _by_place(problem: Problem, job: str) -> dict[tuple[str, str, int, str], Candidate]:
    return {(c.platform, c.gpu, c.gpus, c.billing): c for c in problem.candidates[job]}


def _notes(candidate: Candidate, words: str) -> list[str]:
    return [a for a in candidate.assumptions if words in a]


def test_the_vocabulary_is_the_estimators() -> None:
    assert STACK_MATURITIES == ("mature", "new")


def test_a_new_stack_times_a_pretraining_run_longer_on_the_same_layout(tmp_path: Path) -> None:
    """Built one after the other in one process (the unstated build first), so a run estimate or
    a build kept from the unstated scenario would show here as a ratio of 1."""
    unstated = build_problem(load_scenario(_write(tmp_path, _data(), "unstated.yaml")))
    new = build_problem(load_scenario(_write(tmp_path, _data("new"), "new.yaml")))
    plain, stated = _by_place(unstated, "pre"), _by_place(new, "pre")
    assert plain and set(stated) == set(plain)
    for place, c in stated.items():
        before = plain[place]
        assert c.layout == before.layout and c.tokens_per_s == before.tokens_per_s
        # steady state x overhead x (1 + failures): only the overhead moves, by the factor
        assert c.gpu_hours == pytest.approx(before.gpu_hours * NEW_STACK_FACTOR, rel=1e-9)
        time, time_before = c.figures.time, before.figures.time
        assert time.train_p90_h == pytest.approx(time_before.train_p90_h * NEW_STACK_FACTOR)
        assert time.failure_overhead == before.figures.time.failure_overhead
        assert c.cost > before.cost  # the pool's running cost is paid by the hour
        assert len(_notes(c, NEW_NOTE)) == 1 and not _notes(before, "stack stated")
    # fine-tuning: no published whole run to scale, so nothing moves and nothing is said
    assert new.candidates["tune"] == unstated.candidates["tune"]


def test_a_job_s_own_maturity_beats_the_scenario_s(tmp_path: Path) -> None:
    unstated = build_problem(load_scenario(_write(tmp_path, _data(), "unstated.yaml")))
    mixed = build_problem(load_scenario(_write(tmp_path, _data("new", pre="mature"), "m.yaml")))
    plain, stated = _by_place(unstated, "pre"), _by_place(mixed, "pre")
    assert set(stated) == set(plain)
    for place, c in stated.items():
        assert c.gpu_hours == plain[place].gpu_hours
        assert len(_notes(c, MATURE_NOTE)) == 1 and not _notes(c, NEW_NOTE)


def test_a_changed_maturity_keeps_no_build_of_the_job(tmp_path: Path) -> None:
    """A copy of a scenario (an explanation's relaxations, a batch's variants) takes the jobs it
    leaves as they were from its parent's build: not a job whose maturity, or whose scenario's,
    changed."""
    loaded = load_scenario(_write(tmp_path, _data()))
    parent = CandidateBuilder(loaded, {})
    parent.build()
    s = loaded.scenario
    scenario_new = s.model_copy(update={"stack_maturity": "new"})
    job_new = s.model_copy(update={"jobs": [
        j.model_copy(update={"stack_maturity": "new"}) if j.id == "pre" else j for j in s.jobs]})
    assert sorted(kept_jobs(parent, loaded)) == ["pre", "tune"]
    assert kept_jobs(parent, dataclasses.replace(loaded, scenario=scenario_new)) == {}
    assert sorted(kept_jobs(parent, dataclasses.replace(loaded, scenario=job_new))) == ["tune"]


def test_the_answer_says_it_in_table_markdown_json_and_chinese(tmp_path: Path) -> None:
    path = _write(tmp_path, _data("new"))

    def solve(*more: str) -> Any:
        result = CliRunner().invoke(app, ["solve", str(path), *more], env=ENV)
        assert result.exit_code == 0, result.output
        return result

    assert NEW_NOTE in solve().stdout
    assert NEW_NOTE in solve("--format", "markdown").stdout
    answer = json.loads(solve("--format", "json").stdout)
    said = [a for plan in answer["plans"] for a in plan["assumptions"] if NEW_NOTE in a]
    assert said and all(a.startswith("pre: ") for a in said)
    chinese = solve("--lang", "zh").stdout
    assert "训练栈是新的" in chinese and "stack stated" not in chinese


@pytest.mark.parametrize(("where", "field"), [("scenario", "stack_maturity"),
                                              ("job", "jobs[0].stack_maturity")])
def test_a_bad_value_is_one_line_naming_the_file_field_and_words(
        tmp_path: Path, where: str, field: str) -> None:
    data = _data("old") if where == "scenario" else _data(pre="old")
    path = _write(tmp_path, data)
    result = CliRunner().invoke(app, ["validate", str(path)], env=ENV)
    assert result.exit_code == 2
    lines = result.stderr.strip().splitlines()
    assert lines == [f"error: {path}: {field}: got 'old'; input should be 'mature' or 'new'"]


def test_the_words_are_taken_in_any_case(tmp_path: Path) -> None:
    loaded = load_scenario(_write(tmp_path, _data("NEW", pre="Mature")))
    assert loaded.scenario.stack_maturity == "new"
    assert loaded.scenario.stack_maturity_of(loaded.scenario.job("pre")) == "mature"
    assert loaded.scenario.stack_maturity_of(loaded.scenario.job("tune")) == "new"


def test_the_scenario_reference_gives_the_factor_the_estimator_uses() -> None:
    text = (REPO / "docs" / "scenario.md").read_text(encoding="utf-8")
    assert text.count(f"at {NEW_STACK_FACTOR:.2f} x") == 2  # the paragraph and the jobs' table
