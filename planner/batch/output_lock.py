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

try:
    import fcntl
except ImportError:  # not POSIX: no lock, the writability check still holds
    fcntl = None  # type: ignore[assignment]


class OutputLockError(Exception):
    """The results file cannot be used now; the message is one line naming it."""


def lock_path(output: Path) -> Path:
    return output.parent / f".{output.name}.lock"


@contextlib.contextmanager
def locked_output(output: Path) -> Iterator[None]:
    """Hold the results file's lock for the block. Raises OutputLockError if the folder is not
    writable or another run holds the lock."""
    output = output.resolve()  # one lock per file, however it is named (a symlinked -o included)
    path = lock_path(output)
    if output.exists() and not os.access(output, os.W_OK):
        raise OutputLockError(f"{output}: the results file is not writable; choose another -o")
    try:
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    except OSError as exc:
        raise OutputLockError(f"{output}: cannot write in {output.parent} ({exc.strerror or exc}); "
                              f"choose a writable folder for -o") from None
    try:
        if fcntl is not None:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError:
                raise OutputLockError(f"{output}: another `plan batch` is writing this file (it "
                                      f"holds {path}); "
                                      f"wait for it to finish, or choose another -o") from None
        probe = output.parent / f".{output.name}.{os.getpid()}.probe"
        # the results file is replaced by renaming a new file over it: that needs a writable folder
        try:
            probe.touch()
            probe.unlink()
        except OSError as exc:
            raise OutputLockError(f"{output}: cannot write in {output.parent} "
                                  f"({exc.strerror or exc}); "
                                  f"choose a writable folder for -o") from None
        yield
    finally:
        os.close(fd)
