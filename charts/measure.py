"""Charts of measured results: bandwidth against working set, all-reduce against the ring model,
and live GPU telemetry. Inputs are the plain JSON records that ``python -m measure`` writes; the
output is a plain Plotly figure dict (charts/style.py)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from charts.palette import OKABE_ITO
from charts.style import (
    LABEL_FONT_PX,
    Spec,
    axis,
    decade_ticks,
    figure,
    legend_name,
    positive,
    title,
)
from simulators.units import binary_bytes, si

LAUNCH_BOUND_NOTE = "launch-bound: the time of one call's overhead, not cache bandwidth"


def _bytes_label(value: float) -> str:
    return si(value, "B")


def bandwidth_figure(records: Sequence[Mapping[str, Any]], caches: Sequence[Mapping[str, Any]] = ()) -> Spec:
    """Measured GB/s against working-set size (log-log), one line per op, cache sizes as lines.

    Bytes follow the STREAM convention (copy 2, triad 3 words per element; write-allocate
    traffic not counted). Dashed vertical lines mark each data/unified cache's size (binary
    units, as caches are sized), where the curve's knees should be. Records with a true
    ``launch_bound`` are drawn with open markers: their working set is so small that the time
    measured is the call overhead, so their GB/s says nothing about the cache.
    """
    data: list[dict[str, Any]] = []
    points_all = [r for r in records if r.get("kind") == "bandwidth"]
    ops = sorted({str(r.get("op")) for r in points_all})
    any_launch_bound = False
    for i, op in enumerate(ops):
        points = sorted((r for r in points_all if str(r.get("op")) == op), key=lambda r: r["bytes"])
        colour = OKABE_ITO[i % len(OKABE_ITO)]
        bound = [bool(r.get("launch_bound")) for r in points]
        any_launch_bound |= any(bound)
        data.append(
            {
                "type": "scatter",
                "x": [float(r["bytes"]) for r in points],
                "y": [float(r["gb_per_s"]) for r in points],
                "mode": "lines+markers",
                "name": legend_name(f"{op}: measured median (GB/s)"),
                "line": {"color": colour, "width": 2.5},
                "marker": {
                    "size": 9,
                    "color": colour,
                    "symbol": ["circle-open" if b else "circle" for b in bound],
                    "line": {"width": 2, "color": colour},
                },
                "customdata": [
                    [
                        _bytes_label(r["bytes"]),
                        str(r.get("cache_hint", "")),
                        " — " + LAUNCH_BOUND_NOTE if b else "",
                    ]
                    for r, b in zip(points, bound, strict=True)
                ],
                "hovertemplate": "%{customdata[0]} working set: %{y:,.1f} GB/s (%{customdata[1]})"
                "%{customdata[2]}<extra>" + op + "</extra>",
            }
        )
    if any_launch_bound:
        data.append(
            {
                "type": "scatter",
                "x": [None],
                "y": [None],
                "mode": "markers",
                "name": legend_name("Open marker: " + LAUNCH_BOUND_NOTE),
                "marker": {"size": 9, "symbol": "circle-open", "color": "#777777", "line": {"width": 2}},
                "hoverinfo": "skip",
            }
        )
    shown_caches = [c for c in caches if c.get("type") != "Instruction" and c.get("size_bytes")]
    if shown_caches:
        # Vertical lines on a hidden 0..1 axis: x stays in data units on the log axis.
        xs: list[float | None] = []
        ys: list[float | None] = []
        for cache in shown_caches:
            xs += [float(cache["size_bytes"])] * 2 + [None]
            ys += [0.0, 1.0, None]
        data.append(
            {
                "type": "scatter",
                "x": xs,
                "y": ys,
                "yaxis": "y2",
                "mode": "lines",
                "name": "Cache sizes (binary: KiB, MiB)",
                "line": {"color": "#888888", "dash": "dash", "width": 1.5},
                "hoverinfo": "skip",
            }
        )
        data.append(
            {
                "type": "scatter",
                "x": [float(c["size_bytes"]) for c in shown_caches],
                "y": [0.02 + 0.07 * (i % 2) for i in range(len(shown_caches))],
                "yaxis": "y2",
                "mode": "text",
                "text": [f"L{c['level']} {binary_bytes(c['size_bytes'])}" for c in shown_caches],
                "textposition": "middle left",
                "textfont": {"size": LABEL_FONT_PX, "color": "#555555"},
                "showlegend": False,
                "hoverinfo": "skip",
            }
        )
    sizes = positive(r["bytes"] for r in points_all) or [1.0, 1e9]
    speeds = positive(r["gb_per_s"] for r in points_all) or [1.0, 100.0]
    layout = {
        "title": title(
            "Memory bandwidth against working-set size", "STREAM byte counting; median of repeats"
        ),
        "xaxis": axis(
            "Working set (bytes, decimal prefixes)", **decade_ticks(min(sizes), max(sizes), _bytes_label)
        ),
        "yaxis": axis("Bandwidth (GB/s = 10⁹ B/s)", **decade_ticks(min(speeds), max(speeds))),
        "yaxis2": {"overlaying": "y", "range": [0, 1], "visible": False, "fixedrange": True},
        "height": 540,
    }
    return figure(data, layout)


def allreduce_figure(records: Sequence[Mapping[str, Any]]) -> Spec:
    """All-reduce time against message size: measured median and the ring model's prediction."""
    points = sorted((r for r in records if r.get("kind") == "allreduce"), key=lambda r: r["bytes"])
    data: list[dict[str, Any]] = []
    detail = ""
    if points:
        ranks = points[0].get("world_size", "?")
        backend = points[0].get("backend", "")
        detail = f"{backend}, {ranks} ranks" if backend else f"{ranks} ranks"
        data.append(
            {
                "type": "scatter",
                "x": [float(r["bytes"]) for r in points],
                "y": [float(r["median_s"]) for r in points],
                "mode": "lines+markers",
                "name": legend_name(f"measured median ({detail})"),
                "marker": {"size": 10, "color": OKABE_ITO[0]},
                "line": {"color": OKABE_ITO[0], "width": 2.5},
                "customdata": [
                    [si(r["bytes"], "B"), si(r["median_s"], "s"), float(r.get("busbw_gb_per_s") or 0.0)]
                    for r in points
                ],
                "hovertemplate": "%{customdata[0]}: %{customdata[1]}, busbw %{customdata[2]:.2f} GB/s"
                "<extra></extra>",
            }
        )
        predicted = [r for r in points if r.get("predicted_s")]
        if predicted:
            data.append(
                {
                    "type": "scatter",
                    "x": [float(r["bytes"]) for r in predicted],
                    "y": [float(r["predicted_s"]) for r in predicted],
                    "mode": "lines",
                    "name": legend_name("ring model: overhead + 2(n−1)/n × size ÷ link bandwidth"),
                    "line": {"dash": "dash", "color": OKABE_ITO[5], "width": 2.5},
                    "customdata": [[si(r["bytes"], "B"), si(r["predicted_s"], "s")] for r in predicted],
                    "hovertemplate": "%{customdata[0]}: predicted %{customdata[1]}<extra></extra>",
                }
            )
    sizes = positive(r["bytes"] for r in points) or [1e3, 1e9]
    times = positive([r["median_s"] for r in points] + [r.get("predicted_s") for r in points]) or [1e-6, 1.0]
    layout = {
        "title": title("All-reduce: measured vs the ring model", detail),
        "xaxis": axis(
            "Message size per rank (bytes, decimal prefixes)",
            **decade_ticks(min(sizes), max(sizes), _bytes_label),
        ),
        "yaxis": axis(
            "Time per all-reduce (s, log)", **decade_ticks(min(times), max(times), lambda v: si(v, "s"))
        ),
        "height": 500,
    }
    return figure(data, layout)


