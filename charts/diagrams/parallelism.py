"""Diagrams of the glossary's parallelism terms: an NVLink node, the pipeline bubble, ZeRO stages,
compute/communication overlap, 3D parallelism, TP/PP/DP splits and the ring all-reduce.

Every number comes from the accelerator catalog, the interconnects and the simulators; a builder only
chooses what to show. All return ``charts.diagrams.Diagram``.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Any

from charts.diagrams import Diagram, schematic
from charts.diagrams.block_grid import (
    GB,
    MAX_HEIGHT,
    OUTLINE,
    _check_range,
    _colour,
    _finish,
    _gb,
    _hidden,
    _ink,
    _note,
    _preset_spec,
    _rect,
    _seconds,
)
from charts.palette import OKABE_ITO
from charts.parallelism import pipeline_gantt_figure
from charts.style import (
    LABEL_BOX_TEXT,
    LABEL_FONT_PX,
    axis,
    legend_name,
)
from charts.style import title as chart_title
from simulators.hardware import get_accelerator, get_interconnect, load_interconnects
from simulators.llm_memory import (
    model_state_bytes_per_gpu,
    training_recipe,
)
from simulators.parallelism import (
    BACKWARD_OVER_FORWARD,
    Layout,
    check_layout,
    communication_per_step,
    gpu_roles,
    layers_per_stage,
    link_efficiency,
    megatron_bubble_ratio,
    pipeline_bubble_fraction,
    pipeline_schedule,
    ring_allreduce_bytes_per_gpu,
    schedule_idle_fraction,
    schedule_idle_intervals,
    schedule_makespan,
    step_time,
    zero_model_state_bytes,
)
from simulators.units import si


def nvlink_topology_diagram(gpu: str = "h100-sxm", n_gpus: int = 8) -> Diagram:
    """``n_gpus`` GPUs each wired by all their NVLink links to an NVSwitch fabric."""
    acc = get_accelerator(gpu)
    if not acc.interconnect_id:
        raise ValueError(f"{acc.id} has no NVLink interconnect in the catalog")
    link = get_interconnect(acc.interconnect_id)
    if link.id == "nvlink-2":
        # DGX-1: 8 V100s in "a Hybrid Mesh Cube configuration ... not every GPU could see every other
        # GPU" (AnandTech, labs.anandtech.com/show/12581); NVSwitch arrived with DGX-2.
        raise ValueError("8-GPU V100 servers wire NVLink as a hybrid cube-mesh without NVSwitch")
    if n_gpus < 2:
        raise ValueError("n_gpus must be at least 2")
    # The interconnect's name lists the products it first shipped in ("NVLink 5 (B200, GB200)");
    # on a B300 that list reads as wrong, so the generation alone is shown.
    link_name = link.name.split(" (")[0]
    # The NVLink domain the drawn GPUs belong to, where sourced: NVL72 racks (GB200, GB300) and the
    # DGX GH200's NVLink Switch System of up to 256: the drawing is "n of N", not a whole system.
    domain = schematic.arch_fact(acc.id, "nvlink_domain_gpus") or schematic.arch_fact(
        acc.id, "nvlink_system_gpus"
    )
    rack = domain is not None and int(domain) > n_gpus
    per_dir = link.per_direction_bytes_per_s
    per_link = per_dir / link.links if link.links else None
    top = math.ceil(n_gpus / 2)
    rows = [(86, top), (14, n_gpus - top)]
    shapes = [
        schematic._rect(8, 40, 92, 60, schematic._tint(schematic.GREEN, 0.25), schematic.GREEN, width=2)
    ]
    notes = [schematic._text(50, 50, "<b>NVSwitch fabric</b><br>any GPU to any GPU, all at full rate")]
    index = 0
    for y, count in rows:
        w = 92 / max(count, 1)
        for i in range(count):
            cx = 4 + w * (i + 0.5)
            shapes.append(
                schematic._line(cx, y - 8 if y > 50 else y + 8, cx, 60 if y > 50 else 40, schematic.BLUE, 4)
            )
            shapes.append(
                schematic._rect(
                    cx - w / 2 + 1, y - 8, cx + w / 2 - 1, y + 8, schematic.LIGHT, schematic.BLUE, width=2
                )
            )
            notes.append(schematic._text(cx, y, f"<b>GPU {index}</b>", size=12))
            index += 1
    links_text = f"{link.links} links × {si(per_link, 'B/s')}" if per_link else "all links"
    table = (
        {"Quantity": "GPUs", "Value": n_gpus, "Unit": "GPUs"},
        {"Quantity": "NVLink links per GPU", "Value": link.links, "Unit": "links"},
        {
            "Quantity": "Bandwidth per link, each way",
            "Value": per_link / 1e9 if per_link else None,
            "Unit": "GB/s",
        },
        {"Quantity": "Bandwidth per GPU, each way", "Value": per_dir / 1e9, "Unit": "GB/s"},
        {
            "Quantity": "Bandwidth per GPU, both ways (datasheet)",
            "Value": link.bidirectional_bytes_per_s / 1e9,
            "Unit": "GB/s",
        },
    )
    alt = (
        f"{n_gpus} {acc.name} GPUs, each connected by {link_name} to an NVSwitch fabric: "
        + (f"{link.links} links of {si(per_link, 'B/s')} each way, " if per_link else "")
        + f"{si(per_dir, 'B/s')} each way per GPU "
        + f"({si(link.bidirectional_bytes_per_s, 'B/s')} both ways), to any other GPU."
    )
    spec = schematic._schematic(
        (
            f"{n_gpus} of the 72 GPUs of an NVL72 rack, through NVSwitch"
            if rack and int(domain) == 72
            else f"{n_gpus} of up to {int(domain)} GPUs in one NVLink system, through NVSwitch"
        )
        if rack
        else f"{n_gpus} GPUs through NVSwitch",
        f"{link_name}: each GPU {links_text} = {si(per_dir, 'B/s')} each way",
        shapes,
        notes,
        height=420,
    )
    return Diagram(
        "nvlink-topology",
        spec,
        alt,
        table,
        "Every GPU sends all its links into the switches, so any pair talks at the full per-GPU rate; the "
        "datasheet's figure adds both directions. The switch chips are drawn as one fabric"
        + (
            (
                f"; all {int(domain)} GPUs of the rack share it."
                if int(domain) == 72
                else f"; up to {int(domain)} GPUs share it."
            )
            if rack
            else "."
        ),
    )


def pipeline_bubble(*, stages: int = 4, microbatches: int = 8, schedule: str = "1f1b") -> Diagram:
    """The GPipe or 1F1B schedule of one step, stages × time, idle slots hatched."""
    _check_range("stages", stages, 1, 8)
    _check_range("microbatches", microbatches, 1, 32)
    slots = pipeline_schedule(stages, microbatches, schedule)
    spec = pipeline_gantt_figure(slots, schedule)
    spec["layout"]["height"] = min(MAX_HEIGHT, spec["layout"].get("height", MAX_HEIGHT))
    idle = schedule_idle_fraction(slots)
    formula = pipeline_bubble_fraction(stages, microbatches)
    makespan = schedule_makespan(slots)
    gaps = schedule_idle_intervals(slots)
    table = tuple(
        {
            "stage": s + 1,
            "busy (forward-pass units)": sum(x.end - x.start for x in slots if x.stage == s),
            "idle (forward-pass units)": sum(g[2] - g[1] for g in gaps if g[0] == s),
            "step (forward-pass units)": makespan,
        }
        for s in range(stages)
    )
    label = {"gpipe": "GPipe", "1f1b": "1F1B"}[schedule]
    alt = (
        f"A {label} schedule of {stages} pipeline stages and {microbatches} micro-batches: each stage waits "
        f"while the pipeline fills and drains, so {idle:.1%} of GPU time is idle, (p − 1)/(m + p − 1) = "
        f"{formula:.3f}; Megatron's ratio (p − 1)/m is {megatron_bubble_ratio(stages, microbatches):.3f}."
    )
    caption = (
        "Grey hatched bars are the bubble: idle while the pipeline fills (lower left) and drains (lower "
        "right), and, under 1F1B, gaps on the early stages while they wait for the first backward "
        "passes to come back. More micro-batches per step shrink it; 1F1B keeps the same bubble as "
        "GPipe but holds fewer micro-batches' activations. Schedules as in Narayanan et al. 2021 "
        "(arXiv 2104.04473)."
    )
    return Diagram("pipeline-bubble", spec, alt, table, caption)


ZERO_RECIPE = "mixed-adam-16"  # the ZeRO paper's 2 + 2 + 12 bytes per parameter


def zero_stages(*, model: str = "llama-2-7b", n_gpus: int = 64, gpu: str = "a100-80gb-sxm") -> Diagram:
    """Model-state memory per GPU at ZeRO stages 0 to 3, stacked by part, against the GPU's memory."""
    _check_range("n_gpus", n_gpus, 1, 16_384)
    name, spec = _preset_spec(model)
    acc = get_accelerator(gpu)
    if not acc.memory_bytes:
        raise ValueError("no device memory in the catalog (a CPU's memory is the host's)")
    params = spec.param_count()
    recipe = training_recipe(ZERO_RECIPE)
    labels = [
        "Stage 0<br>(plain DP)",
        "Stage 1<br>optimizer",
        "Stage 2<br>+ gradients",
        "Stage 3<br>+ weights",
    ]
    parts = [model_state_bytes_per_gpu(params, ZERO_RECIPE, n_gpus, stage) for stage in range(4)]
    totals = [zero_model_state_bytes(params, n_gpus, stage) for stage in range(4)]
    series = (
        ("weights", f"Weights ({recipe.weight_bytes:g} B/param)", OKABE_ITO[0]),
        ("gradients", f"Gradients ({recipe.grad_bytes:g} B/param)", OKABE_ITO[1]),
        (
            "optimizer",
            f"Optimizer: fp32 master + Adam ({recipe.master_bytes + recipe.optimizer_bytes:g} B/param)",
            OKABE_ITO[2],
        ),
    )
    data = [
        {
            "type": "bar",
            "x": labels,
            "y": [p[key] / GB for p in parts],
            "name": legend_name(text),
            "marker": {"color": colour},
            "hovertemplate": f"{text}: %{{y:,.2f}} GB<extra></extra>",
        }
        for key, text, colour in series
    ]
    capacity = acc.memory_bytes
    top = max(totals[0], capacity or 0) / GB
    notes = [
        {
            "x": label,
            "y": total / GB,
            "text": f"{total / GB:,.3g} GB",
            "showarrow": False,
            "yanchor": "bottom",
        }
        for label, total in zip(labels, totals, strict=True)
    ]
    shapes = []
    if capacity:
        shapes.append(
            {
                "type": "line",
                "xref": "paper",
                "x0": 0,
                "x1": 1,
                "yref": "y",
                "y0": capacity / GB,
                "y1": capacity / GB,
                "line": {"color": OKABE_ITO[5], "width": 2, "dash": "dot"},
            }
        )
        notes.append(
            {
                "xref": "paper",
                "x": 1,
                "y": capacity / GB,
                "yref": "y",
                "text": f"{acc.name}: {acc.memory_label}",
                "showarrow": False,
                "xanchor": "right",
                "yanchor": "bottom",
            }
        )
    layout = {
        "title": chart_title(
            f"ZeRO over {n_gpus} GPUs: {totals[0] / GB:,.0f} GB → {totals[3] / GB:,.3g} GB per GPU",
            f"{name} ({params / 1e9:,.2f}B parameters), model states only, no activations",
        ),
        "barmode": "stack",
        "height": 500,
        "shapes": shapes,
        "annotations": notes,
        "xaxis": axis("ZeRO stage: what is sharded"),
        "yaxis": axis("Model states per GPU (GB)", range=[0, top * 1.15]),
    }
    table = tuple(
        {
            "ZeRO stage": stage,
            "weights (bytes)": p["weights"],
            "gradients (bytes)": p["gradients"],
            "optimizer states (bytes)": p["optimizer"],
            "total per GPU (bytes)": total,
        }
        for stage, (p, total) in enumerate(zip(parts, totals, strict=True))
    )
    alt = (
        f"Model-state memory per GPU for {name} data-parallel over {n_gpus} GPUs: "
        + ", ".join(f"stage {s} {t / GB:,.3g} GB" for s, t in enumerate(totals))
        + f" (16 bytes per parameter, split further at each stage); {acc.name} holds {acc.memory_label}."
    )
    caption = (
        "Stage 1 shards the optimizer states over the data-parallel GPUs, stage 2 the gradients too, "
        "stage 3 the weights as well. Activations are not sharded and come on top. Formulas from "
        "Rajbhandari et al. 2019, 'ZeRO' (arXiv 1910.02054), section 5."
    )
    return Diagram("zero-stages", _finish(data, layout), alt, table, caption)


