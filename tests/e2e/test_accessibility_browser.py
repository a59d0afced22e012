"""axe-core (WCAG 2.0–2.2 A/AA rules) on every page in a real browser, light and dark, and in
presenter view: no serious or critical violation. The axe-core script is the one bundled by the
pinned axe-playwright-python package (requirements-dev.txt), injected into each page."""

from __future__ import annotations

from pathlib import Path

import pytest

from content.pages import PAGES

pytestmark = pytest.mark.e2e

RULES = ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa", "wcag22aa"]
FINISHED = """() => !document.querySelector('[data-testid="stStatusWidget"]')
    && !document.querySelector('[data-testid="stSkeleton"]') && !!document.querySelector('h1')"""
ADDRESSES = [p.url_path if not p.default else "" for p in PAGES] + [
    "lessons?lesson=gpu-basics&step=1",
    "lessons?lesson=gpu-basics&step=2",
    "lessons?plan=1",
    "glossary?term=kv-cache",
    "roofline?present=true",
]

HEADINGS = """() => [...document.querySelectorAll('h1, h2, h3, h4, h5, h6')]
    .filter(h => !h.closest('[data-testid="stSidebar"]')).map(h => Number(h.tagName[1]))"""


def _axe_script() -> Path:
    import axe_playwright_python

    return Path(axe_playwright_python.__file__).parent / "axe.min.js"


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_no_serious_accessibility_violation_on_any_page(app_url, browser, scheme):
    context = browser.new_context(viewport={"width": 1280, "height": 900}, color_scheme=scheme)
    page = context.new_page()
    found = []
    titles = {}
    skipped = []
    try:
        for address in ADDRESSES:
            page.goto(f"{app_url}/{address}", wait_until="domcontentloaded")
            page.wait_for_function(FINISHED, timeout=60_000)
            page.wait_for_timeout(800)
            titles[address] = page.title()
            levels = page.evaluate(HEADINGS)
            skipped += [
                (address, levels[i - 1], levels[i])
                for i in range(1, len(levels))
                if levels[i] > levels[i - 1] + 1
            ]
            page.add_script_tag(path=str(_axe_script()))
            result = page.evaluate(
                "async (tags) => await axe.run(document, {runOnly: {type: 'tag', values: tags}})", RULES
            )
            for violation in result["violations"]:
                if violation["impact"] in ("serious", "critical"):
                    node = violation["nodes"][0]
                    found.append((address, violation["id"], len(violation["nodes"]), node["html"][:160]))
    finally:
        context.close()
    assert not found, found
    # A screen reader's list of headings is the page's outline: one h1, then no level skipped.
    assert not skipped, skipped
    # Each page announces its own name (the home page keeps the guide's).
    named = [t for a, t in titles.items() if a and not a.startswith(("lessons?", "glossary?", "roofline?"))]
    assert all(t.endswith("· GPU Field Guide") and len(t) > len("· GPU Field Guide") for t in named), titles
    assert len(set(named)) == len(named)


FOCUSED = """() => { const e = document.activeElement; const ring = e.closest('label') || e;
  const s = getComputedStyle(ring); const t = getComputedStyle(e);
  return {tag: e.tagName, type: e.getAttribute('type') || '', ring: s.outlineStyle !== 'none'
    && parseFloat(s.outlineWidth) >= 2 || t.boxShadow !== 'none' && t.outlineStyle !== 'none'} }"""


def test_keyboard_focus_is_visible_on_links_radios_and_switches(app_url, page):
    page.goto(f"{app_url}/lessons?lesson=gpu-basics&step=1", wait_until="domcontentloaded")
    page.wait_for_function(FINISHED, timeout=60_000)
    page.wait_for_timeout(800)
    kinds = set()
    for _ in range(30):
        page.keyboard.press("Tab")
        focused = page.evaluate(FOCUSED)
        if focused["tag"] in ("A", "BUTTON") or focused["type"] in ("radio", "checkbox"):
            assert focused["ring"], focused
            kinds.add(focused["type"] or focused["tag"])
    assert {"A", "radio", "checkbox"} <= kinds, kinds


