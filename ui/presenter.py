"""Presenter view for classrooms: large type, wide layout, sidebar collapsed.

Turned on from the sidebar or with ``?present=true`` in any page's address, so a teacher's
prepared link opens ready for the projector. The style sheet is a constant written here;
nothing a reader types ever reaches it.
"""

from __future__ import annotations

import streamlit as st

PRESENT_KEY = "present"

_PRESENTER_CSS = """
<style>
  [data-testid="stAppViewContainer"] .stMainBlockContainer { max-width: 100%; padding: 1.5rem 3rem; }
  [data-testid="stAppViewContainer"] p,
  [data-testid="stAppViewContainer"] li,
  [data-testid="stAppViewContainer"] label,
  [data-testid="stAppViewContainer"] td,
  [data-testid="stAppViewContainer"] th { font-size: 1.35rem !important; line-height: 1.5; }
  [data-testid="stAppViewContainer"] h1 { font-size: 3.4rem !important; }
  [data-testid="stAppViewContainer"] h2 { font-size: 2.4rem !important; }
  [data-testid="stAppViewContainer"] h3 { font-size: 1.9rem !important; }
  [data-testid="stMetricValue"] { font-size: 3.2rem !important; }
</style>
"""


def presenter_toggle() -> bool:
    """Sidebar switch bound to ``?present=true``; returns whether presenter view is on."""
    with st.sidebar:
        on = st.toggle(
            "Presenter view (large type)",
            key=PRESENT_KEY,
            bind="query-params",
            help="For a projector: bigger text everywhere. Add ?present=true to a link to open it this way.",
        )
    if on:
        st.html(_PRESENTER_CSS)
    return on
