"""Lesson 11 (measuring): its numeric answers recomputed without lessons/functions.py."""

from __future__ import annotations

from collections.abc import Callable

from tests.answers.common import (
    _gpu,
    _spec,
)

ANSWERS: dict[str, Callable[..., float]] = {
    # 11 measuring. 3,051 GB/s: STREAM triad measured on this project's H100 SXM
    # (/work/shared/measured/README.md, measure/samples/h100-sxm-80gb.json); MFU = 6 N × tokens/s ÷
    # (GPUs × dense peak) (PaLM, arXiv 2204.02311 App. B).
    "measuring/triad-share": lambda: 3051e9 / _gpu("h100-sxm").memory_bandwidth_bytes_per_s * 100,
    "measuring/mfu-8gpu": lambda: (
        6 * _spec("llama-3-8b").param_count() * 48000 / (8 * _gpu("h100-sxm").bf16_dense_flops) * 100
    ),
}

# The right option (its position as written, ``Option.origin``) of a choice question whose answer
# depends on its inputs.
CHOICES: dict[str, Callable[..., int]] = {}
