"""How long a direct link takes to finish in a real browser, for every page (a student clicking a
teacher's link).

    python -m bench.page_links [--rounds 2]

Starts ``streamlit run app.py`` on a free loopback port and Debian's chromium (headless), then opens
each page's first prepared view (``?preset=…``) and measures from navigation start to "finished":
the page's heading and, on simulator pages, its first chart are drawn, no skeleton is left and
Streamlit's running indicator has been gone for 0.3 s (that quiet period is not counted).

- "fresh browser": a new browser context per visit (empty cache: Streamlit's frontend, including
  its 4.7 MB Plotly chunk, is downloaded and parsed again); round 1 also meets the server's caches
  empty, later rounds are the rest of a class;
- "same browser": one context for every page (the frontend cached, as for a student's second
  link), each visit still a new Streamlit session.

Server CPU seconds per visit are read from /proc. Loopback only; prints a table.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
QUIET_S = 0.3

READY = """(needsChart) => {
  const running = document.querySelector('[data-testid="stStatusWidget"]');
  const skeleton = document.querySelector('[data-testid="stSkeleton"]');
  const heading = document.querySelector('[data-testid="stHeading"], h1');
  const chart = document.querySelector('.js-plotly-plot .main-svg');
  return !running && !skeleton && !!heading && (!needsChart || !!chart);
}"""


def _cpu_seconds(pid: int) -> float:
    with open(f"/proc/{pid}/stat") as f:
        parts = f.read().rsplit(")", 1)[1].split()
    return (int(parts[11]) + int(parts[12])) / os.sysconf("SC_CLK_TCK")


def _time_to_finished(page, url: str, needs_chart: bool, timeout_s: float = 60) -> float:
    start = time.perf_counter()
    page.goto(url, wait_until="commit", timeout=timeout_s * 1000)
    ready_since = None
    while time.perf_counter() - start < timeout_s:
        if page.evaluate(READY, needs_chart):
            now = time.perf_counter()
            ready_since = ready_since or now
            if now - ready_since >= QUIET_S:
                return ready_since - start
        else:
            ready_since = None
        time.sleep(0.02)
    raise TimeoutError(f"{url} did not finish within {timeout_s} s")


def main() -> int:
    parser = argparse.ArgumentParser(description="Time to a finished page from a direct link.")
    parser.add_argument("--rounds", type=int, default=2)
    args = parser.parse_args()
    sys.path.insert(0, str(ROOT))
    from playwright.sync_api import sync_playwright

    from bench.concurrency import start_server
    from content.pages import PAGES
    from tools.screenshots import ARGS, CHROMIUM
    from ui.controls import first_preset

    links = []
    for info in PAGES:
        preset = first_preset(info)
        path = info.url_path if not info.default else ""
        links.append((info.title, path + (f"?preset={preset['id']}" if preset else ""), bool(info.views)))
    results: dict[str, list[tuple[float, float]]] = {title: [] for title, _, _ in links}
    with start_server(ROOT / "app.py", cwd=ROOT) as server:
        base = server.url + "/"
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=ARGS)
            for _ in range(args.rounds):
                for title, path, needs_chart in links:
                    context = browser.new_context(viewport={"width": 1440, "height": 900})
                    page = context.new_page()
                    cpu = _cpu_seconds(server.pid)
                    seconds = _time_to_finished(page, base + path, needs_chart)
                    time.sleep(0.3)  # let the session's last messages go out before reading the CPU clock
                    results[title].append((seconds, _cpu_seconds(server.pid) - cpu))
                    context.close()
            context = browser.new_context(viewport={"width": 1440, "height": 900})
            page = context.new_page()
            # fill the browser cache and compile Streamlit's chart and data-grid chunks once
            _time_to_finished(page, base + "will-it-fit", True)
            for title, path, needs_chart in links:
                cpu = _cpu_seconds(server.pid)
                seconds = _time_to_finished(page, base + path, needs_chart)
                time.sleep(0.3)
                results[title].append((seconds, _cpu_seconds(server.pid) - cpu))
            context.close()
            browser.close()
    print(f"{os.cpu_count()} cores; navigation to a finished page (chart drawn), a fresh browser each visit")
    header = "".join(f"{f'fresh, round {r + 1}':>18}" for r in range(args.rounds)) + f"{'same browser':>18}"
    print(f"{'page (first preset)':48}{header}")
    worst_later = 0.0
    for title, path, _ in links:
        cells = "".join(f"{s:>10.2f}s {c:>4.2f}cpu" for s, c in results[title])
        worst_later = max(worst_later, results[title][-1][0])
        print(f"{(title + ' ' + path)[:47]:48}{cells}")
    firsts = [r[0][0] for r in results.values()]
    print(
        f"fresh browser, first visits: median {statistics.median(firsts):.2f} s, max {max(firsts):.2f} s; "
        f"same browser: max {worst_later:.2f} s (goal <= 1.5 s)"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
