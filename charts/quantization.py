"""Figures for the quantization simulator: pure builders, model output → plain Plotly figure dict.

Nothing here computes a quantization: the numbers come from ``simulators.quantization`` (histograms
are binned there, so a figure ships a few hundred numbers to the browser, not millions of values).
Fonts and colours come from charts/style.py (Okabe–Ito, charts/palette.py).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from charts.palette import OKABE_ITO
from charts.style import (
    BASE_FONT_PX,
    LABEL_BOX_BG,
    LABEL_BOX_TEXT,
    LABEL_FONT_PX,
    Spec,
    axis,
    decade_ticks,
    figure,
    floats,
    legend_name,
    title,
    wrap,
)
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
ROW_LABEL_CHARS = 22

#: Colour and legend name of each format family on the SQNR-vs-bits chart.
FAMILY_STYLE: dict[str, tuple[str, str, str]] = {
    "int": ("Integer formats (evenly spaced codes)", BLUE, "circle"),
    "float": ("Floating-point formats (FP16 … FP4)", ORANGE, "diamond"),
    "lut": ("NF4 (16 normal quantiles, lookup table)", GREEN, "square"),
}


def _layout(heading: str, x_title: str, y_title: str, detail: str = "", **extra: Any) -> dict[str, Any]:
    """This page's layout: title, axis titles and the chart height (the legend goes below)."""
    return {
        "title": title(heading, detail),
        "height": 500,
        "xaxis": axis(x_title),
        "yaxis": axis(y_title),
        **extra,
    }


def _bars(hist: Histogram, name: str, color: str) -> dict[str, Any]:
    return {
        "type": "bar",
        "x": floats(hist.centers),
        "y": [int(c) for c in np.asarray(hist.counts)],
        "width": float(hist.edges[1] - hist.edges[0]),
        "name": legend_name(name),
        "marker": {"color": color, "line": {"width": 0}},
        "hovertemplate": "%{x:.4g}: %{y:,} values<extra></extra>",
    }


def _log_counts(hist: Histogram) -> dict[str, Any]:
    """A log count axis with a labelled gridline at each power of ten (1, 10, 100, 1,000, 10k)."""
    counts = [float(c) for c in np.asarray(hist.counts) if c > 0] or [1.0]
    return decade_ticks(min(counts), max(counts), pad=0.15)


def value_histogram_figure(
    hist: Histogram,
    grid: np.ndarray | None = None,
    *,
    format_label: str = "",
    log_counts: bool = True,
    max_grid_lines: int = 400,
) -> Spec:
    """Histogram of the tensor's values with the format's representable values as vertical lines.

    ``grid`` is ``format_grid(fmt, scale)`` (already scaled). Only the grid values inside the
    histogram's range are drawn; more than ``max_grid_lines`` of them would be a solid block, so
    the figure says how many there are (in the legend) instead of drawing them.
    """
    data = [_bars(hist, "Values of the tensor (count per bin)", SKY)]
    low, high = float(hist.edges[0]), float(hist.edges[-1])
    if grid is not None:
        in_view = np.asarray(grid, dtype=np.float64)
        in_view = in_view[(in_view >= low) & (in_view <= high)]
        label = f"{format_label} representable values" if format_label else "Representable values"
        if 0 < in_view.size <= max_grid_lines:
            xs: list[float | None] = []
            ys: list[float | None] = []
            for value in in_view:
                xs += [float(value), float(value), None]
                ys += [0.0, 1.0, None]
            data.append(
                {
                    "type": "scatter",
                    "x": xs,
                    "y": ys,
                    "yaxis": "y2",
                    "mode": "lines",
                    "name": legend_name(f"{label} ({in_view.size} in view)"),
                    "line": {"color": VERMILLION, "width": 1},
                    "opacity": 0.6,
                    "hoverinfo": "skip",
                }
            )
        elif in_view.size > max_grid_lines:
            # Said in the legend, where it cannot cover the histogram.
            data.append(
                {
                    "type": "scatter",
                    "x": [None],
                    "y": [None],
                    "mode": "lines",
                    "name": legend_name(f"{label}: {in_view.size:,} in view, too dense to draw"),
                    "line": {"color": VERMILLION, "width": 1},
                    "hoverinfo": "skip",
                }
            )
    layout = _layout(
        "Values and the format's grid",
        "Value (tensor units)",
        "Count per bin",
        yaxis2={"overlaying": "y", "range": [0, 1], "visible": False, "fixedrange": True},
        bargap=0,
    )
    if log_counts:
        layout["yaxis"] |= _log_counts(hist)
    return figure(data, layout)


