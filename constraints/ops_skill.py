"""What the team can operate: none (managed, one-click, checkpoint resume, single node), basic
(multi-node only where the platform runs the cluster), expert (anything)."""

from __future__ import annotations

from plan.constraints.common import forbid_violations
from plan.constraints.groups import Groups
from plan.constraints.sat import cp_model
from plan.constraints.variables import Variables
from plan.models.problem import Placement
from plan.models.said import say_as
from plan.models.scenario import Job, Scenario

ONE_CLICK_FEATURES = ("one_click_env", "checkpoint_resume")
"""What a team with no ops skill needs of where it runs: a one-click environment it can resume
from."""


def pytorch_stacks_only(scenario: Scenario) -> bool:
    """Whether the layout search keeps to the one-click PyTorch path (Hugging Face Transformers with
    PEFT, as LLaMA-Factory runs them: data parallelism with ZeRO/FSDP sharding, whole-layer gradient
    checkpointing) where a job does not fix its framework or layout. A team with no ops skill works
    in a platform's one-click image, which carries PyTorch, Transformers and PEFT
    (background/selection-guide.zh.txt: academic images "预装Hugging Face
    Transformers、PEFT等科研常用 库"); Megatron-LM needs its own build (Transformer Engine, Apex)
    and a checkpoint conversion, and tensor or context parallelism needs DeepSpeed AutoTP or
    accelerate's parallelism config. A framework or layout the job fixes is the team's own choice
    and is kept."""
    return scenario.ops_skill == "none"


def check(scenario: Scenario, job: Job, place: Placement) -> dict[str, str]:
    skill = scenario.ops_skill
    group = f"ops_skill/{job.id}"
    managed = place.platform_kind == "managed_training" or "managed_ops" in place.features
    if skill == "none":
        missing = [f for f in ONE_CLICK_FEATURES if f not in place.features]
        if missing:
            return {group: say_as("rule.ops_none_needs", "ops skill none needs {features}; "
                                  "{platform} lacks it", features=_both(missing),
                                  platform=place.platform)}
        if place.nodes > 1:
            return {group: say_as("rule.ops_none_nodes", "ops skill none: single node only, "
                                  "this needs {nodes} nodes", nodes=place.nodes)}
    elif skill == "basic" and place.nodes > 1 and not managed:
        return {group: say_as("rule.ops_basic_nodes", "ops skill basic: {nodes}-node jobs only "
                              "on managed platforms, {platform} is not managed", nodes=place.nodes,
                              platform=place.platform)}
    return {}


def _both(features: list[str]) -> str:
    """'one_click_env and checkpoint_resume' (or the one feature)."""
    if len(features) == 1:
        return features[0]
    return say_as("rule.both", "{first} and {second}", first=" and ".join(features[:-1]),
                  second=features[-1])


def post(model: cp_model.CpModel, variables: Variables, groups: Groups) -> None:
    forbid_violations(model, variables, groups, "ops_skill")
