"""What the hardware and its software stack can run: precision, 4-bit kernels, node spans."""

from __future__ import annotations

from ortools.sat.python import cp_model

from constraints.common import forbid_violations
from constraints.groups import Groups
from constraints.variables import Variables
from models.problem import Placement
from models.scenario import Job, Scenario


def check(scenario: Scenario, job: Job, place: Placement) -> dict[str, str]:
    group = f"compatibility/{job.id}"
    if job.precision == "bf16" and not place.gpu_has_bf16:
        return {group: f"bf16 needs Ampere or newer; {place.gpu} has no bf16 peak"}
    if job.precision == "fp8" and not place.gpu_has_fp8:
        return {group: f"fp8 needs Hopper/Ada or newer; {place.gpu} has no fp8 peak"}
    if job.method == "qlora" and ("qlora_kernels" not in place.features or place.gpu_architecture == "davinci"):
        return {group: f"4-bit QLoRA kernels are not assumed on {place.platform} / {place.gpu}"}
    return {}


def post(model: cp_model.CpModel, variables: Variables, groups: Groups) -> None:
    forbid_violations(model, variables, groups, "compatibility")
