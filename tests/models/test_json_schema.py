"""`plan schema` is valid Draft 2020-12 and accepts what the loader accepts (issue 13 item 2)."""

from __future__ import annotations

import re

import jsonschema
import pytest

from plan.models import units, units_schema
from plan.models.json_schema import scenario_schema
from plan.models.jurisdiction import WRITTEN_CODE_PATTERN, check_code
from tests.conftest import BASE_SCENARIO, SCENARIOS, yaml_as_json
from tests.models.test_scenario_loading import INVALID, _mutate

SCHEMA = scenario_schema()
VALIDATOR = jsonschema.Draft202012Validator(SCHEMA)

# Rows of the loader's bad-input table that need the catalog or the other jobs to see: a JSON Schema
# cannot, and `plan validate` does.
SEMANTIC = ("unknown model", "unknown GPU", "unknown job", "duplicate id", "not a declared site",
            "unknown platform", "no exchange rate", "exceeds")


def _read(path):

    return yaml_as_json(path.read_text(encoding="utf-8"))


def test_schema_is_valid_draft_2020_12():
    jsonschema.Draft202012Validator.check_schema(SCHEMA)
    assert SCHEMA["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    text = repr(SCHEMA)
    for keyword in ("'gt'", "'ge'", "'lt'", "'le'"):  # pydantic's names, not JSON Schema keywords
        assert keyword not in text


@pytest.mark.parametrize("path", SCENARIOS, ids=lambda p: p.name)
def test_every_shipped_scenario_validates(path):
    errors = [e.message for e in VALIDATOR.iter_errors(_read(path))]
    assert errors == []


def test_base_scenario_validates():
    assert list(VALIDATOR.iter_errors(BASE_SCENARIO)) == []


SCHEMA_LEVEL = [case for case in INVALID if not any(word in case[2] for word in SEMANTIC)]


@pytest.mark.parametrize(
    ("path", "value", "expected"), SCHEMA_LEVEL, ids=[c[2][:40] for c in SCHEMA_LEVEL]
)
def test_schema_rejects_the_bad_input_table(base_scenario, path, value, expected):
    assert not VALIDATOR.is_valid(_mutate(base_scenario, path, value))


def test_the_bad_input_table_is_mostly_schema_level():
    assert len(SCHEMA_LEVEL) >= 10


@pytest.mark.parametrize("field", ["deadline", "deadline_h"])
def test_aliases_the_loader_takes_are_in_the_schema(base_scenario, field):
    base_scenario.pop("deadline")
    base_scenario[field] = "3d"
    assert VALIDATOR.is_valid(base_scenario)


def _loader_accepts(parse, value) -> bool:
    try:
        return parse(value) > 0
    except ValueError:
        return False


# Both ways: each string is accepted by the loader exactly when the schema's pattern matches it.
WRITTEN = {
    "money": (
        units.parse_money_amount,
        units_schema.MONEY_PATTERN,
        [
            "400k",
            "40万",
            "2万元",
            "¥20,000",
            "20k USD",
            "$1.2M",
            "1,500",
            "3.5k",
            "lots",
            "5x",
            "20k usd",
            "-5k",
            "k20",
            "2万万",
            "€10k",
        ],
    ),
    "count": (
        units.parse_count,
        units_schema.COUNT_PATTERN,
        ["2B", "200M", "1.5T", "10k", "2e9", "2Q", "B2", "-1B", "two"],
    ),
    "duration": (
        units.parse_duration_h,
        units_schema.DURATION_PATTERN,
        [
            "30d",
            "12h",
            "2w",
            "2 weeks",
            "1 week",
            "90min",
            "10天",
            "30",
            "soon",
            "2 fortnights",
            "d30",
        ],
    ),
    "size": (
        units.parse_size_gb,
        units_schema.SIZE_PATTERN,
        ["50GB", "1.5TB", "500MiB", "50", "50 gigs", "GB50"],
    ),
    "seq_len": (
        units.parse_seq_len,
        units_schema.SEQ_LEN_PATTERN,
        ["4k", "32K", "4096", "4M", "lots", "k4"],
    ),
    "jurisdiction": (
        lambda v: 1 if check_code(v) else 0,
        WRITTEN_CODE_PATTERN,
        ["cn", "US", " sg ", "eu", "usa", "c", "global", "c1"],
    ),
}


@pytest.mark.parametrize(
    ("kind", "text"), [(k, t) for k, (_, _, texts) in WRITTEN.items() for t in texts]
)
def test_patterns_match_what_the_loader_reads(kind, text):
    parse, pattern, _ = WRITTEN[kind]

    def amount(value):
        result = parse(value)
        return result[0] if isinstance(result, tuple) else result

    assert bool(re.search(pattern, text)) == _loader_accepts(amount, text), (kind, text)


def test_the_schema_file_in_docs_is_current():
    import json
    from pathlib import Path

    shipped = Path(__file__).resolve().parents[2] / "docs" / "plan-scenario.schema.json"
    current = json.loads(shipped.read_text(encoding="utf-8"))
    assert current == SCHEMA, "run: plan schema > docs/plan-scenario.schema.json"
