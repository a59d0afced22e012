"""Figures for the roofline page: the log-log roofline and the decode batch sweep.

Pure builders: model records in (``simulators.roofline``), a plain Plotly figure dict out
(charts/style.py); no Streamlit, no plotly import. The model keeps FLOP/s and bytes/s; the charts
show TFLOP/s (10¹² FLOP/s, dense) and TB/s. Measured points (``MeasuredPoint``) from measure/ are
drawn beside the predicted roofs, each with its fraction of the roof in the hover.

Point labels: only a few points get a text label, chosen so no two labels share a band of the
chart (``_pick_labels``); every point names itself in its hover.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from charts.palette import OKABE_ITO
from charts.style import (
    LABEL_BOX_BG,
    LABEL_BOX_TEXT,
    LABEL_FONT_PX,
    Spec,
    axis,
    decade_ticks,
    figure,
    legend_name,
    narrow_fraction,
)
from charts.style import title as chart_title
from simulators.hardware import Accelerator
from simulators.llm_memory import ModelSpec
from simulators.roofline import (
    ABOVE_ROOF_TOLERANCE,
    KINDS,
    ComputeRoof,
    MeasuredPoint,
    MemoryRoof,
    Operation,
    Roof,
    achievable_roofs,
    attainable_flops,
    decode_crossover_batch,
    decode_intensity_limit,
    decode_step_op,
    predict,
    roofs,
)
from simulators.units import si

TERA = 1e12
X_TITLE = "Arithmetic intensity (FLOP per byte of device-memory traffic)"
Y_TITLE = "Attainable FLOP/s, dense (TFLOP/s)"
OPERATION_COLOR = "#000000"
ABOVE_ROOF_SYMBOL = "x"  # a measured point above its own roof: an error in the counting, flagged
DECODE_COLOR = OKABE_ITO[5]  # vermillion: not an accelerator colour unless five are shown
# Okabe-Ito without yellow (too pale on white) and black (kept for the operations).
ACCELERATOR_COLORS: tuple[str, ...] = tuple(OKABE_ITO[i] for i in (0, 1, 2, 3, 5, 4))
KIND_SYMBOLS: dict[str, str] = {
    "matmul": "square",
    "matvec": "triangle-up",
    "elementwise": "circle",
    "reduction": "diamond",
    "attention": "hexagon",
    "model": "cross",
}
MEASURED_SYMBOL = "star"
MAX_LABELS = 6  # point labels on one roofline; the rest are in the hover
# Labels are placed for the narrowest chart (a phone, charts.style.narrow_fraction). Two labels
# collide when their points are closer than this, in decades, on both axes: a 12-character label
# spans about 1.3 decades of x on a phone.
LABEL_SPAN_X_DECADES = 1.4
LABEL_SPAN_Y_DECADES = 0.45

_TIME_PREFIXES = ((1.0, "s"), (1e-3, "ms"), (1e-6, "µs"), (1e-9, "ns"))


def _time(seconds: float) -> str:
    for size, unit in _TIME_PREFIXES:
        if seconds >= size * 0.9995:
            return f"{seconds / size:.3g} {unit}"
    return f"{seconds / 1e-9:.3g} ns"


def accelerator_color(index: int) -> str:
    return ACCELERATOR_COLORS[index % len(ACCELERATOR_COLORS)]


def _log_range(values: Sequence[float], pad_decades: float = 0.35) -> tuple[float, float]:
    """log10 axis range covering ``values`` with ``pad_decades`` of room on both sides (for labels)."""
    positive = [v for v in values if v > 0 and math.isfinite(v)]
    return math.log10(min(positive)) - pad_decades, math.log10(max(positive)) + pad_decades


def _device_bandwidth(found: Sequence[Roof]) -> float:
    return next(r.bandwidth_bytes_per_s for r in found if isinstance(r, MemoryRoof) and r.level == "device")


def _roof_peak(accelerator: Accelerator, dtype: str) -> tuple[float, str] | None:
    """The roof measured points are held to, and its name as the hover says it: the tensor peak
    at ``dtype``, else the FP32 vector peak named as such ("no BF16 figure"), never silently."""
    if accelerator.supports(dtype):
        return accelerator.peak_flops(dtype), dtype
    if accelerator.supports("fp32"):
        return accelerator.peak_flops("fp32"), f"FP32 vector (no {dtype.upper()} figure)"
    return None


def _roof_name(label: str, accelerator: Accelerator) -> str:
    """A roof label without the accelerator's name (the legend entry of the group says it)."""
    prefix = f"{accelerator.name} "
    return label[len(prefix) :] if label.startswith(prefix) else label


