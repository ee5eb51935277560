"""train.sh through Megatron-LM's own `parse_args` + `validate_args`.

megatron/training/arguments.py ships in megatron-core's wheels and sdists from 0.17.0 on (0.12 to
0.16 hold megatron/core only); those releases need Python >= 3.12, so Megatron is checked in an
environment of its own, like LLaMA-Factory: `--megatron-python` names its interpreter (install
there: `pip install megatron-core==0.19.0 triton torch`). 0.19.0 is tag core_v0.19.0, the release
the export's main d98e8a6 follows (docs/sources/launch-configs.md). On Python 3.11 (megatron-core
0.19.0 built with --ignore-requires-python) the one 3.12 name it imports, `typing.override`, is
typing_extensions'. validate_args asks the GPU its compute capability (fp8, FSDP, overlap rules):
answered as the planned GPU's architecture would, the only stub. MindSpeed-LLM's posttrain_gpt.py
(flags of its own on core_v0.12.1) has no installable package (PyPI's mindspeed-llm 0.0.1.dev1 is
an empty placeholder): it stays on the cited list (megatron_flags).
"""

from __future__ import annotations

import json
import subprocess
from typing import Any

RELEASE = "megatron-core 0.19.0"
ARCH_MAJOR = {"ampere": (8, 0), "ada": (8, 9), "hopper": (9, 0), "blackwell": (10, 0),
              "rubin": (10, 0)}
"""Compute capability by architecture (NVIDIA, CUDA GPUs compute capability table, read
2026-12-06: A100 8.0, L40S 8.9, H100/H200 9.0, B200 10.0). Rubin: assumed 10.0 (not in the table
then; only Blackwell-or-later matters to validate_args, `get_device_arch_version() >= 10`)."""
_SCRIPT = r"""
import json, os, sys, typing
if not hasattr(typing, "override"):  # Python 3.12's, on 3.11
    import typing_extensions
    typing.override = typing_extensions.override
major, minor = int(sys.argv[1]), int(sys.argv[2])
import torch
torch.cuda.get_device_capability = lambda *a, **k: (major, minor)
import megatron.training.utils as training_utils
training_utils.get_device_arch_version = lambda: major
import megatron.training.arguments as arguments
arguments.get_device_arch_version = lambda: major
sys.argv = json.loads(sys.argv[3])
out = {"parsed": False, "started": False, "error": ""}
try:
    args = arguments.parse_args()
    out["parsed"] = True
    arguments.validate_args(args, {})
    out["started"] = True
    out["sizes"] = [args.tensor_model_parallel_size, args.pipeline_model_parallel_size,
                    args.context_parallel_size, args.data_parallel_size,
                    args.micro_batch_size, args.global_batch_size, args.save_interval]
except (Exception, SystemExit) as exc:
    out["error"] = f"{type(exc).__name__}: {exc}".splitlines()[0][:300]
print("RESULT " + json.dumps(out))
"""


def _capability(layout: Any) -> tuple[int, int]:
    from plan.models.catalog import builtin_catalog

    try:
        return ARCH_MAJOR.get(builtin_catalog().gpu(layout.gpu).architecture, (9, 0))
    except Exception:  # a scenario's own GPU card: Hopper, the catalog's common case
        return (9, 0)


def run_megatron(python: str, words: list[str], env: dict[str, str],
                 layout: Any) -> dict[str, Any]:
    """parse_args + validate_args on one launch's script and arguments, in node 0's environment."""
    major, minor = _capability(layout)
    full_env = {"PATH": "/usr/bin:/bin", "WORLD_SIZE": str(layout.world_size), "RANK": "0",
                "LOCAL_RANK": "0", "CUDA_VISIBLE_DEVICES": "", **env}
    done = subprocess.run([python, "-c", _SCRIPT, str(major), str(minor), json.dumps(words)],
                          capture_output=True, text=True, timeout=600, env=full_env)
    for line in done.stdout.splitlines():
        if line.startswith("RESULT "):
            return dict(json.loads(line.removeprefix("RESULT ")))
    return {"parsed": False, "started": False,
            "error": f"no verdict (exit {done.returncode}): {done.stderr.strip()[-300:]}"}


def megatron_parse(cell: Any, layout: Any, words: list[str], env: dict[str, str],
                   python: str) -> None:
    """`words`: the training script and its arguments; `env`: what train.sh exports."""
    verdict = run_megatron(python, words, env, layout)
    if not verdict["parsed"] or not verdict["started"]:
        cell.failures.append(f"{RELEASE}: {verdict['error']}")
        return
    cell.parsed.append(f"{RELEASE} parse_args")
    tp, pp, cp, dp, micro, global_batch, save_interval = verdict["sizes"]
    assert (tp, pp, cp, dp) == (layout.tp, layout.pp, layout.cp, layout.dp), (verdict, layout)
    assert micro == layout.micro_batch and global_batch == layout.global_batch, (verdict, layout)
    assert save_interval, verdict
    cell.started.append(f"{RELEASE} validate_args")


def exported_env(text: str) -> dict[str, str]:
    """The variables a script's `export NAME=value` lines set."""
    out = {}
    for line in text.splitlines():
        stripped = line.strip()
        if stripped.startswith("export ") and "=" in stripped:
            name, _, value = stripped.removeprefix("export ").partition("=")
            out[name.strip()] = value.strip().strip('"')
    return out

