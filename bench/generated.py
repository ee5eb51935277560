"""Generated multi-job scenarios for the speed benches: a lab's N jobs of mixed methods, some in
sequence, one shared owned pool, the whole catalog for the rest. Deterministic for a given N."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

# (model, method, tokens, seq_len): the kinds of jobs a lab's quarter holds (models from the
# catalog).
JOB_KINDS = [
    ("llama3.1-8b", "lora", "200M", 4096),
    ("qwen2.5-7b", "qlora", "100M", 2048),
    ("qwen2.5-14b", "full_finetune", "150M", 4096),
    ("mistral-7b", "lora", "300M", 4096),
    ("glm-4-9b", "lora", "150M", 4096),
    ("qwen2.5-32b", "qlora", "80M", 2048),
    ("llama3.1-8b", "full_finetune", "200M", 4096),
    ("qwen2.5-14b", "continued_pretrain", "500M", 4096),
]


def scenario(jobs: int) -> dict[str, Any]:
    """N jobs: every fourth one waits for the one before it, every fifth holds confidential data
    that must stay in the lab (so on the owned pool)."""
    items: list[dict[str, Any]] = []
    for i in range(jobs):
        model, method, tokens, seq_len = JOB_KINDS[i % len(JOB_KINDS)]
        job: dict[str, Any] = {
            "id": f"j{i:02d}-{method.replace('_', '-')}",
            "model": model,
            "method": method,
            "tokens": tokens,
            "seq_len": seq_len,
            "data": {"sensitivity": "public"},
        }
        if method in ("lora", "qlora"):
            job["lora_rank"] = 16
        if i % 4 == 3:
            job["after"] = [items[-1]["id"]]
        if i % 5 == 4:
            job["data"] = {"sensitivity": "confidential", "residency": "cn", "at": "lab-room"}
        items.append(job)
    return {
        "name": f"generated-{jobs}-jobs",
        "currency": "CNY",
        "budget": f"{20 * jobs}k",
        "deadline": "60d",
        "objective": "cost",
        "academic": True,
        "ops_skill": "basic",
        "sites": [{"id": "lab-room", "jurisdiction": "cn"}],
        "owned": [
            {
                "id": "lab-a800",
                "site": "lab-room",
                "gpu": "a800-80gb",
                "count": 8,
                "gpus_per_node": 8,
                "fabric": {"kind": "none", "gbps_per_gpu": 0},
                "cost_per_gpu_hour": 1.0,
            }
        ],
        "jobs": items,
    }


def write(jobs: int, folder: Path) -> Path:
    path = folder / f"generated_{jobs}_jobs.yaml"
    path.write_text(
        yaml.safe_dump(scenario(jobs), sort_keys=False, allow_unicode=True), encoding="utf-8"
    )
    return path
