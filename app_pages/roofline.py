"""The bandwidth roofline: datasheet roofs, example operations, and a decode step crossing the ridge."""

from __future__ import annotations

import streamlit as st

from charts.roofline import decode_batch_figure, roofline_figure
from content import load_page
from simulators import roofline
from simulators.hardware import load_catalog
from simulators.presets import load_model_presets
from ui.controls import apply_preset_from_url, choice, multi_choice, notice, preset_buttons, prose
from ui.measured import measured_roofline_points

page = load_page("roofline")
apply_preset_from_url(page, "rf_preset_applied")
st.title(page.meta["title"])
prose(page.body)
preset_buttons(page, columns=5)

catalog = {a.id: a for a in load_catalog() if a.memory_bandwidth_bytes_per_s and a.available_dtypes}
DTYPES = {
    "bf16": "BF16",
    "fp16": "FP16",
    "fp8": "FP8",
    "tf32": "TF32",
    "int8": "INT8",
    "fp32": "FP32 (vector)",
}

with st.container(border=True):
    c1, c2, c3 = st.columns([3, 1, 3])
    chosen = multi_choice(
        "Accelerators",
        {a.id: a.name for a in catalog.values()},
        key="rf_gpus",
        default=["h100-sxm", "a100-80gb-sxm"],
        max_selections=4,
        container=c1,
    )
    dtype = choice("Precision", DTYPES, key="rf_dtype", default="bf16", container=c2)
    sets = multi_choice(
        "Example operations",
        roofline.OPERATION_SETS,
        key="rf_sets",
        default=["matmul", "memory-bound"],
        container=c3,
    )
    achievable = st.toggle(
        "Show achievable roofs (≈80% of matmul peak, ≈90% of bandwidth, as measured)",
        False,
        key="rf_achievable",
        bind="query-params",
    )

accelerators = [catalog[i] for i in chosen if i in catalog and catalog[i].supports(dtype)]
lacking = [catalog[i].name for i in chosen if i in catalog and not catalog[i].supports(dtype)]
if lacking:
    st.info(f"No sourced dense {DTYPES[dtype]} peak for: {', '.join(lacking)} — left off the chart.")
if not accelerators:
    st.warning("Pick at least one accelerator that has this precision.")
    st.stop()

operations = [op for name in sets for op in roofline.operation_set(name, dtype)]
st.plotly_chart(
    roofline_figure(accelerators, dtype, operations, measured_roofline_points(), show_achievable=achievable),
    key="rf_chart",
)
first = accelerators[0]
peak, bandwidth = first.peak_flops(dtype), first.memory_bandwidth_bytes_per_s
st.caption(
    f"Ridge point of {first.name} at {DTYPES[dtype]}: {roofline.ridge_point(peak, bandwidth):,.0f} FLOP/byte "
    f"= {peak / 1e12:,.1f} TFLOP/s (dense) ÷ {bandwidth / 1e12:,.2f} TB/s."
)

st.header("A decode step crossing the ridge", divider="gray")
presets = {p.id: p for p in load_model_presets()}
d1, d2, d3 = st.columns([2, 3, 2])
model_id = choice(
    "Model", {p.id: p.name for p in presets.values()}, key="rf_model", default="llama-3-8b", container=d1
)
batch = d2.select_slider(
    "Batch (sequences decoding together)",
    [2**k for k in range(0, 13)],
    value=1,
    key="rf_batch",
    bind="query-params",
)
context = d3.select_slider(
    "Context per sequence (tokens)",
    [0, 512, 1024, 2048, 4096, 8192, 32768],
    value=0,
    key="rf_ctx",
    bind="query-params",
)
spec = presets[model_id].spec
step = roofline.decode_step_op(spec, batch, context, dtype=dtype)
prediction = roofline.predict(step, first)
crossover = roofline.decode_crossover_batch(spec, first, dtype, context)
m1, m2, m3 = st.columns(3)
m1.metric("Intensity at this batch", f"{step.intensity:,.1f} FLOP/byte")
m2.metric(f"Bound on {first.name}", prediction.bound if prediction else "—")
m3.metric(
    "Crossover batch",
    f"{crossover:,}" if crossover else "never",
    help="Smallest batch whose decode step reaches the ridge point (compute-bound).",
)
if crossover is None:
    limit = roofline.decode_intensity_limit(spec, context)
    st.caption(
        f"With {context:,} tokens of context per sequence the KV cache grows with the batch as fast as "
        f"the FLOPs do: intensity levels off at {limit:,.1f} FLOP/byte, below the ridge."
    )
st.plotly_chart(
    decode_batch_figure(spec, first, [2**k for k in range(0, 13)], dtype, context, selected_batch=batch),
    key="rf_decode",
)
prose(page.section("decode"))
notice(page.section("notice"))
