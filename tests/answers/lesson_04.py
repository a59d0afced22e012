"""Lesson 04 (sizing-vram): its numeric answers recomputed without lessons/functions.py."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

from tests.answers.common import (
    _spec,
    llm_memory,
)

_SAMPLE = Path(__file__).resolve().parents[2] / "measure" / "samples" / "h100-sxm-80gb.json"


def _reported(tool: str) -> float:
    """Total bytes the shipped H100 sample reports: NVML (nvidia-smi) or torch."""
    device = json.loads(_SAMPLE.read_text())["device"]
    if tool == "nvidia-smi":
        return device["nvml"]["memory_total_bytes"]
    return device["cuda"]["total_memory_bytes"]


def _kv_per_token(model: str, bytes_per_value: float = 2) -> float:
    spec = _spec(model)
    return 2 * spec.num_layers * spec.num_kv_heads * spec.head_dim * bytes_per_value


def _total(model: str, fmt: str = "bf16", batch: int = 1, context: int = 8192) -> float:
    return llm_memory.inference_memory(
        _spec(model), weight_fmt=fmt, kv_fmt=fmt, batch=batch, context_tokens=context
    ).total_bytes


def _vllm_available(model: str, util: float) -> float:
    """Bytes left for KV blocks: util × the reported total less the three printed terms."""
    from simulators.engines import vllm_startup
    from simulators.presets import get_model_preset

    s = vllm_startup(
        get_model_preset(model).config, "h100-sxm", max_model_len=8192, gpu_memory_utilization=util
    )
    return util * s.total_bytes - s.weights_bytes - s.activation_bytes - s.non_torch_bytes


ANSWERS: dict[str, Callable[..., float]] = {
    # 04 sizing-vram
    "sizing-vram/kv-per-token": lambda model: _kv_per_token(model) / 1024,
    "sizing-vram/llama2-long-batch": lambda model, batch: _kv_per_token(model) * 4096 * batch / 1e9,
    "sizing-vram/total-llama3-8b": lambda model, context: _total(model, context=context) / 1e9,
    "sizing-vram/reported-capacity": lambda: _reported("nvidia-smi") / 1e9,
    # GPU KV cache size from the figures the prompt gives (the ledger's terms, vLLM's own
    # arithmetic: request − weights − activation − non-torch, in blocks of 16 tokens)
    "sizing-vram/vllm-kv-tokens": lambda model, util: (
        _vllm_available(model, util) // (16 * _kv_per_token(model)) * 16
    ),
    "sizing-vram/double-rule-share": lambda model, batch, context: (
        _total(model, batch=batch, context=context)
        / (2 * llm_memory.weight_bytes(_spec(model), "bf16"))
        * 100
    ),
    "sizing-vram/weights-plus-kv": lambda model, fmt, batch: (
        (
            llm_memory.weight_bytes(_spec(model), fmt)
            + _kv_per_token(model, {"fp8": 1, "bf16": 2}[fmt]) * 8192 * batch
        )
        / 1e9
    ),
}

# The right option (its position as written, ``Option.origin``) of a choice question whose answer
# depends on its inputs.
CHOICES: dict[str, Callable[..., int]] = {}
