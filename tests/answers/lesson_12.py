"""Lesson 12 (capstone): its numeric answers recomputed without lessons/functions.py."""

from __future__ import annotations

import math
from collections.abc import Callable

from simulators.hardware import get_accelerator
from tests.answers.common import (
    _gpu,
    _spec,
    llm_memory,
    llm_speed,
)

BUDGET = 0.9  # weights + KV cache within 90 % of the labelled capacity (the lesson's planning rule)


def _kv(model: str, ctx: int, batch: int = 1) -> float:
    """BF16 KV cache, bytes: 2 (K, V) × layers × KV heads × head_dim × 2 B × tokens × batch."""
    spec = _spec(model)
    return 2 * spec.num_layers * spec.num_kv_heads * spec.head_dim * 2 * ctx * batch


def _max_batch(model: str, gpu: str, ctx: int, fmt: str = "bf16") -> int:
    room = BUDGET * get_accelerator(gpu).memory_bytes - llm_memory.weight_bytes(_spec(model), fmt)
    return math.floor(room / _kv(model, ctx))


def _tok_s(model: str, gpu: str, batch: int, ctx: int, fmt: str = "bf16") -> float:
    """Memory-bound decode: batch tokens per (weights streamed + KV) ÷ bandwidth."""
    read = llm_speed.weight_bytes_read_per_step(_spec(model), batch, fmt) + _kv(model, ctx, batch)
    return batch / (read / _gpu(gpu).memory_bandwidth_bytes_per_s)


ANSWERS: dict[str, Callable[..., float]] = {
    "capstone/fit-gb": lambda model, fmt, ctx: (
        (llm_memory.weight_bytes(_spec(model), fmt) + _kv(model, ctx)) / 1e9
    ),
    "capstone/pick-gpu-ms": lambda model, gpu, ctx: 1 / _tok_s(model, gpu, 1, ctx) * 1e3,
    "capstone/max-batch": lambda model, gpu, ctx: _max_batch(model, gpu, ctx),
    "capstone/price-million": lambda model, gpu, ctx, batch, price: (
        price * 1e6 / (_tok_s(model, gpu, batch, ctx) * 3600)
    ),
    "capstone/whole-plan": lambda model, fmt, gpu, ctx, price: (
        price * 1e6 / (_tok_s(model, gpu, _max_batch(model, gpu, ctx, fmt), ctx, fmt) * 3600)
    ),
}

# The right option (its position as written, ``Option.origin``) of a choice question whose answer
# depends on its inputs.
CHOICES: dict[str, Callable[..., int]] = {}
