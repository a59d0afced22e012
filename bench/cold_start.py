"""Cold start to first paint: the app against ``streamlit hello``, measured the same way in one run.

    python -m bench.cold_start [--repeat 3]

For each app: launch ``streamlit run`` (headless, loopback), open its home page in Debian's
headless Chromium as soon as the server answers its health check, and stop the clock when the
page has painted its first heading (the first thing a reader sees). Interleaved runs, median of
``--repeat``; the ratio app ÷ hello is the figure to read (this machine is shared and noisy).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.concurrency import start_server  # noqa: E402

HELLO = Path(__import__("streamlit").__file__).parent / "hello" / "streamlit_app.py"
CHROMIUM = "/usr/bin/chromium"
ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
PAINTED = "() => !!document.querySelector('h1, [data-testid=\"stHeading\"]')"


def first_paint_s(browser, script: Path) -> float:
    """Seconds from launching ``streamlit run script`` to its first heading on screen."""
    start = time.monotonic()
    with start_server(script, cwd=ROOT if script.parent == ROOT else script.parent, timeout_s=120) as server:
        page = browser.new_page()
        try:
            page.goto(server.url, wait_until="commit")
            page.wait_for_function(PAINTED, timeout=120_000, polling=20)
            return time.monotonic() - start
        finally:
            page.close()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args(argv)
    from playwright.sync_api import sync_playwright

    apps = {"hello": HELLO, "app": ROOT / "app.py"}
    times: dict[str, list[float]] = {name: [] for name in apps}
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, headless=True, args=ARGS)
        first_paint_s(browser, HELLO)  # warm the disk cache for both: imports read the same files
        first_paint_s(browser, ROOT / "app.py")
        for _ in range(args.repeat):
            for name, script in apps.items():
                times[name].append(first_paint_s(browser, script))
        browser.close()
    for name, values in times.items():
        each = ", ".join(f"{v:.2f}" for v in values)
        print(f"{name:6s} first paint: median {statistics.median(values):.2f} s  ({each})")
    ratio = statistics.median(times["app"]) / statistics.median(times["hello"])
    print(f"app ÷ streamlit hello: {ratio:.2f}× (goal ≤ 1.3×)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
