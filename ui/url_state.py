"""Widgets whose value lives in the URL as a stable id (``?category=numeric-formats``).

Streamlit's ``bind="query-params"`` stores a select widget's *displayed label* in the URL.
Where the label is prose ("Numeric formats & quantization"), a teacher's link should carry
the short id instead, so these two helpers seed the widget from the URL once per session
and write the id back after every run.
"""

from __future__ import annotations

from collections.abc import Sequence

import streamlit as st


def seed_from_url(key: str, options: Sequence[str], default: str) -> str | None:
    """Before the widget is drawn: take ``?key=`` from the URL if it names an option.

    Returns the address's value when it names none (``?category=nope``), once, when the session
    is seeded, so the page can say so instead of silently showing the default; else None."""
    if key in st.session_state:
        return None
    value = st.query_params.get(key)
    st.session_state[key] = value if value in options else default
    return value if value is not None and value not in options else None


def write_to_url(key: str, value: str, default: str) -> None:
    """After the widget is drawn: put its id in the URL (and drop it when it is the default)."""
    if value == default or value is None:
        if key in st.query_params:
            del st.query_params[key]
    elif st.query_params.get(key) != value:
        st.query_params[key] = value