def error_histogram_figure(hist: Histogram, *, scheme_label: str = "", log_counts: bool = False) -> Spec:
    """Histogram of the quantization error (dequantized − original). Counts are linear by default:
    rounding error is near-uniform, and a log axis would blow its noise up; ``log_counts`` shows
    the rare large errors of clipping or saturation."""
    name = f"Error of {scheme_label} (count per bin)" if scheme_label else "Error (count per bin)"
    layout = _layout(
        "Quantization error", "Error: dequantized − original (tensor units)", "Count per bin", bargap=0
    )
    if log_counts:
        layout["yaxis"] |= _log_counts(hist)
    return figure([_bars(hist, name, PURPLE)], layout)


def sqnr_vs_bits_figure(
    results: Sequence[SchemeResult], *, theory: bool = True, frontier: bool = True
) -> Spec:
    """SQNR against effective bits per parameter for every scheme, one colour per format family,
    the Pareto frontier, and the 6.02 dB/bit line of a uniform quantizer on uniform data.

    Schemes with infinite SQNR (FP32 against an FP32 reference) cannot be placed and are named in a
    note inside the chart.
    """
    data: list[dict[str, Any]] = []
    finite = [r for r in results if math.isfinite(r.stats.sqnr_db)]
    exact = [r.scheme.label for r in results if not math.isfinite(r.stats.sqnr_db)]
    for family, (name, color, symbol) in FAMILY_STYLE.items():
        members = [r for r in finite if FORMATS[r.scheme.fmt].kind == family]
        if not members:
            continue
        data.append(
            {
                "type": "scatter",
                "x": [float(r.effective_bits) for r in members],
                "y": [float(r.stats.sqnr_db) for r in members],
                "mode": "markers",
                "name": legend_name(name),
                "marker": {
                    "color": color,
                    "symbol": symbol,
                    "size": 13,
                    "line": {"width": 1, "color": BLACK},
                },
                "text": [r.scheme.label for r in members],
                "hovertemplate": "%{text}<br>%{x:.3f} bits/param, %{y:.2f} dB<extra></extra>",
            }
        )
    bits = [float(r.effective_bits) for r in finite]
    if frontier and finite:
        front = pareto_frontier(bits, [r.stats.sqnr_db for r in finite])
        data.append(
            {
                "type": "scatter",
                "x": [float(finite[i].effective_bits) for i in front],
                "y": [float(finite[i].stats.sqnr_db) for i in front],
                "mode": "lines",
                "name": legend_name("Pareto frontier: most SQNR for the bits"),
                "line": {"color": BLACK, "width": 2},
                "hoverinfo": "skip",
            }
        )
    if theory:
        span = np.linspace(1.0, max([*bits, 8.0]), 50)
        data.append(
            {
                "type": "scatter",
                "x": floats(span),
                "y": floats(uniform_sqnr_theory_db(span)),
                "mode": "lines",
                "name": legend_name("6.02 dB per bit: uniform quantizer, uniform data"),
                "line": {"color": VERMILLION, "dash": "dash", "width": 2},
                "hoverinfo": "skip",
            }
        )
    annotations = []
    if exact:
        annotations.append(
            {
                "text": wrap("Exact (SQNR ∞, not drawn): " + ", ".join(exact), 34),
                "xref": "paper",
                "yref": "paper",
                "x": 1,
                "y": 0,
                "xanchor": "right",
                "yanchor": "bottom",
                "align": "right",
                "showarrow": False,
                "bgcolor": LABEL_BOX_BG,
                "font": {"color": LABEL_BOX_TEXT},
            }
        )
    layout = _layout(
        "Accuracy vs storage",
        "Effective bits per parameter (incl. scales and zero points)",
        "SQNR (dB, higher is better)",
        "Hover a point for its scheme",
        annotations=annotations,
    )
    layout["height"] = 560
    return figure(data, layout)


