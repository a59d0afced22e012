"""Lesson 04 (sizing-vram): its numeric answers recomputed without lessons/functions.py."""

from __future__ import annotations

from collections.abc import Callable

from tests.answers.common import (
    _gpu,
    _spec,
    llm_memory,
)

ANSWERS: dict[str, Callable[..., float]] = {
    # 04 sizing-vram
    "sizing-vram/llama2-long-batch": lambda: (
        2
        * _spec("llama-2-7b").num_layers
        * _spec("llama-2-7b").num_kv_heads
        * _spec("llama-2-7b").head_dim
        * 2
        * 32768
        * 8
        / 1e9
    ),
    "sizing-vram/total-llama3-8b": lambda: (
        llm_memory.inference_memory(_spec("llama-3-8b"), context_tokens=8192).total_bytes / 1e9
    ),
    "sizing-vram/estimate-in-gib": lambda: (
        llm_memory.inference_memory(
            _spec("llama-3-70b"), weight_fmt="fp8", kv_fmt="fp8", context_tokens=8192
        ).total_bytes
        / 2**30
    ),
    "sizing-vram/engine-pool-tokens": lambda: (
        (
            0.9 * _gpu("h100-sxm").memory_bytes
            - llm_memory.inference_memory(_spec("llama-3-8b"), context_tokens=8192).total_bytes
            + llm_memory.kv_cache_bytes(_spec("llama-3-8b"), 8192)
        )
        // _spec("llama-3-8b").kv_cache_bytes_per_token()
    ),
}

# The right option (its position as written, ``Option.origin``) of a choice question whose answer
# depends on its inputs.
CHOICES: dict[str, Callable[..., int]] = {}
