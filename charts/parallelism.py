"""Charts for the parallelism simulator: the GPU grid, the pipeline Gantt chart, memory per stage
and communication against compute. Each takes results of ``simulators.parallelism`` and returns a
plain Plotly figure dict (charts/style.py)."""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from typing import Any

from charts.contrast import TEXT_ON_CELLS, contrast
from charts.memory import memory_bars
from charts.palette import OKABE_ITO
from charts.style import LABEL_FONT_PX, Spec, axis, figure, legend_name, wrap
from charts.style import title as chart_title
from simulators.llm_memory import MemoryBreakdown, ModelSpec
from simulators.parallelism import (
    CommTerm,
    GpuRole,
    Layout,
    Slot,
    StepTime,
    gpu_roles,
    megatron_bubble_ratio,
    schedule_idle_fraction,
    schedule_idle_intervals,
)

IDLE_COLOUR = "#BBBBBB"
FORWARD_COLOUR = OKABE_ITO[0]  # blue
BACKWARD_COLOUR = OKABE_ITO[1]  # orange
COMPUTE_COLOUR = OKABE_ITO[2]  # bluish green
INTRA_NODE_COLOUR = OKABE_ITO[4]  # sky blue
NETWORK_COLOUR = OKABE_ITO[5]  # vermillion
COLOUR_BY = ("pp", "tp", "dp", "zero", "role")
_DISCRETE_LIMIT = len(OKABE_ITO)
ROW_LABEL_CHARS = 22
# Viridis (colour-blind safe) for more groups than the palette has colours.
VIRIDIS = [
    [0.0, "#440154"],
    [0.25, "#3B528B"],
    [0.5, "#21908C"],
    [0.75, "#5DC963"],
    [1.0, "#FDE725"],
]


def _category(role: GpuRole, colour_by: str) -> tuple[int, str]:
    """(sort key, legend label) of the group a GPU falls in."""
    if colour_by == "pp":
        label = f"PP stage {role.pp_stage + 1}"
        if role.layers != (0, 0):
            label += f": layers {role.layers[0]}–{role.layers[1] - 1}"
        return role.pp_stage, label
    if colour_by == "tp":
        return role.tp_rank, f"TP shard {role.tp_rank + 1} of {role.tp} (1/{role.tp} of each matrix)"
    if colour_by == "dp":
        return role.dp_rank, f"DP replica {role.dp_rank + 1} of {role.dp}"
    if colour_by == "zero":
        if role.zero_shard is None:
            return 0, "No ZeRO: every DP rank holds the full optimizer state"
        return role.zero_shard, f"ZeRO-{role.zero_stage} shard {role.zero_shard + 1} of {role.dp}"
    # "role": GPUs with the same weights (same stage, same TP shard) share a colour.
    key = role.pp_stage * role.tp + role.tp_rank
    return key, f"Stage {role.pp_stage + 1}, TP shard {role.tp_rank + 1}: same weights"


_LETTERS = {
    "pp": "S1, S2 …: its pipeline stage",
    "tp": "T1, T2 …: its tensor-parallel shard",
    "dp": "D1, D2 …: its data-parallel replica",
    "zero": "Z1, Z2 …: its ZeRO shard",
    "role": "S1T1 …: its stage and TP shard",
}


def _group_mark(role: GpuRole, colour_by: str) -> str:
    """The group a cell belongs to, in letters, so it is never told by colour alone: "S2" (PP
    stage 2), "T1", "D3", "Z1" (ZeRO shard; "–" without ZeRO), "S2T1" (same weights)."""
    if colour_by == "pp":
        return f"S{role.pp_stage + 1}"
    if colour_by == "tp":
        return f"T{role.tp_rank + 1}"
    if colour_by == "dp":
        return f"D{role.dp_rank + 1}"
    if colour_by == "zero":
        return "–" if role.zero_shard is None else f"Z{role.zero_shard + 1}"
    return f"S{role.pp_stage + 1}T{role.tp_rank + 1}"


