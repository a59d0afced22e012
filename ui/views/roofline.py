"""Roofline views: the roofline with example operations and the decode step, and decode vs batch."""

from __future__ import annotations

from typing import Any

import streamlit as st

from charts.roofline import decode_batch_figure, roofline_figure
from content.schema import ROOFLINE_BATCHES, ROOFLINE_DTYPES
from measure.views import measured_cpu_accelerator
from simulators import roofline
from ui.chart import show
from ui.measured import RESULTS_ID_KEY, current_results, measured_roofline_points
from ui.views import View
from ui.views.common import as_spec, catalog, metric_row, models

PAGE = "roofline"


def accelerators(values: dict[str, Any]) -> tuple[list, list[str]]:
    """The chosen accelerators that have a dense peak at the chosen precision, and those left off."""
    cat = catalog()
    chosen = [cat[i] for i in values["rf_gpus"] if i in cat]
    dtype = values["rf_dtype"]
    return [a for a in chosen if a.supports(dtype)], [a.name for a in chosen if not a.supports(dtype)]


@st.cache_data(max_entries=64, show_spinner=False)
def roofline_spec(
    gpus: tuple[str, ...],
    dtype: str,
    sets: tuple[str, ...],
    achievable: bool,
    decode: bool,
    model_id: str,
    batch: int,
    context: int,
    measured: tuple,
) -> dict[str, Any]:
    """The main roofline as a plain figure spec (cached per combination of controls)."""
    cat = catalog()
    chosen = [cat[i] for i in gpus]
    operations = [op for name in sets for op in roofline.operation_set(name, dtype)]
    kwargs: dict[str, Any] = {}
    if decode:
        spec = models()[model_id].spec
        kwargs["decode_path"] = [
            roofline.decode_step_op(spec, b, context, dtype=dtype) for b in ROOFLINE_BATCHES
        ]
        kwargs["decode_selected"] = roofline.decode_step_op(spec, batch, context, dtype=dtype)
    figure = roofline_figure(
        chosen, dtype, operations, list(measured), show_achievable=achievable, height=520, **kwargs
    )
    return as_spec(figure)


@st.cache_data(max_entries=64, show_spinner=False)
def decode_numbers(gpu_id: str, dtype: str, model_id: str, batch: int, context: int) -> dict[str, Any]:
    """Intensity, bound and crossover batch of one decode step on one accelerator."""
    gpu = catalog()[gpu_id]
    spec = models()[model_id].spec
    step = roofline.decode_step_op(spec, batch, context, dtype=dtype)
    prediction = roofline.predict(step, gpu)
    return {
        "intensity": step.intensity,
        "bound": prediction.bound if prediction else None,
        "time_s": prediction.time_s if prediction else None,
        "crossover": roofline.decode_crossover_batch(spec, gpu, dtype, context),
        "limit": roofline.decode_intensity_limit(spec, context),
        "ridge": gpu.ridge_point(dtype),
        "peak": gpu.peak_flops(dtype),
        "bandwidth": gpu.memory_bandwidth_bytes_per_s,
    }


@st.cache_data(max_entries=64, show_spinner=False)
def decode_batch_spec(gpu_id: str, dtype: str, model_id: str, batch: int, context: int) -> dict[str, Any]:
    """Decode intensity and tokens/s against the batch size, as a plain figure spec."""
    figure = decode_batch_figure(
        models()[model_id].spec,
        catalog()[gpu_id],
        list(ROOFLINE_BATCHES),
        dtype,
        context,
        selected_batch=batch,
    )
    return as_spec(figure)


def verdict_metrics(values: dict[str, Any], first) -> list[dict[str, Any]]:
    """The page's answer in four numbers: ridge, decode intensity, bound, crossover batch."""
    dtype = values["rf_dtype"]
    n = decode_numbers(first.id, dtype, values["rf_model"], values["rf_batch"], values["rf_ctx"])
    crossover = n["crossover"]
    return [
        {
            "label": "Ridge point (FLOP/byte)",
            "value": f"{n['ridge']:,.0f}",
            "help": f"{first.name}, {ROOFLINE_DTYPES[dtype]}: {n['peak'] / 1e12:,.1f} TFLOP/s (dense) ÷ "
            f"{n['bandwidth'] / 1e12:,.2f} TB/s",
        },
        {
            "label": f"Decode intensity, batch {values['rf_batch']:,}",
            "value": f"{n['intensity']:,.1f}",
            "help": "FLOP per byte of one decode step of the whole model: its FLOPs ÷ the bytes it reads "
            "(weights + KV cache).",
        },
        {
            "label": "Decode step bound by",
            "value": n["bound"] or "—",
            "help": f"Predicted step time {n['time_s'] * 1e3:,.2f} ms on {first.name}"
            if n["time_s"]
            else None,
        },
        {
            "label": "Compute-bound from batch",
            "value": f"{crossover:,}" if crossover else "never",
            "help": "Smallest batch whose decode step reaches the ridge point."
            if crossover
            else f"With this context the intensity levels off at {n['limit']:,.1f} FLOP/byte, "
            "below the ridge.",
        },
    ]


