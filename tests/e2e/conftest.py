"""Start the real app with `streamlit run` and a headless Debian chromium for browser tests."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
CHROMIUM = os.environ.get("CHROMIUM", "/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_app(env: dict[str, str] | None = None) -> tuple[str, subprocess.Popen]:
    """`streamlit run app.py` on a free loopback port, with ``env`` added to the environment;
    returns its URL once healthy, and the process (``stop_app`` ends it)."""
    port = _free_port()
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "streamlit",
            "run",
            str(ROOT / "app.py"),
            "--server.port",
            str(port),
            "--server.address",
            "127.0.0.1",
            "--server.headless",
            "true",
            "--browser.gatherUsageStats",
            "false",
        ],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        env={**os.environ, **(env or {})},
    )
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            with urllib.request.urlopen(f"{url}/_stcore/health", timeout=2) as response:
                if response.status == 200:
                    break
        except OSError:
            time.sleep(0.3)
        if process.poll() is not None:
            raise RuntimeError(f"streamlit exited: {process.stdout.read().decode(errors='replace')}")
    else:
        process.kill()
        raise RuntimeError("streamlit did not become healthy within 60 s")
    return url, process


def stop_app(process: subprocess.Popen) -> None:
    process.terminate()
    try:
        process.wait(timeout=10)
    except subprocess.TimeoutExpired:
        process.kill()


# A Streamlit page is done when its script has stopped running (no status widget, no skeleton) and
# its DOM has been quiet for a moment (Plotly draws, components mount and may start a rerun).
FINISHED = """() => !document.querySelector('[data-testid="stStatusWidget"]')
    && !document.querySelector('[data-testid="stSkeleton"]')
    && !!document.querySelector('[data-testid="stHeading"], h1')"""
QUIET = """async ([quietMs, ceilingMs]) => await new Promise(resolve => {
  let timer; const start = performance.now();
  const done = () => { observer.disconnect(); resolve(performance.now() - start); };
  const observer = new MutationObserver(() => {
    clearTimeout(timer);
    timer = setTimeout(done, performance.now() - start > ceilingMs ? 0 : quietMs);
  });
  observer.observe(document.body, {subtree: true, childList: true, attributes: true, characterData: true});
  timer = setTimeout(done, quietMs);
})"""
SETTLE_CEILING_MS = 180_000  # generous: a busy 2-core machine runs the app, the browser and the tests


def settle(page, at_least_ms: int = 0, quiet_ms: int = 400) -> None:
    """Wait until the page has finished its run and its DOM has stayed quiet for ``quiet_ms``, then
    check it is still finished (a component's message can start one more run): the condition, with a
    generous ceiling, instead of a fixed sleep that a busy machine outlasts. ``at_least_ms`` keeps a
    floor for waits on the browser's own clock (a component's storage round trip)."""
    deadline = time.monotonic() + SETTLE_CEILING_MS / 1000
    if at_least_ms:
        page.wait_for_timeout(at_least_ms)
    while True:
        remaining = max(1_000, int((deadline - time.monotonic()) * 1000))
        page.wait_for_function(FINISHED, timeout=remaining)
        page.evaluate(QUIET, [quiet_ms, 10_000])
        if page.evaluate(FINISHED) or time.monotonic() > deadline:
            page.wait_for_function(FINISHED, timeout=max(1_000, int((deadline - time.monotonic()) * 1000)))
            return


def poll(page, read, good, ceiling_s: float = 120.0):
    """Read ``read()`` every 250 ms until ``good(value)`` or the ceiling; returns the last value, so
    the test asserts on what it saw (for conditions a wait_for_function cannot express)."""
    deadline = time.monotonic() + ceiling_s
    while True:
        value = read()
        if good(value) or time.monotonic() > deadline:
            return value
        page.wait_for_timeout(250)


DATA_DIRS: dict[str, Path] = {}  # app URL -> its GFG_DATA_DIR (the class store's SQLite file)


@pytest.fixture(scope="session")
def app_url(tmp_path_factory):
    data = tmp_path_factory.mktemp("gfg-data")
    url, process = start_app({"GFG_DATA_DIR": str(data), "GFG_CLASS_DB": ""})
    DATA_DIRS[url] = data
    yield url
    stop_app(process)


ACTION_TIMEOUT_MS = 120_000  # a click or a download on a busy 2-core machine (Playwright's own default: 30 s)


def patient(browser):
    """Give every context ``browser`` opens generous default timeouts (clicks, downloads, page loads):
    a test still moves on as soon as the element is there, but a busy machine no longer fails it."""
    opened = browser.new_context

    def new_context(*args, **kwargs):
        context = opened(*args, **kwargs)
        context.set_default_timeout(ACTION_TIMEOUT_MS)
        context.set_default_navigation_timeout(ACTION_TIMEOUT_MS)
        return context

    browser.new_context = new_context
    return browser


@pytest.fixture(scope="session")
def browser():
    if not shutil.which(CHROMIUM) and not Path(CHROMIUM).exists():
        pytest.fail(f"{CHROMIUM} not found: .ci/run installs Debian's chromium (apt-get install chromium)")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS)
        yield patient(browser)
        browser.close()


@pytest.fixture
def page(browser):
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    page = context.new_page()
    yield page
    context.close()
