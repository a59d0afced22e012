"""Diagrams of GPU hardware terms: the SM, warps, the thread and memory hierarchies, coalescing, bank
conflicts, occupancy, HBM, Tensor Cores, Little's law, the roofline ridge, capacity against
bandwidth, an NVSwitch node and quantization grids.

Every number comes from the project's data: the accelerator catalog (``simulators.hardware``), the
memory hierarchy (``simulators.hierarchy``), model presets, the quantization formats, and for the
per-SM facts the catalog does not hold, ``simulators/data/gpu_architecture.csv`` (one sourced row
per fact: sub-partitions, Tensor Cores and FP32 cores per SM, HBM stacks, clocks, and the CUDA
definitions such as the warp size). A GPU without a fact simply draws without it.
"""

from __future__ import annotations

import csv
import functools
import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from charts.diagrams import Diagram
from charts.palette import OKABE_ITO
from charts.style import (
    LABEL_BOX_TEXT,
    LABEL_FONT_PX,
    Spec,
    axis,
    decade_ticks,
    figure,
    legend_name,
    plain_number,
    wrap,
)
from charts.style import title as chart_title
from simulators import hierarchy
from simulators.hardware import Accelerator, get_accelerator, get_interconnect, load_catalog
from simulators.llm_memory import weight_bytes
from simulators.presets import get_model_preset
from simulators.quantization import FORMATS, format_grid
from simulators.roofline import attainable_flops, ridge_point
from simulators.units import binary_bytes, si

ARCHITECTURE_CSV = Path(__file__).resolve().parents[2] / "simulators" / "data" / "gpu_architecture.csv"
ARCHITECTURE_COLUMNS = ("id", "fact", "value", "unit", "source", "notes")
CUDA = "cuda"  # rows that hold CUDA definitions, the same on every GPU

BLUE, ORANGE, GREEN, PURPLE, SKY, VERMILLION, YELLOW, BLACK = OKABE_ITO
GREY = "#BBBBBB"
LIGHT = "rgba(255,255,255,0.92)"
FLOPS_PER_FMA = 2  # one fused multiply-add counts as 2 FLOPs (simulators/data/README.md, Units)
BITS_PER_BYTE = 8  # definition


def _tint(hex_colour: str, alpha: float) -> str:
    r, g, b = (int(hex_colour[i : i + 2], 16) for i in (1, 3, 5))
    return f"rgba({r},{g},{b},{alpha})"


# ---------------------------------------------------------------------------------------------
# gpu_architecture.csv


@functools.cache
def _architecture() -> dict[str, dict[str, tuple[float, str]]]:
    """id -> fact -> (value, first source URL), checked on load."""
    out: dict[str, dict[str, tuple[float, str]]] = {}
    with ARCHITECTURE_CSV.open(newline="", encoding="utf-8") as handle:
        reader = csv.DictReader(handle)
        if tuple(reader.fieldnames or ()) != ARCHITECTURE_COLUMNS:
            raise ValueError(f"{ARCHITECTURE_CSV.name}: header must be {ARCHITECTURE_COLUMNS}")
        for line, row in enumerate(reader, start=2):
            value = float(row["value"])
            sources = [s.strip() for s in row["source"].split(";") if s.strip()]
            if not sources or not all(s.startswith("http") for s in sources):
                raise ValueError(f"{ARCHITECTURE_CSV.name} line {line}: every row needs source URLs")
            facts = out.setdefault(row["id"].strip(), {})
            if row["fact"] in facts:
                raise ValueError(f"{ARCHITECTURE_CSV.name} line {line}: {row['fact']} given twice")
            facts[row["fact"].strip()] = (value, sources[0])
    return out


def arch_fact(gpu: str, fact: str) -> float | None:
    """A per-GPU fact from gpu_architecture.csv, or None where no source was found."""
    found = _architecture().get(gpu, {}).get(fact)
    return None if found is None else found[0]


def arch_source(gpu: str, fact: str) -> str:
    found = _architecture().get(gpu, {}).get(fact)
    return "" if found is None else found[1]


def cuda_fact(fact: str) -> int:
    """A CUDA definition (warp size, banks, ...) from gpu_architecture.csv."""
    value = arch_fact(CUDA, fact)
    if value is None:
        raise KeyError(f"gpu_architecture.csv has no cuda/{fact}")
    return int(value)


def _family(gpu: str) -> hierarchy.HardwareFamily | None:
    try:
        return hierarchy.family(gpu)
    except KeyError:
        return None


def _capacity(fam: hierarchy.HardwareFamily | None, level: str) -> float | None:
    if fam is None or not fam.has_level(level):
        return None
    return fam.level(level).capacity_bytes


# ---------------------------------------------------------------------------------------------
# Drawing helpers: a schematic is shapes and text on hidden 0-100 axes


def _rect(x0: float, y0: float, x1: float, y1: float, fill: str, line: str = BLACK, **extra: Any) -> dict:
    return {
        "type": "rect",
        "xref": "x",
        "yref": "y",
        "x0": x0,
        "y0": y0,
        "x1": x1,
        "y1": y1,
        "fillcolor": fill,
        "line": {"color": line, "width": extra.pop("width", 1.5), **extra.pop("line_extra", {})},
        "layer": "below",
        **extra,
    }


def _line(
    x0: float, y0: float, x1: float, y1: float, colour: str = BLACK, width: float = 2, **extra: Any
) -> dict:
    return {
        "type": "line",
        "xref": "x",
        "yref": "y",
        "x0": x0,
        "y0": y0,
        "x1": x1,
        "y1": y1,
        "line": {"color": colour, "width": width, **extra},
        "layer": "below",
    }


def _text(
    x: float,
    y: float,
    text: str,
    *,
    size: float = LABEL_FONT_PX,
    colour: str | None = LABEL_BOX_TEXT,
    xanchor: str = "center",
    yanchor: str = "middle",
    boxed: bool = False,
) -> dict:
    """Text at (x, y). Dark text by default: it sits on a light box; ``colour=None`` follows the
    theme (for text on the page background)."""
    font: dict[str, Any] = {"size": size}
    if colour is not None:
        font["color"] = colour
    out: dict[str, Any] = {
        "x": x,
        "y": y,
        "xref": "x",
        "yref": "y",
        "text": text,
        "showarrow": False,
        "xanchor": xanchor,
        "yanchor": yanchor,
        "align": "center" if xanchor == "center" else xanchor,
        "font": font,
    }
    if boxed:
        out["bgcolor"] = LIGHT
        out["font"]["color"] = LABEL_BOX_TEXT
    return out


