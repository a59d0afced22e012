"""Glossary data model: a term is a frozen record loaded from one Markdown file."""

from __future__ import annotations

from dataclasses import dataclass

# The ten categories, in the order the glossary page shows them.
CATEGORIES: dict[str, str] = {
    "gpu-hardware": "GPU hardware",
    "memory-hierarchy": "Memory hierarchy",
    "programming-model": "Programming model & CUDA software",
    "performance": "Performance & roofline",
    "numeric-formats": "Numeric formats & quantization",
    "llm-inference": "LLM inference",
    "training": "Training & fine-tuning",
    "parallelism": "Multi-GPU parallelism & interconnect",
    "hardware-products": "Hardware & cloud products",
    "tools": "Tools & profiling",
}


@dataclass(frozen=True)
class SimulatorLink:
    """Where a term's "try it" button goes: a page id and an optional preset."""

    page: str
    preset: str | None = None


@dataclass(frozen=True)
class Term:
    """One glossary entry.

    ``body`` is Markdown with every ``{{ expression }}`` already evaluated, so the
    numbers a reader sees are computed from the inputs written in the source file.
    """

    id: str
    title: str
    aliases: tuple[str, ...]
    category: str
    summary: str
    body: str
    related: tuple[str, ...]
    sources: tuple[str, ...]
    simulator: SimulatorLink | None = None
    path: str = ""
    diagram: str = ""  # id of its computed diagram (charts/diagrams), "" for none

    @property
    def category_label(self) -> str:
        return CATEGORIES[self.category]

    @property
    def names(self) -> tuple[str, ...]:
        """Title first, then aliases: every name a reader may type."""
        return (self.title, *self.aliases)
