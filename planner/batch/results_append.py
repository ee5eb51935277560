"""Keeping a results file current while a batch runs: each finished row appended, never the whole
file.

A row is one write and a flush to the operating system as it finishes; the file is fsynced at most
every FSYNC_EVERY_S seconds and when the run ends, however it ends (a crash of the machine loses at
most that second; a killed process loses nothing written). The whole file is written only where it
must be: once at the start when the earlier file held rows that failed their check or a torn last
line (they are left out, and the run has said so), and once at the end when the rows on disk are
not in their final order or hold rows this run replaced (see `final_rows`). Rows of other inputs
(other files, variants or contents) are kept.
"""

from __future__ import annotations

import os
import time
from collections.abc import Sequence
from pathlib import Path
from typing import IO

from plan.planner.atomic_file import write_atomically
from plan.planner.batch.results_file import render, results_format
from plan.planner.batch.rows import COLUMNS, Row

FSYNC_EVERY_S = 1.0
HEADER = ",".join(COLUMNS) + "\n"


def row_key(row: Row) -> tuple[str, str, str]:
    """What a row answers: this file, variant and content hash (tasks.content_hash)."""
    return (row.file, row.variant, row.hash)


def final_rows(previous: Sequence[Row], done: Sequence[Row]) -> list[Row]:
    """The file after a run: the earlier rows this run did not answer again (other inputs: kept, in
    their order), then this run's rows in input order."""
    answered = {row_key(row) for row in done}
    return [row for row in previous if row_key(row) not in answered] + list(done)


class ResultsAppender:
    """Appends rows to `path` (CSV or JSON Lines) that already holds `previous`."""

    def __init__(self, path: Path, previous: Sequence[Row], rewrite: bool = False) -> None:
        self.path = path
        self.format = results_format(path)
        self.on_disk = list(previous)  # what the file holds, in its order
        if rewrite or not self._appendable():
            write_atomically(path, render(self.on_disk, self.format))
        self._file: IO[str] | None = open(path, "a", encoding="utf-8", newline="")  # noqa: SIM115
        self._synced = time.monotonic()

    def _appendable(self) -> bool:
        """Whether rows can go at the end as it is: a CSV file must start with today's header (one
        written before rows had gap and bound is rewritten with it)."""
        try:
            with open(self.path, encoding="utf-8", newline="") as file:
                first = file.readline(len(HEADER) + 1)
        except FileNotFoundError:
            return False
        return first == HEADER if self.format == "csv" else first != ""

    def append(self, row: Row) -> None:
        assert self._file is not None
        self._file.write(render([row], self.format, header=False))
        self._file.flush()
        self.on_disk.append(row)
        if time.monotonic() - self._synced >= FSYNC_EVERY_S:
            self._sync()

    def _sync(self) -> None:
        assert self._file is not None
        os.fsync(self._file.fileno())
        self._synced = time.monotonic()

    def close(self) -> None:
        """Flush and fsync what was appended (every exit path of a run calls this)."""
        if self._file is None:
            return
        try:
            self._file.flush()
            self._sync()
        finally:
            self._file.close()
            self._file = None

    def finish(self, final: list[Row]) -> None:
        """Close, and write the file whole once if its rows on disk are not `final` (out of order,
        or rows this run replaced)."""
        self.close()
        if self.on_disk != final:
            write_atomically(self.path, render(final, self.format))
            self.on_disk = list(final)
