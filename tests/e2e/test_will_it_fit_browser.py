"""Will it fit? in a real browser on a phone (issue 34): the model and GPU controls right under
the answer, not three screens below it; the engines' views drawn without an exception."""

import pytest

pytestmark = pytest.mark.e2e

FINISHED = """() => !document.querySelector('[data-testid="stStatusWidget"]')
    && !document.querySelector('[data-testid="stSkeleton"]')
    && !!document.querySelector('[data-testid="stHeading"], h1')"""
# Page positions (px from the top of the page) of the last verdict metric, the model select, the
# first chart and the control panel.
TOPS = """() => { const top = e => e ? e.getBoundingClientRect().top + scrollY : null;
  const metrics = [...document.querySelectorAll('[data-testid=stMain] [data-testid=stMetric]')];
  const last = metrics.length ? metrics[0].closest('.st-key-sim-answer') : null;
  const model = [...document.querySelectorAll('[data-testid=stSelectbox]')]
      .find(e => (e.innerText || '').startsWith('Model'));
  return {answerBottom: last ? last.getBoundingClientRect().bottom + scrollY : null,
          model: top(model), chart: top(document.querySelector('[data-testid=stMain] .js-plotly-plot')),
          controls: top(document.querySelector('.st-key-sim-controls'))}; }"""


@pytest.mark.parametrize("query", ["", "?fit_engine=llamacpp&fit_gpu=rtx-4090&fit_model=llama-3.1-70b"])
def test_on_a_phone_the_model_select_sits_right_under_the_answer(app_url, browser, query):
    context = browser.new_context(viewport={"width": 390, "height": 844})
    page = context.new_page()
    try:
        page.goto(f"{app_url}/will-it-fit{query}", wait_until="domcontentloaded")
        page.wait_for_function(FINISHED, timeout=120_000)
        page.locator("[data-testid=stMain] .js-plotly-plot").first.wait_for(timeout=120_000)
        tops = page.evaluate(TOPS)
    finally:
        context.close()
    # the verdict, then the control panel with the model select first, then the chart: the select
    # is under the answer's last line (it was three screens below it) and on the first 1.25 screens
    assert tops["answerBottom"] <= tops["controls"] < tops["model"] < tops["chart"], tops
    assert tops["model"] - tops["answerBottom"] < 200 and tops["model"] < 1.25 * 844, tops


ENGINE_VIEWS = [
    "will-it-fit?fit_engine=compare&fit_model=llama-3.1-8b&fit_ctx=32768&fit_users=8",
    "will-it-fit?fit_engine=llamacpp&fit_gpu=rtx-4090&fit_model=llama-3.1-70b",
    "will-it-fit?fit_engine=sglang&fit_model=gpt-oss-20b",
]
RULES = ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa", "wcag22aa"]


def test_the_engine_views_have_no_serious_accessibility_violation(app_url, browser):
    """Side by side, llama.cpp offloading a 70B, and SGLang refusing a model: axe-core finds no
    serious or critical violation (tabs, code blocks and tables included)."""
    from pathlib import Path

    import axe_playwright_python

    from tests.e2e.conftest import settle

    axe = Path(axe_playwright_python.__file__).parent / "axe.min.js"
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    page = context.new_page()
    found = []
    try:
        for address in ENGINE_VIEWS:
            page.goto(f"{app_url}/{address}", wait_until="domcontentloaded")
            settle(page)
            assert not page.locator('[data-testid="stException"]').count(), address
            page.add_script_tag(path=str(axe))
            result = page.evaluate(
                "async (tags) => await axe.run(document, {runOnly: {type: 'tag', values: tags}})", RULES
            )
            found += [
                (address, v["id"], v["nodes"][0]["html"][:160])
                for v in result["violations"]
                if v["impact"] in ("serious", "critical")
            ]
    finally:
        context.close()
    assert not found, found


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_the_engine_charts_text_and_marks_contrast_in_both_themes(app_url, browser, scheme):
    """The side-by-side ledger bars (SGLang's reserve and page-alignment terms included) and the
    llama.cpp bar: text 4.5:1 and marks 3:1 against the page, as every chart (WCAG 1.4.3, 1.4.11)."""
    from tests.e2e.conftest import settle
    from tests.e2e.test_accessibility_browser import CHART_COLOURS

    context = browser.new_context(viewport={"width": 1280, "height": 900}, color_scheme=scheme)
    page = context.new_page()
    low, charts = [], 0
    try:
        for address in ENGINE_VIEWS[:2]:
            page.goto(f"{app_url}/{address}", wait_until="domcontentloaded")
            settle(page)
            charts += page.locator(".js-plotly-plot").count()
            result = page.evaluate(CHART_COLOURS)
            low += [(address, *row) for row in result["text"] + result["marks"]]
    finally:
        context.close()
    assert charts >= 2 and not low, low
