"""Every chart of the app on one page, with representative inputs (charts/examples.py).

Look at it in a browser:

    .venv/bin/python -m streamlit run tools/chart_gallery.py

Address options: ``?scale=1.45`` draws every chart through ``charts.style.scale_fonts`` as the
presenter view does; ``?only=roofline`` keeps the cases whose name contains the word;
``?old=1`` draws the go.Figure builders as they were before the dict rewrite (read from git by
bench/charts_speed.py), for before/after comparisons.

Screenshot it (Debian chromium driven by Playwright, as tools/screenshots.py does):

    .venv/bin/python tools/chart_gallery.py --shoot OUT_DIR [--only WORD] [--old]

starts Streamlit on a free loopback port and saves one PNG per chart at 1440×900 (desktop),
390×844 (phone) and 1280×720 at presenter scale (projector), as
``OUT_DIR/<size>/<NN>-<case>.png``, then prints the paths. Open them and look: legends under the
plot, no label over another, titles clear of the mode bar, nothing clipped at an edge.
"""

from __future__ import annotations

import importlib
import re
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

# The configuration ui/chart.py renders with (the mode bar's width decides what the title must avoid).
CONFIG = {
    "displaylogo": False,
    "modeBarButtonsToRemove": ["select2d", "lasso2d", "autoScale2d"],
}
# Widths are the ones the issue checks; each chart is shot on its own, so the viewport is made
# tall enough for the tallest chart (Streamlit scrolls inside the page, and a screenshot of an
# element cannot reach past the viewport). Chart heights are fixed in their specs, not the viewport.
SHOT_HEIGHT = 1800
SIZES = {
    "desktop-1440x900": ({"width": 1440, "height": SHOT_HEIGHT}, 1.0),
    "phone-390x844": ({"width": 390, "height": SHOT_HEIGHT}, 1.0),
    "presenter-1280x720": ({"width": 1280, "height": SHOT_HEIGHT}, 1.45),
}
# Cases the pages draw side by side (two columns), drawn the same way here.
HALF_WIDTH = ("values and the INT8 grid", "error histogram")


def slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")[:60]


def render() -> None:
    """The Streamlit page: one chart per case, with its name above it."""
    import streamlit as st

    from charts.examples import cases
    from charts.style import chart_alt, scale_fonts

    st.set_page_config(page_title="Chart gallery", layout="wide")
    params = st.query_params
    scale = float(params.get("scale", "1") or 1)
    only = params.get("only", "")
    old = params.get("old", "") == "1"
    st.title("Chart gallery" + (" (before: go.Figure builders)" if old else ""))
    modules = {}
    if old:
        from bench.charts_speed import OLD_COMMIT, load_old_charts

        modules = load_old_charts(OLD_COMMIT)
    shown = [c for c in cases() if only.lower() in c.name.lower()]
    row = None
    for index, case in enumerate(shown):
        if old:
            module = modules.get(case.module)
            if (
                module is None
                or not hasattr(module, case.builder)
                or set(case.kwargs) & set(case.new_keywords)
            ):
                continue
            spec = getattr(module, case.builder)(*case.args, **case.old_kwargs()).to_dict()
        else:
            spec = case.call(importlib.import_module(f"charts.{case.module}"))
        if scale != 1:
            spec = scale_fonts(spec, scale)
        half = any(word in case.name for word in HALF_WIDTH)
        if half and row is None:
            row = st.columns(2)
            target = row[0]
        elif half:
            target, row = row[1], None
        else:
            target, row = st, None
        with target.container(key=f"case-{index:02d}-{slug(case.name)}"):
            st.markdown(f"**{index:02d}. {case.name}**")
            st.plotly_chart(
                spec, config=CONFIG, width="stretch", key=f"chart-{index}", alt=chart_alt(spec) or case.name
            )


def shoot(out: Path, only: str = "", old: bool = False) -> int:
    """Start Streamlit on this file and save one PNG per chart at each size (see the docstring)."""
    from playwright.sync_api import sync_playwright

    from bench.concurrency import start_server
    from tools.screenshots import ARGS, CHROMIUM

    problems: list[str] = []
    with start_server(Path(__file__).resolve(), cwd=ROOT) as server:
        base = server.url + "/"
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=ARGS)
            for size_name, (viewport, scale) in SIZES.items():
                folder = out / size_name
                folder.mkdir(parents=True, exist_ok=True)
                page = browser.new_page(viewport=viewport)
                page.on("pageerror", lambda e: problems.append(f"js error: {e}"))
                query = f"?scale={scale}&only={only}" + ("&old=1" if old else "")
                page.goto(base + query)
                page.wait_for_selector('[data-testid="stPlotlyChart"]', timeout=120_000)
                deadline = time.monotonic() + 120
                while time.monotonic() < deadline and page.query_selector('[data-testid="stStatusWidget"]'):
                    time.sleep(0.3)
                time.sleep(2)
                if page.query_selector('[data-testid="stException"]'):
                    problems.append(f"{size_name}: exception shown")
                boxes = page.query_selector_all('[class*="st-key-case-"]')
                for box in boxes:
                    name = next(
                        c for c in (box.get_attribute("class") or "").split() if c.startswith("st-key-case-")
                    )
                    box.scroll_into_view_if_needed()
                    page.wait_for_timeout(400)
                    path = folder / f"{name.removeprefix('st-key-case-')}.png"
                    box.screenshot(path=str(path))
                    print(path)
                page.close()
            browser.close()
    print("\n".join(problems) or "no exceptions shown")
    return 1 if problems else 0


def _running_in_streamlit() -> bool:
    try:
        from streamlit import runtime

        return runtime.exists()
    except ImportError:
        return False


if _running_in_streamlit():
    render()
elif __name__ == "__main__":
    arguments = sys.argv[1:]
    if "--shoot" not in arguments:
        sys.exit(__doc__)
    target = Path(arguments[arguments.index("--shoot") + 1])
    word = arguments[arguments.index("--only") + 1] if "--only" in arguments else ""
    sys.exit(shoot(target, word, "--old" in arguments))