def _label_colour(cell: str) -> str:
    """Black or white, whichever reads better on ``cell`` (each Okabe-Ito and Viridis colour gets
    at least 4.5:1 this way; Plotly's own pick left 48 of 64 cell numbers at 3.2-4.3:1)."""
    return max(("#000000", "#FFFFFF"), key=lambda text: contrast(text, cell))


def _scale_colour(scale: Sequence[Sequence[Any]], fraction: float) -> str:
    """The colour a continuous scale gives ``fraction`` (0-1), interpolated in RGB as Plotly does."""
    for (f0, c0), (f1, c1) in itertools.pairwise(scale):
        if f0 <= fraction <= f1:
            t = 0.0 if f1 == f0 else (fraction - f0) / (f1 - f0)
            a = [int(c0[i : i + 2], 16) for i in (1, 3, 5)]
            b = [int(c1[i : i + 2], 16) for i in (1, 3, 5)]
            return "#" + "".join(f"{round(x + (y - x) * t):02X}" for x, y in zip(a, b, strict=True))
    return str(scale[-1][1])


def _stepped_colorscale(colours: Sequence[str]) -> list[list[Any]]:
    """A colour scale with one flat step per colour, for integer z from 0 to len - 1."""
    n = len(colours)
    scale: list[list[Any]] = []
    for i, colour in enumerate(colours):
        scale += [[i / n, colour], [(i + 1) / n, colour]]
    return scale


