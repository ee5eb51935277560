"""Model states per GPU: weights, gradients and optimizer states of one pipeline stage's parameters.

Model states (Rajbhandari et al. 2020, ZeRO): mixed-precision Adam keeps 2 B of 16-bit weights,
2 B of 16-bit gradients and 12 B of fp32 master weights, momentum and variance per parameter
(16 B/param); pure BF16 training (torchtune's, `adam_bf16`) keeps no fp32 master and BF16 moments
(2 + 2 + 4 B/param). ZeRO-1 shards the 12 B over the data-parallel ranks, ZeRO-2 also the gradients,
ZeRO-3 also the weights; context-parallel ranks shard them too (Megatron and torchtitan shard over
dp x cp). Megatron-LM accumulates gradients in fp32 (`main_grad`), so it keeps 4 B of gradients:
6 + 12/d B/param with its distributed optimizer (Megatron-LM docs/source/distrib_optimizer.md).
Tensor and pipeline parallelism split the parameters first.

LoRA (Hu et al. 2021): frozen 16-bit base, adapters rank x (in + out) per targeted linear layer with
their own gradients and optimizer states. QLoRA (Dettmers et al. 2023): base linear weights in NF4
with double quantization, 4.127 bits/param; embeddings, output layer and norms stay 16-bit; each
linear layer is dequantized to a transient 16-bit copy for its matmul. Sharded (FSDP/ZeRO-3) QLoRA
gathers the 4-bit layers, so its prefetch buffers are 4-bit too (Answer.AI FSDP+QLoRA, 2024).

Hugging Face QLoRA under mixed precision (`upcasts_unquantized`): peft's
`prepare_model_for_kbit_training`, which TRL's SFTTrainer and axolotl call on a 4-bit model, casts
every parameter that is not 4-bit (embeddings, output layer, norms) to fp32. LLaMA-Factory prepares
the model its own way (norms upcast only on request), so its QLoRA sits below this (bench row LF-04,
+12%): counted as the upper side, since a plan's memory must not be short.

DPO (models/methods.py): full DPO holds a frozen 16-bit reference copy of the weights next to the
policy (2 B/param, sharded like the weights under ZeRO-3, no gradients or optimizer states); its
forward runs without autograd, so it keeps no activations beyond the layer being computed, and its
log-probabilities are reduced to one number per sequence. LoRA/QLoRA-DPO reuse the base with the
adapters switched off: no extra weights.
"""

from __future__ import annotations

from plan.models.methods import reference_weight_copies
from plan.models.stacks import stack_of
from plan.planner.estimate.factors import GIB
from plan.planner.estimate.flops import QLORA_BITS_PER_PARAM, ModelShape
from plan.planner.estimate.types import ADAPTER_METHODS, QLORA_METHODS, Layout