def _group_name(accelerator: Accelerator, found: Sequence[Roof], achievable: bool) -> str:
    """The legend entry of an accelerator's roofs; it carries the ridge point's value, so no label
    on the chart has to (one there would meet the point labels on a phone)."""
    if achievable:
        return f"{accelerator.name}: achievable (80% of peak, 90% of bandwidth)"
    ridge = _ridge_roof(found)
    if ridge is None:
        return accelerator.name
    return f"{accelerator.name}: ridge {ridge[0]:,.0f} FLOP/B ({ridge[1].dtype})"


def _ridge_roof(found: Sequence[Roof]) -> tuple[float, ComputeRoof] | None:
    """(ridge intensity in FLOP/byte, the compute roof it is on): the tensor roof, else any."""
    tensor = next((r for r in found if isinstance(r, ComputeRoof) and r.unit == "tensor"), None)
    if tensor is None:
        tensor = next((r for r in found if isinstance(r, ComputeRoof)), None)
    if tensor is None:
        return None
    return tensor.peak_flops / _device_bandwidth(found), tensor


def _roof_traces(
    accelerator: Accelerator,
    found: Sequence[Roof],
    color: str,
    x_low: float,
    x_high: float,
    *,
    achievable: bool,
) -> list[dict[str, Any]]:
    """The roofs of one accelerator, in one legend group with a single legend entry."""
    computes = [r for r in found if isinstance(r, ComputeRoof)]
    memories = [r for r in found if isinstance(r, MemoryRoof)]
    top = max((r.peak_flops for r in computes), default=None)
    device_bw = next((r.bandwidth_bytes_per_s for r in memories if r.level == "device"), None)
    group = f"{accelerator.id}-achievable" if achievable else accelerator.id
    opacity = 0.75 if achievable else 1.0
    traces: list[dict[str, Any]] = [
        {  # the group's legend entry: clicking it shows or hides all of this accelerator's roofs
            "type": "scatter",
            "x": [None],
            "y": [None],
            "mode": "lines",
            "name": legend_name(_group_name(accelerator, found, achievable)),
            "legendgroup": group,
            "line": {"color": color, "width": 3, "dash": "dash" if achievable else "solid"},
            "hoverinfo": "skip",
        }
    ]
    for roof in memories:
        bw = roof.bandwidth_bytes_per_s
        x_end = min(top / bw, x_high) if top else x_high
        dash = "dash" if achievable else ("dot" if roof.level == "l2" else "solid")
        traces.append(
            {
                "type": "scatter",
                "x": [x_low, x_end],
                "y": [x_low * bw / TERA, x_end * bw / TERA],
                "mode": "lines",
                "name": f"{'L2' if roof.level == 'l2' else 'memory'} roof: "
                f"{_roof_name(roof.label, accelerator)}",
                "legendgroup": group,
                "showlegend": False,
                "line": {"color": color, "width": 2 if achievable or roof.level == "l2" else 3, "dash": dash},
                "opacity": opacity,
                "hovertemplate": f"<b>{roof.label}</b><br>intensity %{{x:.3g}} FLOP/B<br>%{{y:.3g}} TFLOP/s"
                "<extra></extra>",
            }
        )
    for roof in computes:
        x_start = roof.peak_flops / device_bw if device_bw else x_low
        if achievable:
            dash, width = "dash", 2
        else:
            dash, width = ("solid", 3) if roof.unit == "tensor" else ("longdash", 2)
        traces.append(
            {
                "type": "scatter",
                "x": [x_start, x_high],
                "y": [roof.peak_flops / TERA] * 2,
                "mode": "lines",
                "name": f"compute roof: {_roof_name(roof.label, accelerator)}",
                "legendgroup": group,
                "showlegend": False,
                "line": {"color": color, "width": width, "dash": dash},
                "opacity": opacity,
                "hovertemplate": f"<b>{roof.label}</b><br>ridge at %{{x:.3g}} FLOP/B<extra></extra>",
            }
        )
    return traces


