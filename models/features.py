"""Named capabilities of a platform or an owned pool, as an enumerated type, and what owned GPUs can
do by default.

The names are the fields of `plan.models.platform.Features` (a test keeps the two in step). Scenario
files name them in `owned[].features` (added to the GPU's defaults) and `owned[].lacks` (removed).
"""

from __future__ import annotations

from enum import StrEnum
from typing import Annotated

from pydantic import BeforeValidator

from plan.models.errors import did_you_mean
from plan.models.gpu import GPU


class Feature(StrEnum):
    env_snapshot = "env_snapshot"
    checkpoint_resume = "checkpoint_resume"
    one_click_env = "one_click_env"
    dedicated_hardware = "dedicated_hardware"
    encryption = "encryption"
    private_line = "private_line"
    domestic_compliance = "domestic_compliance"
    managed_ops = "managed_ops"
    team_collaboration = "team_collaboration"
    community_marketplace = "community_marketplace"
    shared_nodes = "shared_nodes"
    qlora_kernels = "qlora_kernels"


# What each name means, for the README and `plan schema` readers.
MEANING: dict[Feature, str] = {
    Feature.env_snapshot: (
        "environment snapshots (image of the software stack), for reproducibility"
    ),
    Feature.checkpoint_resume: "jobs resume from their last checkpoint after an interruption",
    Feature.one_click_env: "ready-made training environment, no cluster setup",
    Feature.dedicated_hardware: "whole physical machines for one tenant",
    Feature.encryption: "data encrypted at rest and in transit",
    Feature.private_line: "a private line can reach it",
    Feature.domestic_compliance: "certified for domestic compliance (等保 / data-security rules)",
    Feature.managed_ops: "the provider runs the cluster (scheduling, failures)",
    Feature.team_collaboration: "shared workspaces for a team",
    Feature.community_marketplace: "hosts of unknown identity rent out cards",
    Feature.shared_nodes: "several tenants on one physical node",
    Feature.qlora_kernels: "the stack runs bitsandbytes 4-bit (QLoRA) kernels",
}


def _feature(value: object) -> object:
    # A close name gets 'did you mean'; pydantic's own enum message would list all twelve.
    if isinstance(value, str) and value not in Feature.__members__:
        raise ValueError(f"unknown feature {value!r}{did_you_mean(value, Feature.__members__)}")
    return value


FeatureName = Annotated[Feature, BeforeValidator(_feature)]


def owned_defaults(gpu: GPU) -> frozenset[str]:
    """What a team's own machines with this GPU run without saying so: on NVIDIA (CUDA) cards,
    bitsandbytes' 4-bit kernels (QLoRA); Ascend (CANN) has no bitsandbytes port, so nothing is
    assumed there unless the pool states it."""
    return frozenset({Feature.qlora_kernels.value}) if gpu.vendor == "nvidia" else frozenset()
