"""Quantization error: quantize a real tensor in every format and see the grid, the error and the cost."""

from __future__ import annotations

import streamlit as st

from content import load_page
from content.schema import params_for
from ui.controls import prose
from ui.layout import notice_box, simulator_layout
from ui.state import PageState
from ui.views.quantization import VIEWS

SECTION_TEXT = {
    "one-format": "tensor",
    "all-formats": "formats",
    "outliers": "outliers",
    "matmul": "matmul",
    "model-size": None,
}

page = load_page("quantization")
state = PageState(params_for("quantization"), page.meta.get("presets", []))
layout = simulator_layout(page, state)

with layout.controls:
    chosen = state.widget("q_view", widget="segmented", label="View")
    controls = VIEWS[chosen].controls
    if controls:
        columns = st.columns([3, 2, 2, 2][: min(len(controls), 4)])
        for i, key in enumerate(controls[:4]):
            disabled = key == "q_group" and state["q_gran"] != "group"  # group size only with groups
            state.widget(key, container=columns[i], disabled=disabled)
with layout.advanced:
    extra = VIEWS[chosen].controls[4:]
    if extra:
        columns = st.columns(len(extra))
        for i, key in enumerate(extra):
            state.widget(key, container=columns[i])
    else:
        st.caption("This view has no further settings.")
state.sync_out()

if chosen == "one-format":
    VIEWS[chosen].render(state, layout.main, "q", verdict=layout.verdict)
else:
    VIEWS[chosen].render(state, layout.main, "q")
if SECTION_TEXT[chosen]:
    with layout.main:
        prose(page.section(SECTION_TEXT[chosen]))
notice_box(page.notice(chosen), layout.notice)
with layout.more:
    st.header("How this page works", divider="gray")
    prose(page.body)
