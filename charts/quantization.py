"""Figures for the quantization simulator: pure builders, model output → plotly Figure.

Nothing here computes a quantization: the numbers come from ``simulators.quantization`` (histograms
are binned there, so a figure ships a few hundred numbers to the browser, not millions of values).
Fonts are 16 px for a projector; colours are Okabe–Ito (charts/palette.py).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

import numpy as np
import plotly.graph_objects as go

from charts.palette import OKABE_ITO
from charts.style import BASE_FONT_PX, apply_style
from simulators.quantization import (
    FORMATS,
    ErrorStats,
    Histogram,
    SchemeResult,
    pareto_frontier,
    uniform_sqnr_theory_db,
)

FONT_SIZE_PX = BASE_FONT_PX
BLUE, ORANGE, GREEN, PURPLE, SKY, VERMILLION, YELLOW, BLACK = OKABE_ITO

#: Colour and legend name of each format family on the SQNR-vs-bits chart.
FAMILY_STYLE: dict[str, tuple[str, str, str]] = {
    "int": ("Integer formats (evenly spaced codes)", BLUE, "circle"),
    "float": ("Floating-point formats (FP16 … FP4)", ORANGE, "diamond"),
    "lut": ("NF4 (16 normal quantiles, lookup table)", GREEN, "square"),
}


def _layout(fig: go.Figure, title: str, x_title: str, y_title: str) -> go.Figure:
    """The shared chart style, plus this page's title, axis titles and legend placement."""
    apply_style(fig)
    fig.update_layout(
        title={"text": title},
        template="plotly_white",
        margin={"l": 80, "r": 30, "t": 60, "b": 80},
        # Legend under the plot: above it, it collides with the title once it wraps to two rows.
        legend={"orientation": "h", "yanchor": "top", "y": -0.2, "x": 0},
    )
    fig.update_xaxes(title_text=x_title)
    fig.update_yaxes(title_text=y_title)
    return fig


def _bars(hist: Histogram, name: str, color: str) -> go.Bar:
    return go.Bar(
        x=hist.centers,
        y=hist.counts,
        width=float(hist.edges[1] - hist.edges[0]),
        name=name,
        marker={"color": color, "line": {"width": 0}},
        hovertemplate="%{x:.4g}: %{y:,} values<extra></extra>",
    )


def value_histogram_figure(
    hist: Histogram,
    grid: np.ndarray | None = None,
    *,
    format_label: str = "",
    log_counts: bool = True,
    max_grid_lines: int = 400,
) -> go.Figure:
    """Histogram of the tensor's values with the format's representable values as vertical lines.

    ``grid`` is ``format_grid(fmt, scale)`` (already scaled). Only the grid values inside the
    histogram's range are drawn; more than ``max_grid_lines`` of them would be a solid block, so
    the figure says how many there are instead of drawing them.
    """
    fig = go.Figure(_bars(hist, "Values of the tensor (count per bin)", SKY))
    low, high = float(hist.edges[0]), float(hist.edges[-1])
    if grid is not None:
        in_view = np.asarray(grid, dtype=np.float64)
        in_view = in_view[(in_view >= low) & (in_view <= high)]
        label = f"{format_label} representable values" if format_label else "Representable values"
        if 0 < in_view.size <= max_grid_lines:
            xs = np.repeat(in_view, 3)
            xs[2::3] = np.nan
            ys = np.tile([0.0, 1.0, np.nan], in_view.size)
            fig.add_trace(
                go.Scatter(
                    x=xs,
                    y=ys,
                    yaxis="y2",
                    mode="lines",
                    name=f"{label} ({in_view.size} in view)",
                    line={"color": VERMILLION, "width": 1},
                    opacity=0.6,
                    hoverinfo="skip",
                )
            )
        elif in_view.size > max_grid_lines:
            fig.add_annotation(
                text=f"{label}: {in_view.size:,} in view, too dense to draw",
                xref="paper",
                yref="paper",
                x=1,
                y=1,
                xanchor="right",
                yanchor="top",
                showarrow=False,
            )
    fig.update_layout(
        yaxis2={"overlaying": "y", "range": [0, 1], "visible": False, "fixedrange": True},
        bargap=0,
    )
    _layout(fig, "Values and the format's grid", "Value (tensor units)", "Count per bin")
    if log_counts:
        fig.update_layout(yaxis_type="log")
    return fig


