"""Will it fit, and how fast? Memory per GPU and speed bounds for any decoder-only model."""

from __future__ import annotations

import streamlit as st

from content import load_page
from content.schema import CUSTOM_MODEL, params_for
from simulators.fit import format_seconds
from ui.config_source import ConfigSourceError, decode_config, encode_config, fetch_hub_config
from ui.controls import format_bytes, plain, prose, term_markdown
from ui.decode_gap import decode_gap
from ui.engine_view import (
    render_any_log,
    render_commands,
    render_compare,
    render_engine,
    render_transformers,
    render_vllm,
)
from ui.layout import notice_box, simulator_layout
from ui.measured import transformer_memory_rows
from ui.state import PageState
from ui.views import will_it_fit as view
from ui.views.common import metric_row

# What the page takes in, so that anything too large still reaches the model's reader and is
# refused with a message where the reader looks (a config.json is a few kB; the reader's limit is
# 1 MB). The upload box states the server's own limit (server.maxUploadSize, 5 MB in
# .streamlit/config.toml): a larger box let a 6 MB file through the browser only for the server
# to refuse it with "AxiosError: Request failed with status code 413". Beyond it the browser
# refuses the file on its chip.
MAX_UPLOAD_MB = int(st.get_option("server.maxUploadSize"))
MAX_PASTE_CHARS = 20_000_000
LINK_LOADED = "_fit_cfg_loaded"  # the link's config last put into the paste box

page = load_page("will_it_fit")
state = PageState(params_for("will-it-fit"), page.meta.get("presets", []))
layout = simulator_layout(page, state, controls_beside_verdict=True)

with layout.controls:
    row = st.columns([3, 2, 3, 1])
    state.widget("fit_model", container=row[0])
    task = state.widget("fit_task", container=row[1])
    state.widget("fit_gpu", container=row[2])
    state.widget("fit_gpus", container=row[3])
    row = st.columns(4)
    if task == "inference":
        gguf = state["fit_engine"] in ("llamacpp", "ollama")
        # llama.cpp and Ollama store what their GGUF file and -ctk say, not the page's formats
        state.widget("fit_quant" if gguf else "fit_wfmt", container=row[0])
        state.widget("fit_ctk" if gguf else "fit_kvfmt", container=row[1])
        state.widget("fit_ctx", container=row[3])
        engine = state.widget("fit_engine", container=row[2])
        row = st.columns(4)
        if engine == "vllm":
            state.widget("fit_util", container=row[0])
            state.widget("fit_seqs", container=row[1])
            state.widget("fit_total", container=row[2])
        elif engine == "sglang":
            state.widget("fit_frac", container=row[0])
            state.widget("fit_total", container=row[1])
        elif engine in ("llamacpp", "ollama"):
            state.widget("fit_np", container=row[0])
            state.widget("fit_host", container=row[1])
            state.widget("fit_total", container=row[2])
            if engine == "llamacpp":
                row = st.columns(4)
                state.widget("fit_ngl", container=row[0])
                state.widget("fit_ncmoe", container=row[1])
        elif engine == "compare":
            state.widget("fit_util", container=row[0])
            state.widget("fit_frac", container=row[1])
            state.widget("fit_quant", container=row[2])
            state.widget("fit_total", container=row[3])
        else:
            state.widget("fit_batch", container=row[0])
            if engine == "transformers":
                state.widget("fit_kernels", container=row[1])
    else:
        state.widget("fit_recipe", container=row[0])
        state.widget("fit_seq", container=row[1])
        state.widget("fit_mb", container=row[2])
        state.widget("fit_zero", container=row[3])
    if state["fit_model"] == CUSTOM_MODEL:
        with st.expander("Your config.json", expanded=True):
            prose(page.section("custom"))
            hub_id = state.widget("fit_hf", placeholder="Qwen/Qwen3-32B")
            uploaded = st.file_uploader(
                "Upload config.json", type=["json"], key="fit_upload", max_upload_size=MAX_UPLOAD_MB
            )
            link_config = state["fit_cfg"]
            if link_config and st.session_state.get(LINK_LOADED) != link_config:
                # a shared link's config fills the paste box once; the reader's edits win after that
                st.session_state[LINK_LOADED] = link_config
                try:
                    st.session_state["fit_paste"] = decode_config(link_config)
                except ConfigSourceError as exc:
                    st.error(str(exc))
            pasted = st.text_area("…or paste it here", key="fit_paste", height=160, max_chars=MAX_PASTE_CHARS)
            raw = uploaded.getvalue().decode("utf-8", errors="replace") if uploaded is not None else pasted
            packed = ""
            if raw:
                packed = encode_config(raw) or ""
                if packed:
                    st.caption(
                        "The address carries this config: **Share** gives a link that opens this view."
                    )
                else:
                    st.caption("This config is too large to carry in a link: send the file with the link.")
            elif hub_id:
                try:
                    raw = fetch_hub_config(hub_id)
                    st.caption(f"Read from the Hugging Face Hub: {plain(hub_id, 200)}/config.json.")
                except ConfigSourceError as exc:
                    st.error(str(exc))
            state.set_value("fit_cfg", packed)
            st.session_state[view.CONFIG_KEY] = raw or ""
    else:
        state.set_value("fit_cfg", "")
        state.set_value("fit_hf", "")
