"""Chart colours meet WCAG 2.2 contrast on the light and the dark theme (issue 19): text 4.5:1 on
what it is drawn on, marks 3:1 on the page (charts/contrast.py), and every ``plotly_chart`` call
in the app passes a text alternative."""

from __future__ import annotations

import ast
import copy
from pathlib import Path

import pytest

from charts.contrast import (
    BACKGROUND,
    CHART_TEXT,
    MARK_RATIO,
    TEXT_RATIO,
    contrast,
    for_theme,
    legible,
    parse,
)
from charts.diagrams import build, builders
from charts.palette import OKABE_ITO

ROOT = Path(__file__).resolve().parents[1]


def test_contrast_reproduces_the_wcag_reference_values():
    assert contrast("#000000", "#FFFFFF") == pytest.approx(21.0)
    assert contrast("#FFFFFF", "#FFFFFF") == pytest.approx(1.0)
    # #767676 is the lightest grey that passes 4.5:1 on white; #777777 just fails.
    assert contrast("#767676", "#FFFFFF") == pytest.approx(4.54, abs=0.01)
    assert contrast("#777777", "#FFFFFF") < 4.5
    # What the audit measured: Streamlit's chart text on white, vermillion labels on white.
    assert contrast("#808495", "#FFFFFF") == pytest.approx(3.72, abs=0.01)
    assert contrast("#D55E00", "#FFFFFF") == pytest.approx(3.87, abs=0.01)
    # 85 % white over white is still white; a translucent colour is composited first.
    assert contrast("rgba(0,0,0,0.5)", "#FFFFFF") == pytest.approx(contrast("#808080", "#FFFFFF"), abs=0.05)


def test_the_theme_text_colours_pass_on_their_own_background():
    for scheme in ("light", "dark"):
        assert contrast(CHART_TEXT[scheme], BACKGROUND[scheme]) >= 7  # AAA, with room to spare


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_a_colour_that_falls_short_is_darkened_or_lightened_keeping_its_hue(scheme):
    page = BACKGROUND[scheme]
    for colour in OKABE_ITO:
        mark, text = legible(colour, page, MARK_RATIO), legible(colour, page, TEXT_RATIO)
        assert contrast(mark, page) >= MARK_RATIO and contrast(text, page) >= TEXT_RATIO, colour
        if contrast(colour, page) >= MARK_RATIO:
            assert mark == colour  # enough already: exactly as the builder drew it
        else:  # mixed toward black or white: the channels keep their order (the same hue)
            before, after = parse(colour)[0], parse(mark)[0]
            assert sorted(range(3), key=before.__getitem__) == sorted(range(3), key=after.__getitem__) or (
                len(set(before)) == 1
            ), (colour, mark)
    # Orange, sky blue and yellow were 2.3, 2.3 and 1.3:1 on white; black is 1.2:1 on the dark page.
    if scheme == "light":
        assert {c for c in OKABE_ITO if legible(c, page, MARK_RATIO) != c} == {
            "#E69F00",
            "#56B4E9",
            "#F0E442",
        }
    else:
        assert {c for c in OKABE_ITO if legible(c, page, MARK_RATIO) != c} == {"#000000"}


def _texts_and_marks(spec, scheme):
    """(text colour, the background it was checked against) and (mark colour) after for_theme,
    read back from the spec the browser would get."""
    themed = for_theme(spec, scheme)
    layout = themed["layout"]
    page = BACKGROUND[scheme]
    texts = [(layout["font"]["color"], page), (layout["legend"]["font"]["color"], page)]
    for key, value in layout.items():
        if key[1:5] == "axis" and isinstance(value, dict):
            texts.append((value["tickfont"]["color"], page))
    marks = []
    for trace in themed["data"]:
        line = trace.get("line") or {}
        if isinstance(line.get("color"), str) and trace.get("opacity", 1) > 0:
            marks.append(line["color"])
    return themed, texts, marks


@pytest.mark.parametrize("scheme", ["light", "dark"])
@pytest.mark.parametrize("diagram_id", sorted(builders()))
def test_every_diagram_meets_contrast_on_both_themes(diagram_id, scheme):
    spec = build(diagram_id).spec
    original = copy.deepcopy(spec)
    themed, texts, marks = _texts_and_marks(spec, scheme)
    assert spec == original  # the cached spec is shared between sessions: never changed in place
    page = BACKGROUND[scheme]
    for colour, background in texts:
        assert contrast(colour, background) >= TEXT_RATIO, (diagram_id, colour)
    for colour in marks:
        if parse(colour) and parse(colour)[1] == 1 and colour.lower() not in ("white", "#ffffff"):
            assert contrast(colour, page) >= MARK_RATIO, (diagram_id, colour)
    # A schematic's boxes are opaque on the dark page, so its dark labels read as they do on white.
    if scheme == "dark":
        for shape in themed["layout"].get("shapes", ()):
            fill = parse(str(shape.get("fillcolor", "")))
            hidden = themed["layout"].get("xaxis", {}).get("visible") is False
            if hidden and fill is not None and fill[1] > 0:
                assert fill[1] == 1, (diagram_id, shape["fillcolor"])


def test_a_label_on_a_box_is_checked_against_the_box_and_one_on_the_page_against_the_page():
    spec = {
        "data": [],
        "layout": {
            "xaxis": {"visible": False, "range": [0, 10]},
            "yaxis": {"visible": False, "range": [0, 10]},
            "shapes": [
                {"type": "rect", "x0": 0, "x1": 4, "y0": 0, "y1": 4, "fillcolor": "rgba(0,114,178,0.25)"}
            ],
            "annotations": [
                {"x": 2, "y": 2, "text": "on the box", "font": {"color": "#1a1a1a"}},
                {"x": 8, "y": 8, "text": "on the page", "font": {"color": "#1a1a1a"}},
            ],
        },
    }
    dark = for_theme(spec, "dark")["layout"]
    on_box, on_page = dark["annotations"]
    assert on_box["font"]["color"] == "#1a1a1a"  # dark text on the (now opaque) light box stays dark
    assert contrast(on_page["font"]["color"], BACKGROUND["dark"]) >= TEXT_RATIO  # lightened on the page
    assert parse(dark["shapes"][0]["fillcolor"])[1] == 1


def test_every_plotly_chart_call_passes_a_non_empty_alt():
    """The app draws charts through ui/chart.show, which refuses a chart with no text; any direct
    ``plotly_chart`` call must pass ``alt`` itself."""
    calls = []
    for folder in ("app_pages", "ui", "charts", "classroom", "measure", "tools", "lessons"):
        for path in (ROOT / folder).rglob("*.py"):
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                if isinstance(node, ast.Call) and getattr(node.func, "attr", "") == "plotly_chart":
                    alt = next((k.value for k in node.keywords if k.arg == "alt"), None)
                    calls.append((path.relative_to(ROOT), node.lineno, alt))
    assert Path("ui/chart.py") in {path for path, _, _ in calls}, calls  # the scan sees the app's one
    missing = [(str(p), line) for p, line, alt in calls if alt is None]
    empty = [(str(p), line) for p, line, alt in calls if isinstance(alt, ast.Constant) and not alt.value]
    assert not missing and not empty, (missing, empty)
