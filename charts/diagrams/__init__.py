"""Diagrams for the glossary's core terms, computed from the same data as everything else.

Each module here defines ``DIAGRAMS``: diagram id -> builder. A builder takes keyword parameters
(all optional: the defaults draw the H100 SXM or the model the term's text uses) and returns a
``Diagram``: a plain Plotly figure dict (no plotly import, like every chart builder), the
sentence a screen reader hears in its place (``alt``, with the computed numbers), the numbers
behind it as table rows, and a caption that says what to notice (and the source of a figure
adapted from a paper or datasheet). Glossary terms name theirs with ``diagram: <id>``.

Modules are named after the glossary's categories (``gpu_hardware``, ``programming_model``,
``memory_hierarchy``, ``performance``, ``numeric_formats``, ``parallelism``, ``llm_inference``);
``schematic`` and ``block_grid`` hold what their builders share.

A builder that takes ``gpu`` raises ``ValueError`` with a reason for an accelerator it cannot
draw truthfully (no sourced fact, or a structure the part does not have: SMs on a TPU);
``gpu_choices`` turns that into the list a page offers and the sentence saying who was left out.
"""

from __future__ import annotations

import functools
import importlib
import inspect
import pkgutil
import re
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


@dataclass(frozen=True)
class GpuChoices:
    """The accelerators a GPU-drawing diagram can be drawn for, in catalog order, and the ones
    left out: reason -> accelerator names."""

    ids: tuple[str, ...]
    left_out: Mapping[str, tuple[str, ...]]

    def note(self) -> str:
        """One line saying how many accelerators are left out and why, with counts, never a list of
        names (a caption, not a roll call); "" when every accelerator draws."""
        if not self.left_out:
            return ""
        left = sum(len(names) for names in self.left_out.values())
        total = left + len(self.ids)
        reasons = sorted(self.left_out.items(), key=lambda item: -len(item[1]))
        return (
            f"Not offered: {left} of {total} accelerators ("
            + "; ".join(f"{_short(reason)}: {len(names)}" for reason, names in reasons)
            + ")."
        )


def _short(reason: str) -> str:
    """A reason without its brackets and after its first clause: 'not NVIDIA GPUs: SMs are
    NVIDIA's ...' -> 'not NVIDIA GPUs'."""
    return re.sub(r"\s*\([^)]*\)", "", reason).split(":")[0].strip()


def takes_gpu(diagram_id: str) -> bool:
    """Does the diagram's builder draw for one accelerator (a ``gpu`` parameter)?"""
    return "gpu" in inspect.signature(builders()[diagram_id]).parameters


def _reason(exc: Exception, acc_id: str, acc_name: str) -> str:
    text = str(exc.args[0]) if exc.args else str(exc)
    text = text.replace(f"{acc_name}'s", "its")
    for name in (f"{acc_name} ({acc_id})", acc_name, acc_id):
        text = text.replace(name, "")
    text = text.strip(" :,")
    return text[4:] if text.startswith("has ") else text


@functools.cache
def gpu_choices(diagram_id: str) -> GpuChoices:
    """Which catalog accelerators ``diagram_id`` draws for: each is built once with its defaults
    (a fraction of a second for the whole catalog, once per process); one that raises
    ``ValueError`` or ``KeyError`` is left out under the reason its builder gave."""
    from simulators.hardware import load_catalog

    builder = builders()[diagram_id]
    ids: list[str] = []
    left_out: dict[str, list[str]] = {}
    for acc in load_catalog():
        try:
            builder(gpu=acc.id)
        except (KeyError, ValueError) as exc:
            left_out.setdefault(_reason(exc, acc.id, acc.name), []).append(acc.name)
        else:
            ids.append(acc.id)
    return GpuChoices(tuple(ids), {reason: tuple(names) for reason, names in left_out.items()})
