"""Changes to how a job trains that lower its memory, which an expert tries before renting more GPUs: a
leaner optimizer, a fused loss, fused layers. One list serves both places that offer them: `plan
estimate`'s hints when nothing fits (a layout spec, changed by `spec`) and an infeasible scenario's
relaxations (a job, changed by `field` = `to`)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from plan.models.methods import ADAPTER_METHODS
from plan.models.scenario import Job


@dataclass(frozen=True)
class MemorySaver:
    field: str  # the scenario job's field; with dashes, `plan estimate`'s flag
    to: str  # its value, as a scenario and the flag write it
    spec: tuple[tuple[str, object], ...]  # the same change to a LayoutSpec (estimator ids)
    # (method, framework or None when searched, precision, fixed ZeRO stage or None): whether it applies
    applies: Callable[[str, str | None, str, int | None], bool]
    why: str  # what it is and what it saves

    @property
    def setting(self) -> str:
        """As `plan estimate` takes it: "--loss fused"."""
        return f"--{self.field.replace('_', '-')} {self.to}"


def _pytorch(framework: str | None) -> bool:
    return framework != "megatron"


LEANER_OPTIMIZERS: tuple[MemorySaver, ...] = (
    # full-parameter jobs on Megatron: NeMo's performance recipes run it (its distributed optimizer: ZeRO-1)
    MemorySaver("optimizer", "adamw-precision-aware", (("optimizer", "adam_precision_aware"),),
                lambda method, framework, precision, zero: method not in ADAPTER_METHODS
                and framework in (None, "megatron") and zero in (None, 1),
                "Megatron's precision-aware optimizer: bf16 gradients, fp32 master weights kept as 16-bit "
                "remainders, 14 bytes per parameter, not 18, as NeMo's performance recipes do"),
    # LoRA and QLoRA: the QLoRA recipe's optimizer (Dettmers et al. 2023), on the PyTorch stacks
    MemorySaver("optimizer", "paged-adamw-8bit", (("optimizer", "paged_adam_8bit"),),
                lambda method, framework, precision, zero: method in ADAPTER_METHODS and _pytorch(framework),
                "paged 8-bit AdamW, bitsandbytes, the QLoRA recipe's optimizer: 2 bytes of state per adapter "
                "parameter, not 12, paged to host memory when the GPU is full"),
    # full-parameter jobs on the PyTorch stacks: torchtune's default training, then its low-memory recipe
    MemorySaver("optimizer", "adamw-bf16", (("optimizer", "adam_bf16"),),
                lambda method, framework, precision, zero: method not in ADAPTER_METHODS and _pytorch(framework)
                and precision == "bf16",
                "pure BF16 AdamW, torchtune's default: bf16 weights, gradients and moments, 8 bytes per "
                "parameter, not 16; no fp32 master copy, so updates below BF16's resolution are lost"),
    MemorySaver("optimizer", "paged-adamw-8bit", (("optimizer", "paged_adam_8bit"),),
                lambda method, framework, precision, zero: method not in ADAPTER_METHODS and _pytorch(framework),
                "paged 8-bit AdamW stepped inside the backward pass on bf16 weights, torchtune's low-memory "
                "full fine-tune recipe: 2 bytes of optimizer state per parameter, not 12, one layer of "
                "gradients at a time; no fp32 master copy, so the updates are rounded to bf16"),
)
"""Leaner optimizers than mixed-precision AdamW, from the smallest saving up: `plan estimate` names the first
that fits, an infeasible scenario offers each that does."""

STACK_SETTINGS: tuple[MemorySaver, ...] = (
    # at 128k-152k-token vocabularies a micro-batch's fp32 logits are gigabytes
    MemorySaver("loss", "fused", (("loss", "fused"),),
                lambda method, framework, precision, zero: _pytorch(framework),
                "a fused linear cross-entropy that never holds the whole logits: Liger's, or Unsloth's Cut "
                "Cross-Entropy; a chunked loss as torchtune's drops only their fp32 copy"),
    MemorySaver("kernels", "fused", (("fused_modules", True),),
                lambda method, framework, precision, zero: _pytorch(framework),
                "fused or compiled layers: torch.compile, Liger or Unsloth keep 0.7 times the eager activations"),
)
"""How a PyTorch stack runs the job: each alone, and where neither alone fits both together, as Liger and
Unsloth run them."""


def applies_to_job(saver: MemorySaver, job: Job) -> bool:
    """Whether the saver applies to a scenario's job and changes it (an optimizer replaces mixed-precision AdamW
    only)."""
    if getattr(job, saver.field) == saver.to or (saver.field == "optimizer" and job.optimizer != "adamw"):
        return False
    return saver.applies(job.method, job.framework, job.precision, job.layout.zero if job.layout else None)