def gpu_grid_figure(layout: Layout, colour_by: str = "pp", spec: ModelSpec | None = None) -> Spec:
    """One cell per GPU, a row per node, coloured by what the GPU holds.

    ``colour_by``: "pp" (pipeline stage: which layers), "tp" (which slice of each weight matrix),
    "dp" (which data-parallel replica), "zero" (which ZeRO shard of the optimizer state, and of
    gradients and parameters at stages 2 and 3) or "role" (GPUs with the same colour hold the
    same weights: DP replicas of one stage and TP shard). Hover text lists every rank and what
    the GPU holds. Up to eight groups get Okabe-Ito colours and a legend; more get the Viridis
    scale (also colour-blind safe) with a colour bar. The cells are a heatmap, so they keep to
    the chart's width on a phone; each shows its global rank while there are at most 256 GPUs.
    """
    if colour_by not in COLOUR_BY:
        raise ValueError(f"colour_by must be one of {list(COLOUR_BY)}, got {colour_by!r}")
    roles = gpu_roles(layout, spec)
    categories: dict[int, str] = {}
    for role in roles:
        key, label = _category(role, colour_by)
        categories.setdefault(key, label)
    keys = sorted(categories)
    index_of = {key: i for i, key in enumerate(keys)}
    discrete = len(categories) <= _DISCRETE_LIMIT
    show_text = layout.n_gpus <= 256
    z: list[list[float | None]] = [[None] * layout.gpus_per_node for _ in range(layout.nodes)]
    text: list[list[str]] = [[""] * layout.gpus_per_node for _ in range(layout.nodes)]
    hover: list[list[str]] = [[""] * layout.gpus_per_node for _ in range(layout.nodes)]
    marks: dict[tuple[int, int], str] = {}
    for r in roles:
        key, label = _category(r, colour_by)
        z[r.node][r.local_index] = float(index_of[key] if discrete else key)
        text[r.node][r.local_index] = str(r.rank) if show_text else ""
        marks[(r.node, r.local_index)] = _group_mark(r, colour_by)
        hover[r.node][r.local_index] = (
            f"<b>GPU {r.rank}</b> (node {r.node}, GPU {r.local_index})<br>"
            f"DP rank {r.dp_rank} · TP rank {r.tp_rank} · PP stage {r.pp_stage}<br>{label}<br>"
            + r.holds.replace("; ", "<br>")
        )
    heatmap: dict[str, Any] = {
        "type": "heatmap",
        "x": list(range(layout.gpus_per_node)),
        "y": list(range(layout.nodes)),
        "z": z,
        "text": text,  # drawn by the label trace below, each in its own cell's best colour
        "hovertext": hover,
        "hoverinfo": "text",
        "xgap": 2,
        "ygap": 2,
        "name": "GPU",
        "showlegend": False,
    }
    data: list[dict[str, Any]] = [heatmap]
    if discrete:
        colours = [OKABE_ITO[i] for i in range(len(keys))]
        heatmap |= {
            "colorscale": _stepped_colorscale(colours),
            "zmin": -0.5,
            "zmax": len(keys) - 0.5,
            "showscale": False,
        }
        for i, key in enumerate(keys):  # legend entries: one square per group
            data.append(
                {
                    "type": "scatter",
                    "x": [None],
                    "y": [None],
                    "mode": "markers",
                    "marker": {"symbol": "square", "size": 14, "color": colours[i]},
                    "name": legend_name(categories[key]),
                    "hoverinfo": "skip",
                }
            )
    else:
        bar_title = {"pp": "PP stage", "tp": "TP rank", "dp": "DP rank", "zero": "ZeRO shard"}.get(
            colour_by, "Stage × TP shard"
        )
        heatmap |= {
            "colorscale": VIRIDIS,
            "showscale": True,
            "colorbar": {"title": {"text": bar_title}, "thickness": 14, "len": 0.9},
        }
    if show_text:
        values = [v for row in z for v in row if v is not None]
        low, high = min(values), max(values)
        grid = [(n, i) for n in range(layout.nodes) for i in range(layout.gpus_per_node)]
        cells = [(n, i) for n, i in grid if z[n][i] is not None]

        def cell_colour(value: float) -> str:
            if discrete:
                return colours[int(value)]
            return _scale_colour(VIRIDIS, 0.0 if high == low else (value - low) / (high - low))

        data.append(
            {
                "type": "scatter",
                "mode": "text",
                "x": [i for _, i in cells],
                "y": [n for n, _ in cells],
                "text": [f"{text[n][i]}<br>{marks[(n, i)]}" for n, i in cells],
                "textfont": {
                    "size": 12 if layout.gpus_per_node <= 8 else 9,
                    "color": [_label_colour(cell_colour(z[n][i])) for n, i in cells],
                },
                "hoverinfo": "skip",
                "showlegend": False,
                "name": "GPU labels",
                "meta": TEXT_ON_CELLS,
            }
        )
    what = {
        "pp": "pipeline stage",
        "tp": "tensor-parallel shard",
        "dp": "data-parallel replica",
        "zero": "ZeRO shard",
        "role": "weights held",
    }[colour_by]
    spec_layout = {
        "title": chart_title(
            f"{layout.n_gpus} GPUs = DP {layout.dp} × TP {layout.tp} × PP {layout.pp}",
            f"Coloured by {what}; in each cell its global rank and {_LETTERS[colour_by]}",
        ),
        "height": min(1000, 230 + 34 * layout.nodes + 10 * (len(keys) if discrete else 0)),
        "xaxis": axis("GPU within the node (local index)", dtick=1, showgrid=False, zeroline=False),
        "yaxis": axis("Node", dtick=1, autorange="reversed", showgrid=False, zeroline=False),
        "plot_bgcolor": "rgba(0,0,0,0)",
    }
    return figure(data, spec_layout)


