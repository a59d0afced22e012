"""Your hardware views: a results document (a shipped sample or the reader's own) drawn beside the
theory — bandwidth sweep, matmuls on the roofline, the pointer-chase latency ladder, the decode gap —
and the browser suite (WebGPU kernels in the reader's own page, ui/webgpu.py) with its results.

Nothing here imports torch: results are plain JSON documents (measure/results.py, schema 1).
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

import streamlit as st

from charts.hierarchy import latency_sweep_figure
from charts.measure import allreduce_figure, bandwidth_figure
from charts.roofline import roofline_figure
from measure import views as mviews
from measure import webgpu as mwebgpu
from measure.samples import list_samples, load_sample
from simulators.hierarchy import families
from ui.chart import show
from ui.controls import plain
from ui.measured import (
    RESULTS_ID_KEY,
    decode_gap_rows,
    device_label,
    keep_own,
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
        out["charts"].append(
            ("bw", with_spread_bars(as_spec(bandwidth_figure(bandwidth, caches)), bandwidth))
        )
    pairs = latency_records(results)
    if pairs:
        family = _family_of(results)
        levels = list(family.levels) if family else []
        figure = as_spec(latency_sweep_figure(pairs, levels, device_label=device_label(results)))
        chase = [r for r in records if r.get("kind") == "latency"]
        out["charts"].append(("latency", with_spread_bars(figure, chase)))
    points = measured_roofline_points(results)
    accelerator = catalog().get((device.get("catalog_match") or {}).get("id", ""))
    if points and accelerator is not None:
        # One roofline per precision measured, each point held to its own precision's roof.
        for dtype in ROOF_DTYPES:
            own = [p for p in points if p.dtype == dtype]
            if own and accelerator.supports(dtype) and _has_peak(accelerator, dtype):
                what = "matmuls and FMA chain" if any("FMA chain" in p.name for p in own) else "matmuls"
                title = f"Roofline: {accelerator.name}, {dtype.upper()} {what}"
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


def _spread(record: dict[str, Any]) -> tuple[float, float, float] | None:
    """(drawn value, p10 value, p90 value) of a bandwidth (GB/s, from bytes and times) or
    pointer-chase (ns) record, or None when it has no spread."""
    try:
        if record.get("kind") == "bandwidth":
            size = float(record["bytes"])
            return (
                float(record["gb_per_s"]),
                size / float(record["p90_s"]) / 1e9,
                size / float(record["p10_s"]) / 1e9,
            )
        if record.get("kind") == "latency":
            return float(record["ns"]), float(record["p10_ns"]), float(record["p90_ns"])
    except (KeyError, TypeError, ValueError, ZeroDivisionError):
        return None
    return None


def with_spread_bars(spec: dict[str, Any], records: list[dict[str, Any]]) -> dict[str, Any]:
    """The chart with p10–p90 error bars on its measured traces (matched by working set and value)
    and a noisy point's marker said in its hover text."""
    by_point = {}
    for r in records:
        spread = _spread(r)
        if spread is not None:
            by_point[(float(r["bytes"]), round(spread[0], 9))] = (spread, bool(r.get("noisy")))
    for trace in spec.get("data", []):
        if trace.get("mode") != "lines+markers" or not trace.get("x"):
            continue
        found = [
            by_point.get((float(x), round(float(y), 9))) for x, y in zip(trace["x"], trace["y"], strict=False)
        ]
        if not any(found):
            continue
        plus = [max(f[0][2] - f[0][0], 0.0) if f else 0.0 for f in found]
        minus = [max(f[0][0] - f[0][1], 0.0) if f else 0.0 for f in found]
        trace["error_y"] = {
            "type": "data",
            "symmetric": False,
            "array": plus,
            "arrayminus": minus,
            "thickness": 1.5,
        }
        if any(f and f[1] for f in found):
            trace["text"] = ["noisy (p90 > 2 × p10)" if f and f[1] else "" for f in found]
    return spec


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


# ---------------------------------------------------------------------------------------------
# The browser suite: WebGPU kernels in the reader's page, their results kept in this session

WEBGPU_DOC_KEY = "hw_webgpu_doc"  # (validated browser document, its digest), before the catalog choice
WEBGPU_ERROR_KEY = "hw_webgpu_error"
WEBGPU_PICK_KEY = "hw_webgpu_pick"  # the reader's catalog choice: None (what the adapter names), "" or an id
WEBGPU_FINAL_KEY = "hw_webgpu_final"  # (digest, pick, finished document): finalize once per change
MAX_BROWSER_BYTES = 5 * 2**20  # as an upload
BROWSER_NAME = "your browser's measurement (WebGPU)"
SELF_REPORTED = (
    "A results file is self-reported: the page checks that its figures follow from its own bytes, "
    "FLOPs and times, that its fields have their types, and that a software adapter stays within "
    "what a CPU can do, but it cannot prove that a consistent file was measured."
)
NOT_LISTED = ""


