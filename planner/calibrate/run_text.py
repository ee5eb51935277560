"""A run file's text, read as untrusted input: bounded in size, UTF-8 only, lines of bounded length.

Every refusal is one line naming the file (and the line or byte where the reading stopped).
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

from plan.models.file_words import what_word
from plan.models.json_words import json_phrase
from plan.models.said import say_as
from plan.models.yaml_io import MAX_INT_DIGITS, read_bounded
from plan.planner.calibrate.runs import RunError

# assumed: a Megatron-LM log prints one ~300-character line per iteration, so 100 MB holds some
# 300,000 iterations, more than a calibration run needs; a CSV of runs is far smaller.
MAX_RUN_FILE_BYTES = 100_000_000
# assumed: no row of runs, iteration line or JSON record of a run is near 64 KiB (they are < 1 KiB).
MAX_LINE_CHARS = 65_536


def read_run_text(path: Path, what: str = "run file") -> str:
    """The file's text; RunError for a special file, a file over MAX_RUN_FILE_BYTES, binary data or
    bytes that are not UTF-8 (a Latin-1 export, say)."""
    raw = read_bounded(path, what=what, limit=MAX_RUN_FILE_BYTES)
    nul = raw.find(b"\x00")
    if nul >= 0:
        line = raw.count(b"\n", 0, nul) + 1
        raise RunError(say_as("calib.binary", "{path}: line {line}: binary data (a NUL byte); a "
                              "{what} is UTF-8 text", path=str(path), line=line,
                              what=what_word(what)))
    try:
        return raw.decode("utf-8-sig")  # -sig: a byte-order mark some editors write is not data
    except UnicodeDecodeError as exc:
        line = raw.count(b"\n", 0, exc.start) + 1
        raise RunError(say_as("calib.not_utf8", "{path}: line {line}: byte 0x{byte:02x} is not "
                              "UTF-8 (Latin-1, or binary?); save the {what} as UTF-8",
                              path=str(path), line=line, byte=raw[exc.start],
                              what=what_word(what))) from None


def long_line(text: str) -> tuple[int, int] | None:
    """The first line longer than MAX_LINE_CHARS, as (line number, length); None if none is."""
    for number, line in enumerate(text.splitlines(), start=1):
        if len(line) > MAX_LINE_CHARS:
            return number, len(line)
    return None


def refuse_long_lines(path: Path, text: str) -> None:
    found = long_line(text)
    if found is not None:
        raise RunError(say_as("calib.long_line", "{path}: line {line}: {n:,} characters, more "
                              "than the {most:,} a row of runs may have", path=str(path),
                              line=found[0], n=found[1], most=MAX_LINE_CHARS))


class _JsonRefusal(ValueError):
    """A JSON value the reader will not build; the message says why."""


def _no_repeated_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in pairs:
        if key in out:
            raise _JsonRefusal(say_as("calib.json_key_twice", "key {name} appears twice in one "
                                      "object; keep one", name=repr(key[:60])))
        out[key] = value
    return out


def _bounded_int(text: str) -> int:
    if len(text.lstrip("-")) > MAX_INT_DIGITS:
        raise _JsonRefusal(say_as("calib.json_long_int", "an integer of {n:,} digits; at most "
                                  "{most} are read", n=len(text), most=MAX_INT_DIGITS))
    return int(text)


def _finite_float(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise _JsonRefusal(say_as("calib.json_beyond_double", "{text} is beyond a double (about "
                                  "1.8e308); not a measurement", text=text[:40]))
    return value


def _no_constant(name: str) -> float:
    raise _JsonRefusal(say_as("calib.json_constant", "{name} is not a measurement; write a finite "
                              "number", name=name))


def load_json(text: str, where: str) -> Any:
    """JSON read as untrusted input: a repeated key, NaN or Infinity, a number beyond a double, an
    integer over MAX_INT_DIGITS digits or nesting deeper than Python's stack: one RunError line."""
    try:
        return json.loads(text, object_pairs_hook=_no_repeated_keys, parse_int=_bounded_int,
                          parse_float=_finite_float, parse_constant=_no_constant)
    except json.JSONDecodeError as exc:
        at = (say_as("calib.json_line_column", "line {line}, column {column}", line=exc.lineno,
                     column=exc.colno) if "\n" in text else
              say_as("calib.json_column", "column {column}", column=exc.colno))
        raise RunError(say_as("calib.not_json", "{where}: not JSON: {problem} ({at})", where=where,
                              problem=json_phrase(exc.msg), at=at)) from None
    except _JsonRefusal as exc:
        raise RunError(say_as("calib.at", "{where}: {problem}", where=where,
                              problem=exc.args[0])) from None
    except RecursionError:
        raise RunError(say_as("calib.json_too_deep", "{where}: JSON nested too deeply; a run "
                              "record is a flat object", where=where)) from None