def _schematic(
    headline: str,
    detail: str,
    shapes: list[dict],
    annotations: list[dict],
    *,
    height: int,
    x_range: tuple[float, float] = (0, 100),
    y_range: tuple[float, float] = (0, 100),
) -> Spec:
    hidden = {"visible": False, "fixedrange": True, "showgrid": False, "zeroline": False}
    layout = {
        "title": chart_title(headline, detail),
        "xaxis": {**hidden, "range": list(x_range)},
        "yaxis": {**hidden, "range": list(y_range)},
        "shapes": shapes,
        "annotations": annotations,
        "showlegend": False,
        "height": height,
        "dragmode": False,
        "hovermode": False,
        "plot_bgcolor": "rgba(0,0,0,0)",
        "paper_bgcolor": "rgba(0,0,0,0)",
    }
    # One invisible point keeps the axes (and so the shapes' coordinates) in place.
    anchor = {"type": "scatter", "x": [x_range[0]], "y": [y_range[0]], "mode": "markers", "opacity": 0}
    return figure([anchor], layout)


def _bytes(value: float) -> str:
    """Caches and register files in binary units (KiB, MiB); memories of a gigabyte or more in the
    decimal GB their labels use."""
    return si(value, "B") if value >= 1e9 else binary_bytes(value)


def _n(value: float) -> str:
    """A count with thousands separators."""
    return f"{value:,.0f}"


# ---------------------------------------------------------------------------------------------
# 1. The SM


def sm_diagram(gpu: str = "h100-sxm") -> Diagram:
    """One SM: its sub-partitions (one warp scheduler each), Tensor Cores, FP32 cores, register
    file and L1/shared memory, with the GPU's SM count."""
    acc = get_accelerator(gpu)
    fam = _family(acc.id)
    parts_known = arch_fact(acc.id, "sub_partitions_per_sm")
    parts = int(parts_known or 1)
    tensor = arch_fact(acc.id, "tensor_cores_per_sm")
    fp32 = arch_fact(acc.id, "fp32_cores_per_sm")
    registers = _capacity(fam, "registers")
    l1 = _capacity(fam, "l1")
    shared = _capacity(fam, "shared")
    sms = acc.sm_count

    shapes = [_rect(2, 2, 98, 98, _tint(BLUE, 0.08), BLUE, width=2)]
    notes = [
        _text(50, 93, f"<b>One SM</b> of {_n(sms)} on the {acc.name}" if sms else "<b>One SM</b>", size=14)
    ]
    cols = 2 if parts >= 2 else 1
    rows = math.ceil(parts / cols)
    top, bottom = 87, 26
    cell_h = (top - bottom) / rows
    cell_w = 92 / cols
    for index in range(parts):
        r, c = divmod(index, cols)
        x0, x1 = 4 + c * cell_w + 1, 4 + (c + 1) * cell_w - 1
        y1, y0 = top - r * cell_h - 1, top - (r + 1) * cell_h + 1
        shapes.append(_rect(x0, y0, x1, y1, LIGHT, BLUE))
        lines = [f"<b>Sub-partition {index + 1}</b>" if parts_known else "<b>Sub-partitions: no data</b>"]
        if parts_known:
            lines.append("1 warp scheduler")  # one per sub-partition by definition (gpu_architecture.csv)
        if tensor:
            count = tensor / parts
            lines.append(f"{count:g} Tensor Core{'s' if count != 1 else ''}")
        if fp32:
            lines.append(f"{fp32 / parts:g} FP32 cores")
        if registers:
            lines.append(f"{binary_bytes(registers / parts)} registers")
        notes.append(_text((x0 + x1) / 2, (y0 + y1) / 2, "<br>".join(lines)))
    shapes.append(_rect(5, 5, 95, 23, _tint(ORANGE, 0.25), ORANGE))
    if l1:
        memory = f"<b>L1 cache / shared memory: {binary_bytes(l1)}</b>"
        if shared:
            memory += f"<br>up to {binary_bytes(shared)} of it as shared memory"
    else:
        memory = "<b>L1 cache / shared memory</b><br>size not in the data"
    notes.append(_text(50, 14, memory + "<br>shared by the whole SM"))

    table: list[dict[str, Any]] = [{"Quantity": "SMs on the GPU", "Per SM": None, "Whole GPU": sms}]
    if parts_known:
        table.append(
            {
                "Quantity": "Sub-partitions (1 warp scheduler each)",
                "Per SM": parts,
                "Whole GPU": parts * sms if sms else None,
            }
        )
    if tensor:
        table.append(
            {"Quantity": "Tensor Cores", "Per SM": tensor, "Whole GPU": tensor * sms if sms else None}
        )
    if fp32:
        table.append({"Quantity": "FP32 cores", "Per SM": fp32, "Whole GPU": fp32 * sms if sms else None})
    if registers:
        table.append(
            {
                "Quantity": "Register file (KiB)",
                "Per SM": registers / 2**10,
                "Whole GPU": registers * sms / 2**10 if sms else None,
            }
        )
    if l1:
        table.append(
            {
                "Quantity": "L1 / shared memory (KiB)",
                "Per SM": l1 / 2**10,
                "Whole GPU": l1 * sms / 2**10 if sms else None,
            }
        )
    if shared:
        table.append(
            {"Quantity": "Shared memory carve-out, max (KiB)", "Per SM": shared / 2**10, "Whole GPU": None}
        )

    parts_text = (
        f"each has {parts} sub-partitions with one warp scheduler"
        + (f" and {tensor / parts:g} Tensor Core{'s' if tensor / parts != 1 else ''} each" if tensor else "")
        if parts_known
        else "its sub-partitions are not in the data"
    )
    alt = (
        f"An {acc.name} has {_n(sms)} SMs; {parts_text}" if sms else f"One SM of the {acc.name}; {parts_text}"
    )
    extras = []
    if registers:
        extras.append(f"{binary_bytes(registers)} of registers")
    if l1:
        extras.append(f"{binary_bytes(l1)} of L1/shared memory")
    alt += (", sharing " + " and ".join(extras) if extras else "") + "."
    spec = _schematic(
        f"Inside one SM of the {acc.name}",
        f"{_n(sms)} identical SMs" if sms else "",
        shapes,
        notes,
        height=500,
    )
    return Diagram(
        "sm",
        spec,
        alt,
        tuple(table),
        "Warps are assigned to one sub-partition and issue from its scheduler; the register file is split "
        "between the sub-partitions, while L1/shared memory serves the whole SM. Layout after the SM "
        "diagram of NVIDIA's H100 white paper as redrawn in Modal's GPU Glossary "
        "(modal.com/gpu-glossary/device-hardware/streaming-multiprocessor).",
    )