WEIGHT_BYTES = 2.0
"""16-bit weights (bf16/fp16; FP8 training keeps bf16 weights and transient fp8 copies)."""
GRAD_BYTES = 2.0
"""16-bit gradients, as in the ZeRO paper's 2 + 2 + 12 accounting (DeepSpeed, FSDP)."""
MEGATRON_GRAD_BYTES = 4.0
"""Megatron-LM's fp32 `main_grad` buffers (accumulate-allreduce-grads-in-fp32, its default)."""
FSDP_ACCUMULATED_GRAD_BYTES = 4.0
"""Unsharded gradients FSDP accumulates across micro-batches without syncing, in its fp32 reduce
dtype."""
PRECISION_AWARE_GRAD_BYTES = 2.0
"""BF16 `main_grad` buffers of the precision-aware optimizer (Megatron-Core 0.16 OptimizerConfig
`main_grads_dtype`; NeMo's `grad_reduce_in_fp32=False`, set by the performance mode of its Llama
recipes, NeMo 2.3.0 nemo/collections/llm/recipes/llama3_70b.py and 17 others)."""
OPTIMIZER_STATE_BYTES = {
    "adam": 12.0,            # fp32 master weights, momentum, variance (Rajbhandari et al. 2020)
    # bitsandbytes 8-bit momentum + variance, no fp32 master (Dettmers et al. 2022)
    "adam_8bit": 2.0,
    "paged_adam_8bit": 2.0,  # the same in CUDA unified memory
    "adafactor": 4.0,        # fp32 master copy; factored second moments ~0 (Shazeer & Stern 2018)
    "sgd": 8.0,              # fp32 master copy + momentum
    # the FP32 master as the BF16 weight plus a 16-bit remainder, and fp32 moments: Megatron-Core
    # 0.16 OptimizerConfig.store_param_remainders ("store the 16-bit FP32 parameter remainders ...
    # excluding the 16 bits shared with the BF16 parameters"); NeMo 2.0.0rc1 (24.07)
    # megatron_base_model.py sets the same in Apex's distributed Adam when the optimizer is FP32 and
    # the model BF16
    "adam_precision_aware": 10.0,
    # pure BF16 training: AdamW's two moments in the parameters' dtype (torch.optim.AdamW allocates
    # them with zeros_like(param)) and the update applied to the BF16 weights, no fp32 master;
    # torchtune's recipes (dtype: bf16, no mixed precision; 0.3.1
    # recipes/full_finetune_distributed.py), LLaMA-Factory's pure_bf16, DeepSpeed's
    # bf16_master_weights_and_grads + bf16_optimizer_states
    "adam_bf16": 4.0,
}
"""Optimizer bytes per trainable parameter."""
ADAM_8BIT_STATE_BYTES = OPTIMIZER_STATE_BYTES["adam_8bit"]
FUSED_STEP_OPTIMIZERS = ("adam_8bit", "paged_adam_8bit")
"""Optimizers run inside the backward pass in full fine-tuning (torchtune's low-memory recipe): one
layer of gradients. Not for adapters: torchtune 0.3.1 steps inside the backward pass
(`optimizer_in_bwd`) only in recipes/full_finetune_single_device.py (and its PPO recipe), its LoRA
recipes after it, as the Hugging Face Trainer and Unsloth's loop do, so every adapter's gradient is
held at the step."""


KBIT_UPCAST_BYTES = 4.0
"""Bytes per parameter of a QLoRA model's unquantized weights (embeddings, output layer, norms)
once peft's `prepare_model_for_kbit_training` has run: "cast all non INT8 parameters to fp32"
(peft 0.13.2, Oct 2024, peft/utils/other.py: every bf16/fp16 parameter that is not a bitsandbytes
`Params4bit` becomes fp32). Checked against Unsloth's "Llama 3.1 (8B) max. context length" table,
its Hugging Face + FA2 column (unsloth 2025.3.19 README, Mar 2025; bench/data/memory_public.csv
UNS-02): the table's linear fit puts 9.7 GiB at zero context, the 4-bit base with 16-bit
embeddings about 6 GiB."""


def upcasts_unquantized(method: str, layout: Layout) -> bool:
    """Whether a QLoRA run holds its unquantized weights and its residual stream in fp32: Hugging
    Face models prepared by peft (`KBIT_UPCAST_BYTES`) and trained under autocast, as the eager
    PyTorch stacks run them. The embedding then outputs fp32 and each residual add of a bf16
    autocast output to it stays fp32, so every layer's input, what gradient checkpointing keeps, is
    fp32. Not counted where the stack does not prepare the model: pure BF16 training (torchtune's
    QLoRA, `adam_bf16`: no autocast, no peft), fused stacks (Unsloth, Liger, torch.compile), which
    load and cast their own, and sharded QLoRA (ZeRO-3/FSDP over several ranks or to the host),
    for which TRL skips the preparation ("one should never call ... prepare_model_for_kbit_training
    when doing QLoRA + FSDP / DS-Zero3", trl 0.12.0 trl/trainer/sft_trainer.py, Oct 2024). The
    upper side for the other Hugging Face stacks: TRL's SFTTrainer given a peft config under bf16
    casts the embeddings and output layer back to bf16 after preparing
    (`peft_module_casting_to_bf16`, the same file), as the QLoRA paper's qlora.py does; a model
    prepared by hand and handed to a trainer keeps them fp32."""
    sharded = layout.zero == 3 and (layout.state_shards > 1 or layout.state_offload)
    return (method in QLORA_METHODS and layout.eager_modules
            and layout.optimizer != "adam_bf16" and not sharded)


