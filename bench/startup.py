"""Start-up cost and rerun latency of every page, against a trivial one-line page in the same run.

    python -m bench.startup [--reruns 30]

Each page runs in a fresh interpreter through Streamlit's AppTest (no browser): the first run is
the cold start (imports, data loading, caches filled); the next ``--reruns`` reruns are what a
reader waits for after a click that changes nothing expensive. Two clocks per rerun: AppTest's
wall time (what the harness waits, including its own message handling) and the script thread's
own time inside ``ScriptRunner._run_script`` (what the server spends on that session: the
class's capacity). The baseline is a one-line page (``st.write``) measured the same way in the
same run, so the table's "over trivial" column is what the app itself costs, whatever the machine.
Peak memory (max RSS) is printed too; the hosted app must stay well under Community Cloud's ~690 MB
floor, and torch must never load.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TRIVIAL = 'import streamlit as st\nst.write("ok")\n'

CHILD = r"""
import json, resource, statistics, sys, time
sys.path.insert(0, {root!r})
from streamlit.runtime.scriptrunner import script_runner

thread_times = []
_original = script_runner.ScriptRunner._run_script


def _timed(self, rerun_data):
    t = time.perf_counter()
    try:
        return _original(self, rerun_data)
    finally:
        thread_times.append(time.perf_counter() - t)


script_runner.ScriptRunner._run_script = _timed
t0 = time.perf_counter()
from streamlit.testing.v1 import AppTest
at = AppTest.from_file({app!r}, default_timeout=300)
at.run()
if {page!r}:
    at.switch_page({page!r})
t1 = time.perf_counter()
at.run()
cold = time.perf_counter() - t1
thread_times.clear()
walls = []
for _ in range({reruns}):
    t = time.perf_counter()
    at.run()
    walls.append(time.perf_counter() - t)


def p95(values):
    return sorted(values)[max(0, round(0.95 * len(values)) - 1)]


print(json.dumps({{
    "import_and_first_s": t1 - t0,
    "cold_s": cold,
    "wall_p50_s": statistics.median(walls),
    "wall_p95_s": p95(walls),
    "thread_p50_s": statistics.median(thread_times),
    "thread_p95_s": p95(thread_times),
    "max_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
    "torch_loaded": "torch" in sys.modules,
    "exceptions": len(at.exception),
}}))
"""


def measure(app: str, page: str, reruns: int) -> dict:
    """One page in a fresh interpreter: cold run, then ``reruns`` timed reruns."""
    code = CHILD.format(root=str(ROOT), app=app, page=page, reruns=reruns)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=900)
    line = next((ln for ln in out.stdout.splitlines() if ln.startswith("{")), None)
    if line is None:
        raise RuntimeError(out.stderr[-600:])
    return json.loads(line)


def main() -> int:
    parser = argparse.ArgumentParser(description="Cold start and rerun latency of every page.")
    parser.add_argument("--reruns", type=int, default=30)
    args = parser.parse_args()
    sys.path.insert(0, str(ROOT))
    from content.pages import PAGES

    with tempfile.TemporaryDirectory() as tmp:
        trivial = Path(tmp) / "trivial.py"
        trivial.write_text(TRIVIAL)
        base = measure(str(trivial), "", args.reruns)
    print(
        f"{'page':32} {'cold':>7} {'wall p50':>9} {'wall p95':>9} {'thread p50':>11} {'thread p95':>11} "
        f"{'p95 over trivial':>17} {'max RSS':>8}  torch"
    )

    def row(name: str, r: dict, over: float | None) -> None:
        print(
            f"{name:32} {r['cold_s']:>6.2f}s {r['wall_p50_s'] * 1e3:>7.1f}ms {r['wall_p95_s'] * 1e3:>7.1f}ms "
            f"{r['thread_p50_s'] * 1e3:>9.1f}ms {r['thread_p95_s'] * 1e3:>9.1f}ms "
            + (f"{over * 1e3:>+15.1f}ms" if over is not None else f"{'(baseline)':>17}")
            + f" {r['max_rss_mb']:>6.0f}MB  "
            + ("YES" if r["torch_loaded"] else "no")
            + (f"  ({r['exceptions']} exceptions)" if r["exceptions"] else "")
        )

    row("trivial one-line page", base, None)
    worst_over, worst_rss = 0.0, base["max_rss_mb"]
    for info in PAGES:
        try:
            r = measure(str(ROOT / "app.py"), info.path, args.reruns)
        except RuntimeError as exc:
            print(f"{info.path:32} failed: {exc}")
            continue
        over = r["wall_p95_s"] - base["wall_p95_s"]
        worst_over, worst_rss = max(worst_over, over), max(worst_rss, r["max_rss_mb"])
        row(info.path, r, over)
    print(
        f"worst rerun p95 over the trivial page: {worst_over * 1e3:+.1f} ms (goal <= 50 ms); "
        f"largest max RSS: {worst_rss:.0f} MB (Community Cloud floor ~690 MB)"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
