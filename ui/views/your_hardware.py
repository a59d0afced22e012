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
from ui.measured import decode_gap_rows, device_label, latency_records, measured_roofline_points
from ui.views import View
from ui.views.common import as_spec, catalog

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


def results_charts(results: dict[str, Any], container: Any, key: str) -> None:
    """Every chart a results document has data for, each beside its prediction."""
    records = results.get("results", [])
    device = results.get("device", {})
    bandwidth = [r for r in records if r.get("kind") == "bandwidth"]
    if bandwidth:
        caches = device.get("cpu", {}).get("caches", []) if device.get("type") == "cpu" else []
        show(as_spec(bandwidth_figure(bandwidth, caches)), key=f"chart-{key}-bw", container=container)
    pairs = latency_records(results)
    family = _family_of(results)
    if pairs:
        levels = list(family.levels) if family else []
        spec = latency_sweep_figure(pairs, levels, device_label=device_label(results))
        show(as_spec(spec), key=f"chart-{key}-latency", container=container)
    points = measured_roofline_points(results)
    match = device.get("catalog_match") or {}
    accelerator = catalog().get(match.get("id", ""))
    if points and accelerator is not None and accelerator.supports("bf16"):
        show(
            as_spec(roofline_figure([accelerator], "bf16", [], points)),
            key=f"chart-{key}-roof",
            container=container,
        )
    gap = decode_gap_rows(results)
    if gap:
        container.markdown("**Decode: the bandwidth bound against what real code reached**")
        container.dataframe(gap, hide_index=True, width="stretch")
    reduce_records = [r for r in records if r.get("kind") == "allreduce"]
    if reduce_records:
        show(as_spec(allreduce_figure(reduce_records)), key=f"chart-{key}-allreduce", container=container)
        container.dataframe(mviews.allreduce_rows(reduce_records), hide_index=True, width="stretch")


def render_sample(state, container: Any, key: str) -> None:
    """The default shipped sample (the H100 run), labelled as a sample."""
    name = default_sample()
    doc = sample_document(name)
    container.caption(f"Sample results: `{name}` — {samples()[name].label}.")
    results_charts(doc, container, key)


VIEWS = {"sample": View(PAGE, "sample", "A real measurement beside the theory", (), render_sample)}
