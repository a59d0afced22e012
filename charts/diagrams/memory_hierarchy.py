"""Diagrams of the glossary's memory-hierarchy terms: the hierarchy's rungs, coalescing, shared-memory
bank conflicts and HBM stacks.

Every number comes from the project's data: the accelerator catalog (``simulators.hardware``), the
memory hierarchy (``simulators.hierarchy``), model presets, the quantization formats and
``simulators/data/gpu_architecture.csv`` (read through ``charts.diagrams.schematic``).
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from typing import Any

from charts.diagrams import Diagram
from charts.diagrams.schematic import (
    BLUE,
    GREEN,
    GREY,
    ORANGE,
    VERMILLION,
    _bytes,
    _line,
    _rect,
    _schematic,
    _text,
    _tint,
    arch_fact,
    cuda_fact,
    require_family,
)
from charts.palette import OKABE_ITO
from charts.style import (
    LABEL_FONT_PX,
    axis,
    figure,
)
from charts.style import title as chart_title
from simulators import hierarchy
from simulators.hardware import get_accelerator
from simulators.units import si


def _rungs(fam: hierarchy.HardwareFamily) -> list[dict[str, Any]]:
    """The ladder's rungs, top to bottom. L1 and shared memory are one rung: on every NVIDIA GPU
    since Volta they are one on-chip SRAM per SM, split between the two (CUDA C++ Programming Guide,
    the unified data cache of compute capability 7.x and later), so shared memory is a carve-out of
    L1, not a level below it. Each rung: name, capacity and scope, the latencies it answers at."""
    rungs: list[dict[str, Any]] = []
    by_id = {lv.level: lv for lv in fam.levels}
    for level_id in _LADDER:
        lv = by_id.get(level_id)
        if level_id == "shared" or lv is None:
            continue
        rung = {"name": lv.name, "capacity": lv.capacity_bytes, "scope": lv.capacity_scope, "latencies": []}
        if lv.has_latency:
            # A GPU reaches host memory by a copy: its figure is a copy's round trip, not a load
            # latency (memory_hierarchy.csv says so for V100), and is labelled as one.
            # The register figure is an FMA's dependent-issue latency (the CSV's note), not a load.
            label = {"host-memory": "copy round trip ", "registers": "FMA issue "}.get(level_id, "")
            rung["latencies"].append((label, lv))
        shared = by_id.get("shared") if level_id == "l1" else None
        if shared is not None:
            rung["name"] = "L1 cache / shared memory"
            rung["shared"] = shared.capacity_bytes
            rung["latencies"] = [
                (label, x) for label, x in (("L1 hit ", lv), ("shared ", shared)) if x.has_latency
            ]
        rungs.append(rung)
    return rungs


def memory_hierarchy_diagram(gpu: str = "h100-sxm") -> Diagram:
    """The levels from registers to host memory as a pyramid: capacity and latency per level, with
    L1 and shared memory as the one SRAM they are. ``ValueError`` for an accelerator without a
    sourced hierarchy."""
    fam = require_family(gpu)
    rungs = _rungs(fam)
    if sum(1 for r in rungs if r["capacity"]) < 2 or not any(r["latencies"] for r in rungs):
        # a ladder of dashes (M3 Max) or of sizes without a single latency (H200) says nothing
        raise ValueError("no sourced latencies or too few sourced sizes (memory_hierarchy.csv)")

    def whole_gpu(rung: dict[str, Any]) -> float | None:
        """A rung's capacity over the whole GPU: per-SM sizes times the SMs, so rungs compare."""
        if not rung["capacity"]:
            return None
        return rung["capacity"] * (fam.sm_count if rung["scope"] == "per SM" and fam.sm_count else 1)

    caps = [c for c in (whole_gpu(r) for r in rungs) if c]
    low, high = (math.log10(min(caps)), math.log10(max(caps))) if caps else (0.0, 1.0)
    shapes: list[dict] = []
    notes: list[dict] = []
    table = []
    row_h = 92 / len(rungs)

    def latency_text(rung: dict[str, Any]) -> str:
        if not rung["latencies"]:
            return "latency —"
        return ", ".join(f"{label}{si(lv.latency_s('mid'), 's')}" for label, lv in rung["latencies"])

    def capacity_text(rung: dict[str, Any]) -> str:
        if not rung["capacity"]:
            return "size —"
        text = f"{_bytes(rung['capacity'])} {rung['scope']}"
        if rung.get("shared"):
            text += f" (≤ {_bytes(rung['shared'])} shared)"
        if rung["scope"] == "per SM" and fam.sm_count:
            text += f", {_bytes(rung['capacity'] * fam.sm_count)} in all"
        return text

    for i, rung in enumerate(rungs):
        y1 = 96 - i * row_h
        y0 = y1 - row_h + 2
        # Width grows with log whole-GPU capacity (per-SM levels times the SMs, so every rung has
        # one scope); a level without a sourced size is drawn full width, dashed.
        capacity = rung["capacity"]
        total = whole_gpu(rung)
        share = (math.log10(total) - low) / (high - low) if total and high > low else 1.0
        half = 30 + 18 * share
        colour = OKABE_ITO[i % 6]
        dash = {} if capacity else {"dash": "dash"}
        shapes.append(
            _rect(50 - half, y0, 50 + half, y1, _tint(colour, 0.25), colour, width=2, line_extra=dash)
        )
        notes.append(
            _text(
                50, (y0 + y1) / 2, f"<b>{rung['name']}</b><br>{capacity_text(rung)}<br>{latency_text(rung)}"
            )
        )
        for label, lv in rung["latencies"] or [("", None)]:
            table.append(
                {
                    "Level": rung["name"] + (f" ({label.strip()})" if label else ""),
                    "Capacity (bytes)": capacity,
                    "Capacity scope": rung["scope"],
                    "Shared-memory carve-out, max (bytes)": rung.get("shared"),
                    "Latency, midpoint (ns)": lv.latency_s("mid") * 1e9 if lv else None,
                    "Latency range (ns)": (
                        f"{lv.latency_s('min') * 1e9:.0f}–{lv.latency_s('max') * 1e9:.0f}" if lv else None
                    ),
                }
            )
    # The headline compares device memory with the first load that has a measured latency: an L1
    # hit, not the registers (their figure is an FMA's dependent-issue latency, not a load).
    timed = [lv for rung in rungs for _, lv in rung["latencies"] if lv.level not in ("registers",)]
    fast = timed[0] if timed else None
    dram = next((lv for lv in fam.levels if lv.level == "device-memory"), None)
    alt = (
        f"The memory hierarchy of the {fam.name}, from registers to host memory: "
        + "; ".join(f"{r['name']}, {capacity_text(r)}, {latency_text(r)}" for r in rungs)
        + "."
    )
    detail = ""
    if fast and dram and dram.has_latency and fast is not dram:
        detail = (
            f"{dram.name} is {dram.latency_s('mid') / fast.latency_s('mid'):.0f}× slower than "
            f"{'an ' if fast.level == 'l1' else ''}{fast.name}" + (" hit" if fast.level == "l1" else "")
        )
    sized = [(r["name"], whole_gpu(r)) for r in rungs if whole_gpu(r)]
    inversions = [(a, b) for a, b in itertools.pairwise(sized) if b[1] < a[1]]
    if inversions:
        (upper, upper_size), (lower, lower_size) = inversions[0]
        holds = (
            "Each step down answers later, but not every step holds more: over the whole GPU, for "
            f"example, {upper} ({_bytes(upper_size)}) outweigh {lower} ({_bytes(lower_size)})."
        )
    else:
        holds = "Each step down holds more and answers later."
    per_sm = next((r for r in rungs if r["scope"] == "per SM" and r["capacity"]), None)
    per_gpu = next((r for r in rungs if r["scope"] == "per GPU" and r["capacity"]), None)
    compare = (
        f" Registers and L1 are per SM, L2 and memory per GPU: compare whole-GPU sizes, not a per-SM "
        f"{_bytes(per_sm['capacity'])} with a {_bytes(per_gpu['capacity'])} {per_gpu['name']} (widths "
        "here are whole-GPU sizes)."
        if per_sm and per_gpu and fam.sm_count
        else ""
    )
    spec = _schematic(f"Memory hierarchy: {fam.name}", detail, shapes, notes, height=500)
    return Diagram(
        "memory-hierarchy",
        spec,
        alt,
        tuple(table),
        holds
        + " L1 and shared memory are one SRAM per SM, split between the two, so they share a rung."
        + compare
        + " Latencies are the midpoints of published microbenchmark ranges "
        "(simulators/data/memory_hierarchy.csv); a dash means no sourced value.",
    )