with layout.advanced:
    if task == "inference" and engine == "vllm":
        row = st.columns(3)
        state.widget("fit_vver", container=row[0])
        state.widget("fit_pp", container=row[1])
        state.widget("fit_mbt", container=row[2])
        row = st.columns(2)  # the two switches on a row of their own: their flags read in full
        state.widget("fit_eager", container=row[0])
        state.widget("fit_nochunk", container=row[1])
    row = st.columns(3)
    state.widget("fit_attn", container=row[0])
    if task == "inference":
        state.widget("fit_mfu", container=row[1])
    else:
        state.widget("fit_recompute", container=row[1])
        if task in ("lora", "qlora"):
            state.widget("fit_lora_rank", container=row[2])
            state.widget("fit_lora_mods")
            if not state["fit_lora_mods"]:
                st.warning("Choose at least one module to adapt; showing q_proj and v_proj meanwhile.")
state.sync_out()

values = state.values
out = view.current(state)
if out["error"] or out["spec"] is None:
    view.render_memory(state, layout.verdict, "fit")
    st.stop()

with layout.verdict:
    for line in view.assumption_notes(values, out["spec"]):
        st.caption(line)

engine = values["fit_engine"] if values["fit_task"] == "inference" else "ideal"
if engine == "vllm":
    render_vllm(page, state, layout)
elif engine in ("sglang", "llamacpp", "ollama"):
    render_engine(page, state, layout)
elif engine == "compare":
    render_compare(page, state, layout)
elif engine == "transformers":
    render_transformers(page, state, layout)
else:
    with layout.verdict:
        st.markdown(f"**{out['title']}** · {out['attention']}")
        metric_row(st, view.verdict(out))
    view.show(out["chart"], key="chart-fit-memory", container=layout.main)
    if out.get("decode"):
        view.render_decode_time(state, layout.main, "fit")
        view.render_cache_by_kind(state, layout.main, "fit")
    notice_box(page.notice("" if values["fit_task"] == "inference" else "training"), layout.notice)

if engine in ("vllm", "sglang", "llamacpp", "ollama", "compare"):
    render_commands(page, state, layout.more)
    with layout.more:
        render_any_log(page, state)

with layout.more:
    if out["spec"].defaulted_fields:
        st.info(
            "Not in this config.json, so taken from the transformers config class's defaults (as"
            f" transformers itself does): {plain(', '.join(out['spec'].defaulted_fields), 600)}."
        )
    if engine != "ideal":
        st.header("What the model needs, on an idealised runtime", divider="gray")
        st.markdown(term_markdown(page.section("ideal")))
        metric_row(st, view.verdict(out))
        view.show(out["chart"], key="chart-fit-memory", container=st)
        if out.get("decode"):
            view.render_cache_by_kind(state, st, "fit")
    if not out["fits"]:
        needed = out["gpus_needed"]
        st.warning(
            f"Does not fit: {format_bytes(out['total'])} per GPU against {format_bytes(out['capacity'])}. "
            + (
                f"Splitting over {needed} × {view.catalog()[values['fit_gpu']].name} would fit."
                if needed
                else "No number of these GPUs fits."
            )
        )
    for line in out["memory"].notes:
        st.info(line)

    st.header("Where every byte goes", divider="gray")
    st.dataframe(out["parts"], hide_index=True, width="stretch")
    prose(page.section("parts"))

    if out.get("decode"):
        st.header("How fast?", divider="gray")
        decode = out["decode"]
        metric_row(
            st,
            [
                {
                    "label": "Streaming the bytes, per step",
                    "value": format_seconds(decode["memory_time_s"]),
                    "help": f"{decode['bytes'] / 1e9:,.2f} GB ÷ memory bandwidth",
                },
                {
                    "label": "Doing the FLOPs, per step",
                    # a chip without a sourced peak has no compute roof: say so, never "0.0 µs"
                    "value": format_seconds(decode["compute_time_s"]) if decode["compute_time_s"] else "—",
                    "help": "FLOPs ÷ dense peak FLOP/s"
                    if decode["compute_time_s"]
                    else "No sourced peak FLOP/s for this chip and format in the catalog",
                },
                {
                    "label": "Time to first token",
                    "value": format_seconds(decode["prefill_s"]) if decode["prefill_s"] else "—",
                    "help": "Prefill of the whole context at the chosen MFU; the output head runs on the last"
                    " token only, as serving engines compute logits",
                },
            ],
        )
        st.dataframe(out["speed_table"], hide_index=True, width="stretch")
        prose(page.section("speed"))
        decode_gap(page.section("eager"))
        st.header("Inverse questions", divider="gray")
        q1, q2 = st.columns(2)
        gpu_name = view.catalog()[values["fit_gpu"]].name
        n_gpus, batch = values["fit_gpus"], values["fit_batch"]
        q1.markdown(f"**Longest context that fits** on {n_gpus} × {gpu_name} at batch {batch}:")
        q1.markdown(f"### {out['longest']}")
        q2.markdown(
            f"**Which weight format fits** at {values['fit_ctx']:,} tokens, batch {values['fit_batch']}:"
        )
        q2.dataframe(out["formats"], hide_index=True, width="stretch")

    st.header("Every accelerator in the catalog", divider="gray")
    n_gpus = values["fit_gpus"]
    st.caption(f"Same settings on {n_gpus} device(s) of each kind. {page.section('catalog')}")
    st.dataframe(
        view.catalog_rows(view.relevant(values), view.config_in_use(values)), hide_index=True, width="stretch"
    )
    measured_rows = transformer_memory_rows()
    if measured_rows:
        with st.expander("Measured on your hardware: a small transformer step vs this model", expanded=True):
            st.dataframe(measured_rows, hide_index=True, width="stretch")
            st.caption(
                "From the results loaded on the Your hardware page; the prediction uses the same functions."
            )
    st.header("Checked against a real H100", divider="gray")
    prose(page.section("measured"))
    st.dataframe(view.validation_table(), hide_index=True, width="stretch")
    st.header("How the calculator works", divider="gray")
    prose(page.body)
state.sync_out()  # the controls drawn under the answer (users, GGUF file) reach the address too
