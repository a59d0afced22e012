"""Lesson 10 (choosing-hardware): its numeric answers recomputed without lessons/functions.py."""

from __future__ import annotations

from collections.abc import Callable

from tests.answers.common import (
    _decode,
    _gpu,
    _spec,
    llm_speed,
)

ANSWERS: dict[str, Callable[..., float]] = {
    # Decode bound = bandwidth ÷ bytes per step (Apple GPUs: no sourced peak, so memory only).
    "choosing-hardware/m4max-70b-tok-s": lambda model, gpu: (
        llm_speed.decode_step(
            _spec(model),
            bandwidth_bytes_per_s=_gpu(gpu).memory_bandwidth_bytes_per_s,
            peak_flops=float("inf"),
            batch=1,
            context_tokens=8192,
            weight_fmt="int4",
        ).tokens_per_s
    ),
    # Break-even hours = purchase price ÷ hourly rent (prices stated in the prompt).
    "choosing-hardware/buy-vs-rent": lambda price, rent: price / rent,
    "choosing-hardware/gpu-hours-per-million": lambda model, gpu, batch: (
        1e6 / (_decode(_spec(model), _gpu(gpu), batch=batch, context_tokens=4096).tokens_per_s * 3600)
    ),
}

# The right option (its position as written, ``Option.origin``) of a choice question whose answer
# depends on its inputs.
CHOICES: dict[str, Callable[..., int]] = {}
