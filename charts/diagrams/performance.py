"""Diagrams of the glossary's performance terms: occupancy, Little's law, the roofline ridge and
capacity against bandwidth.

Every number comes from the project's data: the accelerator catalog (``simulators.hardware``), the
memory hierarchy (``simulators.hierarchy``), model presets, the quantization formats and
``simulators/data/gpu_architecture.csv`` (read through ``charts.diagrams.schematic``).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from charts.diagrams import Diagram
from charts.diagrams.schematic import (
    BITS_PER_BYTE,
    BLUE,
    GREEN,
    GREY,
    ORANGE,
    VERMILLION,
    _capacity,
    arch_fact,
    cuda_fact,
    require_family,
    require_nvidia_gpu,
)
from charts.style import (
    LABEL_BOX_TEXT,
    LABEL_FONT_PX,
    axis,
    decade_ticks,
    figure,
    legend_name,
)
from charts.style import title as chart_title
from simulators import hierarchy
from simulators.hardware import get_accelerator, load_catalog
from simulators.llm_memory import weight_bytes
from simulators.presets import get_model_preset
from simulators.roofline import attainable_flops, ridge_point
from simulators.units import binary_bytes, si


def occupancy_diagram(
    gpu: str = "h100-sxm", threads_per_block: int = 256, registers_per_thread: int = 128
) -> Diagram:
    """Resident warps per SM as registers per thread grow from 16 to the maximum (NVIDIA GPUs with a
    sourced register file and warp limit; ``ValueError`` otherwise)."""
    require_nvidia_gpu(get_accelerator(gpu), "warps, registers per thread and resident blocks")
    fam = require_family(gpu)
    max_regs = cuda_fact("max_registers_per_thread")
    warp = cuda_fact("warp_size")
    if not 0 < registers_per_thread <= max_regs:
        raise ValueError(f"registers_per_thread must be 1..{max_regs}")
    step = BITS_PER_BYTE  # sample every 8 registers
    xs = [*range(step * 2, max_regs + 1, step), max_regs]
    ys = [resident_warps(r, threads_per_block, gpu) for r in xs]
    chosen = resident_warps(registers_per_thread, threads_per_block, gpu)
    limit = fam.max_warps_per_sm
    assert limit is not None
    registers = _capacity(fam, "registers") or 0
    data = [
        {
            "type": "scatter",
            "x": xs,
            "y": ys,
            "mode": "lines",
            "line": {"shape": "hv", "color": BLUE, "width": 3},
            "name": legend_name(f"resident warps per SM, {threads_per_block}-thread blocks"),
            "hovertemplate": "%{x} registers/thread: %{y} warps<extra></extra>",
        },
        {
            "type": "scatter",
            "x": [registers_per_thread],
            "y": [chosen],
            "mode": "markers+text",
            "marker": {
                "size": 13,
                "color": ORANGE,
                "symbol": "diamond",
                "line": {"color": "white", "width": 1.2},
            },
            "text": [f"{registers_per_thread} registers: {chosen} warps ({100 * chosen / limit:.0f}%)"],
            "textposition": "top right" if registers_per_thread < max_regs * 0.6 else "top left",
            "textfont": {"size": LABEL_FONT_PX},
            "name": legend_name("your kernel"),
        },
    ]
    layout = {
        "title": chart_title(
            f"Occupancy on the {fam.name}",
            f"{binary_bytes(registers)} of registers per SM, at most {limit} warps",
        ),
        "xaxis": axis("Registers per thread", range=[0, max_regs + 5]),
        "yaxis": axis("Resident warps per SM", range=[0, limit * 1.15]),
        "shapes": [
            {
                "type": "line",
                "xref": "paper",
                "x0": 0,
                "x1": 1,
                "yref": "y",
                "y0": limit,
                "y1": limit,
                "line": {"color": GREY, "dash": "dash", "width": 2},
            }
        ],
        "annotations": [
            {
                "xref": "paper",
                "x": 1,
                "xanchor": "right",
                "yref": "y",
                "y": limit,
                "yanchor": "bottom",
                "text": f"SM limit: {limit} warps",
                "showarrow": False,
            }
        ],
        "height": 440,
    }
    table = tuple(
        {"Registers per thread": r, "Resident warps per SM": w, "Occupancy (%)": 100 * w / limit}
        for r, w in zip(xs, ys, strict=True)
    )
    full = max((r for r, w in zip(xs, ys, strict=True) if w == limit), default=None)
    alt = (
        f"On the {fam.name} an SM holds at most {limit} warps and {binary_bytes(registers)} of registers. "
        f"With {threads_per_block}-thread blocks, {registers_per_thread} registers per thread leave room for "
        f"{chosen} warps ({100 * chosen / limit:.0f}% occupancy)"
        + (f"; full occupancy needs {full} registers or fewer." if full else ".")
    )
    return Diagram(
        "occupancy",
        figure(data, layout),
        alt,
        table,
        f"Each warp needs {warp} × (registers per thread) registers, and blocks fit whole, so occupancy "
        "falls in steps as a kernel uses more registers. "
        "Per-warp register rounding and shared memory are left out.",
    )


def resident_warps(registers_per_thread: int, threads_per_block: int, gpu: str = "h100-sxm") -> int:
    """Warps resident per SM when registers are the limit: whole blocks that fit the register file,
    the warp limit and the block limit. (Per-warp register rounding is left out.)"""
    fam = require_family(gpu)
    warp = cuda_fact("warp_size")
    registers = _capacity(fam, "registers")
    if registers is None or fam.max_warps_per_sm is None:
        raise ValueError("no sourced register-file size or resident-warp limit")
    register_count = registers * BITS_PER_BYTE / cuda_fact("register_bits")
    warps_per_block = math.ceil(threads_per_block / warp)
    by_registers = int(register_count // (registers_per_thread * warp))
    blocks = min(by_registers // warps_per_block, fam.max_warps_per_sm // warps_per_block)
    max_blocks = arch_fact(fam.accelerator_id or gpu, "max_blocks_per_sm")
    if max_blocks is not None:
        blocks = min(blocks, int(max_blocks))
    return blocks * warps_per_block


def littles_law_diagram(
    gpu: str = "h100-sxm", level: str = "device-memory", bytes_per_thread: Sequence[int] = (4, 8, 16)
) -> Diagram:
    """Bytes in flight = latency × bandwidth, and the warps per SM that carry them."""
    fam = require_family(gpu)
    lv = hierarchy.get_level(gpu, level)
    if not lv.has_latency:
        raise ValueError(f"no sourced {level} latency")
    warp = cuda_fact("warp_size")
    latency = lv.latency_s("mid")
    device_bw = lv.bandwidth_per_device_bytes_per_s
    if device_bw is None:
        raise ValueError(f"no sourced {level} bandwidth")
    in_flight = hierarchy.bytes_in_flight(lv)
    per_sm = hierarchy.bytes_in_flight(lv, per_sm=True)
    warps = [hierarchy.warps_in_flight(lv, b, warp) for b in bytes_per_thread]
    limit = fam.max_warps_per_sm
    labels = [f"{b}-byte loads" for b in bytes_per_thread]
    data = [
        {
            "type": "bar",
            "x": labels,
            "y": warps,
            "marker": {"color": [VERMILLION if limit and w > limit else GREEN for w in warps]},
            "text": [f"{w:.0f} warps" for w in warps],
            "textposition": "outside",
            "textfont": {"size": LABEL_FONT_PX},
            "name": "warps per SM with one load in flight each",
            "hovertemplate": "%{x}: %{y:.1f} warps per SM<extra></extra>",
            "cliponaxis": False,
        }
    ]
    shapes = []
    annotations = []
    if limit:
        shapes.append(
            {
                "type": "line",
                "xref": "paper",
                "x0": 0,
                "x1": 1,
                "yref": "y",
                "y0": limit,
                "y1": limit,
                "line": {"color": GREY, "dash": "dash", "width": 2},
            }
        )
        annotations.append(
            {
                "xref": "paper",
                "x": 1,
                "xanchor": "right",
                "yref": "y",
                "y": limit,
                "yanchor": "bottom",
                "text": f"SM limit: {limit} warps",
                "showarrow": False,
            }
        )
    layout = {
        "title": chart_title(
            f"{si(latency, 's')} × {si(device_bw, 'B/s')} = {si(in_flight, 'B')} in flight",
            f"{lv.name} on the {fam.name}: {si(per_sm, 'B')} per SM",
        ),
        "xaxis": axis("Bytes each thread loads at once"),
        "yaxis": axis("Warps per SM needed", range=[0, max([*warps, limit or 0]) * 1.25]),
        "shapes": shapes,
        "annotations": annotations,
        "showlegend": False,
        "height": 420,
    }
    table = tuple(
        {
            "Load per thread (bytes)": b,
            "Bytes in flight per SM": per_sm,
            "Warps needed per SM": w,
            "SM warp limit": limit,
        }
        for b, w in zip(bytes_per_thread, warps, strict=True)
    )
    alt = (
        f"Little's law for {lv.name} on the {fam.name}: "
        f"{si(latency, 's')} latency × {si(device_bw, 'B/s')} = "
        f"{si(in_flight, 'B')} in flight, {si(per_sm, 'B')} per SM; "
        f"with {bytes_per_thread[0]}-byte loads that is "
        f"{warps[0]:.0f} warps per SM" + (f" against a limit of {limit}." if limit else ".")
    )
    return Diagram(
        "littles-law",
        figure(data, layout),
        alt,
        table,
        "To keep memory busy, latency × bandwidth bytes must be requested and not yet returned. Wider loads "
        "(or several loads per thread) carry them with fewer warps. "
        "Latency: midpoint of the published range, measured by an unloaded pointer chase; under load "
        "latency grows, so a busy GPU needs more bytes in flight than this.",
    )


def roofline_ridge_diagram(gpu: str = "h100-sxm", dtype: str = "bf16") -> Diagram:
    """The roofline of one GPU with its ridge point = peak FLOP/s ÷ memory bandwidth."""
    acc = get_accelerator(gpu)
    peak = acc.peak_flops(dtype)
    bw = acc.memory_bandwidth_bytes_per_s
    ridge = ridge_point(peak, bw)
    low, high = ridge / 1e3, ridge * 1e2
    xs = [low * (high / low) ** (i / 60) for i in range(61)]
    xs = sorted({*xs, ridge})
    ys = [attainable_flops(x, peak, bw) for x in xs]
    ticks_x = decade_ticks(low, high)
    ticks_y = decade_ticks(min(ys), peak, lambda v: si(v, "FLOP/s"))
    data = [
        {
            "type": "scatter",
            "x": xs,
            "y": ys,
            "mode": "lines",
            "line": {"color": BLUE, "width": 3},
            "name": legend_name(f"{acc.name}, {dtype} roofline"),
            "hovertemplate": "%{x:.3g} FLOP/byte: %{y:.3s}FLOP/s<extra></extra>",
        },
        {
            "type": "scatter",
            "x": [ridge],
            "y": [peak],
            "mode": "markers+text",
            "marker": {
                "size": 13,
                "color": ORANGE,
                "symbol": "diamond",
                "line": {"color": "white", "width": 1.2},
            },
            "text": [f"ridge: {ridge:,.0f} FLOP/byte"],
            "textposition": "bottom right",  # clear of the dashed ridge line
            "textfont": {"size": LABEL_FONT_PX},
            "name": "ridge point",
        },
    ]
    layout = {
        "title": chart_title(
            f"Ridge point: {si(peak, 'FLOP/s')} ÷ {si(bw, 'B/s')} = {ridge:,.0f} FLOP/byte",
            f"{acc.name}, dense {dtype}",
        ),
        "xaxis": axis("Arithmetic intensity (FLOP per byte)", **ticks_x),
        "yaxis": axis("Attainable FLOP/s", **ticks_y),
        "shapes": [
            {
                "type": "line",
                "xref": "x",
                "yref": "paper",
                "x0": ridge,
                "x1": ridge,
                "y0": 0,
                "y1": 1,
                "line": {"color": GREY, "dash": "dash", "width": 2},
            }
        ],
        "annotations": [
            {
                "xref": "x",
                "x": math.log10(ridge / 30),
                "yref": "y",
                "y": math.log10(peak * 1.6),
                "text": "memory-bound",
                "showarrow": False,
            },
            {
                "xref": "x",
                "x": math.log10(ridge * 8),
                "yref": "y",
                "y": math.log10(peak * 1.6),
                "text": "compute-bound",
                "showarrow": False,
            },
        ],
        "showlegend": False,
        "height": 420,
    }
    layout["yaxis"]["range"] = [layout["yaxis"]["range"][0], math.log10(peak * 3)]
    table = (
        {"Quantity": f"Peak dense {dtype}", "Value": peak / 1e12, "Unit": "TFLOP/s"},
        {"Quantity": "Memory bandwidth", "Value": bw / 1e12, "Unit": "TB/s"},
        {"Quantity": "Ridge point", "Value": ridge, "Unit": "FLOP/byte"},
    )
    alt = (
        f"The {acc.name} roofline for dense {dtype}: a kernel below {ridge:,.0f} FLOP per byte is limited by "
        f"{si(bw, 'B/s')} of memory bandwidth, above it by the {si(peak, 'FLOP/s')} peak."
    )
    return Diagram(
        "roofline-ridge",
        figure(data, layout),
        alt,
        table,
        "Left of the ridge, attainable FLOP/s = intensity × bandwidth; right of it, the peak. "
        "Adapted from the roofline figure of Williams, Waterman and Patterson, CACM 52(4), 2009.",
    )


def capacity_vs_bandwidth_diagram(
    gpu: str = "h100-sxm",
    models: Sequence[str] = ("llama-3-8b", "llama-3-70b"),
    weight_format: str = "bf16",
    tokens_per_s: float = 50,
) -> Diagram:
    """Every catalog GPU's memory size against its bandwidth, with model weight sizes (fits to the
    right) and the bandwidth that reads the first model's weights ``tokens_per_s`` times a second."""
    gpus = [a for a in load_catalog() if a.kind == "gpu" and a.memory_bytes]
    chosen = get_accelerator(gpu)
    if chosen not in gpus:
        # the chart plots discrete GPUs only; highlighting a TPU, a system-on-chip or a CPU would draw
        # a point the subtitle says is left out (diagram review 2026-11-28, capacity-vs-bandwidth)
        raise ValueError("not a discrete GPU: TPUs, Gaudi, systems-on-chip and CPUs are not on this chart")
    xs = [a.memory_bytes / 1e9 for a in gpus]
    ys = [a.memory_bandwidth_bytes_per_s / 1e12 for a in gpus]
    weights = [(get_model_preset(m), weight_bytes(get_model_preset(m).spec, weight_format)) for m in models]
    need_bw = weights[0][1] * tokens_per_s if weights else None
    data = [
        {
            "type": "scatter",
            "x": xs,
            "y": ys,
            "mode": "markers",
            "marker": {"size": 10, "color": BLUE, "line": {"color": "white", "width": 1}},
            # A dual-die board (MI250X) is one point per device the framework sees, and says so.
            "customdata": [
                a.name + (f" (one of its {a.devices_per_board} devices)" if a.devices_per_board > 1 else "")
                for a in gpus
            ],
            "hovertemplate": "%{customdata}: %{x:.0f} GB, %{y:.2f} TB/s<extra></extra>",
            "name": "catalog GPUs",
        }
    ]
    if chosen.memory_bytes:
        data.append(
            {
                "type": "scatter",
                "x": [chosen.memory_bytes / 1e9],
                "y": [chosen.memory_bandwidth_bytes_per_s / 1e12],
                "mode": "markers+text",
                "marker": {
                    "size": 15,
                    "color": ORANGE,
                    "symbol": "diamond",
                    "line": {"color": "white", "width": 1.2},
                },
                "text": [chosen.name],
                "textposition": "top left",
                "textfont": {"size": LABEL_FONT_PX},
                "name": chosen.name,
            }
        )
    shapes = []
    annotations = []
    mid_x = (math.log10(min(xs)) + math.log10(max(xs))) / 2 if xs else 0.0
    for i, (preset, wb) in enumerate(weights):
        shapes.append(
            {
                "type": "line",
                "xref": "x",
                "yref": "paper",
                "x0": wb / 1e9,
                "x1": wb / 1e9,
                "y0": 0,
                "y1": 1,
                "line": {"color": GREEN, "dash": "dash", "width": 2},
            }
        )
        annotations.append(
            {
                "xref": "x",
                "x": math.log10(wb / 1e9),
                "yref": "paper",
                "y": 1 - 0.09 * i,
                "xanchor": "left" if math.log10(wb / 1e9) < mid_x else "right",
                "text": f"{preset.name}: {wb / 1e9:.0f} GB",
                "showarrow": False,
                "bgcolor": "rgba(255,255,255,0.85)",
                "font": {"color": LABEL_BOX_TEXT, "size": LABEL_FONT_PX},
            }
        )
    if need_bw:
        shapes.append(
            {
                "type": "line",
                "xref": "paper",
                "yref": "y",
                "x0": 0,
                "x1": 1,
                "y0": need_bw / 1e12,
                "y1": need_bw / 1e12,
                "line": {"color": VERMILLION, "dash": "dot", "width": 2},
            }
        )
        annotations.append(
            {
                "xref": "paper",
                "x": 0,
                "xanchor": "left",
                "yref": "y",
                "y": math.log10(need_bw / 1e12),
                "yanchor": "bottom",
                "text": f"{tokens_per_s:g} tokens/s of {weights[0][0].name}, batch 1",
                "showarrow": False,
                "bgcolor": "rgba(255,255,255,0.85)",
                "font": {"color": LABEL_BOX_TEXT, "size": LABEL_FONT_PX},
            }
        )
    all_x = xs + [wb / 1e9 for _, wb in weights]
    all_y = ys + ([need_bw / 1e12] if need_bw else [])
    layout = {
        "title": chart_title(
            "Fits vs feeds", "Memory size against bandwidth, every discrete GPU in the catalog (per device)"
        ),
        "xaxis": axis("Memory per GPU (GB)", **decade_ticks(min(all_x), max(all_x))),
        "yaxis": axis("Memory bandwidth (TB/s)", **decade_ticks(min(all_y), max(all_y))),
        "shapes": shapes,
        "annotations": annotations,
        "showlegend": False,
        "height": 480,
    }
    table = tuple(
        {
            "GPU": a.name,
            "Memory (GB)": a.memory_bytes / 1e9,
            "Bandwidth (TB/s)": a.memory_bandwidth_bytes_per_s / 1e12,
            f"{weights[0][0].name} tokens/s at batch 1 (bandwidth ÷ weights)" if weights else "tokens/s": (
                a.memory_bandwidth_bytes_per_s / weights[0][1]
            )
            if weights and a.memory_bytes >= weights[0][1]
            else None,
        }
        for a in gpus
    )
    alt = (
        f"{len(gpus)} catalog GPUs by memory size and bandwidth, one point per device (a dual-die board "
        "such as the MI250X is two); systems-on-chip and CPUs, whose memory is shared, are left out."
    )
    if weights:
        alt += (
            " " + "; ".join(f"{p.name} needs {wb / 1e9:.0f} GB in {weight_format}" for p, wb in weights) + "."
        )
    if need_bw and chosen.memory_bytes:
        alt += (
            f" Reading {weights[0][0].name} {tokens_per_s:g} times a second takes {need_bw / 1e12:.2f} TB/s; "
            f"the {chosen.name} has {chosen.memory_bandwidth_bytes_per_s / 1e12:.2f} TB/s."
        )
    return Diagram(
        "capacity-vs-bandwidth",
        figure(data, layout),
        alt,
        table,
        "A GPU right of a model's line holds its weights; one above the dotted line reads them fast enough "
        "for that many tokens a second when decoding one sequence (every weight read once per token).",
    )


DIAGRAMS = {
    "occupancy": occupancy_diagram,
    "littles-law": littles_law_diagram,
    "roofline-ridge": roofline_ridge_diagram,
    "capacity-vs-bandwidth": capacity_vs_bandwidth_diagram,
}
