"""The room's votes as a bar chart: one bar per answer, the first vote beside the revote, and the
right answer marked only once the lecturer reveals it."""

from __future__ import annotations

from typing import Any

from charts.palette import OKABE_ITO
from charts.style import axis, legend_below, legend_name, title, wrap

FIRST, SECOND = OKABE_ITO[4], OKABE_ITO[0]  # sky blue, blue
LABEL_CHARS = 34


def votes_figure(
    labels: tuple[str, ...],
    first: tuple[int, ...],
    second: tuple[int, ...] | None = None,
    *,
    right: tuple[bool, ...] | None = None,
    question: str = "",
) -> dict[str, Any]:
    """Horizontal bars of votes per answer (``first`` vote, and ``second`` for the revote when it
    exists). ``right`` (given only after the reveal) marks the right answers with "✓" in their
    labels: text, not colour alone. The headline states the count, and after the reveal how many
    were right in each round."""
    if not labels:
        raise ValueError("nothing to draw: no answers")
    shown = [wrap(("✓ " if right and right[i] else "") + text, LABEL_CHARS) for i, text in enumerate(labels)]
    data: list[dict[str, Any]] = []
    rounds = [("First vote", first, FIRST)] + ([("Revote", second, SECOND)] if second is not None else [])
    for name, votes, colour in rounds:
        total = sum(votes)
        data.append(
            {
                "type": "bar",
                "orientation": "h",
                "y": shown,
                "x": list(votes),
                "name": legend_name(f"{name} ({total} vote{'s' if total != 1 else ''})"),
                "marker": {"color": colour},
                "text": [f"{v} ({v / total:.0%})" if total else "0" for v in votes],
                "textposition": "auto",
                "hovertemplate": f"<b>{name}</b><br>%{{y}}: %{{x}} votes<extra></extra>",
            }
        )
    headline = f"{sum(first)} votes" + (f", {sum(second)} in the revote" if second is not None else "")
    if right:
        shares = []
        for name, votes, _ in rounds:
            total = sum(votes)
            ok = sum(v for v, r in zip(votes, right, strict=True) if r)
            shares.append(f"{name.lower()}: {ok / total:.0%} right" if total else f"{name.lower()}: no votes")
        headline += " — " + ", ".join(shares)
    return {
        "data": data,
        "layout": {
            "title": title(headline, question),
            "barmode": "group",
            "xaxis": axis(
                "votes", rangemode="tozero", dtick=max(1, max([*first, *(second or ())], default=1) // 8)
            ),
            "yaxis": {"autorange": "reversed", "automargin": True},
            "legend": legend_below(),
            "margin": {"l": 8, "r": 8, "b": 60},
            "height": 140 + 48 * len(labels) * len(rounds),
        },
    }
