"""Reading and writing a batch results file (CSV or JSON Lines, chosen by suffix).

CSV cells always read back (the csv module's field limit is raised to the file's own cap) and a text
cell a spreadsheet would run as a formula is written escaped (FORMULA_STARTS). Rows read back are
checked (row_check.py); appending rows as they finish is results_append.py's.
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from plan.models.errors import InputError
from plan.models.json_words import json_nesting, json_problem
from plan.models.said import say_as
from plan.models.yaml_io import read_bounded
from plan.planner.atomic_file import write_atomically
from plan.planner.batch.row_check import row_problem
from plan.planner.batch.rows import BOUND_COLUMNS, COLUMNS, LEGACY_COLUMNS, Row
from plan.planner.i18n.said import said_of
from plan.planner.plain_text import json_text

FORMATS = {".csv": "csv", ".jsonl": "jsonl"}
MAX_RESULTS_BYTES = 1_000_000_000  # a results file read back for resume: about 2 million rows


class ResultsFileError(ValueError):
    """The output path cannot be used; one line naming the file."""


def results_format(path: Path) -> str:
    """'csv' or 'jsonl' from the suffix. Raises ResultsFileError for any other suffix."""
    fmt = FORMATS.get(path.suffix.lower())
    if fmt is None:
        raise ResultsFileError(say_as(
            "batch.results_format", "{path}: unknown results format {suffix}; use a .csv or "
            ".jsonl file", path=path, suffix=repr(path.suffix or "(no suffix)")))
    return fmt


FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r", "'")
"""First characters a spreadsheet may run as a formula (OWASP's CSV injection list), and the quote
that escapes them: such a CSV text cell is written with a leading "'" and read back without it."""


def _cell(value: object) -> object:
    if value is None:
        return ""
    if isinstance(value, str) and value.startswith(FORMULA_STARTS):
        return "'" + value
    return value


def _uncell(value: object) -> object:
    return value[1:] if isinstance(value, str) and value.startswith("'") else value


def render(rows: Iterable[Row], fmt: str, header: bool = True) -> str:
    """The rows as the file's text (CSV: with its header line unless `header` is False)."""
    buffer = io.StringIO()
    if fmt == "csv":
        writer = csv.DictWriter(buffer, fieldnames=COLUMNS, lineterminator="\n")
        if header:
            writer.writeheader()
        for row in rows:
            writer.writerow({k: _cell(v) for k, v in row.to_dict().items()})
    else:
        for row in rows:
            buffer.write(json_text(json.dumps(row.to_dict(), ensure_ascii=False)) + "\n")
    return buffer.getvalue()


def write_rows(path: Path, rows: Iterable[Row]) -> None:
    """Replace `path` with `rows` atomically (see plan.planner.atomic_file)."""
    write_atomically(path, render(rows, results_format(path)))


@dataclass(frozen=True)
class StoredRows:
    """What a results file holds: the rows that pass their check, in file order; a line for each one
    that does not (or a torn last line); `clean` when there was none of those."""

    rows: list[Row]
    problems: list[str]

    @property
    def clean(self) -> bool:
        return not self.problems


def read_rows(path: Path) -> list[Row]:
    """The rows of an earlier run that pass their check, or [] if the file does not exist (see
    `read_results`)."""
    return read_results(path).rows


def read_results(path: Path) -> StoredRows:
    """The rows of an earlier run, each checked (row_check.py): one that fails is left out and
    named.

    Raises ResultsFileError when the file exists but is not a `plan batch` results file (another
    header, or no line of it a row), so the caller never overwrites someone's unrelated file.
    """
    if not path.exists():
        return StoredRows([], [])
    fmt = results_format(path)
    try:
        text = read_bounded(path, what="results file", limit=MAX_RESULTS_BYTES).decode("utf-8")
        records, problems = (_csv_records(text) if fmt == "csv" else _jsonl_records(text))
    except InputError as exc:
        raise ResultsFileError(exc.problems[0]) from None
    except (OSError, UnicodeDecodeError, ValueError, csv.Error) as exc:
        raise _foreign(path, exc) from None
    rows: list[Row] = []
    for number, record in records:
        try:
            row = Row.from_dict(record)
        except (ValueError, TypeError, AttributeError, KeyError) as exc:
            problems.append(say_as("batch.stored_row", "row {number}: {problem}", number=number,
                                   problem=said_of(exc)))
            continue
        problem = row_problem(row)
        if problem is None:
            rows.append(row)
        else:
            problems.append(say_as("batch.stored_row", "row {number}: {problem}", number=number,
                                   problem=problem))
    if fmt == "jsonl" and not rows and problems and not text.startswith('{"file": '):
        # not one line of it is a row: someone else's file
        raise _foreign(path, ValueError(problems[0]))
    return StoredRows(rows, problems)


def _foreign(path: Path, exc: BaseException) -> ResultsFileError:
    return ResultsFileError(say_as(
        "batch.results_foreign", "{path}: exists and is not a `plan batch` results file "
        "({problem}); refusing to overwrite it: choose another -o or remove it", path=path,
        problem=said_of(exc)))


def _torn(text: str) -> tuple[str, list[str]]:
    """The text up to its last whole line, and a problem when something followed it (a run ended
    while writing its last row)."""
    if not text or text.endswith("\n"):
        return text, []
    return text[:text.rfind("\n") + 1], [say_as(
        "batch.row_torn", "the last line is incomplete (a run ended while writing it)")]


def _csv_records(text: str) -> tuple[list[tuple[int, dict[str, Any]]], list[str]]:
    whole, problems = _torn(text)
    # a long cell we wrote must read back (Python's default: 128 KiB)
    csv.field_size_limit(MAX_RESULTS_BYTES)
    if not whole and text and not ",".join(COLUMNS).startswith(text):
        # a torn header is ours; any other single line is not
        raise ValueError(say_as("batch.results_no_header", "no header line"))
    reader = csv.DictReader(io.StringIO(whole), restkey="(extra cells)")
    if reader.fieldnames is not None and tuple(reader.fieldnames) not in (
            COLUMNS, BOUND_COLUMNS, LEGACY_COLUMNS):
        raise ValueError(say_as("batch.results_columns", "columns are {columns}",
                                columns=", ".join(reader.fieldnames)))
    records = [(number, {k: _uncell(v) for k, v in record.items()})
               for number, record in enumerate(reader, 1)]
    return records, problems


def _jsonl_records(text: str) -> tuple[list[tuple[int, Any]], list[str]]:
    whole, problems = _torn(text)
    records: list[tuple[int, Any]] = []
    for number, line in enumerate(whole.splitlines(), 1):
        if not line.strip():
            continue
        try:
            records.append((number, json.loads(line)))
        except json.JSONDecodeError as exc:
            problems.append(say_as("batch.row_not_json", "row {number}: not JSON ({problem})",
                                   number=number, problem=json_problem(exc)))
        except RecursionError:
            problems.append(say_as("batch.row_not_json", "row {number}: not JSON ({problem})",
                                   number=number, problem=json_nesting()))
        except ValueError as exc:  # (an integer past Python's digit limit)
            problems.append(say_as("batch.row_not_json", "row {number}: not JSON ({problem})",
                                   number=number, problem=str(exc)))
    return records, problems
