"""The HTML report in a real browser: headless Chromium (the Debian package) driven by Playwright's
Python API. The page renders with no console errors and no network request, the Gantt chart has one
bar per job at the right offsets, and a screenshot is produced. Skips, saying why, where Chromium or
Playwright is absent.
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
from tests.planner.builders import WALL_NET_S

MEDICAL = REPO / "scenarios" / "medical_hybrid.yaml"
CHROMIUM = next((p for p in (os.environ.get("PLAN_CHROMIUM"), shutil.which("chromium"),
                             shutil.which("chromium-browser")) if p), None)
# keep the screenshot for a person to look at
SCREENSHOT_DIR = os.environ.get("PLAN_REPORT_SCREENSHOT_DIR")


@pytest.fixture(scope="module")
def medical_page(tmp_path_factory):
    out = tmp_path_factory.mktemp("report") / "report.html"
    result = CliRunner().invoke(app, ["report", str(MEDICAL), "-o", str(out)])
    assert result.exit_code == 0, result.output
    loaded = load_scenario(MEDICAL)
    return out, solve(loaded, SolveOptions(time_limit_s=WALL_NET_S)).plans[0]


def test_page_is_self_contained(medical_page):
    text = medical_page[0].read_text()
    assert (
        "http://" not in text
        and "https://" not in text
        and "src=" not in text
        and "<link" not in text
    )


def test_page_renders_in_chromium_with_one_bar_per_job(medical_page, tmp_path):
    if CHROMIUM is None:
        pytest.skip("no Chromium: install the Debian package `chromium` (apt-get install chromium) "
                    "to run the browser check")
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
        page.on(
            "request", lambda r: requests.append(r.url) if not r.url.startswith("file:") else None
        )
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


# Pages issue 50 found wrong: lab_six_jobs ("up to 11 in use" on 8 GPUs, the largest job without a
# label, labels over bars) and grant_qlora_compare (labels over the lane name; its front squeezed
# into a corner by the budget).
PAGES = {"lab_six_jobs": [], "grant_qlora_compare": ["--pareto"]}
WIDTHS_PX = (1280, 390)
BOXES_JS = """sel => [...document.querySelectorAll(sel)].map(e => {
  const r = e.getBoundingClientRect();
  return {job: e.dataset.job || null, place: e.dataset.place || null,
          size: e.dataset.gpus ? e.dataset.gpus * (e.dataset.endH - e.dataset.startH) : 0,
          x0: r.left, x1: r.right, y0: r.top, y1: r.bottom};
})"""
NAMES_JS = """() => [...document.querySelectorAll('svg[role=img]')].map(s => {
  const ids = (s.getAttribute('aria-labelledby') || '').split(' ').filter(Boolean);
  return ids.map(i => document.getElementById(i)?.textContent || '').join(' ')
         || s.getAttribute('aria-label') || '';
})"""


@pytest.fixture(scope="module")
def issue_pages(tmp_path_factory):
    """The pages through the API with a generous time limit: on a loaded machine the CLI's default
    limit can end a solve before its first plan, and the page would have no chart to check."""
    from plan.planner.pareto.front import pareto_front
    from plan.planner.report_html import report_html
    from plan.planner.session import Session

    folder = tmp_path_factory.mktemp("issue50")
    for stem, extra in PAGES.items():
        loaded = load_scenario(REPO / "scenarios" / f"{stem}.yaml")
        result = solve(loaded, SolveOptions(time_limit_s=WALL_NET_S))
        assert result.plans, result.status
        front = pareto_front(Session.from_loaded(loaded)) if "--pareto" in extra else None
        (folder / f"{stem}.html").write_text(report_html(result, loaded, front))
    return folder


def _overlap(a: dict, b: dict, slack_px: float = 0.25) -> bool:
    return (a["x0"] + slack_px < b["x1"] and b["x0"] + slack_px < a["x1"]
            and a["y0"] + slack_px < b["y1"] and b["y0"] + slack_px < a["y1"])


@pytest.mark.parametrize("width_px", WIDTHS_PX)
@pytest.mark.parametrize("stem", sorted(PAGES))
def test_report_fits_the_screen_and_labels_overlap_nothing(issue_pages, stem, width_px):
    if CHROMIUM is None:
        pytest.skip("no Chromium: install the Debian package `chromium` (apt-get install chromium)")
    sync_api = pytest.importorskip("playwright.sync_api", reason="playwright is not installed")
    with sync_api.sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        page = browser.new_page(viewport={"width": width_px, "height": 900})
        page.goto((issue_pages / f"{stem}.html").as_uri())
        page.wait_for_load_state("load")
        scroll_width = page.evaluate("document.documentElement.scrollWidth")
        labels = page.evaluate(BOXES_JS, "svg#gantt text.bar-label")
        bars = page.evaluate(BOXES_JS, "svg#gantt rect.job-bar")
        waits = page.evaluate(BOXES_JS, "svg#gantt rect.wait")
        lane_names = page.evaluate(BOXES_JS, "svg#gantt .lane-label, svg#gantt .lane-cap")
        names = page.evaluate(NAMES_JS)
        mains = page.get_by_role("main").count()
        lanes_text = " ".join(page.locator("svg#gantt .lane-cap").all_text_contents())
        browser.close()
    assert scroll_width <= width_px  # no sideways scroll of the page
    assert mains == 1 and len(names) >= 4 and all(len(n.strip()) > 10 for n in names), names
    if stem == "lab_six_jobs":
        assert "8x a800-80gb, up to 8 in use" in lanes_text
    own = {b["job"]: b for b in bars}
    for label in labels:
        if label["place"] == "inside":
            bar = own[label["job"]]
            assert bar["x0"] <= label["x0"] and label["x1"] <= bar["x1"], label
        others = [b for b in bars if b["job"] != label["job"] or label["place"] != "inside"]
        for shape in [*others, *waits, *lane_names]:
            assert not _overlap(label, shape), (label, shape)
        assert not any(_overlap(label, o) for o in labels if o is not label), label
    largest = max(bars, key=lambda b: b["size"])["job"]
    assert largest in {label["job"] for label in labels}  # the biggest job is always named


def test_report_has_no_serious_accessibility_finding(issue_pages):
    """axe-core (shipped inside the axe-playwright-python wheel, so offline) on each page."""
    if CHROMIUM is None:
        pytest.skip("no Chromium: install the Debian package `chromium` (apt-get install chromium)")
    sync_api = pytest.importorskip("playwright.sync_api", reason="playwright is not installed")
    axe = pytest.importorskip("axe_playwright_python.sync_playwright",
                              reason="axe-playwright-python is not installed (pip install -e "
                              "'.[test]')")
    findings = {}
    with sync_api.sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        for stem in PAGES:
            for width_px in WIDTHS_PX:
                page = browser.new_page(viewport={"width": width_px, "height": 900})
                page.goto((issue_pages / f"{stem}.html").as_uri())
                result = axe.Axe().run(page)
                findings[(stem, width_px)] = [(v["id"], v["impact"], len(v["nodes"]))
                                              for v in result.response["violations"]]
                page.close()
        browser.close()
    assert all(isinstance(f, list) for f in findings.values()) and len(findings) == 4
    serious = {k: [f for f in v if f[1] in ("serious", "critical")] for k, v in findings.items()}
    assert all(not v for v in serious.values()), serious


def test_label_widths_are_measured_high_in_the_browser_font():
    """Labels are placed from widths estimated in Python: each must bound what Chromium draws."""
    if CHROMIUM is None:
        pytest.skip("no Chromium: install the Debian package `chromium` (apt-get install chromium)")
    sync_api = pytest.importorskip("playwright.sync_api", reason="playwright is not installed")
    from plan.planner.report_html.bar_labels import text_width_px

    probes = ["mmmmwwww", "0123456789", "WWMMOODD", "iiiilll", "abcdefghijklmnopqrstuvwxyz",
              "ABCDEFGHIJKLMNOPQRSTUVWXYZ", "中文任务", "cpt-qwen14b (8x a800-80gb)"]
    with sync_api.sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        page = browser.new_page()
        page.set_content('<svg width="3000" height="40"><text id="t" x="0" y="20" '
                         'style="font-family: system-ui, -apple-system, sans-serif; font-size: '
                         '11px"></text></svg>')
        measure = ("s => { const t = document.getElementById('t'); t.textContent = s; "
                   "return t.getBBox().width; }")
        drawn = {p: page.evaluate(measure, p) for p in probes}
        browser.close()
    for probe, width_px in drawn.items():
        assert 0 < width_px <= text_width_px(probe), (probe, width_px)
