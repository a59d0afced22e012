"""Lesson 09 (many-gpus): its numeric answers recomputed without lessons/functions.py."""

from __future__ import annotations

from collections.abc import Callable

from simulators.hardware import get_interconnect
from tests.answers.common import (
    _gpu,
    _spec,
    llm_memory,
    llm_speed,
    parallelism,
)


def _bf16_gradients(model: str) -> float:
    """Bytes of a model's BF16 gradients: 2 bytes per parameter."""
    return llm_memory.weight_bytes(_spec(model), "bf16")


def _usable_rate(link_id: str) -> float:
    """What a transfer reaches, bytes/s: the catalog's measured one-way rate where it has one, else
    80 % (ml-engineering's rule of thumb) of the payload rate after line encoding."""
    link = get_interconnect(link_id)
    if link.measured_bytes_per_s is not None:
        return link.measured_bytes_per_s
    nominal = link.encoded_per_direction_bytes_per_s or link.per_direction_bytes_per_s
    return 0.8 * nominal


def _decode_memory_s(model: str, tp: int, context: int) -> float:
    """Memory-bound decode step on H100 SXMs split over ``tp`` GPUs: (weights read + KV) ÷ (tp × BW)."""
    spec = _spec(model)
    read = llm_speed.weight_bytes_read_per_step(spec, 1, "bf16") + llm_memory.kv_cache_bytes(spec, context, 1)
    return read / (tp * _gpu("h100-sxm").memory_bandwidth_bytes_per_s)


ANSWERS: dict[str, Callable[..., float]] = {
    # Ring all-reduce: each GPU sends 2(n − 1)/n × the buffer (nccl-tests PERFORMANCE.md).
    "many-gpus/dp-allreduce-gb": lambda model, n: (
        parallelism.ring_allreduce_bytes_per_gpu(_bf16_gradients(model), n) / 1e9
    ),
    # Idle share of the whole step, (p − 1)/(m + p − 1) (GPipe; Narayanan et al. 2021 §2.2.1).
    "many-gpus/bubble-p8-m32": lambda p, m: (p - 1) / (m + p - 1) * 100,
    # Ideal tensor parallelism: each of tp GPUs streams 1/tp of the bytes at once.
    "many-gpus/tp-serve-ms": lambda model, tp: _decode_memory_s(model, tp, 4096) * 1e3,
    # Rail-optimised servers of 8: each of the 8 NICs carries 1/8 of a GPU's ring bytes, NVLink the
    # other 7/8 at the same time; the slower leg sets the time (NCCL's channels over every HCA).
    "many-gpus/allreduce-nodes": lambda model, n: (
        max(
            parallelism.ring_allreduce_bytes_per_gpu(_bf16_gradients(model), n)
            / 8
            / _usable_rate("ib-ndr-4x"),
            parallelism.ring_allreduce_bytes_per_gpu(_bf16_gradients(model), n)
            * 7
            / 8
            / _usable_rate("nvlink-4"),
        )
        * 1e3
    ),
    "many-gpus/allreduce-time": lambda model, n, link: (
        parallelism.ring_allreduce_bytes_per_gpu(_bf16_gradients(model), n) / _usable_rate(link) * 1e3
    ),
}

# The right option (its position as written, ``Option.origin``) of a choice question whose answer
# depends on its inputs.
CHOICES: dict[str, Callable[..., int]] = {}
