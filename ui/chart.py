"""Show a chart spec (a plain Plotly figure dict from charts/) without re-validating it.

``st.plotly_chart`` turns a dict into ``go.Figure(**spec)`` to validate it, which costs ~10 ms for
a ladder-sized figure on every rerun, and a ``go.Figure`` costs a deep copy instead. The chart
builders already return valid specs (tests/test_charts.py validates every one with plotly once),
so this passes them through a ``go.Figure`` subclass whose ``to_dict`` hands the spec over as it
is: Streamlit then only JSON-encodes it (~0.2 ms).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import plotly.graph_objects as go
import streamlit as st

from ui.presenter import PRESENTER_SCALE, is_presenting

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


def show(spec: Mapping[str, Any] | go.Figure, *, key: str, container: Any = None) -> None:
    """Draw ``spec`` full width; in presenter view its fonts are scaled up for the projector."""
    if isinstance(spec, go.Figure):  # a builder not converted to a dict yet
        spec = spec.to_dict()
    if is_presenting():  # a projector is wide: titles on fewer lines, every font larger
        from charts.style import scale_fonts, widen_title

        spec = scale_fonts(widen_title(spec, 70, 95), PRESENTER_SCALE)
    (container or st).plotly_chart(_Prebuilt(spec), key=key, config=CONFIG, width="stretch")
