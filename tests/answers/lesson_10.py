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
    # 10 choosing-hardware. Decode bound = bandwidth ÷ bytes per step (M4 Max: no sourced peak).
    "choosing-hardware/m4max-70b-tok-s": lambda: (
        llm_speed.decode_step(
            _spec("llama-3-70b"),
            bandwidth_bytes_per_s=_gpu("m4-max").memory_bandwidth_bytes_per_s,
            peak_flops=float("inf"),
            batch=1,
            context_tokens=8192,
            weight_fmt="int4",
        ).tokens_per_s
    ),
    "choosing-hardware/gpu-hours-per-million": lambda: (
        1e6
        / (
            _decode(
                _spec("llama-3-8b"),
                _gpu("h100-sxm"),
                batch=1,
                context_tokens=4096,
            ).tokens_per_s
            * 3600
        )
    ),
}

# The right option (its position as written, ``Option.origin``) of a choice question whose answer
# depends on its inputs.
CHOICES: dict[str, Callable[..., int]] = {}
