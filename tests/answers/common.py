"""Helpers the per-lesson answer modules share (tests/answers/lesson_NN.py)."""

from __future__ import annotations

from simulators import hierarchy, llm_memory, llm_speed, parallelism, roofline
from simulators import quantization as quant
from simulators.hardware import get_accelerator
from simulators.presets import get_model_preset


def _gpu(gpu_id: str):
    return get_accelerator(gpu_id)


def _decode(spec, gpu, **kwargs):
    """One decode step on ``gpu`` at its datasheet bandwidth and dense BF16 peak (llm_speed)."""
    return llm_speed.decode_step(
        spec,
        bandwidth_bytes_per_s=gpu.memory_bandwidth_bytes_per_s,
        peak_flops=gpu.bf16_dense_flops,
        **kwargs,
    )


def _spec(model_id: str):
    return get_model_preset(model_id).spec


__all__ = [
    "_decode",
    "_gpu",
    "_spec",
    "hierarchy",
    "llm_memory",
    "llm_speed",
    "parallelism",
    "quant",
    "roofline",
]
