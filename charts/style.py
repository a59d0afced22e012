"""One look for every chart, on plain figure dicts: fonts, colours, margins, legend, title.

Builders return ``{"data": [...], "layout": {...}}``, a Plotly figure spec that ``json.dumps``
accepts and Plotly renders without validating property by property (issue 9: validation was most
of a rerun). ``figure`` applies the shared style; everything that keeps text from colliding lives
here (issue 10):

* the legend sits below the plot, horizontal, referenced to the container, so Plotly reserves
  room for it under the axis title instead of drawing it over the plot or squeezing the plot;
* the title sits below the room Plotly's mode bar takes, left-aligned, with a smaller subtitle;
* long titles, axis titles, legend entries and category labels are wrapped (Plotly never wraps
  text), at widths that fit a 390 px phone;
* every axis gets ``automargin`` so tick labels and titles push the plot inward, never out.

``scale_fonts`` turns a spec into its presenter-view version (larger text, a little taller).
"""

from __future__ import annotations

import copy
import html
import math
import re
import textwrap
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from charts.palette import OKABE_ITO

BASE_FONT_PX = 16
TITLE_FONT_PX = 19
SUBTITLE_FONT_PX = 14
AXIS_TITLE_FONT_PX = 16
TICK_FONT_PX = 14
LEGEND_FONT_PX = 14
LABEL_FONT_PX = 13  # point and bar labels, annotations
HOVER_FONT_PX = 14
MODEBAR_PX = 34  # Plotly's mode bar is about 30 px tall at the top right: the title starts below it
GRID_COLOUR = "rgba(128,128,128,0.25)"
# A label boxed over lines: a light box with dark text, readable in the light and the dark theme
# alike (Streamlit's dark theme makes unset text light, which vanishes on a light box).
LABEL_BOX_BG = "rgba(255,255,255,0.85)"
LABEL_BOX_TEXT = "#1a1a1a"

# Wrapping widths in characters, for a chart about 340 px wide (a phone) at the sizes above
# (about 0.5 em per character in the theme's sans-serif font).
TITLE_CHARS = 36
SUBTITLE_CHARS = 46
AXIS_TITLE_CHARS = 40
Y_TITLE_CHARS = 28  # a y title runs along the plot's height, which is short on a phone
LEGEND_CHARS = 42

# Text placed beside a point or line is placed for the narrowest chart: a phone, about 260 px of
# plot once the axis labels are in, at about 7 px a character of 13 px text.
NARROW_PLOT_PX = 260
LABEL_CHAR_PX = 7

Spec = dict[str, Any]

_AXIS_KEY = re.compile(r"^[xy]axis\d*$")


def wrap(text: str, width: int) -> str:
    """``text`` with ``<br>`` between words so no line is longer than ``width`` characters.

    Existing ``<br>`` breaks are kept; a single word longer than ``width`` stays whole.
    """
    lines = []
    for paragraph in text.split("<br>"):
        lines += textwrap.wrap(paragraph, width, break_long_words=False, break_on_hyphens=False) or [""]
    return "<br>".join(lines)


def narrow_fraction(text: str) -> float:
    """How much of a phone-width plot ``text`` takes at the label size, as a fraction of the width
    (the longest line when it is wrapped)."""
    longest = max((len(line) for line in text.split("<br>")), default=0)
    return longest * LABEL_CHAR_PX / NARROW_PLOT_PX


def title(headline: str, detail: str = "") -> dict[str, Any]:
    """A left-aligned title just above the plot, below the mode bar; ``detail`` in smaller type.

    Anchored to the top of the plot area (``yref="paper"``, ``yanchor="bottom"``) with
    ``automargin``: Plotly grows the top margin to hold every wrapped line plus ``pad.t``, the
    room the mode bar takes. (A container-anchored title with ``yanchor="top"`` pushes a
    multi-line title up past the top edge, and a ``subtitle`` is not counted in the margin.)
    """
    text = wrap(headline, TITLE_CHARS)
    if detail:
        text += (
            f"<br><span style='font-size:{SUBTITLE_FONT_PX}px;font-weight:normal'>"
            + wrap(detail, SUBTITLE_CHARS)
            + "</span>"
        )
    return {
        "text": text,
        "font": {"size": TITLE_FONT_PX},
        "x": 0,
        "xanchor": "left",
        "xref": "container",
        "y": 1,
        "yanchor": "bottom",
        "yref": "paper",
        "pad": {"t": MODEBAR_PX, "b": 12, "l": 8},
        "automargin": True,
    }


