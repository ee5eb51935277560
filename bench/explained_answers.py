"""Random scenarios, every answer explained and runnable: how many infeasible answers name no
conflict or offer no way out, and how many planned jobs no training stack can run.

Scenarios are drawn from a seeded mix of what users write: a model and method (DPO included), tokens
and sequence length, sometimes an 8-bit or Adafactor optimizer, FP8 or FP16, fused kernels or a
chunked or fused loss, sometimes a fixed part of the layout (tp, pp, cp, ZeRO, recomputation,
micro-batch, expert parallelism) or a named stack, sometimes a fine-tune after the first job, a
budget from 50 CNY to 1M, a deadline from two hours to two weeks, an ops skill, spot allowed or not,
data from public to regulated, and half the time an owned pool at a site (sometimes with the data
kept there). Each is solved as `plan solve` does. An infeasible answer must name at least one
conflict and at least one relaxation; every job of every plan must render on at least one stack
`plan export` writes for that runs the plan's framework (Megatron: megatron, or llamafactory's
Megatron-Bridge backend; DeepSpeed: deepspeed, llamafactory, accelerate; FSDP: torchrun-fsdp,
torchtitan, llamafactory, accelerate; its speed and memory were estimated for that framework),
except activation offload, which the search takes only where nothing else fits and torchtune runs
(counted apart); and each single relaxation of a budget, deadline, sensitivity, residency or ops
level, applied as a user would write it, must give a plan; and every planned job's memory per GPU
must be within what the plan may use (the card less the policy's headroom, divided by the band's
factor at the scenario's confidence) and keep what its job states (layout fields, framework,
optimizer, precision, loss). The run lists what fails, with its scenario, and counts the outcomes.

Usage: python bench/explained_answers.py [--seed 1] [--count 40]
"""

from __future__ import annotations

import argparse
import copy
import random
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

from plan.constraints.memory import usable_gib
from plan.models.errors import InputError
from plan.models.loading import load_scenario_data
from plan.models.methods import DPO_METHODS
from plan.planner.estimate.types import OPTIMIZER_ALIASES
from plan.planner.export import ExportError, build_layout
from plan.planner.export.writer import render_stack
from plan.planner.plan import Relaxation
from plan.planner.session import SolveOptions
from plan.planner.solve import solve

STACKS_OF_FRAMEWORK = {"megatron": ("megatron", "llamafactory"),
                       "deepspeed": ("deepspeed", "llamafactory", "accelerate"),
                       "fsdp": ("torchrun-fsdp", "torchtitan", "llamafactory", "accelerate")}
"""The `plan export` stacks that run each framework the planner estimates."""

MODELS = (
    "qwen2.5-1.5b",
    "qwen2.5-7b",
    "llama3.1-8b",
    "qwen3-8b",
    "glm-4-9b",
    "qwen2.5-72b",
    "llama3.1-70b",
    "qwen3-moe-30b",
    "mixtral-8x7b",
)
METHODS = ("lora", "qlora", "full_finetune", "continued_pretrain", "dpo", "lora_dpo")
BUDGETS = ("50", "500", "5000", "5万元", "100万元")
DEADLINES = ("2h", "6h", "1d", "3d", "14d")
SENSITIVITY = ("public", "internal", "confidential", "regulated")