@dataclass(frozen=True)
class TrainingFabric:
    """How a part's GPUs reach each other in a data-parallel job, from gpu_architecture.csv and the
    catalog: the link inside a node (NVLink, or PCIe at the card's generation), the node's GPUs, the
    network port each GPU has (None: no sourced ports, so one node), and an NVLink domain that spans
    nodes (GB200/GB300 NVL72: no InfiniBand between its GPUs)."""

    intra_link_id: str
    node_gpus: int
    inter_link_id: str | None
    nvlink_domain_gpus: int | None
    nics_per_gpu: float | None


# PyTorch DistributedDataParallel's gradient bucket: bucket_cap_mb = 25 by default, taken as MiB
# ("default case (bucket cap is 25 MiB)"; bucket_bytes_cap = int(bucket_cap_mb * 1024 * 1024) in
# torch/nn/parallel/distributed.py; pytorch/pytorch issue 118421: "by default the bucket size is set to
# 25MB via bucket_cap_mb").
DDP_BUCKET_BYTES = 25 * 2**20


def _nic_link(gbits: float) -> str:
    """The InfiniBand port row of interconnects.csv at this signalling rate (400 -> NDR, 200 -> HDR)."""
    for link in load_interconnects():
        port = link.kind == "scale-out" and link.published_unit == "Gb/s" and "InfiniBand" in link.name
        if port and link.published_value == gbits:
            return link.id
    raise ValueError(f"no InfiniBand port of {gbits:g} Gb/s in interconnects.csv")


