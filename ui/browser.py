"""The course's link to the learner's browser: progress kept in ``localStorage`` and the keys a
presentation clicker sends.

One small inline component of Streamlit's own ``st.components.v2`` (no package, no build step, no
iframe): on a page load it hands the stored progress to Python once (the ``loaded`` trigger), it
writes the progress back whenever Python sends a new copy (``save`` with a new ``seq``), and in
presenter view it turns PageDown/PageUp and the arrow keys into ``next``/``prev`` (the ``key``
trigger) unless a form field has the focus. Nothing is sent to a server: the record stays in this
browser until the learner exports it.
"""

from __future__ import annotations

from typing import Any

import streamlit as st

STORAGE_KEY = "gfg-progress-v1"

_JS = """
export default function (component) {
  const { data, setTriggerValue } = component;
  const KEY = "__KEY__";
  const g = (window.__gfgCourse = window.__gfgCourse || { seq: null, loaded: false, keys: false });
  g.setTrigger = setTriggerValue;
  if (!g.loaded) {
    g.loaded = true;
    let stored = null;
    try { stored = window.localStorage.getItem(KEY); } catch (e) { stored = null; }
    setTriggerValue("loaded", stored === null ? "" : stored);
  }
  if (data && typeof data.save === "string" && data.seq !== g.seq) {
    g.seq = data.seq;
    try { window.localStorage.setItem(KEY, data.save); } catch (e) { /* storage full or blocked */ }
  }
  g.keys = !!(data && data.keys);
  if (!g.listening) {
    g.listening = true;
    let count = 0;
    window.addEventListener("keydown", (event) => {
      if (!g.keys || event.altKey || event.ctrlKey || event.metaKey || event.shiftKey) return;
      const target = event.target;
      if (target && target.closest &&
          target.closest("input, textarea, select, [contenteditable], [role=slider], [role=radiogroup], " +
                         "[role=listbox], [role=combobox], [role=spinbutton], [role=tablist]")) return;
      let move = null;
      if (event.key === "PageDown" || event.key === "ArrowRight") move = "next";
      if (event.key === "PageUp" || event.key === "ArrowLeft") move = "prev";
      if (!move) return;
      event.preventDefault();
      count += 1;
      g.setTrigger("key", move + ":" + count);
    });
  }
}
""".replace("__KEY__", STORAGE_KEY)

_component = st.components.v2.component("gfg_course_browser", js=_JS)


def _ignore() -> None:
    """Trigger callbacks name the events this component sends; the page reads the values."""


def browser_link(*, save: str | None, seq: int, keys: bool) -> tuple[str | None, str | None]:
    """Mount the component; returns (the stored progress JSON on the run after a page load, else
    None; "next"/"prev" when a clicker key was pressed, else None)."""
    result: Any = _component(
        key="gfg-course-browser",
        data={"save": save, "seq": seq, "keys": keys},
        height=0,
        on_loaded_change=_ignore,
        on_key_change=_ignore,
    )
    loaded = getattr(result, "loaded", None)
    key = getattr(result, "key", None)
    move = key.split(":", 1)[0] if isinstance(key, str) else None
    return (loaded if isinstance(loaded, str) else None), move
