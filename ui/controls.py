"""Shared widgets for simulator pages: URL-backed choices, presets, term links, notices.

Every control a simulator page shows lives in the URL, so a link reproduces the view:
sliders, numbers and toggles use Streamlit's ``bind="query-params"``; choices whose labels
are prose store a short id instead (``?gpu=h100-sxm``) through ``choice``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import streamlit as st

from content import CONTENT_DIR, ContentPage, link_terms, load_page
from glossary import terms_by_id
from ui.nav import PageInfo, term_href
from ui.url_state import seed_from_url, write_to_url

PRESET_PARAM = "preset"


def choice(
    label: str,
    options: Mapping[str, str],
    *,
    key: str,
    default: str,
    widget: str = "selectbox",
    help: str | None = None,
    container: Any = None,
) -> str:
    """A select box (or segmented control / radio) over ``options`` (id -> label), id in the URL."""
    ids = list(options)
    if default not in options:
        raise ValueError(f"default {default!r} is not one of {ids}")
    seed_from_url(key, ids, default)
    target = container or st
    if widget == "segmented":
        value = target.segmented_control(
            label, ids, format_func=options.__getitem__, key=key, help=help, selection_mode="single"
        )
        if value is None:  # a segmented control can be clicked off: treat as the default
            value = default
    elif widget == "radio":
        value = target.radio(label, ids, format_func=options.__getitem__, key=key, help=help, horizontal=True)
    else:
        value = target.selectbox(label, ids, format_func=options.__getitem__, key=key, help=help)
    write_to_url(key, value, default)
    return value


def multi_choice(
    label: str,
    options: Mapping[str, str],
    *,
    key: str,
    default: Sequence[str],
    max_selections: int | None = None,
    help: str | None = None,
    container: Any = None,
) -> list[str]:
    """A multiselect over ``options`` (id -> label); the URL holds the ids joined by commas."""
    ids = list(options)
    if key not in st.session_state:
        wanted = [i for i in (st.query_params.get(key) or "").split(",") if i in options]
        st.session_state[key] = wanted or list(default)
    target = container or st
    values = target.multiselect(
        label, ids, format_func=options.__getitem__, key=key, max_selections=max_selections, help=help
    )
    joined, default_joined = ",".join(values), ",".join(default)
    write_to_url(key, joined, default_joined)
    return list(values)


def term_markdown(text: str) -> str:
    """Markdown with ``[[term-id]]`` links resolved to the glossary page."""
    by_id = terms_by_id()
    return link_terms(text, term_href, lambda i: by_id[i].title if i in by_id else None)


def prose(text: str, **kwargs: Any) -> None:
    """Show content Markdown with its glossary links."""
    st.markdown(term_markdown(text), **kwargs)


def notice(text: str, title: str = "What to notice") -> None:
    """The short 'what to notice' text under a chart."""
    with st.container(border=True):
        st.markdown(f"**{title}**")
        st.markdown(term_markdown(text))


def presets(page: ContentPage) -> list[dict]:
    """The page's presets from its content front matter: ``[{id, label, params}]``."""
    return list(page.meta.get("presets") or [])


def _apply(params: Mapping[str, Any]) -> None:
    for key, value in params.items():
        st.session_state[key] = value


def apply_preset_from_url(page: ContentPage, session_flag: str) -> str | None:
    """Apply ``?preset=<id>`` once per session (teachers' and lessons' links); returns its label.

    The preset's widget values go into session state before the widgets are drawn, and the
    ``preset`` parameter leaves the URL, which from then on holds the widgets' own values.
    """
    wanted = st.query_params.get(PRESET_PARAM)
    if not wanted:
        return None
    del st.query_params[PRESET_PARAM]
    for preset in presets(page):
        if preset["id"] == wanted:
            if st.session_state.get(session_flag) != wanted:
                st.session_state[session_flag] = wanted
                _apply(preset.get("params", {}))
            return preset["label"]
    st.warning(f"This page has no preset called “{wanted[:60]}”; showing the defaults.")
    return None


def first_preset(info: PageInfo) -> dict | None:
    """The first prepared view a page defines in its content file (for links to it), if any."""
    name = Path(info.path).stem
    if not (CONTENT_DIR / f"{name}.md").exists():
        return None
    return (presets(load_page(name)) or [None])[0]


def preset_buttons(page: ContentPage, columns: int = 4) -> None:
    """One button per preset; clicking sets every widget the preset names."""
    items = presets(page)
    if not items:
        return
    st.caption("Presets — each is also a link: add `?preset=<id>` to this page's address.")
    cols = st.columns(min(columns, len(items)))
    for i, preset in enumerate(items):
        cols[i % len(cols)].button(
            preset["label"],
            key=f"preset_{page.name}_{preset['id']}",
            on_click=_apply,
            args=(preset.get("params", {}),),
            help=f"?preset={preset['id']}",
            width="stretch",
        )


def format_bytes(n: float) -> str:
    """Decimal and binary together, e.g. '16.1 GB (15.0 GiB)': the two units people confuse."""
    return f"{n / 1e9:,.1f} GB ({n / 2**30:,.1f} GiB)"


_MARKDOWN_SPECIAL = str.maketrans({c: "\\" + c for c in "\\`*_{}[]()#+-.!|<>~$"})


def plain(text: object, limit: int = 200) -> str:
    """Text from a file or a form, made safe to show inside Markdown: special characters are
    escaped (no links, images or HTML can be injected) and the length is capped."""
    return str(text)[:limit].translate(_MARKDOWN_SPECIAL)
