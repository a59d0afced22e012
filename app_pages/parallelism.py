"""Parallelism layouts: DP × TP × PP (× ZeRO) on a cluster — memory, traffic, time and the bubble."""

from __future__ import annotations

import streamlit as st

from charts.measure import allreduce_figure
from charts.parallelism import (
    comm_vs_compute_figure,
    gpu_grid_figure,
    memory_breakdown_figure,
    pipeline_gantt_figure,
)
from content import load_page
from simulators import parallelism as par
from simulators.fit import parts_table
from simulators.hardware import load_catalog, load_interconnects
from simulators.llm_memory import TRAINING_RECIPES
from simulators.presets import load_model_presets
from ui.controls import apply_preset_from_url, choice, format_bytes, notice, preset_buttons, prose
from ui.measured import allreduce_records, device_label

page = load_page("parallelism")
apply_preset_from_url(page, "par_preset_applied")
st.title(page.meta["title"])
prose(page.body)
preset_buttons(page, columns=5)

presets = {p.id: p for p in load_model_presets()}
gpus = {a.id: a for a in load_catalog() if a.kind == "gpu" and a.memory_bytes and a.supports("bf16")}

with st.container(border=True):
    r1 = st.columns(4)
    model_id = choice(
        "Model",
        {p.id: p.name for p in presets.values()},
        key="par_model",
        default="llama-3-70b",
        container=r1[0],
    )
    gpu_id = choice(
        "GPU", {a.id: a.name for a in gpus.values()}, key="par_gpu", default="h100-sxm", container=r1[1]
    )
    nodes = r1[2].number_input("Nodes", 1, 256, 8, key="par_nodes", bind="query-params")
    per_node = r1[3].number_input("GPUs per node", 1, 16, 8, key="par_gpn", bind="query-params")
    r2 = st.columns(4)
    tp = r2[0].number_input("Tensor parallel (TP)", 1, 1024, 8, key="par_tp", bind="query-params")
    pp = r2[1].number_input("Pipeline parallel (PP)", 1, 1024, 4, key="par_pp", bind="query-params")
    dp = r2[2].number_input("Data parallel (DP)", 1, 4096, 2, key="par_dp", bind="query-params")
    zero = choice(
        "ZeRO stage",
        {"0": "0 (replicated)", "1": "1 (optimizer)", "2": "2 (+ gradients)", "3": "3 (+ parameters)"},
        key="par_zero",
        default="1",
        container=r2[3],
    )
    r3 = st.columns(4)
    microbatches = r3[0].number_input(
        "Micro-batches per step (m)", 1, 1024, 16, key="par_m", bind="query-params"
    )
    seq = r3[1].select_slider(
        "Sequence length",
        [512, 1024, 2048, 4096, 8192, 16384],
        value=4096,
        key="par_seq",
        bind="query-params",
    )
    recompute = choice(
        "Recomputation",
        {"none": "None", "selective": "Selective", "full": "Full"},
        key="par_recompute",
        default="none",
        container=r3[2],
    )
    schedule = choice(
        "Schedule", {"1f1b": "1F1B", "gpipe": "GPipe"}, key="par_schedule", default="1f1b", container=r3[3]
    )
    links = {i.id: i.name for i in load_interconnects()}
    intra_ids = {k: v for k, v in links.items() if k.startswith(("nvlink-", "pcie-")) and k != "nvlink-c2c"}
    inter_ids = {k: v for k, v in links.items() if k.startswith(("ib-", "eth-"))}
    l1, l2 = st.columns(2)
    intra_link = choice("Link inside a node", intra_ids, key="par_intra", default="nvlink-4", container=l1)
    inter_link = choice(
        "Link between nodes (per GPU)", inter_ids, key="par_inter", default="ib-ndr-4x", container=l2
    )
    r4 = st.columns(4)
    sequence_parallel = r4[0].toggle("Sequence parallelism", False, key="par_sp", bind="query-params")
    recipe = choice(
        "Training recipe",
        {k: r.label for k, r in TRAINING_RECIPES.items()},
        key="par_recipe",
        default="mixed-adam-16",
        container=r4[1],
    )
    mfu = r4[2].slider(
        "MFU while computing", 0.1, 0.8, par.DEFAULT_MFU, 0.05, key="par_mfu", bind="query-params"
    )
    dp_overlap = r4[3].slider(
        "DP traffic hidden behind backward", 0.0, 1.0, 0.0, 0.1, key="par_overlap", bind="query-params"
    )

