"""What the hardware diagrams share: the per-SM facts of ``simulators/data/gpu_architecture.csv``
(one sourced row per fact: sub-partitions, Tensor Cores and FP32 cores per SM, HBM stacks, clocks,
and the CUDA definitions such as the warp size; a GPU without a fact draws without it) and the
drawing helpers of a schematic (shapes and text on hidden 0-100 axes). No ``DIAGRAMS`` here.
"""

from __future__ import annotations

import csv
import functools
from pathlib import Path
from typing import Any

from charts.palette import OKABE_ITO
from charts.style import (
    LABEL_BOX_TEXT,
    LABEL_FONT_PX,
    Spec,
    figure,
)
from charts.style import title as chart_title
from simulators import hierarchy
from simulators.hardware import Accelerator
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


def require_nvidia_gpu(acc: Accelerator, drawn: str) -> None:
    """``ValueError`` unless ``acc`` is an NVIDIA GPU: ``drawn`` (SMs, warps, ``mma.sync``) is
    NVIDIA's structure, and drawing it for a TPU, an AMD compute unit or a CPU core would be false."""
    if acc.vendor != "NVIDIA":
        raise ValueError(f"not NVIDIA GPUs: {drawn} are NVIDIA's, other vendors' chips are built otherwise")


def require_family(gpu: str) -> hierarchy.HardwareFamily:
    """The memory-hierarchy family of ``gpu``; ``ValueError`` where none is sourced."""
    try:
        return hierarchy.family(gpu)
    except KeyError:
        raise ValueError(
            "no sourced cache sizes and latencies (simulators/data/memory_hierarchy.csv)"
        ) from None


def _family(gpu: str) -> hierarchy.HardwareFamily | None:
    try:
        return hierarchy.family(gpu)
    except KeyError:
        return None


def _capacity(fam: hierarchy.HardwareFamily | None, level: str) -> float | None:
    if fam is None or not fam.has_level(level):
        return None
    return fam.level(level).capacity_bytes


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
