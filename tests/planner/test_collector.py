"""The collector pause around imports and candidate building leaves the collector as it found it and
freezes only what the block kept."""

from __future__ import annotations

import gc

from plan.planner.collector import collector_paused


class _Node:
    def __init__(self) -> None:
        self.me = self  # a cycle: only the cyclic collector frees it


def test_the_block_runs_without_collections_and_its_survivors_are_frozen():
    assert gc.isenabled()
    try:
        with collector_paused():
            assert not gc.isenabled()
            kept = [_Node() for _ in range(100)]
        assert gc.isenabled()
        assert gc.get_freeze_count() >= len(kept)
        # a later pause hands the frozen objects back first: cycles dropped since are collectable
        with collector_paused():
            assert gc.get_freeze_count() == 0
            del kept
        gc.unfreeze()
        assert gc.collect() >= 100  # the dropped cycles
    finally:
        gc.unfreeze()
        gc.enable()


def test_a_collector_the_caller_disabled_stays_disabled_and_nothing_is_frozen():
    gc.unfreeze()
    gc.disable()
    try:
        with collector_paused():
            pass
        assert not gc.isenabled()
        assert gc.get_freeze_count() == 0
    finally:
        gc.enable()