def axis(text: str, *, log: bool = False, width: int = AXIS_TITLE_CHARS, **extra: Any) -> dict[str, Any]:
    """An axis with a wrapped title (units belong in ``text``), log type when asked."""
    spec: dict[str, Any] = {"title": {"text": wrap(text, width)}}
    if log:
        spec["type"] = "log"
    spec.update(extra)
    return spec


def legend_below(**extra: Any) -> dict[str, Any]:
    """A horizontal legend under the plot, in the container's bottom margin.

    ``yref="container"`` makes Plotly reserve the legend's height below the axis title and tick
    labels: as the legend wraps into more rows on a narrow screen the plot gets shorter, but the
    legend never covers it or an axis title.
    """
    spec: dict[str, Any] = {
        "orientation": "h",
        "x": 0,
        "xanchor": "left",
        "xref": "container",
        "y": 0,
        "yanchor": "bottom",
        "yref": "container",
        "font": {"size": LEGEND_FONT_PX},
        "bgcolor": "rgba(0,0,0,0)",
        "traceorder": "normal",  # groups flow in rows too, instead of one column per group
        "tracegroupgap": 4,
        "itemwidth": 30,
        "itemsizing": "constant",
    }
    spec.update(extra)
    return spec


def legend_name(text: str) -> str:
    """A legend entry wrapped to fit a phone (a horizontal legend never wraps an entry itself)."""
    return wrap(text, LEGEND_CHARS)


# Room a phone needs around the plot, in px: a wrapped title line, a legend line, the x axis's
# tick labels plus title standoff, and the least plot height that still reads (per panel).
TITLE_LINE_PX = 24
LEGEND_LINE_PX = 20
X_AXIS_PX = 40
MIN_PLOT_PX = 260
MIN_PANEL_PX = 150


def _lines(text: str) -> int:
    return text.count("<br>") + 1 if text else 0


def phone_height(data: Sequence[Mapping[str, Any]], layout: Mapping[str, Any]) -> int:
    """The least height (px) at which the chart keeps a readable plot on a phone.

    On a 390 px screen the legend stacks about one entry per row and every wrapped title line
    takes its own row, all out of the chart's fixed height: this adds them up (title, legend
    entries, x-axis labels and title) to a plot of at least ``MIN_PLOT_PX``, or ``MIN_PANEL_PX``
    per stacked panel where that is more.
    """
    title_spec = layout.get("title") or {}
    total = _lines(title_spec.get("text", "")) * TITLE_LINE_PX + MODEBAR_PX + 12
    if layout.get("showlegend", True):
        names = [t.get("name", "") for t in data if t.get("showlegend", True) and t.get("type") != "heatmap"]
        names += [shape.get("name", "") for shape in layout.get("shapes", ()) if shape.get("showlegend")]
        total += sum(max(1, _lines(name)) for name in names) * LEGEND_LINE_PX
    axes = {
        key: value for key, value in layout.items() if _AXIS_KEY.match(key) and value.get("visible", True)
    }
    x_titles = [_lines(v.get("title", {}).get("text", "")) for k, v in axes.items() if k.startswith("x")]
    total += X_AXIS_PX + max(x_titles, default=0) * LEGEND_LINE_PX
    panels = sum(1 for key, value in axes.items() if key.startswith("y") and "domain" in value)
    return total + max(MIN_PLOT_PX, MIN_PANEL_PX * panels)


def figure(data: Sequence[Mapping[str, Any]], layout: Mapping[str, Any]) -> Spec:
    """The spec ``{"data", "layout"}`` with the shared style under the builder's own layout.

    Sets, where the builder did not: base font, Okabe-Ito colourway, small margins (automargin
    grows them), hover label font, the legend below the plot, and on every axis a title font, a
    tick font, ``automargin`` and a light grid. The builder's ``height`` is raised to
    ``phone_height`` where that is more, so a long legend never squeezes the plot on a phone.
    """
    out: dict[str, Any] = {
        "font": {"size": BASE_FONT_PX},
        "colorway": list(OKABE_ITO),
        "margin": {"l": 12, "r": 16, "t": 12, "b": 12, "pad": 0},
        "hoverlabel": {"font": {"size": HOVER_FONT_PX}},
        "hovermode": "closest",
        "showlegend": True,
    }
    for key, value in layout.items():
        if key == "legend":
            out["legend"] = legend_below(**value)
        else:
            out[key] = value
    out.setdefault("legend", legend_below())
    for key, value in out.items():
        if _AXIS_KEY.match(key) and isinstance(value, dict):
            value.setdefault("automargin", True)
            value.setdefault("tickfont", {"size": TICK_FONT_PX})
            value.setdefault("gridcolor", GRID_COLOUR)
            title_spec = value.get("title")
            if isinstance(title_spec, dict):
                if key.startswith("y") and "<br>" not in title_spec.get("text", ""):
                    title_spec["text"] = wrap(title_spec.get("text", ""), Y_TITLE_CHARS)
                title_spec.setdefault("font", {"size": AXIS_TITLE_FONT_PX})
                title_spec.setdefault("standoff", 8)
    for annotation in out.get("annotations", ()):
        annotation.setdefault("font", {}).setdefault("size", LABEL_FONT_PX)
    if "height" in out:
        out["height"] = max(int(out["height"]), phone_height(data, out))
    return {"data": list(data), "layout": out}