spec = presets[model_id].spec
gpu = gpus[gpu_id]
try:
    layout = par.Layout(
        dp=dp,
        tp=tp,
        pp=pp,
        zero_stage=int(zero),
        num_microbatches=microbatches,
        seq=seq,
        nodes=nodes,
        gpus_per_node=per_node,
        sequence_parallel=sequence_parallel,
        recompute=recompute,
        schedule=schedule,
    )
    par.check_layout(spec, layout)
except ValueError as exc:
    st.error(f"This layout does not work: {exc}")
    st.caption(
        f"Layouts that fill {nodes * per_node} GPUs (DP × TP × PP): "
        + ", ".join(f"{d}×{t}×{p}" for d, t, p in par.factorizations(nodes * per_node)[:24])
    )
    st.stop()

for note in par.layout_notes(spec, layout):
    st.info(note)

memory = par.per_gpu_memory(spec, layout, recipe)
terms = par.communication_per_step(
    spec, layout, recipe=recipe, intra_node_link=intra_link, inter_node_link=inter_link
)
step = par.step_time(spec, layout, gpu, terms, mfu=mfu, dp_overlap=dp_overlap)

m = st.columns(4)
m[0].metric(
    "Memory on the busiest GPU", f"{memory.total_bytes / 1e9:,.1f} GB", help=format_bytes(memory.total_bytes)
)
m[1].metric(
    "Fits?",
    "Yes" if memory.total_bytes <= gpu.memory_bytes else "No",
    f"{(gpu.memory_bytes - memory.total_bytes) / 1e9:+,.1f} GB headroom",
)
m[2].metric(
    "Pipeline bubble",
    f"{par.pipeline_bubble_fraction(pp, microbatches):.1%}",
    help="(p − 1) / (m + p − 1) of each GPU's time",
)
m[3].metric(
    "Scaling efficiency",
    f"{step.scaling_efficiency:.0%}",
    help=f"Step {step.total_s:,.2f} s; achieved MFU {step.achieved_mfu:.0%}",
)

tab_grid, tab_memory, tab_comm, tab_pipe = st.tabs(
    ["GPU grid", "Memory per GPU", "Communication and time", "Pipeline schedule"]
)
with tab_grid:
    colour_by = choice(
        "Colour GPUs by",
        {
            "pp": "Pipeline stage",
            "tp": "Tensor-parallel rank",
            "dp": "Data-parallel replica",
            "zero": "ZeRO shard",
            "role": "Same weights",
        },
        key="par_colour",
        default="pp",
        widget="segmented",
    )
    st.plotly_chart(gpu_grid_figure(layout, colour_by, spec), key="par_grid")
    prose(page.section("grid"))
with tab_memory:
    st.plotly_chart(
        memory_breakdown_figure(
            par.memory_by_stage(spec, layout, recipe),
            gpu.memory_bytes,
            f"{gpu.name}: {gpu.memory_bytes / 1e9:,.0f} GB",
        ),
        key="par_memory",
    )
    st.dataframe(parts_table(memory), hide_index=True, width="stretch")
with tab_comm:
    st.plotly_chart(comm_vs_compute_figure(terms, step), key="par_comm")
    st.dataframe(par.communication_table(terms), hide_index=True, width="stretch")
    prose(page.section("communication"))
    measured_reduce = allreduce_records()
    if measured_reduce:
        st.plotly_chart(allreduce_figure(measured_reduce), key="par_measured_allreduce")
        st.caption(f"Measured on {device_label()} (Your hardware page) against the same ring formula.")
with tab_pipe:
    slots = par.pipeline_schedule(pp, microbatches, schedule)
    st.plotly_chart(pipeline_gantt_figure(slots, schedule.upper()), key="par_gantt")
    prose(page.section("pipeline"))

notice(page.section("notice"))
