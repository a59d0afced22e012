"""Parallelism layouts: DP × TP × PP (× ZeRO) on a cluster — memory, traffic, time and the bubble."""

from __future__ import annotations

import streamlit as st

from charts.measure import allreduce_figure
from content import load_page
from content.schema import params_for
from ui.chart import show
from ui.controls import plain, prose
from ui.layout import notice_box, simulator_layout
from ui.measured import allreduce_records, device_label
from ui.state import PageState
from ui.views import parallelism as view
from ui.views.common import as_spec, metric_row

page = load_page("parallelism")
state = PageState(params_for("parallelism"), page.meta.get("presets", []))
layout = simulator_layout(page, state)

followed = view.prepare(state)  # DP × TP × PP kept equal to the GPU count when one degree changes
with layout.controls:
    if followed:
        st.info(followed, icon=":material/sync_alt:")
    row = st.columns([3, 1], vertical_alignment="bottom")
    chosen = state.widget("par_view", widget="segmented", label="Show", container=row[0])
    if chosen == "grid":
        state.widget("par_colour", widget="selectbox", container=row[1])
    row = st.columns(4)
    for i, key in enumerate(("par_model", "par_gpu", "par_nodes", "par_gpn")):
        state.widget(key, container=row[i])
    row = st.columns(5)
    for i, key in enumerate(("par_tp", "par_pp", "par_dp", "par_zero", "par_m")):
        state.widget(key, container=row[i])
with layout.advanced:
    row = st.columns(4)
    for i, key in enumerate(("par_seq", "par_recompute", "par_schedule", "par_recipe")):
        state.widget(key, container=row[i])
    row = st.columns(4)
    for i, key in enumerate(("par_intra", "par_inter", "par_mfu", "par_overlap")):
        state.widget(key, container=row[i])
    state.widget("par_sp")
state.sync_out()

out = view.current(state)
if out["error"]:
    with layout.verdict:
        st.error(f"This layout does not work: {out['error']}")
        if out["suggestions"]:
            st.caption(
                f"Layouts of {state['par_nodes'] * state['par_gpn']} GPUs that work for this model: "
                + "; ".join(out["suggestions"])
                + "."
            )
    st.stop()

with layout.verdict:
    for note in out["notes"]:
        st.info(note)
    metric_row(st, view.verdict(out))

with layout.main:
    if chosen == "grid":
        show(view.grid_chart(view.key_of(state.values), state["par_colour"]), key="chart-par-grid")
        prose(page.section("grid"))
    elif chosen == "memory":
        show(out["memory_chart"], key="chart-par-memory")
        st.dataframe(out["parts"], hide_index=True, width="stretch")
    elif chosen == "communication":
        show(out["comm_chart"], key="chart-par-comm")
        st.dataframe(out["comm_table"], hide_index=True, width="stretch")
        prose(page.section("communication"))
        measured = allreduce_records()
        if measured:
            show(as_spec(allreduce_figure(measured)), key="chart-par-measured-allreduce")
            st.caption(
                f"Measured on {plain(device_label())} (Your hardware page) against the same ring formula."
            )
    else:
        show(out["gantt"], key="chart-par-gantt")
        prose(page.section("pipeline"))
notice_box(page.notice(chosen), layout.notice)
with layout.more:
    st.header("How the layout works", divider="gray")
    prose(page.body)
