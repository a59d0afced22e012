"""Quantization views: one format on one tensor, every format, outlier channels, W4A16 vs W8A8,
and model size. Tensors and results are cached per input (shared by every session) as plain data."""

from __future__ import annotations

import threading
from typing import Any

import numpy as np
import streamlit as st

from charts import quantization as qc
from simulators import quantization as q
from ui.chart import show
from ui.views import View
from ui.views.common import arrow, as_spec, metric_row, models

PAGE = "quantization"
# One quantization computation at a time per process: each holds several tensor-sized float
# arrays while it runs, and a class starting many at once stacked them into the server's peak RSS.
_HEAVY = threading.Lock()


@st.cache_resource(max_entries=3, show_spinner=False)
def tensor(kind: str, size: str, seed: int) -> np.ndarray:
    """The seeded tensor the page quantizes (rows × cols from ``size``), read-only: one array shared
    by every session (as st.cache_data it was also held pickled, 4 MiB at the default size, and
    unpickled into a fresh copy on every call; bench.server_memory)."""
    rows, cols = (int(n) for n in size.split("x"))
    x = q.make_tensor(kind, (rows, cols), seed)
    x.flags.writeable = False
    return x


@st.cache_data(max_entries=64, show_spinner="Quantizing…")
def one_format(
    kind: str, size: str, seed: int, fmt: str, granularity: str, group: int, symmetric: bool
) -> dict[str, Any]:
    """Bits, error statistics and the two histograms of one scheme (or ``{"error": …}``)."""
    x = tensor(kind, size, seed)
    group_size = group if granularity == "group" else None
    with _HEAVY:
        try:
            xq = q.quantize(x, fmt, granularity, group_size, symmetric)
            bits = q.effective_bits(fmt, granularity, group_size, symmetric, channel_length=x.shape[1])
        except ValueError as exc:
            return {"error": str(exc)}
        stats = q.error_stats(x, xq)
        grid, grid_note = q.overlay_grid(x, fmt, granularity, symmetric)
        error_histogram = q.histogram(xq - x)
        del xq
    label = fmt.upper().replace("_", " ")
    return {
        "error": "",
        "bits": bits,
        "sqnr_db": stats.sqnr_db,
        "mse": stats.mse,
        "max_abs_error": stats.max_abs_error,
        "cosine": stats.cosine_similarity,
        "values": as_spec(
            qc.value_histogram_figure(q.histogram(x), grid, format_label=label, max_grid_lines=80)
        ),
        "errors": as_spec(qc.error_histogram_figure(error_histogram, scheme_label=label)),
        "grid_note": grid_note,
    }


@st.cache_data(max_entries=8, show_spinner="Quantizing in every format…")
def all_formats(kind: str, size: str, seed: int) -> dict[str, Any]:
    """The SQNR-vs-bits chart and the table of every standard scheme."""
    x = tensor(kind, size, seed)
    with _HEAVY:
        results = q.evaluate_schemes(x)
    return {"chart": as_spec(qc.sqnr_vs_bits_figure(results)), "table": arrow(q.scheme_table(results))}


@st.cache_data(max_entries=1, show_spinner="Measuring every channel…")
def outlier_chart() -> dict[str, Any]:
    """Per-channel SQNR of INT8 on activations with outlier channels."""
    outliers = q.outlier_channels((512, 1024), 0, 8, 1)
    shown = np.unique(np.concatenate([np.arange(24), outliers]))
    return as_spec(qc.per_channel_error_figure(q.outlier_channel_sqnr(), shown, outlier_channels=outliers))


@st.cache_data(max_entries=1, show_spinner=False)
def _alpha_sweep() -> tuple[list[float], list[float]]:
    alphas = np.round(np.linspace(0, 1, 21), 2)
    return list(alphas), list(q.outlier_alpha_sweep(alphas))