def pipeline_gantt_figure(slots: Sequence[Slot], schedule_name: str = "", title: str = "") -> Spec:
    """Bars of forward and backward passes per stage, idle time hatched, the bubble in the title.

    ``slots`` from ``simulators.parallelism.pipeline_schedule``. The title gives the idle
    fraction measured on the schedule, which equals (p − 1)/(m + p − 1), and Megatron's
    bubble ratio (p − 1)/m. A stage is one GPU or one tensor-parallel group. Micro-batch numbers
    sit inside the bars where they fit at a readable size; Plotly hides those it would have to
    shrink.
    """
    if not slots:
        raise ValueError("no passes to draw: the schedule is empty")
    stages = 1 + max(s.stage for s in slots)
    microbatches = 1 + max(s.microbatch for s in slots)
    label = [f"Stage {s + 1}" for s in range(stages)]
    show_text = len(slots) <= 400
    data: list[dict[str, Any]] = []
    for phase, colour, name in (
        ("forward", FORWARD_COLOUR, "Forward pass (number: micro-batch)"),
        ("backward", BACKWARD_COLOUR, "Backward pass (2 × forward)"),
    ):
        chosen = [s for s in slots if s.phase == phase]
        bars: dict[str, Any] = {
            "type": "bar",
            "y": [label[s.stage] for s in chosen],
            "x": [float(s.end - s.start) for s in chosen],
            "base": [float(s.start) for s in chosen],
            "orientation": "h",
            "name": name,
            "marker": {"color": colour, "line": {"color": "white", "width": 1}},
            "customdata": [[s.microbatch + 1, float(s.start), float(s.end)] for s in chosen],
            "hovertemplate": (
                f"<b>{phase.capitalize()}</b> of micro-batch %{{customdata[0]}}<br>"
                "%{y}, from %{customdata[1]:g} to %{customdata[2]:g}<extra></extra>"
            ),
        }
        if show_text:
            bars |= {
                "text": [str(s.microbatch + 1) for s in chosen],
                "textposition": "inside",
                "insidetextanchor": "middle",
                "textfont": {"color": "white" if phase == "forward" else "black", "size": 12},
            }
        data.append(bars)
    gaps = schedule_idle_intervals(slots)
    if gaps:
        data.append(
            {
                "type": "bar",
                "y": [label[g[0]] for g in gaps],
                "x": [float(g[2] - g[1]) for g in gaps],
                "base": [float(g[1]) for g in gaps],
                "orientation": "h",
                "name": "Idle: pipeline bubble",
                "marker": {
                    "color": "rgba(187,187,187,0.35)",
                    "line": {"color": IDLE_COLOUR, "width": 1},
                    "pattern": {"shape": "/", "fgcolor": "#777777", "size": 8},
                },
                "customdata": [[float(g[1]), float(g[2])] for g in gaps],
                "hovertemplate": "<b>Idle</b><br>%{y}, from %{customdata[0]:g} to %{customdata[1]:g}"
                "<extra></extra>",
            }
        )
    idle = schedule_idle_fraction(slots)
    ratio = megatron_bubble_ratio(stages, microbatches)
    name = {"gpipe": "GPipe", "1f1b": "1F1B"}.get(schedule_name.lower(), schedule_name)
    headline = title or f"Pipeline bubble: {idle:.1%} of GPU time idle"
    detail = (
        f"{name + ': ' if name else ''}{stages} stages, {microbatches} micro-batches. "
        f"Idle = (p−1)/(m+p−1); Megatron's (p−1)/m = {ratio:.3f}"
    )
    layout = {
        "title": chart_title(headline, detail),
        "barmode": "overlay",
        "bargap": 0.25,
        "height": max(480, 280 + 40 * stages),
        "uniformtext": {"mode": "hide", "minsize": 10},
        "xaxis": axis("Time (in forward passes of one micro-batch on one stage)", rangemode="tozero"),
        "yaxis": axis(
            "Pipeline stage",
            type="category",
            categoryorder="array",
            categoryarray=list(reversed(label)),
        ),
    }
    return figure(data, layout)


def memory_breakdown_figure(
    breakdowns: Sequence[MemoryBreakdown],
    capacity_bytes: float | None = None,
    capacity_label: str = "",
    title: str = "",
) -> Spec:
    """Stacked memory of one GPU per pipeline stage (from ``memory_by_stage``) against capacity.

    Bars in GB (10⁹ bytes), hover in GB and GiB with each part's explanation; a dashed line at
    the accelerator's capacity. The first note of each breakdown names its stage.
    """
    labels = [(b.notes[0] if b.notes else f"GPU {i}").capitalize() for i, b in enumerate(breakdowns)]
    return memory_bars(
        list(zip(labels, breakdowns, strict=True)),
        capacity_bytes,
        capacity_label,
        title=title or "Memory per GPU, by pipeline stage",
    )


