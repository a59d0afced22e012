"""Lesson 10 (choosing-hardware): its numeric answers recomputed without lessons/functions.py."""

from __future__ import annotations

from collections.abc import Callable

from tests.answers.common import (
    _decode,
    _gpu,
    _spec,
    llm_memory,
    llm_speed,
)


def _stream_bytes(model: str, fmt: str, context: int) -> float:
    """One batch-1 decode step: the weights it multiplies (not the looked-up embedding table) plus
    the BF16 KV cache of ``context`` tokens."""
    spec = _spec(model)
    return llm_speed.weight_bytes_read_per_step(spec, 1, fmt) + llm_memory.kv_cache_bytes(spec, context, 1)


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
    # A CPU streams the same bytes from DDR5: channels × 8 B × transfer rate (catalog rows).
    "choosing-hardware/cpu-decode": lambda model, cpu: (
        _gpu(cpu).memory_bandwidth_bytes_per_s / _stream_bytes(model, "int4", 4096)
    ),
    # TPU v5e slice, ideal tensor parallelism: chips × 819 GB/s stream the bytes at once.
    "choosing-hardware/tpu-decode": lambda model, chips: (
        chips * _gpu("tpu-v5e").memory_bandwidth_bytes_per_s / _stream_bytes(model, "bf16", 4096)
    ),
    "choosing-hardware/gpu-hours-per-million": lambda model, gpu, batch: (
        1e6 / (_decode(_spec(model), _gpu(gpu), batch=batch, context_tokens=4096).tokens_per_s * 3600)
    ),
}

# The right option (its position as written, ``Option.origin``) of a choice question whose answer
# depends on its inputs.
CHOICES: dict[str, Callable[..., int]] = {}
