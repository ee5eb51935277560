"""One `plan batch` at a time per results file, and a results folder known to be writable before any
work.

Two runs writing the same `-o` file would each rewrite it with only their own rows, so one run's
rows would be lost. The first run holds an exclusive lock on `.NAME.lock` beside the file (flock,
released when the process ends, even by SIGKILL); a second run is refused at once with one line.
Creating the lock file also proves the folder is writable, before hours of solving.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from pathlib import Path

from plan.models.file_words import os_reason
from plan.models.said import say_as

try:
    import fcntl
except ImportError:  # not POSIX: no lock, the writability check still holds
    fcntl = None  # type: ignore[assignment]


class OutputLockError(Exception):
    """The results file cannot be used now; the message is one line naming it."""


def lock_path(output: Path) -> Path:
    return output.parent / f".{output.name}.lock"


def _unwritable(output: Path, exc: OSError) -> OutputLockError:
    return OutputLockError(say_as(
        "batch.folder_unwritable", "{path}: cannot write in {folder} ({reason}); choose a writable "
        "folder for -o", path=output, folder=output.parent, reason=os_reason(exc)))


@contextlib.contextmanager
def locked_output(output: Path) -> Iterator[None]:
    """Hold the results file's lock for the block. Raises OutputLockError if the folder is not
    writable or another run holds the lock."""
    output = output.resolve()  # one lock per file, however it is named (a symlinked -o included)
    path = lock_path(output)
    if output.exists() and not os.access(output, os.W_OK):
        raise OutputLockError(say_as("batch.results_read_only",
                                     "{path}: the results file is not writable; choose another -o",
                                     path=output))
    try:
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    except OSError as exc:
        raise _unwritable(output, exc) from None
    try:
        if fcntl is not None:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError:
                raise OutputLockError(say_as(
                    "batch.results_locked", "{path}: another `plan batch` is writing this file "
                    "(it holds {lock}); wait for it to finish, or choose another -o", path=output,
                    lock=path)) from None
        probe = output.parent / f".{output.name}.{os.getpid()}.probe"
        # the results file is replaced by renaming a new file over it: that needs a writable folder
        try:
            probe.touch()
            probe.unlink()
        except OSError as exc:
            raise _unwritable(output, exc) from None
        yield
    finally:
        os.close(fd)
