"""What a warm build makes once and reuses gives what making it each time gives: a stored note read
back once per process still fails every check it failed, a cluster made once per place is the
cluster of every option that asks for it, a bill's band quantiles taken together are the ones taken
one by one."""

from __future__ import annotations

import dataclasses
import json

import pytest

from plan.models.loading import load_scenario
from plan.planner.candidates.build import CandidateBuilder
from plan.planner.candidates.options import Options
from plan.planner.estimate import stored_search
from plan.planner.estimate.band import quantile_factor, quantile_factors
from plan.planner.estimate.reliability import RunEstimate, hours_quantile, hours_quantiles
from plan.planner.i18n import numbers
from plan.planner.i18n.said import Fmt, say
from plan.planner.i18n.said_data import to_data
from tests.conftest import REPO

LAB = REPO / "scenarios" / "lab_six_jobs.yaml"


def _note_data() -> dict[str, object]:
    note = say("enote.global_batch", batch=1024,
               rule=say("enote.rule_tokens", tokens=Fmt(numbers.millions, (4_194_304,))))
    data = json.loads(json.dumps(to_data(note)))
    assert isinstance(data, dict)
    return data


def test_a_stored_note_read_back_twice_is_checked_each_time() -> None:
    """The same data reads back as the same note; an edit to its text or fields (even after the
    true note was read) fails, and fails again when asked again."""
    data = _note_data()
    first, again = stored_search._notes([data]), stored_search._notes([data])
    assert first == again == [data["text"]]
    assert getattr(again[0], "key", None) == "enote.global_batch"
    fields = data["fields"]
    assert isinstance(fields, dict)
    for forged in ({**data, "text": str(data["text"]).replace("1024", "2048")},
                   {**data, "fields": {**fields, "batch": 2048}},
                   {**data, "fields": {**fields, "batch": 1024.0}}):
        for _ in range(2):
            with pytest.raises(stored_search.Forged):
                stored_search._notes([forged])


def test_band_quantiles_together_are_the_quantiles_one_by_one() -> None:
    """The same floats, bit for bit (a bill's cost is rounded from them), narrow band or none."""
    qs = tuple((i + 0.5) / 20 for i in range(20))
    for band in ((0.8, 1.3), (1.0, 1.0), (0.95, 1.6)):
        assert quantile_factors(band, qs) == [quantile_factor(band, q) for q in qs]
    for hours, band_h in ((23.6, (20.1, 31.0)), (5.0, (0.0, 0.0)), (0.0, (0.0, 0.0))):
        run = RunEstimate(tokens=1e9, hours=hours, gpu_hours=hours * 8, failure_free_hours=hours,
                          failure_overhead_fraction=0.0, checkpoint_interval_h=0.0,
                          expected_interruptions=0.0, hours_range=band_h)
        assert hours_quantiles(run, qs) == [hours_quantile(run, q) for q in qs]


def test_each_option_gets_the_cluster_made_for_it() -> None:
    """Every option of every job: the build's cluster equals, field for field, one made afresh;
    spot and on-demand of one place get different clusters."""
    loaded = load_scenario(LAB)
    builder = CandidateBuilder(loaded, {})
    fresh = CandidateBuilder(loaded, {})
    asked = 0
    for job in loaded.scenario.jobs:
        for option in builder._options(job):
            gpu = loaded.catalog.gpus[option.place.gpu]
            fresh._clusters = {}
            made, again = builder._cluster(option, gpu), Options._cluster(fresh, option, gpu)
            assert made is builder._cluster(option, gpu)
            assert all(getattr(made, f.name) == getattr(again, f.name)
                       for f in dataclasses.fields(made))
            asked += 1
    assert asked > len(builder._clusters) > 1
    spot = {(key[1:4], key[4]) for key in builder._clusters}
    assert any((place, not is_spot) in spot for place, is_spot in spot)


def test_each_job_lists_the_options_a_fresh_builder_lists() -> None:
    """An offer's allowance and its notes, made once per build, are those each job would make: one
    builder listing every job's options lists what a new builder per job lists, note for note."""
    loaded = load_scenario(LAB)
    shared = CandidateBuilder(loaded, {})
    listed = 0
    for job in loaded.scenario.jobs:
        mine = [(o.place, o.assumptions, o.startup_h) for o in shared._options(job)]
        fresh = [(o.place, o.assumptions, o.startup_h)
                 for o in CandidateBuilder(loaded, {})._options(job)]
        assert mine == fresh
        assert [[getattr(n, "key", None) for n in notes] for _, notes, _ in mine] == [
            [getattr(n, "key", None) for n in notes] for _, notes, _ in fresh]
        listed += len(mine)
    assert listed > len(shared._allowances) > 1
