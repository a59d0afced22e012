"""Keep the server's memory bounded without paying for it on every rerun.

Streamlit's ``runner.postScriptGC`` runs a full ``gc.collect(2)`` after every script run; under a
class's load that was two thirds of the server's CPU (py-spy, bench.concurrency), so the config turns
it off. Without any full collection, garbage from reruns (cycles in Streamlit's element trees and
caches) accumulates until Python's generational thresholds trip, and peak RSS grew past 300 MiB
with 30 sessions. One full collection per process at most every ``INTERVAL_S`` keeps RSS bounded
for a small fraction of that cost.

glibc also keeps memory a thread freed in that thread's malloc arena, and every session's script
runs on its own thread: ``MALLOC_ARENA_MAX=2`` in the environment (the Dockerfile and
deploy/run-local.sh set it) kept a 30-session server's peak RSS about 50 MiB lower. Setting it from
inside the process (``mallopt``) came too late to help: the arenas exist by the first script run.

Most of what a full collection walks never becomes garbage: the modules, data and caches loaded
at start-up. ``gc.freeze()`` moves every object alive after a collection into a permanent
generation that later collections skip; it runs after a collection whenever new modules have been
imported since the last freeze (the first visit of each page imports its own), so the start-up
heap is frozen within a page visit or two and nothing is frozen after that. Measured on the
server's heap after visiting five pages (153,793 tracked objects): a full collection took 159 ms
before freezing and under 0.01 ms after (bench.gc_pause). The price: a session object alive at a
freeze and later dropped inside a reference cycle is never collected; freezes happen a few times
per process, so that stays a few sessions' worth at most.
"""

from __future__ import annotations

import gc
import sys
import threading
import time

INTERVAL_S = 2.0
_lock = threading.Lock()
_last = [0.0]
_frozen_at_modules = [0]


def collect_now_and_then(interval_s: float = INTERVAL_S) -> bool:
    """Run a full garbage collection if none ran in this process for ``interval_s``; True if it ran.

    Sessions share the process, so only one of them pays, and never more often than the interval.
    """
    now = time.monotonic()
    if now - _last[0] < interval_s or not _lock.acquire(blocking=False):
        return False
    try:
        _last[0] = now
        gc.collect(2)
        modules = len(sys.modules)
        if modules > _frozen_at_modules[0]:  # new long-lived objects: freeze them out of later scans
            gc.freeze()
            _frozen_at_modules[0] = modules
        return True
    finally:
        _lock.release()
