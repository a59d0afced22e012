"""Show a chart spec (a plain Plotly figure dict from charts/) without re-validating it.

``st.plotly_chart`` turns a dict into ``go.Figure(**spec)`` to validate it, which costs ~10 ms for
a ladder-sized figure on every rerun, and a ``go.Figure`` costs a deep copy instead. The chart
builders already return valid specs (tests/test_charts.py validates every one with plotly once),
so this passes them through a ``go.Figure`` subclass whose ``to_dict`` hands the spec over as it
is: Streamlit then only JSON-encodes it (~0.2 ms).
"""

from __future__ import annotations

import html
import re
from collections.abc import Mapping
from typing import Any

import plotly.graph_objects as go
import streamlit as st

from charts.contrast import for_theme
from charts.style import chart_alt, chart_table, detach_title, scale_fonts
from ui.presenter import PRESENTER_SCALE, is_presenting, theme_scheme

CONFIG = {
    "displaylogo": False,
    "modeBarButtonsToRemove": ["select2d", "lasso2d", "autoScale2d"],
    "toImageButtonOptions": {"format": "png", "scale": 2},
}


class _Prebuilt(go.Figure):
    """A figure that is already a valid dict: Streamlit's ``to_dict()`` call returns it unchanged."""

    def __init__(self, spec: Mapping[str, Any]) -> None:  # no BaseFigure.__init__: no validation
        object.__setattr__(self, "_prebuilt_spec", spec)

    def to_dict(self) -> dict[str, Any]:
        return self._prebuilt_spec  # type: ignore[return-value]


def title_html(headline: str, detail: str) -> str:
    """The chart's title as HTML for above the chart; both parts escaped (an uploaded file's name
    can be in a title, and nothing a reader typed is rendered as HTML)."""
    parts = [f'<span class="fg-chart-head">{html.escape(headline)}</span>']
    if detail:
        parts.append(f'<span class="fg-chart-detail">{html.escape(detail)}</span>')
    # "$" would start Streamlit's Markdown maths.
    return f'<div class="fg-chart-title">{"".join(parts)}</div>'.replace("$", "&#36;")


def show(
    spec: Mapping[str, Any] | go.Figure,
    *,
    key: str,
    container: Any = None,
    alt: str = "",
    table: Any = None,
) -> None:
    """Draw ``spec`` full width under its title; in presenter view its fonts are scaled up.

    The title is text above the chart, not inside the figure, so the browser wraps it to the
    chart's width (one or two lines on a desktop, more on a phone) and presenter view's CSS
    scales it with the prose. A screen reader hears ``alt`` (default: ``chart_alt``, the title's
    computed point, the axes and the series), and the numbers behind the chart are one click away
    in a table under it (``table`` rows, default ``chart_table``). A chart with neither a title nor
    an ``alt`` is refused: every chart states its point in text.
    """
    if isinstance(spec, go.Figure):  # a builder not converted to a dict yet
        spec = spec.to_dict()
    alt = alt or chart_alt(spec)
    if not alt:
        raise ValueError(f"chart {key!r} has no title and no alt text")
    original = spec
    spec, headline, detail = detach_title(spec)
    box = (container or st).container()  # title and chart together, even in a placeholder
    if headline:
        box.markdown(title_html(headline, detail), unsafe_allow_html=True)
    if is_presenting():  # a projector is wide: every font larger
        spec = scale_fonts(spec, PRESENTER_SCALE)
    spec = for_theme(spec, theme_scheme())  # text 4.5:1 and marks 3:1 on this theme's background
    config = CONFIG
    if headline:  # a downloaded PNG is named after the title it no longer carries
        slug = re.sub(r"[^a-z0-9]+", "-", headline.lower()).strip("-")[:60] or "chart"
        config = {**CONFIG, "toImageButtonOptions": {**CONFIG["toImageButtonOptions"], "filename": slug}}
    box.plotly_chart(_Prebuilt(spec), key=key, config=config, width="stretch", alt=alt)
    # The table is built only when asked for: a rerun pays nothing for it until then.
    if box.toggle("Show the numbers behind this chart", key=f"{key}-numbers"):
        import pandas as pd

        rows = list(table) if table is not None else chart_table(original)
        if rows:
            box.dataframe(pd.DataFrame(rows), hide_index=True, width="stretch")
        else:
            box.caption("This chart draws shapes, not data points: its text above says what it shows.")
