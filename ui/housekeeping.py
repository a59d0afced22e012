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
inside the process (``mallopt``) was measured then to come too late for 30 sessions (arenas made
before it stay); ``tune_malloc`` below still sets it, for the threads created after.

Most of what a full collection walks never becomes garbage: the modules, data and caches loaded
at start-up. ``gc.freeze()`` moves every object alive after a collection into a permanent
generation that later collections skip; it runs after a collection whenever new modules have been
imported since the last freeze (the first visit of each page imports its own), so the start-up
heap is frozen within a page visit or two and nothing is frozen after that. Measured on the
server's heap after visiting five pages (153,793 tracked objects): a full collection took 159 ms
before freezing and under 0.01 ms after (bench.gc_pause). The price: a session object alive at a
freeze and later dropped inside a reference cycle is never collected; freezes happen a few times
per process, so that stays a few sessions' worth at most.

glibc's own choices kept memory the pages had freed. ``tune_malloc`` (run when app.py first
imports this module) pins the mmap threshold at glibc's starting 128 KiB, so a large NumPy
temporary is unmapped when freed instead of staying in the heap (unpinned, the threshold rises
to each large block freed), and caps the arenas at two for the threads created after it (the
Dockerfile's ``MALLOC_ARENA_MAX=2``, which Community Cloud cannot set before the process
starts). After each full collection, ``malloc_trim(0)`` returns the free pages of every arena
(0.2-1.0 ms on a server that has opened every page). Together, on ``bench.server_memory``
(every page opened once, as on Community Cloud): 221 -> 208 MiB held and a peak of 233 -> 219
MiB; the Lessons page's first load (2-8 MiB arrays of the quantization checks, 45 MiB of
temporaries in all) went from +20 to +8 MiB. Not separated one lever at a time. On a C library
without these calls (macOS, musl) nothing is done.
"""

from __future__ import annotations

import ctypes
import gc
import sys
import threading
import time
from collections.abc import Callable

INTERVAL_S = 2.0
_lock = threading.Lock()
_last = [0.0]
_frozen_at_modules = [0]


def _find_malloc_trim() -> Callable[[int], int] | None:
    """glibc's ``malloc_trim``, or None where the C library has none."""
    try:
        trim = ctypes.CDLL(None).malloc_trim  # the C library the interpreter runs on
    except (OSError, AttributeError):
        return None
    trim.argtypes = [ctypes.c_size_t]
    trim.restype = ctypes.c_int
    return trim


_malloc_trim = _find_malloc_trim()


M_TRIM_THRESHOLD, M_MMAP_THRESHOLD, M_ARENA_MAX = -1, -3, -8  # glibc's mallopt parameters
MMAP_THRESHOLD = 128 * 1024  # glibc's own starting value, pinned
ARENA_MAX = 2  # as MALLOC_ARENA_MAX=2 in the Dockerfile


def tune_malloc() -> bool:
    """Pin glibc's mmap threshold at its starting 128 KiB and cap the arenas at two; True if set.

    Unpinned, glibc raises the threshold to the size of each large block freed (up to 32 MiB), so
    after the first large NumPy temporary (the lessons' 1024 × 1024 quantization checks allocate
    2-8 MiB arrays) later ones come from the heap and stay resident, fragmented by the small
    objects allocated between them. Pinned, every block of 128 KiB or more is its own mapping and
    goes back to the system when freed. Both settings apply from the next allocation on, so this
    runs when app.py first imports this module, before any page has run.
    """
    try:
        mallopt = ctypes.CDLL(None).mallopt
    except (OSError, AttributeError):  # not glibc
        return False
    mallopt.argtypes = [ctypes.c_int, ctypes.c_int]
    return bool(mallopt(M_MMAP_THRESHOLD, MMAP_THRESHOLD)) and bool(mallopt(M_ARENA_MAX, ARENA_MAX))


tune_malloc()


def release_free_memory() -> bool:
    """Return the memory malloc holds free to the system; True where the C library can."""
    if _malloc_trim is None:
        return False
    _malloc_trim(0)
    return True


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
        release_free_memory()
        return True
    finally:
        _lock.release()
