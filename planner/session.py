"""One scenario's solving session: its problem, its models and one work budget for every re-solve.

The stages above it (solve, explain, pareto) ask the session; none of them builds candidates again:
the session keeps the builder that made its problem, whose estimates answer the explainers'
what-ifs (an offloaded or fully sharded layout on the same GPUs)."""

from __future__ import annotations

import dataclasses
import math
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from weakref import WeakKeyDictionary

from plan.models.loading import LoadedScenario
from plan.models.problem import Problem
from plan.models.scenario import Scenario, SolverSettings
from plan.planner.build_deadline import build_deadline
from plan.planner.candidates import CandidateBuilder, build_problem_and_builder
from plan.planner.candidates.reuse import jobs_first, ruled_out_of
from plan.planner.candidates.ruled_out import RuledOut
from plan.planner.cpsat.model import Bounds, PlanModel
from plan.planner.cpsat.overflow_guard import check_magnitudes
from plan.planner.cpsat.run import Outcome, solve_model
from plan.planner.i18n.said import phrase, say

# Per candidate build (planner/candidates/reuse.py keeps a few alive), its problems' models by
# what their constraints read beside the candidates (budget.set_budget sets the budget's amount)
_MODELS: WeakKeyDictionary[CandidateBuilder, dict[tuple[object, ...], PlanModel]] = (
    WeakKeyDictionary())
MODELS_PER_BUILD = 4

TIE_BREAK_WORK = 1.0  # deterministic time for the makespan tie-break among cheapest plans
# and for the last one, jobs ending as early as that plan's cost and makespan allow
EARLIEST_WORK = 0.3


@dataclass
class SolveOptions:
    objective: str | None = None
    top_k: int | None = None
    gap: float | None = None
    time_limit_s: float | None = None
    work_limit: float | None = None
    workers: int | None = None
    seed: int | None = None
    # False: the plans, their status and proof alone, none of the explanation (its what-if solves
    # included): a batch row holds no explanation, and an infeasible variant's took 0.4 s of it
    explained: bool = True


