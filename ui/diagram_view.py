"""A term's diagram on a page: drawn once per process and parameters (charts/diagrams), with its
alt text, its numbers one click away and its caption; hardware diagrams redraw for another GPU."""

from __future__ import annotations

import inspect

import streamlit as st

from charts.diagrams import build, builders, gpu_choices, takes_gpu
from simulators.hardware import load_catalog
from ui.chart import show


def show_diagram(diagram_id: str, *, key: str) -> None:
    """Draw the diagram ``diagram_id``; a GPU picker when its builder takes ``gpu``, offering only
    the accelerators it draws truthfully, and a caption naming the ones left out and why."""
    builder = builders().get(diagram_id)
    if builder is None:
        return
    params = {}
    left_out = ""
    if takes_gpu(diagram_id):
        default = inspect.signature(builder).parameters["gpu"].default
        choices = gpu_choices(diagram_id)
        names = {a.id: a.name for a in load_catalog()}
        ids = list(choices.ids)
        params["gpu"] = st.selectbox(
            "Draw it for",
            ids,
            index=ids.index(default) if default in ids else 0,
            format_func=names.get,
            key=f"{key}-gpu",
        )
        left_out = choices.note()
    try:
        diagram = build(diagram_id, **params)
    except (KeyError, ValueError) as exc:
        st.info(f"This diagram cannot be drawn for that accelerator: {exc}. Pick another.")
        return
    show(diagram.spec, key=key, alt=diagram.alt, table=diagram.table)
    if diagram.caption:
        from ui.controls import term_markdown

        st.caption(term_markdown(diagram.caption))
    if left_out:
        st.caption(left_out)
