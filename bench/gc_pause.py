"""What a full garbage collection costs on the server's heap, before and after ``gc.freeze()``.

    python -m bench.gc_pause

Runs five pages in one process through Streamlit's AppTest (the modules, data and caches a
server holds after a few visits), then times ``gc.collect(2)`` (median of 7) unfrozen, and again
after ``gc.freeze()`` as ui/housekeeping.py does. The ratio is the figure to read: the machine is
shared and its absolute times are noisy.
"""

from __future__ import annotations

import gc
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PAGES = ("app_pages/lessons.py", "app_pages/roofline.py", "app_pages/glossary.py", "app_pages/live_class.py")


def _full_collection_ms(repeat: int = 7) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        gc.collect(2)
        times.append((time.perf_counter() - start) * 1000)
    return statistics.median(times)


def main() -> int:
    sys.path.insert(0, str(ROOT))
    from tests.pages import open_page

    at = open_page("app_pages/will_it_fit.py")
    for page in PAGES:
        at.switch_page(page)
        at.run()
    gc.unfreeze()  # the pages' own housekeeping may have frozen some already: start from none
    tracked = len(gc.get_objects())
    before = _full_collection_ms()
    gc.freeze()
    after = _full_collection_ms()
    print(f"tracked objects: {tracked:,}; frozen: {gc.get_freeze_count():,}")
    print(
        f"full collection: {before:.1f} ms unfrozen, {after:.3f} ms after gc.freeze() "
        f"(ratio {after / before:.4f})"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
