"""The figures of a Megatron-LM or torchtitan log, read line by line in time linear in its length.

Each line is searched with str.find for the fixed words the stacks print, and only the number right
after a word is read, by an anchored pattern. A pattern with `.*?` between two words, run over the
whole text, tries again from every start it finds: a 1.2 MB line of repeated start words took
minutes. Lines longer than MAX_LINE_CHARS cannot be iteration lines (those are < 1 KiB) and are
skipped; a number that is not one (`1.2.3`, `0`, `1e999`) is refused with its line.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from plan.models.said import say_as
from plan.planner.calibrate.run_text import MAX_LINE_CHARS
from plan.planner.calibrate.runs import RunError

ANSI = re.compile(r"\x1b\[[0-9;]*m")  # no nested repeats: each escape is read once
MEGATRON_ELAPSED = "elapsed time per iteration (ms):"
MEGATRON_BATCH = "global batch size:"
MEGATRON_MEMORY, MEGATRON_RESERVED = "memory (MB)", "max reserved:"
# After "iteration": the iteration, "/", the total, "|"; 18 digits at most (a number, not text).
_ITERATION = re.compile(r"\s+(\d{1,18})\s*/\s*\d+\s*\|")
_WHOLE = re.compile(r"\s*(\d{1,18})(?!\d)")
_NUMBER = re.compile(r"\s*(\d[\d.]*)")
_GIB = re.compile(r"\s*(\d[\d.]*)\s*GiB")
_TPS = re.compile(r"\s*(\d[\d,]*)")
# the figure a log's number is, in the reader's language (said only when it is refused)
_FIGURE_WORDS: dict[str, Callable[[], str]] = {
    "elapsed time (ms)": lambda: say_as("calib.log_elapsed", "elapsed time (ms)"),
    "max reserved (MB)": lambda: say_as("calib.log_reserved", "max reserved (MB)"),
    "memory (GiB)": lambda: say_as("calib.log_memory", "memory (GiB)"),
}


@dataclass
class LogFigures:
    megatron_steps: list[tuple[int, float]] = field(default_factory=list)  # (iteration, ms)
    global_batch: int | None = None  # the last one printed
    reserved_mb: list[float] = field(default_factory=list)
    # (step, GiB, tokens/s per GPU)
    titan_steps: list[tuple[int, float, float]] = field(default_factory=list)
    long_lines: int = 0  # lines skipped for their length


def scan_log(text: str, path: Path) -> LogFigures:
    figures = LogFigures()
    for number, line in _lines(text, figures):
        where = f"{path}:{number}"
        _megatron(line, where, figures)
        step = _titan(line, where)
        if step is not None:
            figures.titan_steps.append(step)
    return figures


def _lines(text: str, figures: LogFigures) -> Iterator[tuple[int, str]]:
    for number, line in enumerate(text.splitlines(), start=1):
        if len(line) > MAX_LINE_CHARS:
            figures.long_lines += 1
            continue
        yield number, ANSI.sub("", line) if "\x1b" in line else line


def _megatron(line: str, where: str, figures: LogFigures) -> None:
    elapsed = line.find(MEGATRON_ELAPSED)
    if elapsed >= 0:
        iteration = _iteration_before(line, elapsed)
        if iteration is not None:
            at = elapsed + len(MEGATRON_ELAPSED)
            ms = _positive(line, at, _NUMBER, where, "elapsed time (ms)")
            if ms is not None:
                figures.megatron_steps.append((iteration, ms))
    batch = line.find(MEGATRON_BATCH)
    if batch >= 0:
        found = _WHOLE.match(line, batch + len(MEGATRON_BATCH))
        if found is not None:
            figures.global_batch = int(found.group(1))
    memory = line.find(MEGATRON_MEMORY)
    if memory >= 0:
        reserved = line.find(MEGATRON_RESERVED, memory)
        if reserved >= 0:
            at = reserved + len(MEGATRON_RESERVED)
            mb = _positive(line, at, _NUMBER, where, "max reserved (MB)")
            if mb is not None:
                figures.reserved_mb.append(mb)


def _iteration_before(line: str, end: int) -> int | None:
    """The first `iteration N/ M |` before `end`: each "iteration" is tried once, forward only."""
    at = line.find("iteration", 0, end)
    while at >= 0:
        found = _ITERATION.match(line, at + len("iteration"), end)
        if found is not None:
            return int(found.group(1))
        at = line.find("iteration", at + 1, end)
    return None


def _titan(line: str, where: str) -> tuple[int, float, float] | None:
    """torchtitan's `step: N ... memory: X GiB ... tps: T` (each word after the one before)."""
    at = line.find("step:")
    if at < 0:
        return None
    step = _WHOLE.match(line, at + len("step:"))
    if step is None:
        return None
    at = line.find("memory:", step.end())
    while at >= 0 and _GIB.match(line, at + len("memory:")) is None:
        at = line.find("memory:", at + 1)
    if at < 0:
        return None
    gib = _positive(line, at + len("memory:"), _GIB, where, "memory (GiB)")
    tps_at = line.find("tps:", at)
    if gib is None or tps_at < 0:
        return None
    tps = _positive(line, tps_at + len("tps:"), _TPS, where, "tps", commas=True)
    return None if tps is None else (int(step.group(1)), gib, tps)


def _positive(line: str, at: int, pattern: re.Pattern[str], where: str, what: str,
              commas: bool = False) -> float | None:
    """The number `pattern` reads at `at`: None where there is none; RunError where it is not a
    finite positive number."""
    found = pattern.match(line, at)
    if found is None:
        return None
    text = found.group(1)
    try:
        value = float(text.replace(",", "") if commas else text)
    except ValueError:
        raise RunError(say_as("calib.log_not_number", "{where}: {what} {text} is not a number",
                              where=where, what=_figure(what), text=repr(text[:40]))) from None
    if not math.isfinite(value) or value <= 0:
        raise RunError(say_as("calib.log_not_positive", "{where}: {what} {text} must be a finite "
                              "number above 0", where=where, what=_figure(what),
                              text=repr(text[:40])))
    return value


def _figure(what: str) -> str:
    """The figure's name, keyed where it is a sentence ('tps' is the log's own word)."""
    return _FIGURE_WORDS[what]() if what in _FIGURE_WORDS else what
