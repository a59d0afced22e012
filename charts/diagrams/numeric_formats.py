"""Diagrams of the glossary's numeric-format terms: the values a quantization grid can hold.

Every number comes from the project's data: the accelerator catalog (``simulators.hardware``), the
memory hierarchy (``simulators.hierarchy``), model presets, the quantization formats and
``simulators/data/gpu_architecture.csv`` (read through ``charts.diagrams.schematic``).
"""

from __future__ import annotations

from collections.abc import Sequence

from charts.diagrams import Diagram
from charts.palette import OKABE_ITO
from charts.style import (
    axis,
    figure,
)
from charts.style import title as chart_title
from simulators.quantization import FORMATS, format_grid


def quantization_grid_diagram(formats: Sequence[str] = ("int4", "fp4_e2m1", "fp8_e4m3")) -> Diagram:
    """Every value each format can represent, scaled so its largest value is 1, on one number line."""
    data = []
    table = []
    for i, fmt in enumerate(formats):
        spec = FORMATS[fmt]
        grid = format_grid(fmt, 1 / spec.max_finite)
        if spec.kind == "int":
            # format_grid is the symmetric grid (-q..q): two's complement INT4 also has -8, and an
            # asymmetric (zero-point) INT4 uses codes 0..15, so the label says which one is drawn.
            top = int(spec.max_finite)
            label = f"{fmt}, symmetric (−{top}…{top}): {len(grid)} values"
        else:
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
                "Grid": f"symmetric (−{spec.max_finite:g}…{spec.max_finite:g})"
                if spec.kind == "int"
                else "every code",
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
        + "; ".join(
            f"{r['Format']}{', symmetric,' if r['Grid'].startswith('sym') else ''} has {r['Distinct values']}"
            " values"
            for r in table
        )
        + ". Integer steps are even; float values crowd towards zero."
    )
    return Diagram(
        "quantization-grid",
        figure(data, layout),
        alt,
        tuple(table),
        "Quantization rounds every number to the nearest mark. INT4's marks are evenly spaced (drawn "
        "symmetric, as absmax quantization uses it; two's complement adds −8, zero-point INT4 uses "
        "0…15); FP4 and FP8 put more marks near zero and fewer near the top, where relative error "
        "stays about constant.",
    )


DIAGRAMS = {
    "quantization-grid": quantization_grid_diagram,
}
