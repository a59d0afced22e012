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
"""

from __future__ import annotations

import gc
import threading
import time

INTERVAL_S = 2.0
_lock = threading.Lock()
_last = [0.0]


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
        return True
    finally:
        _lock.release()
