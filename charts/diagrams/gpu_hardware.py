"""Diagrams of the glossary's GPU-hardware terms: the SM and its sub-partitions, one Tensor Core
instruction, and Tensor Core against CUDA-core peaks.

Every number comes from the project's data: the accelerator catalog (``simulators.hardware``), the
memory hierarchy (``simulators.hierarchy``), model presets, the quantization formats and
``simulators/data/gpu_architecture.csv`` (read through ``charts.diagrams.schematic``).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from charts.diagrams import Diagram
from charts.diagrams.schematic import (
    BLUE,
    FLOPS_PER_FMA,
    GREEN,
    LIGHT,
    ORANGE,
    SKY,
    _capacity,
    _family,
    _n,
    _rect,
    _schematic,
    _text,
    _tint,
    arch_fact,
    cuda_fact,
    require_nvidia_gpu,
)
from charts.style import (
    LABEL_FONT_PX,
    axis,
    figure,
    legend_name,
    wrap,
)
from charts.style import title as chart_title
from simulators.hardware import Accelerator, get_accelerator
from simulators.units import binary_bytes


def sm_diagram(gpu: str = "h100-sxm") -> Diagram:
    """One SM: its sub-partitions (one warp scheduler each), Tensor Cores, FP32 cores, register
    file, L1/shared memory and (Blackwell) Tensor Memory, with the GPU's SM count. An NVIDIA GPU
    without a sourced sub-partition count, or another vendor's part, raises ``ValueError``."""
    acc = get_accelerator(gpu)
    require_nvidia_gpu(acc, "SMs and their sub-partitions")
    fam = _family(acc.id)
    parts_known = arch_fact(acc.id, "sub_partitions_per_sm")
    if not parts_known:
        raise ValueError("no sourced sub-partition count per SM (gpu_architecture.csv)")
    parts = int(parts_known)
    tmem = arch_fact(acc.id, "tensor_memory_kib_per_sm")
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
    top, bottom = 87, 31 if tmem else 26
    cell_h = (top - bottom) / rows
    cell_w = 92 / cols
    for index in range(parts):
        r, c = divmod(index, cols)
        x0, x1 = 4 + c * cell_w + 1, 4 + (c + 1) * cell_w - 1
        y1, y0 = top - r * cell_h - 1, top - (r + 1) * cell_h + 1
        shapes.append(_rect(x0, y0, x1, y1, LIGHT, BLUE))
        # one warp scheduler per sub-partition, by definition (gpu_architecture.csv)
        lines = [f"<b>Sub-partition {index + 1}</b>", "1 warp scheduler"]
        if tensor:
            count = tensor / parts
            lines.append(f"{count:g} Tensor Core{'s' if count != 1 else ''}")
        if fp32:
            lines.append(f"{fp32 / parts:g} FP32 cores")
        if registers:
            lines.append(f"{binary_bytes(registers / parts)} registers")
        notes.append(_text((x0 + x1) / 2, (y0 + y1) / 2, "<br>".join(lines)))
    if tmem:
        # Tensor Memory: one slice per sub-partition, drawn as a band under them (Blackwell).
        shapes.append(_rect(5, 24.5, 95, 29.5, _tint(GREEN, 0.25), GREEN))
        notes.append(
            _text(
                50,
                27,
                f"<b>Tensor Memory (TMEM): {_n(tmem)} KiB</b>, {_n(tmem / parts)} KiB per sub-partition",
            )
        )
    shapes.append(_rect(5, 5, 95, 23, _tint(ORANGE, 0.25), ORANGE))
    if l1:
        memory = f"<b>L1 cache / shared memory: {binary_bytes(l1)}</b>"
        if shared:
            memory += f"<br>up to {binary_bytes(shared)} of it as shared memory"
    else:
        memory = "<b>L1 cache / shared memory</b><br>size not in the data"
    notes.append(_text(50, 14, memory + "<br>shared by the whole SM"))

    table: list[dict[str, Any]] = [{"Quantity": "SMs on the GPU", "Per SM": None, "Whole GPU": sms}]
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
    if tmem:
        table.append(
            {
                "Quantity": "Tensor Memory (KiB)",
                "Per SM": tmem,
                "Whole GPU": tmem * sms if sms else None,
            }
        )

    parts_text = f"each has {parts} sub-partitions with one warp scheduler" + (
        f" and {tensor / parts:g} Tensor Core{'s' if tensor / parts != 1 else ''} each" if tensor else ""
    )
    alt = (
        f"The {acc.name} has {_n(sms)} SMs; {parts_text}"
        if sms
        else f"One SM of the {acc.name}; {parts_text}"
    )
    extras = []
    if registers:
        extras.append(f"{binary_bytes(registers)} of registers")
    if l1:
        extras.append(f"{binary_bytes(l1)} of L1/shared memory")
    if tmem:
        extras.append(f"{_n(tmem)} KiB of Tensor Memory for the Tensor Cores' accumulators")
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
        "between the sub-partitions, while L1/shared memory serves the whole SM"
        + (
            "; Blackwell adds Tensor Memory, where the Tensor Cores keep their accumulators, not registers"
            if tmem
            else ""
        )
        + ". Layout after the SM "
        "diagram of NVIDIA's H100 white paper as redrawn in Modal's GPU Glossary "
        "(modal.com/gpu-glossary/device-hardware/streaming-multiprocessor).",
    )


def tensor_core_diagram(gpu: str = "h100-sxm", dtype: str = "bf16") -> Diagram:
    """One warp-wide mma.sync m16n8k16 (A 16×16 times B 16×8 into C 16×8) against one FP32 FMA
    instruction, and where the clocks are sourced, FLOPs per clock per SM from the catalog."""
    warp = cuda_fact("warp_size")
    m, n, k = (cuda_fact(f"mma_sync_{d}") for d in "mnk")
    mma_flops = FLOPS_PER_FMA * m * n * k
    fma_flops = FLOPS_PER_FMA * warp
    acc = get_accelerator(gpu)
    require_nvidia_gpu(acc, "mma.sync and Tensor Cores")
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


def tensor_vs_cuda_core_diagram(
    gpus: Sequence[str] = ("v100-32gb-sxm2", "a100-80gb-sxm", "h100-sxm", "b200"), dtype: str = "fp16"
) -> Diagram:
    """Dense Tensor Core peak (``dtype``) against the FP32 CUDA-core peak, GPUs that have both, on a
    linear axis (bar length proportional to FLOP/s)."""
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
    # A linear axis from zero: bar length is proportional to FLOP/s, so the widening gap from
    # generation to generation is what the eye sees (a log axis shrank B200's 30x below V100's 8x).
    layout = {
        "title": chart_title("Tensor Cores vs CUDA cores", f"Peak TFLOP/s: dense {dtype} vs FP32"),
        "barmode": "group",
        "showlegend": False,
        "xaxis": axis("Peak TFLOP/s", range=[0, max(tensor) * 1.3], rangemode="tozero"),
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


def _per_clock_per_sm(acc: Accelerator, flops: float | None, clock_fact: str) -> float | None:
    clock = arch_fact(acc.id, clock_fact)
    if flops is None or clock is None or not acc.sm_count:
        return None
    return flops / (acc.sm_count * clock * 1e6)


DIAGRAMS = {
    "sm": sm_diagram,
    "tensor-core": tensor_core_diagram,
    "tensor-vs-cuda-core": tensor_vs_cuda_core_diagram,
}
