"""Measure your hardware: real results beside the theory, this machine, live telemetry, workloads.

torch and pynvml are imported only inside measure/ functions, which this page calls when the
reader presses a button — never when the page opens. It opens on a shipped sample (the H100 run),
clearly labelled, so there is always something real to look at.
"""

from __future__ import annotations

import json
from collections import deque

import streamlit as st

from charts.measure import telemetry_figure
from content import load_page
from content.schema import params_for
from measure import lock, views
from measure.env import HOSTED_NOTICE, is_hosted
from measure.last_run import load_last_run, save_last_run
from measure.results import load_results
from ui.chart import show
from ui.controls import plain, prose
from ui.layout import notice_box, simulator_layout
from ui.measured import OWN_KEY, RESULTS_ID_KEY, RESULTS_NAME_KEY, current_results, use_results
from ui.state import PageState
from ui.views import your_hardware as view
from ui.views.common import as_spec

MAX_UPLOAD_BYTES = 5 * 2**20

page = load_page("your_hardware")
state = PageState(params_for("your-hardware"), page.meta.get("presets", []))
layout = simulator_layout(page, state, advanced_label="About these measurements", answer_first=False)
with layout.controls:
    section = state.widget("hw_section", widget="segmented", label="Section")
    if section == "results":
        row = st.columns([2, 3])
        source = state.widget("hw_source", container=row[0])
        if source == "sample":
            state.widget("hw_sample", container=row[1])
    if section == "browser":
        state.widget("hw_quick")
    if section == "run":
        row = st.columns([1, 1, 3])
        device = row[0].text_input("Device", "auto", key="hw_device", help="auto, cpu, cuda, cuda:1 or mps")
        state.widget("hw_quick", container=row[1])
        state.widget("hw_workloads", container=row[2])
with layout.advanced:  # the browser section's records are measured differently: its own method
    prose(page.section("browser-method" if section == "browser" else "method"))
state.sync_out()


def show_status(status, *, hint: bool = True) -> None:
    """A measure/ status (object or dict) as a message a reader can act on."""
    s = status if isinstance(status, dict) else status.to_dict()
    text = s["message"] + (
        f"\n\n**What to do:** {s['install_hint']}" if hint and s.get("install_hint") else ""
    )
    (st.success if s["ok"] else st.info)(text)


def install_box() -> None:
    """One box that says how to measure, fitting where the app runs (a hosted server or a laptop)."""
    st.info(page.section("install-hosted" if is_hosted() else "install-local"), icon=":material/download:")


def torch_installed() -> bool:
    """Whether torch can be imported here (found on the path, not imported)."""
    import importlib.util

    return importlib.util.find_spec("torch") is not None


def last_run_as_own() -> tuple | None:
    """The last finished run on this server (it survives a reload) as this session's own results."""
    document = load_last_run()
    if document is None:
        return None
    created = str(document.get("created_utc", ""))
    own = (document, f"the last run on this server ({created[:16].replace('T', ' ')} UTC)", f"run:{created}")
    st.session_state[OWN_KEY] = own
    return own


if section == "results":
    if state["hw_source"] == "sample":
        name = state["hw_sample"]
        use_results(view.sample_document(name), f"the shipped sample {name}", f"sample:{name}")
    else:
        with layout.main:
            uploaded = st.file_uploader(
                "Upload a results file from `python -m measure --json`", type=["json"], key="hw_upload"
            )
            if uploaded is not None and st.session_state.get("hw_uploaded_id") != uploaded.file_id:
                st.session_state["hw_uploaded_id"] = uploaded.file_id
                if uploaded.size > MAX_UPLOAD_BYTES:
                    st.session_state["hw_upload_error"] = (
                        f"{plain(uploaded.name)} is {uploaded.size / 2**20:,.1f} MiB; results files are far "
                        "smaller (limit 5 MiB)."
                    )
                else:
                    try:
                        document = json.loads(load_results(uploaded.getvalue()).to_json())
                        if view.is_browser_document(document):  # measured in a browser: keep its GPU
                            document = view.finalize_upload(document, uploaded.file_id)
                            st.session_state["hw_upload_note"] = view.SELF_REPORTED
                        else:
                            st.session_state["hw_upload_note"] = ""
                        st.session_state[OWN_KEY] = (
                            document,
                            f"your file {plain(uploaded.name, 80)}",
                            f"upload:{uploaded.file_id}",
                        )
                        st.session_state["hw_upload_error"] = ""
                    except ValueError as exc:
                        st.session_state["hw_upload_error"] = (
                            f"{plain(uploaded.name, 80)} cannot be used: {plain(exc, 400)}"
                        )
            error = st.session_state.get("hw_upload_error")
            if error:
                st.error(error)
            elif st.session_state.get("hw_upload_note"):
                st.caption(st.session_state["hw_upload_note"])
            own = st.session_state.get(OWN_KEY) or last_run_as_own()
            if own is not None:
                use_results(*own)
            else:
                if torch_installed():  # say what to do next, not "install torch" once more
                    st.info(
                        "No results of your own yet. PyTorch is installed here: open **Run** above to "
                        "measure this computer, or upload a file from "
                        "`python -m measure --quick --json my-results.json`.",
                        icon=":material/speed:",
                    )
                else:
                    st.info("No results of your own yet: run the workloads here, or upload a file.")
                    install_box()
    results = current_results()
    shown_name = st.session_state.get(RESULTS_NAME_KEY, "")
    if results is not None and (state["hw_source"] == "sample" or st.session_state.get(OWN_KEY)):
        device = results.get("device", {})
        built = view.results_view(st.session_state.get(RESULTS_ID_KEY, shown_name), results)
        with layout.verdict:
            st.header(
                f"{plain(device.get('name', 'Device'))} ({plain(device.get('type', '?'))})", divider="gray"
            )
            st.caption(f"Showing {shown_name}. Its points also appear on the other pages in this session.")
            if "datasheet" in built["tables"]:
                st.dataframe(built["tables"]["datasheet"], hide_index=True, width="stretch")
        view.results_charts(results, layout.main, "hw", name=st.session_state.get(RESULTS_ID_KEY, shown_name))
        with layout.more:
            for table, title in (
                ("matmul", "Matmuls: achieved FLOP/s"),
                ("quantization", "Quantization on a real tensor: torch's casts vs the simulator"),
                ("transformer", "Memory of a small transformer step: measured vs the Will it fit? model"),
            ):
                if table in built["tables"]:
                    st.markdown(f"**{title}**")
                    st.dataframe(built["tables"][table], hide_index=True, width="stretch")
            for s in results.get("statuses", []):
                if not s.get("ok"):
                    st.caption(f"{plain(s.get('workload'))}: {plain(s.get('message'), 400)}")
    notice_box(page.section("notice"), layout.notice)

