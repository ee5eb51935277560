"""Generated multi-job scenarios for the speed benches: a platform team's quarter of N jobs.

As diverse as issue 48 describes: all nine training methods, order chains (pre-training, then
fine-tuning, then preference tuning of the same model), four owned pools of different GPUs with
calendars (windows they are free in), every catalog platform (no platform list), spot allowed, and
mixed data rules (public, internal, confidential kept in its jurisdiction, regulated kept on the
lab's own hardware). Deterministic for a given N; the sizes and windows are made up for the bench.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

# (model, method, tokens, seq_len): the kinds of jobs a quarter holds (models from the catalog),
# every method of plan.models.methods.METHODS at least once.
JOB_KINDS = [
    ("llama3.1-8b", "lora", "200M", 4096),
    ("qwen2.5-7b", "qlora", "100M", 2048),
    ("qwen2.5-14b", "full_finetune", "150M", 4096),
    ("mistral-7b", "lora", "300M", 4096),
    ("glm-4-9b", "lora_dpo", "60M", 2048),
    ("qwen2.5-32b", "qlora", "80M", 2048),
    ("llama3.1-8b", "sft", "200M", 4096),
    ("qwen2.5-14b", "continued_pretrain", "500M", 4096),
    ("qwen2.5-7b", "dpo", "40M", 2048),
    ("qwen3-1.7b", "pretrain", "2B", 4096),
    ("qwen2.5-32b", "qlora_dpo", "30M", 2048),
    ("internlm2.5-7b", "full_finetune", "100M", 4096),
]

# The follow-up of a job in an order chain (same model: the next stage of its recipe).
NEXT_STAGE = {
    "pretrain": ("sft", "100M", 4096),
    "continued_pretrain": ("full_finetune", "150M", 4096),
    "full_finetune": ("dpo", "30M", 2048),
    "sft": ("dpo", "30M", 2048),
    "lora": ("lora_dpo", "40M", 2048),
    "qlora": ("qlora_dpo", "20M", 2048),
}

# Data rules, cycled: most jobs public, the rest internal, confidential (in cn, at the lab) or
# regulated (owned hardware only).
DATA_RULES: list[dict[str, str]] = [
    {"sensitivity": "public"},
    {"sensitivity": "public"},
    {"sensitivity": "internal"},
    {"sensitivity": "public"},
    {"sensitivity": "confidential", "residency": "cn", "at": "lab-room"},
    {"sensitivity": "public"},
    {"sensitivity": "internal", "residency": "cn"},
    {"sensitivity": "regulated", "residency": "cn", "at": "dc-east"},
]

# Four owned pools in two sites, each free for its own window of the quarter (a calendar).
OWNED_POOLS: list[dict[str, Any]] = [
    {"id": "lab-a800", "site": "lab-room", "gpu": "a800-80gb", "count": 8, "gpus_per_node": 8,
     "fabric": {"kind": "none", "gbps_per_gpu": 0}, "cost_per_gpu_hour": 1.0},
    {"id": "lab-4090", "site": "lab-room", "gpu": "rtx4090", "count": 8, "gpus_per_node": 8,
     "fabric": {"kind": "none", "gbps_per_gpu": 0}, "cost_per_gpu_hour": 0.4,
     "available_until": "30d"},
    {"id": "dc-h800", "site": "dc-east", "gpu": "h800", "count": 16, "gpus_per_node": 8,
     "fabric": {"kind": "infiniband", "gbps_per_gpu": 400}, "cost_per_gpu_hour": 4.0,
     "available_from": "10d", "available_until": "50d"},
    {"id": "dc-910b", "site": "dc-east", "gpu": "ascend-910b", "count": 16, "gpus_per_node": 8,
     "fabric": {"kind": "roce", "gbps_per_gpu": 200}, "cost_per_gpu_hour": 2.0,
     "available_from": "20d"},
]


def _job(i: int, items: list[dict[str, Any]], kinds_used: int) -> dict[str, Any]:
    """Job i: the third and fourth of every four are the next stage of the job before them where
    that one's method has a next stage (chains of two or three: pre-training, fine-tuning,
    preference tuning); otherwise the next kind of JOB_KINDS (`kinds_used` taken so far)."""
    previous = items[-1] if items else None
    if i % 4 in (2, 3) and previous is not None and previous["method"] in NEXT_STAGE:
        model = previous["model"]
        method, tokens, seq_len = NEXT_STAGE[previous["method"]]
        after = [previous["id"]]
    else:
        model, method, tokens, seq_len = JOB_KINDS[kinds_used % len(JOB_KINDS)]
        after = []
    job: dict[str, Any] = {
        "id": f"j{i:02d}-{method.replace('_', '-')}",
        "model": model,
        "method": method,
        "tokens": tokens,
        "seq_len": seq_len,
        "data": dict(DATA_RULES[i % len(DATA_RULES)]),
    }
    if method in ("lora", "qlora", "lora_dpo", "qlora_dpo"):
        job["lora_rank"] = 16
    if after:
        job["after"] = after
    return job


def scenario(jobs: int) -> dict[str, Any]:
    """N jobs in one quarter, a budget that grows with N."""
    items: list[dict[str, Any]] = []
    for i in range(jobs):
        items.append(_job(i, items, sum("after" not in job for job in items)))
    return {
        "name": f"generated-{jobs}-jobs",
        "currency": "CNY",
        "budget": f"{20 * jobs}k",
        "deadline": "60d",
        "objective": "cost",
        "academic": True,
        "ops_skill": "basic",
        "sites": [{"id": "lab-room", "jurisdiction": "cn"},
                  {"id": "dc-east", "jurisdiction": "cn"}],
        "owned": [dict(pool) for pool in OWNED_POOLS],
        "policy": {"allow_spot": True},
        "jobs": items,
    }


def write(jobs: int, folder: Path) -> Path:
    path = folder / f"generated_{jobs}_jobs.yaml"
    path.write_text(
        yaml.safe_dump(scenario(jobs), sort_keys=False, allow_unicode=True), encoding="utf-8"
    )
    return path
