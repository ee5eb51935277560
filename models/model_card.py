"""Model cards: the architecture facts the estimators need, with their source."""

from __future__ import annotations

from typing import Literal

from pydantic import Field, field_validator, model_validator

from plan.models.base import Strict
from plan.models.bounded import Id
from plan.models.card_check import params_problem, shape_params
from plan.models.said import say_as
from plan.models.units import parse_count


class MoE(Strict):
    """Mixture-of-experts shape. Dense layers (the first `dense_layers`) use the card's FFN size."""

    experts: int = Field(gt=0, le=100_000, description="routed experts per MoE layer")
    top_k: int = Field(gt=0, le=100_000, description="routed experts active per token")
    expert_ffn_hidden_size: int = Field(gt=0, le=10_000_000)
    shared_experts: int = Field(default=0, ge=0, le=100_000)
    dense_layers: int = Field(default=0, ge=0, le=10_000)

    @model_validator(mode="after")
    def _top_k_within_experts(self) -> MoE:
        if self.top_k > self.experts:
            raise ValueError(say_as("rule.moe_top_k", "top_k ({top_k}) cannot exceed experts "
                                    "({experts})", top_k=self.top_k, experts=self.experts))
        return self


class ModelCard(Strict):
    """A transformer's published shape. `params` is the total parameter count (all experts)."""

    id: Id
    aliases: list[str] = Field(default_factory=list)
    name: str | None = None
    params: float = Field(gt=0, le=1e14, description="total parameters, count; accepts 8B style "
                                                     "strings")
    active_params: float | None = Field(default=None, gt=0, le=1e14, description="per token, for "
                                                                                 "MoE")
    layers: int = Field(gt=0, le=10_000)
    hidden_size: int = Field(gt=0, le=1_000_000)
    ffn_hidden_size: int = Field(gt=0, le=10_000_000)
    ffn_type: Literal["swiglu", "gelu"] = "swiglu"
    num_heads: int = Field(gt=0, le=100_000)
    num_kv_heads: int = Field(gt=0, le=100_000)
    head_dim: int | None = Field(default=None, gt=0, le=100_000, description="defaults to "
                                                                             "hidden_size / "
                                                                             "num_heads")
    vocab_size: int = Field(gt=0, le=100_000_000)
    max_positions: int = Field(gt=0, le=2**24)
    tied_embeddings: bool = False
    moe: MoE | None = None
    attention: str | None = Field(default=None, description="free-text note, e.g. MLA")
    source: str = Field(min_length=1)
    assumed: bool = False
    assumption: str | None = Field(default=None, description="what was assumed and why; required "
                                                             "if assumed")
    params_note: str | None = Field(default=None, description="why params differs from the shape's "
                                                              "count by more than 10% (a shape the "
                                                              "count cannot express)")

    @field_validator("params", "active_params", mode="before")
    @classmethod
    def _count(cls, value: object) -> object:
        return None if value is None else parse_count(value)

    @model_validator(mode="after")
    def _consistent(self) -> ModelCard:
        if self.num_heads % self.num_kv_heads:
            raise ValueError(say_as("rule.card_heads", "num_heads ({heads}) must be a multiple of "
                                    "num_kv_heads ({kv_heads})", heads=self.num_heads,
                                    kv_heads=self.num_kv_heads))
        if self.assumed and not self.assumption:
            raise ValueError(say_as("rule.card_assumed",
                                    "an assumed card must say what was assumed in `assumption`"))
        if self.moe and self.moe.dense_layers > self.layers:
            raise ValueError(f"moe.dense_layers ({self.moe.dense_layers}) exceeds layers "
                             f"({self.layers})")
        if not self.params_note:
            implied = shape_params(
                self.layers,
                self.hidden_size,
                self.ffn_hidden_size,
                self.ffn_type == "swiglu",
                self.num_heads,
                self.num_kv_heads,
                self.head_dim_resolved,
                self.vocab_size,
                self.tied_embeddings,
                self.moe,
            )
            problem = params_problem(self.params, implied)
            if problem:
                raise ValueError(problem)
        return self

    @property
    def head_dim_resolved(self) -> int:
        return self.head_dim or self.hidden_size // self.num_heads
