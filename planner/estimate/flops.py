"""Model shape derived from a card: parameter counts per layer, LoRA adapters, FLOPs per token.

Parameter counts follow the card's shape (attention q/k/v/o with grouped KV heads, gated or plain
FFN, MoE experts, embeddings); the per-layer counts are then scaled so the total matches the card's
published `params` (and `active_params` for MoE), which absorbs shapes the generic formula cannot
express (e.g. DeepSeek's MLA projections).

FLOPs per token (model FLOPs, no recomputation; PaLM appendix B / Narayanan et al. 2021 convention,
attention counted without the causal halving):
    full methods:  3 x (2 N_linear + 4 s d_q L + 2 V h)  =  6N + 12 L s d_q + 6 V h
    LoRA / QLoRA:  2 x (2 N_linear + 2 V h) + 3 x (4 s d_q L) + 6 N_adapter
(LoRA freezes the base: the backward pass computes activation gradients only, ~1x the forward
instead of 2x, so ~4N instead of 6N; attention has no weights and keeps its 2x backward.)
DPO variants (models/methods.py) add one reference forward per token, 2N_linear + 4 s d_q L + 2 V h:
about 8N for full DPO and 6N for LoRA-DPO.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

from plan.models.methods import ADAPTER_METHODS, reference_forward_passes
from plan.models.model_card import ModelCard

QLORA_BITS_PER_PARAM = 4.0 + 0.127
"""NF4 weights plus double-quantized block constants: 0.127 bits/param (Dettmers et al. 2023,
sec. 3)."""


@dataclass(frozen=True)
class ModelShape:
    """Counts derived from a ModelCard (parameters are counts, not bytes)."""

    model_id: str
    layers: int
    hidden: int
    ffn: int
    gated: bool
    heads: int
    kv_heads: int
    head_dim: int
    vocab: int
    tied: bool
    total_params: float
    layer_params: float          # average parameters per transformer layer (all experts)
    layer_linear_active: float   # average active linear parameters per layer (per token)
    layer_linear_total: float    # average linear parameters per layer (all experts)
    embed_params: float          # input embedding
    head_params: float           # output projection (0 when tied)
    moe_experts: int
    moe_active: int              # routed top-k plus shared experts per token
    adapter_attn_dims: int       # sum of (in + out) over q, k, v, o
    adapter_mlp_dims: int        # sum of (in + out) over one FFN's linear layers
    ffn_width_active: float      # FFN units active per token per layer (for elementwise traffic)
    # average routed-expert parameters per layer (MoE; sharded by ep)
    layer_expert_params: float = 0.0
    # layers with routed experts (each runs the all-to-all exchanges)
    moe_layers: int = 0
    moe_top_k: int = 0                # routed experts per token
    # average routed-expert linear parameters a token runs through per layer
    layer_routed_active: float = 0.0
    ffn_width_routed: float = 0.0     # the routed experts' share of ffn_width_active

    def linear_computed(self, capacity_factor: float = 1.0) -> float:
        """Linear parameters per layer each token's work runs through: the active ones, the routed
        experts' padded to `capacity_factor` x an even split (`Layout.capacity_factor`)."""
        return self.layer_linear_active + (capacity_factor - 1.0) * self.layer_routed_active

    def ffn_width(self, capacity_factor: float = 1.0) -> float:
        """FFN units computed and stored per token and layer: the active ones, the routed experts'
        padded to capacity as `linear_computed`."""
        return self.ffn_width_active + (capacity_factor - 1.0) * self.ffn_width_routed

    def layer_params_per_gpu(self, tp: int, ep: int) -> float:
        """One layer's parameters on one GPU: tensor parallelism splits them, expert parallelism the
        routed experts."""
        return (
            self.layer_params - self.layer_expert_params
        ) / tp + self.layer_expert_params / tp / ep

    @property
    def q_dim(self) -> int:
        return self.heads * self.head_dim

    @property
    def kv_dim(self) -> int:
        return self.kv_heads * self.head_dim

    @property
    def is_moe(self) -> bool:
        return self.moe_experts > 0

    def adapter_params(self, rank: int, targets: str = "all", active_only: bool = False) -> float:
        """LoRA adapter parameters, whole model: rank x (in + out) for each targeted linear
        layer."""
        per_layer = self.adapter_attn_dims
        if targets == "all":
            copies = self.moe_active if active_only else max(1, self.moe_experts)
            if not self.is_moe:
                copies = 1
            per_layer += self.adapter_mlp_dims * copies
        return float(rank * per_layer * self.layers)

    def flops_per_token(self, seq_len: int, method: str, lora_rank: int | None = None,
                        lora_targets: str = "all") -> float:
        """Model FLOPs per trained token (see module docstring)."""
        lin = 2.0 * self.layer_linear_active * self.layers
        attn = 4.0 * seq_len * self.q_dim * self.layers
        head = 2.0 * self.vocab * self.hidden
        # DPO: frozen reference forward
        reference = reference_forward_passes(method) * (lin + attn + head)
        if method in ADAPTER_METHODS:
            adapters = self.adapter_params(lora_rank or 0, lora_targets, active_only=True)
            return 2.0 * (lin + head) + 3.0 * attn + 6.0 * adapters + reference
        return 3.0 * (lin + attn + head) + reference

    def forward_flops_per_token(self, seq_len: int) -> tuple[float, float, float]:
        """(linear, attention core, output head) forward FLOPs per token, whole model."""
        return (
            2.0 * self.layer_linear_active * self.layers,
            4.0 * seq_len * self.q_dim * self.layers,
            2.0 * self.vocab * self.hidden,
        )


