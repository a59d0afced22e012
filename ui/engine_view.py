"""Will it fit? on the engine a reader runs: vLLM's, SGLang's, llama.cpp's and Ollama's start-up
ledgers, the three side by side, the command that fits, any engine's pasted log, and
transformers' prefill peak.

Layout and widgets only: the numbers come from ``ui.views.will_it_fit.engine_outcome`` and
``transformers_outcome`` (cached plain data built by ``simulators.engines``).
"""

from __future__ import annotations

from typing import Any

import streamlit as st

from ui.controls import plain, term_markdown
from ui.layout import notice_box
from ui.views import will_it_fit as view
from ui.views.common import metric_row

LOG_KEY = "fit_vllm_log"
MAX_LOG_CHARS = 2_000_000


def render_vllm(page: Any, state: Any, layout: Any) -> None:
    """The verdict, the ledger as a bar and as the log lines vLLM prints, and a pasted log's diff."""
    values = state.values
    out = view.engine_outcome(view.relevant(values), view.config_in_use(values))
    with layout.verdict:
        if out["error"]:
            st.error(f"vLLM cannot be sized for this setting: {plain(out['error'], 600)}")
            return
        startup = out["startup"]
        st.markdown(f"**{plain(out['title'])}** · {plain(startup.weights_label)}")
        if out.get("quantized"):
            st.caption(
                "The checkpoint's own quantization_config sets the weights' format; the Weights"
                " control applies to unquantized checkpoints."
            )
        metric_row(st, view.engine_verdict(out))
        if startup.verdict != "fits":
            (st.error if startup.verdict == "refused" else st.warning)(plain(startup.message, 800))
    view.show(out["chart"], key="chart-fit-vllm", container=layout.main)
    with layout.main:
        st.markdown("**What vLLM prints** (the memory lines of its start-up log, as it words them)")
        st.code("\n".join(out["lines"]), language=None, wrap_lines=True)
    notice_box(page.section("engine_notice"), layout.notice)
    with layout.more:
        st.header("vLLM's ledger, term by term", divider="gray")
        st.markdown(term_markdown(page.section("engine")))
        st.dataframe(view.ledger_table(startup), hide_index=True, width="stretch")
        for note in startup.notes:
            st.info(plain(note, 400))
        st.caption(
            f"Device total: {plain(startup.total_source, 400)}. Batch limits: max_num_batched_tokens"
            f" {startup.max_num_batched_tokens:,}, max_num_seqs {startup.max_num_seqs:,}; blocks of"
            f" {startup.block_size} tokens."
        )


