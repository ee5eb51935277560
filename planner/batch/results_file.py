"""Reading and atomically writing a batch results file (CSV or JSON Lines, chosen by suffix)."""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Iterable
from pathlib import Path

from plan.models.errors import InputError
from plan.models.yaml_io import read_bounded
from plan.planner.atomic_file import write_atomically
from plan.planner.batch.rows import COLUMNS, LEGACY_COLUMNS, Row

FORMATS = {".csv": "csv", ".jsonl": "jsonl"}
MAX_RESULTS_BYTES = 1_000_000_000  # a results file read back for resume: about 2 million rows


class ResultsFileError(ValueError):
    """The output path cannot be used; one line naming the file."""


def results_format(path: Path) -> str:
    """'csv' or 'jsonl' from the suffix. Raises ResultsFileError for any other suffix."""
    fmt = FORMATS.get(path.suffix.lower())
    if fmt is None:
        raise ResultsFileError(f"{path}: unknown results format {path.suffix or '(no suffix)'!r}; "
                               f"use a .csv or .jsonl file")
    return fmt


def render(rows: Iterable[Row], fmt: str) -> str:
    buffer = io.StringIO()
    if fmt == "csv":
        writer = csv.DictWriter(buffer, fieldnames=COLUMNS, lineterminator="\n")
        writer.writeheader()
        for row in rows:
            writer.writerow({k: "" if v is None else v for k, v in row.to_dict().items()})
    else:
        for row in rows:
            buffer.write(json.dumps(row.to_dict(), ensure_ascii=False) + "\n")
    return buffer.getvalue()


def write_rows(path: Path, rows: Iterable[Row]) -> None:
    """Replace `path` with `rows` atomically (see plan.planner.atomic_file)."""
    write_atomically(path, render(rows, results_format(path)))


def read_rows(path: Path) -> list[Row]:
    """The rows of an earlier run, or [] if the file does not exist.

    Raises ResultsFileError when the file exists but is not a `plan batch` results file, so the caller
    never overwrites someone's unrelated file.
    """
    if not path.exists():
        return []
    fmt = results_format(path)
    try:
        text = read_bounded(path, what="results file", limit=MAX_RESULTS_BYTES).decode("utf-8")
        if fmt == "csv":
            reader = csv.DictReader(io.StringIO(text))
            if reader.fieldnames is not None and tuple(reader.fieldnames) not in (COLUMNS, LEGACY_COLUMNS):
                raise ValueError(f"columns are {', '.join(reader.fieldnames)}")
            return [Row.from_dict(record) for record in reader]
        return [Row.from_dict(json.loads(line)) for line in text.splitlines() if line.strip()]
    except InputError as exc:
        raise ResultsFileError(exc.problems[0]) from None
    except (OSError, UnicodeDecodeError, ValueError, TypeError, AttributeError, KeyError) as exc:
        raise ResultsFileError(f"{path}: exists and is not a `plan batch` results file ({exc}); "
                               f"refusing to overwrite it: choose another -o or remove it") from None
