"""train.sh's flags against the Megatron-LM argument list the export cites (the fallback where
Megatron-LM's own `parse_args` + `validate_args` cannot be installed: no registry package holds
`megatron/training/arguments.py`; megatron-core's wheels carry `megatron/core` only).

The list is read from the sources the exports cite: docs/sources/launch-configs.md section 2
(Megatron-LM main d98e8a6) and docs/sources/mindspeed-llm.md (MindSpeed-LLM v26.1.0 on
core_v0.12.1). validate_args' rules that section 2 states are checked on the values.
"""

from __future__ import annotations

import re
from functools import cache
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
SOURCES = {"pretrain_gpt.py": ("docs/sources/launch-configs.md", "## 2. ", "## 3. "),
           "posttrain_gpt.py": ("docs/sources/mindspeed-llm.md", "## Launch", "## Environment")}
UNLISTED = {
    "--swiglu": "model shape: a SwiGLU MLP",
    "--untie-embeddings-and-output-weights": "model shape: an output layer of its own",
}
"""Flags planner/export/megatron.py writes that the cited list lacks (assumed: Megatron-LM's
`_add_network_size_args` defines both, and its examples/llama scripts pass them; not read from
d98e8a6 here, as no registry holds arguments.py). Named so that a flag added to the export without
a source fails; both belong in docs/sources/launch-configs.md section 2."""
FLAG = re.compile(r"--[a-z][a-z0-9-]*[a-z0-9]")


@cache
def cited_flags() -> frozenset[str]:
    """Every flag the cited sections name (Megatron's, and MindSpeed-LLM's on top of it)."""
    flags: set[str] = set()
    for source, start, end in SOURCES.values():
        text = (ROOT / source).read_text()
        section = text[text.index(start):text.index(end)]
        flags.update(FLAG.findall(section))
    return frozenset(flags)


def _values(words: list[str]) -> dict[str, str | None]:
    """flag -> its value (None for a switch)."""
    out: dict[str, str | None] = {}
    for i, word in enumerate(words):
        if word.startswith("--"):
            following = words[i + 1] if i + 1 < len(words) else "--"
            out[word] = None if following.startswith("--") else following
    return out


def rule_problems(values: dict[str, str | None], world: int) -> list[str]:
    """validate_args' rules as launch-configs.md section 2 states them."""
    def num(flag: str, default: int = 1) -> int:
        value = values.get(flag)
        return int(value) if value is not None and value.lstrip("-").isdigit() else default

    tp, pp = num("--tensor-model-parallel-size"), num("--pipeline-model-parallel-size")
    cp, mbs = num("--context-parallel-size"), num("--micro-batch-size")
    problems = []
    if world % (tp * pp * cp):
        return [f"world size {world} % (tp*pp*cp = {tp * pp * cp})"]
    dp = world // (tp * pp * cp)
    if num("--global-batch-size", mbs * dp) % (mbs * dp):
        problems.append("global batch is not a multiple of micro-batch x dp")
    if num("--num-layers") % pp and "--decoder-first-pipeline-num-layers" not in values:
        problems.append("num_layers % pp")
    if cp > 1 and num("--seq-length") % (2 * cp):
        problems.append("seq_length % (2 x cp)")
    if "--save" in values and "--save-interval" not in values:
        problems.append("--save without --save-interval (assert args.save_interval is not None)")
    if values.get("--recompute-granularity") == "full" and not (
            "--recompute-method" in values and "--recompute-num-layers" in values):
        problems.append("recompute full without --recompute-method and --recompute-num-layers")
    if values.get("--recompute-granularity") == "selective" and "--recompute-method" in values:
        problems.append("recompute selective with --recompute-method")
    if "--overlap-param-gather" in values and not (
            "--use-distributed-optimizer" in values and "--overlap-grad-reduce" in values):
        problems.append("--overlap-param-gather without the distributed optimizer")
    return problems


def megatron_flags(cell: Any, layout: Any, words: list[str]) -> None:
    """train.sh's script arguments: every flag in the cited list, validate_args' rules hold."""
    words = [w for w in words if not w.startswith("$")]  # $MODEL_ARGS: the user's model flags
    unknown = sorted({w for w in words if w.startswith("--")} - cited_flags() - set(UNLISTED))
    if unknown:
        cell.failures.append(f"flags not in the cited argument list: {', '.join(unknown)}")
    problems = rule_problems(_values(words), layout.world_size)
    cell.failures += [f"validate_args rule: {p}" for p in problems]
    if not unknown and not problems:
        cell.fallback.append("Megatron flags against the cited list (parse_args not installable)")