def _ridge(
    accelerator: Accelerator, found: Sequence[Roof], color: str, y_bottom: float
) -> list[dict[str, Any]]:
    """The ridge point: an open circle on the roof and a dotted drop line to the bottom of the
    plot, where memory-bound (left) turns compute-bound (right). Its value is in the legend."""
    found_ridge = _ridge_roof(found)
    if found_ridge is None:
        return []
    ridge, tensor = found_ridge
    bandwidth = _device_bandwidth(found)
    hover = (
        f"<b>{accelerator.name} ridge point</b><br>{ridge:,.1f} FLOP/byte = "
        f"{tensor.peak_flops / TERA:,.4g} TFLOP/s / {bandwidth / TERA:,.3g} TB/s"
        "<br>left: memory-bound, right: compute-bound<extra></extra>"
    )
    return [
        {
            "type": "scatter",
            "x": [ridge, ridge],
            "y": [y_bottom, tensor.peak_flops / TERA],
            "mode": "lines",
            "name": f"ridge line {accelerator.name}",
            "legendgroup": accelerator.id,
            "showlegend": False,
            "line": {"color": color, "width": 1.5, "dash": "dot"},
            "hovertemplate": hover,
        },
        {
            "type": "scatter",
            "x": [ridge],
            "y": [tensor.peak_flops / TERA],
            "mode": "markers",
            "marker": {"symbol": "circle-open", "size": 18, "color": color, "line": {"width": 3}},
            "name": f"ridge point: {ridge:,.0f} FLOP/byte ({tensor.dtype})",
            "legendgroup": accelerator.id,
            "showlegend": False,
            "hovertemplate": hover,
        },
    ]


def _operation_hover(op: Operation, accelerators: Sequence[Accelerator]) -> str:
    lines = [
        f"<b>{op.name}</b>",
        f"FLOPs {si(op.flops, 'FLOP')}, bytes {si(op.bytes, 'B')}",
        f"intensity {op.intensity:,.3g} FLOP/byte ({op.dtype}, {op.compute_unit} units)",
    ]
    for acc in accelerators:
        prediction = predict(op, acc)
        if prediction is None:
            lines.append(f"{acc.name}: no sourced {op.dtype} peak")
            continue
        lines.append(
            f"{acc.name}: {prediction.bound}-bound, predicted {_time(prediction.time_s)} "
            f"= max(FLOPs/peak, bytes/BW), {prediction.attainable_flops / TERA:,.3g} TFLOP/s"
        )
    if op.note:
        lines.append(op.note)
    return "<br>".join(lines)


def _fusion(op: Operation) -> str:
    """ "fused" or "unfused" for an operation that comes in both versions (by its name), else ""."""
    if "(unfused)" in op.name:
        return "unfused"
    if "(fused)" in op.name:
        return "fused"
    return ""


# Points closer than this, in decades on both axes, overlap on the chart (a 13 px marker on a phone).
NEIGHBOUR_DECADES = 0.03


def _neighbours(op: Operation, accelerator: Accelerator, placed: Sequence[tuple[float, float, str]]) -> str:
    """A hover line naming the other points drawn at (almost) the same place as ``op``."""
    x, y = math.log10(op.intensity), math.log10(_on_roof(op, accelerator) / TERA)
    near = [
        name
        for px, py, name in placed
        if name != op.name
        and abs(math.log10(px) - x) < NEIGHBOUR_DECADES
        and abs(math.log10(py) - y) < NEIGHBOUR_DECADES
    ]
    return "<br><i>also here: " + "; ".join(near) + "</i>" if near else ""


def _on_roof(op: Operation, accelerator: Accelerator) -> float:
    """Where ``op`` sits on ``accelerator``'s roof, in FLOP/s."""
    prediction = predict(op, accelerator)
    if prediction is not None:
        return prediction.attainable_flops
    return op.intensity * accelerator.memory_bandwidth_bytes_per_s


@dataclass
class _Point:
    """A candidate for a text label: log10 position, label text, whether it sits on a slope."""

    x: float
    y: float
    text: str
    sloped: bool
    chosen: bool = False
    position: str = "bottom right"


