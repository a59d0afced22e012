"""The course's link to the learner's browser: progress kept in ``localStorage``, the keys a
presentation clicker sends, and where the keyboard focus goes after an answer or a step change.

One small inline component of Streamlit's own ``st.components.v2`` (no package, no build step, no
iframe): on a page load it hands the stored progress to Python once (the ``loaded`` trigger), it
writes the progress back whenever Python sends a new copy (``save`` with a new ``seq``), and in
presenter view it turns PageDown/PageUp and the arrow keys into ``next``/``prev`` (the ``key``
trigger) unless a form field has the focus. Nothing is sent to a server: the record stays in this
browser until the learner exports it.

Focus (WCAG 2.4.3): Streamlit redraws a page without moving the focus, so after "Next" a keyboard or
screen-reader user would be left on a button of the old step, and after an answer on the page body.
Python names the new content (``focus``: a CSS selector, the text it must contain, and a sequence
number so each request is carried out once); the script waits for that element to be drawn, makes
it focusable (``tabindex=-1``), moves the focus to it and scrolls it into view.
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
  const focus = data && data.focus;
  if (focus && focus.seq !== g.focusSeq) {
    g.focusSeq = focus.seq;
    const find = () => [...document.querySelectorAll(focus.selector)].find(
      (el) => !focus.text || (el.textContent || "").includes(focus.text));
    const move = (el) => {
      if (!el.hasAttribute("tabindex")) el.setAttribute("tabindex", "-1");
      el.focus({ preventScroll: true });
      el.scrollIntoView({ block: focus.block || "start" });
    };
    let tries = 0;
    const look = () => {
      const el = find();
      if (el) {
        move(el);
        // Streamlit may replace the element once the run ends: focus its successor once more.
        setTimeout(() => {
          const again = find();
          if (again && document.activeElement !== again &&
              (document.activeElement === document.body || !document.activeElement)) move(again);
        }, 600);
      } else if (++tries < 60) {
        setTimeout(look, 75);
      }
    };
    look();
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


def browser_link(
    *, save: str | None, seq: int, keys: bool, focus: dict[str, Any] | None = None
) -> tuple[str | None, str | None]:
    """Mount the component; returns (the stored progress JSON on the run after a page load, else
    None; "next"/"prev" when a clicker key was pressed, else None). ``focus`` (``selector``,
    ``text``, ``block``, ``seq``) moves the keyboard focus to the element it names, once per ``seq``."""
    result: Any = _component(
        key="gfg-course-browser",
        data={"save": save, "seq": seq, "keys": keys, "focus": focus},
        height=0,
        on_loaded_change=_ignore,
        on_key_change=_ignore,
    )
    loaded = getattr(result, "loaded", None)
    key = getattr(result, "key", None)
    move = key.split(":", 1)[0] if isinstance(key, str) else None
    return (loaded if isinstance(loaded, str) else None), move