# ---------------------------------------------------------------------------------------------
# 2. Warp and SIMT divergence


def warp_simt_diagram(taken_lanes: int | None = None) -> Diagram:
    """A warp's lanes at an if/else: lanes where the condition holds run the if-branch while the
    others are masked, then the else-branch runs with the mask flipped."""
    warp = cuda_fact("warp_size")
    taken = warp // 2 if taken_lanes is None else int(taken_lanes)
    if not 0 <= taken <= warp:
        raise ValueError(f"taken_lanes must be between 0 and {warp}, got {taken_lanes}")
    passes = [("if-branch", set(range(taken))), ("else-branch", set(range(taken, warp)))]
    passes = [(name, lanes) for name, lanes in passes if lanes]
    cell = 96 / warp
    shapes: list[dict] = []
    notes: list[dict] = []
    rows = [("No divergence (all lanes agree)", set(range(warp)))] + [
        (
            f"Pass {i + 1}: {name} (lane &lt; {taken})" if name == "if-branch" else f"Pass {i + 1}: {name}",
            lanes,
        )
        for i, (name, lanes) in enumerate(passes)
    ]
    row_h = 84 / len(rows)
    for r, (label, lanes) in enumerate(rows):
        y_top = 92 - r * row_h
        notes.append(
            _text(
                2,
                y_top - 2,
                f"<b>{label}</b>: {len(lanes)} active, {warp - len(lanes)} masked",
                colour=None,
                xanchor="left",
            )
        )
        y1, y0 = y_top - 8, y_top - row_h + 11
        for lane in range(warp):
            active = lane in lanes
            shapes.append(
                _rect(
                    2 + lane * cell,
                    y0,
                    2 + (lane + 1) * cell,
                    y1,
                    BLUE if active else "rgba(0,0,0,0)",
                    BLUE if active else GREY,
                    width=1,
                    line_extra={} if active else {"dash": "dot"},
                )
            )
        for lane in range(0, warp, 8):
            notes.append(_text(2 + (lane + 0.5) * cell, y0 - 4, str(lane), size=11, colour=None))
    table = tuple(
        {
            "Pass": label.replace("&lt;", "<"),
            "Active lanes": len(lanes),
            "Masked lanes": warp - len(lanes),
            "Lanes doing work (%)": 100 * len(lanes) / warp,
        }
        for label, lanes in rows
    )
    efficiency = 100 * warp / (warp * len(passes))
    alt = (
        f"A warp has {warp} lanes that run one instruction together. "
        f"An if/else that sends {taken} lanes one way "
        f"and {warp - taken} the other runs in {len(passes)} pass{'es' if len(passes) > 1 else ''}, "
        f"each with the other lanes masked, so on average {efficiency:.0f}% of the lanes do work."
    )
    spec = _schematic(
        f"A warp is {warp} lanes in lockstep",
        "Filled: lane runs. Dotted outline: lane masked off.",
        shapes,
        notes,
        height=400,
    )
    return Diagram(
        "warp-simt",
        spec,
        alt,
        table,
        "SIMT: one instruction for all lanes. A divergent branch does not run the two paths in parallel; "
        "the warp runs them one after the other, and masked lanes wait.",
    )


# ---------------------------------------------------------------------------------------------
# 3. Thread hierarchy


def thread_hierarchy_diagram(
    gpu: str = "h100-sxm", n_elements: int = 2**20, threads_per_block: int = 256
) -> Diagram:
    """Grid -> block -> warp -> thread for a one-element-per-thread launch over ``n_elements``."""
    warp = cuda_fact("warp_size")
    max_block = cuda_fact("max_threads_per_block")
    max_regs = cuda_fact("max_registers_per_thread")
    if not 0 < threads_per_block <= max_block:
        raise ValueError(f"threads_per_block must be 1..{max_block}, got {threads_per_block}")
    if n_elements <= 0:
        raise ValueError("n_elements must be positive")
    acc = get_accelerator(gpu)
    fam = _family(acc.id)
    blocks = math.ceil(n_elements / threads_per_block)
    warps_per_block = math.ceil(threads_per_block / warp)
    max_warps = fam.max_warps_per_sm if fam else None
    levels = [
        (
            "Grid",
            f"{_n(blocks)} blocks = ⌈{_n(n_elements)} ÷ {threads_per_block}⌉",
            f"spread over {_n(acc.sm_count)} SMs" if acc.sm_count else "spread over the SMs",
            BLUE,
        ),
        (
            "Thread block",
            f"{threads_per_block} threads = {warps_per_block} warps",
            f"runs on one SM; at most {_n(max_block)} threads",
            ORANGE,
        ),
        ("Warp", f"{warp} threads", "one instruction at a time, on one sub-partition", GREEN),
        ("Thread", "one lane", f"own registers, at most {max_regs}", PURPLE),
    ]
    shapes: list[dict] = []
    notes: list[dict] = []
    row_h = 23
    for i, (name, size, where, colour) in enumerate(levels):
        inset = i * 5
        y1 = 97 - i * row_h
        y0 = y1 - row_h + 3
        shapes.append(_rect(2 + inset, y0, 98 - inset, y1, _tint(colour, 0.18), colour, width=2))
        notes.append(_text(50, (y0 + y1) / 2, f"<b>{name}</b>: {size}<br>{where}"))
    table = (
        {"Level": "Grid", "Count": blocks, "Unit": "blocks", "Limit": None},
        {"Level": "Thread block", "Count": threads_per_block, "Unit": "threads", "Limit": max_block},
        {"Level": "Thread block", "Count": warps_per_block, "Unit": "warps", "Limit": None},
        {"Level": "Warp", "Count": warp, "Unit": "threads", "Limit": None},
        {"Level": "Thread", "Count": max_regs, "Unit": "registers at most", "Limit": max_regs},
        {"Level": "SM", "Count": max_warps, "Unit": "resident warps at most", "Limit": max_warps},
    )
    alt = (
        f"A launch over {_n(n_elements)} elements with {threads_per_block}-thread blocks makes a grid of "
        f"{_n(blocks)} blocks; each block is {warps_per_block} warps of {warp} threads, "
        "and each thread is one lane "
        f"with its own registers."
    )
    if max_warps:
        alt += f" An SM of the {acc.name} holds at most {max_warps} warps at once."
    spec = _schematic(
        "Grid → block → warp → thread",
        f"{_n(n_elements)} elements, {threads_per_block} threads per block",
        shapes,
        notes,
        height=440,
    )
    return Diagram(
        "thread-hierarchy",
        spec,
        alt,
        table,
        "You choose the grid and block sizes; the hardware cuts every block into warps of "
        f"{warp}, so a block size that is a multiple of {warp} leaves no lane idle.",
    )


