"""Memory-hierarchy views: the latency/bandwidth ladder, moving N bytes, Little's law, placement."""

from __future__ import annotations

from typing import Any

import streamlit as st

from charts.hierarchy import ladder_figure, littles_law_figure, placement_figure, transfer_time_figure
from measure.samples import CPU_SAMPLE, H100_SAMPLE
from simulators import hierarchy
from simulators.fit import format_seconds
from simulators.llm_memory import kv_cache_bytes, weight_bytes
from ui.chart import show
from ui.controls import plain
from ui.measured import current_results, device_label, measured_hierarchy_points, shipped_sample
from ui.views import View
from ui.views.common import arrow, as_spec, metric_row, models

PAGE = "memory-hierarchy"
USABLE_FRACTION = 0.9  # device memory kept free for activations and the CUDA context (page caption)


@st.cache_resource(show_spinner=False)
def families() -> dict[str, hierarchy.HardwareFamily]:
    """Hardware families by id, shared read-only by every session."""
    return {f.id: f for f in hierarchy.families()}


def shown(values: dict[str, Any]) -> list[hierarchy.HardwareFamily]:
    """The chosen family and, if different, the one to compare with."""
    fams = families()
    first, second = values["mh_a"], values["mh_b"]
    return [fams[first]] + ([fams[second]] if second not in ("none", first) else [])


@st.cache_data(max_entries=64, show_spinner=False)
def ladder_chart(family_ids: tuple[str, ...], measured: tuple) -> dict[str, Any]:
    return as_spec(ladder_figure([families()[i] for i in family_ids], list(measured)))


@st.cache_data(max_entries=32, show_spinner=False)
def transfer_chart(family_id: str) -> dict[str, Any]:
    return as_spec(transfer_time_figure(list(families()[family_id].levels)))


@st.cache_data(max_entries=64, show_spinner=False)
def littles_chart(family_ids: tuple[str, ...], load_bytes: int) -> dict[str, Any]:
    return as_spec(littles_law_figure([families()[i] for i in family_ids], bytes_per_thread=load_bytes))


@st.cache_data(max_entries=64, show_spinner=False)
def placement(family_id: str, model_id: str, wfmt: str, kvfmt: str, context: int) -> dict[str, Any]:
    """Where the weights and KV cache live on one family, the time per token and its chart."""
    fam = families()[family_id]
    spec = models()[model_id].spec
    try:
        placed = hierarchy.place_model(
            weight_bytes(spec, wfmt),
            kv_cache_bytes(spec, context, 1, kvfmt),
            fam.levels,
            usable_fraction=USABLE_FRACTION,
        )
    except ValueError as exc:
        return {"error": str(exc), "name": fam.name}
    return {
        "error": "",
        "name": fam.name,
        "chart": as_spec(placement_figure(placed, family_name=fam.name)),
        "offloaded": placed.offloaded_bytes,
        "time_per_token": placed.time_per_token_s,
        "slowdown": placed.slowdown,
    }


@st.cache_data(max_entries=64, show_spinner=False)
def tables(family_id: str, load_bytes: int) -> dict[str, Any]:
    """The page's tables for one family, as Arrow tables (computed once per family and load width)."""
    fam = families()[family_id]
    out: dict[str, Any] = {"levels": arrow(hierarchy.levels_table(fam)), "human": None}
    if any(lv.has_latency for lv in fam.levels):
        reference, rows = hierarchy.human_scale_table(fam)
        out["human"] = (reference, arrow(rows))
    out["transfer"] = arrow(hierarchy.transfer_table(list(fam.levels)))
    out["littles"] = arrow(hierarchy.littles_law_table([fam], load_bytes)) if fam.sm_count else None
    return out


def measured_points(fams: list[hierarchy.HardwareFamily]) -> tuple:
    return tuple(point for fam in fams for point in measured_hierarchy_points(fam))


# Shipped measurements drawn when the reader has loaded none: a real H100 for the H100 ladder, this
# project's development machine for the CPU ladder (measure/samples/README.md says how each was taken).
SAMPLES = (H100_SAMPLE, CPU_SAMPLE)


@st.cache_data(max_entries=16, show_spinner=False)
def sample_points(family_id: str) -> tuple[str, tuple]:
    """The first shipped sample measured on this family, and its ladder points (or "", ())."""
    for name in SAMPLES:
        points = measured_hierarchy_points(families()[family_id], shipped_sample(name))
        if points:
            return name, tuple(points)
    return "", ()


