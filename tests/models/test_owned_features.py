"""Owned pools: capabilities default from the GPU; features are an enumerated type."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from plan.models.features import MEANING, Feature
from plan.models.loading import load_scenario
from plan.models.platform import Features
from plan.planner.candidates import build_problem
from plan.planner.cli.app import app
from tests.conftest import REPO

runner = CliRunner()


def _qlora_on_pool(base_scenario, write_scenario, gpu: str, **pool_fields) -> list:
    base_scenario["owned"][0].update({"gpu": gpu, **pool_fields})
    base_scenario["jobs"] = [base_scenario["jobs"][0]]  # the QLoRA job
    problem = build_problem(load_scenario(write_scenario(base_scenario)))
    return [c for c in problem.candidates["a"] if c.platform == "lab-4090"]


def test_feature_names_match_the_platform_flags():
    assert {f.value for f in Feature} == set(Features.model_fields)
    assert set(MEANING) == set(Feature)


def test_readme_lists_every_feature():
    readme = (REPO / "README.md").read_text()
    for feature in Feature:
        assert f"`{feature.value}`" in readme, feature


@pytest.mark.parametrize("gpu", ["rtx4090", "a800-80gb", "h100-sxm"])
def test_owned_cuda_pool_accepts_qlora_by_default(base_scenario, write_scenario, gpu):
    on_pool = _qlora_on_pool(base_scenario, write_scenario, gpu)
    assert on_pool and all("compatibility/a" not in c.violations for c in on_pool)


def test_owned_cuda_pool_can_say_it_lacks_qlora(base_scenario, write_scenario):
    on_pool = _qlora_on_pool(base_scenario, write_scenario, "rtx4090", lacks=["qlora_kernels"])
    assert on_pool and all("compatibility/a" in c.violations for c in on_pool)


def test_owned_ascend_pool_needs_qlora_stated(base_scenario, write_scenario):
    ascend = {"count": 8, "gpus_per_node": 8}
    unstated = _qlora_on_pool(base_scenario, write_scenario, "ascend-910b", **ascend)
    assert unstated and all("compatibility/a" in c.violations for c in unstated)
    stated = _qlora_on_pool(
        base_scenario, write_scenario, "ascend-910b", features=["qlora_kernels"], **ascend
    )
    assert stated and all("compatibility/a" not in c.violations for c in stated)


@pytest.mark.parametrize(("field", "value", "expected"), [
    ("features", ["qlora_kernel"], "owned[0].features[0]: unknown feature 'qlora_kernel'; did you "
                                   "mean 'qlora_kernels'?"),
    ("lacks", ["env_snap"], "owned[0].lacks[0]: unknown feature 'env_snap'; did you mean "
                            "'env_snapshot'?"),
    ("lacks", ["env_snapshot"], "owned[0]: env_snapshot is both in features and in lacks"),
])
def test_bad_feature_names_exit_2_with_one_line(
    base_scenario, write_scenario, field, value, expected
):
    base_scenario["owned"][0]["features"] = ["env_snapshot"]
    base_scenario["owned"][0][field] = value
    path = write_scenario(base_scenario)
    result = runner.invoke(app, ["validate", str(path)])
    assert result.exit_code == 2
    lines = result.stderr.strip().splitlines()
    assert lines == [f"error: {path}: {expected}"], result.stderr
