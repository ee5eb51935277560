"""Random scenarios with many job fields fixed at once, through every command: planned, explained or
refused, never an internal error.

The companion of estimate_flag_combinations.py for scenario files: each scenario is the hardening
tests' starting point (tests/hardening/hostile_base.py) with its job and owned pool redrawn (model,
method, fixed layout fields, framework, GPU counts, batch, sequence, precision, optimizer, kernels,
loss, offload, LoRA targets), then run in this process through `plan solve`, `plan export` to every
stack, `plan pareto`, `plan report` and `plan explain --why-not`. Exits 0-3 are answers (a plan, an
infeasible scenario with its reasons, a one-line refusal); anything else, or the words "internal
error" or "Traceback", is a bug, printed with its scenario.

Usage: python bench/scenario_combinations.py [--seed 1] [--count 50]
"""

from __future__ import annotations

import copy
import os
import random
import sys
import tempfile
from collections import Counter
from pathlib import Path
from typing import Any

import yaml

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))
from in_process import is_bug, last_line, run_plan, seed_and_count

from tests.hardening.hostile_base import HOSTILE_BASE

STACKS = ("torchrun-fsdp", "deepspeed", "megatron", "torchtitan", "llamafactory", "accelerate")
ADAPTER_METHODS = ("lora", "qlora", "lora_dpo", "qlora_dpo")
ANSWERS = (0, 1, 2, 3)


def draw(rng: random.Random) -> dict[str, Any]:
    data = copy.deepcopy(HOSTILE_BASE)
    job, pool = data["jobs"][0], data["owned"][0]
    job["model"] = rng.choice(
        ["llama3-8b", "qwen3-32b", "llama3.2-1b", "mixtral-8x7b", "llama3.1-70b", "qwen2.5-7b"]
    )
    job["method"] = rng.choice(
        ["qlora", "lora", "full_finetune", "pretrain", "dpo", "sft", "lora_dpo"]
    )
    if job["method"] not in ADAPTER_METHODS:
        job.pop("lora_rank", None)
    pool.update(count=rng.choice([1, 2, 3, 4, 8, 16]), gpus_per_node=rng.choice([1, 2, 4, 8]),
                gpu=rng.choice(["rtx4090", "h100-sxm", "a100-80gb", "a800-80gb"]))
    layout = {
        key: rng.choice(values)
        for key, values in (
            ("tp", [1, 2, 4, 8]),
            ("pp", [1, 2, 3, 4, 8]),
            ("cp", [1, 2, 4]),
            ("zero", [0, 1, 2, 3]),
            ("recompute", ["none", "selective", "full", "full_offload", "offload"]),
            ("micro_batch", [1, 3, 8]),
        )
        if rng.random() < 0.35
    }
    if layout:
        job["layout"] = layout
    optional: tuple[tuple[str, list[Any]], ...] = (
        ("framework", ["megatron", "fsdp", "deepspeed"]),
        ("gpus", [1, 2, 3, 8, 12, 64]),
        ("global_batch", [1, 7, 64, 1024]),
        ("seq_len", [512, 8192, 32768]),
        ("precision", ["fp8", "fp16", "bf16"]),
        (
            "optimizer",
            [
                "adamw-8bit",
                "sgd",
                "adafactor",
                "paged-adamw-8bit",
                "adamw-precision-aware",
                "adamw-bf16",
            ],
        ),
        ("kernels", ["fused", "eager"]),
        ("loss", ["chunked", "fused", "plain"]),
        ("cpu_offload", [True, False]),
        ("lora_targets", ["attention", "all"]),
        ("tokens", ["1B", "100B", "1k"]),
        ("hybrid_shard", [True, False]),
    )
    for key, values in optional:
        if rng.random() < 0.3:
            job[key] = rng.choice(values)
    return data


def commands(path: Path, work: Path, rng: random.Random) -> list[list[str]]:
    why_not = rng.choice(
        ["gpus=8", "platform=autodl", "gpu=h100-sxm", "billing=spot", "gpus=1 gpu=rtx4090"]
    )
    return [["solve", str(path), "--format", "json"],
            *(["export", str(path), "--to", stack, "--out", str(work / stack)] for stack in STACKS),
            ["pareto", str(path), "--points", "6", "--output", str(work / "front.json")],
            ["report", str(path), "--output", str(work / "report.html")],
            ["explain", str(path), "--why-not", f"job=a {why_not}"]]


def main() -> int:
    rng, seed, count = seed_and_count(__doc__, 50)
    outcomes: Counter[tuple[str, str]] = Counter()
    with tempfile.TemporaryDirectory(prefix="plan-combinations-") as tmp:
        # a scenario's commands share one estimate cache (the store reopens when the setting
        # changes); it goes with the folder
        os.environ.setdefault("PLAN_CACHE_DIR", str(Path(tmp) / "cache"))
        for i in range(count):
            work = Path(tmp) / f"s{i}"
            work.mkdir()
            path = work / "scenario.yaml"
            path.write_text(yaml.safe_dump(draw(rng), allow_unicode=True), encoding="utf-8")
            for args in commands(path, work, rng):
                code, text = run_plan(args)
                bug = is_bug(code, text, ANSWERS)
                outcomes[(args[0], "bug" if bug else f"exit {code}")] += 1
                if bug:
                    print(
                        f"bug (exit {code}): plan {' '.join(args[:4])}\n    {last_line(text)}\n"
                        + "".join(
                            f"    | {line}\n"
                            for line in path.read_text(encoding="utf-8").splitlines()
                        )
                    )
    print(f"{count} random scenarios (seed {seed}), exits per command:")
    for command in ("solve", "export", "pareto", "report", "explain"):
        row = {kind: n for (cmd, kind), n in outcomes.items() if cmd == command}
        print(f"  {command:8} " + ", ".join(f"{kind} {n}" for kind, n in sorted(row.items())))
    return 1 if any(kind == "bug" for _, kind in outcomes) else 0


if __name__ == "__main__":
    raise SystemExit(main())
