"""Profile one page's rerun on the script thread (where Streamlit runs it), not AppTest's thread.

    python -m bench.profile_page app_pages/roofline.py [--runs 20] [--query rf_batch=512] [--top 25]

cProfile only sees the thread it is enabled in, and AppTest runs the page script in a thread of
its own, so this wraps ``ScriptRunner._run_script`` with a profiler and prints the functions that
cost the most (cumulative) over ``--runs`` reruns after one cold run.
"""

from __future__ import annotations

import argparse
import cProfile
import io
import pstats
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("page")
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--query", action="append", default=[], help="key=value for the address")
    parser.add_argument("--top", type=int, default=25)
    args = parser.parse_args()
    sys.path.insert(0, str(ROOT))
    from streamlit.runtime.scriptrunner import script_runner
    from streamlit.testing.v1 import AppTest

    profiler = cProfile.Profile()
    enabled = {"on": False}
    original = script_runner.ScriptRunner._run_script

    def profiled(self, rerun_data):
        if not enabled["on"]:
            return original(self, rerun_data)
        profiler.enable()
        try:
            return original(self, rerun_data)
        finally:
            profiler.disable()

    script_runner.ScriptRunner._run_script = profiled
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=300)
    at.query_params.update(dict(q.split("=", 1) for q in args.query))
    at.run()
    at.switch_page(args.page)
    at.run()
    enabled["on"] = True
    for _ in range(args.runs):
        at.run()
    out = io.StringIO()
    stats = pstats.Stats(profiler, stream=out).sort_stats("cumulative")
    stats.print_stats(args.top)
    print(f"{args.page}: {args.runs} reruns profiled on the script thread")
    print(out.getvalue())
    return 0


if __name__ == "__main__":
    sys.exit(main())
