"""Every YAML example in docs/ is executed (issue 13 item 1): scenarios load and validate against
the JSON Schema, fragments load when added to the smallest scenario, model cards and overlays parse.
Every scenario field is documented, and the docs' own example scenarios under docs/examples/ load
too."""

from __future__ import annotations

import copy
import re
from pathlib import Path
from typing import Any

import jsonschema
import pytest
import yaml

from plan.models.catalog import load_catalog, load_model_card
from plan.models.errors import field_names
from plan.models.json_schema import scenario_schema
from plan.models.loading import load_scenario
from plan.models.scenario import Scenario
from tests.conftest import yaml_as_json

REPO = Path(__file__).resolve().parents[2]
DOCS = sorted((REPO / "docs").glob("*.md"))
EXAMPLES = sorted((REPO / "docs" / "examples").glob("*.yaml"))
VALIDATOR = jsonschema.Draft202012Validator(scenario_schema())
SMALLEST: dict[str, Any] = {
    "name": "docs-fragment",
    "jobs": [{"id": "a", "model": "llama3-8b", "method": "lora", "tokens": "10M"}],
}
BLOCK = re.compile(r"```yaml\n(.*?)```", re.S)
MARKER = re.compile(r"#\s*(scenario|fragment|model card|overlay)(?::\s*(\S+))?\s*$")


def _blocks(doc: Path) -> list[tuple[str, str | None, str]]:
    """(kind, file name, text) of each YAML block; the first line says what it is."""
    found = []
    for text in BLOCK.findall(doc.read_text(encoding="utf-8")):
        match = MARKER.fullmatch(text.splitlines()[0].strip())
        assert match, f"{doc.name}: a YAML block must start with '# scenario', '# fragment', "\
                      f"'# model card: FILE' or '# overlay: FILE', not {text.splitlines()[0]!r}"
        found.append((match.group(1), match.group(2), text))
    return found


def _merge(base: dict[str, Any], extra: dict[str, Any]) -> dict[str, Any]:
    merged = copy.deepcopy(base)
    for key, value in extra.items():
        merged[key] = (
            _merge(merged[key], value)
            if isinstance(value, dict) and isinstance(merged.get(key), dict)
            else value
        )
    return merged


CASES = [(doc, i) for doc in DOCS for i in range(len(_blocks(doc)))]


def test_docs_have_examples():
    assert {d.name for d in DOCS} >= {"README.md", "scenario.md", "model-card.md", "overlay.md",
                                      "how-a-plan-is-computed.md"}
    kinds = {kind for doc in DOCS for kind, _, _ in _blocks(doc)}
    assert kinds == {"scenario", "fragment", "model card", "overlay"}


@pytest.mark.parametrize(("doc", "index"), CASES, ids=[f"{d.name}#{i}" for d, i in CASES])
def test_docs_example(doc, index, tmp_path):
    blocks = _blocks(doc)
    # Files named in the same page (cards, overlays) are there for its scenarios, as in a user's
    # folder.
    for _kind, name, text in blocks:
        if name:
            (tmp_path / name).write_text(text, encoding="utf-8")
    kind, name, text = blocks[index]
    data = yaml_as_json(text)
    if kind == "model card":
        card = load_model_card(tmp_path / name)
        assert card.id == data["id"] and card.source
    elif kind == "overlay":
        catalog = load_catalog([tmp_path / name])
        assert catalog.sources[-1] == str(tmp_path / name)
    else:
        scenario = data if kind == "scenario" else _merge(SMALLEST, data)
        path = tmp_path / f"example-{index}.yaml"
        path.write_text(
            text if kind == "scenario" else yaml.safe_dump(scenario, allow_unicode=True),
            encoding="utf-8",
        )
        loaded = load_scenario(path)
        assert loaded.scenario.jobs
        assert [e.message for e in VALIDATOR.iter_errors(scenario)] == []


def _all_field_names() -> set[str]:
    names: set[str] = set()
    todo: list[tuple[str, ...]] = [()]
    seen: set[tuple[str, ...]] = set()
    while todo:
        loc = todo.pop()
        if loc in seen or len(loc) > 4:
            continue
        seen.add(loc)
        for name in field_names(Scenario, loc):
            names.add(name)
            todo.append((*loc, name))
    return names


def test_every_scenario_field_is_documented():
    text = re.sub(
        r"```.*?```", "", (REPO / "docs" / "scenario.md").read_text(encoding="utf-8"), flags=re.S
    )
    in_code = {
        word for span in re.findall(r"`([^`]+)`", text) for word in re.findall(r"[A-Za-z_]+", span)
    }
    assert sorted(_all_field_names() - in_code) == []


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.name)
def test_docs_example_scenarios_load_and_validate(path):
    loaded = load_scenario(path)
    assert loaded.scenario.jobs
    assert [
        e.message for e in VALIDATOR.iter_errors(yaml_as_json(path.read_text(encoding="utf-8")))
    ] == []


def test_readme_links_the_docs():
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    assert "docs/README.md" in readme or "(docs/)" in readme
