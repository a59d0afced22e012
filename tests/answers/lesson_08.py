"""Lesson 08 (attention-kernels): its numeric answers recomputed without lessons/functions.py."""

from __future__ import annotations

from collections.abc import Callable

from tests.answers.common import (
    _gpu,
    _spec,
    llm_memory,
    roofline,
)


def _attention_s(gpu: str, flash: bool, heads: int, tokens: int) -> float:
    """Roofline time of one layer's unmasked prefill attention (roofline.attention, head dim 128)."""
    op = roofline.attention(1, int(heads), int(heads), int(tokens), int(tokens), 128, flash=flash)
    return roofline.predict(op, _gpu(gpu)).time_s


ANSWERS: dict[str, Callable[..., float]] = {
    # 08 attention-kernels. MHA caches 2 (K, V) × layers × query heads × head_dim × 2 bytes per token.
    "attention-kernels/gqa-mha-bytes": lambda model: (
        2 * _spec(model).num_layers * _spec(model).num_heads * _spec(model).head_dim * 2 / 1e6
    ),
    # Eager attention's peak per score (llm_memory.eager_score_bytes_per_element) × heads × N².
    "attention-kernels/score-matrix-gb": lambda model, tokens: (
        _spec(model).num_heads * int(tokens) ** 2 * llm_memory.eager_score_bytes_per_element(2) / 1e9
    ),
    # Naive (S and P through HBM) over FlashAttention (Q, K, V, O once), both max(FLOPs/peak, bytes/BW).
    "attention-kernels/flash-speedup": lambda gpu, tokens, nh: (
        _attention_s(gpu, False, nh, tokens) / _attention_s(gpu, True, nh, tokens)
    ),
}

# The right option (its position as written, ``Option.origin``) of a choice question whose answer
# depends on its inputs.
CHOICES: dict[str, Callable[..., int]] = {}
