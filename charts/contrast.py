"""Chart colours that meet WCAG 2.2 contrast in the light and the dark theme.

Builders in ``charts/`` draw one colour-blind-safe palette (Okabe & Ito) and know nothing of the
reader's theme. Some of those colours are too faint on one background: orange, sky blue and yellow
lines are 2.3:1, 2.3:1 and 1.3:1 on white; black is 1.1:1 on the dark theme's near-black; and
Streamlit's chart theme draws tick labels and axis titles in ``#808495``, 3.7:1 on white.
``for_theme`` returns a copy of a spec in which

* text reaches 4.5:1 against what it is drawn on (WCAG 1.4.3): the page, or an annotation's own
  box; tick labels, axis titles, legends and unset text get the theme's chart text colour;
* marks (lines, markers, bars, shape outlines) reach 3:1 against the page (WCAG 1.4.11).

A colour that falls short is mixed toward black (light theme) or white (dark theme) in small steps
until it reaches the ratio, which keeps its hue: orange stays orange, only darker. A colour that is
already enough is left exactly as the builder drew it. Text drawn *on* a mark (a bar's inside
label, a heatmap cell, a diagram box) is the builder's choice against that mark and is left alone,
as are translucent fills, white halos around marks, and the colours of heatmap scales.

Contrast follows WCAG 2.2's definition of relative luminance and contrast ratio:
https://www.w3.org/TR/WCAG22/#dfn-contrast-ratio
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from functools import lru_cache
from typing import Any

Spec = dict[str, Any]
RGB = tuple[int, int, int]

TEXT_RATIO = 4.5  # WCAG 1.4.3, normal-size text
MARK_RATIO = 3.0  # WCAG 1.4.11, graphical objects

# The page behind a chart: Streamlit 1.67's light and dark theme backgrounds (a chart is
# transparent over it; measured in Chromium as the computed background of .stApp).
BACKGROUND = {"light": "#FFFFFF", "dark": "#171614"}
# Chart text (ticks, axis titles, legend, labels): a little softer than body text, 7.1:1 on white
# and 7.6:1 on the dark background.
CHART_TEXT = {"light": "#555867", "dark": "#A3A8B8"}

_NAMED = {"white": (255, 255, 255), "black": (0, 0, 0)}
_HEX = re.compile(r"^#([0-9a-fA-F]{3}|[0-9a-fA-F]{6})$")
_FUNC = re.compile(r"^rgba?\(\s*([\d.]+)\s*,\s*([\d.]+)\s*,\s*([\d.]+)\s*(?:,\s*([\d.]+)\s*)?\)$")
_AXIS_KEY = re.compile(r"^[xy]axis\d*$")


@lru_cache(maxsize=1024)
def parse(colour: str) -> tuple[RGB, float] | None:
    """``(rgb, alpha)`` for ``#rgb``, ``#rrggbb``, ``rgb()``, ``rgba()``, white or black; None for
    anything else (a colour this module then leaves alone)."""
    text = colour.strip().lower()
    if text in _NAMED:
        return _NAMED[text], 1.0
    match = _HEX.match(text)
    if match:
        digits = match.group(1)
        if len(digits) == 3:
            digits = "".join(d * 2 for d in digits)
        return (int(digits[0:2], 16), int(digits[2:4], 16), int(digits[4:6], 16)), 1.0
    match = _FUNC.match(text)
    if match:
        r, g, b = (round(float(match.group(i))) for i in (1, 2, 3))
        alpha = float(match.group(4)) if match.group(4) is not None else 1.0
        return (r, g, b), alpha
    return None


def _channel(value: int) -> float:
    v = value / 255
    return v / 12.92 if v <= 0.04045 else ((v + 0.055) / 1.055) ** 2.4


def luminance(rgb: RGB) -> float:
    """WCAG relative luminance of an sRGB colour."""
    r, g, b = (_channel(v) for v in rgb)
    return 0.2126 * r + 0.7152 * g + 0.0722 * b


def ratio(a: RGB, b: RGB) -> float:
    """WCAG contrast ratio of two opaque colours, 1 to 21."""
    la, lb = luminance(a), luminance(b)
    return (max(la, lb) + 0.05) / (min(la, lb) + 0.05)


def over(rgb: RGB, alpha: float, background: RGB) -> RGB:
    """``rgb`` at ``alpha`` composited over an opaque ``background``."""
    return tuple(round(c * alpha + b * (1 - alpha)) for c, b in zip(rgb, background, strict=True))  # type: ignore[return-value]


def contrast(colour: str, background: str) -> float:
    """Contrast ratio of ``colour`` (composited if translucent) on an opaque ``background``."""
    fg, bg = parse(colour), parse(background)
    if fg is None or bg is None:
        raise ValueError(f"not a colour this module reads: {colour!r} or {background!r}")
    return ratio(over(fg[0], fg[1], bg[0]), bg[0])


def _hex(rgb: RGB) -> str:
    return "#{:02X}{:02X}{:02X}".format(*rgb)


@lru_cache(maxsize=512)
def legible(colour: str, background: str, target: float) -> str:
    """``colour`` itself where it reaches ``target`` on ``background``; otherwise the first mix of
    it toward black (on a light background) or white (on a dark one), in 4 % steps, that does.
    Colours this module cannot read, and translucent ones, come back unchanged."""
    parsed, bg = parse(colour), parse(background)
    if parsed is None or bg is None or parsed[1] < 1:
        return colour
    rgb, back = parsed[0], bg[0]
    if ratio(rgb, back) >= target:
        return colour
    toward = (0, 0, 0) if luminance(back) > 0.18 else (255, 255, 255)
    mixed = rgb
    for step in range(1, 26):
        share = step * 0.04
        mixed = tuple(round(c + (t - c) * share) for c, t in zip(rgb, toward, strict=True))  # type: ignore[assignment]
        if ratio(mixed, back) >= target:
            break
    return _hex(mixed)


def _is_halo(colour: Any, scheme: str) -> bool:
    """White drawn around or between marks in the light theme separates them; it is not a mark."""
    parsed = parse(colour) if isinstance(colour, str) else None
    return scheme == "light" and parsed is not None and parsed[0] == (255, 255, 255)


def _fix(value: Any, background: str, target: float, scheme: str) -> Any:
    if isinstance(value, str):
        return value if _is_halo(value, scheme) else legible(value, background, target)
    if isinstance(value, list):
        return [_fix(v, background, target, scheme) for v in value]
    return value  # numbers mapped through a colour scale, None


def _font(holder: Mapping[str, Any], key: str, background: str, scheme: str, *, default: bool) -> dict:
    font = dict(holder.get(key) or {})
    if "color" in font:
        font["color"] = _fix(font["color"], background, TEXT_RATIO, scheme)
    elif default:
        font["color"] = CHART_TEXT[scheme]
    return font


def _box(annotation: Mapping[str, Any], page: str) -> str | None:
    """The opaque colour an annotation's text sits on when it has a box of its own (the box over
    the page); None when it has none."""
    parsed, back = parse(str(annotation.get("bgcolor", ""))), parse(page)
    if parsed is None or back is None or parsed[1] == 0:
        return None
    return _hex(over(parsed[0], parsed[1], back[0]))


Box = tuple[float, float, float, float, str, str]  # x0, x1, y0, y1 (ordered), refs, opaque colour


def _boxes(shapes: list[dict], page: str) -> list[Box]:
    """The filled rectangles a label can sit on, topmost first, each with its colour composited
    over the page (built once per chart: a schematic has ~100 shapes and ~20 labels)."""
    back = parse(page)
    out: list[Box] = []
    for shape in reversed(shapes):  # later shapes are drawn on top
        if shape.get("type", "rect") != "rect" or back is None:
            continue
        corners = [shape.get(k) for k in ("x0", "x1", "y0", "y1")]
        fill = parse(str(shape.get("fillcolor", "")))
        if fill is None or fill[1] < 0.3 or not all(isinstance(c, (int, float)) for c in corners):
            continue
        x0, x1, y0, y1 = corners
        refs = f"{shape.get('xref', 'x')} {shape.get('yref', 'y')}"
        colour = _hex(over(fill[0], fill[1], back[0]))
        out.append((min(x0, x1), max(x0, x1), min(y0, y1), max(y0, y1), refs, colour))
    return out


def _shape_under(annotation: Mapping[str, Any], boxes: list[Box]) -> str | None:
    """The colour of the topmost filled rectangle under an annotation's anchor point (a schematic's
    box with its label on it); None when it lies on the page."""
    x, y = annotation.get("x"), annotation.get("y")
    if not isinstance(x, (int, float)) or not isinstance(y, (int, float)):
        return None
    refs = f"{annotation.get('xref', 'x')} {annotation.get('yref', 'y')}"
    for x0, x1, y0, y1, box_refs, colour in boxes:
        if box_refs == refs and x0 <= x <= x1 and y0 <= y <= y1:
            return colour
    return None


# A text trace whose labels sit on cells of another trace (the GPU grid's numbers on their
# heatmap cells): its builder chose each colour against its own cell, so it is left alone.
TEXT_ON_CELLS = "text on cells"


def _trace(trace: Mapping[str, Any], page: str, scheme: str) -> dict:
    out = dict(trace)
    kind = trace.get("type", "scatter")
    if kind in ("heatmap", "histogram2d", "contour", "image", "table", "pie", "sunburst", "treemap"):
        return out  # colours come from a scale or sit under their own text
    if trace.get("meta") == TEXT_ON_CELLS:
        return out
    inside = kind in ("bar", "funnel", "waterfall") and trace.get("textposition") in (None, "inside", "auto")
    if "textfont" in trace and not inside:
        out["textfont"] = _font(trace, "textfont", page, scheme, default=False)
    marker = trace.get("marker")
    if isinstance(marker, Mapping):
        new = dict(marker)
        if "color" in marker and not (
            isinstance(marker.get("opacity"), (int, float)) and marker["opacity"] < 1
        ):
            new["color"] = _fix(marker["color"], page, MARK_RATIO, scheme)
        symbol = str(marker.get("symbol", ""))
        edge = marker.get("line")
        if isinstance(edge, Mapping) and "color" in edge and ("open" in symbol or symbol.startswith("line")):
            new["line"] = {**edge, "color": _fix(edge["color"], page, MARK_RATIO, scheme)}
        out["marker"] = new
    line = trace.get("line")
    if isinstance(line, Mapping) and "color" in line:  # a line, or the edge of a filled band
        out["line"] = {**line, "color": _fix(line["color"], page, MARK_RATIO, scheme)}
    return out


def for_theme(spec: Mapping[str, Any], scheme: str) -> Spec:
    """A copy of ``spec`` whose text and marks meet WCAG contrast on ``scheme``'s background
    ("light" or "dark"); ``spec`` itself is not changed. The dicts that hold colours are copied;
    data arrays are shared, not duplicated, so this costs little on a large chart."""
    if scheme not in BACKGROUND:
        raise ValueError(f"scheme must be 'light' or 'dark', not {scheme!r}")
    page = BACKGROUND[scheme]
    layout = dict(spec.get("layout") or {})
    layout["font"] = _font(layout, "font", page, scheme, default=True)
    if isinstance(layout.get("colorway"), list):  # the colours of traces that name none
        layout["colorway"] = _fix(layout["colorway"], page, MARK_RATIO, scheme)
    legend = dict(layout.get("legend") or {})
    legend["font"] = _font(legend, "font", page, scheme, default=True)
    layout["legend"] = legend
    for key, value in list(layout.items()):
        if _AXIS_KEY.match(key) and isinstance(value, Mapping):
            axis = dict(value)
            axis["tickfont"] = _font(value, "tickfont", page, scheme, default=True)
            title = value.get("title")
            if isinstance(title, Mapping):
                axis["title"] = {**title, "font": _font(title, "font", page, scheme, default=True)}
            if "linecolor" in value:
                axis["linecolor"] = _fix(value["linecolor"], page, MARK_RATIO, scheme)
            layout[key] = axis
    # A schematic (no axes shown) draws translucent boxes that were tinted for a white page, with
    # dark text on them: on the dark theme each box is the same tint made opaque, as on white.
    axes = [value for key, value in layout.items() if _AXIS_KEY.match(key)]
    schematic = bool(axes) and all(value.get("visible") is False for value in axes)
    linear = all(value.get("type") not in ("log", "date") for value in axes)
    white = (255, 255, 255)
    shapes = []
    for shape in layout.get("shapes", ()):
        new = dict(shape)
        edge = shape.get("line")
        if isinstance(edge, Mapping) and "color" in edge and shape.get("type") in ("line", "path"):
            new["line"] = {**edge, "color": _fix(edge["color"], page, MARK_RATIO, scheme)}
        fill = parse(str(shape.get("fillcolor", "")))
        if schematic and scheme == "dark" and fill is not None and 0 < fill[1] < 1:
            new["fillcolor"] = _hex(over(fill[0], fill[1], white))
        shapes.append(new)
    if shapes:
        layout["shapes"] = shapes
    # Each label reaches 4.5:1 on what it is drawn on: its own box, else the box under it (on
    # linear axes, where a label and a shape share coordinates), else the page.
    annotations = []
    boxes = _boxes(shapes, page) if linear and layout.get("annotations") else []
    for annotation in layout.get("annotations", ()):
        new = dict(annotation)
        under = _box(annotation, page) if "bgcolor" in annotation else None
        if under is None:
            under = _shape_under(annotation, boxes) or page
        font = dict(annotation.get("font") or {})
        font["color"] = legible(str(font.get("color", CHART_TEXT[scheme])), under, TEXT_RATIO)
        new["font"] = font
        if "arrowcolor" in annotation:
            new["arrowcolor"] = _fix(annotation["arrowcolor"], page, MARK_RATIO, scheme)
        annotations.append(new)
    if annotations:
        layout["annotations"] = annotations
    data = [_trace(t, page, scheme) if isinstance(t, Mapping) else t for t in spec.get("data") or ()]
    return {**spec, "data": data, "layout": layout}
