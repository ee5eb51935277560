"""A CP-SAT solve that Ctrl-C stops rather than degrades.

CP-SAT, left to itself, catches SIGINT during a solve and ends the search early as if a limit were
reached: the caller then gets a worse plan marked "feasible" and cannot tell. Here the solver's own
handler is off (`catch_sigint_signal = False`), the search runs in a helper thread, and the main
thread waits in short, interruptible steps: on Ctrl-C it stops the search, waits for the thread and
raises KeyboardInterrupt, so no interrupted result ever leaves this function.
"""

from __future__ import annotations

import signal
import threading
from typing import Any

from plan.constraints.sat import cp_model

POLL_S = 0.05


def solve_interruptibly(solver: cp_model.CpSolver, model: cp_model.CpModel) -> Any:
    """`solver.solve(model)`, raising KeyboardInterrupt (never a status) if Ctrl-C came during
    it."""
    solver.parameters.catch_sigint_signal = False
    if threading.current_thread() is not threading.main_thread():
        return solver.solve(model)  # signals reach only the main thread; nothing to watch for here
    outcome: dict[str, Any] = {}
    finished = threading.Event()

    def target() -> None:
        # Ctrl-C must reach the main thread, never this one or the solver's own threads (they
        # inherit this mask): a signal landing in CP-SAT's C++ threads aborts the process.
        signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
        try:
            outcome["status"] = solver.solve(model)
        except BaseException as exc:  # handed to the caller's thread below
            outcome["error"] = exc
        finally:
            finished.set()

    thread = threading.Thread(target=target, name="cp-sat", daemon=True)
    thread.start()
    # Wait on an Event, not on Thread.join: a join cut by KeyboardInterrupt marks a running thread
    # as stopped (CPython), and the interpreter would then exit under the solver's feet.
    try:
        while not finished.wait(POLL_S):
            pass
    except KeyboardInterrupt:
        _stop_and_wait(solver, finished)
        raise
    thread.join()
    if "error" in outcome:
        raise outcome["error"]
    return outcome["status"]


def _stop_and_wait(solver: cp_model.CpSolver, finished: threading.Event) -> None:
    """Stop the search and wait until the solver thread is done; a second Ctrl-C does not cut the
    wait."""
    while True:
        solver.stop_search()
        try:
            if finished.wait(POLL_S):
                return
        except KeyboardInterrupt:
            continue  # already stopping
