"""The scenario every hostile case changes one field of: shared by the hardening tests and the
slower `bench/hostile_inputs.py` corpus, so both probe the same valid starting point."""

from __future__ import annotations

from typing import Any

HOSTILE_BASE: dict[str, Any] = {
    "name": "hostile",
    "budget": "50k",
    "deadline": "30d",
    "sites": [{"id": "lab", "jurisdiction": "cn"}],
    "owned": [{"id": "lab-4090", "site": "lab", "gpu": "rtx4090", "count": 2, "gpus_per_node": 2,
               "cost_per_gpu_hour": 0.5}],
    "jobs": [{"id": "a", "model": "llama3-8b", "method": "qlora", "lora_rank": 16, "tokens": "10M",
              "seq_len": 2048}],
    "solver": {"work_limit": 5, "time_limit_s": 20},
}


def set_field(data: dict[str, Any], dotted: str, value: Any) -> None:
    """Set `jobs.0.tokens`-style paths in place (digits index lists; missing mappings are
    created)."""
    parts = dotted.split(".")
    node: Any = data
    for part in parts[:-1]:
        node = node[int(part)] if part.isdigit() else node.setdefault(part, {})
    last = parts[-1]
    node[int(last) if last.isdigit() else last] = value
