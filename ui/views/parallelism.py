"""Parallelism views: the GPU grid, memory per GPU by stage, communication vs compute, the pipeline.

``outcome`` computes one layout's memory, traffic, step time and every chart as plain data, cached
per setting and shared by every session.
"""

from __future__ import annotations

from typing import Any

import streamlit as st

from charts.parallelism import (
    comm_vs_compute_figure,
    gpu_grid_figure,
    memory_breakdown_figure,
    pipeline_gantt_figure,
)
from simulators import parallelism as par
from simulators.fit import parts_table
from ui.chart import show
from ui.views import View
from ui.views.common import arrow, as_spec, catalog, metric_row, models

PAGE = "parallelism"
LAYOUT_KEYS = (
    "par_model",
    "par_gpu",
    "par_nodes",
    "par_gpn",
    "par_tp",
    "par_pp",
    "par_dp",
    "par_zero",
    "par_m",
    "par_seq",
    "par_recompute",
    "par_schedule",
    "par_intra",
    "par_inter",
    "par_sp",
    "par_recipe",
    "par_mfu",
    "par_overlap",
)


def key_of(values: dict[str, Any]) -> tuple[tuple[str, Any], ...]:
    return tuple((k, values[k]) for k in LAYOUT_KEYS)


@st.cache_data(max_entries=64, show_spinner=False)
def outcome(key: tuple[tuple[str, Any], ...]) -> dict[str, Any]:
    """Memory, traffic, time and charts of one layout (or ``{"error": …, "suggestions": …}``)."""
    v = dict(key)
    spec, gpu = models()[v["par_model"]].spec, catalog()[v["par_gpu"]]
    try:
        layout = par.Layout(
            dp=v["par_dp"],
            tp=v["par_tp"],
            pp=v["par_pp"],
            zero_stage=int(v["par_zero"]),
            num_microbatches=v["par_m"],
            seq=v["par_seq"],
            nodes=v["par_nodes"],
            gpus_per_node=v["par_gpn"],
            sequence_parallel=v["par_sp"],
            recompute=v["par_recompute"],
            schedule=v["par_schedule"],
        )
        par.check_layout(spec, layout)
    except ValueError as exc:
        total = v["par_nodes"] * v["par_gpn"]
        return {
            "error": str(exc),
            "suggestions": [f"{d}×{t}×{p}" for d, t, p in par.factorizations(total)[:24]],
        }
    recipe = v["par_recipe"]
    memory = par.per_gpu_memory(spec, layout, recipe)
    terms = par.communication_per_step(
        spec, layout, recipe=recipe, intra_node_link=v["par_intra"], inter_node_link=v["par_inter"]
    )
    step = par.step_time(spec, layout, gpu, terms, mfu=v["par_mfu"], dp_overlap=v["par_overlap"])
    return {
        "error": "",
        "layout": layout,
        "notes": par.layout_notes(spec, layout),
        "total": memory.total_bytes,
        "capacity": gpu.memory_bytes,
        "gpu_name": gpu.name,
        "bubble": par.pipeline_bubble_fraction(v["par_pp"], v["par_m"]),
        "efficiency": step.scaling_efficiency,
        "step_s": step.total_s,
        "mfu": step.achieved_mfu,
        "parts": arrow(parts_table(memory)),
        "memory_chart": as_spec(
            memory_breakdown_figure(
                par.memory_by_stage(spec, layout, recipe),
                gpu.memory_bytes,
                f"{gpu.name}: {gpu.memory_label}",
            )
        ),
        "comm_chart": as_spec(comm_vs_compute_figure(terms, step)),
        "comm_table": arrow(par.communication_table(terms)),
        "gantt": as_spec(
            pipeline_gantt_figure(
                par.pipeline_schedule(v["par_pp"], v["par_m"], v["par_schedule"]), v["par_schedule"].upper()
            )
        ),
    }


@st.cache_data(max_entries=64, show_spinner=False)
def grid_chart(key: tuple[tuple[str, Any], ...], colour_by: str) -> dict[str, Any]:
    """The GPU grid coloured by ``colour_by`` (pp, tp, dp, zero or role)."""
    out = outcome(key)
    return as_spec(gpu_grid_figure(out["layout"], colour_by, models()[dict(key)["par_model"]].spec))


def current(state) -> dict[str, Any]:
    return outcome(key_of(state.values))


def verdict(out: dict[str, Any]) -> list[dict[str, Any]]:
    headroom = out["capacity"] - out["total"]
    fits = headroom >= 0
    return [
        {
            "label": "Memory on the busiest GPU",
            "value": f"{out['total'] / 1e9:,.1f} GB",
            "help": f"{out['total'] / 2**30:,.1f} GiB; capacity {out['capacity'] / 1e9:,.0f} GB",
        },
        {
            "label": "Fits?",
            "value": "Yes" if fits else "No",
            "delta": f"{headroom / 1e9:+,.1f} GB headroom" if fits else f"{-headroom / 1e9:,.1f} GB short",
            "delta_color": "green" if fits else "red",
            "delta_arrow": "off",
        },
        {
            "label": "Pipeline bubble",
            "value": f"{out['bubble']:.1%}",
            "help": "(p − 1) / (m + p − 1) of each GPU's time",
        },
        {
            "label": "Scaling efficiency",
            "value": f"{out['efficiency']:.0%}",
            "help": f"Step {out['step_s']:,.2f} s; achieved MFU {out['mfu']:.0%}",
        },
    ]


def _guard(out: dict[str, Any], container: Any) -> bool:
    if out["error"]:
        container.error(f"This layout does not work: {out['error']}")
        container.caption("Layouts that fill the cluster (DP × TP × PP): " + ", ".join(out["suggestions"]))
        return False
    return True


def render_grid(state, container: Any, key: str) -> None:
    out = current(state)
    if _guard(out, container):
        metric_row(container, verdict(out))
        show(
            grid_chart(key_of(state.values), state.values["par_colour"]),
            key=f"chart-{key}-grid",
            container=container,
        )


def render_memory(state, container: Any, key: str) -> None:
    out = current(state)
    if _guard(out, container):
        metric_row(container, verdict(out)[:2])
        show(out["memory_chart"], key=f"chart-{key}-memory", container=container)


def render_communication(state, container: Any, key: str) -> None:
    out = current(state)
    if _guard(out, container):
        metric_row(container, verdict(out)[3:])
        show(out["comm_chart"], key=f"chart-{key}-comm", container=container)


def render_pipeline(state, container: Any, key: str) -> None:
    out = current(state)
    if _guard(out, container):
        metric_row(container, verdict(out)[2:3])
        show(out["gantt"], key=f"chart-{key}-gantt", container=container)


VIEWS = {
    "grid": View(
        PAGE, "grid", "Which GPU holds what", ("par_tp", "par_pp", "par_dp", "par_colour"), render_grid
    ),
    "memory": View(
        PAGE,
        "memory",
        "Memory per GPU, stage by stage",
        ("par_zero", "par_tp", "par_pp", "par_dp"),
        render_memory,
    ),
    "communication": View(
        PAGE,
        "communication",
        "Communication against compute in one step",
        ("par_tp", "par_intra", "par_inter", "par_overlap"),
        render_communication,
    ),
    "pipeline": View(
        PAGE,
        "pipeline",
        "The pipeline schedule and its bubble",
        ("par_pp", "par_m", "par_schedule"),
        render_pipeline,
    ),
}
