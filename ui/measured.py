"""Measured results the reader loaded or ran (Your hardware page), as points for other pages' charts.

The results live in session state as the validated JSON document that ``python -m measure``
writes (schema 1), so every simulator page can draw the reader's own numbers beside its
predictions without importing torch.
"""

from __future__ import annotations

from typing import Any

import streamlit as st

from simulators.roofline import MeasuredPoint

RESULTS_KEY = "measure_results"


def current_results() -> dict[str, Any] | None:
    """The measurement document in this session, or None."""
    results = st.session_state.get(RESULTS_KEY)
    return results if isinstance(results, dict) else None


def measured_roofline_points() -> list[MeasuredPoint]:
    """Matmul records as roofline points: intensity from their shape, achieved FLOP/s measured."""
    results = current_results()
    if not results:
        return []
    device = results.get("device", {}).get("name", "your device")
    points = []
    for record in results.get("results", []):
        if record.get("kind") != "matmul":
            continue
        intensity = record.get("intensity_flop_per_byte")
        achieved = record.get("flops_per_s") or record.get("tflops", 0) * 1e12
        if intensity and achieved:
            name = f"{device}: {record.get('dtype')} {record.get('m')}×{record.get('n')}×{record.get('k')}"
            points.append(
                MeasuredPoint(name=name, intensity=float(intensity), achieved_flops=float(achieved))
            )
    return points


def _records(kind: str) -> list[dict[str, Any]]:
    results = current_results()
    if not results:
        return []
    return [r for r in results.get("results", []) if isinstance(r, dict) and r.get("kind") == kind]


def device_label() -> str:
    results = current_results() or {}
    device = results.get("device", {})
    return str(device.get("name") or device.get("device") or "your device")


def measured_hierarchy_points(family) -> list:
    """Best measured bandwidth per memory level, as points for this family's memory ladder.

    Only when the measured device is this family: a CPU run lands on the CPU ladder, a GPU run
    on the family whose catalog row it matched. The suite tags each bandwidth point with the
    level its working set falls in (DRAM on a CPU is its main memory; device memory is HBM/GDDR).
    """
    from simulators.hierarchy import MeasuredPoint as LadderPoint

    results = current_results() or {}
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
    best: dict[str, float] = {}
    for record in _records("bandwidth"):
        level = hint_to_level.get(str(record.get("cache_hint")))
        if level in level_ids and record.get("bytes_per_s"):
            best[level] = max(best.get(level, 0.0), float(record["bytes_per_s"]))
    return [
        LadderPoint(label=f"{device_label()}: measured {level}", level=level, bytes_per_s=value)
        for level, value in best.items()
    ]


def transformer_memory_rows() -> list[dict[str, str]]:
    """Measured transformer steps in this session beside the calculator's prediction."""
    from measure.views import transformer_memory_rows as rows

    return rows(_records("transformer_memory"))


def allreduce_records() -> list[dict[str, Any]]:
    return _records("allreduce")