class Session:
    """One scenario's problem and base model, with one work budget (deterministic time) for every
    re-solve, and the wall-clock safety net."""

    def __init__(self, problem: Problem, settings: SolverSettings, objective: str,
                 started: float | None = None, loaded: LoadedScenario | None = None,
                 builder: CandidateBuilder | None = None) -> None:
        self.loaded = loaded  # the scenario, when there is one: explanations re-plan variants of it
        self.builder = builder  # what built the problem, when a scenario did: the what-ifs ask it
        self.settings = settings
        self.objective = objective
        self.started = time.perf_counter() if started is None else started
        self.problem = problem
        # Figures the 64-bit model cannot hold are bad input, said in one line.
        check_magnitudes(problem, str(loaded.path) if loaded else problem.scenario_name)
        self._model: PlanModel | None = None
        self._ruled_out: RuledOut | None = None
        self._abiding: PlanModel | None = None
        # (set by from_loaded: a problem made another way, e.g. with p90 durations, has candidates
        # of its own and builds its own model)
        self._shares_models = False
        self._rule_groups = problem.rule_groups()
        self._breaking = {c.index for c in problem.all_candidates() if c.violations}
        self.deadline = self.started + settings.time_limit_s
        self.work_left = settings.work_limit
        # some solve was cut by the wall clock: the result may depend on load
        self.wall_stopped = False
        self.presolve_retries = 0  # solves run again without presolve (see run)
        self.solves = 0  # CP-SAT runs so far (bench/pareto_speed.py counts a front's)
        # CPU seconds of this process while CP-SAT ran (bench/pareto_speed.py: a front's share in
        # the solver); a figure for the bench, never read by an answer
        self.solve_cpu_s = 0.0

    @classmethod
    def from_loaded(cls, loaded: LoadedScenario, options: SolveOptions | None = None,
                    defer: bool = False, stop_at_empty: bool = False) -> Session:
        """Build candidates (estimator calls) and the model; their time counts against the limit.
        `defer`: options that break a rule are left unsized (candidates/ruled_out.py): the session
        then answers no question that lifts a rule or forces such an option (`deferred`).
        `stop_at_empty`: NoOptionLeft (candidates/build.py) at the first job left no option."""
        started = time.perf_counter()
        options = options or SolveOptions()
        s = loaded.scenario
        settings = SolverSettings(
            time_limit_s=options.time_limit_s or s.solver.time_limit_s,
            work_limit=options.work_limit or s.solver.work_limit,
            workers=options.workers or s.solver.workers,
            seed=s.solver.seed if options.seed is None else options.seed,
            top_k=options.top_k or s.solver.top_k,
            gap=s.solver.gap if options.gap is None else options.gap,
        )
        with build_deadline(settings.time_limit_s, started):
            problem, builder = build_problem_and_builder(loaded, defer=defer,
                                                         stop_at_empty=stop_at_empty)
        session = cls(problem, settings, options.objective or s.objective, started, loaded,
                      builder)
        session._shares_models = True  # its problem is its build's, with the scenario's figures
        return session

    def variant(self, scenario: Scenario, first: Sequence[str] = (),
                limits: Mapping[str, int] | None = None,
                lifted: frozenset[str] = frozenset(), defer: bool = False) -> Session | None:
        """A session for a changed copy of this scenario (a relaxation to try), sharing this one's
        work budget and safety net; None when the session was built from a bare problem, or when
        the jobs the copy keeps and those of `first` (built before the rest) leave a solve of it
        with `lifted` groups no plan: a job with no option the held rules allow, or none that ends
        within its minutes in `limits` (`jobs_first`). The jobs the copy leaves as they were are
        not built again (candidates/job_builds.py). `defer`: the copy leaves options that break a
        rule unsized (as a deferring session's copies do) where `lifted` is empty."""
        if self.loaded is None:
            return None
        loaded = dataclasses.replace(self.loaded, scenario=scenario)
        defer = (self.deferred or defer) and not lifted
        kept = jobs_first(loaded, self.builder, first, limits, lifted, defer)
        if kept is None:
            return None
        problem, builder = build_problem_and_builder(loaded, what_if=True, kept=kept, defer=defer)
        other = Session(problem, self.settings, self.objective, self.started, self.loaded, builder)
        other.work_left, other.deadline = self.work_left, self.deadline
        return other

    def narrowed(self, keep: dict[str, set[int]]) -> Session:
        """A session on `Problem.narrowed(keep)`, for solves whose bounds force each job of `keep`
        onto one of its options there; this one's settings, clock and work left (charge its solves
        back with `spend`)."""
        other = Session(self.problem.narrowed(keep), self.settings, self.objective, self.started,
                        self.loaded)
        other.work_left, other.deadline = self.work_left, self.deadline
        return other

    @property
    def deferred(self) -> bool:
        """Whether its build left the options that break a rule unsized (ruled_out.py)."""
        return self.builder is not None and self.builder.defer

    @property
    def ruled_out(self) -> RuledOut | None:
        """A deferring build's rule-breaking options, sized as answers ask (None otherwise)."""
        if not self.deferred or self.loaded is None:
            return None
        if self._ruled_out is None:
            self._ruled_out = ruled_out_of(self.loaded, self.problem)
        return self._ruled_out

    def spend(self, other: Session) -> None:
        """Charge a variant's solves to this session's budget."""
        self.work_left = min(self.work_left, other.work_left)
        self.wall_stopped |= other.wall_stopped

    @property
    def model(self) -> PlanModel:
        """The whole model, rule-breaking candidates included: what explanations of infeasibility
        (rules as assumptions) and why-not questions (a forced option) solve."""
        assert not self.deferred, "a deferring build's session holds no rule-breaking option"
        if self._model is None:
            self._model = self._plan_model(self.problem, "whole")
        return self._model

    def holds_every_rule(self, bounds: Bounds) -> bool:
        """No rule a candidate can break is lifted and no rule-breaking option forced:
        rule-breaking candidates can never be chosen, so a model of the rule-abiding ones alone
        has the same optima (forcing rule-abiding options, as `plan compare` and the best plan
        that buys do, keeps to it)."""
        forced = {i for indices in (*bounds.forced, bounds.some_of) for i in indices}
        return not forced & self._breaking and not bounds.lifted & self._rule_groups

    def model_for(self, bounds: Bounds, with_assumptions: bool = False) -> PlanModel:
        """The model a solve needs: while every rule a candidate can break holds and no option is
        forced, the rule-abiding candidates alone (the same optima, a smaller model)."""
        if with_assumptions or not self.holds_every_rule(bounds):
            return self.model
        if self._abiding is None:
            self._abiding = self._plan_model(self.problem.rule_abiding(), "abiding")
        return self._abiding

    def _plan_model(self, problem: Problem, which: str) -> PlanModel:
        """The model of `problem`, shared with the other scenarios' problems its builder made
        (reuse.py's `_with_figures`) that differ only in the budget's amount
        (PlanModel.for_budget): a budget sweep builds it once."""
        if self.builder is None or not self._shares_models:
            return PlanModel(problem)
        kept = _MODELS.setdefault(self.builder, {})
        key = (which, problem.budget is None, tuple(sorted(problem.deadline_min.items())))
        if key in kept:
            return kept[key].for_budget(problem)
        model = PlanModel(problem)
        if len(kept) < MODELS_PER_BUILD:
            kept[key] = model
        return model

    def cut_note(self, answer: str, knob: str) -> str:
        """What a user is told when the wall-clock safety net stopped a solve of this session:
        `answer` names what may depend on load, `knob` the limit to raise."""
        return say("note.cut", limit=self.settings.time_limit_s, answer=phrase(answer), knob=knob)

    def remaining_s(self) -> float:
        return max(0.05, self.deadline - time.perf_counter())

    def run(
        self,
        objective: str | None,
        bounds: Bounds,
        hint: Outcome | dict[int, int] | None = None,
        with_assumptions: bool = False,
        max_work: float | None = None,
        probing: int = 0,
        model: PlanModel | None = None,
        witness: Outcome | None = None,
        keep_values: bool = False,
        energetic: bool = False,
    ) -> Outcome:
        """One solve. `hint`: a plan to start from (an outcome, or candidate index -> 0/1); `model`:
        a narrower model with the same optimum under `bounds` (a Pareto walk's), instead of the
        session's; `witness`: a plan known to meet `bounds`, so that "infeasible" is impossible.
        CP-SAT 9.15's presolve was seen to say so anyway (frontier_private_vs_hybrid's front: an
        exactly-one it emptied); such a solve is run again without presolve, whose answer is then
        the one kept. A hint that kept its values (`keep_values`) from a solve of the same model is
        hinted whole. `energetic`: energetic reasoning on the shared pools (cpsat/run.py)."""
        model = model or self.model_for(bounds, with_assumptions)
        whole = hint.values if isinstance(hint, Outcome) else None
        instance = model.instance(
            objective, bounds, with_assumptions=with_assumptions,
            hint=hint.hint() if isinstance(hint, Outcome) else hint,
            values=whole.values if whole is not None and whole.model is model else None)

        def solved(presolve: bool) -> Outcome:
            work = self.work_left if max_work is None else min(max_work, self.work_left)
            began_cpu_s = time.process_time()
            outcome = solve_model(
                model, instance, self.settings, self.remaining_s(), work, probing,
                presolve=presolve, keep_values=keep_values, energetic=energetic)
            self.solve_cpu_s += time.process_time() - began_cpu_s
            self.solves += 1
            self.work_left = max(0.0, self.work_left - outcome.work)
            self.wall_stopped |= outcome.wall_stopped
            return outcome

        outcome = solved(presolve=True)
        if outcome.status == "infeasible" and witness is not None and witness.solved:
            self.presolve_retries += 1
            outcome = solved(presolve=False)
        return outcome

    def proves_none(self, bounds: Bounds, max_work: float) -> bool:
        """Whether a solve without an objective, stopped at `max_work`, proves that no plan meets
        `bounds`. It keeps the presolve's inclusion search (planner/cpsat/run.py), which finds some
        proofs at once that an optimising solve searches for."""
        return self.run(None, bounds, max_work=max_work).status == "infeasible"

    def earliest(self, outcome: Outcome, bounds: Bounds | None = None) -> Outcome:
        """Among plans no worse on cost and makespan, the one whose jobs end earliest in total.
        Without it a job that does not set the makespan may start late for no reason
        (frontier_private_vs_hybrid: the 405B run on a rented month started on day 60, not day 5,
        since its successor waits for bought H200s either way). Only a tie-break, on a short time
        slice: it never changes the cost, the makespan or their proof. `bounds`: those the outcome
        was solved under (a forced option), kept."""
        if not outcome.solved or self.objective == "risk" or self._starts_at_earliest(outcome):
            return outcome
        tied = replace(bounds or Bounds(), max_cost=outcome.total_cost,
                       max_makespan=outcome.makespan_min)
        return self._second(self.run("earliest", tied, outcome, max_work=EARLIEST_WORK), outcome)

    def _starts_at_earliest(self, outcome: Outcome) -> bool:
        """Whether every job starts as soon as its option's start-up, its pool's opening and the
        jobs it follows allow: then no plan of the same options ends its jobs sooner."""
        problem = self.problem
        for job, chosen in outcome.chosen.items():
            earliest = max([problem.earliest_start_min(chosen),
                            *(outcome.end_min[before] for before in problem.after.get(job, ()))])
            if outcome.start_min[job] > earliest:
                return False
        return not self._sooner_for_the_same_money(outcome)

    def _sooner_for_the_same_money(self, outcome: Outcome) -> bool:
        """Whether some job has a rule-abiding option that runs shorter and costs no more on its
        own than the chosen one: another plan of the same cost may then end it sooner
        (frontier_private_vs_hybrid: 384 GPUs for one month cost what 128 for three do)."""
        problem = self.problem
        for job, chosen in outcome.chosen.items():
            mine = problem.standalone_cost(chosen)
            if any(c.duration_min < chosen.duration_min and not c.violations
                   and problem.standalone_cost(c) <= mine for c in problem.candidates[job]):
                return True
        return False

    def best(self, bounds: Bounds, hint: Outcome | dict[int, int] | None = None,
             max_work: float | None = None) -> Outcome:
        """The optimum under `bounds` for the session's objective (two stages where it is
        lexicographic), each stage stopping at `max_work` when given."""
        if self.objective == "time":
            first = self.run("time", bounds, hint, max_work=max_work)
            if not first.solved:
                return first
            second = self.run(
                "cost", replace(bounds, max_makespan=first.makespan_min), first, max_work=max_work
            )
            return self._second(second, first)
        if self.objective == "lexicographic":
            first = self.run("cost", bounds, hint, max_work=max_work)
            if not first.solved:
                return first
            cap = math.floor(first.total_cost * (1 + self.settings.gap))
            return self._second(
                self.run("time", replace(bounds, max_cost=cap), first, max_work=max_work), first
            )
        first = self.run(self.objective, bounds, hint, max_work=max_work)
        if self.objective != "cost" or not first.solved:
            return first
        # Among the cheapest plans, the one that finishes first (same cost, jobs not left idle).
        # Only a tie-break: it gets a short time slice and never changes the cost or its proof.
        second = self.run(
            "time", replace(bounds, max_cost=first.total_cost), first, max_work=TIE_BREAK_WORK
        )
        return self._second(second, first)

    @staticmethod
    def _second(second: Outcome, first: Outcome) -> Outcome:
        """The second stage's plan, with the first stage's status, value and bound: that is the
        objective proven."""
        if not second.solved:
            return first
        second.status, second.objective, second.bound = first.status, first.objective, first.bound
        return second

    def objective_value(self, outcome: Outcome) -> int:
        if self.objective == "time":
            return outcome.makespan_min
        if self.objective == "balanced":
            return outcome.total_cost + self.problem.value_of_time_per_min * outcome.makespan_min
        return outcome.total_cost

    def cap_objective(self) -> str:
        return {"time": "time", "balanced": "balanced"}.get(self.objective, "cost")
