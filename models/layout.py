"""One job's parallel layout, typed and frozen: what the estimator finds, a candidate and its plan
carry, and the exports read. `Layout.to_dict()` is the layout as `plan solve` writes it
(`jobs[].detail.layout` in its JSON)."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from plan.models.stacks import stack_of


class Framework(StrEnum):
    """The training stack: how data parallelism and recomputation are implemented
    (`Layout.framework`). `plan.planner.estimate.types.FRAMEWORKS`, a job's `framework`, `plan
    estimate --framework`."""

    MEGATRON = "megatron"
    DEEPSPEED = "deepspeed"
    FSDP = "fsdp"


class Optimizer(StrEnum):
    """The estimator's optimizer ids (`Layout.optimizer`, `plan.planner.estimate.types.OPTIMIZERS`).
    Users write the names of `OPTIMIZER_NAME_OF` (a job's `optimizer`, `plan estimate --optimizer`)
    or one of `OPTIMIZER_ALIASES`; `Optimizer.id_of` reads either."""

    ADAM = "adam"
    ADAM_8BIT = "adam_8bit"
    PAGED_ADAM_8BIT = "paged_adam_8bit"
    ADAFACTOR = "adafactor"
    SGD = "sgd"
    ADAM_PRECISION_AWARE = "adam_precision_aware"
    ADAM_BF16 = "adam_bf16"

    @classmethod
    def id_of(cls, word: str) -> str:
        """The optimizer id a written name or alias stands for; any other word unchanged."""
        return OPTIMIZER_ALIASES.get(word, word)


OPTIMIZER_NAME_OF: dict[str, str] = {
    Optimizer.ADAM.value: "adamw",
    Optimizer.ADAM_8BIT.value: "adamw-8bit",
    Optimizer.PAGED_ADAM_8BIT.value: "paged-adamw-8bit",
    Optimizer.ADAFACTOR.value: "adafactor",
    Optimizer.SGD.value: "sgd",
    Optimizer.ADAM_PRECISION_AWARE.value: "adamw-precision-aware",
    Optimizer.ADAM_BF16.value: "adamw-bf16",
}
"""The name a user writes for each optimizer id, in `Optimizer`'s order."""
OPTIMIZER_ALIASES: dict[str, str] = {
    "adamw": "adam", "adamw-8bit": "adam_8bit", "adamw_8bit": "adam_8bit",
    "paged-adamw-8bit": "paged_adam_8bit", "paged_adamw_8bit": "paged_adam_8bit",
    "adam-8bit": "adam_8bit", "paged-adam-8bit": "paged_adam_8bit",
    "adamw-precision-aware": "adam_precision_aware",
    "adamw_precision_aware": "adam_precision_aware",
    "adam-precision-aware": "adam_precision_aware", "adamw-bf16": "adam_bf16",
    "adamw_bf16": "adam_bf16", "adam-bf16": "adam_bf16"}
"""Every other spelling users may write for an optimizer id: the written names of
`OPTIMIZER_NAME_OF` that differ from their id, and their underscore and `adam` variants."""


class Recompute(StrEnum):
    """Activation policies (`Layout.recompute`): keep all, recompute part (see `Layout.framework`),
    recompute each layer from its input, the same with those inputs in host memory, or keep all but
    in host memory (`plan.planner.estimate.types.RECOMPUTE`)."""

    NONE = "none"
    SELECTIVE = "selective"
    FULL = "full"
    FULL_OFFLOAD = "full_offload"
    OFFLOAD = "offload"


class Precision(StrEnum):
    """The matmul precision of a job (`Layout.precision`)."""

    BF16 = "bf16"
    FP16 = "fp16"
    FP8 = "fp8"


class Loss(StrEnum):
    """How the cross-entropy holds the logits (`Layout.loss`): plain, chunked or fused."""

    PLAIN = "plain"
    CHUNKED = "chunked"
    FUSED = "fused"


class Kernels(StrEnum):
    """How a PyTorch stack runs the layers (`Layout.kernels`): eager modules, or fused/compiled
    ones."""

    EAGER = "eager"
    FUSED = "fused"


class LoraTargets(StrEnum):
    """The linear layers LoRA adapts (`Layout.lora_targets`): all of each block's, or the
    attention's q, k, v, o only."""

    ALL = "all"
    ATTENTION = "attention"


class Objective(StrEnum):
    """What a solve minimises (a scenario's `objective`, `plan solve --objective`)."""

    COST = "cost"
    TIME = "time"
    BALANCED = "balanced"
    LEXICOGRAPHIC = "lexicographic"


def words(vocabulary: type[StrEnum]) -> tuple[str, ...]:
    """A vocabulary's words as plain strings, in its order (what tuples, messages and help list)."""
    return tuple(member.value for member in vocabulary)


HOST_ACTIVATIONS = ("full_offload", "offload")
"""Policies that keep saved activations in host memory: the checkpoints, or everything."""


def recompute_label(recompute: str, layers: int | None) -> str:
    """A recomputation policy in words, with the layers per model chunk under Megatron's block
    method."""
    return recompute if layers is None else f"{recompute}({layers}/chunk)"


def fused_pytorch_kernels(kernels: str, framework: str) -> bool:
    """Whether a layout runs a PyTorch stack (FSDP, DeepSpeed) on fused or compiled kernels: what
    a plan's explanation says and its exports switch on. Megatron's layers are always fused:
    nothing to say there."""
    return kernels == "fused" and not stack_of(framework).fused_layers


@dataclass(frozen=True, slots=True)
class Layout:
    """One concrete parallel layout. `global_batch` and `micro_batch` count sequences.

    The estimator finds it (`plan.planner.estimate.search_layout`), `Candidate.layout` and
    `JobPlan.layout` carry it, the exports read it (`ExportLayout.from_plan`). Fields with defaults:
    - `optimizer`: "adam" = mixed-precision Adam, 16 bytes/parameter of weights, gradients and
      fp32 master+moments (Rajbhandari et al. 2020); "adam_8bit" = bitsandbytes 8-bit Adam with
      bf16 weights, no fp32 master, optimizer step fused into the backward (torchtune low-memory
      recipe); "paged_adam_8bit" = the same with states in CUDA unified memory, evicted to host
      when the GPU is full; "adam_precision_aware" = Megatron's distributed optimizer with BF16
      gradient buffers and the FP32 master weights kept as the BF16 weights plus 16-bit remainders
      (exact), 14 bytes/parameter before sharding: Megatron-Core `--use-precision-aware-optimizer
      --main-grads-dtype bf16` (store_param_remainders, on by default), and NeMo's Apex distributed
      Adam under O2 BF16 (remainders its default, gradients BF16 in NeMo's performance recipes).
      Megatron only.
    - `virtual_pipeline`: interleaved 1F1B stages per GPU (Narayanan et al. 2021).
    - `loss`: how the cross-entropy holds the logits (`plan.planner.estimate.types.LOSSES`).
      "plain": the whole logits of a micro-batch with the stack's fp32 buffers
      (planner/estimate/memory.py `_logit_bytes`). "chunked": a fused or compiled chunked
      cross-entropy over materialised bf16 logits that never holds them in fp32 (torchtune's
      chunked loss under torch.compile, flash-attn's cross-entropy; planner/estimate/factors.py
      LOSS_CHUNK_GRAD_BYTES). "fused": a fused linear cross-entropy that computes the logits a chunk
      of tokens at a time from the hidden states and the output weight and never holds them whole
      (Liger's LigerFusedLinearCrossEntropyLoss, Apple's Cut Cross-Entropy as Unsloth runs it;
      memory.py `_loss_bytes`). Non-plain losses are the PyTorch stacks' only: Megatron's
      vocab-parallel cross-entropy holds the whole logits, and the search builds its layouts with
      "plain". Users state it as `loss:` (`--loss`).
    - `fused_modules`: the PyTorch stacks' model code runs as fused or compiled kernels
      (torch.compile, Liger) rather than eager modules (Hugging Face transformers, torchtune, peft:
      what LLaMA-Factory, TRL and accelerate users run); eager modules save more activations
      (memory.py). Megatron's Transformer Engine modules are always fused.
    - `lora_targets`: "all" linear layers of each block, or "attention" (q, k, v, o) only.
    - `flash_attention`: fused attention that stores no s x s scores (FlashAttention, cuDNN); False
      for stacks without it (Megatron-LM before 2022).
    - `recompute_layers`: with recompute "full" under Megatron, only this many layers of each model
      chunk (the pipeline stage, or each virtual stage when interleaved) are recomputed and the rest
      keep their activations: Megatron-LM's `--recompute-method block --recompute-num-layers N`, the
      policy that fits a layout just over the memory limit for a fraction of full recomputation's
      time. None: every layer.
    - `framework`: "megatron" (Megatron-LM/NeMo: ZeRO 0 or 1 = distributed optimizer, gradients
      reduced once per step; ZeRO 2 or 3 = Megatron-FSDP, whose sharded gradients are
      reduce-scattered every micro-batch (megatron-core 0.16 megatron_fsdp.py:
      `grad_reduce_every_bprop`); "selective" recomputes the attention core, Korthikanti et al.
      2022); "deepspeed" (ZeRO 0-3; ZeRO-2/3 reduce-scatter gradients every micro-batch); "fsdp"
      (PyTorch FSDP/FSDP2 as in torchtitan, llm-foundry, accelerate: ZeRO-3 = FULL_SHARD, ZeRO-2 =
      SHARD_GRAD_OP; parameters re-gathered every micro-batch; "selective" is torchtitan's op-level
      checkpointing, every other matmul output saved).
    - `cp`: context-parallel ranks (ring attention): the sequence is split over them.
    - `ep`: expert-parallel ranks (MoE): the routed experts are split over that many data-parallel
      ranks, and tokens travel to their experts and back by all-to-all.
    - `micro_batch` may not divide the per-replica batch on FSDP: the last micro-batch is then
      smaller (as Composer allows); `micro_batches` counts it. Megatron and DeepSpeed need it to
      divide (`plan.planner.estimate.types.EXACT_BATCH_FRAMEWORKS`).
    - `state_offload`: ZeRO-3 with the sharded parameters, gradients and optimizer states in host
      memory (FSDP `CPUOffload(offload_params=True)`, DeepSpeed `offload_param` and
      `offload_optimizer` on cpu, torchtitan `enable_cpu_offload`): each layer's shard crosses PCIe
      before it is gathered, its gradient shard back after it is reduced, and the optimizer steps on
      the CPU. FSDP or DeepSpeed, zero 3, no tensor or pipeline parallelism.
    - `shard_group`: hybrid sharding (HSDP, `plan.planner.estimate.types.hybrid_shard_group`):
      ZeRO-2/3 shards the states over this many data-parallel ranks, those of one node, and the
      `replicas` groups hold a copy each; the layers' gathers and gradient reduce-scatters stay
      inside the node, and each gradient shard is all-reduced across the replicas when it is
      reduced. None: one shard group of all `shard_ranks` (FULL_SHARD).
    - `capacity_factor` (MoE): token slots per routed expert relative to an even split, each
      expert's input padded to them (GShard and Switch Transformer's capacity; Megatron-Core's
      `moe_expert_capacity_factor` with its input padded to capacity): the routed experts compute,
      store and dispatch that many slots, the tokens beyond a full expert's capacity dropped. 1.0:
      dropless routing at an even expert load (Megatron-Core's default, DeepSeek-V3's), which the
      estimate assumes unless told otherwise.
    """

    tp: int
    pp: int
    dp: int
    zero: int
    recompute: str
    micro_batch: int
    global_batch: int
    seq_len: int
    precision: str
    sequence_parallel: bool
    lora_rank: int | None
    optimizer: str = "adam"
    virtual_pipeline: int = 1
    loss: str = "plain"
    lora_targets: str = "all"
    flash_attention: bool = True
    framework: str = "deepspeed"
    fused_modules: bool = False
    cp: int = 1
    ep: int = 1
    recompute_layers: int | None = None
    state_offload: bool = False
    shard_group: int | None = None
    capacity_factor: float = 1.0

    @property
    def gpus(self) -> int:
        return self.tp * self.pp * self.cp * self.dp

    @property
    def replica_batch(self) -> float:
        """Sequences each data-parallel replica processes per step."""
        return self.global_batch / self.dp

    @property
    def micro_batches(self) -> int:
        """Micro-batches per pipeline per step (gradient-accumulation steps), a last smaller one
        counted."""
        n = -(-self.global_batch // (self.dp * self.micro_batch))
        return n if n > 1 else 1  # (max(1, n), without the call: the search reads it ~1M times)

    @property
    def micro_batch_equivalents(self) -> float:
        """Full-size micro-batches' worth of work per step (the last smaller one counts pro
        rata)."""
        e = self.global_batch / (self.dp * self.micro_batch)
        return e if e > 1.0 else 1.0  # (max(1.0, e))

    @property
    def last_micro_batch_share(self) -> float:
        """The last micro-batch's size as a share of a full one: 1 where the micro-batch divides the
        replica's batch, less where a last smaller one takes the remainder (Composer, Hugging Face
        accelerate)."""
        return self.micro_batch_equivalents - (self.micro_batches - 1)

    @property
    def eager_modules(self) -> bool:
        """Whether the layers run as eager PyTorch modules: the PyTorch stacks (FSDP, DeepSpeed)
        unless fused or compiled. They keep more activations (planner/estimate/memory.py) and launch
        more kernels (planner/estimate/timing.py).

        What an eager Hugging Face Llama layer keeps for its backward pass (transformers 5.17, SDPA
        attention, bf16, no recomputation), measured on one H200 with torch 2.11 by
        bench/device/measure_steps.py (`saved` records, 2026-11-30), against 14 h + 6 d_q + 4 d_kv +
        8 ffn bytes per token and layer (the fused 8 h + 4 d_q + 4 d_kv + 6 ffn plus the eager
        terms): Llama 3.2 1B 109.7 kB (formula 108.5), Llama 3.2 3B 131.8 kB (131.1), Llama 3.1 8B
        201.6 kB (200.7), Qwen2.5 1.5B's shape 103.8 kB (103.4)."""
        return not stack_of(self.framework).fused_layers and not self.fused_modules

    @property
    def host_activations(self) -> bool:
        """Whether saved activations live in host memory (HOST_ACTIVATIONS): the checkpoints, or
        all."""
        return self.recompute in HOST_ACTIVATIONS

    @property
    def kernels(self) -> str:
        """"eager" or "fused" (`eager_modules`), as plans, estimates and exports name it."""
        return "eager" if self.eager_modules else "fused"

    @property
    def shard_ranks(self) -> int:
        """Data- and context-parallel ranks together: the group that reduces gradients."""
        return self.dp * self.cp

    @property
    def state_shards(self) -> int:
        """Ranks over which ZeRO/FSDP shard the states: the shard group under hybrid sharding, else
        all `shard_ranks`."""
        return self.shard_group or self.shard_ranks

    @property
    def replicas(self) -> int:
        """Copies of the sharded states: `shard_ranks` / `state_shards` (1 unless
        hybrid-sharded)."""
        return self.shard_ranks // self.state_shards

    def short(self) -> str:
        """The layout in one line, as notes and `plan estimate` print it ("tp=2 pp=1 dp=4 ...")."""
        parts = [f"tp={self.tp}", f"pp={self.pp}"]
        if self.cp > 1:
            parts.append(f"cp={self.cp}")
        parts.append(f"dp={self.dp}")
        if self.ep > 1:
            parts.append(f"ep={self.ep}")
        parts += [f"zero={self.zero}" + ("+cpu-offload" if self.state_offload else "")
                  + (f"/hsdp{self.shard_group}" if self.shard_group else ""),
                  f"recompute={recompute_label(self.recompute, self.recompute_layers)}",
                  f"mb={self.micro_batch}",
                  f"gb={self.global_batch}"]
        if self.virtual_pipeline > 1:
            parts.append(f"vpp={self.virtual_pipeline}")
        if self.lora_rank is not None:
            parts.append(f"r={self.lora_rank}")
        if self.capacity_factor != 1.0:
            parts.append(f"cf={self.capacity_factor:g}")
        parts.append(self.framework)
        return " ".join(parts)

    def to_dict(self) -> dict[str, object]:
        """The layout as a plan writes it (`jobs[].detail.layout` in `plan solve`'s JSON): the
        numbers every layout has, then the settings that differ from their defaults."""
        return {"tp": self.tp, "pp": self.pp, "dp": self.dp, "zero": self.zero,
                "recompute": self.recompute, "micro_batch": self.micro_batch,
                "global_batch": self.global_batch, "seq_len": self.seq_len,
                "precision": self.precision, "cp": self.cp, "ep": self.ep,
                "virtual_pipeline": self.virtual_pipeline, "framework": self.framework,
                "optimizer": self.optimizer, "kernels": self.kernels,
                **self._stated()}

    def _stated(self) -> dict[str, object]:
        """The settings a plan's layout names only where they differ from their defaults."""
        stated: dict[str, object] = {}
        if self.recompute_layers is not None:
            stated["recompute_layers"] = self.recompute_layers
        if self.state_offload:
            stated["state_offload"] = True
        if self.shard_group:
            stated["shard_group"] = self.shard_group
        if self.loss != "plain":
            stated["loss"] = self.loss
        if self.lora_rank is not None and self.lora_targets != "all":
            stated["lora_targets"] = self.lora_targets
        return stated