def render_any_log(page: Any, state: Any) -> None:
    """One box for any engine's start-up log: the engine and version it is from, what it ran with
    that differs from the page (said before any term), a button that takes its settings, every
    memory figure it printed, and the diff term by term in GiB with causes."""
    st.header("Paste any engine's start-up log", divider="gray")
    st.markdown(term_markdown(page.section("log")))
    text = st.text_area(
        "A vLLM, SGLang, llama.cpp or Ollama start-up log",
        key=LOG_KEY,
        height=160,
        max_chars=MAX_LOG_CHARS,
        placeholder="INFO … Available KV cache memory: 58.11 GiB\n"
        "load_tensors:        CUDA0 model buffer size =  4403.49 MiB\n"
        "KV Cache is allocated. #tokens: 411704, K size: 25.13 GB, V size: 25.13 GB",
    )
    if not text.strip():
        return
    values = state.values
    result = view.log_comparison_any(text, values, view.config_in_use(values))
    if result["error"]:
        st.error(f"That log cannot be read: {plain(result['error'], 400)}")
        return
    version = result["version"]
    st.markdown(
        f"**{plain(result['engine_name'])}** start-up"
        + (f", version {plain(str(version), 60)}" if version else ", no version printed")
        + "."
    )
    if result["mismatches"]:
        st.warning(
            "The log ran with other settings than the page, so a term may differ for that reason first:\n\n"
            + "\n".join(f"- {plain(m, 300)}" for m in result["mismatches"])
        )
    settings, unsettable = {}, []
    for key, value in result["settings"].items():
        if values.get(key) == value:
            continue
        try:
            state.params[key].coerce(value)
        except ValueError:  # a value the control does not offer (max_num_seqs off its list)
            unsettable.append(f"{view.SETTING_NAMES.get(key, key)} {view._settings_words(key, value)}")
            continue
        settings[key] = value
    if unsettable:
        st.caption(f"The page's controls cannot take: {plain(', '.join(unsettable), 300)}.")
    if settings:
        st.button(
            "Use this log's settings",
            key="fit_use_log",
            on_click=_use_settings,
            args=(state, settings),
            help="Sets "
            + ", ".join(
                f"{view.SETTING_NAMES.get(k, k)} = {view._settings_words(k, v)}"
                for k, v in settings.items()
                if k != "fit_task"
            ),
        )
    if result["predict_error"]:
        st.error(
            f"{plain(result['engine_name'])} cannot be sized for the page's settings:"
            f" {plain(result['predict_error'], 400)}"
        )
    elif not result["rows"]:
        st.info(
            "The log prints none of the terms this page predicts for that engine: its figures are"
            " listed below."
        )
    else:
        differ = [r["Term"] for r in result["rows"] if r["Agrees"] == "no"]
        if differ:
            st.warning(
                f"Differs from the prediction on: {plain(', '.join(differ), 400)}."
                " The table says why each may."
            )
        else:
            st.success(
                "Every term the log prints agrees with the prediction (counts within 2 %, sizes within 1 %)."
            )
        st.dataframe(result["table"], hide_index=True, width="stretch")
    with st.expander("Every memory figure read from the log (GiB)"):
        st.dataframe(result["figures"], hide_index=True, width="stretch")
    if result["parsed"].get("ranks", 1) > 1:
        st.caption(f"The log has {result['parsed']['ranks']} workers; the first worker's figures are shown.")


def _use_settings(state: Any, settings: dict[str, Any]) -> None:
    """Button callback: the log's settings become the page's controls (each checked by its schema)."""
    for key, value in settings.items():
        try:
            state.set_value(key, value)
        except ValueError:
            continue  # a value the control cannot take (e.g. max_num_seqs off its list) stays the page's


def render_engine(page: Any, state: Any, layout: Any) -> None:
    """SGLang's, llama.cpp's or Ollama's verdict, its ledger as a bar (the bar every engine shares),
    the lines it prints, and a refusal in its own words."""
    values = state.values
    out = view.engine_ledger_outcome(view.relevant(values), view.config_in_use(values))
    name = {"sglang": "SGLang", "llamacpp": "llama.cpp", "ollama": "Ollama"}[values["fit_engine"]]
    with layout.verdict:
        if out["error"]:
            st.error(f"{name} cannot be sized for this setting: {plain(out['error'], 600)}")
            return
        st.markdown(f"**{plain(out['title'])}**")
        metric_row(st, out["metrics"])
        if out["message"]:
            (st.error if out["verdict"] in ("refused", "will not start") else st.warning)(
                plain(out["message"], 800)
            )
    if out["chart"] is not None:
        view.show(out["chart"], key=f"chart-fit-{values['fit_engine']}", container=layout.main)
    with layout.main:
        st.markdown(
            f"**What {name} prints** (its memory lines, as it words them, with the predicted figures)"
        )
        st.code("\n".join(out["lines"]), language=None, wrap_lines=True)
    notice_box(page.notice("sglang" if values["fit_engine"] == "sglang" else "llamacpp"), layout.notice)
    with layout.more:
        st.header(f"{name}'s ledger, term by term", divider="gray")
        st.markdown(term_markdown(page.section("sglang" if values["fit_engine"] == "sglang" else "llamacpp")))
        st.dataframe(out["table"], hide_index=True, width="stretch")
        for note in out["notes"]:
            st.info(plain(note, 400))
        st.caption(plain(out["source"], 400))


