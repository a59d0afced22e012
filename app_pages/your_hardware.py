"""Measure your hardware: detect it, watch it, run small workloads, and compare with the theory.

torch and pynvml are imported only inside measure/ functions, which this page calls when the
reader presses a button — never when the page opens.
"""

from __future__ import annotations

import json
from collections import deque
from pathlib import Path

import streamlit as st

from charts.measure import allreduce_figure, bandwidth_figure, telemetry_figure
from charts.roofline import roofline_figure
from content import load_page
from measure import lock, views
from measure.env import HOSTED_NOTICE, is_hosted
from measure.results import load_results
from measure.suite import WORKLOADS
from simulators.hardware import load_catalog
from ui.controls import apply_preset_from_url, choice, multi_choice, notice, plain, preset_buttons, prose
from ui.measured import RESULTS_KEY, current_results, measured_roofline_points, transformer_memory_rows

SAMPLES = Path(__file__).resolve().parent.parent / "measure" / "samples"
MAX_UPLOAD_BYTES = 5 * 2**20

page = load_page("your_hardware")
apply_preset_from_url(page, "hw_preset_applied")
st.title(page.meta["title"])
prose(page.body)
if is_hosted():
    st.warning(HOSTED_NOTICE, icon=":material/cloud:")
preset_buttons(page, columns=4)

SECTIONS = {
    "detect": "This machine",
    "telemetry": "Live telemetry",
    "run": "Run workloads",
    "results": "Results",
    "method": "How we measure",
}
section = choice("Section", SECTIONS, key="hw_section", default="detect", widget="segmented")


def show_status(status) -> None:
    """A measure/ status (object or dict) as a message a reader can act on."""
    s = status if isinstance(status, dict) else status.to_dict()
    text = s["message"] + (f"\n\n**What to do:** {s['install_hint']}" if s.get("install_hint") else "")
    (st.success if s["ok"] else st.info)(text)


if section == "detect":
    if st.button(
        "Detect hardware", type="primary", help="Imports PyTorch and NVML if installed", key="hw_detect"
    ):
        from measure.device import discover

        with st.spinner("Looking at this machine…"):
            st.session_state["hw_report"] = discover().to_dict()
    report = st.session_state.get("hw_report")
    if report is None:
        st.caption("Nothing has been probed yet. The button imports PyTorch and NVML, which takes a second.")
    else:
        cpu = report["cpu"]
        st.subheader("CPU", divider="gray")
        st.markdown(
            f"**{cpu.get('model') or 'Unknown CPU'}** · {cpu.get('physical_cores') or '?'} cores "
            f"({cpu.get('logical_cores') or '?'} threads) · {cpu.get('os', '')}"
        )
        caches = views.cache_rows(cpu)
        if caches:
            st.dataframe(caches, hide_index=True)
        st.subheader("PyTorch, CUDA, NVML, Apple MPS", divider="gray")
        for name in ("torch_status", "cuda_status", "nvml_status", "mps_status"):
            show_status(report[name])
        for gpu in report.get("cuda", []):
            st.markdown(
                f"**GPU {gpu.get('index')}: {gpu.get('name')}** — "
                f"{(gpu.get('total_memory_bytes') or 0) / 2**30:,.1f} GiB, "
                f"{gpu.get('sm_count')} SMs, compute capability {gpu.get('compute_capability')}"
            )

elif section == "telemetry":
    prose(page.section("utilization"))
    live = st.toggle("Poll NVML about once a second", False, key="hw_live")
    if live:
        from measure.device import read_telemetry

        history = st.session_state.setdefault("hw_telemetry", deque(maxlen=120))

        @st.fragment(run_every=1.0)
        def telemetry_panel() -> None:
            sample = read_telemetry(0)
            if hasattr(sample, "ok"):
                show_status(sample)
                return
            history.append(sample.to_dict())
            latest = history[-1]
            c = st.columns(4)
            c[0].metric("GPU utilization", f"{latest['gpu_util_percent']}%")
            c[1].metric("Power", f"{latest['power_draw_w'] or 0:,.0f} W")
            c[2].metric("Temperature", f"{latest['temperature_c']} °C")
            c[3].metric("SM clock", f"{latest['sm_clock_mhz']} MHz")
            st.plotly_chart(telemetry_figure(list(history)), key="hw_telemetry_chart")

        telemetry_panel()

