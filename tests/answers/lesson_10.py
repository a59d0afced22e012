"""Lesson 10 (choosing-hardware): its numeric answers recomputed without lessons/functions.py."""

from __future__ import annotations

import csv
import math
from collections.abc import Callable
from pathlib import Path

from tests.answers.common import (
    _decode,
    _gpu,
    _spec,
    llm_memory,
    llm_speed,
)


def _stream_bytes(model: str, fmt: str, context: int) -> float:
    """One batch-1 decode step: the weights it multiplies (not the looked-up embedding table) plus
    the BF16 KV cache of ``context`` tokens."""
    spec = _spec(model)
    return llm_speed.weight_bytes_read_per_step(spec, 1, fmt) + llm_memory.kv_cache_bytes(spec, context, 1)


# llama.cpp's rules, written out from its source (llama.cpp ec98e2002) rather than through
# simulators/engines/llamacpp.py or lessons/functions.py:
# - bytes per value of a KV type and per weight of a tensor type, from ggml-common.h's blocks:
#   f16 2; q8_0 34 bytes per 32; q4_K 144, q5_K 176, q6_K 210 bytes per 256;
# - src/llama-context.cpp: n_ctx padded up to a multiple of 256 (GGML_PAD(n_ctx, 256));
# - src/llama-kv-cache.cpp: one K and one V tensor per layer, KV heads × head_dim values a cell;
# - src/llama-quant.cpp (Q4_K_M): attn_v and ffn_down in q6_K on the "more bits" layers
#   (i < n/8, i >= 7n/8, or (i - n/8) % 3 == 2), else q4_K (attn_v q5_K on Llama 70B); the
#   other matrices q4_K; norms f32. Q8_0: every matrix q8_0;
# - the compute buffer: the reserve graph's output step for a 512-token micro-batch, logits
#   over the vocabulary plus the normed hidden state, f32 (the largest step for these models);
#   in a partial offload (ggml-backend.cpp ggml_backend_sched_split_graph, op offload from 32
#   tokens: the CPU layers' ops run on the GPU, their inputs copied in) the larger of that step
#   with the CPU output layer's weight copied in (q6_K; q8_0 in Q8_0) and block 0's attention,
#   which copies in the f32 KQ mask (cells x 512) beside its f16 cast and that block's K and V;
# - common/common.h: --fit keeps 1 GiB free on the GPU.
_BYTES_PER_VALUE = {"f16": 2.0, "q8_0": 34 / 32, "q4_K": 144 / 256, "q5_K": 176 / 256, "q6_K": 210 / 256}


def _llamacpp_kv_bytes(model: str, context: int, kv: str) -> float:
    spec = _spec(model)
    cells = math.ceil(context / 256) * 256
    return 2 * spec.num_layers * spec.num_kv_heads * spec.head_dim * _BYTES_PER_VALUE[kv] * cells


def _more_bits(i: int, n: int) -> bool:
    return i < n // 8 or i >= 7 * n // 8 or (i - n // 8) % 3 == 2


def _gguf_layer_bytes(model: str, quant: str) -> float:
    """One repeating layer's weights in the GGUF file, averaged over the layers."""
    spec = _spec(model)
    n, e, ff = spec.num_layers, spec.hidden_size, spec.intermediate_size
    q = spec.num_heads * spec.head_dim
    kv = spec.num_kv_heads * spec.head_dim
    is_70b = n == 80 and spec.num_heads != spec.num_kv_heads
    total = 0.0
    for i in range(n):
        if quant == "Q8_0":
            v_type = down_type = other = "q8_0"
        else:
            other = "q4_K"
            v_type = "q6_K" if _more_bits(i, n) else ("q5_K" if is_70b else "q4_K")
            down_type = "q6_K" if _more_bits(i, n) else "q4_K"
        total += (e * q + e * kv + q * e + 2 * e * ff) * _BYTES_PER_VALUE[other]
        total += e * kv * _BYTES_PER_VALUE[v_type] + ff * e * _BYTES_PER_VALUE[down_type]
        total += 2 * e * 4 + (2 * spec.head_dim * 4 if spec.qk_norm else 0)
    return total / n