# ---------------------------------------------------------------------------------------------
# 4. Memory hierarchy

_LADDER = ("registers", "l1", "shared", "l2", "device-memory", "host-memory")


def memory_hierarchy_diagram(gpu: str = "h100-sxm") -> Diagram:
    """The levels from registers to host memory as a pyramid: capacity and latency per level."""
    fam = hierarchy.family(gpu)
    levels = [lv for lv in fam.levels if lv.level in _LADDER]
    caps = [lv.capacity_bytes for lv in levels if lv.capacity_bytes]
    low, high = (math.log10(min(caps)), math.log10(max(caps))) if caps else (0.0, 1.0)
    shapes: list[dict] = []
    notes: list[dict] = []
    table = []
    row_h = 92 / len(levels)
    for i, lv in enumerate(levels):
        y1 = 96 - i * row_h
        y0 = y1 - row_h + 2
        # Width grows with log capacity; a level without a sourced size is drawn full width, dashed.
        share = (
            (math.log10(lv.capacity_bytes) - low) / (high - low) if lv.capacity_bytes and high > low else 1.0
        )
        half = 30 + 18 * share
        colour = OKABE_ITO[i % 6]
        dash = {} if lv.capacity_bytes else {"dash": "dash"}
        shapes.append(
            _rect(50 - half, y0, 50 + half, y1, _tint(colour, 0.25), colour, width=2, line_extra=dash)
        )
        capacity = (
            f"{_bytes(lv.capacity_bytes)} {lv.capacity_scope}" if lv.capacity_bytes else "size: not sourced"
        )
        latency = si(lv.latency_s("mid"), "s") if lv.has_latency else "latency: not sourced"
        notes.append(_text(50, (y0 + y1) / 2, f"<b>{lv.name}</b><br>{capacity} · {latency}"))
        table.append(
            {
                "Level": lv.name,
                "Capacity (bytes)": lv.capacity_bytes,
                "Capacity scope": lv.capacity_scope,
                "Latency, midpoint (ns)": lv.latency_s("mid") * 1e9 if lv.has_latency else None,
                "Latency range (ns)": (
                    f"{lv.latency_s('min') * 1e9:.0f}–{lv.latency_s('max') * 1e9:.0f}"
                    if lv.has_latency
                    else None
                ),
            }
        )
    fast = next((lv for lv in levels if lv.has_latency), None)
    dram = next((lv for lv in levels if lv.level == "device-memory"), None)
    alt = (
        f"The memory hierarchy of the {fam.name}, from registers to host memory: "
        + "; ".join(
            f"{lv.name} {_bytes(lv.capacity_bytes) + ' ' + lv.capacity_scope if lv.capacity_bytes else ''}"
            + (f" at {si(lv.latency_s('mid'), 's')}" if lv.has_latency else "")
            for lv in levels
        )
        + "."
    )
    detail = ""
    if fast and dram and dram.has_latency:
        detail = (
            f"{dram.name} is {dram.latency_s('mid') / fast.latency_s('mid'):.0f}× slower than {fast.name}"
        )
    spec = _schematic(f"Memory hierarchy: {fam.name}", detail, shapes, notes, height=500)
    return Diagram(
        "memory-hierarchy",
        spec,
        alt,
        tuple(table),
        "Each step down holds more and answers later. Latencies are the midpoints of published "
        "microbenchmark ranges (simulators/data/memory_hierarchy.csv); a dash means no sourced value.",
    )


# ---------------------------------------------------------------------------------------------
# 5. Coalescing