def unquantized_weight_bytes(method: str, layout: Layout) -> float:
    """Bytes per parameter of a QLoRA model's 16-bit part (fp32 where `upcasts_unquantized`)."""
    return KBIT_UPCAST_BYTES if upcasts_unquantized(method, layout) else WEIGHT_BYTES


ADAPTER_FP32_BYTES = 4.0
"""Bytes of an adapter parameter, and of its gradient, where the optimizer's states hold no fp32
copy of it: peft makes bf16/fp16 adapter weights fp32 (`autocast_adapter_dtype=True`, the default
since peft 0.12: "cast adapter weights using float16 and bfloat16 to float32, as this is typically
required for stable training", peft 0.13.2 peft/peft_model.py, Oct 2024), and Unsloth builds its
adapters through peft's `get_peft_model` and keeps them fp32 for mixed precision (unsloth
2025.3.19 unsloth/models/llama.py, unsloth/models/_utils.py). AdamW, SGD and Adafactor count an
fp32 master copy in their state bytes (OPTIMIZER_STATE_BYTES), which for an fp32 adapter is the
weight itself, so their totals stand; bitsandbytes' 8-bit AdamW keeps none (its 2 B are the two
moments). DeepSpeed casts the adapters to 16-bit and keeps its own fp32 master (stacks.py
`fp32_adapters`)."""

MASTERLESS_OPTIMIZERS = ("adam_8bit", "paged_adam_8bit")
"""Optimizers whose state bytes count no fp32 master copy of the parameters."""


def adapter_weight_bytes(layout: Layout) -> float:
    """Bytes per adapter parameter (and per gradient): fp32 under an optimizer that keeps no fp32
    master (ADAPTER_FP32_BYTES) on a stack that leaves peft's fp32 adapters so (`fp32_adapters`),
    else the 16-bit weight the states' master copy stands beside."""
    fp32 = (layout.optimizer in MASTERLESS_OPTIMIZERS
            and stack_of(layout.framework).fp32_adapters)
    return ADAPTER_FP32_BYTES if fp32 else WEIGHT_BYTES


def grad_buffer_bytes(layout: Layout) -> float:
    """Bytes per parameter of the gradient buffers a stack accumulates into and reduces:
    Megatron-LM's fp32 `main_grad` under bf16 and FP8 (megatron/training/arguments.py turns
    accumulate_allreduce_grads_in_fp32 on for bf16; fp16 runs keep fp16 buffers), the
    precision-aware optimizer's bf16 ones, 16-bit gradients in the other stacks."""
    if layout.optimizer == "adam_precision_aware":
        return PRECISION_AWARE_GRAD_BYTES
    if stack_of(layout.framework).fp32_grad_buffer and layout.precision != "fp16":
        return MEGATRON_GRAD_BYTES
    return GRAD_BYTES


