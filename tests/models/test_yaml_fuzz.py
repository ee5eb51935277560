"""Random and mutated YAML must only ever fail with the project's own InputError."""

from __future__ import annotations

import tempfile
from pathlib import Path

import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from plan.models.errors import InputError
from plan.models.loading import load_scenario
from tests.conftest import BASE_SCENARIO

SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(10**12), 10**12),
    st.floats(allow_nan=True),
    st.text(max_size=12),
    st.sampled_from(["400k", "30d", "2B", "-1", "万", "1e400", "nan"]),
)
VALUES = st.recursive(
    SCALARS,
    lambda inner: st.one_of(
        st.lists(inner, max_size=4), st.dictionaries(st.text(max_size=8), inner, max_size=4)
    ),
    max_leaves=12,
)


def _load_text(text: str) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "s.yaml"
        path.write_text(text, encoding="utf-8")
        try:
            load_scenario(path)
        except InputError as exc:
            assert exc.problems and all(isinstance(p, str) and p for p in exc.problems)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.text(max_size=200))
def test_random_text(text):
    _load_text(text)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(sorted(BASE_SCENARIO)), VALUES, st.integers(0, 1), st.data())
def test_mutated_scenario(field, value, job_index, data):
    scenario = yaml.safe_load(yaml.safe_dump(BASE_SCENARIO))
    if data.draw(st.booleans()):
        scenario[field] = value
    else:
        job = scenario["jobs"][job_index]
        key = data.draw(st.sampled_from([*sorted(job), "lora_rank", "deadline", "zzz"]))
        job[key] = value
    _load_text(yaml.safe_dump(scenario, allow_unicode=True))