def render_compare(page: Any, state: Any, layout: Any) -> None:
    """The same model and GPU on vLLM, SGLang and llama.cpp: one chart, one table, term by term."""
    values = state.values
    out = view.side_by_side(view.relevant(values), view.config_in_use(values))
    with layout.verdict:
        if out["error"]:
            st.error(f"No engine can be sized for this setting: {plain(out['error'], 800)}")
            return
        rows = []
        for name, text in out["kv"].items():
            head = text.split(" — ")[0].split(" (")[0]  # "N tokens in X GiB", or "X GiB"
            tokens, _, size = head.rpartition(" in ")
            row = {"label": f"KV cache, {name}", "value": size or head, "help": text}
            if tokens:
                row |= {"delta": tokens, "delta_color": "off", "delta_arrow": "off"}
            rows.append(row)
        metric_row(st, rows)
        st.markdown(
            "**Where each puts the memory:** " + "; ".join(plain(line, 300) for line in out["why"]) + "."
        )
        for line in out["refused"]:
            st.warning(plain(line, 600))
    view.show(out["chart"], key="chart-fit-compare", container=layout.main)
    notice_box(page.notice("compare"), layout.notice)
    with layout.more:
        st.header("Three engines, term by term", divider="gray")
        st.markdown(term_markdown(page.section("compare")))
        st.dataframe(out["table"], hide_index=True, width="stretch")


def render_commands(page: Any, state: Any, container: Any) -> None:
    """The command that fits on each engine, searched with the engine's own functions, as a block to
    copy, with the lines it will print and the engine's own suggestion beside it."""
    values = state.values
    with container:
        st.header("The command that fits", divider="gray")
        st.markdown(term_markdown(page.section("command")))
        row = st.columns([1, 1, 2])
        state.widget("fit_users", container=row[0])
        if values["fit_engine"] not in ("llamacpp", "ollama", "compare"):
            state.widget("fit_quant", container=row[1])  # llama.cpp's file, drawn above on its own page
        st.caption(
            f"For {values['fit_users']:,} user(s) of {values['fit_ctx']:,} tokens on {values['fit_gpus']} ×"
            f" {view.catalog()[values['fit_gpu']].name} (the page's model, GPU, GPUs and context)."
        )
        out = view.commands_outcome(view.command_key(state.values), view.config_in_use(values))
        if out["error"]:
            st.error(plain(out["error"], 400))
            return
        tabs = st.tabs(["vLLM", "SGLang", "llama.cpp"])
        for tab, engine in zip(tabs, ("vllm", "sglang", "llama.cpp"), strict=True):
            c = out["engines"][engine]
            with tab:
                if c["error"]:
                    st.error(f"Refused: {plain(c['error'], 500)}")
                    continue
                box = {"fits": st.success, "tight": st.warning, "offloads": st.warning}.get(
                    c["verdict"], st.error
                )
                box(plain(c["message"], 800))
                st.code(c["command"], language="bash")
                st.markdown("**The lines it will print** (predicted)")
                st.code("\n".join(c["lines"]), language=None, wrap_lines=True)
                for check in c["checks"]:
                    st.caption(plain(check, 500))


def render_transformers(page: Any, state: Any, layout: Any) -> None:
    """The peak of one transformers prefill and the cache it leaves."""
    values = state.values
    out = view.transformers_outcome(view.relevant(values), view.config_in_use(values))
    with layout.verdict:
        if out["error"]:
            st.error(f"transformers cannot be sized for this setting: {plain(out['error'], 600)}")
            return
        st.markdown(f"**{plain(out['title'])}**")
        metric_row(st, out["metrics"])
        st.caption(plain(out["verdict"], 600))
    view.show(out["chart"], key="chart-fit-transformers", container=layout.main)
    notice_box(page.section("transformers_notice"), layout.notice)
    with layout.more:
        st.header("transformers' prefill, part by part", divider="gray")
        st.markdown(term_markdown(page.section("transformers")))
        st.dataframe(out["parts"], hide_index=True, width="stretch")
        for note in out["notes"]:
            st.info(plain(note, 400))