@st.cache_data(max_entries=16, show_spinner=False)
def _comparison(family_id: str, name: str):
    from measure.views import latency_comparison_rows

    rows = latency_comparison_rows(shipped_sample(name), families()[family_id])
    return arrow(rows) if rows else None


def comparison_tables(fams: list[hierarchy.HardwareFamily]) -> list[tuple[str, str, Any]]:
    """(family name, where the numbers came from, table) of measured against published latency for
    each shown family: the reader's loaded results where they match it, else a shipped sample."""
    from measure.views import latency_comparison_rows

    own = current_results()
    out = []
    for fam in fams:
        rows = latency_comparison_rows(own, fam) if own else []
        if rows:
            out.append((fam.name, f"your results ({plain(device_label(own))})", arrow(rows)))
            continue
        name, _ = sample_points(fam.id)
        table = _comparison(fam.id, name) if name else None
        if table is not None:
            out.append((fam.name, f"the shipped sample `{name}`", table))
    return out


def render_ladder(state, container: Any, key: str) -> None:
    fams = shown(state.values)
    measured = measured_points(fams)
    if measured:
        note = "✕ Measured points: the results loaded on the Your hardware page."
    else:  # nothing loaded: show what real hardware measured, labelled as a sample
        found = [sample_points(fam.id) for fam in fams]
        measured = tuple(point for _, points in found for point in points)
        names = sorted({name for name, points in found if points})
        note = (
            "✕ Measured points: the shipped sample "
            + " and ".join(f"`{n}`" for n in names)
            + " (measure/samples). Load your own run on the Your hardware page."
        )
    show(ladder_chart(tuple(f.id for f in fams), measured), key=f"chart-{key}-ladder", container=container)
    if measured:
        container.caption(note)


def render_transfer(state, container: Any, key: str) -> None:
    fam = families()[state.values["mh_a"]]
    if any(lv.has_latency and lv.bandwidth_per_device_bytes_per_s for lv in fam.levels):
        show(transfer_chart(fam.id), key=f"chart-{key}-transfer", container=container)
    else:
        container.info(f"{fam.name}: no level has both a published latency and a bandwidth.")


def render_littles(state, container: Any, key: str) -> None:
    gpu_families = [f for f in shown(state.values) if f.sm_count]
    if not gpu_families:
        container.info("Little's law per SM needs a GPU: pick one above.")
        return
    load = state.values["mh_load"]
    metric_row(
        container,
        [
            {
                "label": f"{fam.name}: warps per SM",
                "value": f"{hierarchy.warps_in_flight(fam.level('device-memory'), load):,.0f}",
                "help": "Warps each SM must keep waiting on loads for device memory to run at full "
                "bandwidth: latency × bandwidth ÷ SMs ÷ (bytes per thread × 32 threads).",
            }
            for fam in gpu_families
            if fam.has_level("device-memory") and fam.level("device-memory").has_latency
        ],
    )
    show(
        littles_chart(tuple(f.id for f in gpu_families), state.values["mh_load"]),
        key=f"chart-{key}-littles",
        container=container,
    )


def render_placement(state, container: Any, key: str) -> None:
    v = state.values
    for fam in shown(v):
        out = placement(fam.id, v["mh_model"], v["mh_wfmt"], v["mh_kvfmt"], v["mh_ctx"])
        if out["error"]:
            container.info(f"{out['name']}: {out['error']}")
            continue
        metric_row(
            container,
            [
                {"label": f"{out['name']}: offloaded to host", "value": f"{out['offloaded'] / 1e9:,.1f} GB"},
                {"label": "Time per token", "value": format_seconds(out["time_per_token"])},
                {
                    "label": "vs. all on the GPU",
                    "value": f"{out['slowdown']:,.1f}× slower" if out["offloaded"] else "—",
                },
            ],
        )
        show(out["chart"], key=f"chart-{key}-place-{fam.id}", container=container)


VIEWS = {
    "ladder": View(PAGE, "ladder", "Latency and bandwidth, level by level", ("mh_a", "mh_b"), render_ladder),
    "transfer": View(PAGE, "transfer", "Moving N bytes: latency vs bandwidth", ("mh_a",), render_transfer),
    "littles": View(
        PAGE, "littles", "Little's law: bytes in flight", ("mh_load", "mh_a", "mh_b"), render_littles
    ),
    "placement": View(
        PAGE,
        "placement",
        "Where does the model live?",
        ("mh_model", "mh_ctx", "mh_wfmt", "mh_kvfmt", "mh_a", "mh_b"),
        render_placement,
    ),
}
