"""The built-in catalog: required ids, sources on every outside number, unique names."""

from __future__ import annotations

import re

import pytest

from plan.models.catalog import builtin_catalog, fold_name, load_catalog
from plan.models.errors import InputError, UnknownIdError

REQUIRED_GPUS = {
    "rtx4090",
    "rtx3090",
    "rtx-a6000",
    "a100-40gb",
    "a100-80gb",
    "a800-80gb",
    "h100-sxm",
    "h100-pcie",
    "h800",
    "h20",
    "h200",
    "l40s",
    "l20",
    "b200",
    "gb200",
    "ascend-910b",
    "rubin-nvl72",
}
REQUIRED_MODELS = {
    "llama3-8b",
    "llama3-70b",
    "llama3.1-8b",
    "llama3.1-70b",
    "llama3.1-405b",
    "llama2-7b",
    "llama2-13b",
    "llama2-70b",
    "qwen2.5-7b",
    "qwen2.5-14b",
    "qwen2.5-32b",
    "qwen2.5-72b",
    "qwen1.5-14b",
    "glm-4-9b",
    "chatglm3-6b",
    "mistral-7b",
    "mixtral-8x7b",
    "deepseek-v3",
    "baichuan2-13b",
    "yi-34b",
}
REQUIRED_PLATFORMS = {
    "zhixingyun",
    "zhixingyun-pro",
    "tencent-ti-one",
    "aliyun-pai",
    "huawei-modelarts",
    "private-cluster",
    "lambda",
    "runpod",
    "aws",
}
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
        assert (
            option.gpu in catalog.gpus
            and option.source
            and (not option.assumed or option.assumption)
        )


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
    """No name (case and word separators ignored, as lookups compare them) may point at two
    different entries."""
    for table in (catalog.models, catalog.gpus, catalog.platforms):
        owner: dict[str, str] = {}
        for item in table.values():
            for name in (item.id, *item.aliases):
                assert owner.setdefault(fold_name(name), item.id) == item.id, name


@pytest.mark.parametrize(
    ("typed", "kind", "expected"),
    [
        ("h100-80gb", "gpu", "h100-sxm"),
        ("H100_SXM", "gpu", "h100-sxm"),
        ("a100 80gb", "gpu", "a100-80gb"),
        ("Llama3.1 8B", "model", "llama3.1-8b"),
        ("qwen2.5_7b", "model", "qwen2.5-7b"),
    ],
)
def test_lookups_ignore_case_and_word_separators(catalog, typed, kind, expected):
    assert getattr(catalog, kind)(typed).id == expected


@pytest.mark.parametrize(("typed", "kind", "expected"), [
    ("NVIDIA A100-SXM4-80GB", "gpu", "a100-80gb"), ("NVIDIA A100-SXM4-40GB", "gpu", "a100-40gb"),
    ("NVIDIA H100 80GB HBM3", "gpu", "h100-sxm"), ("Huawei Ascend 910B", "gpu", "ascend-910b"),
    ("NVIDIA A800-SXM4-80GB", "gpu", "a800-80gb"), ("NVIDIA H800 80GB HBM3", "gpu", "h800"),
    ("H100-SXM5", "gpu", "h100-sxm"), ("H800 SXM5", "gpu", "h800"),
    # a vendor word that is part of the name stays
    ("Huawei ModelArts", "platform", "huawei-modelarts"),
])
def test_the_names_nvidia_smi_prints_are_known(catalog, typed, kind, expected):
    """nvidia-smi and spec sheets name a part with its vendor first; a name not known so is known
    without it."""
    assert getattr(catalog, kind)(typed).id == expected


@pytest.mark.parametrize(
    ("typed", "kind", "expected"),
    [
        ("H100 80GB SXM", "gpu", "h100-sxm"),
        ("SXM H100", "gpu", "h100-sxm"),
        ("GeForce RTX 4090", "gpu", "rtx4090"),
        ("H200 141GB SXM", "gpu", "h200"),
        ("8B Qwen3", "model", "qwen3-8b"),
        ("TI-ONE Tencent", "platform", "tencent-ti-one"),
    ],
)
def test_the_same_words_in_another_order_or_an_entrys_full_name_are_known(
    catalog, typed, kind, expected
):
    """Spec sheets and papers write a card's words in their own order ("H100 80GB SXM"), or its full
    name less the vendor; one entry with those words is the one meant."""
    assert getattr(catalog, kind)(typed).id == expected


def test_words_no_entry_has_are_still_unknown_with_a_suggestion(catalog):
    with pytest.raises(UnknownIdError, match=r"unknown GPU 'A100 80GB PCIe'; did you mean"):
        catalog.gpu("A100 80GB PCIe")  # no PCIe A100 in the catalog: not taken for the SXM card


def test_a_name_that_folds_onto_two_entries_is_refused(tmp_path):
    overlay = tmp_path / "overlay.yaml"
    overlay.write_text("gpus:\n  - {id: h100_sxm, name: clash, architecture: hopper, memory_gib: "
                       "80, memory_bandwidth_gb_per_s: 3350, peak_tflops: {bf16: 989}, "
                       "intra_node_link: {kind: nvlink, bandwidth_gb_per_s: 900}, gpus_per_node: "
                       "8, "
                       "form_factor: SXM, source: test}\n", encoding="utf-8")
    with pytest.raises(InputError, match="h100_sxm"):
        load_catalog([overlay])