def _logged_free_mib(reading: str, gpu: str) -> float:
    # the "N MiB free" a public llama.cpp log printed (simulators/data/llamacpp_free_readings.csv)
    path = Path(__file__).resolve().parents[2] / "simulators" / "data" / "llamacpp_free_readings.csv"
    with path.open(encoding="utf-8", newline="") as f:
        row = next(r for r in csv.DictReader(f) if r["id"] == reading)
    assert row["gpu"] == gpu, (reading, gpu)  # the reading is of the card the prompt names
    assert f"- {row['free_mib']} MiB free" in row["line"]  # and is the figure the log line prints
    return float(row["free_mib"])


def _llamacpp_gpu_layers(model: str, quant: str, context: int, kv: str, gpu: str, reading: str) -> float:
    # llama.cpp's --fit (src/llama.cpp: llama_params_fit in ec98e2002) keeps 1 GiB of the memory free
    # at start, not of the total
    spec = _spec(model)
    room = _logged_free_mib(reading, gpu) * 2**20 - 2**30
    output_step = (spec.vocab_size + spec.hidden_size) * 512 * 4
    per_layer = _gguf_layer_bytes(model, quant) + _llamacpp_kv_bytes(model, context, kv) / spec.num_layers
    layers = math.floor((room - output_step) / per_layer)
    if layers >= spec.num_layers + 1:
        return float(spec.num_layers + 1)
    # a partial offload: the output layer stays on the CPU (ec98e2002) but runs on the GPU
    output_weight = (
        spec.vocab_size * spec.hidden_size * _BYTES_PER_VALUE["q8_0" if quant == "Q8_0" else "q6_K"]
    )
    cells = math.ceil(context / 256) * 256
    one_layer_kv = _llamacpp_kv_bytes(model, context, kv) / spec.num_layers
    block0 = cells * 512 * (4 + 2) + one_layer_kv + 3 * spec.hidden_size * 512 * 4
    compute = max(output_step + output_weight, block0)
    return float(min(math.floor((room - compute) / per_layer), spec.num_layers))


ANSWERS: dict[str, Callable[..., float]] = {
    # Decode bound = bandwidth ÷ bytes per step (Apple GPUs: no sourced peak, so memory only).
    "choosing-hardware/m4max-70b-tok-s": lambda model, gpu: (
        llm_speed.decode_step(
            _spec(model),
            bandwidth_bytes_per_s=_gpu(gpu).memory_bandwidth_bytes_per_s,
            peak_flops=float("inf"),
            batch=1,
            context_tokens=8192,
            weight_fmt="int4",
        ).tokens_per_s
    ),
    # Break-even hours = purchase price ÷ hourly rent (prices stated in the prompt).
    "choosing-hardware/buy-vs-rent": lambda price, rent: price / rent,
    # A CPU streams the same bytes from DDR5: channels × 8 B × transfer rate (catalog rows).
    "choosing-hardware/cpu-decode": lambda model, cpu: (
        _gpu(cpu).memory_bandwidth_bytes_per_s / _stream_bytes(model, "int4", 4096)
    ),
    # TPU v5e slice, ideal tensor parallelism: chips × 819 GB/s stream the bytes at once.
    "choosing-hardware/tpu-decode": lambda model, chips: (
        chips * _gpu("tpu-v5e").memory_bandwidth_bytes_per_s / _stream_bytes(model, "bf16", 4096)
    ),
    # llama.cpp allocates 2 × layers × KV heads × head_dim × bytes a value × n_ctx padded to 256.
    "choosing-hardware/llamacpp-kv-mib": lambda model, context, kv: (
        _llamacpp_kv_bytes(model, context, kv) / 2**20
    ),
    # -ngl -1 with --fit: as many layers as leave 1 GiB free after the compute buffer.
    "choosing-hardware/llamacpp-gpu-layers": _llamacpp_gpu_layers,
    "choosing-hardware/gpu-hours-per-million": lambda model, gpu, batch: (
        1e6 / (_decode(_spec(model), _gpu(gpu), batch=batch, context_tokens=4096).tokens_per_s * 3600)
    ),
}

# The right option (its position as written, ``Option.origin``) of a choice question whose answer
# depends on its inputs.
CHOICES: dict[str, Callable[..., int]] = {}