def sectors_per_warp_load(stride_elements: int, element_bytes: int = 4) -> int:
    """32-byte sectors a warp's loads touch when lane i reads element i × stride (aligned start)."""
    warp = cuda_fact("warp_size")
    sector = cuda_fact("global_memory_sector_bytes")
    starts = {lane * stride_elements * element_bytes // sector for lane in range(warp)}
    ends = {(lane * stride_elements * element_bytes + element_bytes - 1) // sector for lane in range(warp)}
    return len(starts | ends)


def coalescing_diagram(strides: Sequence[int] = (1, 2, 4, 8, 32), element_bytes: int = 4) -> Diagram:
    """Sectors fetched for one warp-wide load at each stride, and the share of fetched bytes used."""
    warp = cuda_fact("warp_size")
    sector = cuda_fact("global_memory_sector_bytes")
    useful = warp * element_bytes
    rows = []
    for stride in strides:
        count = sectors_per_warp_load(stride, element_bytes)
        rows.append(
            {
                "Stride (elements)": stride,
                "Sectors per warp load": count,
                "Bytes fetched": count * sector,
                "Bytes used": useful,
                "Used (%)": 100 * useful / (count * sector),
            }
        )
    labels = [
        f"stride {r['Stride (elements)']}" + (" (contiguous)" if r["Stride (elements)"] == 1 else "")
        for r in rows
    ]
    counts = [r["Sectors per warp load"] for r in rows]
    data = [
        {
            "type": "bar",
            "orientation": "h",
            "y": labels,
            "x": counts,
            "marker": {"color": [GREEN if r["Used (%)"] >= 100 else VERMILLION for r in rows]},
            "text": [f"{c} sectors · {r['Used (%)']:.3g}% used" for c, r in zip(counts, rows, strict=True)],
            "textposition": "outside",
            "cliponaxis": False,
            "textfont": {"size": LABEL_FONT_PX},
            "name": "32-byte sectors per warp load",
            "hovertemplate": "%{y}: %{x} sectors<extra></extra>",
        }
    ]
    best, worst = rows[0], rows[-1]
    layout = {
        "title": chart_title(
            f"One warp, {warp} loads of {element_bytes} bytes",
            f"{sector}-byte sectors fetched, by stride between lanes",
        ),
        "xaxis": axis(f"{sector}-byte sectors per warp load", range=[0, max(counts) * 1.8]),
        "yaxis": {"autorange": "reversed", "automargin": True},
        "showlegend": False,
        "height": 420,
    }
    alt = (
        f"A warp's {warp} loads of {element_bytes} bytes at consecutive addresses touch "
        f"{best['Sectors per warp load']} sectors of {sector} bytes, all bytes used; at a stride of "
        f"{worst['Stride (elements)']} elements they touch {worst['Sectors per warp load']} sectors and use "
        f"{worst['Used (%)']:.1f}% of the bytes fetched."
    )
    return Diagram(
        "coalescing",
        figure(data, layout),
        alt,
        tuple(rows),
        "Neighbouring lanes reading neighbouring addresses share sectors (coalescing); spreading them out "
        "fetches whole sectors to use a few bytes of each. "
        "Sector size: Manning, GPU Programming with Triton §5.2.4.",
    )


# ---------------------------------------------------------------------------------------------
# 6. Bank conflicts


def bank_ways(word_stride: int) -> tuple[list[int], int]:
    """Distinct words each bank must serve when lane i reads 4-byte word i × stride, and the worst
    (the number of passes). Lanes reading the same word are a broadcast and count once."""
    warp = cuda_fact("warp_size")
    banks = cuda_fact("shared_memory_banks")
    words: dict[int, set[int]] = {b: set() for b in range(banks)}
    for lane in range(warp):
        word = lane * word_stride
        words[word % banks].add(word)
    per_bank = [len(words[b]) for b in range(banks)]
    return per_bank, max(per_bank)


def bank_conflicts_diagram(strides: Sequence[int] = (1, 2, 32)) -> Diagram:
    """The 32 banks hit by one warp's shared-memory reads at a few strides (in 4-byte words)."""
    banks = cuda_fact("shared_memory_banks")
    width = cuda_fact("shared_memory_bank_bytes")
    shapes: list[dict] = []
    notes: list[dict] = []
    table = []
    cell = 96 / banks
    row_h = 86 / len(strides)
    for r, stride in enumerate(strides):
        per_bank, ways = bank_ways(stride)
        used = sum(1 for n in per_bank if n)
        y_top = 93 - r * row_h
        kind = "no conflict" if ways == 1 else f"{ways}-way conflict"
        notes.append(
            _text(
                2,
                y_top - 1,
                f"<b>Stride {stride}</b>: {used} of {banks} banks → {kind}, "
                f"{ways} pass{'es' if ways > 1 else ''}",
                colour=None,
                xanchor="left",
            )
        )
        y1, y0 = y_top - 8, y_top - row_h + 11
        for b, n in enumerate(per_bank):
            shapes.append(
                _rect(
                    2 + b * cell,
                    y0,
                    2 + (b + 1) * cell,
                    y1,
                    _tint(VERMILLION if n > 1 else BLUE, min(1.0, 0.35 + 0.65 * n / ways))
                    if n
                    else "rgba(0,0,0,0)",
                    GREY,
                    width=1,
                )
            )
        for b in range(0, banks, 8):
            notes.append(_text(2 + (b + 0.5) * cell, y0 - 4, str(b), size=11, colour=None))
        table.append(
            {
                "Stride (4-byte words)": stride,
                "Banks used": used,
                "Words per busiest bank": ways,
                "Passes": ways,
            }
        )
    worst = table[-1]
    alt = (
        f"Shared memory has {banks} banks of {width} bytes. A warp reading consecutive words uses all "
        f"{banks} banks in one pass; "
        + "; ".join(
            f"at stride {row['Stride (4-byte words)']} it uses {row['Banks used']} "
            f"bank{'s' if row['Banks used'] != 1 else ''} and needs {row['Passes']} passes"
            for row in table[1:]
        )
        + "."
    )
    spec = _schematic(
        f"{banks} shared-memory banks, one warp read",
        "Coloured: bank in use (darker, red: several words). Bank numbers below.",
        shapes,
        notes,
        height=420,
    )
    return Diagram(
        "bank-conflicts",
        spec,
        alt,
        tuple(table),
        f"Word w lives in bank w mod {banks}. Lanes whose words share a bank are served one after another; "
        f"the worst case here, stride {worst['Stride (4-byte words)']}, takes {worst['Passes']} passes. "
        "Padding a row by one word breaks the pattern.",
    )


# ---------------------------------------------------------------------------------------------
# 7. Occupancy


def resident_warps(registers_per_thread: int, threads_per_block: int, gpu: str = "h100-sxm") -> int:
    """Warps resident per SM when registers are the limit: whole blocks that fit the register file,
    the warp limit and the block limit. (Per-warp register rounding is left out.)"""
    fam = hierarchy.family(gpu)
    warp = cuda_fact("warp_size")
    registers = _capacity(fam, "registers")
    if registers is None or fam.max_warps_per_sm is None:
        raise ValueError(f"{gpu} lacks a register-file size or a resident-warp limit in the data")
    register_count = registers * BITS_PER_BYTE / cuda_fact("register_bits")
    warps_per_block = math.ceil(threads_per_block / warp)
    by_registers = int(register_count // (registers_per_thread * warp))
    blocks = min(by_registers // warps_per_block, fam.max_warps_per_sm // warps_per_block)
    max_blocks = arch_fact(fam.accelerator_id or gpu, "max_blocks_per_sm")
    if max_blocks is not None:
        blocks = min(blocks, int(max_blocks))
    return blocks * warps_per_block


def occupancy_diagram(
    gpu: str = "h100-sxm", threads_per_block: int = 256, registers_per_thread: int = 128
) -> Diagram:
    """Resident warps per SM as registers per thread grow from 16 to the maximum."""
    fam = hierarchy.family(gpu)
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


# ---------------------------------------------------------------------------------------------
# 8. HBM stacks


def hbm_stack_diagram(gpu: str = "h100-sxm") -> Diagram:
    """The GPU die with its HBM stacks: stacks × bandwidth per stack = device bandwidth."""
    acc = get_accelerator(gpu)
    stacks_value = arch_fact(acc.id, "hbm_stacks")
    if stacks_value is None:
        raise ValueError(f"no sourced HBM stack count for {acc.id} in gpu_architecture.csv")
    stacks = int(stacks_value)
    bandwidth = acc.memory_bandwidth_bytes_per_s
    per_stack_bw = bandwidth / stacks
    per_stack_cap = acc.memory_bytes / stacks if acc.memory_bytes else None
    shapes = [_rect(32, 22, 68, 80, _tint(BLUE, 0.2), BLUE, width=2)]
    notes = [_text(50, 51, f"<b>GPU die</b><br>{acc.name}")]
    left = math.ceil(stacks / 2)
    sides = [(0, left), (1, stacks - left)]
    kind = acc.memory_type.split(" ")[0]
    for side, count in sides:
        if not count:
            continue
        h = 58 / count
        for i in range(count):
            y1 = 80 - i * h
            y0 = y1 - h + 2
            x0, x1 = (3, 29) if side == 0 else (71, 97)
            shapes.append(_rect(x0, y0, x1, y1, _tint(ORANGE, 0.3), ORANGE, width=2))
            shapes.append(
                _line(x1 if side == 0 else x0, (y0 + y1) / 2, 32 if side == 0 else 68, (y0 + y1) / 2, GREY, 3)
            )
            text = f"<b>{kind}</b><br>{si(per_stack_bw, 'B/s')}"
            if per_stack_cap:
                text += f"<br>{si(per_stack_cap, 'B')}"
            notes.append(_text((x0 + x1) / 2, (y0 + y1) / 2, text, size=12 if count > 3 else LABEL_FONT_PX))
    notes.append(
        _text(
            50,
            10,
            f"<b>{stacks} stacks × {si(per_stack_bw, 'B/s')} = {si(bandwidth, 'B/s')}</b>",
            colour=None,
        )
    )
    table = (
        {"Quantity": "HBM stacks", "Value": stacks, "Unit": "stacks"},
        {"Quantity": "Device bandwidth", "Value": bandwidth / 1e9, "Unit": "GB/s"},
        {"Quantity": "Bandwidth per stack", "Value": per_stack_bw / 1e9, "Unit": "GB/s"},
        {
            "Quantity": "Device memory (label)",
            "Value": acc.memory_bytes / 1e9 if acc.memory_bytes else None,
            "Unit": "GB",
        },
        {
            "Quantity": "Memory per stack",
            "Value": per_stack_cap / 1e9 if per_stack_cap else None,
            "Unit": "GB",
        },
    )
    alt = (
        f"The {acc.name} has {stacks} {kind} stacks beside the die; "
        f"{stacks} × {si(per_stack_bw, 'B/s')} per stack "
        f"gives its {si(bandwidth, 'B/s')}"
        + (f", and {stacks} × {si(per_stack_cap, 'B')} its {acc.memory_label}." if per_stack_cap else ".")
    )
    spec = _schematic(f"HBM: {acc.name}", f"{stacks} stacks on the package", shapes, notes, height=420)
    return Diagram(
        "hbm-stack",
        spec,
        alt,
        table,
        "Bandwidth grows with the number of stacks, each a wide interface beside the die; per-stack figures "
        "are the catalog's device bandwidth and capacity divided by the sourced stack count.",
    )


# ---------------------------------------------------------------------------------------------
# 9. Tensor Core: one MMA instruction


def _per_clock_per_sm(acc: Accelerator, flops: float | None, clock_fact: str) -> float | None:
    clock = arch_fact(acc.id, clock_fact)
    if flops is None or clock is None or not acc.sm_count:
        return None
    return flops / (acc.sm_count * clock * 1e6)


def tensor_core_diagram(gpu: str = "h100-sxm", dtype: str = "bf16") -> Diagram:
    """One warp-wide mma.sync m16n8k16 (A 16×16 times B 16×8 into C 16×8) against one FP32 FMA
    instruction, and where the clocks are sourced, FLOPs per clock per SM from the catalog."""
    warp = cuda_fact("warp_size")
    m, n, k = (cuda_fact(f"mma_sync_{d}") for d in "mnk")
    mma_flops = FLOPS_PER_FMA * m * n * k
    fma_flops = FLOPS_PER_FMA * warp
    acc = get_accelerator(gpu)
    tensor_clk = _per_clock_per_sm(
        acc, acc.peak_flops(dtype) if acc.supports(dtype) else None, "tensor_clock_mhz"
    )
    vector_clk = _per_clock_per_sm(acc, acc.fp32_flops, "vector_clock_mhz")
    ux, uy = 2.2, 1.6  # drawing scale: one element in x and y axis units
    a = (6, 40, 6 + k * ux, 40 + m * uy)  # A: m x k
    c = (a[2] + 8, 40, a[2] + 8 + n * ux, 40 + m * uy)  # C: m x n, right of A
    b = (c[0], c[3] + 2, c[2], c[3] + 2 + k * uy)  # B: k x n, above C
    shapes = [
        _rect(*a, _tint(BLUE, 0.3), BLUE, width=2),
        _rect(*b, _tint(ORANGE, 0.3), ORANGE, width=2),
        _rect(*c, _tint(GREEN, 0.3), GREEN, width=2),
    ]
    notes = [
        _text((a[0] + a[2]) / 2, (a[1] + a[3]) / 2, f"<b>A</b><br>{m}×{k}"),
        _text((b[0] + b[2]) / 2, (b[1] + b[3]) / 2, f"<b>B</b><br>{k}×{n}"),
        _text((c[0] + c[2]) / 2, (c[1] + c[3]) / 2, f"<b>C</b><br>{m}×{n}"),
        _text(
            c[2] + 4, (c[1] + c[3]) / 2, "C += A × B<br>in one<br>instruction", colour=None, xanchor="left"
        ),
        _text(
            50,
            29,
            f"<b>1 MMA</b>: {m}×{n}×{k} × {FLOPS_PER_FMA} = {_n(mma_flops)} FLOPs<br>"
            f"<b>1 FP32 FMA</b>: {warp} lanes × {FLOPS_PER_FMA} = {fma_flops} FLOPs<br>"
            f"<b>{mma_flops // fma_flops}×</b> the work per instruction",
            colour=None,
        ),
    ]
    if tensor_clk and vector_clk:
        notes.append(
            _text(
                50,
                8,
                wrap(
                    f"Per SM per clock on the {acc.name}: {_n(tensor_clk)} {dtype.upper()} Tensor Core "
                    f"FLOPs vs {_n(vector_clk)} FP32-core FLOPs ({tensor_clk / vector_clk:.0f}×)",
                    46,
                ),
                colour=None,
            )
        )
    table: list[dict[str, Any]] = [
        {
            "Operation": f"mma.sync m{m}n{n}k{k} (one warp)",
            "FLOPs per instruction": mma_flops,
            "FLOPs per clock per SM": None,
        },
        {
            "Operation": "FP32 FMA (one warp)",
            "FLOPs per instruction": fma_flops,
            "FLOPs per clock per SM": None,
        },
    ]
    if tensor_clk:
        table.append(
            {
                "Operation": f"{acc.name} {dtype} Tensor Cores (dense peak ÷ SMs ÷ clock)",
                "FLOPs per instruction": None,
                "FLOPs per clock per SM": tensor_clk,
            }
        )
    if vector_clk:
        table.append(
            {
                "Operation": f"{acc.name} FP32 cores (peak ÷ SMs ÷ clock)",
                "FLOPs per instruction": None,
                "FLOPs per clock per SM": vector_clk,
            }
        )
    alt = (
        f"One Tensor Core instruction multiplies a {m}×{k} tile by a {k}×{n} tile into {m}×{n}: "
        f"{_n(mma_flops)} FLOPs, against {fma_flops} for one FP32 FMA across a {warp}-lane warp."
    )
    if tensor_clk and vector_clk:
        alt += (
            f" On the {acc.name} an SM does about {_n(tensor_clk)} {dtype} FLOPs per clock on Tensor Cores "
            f"and {_n(vector_clk)} on FP32 cores."
        )
    spec = _schematic(
        "A Tensor Core works on tiles", f"mma.sync m{m}n{n}k{k}, one warp", shapes, notes, height=440
    )
    return Diagram(
        "tensor-core",
        spec,
        alt,
        tuple(table),
        "A Tensor Core instruction is a whole matrix multiply-accumulate on small tiles; Hopper's wgmma "
        "uses larger tiles across four warps. Shape: CUTLASS Tensor Core notes; per-clock figures divide the "
        "catalog's dense peak by the SM count and the sourced boost clock.",
    )


# ---------------------------------------------------------------------------------------------
# 10. Little's law


def littles_law_diagram(
    gpu: str = "h100-sxm", level: str = "device-memory", bytes_per_thread: Sequence[int] = (4, 8, 16)
) -> Diagram:
    """Bytes in flight = latency × bandwidth, and the warps per SM that carry them."""
    lv = hierarchy.get_level(gpu, level)
    fam = hierarchy.family(gpu)
    warp = cuda_fact("warp_size")
    latency = lv.latency_s("mid")
    device_bw = lv.bandwidth_per_device_bytes_per_s
    if device_bw is None:
        raise ValueError(f"{gpu}/{level} has no bandwidth in the data")
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
        "Latency: midpoint of the published range.",
    )


# ---------------------------------------------------------------------------------------------
# 11. Roofline ridge


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
            "textposition": "bottom center",
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


# ---------------------------------------------------------------------------------------------
# 12. Capacity against bandwidth


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
            "customdata": [a.name for a in gpus],
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
        "title": chart_title("Fits vs feeds", "Memory size against bandwidth, every GPU in the catalog"),
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
    alt = f"{len(gpus)} catalog GPUs by memory size and bandwidth."
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


# ---------------------------------------------------------------------------------------------
# 13. NVLink through NVSwitch


def nvlink_topology_diagram(gpu: str = "h100-sxm", n_gpus: int = 8) -> Diagram:
    """``n_gpus`` GPUs each wired by all their NVLink links to an NVSwitch fabric."""
    acc = get_accelerator(gpu)
    if not acc.interconnect_id:
        raise ValueError(f"{acc.id} has no NVLink interconnect in the catalog")
    link = get_interconnect(acc.interconnect_id)
    if n_gpus < 2:
        raise ValueError("n_gpus must be at least 2")
    per_dir = link.per_direction_bytes_per_s
    per_link = per_dir / link.links if link.links else None
    top = math.ceil(n_gpus / 2)
    rows = [(86, top), (14, n_gpus - top)]
    shapes = [_rect(8, 40, 92, 60, _tint(GREEN, 0.25), GREEN, width=2)]
    notes = [_text(50, 50, "<b>NVSwitch fabric</b><br>any GPU to any GPU, all at full rate")]
    index = 0
    for y, count in rows:
        w = 92 / max(count, 1)
        for i in range(count):
            cx = 4 + w * (i + 0.5)
            shapes.append(_line(cx, y - 8 if y > 50 else y + 8, cx, 60 if y > 50 else 40, BLUE, 4))
            shapes.append(_rect(cx - w / 2 + 1, y - 8, cx + w / 2 - 1, y + 8, LIGHT, BLUE, width=2))
            notes.append(_text(cx, y, f"<b>GPU {index}</b>", size=12))
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
        f"{n_gpus} {acc.name} GPUs, each connected by {link.name} to an NVSwitch fabric: "
        + (f"{link.links} links of {si(per_link, 'B/s')} each way, " if per_link else "")
        + f"{si(per_dir, 'B/s')} each way per GPU "
        + f"({si(link.bidirectional_bytes_per_s, 'B/s')} both ways), to any other GPU."
    )
    spec = _schematic(
        f"{n_gpus} GPUs through NVSwitch",
        f"{link.name}: each GPU {links_text} = {si(per_dir, 'B/s')} each way",
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
        "datasheet's figure adds both directions. The switch chips are drawn as one fabric.",
    )


# ---------------------------------------------------------------------------------------------
# 14. Quantization grids


def quantization_grid_diagram(formats: Sequence[str] = ("int4", "fp4_e2m1", "fp8_e4m3")) -> Diagram:
    """Every value each format can represent, scaled so its largest value is 1, on one number line."""
    data = []
    table = []
    for i, fmt in enumerate(formats):
        spec = FORMATS[fmt]
        grid = format_grid(fmt, 1 / spec.max_finite)
        label = f"{fmt} ({len(grid)} values)"
        data.append(
            {
                "type": "scatter",
                "x": [float(v) for v in grid],
                "y": [label] * len(grid),
                "mode": "markers",
                "marker": {
                    "symbol": "line-ns-open",
                    "size": 22,
                    "line": {"width": 2, "color": OKABE_ITO[i % 6]},
                    "color": OKABE_ITO[i % 6],
                },
                "name": label,
                "hovertemplate": "%{x:.4g} × max<extra>" + fmt + "</extra>",
            }
        )
        positive = sorted(float(v) for v in grid if v > 0)
        table.append(
            {
                "Format": fmt,
                "Bits": spec.bits,
                "Distinct values": len(grid),
                "Largest value": spec.max_finite,
                "Smallest positive ÷ largest": positive[0] if positive else None,
                "Gap below the largest ÷ largest": (positive[-1] - positive[-2])
                if len(positive) > 1
                else None,
            }
        )
    layout = {
        "title": chart_title(
            "What a low-bit format can represent", "Values scaled so each format's largest is 1"
        ),
        "xaxis": axis("Value ÷ the format's largest value", range=[-1.08, 1.08], zeroline=True),
        "yaxis": {"automargin": True, "autorange": "reversed"},
        "showlegend": False,
        "height": 380,
    }
    alt = (
        "Representable values on one line, each format scaled to a largest value of 1: "
        + "; ".join(f"{r['Format']} has {r['Distinct values']} values" for r in table)
        + ". Integer steps are even; float values crowd towards zero."
    )
    return Diagram(
        "quantization-grid",
        figure(data, layout),
        alt,
        tuple(table),
        "Quantization rounds every number to the nearest mark. INT4's marks are evenly spaced; FP4 and FP8 "
        "put more marks near zero and fewer near the top, where relative error stays about constant.",
    )


# ---------------------------------------------------------------------------------------------
# 15. Tensor Core peak against CUDA-core peak


def tensor_vs_cuda_core_diagram(
    gpus: Sequence[str] = ("v100-32gb-sxm2", "a100-80gb-sxm", "h100-sxm", "b200"), dtype: str = "fp16"
) -> Diagram:
    """Dense Tensor Core peak (``dtype``) against the FP32 CUDA-core peak, GPUs that have both."""
    accs = [get_accelerator(g) for g in gpus]
    accs = [a for a in accs if a.fp32_flops and a.supports(dtype)]
    if not accs:
        raise ValueError(f"none of {list(gpus)} has both an FP32 and a dense {dtype} peak in the catalog")
    names = [f"{a.name}<br>{a.peak_flops(dtype) / a.fp32_flops:.0f}× on Tensor Cores" for a in accs]
    cuda = [a.fp32_flops / 1e12 for a in accs]
    tensor = [a.peak_flops(dtype) / 1e12 for a in accs]
    ratios = [t / c for t, c in zip(tensor, cuda, strict=True)]
    data = [
        {
            "type": "bar",
            "orientation": "h",
            "y": names,
            "x": cuda,
            "name": legend_name("FP32 on CUDA cores"),
            "marker": {"color": SKY},
            "text": [f"FP32 {c:,.0f}" for c in cuda],
            "textposition": "outside",
            "textfont": {"size": LABEL_FONT_PX},
            "cliponaxis": False,
            "hovertemplate": "%{y}: %{x:,.1f} TFLOP/s FP32<extra></extra>",
        },
        {
            "type": "bar",
            "orientation": "h",
            "y": names,
            "x": tensor,
            "name": legend_name(f"dense {dtype.upper()} on Tensor Cores"),
            "marker": {"color": BLUE},
            "text": [f"{dtype.upper()} {t:,.0f}" for t in tensor],
            "textposition": "outside",
            "textfont": {"size": LABEL_FONT_PX},
            "cliponaxis": False,
            "hovertemplate": "%{y}: %{x:,.0f} TFLOP/s " + dtype + "<extra></extra>",
        },
    ]
    low, high = min(cuda), max(tensor)
    ticks = decade_ticks(low, high * 4, plain_number)
    layout = {
        "title": chart_title(
            "Tensor Cores vs CUDA cores", f"Peak TFLOP/s: dense {dtype} vs FP32 (log scale)"
        ),
        "barmode": "group",
        "showlegend": False,
        "xaxis": axis("Peak TFLOP/s (log scale)", **ticks),
        "yaxis": {"autorange": "reversed", "automargin": True},
        "height": 460,
    }
    table = tuple(
        {
            "GPU": a.name,
            "FP32 CUDA cores (TFLOP/s)": c,
            f"Dense {dtype} Tensor Cores (TFLOP/s)": t,
            "Ratio": r,
        }
        for a, c, t, r in zip(accs, cuda, tensor, ratios, strict=True)
    )
    alt = (
        "Peak compute on Tensor Cores against FP32 CUDA cores: "
        + "; ".join(
            f"{a.name} {t:,.0f} vs {c:,.1f} TFLOP/s ({r:.0f}×)"
            for a, c, t, r in zip(accs, cuda, tensor, ratios, strict=True)
        )
        + "."
    )
    return Diagram(
        "tensor-vs-cuda-core",
        figure(data, layout),
        alt,
        table,
        "Almost all of a modern GPU's FLOP/s are on its Tensor Cores: a kernel that misses them (FP32 math, "
        "shapes they cannot take) runs on the CUDA cores at a fraction of the datasheet peak.",
    )


DIAGRAMS = {
    "sm": sm_diagram,
    "warp-simt": warp_simt_diagram,
    "thread-hierarchy": thread_hierarchy_diagram,
    "memory-hierarchy": memory_hierarchy_diagram,
    "coalescing": coalescing_diagram,
    "bank-conflicts": bank_conflicts_diagram,
    "occupancy": occupancy_diagram,
    "hbm-stack": hbm_stack_diagram,
    "tensor-core": tensor_core_diagram,
    "littles-law": littles_law_diagram,
    "roofline-ridge": roofline_ridge_diagram,
    "capacity-vs-bandwidth": capacity_vs_bandwidth_diagram,
    "nvlink-topology": nvlink_topology_diagram,
    "quantization-grid": quantization_grid_diagram,
    "tensor-vs-cuda-core": tensor_vs_cuda_core_diagram,
}
