"""The bandwidth roofline: datasheet roofs, example operations, and a decode step crossing the ridge."""

from __future__ import annotations

import streamlit as st

from content import load_page
from content.schema import params_for
from ui.controls import prose
from ui.decode_gap import decode_gap
from ui.layout import notice_box, simulator_layout
from ui.state import PageState
from ui.views.roofline import render_decode_batch, render_roofline

page = load_page("roofline")
state = PageState(params_for("roofline"), page.meta.get("presets", []))
layout = simulator_layout(page, state)

with layout.controls:
    c = st.columns([3, 1.5, 2, 1.75, 1.75])  # "Precision" and "BF16" fit unbroken at 1280 px
    state.widget("rf_gpus", container=c[0])
    state.widget("rf_dtype", container=c[1])
    state.widget("rf_model", container=c[2])
    state.widget("rf_batch", container=c[3])
    state.widget("rf_ctx", container=c[4])
with layout.advanced:
    a = st.columns([3, 1, 1])
    state.widget("rf_sets", container=a[0])
    state.widget("rf_decode", container=a[1])
    state.widget("rf_achievable", container=a[2])
state.sync_out()

render_roofline(state, layout.main, "rf", verdict=layout.verdict)
notice_box(page.notice(), layout.notice)

with layout.more:
    st.header("Decode as the batch grows", divider="gray")
    render_decode_batch(state, st, "rf")
    prose(page.section("decode"))
    decode_gap(page.section("eager"))
    st.header("How the roofline works", divider="gray")
    prose(page.body)
