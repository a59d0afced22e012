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


def _hbm(gpu: str):
    return hierarchy.get_level(gpu, "device-memory")


ANSWERS: dict[str, Callable[..., float]] = {
    # 02 memory-hierarchy
    "memory-hierarchy/bytes-in-flight": lambda gpu: (
        _hbm(gpu).latency_s("mid") * _hbm(gpu).bandwidth_per_device_bytes_per_s / 1e6
    ),
    "memory-hierarchy/warps-per-sm-load": lambda gpu, load: (
        # bytes in flight per SM ÷ (32 threads × load bytes)
        _hbm(gpu).latency_s("mid")
        * _hbm(gpu).bandwidth_per_device_bytes_per_s
        / _gpu(gpu).sm_count
        / (32 * load)
    ),
    "memory-hierarchy/offload-slowdown": lambda gpu, context: (
        hierarchy.place_model(
            llm_memory.weight_bytes(_spec("llama-3-70b"), "bf16"),
            llm_memory.kv_cache_bytes(_spec("llama-3-70b"), context, 1, "bf16"),
            hierarchy.family(gpu).levels,
            usable_fraction=0.9,
        ).slowdown
    ),
    "memory-hierarchy/decode-bound-tok-s": lambda model, gpu: (
        _decode(
            _spec(model),
            _gpu(gpu),
            batch=1,
            context_tokens=0,
        ).tokens_per_s
    ),
}

# The right option (its position as written, ``Option.origin``) of a choice question whose answer
# depends on its inputs.
CHOICES: dict[str, Callable[..., int]] = {}
