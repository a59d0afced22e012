"""What a class sees, in a real browser: presenter view scales numbers and charts up, no page
scrolls sideways on a phone, the decode step sits on the roofline, and lesson 1 can be done with
the keyboard alone."""

from __future__ import annotations

import pytest

from content.pages import PAGES
from lessons import load_lessons
from tests.e2e.conftest import settle

pytestmark = pytest.mark.e2e

FINISHED = """() => !document.querySelector('[data-testid="stStatusWidget"]')
    && !document.querySelector('[data-testid="stSkeleton"]')
    && !!document.querySelector('[data-testid="stHeading"], h1')"""


def _open(page, url: str, chart: bool = False) -> None:
    page.goto(url, wait_until="domcontentloaded")
    if chart:
        page.locator(".js-plotly-plot .main-svg").first.wait_for(timeout=120_000)
    settle(page)  # the run is over and late layout (fonts, chart resize) has settled


def _font_px(page, selector: str) -> float:
    return page.evaluate("(s) => parseFloat(getComputedStyle(document.querySelector(s)).fontSize)", selector)


def test_presenter_view_scales_metrics_and_chart_ticks_up(app_url, browser):
    sizes = {}
    for present in (False, True):
        context = browser.new_context(viewport={"width": 1280, "height": 720})
        page = context.new_page()
        query = "preset=decode-batch-sweep" + ("&present=true" if present else "")
        _open(page, f"{app_url}/roofline?{query}", chart=True)
        sizes[present] = (
            _font_px(page, '[data-testid="stMetricValue"] p, [data-testid="stMetricValue"] div'),
            _font_px(page, ".js-plotly-plot .xtick text"),
        )
        if present:  # chart first: the roofline is on the first screen, the sidebar folded away
            box = page.locator(".js-plotly-plot").first.bounding_box()
            assert box is not None and box["y"] < 720
            assert page.locator('[data-testid="stSidebar"][aria-expanded="true"]').count() == 0
        context.close()
    (metric, tick), (metric_big, tick_big) = sizes[False], sizes[True]
    assert metric_big >= 1.3 * metric, sizes
    assert tick_big >= 1.3 * tick, sizes


@pytest.mark.parametrize("info", PAGES, ids=[p.url_path for p in PAGES])
def test_no_page_scrolls_sideways_on_a_phone(app_url, browser, info):
    context = browser.new_context(viewport={"width": 390, "height": 844})
    page = context.new_page()
    _open(page, f"{app_url}/{'' if info.default else info.url_path}", chart=bool(info.views))
    overflow = page.evaluate(
        "() => document.documentElement.scrollWidth - document.documentElement.clientWidth"
    )
    assert overflow <= 1, f"{info.url_path} is {overflow} px wider than the phone"
    if info.views:
        width = page.locator(".js-plotly-plot").first.bounding_box()["width"]
        assert width >= 300, f"{info.url_path}: chart only {width:.0f} px wide"
    context.close()


@pytest.mark.parametrize("preset", ["decode-batch-1", "decode-batch-sweep"])
def test_the_decode_step_is_a_point_on_the_roofline(app_url, page, preset):
    _open(page, f"{app_url}/roofline?preset={preset}", chart=True)
    roofline = page.locator(".js-plotly-plot").first
    traces = roofline.evaluate("(el) => el.data.map(t => [t.name || '', t.x || []])")
    path = next(x for name, x in traces if "decode step" in name)  # the decode step at every batch
    selected = next(x for name, x in traces if name.startswith("selected:"))  # the chosen batch
    assert len(path) >= 10 and selected[0] in path, traces
    assert roofline.locator("text", has_text="(selected)").count() >= 1


def _tab_to(page, predicate: str, limit: int = 400) -> None:
    """Press Tab until the focused element satisfies ``predicate`` (JS, gets the element)."""
    for _ in range(limit):
        if page.evaluate(f"() => {{ const el = document.activeElement; return !!el && ({predicate})(el); }}"):
            return
        page.keyboard.press("Tab")
    raise AssertionError(f"Tab never reached an element matching {predicate}")


def test_lesson_1_can_be_completed_with_the_keyboard_only(app_url, page):
    lesson = load_lessons()[0]
    _open(page, f"{app_url}/lessons?lesson={lesson.id}&step=1")
    for number, step in enumerate(lesson.steps, start=1):
        ordered = ([step.predict] if step.predict else []) + [
            q for q in step.questions if q.kind != "predict"
        ]
        for question in ordered:
            key = f"{lesson.id}-{question.id}"  # Streamlit's st-key-… class: "/" becomes "-"
            field = f"el => !!el.closest('.st-key-input-{key}')"
            submitter = f"st-key-FormSubmitter-form-{key}-"
            submit = f"el => el.tagName === 'BUTTON' && !!el.closest('[class*=\"{submitter}\"]')"
            if question.is_numeric:
                _tab_to(page, f"el => el.tagName === 'INPUT' && ({field})(el)")
                page.keyboard.type(f"{question.answer:.6g}")
                page.keyboard.press("Enter")  # submits the form
            else:
                _tab_to(page, f"el => el.type === 'radio' && ({field})(el)")
                page.keyboard.press("Space")  # the first option
                for _ in range(question.answer):
                    page.keyboard.press("ArrowDown")
                _tab_to(page, submit)
                page.keyboard.press("Enter")
            # answered: this question's form is gone (replaced by its result) and the run is over
            page.locator(f".st-key-input-{key}").wait_for(state="detached", timeout=120_000)
            settle(page)
        label = "Next →" if number < len(lesson.steps) else "Finish"
        _tab_to(page, f"el => el.tagName === 'BUTTON' && el.innerText.trim() === {label!r}")
        page.keyboard.press("Enter")
        after = f"Step {number + 1} of" if number < len(lesson.steps) else ": done"
        page.get_by_text(after).first.wait_for(timeout=120_000)  # the next screen is drawn
        settle(page)
    n = len(lesson.questions)
    summary = page.locator('[data-testid="stMetric"]').filter(has_text="Right at the first try")
    summary.wait_for(timeout=120_000)
    assert summary.locator('[data-testid="stMetricValue"]').inner_text() == f"{n} of {n}"


def test_a_page_prints_as_a_handout_without_sidebar_or_buttons(app_url, page):
    _open(page, f"{app_url}/roofline?preset=decode-batch-1", chart=True)
    page.emulate_media(media="print")
    hidden = page.evaluate(
        """() => [
            getComputedStyle(document.querySelector('[data-testid="stSidebar"]')).display,
            [...document.querySelectorAll('[data-testid="stPopover"], .stButton')]
                .every(e => getComputedStyle(e).display === 'none'),
        ]"""
    )
    assert hidden == ["none", True]
    assert page.locator(".js-plotly-plot").first.is_visible()  # the chart stays on the handout
