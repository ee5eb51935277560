"""The life of a batch worker process: it ignores Ctrl-C (the parent alone decides what an interrupt
keeps) and it exits when the parent process dies, so a killed `plan batch` leaves no idle
workers."""

from __future__ import annotations

import os
import threading
import time

from plan.planner.interrupts import ignore_sigint

PARENT_CHECK_S = 1.0


def parent_alive(pid: int) -> bool:
    """Whether process `pid` still runs (a zombie, killed but not yet reaped, counts as dead)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii", errors="replace") as stat:
            return stat.read().rsplit(")", 1)[-1].split()[0] != "Z"
    except OSError:
        return True  # no /proc (not Linux): the kill test above is all there is


def _watch(parent_pid: int) -> None:
    while parent_alive(parent_pid):
        time.sleep(PARENT_CHECK_S)
    os._exit(1)  # nobody is left to take this worker's answer


def init_worker(parent_pid: int) -> None:
    """Process-pool initializer: ignore SIGINT; exit within about a second of the parent's death."""
    ignore_sigint()
    threading.Thread(target=_watch, args=(parent_pid,), name="parent-watch", daemon=True).start()
