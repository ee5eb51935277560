"""Catalog names in Chinese and common spellings, did-you-mean across scripts, and words of a fixed
list in any case (issue 51 item 5)."""

from __future__ import annotations

import pytest

from plan.models.catalog import builtin_catalog
from plan.models.errors import InputError, UnknownIdError
from plan.models.loading import load_scenario_data

PLATFORMS = [
    ("智星云", "zhixingyun"),
    ("智星云专业版", "zhixingyun-pro"),
    ("腾讯云TI-ONE", "tencent-ti-one"),
    ("腾讯云 TI-ONE", "tencent-ti-one"),
    ("阿里云PAI", "aliyun-pai"),
    ("阿里云 PAI", "aliyun-pai"),
    ("华为云ModelArts", "huawei-modelarts"),
    ("华为云 modelarts", "huawei-modelarts"),
    ("ZHIXINGYUN", "zhixingyun"),
]
GPUS = [
    ("昇腾910B", "ascend-910b"),
    ("昇腾 910B", "ascend-910b"),
    ("华为昇腾910B", "ascend-910b"),
    ("华为 昇腾910B", "ascend-910b"),
    ("Huawei Ascend 910B", "ascend-910b"),
    ("英伟达 A100", "a100-80gb"),
    ("NVIDIA H100", "h100-sxm"),
]


@pytest.mark.parametrize(("name", "platform"), PLATFORMS)
def test_platforms_by_chinese_names_and_spellings(name, platform):
    assert builtin_catalog().platform(name).id == platform


@pytest.mark.parametrize(("name", "gpu"), GPUS)
def test_cards_by_chinese_names_with_or_without_vendor(name, gpu):
    assert builtin_catalog().gpu(name).id == gpu


@pytest.mark.parametrize(("wanted", "kind", "suggested"), [
    ("智星", "platform", "'智星云' (zhixingyun)"),
    ("腾讯", "platform", "(tencent-ti-one)"),
    ("昇腾", "GPU", "'昇腾910B' (ascend-910b)"),
    ("h900", "GPU", "'h800'"),
])
def test_did_you_mean_across_scripts(wanted, kind, suggested):
    lookup = builtin_catalog().platform if kind == "platform" else builtin_catalog().gpu
    with pytest.raises(UnknownIdError) as caught:
        lookup(wanted)
    assert "did you mean" in str(caught.value) and suggested in str(caught.value)


def _scenario(**extra):
    return {"name": "names", "jobs": [{"id": "a", "model": "qwen2.5-7b", "method": "lora",
                                       "tokens": "10M"}], **extra}


def test_a_scenario_names_platforms_and_cards_in_chinese(tmp_path):
    raw = _scenario(policy={"allow_platforms": ["智星云", "华为云 ModelArts"],
                            "forbid_gpus": ["昇腾910B"]})
    loaded = load_scenario_data(raw, tmp_path / "s.yaml")
    assert loaded.scenario.policy.allow_platforms == ["智星云", "华为云 ModelArts"]


def test_an_unknown_chinese_name_is_one_line_with_a_suggestion(tmp_path):
    with pytest.raises(InputError) as caught:
        load_scenario_data(_scenario(policy={"allow_platforms": ["智星"]}), tmp_path / "s.yaml")
    assert caught.value.problems == [
        f"{tmp_path / 's.yaml'}: policy.allow_platforms[0]: unknown platform '智星'; did you mean "
        "'智星云' (zhixingyun) or '智星云专业版' (zhixingyun-pro)?"]


@pytest.mark.parametrize(("field", "written", "taken"), [
    ("method", "SFT", "sft"),
    ("method", "LoRA", "lora"),
    ("precision", "BF16", "bf16"),
    ("framework", "Megatron", "megatron"),
])
def test_words_of_a_fixed_list_in_any_case(tmp_path, field, written, taken):
    raw = _scenario()
    raw["jobs"][0][field] = written
    job = load_scenario_data(raw, tmp_path / "s.yaml").scenario.jobs[0]
    assert getattr(job, field) == taken


def test_a_word_in_no_case_of_the_list_is_still_refused(tmp_path):
    raw = _scenario()
    raw["jobs"][0]["method"] = "SFTX"
    with pytest.raises(InputError, match=r"jobs\[0\]\.method: got 'SFTX'"):
        load_scenario_data(raw, tmp_path / "s.yaml")


def test_billing_in_any_case_in_an_overlay():
    offer = {"gpu": "a800-80gb", "billing": "Hourly", "price_per_gpu_period": 4.0,
             "currency": "CNY", "source": "q", "as_of": "2026-12"}
    catalog = builtin_catalog().overlay(
        {"platforms": [{"id": "zhixingyun-pro", "offers": [offer]}]}, "o.yaml")
    prices = {(o.gpu, o.billing): o.price_per_gpu_period
              for o in catalog.platforms["zhixingyun-pro"].offers}
    assert prices[("a800-80gb", "hourly")] == 4.0
