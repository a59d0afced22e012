"""Readers for the families whose layers are not all alike: hybrids with linear-attention or
state-space layers, per-layer shapes, chunked attention, latent-attention variants, and older
architectures with conventions of their own.

Each module (but ``common``, the pieces they share) defines ``READERS``: model_type ->
``read(r, cfg, family, name) -> dict`` of ``ModelSpec`` fields, written from the model's
transformers implementation (the modelling file named in the reader's docstring) and checked
against it by tests/test_arch_oracle.py. A family
listed here is exact; ``simulators.model_config`` adds it to ``EXACT_FAMILIES``.

Import these through ``simulators.model_config`` (which loads them when it is imported), never on
their own: each module reads configs with the helpers defined there.
"""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Callable
from typing import Any

Reader = Callable[[Any, dict, str, str], dict]


def load_refusals() -> dict[str, str]:
    """Every module's ``REFUSALS``: model_type -> why the calculator refuses it (what it does not
    model), for families a module looked at and could not make exact."""
    refusals: dict[str, str] = {}
    for info in sorted(pkgutil.iter_modules(__path__), key=lambda m: m.name):
        module = importlib.import_module(f"{__name__}.{info.name}")
        refusals.update(getattr(module, "REFUSALS", {}))
    return refusals


def load_readers() -> dict[str, Reader]:
    """Every module's ``READERS``, merged (a model_type claimed twice is a bug)."""
    readers: dict[str, Reader] = {}
    for info in sorted(pkgutil.iter_modules(__path__), key=lambda m: m.name):
        module = importlib.import_module(f"{__name__}.{info.name}")
        for family, reader in getattr(module, "READERS", {}).items():
            if family in readers:
                raise RuntimeError(f"{family} has two readers ({info.name} and another module)")
            readers[family] = reader
    return readers
