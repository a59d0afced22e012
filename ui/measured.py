"""Measured results the reader loaded or ran (Your hardware page), as points for other pages' charts.

The results live in session state as the validated JSON document that ``python -m measure``
writes (schema 1), so every simulator page can draw the reader's own numbers beside its
predictions without importing torch. Functions that take ``results`` read that document when it
is None, or a document passed in explicitly (a shipped sample: ``measure.samples.load_sample``).
"""

from __future__ import annotations

import html
from typing import Any

import streamlit as st

from simulators.hierarchy import HardwareFamily
from simulators.hierarchy import MeasuredPoint as LadderPoint
from simulators.roofline import TORCH_DTYPES, MeasuredPoint

RESULTS_KEY = "measure_results"
RESULTS_NAME_KEY = "measure_results_name"  # where the results in session came from, in words
RESULTS_ID_KEY = "measure_results_id"  # a unique id of that document: its built charts are cached under it
OWN_KEY = "measure_own_results"  # the reader's own run, upload or browser measurement, apart from samples


def current_results() -> dict[str, Any] | None:
    """The measurement document in this session, or None."""
    results = st.session_state.get(RESULTS_KEY)
    return results if isinstance(results, dict) else None


def use_results(document: dict[str, Any], name: str, unique_id: str) -> None:
    """Make ``document`` the results every page draws in this session; ``name`` says where it came
    from (in words), ``unique_id`` names this exact document (its charts are cached under it)."""
    st.session_state[RESULTS_KEY] = document
    st.session_state[RESULTS_NAME_KEY] = name
    st.session_state[RESULTS_ID_KEY] = unique_id


def keep_own(document: dict[str, Any], name: str, unique_id: str) -> None:
    """Keep ``document`` as the reader's own results (Results → Your own results) and show it."""
    st.session_state[OWN_KEY] = (document, name, unique_id)
    use_results(document, name, unique_id)


@st.cache_resource(show_spinner=False)
def shipped_sample(name: str) -> dict[str, Any]:
    """A shipped sample (``measure.samples``), validated once per process and shared read-only by
    every session: callers draw from it and never change it."""
    from measure.samples import load_sample

    return load_sample(name)


def safe_text(value: object, limit: int = 80) -> str:
    """Text from a results file, safe inside chart labels: Plotly draws a few HTML tags (links,
    styles) in text, so <, > and & are escaped; long names are cut."""
    return html.escape(str(value)[:limit], quote=False)


def measured_roofline_points(results: dict[str, Any] | None = None) -> list[MeasuredPoint]:
    """Matmul records (and the browser suite's FMA-chain "compute" records) as roofline points:
    intensity from their shape (FLOPs ÷ bytes moved), achieved FLOP/s measured."""
    results = results if results is not None else current_results()
    if not results:
        return []
    device = safe_text(results.get("device", {}).get("name", "your device"))
    points = []
    for record in results.get("results", []):
        if record.get("kind") not in ("matmul", "compute"):
            continue
        intensity = record.get("intensity_flop_per_byte")
        achieved = record.get("flops_per_s") or record.get("tflops", 0) * 1e12
        if intensity and achieved:
            if record["kind"] == "compute":  # the browser suite's FMA chain: the vector-unit roof
                shape = "FMA chain" if record.get("op") == "fma_chain" else str(record.get("op"))
            else:
                shape = f"{record.get('m')}×{record.get('n')}×{record.get('k')}"
            name = f"{device}: {safe_text(record.get('dtype'), 12)} {safe_text(shape, 40)}"
            dtype = TORCH_DTYPES.get(str(record.get("dtype") or "").removeprefix("torch."), "")
            points.append(
                MeasuredPoint(
                    name=name, intensity=float(intensity), achieved_flops=float(achieved), dtype=dtype
                )
            )
    return points


