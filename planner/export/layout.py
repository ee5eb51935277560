"""One planned job's layout as the numbers every launch config needs, with the identities they obey.

Each stack's exporter reads an `ExportLayout`, never the plan directly, so the arithmetic (world
size, gradient accumulation, nodes and GPUs per node) is done once and checked once:

- tp x pp x cp x dp = world size = nodes x GPUs per node;
- micro-batch x gradient-accumulation x dp = global batch (sequences).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from plan.models.catalog import builtin_catalog
from plan.models.errors import UnknownIdError
from plan.models.gpu import GPU
from plan.models.methods import (
    ADAPTER_METHODS,
    DPO_METHODS,
    FULL_METHODS,
    METHOD_NOTES,
    QLORA_METHODS,
)
from plan.models.model_card import ModelCard, MoE
from plan.models.said import say_as
from plan.models.scenario import Job
from plan.planner.estimate.types import LOSS_KINDS, OPTIMIZER_NAME_OF
from plan.planner.plan import JobPlan

STACKS = ("torchrun-fsdp", "deepspeed", "megatron", "torchtitan", "llamafactory", "accelerate")
MANAGED_PLATFORMS = ("aliyun-pai", "tencent-ti-one", "huawei-modelarts")
LORA_ALPHA_RULE = "lora_alpha = 2 x rank (assumed: LLaMA-Factory's default, common in PEFT recipes)"


class ExportError(Exception):
    """The chosen stack cannot express this layout; the message names the missing capability."""


def pure_bf16_note(how: str) -> str:
    """The note an export of pure BF16 AdamW (`adam_bf16`) carries: how its stack spells it, and
    the cost."""
    return (f"optimizer adamw-bf16 (pure BF16): {how}; with no fp32 master copy, updates below "
            "BF16's resolution are lost (the plan counts 8 bytes per parameter, not 16)")


def no_megatron_only(layout: ExportLayout, stack: str, where: str = "") -> None:
    """What only Megatron runs: block recomputation (the other stacks checkpoint every layer or
    none) and the precision-aware distributed optimizer. `where` names the stack's path that lacks
    them."""
    if layout.recompute_layers:
        raise ExportError(say_as(
            "export.layout_no_block_recomputation_recomputes",
            "{stack}: no block recomputation{where} (the plan recomputes {recompute_layers} "
            "layers per model chunk and keeps the rest, Megatron's --recompute-method block); "
            "try --to megatron",
            stack=stack, where=where, recompute_layers=layout.recompute_layers))
    if layout.optimizer == "adam_precision_aware":
        raise ExportError(say_as(
            "export.layout_no_precision_aware_optimizer",
            "{stack}: no precision-aware optimizer{where} (bf16 gradients, fp32 master "
            "weights as 16-bit remainders: Megatron's --use-precision-aware-optimizer); try "
            "--to megatron",
            stack=stack, where=where))


def no_expert_parallel(layout: ExportLayout, stack: str) -> None:
    """Expert parallelism is Megatron's, torchtitan's and LLaMA-Factory's Megatron-Bridge backend's:
    the Hugging Face MoE models that DeepSpeed, accelerate and torchrun run keep each layer's
    experts whole on every rank (sharded by ZeRO/FSDP only; DeepSpeed-MoE needs its own layers in
    the model code)."""
    if layout.ep > 1:
        experts = layout.moe.experts if layout.moe else 0
        raise ExportError(say_as(
            "export.layout_no_expert_parallelism_splits",
            "{stack}: no expert parallelism (the plan splits each layer's {experts} experts "
            "over ep={ep} ranks; a Hugging Face MoE model here keeps them whole on every "
            "rank); try --to megatron, --to torchtitan or --to llamafactory (Megatron-Bridge)",
            stack=stack, experts=experts, ep=layout.ep))


def no_hybrid_shard(layout: ExportLayout, stack: str, where: str = "") -> None:
    """Hybrid sharding (HSDP) is FSDP's: DeepSpeed's ZeRO++ hpZ (zero_hpz_partition_size) shards
    only a secondary copy of the parameters inside a node, and Megatron-LM's HSDP is Megatron-FSDP's
    outer data-parallel group, neither the plan's layout."""
    if layout.shard_group:
        raise ExportError(say_as(
            "export.layout_no_hybrid_sharding_shards",
            "{stack}: no hybrid sharding{where} (the plan shards the model states over the "
            "{shard_group} data-parallel ranks of each node and keeps {dp_replicate} copies "
            "of them, FSDP's HSDP); try --to torchtitan, --to accelerate or --to torchrun-fsdp",
            stack=stack, where=where, shard_group=layout.shard_group,
            dp_replicate=layout.dp_replicate))


