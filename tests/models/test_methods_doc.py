"""Every YAML example in docs/methods-catalog-transfer.md is valid: scenarios load, overlays
apply."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml

from plan.models.catalog import builtin_catalog
from plan.models.loading import load_scenario_data
from tests.conftest import REPO

DOC = REPO / "docs" / "methods-catalog-transfer.md"
BLOCKS = re.findall(r"```yaml\n(.*?)```", DOC.read_text(encoding="utf-8"), flags=re.S)


def test_doc_has_examples():
    assert len(BLOCKS) >= 3


@pytest.mark.parametrize("block", BLOCKS)
def test_doc_example_is_valid(block):
    data = yaml.safe_load(block)
    if "jobs" in data:
        loaded = load_scenario_data(data, Path("doc-example.yaml"))
        assert loaded.scenario.jobs
    else:
        catalog = builtin_catalog().overlay(data, "doc-example overlay")
        for raw in data["platforms"]:
            platform = catalog.platform(raw["id"])
            if "egress" in raw:
                assert platform.egress is not None
                assert platform.egress.price_per_gb == raw["egress"]["price_per_gb"]
            for offer in raw.get("offers", []):
                match = [
                    o
                    for o in platform.offers
                    if (o.gpu, o.billing) == (offer["gpu"], offer["billing"])
                ]
                assert match and match[0].price_per_gpu_period == offer["price_per_gpu_period"]
