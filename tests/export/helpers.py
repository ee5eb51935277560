"""Parsing exported files back and checking the layout identities in each stack's own key names."""

from __future__ import annotations

import json
import re
import shlex
import tomllib
from typing import Any

import yaml

from plan.planner.export import ExportLayout, render_stack


def parse_all(files: dict[str, str]) -> dict[str, Any]:
    """Every exported file parsed by its own format (JSON, YAML, TOML; shell scripts as words)."""
    parsed: dict[str, Any] = {}
    for name, text in files.items():
        if name.endswith(".json"):
            parsed[name] = json.loads(text)
        elif name.endswith((".yaml", ".yml")):
            parsed[name] = yaml.safe_load(text)
        elif name.endswith(".toml"):
            parsed[name] = tomllib.loads(text)
        elif name.endswith(".sh"):
            # a comment citing the source comes first
            assert text.startswith("#!/usr/bin/env bash\n# ")
            parsed[name] = shlex.split(text.replace("\\\n", " "), comments=True)
        else:
            raise AssertionError(f"unexpected file {name}")
    return parsed


def flag(words: list[str], name: str) -> str | None:
    for i, word in enumerate(words):
        if word == name:
            return words[i + 1]
        if word.startswith(name + "="):
            return word.split("=", 1)[1]
    return None