@dataclass(frozen=True)
class ExportLayout:
    job: str
    model_id: str
    hf_name: str  # a Hugging Face style name when the catalog has one, else the catalog id
    method: str
    platform: str
    gpu: str
    nodes: int
    gpus_per_node: int
    tp: int
    pp: int
    cp: int
    dp: int
    vpp: int
    zero: int
    micro_batch: int
    grad_accum: int
    global_batch: int
    seq_len: int
    precision: str
    recompute: str
    framework: str
    optimizer: str
    tokens: float
    layers: int
    hidden_size: int
    ffn_hidden_size: int
    num_heads: int
    num_kv_heads: int
    vocab_size: int
    tied_embeddings: bool
    ffn_type: str = "swiglu"
    lora_rank: int | None = None
    lora_targets: str = "all"
    quant_bits: int | None = None  # 4 for QLoRA
    # Megatron's block method: layers per model chunk recomputed
    recompute_layers: int | None = None
    # the plan's assumption for a PyTorch stack: eager modules, or fused/compiled
    kernels: str = "eager"
    # ZeRO-3 with parameters, gradients and optimizer states in host memory
    state_offload: bool = False
    # hybrid sharding (HSDP): the data- and context-parallel ranks of a shard group
    shard_group: int | None = None
    # expert-parallel ranks each MoE layer's routed experts are split over (drawn from dp)
    ep: int = 1
    moe: MoE | None = None  # the model card's MoE shape (None: a dense model)
    # the accelerator's maker (GPU.vendor): huawei = Ascend NPUs (CANN, torch_npu)
    vendor: str = "nvidia"
    # the plan's Young/Daly checkpoint interval (0: none computed)
    checkpoint_interval_h: float = 0.0
    step_time_s: float = 0.0  # the plan's time per optimizer step (0: unknown)
    notes: tuple[str, ...] = field(default_factory=tuple)

    @property
    def dp_shard(self) -> int:
        """Data-parallel ranks the states are sharded over (FSDP's shard dimension; cp ranks apart):
        one under ZeRO-0, the shard group's under hybrid sharding, else all."""
        if self.zero == 0:
            return 1
        return self.shard_group // self.cp if self.shard_group else self.dp

    @property
    def dp_replicate(self) -> int:
        """Copies of the sharded states (FSDP's replicate dimension): dp / dp_shard."""
        return self.dp // self.dp_shard

    @property
    def world_size(self) -> int:
        return self.nodes * self.gpus_per_node

    @property
    def train_steps(self) -> int:
        """Optimizer steps to see the job's tokens (rounded up)."""
        per_step = self.global_batch * self.seq_len
        return max(1, -(-int(self.tokens) // per_step))

    @property
    def on_npu(self) -> bool:
        """Ascend NPUs: CANN and torch_npu instead of CUDA (MindSpeed-LLM's stack)."""
        return self.vendor == "huawei"

    @property
    def full_params(self) -> bool:
        return self.method in FULL_METHODS

    @property
    def managed(self) -> bool:
        return self.platform in MANAGED_PLATFORMS

    def identities(self) -> list[str]:
        """Every identity that fails ('' when all hold)."""
        problems = []
        if self.tp * self.pp * self.cp * self.dp != self.world_size:
            problems.append(f"tp x pp x cp x dp = {self.tp * self.pp * self.cp * self.dp}, "
                            f"world size {self.world_size}")
        if self.dp % self.ep:
            problems.append(f"ep = {self.ep} does not divide dp = {self.dp}")
        if self.micro_batch * self.grad_accum * self.dp != self.global_batch:
            problems.append("micro_batch x grad_accum x dp = "
                            f"{self.micro_batch * self.grad_accum * self.dp}, global batch "
                            f"{self.global_batch}")
        return problems

    @classmethod
    def from_plan(cls, job_plan: JobPlan, job: Job, card: ModelCard) -> ExportLayout:
        """The export numbers of one planned job, read from its typed `JobPlan.layout`
        (`build_layout`). Raises ExportError when the plan's numbers do not close."""
        return build_layout(job_plan, job, card)

    def paragraph(self) -> str:
        adapter = ""
        if self.lora_rank:
            adapter = f", LoRA rank {self.lora_rank} on {self.lora_targets} linear layers"
            if self.quant_bits:
                adapter += f" over a {self.quant_bits}-bit (NF4) base"
        offload = (" with parameters, gradients and optimizer states offloaded to CPU memory"
                   if self.state_offload else "")
        sharding = (f", hybrid-sharded (HSDP: sharded over {self.dp_shard} data-parallel ranks per "
                    "node, "
                    f"replicated {self.dp_replicate} times)" if self.shard_group else "")
        return (f"Job `{self.job}`: {self.method} of {self.hf_name} on {self.world_size}x "
                f"{self.gpu} ({self.nodes} node(s) x {self.gpus_per_node} GPUs) on "
                f"{self.platform}; tp={self.tp} pp={self.pp} "
                f"cp={self.cp}{f' ep={self.ep}' if self.ep > 1 else ''} dp={self.dp} "
                f"vpp={self.vpp}, ZeRO stage {self.zero}{offload}{sharding} ({self.framework} "
                f"execution model), micro-batch {self.micro_batch} x gradient accumulation "
                f"{self.grad_accum} x dp {self.dp} = global batch {self.global_batch} sequences of "
                f"{self.seq_len} tokens, {self.precision}, recompute {self.recompute}, optimizer "
                f"{OPTIMIZER_NAME_OF.get(self.optimizer, self.optimizer)}{adapter}; about "
                f"{self.train_steps} optimizer steps for {self.tokens:,.0f} tokens.")


def _hf_name(card: ModelCard) -> str:
    for name in card.aliases:
        if "/" in name:
            return name
    return card.id


def _divisor_at_most(n: int, cap: int) -> int:
    return max(d for d in range(1, min(n, cap) + 1) if n % d == 0)


def _vendor(gpu_id: str, gpu: GPU | None) -> str:
    """The accelerator's maker: the given card's, else the built-in catalog's (NVIDIA for a card
    it lacks)."""
    if gpu is not None:
        return gpu.vendor
    try:
        return builtin_catalog().gpu(gpu_id).vendor
    except UnknownIdError:
        return "nvidia"


def build_layout(
    job_plan: JobPlan, job: Job, card: ModelCard, gpu: GPU | None = None
) -> ExportLayout:
    """The export numbers of one planned job (`gpu`: its card, from the scenario's catalog; the
    built-in one when None). Raises ExportError when the plan's numbers do not close."""
    lay, figures = job_plan.layout, job_plan.figures
    notes: list[str] = []
    nodes = max(1, job_plan.nodes)
    if job_plan.gpus % nodes:
        raise ExportError(say_as("export.layout_gpus_do_not_split", "{gpus} GPUs do not split "
                                 "evenly over {nodes} nodes; torchrun needs the same processes on "
                                 "every node", gpus=job_plan.gpus, nodes=nodes))
    gpus_per_node = job_plan.gpus // nodes
    dp = job_plan.dp
    global_batch = int(lay.global_batch or job.global_batch or dp * job_plan.micro_batch)
    if global_batch % dp:
        raise ExportError(say_as("export.layout_global_batch_not_multiple", "global batch "
                                 "{global_batch} is not a multiple of dp = {dp}",
                                 global_batch=global_batch, dp=dp))
    replica = global_batch // dp
    micro = job_plan.micro_batch
    if replica % micro:
        fitted = _divisor_at_most(replica, micro)
        notes.append(f"micro-batch {micro} does not divide the {replica} sequences per "
                     "data-parallel replica, which every stack here requires; exported as "
                     f"{fitted} (the largest divisor below it: memory per GPU at or below the "
                     "plan's)")
        micro = fitted
    quant_bits, lora_rank, method_notes = _method_settings(job_plan, job)
    notes += method_notes
    layout = ExportLayout(
        job=job_plan.job,
        model_id=card.id,
        hf_name=_hf_name(card),
        method=job.method,
        platform=job_plan.platform,
        gpu=job_plan.gpu,
        nodes=nodes,
        gpus_per_node=gpus_per_node,
        tp=job_plan.tp,
        pp=job_plan.pp,
        cp=job_plan.cp,
        dp=dp,
        vpp=job_plan.virtual_pipeline,
        zero=job_plan.zero,
        micro_batch=micro,
        grad_accum=replica // micro,
        global_batch=global_batch,
        seq_len=int(lay.seq_len or job.seq_len),
        precision=str(lay.precision or job.precision),
        recompute=job_plan.recompute,
        framework=job_plan.stack,
        optimizer=lay.optimizer,
        tokens=float(job.tokens),
        layers=card.layers,
        hidden_size=card.hidden_size,
        ffn_hidden_size=card.ffn_hidden_size,
        num_heads=card.num_heads,
        num_kv_heads=card.num_kv_heads,
        vocab_size=card.vocab_size,
        tied_embeddings=card.tied_embeddings,
        ffn_type=card.ffn_type,
        lora_rank=lora_rank,
        lora_targets=lay.lora_targets if lay.lora_rank is not None else "all",
        quant_bits=quant_bits,
        recompute_layers=lay.recompute_layers or None,
        kernels=lay.kernels,
        state_offload=lay.state_offload,
        shard_group=lay.shard_group or None,
        ep=job_plan.ep,
        moe=card.moe,
        vendor=_vendor(job_plan.gpu, gpu),
        checkpoint_interval_h=figures.time.checkpoint_interval_h if figures else 0.0,
        step_time_s=figures.estimate.step_time_s if figures else 0.0,
        notes=tuple(notes),
    )
    _check_closes(layout)
    return layout


def _method_settings(job_plan: JobPlan, job: Job) -> tuple[int | None, int | None, list[str]]:
    """(quantization bits, LoRA rank, notes) of the job's method and the plan's assumptions: the
    rank defaulted where the scenario sets none, and what the stack must run as the plan assumed
    (fused kernels, a leaner loss, the DPO loss)."""
    found: list[str] = []
    quant_bits = 4 if job.method in QLORA_METHODS else None
    lora_rank = job.lora_rank if job.method in ADAPTER_METHODS else None
    if job.method in ADAPTER_METHODS and lora_rank is None:
        lora_rank = 16
        found.append("lora_rank not set in the scenario; exported as 16 (assumed: the planner's "
                     "estimate default)")
    if lora_rank:
        found.append(LORA_ALPHA_RULE)
    if job.method in METHOD_NOTES:
        found.append(METHOD_NOTES[job.method])
    if job_plan.assumes_fused_kernels:
        found.append("the plan assumed fused kernels (torch.compile, Liger or Unsloth: fewer saved "
                     "activations than eager modules): torchtitan's config turns compile on; "
                     "elsewhere enable them, or re-plan the job with kernels: eager")
    if job_plan.loss != "plain":
        found.append(f"the plan assumed {LOSS_KINDS[job_plan.loss]}: run one, or re-plan the job "
                     "with loss: plain")
    if job.method in DPO_METHODS:
        found.append("DPO data are (prompt, chosen, rejected) triples; where the stack runs your "
                     "script (deepspeed, accelerate, torchrun) the script computes the DPO loss "
                     "against the reference, as TRL's DPOTrainer does")
    return quant_bits, lora_rank, found


def _check_closes(layout: ExportLayout) -> None:
    """ExportError where the layout's hybrid shard, offload or sizes do not close."""
    if layout.shard_group and (layout.zero < 2 or layout.shard_group % layout.cp
                               or layout.dp % (layout.shard_group // layout.cp)):
        raise ExportError(say_as(
            "export.layout_hybrid_sharding_over",
            "the plan's hybrid sharding over {shard_group} ranks does not divide its dp={dp} "
            "x cp={cp} at ZeRO-{zero}",
            shard_group=layout.shard_group, dp=layout.dp, cp=layout.cp, zero=layout.zero))
    if layout.state_offload and (layout.zero != 3 or layout.tp != 1 or layout.pp != 1
                                 or layout.framework not in ("fsdp", "deepspeed")):
        raise ExportError(say_as(
            "export.layout_offloads_model_states_cpu",
            "the plan offloads model states to CPU memory, which needs ZeRO-3 under FSDP or "
            "DeepSpeed with tp = pp = 1; its layout has zero={zero}, tp={tp}, pp={pp}, "
            "framework {framework}",
            zero=layout.zero, tp=layout.tp, pp=layout.pp, framework=layout.framework))
    problems = layout.identities()
    if problems:
        raise ExportError(say_as("export.layout_does_not_close",
                                 "the plan's layout does not close: {problems}",
                                 problems="; ".join(problems)))
