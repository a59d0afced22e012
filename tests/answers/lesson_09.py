"""Lesson 09 (many-gpus): its numeric answers recomputed without lessons/functions.py."""

from __future__ import annotations

from collections.abc import Callable

from tests.answers.common import (
    _spec,
    parallelism,
)

ANSWERS: dict[str, Callable[..., float]] = {
    # 09 many-gpus. Ring all-reduce: each GPU sends 2(n − 1)/n × the buffer (nccl-tests PERFORMANCE.md).
    "many-gpus/dp-allreduce-gb": lambda: (
        parallelism.ring_allreduce_bytes_per_gpu(_spec("llama-3-8b").param_count() * 2, 8) / 1e9
    ),
    "many-gpus/bubble-p8-m32": lambda: parallelism.pipeline_bubble_fraction(8, 32) * 100,
}

# The right option (its position as written, ``Option.origin``) of a choice question whose answer
# depends on its inputs.
CHOICES: dict[str, Callable[..., int]] = {}
