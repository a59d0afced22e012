"""Plotly figures for the roofline page: the log-log roofline and the decode batch sweep.

Pure builders: model records in (``simulators.roofline``), ``go.Figure`` out; no Streamlit.
The model keeps FLOP/s and bytes/s; the charts show TFLOP/s (10^12 FLOP/s, dense) and TB/s.
Measured points (``MeasuredPoint``) from measure/ are drawn beside the predicted roofs, each
with its fraction of the roof in the hover.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import plotly.graph_objects as go
from plotly.subplots import make_subplots

from charts.palette import OKABE_ITO
from charts.style import apply_style
from simulators.hardware import Accelerator
from simulators.llm_memory import ModelSpec
from simulators.roofline import (
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


def _roof_peak(accelerator: Accelerator, dtype: str) -> float | None:
    """The roof measured points are held to: the tensor peak at ``dtype``, else vector FP32."""
    for candidate in (dtype, "fp32"):
        if accelerator.supports(candidate):
            return accelerator.peak_flops(candidate)
    return None


def _legend_name(label: str, accelerator: Accelerator) -> str:
    """A roof label without the accelerator's name: the legend group title already says it."""
    prefix = f"{accelerator.name} "
    return label[len(prefix) :] if label.startswith(prefix) else label


def _add_roofs(
    fig: go.Figure,
    accelerator: Accelerator,
    found: Sequence[Roof],
    color: str,
    x_low: float,
    x_high: float,
    *,
    achievable: bool,
) -> None:
    computes = [r for r in found if isinstance(r, ComputeRoof)]
    memories = [r for r in found if isinstance(r, MemoryRoof)]
    top = max((r.peak_flops for r in computes), default=None)
    device_bw = next((r.bandwidth_bytes_per_s for r in memories if r.level == "device"), None)
    group = f"{accelerator.id}-achievable" if achievable else accelerator.id
    for roof in memories:
        bw = roof.bandwidth_bytes_per_s
        x_end = min(top / bw, x_high) if top else x_high
        dash = "dash" if achievable else ("dot" if roof.level == "l2" else "solid")
        fig.add_scatter(
            x=[x_low, x_end],
            y=[x_low * bw / TERA, x_end * bw / TERA],
            mode="lines",
            name=f"{'L2' if roof.level == 'l2' else 'memory'} roof: {_legend_name(roof.label, accelerator)}",
            legendgroup=group,
            legendgrouptitle_text=f"{accelerator.name}{' (achievable)' if achievable else ''}",
            line={"color": color, "width": 2 if achievable or roof.level == "l2" else 3, "dash": dash},
            opacity=0.7 if achievable else 1.0,
            hovertemplate=(
                f"<b>{roof.label}</b><br>intensity %{{x:.3g}} FLOP/B<br>%{{y:.3g}} TFLOP/s<extra></extra>"
            ),
        )
    for roof in computes:
        x_start = roof.peak_flops / device_bw if device_bw else x_low
        if achievable:
            dash, width = "dash", 2
        else:
            dash, width = ("solid", 3) if roof.unit == "tensor" else ("longdash", 2)
        fig.add_scatter(
            x=[x_start, x_high],
            y=[roof.peak_flops / TERA] * 2,
            mode="lines",
            name=f"compute roof: {_legend_name(roof.label, accelerator)}",
            legendgroup=group,
            legendgrouptitle_text=f"{accelerator.name}{' (achievable)' if achievable else ''}",
            line={"color": color, "width": width, "dash": dash},
            opacity=0.7 if achievable else 1.0,
            hovertemplate=f"<b>{roof.label}</b><br>ridge at %{{x:.3g}} FLOP/B<extra></extra>",
        )