# ---------------------------------------------------------------------------------------------
# Presenter view


_FONT_KEY = re.compile(r"font$")
_INLINE_SIZE = re.compile(r"font-size:\s*([0-9.]+)px")


def _scale_sizes(node: Any, factor: float) -> Any:
    """Scale every ``*font.size`` and every inline ``font-size:Npx`` below ``node``, in place."""
    if isinstance(node, dict):
        for key, value in node.items():
            if _FONT_KEY.search(key) and isinstance(value, dict) and "size" in value:
                size = value["size"]
                if isinstance(size, list):
                    value["size"] = [s * factor if isinstance(s, (int, float)) else s for s in size]
                elif isinstance(size, (int, float)):
                    value["size"] = size * factor
            node[key] = _scale_sizes(value, factor)
    elif isinstance(node, list):
        for index, item in enumerate(node):
            node[index] = _scale_sizes(item, factor)
    elif isinstance(node, str) and "font-size" in node:
        return _INLINE_SIZE.sub(lambda m: f"font-size:{float(m.group(1)) * factor:g}px", node)
    return node


def _ensure_font(holder: dict[str, Any], key: str, size: float) -> None:
    font = holder.setdefault(key, {})
    font.setdefault("size", size)


def scale_fonts(spec: Mapping[str, Any], factor: float) -> Spec:
    """A copy of ``spec`` with every font size multiplied by ``factor`` and the height by √factor.

    Covers the layout font, title and subtitle, axis titles and tick labels, the legend, hover
    labels, annotations, colour bars and text on traces. Text that inherits the layout font gets
    an explicit size first, so nothing is left at the browser's default. The height grows more
    gently than the text (√factor) so a chart still fits a projector's screen.
    """
    if factor <= 0 or not math.isfinite(factor):
        raise ValueError(f"factor must be a positive number, got {factor!r}")
    out = copy.deepcopy(dict(spec))
    layout = out.setdefault("layout", {})
    base = layout.setdefault("font", {}).setdefault("size", BASE_FONT_PX)
    _ensure_font(layout.setdefault("legend", {}), "font", LEGEND_FONT_PX)
    _ensure_font(layout.setdefault("hoverlabel", {}), "font", HOVER_FONT_PX)
    if isinstance(layout.get("title"), dict):
        _ensure_font(layout["title"], "font", TITLE_FONT_PX)
    for key, value in layout.items():
        if _AXIS_KEY.match(key) and isinstance(value, dict):
            _ensure_font(value, "tickfont", TICK_FONT_PX)
            if isinstance(value.get("title"), dict):
                _ensure_font(value["title"], "font", AXIS_TITLE_FONT_PX)
    for annotation in layout.get("annotations", ()):
        _ensure_font(annotation, "font", base)
    for trace in out.get("data", ()):
        if "text" in trace or "texttemplate" in trace:
            _ensure_font(trace, "textfont", LABEL_FONT_PX)
    _scale_sizes(out, factor)
    if isinstance(layout.get("height"), (int, float)):
        layout["height"] = round(layout["height"] * math.sqrt(factor))
    return out


# ---------------------------------------------------------------------------------------------
# Numbers on axes

_SUPERSCRIPT = str.maketrans("-0123456789", "⁻⁰¹²³⁴⁵⁶⁷⁸⁹")


def power_of_ten(exponent: int) -> str:
    """10 to an integer power with a real superscript: power_of_ten(9) -> "10⁹"."""
    return "10" + str(exponent).translate(_SUPERSCRIPT)


