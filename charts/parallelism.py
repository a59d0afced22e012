"""Charts for the parallelism simulator: the GPU grid, the pipeline Gantt chart, memory per
stage and communication against compute. Each takes results of ``simulators.parallelism``."""

from __future__ import annotations

from collections.abc import Sequence

import plotly.graph_objects as go

from charts.memory import memory_bars
from charts.palette import OKABE_ITO
from charts.style import apply_style
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


def gpu_grid_figure(layout: Layout, colour_by: str = "pp", spec: ModelSpec | None = None) -> go.Figure:
    """One square per GPU, a row per node, coloured by what the GPU holds.

    ``colour_by``: "pp" (pipeline stage: which layers), "tp" (which slice of each weight matrix),
    "dp" (which data-parallel replica), "zero" (which ZeRO shard of the optimizer state, and of
    gradients and parameters at stages 2 and 3) or "role" (GPUs with the same colour hold the
    same weights: DP replicas of one stage and TP shard). Hover text lists every rank and what
    the GPU holds. Up to eight groups get Okabe-Ito colours and a legend; more get the Viridis
    scale (also colour-blind safe) with a colour bar.
    """
    if colour_by not in COLOUR_BY:
        raise ValueError(f"colour_by must be one of {list(COLOUR_BY)}, got {colour_by!r}")
    roles = gpu_roles(layout, spec)
    categories: dict[int, str] = {}
    for role in roles:
        key, label = _category(role, colour_by)
        categories.setdefault(key, label)
    show_text = layout.n_gpus <= 256
    hover = [
        f"<b>GPU {r.rank}</b> (node {r.node}, GPU {r.local_index})<br>"
        f"DP rank {r.dp_rank} · TP rank {r.tp_rank} · PP stage {r.pp_stage}<br>"
        + r.holds.replace("; ", "<br>")
        for r in roles
    ]
    cell = max(6, min(44, int(640 / max(layout.gpus_per_node, 1))))
    fig = go.Figure()
    if len(categories) <= _DISCRETE_LIMIT:
        for index, (key, label) in enumerate(sorted(categories.items())):
            members = [i for i, r in enumerate(roles) if _category(r, colour_by)[0] == key]
            fig.add_scatter(
                x=[roles[i].local_index for i in members],
                y=[roles[i].node for i in members],
                mode="markers+text" if show_text else "markers",
                text=[str(roles[i].rank) for i in members] if show_text else None,
                textfont={"color": "black" if index in (1, 4, 6) else "white", "size": 11},
                marker={
                    "symbol": "square",
                    "size": cell,
                    "color": OKABE_ITO[index],
                    "line": {"color": "white", "width": 1},
                },
                name=label,
                hovertext=[hover[i] for i in members],
                hoverinfo="text",
            )
    else:
        keys = [_category(r, colour_by)[0] for r in roles]
        title = {"pp": "PP stage", "tp": "TP rank", "dp": "DP rank", "zero": "ZeRO shard"}.get(
            colour_by, "Stage × TP shard"
        )
        fig.add_scatter(
            x=[r.local_index for r in roles],
            y=[r.node for r in roles],
            mode="markers+text" if show_text else "markers",
            text=[str(r.rank) for r in roles] if show_text else None,
            textfont={"color": "white", "size": 10},
            marker={
                "symbol": "square",
                "size": cell,
                "color": keys,
                "colorscale": "Viridis",
                "colorbar": {"title": {"text": title}},
                "line": {"color": "white", "width": 1},
            },
            name="GPU",
            hovertext=hover,
            hoverinfo="text",
            showlegend=False,
        )
    what = {
        "pp": "pipeline stage",
        "tp": "tensor-parallel shard",
        "dp": "data-parallel replica",
        "zero": "ZeRO shard",
        "role": "weights held",
    }[colour_by]
    fig.update_layout(
        title=(
            f"{layout.n_gpus} GPUs = DP {layout.dp} × TP {layout.tp} × PP {layout.pp}, "
            f"coloured by {what} (numbers: global rank)"
        ),
        xaxis={
            "title": "GPU within the node (local index)",
            "tickmode": "array",
            "tickvals": list(range(layout.gpus_per_node)),
            "range": [-0.6, layout.gpus_per_node - 0.4],
            "showgrid": False,
            "zeroline": False,
        },
        yaxis={
            "title": "Node",
            "tickmode": "array",
            "tickvals": list(range(layout.nodes)),
            "range": [layout.nodes - 0.4, -0.6],
            "showgrid": False,
            "zeroline": False,
        },
        height=min(1000, 200 + (cell + 8) * layout.nodes),
        legend={"orientation": "h", "yanchor": "top", "y": -0.2, "x": 0},
        plot_bgcolor="white",
    )
    fig = apply_style(fig)
    fig.update_layout(margin={"b": 120})
    return fig


