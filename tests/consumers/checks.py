"""Exported files read by their consumers' own code (issue 50 item 2): used by
tests/consumers/test_consumers.py and bench/consumers.py.

Each consumer's package is imported lazily; one that is not installed, or installed at another
version than the export names, is a skipped check with the reason, never a failure. Versions named
by the exports: torch 2.14.1's torchrun (torch 2.13.0+cpu is the CPU wheel a registry serves here:
`torch/distributed/run.py`'s parser is the one the launch lines use, --standalone, --nnodes,
--node-rank, --nproc-per-node, --master-addr, --master-port, -m), DeepSpeed 0.19.6 (main edaa722),
accelerate 1.16.0, torchtitan 0.2.2, LLaMA-Factory 0.9.5.
"""

from __future__ import annotations

import json
import re
import shlex
import tempfile
from dataclasses import dataclass, field
from importlib import metadata
from pathlib import Path
from typing import Any

from tests.consumers.llamafactory_check import llamafactory as _llamafactory
from tests.consumers.megatron_check import exported_env, megatron_parse
from tests.consumers.megatron_flags import megatron_flags as _megatron_flags

ROOT = Path(__file__).resolve().parents[2]
NAMED = {"torch": ("2.13", "2.14"), "deepspeed": ("0.19",), "accelerate": ("1.16.0",),
         "torchtitan": ("0.2.2",), "llamafactory": ("0.9.5",)}
"""Releases accepted for each consumer: the named one (torch: the 2.13/2.14 parsers, the same
launch options; DeepSpeed: the 0.19 series, whose config classes the export's 0.19.6 and the
0.19.8 read in docs/sources/export-consumers.md share)."""
INSTALL = "pip install -e '.[consumers]'"
SHELL_VALUES = {"NODE_RANK": "0", "MASTER_ADDR": "10.0.0.1", "MASTER_PORT": "29500",
                "WORLD_SIZE": "{nodes}", "RANK": "0", "NPROC_PER_NODE": "{gpn}",
                "GPU_NUM_PER_NODE": "{gpn}", "MA_NUM_HOSTS": "{nodes}", "VC_TASK_INDEX": "0",
                "MA_NUM_GPUS": "{gpn}", "VC_WORKER_HOSTS%%,*": "10.0.0.1",
                "DATA_PATH": "/data/corpus_text_document", "CKPT_DIR": "/checkpoints/job"}
"""What a node's shell puts in the launch lines' variables (node 0; the managed platforms' node
counts), so that the consumer parses the words it will see."""


@dataclass
class Cell:
    """What one stack's export of one job came to: refused, or each consumer's parse and start."""

    refused: str = ""
    parsed: list[str] = field(default_factory=list)
    started: list[str] = field(default_factory=list)
    fallback: list[str] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)
    failures: list[str] = field(default_factory=list)

    def short(self) -> str:
        if self.refused:
            return "refused"
        if self.failures:
            return "FAIL"
        text = "parsed" if self.parsed else ""
        if self.fallback:
            text = (text + ", " if text else "") + "cited list"
        if self.started:
            text += " + started"
        if self.skipped:
            text += " (some skipped)" if text else "skipped"
        return text or "nothing checked"


def summary(cells: list[Cell]) -> str:
    written = [c for c in cells if not c.refused]
    return (f"{len(cells)} exports: {len(cells) - len(written)} refused, {len(written)} written; "
            f"{sum(bool(c.parsed) for c in written)} parsed by the consumer's code, "
            f"{sum(bool(c.started) for c in written)} started to where a GPU is needed, "
            f"{sum(bool(c.fallback) for c in written)} checked against a cited argument list, "
            f"{sum(bool(c.failures) for c in written)} failed")


def installed(name: str) -> str | None:
    """Why `name` cannot be checked here (not installed, or another release), or None."""
    try:
        version = metadata.version(name)
    except metadata.PackageNotFoundError:
        return f"{name} is not installed ({INSTALL})"
    if not version.startswith(NAMED[name]):
        return f"{name} {version} is installed, the export names {' or '.join(NAMED[name])}"
    return None


def shell_words(text: str, layout: Any) -> list[list[str]]:
    """Each command line of a shell script (continuations joined, comments and guards left out),
    its variables as node 0 would see them."""
    values = {k: v.format(nodes=layout.nodes, gpn=layout.gpus_per_node)
              for k, v in SHELL_VALUES.items()}
    lines = text.replace("\\\n", " ").splitlines()
    out = []
    for line in lines:
        stripped = line.strip()
        if not stripped or stripped.startswith(("#", ":", "set ", "test ", "python -c", "source ",
                                                "export ")):
            continue
        for name, value in values.items():
            stripped = stripped.replace("${" + name + "}", value).replace("$" + name, value)
        out.append(shlex.split(stripped, comments=True))
    return out


