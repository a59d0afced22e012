"""Presenter view for classrooms, and the style sheet every page shares.

Presenter view is on with the sidebar switch or ``?present=true`` in any address, so a teacher's
prepared link opens ready for a projector: the sidebar starts collapsed, the chart comes first,
controls fold into an expander, and text, metrics and chart fonts all grow together (charts via
``PRESENTER_SCALE`` in ui/chart.py). The style sheets are constants written here; nothing a reader
types ever reaches them.
"""

from __future__ import annotations

import streamlit as st

PRESENT_KEY = "present"
_WRITTEN_KEY = "_present_written"
PRESENTER_SCALE = 1.45  # chart fonts; prose grows by the same ratio (1.45 rem)

# Every page: less empty space above the title; print drops the sidebar, header and buttons so a
# page prints as a handout.
_BASE_CSS = """
<style>
  [data-testid="stAppViewContainer"] .stMainBlockContainer { padding-top: 3.9rem; }
  [data-testid="stAppViewContainer"] h1 { font-size: 2.3rem; padding-top: 0.25rem; }
  /* Headings go h1 → h2 → h3 without skipping (screen readers list them as an outline); h2 is
     drawn at the size a section heading needs, not Streamlit's 2.25 rem. */
  [data-testid="stMain"] h2 { font-size: 1.6rem; }
  [data-testid="stMain"] h3 { font-size: 1.3rem; }
  [data-testid="stMetric"] [data-testid="stMetricValue"] { font-size: 1.9rem; }
  .fg-chart-title { margin: 0.5rem 0 0 0.5rem; line-height: 1.35; }
  /* Captions: the theme's text colour at 80 % (Streamlit's 60 % gave 3.9:1 on white). */
  [data-testid="stCaptionContainer"] { color: inherit !important; opacity: 0.8; }
  /* A focus ring that shows on both themes (blue: 5.0:1 on white, 3.8:1 on the dark background);
     radios, checkboxes and toggles hide their input, so the label carries the ring; a slider's
     thumb carries it for its hidden range input (Streamlit's own is a 50 % blue, 2:1 on white). */
  a:focus-visible, button:focus-visible, [role="tab"]:focus-visible, summary:focus-visible,
  label:has(input:focus-visible), [data-testid="stSlider"] [data-focus-visible="true"] {
    outline: 3px solid #0072B2 !important; outline-offset: 2px;
  }
  /* A disabled control's label stays readable (Streamlit's 40 % gave 2.4:1), a little dimmer. */
  label[data-testid="stWidgetLabel"][disabled] { color: inherit !important; opacity: 0.75; }
  /* A phone: a simulator's answer (verdict and chart, ui/layout.py) before its control panel,
     and everything the page adds after the panel after both. */
  @media (max-width: 640px) {
    [data-testid="stMain"] .stVerticalBlock > :has(> .st-key-sim-controls) { order: 2; }
    [data-testid="stMain"] .stVerticalBlock > :has(> .st-key-sim-controls) ~ * { order: 3; }
    [data-testid="stMain"] .stVerticalBlock > :has(> .st-key-sim-controls) ~ :has(> .st-key-sim-answer) {
      order: 1;
    }
  }
  /* Page links wrap instead of being cut off with an ellipsis on a narrow screen (320 px). */
  [data-testid="stPageLink-NavLink"] span, [data-testid="stPageLink-NavLink"] p {
    white-space: normal !important; overflow: visible !important; text-overflow: clip !important;
  }
  .fg-chart-title .fg-chart-head { display: block; font-size: 1.2rem; font-weight: 600; }
  .fg-chart-title .fg-chart-detail { display: block; font-size: 0.9rem; opacity: 0.8; }
  @media print {
    [data-testid="stSidebar"], [data-testid="stHeader"], [data-testid="stToolbar"],
    [data-testid="stDecoration"], [data-testid="stStatusWidget"], .stButton, .stDownloadButton,
    [data-testid="stPopover"], [data-testid="stExpander"] details:not([open]),
    .modebar-container, [data-testid="stElementToolbar"] { display: none !important; }
    [data-testid="stAppViewContainer"] .stMainBlockContainer {
      max-width: 100% !important; padding: 0 !important;
    }
    [data-testid="stMain"] { margin-left: 0 !important; }
    a { color: inherit !important; text-decoration: underline; }
  }
</style>
"""

# Dark theme only: text on the primary colour (sky blue) in near-black, 9.6:1 instead of white's
# 2.3:1 — primary and form-submit buttons, multiselect tags.
_DARK_CSS = """
<style>
  [data-testid="stBaseButton-primary"], [data-testid="stBaseButton-primary"] p,
  [data-testid="stBaseButton-primaryFormSubmit"], [data-testid="stBaseButton-primaryFormSubmit"] p,
  [data-testid="stMultiSelectTagsContainer"] [data-tag],
  [data-testid="stMultiSelectTagsContainer"] [data-tag] span,
  [data-testid="stMultiSelectTagsContainer"] [data-tag] svg { color: #0E1117 !important; }
</style>
"""

