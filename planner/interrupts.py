"""One interrupt policy for every command.

Ctrl-C stops the current solve at once; nothing interrupted is reported or stored as a result (an
interrupted CP-SAT search returns a worse plan that looks like an answer); work already finished
(batch rows) is flushed first; the process exits 130 with one line saying what was kept.

`Interrupted` is the KeyboardInterrupt a command raises once it has saved what it could: its `kept`
line is what `plan` prints. A bare KeyboardInterrupt means nothing was kept.
"""

from __future__ import annotations

import contextlib
import signal
import threading
from collections.abc import Iterator

EXIT_INTERRUPTED = 130
NOTHING_KEPT = "nothing was kept (an interrupted search is not a result)"


class Interrupted(KeyboardInterrupt):
    """Ctrl-C, after the command saved what it could; `kept` says what (one line)."""

    def __init__(self, kept: str) -> None:
        super().__init__(kept)
        self.kept = kept


def interrupted_line(exc: BaseException) -> str:
    """The one line `plan` prints for an interrupt."""
    kept = exc.kept if isinstance(exc, Interrupted) else NOTHING_KEPT
    return f"interrupted: {kept}"


@contextlib.contextmanager
def sigint_deferred() -> Iterator[None]:
    """Hold Ctrl-C back while a file is replaced, so a results file is written whole; the signal is
    delivered (as KeyboardInterrupt) as soon as the block ends. Only the main thread can do this."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, previous)


def ignore_sigint() -> None:
    """For worker processes: Ctrl-C reaches the whole process group; the parent alone decides."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)


def interrupt_behind(exc: BaseException) -> KeyboardInterrupt | None:
    """The KeyboardInterrupt an exit was raised for (typer answers Ctrl-C with a bare exit 130),
    if any."""
    seen: set[int] = set()
    link: BaseException | None = exc
    while link is not None and id(link) not in seen:
        if isinstance(link, KeyboardInterrupt):
            return link
        seen.add(id(link))
        link = link.__cause__ or link.__context__
    return None
