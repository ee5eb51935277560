"""The built-in catalog: required ids, sources on every outside number, unique names."""

from __future__ import annotations

import re

import pytest

from models.catalog import builtin_catalog

REQUIRED_GPUS = {"rtx4090", "rtx3090", "rtx-a6000", "a100-40gb", "a100-80gb", "a800-80gb", "h100-sxm",
                 "h100-pcie", "h800", "h20", "h200", "l40s", "l20", "b200", "gb200", "ascend-910b",
                 "rubin-nvl72"}
REQUIRED_MODELS = {"llama3-8b", "llama3-70b", "llama3.1-8b", "llama3.1-70b", "llama3.1-405b", "llama2-7b",
                   "llama2-13b", "llama2-70b", "qwen2.5-7b", "qwen2.5-14b", "qwen2.5-32b", "qwen2.5-72b",
                   "qwen1.5-14b", "glm-4-9b", "chatglm3-6b", "mistral-7b", "mixtral-8x7b", "deepseek-v3",
                   "baichuan2-13b", "yi-34b"}
REQUIRED_PLATFORMS = {"zhixingyun", "zhixingyun-pro", "tencent-ti-one", "aliyun-pai", "huawei-modelarts",
                      "private-cluster", "lambda", "runpod", "aws"}
DATE = re.compile(r"^\d{4}(-\d{2}){0,2}$")


@pytest.fixture(scope="module")
def catalog():
    return builtin_catalog()


def test_required_ids_present(catalog):
    assert set(catalog.gpus) >= REQUIRED_GPUS
    assert set(catalog.models) >= REQUIRED_MODELS
    assert set(catalog.platforms) >= REQUIRED_PLATFORMS
    assert catalog.model("chatglm4-9b").id == "glm-4-9b"


def test_closed_model_presets_are_marked_assumed(catalog):
    for name in ("chatglm4-70b", "gpt-4", "ernie-4.0", "llama-3-ultra"):
        card = catalog.model(name)
        assert card.assumed and card.assumption, name


def test_every_offer_names_a_known_gpu_and_has_source_and_date(catalog):
    count = 0
    for platform in catalog.platforms.values():
        for offer in platform.offers:
            count += 1
            assert offer.gpu in catalog.gpus, (platform.id, offer.gpu)
            assert offer.source.strip(), (platform.id, offer.gpu, offer.billing)
            assert DATE.match(offer.as_of), (platform.id, offer.gpu, offer.as_of)
            assert (not offer.assumed) or offer.assumption, (platform.id, offer.gpu, offer.billing)
            assert offer.price_per_gpu_period > 0
            assert offer.currency == "CNY" or offer.currency in catalog.exchange_rates.rates
    assert count >= 30


def test_rental_platforms_have_offers(catalog):
    for pid in REQUIRED_PLATFORMS - {"private-cluster"}:
        assert catalog.platform(pid).offers, pid


def test_private_cluster_is_a_purchase_template(catalog):
    private = catalog.platform("private-cluster")
    assert private.kind == "owned" and private.purchase
    for option in private.purchase:
        assert option.gpu in catalog.gpus and option.source and (not option.assumed or option.assumption)


def test_every_gpu_and_model_has_a_source(catalog):
    for gpu in catalog.gpus.values():
        assert gpu.source.strip() and gpu.memory_gib > 0
        assert gpu.peak_tflops.bf16 or gpu.peak_tflops.fp16
    for card in catalog.models.values():
        assert card.source.strip()


def test_fp8_only_on_ada_hopper_and_newer(catalog):
    for gpu in catalog.gpus.values():
        if gpu.architecture in ("ampere", "davinci"):
            assert gpu.peak_tflops.fp8 is None, gpu.id


def test_ids_and_aliases_unique(catalog):
    """No name (case-insensitive) may point at two different entries."""
    for table in (catalog.models, catalog.gpus, catalog.platforms):
        owner: dict[str, str] = {}
        for item in table.values():
            for name in (item.id, *item.aliases):
                assert owner.setdefault(name.lower(), item.id) == item.id, name


def test_exchange_rate_has_date(catalog):
    rates = catalog.exchange_rates
    assert rates.base == "CNY" and "USD" in rates.rates and DATE.match(rates.as_of) and rates.source
    assert catalog.to_currency(1.0, "USD", "CNY") == pytest.approx(rates.rates["USD"])


def test_model_shapes_match_parameter_counts(catalog):
    """A dense card's shape must reproduce its published parameter count within 10%."""
    for card in catalog.models.values():
        if card.moe or card.assumed:
            continue
        h, kv, hd = card.hidden_size, card.num_kv_heads, card.head_dim_resolved
        attn = h * card.num_heads * hd * 2 + h * kv * hd * 2
        mlp = (3 if card.ffn_type == "swiglu" else 2) * h * card.ffn_hidden_size
        emb = card.vocab_size * h * (1 if card.tied_embeddings else 2)
        total = card.layers * (attn + mlp) + emb
        assert total == pytest.approx(card.params, rel=0.10), card.id