def check_identities(stack: str, layout: ExportLayout, files: dict[str, str]) -> None:
    """The exported numbers, read back in the stack's own words, satisfy the layout identities."""
    parsed = parse_all(files)
    w, dp, gb = layout.world_size, layout.dp, layout.global_batch
    assert layout.tp * layout.pp * layout.cp * dp == w
    ds = parsed.get("ds_config.json")
    if ds is not None:
        assert ds["train_micro_batch_size_per_gpu"] * ds["gradient_accumulation_steps"] * dp == gb
        if "train_batch_size" in ds:
            assert ds["train_batch_size"] == gb
        assert ds["zero_optimization"]["stage"] == layout.zero
        assert ds.get("tensor_parallel", {}).get("autotp_size", 1) == layout.tp
        assert ds.get("sequence_parallel_size", 1) == layout.cp
        assert ("bf16" in ds) != ("fp16" in ds)
    if stack == "megatron":
        words = parsed["train.sh"]
        tp, pp = (
            int(flag(words, "--tensor-model-parallel-size")),
            int(flag(words, "--pipeline-model-parallel-size")),
        )
        cp = int(flag(words, "--context-parallel-size"))
        mbs, gbs = int(flag(words, "--micro-batch-size")), int(flag(words, "--global-batch-size"))
        assert w % (tp * pp * cp) == 0 and w // (tp * pp * cp) == dp
        assert gbs == gb and gbs % (mbs * dp) == 0 and gbs // (mbs * dp) == layout.grad_accum
        assert int(flag(words, "--seq-length")) == layout.seq_len
        ep = int(flag(words, "--expert-model-parallel-size") or 1)
        assert ep == layout.ep and dp % ep == 0
        # MindSpeed-LLM's spelling of vpp
        per_chunk = flag(words, "--num-layers-per-virtual-pipeline-stage")
        vpp = layout.layers // (pp * int(per_chunk)) if per_chunk else 1
        assert int(flag(words, "--num-virtual-stages-per-pipeline-rank") or vpp) == layout.vpp
        # validate_args: --save needs --save-interval, a whole number of steps within the run
        assert (
            "--save" not in words or 1 <= int(flag(words, "--save-interval")) <= layout.train_steps
        )
        first = flag(words, "--decoder-first-pipeline-num-layers")
        last = flag(words, "--decoder-last-pipeline-num-layers")
        per = -(-layout.layers // pp)
        if "--account-for-embedding-in-pipeline-split" in words:
            # the embedding and the loss count as a layer each: (L + 2) / pp slots per stage, v
            # equal chunks
            assert "--account-for-loss-in-pipeline-split" in words and first is None
            assert (layout.layers + 2) % pp == 0 and (layout.layers + 2) // pp == per
            assert per % layout.vpp == 0
        elif first is None:
            assert layout.layers % pp == 0 and (layout.layers // pp) % layout.vpp == 0
        # uneven: the middle stages hold ceil(L/pp), the planner's memory estimate; none holds more
        else:
            assert (
                int(first) + int(last) + per * (pp - 2) == layout.layers and 1 <= int(first) <= per
            )
            assert 1 <= int(last) <= per
            assert (
                int(first) % layout.vpp == 0
                and int(last) % layout.vpp == 0
                and per % layout.vpp == 0
            )
        _check_torchrun(words, layout)
    if stack == "torchtitan":
        cfg = parsed["job.toml"]
        par, tr = cfg["parallelism"], cfg["training"]
        degree = par["data_parallel_replicate_degree"] * par["data_parallel_shard_degree"]
        assert degree * par["context_parallel_degree"] * par["tensor_parallel_degree"] \
            * par["pipeline_parallel_degree"] == w
        assert degree == dp and tr["global_batch_size"] == gb and tr["seq_len"] == layout.seq_len
        assert par.get("expert_parallel_degree", 1) == layout.ep
        assert gb % (tr["local_batch_size"] * degree) == 0
        accum = gb // (tr["local_batch_size"] * degree)
        if layout.pp > 1:
            pp_micro = tr["local_batch_size"] // par["pipeline_parallel_microbatch_size"]
            assert tr["local_batch_size"] % par["pipeline_parallel_microbatch_size"] == 0
            assert accum * pp_micro == layout.grad_accum
            stages = -(-(layout.layers + 2) // par["pipeline_parallel_layers_per_stage"])
            assert stages == layout.pp * layout.vpp
        else:
            assert accum == layout.grad_accum
        _check_torchrun(parsed["launch.sh"], layout)
    if stack == "llamafactory":
        cfg = parsed["train.yaml"]
        assert cfg["per_device_train_batch_size"] * cfg["gradient_accumulation_steps"] * dp == gb
        assert cfg["cutoff_len"] == layout.seq_len
        assert cfg.get("lora_rank") == layout.lora_rank
        assert cfg.get("quantization_bit") == layout.quant_bits
        assert (cfg["finetuning_type"] == "lora") == (layout.lora_rank is not None)
        assert cfg.get("expert_model_parallel_size", 1) == layout.ep
        if "tensor_model_parallel_size" in cfg:
            assert cfg["tensor_model_parallel_size"] * cfg["pipeline_model_parallel_size"] \
                * cfg["context_parallel_size"] * dp == w
        if "deepspeed" in cfg:
            assert cfg["deepspeed"] in files
    if stack in ("accelerate", "torchrun-fsdp"):
        cfg = parsed["accelerate_config.yaml"]
        assert cfg["num_processes"] == w and cfg["num_machines"] == layout.nodes
        par = cfg.get("parallelism_config")
        if par:
            assert (
                par["parallelism_config_dp_replicate_size"]
                * par["parallelism_config_dp_shard_size"]
                == dp
            )
            assert par["parallelism_config_tp_size"] * par["parallelism_config_cp_size"] * dp == w
        fsdp = cfg.get("fsdp_config")
        if fsdp:
            assert fsdp["fsdp_reshard_after_forward"] == (layout.zero == 3)
        # accelerate 1.16: FSDP2 needs a dimension to shard
        if cfg["distributed_type"] == "FSDP" and w > 1:
            assert (
                par["parallelism_config_dp_shard_size"] > 1 or par["parallelism_config_cp_size"] > 1
            )
        words = parsed["launch.sh"]
        assert (
            int(flag(words, "--per_device_train_batch_size"))
            * int(flag(words, "--gradient_accumulation_steps"))
            * dp
            == gb
        )


def _check_torchrun(words: list[str], layout: ExportLayout) -> None:
    """torchrun's nnodes and nproc-per-node come from the plan's placement (or the platform's
    variables)."""
    assert "torchrun" in words
    nnodes = flag(words, "--nnodes")
    # MindSpeed-LLM's spelling
    nproc = flag(words, "--nproc-per-node") or flag(words, "--nproc_per_node")
    if re.fullmatch(r"\d+", nnodes or ""):
        assert int(nnodes) == layout.nodes and int(nproc) == layout.gpus_per_node
    else:
        assert layout.managed and nnodes.startswith("$")


def render_checked(
    layout: ExportLayout, stack: str
) -> tuple[dict[str, Any], dict[str, str], list[str]]:
    """One stack's files for the layout, parsed, with the files and notes, after
    `check_identities`."""
    files, notes = render_stack(layout, stack)
    check_identities(stack, layout, files)
    return parse_all(files), files, notes
