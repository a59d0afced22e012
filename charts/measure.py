"""Charts of measured results: bandwidth against working set, all-reduce against the ring model,
and live GPU telemetry. Inputs are the plain JSON records that ``python -m measure`` writes."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import plotly.graph_objects as go
from plotly.subplots import make_subplots

from charts.palette import OKABE_ITO
from charts.style import apply_style
from simulators.units import si


def bandwidth_figure(
    records: Sequence[Mapping[str, Any]], caches: Sequence[Mapping[str, Any]] = ()
) -> go.Figure:
    """Measured GB/s against working-set size (log-log), one line per op, cache sizes as lines.

    Bytes follow the STREAM convention (copy 2, triad 3 words per element; write-allocate
    traffic not counted). Dashed vertical lines mark each data/unified cache's size, where the
    curve's knees should be.
    """
    fig = go.Figure()
    ops = sorted({str(r.get("op")) for r in records if r.get("kind") == "bandwidth"})
    for i, op in enumerate(ops):
        points = sorted(
            (r for r in records if r.get("kind") == "bandwidth" and r.get("op") == op),
            key=lambda r: r["bytes"],
        )
        fig.add_scatter(
            x=[r["bytes"] for r in points],
            y=[r["gb_per_s"] for r in points],
            mode="lines+markers",
            name=f"{op}: measured median (GB/s)",
            marker={"size": 9, "color": OKABE_ITO[i % len(OKABE_ITO)]},
            line={"color": OKABE_ITO[i % len(OKABE_ITO)]},
            customdata=[[si(r["bytes"], "B"), r.get("cache_hint", "")] for r in points],
            hovertemplate="%{customdata[0]} working set: %{y:,.1f} GB/s (%{customdata[1]})<extra>"
            + op
            + "</extra>",
        )
    for cache in caches:
        if cache.get("type") == "Instruction" or not cache.get("size_bytes"):
            continue
        fig.add_vline(
            x=cache["size_bytes"],
            line={"dash": "dash", "color": "#999999"},
            annotation_text=f"L{cache['level']} {si(cache['size_bytes'], 'B')}",
            annotation_position="bottom right",
        )
    fig.update_xaxes(type="log", title_text="Working set (bytes, log scale)")
    fig.update_yaxes(type="log", title_text="Bandwidth (GB/s = 10⁹ B/s, log scale)")
    fig.update_layout(
        title="Memory bandwidth against working-set size", legend={"orientation": "h", "y": -0.25}, height=520
    )
    return apply_style(fig)


def allreduce_figure(records: Sequence[Mapping[str, Any]]) -> go.Figure:
    """All-reduce time against message size: measured median and the ring model's prediction."""
    points = sorted((r for r in records if r.get("kind") == "allreduce"), key=lambda r: r["bytes"])
    fig = go.Figure()
    if points:
        ranks = points[0].get("world_size", "?")
        fig.add_scatter(
            x=[r["bytes"] for r in points],
            y=[r["median_s"] for r in points],
            mode="lines+markers",
            name=f"measured median ({points[0].get('backend', '')}, {ranks} ranks)",
            marker={"size": 10, "color": OKABE_ITO[0]},
            customdata=[[r.get("busbw_gb_per_s", 0)] for r in points],
            hovertemplate="%{x:.3s}B: %{y:.3s}s, busbw %{customdata[0]:.2f} GB/s<extra></extra>",
        )
        predicted = [r for r in points if r.get("predicted_s")]
        if predicted:
            fig.add_scatter(
                x=[r["bytes"] for r in predicted],
                y=[r["predicted_s"] for r in predicted],
                mode="lines",
                name="ring model: overhead + 2(n−1)/n × size ÷ link bandwidth",
                line={"dash": "dash", "color": OKABE_ITO[5]},
                hovertemplate="%{x:.3s}B: predicted %{y:.3s}s<extra></extra>",
            )
    fig.update_xaxes(type="log", title_text="Message size per rank (bytes, log scale)")
    fig.update_yaxes(type="log", title_text="Time per all-reduce (s, log scale)")
    fig.update_layout(
        title="All-reduce: measured vs the ring model", legend={"orientation": "h", "y": -0.25}, height=480
    )
    return apply_style(fig)


TELEMETRY_PANELS = (
    ("gpu_util_percent", "GPU utilization (%)"),
    ("memory_used_bytes", "Memory used (GB)"),
    ("power_draw_w", "Power (W)"),
    ("temperature_c", "Temperature (°C)"),
    ("sm_clock_mhz", "SM clock (MHz)"),
)


def telemetry_figure(samples: Sequence[Mapping[str, Any]]) -> go.Figure:
    """Rolling NVML readings, one small panel per quantity, time in seconds before now."""
    fig = make_subplots(rows=len(TELEMETRY_PANELS), cols=1, shared_xaxes=True, vertical_spacing=0.04)
    if samples:
        now = samples[-1]["timestamp_s"]
        xs = [s["timestamp_s"] - now for s in samples]
        for row, (key, label) in enumerate(TELEMETRY_PANELS, start=1):
            scale = 1e-9 if key == "memory_used_bytes" else 1
            ys = [s.get(key) * scale if s.get(key) is not None else None for s in samples]
            fig.add_scatter(
                x=xs,
                y=ys,
                mode="lines",
                name=label,
                line={"color": OKABE_ITO[(row - 1) % len(OKABE_ITO)]},
                row=row,
                col=1,
            )
            fig.update_yaxes(title_text=label, row=row, col=1, title_font={"size": 13})
    fig.update_xaxes(title_text="Seconds before now", row=len(TELEMETRY_PANELS), col=1)
    fig.update_layout(height=900, showlegend=False, title="Live GPU telemetry (NVML, about once a second)")
    return apply_style(fig)