@st.cache_data(max_entries=24, show_spinner="Multiplying quantized matrices…")
def matmul(alpha: float) -> dict[str, Any]:
    """W4A16 vs W8A8 output error, and the SmoothQuant α sweep, at migration strength ``alpha``."""
    with _HEAVY:
        demo = q.outlier_matmul_demo(alpha=alpha)
    alphas, sweep = _alpha_sweep()
    return {
        "bars": as_spec(qc.matmul_error_figure(demo, q.MATMUL_SCHEMES)),
        "sweep": as_spec(
            qc.smoothquant_alpha_figure(
                np.array(alphas), np.array(sweep), chosen_alpha=alpha, baseline_db=demo["w8a8"].sqnr_db
            )
        ),
    }


@st.cache_data(max_entries=64, show_spinner=False)
def model_size(model_id: str) -> dict[str, Any]:
    """The model's size in every scheme, and its parameter split."""
    spec = models()[model_id].spec
    breakdown = spec.param_breakdown()
    sizes = q.model_sizes_by_scheme(breakdown.total, breakdown.linear_layers)
    return {
        "chart": as_spec(qc.model_size_figure(sizes, model_label=spec.name)),
        "total": spec.param_count(),
        "linear": breakdown.linear_layers,
    }


def render_one_format(state, container: Any, key: str, verdict: Any = None) -> None:
    v = state.values
    out = one_format(v["q_kind"], v["q_size"], v["q_seed"], v["q_fmt"], v["q_gran"], v["q_group"], v["q_sym"])
    if out["error"]:
        container.warning(f"That combination does not exist: {out['error']}")
        return
    metric_row(
        verdict or container,
        [
            {
                "label": "Bits per parameter",
                "value": f"{out['bits']:.3f}",
                "help": "Element bits plus scales and zero points, spread over their group",
            },
            {"label": "SQNR", "value": "exact" if np.isinf(out["sqnr_db"]) else f"{out['sqnr_db']:.2f} dB"},
            {"label": "MSE", "value": f"{out['mse']:.3g}"},
            {"label": "Max |error|", "value": f"{out['max_abs_error']:.3g}"},
            {"label": "Cosine similarity", "value": f"{out['cosine']:.6f}"},
        ],
    )
    left, right = container.columns(2)
    show(out["values"], key=f"chart-{key}-values", container=left)
    left.caption(out["grid_note"])
    show(out["errors"], key=f"chart-{key}-errors", container=right)


def render_all_formats(state, container: Any, key: str) -> None:
    v = state.values
    out = all_formats(v["q_kind"], v["q_size"], v["q_seed"])
    show(out["chart"], key=f"chart-{key}-pareto", container=container)
    container.dataframe(out["table"], hide_index=True, width="stretch")


def render_outliers(state, container: Any, key: str) -> None:
    show(outlier_chart(), key=f"chart-{key}-channels", container=container)


def render_matmul(state, container: Any, key: str) -> None:
    out = matmul(state.values["q_alpha"])
    show(out["bars"], key=f"chart-{key}-matmul", container=container)
    show(out["sweep"], key=f"chart-{key}-alpha", container=container)


def render_model_size(state, container: Any, key: str) -> None:
    out = model_size(state.values["q_model"])
    show(out["chart"], key=f"chart-{key}-sizes", container=container)
    container.caption(
        f"{out['total']:,} parameters. Quantized formats apply to the linear layers ({out['linear']:,} "
        "parameters); embeddings and the output head stay in 16-bit."
    )


VIEWS = {
    "one-format": View(
        PAGE,
        "one-format",
        "One format on one tensor: the grid and the error",
        ("q_fmt", "q_gran", "q_group", "q_kind", "q_sym", "q_size", "q_seed"),
        render_one_format,
    ),
    "all-formats": View(
        PAGE,
        "all-formats",
        "Accuracy against storage, every format",
        ("q_kind", "q_size", "q_seed"),
        render_all_formats,
    ),
    "outliers": View(PAGE, "outliers", "Outlier channels and INT8 scales", (), render_outliers),
    "matmul": View(
        PAGE, "matmul", "Matmul error: W4A16 vs W8A8 and SmoothQuant", ("q_alpha",), render_matmul
    ),
    "model-size": View(PAGE, "model-size", "A model's size in every format", ("q_model",), render_model_size),
}
CONTROLS = {name: view.controls for name, view in VIEWS.items()}
