"""Your hardware views: a results document (a shipped sample or the reader's own) drawn beside the
theory — bandwidth sweep, matmuls on the roofline, the pointer-chase latency ladder, the decode gap.

Nothing here imports torch: results are plain JSON documents (measure/results.py, schema 1).
"""

from __future__ import annotations

from typing import Any

import streamlit as st

from charts.hierarchy import latency_sweep_figure
from charts.measure import allreduce_figure, bandwidth_figure
from charts.roofline import roofline_figure
from measure import views as mviews
from measure.samples import list_samples, load_sample
from simulators.hierarchy import families
from ui.chart import show
from ui.measured import (
    decode_gap_rows,
    device_label,
    latency_records,
    measured_roofline_points,
    transformer_memory_rows,
)
from ui.views import View
from ui.views.common import arrow, as_spec, catalog

PAGE = "your-hardware"


@st.cache_resource(show_spinner=False)
def samples() -> dict[str, Any]:
    """Shipped samples by file name (their descriptions; the files are read on demand)."""
    return {s.name: s for s in list_samples()}


def default_sample() -> str:
    """The GPU sample where there is one (the page tells a GPU story), else the first file."""
    shipped = list(samples().values())
    return next((s.name for s in shipped if s.device_type == "cuda"), shipped[0].name)


@st.cache_data(max_entries=8, show_spinner=False)
def sample_document(name: str) -> dict[str, Any]:
    """A shipped sample, validated, as the plain document kept in session state."""
    return load_sample(name)


def _family_of(results: dict[str, Any]):
    """The hierarchy family the measured device belongs to (its catalog match, or the CPU table)."""
    device = results.get("device", {})
    fams = {f.id: f for f in families()}
    if device.get("type") == "cpu":
        return fams.get("cpu-norvig")
    match = (device.get("catalog_match") or {}).get("id")
    return next((f for f in fams.values() if f.accelerator_id and f.accelerator_id == match), None)


@st.cache_data(max_entries=16, show_spinner=False)
def results_view(key: str, _results: dict[str, Any]) -> dict[str, Any]:
    """Every chart and table a results document has data for, built once per document.

    ``key`` names the document (a sample's file name, or an upload's id); the document itself is
    not hashed (the leading underscore), which keeps a rerun from re-reading 100+ records.
    """
    results = _results
    records = results.get("results", [])
    device = results.get("device", {})
    out: dict[str, Any] = {"charts": [], "tables": {}}
    bandwidth = [r for r in records if r.get("kind") == "bandwidth"]
    if bandwidth:
        caches = device.get("cpu", {}).get("caches", []) if device.get("type") == "cpu" else []
        out["charts"].append(("bw", as_spec(bandwidth_figure(bandwidth, caches))))
    pairs = latency_records(results)
    if pairs:
        family = _family_of(results)
        levels = list(family.levels) if family else []
        out["charts"].append(
            ("latency", as_spec(latency_sweep_figure(pairs, levels, device_label=device_label(results))))
        )
    points = measured_roofline_points(results)
    accelerator = catalog().get((device.get("catalog_match") or {}).get("id", ""))
    if points and accelerator is not None:
        # One roofline per precision measured, each point held to its own precision's roof.
        for dtype in ROOF_DTYPES:
            own = [p for p in points if p.dtype == dtype]
            if own and accelerator.supports(dtype) and _has_peak(accelerator, dtype):
                title = f"Roofline: {accelerator.name}, {dtype.upper()} matmuls"
                out["charts"].append(
                    (f"roof-{dtype}", as_spec(roofline_figure([accelerator], dtype, [], own, title=title)))
                )
    gap = decode_gap_rows(results)
    if gap:
        out["tables"]["decode"] = arrow(gap)
    reduce_records = [r for r in records if r.get("kind") == "allreduce"]
    if reduce_records:
        out["charts"].append(("allreduce", as_spec(allreduce_figure(reduce_records))))
        out["tables"]["allreduce"] = arrow(mviews.allreduce_rows(reduce_records))
    for name, rows in (
        ("datasheet", mviews.datasheet_rows(results)),
        ("matmul", mviews.matmul_rows(records)),
        ("quantization", mviews.quantization_rows(records)),
        ("transformer", transformer_memory_rows(results)),
    ):
        if rows:
            out["tables"][name] = arrow(rows)
    return out


ROOF_DTYPES = ("bf16", "fp16", "tf32", "fp32", "fp8", "int8")


def _has_peak(accelerator: Any, dtype: str) -> bool:
    try:
        accelerator.peak_flops(dtype)
    except ValueError:
        return False
    return True


def results_charts(results: dict[str, Any], container: Any, key: str, *, name: str) -> None:
    """The document's charts, each beside its prediction, and the decode gap."""
    built = results_view(name, results)
    for chart_id, spec in built["charts"]:
        show(spec, key=f"chart-{key}-{chart_id}", container=container)
    if "decode" in built["tables"]:
        container.markdown("**Decode: the bandwidth bound against what real code reached**")
        container.dataframe(built["tables"]["decode"], hide_index=True, width="stretch")
    if "allreduce" in built["tables"]:
        container.dataframe(built["tables"]["allreduce"], hide_index=True, width="stretch")


def render_sample(state, container: Any, key: str) -> None:
    """The default shipped sample (the H100 run), labelled as a sample."""
    name = default_sample()
    doc = sample_document(name)
    container.caption(f"Sample results: `{name}` — {samples()[name].label}.")
    results_charts(doc, container, key, name=name)


VIEWS = {"sample": View(PAGE, "sample", "A real measurement beside the theory", (), render_sample)}