# Every drawn text and mark of every Plotly chart, with what it is drawn on: an annotation's own
# box, else the topmost opaque shape under it (a schematic's boxes), else the page. Text Plotly
# writes inside a heatmap cell or a bar picks black or white against that cell itself and is
# left out, as are translucent marks and white halos.
CHART_COLOURS = r"""() => {
 const rgb = c => { const m = (c || '').match(/[\d.]+/g); return m ? m.map(Number) : null; };
 const lin = v => { v /= 255; return v <= 0.04045 ? v / 12.92 : Math.pow((v + 0.055) / 1.055, 2.4); };
 const lum = c => 0.2126 * lin(c[0]) + 0.7152 * lin(c[1]) + 0.0722 * lin(c[2]);
 const ratio = (a, b) => { const x = lum(a), y = lum(b);
   return (Math.max(x, y) + 0.05) / (Math.min(x, y) + 0.05); };
 const over = (c, a, bg) => c.slice(0, 3).map((v, i) => v * a + bg[i] * (1 - a));
 const page = rgb(getComputedStyle(document.querySelector('.stApp')).backgroundColor);
 const paint = (el, prop) => { const s = getComputedStyle(el); const c = rgb(s[prop]);
   if (!c || s[prop] === 'none') return null;
   const a = (c.length > 3 ? c[3] : 1) * parseFloat(s[prop + 'Opacity'] || 1) * parseFloat(s.opacity || 1);
   return [c, a]; };
 const out = {text: [], marks: []};
 document.querySelectorAll('.js-plotly-plot').forEach((plot, index) => {
   const shapes = [...plot.querySelectorAll('.shapelayer path')]
     .map(p => [p.getBoundingClientRect(), paint(p, 'fill')])
     .filter(([r, f]) => f && f[1] > 0.5 && r.width > 0);
   plot.querySelectorAll('text').forEach(t => {
     if (!t.textContent.trim() || t.closest('.heatmap-label, .bartext-inside, .hoverlayer, .modebar')) return;
     const fill = paint(t, 'fill'); if (!fill || fill[1] === 0) return;
     let bg = page;
     const box = t.closest('.annotation') && t.closest('.annotation').querySelector('rect.bg');
     const boxFill = box && paint(box, 'fill');
     if (boxFill && boxFill[1] > 0) bg = over(boxFill[0], boxFill[1], page);
     else { const r = t.getBoundingClientRect(), x = r.x + r.width / 2, y = r.y + r.height / 2;
       const under = shapes
         .filter(([s]) => s.left <= x && x <= s.right && s.top <= y && y <= s.bottom).pop();
       if (under) bg = over(under[1][0], under[1][1], page); }
     const value = ratio(over(fill[0], fill[1], bg), bg);
     if (value < 4.5)
       out.text.push([index, t.textContent.slice(0, 40), getComputedStyle(t).fill, value.toFixed(2)]);
   });
   const marks = '.scatterlayer .js-line, .scatterlayer .point, .barlayer .point path, .shapelayer path';
   plot.querySelectorAll(marks).forEach(m => {
     const isLine = m.classList.contains('js-line')
       || m.closest('.shapelayer') && getComputedStyle(m).fill === 'none';
     const colour = paint(m, isLine ? 'stroke' : 'fill');
     if (!colour || colour[1] < 1 || m.closest('.shapelayer') && !isLine) return;
     const [r, g, b] = colour[0];
     if (r === page[0] && g === page[1] && b === page[2]) return;  // a knockout in the page colour
     if (r === 255 && g === 255 && b === 255 && lum(page) > 0.5) return;  // a white halo
     const value = ratio(colour[0], page);
     if (value < 3) out.marks.push([index, m.getAttribute('class'), `rgb(${r},${g},${b})`, value.toFixed(2)]);
   });
 });
 return out; }"""