def _bare(link_name: str) -> str:
    """A link's name without its bracketed notes: 'NVLink 4 (H100, H200, GH200)' -> 'NVLink 4'."""
    return re.sub(r"\s*\([^)]*\)", "", link_name)


def training_fabric(gpu: str) -> TrainingFabric:
    """The picked part's own links for a data-parallel all-reduce. ``ValueError`` for a part whose
    fabric this NVLink/PCIe/InfiniBand model does not cover (TPU ICI, Gaudi's on-chip RoCE, AMD
    Infinity Fabric, Apple and CPUs) or whose server layout is not sourced."""
    acc = get_accelerator(gpu)
    if acc.vendor != "NVIDIA":
        raise ValueError(
            "another vendor's fabric: TPU ICI, Gaudi RoCE, AMD Infinity Fabric and unified memory "
            "are not in this NVLink, PCIe and InfiniBand model"
        )
    intra = acc.interconnect_id if (acc.interconnect_id or "").startswith("nvlink") else acc.host_link_id
    if not intra:
        raise ValueError("no sourced GPU-to-GPU link in the catalog")
    domain = schematic.arch_fact(acc.id, "nvlink_domain_gpus")
    node = schematic.arch_fact(acc.id, "node_gpus")
    if domain:
        return TrainingFabric(intra, int(domain), None, int(domain), None)
    if not node:
        raise ValueError("no sourced server layout (GPUs and network ports per node)")
    nics = schematic.arch_fact(acc.id, "node_nics")
    gbits = schematic.arch_fact(acc.id, "nic_gbits_per_s")
    if nics and gbits and nics >= node:
        return TrainingFabric(intra, int(node), _nic_link(gbits), None, nics / node)
    return TrainingFabric(intra, int(node), None, None, None)  # no sourced ports: one server


