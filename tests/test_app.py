"""The app in Streamlit's test harness: every page opens cleanly and stays light."""

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from content.pages import PAGES
from glossary import load_terms
from tests import pages

ROOT = Path(__file__).resolve().parent.parent
APP = str(ROOT / "app.py")
TIMEOUT = 30


def open_page(page_path: str | None = None, **query: str) -> AppTest:
    return pages.open_page(page_path, timeout=TIMEOUT, **query)


@pytest.mark.parametrize("info", PAGES, ids=[p.url_path for p in PAGES])
def test_every_page_opens_without_exception(info):
    at = open_page(info.path)
    assert not at.exception, [e.value for e in at.exception]
    assert at.title, f"{info.path} shows no title"
    if not info.default:
        assert at.title[0].value != "GPU Field Guide", f"{info.path} did not open (home page shown)"


def test_pages_never_import_torch_or_pynvml():
    """Opening every page in a fresh interpreter leaves torch and pynvml unimported.

    A subprocess, because other tests in this process may import torch on purpose.
    """
    script = textwrap.dedent(
        f"""
        import sys
        sys.path.insert(0, {str(ROOT)!r})
        from streamlit.testing.v1 import AppTest
        from content.pages import PAGES
        for info in PAGES:
            at = AppTest.from_file({APP!r}, default_timeout=60)
            at.run()
            at.switch_page(info.path)
            at.run()
            assert not at.exception, (info.path, [e.value for e in at.exception])
        heavy = sorted(m for m in ("torch", "pynvml", "transformers") if m in sys.modules)
        print("HEAVY", heavy)
        """
    )
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stderr[-3000:]
    assert "HEAVY []" in result.stdout, result.stdout[-2000:]


def test_term_deep_link_shows_the_term():
    at = open_page("app_pages/glossary.py", term="kv-cache")
    assert not at.exception
    assert at.title[0].value == "KV cache"
    assert any("attention keys and values" in m.value for m in at.markdown)


def test_unknown_term_shows_message_and_closest_matches():
    at = open_page("app_pages/glossary.py", term="kv-cahce")
    assert not at.exception
    assert "no term with the id" in at.warning[0].value
    assert any(link.proto.label == "KV cache" for link in at.get("page_link"))


def test_hostile_term_id_is_not_rendered_as_html():
    at = open_page("app_pages/glossary.py", term="<img src=x onerror=alert(1)>")
    assert not at.exception
    assert "<img" not in at.warning[0].value or at.warning[0].proto.body.startswith("There is no term")
    assert all("<img src=x" not in m.value for m in at.markdown)


def test_glossary_search_box_filters_results():
    at = open_page("app_pages/glossary.py")
    at.text_input(key="q").input("bandwith").run()
    assert not at.exception
    shown = "\n".join(m.value for m in at.markdown)
    assert "glossary?term=memory-bandwidth" in shown


def test_category_filter_lists_only_that_category():
    at = open_page("app_pages/glossary.py", category="numeric-formats")
    assert not at.exception
    shown = "\n".join(m.value for m in at.markdown)
    numeric = [t for t in load_terms() if t.category == "numeric-formats"]
    other = [t for t in load_terms() if t.category != "numeric-formats"]
    assert all(f'term={t.id}"' in shown for t in numeric)
    assert not any(f'term={t.id}"' in shown for t in other)


def test_browse_by_category_shows_all_terms():
    at = open_page("app_pages/glossary.py", arrange="By category")
    assert not at.exception
    shown = "\n".join(m.value for m in at.markdown)
    assert all(f'term={t.id}"' in shown for t in load_terms())


def test_sidebar_search_without_match_says_so():
    at = open_page()
    at.sidebar.text_input[0].input("qqqqzzzz").run()
    assert not at.exception
    assert "No term matches" in at.sidebar.caption[0].value


def test_presenter_view_opens_from_the_url_on_any_page():
    """A teacher's link with ?present=true opens the page in large type."""
    for info in PAGES:
        at = open_page(info.path, present="true")
        assert not at.exception
        assert at.toggle(key="present").value is True
        assert any("font-size: 3.4rem" in h.proto.body for h in at.get("html")), info.path
    assert not any("font-size: 3.4rem" in h.proto.body for h in open_page().get("html"))
