"""Lesson 11 (measuring): its numeric answers recomputed without lessons/functions.py."""

from __future__ import annotations

import math
from collections.abc import Callable

from tests.answers.common import (
    _gpu,
    _spec,
    llm_memory,
    llm_speed,
)


def _bound_ms(model: str, gpu: str, context: int) -> float:
    """Batch-1 decode bound: (weights streamed + KV cache) ÷ datasheet bandwidth, ms."""
    spec = _spec(model)
    read = llm_speed.weight_bytes_read_per_step(spec, 1, "bf16") + llm_memory.kv_cache_bytes(spec, context, 1)
    return read / _gpu(gpu).memory_bandwidth_bytes_per_s * 1e3


ANSWERS: dict[str, Callable[..., float]] = {
    # 3,051 GB/s: STREAM triad measured on this project's H100 SXM (/work/shared/measured/README.md,
    # measure/samples/h100-sxm-80gb.json).
    "measuring/triad-share": lambda: 3051e9 / _gpu("h100-sxm").memory_bandwidth_bytes_per_s * 100,
    # MFU = 6 N × tokens/s ÷ (GPUs × dense peak) (PaLM, arXiv 2204.02311 App. B).
    "measuring/mfu-8gpu": lambda model, gpus, tok_s: (
        6 * _spec(model).param_count() * tok_s / (gpus * _gpu("h100-sxm").bf16_dense_flops) * 100
    ),
    # Synchronous checkpoint: 16 B/param written at the stated rate, as a share of 30 minutes.
    # A resumable checkpoint: BF16 weights 2 + FP32 master 4 + Adam m and v 8 = 14 B/param; gradients
    # are recomputed every step and not saved (BLOOM: 2.3 TiB for 176B parameters, ~14 B/param).
    # Workers = samples the GPU consumes per second ÷ samples one worker prepares, rounded up.
    "measuring/loader-workers": lambda batch, step_ms, per_worker: math.ceil(
        batch / (step_ms / 1e3) / per_worker
    ),
    "measuring/checkpoint-stall": lambda model, write_gbs: (
        _spec(model).param_count() * (2 + 4 + 8) / (write_gbs * 1e9) / 1800 * 100
    ),
    "measuring/decode-share": lambda model, gpu, context, step_ms: (
        _bound_ms(model, gpu, context) / step_ms * 100
    ),
}

# The right option (its position as written, ``Option.origin``) of a choice question whose answer
# depends on its inputs.
CHOICES: dict[str, Callable[..., int]] = {}
