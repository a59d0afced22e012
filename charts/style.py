"""One look for every chart: projector-sized fonts, the colour-blind-safe palette, tight margins."""

from __future__ import annotations

import plotly.graph_objects as go

from charts.palette import OKABE_ITO

BASE_FONT_PX = 16


def apply_style(fig: go.Figure) -> go.Figure:
    """Large fonts (readable on a projector), Okabe-Ito colourway, a legend with a clear background."""
    fig.update_layout(
        font={"size": BASE_FONT_PX},
        colorway=list(OKABE_ITO),
        margin={"l": 10, "r": 20, "t": 60, "b": 10},
        hoverlabel={"font_size": BASE_FONT_PX - 1},
        legend={"font": {"size": BASE_FONT_PX - 1}},
    )
    fig.update_xaxes(title_font={"size": BASE_FONT_PX + 1}, tickfont={"size": BASE_FONT_PX - 1})
    fig.update_yaxes(title_font={"size": BASE_FONT_PX + 1}, tickfont={"size": BASE_FONT_PX - 1})
    return fig
