"""Lesson 08 (attention-kernels): its numeric answers recomputed without lessons/functions.py."""

from __future__ import annotations

from collections.abc import Callable

from tests.answers.common import (
    _spec,
    llm_memory,
)

ANSWERS: dict[str, Callable[..., float]] = {
    # 08 attention-kernels. MHA caches 2 (K, V) × layers × query heads × head_dim × 2 bytes per token.
    "attention-kernels/gqa-mha-bytes": lambda: (
        2
        * _spec("llama-3-70b").num_layers
        * _spec("llama-3-70b").num_heads
        * _spec("llama-3-70b").head_dim
        * 2
        / 1e6
    ),
    # Eager attention's peak per score (llm_memory.eager_score_bytes_per_element) × heads × N².
    "attention-kernels/score-matrix-gb": lambda: (
        _spec("llama-3.2-3b").num_heads * 8160**2 * llm_memory.eager_score_bytes_per_element(2) / 1e9
    ),
}

# The right option (its position as written, ``Option.origin``) of a choice question whose answer
# depends on its inputs.
CHOICES: dict[str, Callable[..., int]] = {}
