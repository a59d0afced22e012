"""The memory hierarchy: latency and bandwidth per level, Little's law, and where a model lives."""

from __future__ import annotations

import streamlit as st

from charts.hierarchy import ladder_figure, littles_law_figure, placement_figure, transfer_time_figure
from content import load_page
from simulators import hierarchy
from simulators.fit import format_seconds
from simulators.llm_memory import KV_FORMATS, WEIGHT_FORMATS, kv_cache_bytes, weight_bytes
from simulators.presets import load_model_presets
from ui.controls import apply_preset_from_url, choice, notice, preset_buttons, prose
from ui.measured import measured_hierarchy_points

page = load_page("memory_hierarchy")
apply_preset_from_url(page, "mh_preset_applied")
st.title(page.meta["title"])
prose(page.body)
preset_buttons(page, columns=5)

families = {f.id: f for f in hierarchy.families()}


# Figures depend only on family ids and slider values: cache them so one slider move redraws one chart.
@st.cache_data(max_entries=32, show_spinner=False)
def transfer_chart(family_id: str):
    return transfer_time_figure(list(families[family_id].levels))


@st.cache_data(max_entries=32, show_spinner=False)
def littles_chart(family_ids: tuple[str, ...], load_bytes: int):
    return littles_law_figure([families[i] for i in family_ids], bytes_per_thread=load_bytes)


names = {f.id: f.name for f in families.values()}

c1, c2 = st.columns(2)
first = choice("Hardware", names, key="mh_a", default="h100-sxm", container=c1)
second = choice("Compare with", {"none": "— nothing —"} | names, key="mh_b", default="rtx-4090", container=c2)
shown = [families[first]] + ([families[second]] if second not in ("none", first) else [])

tab_ladder, tab_transfer, tab_littles, tab_place = st.tabs(
    ["Latency and bandwidth", "Moving N bytes", "Little's law", "Where does my model live?"]
)

with tab_ladder:
    measured = [point for fam in shown for point in measured_hierarchy_points(fam)]
    st.plotly_chart(ladder_figure(shown, measured), key="mh_ladder")
    if measured:
        st.caption("◆ Measured points come from the results loaded on the Your hardware page.")
    prose(page.section("ladder"))
    with st.expander("The numbers behind the ladder, with their sources"):
        for fam in shown:
            st.markdown(f"**{fam.name}**")
            st.dataframe(
                hierarchy.levels_table(fam),
                hide_index=True,
                width="stretch",
                column_config={"Source": st.column_config.LinkColumn("Source")},
            )
    st.subheader("On a human scale", divider="gray")
    for fam in shown:
        if not any(lv.has_latency for lv in fam.levels):
            st.info(f"{fam.name}: no published latency measurements, so no human scale.")
            continue
        reference, rows = hierarchy.human_scale_table(fam)
        st.markdown(f"**{fam.name}** — if one {reference} access took **1 second**:")
        st.dataframe(rows, hide_index=True, width="stretch")

with tab_transfer:
    levels = list(families[first].levels)
    if any(lv.has_latency and lv.bandwidth_per_device_bytes_per_s for lv in levels):
        st.plotly_chart(transfer_chart(first), key="mh_transfer")
    else:
        st.info(f"{families[first].name}: no level has both a published latency and a bandwidth.")
    prose(page.section("transfer"))
    st.dataframe(hierarchy.transfer_table(levels), hide_index=True, width="stretch")

with tab_littles:
    load_bytes = st.select_slider(
        "Bytes each thread loads at once",
        [1, 2, 4, 8, 16],
        value=4,
        key="mh_load",
        bind="query-params",
        help="4 = one float32; 16 = a 128-bit vector load (float4).",
    )
    gpu_families = [f for f in shown if f.sm_count]
    if gpu_families:
        st.plotly_chart(littles_chart(tuple(f.id for f in gpu_families), load_bytes), key="mh_littles")
        st.dataframe(hierarchy.littles_law_table(gpu_families, load_bytes), hide_index=True, width="stretch")
    else:
        st.info("Little's law per SM needs a GPU: pick one above.")
    prose(page.section("littles"))

with tab_place:
    presets = {p.id: p for p in load_model_presets()}
    p1, p2, p3, p4 = st.columns(4)
    model_id = choice(
        "Model", {p.id: p.name for p in presets.values()}, key="mh_model", default="llama-3-70b", container=p1
    )
    wfmt = choice(
        "Weights",
        {k: f.label for k, f in WEIGHT_FORMATS.items()},
        key="mh_wfmt",
        default="bf16",
        container=p2,
    )
    kvfmt = choice(
        "KV cache", {k: k.upper() for k in KV_FORMATS}, key="mh_kvfmt", default="bf16", container=p3
    )
    context = p4.select_slider(
        "Context (tokens)", [2**k for k in range(10, 18)], value=8192, key="mh_ctx", bind="query-params"
    )
    spec = presets[model_id].spec
    weights = weight_bytes(spec, wfmt)
    kv = kv_cache_bytes(spec, context, 1, kvfmt)
    for fam in shown:
        try:
            placed = hierarchy.place_model(weights, kv, fam.levels, usable_fraction=0.9)
        except ValueError as exc:
            st.info(f"{fam.name}: {exc}")
            continue
        st.markdown(f"#### {fam.name}")
        st.plotly_chart(placement_figure(placed, family_name=fam.name), key=f"mh_place_{fam.id}")
        m1, m2, m3 = st.columns(3)
        m1.metric("Offloaded to host", f"{placed.offloaded_bytes / 1e9:,.1f} GB")
        m2.metric("Time per token", format_seconds(placed.time_per_token_s))
        m3.metric("vs. all on the GPU", f"{placed.slowdown:,.1f}× slower" if placed.offloaded_bytes else "—")
    st.caption("Device memory keeps 10% free for activations and the CUDA context.")
    prose(page.section("offload"))

notice(page.section("notice"))