def error_histogram_figure(hist: Histogram, *, scheme_label: str = "", log_counts: bool = False) -> go.Figure:
    """Histogram of the quantization error (dequantized − original). Counts are linear by default:
    rounding error is near-uniform, and a log axis would blow its noise up; ``log_counts`` shows
    the rare large errors of clipping or saturation."""
    name = f"Error of {scheme_label} (count per bin)" if scheme_label else "Error (count per bin)"
    fig = go.Figure(_bars(hist, name, PURPLE))
    fig.update_layout(bargap=0)
    _layout(fig, "Quantization error", "Error: dequantized − original (tensor units)", "Count per bin")
    if log_counts:
        fig.update_yaxes(type="log")
    return fig


def sqnr_vs_bits_figure(
    results: Sequence[SchemeResult], *, theory: bool = True, frontier: bool = True
) -> go.Figure:
    """SQNR against effective bits per parameter for every scheme, one colour per format family,
    the Pareto frontier, and the 6.02 dB/bit line of a uniform quantizer on uniform data.

    Schemes with infinite SQNR (FP32 against an FP32 reference) cannot be placed and are named in a
    note under the chart.
    """
    fig = go.Figure()
    finite = [r for r in results if math.isfinite(r.stats.sqnr_db)]
    exact = [r.scheme.label for r in results if not math.isfinite(r.stats.sqnr_db)]
    for family, (name, color, symbol) in FAMILY_STYLE.items():
        members = [r for r in finite if FORMATS[r.scheme.fmt].kind == family]
        if not members:
            continue
        fig.add_trace(
            go.Scatter(
                x=[r.effective_bits for r in members],
                y=[r.stats.sqnr_db for r in members],
                mode="markers",
                name=name,
                marker={"color": color, "symbol": symbol, "size": 13, "line": {"width": 1, "color": BLACK}},
                text=[r.scheme.label for r in members],
                hovertemplate="%{text}<br>%{x:.3f} bits/param, %{y:.2f} dB<extra></extra>",
            )
        )
    bits = [r.effective_bits for r in finite]
    if frontier and finite:
        front = pareto_frontier(bits, [r.stats.sqnr_db for r in finite])
        fig.add_trace(
            go.Scatter(
                x=[finite[i].effective_bits for i in front],
                y=[finite[i].stats.sqnr_db for i in front],
                mode="lines",
                name="Pareto frontier: most SQNR for the bits",
                line={"color": BLACK, "width": 2},
                hoverinfo="skip",
            )
        )
    if theory:
        span = np.linspace(1.0, max([*bits, 8.0]), 50)
        fig.add_trace(
            go.Scatter(
                x=span,
                y=uniform_sqnr_theory_db(span),
                mode="lines",
                name="6.02 dB per bit: uniform quantizer, uniform data",
                line={"color": VERMILLION, "dash": "dash", "width": 2},
                hoverinfo="skip",
            )
        )
    if exact:
        fig.add_annotation(
            text="Exact (SQNR ∞, not drawn): " + ", ".join(exact),
            xref="paper",
            yref="paper",
            x=1,
            y=0,
            xanchor="right",
            yanchor="bottom",
            showarrow=False,
        )
    _layout(
        fig,
        "Accuracy vs storage",
        "Effective bits per parameter (incl. scales and zero points)",
        "SQNR (dB, higher is better)",
    )
    return fig


def per_channel_error_figure(
    channel_sqnr_db: Mapping[str, np.ndarray],
    channels: Sequence[int] | np.ndarray,
    *,
    outlier_channels: Sequence[int] | np.ndarray = (),
) -> go.Figure:
    """SQNR of each listed channel (bars grouped by scheme). Outlier channels are labelled on the
    axis. ``channel_sqnr_db`` maps a scheme label to ``per_channel_sqnr_db(...)`` over all channels;
    ``channels`` picks which to draw (a few dozen read well on a projector)."""
    picked = np.asarray(channels, dtype=int)
    outliers = {int(c) for c in np.asarray(outlier_channels, dtype=int)}
    labels = [f"{c} (outlier)" if c in outliers else str(c) for c in picked]
    fig = go.Figure()
    for index, (scheme, values) in enumerate(channel_sqnr_db.items()):
        fig.add_trace(
            go.Bar(
                x=labels,
                y=np.asarray(values, dtype=np.float64)[picked],
                name=scheme,
                marker={"color": OKABE_ITO[index % len(OKABE_ITO)]},
                hovertemplate="channel %{x}: %{y:.1f} dB<extra>" + scheme + "</extra>",
            )
        )
    fig.update_layout(barmode="group")
    _layout(fig, "Error per channel", "Channel", "SQNR of the channel (dB, higher is better)")
    fig.update_xaxes(type="category")
    return fig