def compute_comm_overlap(
    *,
    model: str = "llama-3-8b",
    gpu: str = "h100-sxm",
    nodes: int | None = None,
    gpus_per_node: int | None = None,
    microbatches: int = 1,
    seq: int = 4096,
) -> Diagram:
    """One data-parallel training step on the picked part's own fabric (``training_fabric``): the
    gradient all-reduce after the backward pass, or during it. By default 2 nodes of the part's own
    server (one server where no network ports are sourced; 16 GPUs inside an NVL72 domain)."""
    name, spec = _preset_spec(model)
    acc = get_accelerator(gpu)
    fabric = training_fabric(gpu)
    per_node = fabric.node_gpus if gpus_per_node is None else gpus_per_node
    if fabric.nvlink_domain_gpus:
        per_node = 8 if gpus_per_node is None else gpus_per_node
        nodes = 2 if nodes is None else nodes
        n = nodes * per_node
        if n > fabric.nvlink_domain_gpus:
            raise ValueError(f"{n} GPUs exceed the {fabric.nvlink_domain_gpus}-GPU NVLink domain")
        nodes, per_node = 1, n  # one NVLink domain: every ring stays on NVLink
    else:
        nodes = (2 if fabric.inter_link_id else 1) if nodes is None else nodes
        if nodes > 1 and not fabric.inter_link_id:
            raise ValueError(f"no sourced network ports for the {acc.name}: one server only")
        if not 1 <= per_node <= fabric.node_gpus:
            raise ValueError(f"gpus_per_node must be 1 to {fabric.node_gpus} for the {acc.name}")
    n = nodes * per_node
    if n < 2:
        raise ValueError("data parallelism needs at least 2 GPUs")
    layout = Layout(
        dp=n, tp=1, pp=1, num_microbatches=microbatches, seq=seq, nodes=nodes, gpus_per_node=per_node
    )
    terms = communication_per_step(
        spec,
        layout,
        intra_node_link=fabric.intra_link_id,
        **({"inter_node_link": fabric.inter_link_id} if fabric.inter_link_id else {}),
    )
    serial = step_time(spec, layout, acc, terms)
    compute, dp = serial.compute_s, serial.dp_s
    forward = compute / (1 + BACKWARD_OVER_FORWARD)
    backward = compute - forward
    dp_term = next(t for t in terms if t.key.startswith("dp"))
    # The last bucket's gradients exist only when the backward pass ends, so its all-reduce runs
    # after it: a tail that no overlap hides (PyTorch DDP's default bucket, DDP_BUCKET_BYTES).
    gradient_bytes = dp_term.bytes_per_gpu / ring_allreduce_bytes_per_gpu(1.0, n)
    tail = dp * min(1.0, DDP_BUCKET_BYTES / gradient_bytes) if gradient_bytes else 0.0
    hidden = max(0.0, min(dp - tail, backward))
    overlapped = step_time(spec, layout, acc, terms, dp_overlap=hidden / dp if dp else 0.0)
    intra_name = _bare(get_interconnect(fabric.intra_link_id).name)
    if dp_term.crosses_nodes:
        # communication_per_step's rail model: one NIC per GPU, NCCL's rings leave each node through
        # all of them, so each port carries 1/k of a GPU's ring bytes (simulators/parallelism.py).
        nics = f"{per_node} NICs" if per_node > 1 else "1 NIC"
        link = f"{nics} per node ({_bare(dp_term.link_name)} each) and {intra_name} inside each node"
        where = f"{nodes} nodes of {per_node}"
    elif fabric.nvlink_domain_gpus:
        link = f"{intra_name} only"
        where = f"one NVL{fabric.nvlink_domain_gpus} NVLink domain, no InfiniBand"
    else:
        link = intra_name
        where = "one server" + ("" if fabric.inter_link_id else " (no sourced network ports)")
    rows = ["Serial: GPU", "Serial: network", "Overlapped: GPU", "Overlapped: network"]
    bars = (
        # (name, colour, [(row, start, length)])
        ("Forward pass", OKABE_ITO[0], [(rows[0], 0.0, forward), (rows[2], 0.0, forward)]),
        ("Backward pass", OKABE_ITO[1], [(rows[0], forward, backward), (rows[2], forward, backward)]),
        # Buckets are reduced as their gradients appear, so the hidden part ends with the backward
        # pass (the last bucket cannot be reduced before the last layer's gradients exist) and
        # whatever does not fit runs after it, exposed.
        ("All-reduce hidden behind the backward pass", OKABE_ITO[4], [(rows[3], compute - hidden, hidden)]),
        (
            "All-reduce exposed: the GPU waits",
            OKABE_ITO[5],
            [(rows[1], compute, dp), (rows[3], compute, dp - hidden)],
        ),
    )
    data = []
    for label, colour, pieces in bars:
        pieces = [p for p in pieces if p[2] > 0]
        if not pieces:
            continue
        data.append(
            {
                "type": "bar",
                "orientation": "h",
                "y": [p[0] for p in pieces],
                "base": [p[1] for p in pieces],
                "x": [p[2] for p in pieces],
                "name": legend_name(label),
                "marker": {"color": colour, "line": {"color": "white", "width": 1}},
                "customdata": [_seconds(p[2]) for p in pieces],
                "hovertemplate": f"{label}: %{{customdata}}<extra></extra>",
            }
        )
    notes = [
        {
            "x": total,
            # In the gap under the bar (a bar spans its row's index ± 0.35), on the page: never
            # over the bar's colour, whatever the chart's height.
            "y": len(rows) - 1 - rows.index(row) - 0.37,
            "xref": "x",
            "yref": "y",
            "text": f"step ends: {_seconds(total)}",
            "showarrow": False,
            "xanchor": "right",
            "yanchor": "top",
        }
        for total, row in ((serial.total_s, rows[1]), (overlapped.total_s, rows[3]))
    ]
    layout_spec = {
        "title": chart_title(
            f"Overlap cuts the step from {_seconds(serial.total_s)} to {_seconds(overlapped.total_s)}",
            f"{name}, data parallel over {n} {acc.name} GPUs in {where}; gradient all-reduce "
            f"{_seconds(dp)} over {link}",
        ),
        "barmode": "overlay",
        "bargap": 0.3,
        "height": 480,
        "annotations": notes,
        "xaxis": axis("Time in one training step (s)", range=[0, serial.total_s * 1.05], rangemode="tozero"),
        "yaxis": axis(
            "",
            type="category",
            categoryorder="array",
            categoryarray=list(reversed(rows)),
            range=[-0.85, len(rows) - 0.5],  # room under the bottom bar for its label
        ),
    }
    table = (
        {"part": "forward pass (s)", "serial": forward, "overlapped": forward},
        {"part": "backward pass (s)", "serial": backward, "overlapped": backward},
        {"part": "gradient all-reduce (s)", "serial": dp, "overlapped": dp},
        {
            "part": "all-reduce exposed (s)",
            "serial": serial.dp_exposed_s,
            "overlapped": overlapped.dp_exposed_s,
        },
        {"part": "step (s)", "serial": serial.total_s, "overlapped": overlapped.total_s},
        {
            "part": "all-reduce rate per GPU (GB/s)",
            "serial": dp_term.bandwidth_bytes_per_s / GB,
            "overlapped": dp_term.bandwidth_bytes_per_s / GB,
        },
    )
    alt = (
        f"Timeline of one training step of {name} on {n} {acc.name} GPUs in {where}, the gradient "
        f"all-reduce at {dp_term.bandwidth_bytes_per_s / GB:,.1f} GB/s per GPU over {link}: serially, "
        f"{_seconds(compute)} of compute "
        f"is followed by a {_seconds(dp)} gradient all-reduce, a {_seconds(serial.total_s)} step; run "
        f"during the {_seconds(backward)} backward pass, "
        + (
            f"{_seconds(overlapped.dp_exposed_s)} of it stays exposed"
            if overlapped.dp_exposed_s > 0
            else "all of it hides"
        )
        + f" and the step takes {_seconds(overlapped.total_s)}"
        + f" (the last {DDP_BUCKET_BYTES / 2**20:.0f} MiB bucket, {_seconds(tail)}, can only follow "
        "the backward pass)."
    )
    caption = (
        "Gradients are reduced in buckets while earlier layers are still in their backward pass, so "
        "communication can hide only behind compute that is still to come: whatever exceeds the "
        "backward pass stays on the critical path, and so does the last bucket (PyTorch DDP's 25 MiB "
        "default), whose gradients exist only when the backward pass ends: a thin tail. "
        "Backward = 2 × forward, as in the pipeline model. "
        "Each part is drawn on its own fabric: NVLink inside its server and one network port per GPU "
        "where both are sourced (NCCL's rings leave a node through all of them, so the network carries "
        "1/k of each GPU's ring bytes and NVLink the rest); PCIe at the card's generation for PCIe "
        "cards, in one server where no ports are sourced; GB200 and GB300 inside one NVL72 NVLink "
        "domain. TPUs (ICI), Gaudi (RoCE) and AMD (Infinity Fabric) are not offered: this model has "
        "only NVLink, PCIe and InfiniBand."
    )
    return Diagram("compute-comm-overlap", _finish(data, layout_spec), alt, table, caption)


