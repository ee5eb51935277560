"""What the training stacks run, as the layout search asks it: the frameworks, ZeRO stages, shard
groups and recomputation policies it tries on a split (the `*_options`), and why no stack runs a
combination (the `*_gap` rules: the reason as a sentence, or None where some stack runs it).

The search leaves combinations with a gap out of its space and counts them by reason
(`SearchResult.reasons`); `spec_check` refuses a stated field where every stack the job may use has
the gap. The rules take plain degrees (`Degrees`: anything with tp, pp, cp and dp), not the
search's own types.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Protocol

from plan.models.methods import DPO_METHODS
from plan.models.said import say_as
from plan.models.stacks import SplitFacts, hybrid_shard_conflict, stack_gaps, stack_of
from plan.planner.estimate.cluster import Cluster
from plan.planner.estimate.types import (
    ADAPTER_METHODS,
    DEEPSPEED_OFFLOAD_OPTIMIZERS,
    FRAMEWORK_ZERO,
    MEGATRON_ONLY_OPTIMIZERS,
    OPTIMIZER_NAME_OF,
    PYTORCH_ONLY_OPTIMIZERS,
    QLORA_METHODS,
    LayoutSpec,
    framework_zero,
    hybrid_shard_group,
    offloads_states,
)


class Degrees(Protocol):
    """The parallel degrees of a split of the GPUs (the search's `Split`)."""

    @property
    def tp(self) -> int: ...

    @property
    def pp(self) -> int: ...

    @property
    def cp(self) -> int: ...

    @property
    def dp(self) -> int: ...


HYBRID_SPLIT_GAP = ("hybrid sharding needs the data-parallel ranks in whole nodes, two or more "
                    "to a node")
"""Why a split (tp x pp x cp) leaves a stated hybrid shard nothing to run: its data-parallel ranks
sit one to a node (pp or tp x cp filling the node), or do not fill whole nodes (12 GPUs in nodes of
8)."""


def hybrid_shard_gap(spec: LayoutSpec, cluster: Cluster) -> str | None:
    """Why no layout of the spec can shard hybrid (`hybrid_shard_group`), where a stated field rules
    it out."""
    conflict = hybrid_shard_conflict(spec.framework, spec.zero, spec.state_offload)
    if conflict:
        return conflict
    if spec.pytorch_stacks_only:
        return say_as("stack.hybrid_one_click", "a team kept to the one-click path runs "
                      "LLaMA-Factory, whose sharding goes through DeepSpeed, which has no hybrid "
                      "shard")
    if cluster.gpus <= cluster.gpus_per_node:
        return say_as("stack.hybrid_one_node", "the {gpus} GPUs fit one node of {per_node}: there "
                      "are no nodes to replicate across", gpus=cluster.gpus,
                      per_node=cluster.gpus_per_node)
    if spec.tp and (cluster.gpus_per_node % spec.tp or cluster.gpus_per_node // spec.tp < 2):
        return say_as("stack.hybrid_tp_node", "tp {tp} leaves fewer than two data-parallel ranks "
                      "in a node of {per_node} to shard over", tp=spec.tp,
                      per_node=cluster.gpus_per_node)
    return None


# (asked for every split and every combination of every search: a pure function of its arguments)
@lru_cache(maxsize=65536)
def split_gap(method: str, spec: LayoutSpec, framework: str, tp: int, pp: int, cp: int = 1,
              heads: int = 0) -> str | None:
    """Why no stack runs (framework, tp, pp, cp), or None. Megatron splits each sequence into 2 x cp
    chunks (types.MEGATRON_CP_SEQUENCE); the FSDP family has the gaps of `fsdp_stack_gap`, whether
    the search or the user put the split there (`check_spec` refuses a stated one that no searched
    stack runs). A team limited to the PyTorch stacks (no ops skill) runs their plain,
    data-parallel path (LLaMA-Factory, the Hugging Face Trainer: ZeRO/FSDP sharding); a tensor or
    context parallelism the user fixed is kept, as DeepSpeed AutoTP and accelerate's parallelism
    config run it."""
    gaps = stack_gaps(framework, SplitFacts(tp=tp, pp=pp, cp=cp, heads=heads, seq_len=spec.seq_len,
                                            precision=spec.precision,
                                            flash_attention=spec.flash_attention))
    if gaps:
        return gaps[0].reason
    if not stack_of(framework).recipe_family:
        return None
    if (spec.framework is None and spec.pytorch_stacks_only
            and ((tp > 1 and spec.tp is None) or (cp > 1 and spec.cp is None))):
        return say_as("stack.one_click_dp", "the one-click PyTorch path is data-parallel only")
    fsdp_gap = fsdp_stack_gap(method, spec.optimizer, spec.precision, tp, pp)
    return fsdp_gap[1] if fsdp_gap else None


def fsdp_stack_gap(method: str, optimizer: str, precision: str, tp: int,
                   pp: int) -> tuple[str, str] | None:
    """(field, why) no FSDP-family stack runs this split, or None. The PyTorch stacks that train
    LoRA and QLoRA (torchtune, PEFT with accelerate, LLaMA-Factory's FSDP path) and DPO (TRL,
    LLaMA-Factory) have no pipeline parallelism, and torchtitan, which pipelines, has no adapters,
    no DPO loss and AdamW or Adam only (the other optimizers run on the Hugging Face path, which
    does not pipeline) in bf16 (its `mixed_precision_param` takes bfloat16 or float32, not fp16);
    Megatron-Bridge/NeMo pipeline LoRA (framework megatron). A 4-bit QLoRA base is sharded by
    FSDP/ZeRO-3 only: bitsandbytes' packed 4-bit layers are not sliced by tensor parallelism
    (LLaMA-Factory's AutoTP path; Megatron has no QLoRA), as the llamafactory export says."""
    if pp > 1 and optimizer != "adam":
        return "pp", say_as("stack.pp_adam_only", "the one PyTorch stack that pipelines "
                            "(torchtitan) runs AdamW or Adam only")
    if pp > 1 and precision == "fp16":
        return "pp", say_as("stack.pp_bf16_only", "the one PyTorch stack that pipelines "
                            "(torchtitan) trains in bf16, not fp16")
    if pp > 1 and method in ADAPTER_METHODS:
        return "pp", say_as("stack.pp_no_lora", "no FSDP-family stack pipelines LoRA/QLoRA")
    if pp > 1 and method in DPO_METHODS:
        return "pp", say_as("stack.pp_no_dpo", "no FSDP-family stack pipelines DPO (torchtitan, "
                            "the one that pipelines, has no DPO loss)")
    if tp > 1 and method in QLORA_METHODS:
        return "tp", say_as("stack.tp_no_qlora", "no stack tensor-parallelizes a 4-bit QLoRA base")
    return None


CHECKPOINT_OFFLOAD_STACK = ("offloaded checkpoints run on LLaMA-Factory's Hugging Face path "
                            "(use_unsloth_gc)")
"""The one stack that offloads checkpoints, which each CHECKPOINT_OFFLOAD_ reason names first
(tests/planner/test_i18n_usage.py checks they do)."""
CHECKPOINT_OFFLOAD_DATA_PARALLEL_ONLY = say_as(
    "stack.checkpoint_offload_dp_only", "offloaded checkpoints run on LLaMA-Factory's Hugging "
    "Face path (use_unsloth_gc), which has no tensor, pipeline, context or expert parallelism")
CHECKPOINT_OFFLOAD_FULL_SHARD_ONLY = say_as(
    "stack.checkpoint_offload_full_shard", "offloaded checkpoints run on LLaMA-Factory's Hugging "
    "Face path (use_unsloth_gc), whose multi-GPU sharding goes through DeepSpeed: no hybrid "
    "sharding")
CHECKPOINT_OFFLOAD_STATES_WITH_CPU_ADAM = say_as(
    "stack.checkpoint_offload_cpu_adam", "offloaded checkpoints run on LLaMA-Factory's Hugging "
    "Face path (use_unsloth_gc), which offloads model states through DeepSpeed's ZeRO-Offload, "
    "stepped by its CPU Adam only")
CHECKPOINT_OFFLOAD_NO_PURE_BF16_ZERO3 = say_as(
    "stack.checkpoint_offload_pure_bf16", "offloaded checkpoints run on LLaMA-Factory's Hugging "
    "Face path (use_unsloth_gc), which refuses pure BF16 AdamW (pure_bf16) with DeepSpeed ZeRO-3")

REPLICATED_SPLIT = say_as(
    "stack.replicated_split", "tensor or context parallelism beside replicated (ZeRO-0) data "
    "parallelism: accelerate's parallelism_config refuses it, and torchtitan, which runs it, has "
    "no adapters or DPO and trains with AdamW or Adam in bf16 or fp8 only")


def replicated_split_gap(method: str, spec: LayoutSpec, framework: str, zero: int,
                         split: Degrees) -> str | None:
    """Why no FSDP-family stack runs tp or cp > 1 over unsharded data-parallel replicas
    (launch-configs.md, accelerate: tp or cp with dp_replicate > 1 and dp_shard == 1 is refused)
    where torchtitan cannot run the job either (adapters, DPO, another optimizer than Adam, fp16:
    `fsdp_stack_gap`), or None."""
    if (
        stack_of(framework).recipe_family
        and zero == 0
        and split.dp > 1
        and (split.tp > 1 or split.cp > 1)
        and (
            method in ADAPTER_METHODS
            or method in DPO_METHODS
            or spec.optimizer != "adam"
            or spec.precision == "fp16"
        )
    ):
        return REPLICATED_SPLIT
    return None


ACTIVATION_OFFLOAD_NOT_PIPELINED = say_as(
    "stack.activation_offload_pipeline", "activation offload without recomputation is torchtune's "
    "policy, and torchtune does not pipeline or split experts")


def offload_gap(recompute: str, tp: int, pp: int, cp: int, ep: int = 1) -> str | None:
    """Why no stack runs this recomputation policy on this split, or None: offloaded checkpoints
    are LLaMA-Factory's Hugging Face path (data parallel only); offloaded activations torchtune's
    (no pipeline, no expert parallelism)."""
    if recompute == "full_offload" and (tp > 1 or pp > 1 or cp > 1 or ep > 1):
        return CHECKPOINT_OFFLOAD_DATA_PARALLEL_ONLY
    if recompute == "offload" and (pp > 1 or ep > 1):
        return ACTIVATION_OFFLOAD_NOT_PIPELINED
    return None


OP_LEVEL_CHECKPOINTING = "selective recomputation on FSDP is torchtitan's op-level policy"
"""What each of selective_gap's torchtitan reasons says first."""

def selective_gap(method: str, optimizer: str, precision: str, framework: str,
                  unsharded_state_offload: bool = False) -> str | None:
    """Why no stack runs selective recomputation of this job on this framework, or None. Megatron's
    policy (the attention core) runs whatever Megatron trains. DeepSpeed, the Hugging Face Trainer,
    LLaMA-Factory, TRL and torchtune checkpoint whole layers (their exports refuse "selective");
    torchtitan, whose op-level policy the FSDP estimate models, has no adapters, no DPO loss, AdamW
    or Adam only, bf16 only, and offloads the model states only where FSDP2 shards them over more
    than one rank (launch-configs.md, our exports)."""
    policy = stack_of(framework).selective_recompute
    if policy == "attention":
        return None
    if policy == "none":
        return say_as("stack.deepspeed_whole_layers", "DeepSpeed checkpoints whole layers only "
                      "(activation_checkpointing has no selective policy)")
    if method in ADAPTER_METHODS:
        return say_as("stack.op_level_no_lora", "selective recomputation on FSDP is torchtitan's "
                      "op-level policy, and torchtitan has no LoRA/QLoRA")
    if method in DPO_METHODS:
        return say_as("stack.op_level_no_dpo", "selective recomputation on FSDP is torchtitan's "
                      "op-level policy, and torchtitan has no DPO loss")
    if optimizer != "adam":
        return say_as("stack.op_level_adam_only", "selective recomputation on FSDP is "
                      "torchtitan's op-level policy, and torchtitan runs AdamW or Adam only")
    if precision == "fp16":
        return say_as("stack.op_level_bf16", "selective recomputation on FSDP is torchtitan's "
                      "op-level policy, and torchtitan trains in bf16, not fp16")
    if unsharded_state_offload:
        return say_as("stack.op_level_offload", "selective recomputation on FSDP is torchtitan's "
                      "op-level policy, and torchtitan offloads model states only where FSDP2 "
                      "shards them over more than one rank")
    return None


def uneven_micro_batch_gap(spec: LayoutSpec, framework: str, replica_batch: int) -> str | None:
    """Why a stated micro-batch cannot run on this stack with this replica batch, or None: Megatron
    and DeepSpeed take no smaller last micro-batch (EXACT_BATCH_FRAMEWORKS)."""
    if (spec.micro_batch and stack_of(framework).exact_batch
            and replica_batch % spec.micro_batch):
        return say_as("stack.uneven_micro_batch", "{framework} needs micro-batch x accumulation "
                      "steps = each replica's share of the global batch", framework=framework)
    return None


def recompute_gap(recompute: str, method: str, spec: LayoutSpec, framework: str, zero: int,
                  split: Degrees, shard_group: int = 0, ep: int = 1) -> str | None:
    """Why no stack runs this recomputation policy on this combination, or None (`offload_gap`,
    `selective_gap`: torchtitan offloads model states only where FSDP2 shards them over several
    ranks; offloaded checkpoints, LLaMA-Factory's, neither shard hybrid nor run pure BF16 AdamW on
    ZeRO-3)."""
    if recompute == "full_offload" and shard_group:
        return CHECKPOINT_OFFLOAD_FULL_SHARD_ONLY
    if recompute == "full_offload" and spec.optimizer == "adam_bf16" and zero == 3:
        return CHECKPOINT_OFFLOAD_NO_PURE_BF16_ZERO3
    if (recompute == "full_offload" and spec.state_offload
            and spec.optimizer not in DEEPSPEED_OFFLOAD_OPTIMIZERS
            and offloads_states(framework, zero, split.tp, split.pp, spec.optimizer)):
        return CHECKPOINT_OFFLOAD_STATES_WITH_CPU_ADAM
    if recompute != "selective":
        return offload_gap(recompute, split.tp, split.pp, split.cp, ep)
    unsharded_offload = (bool(spec.state_offload) and split.dp * split.cp == 1
                         and offloads_states(framework, zero, split.tp, split.pp, spec.optimizer))
    return selective_gap(method, spec.optimizer, spec.precision, framework, unsharded_offload)


def searched_frameworks(method: str, spec: LayoutSpec) -> tuple[str, ...]:
    """Frameworks searched when none is fixed: Megatron for its own options (block recomputation,
    the precision-aware optimizer; asked for by name, so kept for a PyTorch-only team too), FSDP for
    QLoRA, DPO (TRL, LLaMA-Factory's stage dpo, OpenRLHF: no Megatron stack of the reference trains
    it; Megatron-Bridge and mcore_adapter run pt/sft, launch-configs.md), the PyTorch optimizers, a
    chunked or fused loss and offloaded checkpoints (a job that names Liger's or Unsloth's loss or
    checkpointing runs a PyTorch stack) and for a team limited to PyTorch stacks, else both."""
    if spec.recompute_layers or spec.optimizer in MEGATRON_ONLY_OPTIMIZERS:
        return ("megatron",)
    if megatron_left_out(method, spec):
        return ("fsdp",)
    return ("megatron", "fsdp")


def megatron_left_out(method: str, spec: LayoutSpec) -> str:
    """Why `searched_frameworks` leaves Megatron out for this job (it searches FSDP alone then), as
    a clause; '' when Megatron is searched."""
    if method in QLORA_METHODS:
        return say_as("stack.left_out_qlora", "Megatron has no 4-bit QLoRA path")
    if method in DPO_METHODS:
        return say_as("stack.left_out_dpo",
                      "Megatron-Bridge and mcore_adapter train pt and sft, not DPO")
    if spec.optimizer in PYTORCH_ONLY_OPTIMIZERS:
        return say_as("stack.left_out_optimizer", "Megatron has no {optimizer}",
                      optimizer=OPTIMIZER_NAME_OF[spec.optimizer])
    if spec.loss != "plain":
        return say_as("stack.left_out_loss", "a {loss} loss runs on the PyTorch stacks only",
                      loss=spec.loss)
    if spec.recompute == "full_offload":
        return say_as("stack.left_out_checkpoint_offload",
                      "offloaded checkpoints run on the PyTorch stacks only")
    if spec.pytorch_stacks_only:
        return say_as("stack.left_out_no_ops",
                      "a team with no ops skill is planned on the PyTorch stacks")
    return ""


def framework_options(method: str, spec: LayoutSpec, shard_ranks: int,
                      pp: int) -> tuple[tuple[str, int], ...]:
    """(framework, ZeRO stage) pairs to try with pp pipeline stages. Megatron has no 4-bit QLoRA
    path; DeepSpeed pipelines only at ZeRO 0 and 1 (types.framework_zero)."""
    fws = (spec.framework,) if spec.framework else searched_frameworks(method, spec)
    options: list[tuple[str, int]] = []
    for fw in fws:
        if spec.zero is not None:
            # (a sharding no run calibrates, Megatron-FSDP's, is estimated where it is named only)
            uncalibrated = (stack_of(fw).uncalibrated_sharding is not None and spec.zero >= 2
                            and spec.framework is None)
            stages: tuple[int, ...] = ((spec.zero,) if spec.zero in FRAMEWORK_ZERO[fw]
                                       and not uncalibrated else ())
        elif shard_ranks == 1:
            # (one GPU shards nothing, but ZeRO-3 can still keep its states on the host)
            stages = tuple(z for z in ((0, 3) if spec.state_offload else (0,))
                           if z in FRAMEWORK_ZERO[fw])
        else:
            stages = stack_of(fw).searched_zero
        options += [(fw, z) for z in stages if z in framework_zero(fw, pp)]
    return tuple(options)


def hybrid_options(options: tuple[tuple[str, int], ...], spec: LayoutSpec, tp: int, cp: int,
                   shard_ranks: int, gpus_per_node: int) -> tuple[tuple[str, int, int], ...]:
    """Each (framework, ZeRO stage) with its shard groups: 0 (one group of all ranks), and the
    node's ranks where the layout can shard hybrid (`hybrid_shard_group`; not with the states
    offloaded to the host); spec.hybrid_shard True keeps only the hybrid ones (FSDP at ZeRO 2 or 3),
    False only 0. A team kept to the one-click path (pytorch_stacks_only: LLaMA-Factory's, whose
    sharding goes through DeepSpeed) has none."""
    out: list[tuple[str, int, int]] = []
    for fw, zero in options:
        group = (0 if spec.hybrid_shard is False or spec.state_offload or spec.pytorch_stacks_only
                 else hybrid_shard_group(fw, zero, tp, shard_ranks, gpus_per_node, cp=cp))
        if spec.hybrid_shard:
            groups: tuple[int, ...] = (group,) if group else ()
        else:
            groups = (0, group) if group else (0,)
        out += [(fw, zero, hs) for hs in groups]
    return tuple(out)


def recompute_options(spec: LayoutSpec, framework: str,
                      method: str = "pretrain") -> tuple[str, ...]:
    """Recomputation policies searched: Megatron's none or full (block recomputation chooses how
    many layers), DeepSpeed's none or full; on FSDP also torchtitan's op-level selective policy
    where torchtitan runs the job (`selective_gap`: no adapters, no DPO, Adam, bf16; the other
    PyTorch stacks checkpoint whole layers and their exports refuse it) and activation offload. A
    team limited to the one-click PyTorch path has the Hugging Face Trainer's whole-layer
    checkpointing only (and, where nothing else fits, its checkpoints offloaded as LLaMA-Factory's
    `use_unsloth_gc` does). A layout that offloads its model states to the CPU is searched with
    whole-layer checkpointing, as DeepSpeed, accelerate and LLaMA-Factory offload (a stated
    selective policy stays where torchtitan offloads too: FSDP2 sharding over more than one rank,
    the combinations' filter in `search_space.combinations`)."""
    if spec.recompute or spec.recompute_layers:
        return (spec.recompute or "full",)
    if not stack_of(framework).recipe_family or spec.state_offload:
        return ("none", "full")
    if spec.pytorch_stacks_only:
        return ("none", "full", *(("full_offload",) if spec.offload else ()))
    selective = () if selective_gap(method, spec.optimizer, spec.precision, framework) else (
        "selective",)
    offload = ("full_offload", "offload") if spec.offload else ()
    return ("none", *selective, "full", *offload)
