"""Screenshot pages of the running app in headless Chromium, waiting until each has finished.

    python tools/screenshots.py OUT_DIR [PATH_AND_QUERY ...]

Starts `streamlit run app.py` on a free port, opens each path (default: every page in the
navigation), waits until the script has stopped running and no skeleton placeholder is left,
then saves a full-page PNG. Prints pages that show an exception box. Uses Debian's chromium.
"""

from __future__ import annotations

import os
import re
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
STREAMLIT = [sys.executable, "-m", "streamlit", "run", "app.py"]
ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]


def wait_until_idle(page, timeout_s: float = 90) -> None:
    page.wait_for_selector('[data-testid="stApp"]', timeout=timeout_s * 1000)
    deadline = time.monotonic() + timeout_s
    quiet_since = None
    while time.monotonic() < deadline:
        running = page.query_selector('[data-testid="stStatusWidget"]') is not None
        skeleton = page.query_selector('[data-testid="stSkeleton"]') is not None
        if running or skeleton:
            quiet_since = None
        elif quiet_since is None:
            quiet_since = time.monotonic()
        elif time.monotonic() - quiet_since > 1.5:
            return
        time.sleep(0.2)


def main() -> int:
    from playwright.sync_api import sync_playwright

    from ui.nav import PAGES

    out = Path(sys.argv[1] if len(sys.argv) > 1 else "screenshots")
    out.mkdir(parents=True, exist_ok=True)
    paths = sys.argv[2:] or [p.url_path if not p.default else "" for p in PAGES]
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    proc = subprocess.Popen(
        [*STREAMLIT, "--server.port", str(port), "--server.headless", "true"],
        cwd=ROOT,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        start_new_session=True,
    )
    base = f"http://127.0.0.1:{port}/"
    problems = []
    try:
        for _ in range(600):
            try:
                urllib.request.urlopen(base + "_stcore/health", timeout=1)
                break
            except OSError:
                time.sleep(0.1)
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path="/usr/bin/chromium", headless=True, args=ARGS)
            height = int(os.environ.get("SHOT_HEIGHT", "3200"))  # Streamlit scrolls inside the page
            page = browser.new_page(viewport={"width": 1400, "height": height})
            page.on("pageerror", lambda e: problems.append(f"js error: {e}"))
            for path in paths:
                page.goto(base + path)
                wait_until_idle(page)
                name = re.sub(r"\W+", "_", path).strip("_") or "home"
                page.screenshot(path=str(out / f"{name}.png"), full_page=True)
                if page.query_selector('[data-testid="stException"]'):
                    problems.append(f"{name}: exception shown")
                print(out / f"{name}.png")
            browser.close()
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
    print("\n".join(problems) or "no exceptions shown")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
