"""The theme the reader sees, reported by the browser the moment it changes.

Streamlit does not rerun a page when the reader picks another theme from its settings menu, and
``st.context.theme`` can be stale during such a change (streamlit#11920). The pages style by
theme on the server (chart colours held to 4.5:1 text and 3:1 marks in charts/contrast.py, dark
text on the dark theme's sky-blue primary buttons in ui/presenter.py), so a theme picked from
the menu left charts at 2.4-2.6:1 and primary buttons at 2.3:1 until the next rerun. One small
inline ``st.components.v2`` component (no iframe, no package) reads the app's background colour
every half second and, when the scheme it implies differs from the one this run drew with, sets
its state: Streamlit reruns the page at once and every chart and style sheet follows the theme.
"""

from __future__ import annotations

import streamlit as st

STATE_KEY = "gfg-theme-watch"

_JS = """
export default function (component) {
  const { data, setStateValue } = component;
  const g = (window.__gfgTheme = window.__gfgTheme || {});
  g.set = setStateValue;
  g.drawn = data ? data.scheme : null;
  const scheme = () => {
    const app = document.querySelector(".stApp") || document.body;
    const rgb = (getComputedStyle(app).backgroundColor.match(/[0-9.]+/g) || []).map(Number);
    if (rgb.length < 3 || (rgb.length > 3 && rgb[3] === 0)) return null;
    return 0.2126 * rgb[0] + 0.7152 * rgb[1] + 0.0722 * rgb[2] < 128 ? "dark" : "light";
  };
  const report = () => {
    const seen = scheme();
    if (seen && seen !== g.drawn && seen !== g.sent) {
      g.sent = seen;
      g.set("scheme", seen);
    }
  };
  if (!g.timer) g.timer = setInterval(() => report(), 500);
  report();
}
"""

_component = st.components.v2.component("gfg_theme_watch", js=_JS)


def _rerun_on_change() -> None:
    """A changed scheme reruns the page (the state change itself does; nothing else to do)."""


def watch_theme(drawn: str) -> str | None:
    """Mount the watcher (in the sidebar, zero height); ``drawn`` is the scheme this run styles
    with. Returns the scheme the browser last reported, or None before it has reported one."""
    with st.sidebar:
        result = _component(
            key=STATE_KEY, data={"scheme": drawn}, height=0, on_scheme_change=_rerun_on_change
        )
    seen = getattr(result, "scheme", None)
    return seen if seen in ("light", "dark") else None
