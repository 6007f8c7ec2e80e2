"""How every benchmark times a piece of work."""

from __future__ import annotations

import gc
import time
from collections.abc import Callable


def best_of(repeats: int, work: Callable[[], object]) -> float:
    """The fastest of ``repeats`` runs, in seconds.

    The inputs are long-lived state (an operator's informer cache): they are
    frozen out of the collector's scans, as gc.freeze() does for such
    services, so the timing is the work's own cost. The collector stays on.
    """
    timings = []
    for _ in range(repeats):
        gc.collect()
        gc.freeze()
        start = time.perf_counter()
        work()
        timings.append(time.perf_counter() - start)
        gc.unfreeze()
    return min(timings)
