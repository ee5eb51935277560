"""The HTML report in a real browser: headless Chromium (the Debian package) driven by Playwright's Python
API. The page renders with no console errors and no network request, the Gantt chart has one bar per job
at the right offsets, and a screenshot is produced. Skips, saying why, where Chromium or Playwright is absent.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from plan.models.loading import load_scenario
from plan.planner.cli.app import app
from plan.planner.session import SolveOptions
from plan.planner.solve import solve
from tests.conftest import REPO

MEDICAL = REPO / "scenarios" / "medical_hybrid.yaml"
CHROMIUM = next((p for p in (os.environ.get("PLAN_CHROMIUM"), shutil.which("chromium"),
                             shutil.which("chromium-browser")) if p), None)
SCREENSHOT_DIR = os.environ.get("PLAN_REPORT_SCREENSHOT_DIR")  # keep the screenshot for a person to look at


@pytest.fixture(scope="module")
def medical_page(tmp_path_factory):
    out = tmp_path_factory.mktemp("report") / "report.html"
    result = CliRunner().invoke(app, ["report", str(MEDICAL), "-o", str(out)])
    assert result.exit_code == 0, result.output
    loaded = load_scenario(MEDICAL)
    return out, solve(loaded, SolveOptions(time_limit_s=60)).plans[0]


def test_page_is_self_contained(medical_page):
    text = medical_page[0].read_text()
    assert "http://" not in text and "https://" not in text and "src=" not in text and "<link" not in text


def test_page_renders_in_chromium_with_one_bar_per_job(medical_page, tmp_path):
    if CHROMIUM is None:
        pytest.skip("no Chromium: install the Debian package `chromium` (apt-get install chromium) to run the "
                    "browser check")
    sync_api = pytest.importorskip("playwright.sync_api", reason="playwright is not installed "
                                   "(pip install -e '.[report]')")
    page_file, plan = medical_page
    errors: list[str] = []
    requests: list[str] = []
    with sync_api.sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        page = browser.new_page(viewport={"width": 1100, "height": 900})
        page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
        page.on("pageerror", lambda exc: errors.append(str(exc)))
        page.on("request", lambda r: requests.append(r.url) if not r.url.startswith("file:") else None)
        page.goto(page_file.as_uri())
        page.wait_for_load_state("load")
        gantt = page.locator("svg#gantt")
        left = float(gantt.get_attribute("data-left"))
        per_h = float(gantt.get_attribute("data-px-per-h"))
        bars = page.locator("svg#gantt rect.job-bar")
        drawn = {}
        for i in range(bars.count()):
            bar = bars.nth(i)
            box = bar.evaluate("b => { const r = b.getBBox(); return {x: r.x, w: r.width}; }")
            drawn.setdefault(bar.get_attribute("data-job"), []).append(box)
        shot = tmp_path / "report.png"
        page.screenshot(path=str(shot), full_page=True)
        if SCREENSHOT_DIR:
            page.screenshot(path=str(Path(SCREENSHOT_DIR) / "report.png"), full_page=True)
        browser.close()
    assert errors == [], errors
    assert requests == [], requests
    assert sorted(drawn) == sorted(j.job for j in plan.jobs)
    for job in plan.jobs:
        (box,) = drawn[job.job]  # one bar per job
        assert box["x"] == pytest.approx(left + job.start_h * per_h, abs=0.6)
        assert box["w"] == pytest.approx(max(2.0, (job.end_h - job.start_h) * per_h), abs=0.6)
    assert shot.stat().st_size > 10_000  # a real rendered page, not a blank one
