"""What the hardware and its software stack can run: precision, 4-bit kernels, node spans."""

from __future__ import annotations

from plan.constraints.common import forbid_violations
from plan.constraints.groups import Groups
from plan.constraints.sat import cp_model
from plan.constraints.variables import Variables
from plan.models.methods import QLORA_METHODS
from plan.models.problem import Placement
from plan.models.scenario import Job, Scenario


def check(scenario: Scenario, job: Job, place: Placement) -> dict[str, str]:
    group = f"compatibility/{job.id}"
    if job.precision == "bf16" and not place.gpu_has_bf16:
        return {group: f"bf16 needs Ampere or newer; {place.gpu} has no bf16 peak"}
    if job.precision == "fp8" and not place.gpu_has_fp8:
        return {group: f"fp8 needs Hopper/Ada or newer; {place.gpu} has no fp8 peak"}
    if job.method in QLORA_METHODS:
        if place.kind == "cloud" and place.gpu_architecture == "davinci":
            # A cloud's feature flags describe its CUDA offers; bitsandbytes has no Ascend port.
            return {group: f"bitsandbytes 4-bit (QLoRA) kernels do not run on {place.gpu} (Ascend)"}
        if "qlora_kernels" not in place.features:
            hint = (
                " (an owned pool that has them says features: [qlora_kernels])"
                if place.kind == "owned"
                else ""
            )
            return {group: f"4-bit QLoRA kernels are not available on {place.platform} / "
                           f"{place.gpu}{hint}"}
    return {}


def post(model: cp_model.CpModel, variables: Variables, groups: Groups) -> None:
    forbid_violations(model, variables, groups, "compatibility")
