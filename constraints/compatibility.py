"""What the hardware and its software stack can run: precision, 4-bit kernels, node spans."""

from __future__ import annotations

from plan.constraints.common import forbid_violations
from plan.constraints.groups import Groups
from plan.constraints.sat import cp_model
from plan.constraints.variables import Variables
from plan.models.methods import QLORA_METHODS
from plan.models.problem import Placement
from plan.models.said import say_as
from plan.models.scenario import Job, Scenario


def check(scenario: Scenario, job: Job, place: Placement) -> dict[str, str]:
    group = f"compatibility/{job.id}"
    if job.precision == "bf16" and not place.gpu_has_bf16:
        return {group: say_as("rule.compat_bf16", "bf16 needs Ampere or newer; {gpu} has no bf16 "
                              "peak", gpu=place.gpu)}
    if job.precision == "fp8" and not place.gpu_has_fp8:
        return {group: say_as("rule.compat_fp8", "fp8 needs Hopper/Ada or newer; {gpu} has no fp8 "
                              "peak", gpu=place.gpu)}
    if job.method in QLORA_METHODS:
        if place.kind == "cloud" and place.gpu_architecture == "davinci":
            # A cloud's feature flags describe its CUDA offers; bitsandbytes has no Ascend port.
            return {group: say_as("rule.compat_ascend_qlora", "bitsandbytes 4-bit (QLoRA) "
                                  "kernels do not run on {gpu} (Ascend)", gpu=place.gpu)}
        if "qlora_kernels" not in place.features:
            hint = (
                say_as("rule.compat_qlora_hint",
                       " (an owned pool that has them says features: [qlora_kernels])")
                if place.kind == "owned"
                else ""
            )
            return {group: say_as("rule.compat_qlora", "4-bit QLoRA kernels are not available on "
                                  "{platform} / {gpu}{hint}", platform=place.platform,
                                  gpu=place.gpu, hint=hint)}
    return {}


def post(model: cp_model.CpModel, variables: Variables, groups: Groups) -> None:
    forbid_violations(model, variables, groups, "compatibility")