def stage_states(shape: ModelShape, method: str, layout: Layout, params_stage: float,
            layers_stage: int) -> tuple[float, float, float, float]:
    """(weights, gradients, optimizer, pageable optimizer) GiB for one stage's parameters. Routed
    experts split over ep ranks are sharded by ZeRO over the remaining dp x cp / ep ranks; under
    hybrid sharding everything over the shard group (`Layout.state_shards`)."""
    if layout.ep > 1 and method not in ADAPTER_METHODS:
        experts = shape.layer_expert_params / layout.tp / layout.ep * layers_stage
        dense = _group_states(
            shape,
            method,
            layout,
            params_stage - experts,
            layers_stage,
            layout.state_shards,
            (shape.layer_params - shape.layer_expert_params) / layout.tp,
        )
        routed = _group_states(
            shape,
            method,
            layout,
            experts,
            layers_stage,
            max(1, layout.state_shards // layout.ep),
            experts / max(1, layers_stage),
        )
        return (
            dense[0] + routed[0],
            dense[1] + routed[1],
            dense[2] + routed[2],
            dense[3] + routed[3],
        )
    return _group_states(shape, method, layout, params_stage, layers_stage, layout.state_shards,
                         shape.layer_params / layout.tp)


def _group_states(
    shape: ModelShape,
    method: str,
    layout: Layout,
    params_stage: float,
    layers_stage: int,
    d: int,
    layer_params: float,
) -> tuple[float, float, float, float]:
    """`stage_states` for one group of parameters sharded over `d` ranks; `layer_params`: one
    layer's of them on this GPU (what an optimizer stepped inside the backward pass holds gradients
    for)."""
    t, z = layout.tp, layout.zero
    if method in ADAPTER_METHODS:
        if method in QLORA_METHODS:
            linear = shape.layer_linear_total * layers_stage / t
            base = (linear * QLORA_BITS_PER_PARAM / 8
                    + (params_stage - linear) * unquantized_weight_bytes(method, layout))
        else:
            base = params_stage * WEIGHT_BYTES
        trainable = (shape.adapter_params(layout.lora_rank or 0, layout.lora_targets)
                     * layers_stage / shape.layers / t)
        adapter_bytes = adapter_weight_bytes(layout)
        if adapter_bytes > WEIGHT_BYTES and z == 2 and d > 1:
            # FSDP SHARD_GRAD_OP: the fp32 adapters are its sharded flat parameter, gathered in
            # 16-bit (its mixed precision's param_dtype) and kept so between forward and backward
            adapters = trainable * (WEIGHT_BYTES + adapter_bytes / d)
        else:
            adapters = trainable * adapter_bytes / (d if z == 3 else 1)
        weights = base / (d if z == 3 else 1) + adapters
    else:
        trainable = params_stage
        weights = trainable * WEIGHT_BYTES / (d if z == 3 else 1)
        # full DPO: a frozen 16-bit reference copy, sharded like the weights (no gradients or
        # states)
        weights += (
            reference_weight_copies(method) * params_stage * WEIGHT_BYTES / (d if z == 3 else 1)
        )
    state_bytes = OPTIMIZER_STATE_BYTES.get(layout.optimizer, OPTIMIZER_STATE_BYTES["adam"])
    pageable = 0.0
    if layout.optimizer in FUSED_STEP_OPTIMIZERS and method not in ADAPTER_METHODS:
        # The step runs inside the backward pass, so only about one layer's gradients exist at a
        # time. (under ZeRO-2/3 each layer's gradients are reduce-scattered before its step: its
        # shard is held)
        grads = min(trainable, layer_params) * GRAD_BYTES / (d if z >= 2 else 1)
        optim = trainable * state_bytes / (d if z >= 1 else 1)
    else:
        grad_bytes = grad_buffer_bytes(layout)
        if method in ADAPTER_METHODS:
            grad_bytes = max(grad_bytes, adapter_weight_bytes(layout))  # (the adapters' dtype)
        # FSDP SHARD_GRAD_OP reduce-scatters once per step (no_sync), so with gradient accumulation
        # the gradients are held unsharded until the last micro-batch, in the fp32 reduce dtype of
        # FSDP2's usual mixed-precision policy (torchtitan: reduce_dtype float32). Over one rank
        # there is nothing to shard or defer, and SHARD_GRAD_OP holds what NO_SHARD holds.
        unsharded = (stack_of(layout.framework).defers_stage2_grads and z == 2
                     and layout.micro_batches > 1 and d > 1)
        if unsharded and layout.optimizer != "adam_bf16":  # (pure BF16 reduces in BF16)
            grad_bytes = FSDP_ACCUMULATED_GRAD_BYTES
        grads = trainable * grad_bytes / (d if z >= 2 and not unsharded else 1)
        optim = trainable * state_bytes / (d if z >= 1 else 1)
    if layout.optimizer == "paged_adam_8bit":
        pageable, optim = optim, 0.0
    return weights / GIB, grads / GIB, optim / GIB, pageable / GIB