def _add_ridge(
    fig: go.Figure, accelerator: Accelerator, found: Sequence[Roof], color: str, index: int
) -> None:
    tensor = next((r for r in found if isinstance(r, ComputeRoof) and r.unit == "tensor"), None)
    if tensor is None:
        tensor = next((r for r in found if isinstance(r, ComputeRoof)), None)
    if tensor is None:
        return
    ridge = tensor.peak_flops / _device_bandwidth(found)
    fig.add_scatter(
        x=[ridge],
        y=[tensor.peak_flops / TERA],
        mode="markers",
        marker={"symbol": "circle-open", "size": 18, "color": color, "line": {"width": 3}},
        name=f"ridge point: {ridge:,.0f} FLOP/byte ({tensor.dtype})",
        legendgroup=accelerator.id,
        legendgrouptitle_text=accelerator.name,
        hovertemplate=(
            f"<b>{accelerator.name} ridge point</b><br>{ridge:,.1f} FLOP/byte = "
            f"{tensor.peak_flops / TERA:,.4g} TFLOP/s / {_device_bandwidth(found) / TERA:,.3g} TB/s"
            "<br>left: memory-bound, right: compute-bound<extra></extra>"
        ),
    )
    fig.add_annotation(
        x=math.log10(ridge),
        y=math.log10(tensor.peak_flops / TERA),
        text=f"ridge {ridge:,.0f} FLOP/B",
        showarrow=True,
        arrowhead=2,
        ax=30,
        ay=45 + 32 * index,
        xanchor="left",
        font={"color": color},
        bgcolor="rgba(255,255,255,0.8)",
    )


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


_TEXT_POSITIONS = ("bottom right", "top left")  # opposite sides of a rising or flat roof


def _add_operations(
    fig: go.Figure, operations: Sequence[Operation], accelerators: Sequence[Accelerator], labels: bool
) -> None:
    first = accelerators[0]
    # Neighbours in intensity get different label positions, so clustered labels overlap less.
    order = sorted(range(len(operations)), key=lambda i: operations[i].intensity)
    position = {i: _TEXT_POSITIONS[rank % len(_TEXT_POSITIONS)] for rank, i in enumerate(order)}
    for kind, description in KINDS.items():
        indices = [i for i, op in enumerate(operations) if op.kind == kind]
        if not indices:
            continue
        ops = [operations[i] for i in indices]
        ys = []
        for op in ops:
            prediction = predict(op, first)
            flops = (
                prediction.attainable_flops
                if prediction
                else op.intensity * first.memory_bandwidth_bytes_per_s
            )
            ys.append(flops / TERA)
        fig.add_scatter(
            x=[op.intensity for op in ops],
            y=ys,
            mode="markers+text" if labels else "markers",
            text=[op.short_label for op in ops],
            textposition=[position[i] for i in indices],
            textfont={"size": 14},
            marker={
                "symbol": KIND_SYMBOLS[kind],
                "size": 14,
                "color": OPERATION_COLOR,
                "line": {"color": "white", "width": 1},
            },
            name=description,
            legendgroup="operations",
            legendgrouptitle_text=f"Operations (on the {first.name} roof)",
            hovertext=[_operation_hover(op, accelerators) for op in ops],
            hoverinfo="text",
        )


