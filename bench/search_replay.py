"""Replay a cold scenario build's layout searches, for timing and exactness checks of the search.

    PLAN_CACHE_DIR=off python bench/search_replay.py record scenarios/rubin_buy_or_rent.yaml K.pkl
    PLAN_CACHE_DIR=off python bench/search_replay.py replay K.pkl [--every N]

`record` builds the scenario's candidates once and pickles the key of every search that ran (the
model, method, searched cluster and spec; rubin_buy_or_rent: 1,542, 1,092 of them distinct once the
fabric is set aside). `replay` runs those searches again in their order in one cold process (every
N-th only, with --every) and prints the CPU seconds and a digest of every result: the best layout,
its memory and time, the layouts considered, the skip and rejection counts by reason and the
rejected examples. A faster search must print the same digest as the reference checkout's
interpreter on the same file (pickles are read by the same code version: record with either).
"""

from __future__ import annotations

import argparse
import hashlib
import os
import pickle
import sys
import time
from pathlib import Path
from typing import Any

import plan.planner.estimate.search as search_mod
from plan.models.loading import load_scenario
from plan.planner.candidates.build import CandidateBuilder


def record(scenario: Path, out: Path) -> int:
    """Build the scenario's candidates, keeping every search key, and pickle them to `out`."""
    keys: list[Any] = []
    searched = search_mod._searched

    def recording(key: Any) -> Any:
        keys.append(key)
        return searched(key)

    search_mod._searched = recording  # type: ignore[assignment]
    started = time.process_time()
    CandidateBuilder(load_scenario(scenario)).build()
    print(f"{scenario}: {len(keys)} searches, build {time.process_time() - started:.1f} s CPU")
    out.write_bytes(pickle.dumps(keys))
    return 0


def replay(keys_file: Path, every: int) -> int:
    """Run the recorded searches again; print the CPU seconds and the results' digest."""
    keys = pickle.loads(keys_file.read_bytes())[::every]
    digest = hashlib.sha256()
    started = time.process_time()
    for key in keys:
        result = search_mod._searched(key)
        best = result.best
        digest.update(repr((
            best and (repr(best.layout), best.memory.total_gib, best.time.total_s),
            result.considered, sorted(result.reasons.items()),
            [(repr(layout), why) for layout, why in result.rejected])).encode())
    print(f"{len(keys)} searches: {time.process_time() - started:.2f} s CPU, "
          f"digest {digest.hexdigest()}")
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    rec = sub.add_parser("record")
    rec.add_argument("scenario", type=Path)
    rec.add_argument("out", type=Path)
    rep = sub.add_parser("replay")
    rep.add_argument("keys", type=Path)
    rep.add_argument("--every", type=int, default=1)
    args = parser.parse_args(argv)
    if os.environ.get("PLAN_CACHE_DIR") != "off":
        print("note: PLAN_CACHE_DIR is not 'off': stored searches are read, not run",
              file=sys.stderr)
    if args.command == "record":
        return record(args.scenario, args.out)
    return replay(args.keys, args.every)


if __name__ == "__main__":
    raise SystemExit(main())
