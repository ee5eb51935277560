import pytest

from plan.models.units import parse_count, parse_duration_h, parse_money, parse_size_gb


@pytest.mark.parametrize(("text", "expected"), [
    (400000, 400000.0), ("400k", 400_000.0), ("1.2M", 1_200_000.0), ("40万", 400_000.0),
    ("3,500", 3500.0), ("2亿", 2e8), (" 5k ", 5000.0),
])
def test_money(text, expected):
    assert parse_money(text) == pytest.approx(expected)


@pytest.mark.parametrize(("text", "expected"), [
    ("2B", 2e9), ("200M", 2e8), ("1.5T", 1.5e12), (10_000, 1e4), ("3K", 3e3),
])
def test_count(text, expected):
    assert parse_count(text) == pytest.approx(expected)


@pytest.mark.parametrize(
    ("text", "expected"), [("30d", 720.0), ("12h", 12.0), ("2w", 336.0), ("90min", 1.5)]
)
def test_duration(text, expected):
    assert parse_duration_h(text) == pytest.approx(expected)


@pytest.mark.parametrize(
    ("text", "expected"), [("50GB", 50.0), ("1.5TB", 1500.0), ("1GiB", 1.073741824)]
)
def test_size(text, expected):
    assert parse_size_gb(text) == pytest.approx(expected)


@pytest.mark.parametrize(
    ("parser", "bad"),
    [
        (parse_money, "lots"),
        (parse_money, "5x"),
        (parse_money, True),
        (parse_money, [1]),
        (parse_count, "2Q"),
        (parse_duration_h, 30),
        (parse_duration_h, "30 fortnights"),
        (parse_duration_h, "soon"),
        (parse_size_gb, "50"),
        (parse_size_gb, 50),
    ],
)
def test_rejects_with_allowed_forms(parser, bad):
    with pytest.raises(ValueError, match=r"e\.g\."):
        parser(bad)


@pytest.mark.parametrize(("value", "named"), [(float("nan"), "got nan"), (float("inf"), "got inf"),
                                              (10**400, "got inf")])
def test_a_non_finite_number_is_named_as_it_was_given(value, named):
    with pytest.raises(ValueError, match=named):
        parse_money(value)