elif section == "browser":
    with layout.main:
        prose(page.section("browser"))
    view.render_browser(state, layout.main, "hw")
    with layout.more:
        st.header("What a browser measurement cannot see", divider="gray")
        prose(page.section("browser-limits"))
    notice_box(page.section("browser-notice"), layout.notice)

elif section == "detect":
    with layout.main:
        if is_hosted():
            st.warning(HOSTED_NOTICE, icon=":material/cloud:")
        if st.button(
            "Detect hardware", type="primary", help="Imports PyTorch and NVML if installed", key="hw_detect"
        ):
            from measure.device import discover

            with st.spinner("Looking at this machine…"):
                st.session_state["hw_report"] = discover().to_dict()
        report = st.session_state.get("hw_report")
        if report is None:
            st.caption(
                "Nothing has been probed yet. The button imports PyTorch and NVML, which takes a second."
            )
        else:
            cpu = report["cpu"]
            st.subheader("CPU", divider="gray")
            st.markdown(
                f"**{plain(cpu.get('model') or 'Unknown CPU')}** · {cpu.get('physical_cores') or '?'} cores "
                f"({cpu.get('logical_cores') or '?'} threads) · {plain(cpu.get('os', ''))}"
            )
            caches = views.cache_rows(cpu)
            if caches:
                st.dataframe(caches, hide_index=True)
            st.subheader("PyTorch, CUDA, NVML, Apple MPS", divider="gray")
            torch_missing = (
                not report["torch_status"]["ok"] and report["torch_status"].get("code") == "no_torch"
            )
            if torch_missing:
                install_box()
            for name in ("torch_status", "cuda_status", "nvml_status", "mps_status"):
                if torch_missing and name == "torch_status":
                    continue
                show_status(report[name], hint=not torch_missing)
            for gpu in report.get("cuda", []):
                st.markdown(
                    f"**GPU {gpu.get('index')}: {plain(gpu.get('name'))}** — "
                    f"{(gpu.get('total_memory_bytes') or 0) / 2**30:,.1f} GiB, "
                    f"{gpu.get('sm_count')} SMs, compute capability {plain(gpu.get('compute_capability'))}"
                )

elif section == "telemetry":
    with layout.main:
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
                show(as_spec(telemetry_figure(list(history))), key="chart-hw-telemetry")

            telemetry_panel()

elif section == "run":
    with layout.main:
        if is_hosted():
            st.warning(HOSTED_NOTICE, icon=":material/cloud:")
        holder = lock.busy_info()
        if holder:
            st.warning(
                f"Another measurement is running on this server ({holder['label']}). Try again shortly."
            )
        workloads = state["hw_workloads"]
        if st.button("Run", type="primary", disabled=not workloads, key="hw_run"):
            from measure.suite import run_suite

            bar = st.progress(0.0, text="Starting…")
            outcome = run_suite(
                device.strip() or "auto",
                quick=state["hw_quick"],
                workloads=list(workloads),
                progress=lambda fraction, message: bar.progress(min(max(fraction, 0.0), 1.0), text=message),
            )
            bar.empty()
            if hasattr(outcome, "records"):
                document = json.loads(outcome.to_json())
                own = (
                    document,
                    "your run on this server",
                    f"run:{document.get('created_utc', '')}:{id(document)}",
                )
                st.session_state[OWN_KEY] = own
                use_results(*own)
                kept = save_last_run(document)  # a reload starts a new session: the run is read back
                st.success(
                    f"{len(outcome.records)} results. Open **Results** (your own) to see them."
                    + (" They are kept on this server and survive a reload of the page." if kept else "")
                )
                for s in outcome.statuses:
                    if not s.get("ok"):
                        st.info(f"{s['workload']}: {s['message']}")
            elif getattr(outcome, "code", "") == "no_torch" or (
                isinstance(outcome, dict) and outcome.get("code") == "no_torch"
            ):
                install_box()
            else:
                show_status(outcome)
        st.caption("Streamlit's Stop button (top right) cancels a run at its next progress update.")

else:
    with layout.main:
        prose(page.section("method"))

with layout.more:
    st.header("What this page does", divider="gray")
    prose(page.body)
