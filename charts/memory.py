"""Memory charts for the "Will it fit?" calculator: stacked parts against a GPU's capacity, and
the time one decode step spends reading memory against the time its arithmetic takes.

Pure builders returning plain Plotly figure dicts (charts/style.py)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from charts.palette import OKABE_ITO
from charts.style import LABEL_BOX_BG, LABEL_FONT_PX, Spec, axis, figure, legend_name, narrow_fraction, wrap
from charts.style import title as chart_title

# One colour per memory part, the same on every chart (Okabe-Ito, colour-blind safe).
PART_COLOURS: dict[str, str] = {
    "weights": OKABE_ITO[0],
    "frozen_weights": OKABE_ITO[4],
    "kv_cache": OKABE_ITO[1],
    "gradients": OKABE_ITO[3],
    "optimizer": OKABE_ITO[5],
    "activations": OKABE_ITO[2],
    "attention_scores": OKABE_ITO[6],  # eager attention's score matrix: yellow, outlined below
    "overhead": "#999999",
    "cuda_graphs": "#555555",  # vLLM's CUDA-graph pool: a darker grey than the non-torch part
    "measured": OKABE_ITO[7],
}
FALLBACK_COLOUR = "#BBBBBB"
CAPACITY_COLOUR = OKABE_ITO[5]
BUDGET_COLOUR = OKABE_ITO[0]
MEMORY_TIME_COLOUR = OKABE_ITO[0]
COMPUTE_TIME_COLOUR = OKABE_ITO[2]
ROW_LABEL_CHARS = 18


def _vline(x: float, colour: str, dash: str) -> dict[str, Any]:
    return {
        "type": "line",
        "xref": "x",
        "x0": x,
        "x1": x,
        "yref": "paper",
        "y0": 0,
        "y1": 1,
        "line": {"color": colour, "width": 3, "dash": dash},
    }


def _line_label(x: float, right_end: float, text: str, colour: str, *, top: bool) -> dict[str, Any]:
    """A label inside the plot beside a vertical line at ``x``, at its top or bottom end: to the
    right of the line where it fits a phone-width plot (x axis from 0 to ``right_end``), else left."""
    text = wrap(text, 28)
    right_side = x / right_end + narrow_fraction(text) < 0.98
    return {
        "xref": "x",
        "x": x,
        "xanchor": "left" if right_side else "right",
        "xshift": 4 if right_side else -4,
        "yref": "paper",
        "y": 1 if top else 0,
        "yanchor": "top" if top else "bottom",
        "text": text,
        "showarrow": False,
        "font": {"color": colour, "size": LABEL_FONT_PX},
        "bgcolor": LABEL_BOX_BG,
    }


def memory_bars(
    rows: Sequence[tuple[str, object]],
    capacity_bytes: float | None = None,
    capacity_label: str = "",
    measured: Sequence[tuple[str, float]] = (),
    title: str = "",
    budget_bytes: float | None = None,
    budget_label: str = "",
) -> Spec:
    """Horizontal stacked bars, one per (label, MemoryBreakdown), in GB, with a capacity line.

    Hover shows each part in GB (10⁹ bytes) and GiB (2³⁰ bytes). ``measured`` adds a marker per
    (row label, bytes) so a measured peak can sit beside the prediction. The capacity (dashed)
    and the engine's budget (dotted) are vertical lines labelled inside the plot, at its top and
    bottom, so their labels never meet the title or the legend.
    """
    labels = [wrap(label, ROW_LABEL_CHARS) for label, _ in rows]
    data: list[dict[str, Any]] = []
    seen: set[str] = set()
    totals = []
    for (_, breakdown), row in zip(rows, labels, strict=True):
        total = 0.0
        for part in breakdown.parts:  # type: ignore[attr-defined]
            if part.bytes <= 0:
                continue
            total += part.bytes
            colour = PART_COLOURS.get(part.key, FALLBACK_COLOUR)
            data.append(
                {
                    "type": "bar",
                    "y": [row],
                    "x": [part.bytes / 1e9],
                    "orientation": "h",
                    "name": legend_name(part.label),
                    "legendgroup": part.key,
                    "showlegend": part.key not in seen,
                    "marker": {"color": colour, "line": {"color": "rgba(0,0,0,0.45)", "width": 1}},
                    "customdata": [[part.bytes / 2**30, part.explanation]],
                    "hovertemplate": (
                        f"<b>{part.label}</b><br>%{{x:,.2f}} GB = %{{customdata[0]:,.2f}} GiB"
                        "<br>%{customdata[1]}<extra></extra>"
                    ),
                }
            )
            seen.add(part.key)
        totals.append(total)
    if measured:
        data.append(
            {
                "type": "scatter",
                "y": [wrap(label, ROW_LABEL_CHARS) for label, _ in measured],
                "x": [b / 1e9 for _, b in measured],
                "mode": "markers",
                "marker": {"symbol": "diamond", "size": 16, "color": PART_COLOURS["measured"]},
                "name": "Measured peak",
                "hovertemplate": "Measured: %{x:,.2f} GB<extra></extra>",
            }
        )
    shapes, annotations = [], []
    right_end = max([*totals, *(b for _, b in measured), capacity_bytes or 0, budget_bytes or 0, 1.0]) / 1e9
    if capacity_bytes:
        x = capacity_bytes / 1e9
        shapes.append(_vline(x, CAPACITY_COLOUR, "dash"))
        annotations.append(
            _line_label(
                x, right_end * 1.08, capacity_label or f"capacity {x:,.0f} GB", CAPACITY_COLOUR, top=True
            )
        )
    if budget_bytes:
        x = budget_bytes / 1e9
        shapes.append(_vline(x, BUDGET_COLOUR, "dot"))
        annotations.append(
            _line_label(
                x, right_end * 1.08, budget_label or f"engine budget {x:,.0f} GB", BUDGET_COLOUR, top=False
            )
        )
    layout = {
        "title": chart_title(title or "Memory per GPU", "Stacked parts; hover a part for GB, GiB and why"),
        "height": 330 + 60 * len(rows),
        "barmode": "stack",
        "bargap": 0.45,  # room above and below the bars for the line labels
        "xaxis": axis("Memory per GPU (GB = 10⁹ bytes)", range=[0, right_end * 1.08]),
        "yaxis": axis(
            "Per GPU",
            type="category",
            categoryorder="array",
            categoryarray=list(reversed(labels)),
        ),
        "shapes": shapes,
        "annotations": annotations,
    }
    return figure(data, layout)


_TIME_UNITS = ((1.0, "s"), (1e-3, "ms"), (1e-6, "µs"), (1e-9, "ns"))


def _time_unit(seconds: float) -> tuple[float, str]:
    for size, unit in _TIME_UNITS:
        if seconds >= size * 0.9995:
            return size, unit
    return 1e-9, "ns"


def _time_text(seconds: float) -> str:
    size, unit = _time_unit(seconds)
    return f"{seconds / size:,.3g} {unit}"


def decode_time_figure(memory_time_s: float, compute_time_s: float, *, label: str = "") -> Spec:
    """Time per decode step to stream the bytes from memory vs to do the FLOPs, as two bars.

    ``memory_time_s`` = bytes read per step ÷ memory bandwidth and ``compute_time_s`` = FLOPs
    per step ÷ dense peak (``llm_speed.decode_step``); the step takes the longer of the two
    (the roofline bound). Both bars share one linear time axis, so a compute bar hundreds of times
    shorter than the memory bar is drawn that much shorter; each bar prints its time with units.
    The title says which one sets the pace and by what factor. ``label`` (model, GPU, batch) goes
    under the title.
    """
    for name, value in (("memory_time_s", memory_time_s), ("compute_time_s", compute_time_s)):
        if not (math.isfinite(value) and value >= 0):
            raise ValueError(f"{name} must be a finite time >= 0, got {value!r}")
    longest = max(memory_time_s, compute_time_s)
    if longest == 0:
        raise ValueError("both times are zero: nothing to compare")
    size, unit = _time_unit(longest)
    rows = [
        ("Read the bytes from memory (weights + KV cache)", memory_time_s, MEMORY_TIME_COLOUR),
        ("Do the math (FLOPs at the dense peak)", compute_time_s, COMPUTE_TIME_COLOUR),
    ]
    names = [wrap(text, ROW_LABEL_CHARS) for text, _, _ in rows]
    data = [
        {
            "type": "bar",
            "orientation": "h",
            "y": [row_name],
            "x": [seconds / size],
            "name": legend_name(f"{text}: {_time_text(seconds)}"),
            "marker": {"color": colour},
            "text": [_time_text(seconds)],
            "textposition": "outside",
            "textfont": {"size": LABEL_FONT_PX + 3},
            "cliponaxis": False,
            "hovertemplate": f"<b>{text}</b><br>{_time_text(seconds)} per decode step<extra></extra>",
        }
        for (text, seconds, colour), row_name in zip(rows, names, strict=True)
    ]
    if memory_time_s == compute_time_s or min(memory_time_s, compute_time_s) == 0:
        ratio_text = ""
    else:
        ratio = longest / min(memory_time_s, compute_time_s)
        other = "compute" if memory_time_s > compute_time_s else "memory"
        ratio_text = (
            f", {ratio:,.0f}× the {other} time" if ratio >= 10 else f", {ratio:,.2g}× the {other} time"
        )
    if math.isclose(memory_time_s, compute_time_s, rel_tol=0.01):
        headline = "Balanced: memory and math take about as long"
    elif memory_time_s > compute_time_s:
        headline = f"Memory sets the pace: {_time_text(memory_time_s)} per step{ratio_text}"
    else:
        headline = f"Compute sets the pace: {_time_text(compute_time_s)} per step{ratio_text}"
    layout = {
        "title": chart_title(headline, label or "One decode step: the slower of the two decides its time"),
        "height": 380,
        "bargap": 0.35,
        "showlegend": False,
        "xaxis": axis(f"Time per decode step ({unit})", range=[0, longest / size * 1.3], rangemode="tozero"),
        "yaxis": axis("Per decode step", type="category", autorange="reversed"),
    }
    return figure(data, layout)


KIND_COLOURS = (OKABE_ITO[1], OKABE_ITO[2], OKABE_ITO[4], OKABE_ITO[6])
NAIVE_COLOUR = "#555555"


def _context_text(tokens: int) -> str:
    return f"{tokens // 1024:,}k" if tokens >= 1024 and tokens % 1024 == 0 else f"{tokens:,}"


def cache_by_kind_figure(
    contexts: Sequence[int],
    parts: dict[str, Sequence[float]],
    layers: dict[str, int],
    naive: Sequence[float],
    *,
    model: str = "",
    capacity_bytes: float | None = None,
) -> Spec:
    """The cache against the context, stacked by layer kind (``llm_memory.kv_cache_by_kind``), with
    the "every layer keeps every token" formula as a dashed line and, if given, the GPU's capacity.

    Full-attention layers grow with the context; sliding-window layers stop at their window; the
    gap between the stack and the dashed line is what a formula that ignores the windows gets
    wrong. Contexts on a log axis, bytes in GB (10⁹ bytes).
    """
    if not contexts or not parts:
        raise ValueError("nothing to draw: give contexts and at least one part")
    xs = list(contexts)
    data: list[dict[str, Any]] = []
    for index, (kind, values) in enumerate(parts.items()):
        count = layers.get(kind, 0)
        data.append(
            {
                "type": "scatter",
                "x": xs,
                "y": [v / 1e9 for v in values],
                "mode": "lines",
                "stackgroup": "cache",
                "line": {"color": KIND_COLOURS[index % len(KIND_COLOURS)], "width": 2},
                "name": legend_name(f"{kind}: {count} layer{'s' if count != 1 else ''}"),
                "hovertemplate": (
                    f"<b>{kind}</b> ({count} layers)<br>%{{x:,}} tokens: %{{y:,.2f}} GB<extra></extra>"
                ),
            }
        )
    data.append(
        {
            "type": "scatter",
            "x": xs,
            "y": [v / 1e9 for v in naive],
            "mode": "lines",
            "line": {"color": NAIVE_COLOUR, "width": 2, "dash": "dash"},
            "name": legend_name(
                "if every layer were full attention (the formula that ignores windows and states)"
            ),
            "hovertemplate": "<b>every layer, every token</b><br>%{x:,} tokens: %{y:,.2f} GB<extra></extra>",
        }
    )
    total_last = sum(values[-1] for values in parts.values())
    longest = xs[-1]
    if naive[-1] > total_last * 1.01:
        headline = (
            f"At {_context_text(longest)} tokens the cache is {total_last / 1e9:,.1f} GB, "
            f"not the {naive[-1] / 1e9:,.1f} GB of a formula that treats every layer as full attention"
        )
    else:
        headline = (
            f"At {_context_text(longest)} tokens the cache is {total_last / 1e9:,.1f} GB: "
            "every layer keeps every token"
        )
    shapes = []
    data_top = max([*naive, total_last]) / 1e9
    detail = model or "KV cache of one sequence by layer kind"
    if capacity_bytes and capacity_bytes / 1e9 <= 2 * data_top:
        shapes.append(
            {
                "type": "line",
                "xref": "paper",
                "x0": 0,
                "x1": 1,
                "yref": "y",
                "y0": capacity_bytes / 1e9,
                "y1": capacity_bytes / 1e9,
                "line": {"color": CAPACITY_COLOUR, "width": 2, "dash": "dot"},
            }
        )
        data.append(
            {
                "type": "scatter",
                "x": [xs[0]],
                "y": [capacity_bytes / 1e9],
                "mode": "markers",
                "marker": {"color": CAPACITY_COLOUR, "size": 1},
                "name": legend_name(f"GPU capacity: {capacity_bytes / 1e9:,.0f} GB (dotted)"),
                "hoverinfo": "skip",
            }
        )
        data_top = max(data_top, capacity_bytes / 1e9)
    elif capacity_bytes:
        detail += f" · the GPU's {capacity_bytes / 1e9:,.0f} GB is far above this scale"
    layout = {
        "title": chart_title(headline, detail),
        "height": 460,
        "shapes": shapes,
        "xaxis": axis(
            "Context (tokens, log scale)", type="log", tickvals=xs, ticktext=[_context_text(x) for x in xs]
        ),
        "yaxis": axis("Cache (GB, 10⁹ bytes)", range=[0, data_top * 1.1], rangemode="tozero"),
    }
    return figure(data, layout)
