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
    "glossary?term=kv-cache",
    "roofline?present=true",
]


def _axe_script() -> Path:
    import axe_playwright_python

    return Path(axe_playwright_python.__file__).parent / "axe.min.js"


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_no_serious_accessibility_violation_on_any_page(app_url, browser, scheme):
    context = browser.new_context(viewport={"width": 1280, "height": 900}, color_scheme=scheme)
    page = context.new_page()
    found = []
    titles = {}
    try:
        for address in ADDRESSES:
            page.goto(f"{app_url}/{address}", wait_until="domcontentloaded")
            page.wait_for_function(FINISHED, timeout=60_000)
            page.wait_for_timeout(800)
            titles[address] = page.title()
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
