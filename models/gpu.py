"""Accelerator cards: memory, bandwidth, peak compute and in-node links, with their source."""

from __future__ import annotations

from typing import Literal

from pydantic import Field, model_validator

from plan.models.base import DateText, Strict
from plan.models.bounded import Id

# davinci: Huawei Ascend; dcu: Hygon DCU (a GPGPU run through Hygon's DTK); mlu: Cambricon MLU.
Architecture = Literal["ampere", "ada", "hopper", "blackwell", "rubin", "davinci", "dcu", "mlu"]
Vendor = Literal["nvidia", "huawei", "hygon", "cambricon", "amd", "other"]


class PeakTflops(Strict):
    """Dense (no sparsity) tensor-core peak, TFLOP/s per GPU. A missing precision is unsupported."""

    bf16: float | None = Field(default=None, gt=0)
    fp16: float | None = Field(default=None, gt=0)
    fp8: float | None = Field(default=None, gt=0)

    def for_precision(self, precision: str) -> float | None:
        value = getattr(self, precision, None)
        return value if isinstance(value, float | int) else None


class IntraNodeLink(Strict):
    """GPU-to-GPU link inside a node. `bandwidth_gb_per_s` is per GPU, bidirectional (datasheet
    style)."""

    # mlu_link: Cambricon's MLU-Link bridge, a full mesh of `max_group` cards (as an NVLink domain)
    kind: Literal["nvlink", "nvlink_bridge", "pcie", "hccs", "mlu_link"]
    bandwidth_gb_per_s: float = Field(gt=0)
    max_group: int | None = Field(default=None, gt=0, description="GPUs joined by the link "
                                                                  "(bridge: 2)")


class GPU(Strict):
    id: Id
    aliases: list[str] = Field(default_factory=list)
    name: str
    vendor: Vendor = "nvidia"
    architecture: Architecture
    memory_gib: float = Field(gt=0, description="capacity usable by the framework before its own "
                                                "overhead")
    memory_bandwidth_gb_per_s: float | None = Field(default=None, gt=0)
    peak_tflops: PeakTflops
    intra_node_link: IntraNodeLink
    gpus_per_node: int = Field(gt=0, le=1024,
                               description="typical server (at most "
                                           "plan.models.limits.MAX_GPUS_PER_NODE)")
    form_factor: str
    preliminary: bool = False
    source: str = Field(min_length=1)
    as_of: DateText | None = None
    assumed: bool = False
    assumption: str | None = None
    gpus_per_node_assumption: str | None = Field(
        default=None, description="why `gpus_per_node` is assumed; said only where a plan or "
                                  "estimate takes this typical server size (not an owned pool's, "
                                  "an offer's or a quote's own)")

    @model_validator(mode="after")
    def _has_peak(self) -> GPU:
        if self.peak_tflops.bf16 is None and self.peak_tflops.fp16 is None:
            raise ValueError(f"GPU {self.id}: needs a bf16 or fp16 peak")
        if self.assumed and not self.assumption:
            raise ValueError(f"GPU {self.id}: an assumed entry must say what was assumed")
        return self

    @property
    def supports_bf16(self) -> bool:
        return self.peak_tflops.bf16 is not None

    @property
    def supports_fp8(self) -> bool:
        return self.peak_tflops.fp8 is not None
