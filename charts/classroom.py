"""The room's votes as a bar chart: one bar per answer, the first vote beside the revote, and the
right answer marked only once the lecturer reveals it."""

from __future__ import annotations

from typing import Any

from charts.palette import OKABE_ITO
from charts.style import axis, legend_below, legend_name, title, wrap

FIRST, SECOND = OKABE_ITO[4], OKABE_ITO[0]  # sky blue, blue
# The count written inside each bar: black on sky blue (9.1:1, and still 7:1 on the darker sky
# blue the light theme's contrast pass draws), white on blue (5.1:1). Plotly's own pick for an
# unset colour was 3.2:1 on the light theme.
INSIDE_TEXT = {FIRST: "#000000", SECOND: "#FFFFFF"}
LABEL_CHARS = 34


def votes_figure(
    labels: tuple[str, ...],
    first: tuple[int, ...],
    second: tuple[int, ...] | None = None,
    *,
    right: tuple[bool, ...] | None = None,
    question: str = "",
    sure: tuple[tuple[int, ...] | None, tuple[int, ...] | None] | None = None,
    compact: bool = False,
) -> dict[str, Any]:
    """Horizontal bars of votes per answer (``first`` vote, and ``second`` for the revote when it
    exists). ``right`` (given only after the reveal) marks the right answers with "✓" in their
    labels: text, not colour alone. ``sure`` (per round, after the reveal) adds how many voters of
    each answer said they were sure. The headline states the count, and after the reveal how many
    were right in each round. ``compact``: thinner bars, for a projector's first screen."""
    if not labels:
        raise ValueError("nothing to draw: no answers")
    width = LABEL_CHARS + (14 if compact else 0)  # a projector's chart is wide
    shown = [wrap(("✓ " if right and right[i] else "") + text, width) for i, text in enumerate(labels)]
    data: list[dict[str, Any]] = []
    rounds = [("First vote", first, FIRST)] + ([("Revote", second, SECOND)] if second is not None else [])
    for index, (name, votes, colour) in enumerate(rounds):
        total = sum(votes)
        said = sure[index] if sure and index < len(sure) else None
        text = [f"{v} ({v / total:.0%})" if total else "0" for v in votes]
        if said and any(said):  # only when voters said how sure they were
            text = [f"{t} · {n} sure" if v else t for t, v, n in zip(text, votes, said, strict=True)]
        data.append(
            {
                "type": "bar",
                "orientation": "h",
                "y": shown,
                "x": list(votes),
                "name": legend_name(f"{name} ({total} vote{'s' if total != 1 else ''})"),
                "marker": {"color": colour},
                "text": text,
                # compact: every count after its bar, at full size (a thin bar squeezed it to 9 px)
                "textposition": "outside" if compact else "auto",
                "insidetextfont": {"color": INSIDE_TEXT[colour]},
                **({"textfont": {"size": 14}, "cliponaxis": False} if compact else {}),
                "hovertemplate": f"<b>{name}</b><br>%{{y}}: %{{x}} votes<extra></extra>",
            }
        )
    most = max([*first, *(second or ())], default=1) or 1
    headline = _votes(sum(first)) + (f", {sum(second)} in the revote" if second is not None else "")
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
                "" if compact else "votes",
                rangemode="tozero",
                dtick=max(1, most // 8),
                # room after the longest bar for its count written outside it
                # compact: no tick labels, every count is written at its bar
                **({"range": [0, most * 1.45 + 0.5], "showticklabels": False} if compact else {}),
            ),
            "yaxis": {"autorange": "reversed", "automargin": True},
            # compact: the legend above the bars, where a projector's first screen still shows it
            "legend": (
                {"orientation": "h", "x": 0, "xanchor": "left", "y": 1.0, "yanchor": "bottom"}
                if compact
                else legend_below()
            ),
            "margin": {"l": 8, "r": 8, "b": 60 if not compact else 24, "t": 10 if compact else 30},
            "height": _height(shown, len(rounds), compact),
        },
    }


def _height(shown: list[str], bars_per_row: int, compact: bool) -> int:
    """The figure's height in px. Compact (a projector): 24 px per bar, or 20 px per line of a
    wrapped label where that is more, plus room for the legend and ticks."""
    if not compact:
        return 140 + 48 * len(shown) * bars_per_row
    rows = sum(max(24 * bars_per_row, 20 * (label.count("<br>") + 1) + 6) for label in shown)
    return 60 + rows


def _votes(n: int) -> str:
    return f"{n} vote" if n == 1 else f"{n} votes"
