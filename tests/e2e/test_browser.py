"""A reader in a real browser: search for a term and read its summary."""

import re

import pytest

from glossary import terms_by_id

pytestmark = pytest.mark.e2e


def test_search_box_finds_a_term_and_shows_its_summary(app_url, page):
    page.goto(f"{app_url}/glossary", wait_until="domcontentloaded")
    box = page.get_by_label("Search terms")
    box.wait_for(timeout=30_000)
    box.fill("kv cache")
    box.press("Enter")
    page.get_by_role("link", name="KV cache", exact=True).first.click(timeout=30_000)
    summary = terms_by_id()["kv-cache"].summary
    page.get_by_text(summary).wait_for(timeout=30_000)
    assert page.get_by_role("heading", name="KV cache").first.is_visible()


def test_sidebar_search_jumps_to_term_from_home(app_url, page):
    page.goto(app_url, wait_until="domcontentloaded")
    box = page.get_by_label("Search the glossary", exact=True)
    box.wait_for(timeout=30_000)
    box.fill("bandwith")
    box.press("Enter")
    page.get_by_role("heading", name=terms_by_id()["memory-bandwidth"].title).wait_for(timeout=30_000)
    page.get_by_text(terms_by_id()["memory-bandwidth"].summary).wait_for(timeout=30_000)
    # the address bar now reproduces the view (Playwright's page.url misses pushState here)
    assert re.search(r"/glossary\?term=memory-bandwidth$", page.evaluate("location.href"))


def test_deep_link_opens_term(app_url, page):
    page.goto(f"{app_url}/glossary?term=hbm", wait_until="domcontentloaded")
    page.get_by_text(terms_by_id()["hbm"].summary).wait_for(timeout=30_000)


def test_junk_in_either_search_box_says_no_match(app_url, page):
    """Issue 34: '<script>alert(1)</script>' listed 171 terms; now both boxes say no term matches,
    and the typed text is shown back as text, never run."""
    junk = "<script>alert(1)</script>"
    page.goto(f"{app_url}/glossary", wait_until="domcontentloaded")
    box = page.get_by_label("Search terms")
    box.wait_for(timeout=30_000)
    box.fill(junk)
    box.press("Enter")
    page.get_by_text("No term matches that search").wait_for(timeout=30_000)
    assert page.locator("a[href*='glossary?term=']").count() == 0
    sidebar = page.get_by_label("Search the glossary", exact=True)
    sidebar.fill(junk)
    sidebar.press("Enter")
    page.get_by_text("No term matches that.").wait_for(timeout=30_000)