def matmul_error_figure(
    results: Mapping[str, ErrorStats], descriptions: Mapping[str, str] | None = None
) -> go.Figure:
    """Output SQNR of y = x·wᵀ for each quantization scheme, as horizontal bars."""
    names = list(results)
    labels = [descriptions.get(n, n) if descriptions else n for n in names]
    fig = go.Figure(
        go.Bar(
            x=[results[n].sqnr_db for n in names],
            y=labels,
            orientation="h",
            name="Output SQNR of the matmul",
            marker={"color": BLUE},
            text=[f"{results[n].sqnr_db:.1f} dB" for n in names],
            textposition="auto",
            hovertemplate="%{y}: %{x:.2f} dB<extra></extra>",
        )
    )
    # No y-axis title: the bar labels name the schemes, and a title would collide with long labels.
    _layout(fig, "Matmul error by scheme", "Output SQNR (dB, higher is better)", "")
    fig.update_yaxes(autorange="reversed")
    return fig


def smoothquant_alpha_figure(
    alphas: Sequence[float] | np.ndarray,
    sqnr_db: Sequence[float] | np.ndarray,
    *,
    chosen_alpha: float | None = None,
    baseline_db: float | None = None,
) -> go.Figure:
    """W8A8 output SQNR against the SmoothQuant migration strength α, with the chosen α marked and
    (optionally) W8A8 without smoothing as a horizontal reference line."""
    fig = go.Figure(
        go.Scatter(
            x=np.asarray(alphas),
            y=np.asarray(sqnr_db),
            mode="lines+markers",
            name="W8A8 with SmoothQuant",
            line={"color": BLUE, "width": 3},
            hovertemplate="α = %{x:.2f}: %{y:.2f} dB<extra></extra>",
        )
    )
    if baseline_db is not None:
        fig.add_trace(
            go.Scatter(
                x=[float(np.min(alphas)), float(np.max(alphas))],
                y=[baseline_db, baseline_db],
                mode="lines",
                name="W8A8 without smoothing",
                line={"color": VERMILLION, "dash": "dash", "width": 2},
                hoverinfo="skip",
            )
        )
    if chosen_alpha is not None:
        chosen_db = float(np.interp(chosen_alpha, np.asarray(alphas), np.asarray(sqnr_db)))
        fig.add_trace(
            go.Scatter(
                x=[chosen_alpha],
                y=[chosen_db],
                mode="markers",
                name=f"Chosen α = {chosen_alpha:.2f}",
                marker={"color": ORANGE, "size": 16, "symbol": "star", "line": {"width": 1, "color": BLACK}},
            )
        )
    _layout(
        fig,
        "SmoothQuant: moving scale from activations to weights",
        "Migration strength α (0: none, 1: all onto the weights)",
        "Output SQNR (dB, higher is better)",
    )
    return fig


def model_size_figure(sizes_bytes: Mapping[str, float], *, model_label: str = "") -> go.Figure:
    """Size of one model in each format, in GB (10⁹ bytes), as horizontal bars."""
    names = list(sizes_bytes)
    gigabytes = [sizes_bytes[n] / 1e9 for n in names]
    fig = go.Figure(
        go.Bar(
            x=gigabytes,
            y=names,
            orientation="h",
            name="Weights in memory",
            marker={"color": GREEN},
            text=[f"{g:.1f} GB" for g in gigabytes],
            textposition="auto",
            hovertemplate="%{y}: %{x:.2f} GB<extra></extra>",
        )
    )
    title = f"Model size: {model_label}" if model_label else "Model size"
    _layout(fig, title, "Size (GB = 10⁹ bytes)", "")
    fig.update_yaxes(autorange="reversed")
    return fig