def measured_points() -> tuple:
    """Measured matmul points from this session's GPU results, hashable for the cache. A CPU's
    points are never drawn under a GPU's roof: they go on the CPU's own (``cpu_roofline``)."""
    results = current_results()
    if results and (results.get("device") or {}).get("type") == "cpu":
        return ()
    return tuple(measured_roofline_points())


@st.cache_data(max_entries=16, show_spinner=False)
def cpu_roofline_spec(results_id: str, _results: dict[str, Any], dtype: str) -> dict[str, Any] | None:
    """A CPU run's matmuls on that CPU's own measured roofs (``measure.views.measured_cpu_accelerator``),
    at ``dtype`` where it measured that precision, else FP32; None for a GPU run."""
    cpu = measured_cpu_accelerator(_results)
    if cpu is None:
        return None
    own = dtype if cpu.supports(dtype) else "fp32"
    points = measured_roofline_points(_results)
    title = f"Your CPU on its own roof: {cpu.name}, {own.upper()} matmuls"
    return as_spec(roofline_figure([cpu], own, [], points, title=title, height=420))


def render_cpu_roofline(container: Any, key: str, dtype: str) -> None:
    """Below the GPU chart: this session's CPU run on its own roofs, said to be measured ceilings."""
    results = current_results()
    if not results or (results.get("device") or {}).get("type") != "cpu":
        return
    spec = cpu_roofline_spec(str(st.session_state.get(RESULTS_ID_KEY, "")), results, dtype)
    if spec is None:
        return
    container.markdown(
        "**Your measurements come from a CPU**, so they are drawn on that CPU's own roofs, not under "
        "a GPU's: the catalog has no datasheet peak for it, so its roofs are the run's own best copy "
        "bandwidth and best matmul per precision (measured ceilings, not a datasheet)."
    )
    show(spec, key=f"chart-{key}-cpu-roofline", container=container)


def render_roofline(state, container: Any, key: str, verdict: Any = None) -> None:
    """Verdict metrics (into ``verdict`` if given) and the roofline with the decode step."""
    values = state.values
    chosen, lacking = accelerators(values)
    if lacking:
        container.info(
            f"No sourced dense {ROOFLINE_DTYPES[values['rf_dtype']]} peak for: {', '.join(lacking)} — "
            "left off the chart."
        )
    if not chosen:
        container.warning("Pick at least one accelerator that has this precision.")
        return
    if verdict is not None or not key.startswith("lesson-"):
        # Embedded in a lesson step the four numbers would state answers (ridge, crossover batch)
        # that later questions ask for; the chart alone makes the step's point there.
        metric_row(verdict or container, verdict_metrics(values, chosen[0]))
    spec = roofline_spec(
        tuple(a.id for a in chosen),
        values["rf_dtype"],
        tuple(values["rf_sets"]),
        values["rf_achievable"],
        values["rf_decode"],
        values["rf_model"],
        values["rf_batch"],
        values["rf_ctx"],
        measured_points(),
    )
    show(spec, key=f"chart-{key}-roofline", container=container)
    if not key.startswith("lesson-"):
        render_cpu_roofline(container, key, values["rf_dtype"])


def render_decode_batch(state, container: Any, key: str) -> None:
    """Decode intensity and tokens/s as the batch grows, on the first chosen accelerator."""
    values = state.values
    chosen, _ = accelerators(values)
    if not chosen:
        container.warning("Pick at least one accelerator that has this precision.")
        return
    spec = decode_batch_spec(
        chosen[0].id, values["rf_dtype"], values["rf_model"], values["rf_batch"], values["rf_ctx"]
    )
    show(spec, key=f"chart-{key}-decode_batch", container=container)


VIEWS = {
    "roofline": View(
        PAGE,
        "roofline",
        "The roofline, with one decode step",
        ("rf_batch", "rf_ctx", "rf_model", "rf_gpus", "rf_dtype", "rf_sets"),
        render_roofline,
    ),
    "decode-batch": View(
        PAGE,
        "decode-batch",
        "Decode intensity and tokens/s as the batch grows",
        ("rf_batch", "rf_ctx", "rf_model", "rf_dtype"),
        render_decode_batch,
    ),
}
