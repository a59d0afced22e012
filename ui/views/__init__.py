"""Simulator views: a chart and the few controls that drive it, drawn by a page or a lesson step.

Each page module in this package (roofline.py, will_it_fit.py, ...) defines ``VIEWS``: name ->
``View``. A page lays its views out in full; a lesson step draws one of them inline with the
controls it names, in a prepared state, and links to the page with that state in the address.
The names a lesson may use are listed (without importing Streamlit) in ``content.pages.PageInfo.views``;
tests keep the two in step.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from content.pages import PAGES


@dataclass(frozen=True)
class View:
    """One embeddable view: ``render(state, container, key)`` draws its metrics and chart."""

    page: str  # the page's url_path
    name: str
    title: str
    controls: tuple[str, ...]  # the controls it reads, in the order a lesson would show them
    render: Callable[[Any, Any, str], None]
    # Run before the controls are drawn; returns a sentence to show ("" for none). Parallelism uses it
    # to keep DP × TP × PP equal to the GPU count when the reader changes one degree.
    prepare: Callable[[Any], str] | None = None


def views_of(page: str) -> dict[str, View]:
    """The views of the page at url_path ``page`` (imports that page's view module)."""
    info = next(p for p in PAGES if p.url_path == page)
    module = importlib.import_module(f"ui.views.{info.file.stem}")
    return module.VIEWS


def get_view(page: str, name: str) -> View:
    """One view; KeyError names what is missing."""
    views = views_of(page)
    if name not in views:
        raise KeyError(f"{page} has no view {name!r} (it has {', '.join(views)})")
    return views[name]
