"""Lesson 02 (memory-hierarchy): its numeric answers recomputed without lessons/functions.py."""

from __future__ import annotations

from collections.abc import Callable

from tests.answers.common import (
    _decode,
    _gpu,
    _spec,
    hierarchy,
    llm_memory,
)

ANSWERS: dict[str, Callable[..., float]] = {
    # 02 memory-hierarchy
    "memory-hierarchy/bytes-in-flight": lambda: (
        hierarchy.get_level("h100-sxm", "device-memory").latency_s("mid")
        * hierarchy.get_level("h100-sxm", "device-memory").bandwidth_per_device_bytes_per_s
        / 1e6
    ),
    "memory-hierarchy/offload-slowdown": lambda: (
        hierarchy.place_model(
            llm_memory.weight_bytes(_spec("llama-3-70b"), "bf16"),
            llm_memory.kv_cache_bytes(_spec("llama-3-70b"), 8192, 1, "bf16"),
            hierarchy.family("h100-sxm").levels,
            usable_fraction=0.9,
        ).slowdown
    ),
    "memory-hierarchy/decode-bound-tok-s": lambda: (
        _decode(
            _spec("llama-3-8b"),
            _gpu("h100-sxm"),
            batch=1,
            context_tokens=0,
        ).tokens_per_s
    ),
}

# The right option (its position as written, ``Option.origin``) of a choice question whose answer
# depends on its inputs.
CHOICES: dict[str, Callable[..., int]] = {}
