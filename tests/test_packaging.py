"""One import package (issue 13 item 8): the installed distribution adds the single top-level name
`plan`, whose parts are the folders models/, constraints/ and planner/ (mapped in pyproject.toml),
with every module and data file of those folders (tests/test_architecture.py: no code imports the
bare folder names)."""

from __future__ import annotations

import importlib.util
from importlib import metadata, resources
from pathlib import Path

import pytest

from tests.conftest import REPO

FOLDERS = ("models", "constraints", "planner")
REINSTALL = ("list its package in [tool.setuptools] packages in pyproject.toml, or, with an "
             "editable install, run the install line again (README: Development)")


def _module_names() -> list[str]:
    names = []
    for folder in FOLDERS:
        for path in sorted((REPO / folder).rglob("*.py")):
            parts = path.relative_to(REPO).with_suffix("").parts
            if "__pycache__" not in parts:
                names.append(
                    ".".join(("plan", *(parts[:-1] if parts[-1] == "__init__" else parts)))
                )
    return names


def test_installed_plan_has_every_module_of_the_three_folders():
    missing = [name for name in _module_names() if importlib.util.find_spec(name) is None]
    assert missing == [], f"the installed plan lacks {missing}: {REINSTALL}"


@pytest.mark.parametrize("name", sorted(p.name for p in (REPO / "models" / "data").glob("*.yaml")))
def test_catalog_data_ships_inside_plan_models(name):
    assert resources.files("plan.models").joinpath("data", name).is_file(), (
        f"plan.models lacks data/{name}"
    )


def test_the_distribution_adds_one_top_level_name_and_the_plan_command():
    # The installed one, with a RECORD: not the plan.egg-info a build leaves in the checkout (on
    # sys.path here).
    (dist,) = [d for d in metadata.distributions(name="plan") if d.read_text("RECORD")]
    assert (dist.read_text("top_level.txt") or "").split() == ["plan"]
    # A wheel install records plan/... files; an editable one records its .pth (and the links live
    # in build/).
    tops = {Path(str(f)).parts[0] for f in dist.files or []}
    tops = {
        t for t in tops if not (t.endswith(".dist-info") or t.startswith(("..", "__editable__")))
    }
    assert tops <= {"plan"}, tops
    (script,) = [e for e in dist.entry_points if e.group == "console_scripts"]
    assert (script.name, script.value) == ("plan", "plan.planner.cli.app:main")
