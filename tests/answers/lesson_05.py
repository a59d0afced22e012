"""Lesson 05 (prefill-decode): its numeric answers recomputed without lessons/functions.py."""

from __future__ import annotations

from collections.abc import Callable

from tests.answers.common import (
    _decode,
    _gpu,
    _spec,
    llm_speed,
)

ANSWERS: dict[str, Callable[..., float]] = {
    # 05 prefill-decode
    "prefill-decode/ttft-4k-prompt": lambda: (
        llm_speed.prefill_time_s(
            _spec("llama-3-8b"), 4096, peak_flops=_gpu("h100-sxm").bf16_dense_flops, mfu=0.55
        )
        * 1e3
    ),
    "prefill-decode/tpot-batch-1": lambda: (
        _decode(
            _spec("llama-3-8b"),
            _gpu("h100-sxm"),
            batch=1,
            context_tokens=4096,
        ).memory_time_s
        * 1e3
    ),
    "prefill-decode/batch-32-throughput": lambda: (
        _decode(
            _spec("llama-3-8b"),
            _gpu("h100-sxm"),
            batch=32,
            context_tokens=4096,
        ).tokens_per_s
    ),
}

# The right option (its position as written, ``Option.origin``) of a choice question whose answer
# depends on its inputs.
CHOICES: dict[str, Callable[..., int]] = {}
