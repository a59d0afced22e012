"""Lesson 01 (gpu-basics): its numeric answers recomputed without lessons/functions.py."""

from __future__ import annotations

from collections.abc import Callable

from tests.answers.common import (
    _gpu,
    _spec,
    hierarchy,
)

ANSWERS: dict[str, Callable[..., float]] = {
    # ---- lessons 01, 02, 04, 05, 06 (add entries here)
    # 01 gpu-basics
    "gpu-basics/threads-in-flight": lambda: (
        _gpu("h100-sxm").sm_count * hierarchy.family("h100-sxm").max_warps_per_sm * 32
    ),
    "gpu-basics/tensor-vs-cuda-cores": lambda: (
        _gpu("h100-sxm").bf16_dense_flops / _gpu("h100-sxm").peak_flops("fp32")
    ),
    "gpu-basics/gemm-gflop": lambda: (
        2 * 2048 * _spec("llama-3-8b").intermediate_size * _spec("llama-3-8b").hidden_size / 1e9
    ),
    "gpu-basics/gemm-time": lambda: (
        # [2048, hidden] x [hidden, intermediate] at the dense peak or the bandwidth, whichever binds
        max(
            2
            * 2048
            * _spec("llama-3-8b").intermediate_size
            * _spec("llama-3-8b").hidden_size
            / _gpu("h100-sxm").bf16_dense_flops,
            2
            * (
                2048 * _spec("llama-3-8b").hidden_size
                + _spec("llama-3-8b").hidden_size * _spec("llama-3-8b").intermediate_size
                + 2048 * _spec("llama-3-8b").intermediate_size
            )
            / _gpu("h100-sxm").memory_bandwidth_bytes_per_s,
        )
        * 1e6
    ),
}

# The right option (its position as written, ``Option.origin``) of a choice question whose answer
# depends on its inputs.
CHOICES: dict[str, Callable[..., int]] = {}
