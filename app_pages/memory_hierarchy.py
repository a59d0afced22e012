"""The memory hierarchy: latency and bandwidth per level, Little's law, and where a model lives."""

from __future__ import annotations

import streamlit as st

from content import load_page
from content.schema import params_for
from ui.controls import prose
from ui.layout import notice_box, simulator_layout
from ui.state import PageState
from ui.views import memory_hierarchy as view

SECTION_TEXT = {"ladder": "ladder", "transfer": "transfer", "littles": "littles", "placement": "offload"}

page = load_page("memory_hierarchy")
state = PageState(params_for("memory-hierarchy"), page.meta.get("presets", []))
layout = simulator_layout(page, state)

with layout.controls:
    chosen = state.widget("mh_view", widget="segmented", label="View")
    row = st.columns(4)
    state.widget("mh_a", container=row[0])
    state.widget("mh_b", container=row[1])
    if chosen == "littles":
        state.widget("mh_load", container=row[2])
    if chosen == "placement":
        state.widget("mh_model", container=row[2])
        state.widget("mh_ctx", container=row[3])
with layout.advanced:
    if chosen == "placement":
        row = st.columns(2)
        state.widget("mh_wfmt", container=row[0])
        state.widget("mh_kvfmt", container=row[1])
    else:
        st.caption("Weights and KV-cache formats apply to “Where does my model live?”.")
state.sync_out()

view.VIEWS[chosen].render(state, layout.main, "mh")
fams = view.shown(state.values)
with layout.main:
    prose(page.section(SECTION_TEXT[chosen]))
    compared = view.comparison_tables(fams) if chosen == "ladder" else []
    if compared:
        with st.expander("Measured against published latency: why they differ"):
            for name, origin, table in compared:
                st.markdown(f"**{name}**, from {origin}:")
                st.dataframe(table, hide_index=True, width="stretch")
            prose(page.section("measured"))
notice_box(page.notice(chosen), layout.notice)

with layout.more:
    tables = {f.id: view.tables(f.id, state["mh_load"]) for f in fams}
    if chosen == "ladder":
        with st.expander("The numbers behind the ladder, with their sources"):
            for fam in fams:
                st.markdown(f"**{fam.name}**")
                st.dataframe(
                    tables[fam.id]["levels"],
                    hide_index=True,
                    width="stretch",
                    column_config={"Source": st.column_config.LinkColumn("Source")},
                )
        st.header("On a human scale", divider="gray")
        for fam in fams:
            human = tables[fam.id]["human"]
            if human is None:
                st.info(f"{fam.name}: no published latency measurements, so no human scale.")
                continue
            reference, rows = human
            st.markdown(f"**{fam.name}** — if one {reference} access took **1 second**:")
            st.dataframe(rows, hide_index=True, width="stretch")
    elif chosen == "transfer":
        st.dataframe(tables[fams[0].id]["transfer"], hide_index=True, width="stretch")
    elif chosen == "littles":
        for fam in fams:
            if tables[fam.id]["littles"] is not None:
                st.dataframe(tables[fam.id]["littles"], hide_index=True, width="stretch")
    else:
        st.caption("Device memory keeps 10% free for activations and the CUDA context.")
    st.header("How this page works", divider="gray")
    prose(page.body)
