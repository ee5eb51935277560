"""`plan export --target-version`: the release of the stack the user will run, checked against what
the export needs, so that a file the named release cannot read is refused before anything is
written.

Only the stacks whose file formats this exporter knows to change between releases take the option:
- llamafactory: the Hugging Face path's keys are all in release 0.9.5's hparams (the llamafactory
  0.9.5 wheel on PyPI, read 2026-12-06); the Megatron-Bridge keys (pipeline, context and expert
  parallelism, Megatron recomputation, LoRA planned on Megatron) exist only on unreleased main
  (ff6d4d1, 0.9.6.dev0, 2026-08-18) with megatron-bridge installed: 0.9.5 rejects them ("Some keys
  are not used by the HfArgumentParser").
- torchtitan: job.toml is v0.2.2's TOML job format; 0.3.0 reads Python configs and refuses it.
(docs/sources/export-consumers.md)
"""

from __future__ import annotations

import re

from plan.models.said import say_as
from plan.planner.export.layout import ExportError, ExportLayout
from plan.planner.export.llamafactory import (
    BRIDGE_INSTALL,
    BRIDGE_NEEDS,
    LAST_CHECKED_RELEASE,
    uses_bridge,
)
from plan.planner.export.torchtitan import VERSION as TORCHTITAN_VERSION

VERSIONED_STACKS = ("llamafactory", "torchtitan")
_VERSION = re.compile(r"v?(\d+)\.(\d+)(?:\.(\d+))?(\.?(?:dev|rc|a|b)\d*)?")


def parse_version(text: str) -> tuple[int, int, int, bool] | None:
    """(major, minor, patch, pre-release) of a release string such as 0.9.5 or 0.9.6.dev0; None if
    not one."""
    match = _VERSION.fullmatch(text.strip())
    if not match:
        return None
    return int(match[1]), int(match[2]), int(match[3] or 0), bool(match[4])


def bad_target(stack: str, target: str) -> str | None:
    """Why `--target-version target` is bad input for `stack` (one line), or None when it is
    usable."""
    if stack not in VERSIONED_STACKS:
        both = say_as("export.both", "{first} and {second}", first=VERSIONED_STACKS[0],
                      second=VERSIONED_STACKS[1])
        return say_as("export.target_stacks", "--target-version applies to {stacks} only (the "
                      "stacks whose file formats change between releases here), not {stack}",
                      stacks=both, stack=stack)
    if target != "main" and parse_version(target) is None:
        return say_as("export.target_release", "--target-version: {target} is not a release "
                      "number (e.g. 0.9.5) or main", target=repr(target))
    return None


def check_target(layout: ExportLayout, stack: str, target: str) -> None:
    """Raise ExportError when release `target` of `stack` cannot run this job's export."""
    version = parse_version(target)
    if stack == "torchtitan" and target != TORCHTITAN_VERSION:
        raise ExportError(say_as(
            "export.versions_job_toml_format",
            "torchtitan: job.toml is torchtitan {torchtitan_version}'s TOML job format; "
            "{target} is not that release (0.3.0 and later read Python configs, --module)",
            torchtitan_version=TORCHTITAN_VERSION, target=target))
    if stack != "llamafactory" or target == "main" or version is None:
        return
    if uses_bridge(layout) and version[:3] <= LAST_CHECKED_RELEASE:
        raise ExportError(say_as(
            "export.versions_release_has_no_megatron",
            "llamafactory: release {target} has no Megatron-Bridge keys, which this job needs "
            "({bridge_needs}); install {bridge_install}",
            target=target, bridge_needs=BRIDGE_NEEDS, bridge_install=BRIDGE_INSTALL))
    if version[:3] < LAST_CHECKED_RELEASE:
        raise ExportError(say_as(
            "export.versions_keys_checked",
            "llamafactory: the export's keys are checked against release {release} and main, "
            "not {target}",
            release='.'.join(map(str, LAST_CHECKED_RELEASE)), target=target))