def _pick_labels(points: Sequence[_Point], x_range: tuple[float, float], limit: int = MAX_LABELS) -> None:
    """Mark up to ``limit`` points (in priority order) whose labels cannot overlap, and place each.

    On a slope (memory-bound) a label goes below and to the right of its point, away from the
    rising roof; on a flat roof (compute-bound) it goes above, centred (the y range leaves room
    above the highest roof). Where a label would run past an edge of a phone-width plot it turns
    to the other side, so it is never cut off. Two labels conflict when their points are within
    ``LABEL_SPAN_*`` decades on both axes; the later one stays in the hover only.
    """
    chosen: list[_Point] = []
    for point in points:
        if len(chosen) >= limit or not point.text:
            continue
        if any(
            abs(point.x - other.x) < LABEL_SPAN_X_DECADES and abs(point.y - other.y) < LABEL_SPAN_Y_DECADES
            for other in chosen
        ):
            continue
        where = (point.x - x_range[0]) / (x_range[1] - x_range[0])
        width = narrow_fraction(point.text)
        if point.sloped:
            point.position = "bottom right" if where + width < 0.98 else "top left"
        elif where + width / 2 > 0.98:
            point.position = "top left"
        elif where - width / 2 < 0.02:
            point.position = "top right"
        else:
            point.position = "top center"
        point.chosen = True
        chosen.append(point)


def _measured_traces(
    measured: Sequence[MeasuredPoint], accelerators: Sequence[Accelerator], dtype: str
) -> list[dict[str, Any]]:
    """One trace (one legend entry) per accelerator the points are held to; each point in the hover."""
    by_id = {acc.id: (i, acc) for i, acc in enumerate(accelerators)}
    groups: dict[int, list[MeasuredPoint]] = {}
    for point in measured:
        index, _ = by_id.get(point.accelerator_id or "", (0, accelerators[0]))
        groups.setdefault(index, []).append(point)
    traces = []
    for index, points in sorted(groups.items()):
        acc = accelerators[index]
        held = _roof_peak(acc, dtype)
        peak, roof_name = held if held is not None else (None, dtype)
        hovers = []
        symbols = []
        for point in points:
            symbols.append(MEASURED_SYMBOL)
            lines = [
                f"<b>measured: {point.name}</b>",
                f"intensity {point.intensity:,.3g} FLOP/byte",
                f"achieved {point.achieved_flops / TERA:,.3g} TFLOP/s",
            ]
            if peak is not None:
                roof = attainable_flops(point.intensity, peak, acc.memory_bandwidth_bytes_per_s)
                fraction = point.fraction_of_roof(peak, acc.memory_bandwidth_bytes_per_s)
                lines.append(
                    f"{acc.name} {roof_name} roof here: {roof / TERA:,.3g} TFLOP/s; "
                    f"achieved = {fraction:.0%} of it"
                )
                if fraction > ABOVE_ROOF_TOLERANCE:
                    symbols[-1] = ABOVE_ROOF_SYMBOL
                    lines.append(
                        "<b>above the roof: a counting or unit error (FLOPs, precision or time), "
                        "not a real result</b>"
                    )
            if point.note:
                lines.append(point.note)
            hovers.append("<br>".join(lines))
        against = f", held to the {acc.name} roof" if len(accelerators) > 1 else ""
        traces.append(
            {
                "type": "scatter",
                "x": [p.intensity for p in points],
                "y": [p.achieved_flops / TERA for p in points],
                "mode": "markers",
                "marker": {
                    "symbol": symbols,
                    "size": 15,
                    "color": accelerator_color(index),
                    "line": {"color": "black", "width": 1.2},
                },
                "name": legend_name(f"measured kernels ({len(points)}, hover for each){against}"),
                "legendgroup": "measured",
                "hovertext": hovers,
                "hoverinfo": "text",
            }
        )
    return traces


def _decode_hover(op: Operation, accelerator: Accelerator) -> str:
    prediction = predict(op, accelerator)
    lines = [f"<b>{op.name}</b>", f"intensity {op.intensity:,.3g} FLOP/byte"]
    if prediction is not None:
        lines.append(
            f"{accelerator.name}: {prediction.bound}-bound, step {_time(prediction.time_s)}, "
            f"{prediction.attainable_flops / TERA:,.3g} TFLOP/s"
        )
    if op.note:
        lines.append(op.note)
    return "<br>".join(lines)


def _batch_label(op: Operation) -> str:
    return op.short_label.replace("decode ", "")