def _records(kind: str, results: dict[str, Any] | None = None) -> list[dict[str, Any]]:
    results = results if results is not None else current_results()
    if not results:
        return []
    return [r for r in results.get("results", []) if isinstance(r, dict) and r.get("kind") == kind]


def device_label(results: dict[str, Any] | None = None) -> str:
    """The measured device's name, escaped for chart text (wrap in ``plain`` for Markdown)."""
    results = (results if results is not None else current_results()) or {}
    device = results.get("device", {})
    return safe_text(device.get("name") or device.get("device") or "your device")


def measured_hierarchy_points(
    family: HardwareFamily, results: dict[str, Any] | None = None
) -> list[LadderPoint]:
    """Measured points for this family's memory ladder: best bandwidth per level, and each
    pointer-chase latency on the level its working set fits in.

    Only when the measured device is this family: a CPU run lands on the CPU ladder, a GPU run
    on the family whose catalog row it matched. The suite tags each bandwidth point with the
    level its working set falls in (DRAM on a CPU is its main memory; device memory is HBM/GDDR);
    launch-bound points are tagged "launch-bound" and left out. A latency point's level comes
    from the family's capacities (measure.views.chase_level); points between levels are left out
    (latency_records keeps them all).
    """
    from measure.views import latency_ladder_points

    results = (results if results is not None else current_results()) or {}
    device = results.get("device", {})
    if device.get("type") == "cpu":
        if family.sm_count is not None:  # a CPU's numbers belong on the CPU ladder only
            return []
    elif not family.accelerator_id or family.accelerator_id != (device.get("catalog_match") or {}).get("id"):
        return []
    hint_to_level = {
        "L1": "l1",
        "L2": "l2",
        "DRAM": "host-memory",
        "device memory": "device-memory",
        "HBM": "device-memory",
    }
    level_ids = {lv.level for lv in family.levels}
    name = device_label(results)
    best: dict[str, float] = {}
    for record in _records("bandwidth", results):
        level = hint_to_level.get(str(record.get("cache_hint")))
        if level in level_ids and record.get("bytes_per_s") and not record.get("launch_bound"):
            best[level] = max(best.get(level, 0.0), float(record["bytes_per_s"]))
    points = [
        LadderPoint(label=f"{name}: measured {level}", level=level, bytes_per_s=value, family=family.id)
        for level, value in best.items()
    ]
    for point in latency_ladder_points(results, family):
        if point["level"] in level_ids:
            points.append(
                LadderPoint(
                    label=f"{name}: pointer chase over {_binary(point['bytes'])}",
                    level=point["level"],
                    seconds=point["ns"] * 1e-9,
                    family=family.id,
                )
            )
    return points


def _binary(n: float) -> str:
    from measure.cli import human_bytes

    return human_bytes(n)


def latency_records(results: dict[str, Any] | None = None) -> list[tuple[int, float]]:
    """(working-set bytes, ns per load) of every latency record, by working set: the raw points
    of a latency-vs-working-set chart."""
    from measure.views import latency_pairs

    return latency_pairs(_records("latency", results))


def decode_gap_rows(results: dict[str, Any] | None = None) -> list[dict[str, Any]]:
    """Measured decode speed beside the bandwidth bound: model, mode, batch, measured tok/s,
    bound tok/s, % of bound (measure.views.decode_gap_rows)."""
    from measure.views import decode_gap_rows as rows

    return rows(_records("decode", results))


def decode_records(results: dict[str, Any] | None = None) -> list[dict[str, Any]]:
    """The raw decode records (numbers, for charts)."""
    return _records("decode", results)


def transformer_memory_rows(results: dict[str, Any] | None = None) -> list[dict[str, str]]:
    """Measured transformer steps in this session beside the calculator's prediction."""
    from measure.views import transformer_memory_rows as rows

    return rows(_records("transformer_memory", results))


def allreduce_records(results: dict[str, Any] | None = None) -> list[dict[str, Any]]:
    return _records("allreduce", results)
