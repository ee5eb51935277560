"""The one writer of output files: a crash, Ctrl-C or SIGTERM at any point leaves the old file or
the new one, never a mix, and never a temporary file behind.

Each file is written to a temporary file in its own folder, fsynced and renamed over the target. A
set of files (`write_all`: an export) is all or nothing: every temporary file is written first, and
only then are they renamed, so a full disk part-way leaves no new file at all. An existing
symlink is never written through. Every OS error becomes a `WriteFailed` whose message is one
line naming the path and the cause in words (no space, file too large, read-only, permission, too
many open files).
Where a command may write at all is `plan.planner.output_target`'s to check, before the work.
"""

from __future__ import annotations

import contextlib
import os
import signal
import tempfile
import threading
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from types import FrameType
from typing import Any

from plan.planner.interrupts import Interrupted
from plan.planner.os_errors import reason_of
from plan.planner.plain_text import plain


class WriteFailed(OSError):
    """An output that could not be written. An OSError (callers that catch OSError keep working);
    str() is one line: the path and the cause."""

    def __init__(self, path: Path, reason: str, code: int | None = None) -> None:
        super().__init__(code or 0, reason, str(path))
        self.path = Path(path)
        self.reason = reason

    @classmethod
    def from_os_error(cls, path: Path, exc: OSError) -> WriteFailed:
        if isinstance(exc, WriteFailed):
            return exc
        return cls(path, f"cannot write: {reason_of(exc)}", exc.errno)

    def __str__(self) -> str:
        return f"{plain(self.path)}: {self.reason}"


def write_atomically(path: Path, data: str | bytes, mode: int | None = None) -> None:
    """Write `path` whole or not at all (see the module doc). `mode` None keeps the file's
    permissions (a new one gets what the umask gives). Raises WriteFailed."""
    write_all([(Path(path), data, mode)])


def write_all(files: Sequence[tuple[Path, str | bytes, int | None]]) -> None:
    """Write every (path, data, mode) or none: all temporary files first, then the renames."""
    for path, _, _ in files:
        if path.is_symlink():
            raise WriteFailed(path, "is a symbolic link; refusing to write through it "
                                    "(remove it first)")
    staged: list[tuple[str, Path]] = []
    with _removed_on_exit(staged):
        for path, data, mode in files:
            staged.append((_temporary_copy(path, data, mode), path))
        for tmp_name, path in staged:
            try:
                os.replace(tmp_name, path)
            except OSError as exc:
                raise WriteFailed.from_os_error(path, exc) from None
    for folder in {path.parent for path in (p for p, _, _ in files)}:
        _sync_folder(folder)


def _temporary_copy(path: Path, data: str | bytes, mode: int | None) -> str:
    """A fsynced temporary file beside `path` holding `data`; its name."""
    payload = data.encode("utf-8") if isinstance(data, str) else data
    try:
        fd, tmp_name = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    except OSError as exc:
        raise WriteFailed.from_os_error(path, exc) from None
    try:
        # mkstemp's 0600 is not an output's
        os.chmod(tmp_name, _mode(path) if mode is None else mode)
        with os.fdopen(fd, "wb") as tmp:
            tmp.write(payload)
            tmp.flush()
            os.fsync(tmp.fileno())
    except BaseException as exc:
        with contextlib.suppress(OSError):
            os.unlink(tmp_name)
        if isinstance(exc, OSError):
            raise WriteFailed.from_os_error(path, exc) from None
        raise
    return tmp_name


_Handler = Callable[[int, FrameType | None], Any] | int | signal.Handlers


class _Terminated(BaseException):
    """SIGTERM arrived while temporary files existed: raised to remove them, then the signal is
    delivered again to whatever handled it before (by default: the process ends, as it would
    have)."""


@contextlib.contextmanager
def _removed_on_exit(staged: list[tuple[str, Path]]) -> Iterator[None]:
    """Remove the temporary files not yet renamed when the block ends by an exception, Ctrl-C
    (KeyboardInterrupt) or SIGTERM; a SIGTERM is then delivered again to the handler before."""
    previous = _catch_sigterm()
    try:
        yield
    except BaseException as exc:
        for tmp_name, _ in staged:
            with contextlib.suppress(OSError):
                os.unlink(tmp_name)
        if previous is not None:
            signal.signal(signal.SIGTERM, previous)
            previous = None
        if isinstance(exc, _Terminated):
            signal.raise_signal(signal.SIGTERM)  # by default the process ends here, as usual
            raise Interrupted("terminated while writing; no file was left half-written") from None
        raise
    finally:
        if previous is not None:
            signal.signal(signal.SIGTERM, previous)


def _catch_sigterm() -> _Handler | None:
    """Make SIGTERM raise `_Terminated` in this block; the previous handler, or None when signals
    are not ours to change (not the main thread, or SIGTERM ignored)."""
    if threading.current_thread() is not threading.main_thread():
        return None
    previous = signal.getsignal(signal.SIGTERM)
    if previous is signal.SIG_IGN or previous is None:
        return None

    def terminated(signum: int, frame: FrameType | None) -> None:
        raise _Terminated(signum)

    signal.signal(signal.SIGTERM, terminated)
    return previous


def _sync_folder(folder: Path) -> None:
    with contextlib.suppress(OSError):  # make the rename durable; not every file system allows this
        dir_fd = os.open(folder, os.O_RDONLY)
        try:
            os.fsync(dir_fd)
        finally:
            os.close(dir_fd)


def _mode(path: Path) -> int:
    """The file's current permissions, or what a new file gets under the umask."""
    try:
        return path.stat().st_mode & 0o777
    except OSError:
        umask = os.umask(0)
        os.umask(umask)
        return 0o666 & ~umask
