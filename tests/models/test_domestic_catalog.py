"""Domestic platforms' security facts and domestic accelerators: each value carries its public
source and date or is `assumed` with its rule, and docs/platform-facts.md names them all."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from plan.models.catalog import load_catalog
from plan.planner.cli.app import app
from plan.planner.estimate.factors import efficiency_assumption
from tests.conftest import REPO

FACT_PLATFORMS = ("huawei-modelarts", "tencent-ti-one", "aliyun-pai", "zhixingyun",
                  "zhixingyun-pro", "autodl", "gpushare", "matpool")
FACT_FEATURES = ("encryption", "dedicated_hardware", "private_line", "checkpoint_resume",
                 "domestic_compliance")
DOMESTIC_GPUS = ("ascend-910b", "ascend-910b1", "ascend-910b3", "ascend-910b4", "ascend-910c",
                 "hygon-k100", "hygon-k100-ai", "hygon-bw200", "cambricon-mlu370-x8")
DOC = REPO / "docs" / "platform-facts.md"


@pytest.mark.parametrize("platform_id", FACT_PLATFORMS)
def test_security_features_each_have_a_fact(platform_id: str) -> None:
    platform = load_catalog().platforms[platform_id]
    for name in FACT_FEATURES:
        fact = platform.feature_facts.get(name)
        assert fact is not None, f"{platform_id}: no source for {name}"
        assert fact.assumption if fact.assumed else fact.as_of
        # a 'not found' fact never backs a feature the catalog claims
        if fact.source.startswith("not found"):
            assert getattr(platform.features, name) is False


def test_domestic_gpus_are_sourced_assumed_and_efficiency_said() -> None:
    gpus = load_catalog().gpus
    for gpu_id in DOMESTIC_GPUS:
        gpu = gpus[gpu_id]
        assert gpu.vendor != "nvidia" and gpu.source
        assert gpu.assumed and gpu.assumption  # every one rests on a stated assumption
        said = efficiency_assumption(gpu.architecture)
        assert said is not None and " on " in said and "assumed" in said


def test_new_accelerators_listed_by_catalog_gpus() -> None:
    out = CliRunner().invoke(app, ["catalog", "gpus", "--format", "json"])
    assert out.exit_code == 0, out.output
    for gpu_id in DOMESTIC_GPUS:
        assert f'"{gpu_id}"' in out.output


def test_platform_facts_doc_names_every_platform_and_gpu() -> None:
    text = DOC.read_text(encoding="utf-8")
    for name in (*FACT_PLATFORMS, *DOMESTIC_GPUS):
        assert f"`{name}`" in text, f"docs/platform-facts.md does not name {name}"