def _add_measured(
    fig: go.Figure, measured: Sequence[MeasuredPoint], accelerators: Sequence[Accelerator], dtype: str
) -> None:
    by_id = {acc.id: (i, acc) for i, acc in enumerate(accelerators)}
    for point in measured:
        index, acc = by_id.get(point.accelerator_id or "", (0, accelerators[0]))
        peak = _roof_peak(acc, dtype)
        lines = [
            f"<b>measured: {point.name}</b>",
            f"intensity {point.intensity:,.3g} FLOP/byte",
            f"achieved {point.achieved_flops / TERA:,.3g} TFLOP/s",
        ]
        if peak is not None:
            roof = attainable_flops(point.intensity, peak, acc.memory_bandwidth_bytes_per_s)
            fraction = point.fraction_of_roof(peak, acc.memory_bandwidth_bytes_per_s)
            lines.append(f"{acc.name} roof here: {roof / TERA:,.3g} TFLOP/s; achieved = {fraction:.0%} of it")
        if point.note:
            lines.append(point.note)
        fig.add_scatter(
            x=[point.intensity],
            y=[point.achieved_flops / TERA],
            mode="markers",
            marker={
                "symbol": MEASURED_SYMBOL,
                "size": 18,
                "color": accelerator_color(index),
                "line": {"color": "black", "width": 1.5},
            },
            name=point.name,
            legendgroup="measured",
            legendgrouptitle_text="Measured",
            hovertext=["<br>".join(lines)],
            hoverinfo="text",
        )


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
) -> go.Figure:
    """Log-log roofline for one or more accelerators, with operations and measured points.

    Per accelerator (one colour each): the tensor roof at ``dtype`` (solid) and the vector FP32
    roof (long dashes), the device-memory roof (solid slope) and, where a measured L2 bandwidth
    is sourced, an L2 roof (dotted); the ridge point (open circle, annotated). With
    ``show_achievable``, dashed ceilings at 80% of the tensor peak and 90% of the bandwidth
    (``simulators.roofline.achievable_roofs``). Operations are black markers, one shape per kind,
    placed on the first accelerator's roof; their hover gives FLOPs, bytes, intensity, bound and
    predicted time on every accelerator shown. Measured points are stars with their fraction of
    the roof (tensor peak at ``dtype``) in the hover.
    """
    if not accelerators:
        raise ValueError("roofline_figure needs at least one accelerator")
    all_roofs = [roofs(acc, dtype) for acc in accelerators]
    ridges = [
        r.peak_flops / _device_bandwidth(found)
        for found in all_roofs
        for r in found
        if isinstance(r, ComputeRoof)
    ]
    intensities = [op.intensity for op in operations if op.intensity > 0]
    intensities += [p.intensity for p in measured]
    low, high = _log_range([1.0, 1000.0, *ridges, *intensities], pad_decades=0.6)
    x_low, x_high = 10**low, 10**high

    fig = go.Figure()
    for index, (acc, found) in enumerate(zip(accelerators, all_roofs, strict=True)):
        color = accelerator_color(index)
        _add_roofs(fig, acc, found, color, x_low, x_high, achievable=False)
        if show_achievable:
            _add_roofs(fig, acc, achievable_roofs(acc, dtype), color, x_low, x_high, achievable=True)
        _add_ridge(fig, acc, found, color, index)
    _add_operations(fig, operations, accelerators, labels)
    if measured:
        _add_measured(fig, measured, accelerators, dtype)

    peaks = [r.peak_flops for found in all_roofs for r in found if isinstance(r, ComputeRoof)]
    bandwidths = [r.bandwidth_bytes_per_s for found in all_roofs for r in found if isinstance(r, MemoryRoof)]
    y_values = [x_low * min(bandwidths) / TERA, *(p / TERA for p in peaks)]
    y_values += [p.achieved_flops / TERA for p in measured]
    if not peaks:
        y_values.append(x_high * max(bandwidths) / TERA)
    y_low, y_high = _log_range(y_values, pad_decades=0.2)
    names = ", ".join(acc.name for acc in accelerators)
    fig.update_layout(
        title=title or f"Roofline: {names}, {dtype} dense peaks",
        height=height,
        legend={"x": 1.02, "y": 1, "xanchor": "left", "yanchor": "top", "groupclick": "toggleitem"},
        hovermode="closest",
    )
    fig.update_xaxes(type="log", title_text=X_TITLE, range=[low, high], dtick=1)
    fig.update_yaxes(type="log", title_text=Y_TITLE, range=[y_low, y_high], dtick=1)
    return apply_style(fig)


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
) -> go.Figure:
    """Decode step intensity (top) and predicted tokens/s (bottom) against the batch size.

    The top panel draws the ridge point of ``accelerator`` at ``dtype`` and, with context, the
    intensity limit as the batch grows (``decode_intensity_limit``). A vertical line marks the
    crossover batch from ``decode_crossover_batch`` (printed in its annotation), or the title
    says there is none. ``selected_batch`` (the page's slider) is highlighted on both panels.
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

    fig = make_subplots(rows=2, cols=1, shared_xaxes=True, vertical_spacing=0.08)
    fig.add_scatter(
        x=batch_list,
        y=intensity,
        mode="lines+markers",
        name="decode step intensity (FLOP/byte)",
        line={"color": accelerator_color(0), "width": 3},
        hovertext=hover,
        hoverinfo="text",
        row=1,
        col=1,
    )
    fig.add_scatter(
        x=[batch_list[0], batch_list[-1]],
        y=[ridge, ridge],
        mode="lines",
        name=f"{accelerator.name} {dtype} ridge point: {ridge:,.0f} FLOP/byte",
        line={"color": accelerator_color(1), "width": 2, "dash": "dash"},
        row=1,
        col=1,
    )
    if math.isfinite(limit):
        fig.add_scatter(
            x=[batch_list[0], batch_list[-1]],
            y=[limit, limit],
            mode="lines",
            name=f"limit as batch grows (KV cache per sequence): {limit:,.3g} FLOP/byte",
            line={"color": accelerator_color(3), "width": 2, "dash": "dot"},
            row=1,
            col=1,
        )
    fig.add_scatter(
        x=batch_list,
        y=tokens_per_s,
        mode="lines+markers",
        name="predicted tokens/s (batch / step time)",
        line={"color": accelerator_color(2), "width": 3},
        hovertext=hover,
        hoverinfo="text",
        row=2,
        col=1,
    )
    if selected_batch is not None and selected_batch >= 1:
        i = batch_list.index(int(selected_batch))
        for row, values in ((1, intensity), (2, tokens_per_s)):
            fig.add_scatter(
                x=[batch_list[i]],
                y=[values[i]],
                mode="markers",
                marker={"size": 18, "color": OPERATION_COLOR, "symbol": "circle-open", "line": {"width": 3}},
                name=f"selected batch {batch_list[i]}",
                showlegend=row == 1,
                legendgroup="selected",
                hovertext=[hover[i]],
                hoverinfo="text",
                row=row,
                col=1,
            )
    if crossover is not None:
        # A trace per panel rather than add_vline: shapes and annotations read log axes differently.
        for row, values in ((1, [*intensity, ridge]), (2, tokens_per_s)):
            fig.add_scatter(
                x=[crossover, crossover],
                y=[min(values), max(values)],
                mode="lines",
                name=f"crossover: compute-bound from batch {crossover:,}",
                line={"color": accelerator_color(4), "width": 2, "dash": "dashdot"},
                showlegend=row == 1,
                legendgroup="crossover",
                hoverinfo="name",
                row=row,
                col=1,
            )
        fig.add_annotation(  # annotation positions on a log axis are log10 values
            x=math.log10(crossover),
            y=math.log10(ridge),
            xref="x",
            yref="y",
            text=f"crossover: batch {crossover:,}",
            showarrow=True,
            arrowhead=2,
            ax=-80,
            ay=-40,
            bgcolor="rgba(255,255,255,0.85)",
        )
        verdict = f"crossover at batch {crossover:,}"
    else:
        verdict = (
            f"never compute-bound: intensity tops out at {limit:,.3g} < ridge {ridge:,.0f}"
            if math.isfinite(limit)
            else "no crossover within the searched batches"
        )
    name = spec.name or spec.family
    fig.update_layout(
        title=(f"{name} decode on {accelerator.name}, {dtype}, context {context_tokens:,} tokens: {verdict}"),
        height=height,
        legend={"orientation": "h", "yanchor": "top", "y": -0.12, "x": 0},
        hovermode="closest",
    )
    fig.update_xaxes(type="log", row=1, col=1)
    fig.update_xaxes(type="log", title_text="Batch size (sequences decoded together)", row=2, col=1)
    fig.update_yaxes(type="log", title_text="Intensity (FLOP/byte)", row=1, col=1)
    fig.update_yaxes(type="log", title_text="Tokens/s (all sequences)", row=2, col=1)
    return apply_style(fig)
