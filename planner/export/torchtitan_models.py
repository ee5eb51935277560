"""torchtitan v0.2.2's train specs and flavors for the catalog's models, with the shape each flavor
has.

torchtitan builds the model from `[model] name` (a train spec: `torchtitan/models/<name>`) and
`flavor` (a key of that module's `*_args` table); with no flavor it trains `debugmodel`. Read from
the torchtitan 0.2.2 wheel on PyPI (2026-02-20),
`torchtitan/models/{llama3,qwen3,deepseek_v3}/__init__.py` and `torchtitan/models/__init__.py`
`_supported_models`, on 2026-12-06 (docs/sources/export-consumers.md).
"""

from __future__ import annotations

from typing import NamedTuple


class Flavor(NamedTuple):
    name: str  # the train spec ([model] name)
    flavor: str  # [model] flavor
    layers: int  # n_layers
    hidden_size: int  # dim
    num_heads: int  # n_heads
    num_kv_heads: int  # n_kv_heads (n_heads where the flavor gives none)


_LLAMA3_8B = Flavor("llama3", "8B", 32, 4096, 32, 8)
_LLAMA3_70B = Flavor("llama3", "70B", 80, 8192, 64, 8)
FLAVORS: dict[str, Flavor] = {
    "llama3-8b": _LLAMA3_8B,
    "llama3.1-8b": _LLAMA3_8B,
    "deepseek-r1-distill-llama-8b": _LLAMA3_8B,
    "llama3-70b": _LLAMA3_70B,
    "llama3.1-70b": _LLAMA3_70B,
    "deepseek-r1-distill-llama-70b": _LLAMA3_70B,
    "llama3.1-405b": Flavor("llama3", "405B", 126, 16384, 128, 8),
    "qwen3-0.6b": Flavor("qwen3", "0.6B", 28, 1024, 16, 8),
    "qwen3-1.7b": Flavor("qwen3", "1.7B", 28, 2048, 16, 8),
    "qwen3-4b": Flavor("qwen3", "4B", 36, 2560, 32, 8),
    "qwen3-8b": Flavor("qwen3", "8B", 36, 4096, 32, 8),
    "qwen3-14b": Flavor("qwen3", "14B", 40, 5120, 40, 8),
    "qwen3-32b": Flavor("qwen3", "32B", 64, 5120, 64, 8),
    "qwen3-30b-a3b": Flavor("qwen3", "30B-A3B", 48, 2048, 32, 4),
    "qwen3-235b-a22b": Flavor("qwen3", "235B-A22B", 94, 4096, 64, 4),
    "deepseek-v3": Flavor("deepseek_v3", "671B", 61, 7168, 128, 128),
}
"""Catalog model id -> torchtitan train spec and flavor of the same architecture and shape."""


def flavor_of(model_id: str) -> Flavor | None:
    return FLAVORS.get(model_id)
