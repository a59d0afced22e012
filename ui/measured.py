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
