"""Small helpers the view modules share: cached data, figure specs as plain dicts, metrics."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pyarrow as pa
import streamlit as st

from simulators.hardware import Accelerator, load_catalog
from simulators.presets import ModelPreset, load_model_presets


@st.cache_resource(show_spinner=False)
def catalog() -> dict[str, Accelerator]:
    """Accelerators by id, shared read-only by every session."""
    return {a.id: a for a in load_catalog()}


@st.cache_resource(show_spinner=False)
def models() -> dict[str, ModelPreset]:
    """Model presets (ModelSpec and provenance) by id, shared read-only by every session."""
    return {p.id: p for p in load_model_presets()}


def as_spec(figure: Any) -> dict[str, Any]:
    """A chart builder's output as a plain dict (builders return dicts; older ones a go.Figure)."""
    return figure if isinstance(figure, Mapping) else figure.to_dict()


def metric_row(container: Any, metrics: list[dict[str, Any]]) -> None:
    """A row of ``st.metric``s from dicts of its keyword arguments (label, value, help, delta …)."""
    if not metrics:
        return
    for column, kwargs in zip(container.columns(len(metrics)), metrics, strict=True):
        column.metric(**kwargs)


def arrow(rows: list[dict[str, Any]]) -> pa.Table:
    """Rows as an Arrow table: ``st.dataframe`` sends one without converting it (about 14× cheaper
    per rerun than a list of dicts, measured), so cached functions return tables, not rows."""
    return pa.Table.from_pylist(list(rows))
