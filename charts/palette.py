"""Colour-blind-safe colours for every chart.

Okabe & Ito, "Color Universal Design" (2008), https://jfly.uni-koeln.de/color/ — the same
list is the theme's chartCategoricalColors in .streamlit/config.toml (light theme order).
"""

from __future__ import annotations

OKABE_ITO: tuple[str, ...] = (
    "#0072B2",  # blue
    "#E69F00",  # orange
    "#009E73",  # bluish green
    "#CC79A7",  # reddish purple
    "#56B4E9",  # sky blue
    "#D55E00",  # vermillion
    "#F0E442",  # yellow
    "#000000",  # black
)
