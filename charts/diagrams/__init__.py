"""Diagrams for the glossary's core terms, computed from the same data as everything else.

Each module here defines ``DIAGRAMS``: diagram id -> builder. A builder takes keyword parameters
(all optional: the defaults draw the H100 SXM or the model the term's text uses) and returns a
``Diagram``: a plain Plotly figure dict (no plotly import, like every chart builder), the
sentence a screen reader hears in its place (``alt``, with the computed numbers), the numbers
behind it as table rows, and a caption that says what to notice (and the source of a figure
adapted from a paper or datasheet). Glossary terms name theirs with ``diagram: <id>``.
"""

from __future__ import annotations

import functools
import importlib
import pkgutil
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class Diagram:
    id: str
    spec: Mapping[str, Any]  # a Plotly figure dict
    alt: str  # what the diagram shows, with its key numbers, as one or two sentences
    table: tuple[Mapping[str, Any], ...] = field(default=())  # the numbers behind it, row by row
    caption: str = ""  # what to notice; "Adapted from …" where it follows a source's figure


Builder = Callable[..., Diagram]


@functools.cache
def builders() -> dict[str, Builder]:
    """Every module's ``DIAGRAMS``, merged (an id claimed twice is a bug)."""
    found: dict[str, Builder] = {}
    for info in sorted(pkgutil.iter_modules(__path__), key=lambda m: m.name):
        module = importlib.import_module(f"{__name__}.{info.name}")
        for diagram_id, builder in getattr(module, "DIAGRAMS", {}).items():
            if diagram_id in found:
                raise RuntimeError(f"diagram {diagram_id!r} is defined twice")
            found[diagram_id] = builder
    return found


@functools.lru_cache(maxsize=256)
def _build(diagram_id: str, params: tuple[tuple[str, Any], ...]) -> Diagram:
    return builders()[diagram_id](**dict(params))


def build(diagram_id: str, **params: Any) -> Diagram:
    """The diagram ``diagram_id`` drawn with ``params`` (built once per process and parameters).
    ``KeyError`` for an unknown id."""
    if diagram_id not in builders():
        raise KeyError(diagram_id)
    return _build(diagram_id, tuple(sorted(params.items())))
