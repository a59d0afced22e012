"""Lesson 01 (gpu-basics): its numeric answers recomputed without lessons/functions.py."""

from __future__ import annotations

from collections.abc import Callable

from tests.answers.common import (
    _gpu,
    _prefill_s,
    _spec,
    hierarchy,
)


def _gemm_us(m: int, n: int, k: int, gpu_id: str) -> float:
    """[M,K] x [K,N] in BF16 at the dense peak or the bandwidth, whichever binds, µs."""
    gpu = _gpu(gpu_id)
    compute = 2 * m * n * k / gpu.bf16_dense_flops
    memory = 2 * (m * k + k * n + m * n) / gpu.memory_bandwidth_bytes_per_s
    return max(compute, memory) * 1e6


ANSWERS: dict[str, Callable[..., float]] = {
    # 01 gpu-basics
    "gpu-basics/threads-in-flight": lambda gpu: (
        _gpu(gpu).sm_count * hierarchy.family(gpu).max_warps_per_sm * 32
    ),
    "gpu-basics/tensor-vs-cuda-cores": lambda gpu: _gpu(gpu).bf16_dense_flops / _gpu(gpu).peak_flops("fp32"),
    "gpu-basics/gemm-gflop": lambda model, tokens: (
        2 * tokens * _spec(model).intermediate_size * _spec(model).hidden_size / 1e9
    ),
    "gpu-basics/gemm-time": lambda gpu, model: _gemm_us(
        2048, _spec(model).intermediate_size, _spec(model).hidden_size, gpu
    ),
    "gpu-basics/prompt-time-at-peak": lambda model, gpu, tokens: (
        _prefill_s(model, tokens, _gpu(gpu).bf16_dense_flops, 1.0) * 1e3
    ),
}

# The right option (its position as written, ``Option.origin``) of a choice question whose answer
# depends on its inputs.
CHOICES: dict[str, Callable[..., int]] = {}