def roofline_figure(
    accelerators: Sequence[Accelerator],
    dtype: str = "bf16",
    operations: Sequence[Operation] = (),
    measured: Sequence[MeasuredPoint] = (),
    show_achievable: bool = False,
    *,
    title: str = "",
    labels: bool = True,
    height: int = 720,
    decode_path: Sequence[Operation] = (),
    decode_selected: Operation | None = None,
) -> Spec:
    """Log-log roofline for one or more accelerators, with operations, a decode path and measured points.

    Per accelerator (one colour each, one legend entry that toggles them all and names the ridge
    point's value): the tensor roof at ``dtype`` (solid) and the vector FP32 roof (long dashes),
    the device-memory roof (solid slope) and, where a measured L2 bandwidth is sourced, an L2 roof
    (dotted); the ridge point (open circle, with a dotted drop line to the x axis). With
    ``show_achievable``, dashed ceilings at 80% of the tensor peak and 90% of the bandwidth
    (``simulators.roofline.achievable_roofs``). Operations are black markers, one shape (and
    legend entry) per kind, placed on the first accelerator's roof; their hover gives FLOPs,
    bytes, intensity, bound and predicted time on every accelerator shown. A few points carry a
    text label (chosen so labels never overlap); the rest name themselves in the hover.

    ``decode_path`` (for example ``decode_step_op`` at batch 1, 2, 4 … 4096) is drawn on the first
    accelerator's roof as a connected line of small markers, a few labelled with their batch
    size; ``decode_selected`` is a large highlighted marker with a label. Measured points are
    stars, one legend entry per accelerator they are held to, each point's fraction of the roof
    (tensor peak at ``dtype``) in its hover. Returns a plain Plotly figure dict.
    """
    if not accelerators:
        raise ValueError("roofline_figure needs at least one accelerator")
    first = accelerators[0]
    all_roofs = [roofs(acc, dtype) for acc in accelerators]
    ridges = [
        r.peak_flops / _device_bandwidth(found)
        for found in all_roofs
        for r in found
        if isinstance(r, ComputeRoof)
    ]
    decode_ops = list(decode_path) + ([decode_selected] if decode_selected is not None else [])
    intensities = [op.intensity for op in [*operations, *decode_ops] if op.intensity > 0]
    held = [p for p in measured if p.held_to(dtype)]  # each point only on its own precision's roof
    elsewhere = sorted({p.dtype for p in measured if not p.held_to(dtype)})
    intensities += [p.intensity for p in held]
    low, high = _log_range([1.0, 1000.0, *ridges, *intensities], pad_decades=0.6)
    x_low, x_high = 10**low, 10**high

    peaks = [r.peak_flops for found in all_roofs for r in found if isinstance(r, ComputeRoof)]
    bandwidths = [r.bandwidth_bytes_per_s for found in all_roofs for r in found if isinstance(r, MemoryRoof)]
    y_values = [x_low * min(bandwidths) / TERA, *(p / TERA for p in peaks)]
    y_values += [p.achieved_flops / TERA for p in held]
    if not peaks:
        y_values.append(x_high * max(bandwidths) / TERA)
    y_low, y_high = _log_range(y_values, pad_decades=0.25)
    y_high += 0.3  # room for the labels above the flat roof

    data: list[dict[str, Any]] = []
    for index, (acc, found) in enumerate(zip(accelerators, all_roofs, strict=True)):
        color = accelerator_color(index)
        data += _roof_traces(acc, found, color, x_low, x_high, achievable=False)
        if show_achievable:
            data += _roof_traces(acc, achievable_roofs(acc, dtype), color, x_low, x_high, achievable=True)
        data += _ridge(acc, found, color, 10**y_low)

    # Label candidates in priority order: the selected decode step, the decode path's ends and a
    # few batches between, then the operations from the lowest intensity up.
    peaks_first = [r.peak_flops for r in all_roofs[0] if isinstance(r, ComputeRoof)]

    def candidate(op: Operation, text: str) -> _Point:
        flops = _on_roof(op, first)
        sloped = not any(math.isclose(flops, p, rel_tol=1e-9) for p in peaks_first)
        return _Point(math.log10(op.intensity), math.log10(flops / TERA), text, sloped)

    ordered: list[_Point] = []
    if decode_selected is not None:
        selected_point = candidate(decode_selected, f"{_batch_label(decode_selected)} (selected)")
        ordered.append(selected_point)
    path_points = [candidate(op, _batch_label(op)) for op in decode_path]
    if path_points:
        ordered += [path_points[0], path_points[-1], *path_points[1:-1]]
    op_points = [candidate(op, op.short_label) for op in operations]
    for i in sorted(range(len(operations)), key=lambda i: operations[i].intensity):
        ordered.append(op_points[i])
    if labels:
        _pick_labels(ordered, (low, high))

    if decode_path:
        data.append(
            {
                "type": "scatter",
                "x": [op.intensity for op in decode_path],
                "y": [_on_roof(op, first) / TERA for op in decode_path],
                "mode": "lines+markers+text",
                "text": [p.text if p.chosen else "" for p in path_points],
                "textposition": [p.position for p in path_points],
                "textfont": {"size": LABEL_FONT_PX, "color": DECODE_COLOR},
                "line": {"color": DECODE_COLOR, "width": 2},
                "marker": {"size": 8, "color": DECODE_COLOR, "line": {"color": "white", "width": 1}},
                "name": legend_name(f"decode step as the batch grows (on the {first.name} roof)"),
                "legendgroup": "decode",
                "hovertext": [_decode_hover(op, first) for op in decode_path],
                "hoverinfo": "text",
            }
        )
    if decode_selected is not None:
        prediction = predict(decode_selected, first)
        bound = f", {prediction.bound}-bound" if prediction else ""
        data.append(
            {
                "type": "scatter",
                "x": [decode_selected.intensity],
                "y": [_on_roof(decode_selected, first) / TERA],
                "mode": "markers+text" if selected_point.chosen else "markers",
                "text": [selected_point.text if selected_point.chosen else ""],
                "textposition": [selected_point.position],
                "textfont": {"size": LABEL_FONT_PX + 1, "color": DECODE_COLOR},
                "marker": {
                    "size": 20,
                    "color": DECODE_COLOR,
                    "symbol": "circle",
                    "line": {"color": "black", "width": 2},
                },
                "name": legend_name(
                    f"selected: {_batch_label(decode_selected)}, "
                    f"{decode_selected.intensity:,.3g} FLOP/byte{bound}"
                ),
                "legendgroup": "decode-selected",
                "hovertext": [_decode_hover(decode_selected, first)],
                "hoverinfo": "text",
            }
        )
    # Operations go on top of the decode path, so none hides under its markers. A fused and an
    # unfused version of one kernel share a shape: filled is fused, open is unfused, each with its
    # own legend entry. Points that (nearly) coincide with another name each other in the hover.
    placed = [(op.intensity, _on_roof(op, first) / TERA, op.name) for op in operations]
    placed += [(op.intensity, _on_roof(op, first) / TERA, op.name) for op in decode_path]
    for kind, description in KINDS.items():
        for fusion in ("", "fused", "unfused"):
            indices = [i for i, op in enumerate(operations) if op.kind == kind and _fusion(op) == fusion]
            if not indices:
                continue
            ops = [operations[i] for i in indices]
            points = [op_points[i] for i in indices]
            symbol = KIND_SYMBOLS[kind] + ("-open" if fusion == "unfused" else "")
            name = description + {"": "", "fused": ", fused (filled)", "unfused": ", unfused (open)"}[fusion]
            data.append(
                {
                    "type": "scatter",
                    "x": [op.intensity for op in ops],
                    "y": [_on_roof(op, first) / TERA for op in ops],
                    "mode": "markers+text" if any(p.chosen for p in points) else "markers",
                    "text": [p.text if p.chosen else "" for p in points],
                    "textposition": [p.position for p in points],
                    "textfont": {"size": LABEL_FONT_PX},
                    "marker": {
                        "symbol": symbol,
                        "size": 13,
                        "color": OPERATION_COLOR,
                        "line": {"color": OPERATION_COLOR if fusion == "unfused" else "white", "width": 1.5},
                    },
                    "name": legend_name(name),
                    "legendgroup": "operations",
                    "hovertext": [
                        _operation_hover(op, accelerators) + _neighbours(op, first, placed) for op in ops
                    ],
                    "hoverinfo": "text",
                }
            )

    if held:
        data += _measured_traces(held, accelerators, dtype)

    names = ", ".join(acc.name for acc in accelerators)
    x_axis = axis(X_TITLE, **decade_ticks(10**low, 10**high))
    x_axis["range"] = [low, high]
    y_axis = axis(Y_TITLE, **decade_ticks(10**y_low, 10**y_high))
    y_axis["range"] = [y_low, y_high]
    found_all = [r for found in all_roofs for r in found]
    legend_key = [f"{dtype} dense peaks", "○ and dotted line: ridge point"]
    if any(isinstance(r, ComputeRoof) and r.unit == "vector" for r in found_all):
        legend_key.append("long dashes: FP32 vector roof")
    if any(isinstance(r, MemoryRoof) and r.level == "l2" for r in found_all):
        legend_key.append("dots: L2 roof (measured)")
    if elsewhere:
        legend_key.append(
            f"measured {', '.join(elsewhere)} points are held to their own precision's roof, not drawn here"
        )
    detail = " · ".join(legend_key)
    layout = {
        "title": chart_title(title or f"Roofline: {names}", detail),
        "height": height,
        "xaxis": x_axis,
        "yaxis": y_axis,
    }
    return figure(data, layout)


