"""Small shared helpers for pages: glossary-linked prose, byte formatting, safe text, first presets.

Page controls themselves live in content/params.py (as data), content/schema.py (every page's controls) and
ui/state.py (widgets kept in step with the address).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import streamlit as st

from content import CONTENT_DIR, link_terms, load_page
from content.pages import PageInfo, term_href
from glossary import terms_by_id


def term_markdown(text: str) -> str:
    """Markdown with ``[[term-id]]`` links resolved to the glossary page."""
    by_id = terms_by_id()
    return link_terms(text, term_href, lambda i: by_id[i].title if i in by_id else None)


def prose(text: str, **kwargs: Any) -> None:
    """Show content Markdown with its glossary links."""
    st.markdown(term_markdown(text), **kwargs)


def first_preset(info: PageInfo) -> dict | None:
    """The first prepared view a page defines in its content file (for links to it), if any."""
    name = Path(info.path).stem
    if not (CONTENT_DIR / f"{name}.md").exists():
        return None
    return (list(load_page(name).meta.get("presets") or []) or [None])[0]


def format_bytes(n: float) -> str:
    """Decimal and binary together, e.g. '16.1 GB (15.0 GiB)': the two units people confuse."""
    return f"{n / 1e9:,.1f} GB ({n / 2**30:,.1f} GiB)"


_MARKDOWN_SPECIAL = str.maketrans({c: "\\" + c for c in "\\`*_{}[]()#+-.!|<>~$"})


def plain(text: object, limit: int = 200) -> str:
    """Text from a file or a form, made safe to show inside Markdown: special characters are
    escaped (no links, images or HTML can be injected) and the length is capped."""
    return str(text)[:limit].translate(_MARKDOWN_SPECIAL)