def scenario(rng: random.Random, index: int) -> dict[str, Any]:
    job: dict[str, Any] = {
        "id": "j",
        "model": rng.choice(MODELS),
        "method": rng.choice(METHODS),
        "tokens": rng.choice(("10M", "200M", "2B", "20B")),
        "seq_len": rng.choice((2048, 8192)),
        "data": {"sensitivity": rng.choice(SENSITIVITY)},
    }
    if rng.random() < 0.3:
        job["optimizer"] = rng.choice(("paged-adamw-8bit", "adamw-8bit", "adafactor", "adamw-bf16"))
    # no stack runs QLoRA, or pure BF16 AdamW, in FP8 (refused on input)
    if rng.random() < 0.2 and job["method"] != "qlora" and job.get("optimizer") != "adamw-bf16":
        job["precision"] = "fp8"
    elif rng.random() < 0.1 and job["method"] != "qlora" and job.get("optimizer") != "adamw-bf16":
        job["precision"] = "fp16"
    if rng.random() < 0.25:  # a fixed part of the layout
        fixed = {
            key: rng.choice(values)
            for key, values in (
                ("tp", (1, 2, 4)),
                ("pp", (1, 2, 4)),
                ("cp", (1, 2)),
                ("zero", (1, 2, 3)),
                ("recompute", ("none", "selective", "full")),
                ("micro_batch", (1, 2, 4)),
                ("ep", (2, 4)),
            )
            if rng.random() < 0.4
        }
        if fixed:
            job["layout"] = fixed
    if rng.random() < 0.15:
        job["framework"] = rng.choice(("megatron", "deepspeed", "fsdp"))
    if rng.random() < 0.2:
        job["kernels"] = "fused"
    if rng.random() < 0.2:
        job["loss"] = rng.choice(("chunked", "fused"))
    jobs = [job]
    if rng.random() < 0.3:  # a fine-tune after it
        jobs.append(
            {
                "id": "k",
                "model": job["model"],
                "method": rng.choice(("lora", "full_finetune")),
                "tokens": "100M",
                "seq_len": 2048,
                "after": ["j"],
                "data": dict(job["data"]),
            }
        )
    raw: dict[str, Any] = {
        "name": f"random-{index}",
        "currency": "CNY",
        "budget": rng.choice(BUDGETS),
        "deadline": rng.choice(DEADLINES),
        "ops_skill": rng.choice(("none", "basic", "expert")),
        "jobs": jobs,
        "solver": {"work_limit": 30, "time_limit_s": 120},
        "policy": {"allow_spot": rng.random() < 0.3},
    }
    if rng.random() < 0.5:
        count = rng.choice((1, 2, 4, 8))
        per_node = count if rng.random() < 0.5 else 1
        raw["sites"] = [{"id": "site", "jurisdiction": "cn"}]
        raw["owned"] = [
            {
                "id": "pool",
                "site": "site",
                "gpu": rng.choice(("rtx4090", "a800-80gb", "h800")),
                "count": count,
                "gpus_per_node": per_node,
                "cost_per_gpu_hour": 1,
            }
        ]
        residency = "on_premises" if rng.random() < 0.5 else None
        for each in jobs:
            each["data"]["at"] = "site"
            if residency:
                each["data"]["residency"] = residency
    return raw


def applied(raw: dict[str, Any], relaxation: Relaxation) -> dict[str, Any] | None:
    """The scenario with a single relaxation applied as a user would write it, or None for the kinds
    not applied here (policy lists, headroom, optimizers, pool features, joint changes)."""
    changed = copy.deepcopy(raw)
    field, to = relaxation.field, relaxation.to
    if relaxation.kind == "budget":
        changed["budget"] = f"{float(to) + 0.01:.2f}"  # the plan's cost, rounded up to the cent
    elif relaxation.kind == "deadline":
        changed["deadline"] = f"{to:g}{relaxation.unit}"
        for job in changed["jobs"]:
            job.pop("deadline", None)
    elif field == "ops_skill":
        changed["ops_skill"] = to
    elif field.startswith("jobs[") and field.split(".")[-1] in ("sensitivity", "residency"):
        job_id, key = field[5:field.index("]")], field.split(".")[-1]
        next(j for j in changed["jobs"] if j["id"] == job_id)["data"][key] = to
    else:
        return None
    return changed


