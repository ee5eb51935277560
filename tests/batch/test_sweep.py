"""--sweep parsing, grid expansion and applying a value to raw scenario data (no solver)."""

from __future__ import annotations

import pytest

from plan.models.errors import InputError
from plan.models.loading import load_scenario_data
from plan.planner.batch.sweep import (
    MAX_VARIANTS,
    SweepError,
    apply,
    expand_grid,
    parse_sweep,
    parse_sweeps,
)
from tests.conftest import BASE_SCENARIO


def values(spec: str) -> list[object]:
    return [value for _, value in parse_sweep(spec).values]


def labels(spec: str) -> list[str]:
    return [text for text, _ in parse_sweep(spec).values]


@pytest.mark.parametrize(("spec", "expected"), [
    ("budget=100k..500k:100k", [100_000, 200_000, 300_000, 400_000, 500_000]),
    ("budget=100k..250k:100k", [100_000, 200_000]),  # inclusive, but never past STOP
    ("budget=1万..3万:1万", [10_000, 20_000, 30_000]),
    ("budget=1.5M..2.5M:0.5M", [1_500_000, 2_000_000, 2_500_000]),
    ("value_of_time_per_day=0..1000:500", [0, 500, 1000]),
    ("solver.gap=0.1..0.3:0.1", [0.1, 0.2, 0.3]),  # no 0.30000000000000004
])
def test_money_and_number_ranges(spec, expected):
    assert values(spec) == expected


def test_duration_range_keeps_the_unit_start_was_written_in():
    assert labels("deadline=14d..28d:7d") == ["14d", "21d", "28d"]
    assert values("deadline=14d..15d:12h") == ["14d", "14.5d", "15d"]
    assert labels("deadline=36h..60h:1d") == ["36h", "60h"]
    # 'w' is a week for a duration field, not 万 as it would be for money
    assert values("deadline=1w..2w:1w") == ["1w", "2w"]


def test_list_items_are_read_as_yaml_scalars_like_in_the_file():
    assert values("deadline=14d,21d,30d") == ["14d", "21d", "30d"]
    assert values("budget=150000, 200k") == [150000, "200k"]
    assert values("academic=true,false") == [True, False]
    assert labels("budget=150000, 200k") == ["150000", "200k"]


@pytest.mark.parametrize(("spec", "message"), [
    ("budget", "expected FIELD=A,B,C"),
    ("=1,2", "expected FIELD=A,B,C"),
    ("budgt=1k,2k", "unknown or unsweepable field 'budgt'; did you mean 'budget'"),
    ("jobs=1,2", "unknown or unsweepable field 'jobs'"),  # a list, not a scalar
    ("budget=100k..500k", "a range is START..STOP:STEP"),
    ("budget=100k..500k:0", "STEP must be > 0"),
    ("budget=500k..100k:50k", "STOP is below START"),
    ("budget=100x..500k:50k", "unknown suffix 'x'"),
    ("deadline=14d..30d:2", "expected a duration"),
    ("objective=cost..time:1", "'objective' is not a number"),
    ("budget=1,,2", "empty item"),
    (f"budget=1..{MAX_VARIANTS + 1}:1", "at most"),
])
def test_bad_specs_say_what_is_wrong_in_one_line(spec, message):
    with pytest.raises(SweepError) as err:
        parse_sweep(spec)
    text = str(err.value)
    assert message in text and "\n" not in text and text.startswith(f"--sweep {spec!r}")


def test_same_field_twice_and_its_alias_are_refused():
    with pytest.raises(SweepError, match="already swept"):
        parse_sweeps(["budget=1k,2k", "budget=3k"])
    with pytest.raises(SweepError, match="already swept"):
        parse_sweeps(["deadline=1d,2d", "deadline_h=3d"])


def test_grid_is_the_product_in_the_order_given():
    grid = expand_grid(parse_sweeps(["budget=100k..200k:100k", "deadline=14d,21d,30d"]))
    assert [v.label for v in grid] == [
        "budget=100000 deadline=14d", "budget=100000 deadline=21d", "budget=100000 deadline=30d",
        "budget=200000 deadline=14d", "budget=200000 deadline=21d", "budget=200000 deadline=30d",
    ]
    assert expand_grid([])[0].label == "" and len(expand_grid([])) == 1


def test_applied_value_passes_through_the_loader(tmp_path):
    path = tmp_path / "s.yaml"
    raw = {**BASE_SCENARIO, "deadline_h": "7d"}
    raw.pop("deadline")
    (variant,) = expand_grid(parse_sweeps(["deadline=21d"]))
    assert not list(apply(raw, variant.assignments))
    assert "deadline_h" not in raw  # the other spelling is dropped, or the loader would see both
    assert load_scenario_data(raw, path).scenario.deadline_h == 21 * 24

    (nested,) = expand_grid(parse_sweeps(["policy.allow_spot=false"]))
    raw2 = dict(BASE_SCENARIO)
    assert not list(apply(raw2, nested.assignments))
    assert load_scenario_data(raw2, path).scenario.policy.allow_spot is False


def test_a_bad_swept_value_gives_the_loaders_one_line_error(tmp_path):
    path = tmp_path / "s.yaml"
    raw = dict(BASE_SCENARIO)
    (variant,) = expand_grid(parse_sweeps(["budget=lots"]))
    list(apply(raw, variant.assignments))
    with pytest.raises(InputError) as err:
        load_scenario_data(raw, path)
    assert err.value.problems == [f"{path}: budget: expected an amount of money (a number, "
                                  "optionally with k, M, 万 or 亿 and a currency (¥, $, 元, USD, "
                                  "CNY, ...), e.g. 400k, 40万, 2万元, ¥20,000 or 20k USD), got "
                                  "'lots'"]