def test_exchange_rate_has_date(catalog):
    rates = catalog.exchange_rates
    assert rates.base == "CNY" and "USD" in rates.rates and DATE.match(rates.as_of) and rates.source
    assert catalog.to_currency(1.0, "USD", "CNY") == pytest.approx(rates.rates["USD"])


def _shape_counts(card) -> tuple[float, float]:
    """(total, active) parameters from a card's shape: attention q/o at num_heads x head_dim
    (Qwen3's explicit head_dim is wider than hidden), k/v at the KV heads, gated or plain FFN,
    routed and shared experts plus the router for MoE layers, embeddings (twice when untied)."""
    h, kv, hd = card.hidden_size, card.num_kv_heads, card.head_dim_resolved
    attn = h * card.num_heads * hd * 2 + h * kv * hd * 2
    mult = 3 if card.ffn_type == "swiglu" else 2
    dense_mlp = mult * h * card.ffn_hidden_size
    if card.moe:
        moe = card.moe
        expert = mult * h * moe.expert_ffn_hidden_size
        moe_layers = card.layers - moe.dense_layers
        dense = moe.dense_layers * (attn + dense_mlp)
        total = dense + moe_layers * (
            attn + (moe.experts + moe.shared_experts) * expert + h * moe.experts
        )
        active = dense + moe_layers * (attn + (moe.top_k + moe.shared_experts) * expert)
    else:
        total = active = card.layers * (attn + dense_mlp)
    emb = card.vocab_size * h * (1 if card.tied_embeddings else 2)
    return total + emb, active + emb


STAND_INS = {"chatglm4-70b", "gpt-4", "ernie-4.0", "llama-3-ultra"}
"""Closed models whose cards borrow another shape; their parameter counts are placeholders."""


def test_model_shapes_match_parameter_counts(catalog):
    """Every card's shape (dense or MoE) must reproduce its published parameter count within 10%."""
    for card in catalog.models.values():
        if card.id in STAND_INS:
            continue
        total, _ = _shape_counts(card)
        assert total == pytest.approx(card.params, rel=0.10), card.id


def test_moe_active_counts_match_where_attention_is_generic(catalog):
    """An MoE card's active parameter count, where given, matches its shape within 10% (MLA cards
    such as DeepSeek-V3 are excluded: their projections are not the generic q/k/v/o shape)."""
    checked = 0
    for card in catalog.models.values():
        if card.moe and card.active_params and not card.attention and card.id not in STAND_INS:
            _, active = _shape_counts(card)
            assert active == pytest.approx(card.active_params, rel=0.10), card.id
            checked += 1
    assert checked >= 1


NEW_2026_MODELS = {
    "qwen3-0.6b",
    "qwen3-1.7b",
    "qwen3-4b",
    "qwen3-8b",
    "qwen3-14b",
    "qwen3-32b",
    "qwen3-30b-a3b",
    "qwen3-235b-a22b",
    "qwen2.5-0.5b",
    "qwen2.5-1.5b",
    "qwen2.5-3b",
    "llama3.2-1b",
    "llama3.2-3b",
    "deepseek-r1-distill-qwen-7b",
    "deepseek-r1-distill-qwen-14b",
    "deepseek-r1-distill-qwen-32b",
    "deepseek-r1-distill-llama-8b",
    "deepseek-r1-distill-llama-70b",
    "glm-4-9b",
    "glm-4-32b-0414",
    "internlm2.5-7b",
    "internlm2.5-20b",
    "internlm3-8b",
}


def test_2026_models_present_sourced_and_outside_paths_not_cited(catalog):
    for mid in NEW_2026_MODELS:
        card = catalog.model(mid)
        assert len(card.source.split()) >= 8, mid  # names where the shape was read, not a bare word
        # cites the public source, not a file beside the repo
        assert "shared/" not in card.source, mid
        assert (not card.assumed) or card.assumption, mid


def test_qwen3_explicit_head_dim_widens_attention(catalog):
    """Qwen3 0.6B/4B/32B/MoE: num_heads x head_dim exceeds hidden_size; the estimator must see
    it."""
    from plan.planner.estimate.flops import shape_of

    for mid in ("qwen3-0.6b", "qwen3-4b", "qwen3-32b", "qwen3-30b-a3b", "qwen3-235b-a22b"):
        card = catalog.model(mid)
        shape = shape_of(card)
        assert shape.q_dim == card.num_heads * card.head_dim > card.hidden_size, mid
        narrow = card.model_copy(update={"head_dim": None})
        assert shape.flops_per_token(4096, "pretrain") > shape_of(narrow).flops_per_token(
            4096, "pretrain"
        ), mid


def test_qwen3_moe_flops_follow_active_not_total(catalog):
    """FLOPs per token of an MoE follow its active parameters (~6 x 3.3B), not its 30B total."""
    from plan.planner.estimate.flops import shape_of

    card = catalog.model("qwen3-30b-a3b")
    flops = shape_of(card).flops_per_token(2048, "pretrain")
    _, active = _shape_counts(card)
    assert 6 * active * 0.9 < flops < 6 * active * 1.6
    assert flops < 6 * card.params / 4
