"""Plans shown as trades (issue 47 item 10): a GPU-count change that buys time is an alternative, a
p90 deadline miss is flagged with the cheapest plan that holds, a class of equal jobs moves as one,
and ruled-out lines cite only options the scenario's policy allows."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from plan.models.figures import CandidateFigures, CandidateTime
from plan.models.loading import load_scenario
from plan.models.problem import SCALE, Problem
from plan.planner.cpsat.run import Outcome
from plan.planner.plan import Plan
from plan.planner.session import SolveOptions
from plan.planner.solve import solve
from plan.planner.trades import job_classes, p90_misses
from tests.planner.builders import WALL_NET_S, Spec, make_problem, solve_problem

ROOT = Path(__file__).resolve().parents[2]


def _with_p90(problem: Problem, p90_over_h: dict[tuple[str, str, int], float]) -> Problem:
    """Each candidate's schedule at its own hours; (job, platform, gpus) -> hours its p90 time
    adds."""
    candidates = {
        job: [replace(c, figures=CandidateFigures(framework="megatron", time=CandidateTime(
            train_h=c.hours, train_at_confidence_h=c.hours, train_p10_h=c.hours * 0.9,
            train_p90_h=c.hours + p90_over_h.get((c.job, c.platform, c.gpus), 0.0))))
              for c in cs]
        for job, cs in problem.candidates.items()}
    return replace(problem, candidates=candidates)


def test_a_count_that_ends_a_tenth_sooner_within_the_gap_is_shown():
    specs = [Spec("a", "p1", cost=100, hours=100), Spec("a", "p1", gpus=16, cost=104, hours=60)]
    result = solve_problem(make_problem(specs), top_k=3, gap=0.1)
    assert [(p.total_cost, p.jobs[0].gpus) for p in result.plans] == [(100, 8), (104, 16)]
    trade = result.plans[1].trade
    assert trade is not None and trade.kind == "count" and trade.delta_makespan_h == -40
    assert any("(the same choices with other GPU counts)" in line
               for line in result.plans[1].explanation)


def test_a_count_that_moves_the_end_under_a_tenth_is_not_shown():
    # 100 h -> 92 h: 8%, under 10% and under a day
    specs = [Spec("a", "p1", cost=100, hours=100), Spec("a", "p1", gpus=16, cost=101, hours=92)]
    result = solve_problem(make_problem(specs), top_k=3, gap=0.1)
    assert [p.total_cost for p in result.plans] == [100]
    assert any("only GPU counts, ending at least 10.0 h sooner" in n for n in result.notes)


def test_a_count_beyond_the_gap_is_not_shown():
    specs = [Spec("a", "p1", cost=100, hours=100), Spec("a", "p1", gpus=16, cost=115, hours=50)]
    result = solve_problem(make_problem(specs), top_k=3, gap=0.1)
    assert [p.total_cost for p in result.plans] == [100]


def test_a_day_sooner_is_enough_on_a_long_plan():
    # 40 days -> 38.9 days: under 10% but more than a day
    specs = [Spec("a", "p1", cost=100, hours=960), Spec("a", "p1", gpus=16, cost=103, hours=934)]
    result = solve_problem(make_problem(specs), top_k=2, gap=0.1)
    assert [p.jobs[0].gpus for p in result.plans] == [8, 16]


def test_a_p90_miss_is_flagged_with_the_cheapest_plan_that_holds():
    specs = [
        Spec("a", "p1", cost=100, hours=90),  # ends 10 h before the deadline, p90 20 h over
        Spec("a", "p2", cost=130, hours=80),  # holds at p90 (95 h)
        Spec("a", "p3", cost=150, hours=70),  # holds too, dearer
        Spec("a", "p4", cost=120, hours=85),  # the nearest change beyond the gap; misses at p90
    ]
    problem = _with_p90(make_problem(specs, deadlines_h={"a": 100}),
                        {("a", "p1", 8): 30.0, ("a", "p2", 8): 15.0, ("a", "p3", 8): 5.0,
                         ("a", "p4", 8): 25.0})
    result = solve_problem(problem, top_k=2, gap=0.1)
    first = result.plans[0]
    assert first.jobs[0].platform == "p1"
    flag = [line for line in first.explanation if line.startswith("p90 misses deadline/a")]
    assert len(flag) == 1 and "ends at day 5.0" in flag[0] and "day 4.2" in flag[0]
    named = [line for line in first.explanation if "cheapest plan that holds every deadline at "
             "p90" in line]
    assert len(named) == 1 and "is plan 3: +30 CNY (+30.0%)" in named[0]
    assert [p.jobs[0].platform for p in result.plans] == ["p1", "p4", "p2"]
    third = result.plans[2]
    assert third.trade is not None and third.trade.kind == "p90" and not third.within_gap
    assert p90_misses(problem, _outcome_of(problem, third)) == []


def test_the_cheapest_plan_holding_at_p90_is_named_when_no_place_is_left():
    specs = [Spec("a", "p1", cost=100, hours=90), Spec("a", "p2", cost=130, hours=80)]
    problem = _with_p90(make_problem(specs, deadlines_h={"a": 100}),
                        {("a", "p1", 8): 30.0, ("a", "p2", 8): 15.0})
    result = solve_problem(problem, top_k=1)
    assert len(result.plans) == 1
    assert any("the cheapest plan that holds every deadline at p90 time is a: 8x a800-80gb on p2 "
               "(hourly): +30 CNY (+30.0%)" in line for line in result.plans[0].explanation)


def _outcome_of(problem: Problem, plan: Plan) -> Outcome:
    chosen = {j.job: next(c for c in problem.candidates[j.job]
                          if (c.platform, c.gpus, c.billing) == (j.platform, j.gpus, j.billing))
              for j in plan.jobs}
    return Outcome("optimal", chosen=chosen,
                   start_min={j.job: SCALE.minutes(j.start_h) for j in plan.jobs},
                   end_min={j.job: SCALE.minutes(j.end_h) for j in plan.jobs})


def test_a_plan_that_holds_at_p90_is_not_flagged():
    specs = [Spec("a", "p1", cost=100, hours=90)]
    problem = _with_p90(make_problem(specs, deadlines_h={"a": 100}), {("a", "p1", 8): 5.0})
    result = solve_problem(problem, top_k=2)
    assert not any(line.startswith("p90") for line in result.plans[0].explanation)


def test_p90_chains_through_the_jobs_a_job_follows():
    specs = [Spec("a", "p1", cost=100, hours=40), Spec("b", "p1", cost=100, hours=40)]
    problem = _with_p90(make_problem(specs, after={"b": ["a"]}, deadlines_h={"b": 85}),
                        {("a", "p1", 8): 8.0})  # b's own time is sure; a's slip pushes it over
    result = solve_problem(problem, top_k=1)
    assert any(line.startswith("p90 misses deadline/b") for line in result.plans[0].explanation)
    assert any("no plan holds every deadline at p90" in line
               for line in result.plans[0].explanation)


def _equal_jobs(n: int) -> list[Spec]:
    specs = []
    for k in range(n):
        job = f"run-{k:02d}"
        specs += [Spec(job, "pool-a", cost=100, hours=10), Spec(job, "pool-b", cost=102, hours=9),
                  Spec(job, "pool-c", cost=101, hours=12)]
    return specs


def test_with_many_equal_jobs_an_alternative_moves_the_whole_class():
    result = solve_problem(make_problem(_equal_jobs(6)), top_k=3, gap=0.1)
    first, second = result.plans[0], result.plans[1]
    assert {j.platform for j in first.jobs} == {"pool-a"}
    assert second.trade is not None and second.trade.kind == "class"
    assert {j.platform for j in second.jobs} == {"pool-b"}  # every job moved, not one
    assert second.trade.changes == (
        "6 jobs (run-00, run-01, run-02, run-03, run-04, run-05): 8x a800-80gb on pool-a (hourly) "
        "-> 8x a800-80gb on pool-b (hourly), +12 CNY for them together and -1.0 h each",)
    for plan in result.plans[1:]:  # never a one-job tweak
        moved = [j for j, b in zip(plan.jobs, first.jobs, strict=True) if j.platform != b.platform]
        assert len(moved) in (0, 6)


def test_job_classes_group_a_series_before_a_pool():
    class Job:
        def __init__(self, id: str, series: str | None = None) -> None:
            self.id, self.series = id, series

    jobs = [Job("sft-01", "sft"), Job("sft-02", "sft"), Job("cpt"), Job("eval")]
    pools = {"sft-01": "p1", "sft-02": "p2", "cpt": "p1", "eval": "p1"}
    assert job_classes(jobs, pools.__getitem__) == {"series sft": ["sft-01", "sft-02"],
                                                     "pool p1": ["cpt", "eval"]}


POLICY = {"policy.platforms": "cheap-cloud is in forbid_platforms"}


def test_ruled_out_lines_never_name_what_policy_excludes():
    specs = [
        Spec("a", "p1", cost=100),
        Spec("a", "cheap-cloud", cost=50, violations=POLICY),
        Spec("a", "other", cost=70, violations={"ops_skill/a": "other lacks checkpoint_resume"}),
    ]
    problem = make_problem(specs, groups={"policy.platforms": "the platform lists",
                                          "ops_skill/a": "ops skill"})
    result = solve_problem(problem, top_k=2)
    lines = [line for plan in result.plans for line in plan.explanation]
    ruled = [line for line in lines if "would cost" in line]
    assert ruled and all("cheap-cloud" not in line for line in ruled)
    assert any("other (hourly) would cost 70 CNY but is ruled out by ops_skill/a" in line
               for line in ruled)
    said = [line for line in lines if line.startswith("policy, as the scenario sets it")]
    assert said == ["policy, as the scenario sets it, keeps out cheaper options: platforms "
                    "cheap-cloud (policy.platforms); the cheapest that only policy keeps out: "
                    "a: 8x a800-80gb on cheap-cloud (hourly) at 50 CNY against 100 CNY"]


def test_policy_that_keeps_out_nothing_cheaper_is_not_said():
    specs = [Spec("a", "p1", cost=100), Spec("a", "dear-cloud", cost=150, violations=POLICY)]
    problem = make_problem(specs, groups={"policy.platforms": "the platform lists"})
    result = solve_problem(problem, top_k=2)
    assert not any(line.startswith("policy") for line in result.plans[0].explanation)


def test_a_shipped_answer_says_its_gpu_policy_once_and_cites_it_nowhere_else():
    # domestic_ascend allows Ascend cards only: the cheaper H800s were cited as "ruled out"
    result = solve(load_scenario(ROOT / "scenarios/domestic_ascend.yaml"),
                   SolveOptions(time_limit_s=WALL_NET_S))
    for plan in result.plans:
        for line in plan.explanation:
            if "would cost" in line and " but is " in line:
                assert "policy." not in line and "h800" not in line, line
        said = [line for line in plan.explanation if line.startswith("policy, as")]
        assert len(said) == (1 if plan.rank == 1 else 0)
    said = next(line for line in result.plans[0].explanation if line.startswith("policy, as"))
    assert "cheaper options: GPUs " in said and "(policy.gpus)" in said
    assert "glm4-full-ft: 4x h800 on zhixingyun-pro (hourly) at 552 CNY" in said


def test_a_class_moves_to_one_choice_not_each_its_own_way():
    """Six equal runs (none a material share alone) released 100 h apart: the last one's end is
    the makespan. Leaving pool-a for the same speed on pool-c (+1 each) never ends sooner, so a
    mixed move (five on pool-c, the last on the faster pool-b) would be the cheapest "faster" plan:
    a trade nobody weighs. The class moves as one: all six on pool-b, 1 h sooner each."""
    specs = []
    for k in range(6):
        job = f"run-{k:02d}"
        specs += [Spec(job, "pool-a", cost=100, hours=10), Spec(job, "pool-b", cost=150, hours=9),
                  Spec(job, "pool-c", cost=101, hours=10)]
    problem = make_problem(specs)
    problem = replace(problem, release_min={j: SCALE.minutes(100 * k)
                                            for k, j in enumerate(problem.jobs)})
    result = solve_problem(problem, top_k=2, gap=0.1)
    first, second = result.plans[0], result.plans[1]
    assert {j.platform for j in first.jobs} == {"pool-a"}
    assert second.trade is not None and second.trade.kind == "class"
    assert {j.platform for j in second.jobs} == {"pool-b"}
    assert second.total_cost == 900
