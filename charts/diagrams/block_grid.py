"""What the serving and multi-GPU diagrams share: model presets, colours, block and note shapes on
hidden axes, and number formats. No ``DIAGRAMS`` here.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from charts.palette import OKABE_ITO
from charts.style import (
    LABEL_BOX_TEXT,
    LABEL_FONT_PX,
    figure,
    legend_name,
)
from simulators.model_config import ModelSpec
from simulators.presets import get_model_preset

MAX_HEIGHT = 520

EMPTY_COLOUR = "#DDDDDD"  # an empty slot or an idle GPU: light grey, always named in text too

OUTLINE = "#444444"

GB = 1e9


def _preset_spec(model: str) -> tuple[str, ModelSpec]:
    preset = get_model_preset(model)
    return preset.name, preset.spec


def _ink(colour: str) -> str:
    """Text colour that reads on ``colour``: white on the dark blue and black, else near-black."""
    return "white" if colour in (OKABE_ITO[0], OKABE_ITO[7], OUTLINE) else LABEL_BOX_TEXT


def _colour(index: int) -> str:
    return OKABE_ITO[index % len(OKABE_ITO)]


def _rect(x0: float, y0: float, x1: float, y1: float, fill: str, **extra: Any) -> dict[str, Any]:
    shape = {
        "type": "rect",
        "xref": "x",
        "yref": "y",
        "x0": x0,
        "y0": y0,
        "x1": x1,
        "y1": y1,
        "fillcolor": fill,
        "line": {"color": "white", "width": 1},
        "layer": "below",
    }
    shape.update(extra)
    return shape


def _note(
    x: float, y: float, text: str, *, colour: str | None = None, size: int = LABEL_FONT_PX, **extra: Any
):
    """A text label at data coordinates (no arrow); ``colour`` None follows the theme's text colour."""
    font: dict[str, Any] = {"size": size}
    if colour:
        font["color"] = colour
    note = {"x": x, "y": y, "xref": "x", "yref": "y", "text": text, "showarrow": False, "font": font}
    note.update(extra)
    return note


def _hidden(lo: float, hi: float, **extra: Any) -> dict[str, Any]:
    spec = {"visible": False, "range": [lo, hi], "fixedrange": True, "showgrid": False, "zeroline": False}
    spec.update(extra)
    return spec


def _legend_square(name: str, colour: str) -> dict[str, Any]:
    """A legend entry (a coloured square) for shapes, which have no legend of their own."""
    return {
        "type": "scatter",
        "x": [None],
        "y": [None],
        "mode": "markers",
        "marker": {"symbol": "square", "size": 14, "color": colour, "line": {"color": OUTLINE, "width": 1}},
        "name": legend_name(name),
        "hoverinfo": "skip",
    }


def _finish(data: Sequence[dict[str, Any]], layout: dict[str, Any]) -> dict[str, Any]:
    spec = figure(data, layout)
    if "height" in spec["layout"]:
        spec["layout"]["height"] = min(MAX_HEIGHT, spec["layout"]["height"])
    return spec


def _check_range(name: str, value: int, low: int, high: int) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise ValueError(f"{name} must be a whole number from {low} to {high}, got {value!r}")


def _gb(value: float) -> str:
    return f"{value / GB:,.3g} GB"


def _seconds(value: float) -> str:
    return f"{value:,.2f} s" if value >= 1 else f"{value * 1e3:,.3g} ms"
