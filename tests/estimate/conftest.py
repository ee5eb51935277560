"""Fixtures built through the public constructors (no catalog files needed)."""

from __future__ import annotations

import pytest

from plan.models.gpu import GPU, IntraNodeLink, PeakTflops
from plan.models.model_card import ModelCard


def make_gpu(gpu_id: str = "a100-80gb", *, arch: str = "ampere", memory_gib: float = 80.0,
             bf16: float = 312.0, fp8: float | None = None, link: str = "nvlink",
             link_gb_per_s: float = 600.0,
             per_node: int = 8, form: str = "SXM", mem_bw: float = 2039.0) -> GPU:
    return GPU(
        id=gpu_id,
        name=gpu_id,
        architecture=arch,
        memory_gib=memory_gib,
        memory_bandwidth_gb_per_s=mem_bw,
        peak_tflops=PeakTflops(bf16=bf16, fp16=bf16, fp8=fp8),
        intra_node_link=IntraNodeLink(
            kind=link, bandwidth_gb_per_s=link_gb_per_s, max_group=8 if link == "nvlink" else None
        ),
        gpus_per_node=per_node,
        form_factor=form,
        source="test fixture",
    )


@pytest.fixture
def a100() -> GPU:
    return make_gpu()


@pytest.fixture
def h100() -> GPU:
    return make_gpu(
        "h100-sxm", arch="hopper", bf16=989.0, fp8=1979.0, link_gb_per_s=900.0, mem_bw=3350.0
    )


@pytest.fixture
def rtx4090() -> GPU:
    return make_gpu("rtx4090", arch="ada", memory_gib=24.0, bf16=165.2, fp8=330.3, link="pcie",
                    link_gb_per_s=64.0, form="PCIe", mem_bw=1008.0)


@pytest.fixture
def llama8b() -> ModelCard:
    """Llama 3.1 8B shape (meta-llama/Llama-3.1-8B config.json)."""
    return ModelCard(
        id="llama3.1-8b",
        params=8.03e9,
        layers=32,
        hidden_size=4096,
        ffn_hidden_size=14336,
        num_heads=32,
        num_kv_heads=8,
        vocab_size=128256,
        max_positions=131072,
        source="test: Llama 3.1 config",
    )


@pytest.fixture
def llama70b() -> ModelCard:
    return ModelCard(
        id="llama3.1-70b",
        params=70.6e9,
        layers=80,
        hidden_size=8192,
        ffn_hidden_size=28672,
        num_heads=64,
        num_kv_heads=8,
        vocab_size=128256,
        max_positions=131072,
        source="test: Llama 3.1 config",
    )


@pytest.fixture
def gpt7b() -> ModelCard:
    """The ZeRO paper's 7.5B GPT-style model (Rajbhandari et al. 2020)."""
    return ModelCard(
        id="gpt-7.5b",
        params=7.5e9,
        layers=36,
        hidden_size=4096,
        ffn_hidden_size=16384,
        ffn_type="gelu",
        num_heads=32,
        num_kv_heads=32,
        vocab_size=51200,
        max_positions=2048,
        tied_embeddings=True,
        source="test: ZeRO paper",
    )
