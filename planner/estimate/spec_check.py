"""The stated fields of a layout search that no search can repair: `check_spec` raises ValueError
naming the field, before any layout is tried.

A stated value is never swapped for another: where every stack the job may use (the stated one,
else those the search tries, stack_rules.searched_frameworks) has a gap for it, the search refuses
it with the gap's reason.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

from plan.models.methods import DPO_METHODS, QLORA_FP8
from plan.models.stacks import bridge_zero_gap, may_run, named_stack, stack_of, stated_lacks
from plan.planner.estimate.cluster import Cluster
from plan.planner.estimate.flops import ModelShape
from plan.planner.estimate.layout_checks import layout_problems
from plan.planner.estimate.refusal import field_problem, joined
from plan.planner.estimate.search_space import batch_for_replicas, divisors
from plan.planner.estimate.stack_rules import (
    fsdp_stack_gap,
    hybrid_shard_gap,
    megatron_left_out,
    offload_gap,
    searched_frameworks,
    selective_gap,
    uneven_micro_batch_gap,
)
from plan.planner.estimate.stages import split_problem
from plan.planner.estimate.types import (
    ADAPTER_METHODS,
    EXPERTS_NOT_SPLIT_ON_DEEPSPEED,
    EXPERTS_SPLIT_BY_TORCHTITAN,
    MEGATRON_CP_SEQUENCE,
    MEGATRON_ONLY_OPTIMIZERS,
    QLORA_METHODS,
    Layout,
    LayoutSpec,
    expert_parallel_gap,
    interleaving_refused,
    ring_attention_gap,
    ulysses_head_gap,
)
from plan.planner.i18n.said import Joined, say, say_as

_Gap = TypeVar("_Gap")


def check_spec(shape: ModelShape, method: str, cluster: Cluster, spec: LayoutSpec,
               lora_rank: int | None) -> None:
    """Raise ValueError for fixed fields that no search can repair (the first check that fails:
    the fields' own values, the split and the method, the stacks' gaps, the batch, then the
    estimator's problems with a probe layout of the stated fields)."""
    problems = _field_problems(shape, method, cluster, spec)
    if problems:
        raise ValueError(joined(problems))
    _check_split_and_method(shape, method, cluster, spec)
    _check_stack_gaps(shape, method, cluster, spec)
    _check_batch(cluster, spec)
    _check_probe(shape, method, cluster, spec, lora_rank)


def _every_stack_gap(method: str, spec: LayoutSpec,
                     gap_of: Callable[[str], _Gap | None]) -> tuple[_Gap, str] | None:
    """Where every stack the job may use (the stated one, else those searched) has a gap for a
    stated field: the first stack's, and the clause saying why Megatron was left out (' (...)', or
    '' with a stated stack or none left out); else None."""
    stacks = (spec.framework,) if spec.framework else searched_frameworks(method, spec)
    gaps = [gap_of(fw) for fw in stacks]
    first = gaps[0]
    if first is None or not all(gaps):
        return None
    left_out = "" if spec.framework else megatron_left_out(method, spec)
    return first, say_as("refusal.left_out", " ({reason})", reason=left_out) if left_out else ""


def _field_problems(shape: ModelShape, method: str, cluster: Cluster,
                    spec: LayoutSpec) -> list[str]:
    """Stated values out of range on their own: a split that does not divide the GPUs, a count
    below 1, FP8 with QLoRA, block recomputation off Megatron, a hybrid shard no layout runs."""
    gpus = cluster.gpus
    tp = spec.tp or 1
    problems: list[str] = []
    if spec.tp is not None and (spec.tp < 1 or gpus % spec.tp):
        problems.append(field_problem("tp", say_as(
            "refusal.tp_gpus", "{tp} does not divide the {gpus} GPUs", tp=spec.tp, gpus=gpus)))
    if spec.pp is not None and (spec.pp < 1 or gpus % (tp * spec.pp)):
        problems.append(field_problem("pp", say_as(
            "refusal.tp_pp_gpus", "tp x pp = {tp} x {pp} does not divide the {gpus} GPUs", tp=tp,
            pp=spec.pp, gpus=gpus)))
    for name in ("micro_batch", "global_batch", "virtual_pipeline", "cp", "ep"):
        value = getattr(spec, name)
        if value is not None and value < 1:
            problems.append(_at_least_one(name, value))
    if spec.seq_len < 1:
        problems.append(_at_least_one("seq_len", spec.seq_len))
    if method in QLORA_METHODS and spec.precision == "fp8":
        problems.append(QLORA_FP8)
    if spec.recompute_layers is not None and (not 1 <= spec.recompute_layers <= shape.layers
                                              or spec.recompute not in (None, "full")
                                              or stated_lacks(spec.framework, "block_recompute")):
        problems.append(field_problem("recompute_layers", say_as(
            "refusal.recompute_layers_range", "{layers} layers per chunk is Megatron's block "
            "recomputation: 1 to the model's {model_layers} layers, with recompute full and "
            "framework megatron", layers=spec.recompute_layers, model_layers=shape.layers)))
    if spec.hybrid_shard:
        gap = hybrid_shard_gap(spec, cluster)
        if gap:
            problems.append(field_problem("hybrid_shard", gap))
    return problems


def _at_least_one(name: str, value: object) -> str:
    return field_problem(name, say_as("refusal.at_least_one", "must be at least 1, got {value}",
                                      value=value))


def _check_split_and_method(shape: ModelShape, method: str, cluster: Cluster,
                            spec: LayoutSpec) -> None:
    """A stated cp that does not divide the GPUs, stated pipeline stages no stack splits the
    layers into, and options the method's stacks do not have (block recomputation for QLoRA or
    searched DPO, the precision-aware optimizer for adapters or DPO)."""
    gpus, tp, pp = cluster.gpus, spec.tp or 1, spec.pp or 1
    if spec.cp is not None and (spec.cp < 1 or gpus % (tp * pp * spec.cp)):
        raise ValueError(field_problem("cp", say_as(
            "refusal.tp_pp_cp_gpus", "tp x pp x cp = {tp} x {pp} x {cp} does not divide the {gpus} "
            "GPUs", tp=tp, pp=pp, cp=spec.cp, gpus=gpus)))
    if spec.pp is not None and spec.pp > 1:
        frameworks = (spec.framework,) if spec.framework else searched_frameworks(method, spec)
        splits = [split_problem(shape.layers, spec.pp, spec.virtual_pipeline or 1, fw)
                  for fw in frameworks]
        if all(splits):
            field_name = "virtual_pipeline" if (spec.virtual_pipeline or 1) > 1 else "pp"
            raise ValueError(field_problem(field_name, joined([p for p in splits if p])))
    if (spec.recompute_layers and method in QLORA_METHODS
            and may_run(spec.framework, "block_recompute")):
        raise ValueError(field_problem("recompute_layers", say_as(
            "refusal.recompute_layers_qlora", "block recomputation is Megatron's, and Megatron has "
            "no 4-bit QLoRA path; use --recompute full")))
    if spec.recompute_layers and method in DPO_METHODS and spec.framework is None:
        # (named, Megatron is kept: the team's own Megatron DPO, as `megatron_left_out` says)
        raise ValueError(field_problem("recompute_layers", say_as(
            "refusal.recompute_layers_dpo", "block recomputation is Megatron's, and no exported "
            "Megatron stack trains DPO (LLaMA-Factory's Megatron-Bridge backend trains pt and "
            "sft); use --recompute full, or name framework megatron for your own Megatron DPO")))
    if spec.optimizer == "adam_precision_aware" and (method in ADAPTER_METHODS
                                                     or method in DPO_METHODS):
        raise ValueError(field_problem("optimizer", say_as(
            "refusal.precision_aware_adapter", "the precision-aware optimizer is Megatron's, and "
            "the one stack written for {method} on Megatron (LLaMA-Factory's Megatron-Bridge "
            "backend) has none; use adamw", method=method)))
    if spec.zero is not None and spec.framework is not None and (
            why := bridge_zero_gap(spec.framework, method, spec.zero)):
        raise ValueError(field_problem("zero", say_as(
            "refusal.bridge_zero", "{why}; use zero 0 or 1, or framework fsdp or deepspeed",
            why=why)))


def _check_stack_gaps(shape: ModelShape, method: str, cluster: Cluster, spec: LayoutSpec) -> None:
    """A stated split, expert parallelism, context parallelism, eager attention or recomputation
    policy that no stack the job may use runs (stack_rules)."""
    if spec.tp is not None or spec.pp is not None:  # a stated split no stack the job may use runs
        split_gap = _every_stack_gap(method, spec, lambda fw: fsdp_stack_gap(
            method, spec.optimizer, spec.precision, spec.tp or 1, spec.pp or 1)
            if stack_of(fw).recipe_family else None)
        if split_gap:
            (field_name, why), left_out = split_gap
            raise ValueError(field_problem(field_name, say_as(
                "refusal.no_stack_split", "{why}; no stack runs {method} at {field}={value}"
                "{left_out}", why=why, method=method, field=field_name,
                value=getattr(spec, field_name), left_out=left_out)))
    if (spec.ep or 1) > 1 and shape.is_moe and method not in ADAPTER_METHODS:
        experts_gap = _every_stack_gap(method, spec, lambda fw: expert_parallel_gap(
            fw, method, spec.optimizer, spec.precision, spec.ep or 1))
        if experts_gap:
            why, left_out = experts_gap
            raise ValueError(field_problem("ep", say_as(
                "refusal.no_stack_ep", "{why}; no stack runs {method} at ep={ep}{left_out}",
                why=why, method=method, ep=spec.ep, left_out=left_out)))
    stated = named_stack(spec.framework)
    if stated is not None and stated.context_parallel == "ulysses" and (spec.cp or 1) > 1:
        # (Ulysses: whole heads per rank at some tp)
        tps = [spec.tp] if spec.tp else [t for t in divisors(cluster.gpus) if shape.heads % t == 0]
        head_gaps = [ulysses_head_gap(stated.framework, shape.heads, t, spec.cp or 1) for t in tps]
        if head_gaps and all(head_gaps):
            raise ValueError(field_problem("cp", (head_gaps[0] or "") if spec.tp else say_as(
                "refusal.at_any_tp", "{gap} at any tensor-parallel size", gap=head_gaps[0])))
    if (spec.cp or 1) > 1 and not spec.flash_attention:
        ring_gap = _every_stack_gap(method, spec,
                                    lambda fw: ring_attention_gap(fw, spec.cp or 1, False))
        if ring_gap:
            why, left_out = ring_gap
            stacks = spec.framework or say_as("refusal.stacks_searched",
                                              "the stacks searched for {method}", method=method)
            raise ValueError(field_problem("attention", say_as(
                "refusal.no_stack_eager", "{why}; {stacks} cannot run eager attention at cp={cp}"
                "{left_out}; use flash attention, cp 1 or framework deepspeed", why=why,
                stacks=stacks, cp=spec.cp, left_out=left_out)))
    if spec.recompute == "selective":
        recompute_gap = _every_stack_gap(method, spec, lambda fw: selective_gap(
            method, spec.optimizer, spec.precision, fw))
        if recompute_gap:
            why, left_out = recompute_gap
            raise ValueError(field_problem("recompute", say_as(
                "refusal.no_stack_selective", "{why}; no stack runs {method} with selective "
                "recomputation{left_out}; use full or none", why=why, method=method,
                left_out=left_out)))
    if spec.recompute:
        gap = offload_gap(spec.recompute, spec.tp or 1, spec.pp or 1, spec.cp or 1, spec.ep or 1)
        if gap:
            raise ValueError(field_problem("recompute", say_as(
                "refusal.offload_fixed", "{gap}; the job fixes {recompute} with tp={tp} pp={pp} "
                "cp={cp}{ep}", gap=gap, recompute=spec.recompute, tp=spec.tp or 1,
                pp=spec.pp or 1, cp=spec.cp or 1,
                ep=f" ep={spec.ep}" if (spec.ep or 1) > 1 else "")))


def _check_batch(cluster: Cluster, spec: LayoutSpec) -> None:
    """A stated interleaving Megatron cannot schedule with the stated batch, and a stated
    micro-batch that divides no replica's share on a stack that needs it to."""
    gpus, tp, pp, cp = cluster.gpus, spec.tp or 1, spec.pp or 1, spec.cp or 1
    dp = gpus // (tp * pp * cp)
    if ((spec.virtual_pipeline or 1) > 1 and spec.tp is not None
            and spec.pp is not None and spec.global_batch is not None):
        gb = batch_for_replicas(spec.global_batch, dp)
        if gb is not None and interleaving_refused(spec.framework, spec.virtual_pipeline or 1,
                                                   gb // dp, pp):
            raise ValueError(field_problem("virtual_pipeline", say_as(
                "refusal.interleave_batch", "Megatron's interleaved schedule needs at least pp = "
                "{pp} micro-batches per step; a global batch of {gb} over dp = {dp} gives at most "
                "{most}", pp=pp, gb=gb, dp=dp, most=gb // dp)))
    if (spec.micro_batch and spec.framework is not None and stack_of(spec.framework).exact_batch
            and spec.global_batch is not None):
        fixed_split = spec.tp is not None and spec.pp is not None
        dps = (dp,) if fixed_split else divisors(gpus // (tp * pp * cp))
        shares = {d: gb // d for d in dps
                  if (gb := batch_for_replicas(spec.global_batch, d)) is not None}
        if shares and all(uneven_micro_batch_gap(spec, spec.framework, share)
                          for share in shares.values()):
            over = Joined([say_as("refusal.share_over_dp", "{share} over dp = {dp}", share=share,
                                  dp=d) for d, share in shares.items()], "flag.sep")
            raise ValueError(field_problem("micro_batch", say(
                "refusal.shares_undivided", framework=spec.framework, over=over,
                micro_batch=spec.micro_batch)))


def _check_probe(shape: ModelShape, method: str, cluster: Cluster, spec: LayoutSpec,
                 lora_rank: int | None) -> None:
    """The estimator's problems (`layout_problems`) with a probe layout of the stated fields, less
    those of fields the search still chooses; and a LoRA rank below 1."""
    gpus, tp, pp, cp = cluster.gpus, spec.tp or 1, spec.pp or 1, spec.cp or 1
    dp = gpus // (tp * pp * cp)
    default_fw = ("fsdp" if method in QLORA_METHODS or (spec.zero or 0) >= 2
                  else searched_frameworks(method, spec)[0])
    probe_fw = spec.framework or default_fw
    # (Megatron's distributed optimizer is zero 1: a Megatron-only optimizer is probed there;
    # DeepSpeed keeps pure BF16 AdamW's states at ZeRO stage 1-3 only)
    probe_zero = spec.zero if spec.zero is not None else (
        1 if (stack_of(probe_fw).distributed_optimizer
              and spec.optimizer in MEGATRON_ONLY_OPTIMIZERS)
        or (stack_of(probe_fw).pure_bf16_needs_zero and spec.optimizer == "adam_bf16") else 0)
    probe = Layout(tp=tp, pp=pp, dp=dp, cp=cp, framework=probe_fw, zero=probe_zero,
                   recompute=spec.recompute or "none",
                   micro_batch=spec.micro_batch or 1,
                   # (pp micro-batches under interleaving, which Megatron needs: the batch is
                   # checked above)
                   global_batch=dp * (spec.micro_batch or 1) * (
                       pp if (spec.virtual_pipeline or 1) > 1 else 1),
                   seq_len=spec.seq_len, precision=spec.precision, sequence_parallel=False,
                   lora_rank=lora_rank, optimizer=spec.optimizer, lora_targets=spec.lora_targets,
                   virtual_pipeline=spec.virtual_pipeline or 1, ep=spec.ep or 1,
                   capacity_factor=spec.capacity_factor)
    if method in ADAPTER_METHODS and spec.lora_rank < 1:
        raise ValueError(_at_least_one("lora_rank", spec.lora_rank))
    # (the probe's dp is the layout's only where tp and pp are given)
    searched_dp = (f"ep: {probe.ep} does not divide the {dp} data-parallel"
                   if spec.tp is None or spec.pp is None else "\0")
    searched = (
        "global_batch", "tp:" if spec.tp is None else "\0", "pp:" if spec.pp is None else "\0",
        "virtual_pipeline" if spec.virtual_pipeline is None or (spec.pp is None and gpus > 1)
        else "\0",
        searched_dp,
        # (with the stack searched, one that splits the sequence so runs it)
        f"cp: {MEGATRON_CP_SEQUENCE}" if spec.framework is None else "\0",
        # (a stack that splits experts is searched; a stated ep is checked above)
        "ep: " + EXPERTS_NOT_SPLIT_ON_DEEPSPEED,
        "ep: " + EXPERTS_SPLIT_BY_TORCHTITAN)
    fixed_problems = [p for p in layout_problems(shape, method, cluster, probe)
                      if not p.startswith(searched)]
    if fixed_problems:
        raise ValueError(joined(fixed_problems))