def plain_number(value: float) -> str:
    """A tick label without exponents: 0.001, 0.1, 1, 10, 1,000, 10k, 1M, 1G; else 10⁻⁵, 10¹⁵."""
    if value == 0:
        return "0"
    exponent = math.floor(math.log10(abs(value)) + 1e-9)
    if -3 <= exponent <= 3:
        return f"{value:,.{max(0, -exponent)}f}" if exponent < 0 else f"{value:,.0f}"
    for size, prefix in ((1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k")):
        if 4 <= exponent <= 14 and abs(value) >= size:
            return f"{value / size:g}{prefix}"
    return power_of_ten(exponent) if math.isclose(abs(value), 10.0**exponent) else f"{value:.3g}"


def decade_ticks(
    low: float, high: float, label: Callable[[float], str] = plain_number, *, pad: float = 0.1
) -> dict[str, Any]:
    """Log-axis ticks at each power of ten from ``low`` to ``high`` (data units), with labels.

    The range is ``pad`` decades wider than the data on each side, and reaches out to the next
    power of ten where that is less than half a decade away, so the lowest and highest points
    always have a labelled gridline near them.
    """
    if not (0 < low <= high):
        raise ValueError(f"need 0 < low <= high, got {low}, {high}")
    log_low, log_high = math.log10(low), math.log10(high)
    start, end = log_low - pad, log_high + pad
    floor_low, ceil_high = math.floor(log_low + 1e-9), math.ceil(log_high - 1e-9)
    if log_low - floor_low < 0.5:
        start = min(start, floor_low - 0.05)
    if ceil_high - log_high < 0.5:
        end = max(end, ceil_high + 0.05)
    values = [10.0**k for k in range(math.ceil(start), math.floor(end) + 1)]
    return {
        "type": "log",
        "tickmode": "array",
        "tickvals": values,
        "ticktext": [label(v) for v in values],
        "range": [start, end],
    }


def positive(values: Iterable[float | None]) -> list[float]:
    """The finite values above zero (for log-axis ranges)."""
    return [float(v) for v in values if v is not None and v > 0 and math.isfinite(v)]


def floats(values: Iterable[Any]) -> list[float | None]:
    """Plain floats for a trace (numpy scalars and arrays become Python floats; NaN becomes None)."""
    out: list[float | None] = []
    for v in values:
        if v is None:
            out.append(None)
            continue
        f = float(v)
        out.append(f if math.isfinite(f) else None)
    return out


_DETAIL_START = "<br><span"
_TAG = re.compile(r"<[^>]+>")
# Room the mode bar needs above the plot once the title is drawn outside the figure (px).
DETACHED_TOP_PX = 28


def split_title(text: str) -> tuple[str, str]:
    """The headline and detail of a ``title()`` text as plain strings: phone-width breaks undone,
    tags dropped and entities decoded (the caller escapes them again for wherever they go)."""
    head, _, rest = text.partition(_DETAIL_START)
    detail = rest.partition(">")[2].partition("</span>")[0] if rest else ""

    def plain(part: str) -> str:
        return html.unescape(_TAG.sub("", part.replace("<br>", " "))).strip()

    return plain(head), plain(detail)


def detach_title(spec: Mapping[str, Any]) -> tuple[Spec, str, str]:
    """``spec`` without its title, and that title's headline and detail as plain text.

    A page draws the title as text above the chart instead (ui/chart.py): the browser wraps it to
    whatever width the chart has, where a title inside the figure must be wrapped for the
    narrowest screen and so takes three or four lines on a desktop. The figure keeps room for the
    mode bar at the top, and a fixed ``height`` shrinks by the rows the title took, so the plot
    itself keeps its size (never below ``phone_height``). The input is not changed.
    """
    layout = dict(spec.get("layout") or {})
    title_spec = layout.get("title")
    if not isinstance(title_spec, Mapping) or not isinstance(title_spec.get("text"), str):
        return dict(spec), "", ""
    headline, detail = split_title(title_spec["text"])
    lines = _lines(title_spec["text"])
    del layout["title"]
    margin = dict(layout.get("margin") or {})
    margin["t"] = max(int(margin.get("t", 0)), DETACHED_TOP_PX)
    layout["margin"] = margin
    out = {**spec, "layout": layout}
    if "height" in layout:
        pad = title_spec.get("pad") or {}
        taken = lines * TITLE_LINE_PX + int(pad.get("t", 0)) + int(pad.get("b", 0)) - DETACHED_TOP_PX
        layout["height"] = max(int(layout["height"]) - taken, phone_height(out.get("data", ()), layout))
    return out, headline, detail


def _plain_text(text: Any) -> str:
    return html.unescape(_TAG.sub("", str(text or "").replace("<br>", " "))).strip()


def _axis_title(axis_spec: Any) -> str:
    if not isinstance(axis_spec, Mapping):
        return ""
    title_spec = axis_spec.get("title")
    return _plain_text(title_spec.get("text") if isinstance(title_spec, Mapping) else title_spec)


def chart_alt(spec: Mapping[str, Any]) -> str:
    """A chart's text alternative, from what the chart itself states: its title (headline and
    detail, which carry the computed point), what is plotted against what, and its series."""
    layout = spec.get("layout") or {}
    title_spec = layout.get("title")
    headline = detail = ""
    if isinstance(title_spec, Mapping) and isinstance(title_spec.get("text"), str):
        headline, detail = split_title(title_spec["text"])
    parts = [p.rstrip(".") for p in (headline, detail) if p]
    x, y = _axis_title(layout.get("xaxis")), _axis_title(layout.get("yaxis"))
    if x and y:
        parts.append(f"Chart of {y} against {x}")
    names = [_plain_text(t.get("name")) for t in spec.get("data") or () if t.get("name")]
    if names:
        shown = names[:6] + ([f"and {len(names) - 6} more"] if len(names) > 6 else [])
        parts.append("Series: " + "; ".join(shown))
    return ". ".join(parts) + "." if parts else ""


MAX_TABLE_ROWS = 2000


def _cell(value: Any) -> Any:
    """A table cell: text without markup, a float to 4 significant figures (the chart's own
    precision; the exact values are in the model), anything else as it is."""
    if isinstance(value, str):
        return _plain_text(value.replace("<br>", "; "))
    if isinstance(value, float):
        return float(f"{value:.4g}")
    return value


def _heatmap_rows(trace: Mapping[str, Any], name: str, x_name: str, y_name: str) -> list[dict[str, Any]]:
    """One row per drawn cell: where it is, its value (named by the colour bar) and its text."""
    zs = trace.get("z") or []
    xs = list(trace.get("x") or range(max((len(r) for r in zs), default=0)))
    ys = list(trace.get("y") or range(len(zs)))
    texts, hovers = trace.get("text"), trace.get("hovertext")
    bar = trace.get("colorbar") or {}
    value_name = _axis_title(bar) or "value"
    rows = []
    for i, row in enumerate(zs):
        for j, value in enumerate(row):
            if value is None:
                continue
            cell = {"Series": name, x_name: _cell(xs[j]), y_name: _cell(ys[i])}
            if trace.get("showscale") is not False:  # a stepped scale's z is only a colour index
                cell[value_name] = _cell(value)
            for column, grid in (("Label", texts), ("Details", hovers)):
                if isinstance(grid, list) and i < len(grid) and j < len(grid[i]) and grid[i][j]:
                    cell[column] = _cell(str(grid[i][j]))
            rows.append(cell)
    return rows


def chart_table(spec: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The numbers a chart draws, one row per point: Series, x and y under the axes' own titles
    (which carry the units), the point's label and its hover details; a heatmap one row per cell.
    Legend placeholders (no coordinates) and text drawn on another trace's cells are left out."""
    layout = spec.get("layout") or {}
    x_name = _axis_title(layout.get("xaxis")) or "x"
    y_name = _axis_title(layout.get("yaxis")) or "y"
    if y_name == x_name:
        y_name = f"{y_name} (y)"
    rows: list[dict[str, Any]] = []
    for trace in spec.get("data") or ():
        name = _plain_text(trace.get("name")) or trace.get("type", "series")
        if trace.get("type") == "heatmap":
            rows += _heatmap_rows(trace, name, x_name, y_name)
            continue
        if trace.get("mode") == "text" and trace.get("hoverinfo") == "skip":
            continue  # labels on another trace's cells: that trace's rows carry them
        xs, ys = trace.get("x"), trace.get("y")
        if xs is None and ys is None:
            continue
        xs = list(xs) if xs is not None else [None] * len(ys)
        ys = list(ys) if ys is not None else [None] * len(xs)
        texts = trace.get("text")
        texts = list(texts) if isinstance(texts, (list, tuple)) else [None] * len(xs)
        hovers = trace.get("hovertext")
        hovers = list(hovers) if isinstance(hovers, (list, tuple)) else []
        for i, (xv, yv) in enumerate(zip(xs, ys, strict=False)):
            if xv is None and yv is None:
                continue  # a legend entry, not a point
            row = {"Series": name, x_name: _cell(xv), y_name: _cell(yv)}
            if i < len(texts) and texts[i] not in (None, ""):
                row["Label"] = _cell(str(texts[i]))
            if i < len(hovers) and hovers[i]:
                row["Details"] = _cell(str(hovers[i]))
            rows.append(row)
            if len(rows) >= MAX_TABLE_ROWS:
                return rows
    return rows[:MAX_TABLE_ROWS]
    return rows