CHART_ADDRESSES = [
    "will-it-fit",
    "roofline",
    "quantization",
    "parallelism",
    "memory-hierarchy",
    "your-hardware",
    "glossary?term=kv-cache",
    "glossary?term=streaming-multiprocessor",
    "glossary?term=memory-bandwidth",
    "glossary?term=tensor-core",
    "glossary?term=compute-communication-overlap",
    "glossary?term=3d-parallelism",
    "glossary?term=zero",
    "roofline?present=true",
]


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_chart_text_and_marks_contrast_in_both_themes(app_url, browser, scheme):
    """WCAG 1.4.3 and 1.4.11 as drawn: chart text ≥ 4.5:1 on what it sits on, lines, points and bars
    ≥ 3:1 on the page (before charts/contrast.py: tick labels 3.7:1 on white, black lines 1.1:1 on
    the dark theme)."""
    context = browser.new_context(viewport={"width": 1280, "height": 900}, color_scheme=scheme)
    page = context.new_page()
    low_text, low_marks, charts = [], [], 0
    try:
        for address in CHART_ADDRESSES:
            page.goto(f"{app_url}/{address}", wait_until="domcontentloaded")
            page.wait_for_function(FINISHED, timeout=60_000)
            page.wait_for_timeout(1000)
            charts += page.locator(".js-plotly-plot").count()
            result = page.evaluate(CHART_COLOURS)
            low_text += [(address, *row) for row in result["text"]]
            low_marks += [(address, *row) for row in result["marks"]]
    finally:
        context.close()
    assert charts >= len(CHART_ADDRESSES), charts
    assert not low_text, low_text[:12]
    assert not low_marks, low_marks[:12]


ACTIVE = """() => { const e = document.activeElement; const r = e.getBoundingClientRect();
  return {tag: e.tagName, text: (e.textContent || '').slice(0, 200), role: e.getAttribute('role') || '',
          label: e.getAttribute('aria-label') || '', value: e.getAttribute('aria-valuenow') || '',
          alert: !!e.closest('[data-testid="stAlert"]'), top: r.top, bottom: r.bottom,
          height: window.innerHeight} }"""


def _tab_to(page, wanted, limit: int = 80) -> dict:
    """Press Tab until ``wanted(active element)`` holds; fail if it never does."""
    for _ in range(limit):
        page.keyboard.press("Tab")
        active = page.evaluate(ACTIVE)
        if wanted(active):
            return active
    raise AssertionError(f"Tab never reached the element (last: {active})")


def test_a_lesson_question_and_a_simulator_control_by_keyboard_alone(app_url, page):
    """Keyboard only: choose an option and commit it, land on the verdict (focus moves to the new
    content, in view), go to the next step and land on its heading; then move a simulator slider
    with the arrow keys and see the page recompute, with a focus ring on the slider."""
    from lessons import load_lessons

    lesson = next(item for item in load_lessons() if item.id == "gpu-basics")
    page.goto(f"{app_url}/lessons?lesson=gpu-basics&step=1", wait_until="domcontentloaded")
    page.wait_for_function(FINISHED, timeout=60_000)
    page.wait_for_timeout(800)
    _tab_to(page, lambda a: a["tag"] == "INPUT" and page.evaluate("document.activeElement.type") == "radio")
    page.keyboard.press("Space")  # choose the focused option
    _tab_to(page, lambda a: a["tag"] == "BUTTON" and "Commit my prediction" in a["text"])
    page.keyboard.press("Enter")
    page.wait_for_function(
        "() => !!document.activeElement.closest('[data-testid=\"stAlert\"]')", timeout=15_000
    )
    verdict = page.evaluate(ACTIVE)
    assert verdict["alert"] and verdict["top"] >= 0 and verdict["bottom"] <= verdict["height"], verdict
    assert verdict["text"].startswith(("Right", "Not quite")), verdict

    _tab_to(page, lambda a: a["tag"] == "BUTTON" and "Next" in a["text"])
    page.keyboard.press("Enter")
    title = lesson.steps[1].title
    page.wait_for_function(
        "(t) => document.activeElement.tagName === 'H2' && document.activeElement.textContent.includes(t)",
        arg=title,
        timeout=15_000,
    )
    heading = page.evaluate(ACTIVE)
    assert 0 <= heading["top"] < heading["height"], heading  # scrolled into view, not 783 px below
    assert "step=2" in page.url

    page.goto(f"{app_url}/roofline", wait_until="domcontentloaded")
    page.wait_for_function(FINISHED, timeout=60_000)
    page.wait_for_timeout(800)
    _tab_to(page, lambda a: page.evaluate("document.activeElement.type") == "range")
    # The range input is visually hidden; the thumb that draws it carries the ring.
    ring = page.evaluate(
        "() => { const s = getComputedStyle(document.activeElement.closest('[data-focus-visible]'));"
        " return [s.outlineStyle, parseFloat(s.outlineWidth), s.outlineColor]; }"
    )
    assert ring[0] == "solid" and ring[1] >= 2 and ring[2] == "rgb(0, 114, 178)", ring
    before = page.evaluate("document.activeElement.value")
    figures = "() => [...document.querySelectorAll('[role=figure]')].map(f => f.getAttribute('aria-label'))"
    alt_before = page.evaluate(figures)
    page.keyboard.press("ArrowRight")
    page.wait_for_function("(v) => document.activeElement.value !== v", arg=before, timeout=10_000)
    page.wait_for_function(FINISHED, timeout=60_000)
    page.wait_for_timeout(1500)
    assert page.evaluate("document.activeElement.type") == "range", "the focus left the slider"
    assert page.evaluate(figures) != alt_before, "no chart changed: the page did not recompute"


