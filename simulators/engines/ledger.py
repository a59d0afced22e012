"""What every engine module shares: units, the error it raises, the GPU it resolves, and one
ledger type — the terms an engine takes from a GPU's memory, each with its cause and source.

An engine module (``vllm``, ``sglang``, ``llamacpp``, ``transformers``) computes its own result
dataclass with the engine's own field names (what the engine prints), and turns it into a
``Ledger`` with ``.ledger()``, so a page can draw any engine's memory the same way and put two
engines side by side term by term.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Literal

from simulators.hardware import Accelerator, get_accelerator

GiB = 2**30
MiB = 2**20

ENGINES: dict[str, str] = {
    "vllm": "vLLM (serving): its start-up ledger, exact to what its code does",
    "transformers": "transformers (generate on one process): the peak of one prefill",
    "ideal": "Idealised runtime: weights + KV cache + one layer's activations + a fixed overhead",
}


class EngineError(ValueError):
    """A model or setting an engine module cannot size exactly: the message names the field."""


class LogError(ValueError):
    """A text that is not a start-up log a parser can read."""


def resolve_gpu(gpu: str | Accelerator) -> Accelerator:
    """The catalog row for ``gpu`` (an id or a row), or ``EngineError`` naming it."""
    if isinstance(gpu, Accelerator):
        return gpu
    try:
        return get_accelerator(gpu)
    except (KeyError, ValueError) as exc:
        raise EngineError(f"gpu {gpu!r} is not in the catalog") from exc


TermKind = Literal["derived", "measured"]


@dataclass(frozen=True)
class Term:
    """One part of an engine's memory on one device.

    ``kind`` is "derived" when the bytes follow from the engine's code and the model, and
    "measured" when they rest on real runs; a measured term carries the range seen across
    machines (``low``..``high``) so a verdict near the line can say "tight".
    """

    key: str  # stable id: "weights", "kv_cache", "activations", "non_torch", "cuda_graphs", ...
    label: str  # what a reader sees
    bytes: float
    cause: str  # one sentence: what allocates it
    source: str  # the engine's file and version the term follows, or the runs it rests on
    kind: TermKind = "derived"
    low: float | None = None
    high: float | None = None
    glossary: str = ""  # glossary term id, when there is one

    def __post_init__(self) -> None:
        if self.kind == "measured" and (self.low is None or self.high is None):
            raise ValueError(f"measured term {self.key!r} needs its range (low, high)")

    @property
    def range(self) -> tuple[float, float]:
        if self.low is None or self.high is None:
            return (self.bytes, self.bytes)
        return (self.low, self.high)


@dataclass(frozen=True)
class Ledger:
    """An engine's memory on one device, term by term, in the order the engine takes it."""

    engine: str  # "vllm", "sglang", "llama.cpp", "transformers"
    version: str
    device: str  # catalog id, or a name such as "CPU"
    total_bytes: float  # the memory the device reports
    terms: tuple[Term, ...] = field(default_factory=tuple)
    verdict: str = ""  # the engine's own word: "fits", "refused", "oom", "offloads"
    message: str = ""

    def __iter__(self) -> Iterator[Term]:
        return iter(self.terms)

    def get(self, key: str) -> Term | None:
        return next((t for t in self.terms if t.key == key), None)

    @property
    def used_bytes(self) -> float:
        return sum(t.bytes for t in self.terms)

    @property
    def used_range(self) -> tuple[float, float]:
        lo = sum(t.range[0] for t in self.terms)
        hi = sum(t.range[1] for t in self.terms)
        return (lo, hi)

    @property
    def tight(self) -> bool:
        """True when the measured terms' ranges straddle the device's total."""
        lo, hi = self.used_range
        return lo <= self.total_bytes < hi
