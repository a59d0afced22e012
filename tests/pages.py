"""Helpers for page tests: open a page the way a reader's browser would, read its metrics."""

from __future__ import annotations

from pathlib import Path

from streamlit.testing.v1 import AppTest

APP = str(Path(__file__).resolve().parent.parent / "app.py")


def open_page(page: str | None, timeout: float = 120, **query: str) -> AppTest:
    """Run the app with ``query`` in the address bar, then switch to ``page`` and run it.

    AppTest needs one run first: until st.navigation has registered the pages it identifies
    them by file name, which differs from their url_path.
    """
    at = AppTest.from_file(APP, default_timeout=timeout)
    at.query_params.update(query)
    at.run()
    if page is not None:
        at.switch_page(page)
        at.run()
    return at


def metrics(at: AppTest) -> dict[str, str]:
    """Label -> value of every st.metric on the page."""
    return {m.label: m.value for m in at.get("metric")}
