"""Will it fit? on the engine a reader runs: vLLM's start-up ledger and transformers' prefill peak.

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
        _render_log_diff(page, startup)


def _render_log_diff(page: Any, startup: Any) -> None:
    st.header("Paste your vLLM start-up log", divider="gray")
    st.markdown(term_markdown(page.section("log")))
    text = st.text_area(
        "Your vLLM start-up log",
        key=LOG_KEY,
        height=160,
        max_chars=MAX_LOG_CHARS,
        placeholder="INFO … Available KV cache memory: 58.11 GiB\nINFO … GPU KV cache size: 476,016 tokens",
    )
    if not text.strip():
        return
    result = view.log_comparison(startup, text)
    if result["error"]:
        st.error(f"That log cannot be read: {plain(result['error'], 400)}")
        return
    differ = [r for r in result["rows"] if not r["agrees"]]
    if differ:
        names = ", ".join(r["term"].removesuffix("_bytes").replace("_", " ") for r in differ)
        st.warning(
            f"Your engine differs from the prediction on: {plain(names)}. The table says why each may."
        )
    else:
        st.success(
            "Every term your log prints agrees with the prediction (KV within 2 %, others within 1 %)."
        )
    view.show(result["chart"], key="chart-fit-vllm-log", container=st)
    st.dataframe(result["table"], hide_index=True, width="stretch")
    if result["parsed"].get("ranks", 1) > 1:
        st.caption(f"The log has {result['parsed']['ranks']} workers; the first worker's figures are shown.")


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
    view.show(out["chart"], key="chart-fit-transformers", container=layout.main)
    notice_box(page.section("transformers_notice"), layout.notice)
    with layout.more:
        st.header("transformers' prefill, part by part", divider="gray")
        st.markdown(term_markdown(page.section("transformers")))
        st.dataframe(out["parts"], hide_index=True, width="stretch")
        for note in out["notes"]:
            st.info(plain(note, 400))