def test_slash_home_opens_the_home_page_not_page_not_found(app_url, page):
    """The home page is served at /; its own name, /home, a typed or old link, leads there too."""
    page.goto(f"{app_url}/home", wait_until="domcontentloaded")
    page.wait_for_function(FINISHED, timeout=60_000)
    page.wait_for_timeout(800)
    assert page.locator("h1").first.text_content() == "GPU Field Guide"
    assert page.get_by_text("Page not found").count() == 0
    assert page.url.rstrip("/") == app_url
    nav = page.locator('[data-testid="stSidebarNav"] a').all_text_contents()
    assert sum("Home" in text for text in nav) == 1, nav  # the redirect is not a second entry


# Labels, metric names and select values whose text breaks inside a word (more lines than words)
# or is cut off; the collapsed sidebar is left out (nothing in it is drawn).
BROKEN_LABELS = r"""() => [...document.querySelectorAll(
    '[data-testid=stMain] [data-testid=stWidgetLabel] p, [data-testid=stMain] [data-testid=stMetricLabel] p,'
    + ' [data-testid=stMain] [data-baseweb=select] div')]
  .filter(e => { if (e.children.length || !e.textContent.trim()) return false;
    const r = document.createRange(); r.selectNodeContents(e);
    const tops = new Set([...r.getClientRects()].map(x => Math.round(x.top)));
    return tops.size > e.textContent.trim().split(/\s+/).length || e.scrollWidth > e.clientWidth + 1; })
  .map(e => e.textContent.slice(0, 40))"""


@pytest.mark.parametrize(
    "size", [(1280, 720), (320, 256)], ids=["1280px with the sidebar", "400 percent zoom of 1280x1024"]
)
def test_pages_reflow_without_sideways_scroll_or_broken_labels(app_url, browser, size):
    """WCAG 1.4.10: at 400 % zoom (a 320 px wide viewport) every page reflows into one column with
    no sideways scroll, and no control's label breaks inside a word (Roofline's "Precisio / n" did
    at 1280 px)."""
    context = browser.new_context(viewport={"width": size[0], "height": size[1]})
    page = context.new_page()
    problems = []
    try:
        for address in [p.url_path if not p.default else "" for p in PAGES]:
            page.goto(f"{app_url}/{address}", wait_until="domcontentloaded")
            page.wait_for_function(FINISHED, timeout=60_000)
            page.wait_for_timeout(600)
            if page.evaluate("() => document.documentElement.scrollWidth > window.innerWidth + 1"):
                problems.append((address, "scrolls sideways"))
            problems += [(address, label) for label in page.evaluate(BROKEN_LABELS)]
    finally:
        context.close()
    assert not problems, problems
