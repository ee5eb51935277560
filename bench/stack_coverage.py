"""Every layout the search gives, for any mix of stated fields, runs on a stack `plan export` writes
for its
framework: what the search may choose and what the exports can write must not drift apart.

Draws `--count` random mixes of stated fields (method, framework, precision, optimizer,
recomputation and Megatron's block recomputation, tp, pp, cp, ZeRO stage, CPU offload, loss, hybrid
sharding, kernels, virtual stages, micro-batch) for one model on one cluster, searches each as `plan
estimate` does, and renders the layout found, as a plan carries it (`JobPlan.layout`,
`export.build_layout`), on each stack that runs its framework (`STACKS_OF_FRAMEWORK`,
explained_answers.py). Prints how many were drawn, how many the search found a layout for, and each
kind of layout no stack renders, with every stack's refusal. Activation offload without
recomputation (torchtune's policy, which no export writes; the search takes it only where nothing
else fits) is neither drawn nor rendered, only counted; LoRA or DPO named on Megatron is not drawn
(Megatron-Bridge/NeMo train them; the exports do not write them).

Usage: python bench/stack_coverage.py [--model qwen2.5-7b] [--gpu h100-sxm] [--gpus 16] [--seed 1]
[--count 2000]
"""

from __future__ import annotations

import argparse
import random
import sys
from collections import Counter
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))
from explained_answers import STACKS_OF_FRAMEWORK

from plan.models.catalog import builtin_catalog
from plan.models.methods import ADAPTER_METHODS, QLORA_METHODS
from plan.models.model_card import ModelCard
from plan.models.scenario import Job
from plan.planner.estimate import Cluster, Estimate, LayoutSpec, search_layout
from plan.planner.export import ExportError, build_layout, render_stack
from plan.planner.plan import JobPlan

SEQ_LEN = 8192
GLOBAL_BATCH = 16
FIELDS: dict[str, tuple[Any, ...]] = {
    "framework": ("megatron", "deepspeed", "fsdp"),
    "precision": ("fp8", "fp16"),
    "optimizer": (
        "adam_8bit",
        "paged_adam_8bit",
        "adam_bf16",
        "adafactor",
        "sgd",
        "adam_precision_aware",
    ),
    "recompute": ("none", "selective", "full", "full_offload"),
    "recompute_layers": (1, 2),
    "tp": (1, 2),
    "pp": (1, 2),
    "cp": (1, 2),
    "zero": (0, 1, 2, 3),
    "state_offload": (True, False),
    "loss": ("chunked", "fused"),
    "hybrid_shard": (True, False),
    "fused_modules": (True,),
    "virtual_pipeline": (2,),
    "micro_batch": (1, 3),
}
"""The fields a mix may state, each stated with probability STATED (else searched, or its default:
bf16, AdamW, the plain loss, eager kernels), with one of these values."""
METHODS = (
    "full_finetune",
    "continued_pretrain",
    "pretrain",
    "lora",
    "qlora",
    "dpo",
    "lora_dpo",
    "qlora_dpo",
)
STATED = 0.3


def drawn(rng: random.Random) -> tuple[str, dict[str, Any]] | None:
    """A method and a mix of stated fields, or None for a mix not drawn (module docstring)."""
    method = rng.choice(METHODS)
    mix = {name: rng.choice(values) for name, values in FIELDS.items() if rng.random() < STATED}
    if mix.get("framework") == "megatron" and method not in (
        "full_finetune",
        "continued_pretrain",
        "pretrain",
    ):
        return None
    if method in QLORA_METHODS and mix.get("precision") == "fp8":
        return None  # refused on input (no stack runs QLoRA in FP8)
    return method, mix


def planned(card: ModelCard, method: str, est: Estimate) -> JobPlan:
    """The found layout as a plan of one job carries it."""
    lay = est.layout
    nodes = max(1, lay.gpus // est.cluster.gpus_per_node)
    return JobPlan(job="j", platform="bench", gpu=est.cluster.gpu.id, gpus=lay.gpus, nodes=nodes,
                   layout=lay, billing="owned", start_h=0.0, end_h=1.0, cost=0.0,
                   memory_gib_per_gpu=est.memory.total_gib, gpu_memory_gib=est.gpu_memory_gib,
                   tokens_per_s=est.tokens_per_s, mfu=est.mfu, gpu_hours=1.0)


def refusals(card: ModelCard, method: str, est: Estimate) -> list[str]:
    """Every stack's refusal of the layout, or [] where one of them renders it."""
    job = Job(
        id="j",
        model=card.id,
        method=method,
        tokens=1e9,
        seq_len=SEQ_LEN,
        global_batch=GLOBAL_BATCH,
        lora_rank=16 if method in ADAPTER_METHODS else None,
    )
    try:
        layout = build_layout(planned(card, method, est), job, card)
    except ExportError as exc:
        return [f"build_layout: {exc}"]
    found = []
    for stack in STACKS_OF_FRAMEWORK[est.layout.framework]:
        try:
            render_stack(layout, stack)
            return []
        except ExportError as exc:
            found.append(str(exc))
    return found


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--model", default="qwen2.5-7b")
    parser.add_argument("--gpu", default="h100-sxm")
    parser.add_argument("--gpus", type=int, default=16)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--count", type=int, default=2000)
    args = parser.parse_args()
    catalog = builtin_catalog()
    card, cluster = catalog.model(args.model), Cluster.of(catalog.gpu(args.gpu), args.gpus)
    rng = random.Random(args.seed)
    searched = laid = torchtune_only = 0
    gaps: Counter[str] = Counter()
    examples: dict[str, tuple[str, list[str]]] = {}
    for _ in range(args.count):
        draw = drawn(rng)
        if draw is None:
            continue
        method, mix = draw
        searched += 1
        try:
            best = search_layout(
                card, method, cluster, LayoutSpec(seq_len=SEQ_LEN, global_batch=GLOBAL_BATCH, **mix)
            ).best
        except ValueError:  # a stated mix no stack runs, refused naming the field
            continue
        if best is None:
            continue
        laid += 1
        # torchtune's policy, the search's last resort (module docstring)
        if best.layout.recompute == "offload":
            torchtune_only += 1
            continue
        refused = refusals(card, method, best)
        if refused:
            kind = f"{method} {best.layout.short()}"
            gaps[kind] += 1
            examples.setdefault(kind, (str(mix), refused))
    print(f"{args.model} on {args.gpus} x {args.gpu}, seed {args.seed}: {searched} mixes of stated "
          f"fields searched, {laid} with a layout found ({torchtune_only} of them offloading "
          "activations where nothing else fits: torchtune's policy, not exported)")
    print(f"layouts no stack of their framework renders: {sum(gaps.values())}")
    for kind, n in gaps.most_common():
        stated, why = examples[kind]
        print(f"  {n} x {kind} (stated {stated})")
        for line in why:
            print(f"      {line}")
    return 1 if gaps else 0


if __name__ == "__main__":
    raise SystemExit(main())