def check_export(stack: str, layout: Any, files: dict[str, str] | str,
                 llamafactory_python: str | None = None,
                 megatron_python: str | None = None) -> Cell:
    """Every file of one export through its consumer (`files`: the refusal when a str;
    `*_python`: the interpreters of the consumers that live in environments of their own)."""
    if isinstance(files, str):
        return Cell(refused=files)
    cell = Cell()
    with tempfile.TemporaryDirectory(prefix="consumers-") as tmp:
        folder = Path(tmp)
        for name, text in files.items():
            (folder / name).write_text(text)
        for name, text in files.items():
            _one_file(cell, stack, layout, name, text, folder,
                      (llamafactory_python, megatron_python))
    return cell


def _one_file(cell: Cell, stack: str, layout: Any, name: str, text: str, folder: Path,
              pythons: tuple[str | None, str | None]) -> None:
    llamafactory_python, megatron_python = pythons
    try:
        if name.endswith(".sh"):
            env = exported_env(text)
            for words in shell_words(text, layout):
                _launch_line(cell, layout, words, folder, (env, megatron_python))
        elif name == "ds_config.json":
            _deepspeed_config(cell, layout, json.loads(text))
        elif name == "accelerate_config.yaml":
            _accelerate_config(cell, layout, folder / name)
        elif name == "job.toml":
            _torchtitan(cell, layout, folder / name)
        elif name == "train.yaml":
            _llamafactory(cell, layout, folder / name, llamafactory_python)
    except Exception as exc:  # a consumer's refusal, in its own words
        first = (str(exc) or "-").splitlines()[0][:300]
        cell.failures.append(f"{name}: {type(exc).__name__}: {first}")


def _launch_line(cell: Cell, layout: Any, words: list[str], folder: Path,
                 megatron: tuple[dict[str, str], str | None]) -> None:
    env = [w for w in words if re.fullmatch(r"[A-Z_]+=\S*", w)]
    words = words[len(env):]
    if not words:
        return
    if words[0] == "torchrun":
        _torchrun(cell, layout, words[1:], megatron)
    elif words[0] == "deepspeed":
        _deepspeed_launcher(cell, layout, words[1:])
    elif words[0:2] == ["accelerate", "launch"]:
        _accelerate_launch(cell, layout, words[2:], folder)
    elif words[0] == "llamafactory-cli":
        if words[1:2] != ["train"]:
            cell.failures.append(f"llamafactory-cli {words[1:2]}: not the train command")
    else:
        cell.failures.append(f"unexpected command {words[0]!r}")


def _torchrun(cell: Cell, layout: Any, args: list[str],
              megatron: tuple[dict[str, str], str | None] = ({}, None)) -> None:
    """The launch line; Megatron-LM's script arguments by its own parser where `megatron` names
    an interpreter that has it (else, and for MindSpeed-LLM, against the cited list)."""
    why = installed("torch")
    if why:
        cell.skipped.append(why)
        return
    import torch.distributed.run as run

    parsed = run.get_args_parser().parse_args(args)
    config, *_ = run.config_from_args(parsed)
    cell.parsed.append("torchrun")
    assert config.nproc_per_node == layout.gpus_per_node, (config.nproc_per_node, layout)
    assert config.min_nodes == config.max_nodes == layout.nodes, (config.min_nodes, layout.nodes)
    script_args = list(parsed.training_script_args)
    env, megatron_python = megatron
    if parsed.training_script == "pretrain_gpt.py" and megatron_python and not layout.on_npu:
        megatron_parse(cell, layout, [parsed.training_script, *script_args], env,
                       megatron_python)
    elif parsed.training_script in ("pretrain_gpt.py", "posttrain_gpt.py"):
        _megatron_flags(cell, layout, script_args)
    cell.started.append("torchrun LaunchConfig")


def _deepspeed_launcher(cell: Cell, layout: Any, args: list[str]) -> None:
    why = installed("deepspeed")
    if why:
        cell.skipped.append(why)
        return
    from deepspeed.launcher.runner import parse_args

    parsed = parse_args(args)
    assert parsed.num_gpus == layout.gpus_per_node, (parsed.num_gpus, layout.gpus_per_node)
    assert parsed.num_nodes in (-1, layout.nodes), (parsed.num_nodes, layout.nodes)  # -1: hostfile
    cell.parsed.append("deepspeed launcher")


