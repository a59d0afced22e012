"""Lesson 03 (roofline): its numeric answers recomputed without lessons/functions.py."""

from __future__ import annotations

from collections.abc import Callable

from tests.answers.common import (
    _decode,
    _gpu,
    _spec,
    roofline,
)

ANSWERS: dict[str, Callable[..., float]] = {
    # ---- 03 roofline
    "roofline/ridge-h100": lambda gpu, dtype: (
        _gpu(gpu).peak_flops(dtype) / _gpu(gpu).memory_bandwidth_bytes_per_s
    ),
    "roofline/crossover-llama3-8b": lambda gpu: roofline.decode_crossover_batch(
        _spec("llama-3-8b"), _gpu(gpu), "bf16", 0
    ),
    "roofline/decode-step-ms": lambda model, gpu, batch, context: (
        batch / _decode(_spec(model), _gpu(gpu), batch=batch, context_tokens=context).tokens_per_s * 1e3
    ),
}

# The right option (its position as written, ``Option.origin``) of a choice question whose answer
# depends on its inputs.
CHOICES: dict[str, Callable[..., int]] = {}