def per_channel_error_figure(
    channel_sqnr_db: Mapping[str, np.ndarray],
    channels: Sequence[int] | np.ndarray,
    *,
    outlier_channels: Sequence[int] | np.ndarray = (),
) -> Spec:
    """SQNR of each listed channel (bars grouped by scheme). Outlier channels are labelled on the
    axis. ``channel_sqnr_db`` maps a scheme label to ``per_channel_sqnr_db(...)`` over all channels;
    ``channels`` picks which to draw (a few dozen read well on a projector)."""
    picked = np.asarray(channels, dtype=int)
    outliers = {int(c) for c in np.asarray(outlier_channels, dtype=int)}
    labels = [f"{c} (outlier)" if c in outliers else str(c) for c in picked]
    data = [
        {
            "type": "bar",
            "x": labels,
            "y": floats(np.asarray(values, dtype=np.float64)[picked]),
            "name": legend_name(scheme),
            "marker": {"color": OKABE_ITO[index % len(OKABE_ITO)]},
            "hovertemplate": "channel %{x}: %{y:.1f} dB<extra>" + scheme + "</extra>",
        }
        for index, (scheme, values) in enumerate(channel_sqnr_db.items())
    ]
    layout = _layout(
        "Error per channel",
        "Channel",
        "SQNR of the channel (dB, higher is better)",
        "Outlier channels are named on the axis",
        barmode="group",
    )
    layout["xaxis"]["type"] = "category"
    return figure(data, layout)


def matmul_error_figure(
    results: Mapping[str, ErrorStats], descriptions: Mapping[str, str] | None = None
) -> Spec:
    """Output SQNR of y = x·wᵀ for each quantization scheme, as horizontal bars, each labelled
    with its value where it fits at a readable size."""
    names = list(results)
    labels = [wrap(descriptions.get(n, n) if descriptions else n, ROW_LABEL_CHARS) for n in names]
    values = [float(results[n].sqnr_db) for n in names]
    finite = [v for v in values if math.isfinite(v)] or [1.0]
    data = [
        {
            "type": "bar",
            "x": [v if math.isfinite(v) else None for v in values],
            "y": labels,
            "orientation": "h",
            "name": "Output SQNR of the matmul",
            "marker": {"color": BLUE},
            "text": [f"{v:.1f} dB" if math.isfinite(v) else "exact" for v in values],
            "textposition": "outside",
            "textfont": {"size": LABEL_FONT_PX},
            "cliponaxis": False,
            "hovertemplate": "%{y}: %{x:.2f} dB<extra></extra>",
        }
    ]
    layout = _layout(
        "Matmul error by scheme",
        "Output SQNR (dB, higher is better)",
        "Quantization scheme",
        "y = x·wᵀ with outlier activation channels",
        showlegend=False,
        uniformtext={"mode": "hide", "minsize": LABEL_FONT_PX - 1},
    )
    layout["height"] = 260 + 64 * len(names)
    # The long scheme names leave a narrow plot on a phone: wrap the x title to fit under it.
    layout["xaxis"]["title"]["text"] = wrap("Output SQNR (dB, higher is better)", 20)
    # Room right of the longest bar for its label on a phone-width plot.
    layout["xaxis"]["range"] = [min(0.0, min(finite)), max(finite) * 1.4]
    layout["yaxis"] |= {"autorange": "reversed", "type": "category"}
    return figure(data, layout)


