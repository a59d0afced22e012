"""Diagrams of the glossary's programming-model terms: a warp's SIMT divergence and the thread
hierarchy (grid, cluster, block, warp, thread).

Every number comes from the project's data: the accelerator catalog (``simulators.hardware``), the
memory hierarchy (``simulators.hierarchy``), model presets, the quantization formats and
``simulators/data/gpu_architecture.csv`` (read through ``charts.diagrams.schematic``).
"""

from __future__ import annotations

import math

from charts.diagrams import Diagram
from charts.diagrams.schematic import (
    BLUE,
    GREEN,
    GREY,
    ORANGE,
    PURPLE,
    SKY,
    _family,
    _n,
    _rect,
    _schematic,
    _text,
    _tint,
    cuda_fact,
    require_nvidia_gpu,
)
from simulators.hardware import get_accelerator


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


def thread_hierarchy_diagram(
    gpu: str = "h100-sxm", n_elements: int = 2**20, threads_per_block: int = 256
) -> Diagram:
    """Grid -> (cluster) -> block -> warp -> thread for a one-element-per-thread launch over
    ``n_elements``, drawn as nested boxes; the cluster level on Hopper and later. NVIDIA GPUs only."""
    warp = cuda_fact("warp_size")
    max_block = cuda_fact("max_threads_per_block")
    max_regs = cuda_fact("max_registers_per_thread")
    if not 0 < threads_per_block <= max_block:
        raise ValueError(f"threads_per_block must be 1..{max_block}, got {threads_per_block}")
    if n_elements <= 0:
        raise ValueError("n_elements must be positive")
    acc = get_accelerator(gpu)
    require_nvidia_gpu(acc, "grids, thread blocks and warps on SMs")
    fam = _family(acc.id)
    # Thread block clusters arrived with Hopper (compute capability 9.0): "Thread block clustering
    # requires cc9.0" (forums.developer.nvidia.com/t/block-clustering-in-ada-architecture/305710).
    clusters = any(name in acc.architecture for name in ("Hopper", "Blackwell", "Rubin"))
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
        *(
            [
                (
                    "Thread block cluster (optional)",
                    "blocks launched together on one GPC",
                    "they read each other's shared memory (distributed shared memory)",
                    SKY,
                )
            ]
            if clusters
            else []
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
    band = 93 / len(levels)
    for i, (name, size, where, colour) in enumerate(levels):
        # Nested: each level's box holds every level below it; its label sits in its top band.
        inset = i * 5
        y1 = 97 - i * band
        shapes.append(_rect(2 + inset, 1 + i * 0.6, 98 - inset, y1, _tint(colour, 0.14), colour, width=2))
        notes.append(_text(50, y1 - band / 2, f"<b>{name}</b>: {size}<br>{where}"))
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
    if clusters:
        alt += " On this GPU blocks may also be grouped into clusters that share their shared memory."
    if max_warps:
        alt += f" An SM of the {acc.name} holds at most {max_warps} warps at once."
    spec = _schematic(
        "Grid → cluster → block → warp → thread" if clusters else "Grid → block → warp → thread",
        f"{_n(n_elements)} elements, {threads_per_block} threads per block",
        shapes,
        notes,
        height=480,
    )
    return Diagram(
        "thread-hierarchy",
        spec,
        alt,
        table,
        "You choose the grid and block sizes; the hardware cuts every block into warps of "
        f"{warp}, so a block size that is a multiple of {warp} leaves no lane idle.",
    )


DIAGRAMS = {
    "warp-simt": warp_simt_diagram,
    "thread-hierarchy": thread_hierarchy_diagram,
}
