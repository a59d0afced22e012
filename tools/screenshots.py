"""Screenshot pages of the running app in headless Chromium, waiting until each has finished.

    python tools/screenshots.py OUT_DIR [PATH_AND_QUERY ...] [--size desktop|projector|phone]
                                [--present] [--fold] [--dark]

Starts `streamlit run app.py` on a free port, opens each path (default: every page in the
navigation), waits until the script has stopped running and no skeleton placeholder is left,
then saves a PNG: the whole page, or with ``--fold`` only what fits on the first screen.
Sizes: desktop 1440×900, projector 1280×720, phone 390×844. ``--present`` adds
``present=true`` to every address (presenter view); ``--dark`` asks for the dark theme.
Prints pages that show an exception box or scroll sideways. Uses Debian's chromium.
"""

from __future__ import annotations

import os
import re
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
CHROMIUM = "/usr/bin/chromium"  # Debian's chromium: `playwright install` cannot download browsers here
# The flags every headless Chromium of this project runs with (screenshots, chart gallery, page_links).
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


SIZES = {"desktop": (1440, 900), "projector": (1280, 720), "phone": (390, 844)}


def main() -> int:
    import argparse

    from playwright.sync_api import sync_playwright

    from bench.concurrency import start_server
    from content.pages import PAGES

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", nargs="?", default="screenshots")
    parser.add_argument("paths", nargs="*")
    parser.add_argument("--size", choices=sorted(SIZES), default="desktop")
    parser.add_argument("--present", action="store_true", help="presenter view (?present=true)")
    parser.add_argument("--fold", action="store_true", help="only the first screen, not the whole page")
    parser.add_argument("--dark", action="store_true", help="a browser that prefers a dark colour scheme")
    args = parser.parse_intermixed_args()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    paths = args.paths or [p.url_path if not p.default else "" for p in PAGES]
    if args.present:
        paths = [p + ("&" if "?" in p else "?") + "present=true" for p in paths]
    width, height = SIZES[args.size]
    problems = []
    with start_server(ROOT / "app.py", cwd=ROOT) as server:
        base = server.url + "/"
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=ARGS)
            # Streamlit scrolls inside the page: a tall viewport captures the whole page.
            tall = height if args.fold else int(os.environ.get("SHOT_HEIGHT", "3600"))
            page = browser.new_page(
                viewport={"width": width, "height": tall}, color_scheme="dark" if args.dark else "light"
            )
            page.on("pageerror", lambda e: problems.append(f"js error: {e}"))
            for path in paths:
                page.goto(base + path, timeout=90_000, wait_until="domcontentloaded")
                wait_until_idle(page)
                name = re.sub(r"\W+", "_", path).strip("_") or "home"
                page.screenshot(path=str(out / f"{name}.png"), full_page=not args.fold)
                if page.query_selector('[data-testid="stException"]'):
                    problems.append(f"{name}: exception shown")
                overflow = page.evaluate(
                    "() => document.documentElement.scrollWidth - document.documentElement.clientWidth"
                )
                if overflow > 1:
                    problems.append(f"{name}: scrolls sideways by {overflow} px")
                print(out / f"{name}.png")
            browser.close()
    print("\n".join(problems) or "no exceptions shown")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
