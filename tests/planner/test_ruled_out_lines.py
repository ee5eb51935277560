"""The "would cost less but is ruled out" lines: the reason a cheaper option misses its deadline is the
one that holds (its run, or the queue or reservation lead time before it), with the hours that show it."""

from __future__ import annotations

import re

from plan.models.problem import SCALE
from tests.planner.catalog_runs import run_catalog_scenario

LINE = re.compile(r"^(?P<job>[\w-]+): (?P<gpus>\d+)x (?P<gpu>\S+) on (?P<platform>\S+) \((?P<billing>\w+)\) would cost "
                  r".* but is too (?P<kind>late|slow) for deadline/(?P=job): .*ends at hour (?P<end>[\d,.]+), "
                  r"after the deadline at hour (?P<limit>[\d,.]+)$")


def test_a_cheaper_option_waiting_for_its_reservation_is_too_late_not_too_slow(base_scenario, write_scenario):
    # Twelve hours for a 72B LoRA: more H800s than a platform hands out at once need a reservation with
    # days of lead, so they would be cheaper and faster but cannot start in time.
    _, problem, result = run_catalog_scenario(
        base_scenario, write_scenario, [{"id": "lora72", "model": "qwen2.5-72b", "method": "lora", "tokens": "100M",
                                         "seq_len": 4096}],
        top_k=3, budget="2000 USD", currency="USD", deadline="12h", ops_skill="expert", policy={"allow_spot": True})
    found = [m for plan in result.plans for line in plan.explanation if (m := LINE.match(line))]
    assert found, "no deadline line in any plan"
    assert any(m["kind"] == "late" for m in found)
    for m in found:
        c = next(c for c in problem.candidates[m["job"]] if (c.gpus, c.gpu, c.platform, c.billing) ==
                 (int(m["gpus"]), m["gpu"], m["platform"], m["billing"]) and not c.violations)
        start_h, run_h = SCALE.to_hours(c.startup_min), SCALE.to_hours(c.duration_min)
        limit_h = float(m["limit"].replace(",", ""))
        assert float(m["end"].replace(",", "")) == round(start_h + run_h, 1) > limit_h
        # too late: the run alone would fit, its start-up does not; too slow: the run alone is too long
        assert (m["kind"] == "late") == (start_h > 0 and run_h <= limit_h)