def decode_batch_figure(
    spec: ModelSpec,
    accelerator: Accelerator,
    batches: Sequence[int],
    dtype: str = "bf16",
    context_tokens: int = 0,
    weight_fmt: str = "bf16",
    kv_fmt: str = "bf16",
    *,
    selected_batch: int | None = None,
    height: int = 700,
) -> Spec:
    """Decode step intensity (top panel) and predicted tokens/s (bottom panel) against the batch size.

    The top panel draws the ridge point of ``accelerator`` at ``dtype`` and, with context, the
    intensity limit as the batch grows (``decode_intensity_limit``). A vertical line marks the
    crossover batch from ``decode_crossover_batch`` (printed in its annotation), or the title
    says there is none. ``selected_batch`` (the page's slider) is highlighted on both panels.
    The panels are two y domains; the bottom x axis is ``xaxis2``. Returns a plain figure dict.
    Raises ValueError when the catalog has no dense ``dtype`` peak for ``accelerator``.
    """
    batch_list = sorted({int(b) for b in batches if int(b) >= 1})
    if selected_batch is not None and selected_batch >= 1:
        batch_list = sorted({*batch_list, int(selected_batch)})
    if not batch_list:
        raise ValueError("decode_batch_figure needs at least one batch size >= 1")
    peak = accelerator.peak_flops(dtype)
    bandwidth = accelerator.memory_bandwidth_bytes_per_s
    ridge = peak / bandwidth
    ops = [decode_step_op(spec, b, context_tokens, weight_fmt, kv_fmt, dtype=dtype) for b in batch_list]
    intensity = [op.intensity for op in ops]
    times = [op.time_s(peak, bandwidth) for op in ops]
    tokens_per_s = [b / t for b, t in zip(batch_list, times, strict=True)]
    hover = [
        f"batch {b}: {op.intensity:,.3g} FLOP/byte, {op.bound(peak, bandwidth)}-bound<br>"
        f"step {_time(t)}, {tps:,.0f} tokens/s, {op.attainable_flops(peak, bandwidth) / TERA:,.3g} TFLOP/s"
        f"<br>{op.note}"
        for b, op, t, tps in zip(batch_list, ops, times, tokens_per_s, strict=True)
    ]
    crossover = decode_crossover_batch(
        spec, accelerator, dtype, context_tokens, weight_fmt, kv_fmt, max_batch=max(1 << 20, batch_list[-1])
    )
    limit = decode_intensity_limit(spec, context_tokens, kv_fmt)
    top = {"xaxis": "x", "yaxis": "y"}
    bottom = {"xaxis": "x2", "yaxis": "y2"}
    data: list[dict[str, Any]] = [
        {
            "type": "scatter",
            **top,
            "x": batch_list,
            "y": intensity,
            "mode": "lines+markers",
            "name": legend_name("decode step intensity (FLOP/byte)"),
            "line": {"color": accelerator_color(0), "width": 3},
            "hovertext": hover,
            "hoverinfo": "text",
        },
        {
            "type": "scatter",
            **top,
            "x": [batch_list[0], batch_list[-1]],
            "y": [ridge, ridge],
            "mode": "lines",
            "name": legend_name(f"{accelerator.name} {dtype} ridge point: {ridge:,.0f} FLOP/byte"),
            "line": {"color": accelerator_color(1), "width": 2, "dash": "dash"},
            "hoverinfo": "name",
        },
    ]
    if math.isfinite(limit):
        data.append(
            {
                "type": "scatter",
                **top,
                "x": [batch_list[0], batch_list[-1]],
                "y": [limit, limit],
                "mode": "lines",
                "name": legend_name(f"limit as batch grows (KV cache per sequence): {limit:,.3g} FLOP/byte"),
                "line": {"color": accelerator_color(3), "width": 2, "dash": "dot"},
                "hoverinfo": "name",
            }
        )
    data.append(
        {
            "type": "scatter",
            **bottom,
            "x": batch_list,
            "y": tokens_per_s,
            "mode": "lines+markers",
            "name": legend_name("predicted tokens/s (batch ÷ step time)"),
            "line": {"color": accelerator_color(2), "width": 3},
            "hovertext": hover,
            "hoverinfo": "text",
        }
    )
    if selected_batch is not None and selected_batch >= 1:
        i = batch_list.index(int(selected_batch))
        for panel, values in ((top, intensity), (bottom, tokens_per_s)):
            data.append(
                {
                    "type": "scatter",
                    **panel,
                    "x": [batch_list[i]],
                    "y": [values[i]],
                    "mode": "markers",
                    "marker": {
                        "size": 18,
                        "color": OPERATION_COLOR,
                        "symbol": "circle-open",
                        "line": {"width": 3},
                    },
                    "name": f"selected batch {batch_list[i]}",
                    "showlegend": panel is top,
                    "legendgroup": "selected",
                    "hovertext": [hover[i]],
                    "hoverinfo": "text",
                }
            )
    annotations = []
    if crossover is not None:
        for panel, values in ((top, [*intensity, ridge]), (bottom, tokens_per_s)):
            data.append(
                {
                    "type": "scatter",
                    **panel,
                    "x": [crossover, crossover],
                    "y": [min(values), max(values)],
                    "mode": "lines",
                    "name": legend_name(f"crossover: compute-bound from batch {crossover:,}"),
                    "line": {"color": accelerator_color(4), "width": 2, "dash": "dashdot"},
                    "showlegend": panel is top,
                    "legendgroup": "crossover",
                    "hoverinfo": "name",
                }
            )
        to_left = math.log10(crossover) > (math.log10(batch_list[0]) + math.log10(batch_list[-1])) / 2
        annotations.append(
            {  # annotation positions on a log axis are log10 values
                "x": math.log10(crossover),
                "y": math.log10(ridge),
                "xref": "x",
                "yref": "y",
                "text": f"crossover: batch {crossover:,}",
                "showarrow": True,
                "arrowhead": 2,
                "ax": -40 if to_left else 40,
                "ay": -36,
                "xanchor": "right" if to_left else "left",
                "bgcolor": LABEL_BOX_BG,
                "font": {"color": LABEL_BOX_TEXT},
            }
        )
        verdict = f"crossover at batch {crossover:,}"
    else:
        verdict = (
            f"never compute-bound: intensity tops out at {limit:,.3g} < ridge {ridge:,.0f}"
            if math.isfinite(limit)
            else "no crossover within the searched batches"
        )
    name = spec.name or spec.family
    batch_ticks = decade_ticks(batch_list[0], batch_list[-1])
    layout = {
        "title": chart_title(
            f"{name} decode on {accelerator.name}: {verdict}", f"{dtype}, context {context_tokens:,} tokens"
        ),
        "height": height,
        "xaxis": axis("Batch size", anchor="y", matches="x2", **batch_ticks),
        "yaxis": axis(
            "Intensity (FLOP/byte)",
            domain=[0.57, 1.0],
            anchor="x",
            **decade_ticks(min([*intensity, ridge]), max([*intensity, ridge])),
        ),
        "xaxis2": axis("Batch size (sequences decoded together)", anchor="y2", **batch_ticks),
        "yaxis2": axis(
            "Tokens/s (all sequences)",
            domain=[0.0, 0.41],
            anchor="x2",
            **decade_ticks(min(tokens_per_s), max(tokens_per_s)),
        ),
        "annotations": annotations,
    }
    return figure(data, layout)
