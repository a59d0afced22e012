"""Lesson 06 (quantization): its numeric answers recomputed without lessons/functions.py."""

from __future__ import annotations

from collections.abc import Callable

from tests.answers.common import (
    _decode,
    _gpu,
    _spec,
    quant,
)

ANSWERS: dict[str, Callable[..., float]] = {
    # 06 quantization
    "quantization/fp8-scale": lambda: quant.FORMATS["fp8_e4m3"].max_finite / 3.5,
    "quantization/smoothquant-factor": lambda: 60**0.5 / 0.5 ** (1 - 0.5),
    "quantization/int4-decode-speedup": lambda: (
        _decode(
            _spec("llama-3-8b"),
            _gpu("rtx-4090"),
            context_tokens=8192,
            weight_fmt="int4",
        ).tokens_per_s
        / _decode(
            _spec("llama-3-8b"),
            _gpu("rtx-4090"),
            context_tokens=8192,
            weight_fmt="bf16",
        ).tokens_per_s
    ),
}

# The right option (its position as written, ``Option.origin``) of a choice question whose answer
# depends on its inputs.
CHOICES: dict[str, Callable[..., int]] = {}
