"""The gap between the decode bound and what real code reaches, from a real measurement.

The Roofline and Will it fit? pages state an upper bound (bytes per step ÷ bandwidth). This shows,
beside it, what the shipped H100 run measured for Llama-3.1-8B: eager PyTorch, and the same loop
captured in CUDA Graphs — and, when the reader has loaded results with decode records of their
own, those too. No torch: the sample is a JSON document.
"""

from __future__ import annotations

from typing import Any

import streamlit as st

from measure.samples import H100_SAMPLE
from ui.controls import plain, prose
from ui.measured import current_results, decode_gap_rows, device_label, shipped_sample
from ui.views.common import arrow

GPU_SAMPLE = H100_SAMPLE


@st.cache_data(max_entries=2, show_spinner=False)
def _sample_rows(name: str):
    return arrow(decode_gap_rows(shipped_sample(name)))


def decode_gap(text: str, container: Any = None) -> None:
    """``text`` (the page's words about it), then the measured rows: the sample's and the reader's."""
    target = container or st
    with target.expander("The bound against what real code reaches (measured on an H100)", expanded=False):
        prose(text)
        st.dataframe(_sample_rows(GPU_SAMPLE), hide_index=True, width="stretch")
        st.caption(f"From `{GPU_SAMPLE}`, a run measured by this project (Your hardware page).")
        own = current_results()
        rows = decode_gap_rows(own) if own else []
        if rows:
            st.markdown(
                f"**Measured on {plain(device_label(own))}** (your results, loaded on Your hardware):"
            )
            st.dataframe(arrow(rows), hide_index=True, width="stretch")
