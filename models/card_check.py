"""A model card's declared parameter count against the count its shape implies.

A card claiming 70B parameters with a 1M-parameter shape would make every estimate wrong; the two
must agree within PARAMS_TOLERANCE, or the card says why in `params_note` (shapes the generic
count cannot express, such as DeepSeek's MLA projections).
"""

from __future__ import annotations

from typing import Protocol

from plan.models.said import say_as

# assumed: 10%, the rule; the shipped cards of standard shapes agree within ~3%.
PARAMS_TOLERANCE = 0.10


class _MoE(Protocol):
    @property
    def experts(self) -> int: ...
    @property
    def top_k(self) -> int: ...
    @property
    def expert_ffn_hidden_size(self) -> int: ...
    @property
    def shared_experts(self) -> int: ...
    @property
    def dense_layers(self) -> int: ...


def shape_params(
    layers: int,
    hidden: int,
    ffn: int,
    gated: bool,
    heads: int,
    kv_heads: int,
    head_dim: int,
    vocab: int,
    tied: bool,
    moe: _MoE | None,
) -> float:
    """Total parameters from the shape: attention (grouped KV), FFN or experts with router, norms,
    embeddings and the output head (the same counting as plan.planner.estimate.flops)."""
    mult = 3 if gated else 2
    q_dim, kv_dim = heads * head_dim, kv_heads * head_dim
    attn = 2 * hidden * q_dim + 2 * hidden * kv_dim
    dense_mlp = mult * hidden * ffn
    if moe is None:
        body = layers * (attn + dense_mlp)
    else:
        expert = mult * hidden * moe.expert_ffn_hidden_size
        moe_layers = layers - moe.dense_layers
        body = moe.dense_layers * (attn + dense_mlp) + moe_layers * (
            attn + (moe.experts + moe.shared_experts) * expert + hidden * moe.experts
        )
    norms = 2 * hidden * layers + hidden
    return float(body + norms + vocab * hidden * (1 if tied else 2))


def params_problem(declared: float, implied: float) -> str | None:
    """None when they agree within the tolerance, else the one-line problem."""
    if implied <= 0 or abs(declared - implied) <= PARAMS_TOLERANCE * implied:
        return None
    return say_as("rule.card_params", "params ({declared:,.4g}) does not match the shape "
                  "({implied:,.4g} parameters from layers, hidden_size, ffn_hidden_size, heads, "
                  "vocab_size) within {tolerance:.0%}; fix the card, or say why in params_note",
                  declared=declared, implied=implied, tolerance=PARAMS_TOLERANCE)