def _layout_for(dp: int, tp: int, pp: int, gpus_per_node: int) -> Layout:
    n = dp * tp * pp
    if n <= gpus_per_node:
        return Layout(dp=dp, tp=tp, pp=pp, nodes=1, gpus_per_node=n)
    if n % gpus_per_node:
        raise ValueError(f"{n} GPUs do not fill nodes of {gpus_per_node}")
    return Layout(dp=dp, tp=tp, pp=pp, nodes=n // gpus_per_node, gpus_per_node=gpus_per_node)


def parallelism_3d(
    *, model: str = "llama-3-8b", dp: int = 2, tp: int = 2, pp: int = 4, gpus_per_node: int = 8
) -> Diagram:
    """Every GPU of a DP × TP × PP layout: rows are pipeline stages, boxed groups split each matrix,
    columns of groups are data-parallel replicas. Ranks in Megatron-LM's order."""
    _check_range("dp × tp", dp * tp, 1, 16)
    _check_range("pp", pp, 1, 8)
    name, spec = _preset_spec(model)
    layout = _layout_for(dp, tp, pp, gpus_per_node)
    check_layout(spec, layout)
    roles = gpu_roles(layout, spec)
    shapes: list[dict[str, Any]] = []
    notes: list[dict[str, Any]] = []
    pitch = 1.5
    columns = dp * tp
    group_gap = 0.35
    for role in roles:
        column = role.dp_rank * (tp + group_gap) + role.tp_rank
        y0 = 0.6 + role.pp_stage * pitch + 0.45
        fill = _colour(role.pp_stage)
        shapes.append(_rect(column + 0.06, y0, column + 0.94, y0 + 0.85, fill))
        notes.append(_note(column + 0.5, y0 + 0.42, str(role.rank), colour=_ink(fill)))
    for stage in range(pp):
        first, last = next(r.layers for r in roles if r.pp_stage == stage)
        y0 = 0.6 + stage * pitch
        notes.append(
            # centred in the gap between the stage above (its boxes end at y0 - 0.15) and this
            # stage's boxes (from y0 + 0.4): clear of both borders
            _note(0, y0 + 0.125, f"<b>Stage {stage + 1}</b>: layers {first}–{last - 1}", xanchor="left")
        )
        for replica in range(dp):
            x0 = replica * (tp + group_gap)
            shapes.append(
                _rect(
                    x0 - 0.02,
                    y0 + 0.4,
                    x0 + tp + 0.02,
                    y0 + 1.35,
                    "rgba(0,0,0,0)",
                    line={"color": OUTLINE, "width": 2},
                    layer="above",
                )
            )
    for replica in range(dp):
        x0 = replica * (tp + group_gap)
        notes.append(_note(x0 + tp / 2, 0.25, f"<b>DP replica {replica + 1}</b>"))
    width = columns + (dp - 1) * group_gap
    bottom = 0.6 + pp * pitch
    n = layout.n_gpus
    layout_spec = {
        "title": chart_title(
            f"{n} GPUs = DP {dp} × TP {tp} × PP {pp}",
            f"{name}: rows are pipeline stages; each box is a TP group of {tp} GPUs splitting every "
            "matrix; numbers are global ranks",
        ),
        "height": 250 + 50 * pp,
        "showlegend": False,
        "shapes": shapes,
        "annotations": notes,
        "xaxis": _hidden(-0.1, width + 0.1),
        "yaxis": _hidden(bottom + 0.1, 0),
        "plot_bgcolor": "rgba(0,0,0,0)",
    }
    table = tuple(
        {
            "GPU (global rank)": r.rank,
            "node": r.node,
            "DP replica": r.dp_rank + 1,
            "TP rank": r.tp_rank + 1,
            "PP stage": r.pp_stage + 1,
            "layers": f"{r.layers[0]}–{r.layers[1] - 1}",
        }
        for r in roles
    )
    per_stage = layers_per_stage(spec.num_layers, pp)
    alt = (
        f"{n} GPUs for {name} arranged as {pp} pipeline stages of {per_stage[0]} layers"
        f"{' or so' if len(set(per_stage)) > 1 else ''}, each stage held by {dp} data-parallel replicas, "
        f"each replica a tensor-parallel group of {tp} GPUs that splits every weight matrix; ranks follow "
        "Megatron-LM's order, TP fastest."
    )
    caption = (
        "Tensor-parallel groups get consecutive ranks, so they stay inside a node on NVLink; "
        "pipeline stages, which only pass activations, are the ones that cross nodes. Colours repeat the "
        "stage named on each row."
    )
    return Diagram("parallelism-3d", _finish([], layout_spec), alt, table, caption)


def tp_pp_dp_splits(
    *, model: str = "llama-3-8b", tp: int = 4, pp: int = 4, dp: int = 4, batch: int = 16
) -> Diagram:
    """Three bands: TP cuts a layer's matrix, PP cuts the layer stack, DP cuts the batch."""
    for label, value in (("tp", tp), ("pp", pp), ("dp", dp)):
        _check_range(label, value, 1, 8)
    _check_range("batch", batch, 1, 64)
    if batch % dp:
        raise ValueError(f"a batch of {batch} sequences does not split evenly over DP {dp}")
    name, spec = _preset_spec(model)
    check_layout(spec, Layout(dp=1, tp=tp, pp=pp, nodes=1, gpus_per_node=tp * pp))
    h = spec.hidden_size
    width = spec.expert_intermediate_size if spec.is_moe else spec.intermediate_size
    matrix = "each expert's" if spec.is_moe else "MLP"
    slice_cols = width // tp
    stages = layers_per_stage(spec.num_layers, pp)
    starts = [sum(stages[:i]) for i in range(pp)]
    per_replica = batch // dp
    shapes: list[dict[str, Any]] = []
    notes: list[dict[str, Any]] = []
    full = 10.0
    bands = (
        (
            0.0,
            f"<b>Tensor parallel, TP {tp}</b>: column-parallel first matrix, row-parallel second",
            [f"{h:,} ×<br>{slice_cols:,}" for _ in range(tp)],
            f"{matrix} up-projection {h:,} × {width:,}",
        ),
        (
            2.2,
            f"<b>Pipeline parallel, PP {pp}</b>: the stack of {spec.num_layers} layers",
            [f"layers<br>{s}–{s + c - 1}" for s, c in zip(starts, stages, strict=True)],
            "",
        ),
        (
            4.4,
            f"<b>Data parallel, DP {dp}</b>: the batch of {batch} sequences",
            [f"{per_replica} seq" for _ in range(dp)],
            "every GPU keeps a full copy of the weights",
        ),
    )
    for y0, heading, labels, foot in bands:
        notes.append(_note(0, y0 + 0.25, heading, xanchor="left"))
        count = len(labels)
        cell = full / count
        for i, text in enumerate(labels):
            fill = _colour(i)
            shapes.append(
                _rect(
                    i * cell, y0 + 0.55, (i + 1) * cell, y0 + 1.55, fill, line={"color": "white", "width": 2}
                )
            )
            notes.append(_note((i + 0.5) * cell, y0 + 1.05, text, colour=_ink(fill), size=LABEL_FONT_PX - 1))
        caption_text = f"GPU 1 … GPU {count}" + (f" · {foot}" if foot else "")
        notes.append(_note(0, y0 + 1.8, caption_text, xanchor="left", size=LABEL_FONT_PX - 1))
    layout = {
        "title": chart_title(
            f"What each kind of parallelism splits: {name}", "Colours: GPU 1, 2, 3 … in each row"
        ),
        "height": 500,
        "showlegend": False,
        "shapes": shapes,
        "annotations": notes,
        "xaxis": _hidden(-0.1, full + 0.1),
        "yaxis": _hidden(6.5, -0.1),
        "plot_bgcolor": "rgba(0,0,0,0)",
    }
    table = (
        {
            "kind": "tensor parallel",
            "degree": tp,
            "what is split": f"each weight matrix (MLP up-projection {h:,} × {width:,})",
            "per GPU": f"{h:,} × {slice_cols:,} = {h * slice_cols:,} weights of it",
        },
        {
            "kind": "pipeline parallel",
            "degree": pp,
            "what is split": f"{spec.num_layers} layers",
            "per GPU": ", ".join(f"{c} layers" for c in stages),
        },
        {
            "kind": "data parallel",
            "degree": dp,
            "what is split": f"batch of {batch} sequences",
            "per GPU": f"{per_replica} sequences (full weights)",
        },
    )
    alt = (
        f"For {name}: TP {tp} gives each GPU {slice_cols:,} of the {width:,} columns of the MLP's first "
        f"matrix (and the matching rows of its second); "
        f"PP {pp} gives each GPU {stages[0]} of the {spec.num_layers} layers; DP {dp} gives each GPU "
        f"{per_replica} of the {batch} sequences and a full copy of the weights."
    )
    caption = (
        "Megatron's TP splits the first matrix of each pair by columns and the second (the MLP's "
        "down-projection, attention's output projection) by rows, so one all-reduce joins the pair. "
        "TP needs an all-reduce inside every layer, so it stays on NVLink; PP only passes activations "
        "between stages but idles in the pipeline bubble; DP averages gradients once per step. Real "
        "jobs combine all three (3D parallelism)."
    )
    return Diagram("tp-pp-dp-splits", _finish([], layout), alt, table, caption)


def ring_schedule(n_gpus: int) -> list[list[int]]:
    """Chunk each GPU sends in each of the 2(n − 1) steps of a ring all-reduce (GPU i sends to i + 1).

    Reduce-scatter: in step s GPU i sends chunk (i − s) mod n and the receiver adds it to its
    own; after n − 1 steps GPU i holds the full sum of chunk (i + 1) mod n. All-gather: in step t
    GPU i forwards chunk (i + 1 − t) mod n, which the receiver keeps. Simulated here so the
    schedule is checked, not assumed: every GPU ends with every chunk summed over all GPUs.
    """
    n = n_gpus
    have = [[{i} for _ in range(n)] for i in range(n)]  # have[gpu][chunk] = GPUs summed in
    sends: list[list[int]] = []
    for s in range(n - 1):
        step = [(i - s) % n for i in range(n)]
        incoming = [set(have[i][step[i]]) for i in range(n)]
        for i in range(n):
            have[(i + 1) % n][step[i]] |= incoming[i]
        sends.append(step)
    for t in range(n - 1):
        step = [(i + 1 - t) % n for i in range(n)]
        incoming = [set(have[i][step[i]]) for i in range(n)]
        for i in range(n):
            have[(i + 1) % n][step[i]] = incoming[i]
        sends.append(step)
    everyone = set(range(n))
    if any(chunk != everyone for gpu in have for chunk in gpu):  # pragma: no cover - a schedule bug
        raise RuntimeError("ring schedule does not complete the all-reduce")
    return sends


def ring_all_reduce(*, n_gpus: int = 4, model: str = "llama-3-8b", link: str = "nvlink-4") -> Diagram:
    """Steps × GPUs: which chunk of the gradient buffer each GPU sends to its neighbour."""
    _check_range("n_gpus", n_gpus, 2, 8)
    name, spec = _preset_spec(model)
    interconnect = get_interconnect(link)
    grad_bytes = spec.param_count() * training_recipe(ZERO_RECIPE).grad_bytes
    chunk = grad_bytes / n_gpus
    per_gpu = ring_allreduce_bytes_per_gpu(grad_bytes, n_gpus)
    rate = interconnect.payload_per_direction_bytes_per_s * link_efficiency(interconnect)
    sends = ring_schedule(n_gpus)
    steps = len(sends)
    rs = n_gpus - 1
    step_labels = [f"{s + 1}: {'reduce-scatter' if s < rs else 'all-gather'}" for s in range(steps)]
    # chunk colours light enough for dark text (Okabe-Ito without its blue and black)
    light = [c for c in OKABE_ITO if _ink(c) != "white"]
    colours = [light[c % len(light)] for c in range(n_gpus)]
    scale: list[list[Any]] = []
    for i, c in enumerate(colours):
        scale += [[i / n_gpus, c], [(i + 1) / n_gpus, c]]
    text = [[f"chunk {c + 1}" if n_gpus <= 4 else str(c + 1) for c in row] for row in sends]
    data = [
        {
            "type": "heatmap",
            "x": [f"{i + 1}→{(i + 1) % n_gpus + 1}" if n_gpus <= 4 else str(i + 1) for i in range(n_gpus)],
            "y": step_labels,
            "z": [[float(c) for c in row] for row in sends],
            "zmin": -0.5,
            "zmax": n_gpus - 0.5,
            "colorscale": scale,
            "showscale": False,
            "xgap": 3,
            "ygap": 3,
            "text": text,
            "texttemplate": "%{text}",
            "textfont": {"size": LABEL_FONT_PX, "color": LABEL_BOX_TEXT},
            "hovertemplate": "Step %{y}<br>%{x} sends %{text}<extra></extra>",
            "showlegend": False,
            "name": "chunks",
        }
    ]
    layout = {
        "title": chart_title(
            f"Ring all-reduce on {n_gpus} GPUs: {steps} steps of {_gb(chunk)}",
            f"{name} gradients ({_gb(grad_bytes)}) in {n_gpus} chunks; each GPU sends "
            f"{_gb(per_gpu)}, {steps * chunk / rate * 1e3:,.3g} ms over {interconnect.name}",
        ),
        "height": 200 + 36 * steps,
        "showlegend": False,
        "xaxis": axis(
            "Sending GPU (each sends to the next, the last to the first)",
            width=30,
            showgrid=False,
            tickangle=0,
        ),
        "yaxis": axis("Step", autorange="reversed", showgrid=False),
    }
    table = tuple(
        {
            "step": s + 1,
            "phase": "reduce-scatter" if s < rs else "all-gather",
            "bytes sent per GPU": chunk,
            "time at link rate (s)": chunk / rate,
            **{f"GPU {i + 1} sends chunk": c + 1 for i, c in enumerate(row)},
        }
        for s, row in enumerate(sends)
    )
    alt = (
        f"A ring all-reduce of {name}'s {_gb(grad_bytes)} of gradients over {n_gpus} GPUs takes "
        f"2(N − 1) = {steps} steps; in each, every GPU sends one {_gb(chunk)} chunk to its neighbour, "
        f"{_gb(per_gpu)} per GPU in all, 2(N − 1)/N of the buffer."
    )
    caption = (
        f"The first {rs} steps (reduce-scatter) add each chunk up as it travels the ring; the last {rs} "
        "(all-gather) pass the finished sums on. Every link is busy in every step, which is why the "
        f"ring is bandwidth-optimal. Times use {interconnect.name}'s one-way rate × its efficiency."
    )
    return Diagram("ring-all-reduce", _finish(data, layout), alt, table, caption)


DIAGRAMS = {
    "nvlink-topology": nvlink_topology_diagram,
    "pipeline-bubble": pipeline_bubble,
    "zero-stages": zero_stages,
    "compute-comm-overlap": compute_comm_overlap,
    "parallelism-3d": parallelism_3d,
    "tp-pp-dp-splits": tp_pp_dp_splits,
    "ring-all-reduce": ring_all_reduce,
}