def dropped(job: dict[str, Any], layout: dict[str, Any], framework: str) -> list[str]:
    """What a planned job's layout (`JobPlan.layout.to_dict()`) drops of what its scenario job
    states."""
    stated = {
        **job.get("layout", {}),
        "framework": job.get("framework"),
        "precision": job.get("precision"),
        "optimizer": OPTIMIZER_ALIASES.get(job.get("optimizer", ""), job.get("optimizer")),
        # (Megatron's loss is refused)
        "loss": job.get("loss") if framework != "megatron" else None,
    }
    planned = {**layout, "framework": framework, "loss": layout.get("loss", "plain")}
    return [f"{key} {value} planned as {planned.get(key)}" for key, value in stated.items()
            if value is not None and planned.get(key) != value]


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--count", type=int, default=40)
    args = parser.parse_args()
    rng = random.Random(args.seed)
    outcomes: Counter[str] = Counter()
    unexplained: list[str] = []
    unrunnable: list[str] = []
    wrong: list[str] = []
    over_memory: list[str] = []
    not_kept: list[str] = []
    planned = torchtune_only = own_megatron_dpo = tried = 0
    started = time.perf_counter()
    walls = []
    for index in range(args.count):
        raw = scenario(rng, index)
        t0 = time.perf_counter()
        try:
            loaded = load_scenario_data(raw, Path(f"random-{index}.yaml"))
        # a fixed field no stack takes (a named stack's optimizer, ...): a one-line refusal
        except InputError:
            outcomes["refused"] += 1
            continue
        result = solve(loaded, SolveOptions())
        walls.append(time.perf_counter() - t0)
        outcomes[result.status] += 1
        if result.status == "infeasible" and not (result.conflicts and result.relaxations):
            unexplained.append(f"random-{index}: conflicts "
                               f"{[c.constraint for c in result.conflicts]}, relaxations "
                               f"{[r.kind for r in result.relaxations]}: {raw}")
        for relaxation in result.relaxations if result.status == "infeasible" else ():
            variant = applied(raw, relaxation)
            if variant is None:
                continue
            tried += 1
            after = solve(
                load_scenario_data(variant, Path(f"random-{index}-relaxed.yaml")), SolveOptions()
            )
            if after.status not in ("optimal", "feasible"):
                wrong.append(f"random-{index}: {relaxation.kind} {relaxation.field} -> "
                             f"{relaxation.to} left it {after.status}: {raw}")
        jobs = {j.id: j for j in loaded.scenario.jobs}
        for plan in result.plans:
            for jp in plan.jobs:
                planned += 1
                lost = dropped(
                    next(j for j in raw["jobs"] if j["id"] == jp.job),
                    jp.layout.to_dict(),
                    jp.framework,
                )
                if lost:
                    not_kept.append(f"random-{index} plan {plan.rank} {jp.job}: {'; '.join(lost)}: "
                                    f"{raw}")
                usable = usable_gib(jp.gpu_memory_gib, loaded.scenario.policy.memory_headroom,
                                    jp.figures.estimate.memory_band_factor)
                if jp.memory_gib_per_gpu > usable + 1e-6:
                    over_memory.append(f"random-{index} plan {plan.rank} {jp.job}: "
                                       f"{jp.memory_gib_per_gpu:.1f} GiB of {usable:.1f} usable on "
                                       f"{jp.gpu}: {raw}")
                layout = build_layout(jp, jobs[jp.job], loaded.models[jp.job])
                refusals = []
                for stack in STACKS_OF_FRAMEWORK[jp.framework]:
                    try:
                        render_stack(layout, stack)
                        break
                    except ExportError as exc:
                        refusals.append(str(exc))
                else:
                    # a last resort the search takes where nothing else fits
                    if jp.recompute == "offload":
                        torchtune_only += 1
                        continue
                    if jp.framework == "megatron" and jobs[jp.job].method in DPO_METHODS:
                        # named by the job: the team's own Megatron DPO (no export has one)
                        own_megatron_dpo += 1
                        continue
                    unrunnable.append(
                        f"random-{index} plan {plan.rank} {jp.job}: {refusals}: {raw}"
                    )
    walls.sort()
    print(f"{args.count} random scenarios (seed {args.seed}) in "
          f"{time.perf_counter() - started:.0f} s; per scenario median "
          f"{walls[len(walls) // 2]:.2f} s, max {walls[-1]:.2f} s")
    for status, n in sorted(outcomes.items()):
        print(f"  {status:12} {n}")
    print(f"infeasible without a conflict and a relaxation: {len(unexplained)}")
    for line in unexplained:
        print("  " + line)
    print(f"planned jobs no stack can run: {len(unrunnable)} of {planned} (and {torchtune_only} "
          "that only torchtune runs: activation offload, where nothing else fits; "
          f"{own_megatron_dpo} DPO jobs named on Megatron, the team's own stack)")
    for line in unrunnable:
        print("  " + line)
    print(f"single relaxations applied that still leave no plan: {len(wrong)} of {tried}")
    for line in wrong:
        print("  " + line)
    print(f"planned jobs over the memory they may use: {len(over_memory)} of {planned}")
    for line in over_memory:
        print("  " + line)
    print(f"planned jobs that drop what their job states: {len(not_kept)} of {planned}")
    for line in not_kept:
        print("  " + line)
    return 1 if unexplained or unrunnable or wrong or over_memory or not_kept else 0


if __name__ == "__main__":
    sys.exit(main())