def smoothquant_alpha_figure(
    alphas: Sequence[float] | np.ndarray,
    sqnr_db: Sequence[float] | np.ndarray,
    *,
    chosen_alpha: float | None = None,
    baseline_db: float | None = None,
) -> Spec:
    """W8A8 output SQNR against the SmoothQuant migration strength α, with the chosen α marked and
    (optionally) W8A8 without smoothing as a horizontal reference line."""
    alpha_values = np.asarray(alphas, dtype=np.float64)
    sqnr_values = np.asarray(sqnr_db, dtype=np.float64)
    data: list[dict[str, Any]] = [
        {
            "type": "scatter",
            "x": floats(alpha_values),
            "y": floats(sqnr_values),
            "mode": "lines+markers",
            "name": "W8A8 with SmoothQuant",
            "line": {"color": BLUE, "width": 3},
            "hovertemplate": "α = %{x:.2f}: %{y:.2f} dB<extra></extra>",
        }
    ]
    if baseline_db is not None:
        data.append(
            {
                "type": "scatter",
                "x": [float(np.min(alpha_values)), float(np.max(alpha_values))],
                "y": [float(baseline_db), float(baseline_db)],
                "mode": "lines",
                "name": "W8A8 without smoothing",
                "line": {"color": VERMILLION, "dash": "dash", "width": 2},
                "hoverinfo": "skip",
            }
        )
    if chosen_alpha is not None:
        chosen_db = float(np.interp(chosen_alpha, alpha_values, sqnr_values))
        data.append(
            {
                "type": "scatter",
                "x": [float(chosen_alpha)],
                "y": [chosen_db],
                "mode": "markers",
                "name": f"Chosen α = {chosen_alpha:.2f}: {chosen_db:.1f} dB",
                "marker": {
                    "color": ORANGE,
                    "size": 16,
                    "symbol": "star",
                    "line": {"width": 1, "color": BLACK},
                },
                "hovertemplate": "α = %{x:.2f}: %{y:.2f} dB<extra>chosen</extra>",
            }
        )
    return figure(
        data,
        _layout(
            "SmoothQuant: moving scale from activations to weights",
            "Migration strength α (0: none, 1: all onto the weights)",
            "Output SQNR (dB, higher is better)",
        ),
    )


def model_size_figure(sizes_bytes: Mapping[str, float], *, model_label: str = "") -> Spec:
    """Size of one model in each format, in GB (10⁹ bytes), as horizontal bars.

    Every bar carries its size, outside the bar at a fixed readable size (the bars are tall
    enough for it); Plotly hides a label rather than shrink it.
    """
    names = list(sizes_bytes)
    gigabytes = [float(sizes_bytes[n]) / 1e9 for n in names]
    data = [
        {
            "type": "bar",
            "x": gigabytes,
            "y": [wrap(n, ROW_LABEL_CHARS) for n in names],
            "orientation": "h",
            "name": "Weights in memory",
            "marker": {"color": GREEN},
            "text": [f"{g:.1f} GB" for g in gigabytes],
            "textposition": "outside",
            "textfont": {"size": LABEL_FONT_PX},
            "cliponaxis": False,
            "hovertemplate": "%{y}: %{x:.2f} GB<extra></extra>",
        }
    ]
    layout = _layout(
        f"Model size: {model_label}" if model_label else "Model size",
        "Size (GB = 10⁹ bytes)",
        "Format",
        "Weights only; hover a bar for its exact size",
        showlegend=False,
        bargap=0.3,
        uniformtext={"mode": "hide", "minsize": LABEL_FONT_PX - 1},
    )
    layout["height"] = 240 + 40 * len(names)
    layout["xaxis"]["range"] = [0, max([*gigabytes, 1e-9]) * 1.4]  # room for the longest bar's label
    layout["yaxis"] |= {"autorange": "reversed", "type": "category"}
    return figure(data, layout)
