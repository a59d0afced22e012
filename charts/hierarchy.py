"""Figures for the memory-hierarchy page: ladder, transfer time, Little's law, placement, and a
measured latency sweep against the published levels.

Pure builders: model records in, a plain Plotly figure dict out (charts/style.py), no Streamlit,
no plotly import. Latencies are shown in ns and bandwidths in B/s with SI prefixes (decimal); the
model keeps seconds and bytes/s. Cache and working-set sizes use binary prefixes (KiB, MiB), as
caches are sized. Every builder that shows a measurable quantity takes optional ``MeasuredPoint``
records so a measurement can be drawn beside the published values.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from charts.palette import OKABE_ITO
from charts.style import (
    LABEL_FONT_PX,
    Spec,
    axis,
    decade_ticks,
    figure,
    floats,
    legend_name,
    positive,
    wrap,
)
from charts.style import title as chart_title
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
from simulators.units import binary_bytes, si

MEASURED_COLOR = "#000000"
# Black marks keep a thin white edge, so they still show in Streamlit's dark theme (on a white
# background the edge disappears).
HALO_EDGE = {"color": "white", "width": 1.2}
USABLE_COLOR = OKABE_ITO[5]  # vermillion, as the capacity line on Will it fit?
_GB = 1e9
CATEGORY_CHARS = 12  # level names on a category axis wrap at this width
# Levels a pointer chase through global memory walks: registers are not addressable and shared
# memory is a separate, explicitly managed space.
CHASED_LEVELS = ("l1", "l2", "l2-far", "device-memory", "host-memory")


def _color(index: int) -> str:
    return OKABE_ITO[index % len(OKABE_ITO)]


def si_ticks(values: Sequence[float], unit: str) -> dict[str, Any]:
    """Log-axis ticks at every power of ten spanning ``values``, labelled "1 ns", "10 GB/s", ..."""
    found = positive(values)
    return decade_ticks(min(found), max(found), lambda v: si(v, unit), pad=0.15)


def _level_label(level_id: str) -> str:
    return wrap(LEVELS.get(level_id, level_id), CATEGORY_CHARS)


# ---------------------------------------------------------------------------------------------
# The ladder
# ---------------------------------------------------------------------------------------------


def ladder_figure(
    families: Sequence[HardwareFamily], measured: Sequence[MeasuredPoint] = (), *, title: str | None = None
) -> Spec:
    """Latency (top panel) and bandwidth (bottom panel) per level on log axes, one colour per family.

    Latency: dot at the midpoint, error bar over the range the published microbenchmarks span.
    Bandwidth: the whole device (per-SM L1 figures times the SM count), one direction. Levels
    without a sourced value are simply absent for that family. Measured points with a ``level``
    and ``seconds`` land on the latency panel, with ``bytes_per_s`` on the bandwidth one. The two
    panels share one level axis (``xaxis``) and are stacked so each stays wide on a phone.
    """
    if not families:
        raise ValueError("the ladder needs at least one family")
    data: list[dict[str, Any]] = []
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
            data.append(
                {
                    "type": "scatter",
                    "xaxis": "x",
                    "yaxis": "y",
                    "x": [_level_label(lv.level) for lv in with_latency],
                    "y": mids,
                    "mode": "markers",
                    "marker": {"size": 13, "color": color, "symbol": "circle"},
                    "error_y": {
                        "type": "data",
                        "array": [h - m for h, m in zip(highs, mids, strict=True)],
                        "arrayminus": [m - lo for lo, m in zip(lows, mids, strict=True)],
                        "thickness": 2.5,
                        "width": 8,
                        "color": color,
                    },
                    "name": legend_name(f"{fam.name}: latency (dot: midpoint, bar: published range)"),
                    "legendgroup": fam.id,
                    "offsetgroup": fam.id,
                    "customdata": [
                        [lv.name, si(lo, "s"), si(h, "s")]
                        for lv, lo, h in zip(with_latency, lows, highs, strict=True)
                    ],
                    "hovertemplate": "%{customdata[0]}: %{customdata[1]} to %{customdata[2]}<extra>"
                    + fam.name
                    + "</extra>",
                }
            )
        with_bandwidth = [lv for lv in fam.levels if lv.bandwidth_per_device_bytes_per_s is not None]
        if with_bandwidth:
            values = [float(lv.bandwidth_per_device_bytes_per_s or 0.0) for lv in with_bandwidth]
            bandwidths += values
            data.append(
                {
                    "type": "scatter",
                    "xaxis": "x",
                    "yaxis": "y2",
                    "x": [_level_label(lv.level) for lv in with_bandwidth],
                    "y": values,
                    "mode": "markers",
                    "marker": {"size": 13, "color": color, "symbol": "square"},
                    "name": legend_name(f"{fam.name}: bandwidth (whole device, one direction)"),
                    "legendgroup": fam.id,
                    "offsetgroup": fam.id,
                    "customdata": [
                        [lv.name, si(v, "B/s"), lv.bandwidth_kind]
                        for lv, v in zip(with_bandwidth, values, strict=True)
                    ],
                    "hovertemplate": "%{customdata[0]}: %{customdata[1]} (%{customdata[2]})<extra>"
                    + fam.name
                    + "</extra>",
                }
            )
    # Comparing families: each one's main memory (a GPU's device memory, a CPU's DRAM) sits in a
    # different column, so draw it across both panels as a dashed line, where the two can be read
    # against each other.
    order_all = [_level_label(level) for level in LEVELS if any(fam.has_level(level) for fam in families)]
    if len(families) > 1 and order_all:
        for index, fam in enumerate(families):
            main = next((lv for lv in fam.levels if lv.level == "device-memory"), None) or next(
                (lv for lv in fam.levels if lv.level == "host-memory"), None
            )
            if main is None:
                continue
            for value, panel, unit, what in (
                (main.latency_s("mid") if main.has_latency else None, "y", "s", "latency"),
                (main.bandwidth_per_device_bytes_per_s, "y2", "B/s", "bandwidth"),
            ):
                if value is None:
                    continue
                label = si(value, unit)
                main_name = main.name if "memory" in main.name.lower() else f"main memory ({main.name})"
                data.append(
                    {
                        "type": "scatter",
                        "xaxis": "x",
                        "yaxis": panel,
                        "x": [order_all[0], order_all[-1]],
                        "y": [value, value],
                        "mode": "lines",
                        "line": {"color": _color(index), "width": 2, "dash": "dash"},
                        "name": legend_name(f"{fam.name}: {main_name} {what}, {label}"),
                        "legendgroup": f"main-{fam.id}",
                        "hovertemplate": f"{fam.name}, {main_name}: {label}<extra></extra>",
                    }
                )
    # Measured points: one legend entry per family measured on (latency and bandwidth together),
    # each drawn beside that family's published marks; points from a family not drawn (or with
    # none given) sit in the middle of their level.
    names = {fam.id: fam.name for fam in families}
    on_ladder = [p for p in measured if p.level is not None]
    groups: dict[str, list[MeasuredPoint]] = {}
    for point in on_ladder:
        groups.setdefault(point.family if point.family in names else "", []).append(point)
    for family_id, group in groups.items():
        on = f" on {names[family_id]}" if family_id and len(families) > 1 else ""
        shown_legend = False
        for kind, values, panel, unit in (
            ("seconds", latencies, "y", "s"),
            ("bytes_per_s", bandwidths, "y2", "B/s"),
        ):
            points = [p for p in group if getattr(p, kind) is not None]
            if not points:
                continue
            values += [float(getattr(p, kind)) for p in points]
            trace = {
                "type": "scatter",
                "xaxis": "x",
                "yaxis": panel,
                "x": [_level_label(str(p.level)) for p in points],
                "y": [float(getattr(p, kind)) for p in points],
                "mode": "markers",
                "marker": {"size": 16, "color": MEASURED_COLOR, "symbol": "x", "line": HALO_EDGE},
                "name": legend_name(
                    f"Measured{on}: {len(group)} point{'s' if len(group) > 1 else ''}, hover for each"
                ),
                "legendgroup": f"measured-{family_id}",
                "showlegend": not shown_legend,
                "customdata": [[p.label, si(float(getattr(p, kind)), unit)] for p in points],
                "hovertemplate": "%{customdata[0]}: %{customdata[1]}<extra></extra>",
            }
            if family_id:
                trace["offsetgroup"] = family_id
            shown_legend = True
            data.append(trace)
    order = [_level_label(level) for level in LEVELS if any(fam.has_level(level) for fam in families)]
    latency_axis = axis("Latency (s, log)", domain=[0.56, 1.0], anchor="x")
    if latencies:
        latency_axis |= si_ticks(latencies, "s")
    else:
        latency_axis["type"] = "log"
    bandwidth_axis = axis("Bandwidth (B/s, log)", domain=[0.0, 0.44], anchor="x")
    if bandwidths:
        bandwidth_axis |= si_ticks(bandwidths, "B/s")
    else:
        bandwidth_axis["type"] = "log"
    layout = {
        "title": chart_title(
            title or "Memory ladder: latency and bandwidth per level",
            "Top: latency of one access. Bottom: bandwidth of the whole device, one direction. "
            "Log scales: each gridline is 10× the one below",
        ),
        "height": 820 + 26 * sum(1 for t in data if t.get("showlegend", True)),  # room for the legend
        "scattermode": "group",
        "xaxis": axis(
            "Memory level (closest to the cores on the left)",
            type="category",
            categoryorder="array",
            categoryarray=order,
            anchor="y2",
        ),
        "yaxis": latency_axis,
        "yaxis2": bandwidth_axis,
    }
    return figure(data, layout)


# ---------------------------------------------------------------------------------------------
# Time to move N bytes
# ---------------------------------------------------------------------------------------------


def transfer_time_figure(
    levels: Sequence[MemoryLevel],
    measured: Sequence[MeasuredPoint] = (),
    *,
    min_bytes: float = 1.0,
    max_bytes: float = 1e10,
    points: int = 121,
    title: str | None = None,
) -> Spec:
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
    data: list[dict[str, Any]] = []
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
            data.append(
                {
                    "type": "scatter",
                    "x": floats(xs),
                    "y": ys,
                    "mode": "lines",
                    "line": {"color": color, "width": 3.5, "dash": dash},
                    "name": legend_name(label),
                    "showlegend": in_legend,
                    "legendgroup": f"{lv.family}/{lv.level}",
                    "customdata": [[si(float(n), "B"), si(t, "s")] for n, t in zip(xs, ys, strict=True)],
                    "hovertemplate": "%{customdata[0]} in %{customdata[1]}<extra>" + label + "</extra>",
                }
            )
        if min_bytes <= crossover <= max_bytes:
            cross_x.append(float(crossover))
            cross_y.append(transfer_time_s(lv, crossover))
            cross_color.append(color)
            cross_text.append(f"{label}: {si(crossover, 'B')} in {si(cross_y[-1], 's')}")
    if cross_x:
        data.append(
            {
                "type": "scatter",
                "x": cross_x,
                "y": cross_y,
                "mode": "markers",
                "marker": {
                    "symbol": "diamond",
                    "size": 14,
                    "color": cross_color,
                    "line": {"width": 1.5, "color": "#000"},
                },
                "name": legend_name("Crossover: latency = N ÷ bandwidth (time = 2 × latency)"),
                "text": cross_text,
                "hovertemplate": "%{text}<extra>crossover</extra>",
            }
        )
    for dash, text in (("dot", "Dotted: latency dominates"), ("solid", "Solid: bandwidth dominates")):
        data.append(
            {
                "type": "scatter",
                "x": [None],
                "y": [None],
                "mode": "lines",
                "line": {"color": "#777777", "width": 3.5, "dash": dash},
                "name": text,
                "hoverinfo": "skip",
            }
        )
    points_measured = [p for p in measured if p.nbytes is not None and p.seconds is not None]
    if points_measured:
        all_times += [float(p.seconds or 0.0) for p in points_measured]
        data.append(
            {
                "type": "scatter",
                "x": [float(p.nbytes or 0.0) for p in points_measured],
                "y": [float(p.seconds or 0.0) for p in points_measured],
                "mode": "markers",
                "marker": {"size": 16, "color": MEASURED_COLOR, "symbol": "x", "line": HALO_EDGE},
                "name": legend_name(f"Measured ({len(points_measured)}, hover for each)"),
                "customdata": [
                    [p.label, si(float(p.nbytes or 0.0), "B"), si(float(p.seconds or 0.0), "s")]
                    for p in points_measured
                ],
                "hovertemplate": "%{customdata[0]}: %{customdata[1]} in %{customdata[2]}<extra></extra>",
            }
        )
    layout = {
        "title": chart_title(
            title or "Time to move N bytes from each level", "time = latency + N ÷ bandwidth, log-log"
        ),
        "height": 700,
        "xaxis": axis(
            "Transfer size N (bytes, decimal prefixes)",
            **decade_ticks(min_bytes, max_bytes, lambda v: si(v, "B"), pad=0.1),
        ),
        "yaxis": axis("Time (s, log scale)", **si_ticks(all_times, "s")),
    }
    return figure(data, layout)


# ---------------------------------------------------------------------------------------------
# Little's law
# ---------------------------------------------------------------------------------------------


def littles_law_figure(
    families: Sequence[HardwareFamily],
    bytes_per_thread: float = 4,
    threads_per_warp: int = 32,
    levels: Sequence[str] = ON_DEVICE_LEVELS,
) -> Spec:
    """Warps per SM that must each have one load in flight to keep a level busy (grouped bars).

    warps = latency × bandwidth per SM ÷ (bytes_per_thread × threads_per_warp), Little's law.
    A dashed line in the family's colour marks the most warps one SM can hold (named in the
    legend, not over the bars); bars above it mean full occupancy alone
    is not enough — each warp needs several loads in flight, or wider loads. Each bar carries its
    value where it fits at a readable size; Plotly hides a label it would have to shrink.
    """
    if not families:
        raise ValueError("the chart needs at least one family")
    data: list[dict[str, Any]] = []
    shown: set[str] = set()
    limits: list[tuple[int, str, int]] = []
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
        data.append(
            {
                "type": "bar",
                "x": [_level_label(lv.level) for lv in usable],
                "y": warps,
                "marker": {"color": _color(index)},
                "name": legend_name(f"{fam.name}: warps in flight needed per SM"),
                "text": [f"{w:.0f}" for w in warps],
                "textposition": "outside",
                "textangle": 0,
                "textfont": {"size": LABEL_FONT_PX},
                "cliponaxis": False,
                "offsetgroup": fam.id,
                "hovertemplate": "%{x}: %{y:.1f} warps per SM<extra>" + fam.name + "</extra>",
            }
        )
        if fam.max_warps_per_sm is not None:
            limits.append((index, fam.name, fam.max_warps_per_sm))
    shapes = [
        {  # a dashed line in the family's colour, with its own legend entry (no label over the bars)
            "type": "line",
            "xref": "paper",
            "x0": 0,
            "x1": 1,
            "yref": "y",
            "y0": limit,
            "y1": limit,
            "line": {"color": _color(index), "width": 2.5, "dash": "dash"},
            "name": legend_name(f"{name}: at most {limit} warps fit on one SM"),
            "showlegend": True,
        }
        for index, name, limit in limits
    ]
    order = [_level_label(level) for level in LEVELS if level in shown]
    tallest = max([*(max(t["y"]) for t in data), *(limit for _, _, limit in limits), 1])
    layout = {
        "title": chart_title(
            "Little's law: warps each SM needs in flight",
            "bytes in flight = latency × bandwidth, in warps of one load per thread",
        ),
        "height": 620,
        "barmode": "group",
        "uniformtext": {"mode": "hide", "minsize": LABEL_FONT_PX - 1},
        "xaxis": axis("Memory level", type="category", categoryorder="array", categoryarray=order),
        "yaxis": axis(
            f"Warps per SM ({bytes_per_thread:g}-byte load per thread)",
            range=[0, tallest * 1.15],
        ),
        "shapes": shapes,
    }
    return figure(data, layout)


# ---------------------------------------------------------------------------------------------
# Where does my model live
# ---------------------------------------------------------------------------------------------


def placement_figure(placement: ModelPlacement, *, family_name: str | None = None) -> Spec:
    """Stacked horizontal bars: weights and KV cache on device memory and in host memory (GB)."""
    rows = placement.placements
    names = [wrap(p.name, 18) for p in rows]
    data: list[dict[str, Any]] = []
    for index, (part, attr) in enumerate((("Weights", "weight_bytes"), ("KV cache", "kv_bytes"))):
        data.append(
            {
                "type": "bar",
                "y": names,
                "x": [getattr(p, attr) / _GB for p in rows],
                "orientation": "h",
                "name": f"{part} (GB)",
                "marker": {"color": _color(index)},
                "hovertemplate": "%{y}: %{x:,.1f} GB<extra>" + part + "</extra>",
            }
        )
    data.append(
        {
            "type": "scatter",
            "x": [placement.usable_device_bytes / _GB],
            "y": [names[0]],
            "mode": "markers",
            "marker": {"symbol": "line-ns", "size": 40, "line": {"width": 4, "color": USABLE_COLOR}},
            "name": "Usable device memory (GB)",
            "hovertemplate": "usable: %{x:,.1f} GB<extra></extra>",
        }
    )
    per_token = placement.time_per_token_s
    if per_token == float("inf"):
        cost = "does not fit, and there is no host link to stream the rest"
    else:
        cost = f"{per_token * 1e3:,.1f} ms per token at batch 1"
    layout = {
        "title": chart_title(f"Where the model lives on {family_name or placement.family}", cost),
        "height": 440,
        "barmode": "stack",
        "bargap": 0.35,
        "xaxis": axis("Bytes held (GB = 10⁹ bytes)", rangemode="tozero"),
        "yaxis": axis("Level", autorange="reversed", type="category"),
    }
    return figure(data, layout)


# ---------------------------------------------------------------------------------------------
# Pointer-chase latency against working-set size
# ---------------------------------------------------------------------------------------------


def _binary_ticks(low: float, high: float) -> dict[str, Any]:
    """Log-axis ticks at 1 and 32 of each binary prefix (1 KiB, 32 KiB, 1 MiB, ...) spanning the range."""
    ticks = [float(2**k) for k in range(0, 51, 5) if low / 1.5 <= 2**k <= high * 1.5]
    return {
        "type": "log",
        "tickmode": "array",
        "tickvals": ticks,
        "ticktext": [binary_bytes(t) for t in ticks],
        "range": [math.log10(low) - 0.15, math.log10(high) + 0.15],
    }


def chase_capacity_bytes(level: MemoryLevel, levels: Sequence[MemoryLevel]) -> float:
    """Bytes a single pointer-chasing thread can keep in ``level``: its capacity, except the near
    L2 of a family with a far partition, which holds one of the two partitions, half the L2
    ("Two 25 MB partitions (RRZE); this row is the near one", memory_hierarchy.csv)."""
    capacity = float(level.capacity_bytes or 0.0)
    if level.level == "l2" and any(lv.level == "l2-far" for lv in levels):
        return capacity / 2
    return capacity


def latency_sweep_figure(
    points: Sequence[tuple[int, float]],
    levels: Sequence[MemoryLevel] = (),
    *,
    device_label: str = "",
) -> Spec:
    """Measured pointer-chase latency against working-set size, over the published level ranges.

    ``points`` are (working-set bytes, ns per dependent load), as ``measure.views.latency_pairs``
    gives them; they are drawn on a log y axis in ns against bytes on a log x axis with binary
    ticks (KiB, MiB, GiB). Each level of ``levels`` that a pointer chase walks
    (``CHASED_LEVELS``) and that has both a sourced latency range and a capacity is a shaded band:
    latency min to max (``latency_s``) over the working sets it is the smallest level to hold
    (above the previous level's capacity, up to its own, ``chase_capacity_bytes``). The measured
    steps should land in the bands: L1, then L2, then device memory.
    """
    data: list[dict[str, Any]] = []
    sizes = positive(size for size, _ in points)
    times_ns = positive(ns for _, ns in points)
    ladder = sorted(
        (
            lv
            for lv in levels
            if lv.level in CHASED_LEVELS and lv.has_latency and lv.capacity_bytes and lv.latency_max_s
        ),
        key=lambda lv: (chase_capacity_bytes(lv, levels), lv.latency_s("min")),
    )
    capacities = [chase_capacity_bytes(lv, levels) for lv in ladder]
    x_low = min([*sizes, *(c / 8 for c in capacities[:1])] or [1024.0])
    x_high = max([*sizes, *(c * 4 for c in capacities[-1:])] or [2.0**30])
    start = x_low
    for index, (lv, capacity) in enumerate(zip(ladder, capacities, strict=True)):
        if index:
            start = capacities[index - 1]
        end = capacity if index < len(ladder) - 1 else x_high
        low_ns, high_ns = lv.latency_s("min") * 1e9, lv.latency_s("max") * 1e9
        # A single published value gets a thin band (±4%) so it still shows.
        if math.isclose(low_ns, high_ns):
            low_ns, high_ns = low_ns * 0.96, high_ns * 1.04
        times_ns += [low_ns, high_ns]
        color = _color(index + 1)
        data.append(
            {
                "type": "scatter",
                "x": [start, end, end, start, start],
                "y": [low_ns, low_ns, high_ns, high_ns, low_ns],
                "fill": "toself",
                "fillcolor": _rgba(color, 0.22),
                "mode": "lines",
                "line": {"color": color, "width": 1},
                "name": legend_name(
                    f"{lv.name}: {si(lv.latency_s('min'), 's')}–{si(lv.latency_s('max'), 's')}, "
                    f"up to {binary_bytes(capacity)}"
                ),
                "legendgroup": lv.level,
                "hoverinfo": "name",
            }
        )
    if points:
        ordered = sorted(points)
        data.append(  # a white halo under the black line: invisible on white, the line's edge on dark
            {
                "type": "scatter",
                "x": [float(size) for size, _ in ordered],
                "y": [float(ns) for _, ns in ordered],
                "mode": "lines",
                "line": {"color": "white", "width": 5},
                "showlegend": False,
                "hoverinfo": "skip",
            }
        )
        data.append(
            {
                "type": "scatter",
                "x": [float(size) for size, _ in ordered],
                "y": [float(ns) for _, ns in ordered],
                "mode": "lines+markers",
                "name": legend_name(f"Measured pointer chase{': ' + device_label if device_label else ''}"),
                "line": {"color": MEASURED_COLOR, "width": 2.5},
                "marker": {"size": 8, "color": MEASURED_COLOR, "line": HALO_EDGE},
                "customdata": [[binary_bytes(size), si(ns * 1e-9, "s")] for size, ns in ordered],
                "hovertemplate": "working set %{customdata[0]}: %{customdata[1]} per load<extra></extra>",
            }
        )
    times_ns = times_ns or [1.0, 1000.0]
    layout = {
        "title": chart_title(
            "Latency of one dependent load against working-set size",
            (device_label + ". " if device_label else "") + "Bands: published latency range of each level",
        ),
        "height": 660,
        "xaxis": axis("Working set (bytes, binary prefixes)", **_binary_ticks(x_low, x_high)),
        "yaxis": axis(
            "Latency per load (ns, log)",
            **decade_ticks(min(times_ns), max(times_ns), lambda v: si(v * 1e-9, "s"), pad=0.15),
        ),
    }
    return figure(data, layout)


def _rgba(hex_colour: str, alpha: float) -> str:
    red, green, blue = (int(hex_colour[i : i + 2], 16) for i in (1, 3, 5))
    return f"rgba({red},{green},{blue},{alpha})"
