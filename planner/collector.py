"""The cyclic garbage collector, paused around work that builds many long-lived objects.

Importing the solver path and building candidates each allocate hundreds of thousands of objects
that live on (modules and schemas; caches, estimates and candidates) and that reference counting
alone frees. With the collector running, every pass walked that growing heap: about 180 collections
and 50 ms of a 0.5 s `plan solve` during imports, and a fifth to a third of candidate building. With
it paused, the first collection afterwards would walk all of it at once (student_no_ops: 14 ms of a
130 ms build), so what the block kept goes to the permanent generation instead (`gc.freeze`), which
no collection walks. Whatever an earlier block froze is handed back first, so cycles among what the
process has since dropped are still collected.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def collector_paused() -> Iterator[None]:
    """Run the block without cyclic collections, then freeze what it kept. A collector the caller
    had already disabled stays disabled (and nothing is frozen)."""
    collecting = gc.isenabled()
    gc.unfreeze()
    gc.disable()
    try:
        yield
    finally:
        if collecting:
            gc.freeze()
            gc.enable()
