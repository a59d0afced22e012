"""Memory charts for the "Will it fit?" calculator: stacked parts against a GPU's capacity."""

from __future__ import annotations

from collections.abc import Sequence

import plotly.graph_objects as go

from charts.palette import OKABE_ITO
from charts.style import apply_style

# One colour per memory part, the same on every chart (Okabe-Ito, colour-blind safe).
PART_COLOURS: dict[str, str] = {
    "weights": OKABE_ITO[0],
    "frozen_weights": OKABE_ITO[4],
    "kv_cache": OKABE_ITO[1],
    "gradients": OKABE_ITO[3],
    "optimizer": OKABE_ITO[5],
    "activations": OKABE_ITO[2],
    "overhead": "#999999",
    "measured": OKABE_ITO[7],
}


def memory_bars(
    rows: Sequence[tuple[str, object]],
    capacity_bytes: float | None = None,
    capacity_label: str = "",
    measured: Sequence[tuple[str, float]] = (),
    title: str = "",
    budget_bytes: float | None = None,
    budget_label: str = "",
) -> go.Figure:
    """Horizontal stacked bars, one per (label, MemoryBreakdown), in GB, with a capacity line.

    Hover shows each part in GB (10^9 bytes) and GiB (2^30 bytes). ``measured`` adds a
    marker per (row label, bytes) so a measured peak can sit beside the prediction.
    """
    fig = go.Figure()
    labels = [label for label, _ in rows]
    seen: set[str] = set()
    for label, breakdown in rows:
        for part in breakdown.parts:
            if part.bytes <= 0:
                continue
            fig.add_bar(
                y=[label],
                x=[part.bytes / 1e9],
                orientation="h",
                name=part.label,
                legendgroup=part.key,
                showlegend=part.key not in seen,
                marker_color=PART_COLOURS.get(part.key, OKABE_ITO[6]),
                customdata=[[part.bytes / 2**30, part.explanation]],
                hovertemplate=(
                    f"<b>{part.label}</b><br>%{{x:,.2f}} GB = %{{customdata[0]:,.2f}} GiB"
                    "<br>%{customdata[1]}<extra></extra>"
                ),
            )
            seen.add(part.key)
    if measured:
        fig.add_scatter(
            y=[label for label, _ in measured],
            x=[b / 1e9 for _, b in measured],
            mode="markers",
            marker={"symbol": "diamond", "size": 16, "color": PART_COLOURS["measured"]},
            name="Measured peak",
            hovertemplate="Measured: %{x:,.2f} GB<extra></extra>",
        )
    if capacity_bytes:
        fig.add_vline(
            x=capacity_bytes / 1e9,
            line={"color": "#D55E00", "width": 3, "dash": "dash"},
            annotation_text=capacity_label or f"{capacity_bytes / 1e9:,.0f} GB",
            annotation_position="top",
            annotation_font_size=15,
        )
    if budget_bytes:
        fig.add_vline(
            x=budget_bytes / 1e9,
            line={"color": "#0072B2", "width": 3, "dash": "dot"},
            annotation_text=budget_label or f"engine budget {budget_bytes / 1e9:,.0f} GB",
            annotation_position="bottom left",
            annotation_font_size=15,
        )
    fig.update_layout(
        barmode="stack",
        title=title or None,
        xaxis_title="Memory per GPU (GB = 10⁹ bytes)",
        yaxis={"categoryorder": "array", "categoryarray": list(reversed(labels))},
        legend={"orientation": "h", "yanchor": "top", "y": -0.32, "x": 0},
        height=max(300, 160 + 60 * len(rows)),
    )
    fig = apply_style(fig)
    fig.update_layout(margin={"b": 110})
    return fig
