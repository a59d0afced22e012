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


DEGREES = ("par_tp", "par_pp", "par_dp")
NAMES = {"par_tp": "TP", "par_pp": "PP", "par_dp": "DP"}


def _nearest_divisor(n: int, x: int) -> int:
    """The divisor of n closest to x (the smaller one on a tie)."""
    return min(par.divisors(n), key=lambda d: (abs(d - x), d))


def _largest_divisor_at_most(n: int, x: int) -> int:
    return max(d for d in par.divisors(n) if d <= max(1, x))


def rebalance(
    total: int, tp: int, pp: int, dp: int, changed: str | None, was: int | None = None
) -> tuple[int, int, int, str]:
    """TP, PP and DP whose product is ``total`` GPUs, keeping the degree the reader ``changed``
    (``par_tp``, ``par_pp`` or ``par_dp``; None: the cluster changed, or a link was opened) and
    letting the others follow: DP first when TP or PP changed, PP first when DP changed (TP is the
    degree kept inside a node), each to the largest divisor that still fits. Returns the new degrees
    and one sentence saying what changed and what followed ("" when nothing had to). A changed
    degree that does not divide the GPUs moves on in the direction it was moved from ``was`` (a
    step from 2 to 3 on 64 GPUs gives 4, from 4 to 3 gives 2), else to the nearest divisor."""
    degrees = {"par_tp": tp, "par_pp": pp, "par_dp": dp}
    if tp * pp * dp == total:
        return tp, pp, dp, ""
    old = dict(degrees)
    said = []
    if changed in degrees:
        x = degrees[changed]
        if total % x:
            divisors = par.divisors(total)
            if was is not None and x > was:
                degrees[changed] = min((d for d in divisors if d >= x), default=divisors[-1])
            elif was is not None and x < was:
                degrees[changed] = max(d for d in divisors if d <= x)
            else:
                degrees[changed] = _nearest_divisor(total, x)
            said.append(f"{NAMES[changed]} {x} does not divide {total} GPUs, so it is {degrees[changed]}")
        rest = total // degrees[changed]
        first, second = (
            ("par_dp", "par_pp" if changed == "par_tp" else "par_tp")
            if changed != "par_dp"
            else ("par_pp", "par_tp")
        )
        # keep the second follower where it divides what is left, and the first takes the rest
        degrees[second] = _largest_divisor_at_most(rest, degrees[second])
        degrees[first] = rest // degrees[second]
        lead = f"{NAMES[changed]} is {degrees[changed]}"
    else:
        # the cluster changed (or a link's degrees did not multiply): keep TP, then PP; DP follows
        degrees["par_tp"] = _largest_divisor_at_most(total, degrees["par_tp"])
        degrees["par_pp"] = _largest_divisor_at_most(total // degrees["par_tp"], degrees["par_pp"])
        degrees["par_dp"] = total // (degrees["par_tp"] * degrees["par_pp"])
        lead = f"The cluster has {total} GPUs"
    followed = [
        f"{NAMES[k]} {old[k]} → {degrees[k]}" for k in DEGREES if k != changed and degrees[k] != old[k]
    ]
    sentence = "; ".join(said) + (". " if said else "")
    sentence += f"{lead}, so " + (" and ".join(followed) if followed else "nothing else") + " followed"
    t, p, d = degrees["par_tp"], degrees["par_pp"], degrees["par_dp"]
    sentence += f": DP × TP × PP = {d} × {t} × {p} = {total} GPUs."
    return t, p, d, sentence


def prepare(state) -> str:
    """Before the degree widgets are drawn: if the reader changed one of TP, PP and DP (or the
    cluster) so that DP × TP × PP no longer fills it, the others follow (``rebalance``); returns the
    sentence saying which changed and which followed, or ""."""
    v = state.values
    memory = f"_par_degrees:{state.ns}"
    now = {k: v[k] for k in ("par_nodes", "par_gpn", *DEGREES)}
    before = st.session_state.get(memory)
    changed = None
    if before is not None:
        moved = [k for k in DEGREES if before[k] != now[k]]
        cluster = any(before[k] != now[k] for k in ("par_nodes", "par_gpn"))
        changed = moved[0] if len(moved) == 1 and not cluster else None
    total = now["par_nodes"] * now["par_gpn"]
    was = before[changed] if before is not None and changed else None
    tp, pp, dp, note = rebalance(total, now["par_tp"], now["par_pp"], now["par_dp"], changed, was)
    for key, value in zip(DEGREES, (tp, pp, dp), strict=True):
        if value != now[key]:
            state.set_value(key, value)
    st.session_state[memory] = {**now, "par_tp": tp, "par_pp": pp, "par_dp": dp}
    return note


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
        return {"error": str(exc), "suggestions": _working_layouts(spec, v)}
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


def _working_layouts(spec, v: dict[str, Any], limit: int = 6) -> list[str]:
    """A few DP × TP × PP that fill the cluster AND split this model (not every factorization):
    those keeping the reader's TP first, then the rest by TP."""
    total = v["par_nodes"] * v["par_gpn"]
    found = []
    for d, t, p in par.factorizations(total):
        try:
            par.check_layout(
                spec, par.Layout(dp=d, tp=t, pp=p, nodes=v["par_nodes"], gpus_per_node=v["par_gpn"])
            )
        except ValueError:
            continue
        found.append((t != v["par_tp"], p != v["par_pp"], t, p, d))
    return [f"DP {d} × TP {t} × PP {p}" for *_, t, p, d in sorted(found)[:limit]]


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
        if out["suggestions"]:
            container.caption("Layouts that work for this model: " + "; ".join(out["suggestions"]) + ".")
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
        PAGE,
        "grid",
        "Which GPU holds what",
        ("par_tp", "par_pp", "par_dp", "par_colour"),
        render_grid,
        prepare,
    ),
    "memory": View(
        PAGE,
        "memory",
        "Memory per GPU, stage by stage",
        ("par_zero", "par_tp", "par_pp", "par_dp"),
        render_memory,
        prepare,
    ),
    "communication": View(
        PAGE,
        "communication",
        "Communication against compute in one step",
        ("par_tp", "par_intra", "par_inter", "par_overlap"),
        render_communication,
        prepare,
    ),
    "pipeline": View(
        PAGE,
        "pipeline",
        "The pipeline schedule and its bubble",
        ("par_pp", "par_m", "par_schedule"),
        render_pipeline,
        prepare,
    ),
}
