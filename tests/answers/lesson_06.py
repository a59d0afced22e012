"""Lesson 06 (quantization): its numeric answers recomputed without lessons/functions.py."""

from __future__ import annotations

import math
from collections.abc import Callable

from simulators import llm_memory as _llm_memory
from simulators import quality
from tests.answers.common import (
    _gpu,
    _spec,
    llm_speed,
    quant,
)


def _tok_s(model: str, gpu: str, context: int, weight_fmt: str, batch: int = 1) -> float:
    """Decode bound at the datasheet bandwidth and dense BF16 peak (no peak listed: memory only)."""
    accelerator = _gpu(gpu)
    return llm_speed.decode_step(
        _spec(model),
        bandwidth_bytes_per_s=accelerator.memory_bandwidth_bytes_per_s,
        peak_flops=accelerator.bf16_dense_flops or math.inf,
        batch=batch,
        context_tokens=context,
        weight_fmt=weight_fmt,
    ).tokens_per_s


def _ppl_rise_pct(model: str, method: str, bits: float) -> float:
    row = quality.quality_row(model, method, float(bits), 128)
    return (row.value - row.baseline) / row.baseline * 100


def _worked_int4_tok_s(model: str, gpu: str, context: int) -> float:
    """Bandwidth ÷ (INT4 weights − the unstreamed BF16 embedding table + KV cache)."""
    spec = _spec(model)
    table = 0 if spec.tie_word_embeddings else spec.embedding_table_params() * 2
    streamed = quant_bytes(spec, "int4") - table + _llm_memory.kv_cache_bytes(spec, int(context), 1, "bf16")
    return _gpu(gpu).memory_bandwidth_bytes_per_s / streamed


def quant_bytes(spec, fmt: str) -> float:
    return _llm_memory.weight_bytes(spec, fmt)


ANSWERS: dict[str, Callable[..., float]] = {
    # 06 quantization
    "quantization/fp8-scale": lambda fmt, amax: quant.FORMATS[fmt].max_finite / amax,
    "quantization/smoothquant-factor": lambda act, wmax, alpha: act**alpha / wmax ** (1 - alpha),
    "quantization/int4-decode-speedup": lambda model, gpu, context: (
        _tok_s(model, gpu, context, "int4") / _tok_s(model, gpu, context, "bf16")
    ),
    "quantization/ppl-rise": _ppl_rise_pct,
    "quantization/worked-int4-tok-s": _worked_int4_tok_s,
}

# The right option (its position as written, ``Option.origin``) of a choice question whose answer
# depends on its inputs.
CHOICES: dict[str, Callable[..., int]] = {}
