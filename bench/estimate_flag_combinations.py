"""Random combinations of `plan estimate` flags, each answered or refused, never an internal error.

The hostile-input corpus (hostile_inputs.py) changes one thing at a time; layouts break where fixed
fields meet (a fixed pp that leaves no data-parallel group at some searched tp, a fixed cp with a
fixed ep). This draws many flags at once from small pools of valid and borderline values, runs each
command in this process (the CLI's own entry point, so its error handling is what is tested) and
counts the
exits: 0 (an estimate), 2 (a one-line refusal), anything else or the words "internal error" or
"Traceback" (a bug, printed with its command line). Each answer is asked again as JSON, and must
keep every layout field the flags state (a stated --zero 2 is ZeRO-2 in the answer, not a searched
stage; --kernels is left out: it says how a PyTorch stack runs, and Megatron, which the search may
choose, is always fused), and be consistent: "fits" only within its usable memory, its tokens/s
inside its own band, MFU at most 1.

Usage: python bench/estimate_flag_combinations.py [--seed 1] [--count 300]
"""

from __future__ import annotations

import itertools
import json
import os
import random
import sys
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))
os.environ.setdefault("PLAN_CACHE_DIR", "off")  # every estimate computed, none read back

from in_process import is_bug, last_line, run_plan, seed_and_count

from plan.planner.estimate.types import OPTIMIZER_ALIASES

MODELS = (
    "qwen3-32b",
    "llama3.1-8b",
    "llama3.2-1b",
    "mixtral-8x7b",
    "llama3.1-70b",
    "deepseek-v3",
    "qwen2.5-7b",
    "glm-4-9b",
)
METHODS = ("pretrain", "lora", "qlora", "full_finetune", "dpo")
GPUS = ("h100-sxm", "rtx-4090", "a100-80gb")
GPU_COUNTS = (1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 64)
FLAGS: tuple[tuple[str, tuple[object, ...]], ...] = (
    ("--tp", (1, 2, 3, 4, 8)),
    ("--pp", (1, 2, 3, 4, 8, 16)),
    ("--cp", (1, 2, 4)),
    ("--vpp", (1, 2, 3, 4)),
    ("--ep", (1, 2, 4, 8)),
    ("--zero", (0, 1, 2, 3)),
    ("--micro-batch", (1, 2, 3, 7)),
    ("--global-batch", (1, 8, 13, 64, 512)),
    ("--framework", ("megatron", "fsdp", "deepspeed")),
    ("--recompute", ("none", "full", "selective", "full_offload")),
    ("--seq-len", ("2k", "8k", "32k")),
    ("--precision", ("bf16", "fp8", "fp16")),
    ("--cpu-offload", ("on", "off")),
    ("--hybrid-shard", ("on", "off")),
    ("--optimizer", ("adamw", "adamw-8bit", "sgd", "adamw-bf16")),
    ("--kernels", ("eager", "fused")),
    ("--loss", ("plain", "chunked", "fused")),
    ("--lora-targets", ("all", "attention")),
    ("--capacity-factor", (1, 1.25, 2, 0.5)),
)
FLAG_CHANCE = 0.3

STATED_FIELDS = {
    "--tp": "tp",
    "--pp": "pp",
    "--cp": "cp",
    "--vpp": "virtual_pipeline",
    "--ep": "ep",
    "--zero": "zero",
    "--micro-batch": "micro_batch",
    "--global-batch": "global_batch",
    "--framework": "framework",
    "--recompute": "recompute",
    "--precision": "precision",
    "--loss": "loss",
    "--optimizer": "optimizer",
}
"""The flags whose value an answer's JSON layout repeats (the optimizer in the estimator's name)."""


def draw(rng: random.Random) -> list[str]:
    args = [
        "estimate",
        "--model",
        rng.choice(MODELS),
        "--method",
        rng.choice(METHODS),
        "--gpu",
        rng.choice(GPUS),
        "--gpus",
        str(rng.choice(GPU_COUNTS)),
    ]
    for flag, values in FLAGS:
        if rng.random() < FLAG_CHANCE:
            args += [flag, str(rng.choice(values))]
    return args


def run(args: list[str]) -> tuple[str, str]:
    """(outcome, last line of output) of one in-process `plan` command."""
    code, text = run_plan(args)
    if is_bug(code, text, (0, 2)):
        return f"bug (exit {code})", last_line(text)
    return f"exit {code}", last_line(text)


def inconsistent(args: list[str]) -> list[str]:
    """What the JSON answer to `args` (answered with exit 0) drops of the stated flags or
    contradicts itself in."""
    code, text = run_plan([*args, "--format", "json"])
    if code != 0:
        return [f"exit {code} as JSON, 0 as a table"]
    answer = json.loads(text[text.index("{"):])
    layout, problems = answer["layout"], []
    for flag, value in itertools.pairwise(args):
        if flag in STATED_FIELDS:
            wanted = OPTIMIZER_ALIASES.get(value, value) if flag == "--optimizer" else value
            if str(layout[STATED_FIELDS[flag]]) != wanted:
                problems.append(f"{flag} {value} answered {layout[STATED_FIELDS[flag]]}")
    total = answer["memory_gib"]["total"]
    if answer["fits"] and total > answer["usable_memory_gib"] + 1e-6:
        problems.append(f"fits at {total:.1f} GiB of {answer['usable_memory_gib']:.1f} usable")
    low, high = answer["tokens_per_s_range"]
    if not low <= answer["tokens_per_s"] <= high:
        problems.append(f"tokens/s {answer['tokens_per_s']:.4g} outside its band ({low:.4g}, "
                        f"{high:.4g})")
    if answer["mfu"] > 1:
        problems.append(f"MFU {answer['mfu']:.2f}")
    return problems


def main() -> int:
    rng, seed, count = seed_and_count(__doc__, 300)
    outcomes: Counter[str] = Counter()
    wrong = 0
    for _ in range(count):
        args = draw(rng)
        outcome, last = run(args)
        outcomes[outcome.split(" (")[0]] += 1
        if outcome.startswith("bug"):
            print(f"{outcome}: plan {' '.join(args)}\n    {last}")
        elif outcome == "exit 0":
            problems = inconsistent(args)
            wrong += bool(problems)
            if problems:
                print(f"answer: {'; '.join(problems)}: plan {' '.join(args)}")
    print(f"{count} random `plan estimate` flag combinations (seed {seed}): "
          + ", ".join(f"{k} {v}" for k, v in sorted(outcomes.items())))
    print(f"answers that drop a stated flag or contradict themselves: {wrong} of "
          f"{outcomes['exit 0']}")
    return 1 if outcomes["bug"] or wrong else 0


if __name__ == "__main__":
    raise SystemExit(main())
