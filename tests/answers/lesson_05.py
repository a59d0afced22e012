"""Lesson 05 (prefill-decode): its numeric answers recomputed without lessons/functions.py."""

from __future__ import annotations

from collections.abc import Callable

from tests.answers.common import (
    _decode,
    _gpu,
    _prefill_s,
    _spec,
)


def _step(model: str, gpu: str, batch: int, context: int):
    """One decode step at the datasheet bandwidth (llm_speed: the untied input-embedding table is a
    lookup, so its bytes are left out of what a step streams)."""
    return _decode(_spec(model), _gpu(gpu), batch=int(batch), context_tokens=int(context))


ANSWERS: dict[str, Callable[..., float]] = {
    # 05 prefill-decode. Prefill: 2 FLOPs per multiplied weight per token + causal attention, at 55%
    # of the dense BF16 peak (llm_speed.prefill_time_s).
    "prefill-decode/ttft-4k-prompt": lambda model, gpu, tokens: (
        _prefill_s(model, int(tokens), _gpu(gpu).bf16_dense_flops, 0.55) * 1e3
    ),
    # Decode bound: (weights streamed + KV cache) / bandwidth, "How to Scale Your Model", inference.
    "prefill-decode/tpot-batch-1": lambda model, gpu: _step(model, gpu, 1, 4096).memory_time_s * 1e3,
    "prefill-decode/batch-32-throughput": lambda model, gpu, batch: (
        _step(model, gpu, batch, 4096).tokens_per_s
    ),
    "prefill-decode/per-user-tok-s": lambda model, gpu, batch, ctx: (
        _step(model, gpu, batch, ctx).tokens_per_s / int(batch)
    ),
}

# The right option (its position as written, ``Option.origin``) of a choice question whose answer
# depends on its inputs.
CHOICES: dict[str, Callable[..., int]] = {}
