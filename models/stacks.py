"""The training stacks, each described once: what it runs and how it runs it.

Three execution models stand for the stacks `plan export` writes for (docs/sources/
launch-configs.md): `megatron` (Megatron-LM / Megatron-Core, Megatron-FSDP, LLaMA-Factory's
Megatron-Bridge backend), `deepspeed` (DeepSpeed ZeRO, its pipeline engine, Ulysses) and `fsdp`
(PyTorch FSDP/FSDP2 as torchtitan, accelerate and the Hugging Face Trainer run it). A `Stack`
holds two kinds of facts:

- what the stack runs: ZeRO stages, optimizers, losses, recomputation, context and expert
  parallelism, offload, hybrid sharding. The `*_gap` rules below turn them into the one sentence
  a refusal or a search's reason count says; `stack_gaps` asks every rule at once.
- how it runs what it runs: the estimator's mechanisms that differ between stacks (gradient
  buffers, saved activations, gathers, pipeline caches), read by planner/estimate as named fields
  instead of comparisons of framework names.

Only this module and the exporters compare framework names.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from plan.models.methods import ADAPTER_METHODS, DPO_METHODS, QLORA_METHODS
from plan.models.said import say_as

SelectiveRecompute = Literal["attention", "op_level", "none"]
ContextParallel = Literal["ring", "ulysses"]
ExpertParallel = Literal["always", "never", "torchtitan"]


@dataclass(frozen=True, slots=True)
class Stack:
    """One execution model: what it runs (gaps) and how it runs it (the estimator's mechanisms)."""

    framework: str
    name: str
    zero_stages: tuple[int, ...]
    """ZeRO stages it runs (FSDP: NO_SHARD, SHARD_GRAD_OP, FULL_SHARD; Megatron: 1 is the
    distributed optimizer, 2 and 3 Megatron-FSDP's `optim_grads` and `optim_grads_params`,
    `--use-megatron-fsdp --data-parallel-sharding-strategy`, launch-configs.md section 2)."""
    searched_zero: tuple[int, ...]
    """ZeRO stages the search tries over more than one rank. Megatron's 2 and 3 (Megatron-FSDP)
    are estimated where a job states them with framework megatron, never searched: no published
    run of that stack calibrates them, and a row or job that names only a ZeRO stage of 2 or 3 ran
    FSDP or DeepSpeed. Megatron's and DeepSpeed's ZeRO-1 moves what ZeRO-0 moves with less memory,
    so 0 is not searched there; PyTorch has no ZeRO-1, and its replicated data parallelism (DDP,
    FSDP NO_SHARD) gathers nothing, which is what LoRA and QLoRA over several GPUs usually run
    (their trainable states are small)."""
    pipeline_zero_stages: tuple[int, ...]
    """ZeRO stages it runs under pipeline parallelism: DeepSpeed's `PipelineModule` engine asserts
    stage < 2 ("ZeRO-2 and ZeRO-3 are incompatible with pipeline parallelism",
    deepspeed/runtime/pipe/engine.py; launch-configs.md section 1)."""
    exact_batch: bool
    """Global batch = micro-batch x accumulation steps x dp exactly, no smaller last micro-batch
    (Megatron-LM's `gbs % (mbs * dp) == 0`, DeepSpeed's train_batch_size)."""
    fused_layers: bool
    """Its layers always run fused kernels (Megatron): the `kernels` setting says nothing there."""
    pytorch_optimizers: bool
    """It runs the PyTorch optimizers (bitsandbytes' 8-bit AdamW, Adafactor, pure BF16 AdamW);
    Megatron-LM's `--optimizer` takes adam or sgd (megatron/training/arguments.py, megatron-core
    0.16)."""
    distributed_optimizer: bool
    """It runs Megatron's precision-aware distributed optimizer (ZeRO-1)."""
    leaner_losses: bool
    """It runs a chunked or fused cross-entropy; Megatron's vocab-parallel one holds the logits."""
    checkpoint_offload: bool
    """Checkpoints in host memory (`full_offload`: Unsloth's gradient checkpointing,
    LLaMA-Factory's use_unsloth_gc), a PyTorch stack's."""
    qlora: bool
    """A 4-bit QLoRA path (bitsandbytes through peft); Megatron has none."""
    adapter_runner: Literal["megatron_bridge", "peft"]
    """What trains LoRA adapters on this execution model, so what `plan export` writes a LoRA job
    planned on it for: Megatron-LM's pretrain_gpt.py has no PEFT (launch-configs.md section 2);
    Megatron-Core trains LoRA through Megatron-Bridge, which LLaMA-Factory drives
    (`USE_MEGATRON_BRIDGE=1`: stages pt and sft, finetuning_type full or lora, no quantization, no
    DeepSpeed; section 4, LLaMA-Factory main ff6d4d1, 2026-08-18); DeepSpeed and the FSDP family
    apply PEFT in the model code."""
    block_recompute: bool
    """Megatron's block recomputation (`--recompute-method block --recompute-num-layers`)."""
    selective_recompute: SelectiveRecompute
    """What its selective recomputation recomputes: Megatron the attention core, torchtitan's
    op-level policy half the matmuls and the element-wise kernels; DeepSpeed checkpoints whole
    layers only (activation_checkpointing has no selective policy)."""
    interleaving_groups: bool
    """Interleaved pipeline schedules run micro-batches in groups of pp (Megatron's default
    --microbatch-group-size-per-virtual-pipeline-stage): fewer than pp per step is refused."""
    interleaved_stages: bool
    """It runs virtual (interleaved) pipeline stages; DeepSpeed's pipeline engine has none."""
    context_parallel: ContextParallel
    """Ring attention over flash kernels (Megatron through Transformer Engine, torchtitan and
    accelerate through SDPA) or DeepSpeed's Ulysses, which splits the heads and runs eager
    attention too."""
    sequence_chunks_per_cp_rank: int
    """Chunks of each sequence per context-parallel rank: Megatron splits a sequence into 2 x cp
    chunks to balance causal attention (`seq % (2 * cp) == 0`, launch-configs.md section 2)."""
    fp8_with_split: bool
    """FP8 with context or pipeline parallelism in a stack plan export writes for (not DeepSpeed:
    its export's JSON has no FP8 setting and accelerate, which runs FP8 on DeepSpeed, neither
    pipelines nor splits sequences there)."""
    expert_parallel: ExpertParallel
    """Who splits experts over ranks: Megatron always (--expert-model-parallel-size); on DeepSpeed
    no export (DeepSpeed-MoE layers in the model's code); on FSDP only torchtitan."""
    hybrid_shard: bool
    """Shards inside a node and replicates across nodes (HSDP): PyTorch FSDP's HYBRID_SHARD, FSDP2
    on a 2-D mesh (torchtitan `data_parallel_replicate_degree`, accelerate HYBRID_SHARD)."""
    state_offload: bool
    """Keeps model states in host memory at ZeRO-3 without tp or pp (FSDP CPU offload,
    ZeRO-Offload)."""
    offload_optimizers: tuple[str, ...] | None
    """The optimizers its offload steps on the CPU, None for any torch optimizer: DeepSpeed's
    ZeRO-Offload runs its CPU Adam (deepspeed/runtime/engine.py, accelerate/accelerator.py)."""
    pure_bf16_needs_zero: bool
    """Pure BF16 AdamW needs ZeRO 1-3 (DeepSpeed's bf16_master_weights_and_grads)."""
    fp32_grad_buffer: bool
    """Gradients accumulated in an fp32 buffer for bf16 runs (Megatron's
    accumulate_allreduce_grads_in_fp32); other stacks keep 16-bit gradients."""
    fp32_adapters: bool
    """peft's fp32 adapter weights (`autocast_adapter_dtype`) stay fp32 in training, with fp32
    gradients: PyTorch's stacks run the module as peft built it. DeepSpeed casts the module to the
    16-bit dtype of its bf16/fp16 config (DeepSpeedEngine `_configure_distributed_model`) and keeps
    the fp32 master in its own optimizer, sharded by its ZeRO stage; Megatron trains no peft
    adapters (model_states.py ADAPTER_FP32_BYTES)."""
    defers_stage2_grads: bool
    """ZeRO-2 holds gradients unsharded (fp32 reduce dtype) until the last micro-batch: FSDP
    SHARD_GRAD_OP reduce-scatters once per step (no_sync)."""
    stage2_reduces_every_micro_batch: bool
    """ZeRO-2 reduces gradients every micro-batch and all-gathers the updated parameters after the
    step (DeepSpeed stage 2, whose reduction all-reduces buckets; Megatron-FSDP optim_grads, which
    reduce-scatters)."""
    overlaps_unsharded_reduction: bool
    """ZeRO 0-2 gradient reductions overlap the backward pass on their own stream. DeepSpeed's
    `overlap_comm` is off below stage 3 unless a config sets it (deepspeed/runtime/zero/config.py
    `overlap_comm_valid`, 0.19.8; the DeepSpeed export writes only the stage): its reductions run on
    the compute stream (stage_1_and_2.py `average_tensor`, engine.py `allreduce_gradients`)."""
    fp8_weight_cast_cached: bool
    """FP8 weights cast once per step, on its first micro-batch, and reused for the others (the
    weights do not change within a step): Transformer Engine's `is_first_microbatch` caching,
    which Megatron-Core's TE layers set (megatron/core/extensions/transformer_engine.py);
    torchao's float8 under FSDP casts each time the weights are gathered, every micro-batch."""
    fp8_saves_inputs_in_fp8: bool
    """Transformer Engine keeps the FP8 copy of each linear layer's input for the backward."""
    tensor_parallel_gathers_saved: bool
    """DTensor tensor parallelism (torchtitan) saves the all-gathered sequence-parallel norm
    outputs and keeps the final norm's output whole; Megatron saves its local shard."""
    pipeline_caches_stage_outputs: bool
    """torch.distributed.pipelining caches each in-flight micro-batch's stage output and the
    last stage's outputs for its backward; Megatron frees them once sent."""
    gathers_root_module: bool
    """The root module's own parameters (embedding, output layer) stay gathered from forward to
    backward (FSDP2 `fully_shard`: the root does not reshard after forward), and both are gathered
    before the layers."""
    loss_logits_16bit: Literal["always", "with_tp", "never"]
    """Where its plain cross-entropy works on the 16-bit logits (Megatron's vocab-parallel loss;
    DeepSpeed with AutoTP) rather than an fp32 copy."""
    recipe_family: bool
    """It stands for a family of recipes (torchtitan, accelerate, torchtune, LLaMA-Factory, the
    Hugging Face Trainer): its tensor, pipeline and context splits, selective recomputation and
    offloaded activations are checked against which of them runs the job (stack_rules), and
    searched only there."""
    pipeline_layer_split: Literal["even_chunks", "any", "layers_per_stage"]
    """How it splits layers over pipeline stages (planner/estimate/stages.py): Megatron's even
    stages in equal virtual chunks, DeepSpeed's `partition_method` (any count), torchtitan's
    `pipeline_parallel_layers_per_stage`."""
    band_class: str
    """The calibration scope of its throughput band."""
    uncalibrated_execution: str | None
    """An execution of ZeRO no measurement calibrates (widens the band), or None."""
    uncalibrated_sharding: str | None
    """The same for ZeRO stages 2-3 only, or None."""


# Each stack's facts, one row per field of Stack, side by side (the field docstrings above give
# each fact's meaning and source).
_FACTS: dict[str, tuple[Any, Any, Any]] = {
    #                         megatron, deepspeed, fsdp
    "name": ("Megatron-LM", "DeepSpeed", "PyTorch FSDP"),
    "zero_stages": ((0, 1, 2, 3), (0, 1, 2, 3), (0, 2, 3)),
    "searched_zero": ((1,), (1, 2, 3), (0, 2, 3)),
    "pipeline_zero_stages": ((0, 1, 2, 3), (0, 1), (0, 2, 3)),
    "exact_batch": (True, True, False),
    "fused_layers": (True, False, False),
    "pytorch_optimizers": (False, True, True),
    "distributed_optimizer": (True, False, False),
    "leaner_losses": (False, True, True),
    "checkpoint_offload": (False, True, True),
    "qlora": (False, True, True),
    "adapter_runner": ("megatron_bridge", "peft", "peft"),
    "block_recompute": (True, False, False),
    "selective_recompute": ("attention", "none", "op_level"),
    "interleaving_groups": (True, False, False),
    "interleaved_stages": (True, False, True),
    "context_parallel": ("ring", "ulysses", "ring"),
    "sequence_chunks_per_cp_rank": (2, 1, 1),
    "fp8_with_split": (True, False, True),
    "expert_parallel": ("always", "never", "torchtitan"),
    "hybrid_shard": (False, False, True),
    "state_offload": (False, True, True),
    "offload_optimizers": ((), ("adam",), None),
    "pure_bf16_needs_zero": (False, True, False),
    "fp32_grad_buffer": (True, False, False),
    "fp32_adapters": (False, False, True),
    "defers_stage2_grads": (False, False, True),
    "stage2_reduces_every_micro_batch": (True, True, False),
    "overlaps_unsharded_reduction": (True, False, True),
    "fp8_weight_cast_cached": (True, False, False),
    "fp8_saves_inputs_in_fp8": (True, False, False),
    "tensor_parallel_gathers_saved": (False, False, True),
    "pipeline_caches_stage_outputs": (False, False, True),
    "gathers_root_module": (False, False, True),
    "loss_logits_16bit": ("always", "with_tp", "never"),
    "recipe_family": (False, False, True),
    "pipeline_layer_split": ("even_chunks", "any", "layers_per_stage"),
    "band_class": ("megatron", "fsdp", "fsdp"),
    "uncalibrated_execution": (None, "DeepSpeed's execution of ZeRO", None),
    "uncalibrated_sharding": ("Megatron-FSDP's sharded data parallelism", None, None),
}
MEGATRON, DEEPSPEED, FSDP = (
    Stack(framework=framework, **{name: row[i] for name, row in _FACTS.items()})
    for i, framework in enumerate(("megatron", "deepspeed", "fsdp"))
)
STACKS: dict[str, Stack] = {s.framework: s for s in (MEGATRON, DEEPSPEED, FSDP)}


def stack_of(framework: str) -> Stack:
    """The description of `framework` (one of STACKS)."""
    return STACKS[framework]


def named_stack(framework: str | None) -> Stack | None:
    """The description of a stated framework, None where none is stated (or it is not a stack)."""
    return STACKS.get(framework) if framework is not None else None


def may_run(framework: str | None, capability: str) -> bool:
    """Whether a stated framework, or some stack where none is stated, has `capability` (a
    boolean field of Stack): what a check on a not-yet-chosen stack asks."""
    if framework is None:
        return any(getattr(s, capability) for s in STACKS.values())
    stack = named_stack(framework)
    return stack is not None and bool(getattr(stack, capability))


def adapters_through_bridge(framework: str, method: str) -> bool:
    """Whether a job of `method` planned on `framework` trains its adapters through Megatron-Bridge
    (`Stack.adapter_runner`): LoRA on Megatron, exported through LLaMA-Factory's Megatron-Bridge
    backend, the one export that runs it with the execution the plan timed. Not DPO, which
    Megatron-Bridge does not train (stages pt and sft), nor QLoRA, which it does not quantize:
    neither is planned on Megatron (`Stack.qlora`, stack_rules.megatron_left_out)."""
    return (method in ADAPTER_METHODS and method not in (*DPO_METHODS, *QLORA_METHODS)
            and stack_of(framework).adapter_runner == "megatron_bridge")


def bridge_zero_gap(framework: str, method: str, zero: int) -> str | None:
    """Why LoRA on this stack cannot run this ZeRO stage, or None: Megatron-Bridge, which trains
    LoRA on Megatron (`adapters_through_bridge`), shards the optimizer state only
    (`use_distributed_optimizer`; launch-configs.md section 4); Megatron's ZeRO 2 and 3 are
    Megatron-FSDP's, which no LoRA export runs."""
    if zero > 1 and adapters_through_bridge(framework, method):
        return say_as("stack.bridge_zero", "LoRA on Megatron trains through LLaMA-Factory's "
                      "Megatron-Bridge backend, which shards the optimizer state only (ZeRO 0-1); "
                      "ZeRO-{zero} on Megatron is Megatron-FSDP's, which no LoRA export runs",
                      zero=zero)
    return None


def stated_lacks(framework: str | None, capability: str) -> bool:
    """Whether a stated framework lacks `capability` (False where none is stated)."""
    stack = named_stack(framework)
    return stack is not None and not getattr(stack, capability)


def stated_has(framework: str | None, capability: str) -> bool:
    """Whether a stated framework has `capability` (False where none is stated)."""
    stack = named_stack(framework)
    return stack is not None and bool(getattr(stack, capability))


def frameworks_with(capability: str) -> tuple[str, ...]:
    """The frameworks whose description has `capability` (a boolean field of Stack)."""
    return tuple(f for f, s in STACKS.items() if getattr(s, capability))


HYBRID_SHARD_FRAMEWORKS = frameworks_with("hybrid_shard")
EXACT_BATCH_FRAMEWORKS = frozenset(frameworks_with("exact_batch"))
FRAMEWORK_ZERO = {f: s.zero_stages for f, s in STACKS.items()}
DEEPSPEED_OFFLOAD_OPTIMIZERS = DEEPSPEED.offload_optimizers or ()
MEGATRON_FSDP_SHARDING = {2: "optim_grads", 3: "optim_grads_params"}
"""Megatron-FSDP's `--data-parallel-sharding-strategy` for each ZeRO stage it runs."""
PYTORCH_ONLY_OPTIMIZER_NAMES = ("adamw-8bit", "paged-adamw-8bit", "adafactor", "adamw-bf16")
"""Optimizers only the stacks with `pytorch_optimizers` run: bitsandbytes' 8-bit AdamW and
Adafactor are PyTorch optimizers; Megatron-LM's `--optimizer` takes adam or sgd
(megatron/training/arguments.py, megatron-core 0.16), plus its precision-aware Adam, and keeps
fp32 or fp16 master weights, so it has no pure BF16 AdamW."""
GPU_ONLY_OPTIMIZERS = ("adam_8bit", "paged_adam_8bit")
"""Optimizers with no CPU step: bitsandbytes' 8-bit AdamW runs CUDA kernels only."""


def framework_zero(framework: str, pp: int = 1) -> tuple[int, ...]:
    """ZeRO stages `framework` runs with `pp` pipeline stages."""
    stack = stack_of(framework)
    return stack.pipeline_zero_stages if pp > 1 else stack.zero_stages


def interleaving_refused(
    framework: str | None, virtual_pipeline: int, micro_batches: int, pp: int
) -> bool:
    """Whether a stack refuses this interleaved schedule (`Stack.interleaving_groups`)."""
    stack = named_stack(framework)
    return (
        stack is not None
        and stack.interleaving_groups
        and virtual_pipeline > 1
        and micro_batches < pp
    )


MEGATRON_CP_SEQUENCE = say_as(
    "stack.megatron_cp_sequence",
    "Megatron's context parallelism needs a sequence length that is a multiple of 2 x cp")


def megatron_splits_sequence(seq_len: int, cp: int) -> bool:
    """Whether Megatron can split a sequence of `seq_len` tokens over `cp` ranks."""
    return sequence_split_gap("megatron", seq_len, cp) is None


def sequence_split_gap(framework: str, seq_len: int, cp: int) -> str | None:
    """MEGATRON_CP_SEQUENCE where this stack cannot split the sequence in its chunks, else None."""
    chunks = stack_of(framework).sequence_chunks_per_cp_rank
    # (one chunk per rank: cp dividing the sequence is every stack's check, not a stack's gap)
    return MEGATRON_CP_SEQUENCE if chunks > 1 and cp > 1 and seq_len % (chunks * cp) else None


RING_ATTENTION_NEEDS_FLASH = say_as(
    "stack.ring_needs_flash",
    "context parallelism runs ring attention through flash kernels (Megatron through Transformer "
    "Engine's fused or flash attention, its own attention asserting cp = 1; torchtitan and "
    "accelerate through SDPA's flash or efficient backends); only DeepSpeed's Ulysses, which "
    "splits the heads, runs eager attention with cp > 1")
"""Why Megatron and the FSDP family run no context parallelism with eager attention
(launch-configs.md: accelerate's cp is ring attention over SDPA; Megatron-Core's local
DotProductAttention asserts context_parallel_size == 1)."""


def ring_attention_gap(framework: str, cp: int, flash_attention: bool) -> str | None:
    """RING_ATTENTION_NEEDS_FLASH where this stack cannot split the sequence with this attention."""
    ring = stack_of(framework).context_parallel == "ring"
    return RING_ATTENTION_NEEDS_FLASH if cp > 1 and not flash_attention and ring else None


def ulysses_head_gap(framework: str, heads: int, tp: int, cp: int) -> str | None:
    """Why DeepSpeed's Ulysses cannot split these heads over cp ranks, or None: it hands each rank
    whole heads, so the heads each tensor-parallel rank has must divide by cp
    (launch-configs.md, DeepSpeed: "heads must divide by it")."""
    if (
        stack_of(framework).context_parallel != "ulysses"
        or cp <= 1
        or heads <= 0
        or (heads // max(1, tp)) % cp == 0
    ):
        return None
    return say_as("stack.ulysses_heads", "DeepSpeed's cp is Ulysses, which hands each rank whole "
                  "attention heads: the {heads} heads per tensor-parallel rank do not divide by "
                  "cp = {cp}", heads=heads // max(1, tp), cp=cp)


ULYSSES_WITHOUT_FP8 = say_as(
    "stack.ulysses_fp8",
    "DeepSpeed's context parallelism (Ulysses, `sequence_parallel_size` in its JSON) is written by "
    "the deepspeed export, whose JSON has no FP8 setting, and accelerate, which runs FP8 on "
    "DeepSpeed through Transformer Engine, splits no sequence on DeepSpeed (its ring attention "
    "needs the FSDP2 plugin): no stack plan export writes for runs FP8 with cp > 1 on DeepSpeed")
"""Why DeepSpeed runs no FP8 with context parallelism here (planner/export/deepspeed.py and
accelerate.py refuse each half; LLaMA-Factory splits sequences on its Megatron-Bridge backend)."""


def ulysses_fp8_gap(framework: str, precision: str, cp: int) -> str | None:
    """ULYSSES_WITHOUT_FP8 where DeepSpeed would split the sequence of an FP8 run, else None."""
    refused = not stack_of(framework).fp8_with_split and precision == "fp8" and cp > 1
    return ULYSSES_WITHOUT_FP8 if refused else None


PIPELINE_WITHOUT_FP8 = say_as(
    "stack.pipeline_fp8",
    "DeepSpeed's pipeline engine is written by the deepspeed export, whose JSON has no FP8 "
    "setting, and accelerate, which runs FP8 on DeepSpeed through Transformer Engine, does not "
    "pipeline: no stack plan export writes for runs FP8 with pp > 1 on DeepSpeed")
"""Why DeepSpeed runs no FP8 under pipeline parallelism here (planner/export/deepspeed.py and
accelerate.py)."""


def pipeline_fp8_gap(framework: str, precision: str, pp: int) -> str | None:
    """PIPELINE_WITHOUT_FP8 where DeepSpeed would pipeline an FP8 run, else None."""
    refused = not stack_of(framework).fp8_with_split and precision == "fp8" and pp > 1
    return PIPELINE_WITHOUT_FP8 if refused else None


EXPERTS_NOT_SPLIT_ON_DEEPSPEED = say_as(
    "stack.experts_deepspeed",
    "DeepSpeed splits experts over ranks only through DeepSpeed-MoE layers in the model's code, "
    "which no export writes (Megatron, torchtitan and LLaMA-Factory's Megatron-Bridge backend "
    "split them: framework megatron or fsdp)")
EXPERTS_SPLIT_BY_TORCHTITAN = say_as(
    "stack.experts_torchtitan",
    "of the FSDP-family stacks only torchtitan splits experts over ranks (expert_parallel_degree), "
    "and it has no DPO loss and trains with AdamW or Adam in bf16 or fp8")


def expert_parallel_gap(
    framework: str, method: str, optimizer: str, precision: str, ep: int
) -> str | None:
    """Why no stack runs expert parallelism `ep` > 1 on this framework for this job, or None
    (`Stack.expert_parallel`; launch-configs.md: Megatron's --expert-model-parallel-size,
    torchtitan's expert_parallel_degree, Megatron-Bridge's expert_model_parallel_size; the
    Hugging Face MoE models keep each layer's experts whole)."""
    who = stack_of(framework).expert_parallel
    if ep <= 1 or who == "always":
        return None
    if who == "never":
        return EXPERTS_NOT_SPLIT_ON_DEEPSPEED
    if method in DPO_METHODS or optimizer != "adam" or precision == "fp16":
        return EXPERTS_SPLIT_BY_TORCHTITAN
    return None


def offloads_states(framework: str, zero: int, tp: int, pp: int, optimizer: str = "adam") -> bool:
    """Whether a layout can keep its model states in host memory (`Layout.state_offload`):
    ZeRO-3 on a stack that offloads, without tensor or pipeline parallelism (what their CPU
    offload is built and tested for), with an optimizer that can step on the CPU there."""
    stack = stack_of(framework)
    allowed = stack.offload_optimizers
    return (
        stack.state_offload
        and zero == 3
        and tp == 1
        and pp == 1
        and optimizer not in GPU_ONLY_OPTIMIZERS
        and (allowed is None or optimizer in allowed)
    )


def hybrid_shard_refused(
    framework: str, zero: int, state_offload: bool = False, ep: int = 1
) -> bool:
    """Whether a layout of this stack and ZeRO stage cannot shard hybrid at all: a stack with no
    HSDP, ZeRO 0/1, CPU offload (FSDP offloads the full shard), expert parallelism."""
    return not stack_of(framework).hybrid_shard or zero < 2 or state_offload or ep > 1


def hybrid_shard_conflict(
    framework: str | None, zero: int | None, cpu_offload: bool | None, zero_field: str = "zero"
) -> str | None:
    """Why a stated setting rules hybrid sharding out, or None: the one wording of a job's check
    and of the layout search's answer to a stated hybrid shard (`zero_field`: where the ZeRO stage
    was stated)."""
    if framework is not None and framework not in HYBRID_SHARD_FRAMEWORKS:
        return say_as("stack.hybrid_framework",
                      "hybrid sharding is FSDP's (HSDP); framework {framework} has none",
                      framework=framework)
    if cpu_offload:
        return say_as("stack.hybrid_offload", "hybrid sharding keeps the shards on the GPUs; CPU "
                      "offload moves the full shard to the host")
    if zero is not None and zero < 2:
        return say_as("stack.hybrid_zero", "hybrid sharding shards ZeRO-2/3 states inside a "
                      "node; {field} is {zero}", field=zero_field, zero=zero)
    return None


def layer_split_gap(framework: str, virtual: int) -> str | None:
    """Why this stack runs no interleaved pipeline of `virtual` stages per rank, or None."""
    if virtual > 1 and not stack_of(framework).interleaved_stages:
        return say_as("stack.no_interleaving", "DeepSpeed's pipeline engine has no interleaved "
                      "stages")
    return None


@dataclass(frozen=True, slots=True)
class SplitFacts:
    """What the split gaps of a stack depend on: the parallel degrees, the model's attention heads
    (0: not known), the sequence length (0: not known), the precision and the attention kernel."""

    tp: int = 1
    pp: int = 1
    cp: int = 1
    heads: int = 0
    seq_len: int = 0
    precision: str = "bf16"
    flash_attention: bool = True


@dataclass(frozen=True, slots=True)
class Gap:
    """One reason a stack cannot run a split: the rule, the field a refusal names, the sentence."""

    rule: str
    field: str
    reason: str


def stack_gaps(framework: str, facts: SplitFacts) -> tuple[Gap, ...]:
    """Every reason `framework` cannot run this split, in the order a refusal states them: the
    sequence's chunks, ring attention without flash kernels, Ulysses' whole heads, FP8 with
    context or pipeline parallelism. The layout search's pruning (`stack_rules.split_gap`) and the
    estimator's layout check (`plan estimate`, a scenario's fixed layout) ask this one function."""
    found = (
        ("sequence_split", "cp", sequence_split_gap(framework, facts.seq_len, facts.cp)),
        (
            "ring_attention",
            "attention",
            ring_attention_gap(framework, facts.cp, facts.flash_attention),
        ),
        ("ulysses_heads", "cp", ulysses_head_gap(framework, facts.heads, facts.tp, facts.cp)),
        ("ulysses_fp8", "cp", ulysses_fp8_gap(framework, facts.precision, facts.cp)),
        ("pipeline_fp8", "pp", pipeline_fp8_gap(framework, facts.precision, facts.pp)),
    )
    return tuple(Gap(rule, field, reason) for rule, field, reason in found if reason)


PURE_BF16_PRECISION = say_as(
    "stack.pure_bf16_precision", "adamw-bf16 is pure BF16 training (weights and moments in bf16): "
    "use precision bf16, not fp16 or fp8 (of the stacks plan export writes for, only DeepSpeed "
    "runs FP8 matmuls on pure BF16 weights, and only with ZeRO 1-3)")


def loss_not_on_megatron(loss: str) -> str:
    """Why a chunked or fused loss cannot be planned on Megatron (scenarios and estimates)."""
    return say_as("stack.loss_not_on_megatron", "{loss} is a PyTorch stack's loss (fsdp, "
                  "deepspeed); Megatron's vocab-parallel cross-entropy holds the whole logits: use "
                  "loss plain, or framework fsdp or deepspeed", loss=loss)


def not_on_megatron(optimizer: str) -> str:
    """Why a PYTORCH_ONLY_OPTIMIZER_NAMES optimizer cannot be planned on Megatron (scenarios and
    estimates)."""
    return say_as("stack.not_on_megatron", "{optimizer} is a PyTorch optimizer (bitsandbytes, "
                  "Adafactor, pure BF16 AdamW) that Megatron-LM does not run (its optimizers are "
                  "adamw, sgd and adamw-precision-aware): use framework fsdp or deepspeed",
                  optimizer=optimizer)
