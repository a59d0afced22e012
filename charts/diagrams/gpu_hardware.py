"""Diagrams of the glossary's GPU-hardware terms: the SM and its sub-partitions, one Tensor Core
instruction, and Tensor Core against CUDA-core peaks.

Every number comes from the project's data: the accelerator catalog (``simulators.hardware``), the
memory hierarchy (``simulators.hierarchy``), model presets, the quantization formats and
``simulators/data/gpu_architecture.csv`` (read through ``charts.diagrams.schematic``).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from charts.diagrams import Diagram
from charts.diagrams.schematic import (
    BLUE,
    CUDA,
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


@dataclass(frozen=True)
class TensorCoreInstruction:
    """The Tensor Core instruction a compute capability issues for 16-bit inputs (gpu_architecture.csv:
    shapes under ``sm_70``, ``sm_75``, ``cuda`` (sm_80 and later ``mma.sync``), ``sm_90``, ``sm_100``)."""

    name: str  # the PTX instruction, with its shape
    m: int
    n: int
    k: int
    mmas: int  # matrix products one instruction computes (4 for Volta's m8n8k4 per warp)
    issuer: str  # who issues it, in words
    issuing_threads: int  # threads that issue it together (the FMA comparison uses as many)
    dtype: str  # the 16-bit input type drawn: bf16 from sm_80, fp16 before


def tensor_core_instruction(gpu: str) -> TensorCoreInstruction:
    """The Tensor Core instruction the picked GPU's generation issues, from its sourced compute
    capability: 7.0 Volta ``mma.sync.m8n8k4`` (4 per warp), 7.5 Turing ``m16n8k8``, 8.x and 12.x
    ``mma.sync.m16n8k16``, 9.0 Hopper ``wgmma.mma_async`` (a warpgroup), 10.x ``tcgen05.mma``
    (one thread for the CTA). ``ValueError`` for a GPU without Tensor Cores (below 7.0) or without
    a sourced compute capability."""
    acc = get_accelerator(gpu)
    require_nvidia_gpu(acc, "mma.sync and Tensor Cores")
    cc = arch_fact(acc.id, "compute_capability")
    if cc is None:
        raise ValueError("no sourced compute capability (gpu_architecture.csv)")
    warp = cuda_fact("warp_size")

    def shape(gen: str, prefix: str = "mma_") -> tuple[int, int, int]:
        found = [arch_fact(gen, f"{prefix}{d}") for d in "mnk"]
        if any(v is None for v in found):
            raise KeyError(f"gpu_architecture.csv has no {gen}/{prefix}m,n,k")
        return tuple(int(v) for v in found)  # type: ignore[return-value]

    if cc < 7.0:
        raise ValueError("no Tensor Cores (compute capability below 7.0: Kepler, Maxwell, Pascal)")
    if cc < 7.5:
        m, n, k = shape("sm_70")
        mmas = int(arch_fact("sm_70", "mmas_per_instruction") or 1)
        return TensorCoreInstruction(
            f"mma.sync m{m}n{n}k{k}", m, n, k, mmas, "one warp, 4 products at once", warp, "fp16"
        )
    if cc < 8.0:
        m, n, k = shape("sm_75")
        return TensorCoreInstruction(f"mma.sync m{m}n{n}k{k}", m, n, k, 1, "one warp", warp, "fp16")
    if 9.0 <= cc < 10.0:
        m, n, k = shape("sm_90")
        threads = int(arch_fact("sm_90", "issuing_threads") or 4 * warp)
        return TensorCoreInstruction(
            f"wgmma.mma_async m{m}n{n}k{k}",
            m,
            n,
            k,
            1,
            f"a warpgroup ({threads // warp} warps)",
            threads,
            "bf16",
        )
    if 10.0 <= cc < 11.0:  # sm_100 and sm_103: the targets cccl lists for tcgen05.mma
        m, n, k = shape("sm_100")
        return TensorCoreInstruction(
            f"tcgen05.mma m{m}n{n}k{k}", m, n, k, 1, "one thread for the whole CTA", warp, "bf16"
        )
    if not (8.0 <= cc < 9.0 or 12.0 <= cc < 13.0):
        raise ValueError(f"no sourced Tensor Core instruction for compute capability {cc:g}")
    m, n, k = shape(CUDA, "mma_sync_")  # sm_80, 8.6, 8.9 and the 12.x Blackwell parts: mma.sync
    return TensorCoreInstruction(f"mma.sync m{m}n{n}k{k}", m, n, k, 1, "one warp", warp, "bf16")


def tensor_core_diagram(gpu: str = "h100-sxm") -> Diagram:
    """The picked GPU's own Tensor Core instruction (its generation's shape, drawn to aspect: A m×k,
    B k×n, C m×n) against FP32 FMAs of the same threads, and where the clocks are sourced, FLOPs per
    clock per SM from the catalog. Not drawn for a GPU without Tensor Cores."""
    acc = get_accelerator(gpu)
    ins = tensor_core_instruction(gpu)
    m, n, k, dtype = ins.m, ins.n, ins.k, ins.dtype
    mma_flops = FLOPS_PER_FMA * m * n * k * ins.mmas
    fma_flops = FLOPS_PER_FMA * ins.issuing_threads
    tensor_clk = _per_clock_per_sm(
        acc, acc.peak_flops(dtype) if acc.supports(dtype) else None, "tensor_clock_mhz"
    )
    vector_clk = _per_clock_per_sm(acc, acc.fp32_flops, "vector_clock_mhz")
    # Drawn to aspect: one element is the same length across and up, so a 16×16 tile is square.
    width, height, gap = 84.0, 52.0, 3.0
    unit = min((width - gap) / (k + n), (height - gap) / (m + k))
    x0, y0 = 8.0, 40.0
    a = (x0, y0, x0 + k * unit, y0 + m * unit)  # A: m x k
    c = (a[2] + gap, y0, a[2] + gap + n * unit, y0 + m * unit)  # C: m x n, right of A
    b = (c[0], c[3] + gap, c[2], c[3] + gap + k * unit)  # B: k x n, above C
    shapes = [
        _rect(*a, _tint(BLUE, 0.3), BLUE, width=2),
        _rect(*b, _tint(ORANGE, 0.3), ORANGE, width=2),
        _rect(*c, _tint(GREEN, 0.3), GREEN, width=2),
    ]
    right = max(c[2], b[2]) + 2
    notes = [
        _text(a[0] - 0.5, (a[1] + a[3]) / 2, f"<b>A</b> {m}×{k}", colour=None, xanchor="right"),
        _text(right, (b[1] + b[3]) / 2, f"<b>B</b> {k}×{n}", colour=None, xanchor="left"),
        _text(right, (c[1] + c[3]) / 2, f"<b>C</b> {m}×{n}<br>C += A × B", colour=None, xanchor="left"),
        _text(
            50,
            28,
            f"<b>1 {ins.name}</b> ({ins.issuer}): "
            + (f"{ins.mmas} × " if ins.mmas > 1 else "")
            + f"{m}×{n}×{k} × {FLOPS_PER_FMA} = {_n(mma_flops)} FLOPs<br>"
            f"<b>1 FP32 FMA</b> on {ins.issuing_threads} threads: {ins.issuing_threads} × {FLOPS_PER_FMA} = "
            f"{fma_flops} FLOPs<br><b>{mma_flops // fma_flops:,}×</b> the work per instruction",
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
            "Operation": f"{ins.name} ({dtype}, {ins.issuer})",
            "FLOPs per instruction": mma_flops,
            "FLOPs per clock per SM": None,
        },
        {
            "Operation": f"FP32 FMA ({ins.issuing_threads} threads)",
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
        f"On the {acc.name} one {ins.name} instruction, issued by {ins.issuer}, multiplies "
        f"{'an' if str(m).startswith('8') else 'a'} {m}×{k} "
        f"{dtype} tile by a {k}×{n} tile into {m}×{n}"
        + (f", {ins.mmas} times" if ins.mmas > 1 else "")
        + f": {_n(mma_flops)} FLOPs, against {fma_flops} for one FP32 FMA on {ins.issuing_threads} threads."
    )
    if tensor_clk and vector_clk:
        alt += (
            f" An SM does about {_n(tensor_clk)} {dtype} FLOPs per clock on Tensor Cores "
            f"and {_n(vector_clk)} on FP32 cores."
        )
    spec = _schematic(
        f"A Tensor Core works on tiles: {acc.name}",
        f"{ins.name}, {dtype} inputs, drawn to scale",
        shapes,
        notes,
        height=460,
    )
    spec["layout"]["yaxis"]["scaleanchor"] = "x"  # one element as long across as up
    spec["layout"]["yaxis"]["scaleratio"] = 1
    return Diagram(
        "tensor-core",
        spec,
        alt,
        tuple(table),
        "Each Tensor Core generation has its own instruction: Volta's mma.sync m8n8k4, Turing's m16n8k8, "
        "Ampere's m16n8k16 (also Ada and the RTX Blackwell parts), Hopper's wgmma across four warps, "
        "Blackwell's tcgen05.mma issued by one thread with its result in Tensor Memory. GPUs without "
        "Tensor Cores (Kepler, Maxwell) are not offered. Shapes: CUTLASS and the PTX ISA; per-clock "
        "figures divide the catalog's dense peak by the SM count and the sourced boost clock.",
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
