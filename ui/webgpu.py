"""The browser measurement suite: WebGPU kernels run by JavaScript in the reader's own page.

One inline component of Streamlit's own ``st.components.v2`` (no package, no iframe, as
``ui/browser.py``), whose JavaScript is ``ui/webgpu.js``. The component draws its own "Measure this
device" and "Stop" buttons, a progress bar and a status line, runs the kernels in the browser, and
sends the results document to this session's Python (the ``result`` trigger) after each group of
kernels and at the end, so a stopped or failed run keeps what it measured. Nothing is sent anywhere
else; the page validates the document (``measure.webgpu.from_component``) before drawing it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import streamlit as st

JS_PATH = Path(__file__).with_name("webgpu.js")

_component = st.components.v2.component("gfg_webgpu_suite", js=JS_PATH.read_text(encoding="utf-8"))


def _ignore() -> None:
    """The trigger callback: the page reads the value the run returns."""


def webgpu_suite(*, key: str, quick: bool) -> str | None:
    """Mount the suite; returns the message the browser sent on this run (a JSON string
    ``{"seq", "doc"}``), or None. ``quick`` caps sizes and times (seconds, not a minute)."""
    result: Any = _component(
        key=f"gfg-webgpu-{key}",
        data={"quick": bool(quick)},
        on_result_change=_ignore,
    )
    value = getattr(result, "result", None)
    return value if isinstance(value, str) else None
