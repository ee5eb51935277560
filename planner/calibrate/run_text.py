"""A run file's text, read as untrusted input: bounded in size, UTF-8 only, lines of bounded length.

Every refusal is one line naming the file (and the line or byte where the reading stopped).
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

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
        raise RunError(f"{path}: line {line}: binary data (a NUL byte); a {what} is UTF-8 text")
    try:
        return raw.decode("utf-8-sig")  # -sig: a byte-order mark some editors write is not data
    except UnicodeDecodeError as exc:
        line = raw.count(b"\n", 0, exc.start) + 1
        raise RunError(f"{path}: line {line}: byte 0x{raw[exc.start]:02x} is not UTF-8 (Latin-1, "
                       f"or binary?); save the {what} as UTF-8") from None


def long_line(text: str) -> tuple[int, int] | None:
    """The first line longer than MAX_LINE_CHARS, as (line number, length); None if none is."""
    for number, line in enumerate(text.splitlines(), start=1):
        if len(line) > MAX_LINE_CHARS:
            return number, len(line)
    return None


def refuse_long_lines(path: Path, text: str) -> None:
    found = long_line(text)
    if found is not None:
        raise RunError(f"{path}: line {found[0]}: {found[1]:,} characters, more than the "
                       f"{MAX_LINE_CHARS:,} a row of runs may have")


class _JsonRefusal(ValueError):
    """A JSON value the reader will not build; the message says why."""


def _no_repeated_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in pairs:
        if key in out:
            raise _JsonRefusal(f"key {key[:60]!r} appears twice in one object; keep one")
        out[key] = value
    return out


def _bounded_int(text: str) -> int:
    if len(text.lstrip("-")) > MAX_INT_DIGITS:
        raise _JsonRefusal(f"an integer of {len(text):,} digits; at most {MAX_INT_DIGITS} are read")
    return int(text)


def _finite_float(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise _JsonRefusal(f"{text[:40]} is beyond a double (about 1.8e308); not a measurement")
    return value


def _no_constant(name: str) -> float:
    raise _JsonRefusal(f"{name} is not a measurement; write a finite number")


def load_json(text: str, where: str) -> Any:
    """JSON read as untrusted input: a repeated key, NaN or Infinity, a number beyond a double, an
    integer over MAX_INT_DIGITS digits or nesting deeper than Python's stack: one RunError line."""
    try:
        return json.loads(text, object_pairs_hook=_no_repeated_keys, parse_int=_bounded_int,
                          parse_float=_finite_float, parse_constant=_no_constant)
    except json.JSONDecodeError as exc:
        at = f"line {exc.lineno}, column {exc.colno}" if "\n" in text else f"column {exc.colno}"
        raise RunError(f"{where}: not JSON: {exc.msg} ({at})") from None
    except _JsonRefusal as exc:
        raise RunError(f"{where}: {exc}") from None
    except RecursionError:
        raise RunError(f"{where}: JSON nested too deeply; a run record is a flat object") from None
