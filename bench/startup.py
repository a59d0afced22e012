"""Start-up cost and rerun latency of every page, as Streamlit Community Cloud would see it.

    python -m bench.startup

Each page runs in a fresh interpreter through Streamlit's AppTest (no browser): the first run is
the cold start (imports, data loading, caches filled), the next five reruns are what a reader
waits for after moving a widget. Peak memory (max RSS) of that interpreter is printed too; the
hosted app must stay well under Community Cloud's ~690 MB floor, and torch must never load.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

CHILD = r"""
import json, resource, statistics, sys, time
sys.path.insert(0, {root!r})
t0 = time.perf_counter()
from streamlit.testing.v1 import AppTest
at = AppTest.from_file({app!r}, default_timeout=300)
at.run()
at.switch_page({page!r})
t1 = time.perf_counter()
at.run()
cold = time.perf_counter() - t1
reruns = []
for _ in range(5):
    t = time.perf_counter()
    at.run()
    reruns.append(time.perf_counter() - t)
print(json.dumps({{
    "page": {page!r},
    "import_and_home_s": t1 - t0,
    "cold_s": cold,
    "rerun_median_s": statistics.median(reruns),
    "max_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
    "torch_loaded": "torch" in sys.modules,
    "exceptions": len(at.exception),
}}))
"""


def main() -> int:
    sys.path.insert(0, str(ROOT))
    from ui.nav import PAGES

    print(f"{'page':34} {'imports+home':>12} {'cold run':>9} {'rerun p50':>10} {'max RSS':>9}  torch")
    worst_rss = 0.0
    for info in PAGES:
        code = CHILD.format(root=str(ROOT), app=str(ROOT / "app.py"), page=info.path)
        out = subprocess.run(
            [sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=900
        )
        line = next((ln for ln in out.stdout.splitlines() if ln.startswith("{")), None)
        if line is None:
            print(f"{info.path:34} failed: {out.stderr[-400:]}")
            continue
        r = json.loads(line)
        worst_rss = max(worst_rss, r["max_rss_mb"])
        print(
            f"{info.path:34} {r['import_and_home_s']:>11.2f}s {r['cold_s']:>8.2f}s "
            f"{r['rerun_median_s'] * 1e3:>8.0f}ms {r['max_rss_mb']:>7.0f}MB  "
            + ("YES" if r["torch_loaded"] else "no")
            + (f"  ({r['exceptions']} exceptions)" if r["exceptions"] else "")
        )
    print(f"largest max RSS of one page's interpreter: {worst_rss:.0f} MB (Community Cloud floor ~690 MB)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