elif section == "run":
    holder = lock.busy_info()
    if holder:
        st.warning(f"Another measurement is running on this server ({holder['label']}). Try again shortly.")
    c1, c2, c3 = st.columns([1, 1, 3])
    device = c1.text_input("Device", "auto", key="hw_device", help="auto, cpu, cuda, cuda:1 or mps")
    quick = c2.toggle("Quick (seconds)", True, key="hw_quick", bind="query-params")
    workloads = multi_choice(
        "Workloads",
        {w: w.replace("_", " ") for w in WORKLOADS},
        key="hw_workloads",
        default=list(WORKLOADS),
        container=c3,
    )
    if st.button("Run", type="primary", disabled=not workloads, key="hw_run"):
        from measure.suite import run_suite

        bar = st.progress(0.0, text="Starting…")
        outcome = run_suite(
            device.strip() or "auto",
            quick=quick,
            workloads=workloads,
            progress=lambda fraction, message: bar.progress(min(max(fraction, 0.0), 1.0), text=message),
        )
        bar.empty()
        if hasattr(outcome, "records"):
            st.session_state[RESULTS_KEY] = json.loads(outcome.to_json())
            st.success(
                f"{len(outcome.records)} results. Open **Results** to see them beside the predictions."
            )
            for s in outcome.statuses:
                if not s.get("ok"):
                    st.info(f"{s['workload']}: {s['message']}")
        else:
            show_status(outcome)
    st.caption("Streamlit's Stop button (top right) cancels a run at its next progress update.")

elif section == "results":
    samples = sorted(SAMPLES.glob("*.json"))
    source = choice(
        "Results to show",
        {"session": "From this session (run or upload)", "sample": "Sample file shipped with the app"},
        key="hw_source",
        default="session",
        widget="radio",
    )
    if source == "sample" and samples:
        sample_path = samples[0]
        st.session_state[RESULTS_KEY] = json.loads(load_results(sample_path.read_bytes()).to_json())
        st.caption(f"Sample: `{sample_path.name}`, measured on the machine it names.")
    prose(page.section("local"))
    uploaded = st.file_uploader(
        "Upload a results file from `python -m measure --json`", type=["json"], key="hw_upload"
    )
    if uploaded is not None:
        if uploaded.size > MAX_UPLOAD_BYTES:
            st.error(
                f"That file is {uploaded.size / 2**20:,.1f} MiB; results files are far smaller (limit 5 MiB)."
            )
        else:
            try:
                st.session_state[RESULTS_KEY] = json.loads(load_results(uploaded.getvalue()).to_json())
                st.success("Loaded. Every simulator page now shows these points beside its predictions.")
            except ValueError as exc:
                st.error(f"That file cannot be used: {exc}")
    results = current_results()
    if results is None:
        st.info("No results yet: run workloads, upload a file, or choose the sample.")
    else:
        device = results.get("device", {})
        st.subheader(
            f"{plain(device.get('name', 'Device'))} ({plain(device.get('type', '?'))})", divider="gray"
        )
        match = device.get("catalog_match")
        if match:
            st.caption(f"Catalog row: {plain(match.get('name'))} ({plain(match.get('reason'))})")
            ratios = views.datasheet_rows(results)
            if ratios:
                st.dataframe(ratios, hide_index=True, width="stretch")
        records = results.get("results", [])
        bandwidth = [r for r in records if r.get("kind") == "bandwidth"]
        if bandwidth:
            caches = device.get("cpu", {}).get("caches", []) if device.get("type") == "cpu" else []
            st.plotly_chart(bandwidth_figure(bandwidth, caches), key="hw_bw")
        points = measured_roofline_points()
        catalog = {a.name: a for a in load_catalog()}
        if points:
            matched = catalog.get(match["name"]) if match else None
            if matched is not None and matched.supports("bf16"):
                st.plotly_chart(roofline_figure([matched], "bf16", [], points), key="hw_roofline")
            else:
                st.caption(
                    "Matmul results also appear on the Roofline page; "
                    "this device has no datasheet row to draw its own roof."
                )
            st.dataframe(views.matmul_rows(records), hide_index=True, width="stretch")
        quant = views.quantization_rows(records)
        if quant:
            st.markdown("**Quantization on a real tensor: torch's casts vs the simulator**")
            st.dataframe(quant, hide_index=True, width="stretch")
        memory_rows = transformer_memory_rows()
        if memory_rows:
            st.markdown("**Memory of a small transformer step: measured vs the Will it fit? model**")
            st.dataframe(memory_rows, hide_index=True, width="stretch")
        reduce_records = [r for r in records if r.get("kind") == "allreduce"]
        if reduce_records:
            st.plotly_chart(allreduce_figure(reduce_records), key="hw_allreduce")
            st.dataframe(views.allreduce_rows(reduce_records), hide_index=True, width="stretch")
        for s in results.get("statuses", []):
            if not s.get("ok"):
                st.caption(f"{plain(s.get('workload'))}: {plain(s.get('message'), 400)}")

else:
    prose(page.section("method"))

notice(page.section("notice"))
