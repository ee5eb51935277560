"""Provenance a fresh clone can follow (issue 13 item 5): catalog sources cite public originals,
never a path outside the repository, and the rows the benches read live in bench/data with their
sources."""

from __future__ import annotations

import csv
import re
from pathlib import Path

import pytest
import yaml

from tests.bench_modules import load_bench

REPO = Path(__file__).resolve().parents[2]
# Files beside the repository (../shared/...) that a fresh clone does not have.
OUTSIDE = re.compile(
    r"\.\./|shared/(reference|validation|background)|\b(platforms|reliability|prices-2026"
    r"|launch-configs)\.md\b|\b(models-2026|reference/gpus|reference/models)\.yaml"
)


def _strings(node, path="") -> list[tuple[str, str]]:
    if isinstance(node, dict):
        return [item for key, value in node.items() for item in _strings(value, f"{path}.{key}")]
    if isinstance(node, list):
        return [item for i, value in enumerate(node) for item in _strings(value, f"{path}[{i}]")]
    return [(path, node)] if isinstance(node, str) else []


@pytest.mark.parametrize("name", ["gpus", "models", "platforms", "exchange_rates"])
def test_catalog_text_cites_no_path_outside_the_repository(name):
    path = REPO / "models" / "data" / f"{name}.yaml"
    text = path.read_text(encoding="utf-8")
    bad = [
        (where, value[:80])
        for where, value in _strings(yaml.safe_load(text))
        if OUTSIDE.search(value)
    ]
    assert bad == []
    assert not [line for line in text.splitlines() if line.startswith("#") and OUTSIDE.search(line)]


# A path beside the repository, as code or docs would cite it.
OUTSIDE_PATH = re.compile(r"\.\./shared|(?<![\w/])shared/(reference|validation|background)")


def test_code_and_docs_cite_no_path_outside_the_repository():
    """Docstrings and docs cite the public upstream file, or the copy in docs/sources/."""
    files = [p for folder in ("models", "constraints", "planner", "bench", "tests", "docs")
             for p in sorted((REPO / folder).rglob("*")) if p.suffix in (".py", ".md")]
    files += [REPO / "README.md"]
    bad = [f"{p.relative_to(REPO)}:{i}" for p in files
           for i, line in enumerate(p.read_text(encoding="utf-8").splitlines(), start=1)
           if OUTSIDE_PATH.search(line) and p != Path(__file__)]
    assert bad == []
    cited = {
        m
        for p in files
        for m in re.findall(r"docs/sources/[\w-]+\.\w+", p.read_text(encoding="utf-8"))
    }
    assert cited and all((REPO / c).is_file() for c in cited), cited


@pytest.mark.parametrize(
    "name", ["throughput_public.csv", "memory_public.csv", "whole_runs.csv", "context_limits.csv"]
)
def test_bench_rows_are_in_the_repository_each_with_its_source(name):
    rows = list(csv.DictReader((REPO / "bench" / "data" / name).open(encoding="utf-8", newline="")))
    assert len(rows) >= 5
    ids = [row["id"] for row in rows]
    assert len(set(ids)) == len(ids)
    for row in rows:
        source = row["source"].strip()
        assert len(source) > 10 and not source.lower().startswith("same"), row["id"]


def test_the_benchmark_reads_its_rows_from_the_repository():
    module = load_bench("validate_estimates")
    assert Path(module.DEFAULT_DIR).resolve() == (REPO / "bench" / "data").resolve()
    assert Path(module.DEFAULT_DIR).is_dir()


def test_the_validation_benchmark_runs_and_predicts_every_row(tmp_path):
    """The bench must not rot: a card check added elsewhere once made it fail on its first row."""
    import csv as _csv
    import subprocess
    import sys

    out_csv = tmp_path / "rows.csv"
    done = subprocess.run(
        [sys.executable, str(REPO / "bench" / "validate_estimates.py"), "--csv", str(out_csv)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert "band coverage" in done.stdout
    assert "whole runs (whole_runs.csv): n=" in done.stdout  # every whole run found a layout
    rows = list(_csv.DictReader(out_csv.open(encoding="utf-8")))
    published = sum(
        1
        for name in ("throughput_public.csv", "memory_public.csv")
        for _ in _csv.DictReader((REPO / "bench" / "data" / name).open(encoding="utf-8"))
    )
    assert len(rows) >= published
    assert all(row["predicted"] not in ("", "None") for row in rows), [
        r["id"] for r in rows if not r["predicted"]
    ]