TELEMETRY_PANELS = (
    ("gpu_util_percent", "GPU util (%)"),
    ("memory_used_bytes", "Memory (GB)"),
    ("power_draw_w", "Power (W)"),
    ("temperature_c", "Temp (°C)"),
    ("sm_clock_mhz", "SM clock (MHz)"),
)


def telemetry_figure(samples: Sequence[Mapping[str, Any]]) -> Spec:
    """Rolling NVML readings, one small panel per quantity (stacked y domains over one time
    axis), time in seconds before the newest reading."""
    rows = len(TELEMETRY_PANELS)
    gap = 0.035
    height_each = (1 - gap * (rows - 1)) / rows
    data: list[dict[str, Any]] = []
    layout: dict[str, Any] = {
        "title": title("Live GPU telemetry", "NVML, about once a second"),
        "height": 880,
        "showlegend": False,
    }
    xs: list[float] = []
    if samples:
        now = float(samples[-1]["timestamp_s"])
        xs = [float(s["timestamp_s"]) - now for s in samples]
    for row, (key, label) in enumerate(TELEMETRY_PANELS):
        name = "y" if row == 0 else f"y{row + 1}"
        top = 1 - row * (height_each + gap)
        panel_axis = axis(label, domain=[top - height_each, top], anchor="x")
        panel_axis["title"]["font"] = {"size": 13}  # five panels share the height: smaller titles
        layout["yaxis" if row == 0 else f"yaxis{row + 1}"] = panel_axis
        scale = 1e-9 if key == "memory_used_bytes" else 1.0
        data.append(
            {
                "type": "scatter",
                "x": xs,
                "y": [float(s[key]) * scale if s.get(key) is not None else None for s in samples],
                "xaxis": "x",
                "yaxis": name,
                "mode": "lines",
                "name": label,
                "line": {"color": OKABE_ITO[row % len(OKABE_ITO)], "width": 2},
                "hovertemplate": "%{x:.0f} s: %{y:,.1f}<extra>" + label + "</extra>",
            }
        )
    layout["xaxis"] = axis("Seconds before now", anchor=f"y{rows}")
    return figure(data, layout)
