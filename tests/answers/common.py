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


def _prefill_s(model_id: str, tokens: int, peak_flops: float, mfu: float) -> float:
    """Prefill of one prompt, s: 2 FLOPs per multiplied weight per token, the output head
    (vocab × hidden) for the last token only (as serving engines compute logits), plus causal
    attention 4 · layers · heads·head_dim · (T/2) · T (Kaplan et al. 2020 §2.1)."""
    spec = _spec(model_id)
    head = spec.vocab_size * spec.hidden_size
    attention = 2 * spec.num_layers * spec.num_heads * spec.head_dim * tokens * tokens
    flops = 2 * (spec.matmul_params(active=True) - head) * tokens + 2 * head + attention
    return flops / (peak_flops * mfu)


__all__ = [
    "_decode",
    "_gpu",
    "_prefill_s",
    "_spec",
    "hierarchy",
    "llm_memory",
    "llm_speed",
    "parallelism",
    "quant",
    "roofline",
]
