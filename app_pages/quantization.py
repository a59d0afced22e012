"""Quantization error: quantize a real tensor in every format and see the grid, the error and the cost."""

from __future__ import annotations

import numpy as np
import streamlit as st

from charts import quantization as qc
from content import load_page
from simulators import quantization as q
from simulators.presets import load_model_presets
from ui.controls import apply_preset_from_url, choice, notice, preset_buttons, prose

page = load_page("quantization")
apply_preset_from_url(page, "q_preset_applied")
st.title(page.meta["title"])
prose(page.body)
preset_buttons(page, columns=4)

KINDS = {
    "gaussian": "Gaussian (weights)",
    "laplace": "Laplace (heavier tails)",
    "student_t": "Student-t, 3 d.o.f. (heavy tails)",
    "uniform": "Uniform",
    "weights_outlier_channels": "Weights with a few outlier rows",
    "activations_outlier_channels": "Activations with outlier channels (×60)",
}
SIZES = {"256x1024": "256 × 1,024", "1024x1024": "1,024 × 1,024", "1024x4096": "1,024 × 4,096"}
FORMAT_LABELS = {
    name: f"{name.upper().replace('_', ' ')} — {spec.description}" for name, spec in q.FORMATS.items()
}
GRANULARITY = {"none": "None (cast)", "tensor": "Per tensor", "channel": "Per channel", "group": "Per group"}


@st.cache_data(max_entries=16, show_spinner=False)
def tensor(kind: str, size: str, seed: int) -> np.ndarray:
    rows, cols = (int(n) for n in size.split("x"))
    return q.make_tensor(kind, (rows, cols), seed)


@st.cache_data(max_entries=8, show_spinner="Quantizing in every format…")
def all_schemes(kind: str, size: str, seed: int) -> list[q.SchemeResult]:
    return q.evaluate_schemes(tensor(kind, size, seed))


@st.cache_data(max_entries=8, show_spinner="Multiplying quantized matrices…")
def matmul_demo(alpha: float) -> dict[str, q.ErrorStats]:
    return q.outlier_matmul_demo(alpha=alpha)


@st.cache_data(max_entries=2, show_spinner=False)
def alpha_sweep() -> tuple[np.ndarray, np.ndarray]:
    alphas = np.round(np.linspace(0, 1, 21), 2)
    return alphas, q.outlier_alpha_sweep(alphas)


# Figures that depend only on inputs other than the "One format" widgets are cached too, so a
# slider move there redraws only its own two histograms.
@st.cache_data(max_entries=8, show_spinner=False)
def pareto_figure(kind: str, size: str, seed: int):
    return qc.sqnr_vs_bits_figure(all_schemes(kind, size, seed))


@st.cache_data(max_entries=1, show_spinner=False)
def channel_figure():
    outliers = q.outlier_channels((512, 1024), 0, 8, 1)
    shown = np.unique(np.concatenate([np.arange(24), outliers]))
    return qc.per_channel_error_figure(q.outlier_channel_sqnr(), shown, outlier_channels=outliers)


@st.cache_data(max_entries=8, show_spinner=False)
def matmul_figures(alpha: float):
    demo = matmul_demo(alpha)
    alphas, sweep = alpha_sweep()
    return (
        qc.matmul_error_figure(demo, q.MATMUL_SCHEMES),
        qc.smoothquant_alpha_figure(alphas, sweep, chosen_alpha=alpha, baseline_db=demo["w8a8"].sqnr_db),
    )


tab_one, tab_all, tab_outliers, tab_matmul, tab_size = st.tabs(
    ["One format", "All formats", "Outlier channels", "Matmul: W4A16 vs W8A8", "Model size"]
)

with tab_one:
    c = st.columns(4)
    kind = choice("Tensor", KINDS, key="q_kind", default="gaussian", container=c[0])
    size = choice("Shape", SIZES, key="q_size", default="1024x1024", container=c[1])
    seed = c[2].number_input("Seed", 0, 10_000, 0, key="q_seed", bind="query-params")
    fmt = choice("Format", FORMAT_LABELS, key="q_fmt", default="int8", container=c[3])
    d = st.columns([2, 1, 1])
    granularity = choice(
        "Scale", GRANULARITY, key="q_gran", default="tensor", widget="segmented", container=d[0]
    )
    group = d[1].select_slider(
        "Group size", [16, 32, 64, 128, 256, 1024], value=128, key="q_group", bind="query-params"
    )
    symmetric = d[2].toggle("Symmetric (no zero point)", True, key="q_sym", bind="query-params")
    x = tensor(kind, size, seed)
    try:
        xq = q.quantize(x, fmt, granularity, group if granularity == "group" else None, symmetric)
        bits = q.effective_bits(
            fmt, granularity, group if granularity == "group" else None, symmetric, channel_length=x.shape[1]
        )
    except ValueError as exc:
        st.warning(f"That combination does not exist: {exc}")
        st.stop()
    stats = q.error_stats(x, xq)
    m = st.columns(5)
    m[0].metric(
        "Bits per parameter",
        f"{bits:.3f}",
        help="Element bits plus scales and zero points, spread over their group",
    )
    m[1].metric("SQNR", "exact" if np.isinf(stats.sqnr_db) else f"{stats.sqnr_db:.2f} dB")
    m[2].metric("MSE", f"{stats.mse:.3g}")
    m[3].metric("Max |error|", f"{stats.max_abs_error:.3g}")
    m[4].metric("Cosine similarity", f"{stats.cosine_similarity:.6f}")
    grid, grid_note = q.overlay_grid(x, fmt, granularity, symmetric)
    left, right = st.columns(2)
    left.plotly_chart(
        qc.value_histogram_figure(q.histogram(x), grid, format_label=fmt.upper(), max_grid_lines=80),
        key="q_values",
    )
    left.caption(grid_note)
    right.plotly_chart(
        qc.error_histogram_figure(q.histogram(xq - x), scheme_label=fmt.upper()), key="q_errors"
    )
    prose(page.section("tensor"))

with tab_all:
    results = all_schemes(kind, size, seed)
    st.plotly_chart(pareto_figure(kind, size, seed), key="q_pareto")
    st.dataframe(q.scheme_table(results), hide_index=True, width="stretch")
    prose(page.section("formats"))

with tab_outliers:
    st.plotly_chart(channel_figure(), key="q_channels")
    prose(page.section("outliers"))

with tab_matmul:
    alpha = st.slider(
        "SmoothQuant migration strength α", 0.0, 1.0, 0.5, 0.05, key="q_alpha", bind="query-params"
    )
    bars, sweep_chart = matmul_figures(alpha)
    st.plotly_chart(bars, key="q_matmul")
    st.plotly_chart(sweep_chart, key="q_alpha_chart")
    prose(page.section("matmul"))

with tab_size:
    presets = {p.id: p for p in load_model_presets()}
    model_id = choice("Model", {p.id: p.name for p in presets.values()}, key="q_model", default="llama-3-8b")
    spec = presets[model_id].spec
    breakdown = spec.param_breakdown()
    sizes = q.model_sizes_by_scheme(breakdown.total, breakdown.linear_layers)
    st.plotly_chart(qc.model_size_figure(sizes, model_label=spec.name), key="q_sizes")
    st.caption(
        f"{spec.param_count():,} parameters. Quantized formats apply to the linear layers "
        f"({breakdown.linear_layers:,} parameters); "
        "embeddings and the output head stay in 16-bit."
    )

notice(page.section("notice"))
