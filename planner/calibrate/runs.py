"""A measured run: what was trained on what, with which layout, and what it measured."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from plan.models.errors import InputError
from plan.models.layout import Optimizer
from plan.models.said import say_as
from plan.models.validation_words import listed
from plan.planner.estimate.types import (
    FRAMEWORKS,
    KERNELS,
    LORA_TARGETS,
    LOSSES,
    OPTIMIZER_NAMES,
    OPTIMIZERS,
    RECOMPUTE,
)

LAYOUT_KEYS = ("tp", "pp", "dp", "cp", "zero", "micro_batch", "global_batch", "virtual_pipeline")
SETTING_KEYS: dict[str, tuple[str, ...]] = {
    "recompute": RECOMPUTE,
    "kernels": KERNELS,
    "loss": LOSSES,
    "optimizer": OPTIMIZER_NAMES,
    "lora_targets": LORA_TARGETS,
}
"""How the run trained, as a scenario's job and `plan estimate` name it (its prediction runs the
same)."""


class RunError(InputError):
    """A run file that cannot be read: each line names the file (and row), the field and what is
    allowed."""

    def __init__(self, message: str | list[str]) -> None:
        super().__init__([message] if isinstance(message, str) else message)


@dataclass(frozen=True)
class Run:
    source: str  # "runs.csv:3", "out/trainer_state.json", "logs/train.log"
    model: str
    method: str
    gpu: str
    gpus: int
    seq_len: int
    framework: str
    tp: int | None = None
    pp: int | None = None
    dp: int | None = None
    cp: int | None = None
    zero: int | None = None
    micro_batch: int | None = None
    global_batch: int | None = None
    virtual_pipeline: int | None = None
    recompute: str | None = None
    # how a PyTorch stack ran the layers (eager, or fused: torch.compile, Liger, Unsloth)
    kernels: str = "eager"
    loss: str = "plain"  # plain, chunked or fused cross-entropy
    optimizer: str = "adam"  # the estimator's id (OPTIMIZERS)
    lora_targets: str = "all"  # LoRA on all linear layers, or on attention only
    precision: str = "bf16"
    lora_rank: int | None = None
    gpus_per_node: int | None = None
    tokens_per_s: float | None = None  # whole job, all GPUs
    peak_memory_gib: float | None = None  # per GPU
    # steady iterations the figures are measured over (None: the row does not say)
    steps: int | None = None
    # the folder a model-card path is read from: the file that names the run's model
    base_dir: Path | None = None

    @property
    def group(self) -> tuple[str, str, str]:
        return (self.gpu, self.framework, self.method)


def parse_layout_text(text: str, where: str) -> dict[str, object]:
    """'tp=2 pp=1 dp=4 zero=1 mb=2 recompute=selective' (the planner's own layout words) as
    fields."""
    out: dict[str, object] = {}
    alias = {"mb": "micro_batch", "gb": "global_batch", "vpp": "virtual_pipeline"}
    for word in text.replace(",", " ").split():
        if "=" not in word:
            if word in FRAMEWORKS:
                out["framework"] = word
                continue
            raise RunError(say_as("calib.layout_not_pair", "{where}: layout: {word} is not "
                                  "key=value (e.g. tp=2 pp=1 dp=4 zero=1 mb=1)", where=where,
                                  word=repr(word)))
        key, value = word.split("=", 1)
        key = alias.get(key, key)
        if key in SETTING_KEYS:
            out[key] = setting(key, value, where)
        elif key == "framework":
            out[key] = value
        elif key in LAYOUT_KEYS:
            try:
                out[key] = int(value)
            except ValueError:
                raise RunError(say_as("calib.layout_whole", "{where}: layout: {name} must be a "
                                      "whole number, got {value}", where=where, name=key,
                                      value=repr(value))) from None
        else:
            raise RunError(say_as("calib.layout_unknown_key", "{where}: layout: unknown key "
                                  "{name}; allowed: {allowed}, framework (mb, gb, vpp as short "
                                  "forms)", where=where, name=repr(key),
                                  allowed=listed((*LAYOUT_KEYS, *SETTING_KEYS))))
    return out


def setting(key: str, value: str, where: str) -> str:
    """One of SETTING_KEYS checked against what it allows; an optimizer as the estimator's id."""
    if value not in SETTING_KEYS[key] and not (key == "optimizer" and value in OPTIMIZERS):
        raise RunError(say_as("calib.layout_setting", "{where}: layout: {name} must be one of "
                              "{allowed}, got {value}", where=where, name=key,
                              allowed=listed(SETTING_KEYS[key]), value=repr(value)))
    return Optimizer.id_of(value) if key == "optimizer" else value