_LADDER = ("registers", "l1", "shared", "l2", "device-memory", "host-memory")


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
        # Ticks stop at the most a warp can touch (one sector per lane); the room to the right is
        # for the bar labels only.
        "xaxis": axis(
            f"{sector}-byte sectors per warp load",
            range=[0, max(counts) * 1.8],
            tickvals=[v for v in range(0, warp + 1, 8) if v <= max(counts) * 1.8],
        ),
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


def sectors_per_warp_load(stride_elements: int, element_bytes: int = 4) -> int:
    """32-byte sectors a warp's loads touch when lane i reads element i × stride (aligned start)."""
    warp = cuda_fact("warp_size")
    sector = cuda_fact("global_memory_sector_bytes")
    starts = {lane * stride_elements * element_bytes // sector for lane in range(warp)}
    ends = {(lane * stride_elements * element_bytes + element_bytes - 1) // sector for lane in range(warp)}
    return len(starts | ends)


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
        warp = cuda_fact("warp_size")
        for b, n in enumerate(per_bank):
            # Blue: one word; orange (tinted vermillion), darker the more words the bank must serve in
            # turn (the same scale on every row, up to a whole warp's 32), with the count written in the cell.
            depth = math.log2(n) / math.log2(warp) if n > 1 else 0.0
            shapes.append(
                _rect(
                    2 + b * cell,
                    y0,
                    2 + (b + 1) * cell,
                    y1,
                    _tint(VERMILLION if n > 1 else BLUE, 0.35 + 0.65 * depth) if n else "rgba(0,0,0,0)",
                    GREY,
                    width=1,
                )
            )
            if n > 1:
                notes.append(_text(2 + (b + 0.5) * cell, (y0 + y1) / 2, f"<b>{n}</b>", size=10))
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
        "Blue: a bank serving one word. Orange, darker with a count: words a bank serves in turn.",
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


def hbm_stack_diagram(gpu: str = "h100-sxm") -> Diagram:
    """The GPU die (or dies: B200 is two, joined by NV-HBI) with its HBM stacks: stacks × bandwidth
    per stack = device bandwidth. ``ValueError`` without a sourced stack count."""
    acc = get_accelerator(gpu)
    stacks_value = arch_fact(acc.id, "hbm_stacks")
    if stacks_value is None:
        raise ValueError("no sourced HBM stack count (gpu_architecture.csv)")
    stacks = int(stacks_value)
    dies = int(arch_fact(acc.id, "dies") or 1)
    die_link = arch_fact(acc.id, "die_to_die_gbytes_per_s")
    stack_gb = arch_fact(acc.id, "hbm_stack_gb")  # a stack's physical size, where sourced
    bandwidth = acc.memory_bandwidth_bytes_per_s
    per_stack_bw = bandwidth / stacks
    per_stack_cap = acc.memory_bytes / stacks if acc.memory_bytes else None
    kind = acc.memory_type.split(" ")[0]
    if dies == 2:
        shapes = [
            _rect(31, 22, 48.5, 80, _tint(BLUE, 0.2), BLUE, width=2),
            _rect(51.5, 22, 69, 80, _tint(BLUE, 0.2), BLUE, width=2),
            _rect(48.5, 40, 51.5, 62, _tint(GREEN, 0.6), GREEN, width=1),
            _line(50, 62, 50, 84, GREEN, 2),
        ]
        notes = [
            _text(39.75, 70, "<b>GPU die 1</b>"),
            _text(60.25, 70, "<b>GPU die 2</b>"),
            _text(
                50,
                87,
                "<b>NV-HBI</b>" + (f": {si(die_link * 1e9, 'B/s')} die to die" if die_link else ""),
                size=12,
            ),
        ]
    else:
        shapes = [_rect(32, 22, 68, 80, _tint(BLUE, 0.2), BLUE, width=2)]
        notes = [_text(50, 51, f"<b>GPU die</b><br>{acc.name}")]
    # Every site the same size, as on the package: a 6-site package with 5 stacks (H100, A100) draws
    # 3 + 3 boxes with the sixth site empty, not 3 + 2 boxes of different heights.
    sites = max(stacks, int(arch_fact(acc.id, "hbm_sites") or stacks))
    left = math.ceil(sites / 2)
    h = 58 / left
    die_edges = (31, 69) if dies == 2 else (32, 68)
    for site in range(sites):
        side, i = (0, site) if site < left else (1, site - left)
        y1 = 80 - i * h
        y0 = y1 - h + 2
        x0, x1 = (3, 27) if side == 0 else (73, 97)
        if site >= stacks:
            shapes.append(_rect(x0, y0, x1, y1, "rgba(0,0,0,0)", GREY, width=2, line_extra={"dash": "dash"}))
            notes.append(_text((x0 + x1) / 2, (y0 + y1) / 2, "unused site", size=11, colour=None))
            continue
        shapes.append(_rect(x0, y0, x1, y1, _tint(ORANGE, 0.3), ORANGE, width=2))
        edge = die_edges[side]
        shapes.append(_line(x1 if side == 0 else x0, (y0 + y1) / 2, edge, (y0 + y1) / 2, GREY, 3))
        cap = f"{stack_gb:g} GB" if stack_gb else (si(per_stack_cap, "B") if per_stack_cap else "")
        text = f"{si(per_stack_bw, 'B/s')}" + (f" · {cap}" if cap else "")
        notes.append(_text((x0 + x1) / 2, (y0 + y1) / 2, text, size=11 if left > 3 else LABEL_FONT_PX))
    notes.append(
        _text(
            50,
            10,
            f"<b>{stacks} {kind} stacks × {si(per_stack_bw, 'B/s')} = {si(bandwidth, 'B/s')}</b>",
            colour=None,
        )
    )
    table = [
        {"Quantity": "HBM stacks", "Value": stacks, "Unit": "stacks"},
        {"Quantity": "Device bandwidth", "Value": bandwidth / 1e9, "Unit": "GB/s"},
        {"Quantity": "Bandwidth per stack", "Value": per_stack_bw / 1e9, "Unit": "GB/s"},
        {
            "Quantity": "Device memory (label)",
            "Value": acc.memory_bytes / 1e9 if acc.memory_bytes else None,
            "Unit": "GB",
        },
        {
            "Quantity": "Memory label ÷ stacks",
            "Value": per_stack_cap / 1e9 if per_stack_cap else None,
            "Unit": "GB",
        },
    ]
    if stack_gb:
        table.append({"Quantity": "One stack as built (sourced)", "Value": stack_gb, "Unit": "GB"})
    if sites > stacks:
        table.append({"Quantity": "Stack sites on the package", "Value": sites, "Unit": "sites"})
    if dies > 1:
        table.append({"Quantity": "GPU dies", "Value": dies, "Unit": "dies"})
        if die_link:
            table.append({"Quantity": "Die-to-die link (NV-HBI)", "Value": die_link, "Unit": "GB/s"})
    cap_text = f"{stack_gb:g} GB" if stack_gb else ""
    alt = (
        f"The {acc.name} has {stacks} {kind} stacks beside "
        + (f"its {dies} dies ({stacks // dies} each, joined by NV-HBI)" if dies > 1 else "the die")
        + (f" ({sites} sites on the package, {sites - stacks} unused)" if sites > stacks else "")
        + f"; {stacks} × {si(per_stack_bw, 'B/s')} per stack gives its {si(bandwidth, 'B/s')}"
        + (
            f", and {stacks} × {si(per_stack_cap, 'B')} its {acc.memory_label}"
            if per_stack_cap and not stack_gb
            else (
                f"; its {stacks} × {cap_text} = {stacks * stack_gb:g} GB as built, of which it ships "
                f"{acc.memory_label}"
                if stack_gb
                else ""
            )
        )
        + "."
    )
    subtitle = (
        f"{stacks} stacks on the package"
        + (f" ({sites} sites)" if sites > stacks else "")
        + (f", {dies} GPU dies that software sees as one" if dies > 1 else "")
    )
    spec = _schematic(f"HBM: {acc.name}", subtitle, shapes, notes, height=420)
    return Diagram(
        "hbm-stack",
        spec,
        alt,
        tuple(table),
        "Bandwidth grows with the number of stacks: each is DRAM dies stacked on a base die, wired to "
        "the GPU through a wide interface (1,024 bits: H100's 10 × 512-bit controllers serve 5 stacks). "
        "Per-stack bandwidth is the catalog's device bandwidth divided by the sourced stack count; "
        "a stack's size is the sourced one where known, else the memory label divided by the stacks.",
    )


DIAGRAMS = {
    "memory-hierarchy": memory_hierarchy_diagram,
    "coalescing": coalescing_diagram,
    "bank-conflicts": bank_conflicts_diagram,
    "hbm-stack": hbm_stack_diagram,
}