def model_key(card: ModelCard) -> tuple[object, ...]:
    """Hashable identity of the parts of a card the estimators read."""
    moe = card.moe
    return (
        card.id,
        card.params,
        card.active_params,
        card.layers,
        card.hidden_size,
        card.ffn_hidden_size,
        card.ffn_type,
        card.num_heads,
        card.num_kv_heads,
        card.head_dim_resolved,
        card.vocab_size,
        card.tied_embeddings,
        None
        if moe is None
        else (
            moe.experts,
            moe.top_k,
            moe.expert_ffn_hidden_size,
            moe.shared_experts,
            moe.dense_layers,
        ),
    )


def shape_of(card: ModelCard) -> ModelShape:
    return _shape(model_key(card))


@lru_cache(maxsize=1024)
def _shape(key: tuple[object, ...]) -> ModelShape:
    (mid, params, active, layers, h, ffn, ffn_type, heads, kv, hd, vocab, tied, moe) = key
    assert isinstance(layers, int) and isinstance(h, int) and isinstance(ffn, int)
    assert isinstance(heads, int) and isinstance(kv, int) and isinstance(hd, int)
    assert isinstance(vocab, int) and isinstance(params, float)
    gated = ffn_type == "swiglu"
    mult = 3 if gated else 2
    q_dim, kv_dim = heads * hd, kv * hd
    attn = h * q_dim + 2 * h * kv_dim + q_dim * h
    norms = 2 * h
    dense_mlp = mult * h * ffn
    embed = float(vocab * h)
    head = 0.0 if tied else float(vocab * h)
    experts = top_k = shared = dense_layers = 0
    routed = routed_active = routed_width = 0.0
    if moe is None:
        lin_total = lin_active = float(attn + dense_mlp)
        ffn_active = float(ffn)
        mlp_dims = (2 if gated else 1) * (h + ffn) + (h + ffn)
    else:
        assert isinstance(moe, tuple)
        experts, top_k, e_ffn, shared, dense_layers = moe
        expert = mult * h * e_ffn
        moe_layers = layers - dense_layers
        lin_total = (dense_layers * (attn + dense_mlp)
                     + moe_layers * (attn + (experts + shared) * expert + h * experts)) / layers
        lin_active = (dense_layers * (attn + dense_mlp)
                      + moe_layers * (attn + (top_k + shared) * expert + h * experts)) / layers
        ffn_active = (dense_layers * ffn + moe_layers * (top_k + shared) * e_ffn) / layers
        routed = moe_layers * experts * expert / layers
        routed_active = moe_layers * top_k * expert / layers
        routed_width = moe_layers * top_k * e_ffn / layers
        mlp_dims = (2 if gated else 1) * (h + e_ffn) + (h + e_ffn)
    computed_layers = layers * (lin_total + norms)
    # final norm folded into layers
    target_layers = max(params - embed - head, 0.1 * computed_layers)
    scale = target_layers / computed_layers
    layer_params = (lin_total + norms) * scale
    lin_total_scaled = lin_total * scale
    if isinstance(active, float):
        active_layers = max(active - embed - head, 0.05 * layers * lin_active)
        lin_active_scaled = active_layers / layers
    else:
        lin_active_scaled = lin_active * scale
    return ModelShape(
        model_id=str(mid),
        layers=layers,
        hidden=h,
        ffn=ffn,
        gated=gated,
        heads=heads,
        kv_heads=kv,
        head_dim=hd,
        vocab=vocab,
        tied=bool(tied),
        total_params=params,
        layer_params=layer_params,
        layer_linear_active=lin_active_scaled,
        layer_linear_total=lin_total_scaled,
        embed_params=embed,
        head_params=head,
        moe_experts=int(experts),
        moe_active=int(top_k) + int(shared),
        adapter_attn_dims=(h + q_dim) + 2 * (h + kv_dim) + (q_dim + h),
        adapter_mlp_dims=mlp_dims,
        ffn_width_active=ffn_active,
        layer_expert_params=routed * scale,
        moe_layers=int(layers - dense_layers) if moe is not None else 0,
        moe_top_k=int(top_k),
        layer_routed_active=routed_active * lin_active_scaled / lin_active,
        ffn_width_routed=routed_width,
    )