def _deepspeed_config(cell: Cell, layout: Any, config: dict[str, Any]) -> None:
    """DeepSpeedConfig at the world size DeepSpeed will see: the pipeline engine's dp ranks (its
    grid is the mpu), else every rank, which DeepSpeed divides by Ulysses' sequence_parallel_size
    (under AutoTP too: the export leaves train_batch_size out there and its README says so)."""
    why = installed("deepspeed")
    if why:
        cell.skipped.append(why)
        return
    from unittest import mock

    from deepspeed import comm
    from deepspeed.runtime.config import DeepSpeedConfig

    class _PipelineGrid:  # what the pipeline engine hands DeepSpeedConfig as its mpu
        def get_data_parallel_world_size(self) -> int:
            return int(layout.dp)

    mpu = _PipelineGrid() if layout.pp > 1 else None
    with mock.patch.object(comm, "get_rank", return_value=0), \
         mock.patch.object(comm, "get_world_size", return_value=layout.world_size):
        parsed = DeepSpeedConfig(config, mpu=mpu)
    cell.parsed.append("DeepSpeedConfig")
    assert parsed.zero_optimization_stage == layout.zero
    assert parsed.train_micro_batch_size_per_gpu == layout.micro_batch
    cell.started.append("DeepSpeedConfig batch")


def _accelerate_config(cell: Cell, layout: Any, path: Path) -> None:
    why = installed("accelerate")
    if why:
        cell.skipped.append(why)
        return
    from accelerate.commands.config.config_args import load_config_from_file
    from accelerate.parallelism_config import ParallelismConfig
    from accelerate.utils import DistributedType

    config = load_config_from_file(str(path))
    cell.parsed.append("accelerate config")
    assert config.num_processes == layout.world_size
    sizes = {k.removeprefix("parallelism_config_"): v
             for k, v in (getattr(config, "parallelism_config", None) or {}).items()}
    if not sizes:
        return
    parallel = ParallelismConfig(**sizes)
    fsdp2 = (config.distributed_type == DistributedType.FSDP
             and int((config.fsdp_config or {}).get("fsdp_version", 1)) == 2)

    class _Started:  # what _validate_accelerator reads of the Accelerator() it checks
        num_processes = layout.world_size
        is_fsdp2 = fsdp2
        multi_device = config.distributed_type in (DistributedType.MULTI_GPU,
                                                   DistributedType.FSDP)
        distributed_type = config.distributed_type
        is_main_process = True

    parallel._validate_accelerator(_Started())
    cell.started.append("accelerate ParallelismConfig")


def _accelerate_launch(cell: Cell, layout: Any, args: list[str], folder: Path) -> None:
    why = installed("accelerate")
    if why:
        cell.skipped.append(why)
        return
    import os

    from accelerate.commands.launch import _validate_launch_command, launch_command_parser

    here = os.getcwd()
    os.chdir(folder)  # the config file is named relative to the job's folder
    try:
        parsed = launch_command_parser().parse_args(args)
        cell.parsed.append("accelerate launch")
        parsed, *_ = _validate_launch_command(parsed)
    finally:
        os.chdir(here)
    assert parsed.num_processes == layout.world_size, (parsed.num_processes, layout.world_size)
    cell.started.append("accelerate launch validated")


def _torchtitan(cell: Cell, layout: Any, path: Path) -> None:
    why = installed("torchtitan")
    if why:
        cell.skipped.append(why)
        return
    from torchtitan.config.manager import ConfigManager
    from torchtitan.distributed import ParallelDims
    from torchtitan.protocols.train_spec import get_train_spec

    config = ConfigManager().parse_args(["--job.config_file", str(path)])
    cell.parsed.append("torchtitan ConfigManager")
    args = get_train_spec(config.model.name).model_args[config.model.flavor]
    assert args.n_layers == layout.layers and args.dim == layout.hidden_size, (args, layout)
    p = config.parallelism
    ParallelDims(dp_replicate=p.data_parallel_replicate_degree,
                 dp_shard=p.data_parallel_shard_degree, cp=p.context_parallel_degree,
                 tp=p.tensor_parallel_degree, pp=p.pipeline_parallel_degree,
                 ep=p.expert_parallel_degree, etp=p.expert_tensor_parallel_degree,
                 world_size=layout.world_size)
    cell.started.append("torchtitan train spec, flavor and ParallelDims")