def pipeline_gantt_figure(slots: Sequence[Slot], schedule_name: str = "", title: str = "") -> go.Figure:
    """Bars of forward and backward passes per stage, idle time hatched, the bubble in the title.

    ``slots`` from ``simulators.parallelism.pipeline_schedule``. The title gives the idle
    fraction measured on the schedule, which equals (p − 1)/(m + p − 1), and Megatron's
    bubble ratio (p − 1)/m.
    """
    if not slots:
        raise ValueError("no passes to draw: the schedule is empty")
    stages = 1 + max(s.stage for s in slots)
    microbatches = 1 + max(s.microbatch for s in slots)
    label = [f"Stage {s + 1}" for s in range(stages)]
    show_text = len(slots) <= 400
    fig = go.Figure()
    for phase, colour, name in (
        ("forward", FORWARD_COLOUR, "Forward pass (number: micro-batch)"),
        ("backward", BACKWARD_COLOUR, "Backward pass (2 × forward)"),
    ):
        chosen = [s for s in slots if s.phase == phase]
        fig.add_bar(
            y=[label[s.stage] for s in chosen],
            x=[s.end - s.start for s in chosen],
            base=[s.start for s in chosen],
            orientation="h",
            name=name,
            marker={"color": colour, "line": {"color": "white", "width": 1}},
            text=[str(s.microbatch + 1) for s in chosen] if show_text else None,
            textposition="inside",
            insidetextanchor="middle",
            textfont={"color": "white" if phase == "forward" else "black"},
            customdata=[[s.microbatch + 1, s.start, s.end] for s in chosen],
            hovertemplate=(
                f"<b>{phase.capitalize()}</b> of micro-batch %{{customdata[0]}}<br>"
                "%{y}, from %{customdata[1]:g} to %{customdata[2]:g}<extra></extra>"
            ),
        )
    gaps = schedule_idle_intervals(slots)
    if gaps:
        fig.add_bar(
            y=[label[g[0]] for g in gaps],
            x=[g[2] - g[1] for g in gaps],
            base=[g[1] for g in gaps],
            orientation="h",
            name="Idle: pipeline bubble",
            marker={
                "color": "rgba(187,187,187,0.35)",
                "line": {"color": IDLE_COLOUR, "width": 1},
                "pattern": {"shape": "/", "fgcolor": "#777777", "size": 8},
            },
            customdata=[[g[1], g[2]] for g in gaps],
            hovertemplate="<b>Idle</b><br>%{y}, from %{customdata[0]:g} to %{customdata[1]:g}<extra></extra>",
        )
    idle = schedule_idle_fraction(slots)
    ratio = megatron_bubble_ratio(stages, microbatches)
    name = {"gpipe": "GPipe", "1f1b": "1F1B"}.get(schedule_name.lower(), schedule_name)
    heading = title or (
        f"{name + ': ' if name else ''}{stages} stages, {microbatches} micro-batches. Bubble: "
        f"{idle:.1%} of GPU time idle = (p−1)/(m+p−1); Megatron's (p−1)/m = {ratio:.3f}"
    )
    fig.update_layout(
        barmode="overlay",
        title=heading,
        xaxis_title="Time (in forward passes of one micro-batch on one stage)",
        yaxis={
            "title": "Pipeline stage (one GPU or TP group)",
            "categoryorder": "array",
            "categoryarray": list(reversed(label)),
        },
        bargap=0.25,
        height=max(280, 140 + 45 * stages),
        legend={"orientation": "h", "yanchor": "top", "y": -0.25, "x": 0},
    )
    fig = apply_style(fig)
    fig.update_layout(margin={"b": 110})
    return fig


def memory_breakdown_figure(
    breakdowns: Sequence[MemoryBreakdown],
    capacity_bytes: float | None = None,
    capacity_label: str = "",
    title: str = "",
) -> go.Figure:
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


def comm_vs_compute_figure(terms: Sequence[CommTerm], step: StepTime, title: str = "") -> go.Figure:
    """Seconds per step: compute, pipeline bubble and each communication term, side by side.

    Communication bars are coloured by the link they use (inside a node or over the network);
    hover gives bytes per GPU, the effective bandwidth and the formula. The title gives the
    scaling efficiency (ideal compute / step time) from ``step``.
    """
    rows: list[tuple[str, float, str, str, str]] = [
        (
            "Compute (6 × params × tokens / (GPUs × peak × MFU))",
            step.compute_s,
            COMPUTE_COLOUR,
            "Compute",
            "ideal compute time if the work split perfectly",
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
                f"{term.name} — {term.link_name}",
                term.time_s,
                NETWORK_COLOUR if term.crosses_nodes else INTRA_NODE_COLOUR,
                f"Communication {where}",
                f"{term.bytes_per_gpu / 1e9:,.2f} GB per GPU at {term.bandwidth_bytes_per_s / 1e9:,.0f} GB/s"
                f"<br>{term.formula}"
                + ("<br>can overlap with the backward pass" if term.overlappable else ""),
            )
        )
    fig = go.Figure()
    seen: set[str] = set()
    for label, seconds, colour, group, detail in rows:
        fig.add_bar(
            y=[label],
            x=[seconds],
            orientation="h",
            name=group,
            legendgroup=group,
            showlegend=group not in seen,
            marker_color=colour,
            customdata=[[seconds * 1e3, detail]],
            hovertemplate=(
                f"<b>{label}</b><br>%{{customdata[0]:,.1f}} ms per step<br>%{{customdata[1]}}<extra></extra>"
            ),
        )
        seen.add(group)
    heading = title or (
        f"Step ≈ {step.total_s:.2f} s: scaling efficiency {step.scaling_efficiency:.0%} "
        f"(ideal compute / step time)"
        + (
            f", {1 - step.dp_exposed_s / step.dp_s:.0%} of DP traffic hidden"
            if step.dp_s and step.dp_exposed_s < step.dp_s
            else ""
        )
    )
    labels = [r[0] for r in rows]
    fig.update_layout(
        title=heading,
        xaxis_title="Time per optimizer step (s)",
        yaxis={"categoryorder": "array", "categoryarray": list(reversed(labels))},
        legend={"orientation": "h", "yanchor": "top", "y": -0.3, "x": 0},
        height=max(300, 160 + 50 * len(rows)),
    )
    fig = apply_style(fig)
    fig.update_layout(margin={"b": 110})
    return fig
