"""Plotly figures for the memory-hierarchy page: ladder, transfer time, Little's law, placement.

Pure builders: model records in, ``go.Figure`` out, nothing else (no Streamlit). Latencies are
shown in ns and bandwidths in GB/s (decimal, 10^9 bytes/s); the model keeps seconds and bytes/s.
Every builder that shows a measurable quantity takes optional ``MeasuredPoint`` records so a
measurement can be drawn beside the published values.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from charts.palette import OKABE_ITO
from charts.style import BASE_FONT_PX, apply_style
from simulators.hierarchy import (
    LEVELS,
    ON_DEVICE_LEVELS,
    HardwareFamily,
    MeasuredPoint,
    MemoryLevel,
    ModelPlacement,
    crossover_bytes,
    transfer_time_s,
    warps_in_flight,
)
from simulators.units import si

FONT_SIZE = BASE_FONT_PX
TITLE_SIZE = 20
MEASURED_COLOR = "#000000"
_GB = 1e9
_NS = 1e-9


def _color(index: int) -> str:
    return OKABE_ITO[index % len(OKABE_ITO)]


def _decade_ticks(values: Sequence[float], unit: str) -> dict:
    """Tick values at every power of ten spanning ``values``, labelled "1 ns", "10 GB/s", ..."""
    positive = [v for v in values if v > 0]
    low = int(np.floor(np.log10(min(positive))))
    high = int(np.ceil(np.log10(max(positive))))
    ticks = [10.0**k for k in range(low, high + 1)]
    return {
        "tickvals": ticks,
        "ticktext": [si(t, unit) for t in ticks],
        "range": [low - 0.15, high + 0.15],
    }


def _layout(fig: go.Figure, title: str, height: int = 560) -> go.Figure:
    """The shared chart style, plus a larger title, the legend under the plot and the height."""
    apply_style(fig)
    fig.update_layout(
        title={"text": title, "font": {"size": TITLE_SIZE}},
        legend={"orientation": "h", "yanchor": "top", "y": -0.3, "x": 0},
        height=height,
        margin={"l": 90, "r": 30, "t": 90, "b": 40},
    )
    return fig


def _category_order(families: Sequence[HardwareFamily], allowed: Sequence[str] | None = None) -> list[str]:
    present = {lv.level for fam in families for lv in fam.levels}
    return [LEVELS[level] for level in LEVELS if level in present and (allowed is None or level in allowed)]


# ---------------------------------------------------------------------------------------------
# The ladder
# ---------------------------------------------------------------------------------------------


def ladder_figure(
    families: Sequence[HardwareFamily], measured: Sequence[MeasuredPoint] = (), *, title: str | None = None
) -> go.Figure:
    """Latency (left) and bandwidth (right) per level on log axes, one colour per family.

    Latency: dot at the midpoint, error bar over the range the published microbenchmarks span.
    Bandwidth: the whole device (per-SM L1 figures times the SM count), one direction. Levels
    without a sourced value are simply absent for that family. Measured points with a
    ``level`` and ``seconds`` land on the latency panel, with ``bytes_per_s`` on the bandwidth one.
    """
    if not families:
        raise ValueError("the ladder needs at least one family")
    fig = make_subplots(
        rows=1,
        cols=2,
        subplot_titles=("Latency of one access", "Bandwidth of the whole device"),
        horizontal_spacing=0.17,
    )
    latencies: list[float] = []
    bandwidths: list[float] = []
    for index, fam in enumerate(families):
        color = _color(index)
        with_latency = [lv for lv in fam.levels if lv.has_latency]
        if with_latency:
            mids = [lv.latency_s("mid") for lv in with_latency]
            lows = [lv.latency_s("min") for lv in with_latency]
            highs = [lv.latency_s("max") for lv in with_latency]
            latencies += lows + highs
            fig.add_trace(
                go.Scatter(
                    x=[LEVELS[lv.level] for lv in with_latency],
                    y=mids,
                    mode="markers",
                    marker={"size": 13, "color": color, "symbol": "circle"},
                    error_y={
                        "type": "data",
                        "array": [h - m for h, m in zip(highs, mids, strict=True)],
                        "arrayminus": [m - lo for lo, m in zip(lows, mids, strict=True)],
                        "thickness": 2.5,
                        "width": 8,
                        "color": color,
                    },
                    name=f"{fam.name}: latency (dot = midpoint, bar = range of published benchmarks)",
                    legendgroup=fam.id,
                    offsetgroup=fam.id,
                    customdata=[
                        [lv.name, si(lo, "s"), si(h, "s")]
                        for lv, lo, h in zip(with_latency, lows, highs, strict=True)
                    ],
                    hovertemplate="%{customdata[0]}: %{customdata[1]} to %{customdata[2]}<extra>"
                    + fam.name
                    + "</extra>",
                ),
                row=1,
                col=1,
            )
        with_bandwidth = [lv for lv in fam.levels if lv.bandwidth_per_device_bytes_per_s is not None]
        if with_bandwidth:
            values = [lv.bandwidth_per_device_bytes_per_s for lv in with_bandwidth]
            bandwidths += values
            fig.add_trace(
                go.Scatter(
                    x=[LEVELS[lv.level] for lv in with_bandwidth],
                    y=values,
                    mode="markers",
                    marker={"size": 13, "color": color, "symbol": "square"},
                    name=f"{fam.name}: bandwidth (whole device, one direction)",
                    legendgroup=fam.id,
                    offsetgroup=fam.id,
                    customdata=[
                        [lv.name, si(v, "B/s"), lv.bandwidth_kind]
                        for lv, v in zip(with_bandwidth, values, strict=True)
                    ],
                    hovertemplate="%{customdata[0]}: %{customdata[1]} (%{customdata[2]})<extra>"
                    + fam.name
                    + "</extra>",
                ),
                row=1,
                col=2,
            )
    for point in measured:
        if point.level is None:
            continue
        for value, col, values in ((point.seconds, 1, latencies), (point.bytes_per_s, 2, bandwidths)):
            if value is None:
                continue
            values.append(value)
            fig.add_trace(
                go.Scatter(
                    x=[LEVELS.get(point.level, point.level)],
                    y=[value],
                    mode="markers",
                    marker={"size": 16, "color": MEASURED_COLOR, "symbol": "x"},
                    name=f"Measured: {point.label}",
                    hovertemplate=f"{point.label}: {si(value, 's' if col == 1 else 'B/s')}<extra></extra>",
                ),
                row=1,
                col=col,
            )
    present = [level for level in LEVELS if any(fam.has_level(level) for fam in families)]
    order = [LEVELS[level] for level in present]
    fig.update_xaxes(categoryorder="array", categoryarray=order, title_text="Memory level", tickangle=-40)
    latency_axis = {"type": "log", "title_text": "Latency (log scale)"}
    if latencies:
        latency_axis |= _decade_ticks(latencies, "s")
    bandwidth_axis = {"type": "log", "title_text": "Bandwidth, bytes per second (log scale)"}
    if bandwidths:
        bandwidth_axis |= _decade_ticks(bandwidths, "B/s")
    fig.update_yaxes(row=1, col=1, **latency_axis)
    fig.update_yaxes(row=1, col=2, **bandwidth_axis)
    fig.update_layout(scattermode="group")
    fig = _layout(fig, title or "Memory ladder: latency and bandwidth per level", height=760)
    fig.update_layout(legend={"y": -0.42})
    return fig


# ---------------------------------------------------------------------------------------------
# Time to move N bytes
# ---------------------------------------------------------------------------------------------


def transfer_time_figure(
    levels: Sequence[MemoryLevel],
    measured: Sequence[MeasuredPoint] = (),
    *,
    min_bytes: float = 1.0,
    max_bytes: float = 1e10,
    points: int = 241,
    title: str | None = None,
) -> go.Figure:
    """Time = latency + N / bandwidth for N from ``min_bytes`` to ``max_bytes`` (log-log).

    Each level with both a latency and a bandwidth is one colour: dotted where latency dominates
    (N below latency × bandwidth, the flat part), solid where bandwidth dominates (the 45° part),
    a diamond at the crossover where the two terms are equal. Measured points need ``nbytes``
    and ``seconds``.
    """
    if not (0 < min_bytes < max_bytes):
        raise ValueError("need 0 < min_bytes < max_bytes")
    usable = [lv for lv in levels if lv.has_latency and lv.bandwidth_per_device_bytes_per_s is not None]
    if not usable:
        raise ValueError("no level has both a latency and a bandwidth")
    several_families = len({lv.family for lv in usable}) > 1
    sizes = np.logspace(np.log10(min_bytes), np.log10(max_bytes), points)
    fig = go.Figure()
    all_times: list[float] = []
    cross_x, cross_y, cross_color, cross_text = [], [], [], []
    for index, lv in enumerate(usable):
        color = _color(index)
        crossover = crossover_bytes(lv)
        label = f"{lv.name} ({lv.family})" if several_families else lv.name
        x_lat = sizes[sizes < crossover]
        x_bw = sizes[sizes > crossover]
        if min_bytes < crossover < max_bytes:  # join both pieces at the crossover, no gap
            x_lat = np.append(x_lat, crossover)
            x_bw = np.insert(x_bw, 0, crossover)
        pieces = [(x_bw, "solid", True), (x_lat, "dot", not x_bw.size)]
        for xs, dash, in_legend in pieces:
            if not xs.size:
                continue
            ys = [transfer_time_s(lv, float(n)) for n in xs]
            all_times += ys
            fig.add_trace(
                go.Scatter(
                    x=xs,
                    y=ys,
                    mode="lines",
                    line={"color": color, "width": 3.5, "dash": dash},
                    name=label,
                    showlegend=in_legend,
                    legendgroup=f"{lv.family}/{lv.level}",
                    customdata=[[si(float(n), "B"), si(t, "s")] for n, t in zip(xs, ys, strict=True)],
                    hovertemplate="%{customdata[0]} in %{customdata[1]}<extra>" + label + "</extra>",
                )
            )
        if min_bytes <= crossover <= max_bytes:
            cross_x.append(crossover)
            cross_y.append(transfer_time_s(lv, crossover))
            cross_color.append(color)
            cross_text.append(f"{label}: {si(crossover, 'B')} in {si(cross_y[-1], 's')}")
    if cross_x:
        fig.add_trace(
            go.Scatter(
                x=cross_x,
                y=cross_y,
                mode="markers",
                marker={
                    "symbol": "diamond",
                    "size": 15,
                    "color": cross_color,
                    "line": {"width": 1.5, "color": "#000"},
                },
                name="Crossover: latency = N ÷ bandwidth (time = 2 × latency)",
                text=cross_text,
                hovertemplate="%{text}<extra>crossover</extra>",
            )
        )
    for dash, text in (("dot", "Dotted: latency dominates"), ("solid", "Solid: bandwidth dominates")):
        fig.add_trace(
            go.Scatter(
                x=[None],
                y=[None],
                mode="lines",
                line={"color": "#777777", "width": 3.5, "dash": dash},
                name=text,
                hoverinfo="skip",
            )
        )
    for point in measured:
        if point.nbytes is None or point.seconds is None:
            continue
        all_times.append(point.seconds)
        fig.add_trace(
            go.Scatter(
                x=[point.nbytes],
                y=[point.seconds],
                mode="markers",
                marker={"size": 16, "color": MEASURED_COLOR, "symbol": "x"},
                name=f"Measured: {point.label}",
                hovertemplate=f"{point.label}: {si(point.nbytes, 'B')} in {si(point.seconds, 's')}"
                "<extra></extra>",
            )
        )
    fig.update_xaxes(
        type="log",
        title_text="Transfer size N (bytes, log scale)",
        **_decade_ticks([min_bytes, max_bytes], "B"),
    )
    fig.update_yaxes(
        type="log", title_text="Time = latency + N ÷ bandwidth (log scale)", **_decade_ticks(all_times, "s")
    )
    return _layout(fig, title or "Time to move N bytes from each level", height=680)


# ---------------------------------------------------------------------------------------------
# Little's law
# ---------------------------------------------------------------------------------------------


def littles_law_figure(
    families: Sequence[HardwareFamily],
    bytes_per_thread: float = 4,
    threads_per_warp: int = 32,
    levels: Sequence[str] = ON_DEVICE_LEVELS,
) -> go.Figure:
    """Warps per SM that must each have one load in flight to keep a level busy (grouped bars).

    warps = latency × bandwidth per SM ÷ (bytes_per_thread × threads_per_warp), Little's law.
    A dashed line marks the most warps one SM can hold; bars above it mean full occupancy alone
    is not enough — each warp needs several loads in flight, or wider loads.
    """
    if not families:
        raise ValueError("the chart needs at least one family")
    fig = go.Figure()
    shown: set[str] = set()
    limits: dict[int, list[str]] = {}
    for index, fam in enumerate(families):
        usable = [
            lv
            for lv in fam.levels
            if lv.level in levels and lv.has_latency and lv.bandwidth_per_sm_bytes_per_s is not None
        ]
        if not usable:
            continue
        shown |= {lv.level for lv in usable}
        warps = [warps_in_flight(lv, bytes_per_thread, threads_per_warp, per_sm=True) for lv in usable]
        fig.add_trace(
            go.Bar(
                x=[LEVELS[lv.level] for lv in usable],
                y=warps,
                marker={"color": _color(index)},
                name=f"{fam.name}: warps in flight needed per SM",
                text=[f"{w:.0f}" for w in warps],
                textposition="outside",
                textfont={"size": FONT_SIZE},
                offsetgroup=fam.id,
                hovertemplate="%{x}: %{y:.1f} warps per SM<extra>" + fam.name + "</extra>",
            )
        )
        if fam.max_warps_per_sm is not None:
            limits.setdefault(fam.max_warps_per_sm, []).append(fam.name)
    for limit, names in sorted(limits.items()):
        fig.add_hline(
            y=limit,
            line={"color": "#000000", "width": 2.5, "dash": "dash"},
            annotation_text=f"{limit} = most warps one SM can hold ({', '.join(names)})",
            annotation_position="top left",
            annotation_font={"size": FONT_SIZE},
        )
    order = [LEVELS[level] for level in LEVELS if level in shown]
    fig.update_xaxes(categoryorder="array", categoryarray=order, title_text="Memory level")
    fig.update_yaxes(
        title_text=f"Warps per SM ({bytes_per_thread:g}-byte load per thread)", rangemode="tozero"
    )
    fig.update_layout(barmode="group")
    return _layout(
        fig, "Little's law: bytes in flight = latency × bandwidth, shown as warps per SM", height=620
    )


# ---------------------------------------------------------------------------------------------
# Where does my model live
# ---------------------------------------------------------------------------------------------


def placement_figure(placement: ModelPlacement, *, family_name: str | None = None) -> go.Figure:
    """Stacked horizontal bars: weights and KV cache on device memory and in host memory (GB)."""
    fig = go.Figure()
    rows = placement.placements
    names = [p.name for p in rows]
    for index, (part, attr) in enumerate((("Weights", "weight_bytes"), ("KV cache", "kv_bytes"))):
        fig.add_trace(
            go.Bar(
                y=names,
                x=[getattr(p, attr) / _GB for p in rows],
                orientation="h",
                name=f"{part} (GB)",
                marker={"color": _color(index)},
                hovertemplate="%{y}: %{x:,.1f} GB<extra>" + part + "</extra>",
            )
        )
    fig.add_trace(
        go.Scatter(
            x=[placement.usable_device_bytes / _GB] * 2,
            y=[names[0], names[0]],
            mode="markers",
            marker={"symbol": "line-ns", "size": 40, "line": {"width": 4, "color": "#000000"}},
            name="Usable device memory (GB)",
            hovertemplate="usable: %{x:,.1f} GB<extra></extra>",
        )
    )
    fig.update_xaxes(title_text="Bytes held (GB, 10^9 bytes)")
    fig.update_yaxes(title_text="Level", autorange="reversed")
    fig.update_layout(barmode="stack")
    per_token = placement.time_per_token_s
    if per_token == float("inf"):
        cost = "does not fit, and there is no host link to stream the rest"
    else:
        cost = f"{per_token * 1e3:,.1f} ms per token at batch 1"
    title = f"Where the model lives on {family_name or placement.family}: {cost}"
    return _layout(fig, title, height=420)