def keep_browser_document(doc: dict[str, Any], digest: str, pick: str | None = None) -> None:
    """Keep a validated browser document (from the component or an upload) with the reader's
    catalog choice, and make it the results every page draws."""
    st.session_state[WEBGPU_DOC_KEY] = (doc, digest)
    st.session_state[WEBGPU_PICK_KEY] = pick
    st.session_state[WEBGPU_ERROR_KEY] = ""
    finished = browser_document()
    if finished is not None:
        keep_own(finished[0], BROWSER_NAME, finished[1])


def receive_browser(payload: str) -> None:
    """A message from the browser component: validated (measure.webgpu.from_component) and kept, or
    a message saying why it cannot be used."""
    try:
        doc = mwebgpu.from_component(payload, MAX_BROWSER_BYTES)
    except ValueError as exc:
        st.session_state[WEBGPU_ERROR_KEY] = f"The browser's results cannot be used: {exc}"
        return
    digest = hashlib.sha256(payload.encode("utf-8")).hexdigest()[:16]
    keep_browser_document(doc, digest, st.session_state.get(WEBGPU_PICK_KEY))


def browser_document() -> tuple[dict[str, Any], str] | None:
    """(the browser results with the reader's catalog choice applied, a unique id), or None."""
    stored = st.session_state.get(WEBGPU_DOC_KEY)
    if not stored:
        return None
    doc, digest = stored
    pick = st.session_state.get(WEBGPU_PICK_KEY)
    done = st.session_state.get(WEBGPU_FINAL_KEY)
    if not done or done[0] != digest or done[1] != pick:
        try:
            finished = mwebgpu.finalize(doc, pick)
        except ValueError:
            finished = mwebgpu.finalize(doc, None)
        done = (digest, pick, finished)
        st.session_state[WEBGPU_FINAL_KEY] = done
    return done[2], f"webgpu:{digest}:{pick}"


@st.cache_resource(show_spinner=False)
def browser_gpus() -> dict[str, str]:
    """Catalog GPUs a browser can run on, id -> name (shared read-only)."""
    return {row["id"]: row["name"] for row in mwebgpu.catalog_rows()}


def is_browser_document(doc: dict[str, Any]) -> bool:
    return mwebgpu.is_browser_document(doc)


def finalize_upload(doc: dict[str, Any], file_id: str) -> dict[str, Any]:
    """An uploaded browser file, drawn as it was saved: the GPU its file names when that is a
    catalog GPU a browser runs on (else what the adapter names), and kept as the browser results
    so that 'Which GPU is this?' applies to it too."""
    named = ((doc.get("device") or {}).get("catalog_match") or {}).get("id")
    pick = named if named in browser_gpus() else None
    keep_browser_document(doc, f"upload-{file_id}", pick)
    finished = browser_document()
    return finished[0] if finished else mwebgpu.finalize(doc, None)


def _pick_gpu(doc: dict[str, Any], container: Any, key: str) -> None:
    """'Which GPU is this?': the catalog row the points are held to (the adapter's own match first)."""
    automatic = mwebgpu.automatic_match((doc.get("device") or {}).get("adapter") or {})
    gpus = browser_gpus()
    options = [NOT_LISTED, *gpus]
    pick = st.session_state.get(WEBGPU_PICK_KEY)
    current = (automatic or {}).get("id", NOT_LISTED) if pick is None else pick

    def label(gpu_id: str) -> str:
        if gpu_id == NOT_LISTED:
            return "Not in the catalog, or I don't know"
        named = " (named by your browser)" if automatic and automatic["id"] == gpu_id else ""
        return gpus[gpu_id] + named

    def changed() -> None:
        st.session_state[WEBGPU_PICK_KEY] = st.session_state[f"{key}-webgpu-gpu"]
        finished = browser_document()
        if finished is not None:
            keep_own(finished[0], BROWSER_NAME, finished[1])

    container.selectbox(
        "Which GPU is this?",
        options,
        index=options.index(current) if current in options else 0,
        format_func=label,
        key=f"{key}-webgpu-gpu",
        on_change=changed,
        help="A browser rarely names the GPU. Naming it here holds your points to its datasheet, its "
        "roofline and its memory ladder; nothing is sent anywhere.",
    )


def _timer_sentence(device: dict[str, Any], run: dict[str, Any]) -> str:
    timer = device.get("timer") or {}
    if timer.get("kind") == "timestamp-query":
        clock = f"GPU timestamps (timestamp-query), resolution {_duration(timer.get('resolution_s'))}"
    else:
        clock = (
            f"the wall clock around queue.onSubmittedWorkDone(), granularity "
            f"{_duration(timer.get('wall_granularity_s'))}, one submit-and-wait "
            f"{_duration(timer.get('submit_round_trip_s'))}"
        )
    sample = _duration(timer.get("target_sample_s"))
    seconds = run.get("elapsed_s")
    took = f" The run took {seconds:,.1f} s." if isinstance(seconds, int | float) else ""
    return (
        f"Timed with {clock}; every sample lasts at least {sample} (100 ticks of the timer or more), "
        f"after two warm-ups; medians of 5 (quick) or 11 samples.{took}"
    )