def _seconds(value: float) -> str:
    if value >= 1:
        return f"{value:,.2f} s"
    return f"{value * 1e3:,.1f} ms"


def comm_vs_compute_figure(terms: Sequence[CommTerm], step: StepTime, title: str = "") -> Spec:
    """Seconds per step: compute, pipeline bubble and each communication term, side by side.

    Communication bars are coloured by the link they use (inside a node or over the network);
    each row is named by the term, and its hover gives the link, bytes per GPU, the effective
    bandwidth and the formula. Each bar prints its time
    where it fits. The title gives the scaling efficiency (ideal compute / step time) from ``step``.
    """
    rows: list[tuple[str, float, str, str, str]] = [
        (
            "Compute (ideal split)",
            step.compute_s,
            COMPUTE_COLOUR,
            "Compute",
            "6 × params × tokens ÷ (GPUs × peak × MFU): ideal compute time if the work split perfectly",
        ),
        (
            "Pipeline bubble",
            step.bubble_s,
            IDLE_COLOUR,
            "Pipeline bubble (idle)",
            "(p − 1)/m × (compute + TP + PP time)",
        ),
    ]
    for term in terms:
        where = "over the network" if term.crosses_nodes else "inside a node"
        rows.append(
            (
                term.name,
                term.time_s,
                NETWORK_COLOUR if term.crosses_nodes else INTRA_NODE_COLOUR,
                f"Communication {where}",
                f"over {term.link_name}<br>"
                f"{term.bytes_per_gpu / 1e9:,.2f} GB per GPU at {term.bandwidth_bytes_per_s / 1e9:,.0f} GB/s"
                f"<br>{term.formula}"
                + ("<br>can overlap with the backward pass" if term.overlappable else ""),
            )
        )
    data: list[dict[str, Any]] = []
    seen: set[str] = set()
    labels = [wrap(r[0], ROW_LABEL_CHARS) for r in rows]
    for (label, seconds, colour, group, detail), row in zip(rows, labels, strict=True):
        data.append(
            {
                "type": "bar",
                "y": [row],
                "x": [seconds],
                "orientation": "h",
                "name": group,
                "legendgroup": group,
                "showlegend": group not in seen,
                "marker": {"color": colour},
                "text": [_seconds(seconds)],
                "textposition": "outside",
                "textfont": {"size": LABEL_FONT_PX},
                "cliponaxis": False,
                "customdata": [[seconds * 1e3, detail]],
                "hovertemplate": (
                    f"<b>{label}</b><br>%{{customdata[0]:,.1f}} ms per step<br>%{{customdata[1]}}"
                    "<extra></extra>"
                ),
            }
        )
        seen.add(group)
    hidden = (
        f", {1 - step.dp_exposed_s / step.dp_s:.0%} of DP traffic hidden"
        if step.dp_s and step.dp_exposed_s < step.dp_s
        else ""
    )
    headline = title or f"Step ≈ {step.total_s:.2f} s: scaling efficiency {step.scaling_efficiency:.0%}"
    longest = max([r[1] for r in rows] + [1e-9])
    layout = {
        "title": chart_title(headline, f"Scaling efficiency = ideal compute ÷ step time{hidden}"),
        "height": max(380, 240 + 70 * len(rows)),
        "uniformtext": {"mode": "hide", "minsize": LABEL_FONT_PX - 1},
        "xaxis": axis("Time per optimizer step (s)", range=[0, longest * 1.25]),
        "yaxis": axis(
            "Where the step's time goes",
            type="category",
            categoryorder="array",
            categoryarray=list(reversed(labels)),
        ),
    }
    return figure(data, layout)
