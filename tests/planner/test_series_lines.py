"""The instances of a recurring job that a plan places alike, or that an answer would say the same
thing about, are named once ('monthly-sft-01..12'): twelve equal monthly runs read as one line, in
both languages, and an instance that differs keeps its own line."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

from plan.models.layout import Layout
from plan.models.said import Said
from plan.models.timeline import instances_label
from plan.planner import i18n
from plan.planner.explain.series_lines import said_once
from plan.planner.i18n.plan_words import plan_summary
from plan.planner.i18n.said import local, say
from plan.planner.plan import JobPlan, Plan

ROOT = Path(__file__).resolve().parents[2]


def test_instances_are_named_as_a_run_or_a_list():
    ids = [f"sft-{k:02d}" for k in range(1, 13)]
    assert instances_label("sft", ids) == "sft-01..12"
    assert instances_label("sft", ids[3:6]) == "sft-04..06"
    assert instances_label("sft", ["sft-01", "sft-03", "sft-07"]) == "sft-01/03/07"
    assert instances_label("sft", ["sft-05"]) == "sft-05"


def _time_line(job: str, hours: float) -> str:
    return say("narrate.time", job=job, expected=hours, p10=hours * 0.9, p90=hours * 1.3,
               at=hours * 1.2, confidence=0.8, stack="megatron")


def test_equal_lines_of_one_series_are_said_once_and_a_differing_one_keeps_its_own():
    series = {f"sft-{k:02d}": "sft" for k in range(1, 5)}
    items = [("prep", _time_line("prep", 3.0)),
             *((job, _time_line(job, 9.7)) for job in ("sft-01", "sft-02", "sft-04")),
             ("sft-03", _time_line("sft-03", 12.0))]
    lines = said_once(items, series)
    assert [str(line).split(":")[0] for line in lines] == [
        "time of prep", "time of sft-01/02/04", "time of sft-03"]
    grouped = lines[1]
    assert str(grouped).endswith("(each of 3 instances)")
    # the grouped line is the first instance's line with every id replaced, nothing else
    assert str(grouped).removesuffix(" (each of 3 instances)") == str(items[1][1]).replace(
        "sft-01", "sft-01/02/04")
    # still keyed: said again in Chinese, naming the instances, with no English left
    assert isinstance(grouped, Said)
    with i18n.kept_language():
        i18n.choose("zh")
        chinese = local(grouped)
    assert "sft-01/02/04" in chinese and "each of" not in chinese and "time of" not in chinese
    # nothing to group: the lines come back as they were
    assert said_once(items[:2], series) == [items[0][1], items[1][1]]


LAYOUT = Layout(tp=1, pp=1, dp=8, zero=1, recompute="none", micro_batch=1, global_batch=8,
                seq_len=4096, precision="bf16", sequence_parallel=False, lora_rank=0)


def _job(job: str, platform: str, series: str | None) -> JobPlan:
    return JobPlan(job=job, platform=platform, gpu="h800", gpus=8, nodes=1, layout=LAYOUT,
                   billing="hourly", start_h=0.0, end_h=1.0, cost=1.0, memory_gib_per_gpu=1.0,
                   gpu_memory_gib=80.0, tokens_per_s=1.0, mfu=0.4, gpu_hours=8.0, series=series)


def test_a_plan_names_instances_placed_alike_once_and_keeps_the_others():
    jobs = [_job("prep", "autodl", None),
            *(_job(f"sft-{k:02d}", "autodl", "sft") for k in range(1, 4)),
            _job("sft-04", "zhixingyun-pro", "sft")]
    plan = Plan(rank=1, total_cost=5.0, makespan_h=1.0, jobs=jobs)
    assert plan.summary() == ("prep: 8x h800 on autodl (hourly); sft-01..03: 8x h800 on autodl "
                              "(hourly); sft-04: 8x h800 on zhixingyun-pro (hourly)")
    with i18n.kept_language():
        i18n.choose("zh")
        assert plan_summary(plan).count("sft-01..03") == 1
    assert [j["series"] for j in plan.to_dict()["jobs"][1:]] == ["sft"] * 4
    assert "series" not in plan.to_dict()["jobs"][0]


def test_finance_year_reads_its_twelve_equal_runs_once():
    out = subprocess.run([sys.executable, "-m", "plan.planner.cli.app", "solve",
                          str(ROOT / "scenarios/finance_year.yaml"), "--format", "json"],
                         capture_output=True, text=True, check=True).stdout
    best = json.loads(out)["plans"][0]
    assert {j["series"] for j in best["jobs"]} == {"monthly-sft"}
    # no two lines of the answer say the same thing about two instances
    masked = [re.sub(r"monthly-sft-\d\d\b", "ID", line) for line in best["explanation"]]
    repeated = [line for line in set(masked) if masked.count(line) > 1]
    assert repeated == []
    assert any(line.startswith("time of monthly-sft-01..12: ") for line in best["explanation"])