def _duration(value: Any) -> str:
    if not isinstance(value, int | float) or value <= 0:
        return "?"
    if value < 1e-6:
        return f"{value * 1e9:.3g} ns"
    if value < 1e-3:
        return f"{value * 1e6:.3g} µs"
    return f"{value * 1e3:.3g} ms"


@st.cache_data(max_entries=8, show_spinner=False)
def _summary(unique_id: str, _doc: dict[str, Any]) -> Any:
    return arrow(mwebgpu.summary_rows(_doc))


def render_browser(state, container: Any, key: str) -> None:
    """The browser suite (its own buttons, progress and status) and, once it has reported, its
    results: what went wrong, the catalog choice, timer, download, table and charts."""
    holder = container.container()
    from ui.webgpu import webgpu_suite

    with holder:
        payload = webgpu_suite(key=key, quick=bool(state.values.get("hw_quick", True)))
    if payload:
        receive_browser(payload)
    error = st.session_state.get(WEBGPU_ERROR_KEY)
    if error:
        holder.error(plain(error, 600))
    finished = browser_document()
    if finished is None:
        holder.info(
            "Nothing measured in your browser in this session yet. The results appear here and on the "
            "Roofline and Memory hierarchy pages, and stay in this session unless you download them.",
            icon=":material/speed:",
        )
        return
    doc, unique_id = finished
    if st.session_state.get(RESULTS_ID_KEY) != unique_id:  # this section shows them: every page draws them
        keep_own(doc, BROWSER_NAME, unique_id)
    device = doc.get("device") or {}
    run = doc.get("webgpu_run") or {}
    holder.header(f"Measured in your browser: {plain(device.get('name', 'your GPU'))}", divider="gray")
    if not run.get("final", True):
        holder.info("The run is still going, or was cut off: the results that arrived so far are shown.")
    for status in doc.get("statuses") or []:
        if not status.get("ok"):
            holder.warning(f"{plain(status.get('workload'))}: {plain(status.get('message'), 500)}")
    line = mwebgpu.headline(doc)
    if line is not None:
        holder.subheader(plain(line["text"][:1].upper() + line["text"][1:], 400), divider=False)
        if line["ratio"] is None:
            holder.caption("Name your GPU below to see this as a share of its datasheet bandwidth.")
    for notice in doc.get("webgpu_notices") or []:
        holder.warning(plain(notice, 600))
    if unique_id.startswith("webgpu:upload-"):
        holder.caption(SELF_REPORTED)
    if mwebgpu.is_software_adapter(device.get("adapter") or {}):
        holder.warning(
            "This is a software adapter: WebGPU emulated on your CPU. Its numbers measure the emulator, "
            "not a GPU; a browser with hardware acceleration on would measure the GPU itself."
        )
    if device.get("limits_refused"):
        holder.info(plain(device["limits_refused"], 400))
    _pick_gpu(doc, holder, key)
    match = device.get("catalog_match")
    holder.caption(
        plain(_timer_sentence(device, run), 600)
        + (f" Catalog row: {plain(match.get('name'))}, {plain(match.get('reason'), 200)}." if match else "")
    )
    holder.download_button(
        "Download these results (JSON)",
        data=json.dumps(doc, indent=2, allow_nan=False),
        file_name="webgpu-results.json",
        mime="application/json",
        key=f"{key}-webgpu-download",
        on_click="ignore",
        icon=":material/download:",
        help="Load the file back under Results → Your own results, here or on any copy of this guide.",
    )
    built = results_view(unique_id, doc)
    if "datasheet" in built["tables"]:
        holder.dataframe(built["tables"]["datasheet"], hide_index=True, width="stretch")
    holder.dataframe(_summary(unique_id, doc), hide_index=True, width="stretch")
    results_charts(doc, holder, f"{key}-webgpu", name=unique_id)
    if not match:
        holder.info(
            "Name your GPU above to draw these points under its roofline and on its memory ladder. "
            "The Roofline page in FP32 draws your FMA chain and matmuls against any GPU you pick."
        )
    links = holder.columns(2)
    links[0].page_link(
        "app_pages/roofline.py",
        label="Your points on the Roofline (FP32)",
        icon=":material/show_chart:",
        query_params={"rf_dtype": "fp32", "rf_gpus": ",".join(_roofline_gpus(match))},
    )
    family = _family_of(doc)
    if family is not None and family.sm_count is not None:
        links[1].page_link(
            "app_pages/memory_hierarchy.py",
            label=f"Your points on the {family.name} memory ladder",
            icon=":material/stacks:",
            query_params={"mh_a": family.id},
        )


def _roofline_gpus(match: dict[str, Any] | None) -> list[str]:
    """The GPUs the Roofline link opens with: the named GPU beside an H100, or an H100 alone."""
    ids = [match["id"]] if match and match.get("id") in catalog() else []
    return ids + ([] if "h100-sxm" in ids else ["h100-sxm"])


VIEWS = {
    "sample": View(PAGE, "sample", "A real measurement beside the theory", (), render_sample),
    "browser": View(PAGE, "browser", "Measure this device in your browser", (), render_browser),
}