_PRESENTER_CSS = """
<style>
  [data-testid="stAppViewContainer"] .stMainBlockContainer {
    max-width: 100%; padding: 3.9rem 2.5rem 2rem 2.5rem;
  }
  [data-testid="stMarkdownContainer"] p, [data-testid="stMarkdownContainer"] li,
  [data-testid="stCaptionContainer"], [data-testid="stWidgetLabel"] p,
  [data-testid="stTable"] td, [data-testid="stTable"] th { font-size: 1.45rem !important; line-height: 1.45; }
  [data-testid="stAppViewContainer"] h1 { font-size: 3rem !important; padding-top: 0.2rem; }
  .fg-chart-title .fg-chart-head { font-size: 1.75rem !important; }
  .fg-chart-title .fg-chart-detail { font-size: 1.3rem !important; }
  [data-testid="stAppViewContainer"] h2 { font-size: 2.3rem !important; }
  [data-testid="stAppViewContainer"] h3 { font-size: 1.9rem !important; }
  [data-testid="stMetric"] [data-testid="stMetricValue"],
  [data-testid="stMetric"] [data-testid="stMetricValue"] [data-testid="stMarkdownContainer"] p,
  [data-testid="stMetric"] [data-testid="stMetricValue"] div {
    font-size: 3.4rem !important; line-height: 1.15 !important;
  }
  [data-testid="stMetric"] [data-testid="stMetricLabel"] [data-testid="stMarkdownContainer"] p,
  [data-testid="stMetric"] [data-testid="stMetricLabel"] p { font-size: 1.45rem !important; }
  [data-testid="stMetric"] [data-testid="stMetricDelta"],
  [data-testid="stMetric"] [data-testid="stMetricDelta"] div,
  [data-testid="stMetric"] [data-testid="stMetricDelta"] p { font-size: 1.35rem !important; }
</style>
"""


def _from_address() -> bool | None:
    value = st.query_params.get(PRESENT_KEY)
    return None if value is None else str(value).lower() in ("true", "1", "yes")


_SEEN_SCHEME_KEY = "_theme_seen"  # what the browser last reported (ui/theme_watch.py)


def theme_scheme() -> str:
    """The theme the reader's browser shows: "dark" or "light". What the browser itself reported
    after a theme change (``ui.theme_watch``) wins over ``st.context.theme``, which can be stale
    while the theme changes."""
    seen = st.session_state.get(_SEEN_SCHEME_KEY)
    if seen in ("light", "dark"):
        return seen
    return "dark" if getattr(getattr(st.context, "theme", None), "type", None) == "dark" else "light"


def is_presenting() -> bool:
    """Whether presenter view is on for this session (switch or ``?present=true``)."""
    value = st.session_state.get(PRESENT_KEY)
    if value is None:
        value = bool(_from_address())
    return bool(value)


def presenter_toggle() -> bool:
    """Sidebar switch kept in step with ``?present=true``; adds the shared and presenter style sheets.

    The switch is not bound to the address by Streamlit (a bound key cannot be rewritten together
    with the page's other parameters): a link that says ``present=…`` sets it, and the switch
    writes its state back.
    """
    wanted = _from_address()
    if PRESENT_KEY not in st.session_state or (
        wanted is not None and wanted != st.session_state.get(_WRITTEN_KEY)
    ):
        st.session_state[PRESENT_KEY] = bool(wanted)
    with st.sidebar:
        on = st.toggle(
            "Presenter view",
            key=PRESENT_KEY,
            help="For a projector: chart first, larger text and charts, controls folded away. "
            "Add ?present=true to a link to open it this way.",
        )
    if on and st.query_params.get(PRESENT_KEY) != "true":
        st.query_params[PRESENT_KEY] = "true"
    elif not on and PRESENT_KEY in st.query_params:
        del st.query_params[PRESENT_KEY]
    st.session_state[_WRITTEN_KEY] = on
    from ui.theme_watch import watch_theme

    context = "dark" if getattr(getattr(st.context, "theme", None), "type", None) == "dark" else "light"
    seen = watch_theme(st.session_state.get(_SEEN_SCHEME_KEY) or context)
    if seen is not None:  # a theme picked from Streamlit's menu: this rerun draws with it
        st.session_state[_SEEN_SCHEME_KEY] = seen
    dark = theme_scheme() == "dark"
    st.html(_BASE_CSS + (_DARK_CSS if dark else "") + (_PRESENTER_CSS if on else ""))
    return on
