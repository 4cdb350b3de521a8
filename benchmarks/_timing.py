"""Shared timing helper for the benchmark modules."""
from __future__ import annotations

import statistics
import time


def median_time(fn, repeats: int) -> float:
    """Median wall time of ``repeats`` calls of ``fn`` (seconds)."""
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def paired_median_times(ours, peer, repeats: int) -> tuple[float, float]:
    """Median wall times (seconds) of ``ours`` and ``peer`` called in turn, so both see the same machine load.

    On a shared machine the load drifts over seconds; timing one function's
    repeats and then the other's puts the drift into their ratio.
    """
    times_ours, times_peer = [], []
    for _ in range(repeats):
        for fn, times in ((ours, times_ours), (peer, times_peer)):
            t0 = time.perf_counter()
            fn()
            times.append(time.perf_counter() - t0)
    return statistics.median(times_ours), statistics.median(times_peer)
