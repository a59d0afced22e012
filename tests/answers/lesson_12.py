"""Lesson 12 (capstone): its numeric answers recomputed without lessons/functions.py."""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from pathlib import Path

from simulators.hardware import get_accelerator
from tests.answers.common import (
    _gpu,
    _spec,
    llm_memory,
    llm_speed,
)

SAMPLES = Path(__file__).resolve().parents[2] / "measure" / "samples"
REPORTED = {"h100-sxm": "h100-sxm-80gb.json", "h200-sxm": "h200-sxm-141gb.json"}  # measured runs
USD_PER_HOUR = {"h100-sxm": 2.49, "h200-sxm": 3.5}  # the prices the capstone quotes, with sources


def _kv(model: str, ctx: int, batch: int = 1) -> float:
    """BF16 KV cache, bytes: 2 (K, V) × layers × KV heads × head_dim × 2 B × tokens × batch."""
    spec = _spec(model)
    return 2 * spec.num_layers * spec.num_kv_heads * spec.head_dim * 2 * ctx * batch


def _sample(gpu: str) -> dict:
    return json.loads((SAMPLES / REPORTED[gpu]).read_text())


def _pool_sequences(model: str, gpu: str, fmt: str, ctx: int) -> int:
    """vLLM's pool from the printed ledger: 0.9 × the reported total − weights − activation −
    non-torch, in blocks of 16 tokens, over the sequence length (lesson 4's arithmetic)."""
    from simulators.engines import vllm_startup
    from simulators.presets import get_model_preset

    total = _sample(gpu)["device"]["cuda"]["total_memory_bytes"]
    s = vllm_startup(
        get_model_preset(model).config,
        gpu,
        max_model_len=ctx,
        gpu_memory_utilization=0.9,
        quantization="fp8" if fmt == "fp8" else None,
        total_bytes=total,
    )
    available = 0.9 * total - s.weights_bytes - s.activation_bytes - s.non_torch_bytes
    tokens = available // (16 * _kv(model, 1)) * 16
    return math.floor(tokens / ctx)


def _measured_share() -> float:
    """Lesson 11: the bound of Llama 3.1 8B at batch 1, 512 tokens, over the measured CUDA-Graph step."""
    record = next(
        r
        for r in _sample("h100-sxm")["results"]
        if r.get("kind") == "decode"
        and r.get("mode") == "cuda_graph"
        and r.get("batch") == 1
        and r.get("cache", "static") == "static"
    )
    bound_s = 1 / _tok_s("llama-3.1-8b", "h100-sxm", 1, 512)
    return bound_s / record["step_s"]


def _tpot_ms(gpu: str, fmt: str, users: int, ctx: int) -> float:
    """Memory-bound step (these designs are far below the ridge) ÷ the measured share, ms."""
    return users / _tok_s("llama-3.1-8b", gpu, users, ctx, fmt) / _measured_share() * 1e3


def _ttft_s(gpu: str, fmt: str, prompt: int) -> float:
    """2 × matmul parameters × tokens + causal attention (4 · layers · heads × head_dim · T/2 · T,
    Kaplan et al. 2020 §2.1), at 55 % of the format's dense peak."""
    spec = _spec("llama-3.1-8b")
    attention = 2 * spec.num_layers * spec.num_heads * spec.head_dim * prompt * prompt
    flops = 2 * spec.matmul_params(active=True) * prompt + attention
    peak = get_accelerator(gpu).peak_flops("fp8" if fmt == "fp8" else "bf16")
    return flops / (0.55 * peak)


def _design_right(gpu: str, fmt: str, users: int, ctx: int, tpot: float, ttft: float, budget: float) -> bool:
    tpot_ms = _tpot_ms(gpu, fmt, users, ctx)
    usd = USD_PER_HOUR[gpu] * 1e6 / (users / (tpot_ms / 1e3) * 3600)
    return (
        _pool_sequences("llama-3.1-8b", gpu, fmt, ctx) >= users
        and tpot_ms <= tpot
        and _ttft_s(gpu, fmt, ctx) <= ttft
        and usd <= budget
    ), usd


DESIGNS = (("h100-sxm", "bf16"), ("h100-sxm", "fp8"), ("h200-sxm", "bf16"), ("h200-sxm", "fp8"))


def design_rights(users: int, ctx: int, tpot: float, ttft: float, budget: float) -> list[bool]:
    """Which of the four written designs meet every target (the options a learner may pick)."""
    return [_design_right(g, f, users, ctx, tpot, ttft, budget)[0] for g, f in DESIGNS]


def _cheapest(users: int, ctx: int, tpot: float, ttft: float, budget: float) -> int:
    found = [(_design_right(g, f, users, ctx, tpot, ttft, budget), i) for i, (g, f) in enumerate(DESIGNS)]
    return min((usd, i) for (ok, usd), i in found if ok)[1]


def _tok_s(model: str, gpu: str, batch: int, ctx: int, fmt: str = "bf16") -> float:
    """Memory-bound decode: batch tokens per (weights streamed + KV) ÷ bandwidth."""
    read = llm_speed.weight_bytes_read_per_step(_spec(model), batch, fmt) + _kv(model, ctx, batch)
    return batch / (read / _gpu(gpu).memory_bandwidth_bytes_per_s)


ANSWERS: dict[str, Callable[..., float]] = {
    "capstone/fit-gb": lambda model, fmt, ctx: (
        (llm_memory.weight_bytes(_spec(model), fmt) + _kv(model, ctx)) / 1e9
    ),
    "capstone/pick-gpu-ms": lambda model, gpu, ctx: 1 / _tok_s(model, gpu, 1, ctx) * 1e3,
    "capstone/max-batch": lambda model, gpu, fmt, ctx: _pool_sequences(model, gpu, fmt, ctx),
    "capstone/price-million": lambda model, gpu, ctx, batch, price: (
        price * 1e6 / (_tok_s(model, gpu, batch, ctx) * 3600)
    ),
    "capstone/design-tpot": lambda gpu, fmt, users, ctx: _tpot_ms(gpu, fmt, users, ctx),
}

# The right option (its position as written, ``Option.origin``) of a choice question whose answer
# depends on its inputs.
CHOICES: dict[str, Callable[..., int]] = {
    "capstone/design-pick": _cheapest,
}
