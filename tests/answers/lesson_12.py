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


# Published vLLM runs at batch 1 (Llama 3.1 8B, BF16/FP16): GPU, context attended over, measured
# seconds per output token. johnmusgrave.com/p/vllm-throughput-latency-sweep-on ("about 75
# tokens/sec", A100 40GB, 1,024 in + 128 out); yobitelcomm.github.io/bench/recipes/concurrency-sweep
# (tpot_p50_ms 6.48 at concurrency 1, H100 80GB HBM3).
ENGINE_RUNS = (("a100-40gb-sxm", 1024 + 64, 1 / 75), ("h100-sxm", 1024, 6.48e-3))


def share_range() -> tuple[float, float]:
    """The taught range of decode shares: the compiled loop (low) to the best engine run (high)."""
    engines = [(1 / _tok_s("llama-3.1-8b", gpu, 1, ctx)) / tpot_s for gpu, ctx, tpot_s in ENGINE_RUNS]
    return _measured_share(), max(engines)


def _tpot_ms(gpu: str, fmt: str, users: int, ctx: int, share: float | None = None) -> float:
    """Memory-bound step (these designs are far below the ridge) ÷ the share of the bound, ms."""
    share = _measured_share() if share is None else share
    return users / _tok_s("llama-3.1-8b", gpu, users, ctx, fmt) / share * 1e3


# The prefill range: roofline.run's default prefill MFU for H100-class GPUs (0.55,
# https://roofline.run/about/methodology, a planning figure) up to the share of the format's dense
# peak the project's own 8,192³ matmul reached on that GPU (measure/samples/).
PREFILL_PLANNING = 0.55
TORCH_DTYPE = {"bf16": "bfloat16", "fp8": "float8_e4m3fn"}


def _matmul_share(gpu: str, dtype: str) -> float:
    record = next(
        r
        for r in _sample(gpu)["results"]
        if r.get("kind") == "matmul"
        and r.get("dtype") == TORCH_DTYPE[dtype]
        and r.get("m") == r.get("k") == 8192
    )
    return record["tflops"] * 1e12 / get_accelerator(gpu).peak_flops(dtype)


def prefill_range(gpu: str, dtype: str) -> tuple[float, float]:
    return PREFILL_PLANNING, _matmul_share(gpu, dtype)


def _ttft_s(gpu: str, fmt: str, prompt: int, t: float = 0.0) -> float:
    """2 × matmul parameters × tokens with the output head (vocab × hidden) for the last token only,
    at the weights' format's dense peak; causal attention (4 · layers · heads × head_dim · T/2 · T,
    Kaplan et al. 2020 §2.1) at the BF16 peak, since the KV cache is BF16. Each at a share ``t`` of
    the way from the low end of the prefill range to the high end for its format."""
    spec = _spec("llama-3.1-8b")
    attention = 2 * spec.num_layers * spec.num_heads * spec.head_dim * prompt * prompt
    head = spec.vocab_size * spec.hidden_size
    weights = 2 * (spec.matmul_params(active=True) - head) * prompt + 2 * head
    wfmt = "fp8" if fmt == "fp8" else "bf16"

    def share(dtype: str) -> float:
        low, high = prefill_range(gpu, dtype)
        return low + (high - low) * t

    accelerator = get_accelerator(gpu)
    return weights / (share(wfmt) * accelerator.peak_flops(wfmt)) + attention / (
        share("bf16") * accelerator.peak_flops("bf16")
    )


def design_meets(
    gpu: str,
    fmt: str,
    users: int,
    ctx: int,
    tpot: float,
    ttft: float,
    budget: float,
    share: float,
    prefill: float = 0.0,
) -> tuple[bool, float]:
    """Whether a design meets every target when the engine reaches ``share`` of the decode bound and
    its prefill ``prefill`` of the way across the prefill range, and its price in USD per million."""
    tpot_ms = _tpot_ms(gpu, fmt, users, ctx, share)
    usd = USD_PER_HOUR[gpu] * 1e6 / (users / (tpot_ms / 1e3) * 3600)
    return (
        _pool_sequences("llama-3.1-8b", gpu, fmt, ctx) >= users
        and tpot_ms <= tpot
        and _ttft_s(gpu, fmt, ctx, prefill) <= ttft
        and usd <= budget
    ), usd


DESIGNS = (("h100-sxm", "bf16"), ("h100-sxm", "fp8"), ("h200-sxm", "bf16"), ("h200-sxm", "fp8"))


def design_sweep(
    users: int, ctx: int, tpot: float, ttft: float, budget: float, points: int = 41, prefill_points: int = 11
) -> list[str]:
    """Each written design over ``points`` decode shares × ``prefill_points`` prefill shares across
    the taught ranges: "right" (meets every target everywhere), "wrong" (nowhere) or "depends"."""
    low, high = share_range()
    shares = [low + (high - low) * i / (points - 1) for i in range(points)]
    prefills = [i / (prefill_points - 1) for i in range(prefill_points)]
    verdicts = []
    for gpu, fmt in DESIGNS:
        meets = [
            design_meets(gpu, fmt, users, ctx, tpot, ttft, budget, s, p)[0] for s in shares for p in prefills
        ]
        verdicts.append("right" if all(meets) else "wrong" if not any(meets) else "depends")
    return verdicts


def design_rights(users: int, ctx: int, tpot: float, ttft: float, budget: float) -> list[bool]:
    """Which of the four written designs a learner may pick: every design not wrong at every share."""
    return [v != "wrong" for v in design_sweep(users, ctx, tpot, ttft, budget)]


def _cheapest(users: int, ctx: int, tpot: float, ttft: float, budget: float) -> int:
    """The cheapest design right at every share (else the cheapest that depends on it)."""
    verdicts = design_sweep(users, ctx, tpot, ttft, budget)
    low = share_range()[0]
    for wanted in ("right", "depends"):
        found = [
            (design_meets(g, f, users, ctx, tpot, ttft, budget, low)[1], i)
            for i, (g, f) in enumerate(DESIGNS)
            if verdicts[i] == wanted
        ]
        if found:
            return min(found)[1]
    return -1


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
    "capstone/design-tpot": lambda gpu, fmt, users, ctx, share: _tpot_ms(
        gpu, fmt, users, ctx, share_range()[0 if share == "low" else 1]
    ),
}

# The right option (its position as written, ``Option.origin``) of a choice question whose answer
# depends on its inputs.
CHOICES: dict[str, Callable[..., int]] = {
    "capstone/design-pick": _cheapest,
}
