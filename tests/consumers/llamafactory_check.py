"""train.yaml through LLaMA-Factory 0.9.5's own argument parser.

LLaMA-Factory pins accelerate<=1.11.0, below the accelerate 1.16.0 the accelerate export names, so
it is checked in its own environment: a script run by that environment's interpreter (or by this
one where llamafactory 0.9.5 is installed here). `_parse_train_args` is the HfArgumentParser over
its hparams with extra keys refused ("parsed": transformers' TrainingArguments asks whether the GPU
runs bf16 while parsing, answered yes as the planned GPU would); `get_train_args` runs its checks
until one needs a GPU ("started"). A Megatron-Bridge export (pp, cp, ep, Megatron recomputation,
LoRA planned on Megatron) needs unreleased main: 0.9.5 must refuse its keys, as the export's README
and `--target-version 0.9.5` say.
"""

from __future__ import annotations

import json
import subprocess
import sys
from importlib import metadata
from pathlib import Path
from typing import Any

RELEASE = "0.9.5"
GPU_WORDS = ("cuda", "gpu", "bf16", "bitsandbytes", "deepspeed", "flash", "npu", "device")
_SCRIPT = r"""
import json, sys, yaml
import transformers.training_args as training_args
# (the GPU's answer: a bf16 GPU, as on every card the planner plans bf16 for)
training_args.is_torch_bf16_gpu_available = lambda: True
from llamafactory.hparams.parser import _parse_train_args, get_train_args
args = yaml.safe_load(open(sys.argv[1]))
out = {"parsed": False, "started": False, "error": ""}
try:
    _parse_train_args(dict(args))
    out["parsed"] = True
    get_train_args(dict(args))
    out["started"] = True
except (Exception, SystemExit) as exc:
    out["error"] = f"{type(exc).__name__}: {exc}".splitlines()[0][:300]
print("RESULT " + json.dumps(out))
"""


def _python(given: str | None) -> str | None:
    if given:
        return given
    try:
        return sys.executable if metadata.version("llamafactory") == RELEASE else None
    except metadata.PackageNotFoundError:
        return None


def run_parser(python: str, path: Path) -> dict[str, Any]:
    """The parser's verdict on one train.yaml, from the interpreter `python`."""
    # run where launch.sh runs it: train.yaml names ds_config.json relative to the job's folder
    env = {"DISABLE_VERSION_CHECK": "0", "PATH": "/usr/bin:/bin", "HF_HUB_OFFLINE": "1",
           "CUDA_VISIBLE_DEVICES": ""}
    done = subprocess.run([python, "-c", _SCRIPT, str(path)], capture_output=True, text=True,
                          cwd=path.parent, timeout=600, env=env)
    for line in done.stdout.splitlines():
        if line.startswith("RESULT "):
            return json.loads(line.removeprefix("RESULT "))
    return {"parsed": False, "started": False,
            "error": f"no verdict (exit {done.returncode}): {done.stderr.strip()[-300:]}"}


def llamafactory(cell: Any, layout: Any, path: Path, given_python: str | None) -> None:
    from plan.planner.export.llamafactory import uses_bridge

    python = _python(given_python)
    if python is None:
        cell.skipped.append(f"llamafactory {RELEASE} is not installed here (its own environment: "
                            "pip install -e '.[consumers-llamafactory]', then "
                            "--llamafactory-python)")
        return
    verdict = run_parser(python, path)
    if uses_bridge(layout):
        if verdict["parsed"]:
            cell.failures.append(f"{RELEASE} accepted Megatron-Bridge keys it should not have")
        elif "not used by the HfArgumentParser" in verdict["error"]:
            cell.parsed.append(f"llamafactory {RELEASE} refuses the Megatron-Bridge keys, as the "
                               "export says (needs main ff6d4d1)")
        else:
            cell.failures.append(verdict["error"])
        return
    if not verdict["parsed"]:
        cell.failures.append(verdict["error"])
        return
    cell.parsed.append(f"llamafactory {RELEASE} HfArgumentParser")
    if verdict["started"] or any(w in verdict["error"].lower() for w in GPU_WORDS):
        cell.started.append("get_train_args" + (f" (stops at: {verdict['error']})"
                                                 if verdict["error"] else ""))
    else:
        cell.failures.append(verdict["error"])
