"""The model functions a lesson may call inside ``{{ }}`` and in a question's ``answer``.

Every number a lesson shows — in prose, in an option, as a right answer — is one of these calls
(or arithmetic on them), evaluated at load time by the same simulators that draw the charts, so
a lesson cannot drift from the pages. Each takes quoted ids (``"llama-3-8b"``, ``"h100-sxm"``) and
numbers, and returns a number in the unit its name says (``_bytes``, ``_gb`` = 10⁹ bytes,
``_gib`` = 2³⁰ bytes, ``_s``, ``_ms``, ``_tflops``, ``_tbs`` = 10¹² bytes/s).

Add a function here when a lesson needs a number no function gives yet: a thin call into
simulators/, never a formula of its own.
"""

from __future__ import annotations

import functools
import math
import re
from collections.abc import Callable
from typing import Any

from simulators import fit, hierarchy, llm_speed, parallelism, roofline
from simulators import llm_memory as mem
from simulators import quantization as q
from simulators.hardware import Accelerator, get_accelerator, get_interconnect
from simulators.llm_memory import ModelSpec
from simulators.presets import get_model_preset

# ---------------------------------------------------------------------------------- lookups


def _gpu(gpu_id: str) -> Accelerator:
    return get_accelerator(gpu_id)


def _model(model_id: str) -> ModelSpec:
    return get_model_preset(model_id).spec


# ---------------------------------------------------------------------------------- hardware


def peak_tflops(gpu: str, dtype: str = "bf16") -> float:
    """Dense datasheet peak at ``dtype``, TFLOP/s (10¹² FLOP/s)."""
    return _gpu(gpu).peak_flops(dtype) / 1e12


def has_peak(gpu: str, dtype: str = "bf16") -> float:
    """1 when the catalog has a sourced dense peak for ``dtype`` on ``gpu``, else 0 (for ``require:``)."""
    try:
        _gpu(gpu).peak_flops(dtype)
    except ValueError:
        return 0
    return 1


def bandwidth_tbs(gpu: str) -> float:
    """Device-memory bandwidth, TB/s (10¹² bytes/s), from the datasheet."""
    return _gpu(gpu).memory_bandwidth_bytes_per_s / 1e12


def bandwidth_gbs(gpu: str) -> float:
    """Device-memory bandwidth, GB/s (10⁹ bytes/s)."""
    return _gpu(gpu).memory_bandwidth_bytes_per_s / 1e9


def memory_gb(gpu: str) -> float:
    """Memory per device, GB (10⁹ bytes), as the vendor labels it."""
    return _gpu(gpu).memory_bytes / 1e9


def ridge(gpu: str, dtype: str = "bf16") -> float:
    """Ridge point, FLOP per byte: dense peak ÷ device-memory bandwidth."""
    return _gpu(gpu).ridge_point(dtype)


def sm_count(gpu: str) -> float:
    """Streaming multiprocessors (NVIDIA) or compute units (AMD) per device."""
    return _gpu(gpu).sm_count


def l2_mib(gpu: str) -> float:
    """L2 cache per device, MiB."""
    return _gpu(gpu).l2_bytes / 2**20


def link_gbs(link: str) -> float:
    """An interconnect's bandwidth per direction, GB/s: the payload rate after line encoding where
    the catalog has the line rate (PCIe 5.0 x16: 63.0, not the raw 64), else the published rate."""
    return get_interconnect(link).payload_per_direction_bytes_per_s / 1e9


# ---------------------------------------------------------------------------------- models


def params(model: str) -> float:
    """Total parameters of a shipped model config."""
    return _model(model).param_count()


def active_params(model: str) -> float:
    """Parameters used per token (a mixture of experts uses only its routed experts)."""
    return _model(model).param_count(active=True)


def layers(model: str) -> float:
    return _model(model).num_layers


def hidden_size(model: str) -> float:
    return _model(model).hidden_size


def heads(model: str) -> float:
    return _model(model).num_heads


def kv_heads(model: str) -> float:
    return _model(model).num_kv_heads


def head_dim(model: str) -> float:
    return _model(model).head_dim


def kv_bytes_per_token(model: str, kv_fmt: str = "bf16") -> float:
    """KV-cache bytes one token adds (all layers, K and V; a hybrid's fixed states excluded)."""
    spec = _model(model)
    return mem.kv_cache_bytes(spec, 1, 1, kv_fmt) - spec.state_bytes()


def attention_layers(model: str) -> float:
    """Layers that keep keys and values per token (full, sliding, chunked or latent attention)."""
    return float(sum(kind in ("full", "sliding", "chunked", "mla") for kind in _model(model).kinds()))


def state_layers(model: str) -> float:
    """Layers that keep a fixed-size state instead (linear attention, state-space, recurrent)."""
    return float(sum(kind in ("linear", "ssm", "recurrent") for kind in _model(model).kinds()))


def state_mb(model: str) -> float:
    """Fixed-size state one sequence keeps in those layers, whatever its length, MB (10⁶ bytes)."""
    return _model(model).state_bytes() / 1e6


def _within_context(model: str, tokens: float) -> int:
    """``tokens`` as an int, refused past the model's trained context (``max_position_embeddings``
    in its config): a lesson never runs a model on sequences it was not trained for."""
    limit = _model(model).max_positions
    if limit and int(tokens) > int(limit):
        raise ValueError(
            f"{int(tokens):,} tokens is past {model}'s trained context ({int(limit):,} tokens, "
            "max_position_embeddings): choose a shorter context or a long-context model"
        )
    return int(tokens)


def max_context(model: str) -> float:
    """The longest sequence a model was trained for, tokens (``max_position_embeddings``)."""
    return float(_model(model).max_positions or 0)


def sliding_window(model: str) -> float:
    """Tokens a sliding-window layer keeps (0 if the model has none)."""
    return float(_model(model).sliding_window or 0)


def sliding_layers(model: str) -> float:
    """How many of the model's layers attend over a sliding window only."""
    spec = _model(model)
    return float(len(spec.sliding_layers)) if spec.sliding_window else 0.0


def window_tokens(model: str, context: int) -> float:
    """Tokens a sliding-window layer's cache keeps of a ``context``-token sequence: the window, or
    the whole context when it is shorter or the model has no window."""
    window = _model(model).sliding_window
    return float(min(int(context), window) if window else int(context))


def tied_embeddings(model: str) -> float:
    """1 if the model's output head is its input embedding table (``tie_word_embeddings``), else 0."""
    return 1.0 if _model(model).tie_word_embeddings else 0.0


def naive_kv_cache_gb(model: str, context: int, kv_fmt: str = "bf16") -> float:
    """The 2023 formula, every layer a full-attention layer of the model's main shape:
    2 × layers × KV heads × head_dim × bytes × context, GB."""
    spec = _model(model)
    per_token = 2 * spec.num_layers * spec.num_kv_heads * spec.head_dim * mem.kv_bytes_per_value(kv_fmt)
    return per_token * _within_context(model, context) / 1e9


def kv_cache_gb(model: str, context: int, batch: int = 1, kv_fmt: str = "bf16") -> float:
    """KV cache of ``batch`` sequences of ``context`` tokens, GB."""
    return mem.kv_cache_bytes(_model(model), _within_context(model, context), int(batch), kv_fmt) / 1e9


def weights_gb(model: str, fmt: str = "bf16") -> float:
    """Weights in format ``fmt``, GB (quantized formats: linear layers only, with their scales)."""
    return mem.weight_bytes(_model(model), fmt) / 1e9


# ---------------------------------------------------------------------------------- inference


def inference_gb(
    model: str,
    gpu: str = "h100-sxm",
    weight_fmt: str = "bf16",
    kv_fmt: str = "bf16",
    batch: int = 1,
    context: int = 8192,
    n_gpus: int = 1,
) -> float:
    """Memory per GPU to serve the model (Will it fit?'s total), GB."""
    return _inference(model, gpu, weight_fmt, kv_fmt, batch, context, n_gpus).memory.total_bytes / 1e9


def _inference(
    model: str, gpu: str, weight_fmt: str, kv_fmt: str, batch: int, context: int, n_gpus: int
) -> fit.FitResult:
    return fit.inference(
        _model(model),
        _gpu(gpu),
        weight_fmt=weight_fmt,
        kv_fmt=kv_fmt,
        batch=int(batch),
        context=_within_context(model, context),
        n_gpus=int(n_gpus),
    )


def _decode(model: str, gpu: str, batch: int, context: int, weight_fmt: str, kv_fmt: str, n_gpus: int):
    accelerator = _gpu(gpu)
    peak = fit.peak_or_none(accelerator, weight_fmt)
    return llm_speed.decode_step(
        _model(model),
        bandwidth_bytes_per_s=accelerator.memory_bandwidth_bytes_per_s,
        peak_flops=peak or math.inf,
        batch=int(batch),
        context_tokens=_within_context(model, context),
        weight_fmt=weight_fmt,
        kv_fmt=kv_fmt,
        n_gpus=int(n_gpus),
    )


def decode_tok_s(
    model: str,
    gpu: str = "h100-sxm",
    batch: int = 1,
    context: int = 0,
    weight_fmt: str = "bf16",
    kv_fmt: str = "bf16",
    n_gpus: int = 1,
) -> float:
    """Upper bound on decode speed, tokens/s summed over the batch."""
    return _decode(model, gpu, batch, context, weight_fmt, kv_fmt, n_gpus).tokens_per_s


def decode_memory_ms(
    model: str, gpu: str = "h100-sxm", batch: int = 1, context: int = 0, weight_fmt: str = "bf16"
) -> float:
    """Time to stream one decode step's bytes (weights + KV cache) from memory, ms."""
    return _decode(model, gpu, batch, context, weight_fmt, "bf16", 1).memory_time_s * 1e3


def decode_compute_ms(
    model: str, gpu: str = "h100-sxm", batch: int = 1, context: int = 0, weight_fmt: str = "bf16"
) -> float:
    """Time to do one decode step's FLOPs at the dense peak, ms."""
    return _decode(model, gpu, batch, context, weight_fmt, "bf16", 1).compute_time_s * 1e3


def decode_intensity(model: str, batch: int = 1, context: int = 0, dtype: str = "bf16") -> float:
    """Arithmetic intensity of one decode step of the whole model, FLOP per byte."""
    return roofline.decode_step_op(
        _model(model), int(batch), _within_context(model, context), dtype=dtype
    ).intensity


def decode_intensity_limit(model: str, context: int, kv_fmt: str = "bf16") -> float:
    """The intensity a decode step approaches as the batch grows at this context, FLOP per byte."""
    return roofline.decode_intensity_limit(_model(model), _within_context(model, context), kv_fmt)


def crossover_batch(model: str, gpu: str = "h100-sxm", dtype: str = "bf16", context: int = 0) -> float:
    """Smallest batch whose decode step reaches the ridge point (NaN when none does)."""
    found = roofline.decode_crossover_batch(_model(model), _gpu(gpu), dtype, int(context))
    return float(found) if found else math.nan


def prefill_ms(model: str, gpu: str = "h100-sxm", tokens: int = 8192, mfu: float = 0.55) -> float:
    """Time to first token for one prompt of ``tokens`` at ``mfu`` of the dense BF16 peak, ms. Only
    the last token goes through the output head, as serving engines do (``logits="last"``)."""
    peak = _gpu(gpu).peak_flops("bf16")
    return llm_speed.prefill_time_s(_model(model), int(tokens), peak_flops=peak, mfu=mfu, logits="last") * 1e3


def head_params(model: str) -> float:
    """Parameters of the output head (the LM head: vocabulary × hidden size), whether or not it is
    tied to the input embedding table."""
    spec = _model(model)
    untied = spec.param_breakdown().lm_head
    return float(
        spec.vocab_size * (spec.embed_dim or spec.hidden_size) if spec.tie_word_embeddings else untied
    )


# ---------------------------------------------------------------------------------- training


def training_gb(
    model: str,
    gpu: str = "h100-sxm",
    task: str = "full",
    recipe: str = "mixed-adam-16",
    seq: int = 2048,
    micro_batch: int = 1,
    n_gpus: int = 1,
    zero_stage: int = 0,
    recompute: str = "none",
    lora_rank: int = 16,
) -> float:
    """Memory per GPU for one training step (Will it fit?'s total), GB."""
    return training_part_gb(
        model,
        "total",
        gpu,
        task=task,
        seq=seq,
        micro_batch=micro_batch,
        n_gpus=n_gpus,
        zero_stage=zero_stage,
        recompute=recompute,
        lora_rank=lora_rank,
        recipe=recipe,
    )


def recipe_bytes_per_param(recipe: str = "mixed-adam-16") -> float:
    """Bytes per parameter of weights + gradients + optimizer states in a training recipe."""
    return mem.training_recipe(recipe).bytes_per_param


def lora_params(model: str, rank: int = 16, modules: str = "q_proj,v_proj") -> float:
    """Trainable LoRA parameters for adapters of ``rank`` on the comma-separated ``modules``."""
    return mem.lora_trainable_params(_model(model), int(rank), tuple(modules.split(",")))


# ---------------------------------------------------------------------------------- quantization


@functools.cache
def _gaussian_schemes() -> dict[str, q.SchemeResult]:
    tensor = q.make_tensor("gaussian", (1024, 1024), 0)
    return {r.scheme.label: r for r in q.evaluate_schemes(tensor)}


def sqnr_db(scheme: str) -> float:
    """SQNR (dB) of a scheme on the Quantization page's seeded Gaussian (1,024 × 1,024, seed 0).

    ``scheme`` is the label the page's table shows, e.g. "INT4 group 128" or "NF4 block 64".
    """
    return _gaussian_schemes()[scheme].stats.sqnr_db


def scheme_bits(scheme: str) -> float:
    """Bits per parameter of a scheme, scales and zero points included."""
    return _gaussian_schemes()[scheme].effective_bits


def format_max(fmt: str) -> float:
    """Largest finite value of a number format's element code (e.g. 448 for FP8 E4M3)."""
    return q.FORMATS[fmt].max_finite


# ---------------------------------------------------------------------------------- hierarchy


def latency_ns(family: str, level: str, which: str = "mid") -> float:
    """Published latency of a memory level (min, mid or max of the sourced range), ns."""
    return hierarchy.get_level(family, level).latency_s(which) * 1e9


def level_bandwidth_tbs(family: str, level: str) -> float:
    """Bandwidth of a memory level for the whole device, TB/s."""
    return hierarchy.get_level(family, level).bandwidth_per_device_bytes_per_s / 1e12


def bytes_in_flight_mb(family: str, level: str = "device-memory") -> float:
    """Little's law: latency × bandwidth, the bytes that must be in flight to keep a level busy, MB."""
    return hierarchy.bytes_in_flight(hierarchy.get_level(family, level)) / 1e6


def warps_per_sm(family: str, load_bytes: int = 4, level: str = "device-memory") -> float:
    """Warps each SM needs in flight to saturate a level when every thread loads ``load_bytes``."""
    return hierarchy.warps_in_flight(hierarchy.get_level(family, level), bytes_per_thread=int(load_bytes))


# ---------------------------------------------------------------------------------- parallelism


def bubble(pp: int, microbatches: int) -> float:
    """Pipeline bubble fraction (p − 1) / (m + p − 1)."""
    return parallelism.pipeline_bubble_fraction(int(pp), int(microbatches))


# ------------------------------------------------------------------ additions for lessons 01, 02, 04, 05, 06


def mlp_size(model: str) -> float:
    """Width of the MLP's hidden layer (``intermediate_size`` in the model's config)."""
    return float(_model(model).intermediate_size)


def max_warps_per_sm(family: str) -> float:
    """Resident warps one SM can hold (the Programming Guide's limit, from the hierarchy data)."""
    found = hierarchy.family(family).max_warps_per_sm
    return float(found) if found else math.nan


def gemm_gflop(m: int, n: int, k: int) -> float:
    """FLOPs of an ``[M,K] × [K,N]`` matrix multiply (2·M·N·K), GFLOP (10⁹ FLOP)."""
    return roofline.gemm(int(m), int(n), int(k)).flops / 1e9


def gemm_us(m: int, n: int, k: int, gpu: str = "h100-sxm", dtype: str = "bf16") -> float:
    """Roofline time of an ``[M,K] × [K,N]`` GEMM at the dense datasheet peak and bandwidth, µs."""
    prediction = roofline.predict(roofline.gemm(int(m), int(n), int(k), dtype), _gpu(gpu))
    return prediction.time_s * 1e6 if prediction else math.nan


def level_kib(family: str, level: str) -> float:
    """Capacity of a memory level in its own scope (per SM for registers and L1), KiB (2¹⁰ bytes)."""
    found = hierarchy.get_level(family, level).capacity_bytes
    return found / 2**10 if found else math.nan


def transfer_ms(family: str, level: str, nbytes: float) -> float:
    """Time to move ``nbytes`` from a memory level: latency + bytes ÷ bandwidth, ms."""
    return hierarchy.transfer_time_s(hierarchy.get_level(family, level), float(nbytes)) * 1e3


def _placement(family: str, model: str, weight_fmt: str, context: int, usable: float):
    spec = _model(model)
    return hierarchy.place_model(
        mem.weight_bytes(spec, weight_fmt),
        mem.kv_cache_bytes(spec, _within_context(model, context), 1, "bf16"),
        hierarchy.family(family).levels,
        usable_fraction=usable,
    )


def offloaded_gb(
    family: str, model: str, weight_fmt: str = "bf16", context: int = 8192, usable: float = 0.9
) -> float:
    """Bytes that do not fit in device memory and live in host memory (batch 1), GB.

    ``usable`` is the share of device memory the Memory hierarchy page lets the model use.
    """
    return _placement(family, model, weight_fmt, context, usable).offloaded_bytes / 1e9


def offload_ms_per_token(
    family: str, model: str, weight_fmt: str = "bf16", context: int = 8192, usable: float = 0.9
) -> float:
    """Batch-1 decode time per token with the overflow streamed over the host link, ms."""
    return _placement(family, model, weight_fmt, context, usable).time_per_token_s * 1e3


def offload_slowdown(
    family: str, model: str, weight_fmt: str = "bf16", context: int = 8192, usable: float = 0.9
) -> float:
    """How many times slower a token is with offloading than if everything sat in device memory."""
    return _placement(family, model, weight_fmt, context, usable).slowdown


def inference_part_gb(
    model: str,
    part: str,
    gpu: str = "h100-sxm",
    weight_fmt: str = "bf16",
    kv_fmt: str = "bf16",
    batch: int = 1,
    context: int = 8192,
    n_gpus: int = 1,
) -> float:
    """One part of Will it fit?'s inference memory per GPU ("weights", "kv_cache", "activations",
    "overhead"), GB."""
    return _inference(model, gpu, weight_fmt, kv_fmt, batch, context, n_gpus).memory.get(part) / 1e9


def prefill_intensity(model: str, tokens: int, dtype: str = "bf16") -> float:
    """Arithmetic intensity of one prefill of ``tokens`` prompt tokens, FLOP per byte."""
    return roofline.prefill_op(_model(model), int(tokens), dtype=dtype).intensity


def smoothquant_scale(act_max: float, weight_max: float, alpha: float = 0.5) -> float:
    """SmoothQuant's per-channel factor s = max|X|^α / max|W|^(1−α) (arXiv 2211.10438, eq. 4)."""
    return float(q.smoothquant_scales([float(act_max)], [float(weight_max)], float(alpha))[0])


@functools.cache
def _outlier_matmul(alpha: float) -> dict[str, q.ErrorStats]:
    return q.outlier_matmul_demo(alpha=alpha)


def matmul_sqnr_db(scheme: str, alpha: float = 0.5) -> float:
    """Output SQNR (dB) of the Quantization page's outlier matmul under ``scheme``.

    Activations with outlier channels (512 × 1,024, seed 0) times a Gaussian weight; ``scheme``
    is a key of ``simulators.quantization.MATMUL_SCHEMES`` ("w8a8-per-tensor", "w8a8-smoothquant", …).
    """
    return _outlier_matmul(float(alpha))[scheme].sqnr_db


# ------------------------------------------------------------------ additions for lessons 07, 08, 09, 10, 11


def recipe_part_bytes(part: str, recipe: str = "mixed-adam-16") -> float:
    """Bytes per parameter of one part of a training recipe: "weights" (the 16-bit working copy),
    "master" (fp32 master weights), "gradients" or "optimizer" (Adam's moments)."""
    r = mem.training_recipe(recipe)
    return {
        "weights": r.weight_bytes,
        "master": r.master_bytes,
        "gradients": r.grad_bytes,
        "optimizer": r.optimizer_bytes,
    }[part]


def training_part_gb(
    model: str,
    part: str = "total",
    gpu: str = "h100-sxm",
    task: str = "full",
    seq: int = 2048,
    micro_batch: int = 1,
    n_gpus: int = 1,
    zero_stage: int = 0,
    recompute: str = "none",
    lora_rank: int = 16,
    lora_modules: str = "",
    recipe: str = "mixed-adam-16",
) -> float:
    """One part of the memory per GPU of a training step (Will it fit?'s parts), GB.

    ``part``: "total", or a part key of ``llm_memory.training_memory``: "frozen_weights",
    "weights", "gradients", "optimizer", "activations", "overhead". ``lora_modules`` is
    comma-separated ("q_proj,v_proj"); empty means the simulator's default (every linear layer).
    """
    result = fit.training(
        _model(model),
        _gpu(gpu),
        task=task,
        recipe=recipe,
        seq=int(seq),
        micro_batch=int(micro_batch),
        n_gpus=int(n_gpus),
        zero_stage=int(zero_stage),
        recompute=recompute,
        lora_rank=int(lora_rank),
        lora_modules=tuple(lora_modules.split(",")) if lora_modules else (),
    )
    memory = result.memory
    return (memory.total_bytes if part == "total" else memory.get(part)) / 1e9


def zero_state_gb(num_params: float, n_gpus: int, stage: int) -> float:
    """ZeRO model states (16 B/param mixed-precision Adam) per GPU at ``stage`` over ``n_gpus``, GB."""
    return parallelism.zero_model_state_bytes(float(num_params), int(n_gpus), int(stage)) / 1e9


def _attention_op(kernel: str, heads: int, kv_heads: int, q_len: int, kv_len: int, head_dim: int):
    if kernel not in ("flash", "naive"):
        raise ValueError(f"kernel must be 'flash' or 'naive', got {kernel!r}")
    return roofline.attention(
        1, int(heads), int(kv_heads), int(q_len), int(kv_len), int(head_dim), flash=kernel == "flash"
    )


def attention_us(
    gpu: str, kernel: str, heads: int, kv_heads: int, q_len: int, kv_len: int, head_dim: int = 128
) -> float:
    """Roofline time of one layer's attention (one sequence, no mask), µs; ``kernel`` "flash" or "naive"."""
    op = _attention_op(kernel, heads, kv_heads, q_len, kv_len, head_dim)
    return roofline.predict(op, _gpu(gpu)).time_s * 1e6


def attention_intensity(
    kernel: str, heads: int, kv_heads: int, q_len: int, kv_len: int, head_dim: int = 128
) -> float:
    """Arithmetic intensity of one layer's attention, FLOP per byte of device-memory traffic."""
    return _attention_op(kernel, heads, kv_heads, q_len, kv_len, head_dim).intensity


def attention_gflop(
    kernel: str, heads: int, kv_heads: int, q_len: int, kv_len: int, head_dim: int = 128
) -> float:
    """FLOPs of one layer's attention (QKᵀ and PV), GFLOP (10⁹)."""
    return _attention_op(kernel, heads, kv_heads, q_len, kv_len, head_dim).flops / 1e9


def _norm_op(kind: str, fusion: str, tokens: int, hidden: int):
    if fusion not in ("fused", "unfused"):
        raise ValueError(f"fusion must be 'fused' or 'unfused', got {fusion!r}")
    build = {"rmsnorm": roofline.rmsnorm, "layernorm": roofline.layernorm}[kind]
    return build(int(tokens), int(hidden), fusion == "fused")


def norm_us(gpu: str, kind: str, fusion: str, tokens: int = 4096, hidden: int = 4096) -> float:
    """Roofline time of a "rmsnorm" or "layernorm", "fused" or "unfused", in BF16, µs."""
    return roofline.predict(_norm_op(kind, fusion, tokens, hidden), _gpu(gpu)).time_s * 1e6


def norm_intensity(kind: str, fusion: str, tokens: int = 4096, hidden: int = 4096) -> float:
    """Arithmetic intensity of a "rmsnorm" or "layernorm", "fused" or "unfused", FLOP per byte."""
    return _norm_op(kind, fusion, tokens, hidden).intensity


def score_bytes_per_element(act_bytes: float = 2) -> float:
    """Bytes eager attention holds per attention score at its peak (BF16 scores, FP32 softmax copy
    and output), bytes."""
    return mem.eager_score_bytes_per_element(act_bytes)


def eager_scores_gb(model: str, tokens: int) -> float:
    """Eager attention's score matrix at its peak for a prefill of ``tokens`` (one layer), GB."""
    return mem.attention_score_bytes(_model(model), int(tokens), int(tokens)) / 1e9


def prefill_peak_gb(model: str, tokens: int, attention: str = "flash") -> float:
    """Predicted peak of one unchunked prefill of ``tokens`` as transformers runs it (tensors only), GB."""
    return fit.measured_prefill_memory(_model(model), int(tokens), attention).total_bytes / 1e9


def measured_prefill_gb(model: str, measured_with: str = "sdpa") -> float:
    """Measured prefill peak on an H100 (simulators/data/measured), GB; ``measured_with`` as the run
    was labelled: "sdpa" (fused kernel), "eager" or "default"."""
    for row in fit.measured_validation_rows():
        if row["preset"] == model and row["measured_with"] == measured_with:
            return row["measured_gb"]
    raise ValueError(f"no measured prefill of {model!r} with {measured_with!r}")


def measured_prompt_tokens(model: str, measured_with: str = "sdpa") -> float:
    """Prompt length of that measured prefill, tokens."""
    for row in fit.measured_validation_rows():
        if row["preset"] == model and row["measured_with"] == measured_with:
            return row["prompt_tokens"]
    raise ValueError(f"no measured prefill of {model!r} with {measured_with!r}")


# ---------------------------------------------------------------------------------- the H100 sample
# What this project measured on one H100 80GB HBM3 (measure/samples/h100-sxm-80gb.json; its README
# says how): lessons quote these instead of typing the numbers.


@functools.cache
def _h100_records() -> tuple[dict[str, Any], ...]:
    from measure.samples import H100_SAMPLE, load_sample

    return tuple(load_sample(H100_SAMPLE)["results"])


def _one(kind: str, **match: Any) -> dict[str, Any]:
    found = [
        r for r in _h100_records() if r.get("kind") == kind and all(r.get(k) == v for k, v in match.items())
    ]
    if len(found) != 1:
        raise ValueError(f"{len(found)} {kind} records match {match} in the H100 sample")
    return found[0]


def h100_launch_us(mode: str = "eager") -> float:
    """Measured cost of one tiny operation on the H100, µs: "eager" PyTorch or inside a "cuda_graph"."""
    return _one("launch_overhead", mode=mode)["median_s"] * 1e6


def h100_bandwidth_gbs(op: str = "triad", nbytes: float | None = None) -> float:
    """Measured bandwidth on the H100, GB/s (10⁹ bytes/s): ``op`` ("copy", "triad", ...) over the
    working set nearest ``nbytes`` (the largest when None)."""
    records = [r for r in _h100_records() if r.get("kind") == "bandwidth" and r.get("op") == op]
    if not records:
        raise ValueError(f"no {op!r} bandwidth records in the H100 sample")
    if nbytes is None:
        record = max(records, key=lambda r: r["bytes"])
    else:
        record = min(records, key=lambda r: abs(math.log(r["bytes"] / nbytes)))
    return record["gb_per_s"]


def h100_matmul_tflops(dtype: str = "bfloat16", size: int = 8192) -> float:
    """Measured square matmul on the H100, TFLOP/s (10¹² FLOP/s): ``dtype`` as torch names it."""
    return _one("matmul", dtype=dtype, m=size, n=size, k=size)["tflops"]


def h100_decode(metric: str = "tok_s", mode: str = "eager", batch: int = 1, cache: str = "static") -> float:
    """Measured Llama-3.1-8B decode on the H100: ``metric`` "tok_s" (tokens/s over the batch) or
    "step_ms"; ``mode`` "eager" or "cuda_graph"; ``cache`` "static" (a hand-written loop) or
    "dynamic" (``generate()``)."""
    record = _one("decode", mode=mode, batch=batch, cache=cache)
    if metric == "tok_s":
        return record["tok_s"]
    if metric == "step_ms":
        return record["step_s"] * 1e3
    raise ValueError(f"metric must be 'tok_s' or 'step_ms', got {metric!r}")


def allreduce_factor(n_gpus: int) -> float:
    """Times its buffer each GPU sends in a ring all-reduce over ``n_gpus``: 2(n − 1)/n."""
    return parallelism.bus_bandwidth_factor("all-reduce", int(n_gpus))


def link_efficiency(link: str) -> float:
    """Share of a link's one-way rate a transfer reaches (measured where the catalog has it, else 0.8)."""
    return parallelism.link_efficiency(get_interconnect(link))


def link_measured_gbs(link: str) -> float:
    """The catalog's measured one-way rate of a link (interconnects.csv ``measured_setup``), GB/s."""
    measured = get_interconnect(link).measured_bytes_per_s
    if measured is None:
        raise ValueError(f"the catalog has no measured rate for {link!r}")
    return measured / 1e9


def gpu_link_gbs(gpu: str) -> float:
    """A GPU's GPU-to-GPU link (NVLink, Infinity Fabric) as its vendor quotes it, GB/s, both directions."""
    return _gpu(gpu).interconnect_bytes_per_s / 1e9


def _par(
    model: str,
    nodes: int,
    gpus_per_node: int,
    tp: int,
    pp: int,
    dp: int,
    *,
    zero: int = 1,
    m: int = 16,
    seq: int = 4096,
    sp: int = 0,
    recompute: str = "none",
    intra: str = "nvlink-4",
    inter: str = "ib-ndr-4x",
    gpu: str = "h100-sxm",
):
    """A training layout as the Parallelism page builds it: DP × TP × PP on ``nodes`` ×
    ``gpus_per_node`` GPUs, ZeRO stage ``zero``, ``m`` micro-batches of ``seq`` tokens, sequence
    parallelism ``sp`` (0/1), recomputation, and the links inside and between nodes."""
    spec = _model(model)
    layout = parallelism.Layout(
        dp=int(dp),
        tp=int(tp),
        pp=int(pp),
        zero_stage=int(zero),
        num_microbatches=int(m),
        seq=int(seq),
        nodes=int(nodes),
        gpus_per_node=int(gpus_per_node),
        sequence_parallel=bool(sp),
        recompute=recompute,
    )
    parallelism.check_layout(spec, layout)
    terms = parallelism.communication_per_step(spec, layout, intra_node_link=intra, inter_node_link=inter)
    step = parallelism.step_time(spec, layout, _gpu(gpu), terms)
    return spec, layout, terms, step


def par_memory_gb(
    model: str, nodes: int, gpus_per_node: int, tp: int, pp: int, dp: int, **layout: Any
) -> float:
    """Memory of the busiest GPU of a training layout (the Parallelism page's figure), GB.
    ``layout``: zero, m, seq, sp, recompute as in ``_par``."""
    spec, built, _, _ = _par(model, nodes, gpus_per_node, tp, pp, dp, **layout)
    return parallelism.per_gpu_memory(spec, built).total_bytes / 1e9


def par_comm_gb(
    model: str, kind: str, nodes: int, gpus_per_node: int, tp: int, pp: int, dp: int, **layout: Any
) -> float:
    """GB one GPU sends per step for traffic ``kind`` ("tp", "pp" or "dp"), bus-bandwidth accounting."""
    _, _, terms, _ = _par(model, nodes, gpus_per_node, tp, pp, dp, **layout)
    return sum(t.bytes_per_gpu for t in terms if t.key.startswith(kind)) / 1e9


def par_comm_s(
    model: str, kind: str, nodes: int, gpus_per_node: int, tp: int, pp: int, dp: int, **layout: Any
) -> float:
    """Seconds per step of traffic ``kind`` ("tp", "pp" or "dp") on its links (``intra``/``inter``
    in ``layout``), as the Parallelism page computes it (one-way rate × the link's efficiency)."""
    _, _, terms, _ = _par(model, nodes, gpus_per_node, tp, pp, dp, **layout)
    return sum(t.time_s for t in terms if t.key.startswith(kind))


def par_scaling(
    model: str, nodes: int, gpus_per_node: int, tp: int, pp: int, dp: int, **layout: Any
) -> float:
    """Scaling efficiency of a layout on H100 SXMs: ideal compute time ÷ step time (0 to 1)."""
    _, _, _, step = _par(model, nodes, gpus_per_node, tp, pp, dp, **layout)
    return step.scaling_efficiency


# ------------------------------------------------------------------ additions for lessons 09, 10, 11, 12
# (many-gpus, choosing-hardware, measuring, capstone)


def bubble_ratio(pp: int, microbatches: int) -> float:
    """Megatron-LM's bubble: idle time over the ideal (bubble-free) time, (p − 1) / m."""
    return parallelism.megatron_bubble_ratio(int(pp), int(microbatches))


def weights_read_gb(model: str, fmt: str = "bf16", batch: int = 1) -> float:
    """Weight bytes one decode step streams, GB: every weight except the input-embedding table (a
    lookup reads one row per sequence); quantized formats keep the LM head and norms in BF16."""
    return llm_speed.weight_bytes_read_per_step(_model(model), int(batch), fmt) / 1e9


def tp_decode_ms(
    model: str, gpu: str = "h100-sxm", tp: int = 1, batch: int = 1, context: int = 0, weight_fmt: str = "bf16"
) -> float:
    """Memory-bound decode step with the model split over ``tp`` GPUs by tensor parallelism, each
    streaming 1/tp of the bytes at once (ideal split, communication left out), ms."""
    return _decode(model, gpu, batch, context, weight_fmt, "bf16", tp).memory_time_s * 1e3


def tp_decode_allreduces(model: str) -> float:
    """All-reduces one decode step needs under tensor parallelism: two per layer (after attention
    and after the MLP; Megatron-LM, Shoeybi et al. 2019 §3)."""
    return 2 * _model(model).num_layers


def tp_decode_comm_mb(model: str, tp: int, batch: int = 1) -> float:
    """MB one GPU sends per decode step under tensor parallelism: two ring all-reduces per layer of
    the batch's hidden vectors in BF16."""
    spec = _model(model)
    message = int(batch) * spec.hidden_size * 2
    return tp_decode_allreduces(model) * parallelism.ring_allreduce_bytes_per_gpu(message, int(tp)) / 1e6


def link_usable_gbs(link: str) -> float:
    """What a transfer reaches on a link, GB/s, as the Parallelism page computes it: the payload rate
    times ``link_efficiency`` (the catalog's measured fraction, which gives back the measured rate,
    else ml-engineering's 80 %)."""
    found = get_interconnect(link)
    return found.payload_per_direction_bytes_per_s * parallelism.link_efficiency(found) / 1e9


def allreduce_ms(gbytes: float, n_gpus: int, link: str, per_node: int = 1, intra: str = "nvlink-4") -> float:
    """Time of a ring all-reduce of ``gbytes`` GB over ``n_gpus`` on ``link`` at its usable rate, ms.

    ``per_node`` > 1: the GPUs sit ``per_node`` to a node, ``link`` is the network between nodes
    with one NIC per GPU, and NCCL's rings leave each node through all ``per_node`` NICs: each NIC
    carries 1/per_node of a GPU's ring bytes while ``intra`` carries the rest, at the same time
    (``parallelism.rail_allreduce_rate``). ``per_node`` = 1 sends every byte over ``link``."""
    sent = parallelism.ring_allreduce_bytes_per_gpu(float(gbytes) * 1e9, int(n_gpus))
    rate = (
        parallelism.rail_allreduce_rate(
            link_usable_gbs(intra) * 1e9, link_usable_gbs(link) * 1e9, int(per_node), int(per_node) > 1
        )
        if int(per_node) > 1
        else link_usable_gbs(link) * 1e9
    )
    return sent / rate * 1e3


def allreduce_nic_gb(gbytes: float, n_gpus: int, per_node: int) -> float:
    """GB each NIC sends in a ring all-reduce of ``gbytes`` GB over ``n_gpus`` GPUs, ``per_node``
    to a node with one NIC each: 1/per_node of a GPU's 2(n − 1)/n × S."""
    return parallelism.ring_allreduce_bytes_per_gpu(float(gbytes), int(n_gpus)) / int(per_node)


# ------------------------------------------------------------------ additions for lessons 05, 07, 08
# (prefill-decode, fine-tuning-memory, attention-kernels)


@functools.cache
def _h100_device() -> dict[str, Any]:
    from measure.samples import H100_SAMPLE, load_sample

    return load_sample(H100_SAMPLE)["device"]


H200_SAMPLE = "h200-sxm-141gb.json"  # this project's run on one H200 (measure/samples/)


@functools.cache
def _h200_device() -> dict[str, Any]:
    from measure.samples import load_sample

    return load_sample(H200_SAMPLE)["device"]


def reported_memory_gb(gpu: str, tool: str = "torch") -> float:
    """Memory the device reports to software, GB (10⁹ bytes), from this project's measured runs: the
    H100 SXM (measure/samples/h100-sxm-80gb.json) and the H200 SXM (h200-sxm-141gb.json). ``tool``
    "torch" is CUDA's total (``torch.cuda.mem_get_info``, what vLLM's ``gpu_memory_utilization``
    multiplies); "nvidia-smi" is NVML's total (81,559 MiB on the H100). The label is ``memory_gb``."""
    devices = {"h100-sxm": _h100_device, "h200-sxm": _h200_device}
    if gpu not in devices:
        raise ValueError(f"no measured memory total for {gpu!r}; only the H100 and H200 samples have one")
    device = devices[gpu]()
    if tool == "torch":
        return device["cuda"]["total_memory_bytes"] / 1e9
    if tool == "nvidia-smi":
        return device["nvml"]["memory_total_bytes"] / 1e9
    raise ValueError(f"tool must be 'torch' or 'nvidia-smi', got {tool!r}")


def matmul_params(model: str) -> float:
    """Parameters a token is multiplied by: all (active) weights except an untied input-embedding
    table, which is only looked up (``ModelSpec.matmul_params``)."""
    return float(_model(model).matmul_params(active=True))


def attention_gb(
    kernel: str, heads: int, kv_heads: int, q_len: int, kv_len: int, head_dim: int = 128
) -> float:
    """Device-memory traffic of one layer's attention (one sequence, no mask), GB; ``kernel``
    "flash" (Q, K, V read once, O written once) or "naive" (also S and P written and read)."""
    return _attention_op(kernel, heads, kv_heads, q_len, kv_len, head_dim).bytes / 1e9


# ------------------------------------------------------------------ additions for lessons 01-04 (issue 16)


def decode_gflop(model: str, batch: int = 1, context: int = 0) -> float:
    """FLOPs of one decode step of the whole model (the roofline's decode op), GFLOP (10⁹).

    The embedding table is only looked up, so it adds no FLOPs: about 2 × the non-embedding
    parameters per sequence, plus attention over the context."""
    return roofline.decode_step_op(_model(model), int(batch), _within_context(model, context)).flops / 1e9


def decode_step_ms(
    model: str, gpu: str = "h100-sxm", batch: int = 1, context: int = 0, weight_fmt: str = "bf16"
) -> float:
    """Roofline time of one decode step (the slower of streaming its bytes and doing its FLOPs), ms."""
    return int(batch) / decode_tok_s(model, gpu, batch, context, weight_fmt) * 1e3


def main_memory_ns(family: str) -> float:
    """Latency of a family's main memory (its device memory, or a CPU's DRAM), ns (midpoint)."""
    fam = hierarchy.family(family)
    level = "device-memory" if fam.has_level("device-memory") else "host-memory"
    return latency_ns(family, level)


# ------------------------------------------------- additions for lesson 06 (quantization quality)
# Published perplexities (simulators/quality.py, data/quantization_quality.csv) and the bytes a
# decode step does not stream. ``group`` 0 means one scale per output channel.


def _quality(model: str, method: str, bits: float, group: int) -> Any:
    from simulators.quality import quality_row

    return quality_row(model, method, float(bits), int(group) or None)


def ppl(model: str, method: str = "fp16", bits: float = 16, group: int = 128) -> float:
    """Published WikiText-2 perplexity of ``model`` quantized by ``method`` ("rtn", "gptq", "awq")
    to ``bits`` (group 0 = per output channel); ``method`` "fp16" gives the same paper's baseline."""
    if method == "fp16":
        rows = [r for r in _quality_rows() if r.model_id == model and r.metric == "wikitext2_ppl"]
        if not rows:
            raise ValueError(f"no published FP16 perplexity for {model!r}")
        return rows[0].baseline
    row = _quality(model, method, bits, group)
    if row.metric != "wikitext2_ppl":
        raise ValueError(f"{row.id} is a ratio, not a perplexity: use ppl_increase_pct")
    return row.value


def ppl_increase_pct(model: str, method: str, bits: float, group: int = 128) -> float:
    """How much higher the quantized perplexity is than FP16's, % (published rows only)."""
    return _quality(model, method, bits, group).relative_increase * 100


def _quality_rows() -> tuple[Any, ...]:
    from simulators.quality import load_quality

    return load_quality()


def embedding_table_gb(model: str) -> float:
    """The input embedding table, kept in 16-bit by every format of this course, GB. A decode step
    looks up one row per token and does not stream it (0 when the table is tied to the output
    head, which is streamed)."""
    spec = _model(model)
    return 0.0 if spec.tie_word_embeddings else spec.embedding_table_params() * 2 / 1e9


def embedding_and_head_gb(model: str) -> float:
    """The input embedding table and the output head in BF16, GB: two vocab × hidden matrices, or
    one when the model ties them (``tie_word_embeddings``). Quantized formats keep these in BF16."""
    spec = _model(model)
    tables = 1 if spec.tie_word_embeddings else 2
    return tables * spec.vocab_size * spec.hidden_size * 2 / 1e9


def decode_stream_gb(model: str, context: int = 0, weight_fmt: str = "bf16", batch: int = 1) -> float:
    """Bytes one decode step streams from memory: the weights it reads (not the embedding table,
    output head in 16-bit) plus the KV cache of ``batch`` sequences of ``context`` tokens, GB."""
    step = _decode(model, "h100-sxm", batch, context, weight_fmt, "bf16", 1)
    return (step.weight_bytes + step.kv_bytes) / 1e9


@functools.cache
def _vllm(model: str, util: float, context: int, gpu: str, fmt: str = "bf16"):
    from simulators import engines

    accelerator = _gpu(gpu)
    total = None if engines.reported_memory_source(accelerator) else reported_memory_gb(gpu) * 1e9
    return engines.vllm_startup(
        get_model_preset(model).config,
        gpu,
        max_model_len=_within_context(model, context),
        gpu_memory_utilization=float(util),
        quantization="fp8" if fmt == "fp8" else None,
        total_bytes=total,
    )


def vllm_term_gib(
    model: str, term: str, util: float = 0.9, context: int = 8192, gpu: str = "h100-sxm", fmt: str = "bf16"
) -> float:
    """One term of vLLM 0.19's start-up ledger for ``model`` served on one ``gpu`` at
    ``gpu_memory_utilization`` = ``util``, GiB (2³⁰ bytes), as vLLM prints it: "total", "requested",
    "weights", "activation", "non_torch", "kv" (Available KV cache memory) or "cuda_graph"."""
    startup = _vllm(model, float(util), int(context), gpu, fmt)
    return getattr(startup, f"{term}_bytes") / 2**30


def vllm_kv_tokens(
    model: str, util: float = 0.9, context: int = 8192, gpu: str = "h100-sxm", fmt: str = "bf16"
) -> float:
    """vLLM 0.19's "GPU KV cache size" for ``model`` on one ``gpu`` (``engines.vllm_startup``), from
    the memory the device reports; ``fmt`` "fp8" serves FP8 weights (``--quantization fp8``)."""
    return float(_vllm(model, float(util), int(context), gpu, fmt).kv_tokens)


# ------------------------------------------------------------------ the capstone's design problem


def measured_decode_share() -> float:
    """The share of the bandwidth bound this project's H100 reached in a real decode loop (lesson 11:
    Llama 3.1 8B, batch 1, 512-token prompt, ``torch.compile`` with CUDA Graphs, no serving engine):
    bound time ÷ measured time."""
    return decode_memory_ms("llama-3.1-8b", "h100-sxm", 1, 512) / h100_decode("step_ms", "cuda_graph")


# Published batch-1 decode runs of a serving engine (vLLM), Llama 3.1 8B Instruct in BF16: the GPU,
# the context the step attends over (prompt + half the reply), the measured time per output token,
# and the page it is read from. The share of the bound is computed from these by the course's own
# bound (``engine_decode_share``), not taken from the page.
ENGINE_DECODE_RUNS: dict[str, dict[str, Any]] = {
    "vllm-a100": {
        # "decode at one request per time runs at about 75 tokens/sec"; vLLM 0.23.0, A100 40GB
        # (1,555 GB/s, the same for SXM and PCIe), 1,024-token input, 128-token output.
        "gpu": "a100-40gb-sxm",
        "context": 1024 + 64,
        "tpot_ms": 1000 / 75,
        "source": "https://johnmusgrave.com/p/vllm-throughput-latency-sweep-on",
    },
    "vllm-h100": {
        # concurrency 1: tpot_p50_ms 6.48; vLLM 0.21.0, fp16, one H100-80GB-HBM3 (the SXM part).
        # The chat prompts are short; the step is bounded with the weights and 1,024 tokens of KV.
        "gpu": "h100-sxm",
        "context": 1024,
        "tpot_ms": 6.48,
        "source": "https://yobitelcomm.github.io/bench/recipes/concurrency-sweep/",
    },
}


def engine_decode_share(run: str) -> float:
    """The share of the bandwidth bound a published serving-engine run reached at batch 1
    (``ENGINE_DECODE_RUNS``): the course's bound for that GPU and context ÷ the measured TPOT."""
    found = ENGINE_DECODE_RUNS[run]
    return decode_memory_ms("llama-3.1-8b", found["gpu"], 1, found["context"]) / found["tpot_ms"]


def engine_tpot_ms(run: str) -> float:
    """The measured time per output token of a published engine run (``ENGINE_DECODE_RUNS``), ms."""
    return float(ENGINE_DECODE_RUNS[run]["tpot_ms"])


def decode_share(end: str = "low") -> float:
    """The taught range of the share of the bandwidth bound a decode step reaches: "low" is this
    project's compiled loop on the H100 (``measured_decode_share``), "high" the best published
    serving-engine run (``engine_decode_share``)."""
    if end == "low":
        return measured_decode_share()
    if end == "high":
        return max(engine_decode_share(run) for run in ENGINE_DECODE_RUNS)
    raise ValueError(f"end must be 'low' or 'high', got {end!r}")


# The taught range of the share of a format's dense peak a prefill reaches. Its low end is a
# planning figure, not a measurement: roofline.run's default MFU for prefill on H100-class hardware
# ("We default to 0.45 for training, 0.35 for decode, and 0.55 for prefill on H100-class hardware",
# https://roofline.run/about/methodology). Its high end is measured: the rate this project's own
# runs reached on one 8,192³ matrix multiply in that format (measure/samples/, an H100 and an H200),
# which a whole prefill, mostly such matmuls plus attention and small kernels, cannot beat.
PREFILL_PLANNING_SHARE = 0.55
_MATMUL_SAMPLES = {"h100-sxm": "h100-sxm-80gb.json", "h200-sxm": H200_SAMPLE}
_TORCH_DTYPES = {
    "bf16": "bfloat16",
    "fp16": "float16",
    "fp8": "float8_e4m3fn",
    "tf32": "tf32",
    "fp32": "float32",
}


def measured_matmul_tflops(gpu: str, dtype: str = "bf16", size: int = 8192) -> float:
    """A square ``size``³ matmul in ``dtype`` measured by this project's suite on ``gpu`` (the H100 SXM
    or the H200 SXM sample in measure/samples/), TFLOP/s (10¹² FLOP/s)."""
    from measure.samples import load_sample

    if gpu not in _MATMUL_SAMPLES:
        raise ValueError(f"no measured matmul on {gpu!r}: this project measured {sorted(_MATMUL_SAMPLES)}")
    if dtype not in _TORCH_DTYPES:
        raise ValueError(f"no measured matmul in {dtype!r}: choose one of {sorted(_TORCH_DTYPES)}")
    found = [
        r
        for r in load_sample(_MATMUL_SAMPLES[gpu])["results"]
        if r.get("kind") == "matmul"
        and r.get("dtype") == _TORCH_DTYPES[dtype]
        and (r.get("m"), r.get("n"), r.get("k")) == (size, size, size)
    ]
    if len(found) != 1:
        raise ValueError(f"{len(found)} {dtype} {size}³ matmul records in the {gpu} sample")
    return float(found[0]["tflops"])


def measured_matmul_share(gpu: str, dtype: str = "bf16") -> float:
    """The measured 8,192³ matmul on ``gpu`` as a share of the format's dense datasheet peak."""
    return measured_matmul_tflops(gpu, dtype) / peak_tflops(gpu, dtype)


def prefill_share(end: str = "low", gpu: str = "h100-sxm", dtype: str = "bf16") -> float:
    """The taught range of the share of ``dtype``'s dense peak a prefill reaches on ``gpu``: "low" is
    the planning figure ``PREFILL_PLANNING_SHARE`` (roofline.run's default), "high" the measured
    matmul share (``measured_matmul_share``), which no whole prefill beats."""
    if end == "low":
        return PREFILL_PLANNING_SHARE
    if end == "high":
        return measured_matmul_share(gpu, dtype)
    raise ValueError(f"end must be 'low' or 'high', got {end!r}")


def _share(share: float) -> float:
    """A share of the bound as a lesson passes it: 0 means the low end of the taught range."""
    value = float(share) or decode_share("low")
    if not 0 < value <= 1:
        raise ValueError(f"a share of the bound must be in (0, 1], got {share!r}")
    return value


def served_sequences(model: str, gpu: str, fmt: str, context: int, util: float = 0.9) -> float:
    """Whole sequences of ``context`` tokens vLLM's KV pool holds at once (pool tokens ÷ context)."""
    return float(vllm_kv_tokens(model, util, context, gpu, fmt) // int(context))


def served_tpot_ms(model: str, gpu: str, fmt: str, batch: int, context: int, share: float = 0) -> float:
    """Time per output token each of ``batch`` users sees: the decode step's roofline bound (bytes at
    the datasheet bandwidth, or FLOPs at the format's peak) divided by ``share`` of the bound the
    engine reaches (0: the low end of the taught range, ``decode_share("low")``), ms."""
    step = _decode(model, gpu, batch, context, fmt, "bf16", 1)
    return step.step_time_s * 1e3 / _share(share)


def prefill_linear_flops(model: str, prompt: int) -> float:
    """FLOPs of one ``prompt``-token prefill in the layers' weight matmuls: 2 × the weights a token is
    multiplied by (less the output head) × tokens, plus the head for the last token only."""
    tokens = _within_context(model, prompt)
    return 2 * (matmul_params(model) - head_params(model)) * tokens + 2 * head_params(model)


def prefill_attention_flops(model: str, prompt: int) -> float:
    """FLOPs of one ``prompt``-token causal prefill in attention (scores and the weighted sum): the
    prefill's FLOPs (``llm_speed.prefill_time_s``, head for the last token only) less its weight matmuls."""
    tokens = _within_context(model, prompt)
    total = llm_speed.prefill_time_s(_model(model), tokens, peak_flops=1.0, mfu=1.0, logits="last")
    return total - prefill_linear_flops(model, prompt)


def served_ttft_s(model: str, gpu: str, fmt: str, prompt: int, end: str = "low") -> float:
    """Time to first token for one ``prompt``-token prompt alone, each part at the ``end`` of the
    prefill range (``prefill_share``) of its own format's dense peak: the weight matmuls in the
    weights' format (FP8 weights run FP8 matmuls), the attention in BF16 (the KV cache and the
    attention kernels stay in BF16), s."""
    weight_dtype = "fp8" if fmt == "fp8" else "bf16"
    peak = _gpu(gpu)
    weights = prefill_linear_flops(model, prompt) / (
        peak.peak_flops(weight_dtype) * prefill_share(end, gpu, weight_dtype)
    )
    attention = prefill_attention_flops(model, prompt) / (
        peak.peak_flops("bf16") * prefill_share(end, gpu, "bf16")
    )
    return weights + attention


def served_usd_per_million(
    model: str, gpu: str, fmt: str, batch: int, context: int, usd_per_hour: float, share: float = 0
) -> float:
    """Dollars per million generated tokens: the GPU-hour price over the tokens an hour at
    ``served_tpot_ms`` with ``batch`` users (decode only: the GPU time of prefills is not priced)."""
    tokens_per_hour = int(batch) / (served_tpot_ms(model, gpu, fmt, batch, context, share) / 1e3) * 3600
    return float(usd_per_hour) * 1e6 / tokens_per_hour


DESIGNS = (("h100-sxm", "bf16"), ("h100-sxm", "fp8"), ("h200-sxm", "bf16"), ("h200-sxm", "fp8"))
DESIGN_USD_PER_HOUR = {"h100-sxm": 2.49, "h200-sxm": 3.5}  # the capstone's sourced rental prices


def design_usd_per_hour(gpu: str) -> float:
    """The capstone's rental price of one GPU, USD per GPU-hour: H100 SXM 2.49
    (https://pricegpu.pages.dev/blog/h100-vs-a100-cloud-price), H200 SXM 3.50
    (https://www.mercatus-ai.com/blog/cloud-gpu-pricing)."""
    return DESIGN_USD_PER_HOUR[gpu]


def design_min_share(
    model: str,
    gpu: str,
    fmt: str,
    users: int,
    context: int,
    prompt: int,
    tpot_ms: float,
    ttft_s: float,
    budget_usd: float,
) -> float:
    """The least share of the bandwidth bound at which a design meets every target: TPOT and price
    both scale as 1 ÷ share, so it is the larger of bound ÷ TPOT target and price at the bound ÷
    budget; infinity when the pool fails or the TTFT misses its target even at the high end of the
    prefill range (no decode speed mends those)."""
    if (
        served_sequences(model, gpu, fmt, context) < int(users)
        or served_ttft_s(model, gpu, fmt, prompt, "high") > ttft_s
    ):
        return math.inf
    bound_ms = served_tpot_ms(model, gpu, fmt, users, context, 1.0)
    usd_at_bound = served_usd_per_million(model, gpu, fmt, users, context, design_usd_per_hour(gpu), 1.0)
    return max(bound_ms / float(tpot_ms), usd_at_bound / float(budget_usd))


def design_ok(
    model: str,
    gpu: str,
    fmt: str,
    users: int,
    context: int,
    prompt: int,
    tpot_ms: float,
    ttft_s: float,
    usd_per_hour: float,
    budget_usd: float,
    share: float = 0,
    prefill: str = "low",
) -> float:
    """1 if a design serves ``users`` sequences of ``context`` tokens within the pool, at most
    ``tpot_ms`` per token and ``ttft_s`` to the first token, for at most ``budget_usd`` per million
    tokens when the engine reaches ``share`` of the decode bound (0: the low end of the range) and
    its prefill the ``prefill`` end of the prefill range; else 0."""
    return float(
        served_sequences(model, gpu, fmt, context) >= int(users)
        and served_tpot_ms(model, gpu, fmt, users, context, share) <= tpot_ms
        and served_ttft_s(model, gpu, fmt, prompt, prefill) <= ttft_s
        and served_usd_per_million(model, gpu, fmt, users, context, usd_per_hour, share) <= budget_usd
    )


def design_verdict(
    model: str,
    gpu: str,
    fmt: str,
    users: int,
    context: int,
    prompt: int,
    tpot_ms: float,
    ttft_s: float,
    budget_usd: float,
) -> float:
    """A design against the targets over the taught ranges of engine shares (decode and prefill): 1
    when it meets every target at every share in both ranges (even their low ends), 0 when it meets
    them at none (not even the high ends), 0.5 when it depends on where in the ranges the engine lands."""
    need = design_min_share(model, gpu, fmt, users, context, prompt, tpot_ms, ttft_s, budget_usd)
    if need > decode_share("high"):
        return 0.0
    if need <= decode_share("low") and served_ttft_s(model, gpu, fmt, prompt, "low") <= ttft_s:
        return 1.0
    return 0.5


def cheapest_design(
    model: str, users: int, context: int, prompt: int, tpot_ms: float, ttft_s: float, budget_usd: float
) -> float:
    """Index in ``DESIGNS`` of the cheapest design right at every share in the range
    (``design_verdict`` 1), else the cheapest that depends on it; -1 if none can meet the targets."""
    for wanted in (1.0, 0.5):
        ok = [
            (served_usd_per_million(model, gpu, fmt, users, context, design_usd_per_hour(gpu)), index)
            for index, (gpu, fmt) in enumerate(DESIGNS)
            if design_verdict(model, gpu, fmt, users, context, prompt, tpot_ms, ttft_s, budget_usd) == wanted
        ]
        if ok:
            return float(min(ok)[1])
    return -1.0


# ------------------------------------------ llama.cpp and SGLang start-ups (lessons 10 and 12)


@functools.cache
def _llamacpp(model: str, context: int, kv_type: str, quant: str, gpu: str, free_mib: float = 0):
    """``free_mib``: the memory free on the card when llama.cpp starts (what its --fit measures, the
    total less the CUDA context and anything else on the card); 0 takes the card's reported total."""
    from simulators import engines

    return engines.llamacpp_startup(
        get_model_preset(model).config,
        gpu,
        quant=quant,
        n_ctx=_within_context(model, context),
        cache_type_k=kv_type,
        cache_type_v=kv_type,
        total_bytes=float(free_mib) * 2**20 if free_mib else None,
    )


def llamacpp_kv_mib(
    model: str, context: int, kv_type: str = "f16", quant: str = "Q4_K_M", gpu: str = "rtx-4090"
) -> float:
    """The KV cache llama.cpp allocates for ``-c context`` with ``-ctk``/``-ctv`` = ``kv_type``, all
    layers on whichever device holds them, MiB (2²⁰ bytes) as it prints it (``engines.llamacpp_startup``)."""
    return _llamacpp(model, int(context), kv_type, quant, gpu).kv_bytes / 2**20


def llamacpp_cells(model: str, context: int) -> float:
    """The cells llama.cpp's KV cache holds for ``-c context``: the context rounded up as it pads it."""
    return float(_llamacpp(model, int(context), "f16", "Q4_K_M", "rtx-4090").kv_cells)


def llamacpp_gpu_layers(
    model: str,
    context: int,
    kv_type: str = "f16",
    quant: str = "Q4_K_M",
    gpu: str = "rtx-4090",
    free_mib: float = 0,
) -> float:
    """Layers llama.cpp puts on ``gpu`` with the default ``-ngl -1`` (its ``--fit``, which keeps 1 GiB
    of the memory free at start), the output layer counting as one, as in "offloaded N/M layers to GPU"."""
    return float(_llamacpp(model, int(context), kv_type, quant, gpu, float(free_mib)).offloaded_layers)


def llamacpp_layers(model: str) -> float:
    """The M of llama.cpp's "offloaded N/M layers": the repeating layers plus the output layer."""
    return float(_llamacpp(model, 512, "f16", "Q4_K_M", "rtx-4090").hparams.n_layer + 1)


def llamacpp_layer_mib(model: str, quant: str = "Q4_K_M") -> float:
    """The weights of one repeating layer of ``model``'s ``quant`` GGUF file, averaged over its
    layers (each tensor in the type the preset gives it), MiB."""
    startup = _llamacpp(model, 512, "f16", quant, "rtx-4090")
    layer_bytes = sum(t.nbytes for t in startup.tensors if t.layer >= 0)
    return layer_bytes / startup.hparams.n_layer / 2**20


def llamacpp_compute_mib(
    model: str, context: int, kv_type: str = "f16", quant: str = "Q4_K_M", gpu: str = "rtx-4090"
) -> float:
    """The compute buffer llama.cpp reserves on the GPU (the engine's estimate), MiB."""
    return _llamacpp(model, int(context), kv_type, quant, gpu).compute_bytes / 2**20


@functools.cache
def _llamacpp_free_readings() -> dict[str, dict[str, str]]:
    import csv
    from pathlib import Path

    path = Path(__file__).resolve().parent.parent / "simulators" / "data" / "llamacpp_free_readings.csv"
    with path.open(encoding="utf-8", newline="") as f:
        return {row["id"]: row for row in csv.DictReader(f)}


def llamacpp_logged_free_mib(reading: str) -> float:
    """The memory free on a card as a public llama.cpp log printed it ("using device CUDA0 (…) -
    N MiB free"), MiB: a row of simulators/data/llamacpp_free_readings.csv, each with its URL."""
    rows = _llamacpp_free_readings()
    if reading not in rows:
        raise ValueError(f"no llama.cpp free-memory reading {reading!r} in llamacpp_free_readings.csv")
    return float(rows[reading]["free_mib"])


def llamacpp_total_gib(gpu: str) -> float:
    """The memory ``gpu`` reports to CUDA, the total llama.cpp fits against, GiB (a sourced reading)."""
    from simulators import engines

    total = engines.reported_memory_bytes(_gpu(gpu))
    if not total:
        raise ValueError(f"no sourced reading of the memory {gpu!r} reports")
    return total / 2**30


def kv_type_bytes(kv_type: str) -> float:
    """Bytes per cached value in a llama.cpp KV type (f16: 2; q8_0: 34 bytes per block of 32)."""
    from simulators.engines.llamacpp import gguf_types

    t = gguf_types()[kv_type]
    return t.block_bytes / t.block_elements


@functools.cache
def _sglang(model: str, gpu: str):
    from simulators import engines

    return engines.sglang_startup(get_model_preset(model).config, gpu)


def sglang_term_gib(model: str, term: str, gpu: str = "h100-sxm") -> float:
    """One term of SGLang 0.5.23's start-up for ``model`` on one ``gpu`` with its defaults, GiB:
    "total" (reported), "baseline" (free before the weights), "weights", "slack" (kept for
    activations and CUDA graphs) or "kv" (the token pool as allocated)."""
    if term not in ("total", "baseline", "weights", "slack", "kv"):
        raise ValueError(f"term {term!r}: choose total, baseline, weights, slack or kv")
    startup = _sglang(model, gpu)
    if startup.verdict != "fits":
        raise ValueError(f"SGLang refuses {model} on {gpu}: {startup.message}")
    return getattr(startup, f"{term}_bytes") / 2**30


def sglang_fraction(model: str, gpu: str = "h100-sxm") -> float:
    """SGLang 0.5.23's default ``--mem-fraction-static`` for ``model`` on ``gpu``."""
    return float(_sglang(model, gpu).mem_fraction_static)


FUNCTIONS: dict[str, Callable[..., float]] = {
    name: value
    for name, value in list(globals().items())
    if callable(value) and not name.startswith("_") and getattr(value, "__module__", "") == __name__
}

# ---------------------------------------------------------------------------------- names as text
# A question asked on other inputs names them in its prompt: ``{{ gpu_name(gpu) }}``.

_DTYPE_NAMES = {
    "fp32": "FP32",
    "tf32": "TF32",
    "bf16": "BF16",
    "fp16": "FP16",
    "fp8": "FP8",
    "int8": "INT8",
    "fp8_e4m3": "FP8 E4M3",
    "fp8_e5m2": "FP8 E5M2",
    "int4": "INT4",
    "int3": "INT3",
    "int2": "INT2",
    "nf4": "NF4",
    "mxfp4": "MXFP4",
}


def gpu_name(gpu: str) -> str:
    """The accelerator's name as the catalog prints it (e.g. "H200 SXM")."""
    return _gpu(gpu).name


def model_name(model: str) -> str:
    """The model preset's name (e.g. "Llama 3 8B")."""
    return get_model_preset(model).name


def dtype_name(dtype: str) -> str:
    """A number format's usual spelling (``"fp8_e4m3"`` → "FP8 E4M3")."""
    if dtype not in _DTYPE_NAMES:
        raise ValueError(f"unknown format {dtype!r}")
    return _DTYPE_NAMES[dtype]


def link_name(link: str) -> str:
    """An interconnect's name (e.g. "PCIe 5.0 x16")."""
    return get_interconnect(link).name


LABELS: dict[str, Callable[..., str]] = {
    "gpu_name": gpu_name,
    "model_name": model_name,
    "dtype_name": dtype_name,
    "link_name": link_name,
}


# ------------------------------------------------- additions for lesson 06 (quantization quality)


def quality_model(model: str) -> str:
    """The display name of a model in the quality data (e.g. "LLaMA 7B", which has no preset)."""
    from simulators.quality import load_quality

    for row in load_quality():
        if row.model_id == model:
            return row.model
    raise ValueError(f"no quality data for {model!r}")


def quant_method(method: str) -> str:
    """A quantization method's usual spelling ("gptq" → "GPTQ")."""
    from simulators.quality import METHODS

    if method not in METHODS:
        raise ValueError(f"unknown method {method!r}")
    return METHODS[method]


LABELS["quality_model"] = quality_model
LABELS["quant_method"] = quant_method


# ------------------------------------------------- the capstone's design verdicts, as text


def design_verdict_text(
    model: str,
    gpu: str,
    fmt: str,
    users: int,
    context: int,
    prompt: int,
    tpot_ms: float,
    ttft_s: float,
    budget_usd: float,
) -> str:
    """What ``design_verdict`` says of a design, in one sentence with the figures that decide it."""
    low, high = decode_share("low"), decode_share("high")
    verdict = design_verdict(model, gpu, fmt, users, context, prompt, tpot_ms, ttft_s, budget_usd)
    need = design_min_share(model, gpu, fmt, users, context, prompt, tpot_ms, ttft_s, budget_usd)
    slow, fast = served_ttft_s(model, gpu, fmt, prompt, "low"), served_ttft_s(model, gpu, fmt, prompt, "high")
    if verdict == 1.0:
        return (
            f"Right at every share in both ranges: it needs only {need:.0%} of the decode bound, and its "
            f"TTFT is {slow:.2f} s even at the prefill range's low end."
        )
    if verdict == 0.5:
        needs = []
        if need > low:
            needs.append(
                f"its decode reaches at least {need:.0%} of the bound (the range is {low:.0%} to {high:.0%})"
            )
        if slow > ttft_s:
            needs.append(
                f"its prefill runs fast enough for the {ttft_s:g} s TTFT target (its TTFT is {slow:.2f} s "
                f"at the prefill range's low end, {fast:.2f} s at its high end)"
            )
        return (
            "It depends on the engine: it meets every target only if " + " and ".join(needs) + "; measure "
            "before you promise the targets."
        )
    pool = served_sequences(model, gpu, fmt, context)
    if pool < int(users):
        return (
            f"Wrong at every share: the pool holds {pool:.0f} sequences, fewer than the {int(users)} users."
        )
    if fast > ttft_s:
        return (
            f"Wrong at every share: its TTFT is {fast:.2f} s even at the prefill range's high end, over the "
            f"{ttft_s:g} s target."
        )
    return f"Wrong at every share: it needs {need:.0%} of the bound, more than the best engine's {high:.0%}."


LABELS["design_verdict_text"] = design_verdict_text


def design_name(index: float) -> str:
    """A design of ``DESIGNS`` in words: "one H200 SXM with FP8 weights"."""
    gpu, fmt = DESIGNS[int(index)]
    return f"one {gpu_name(gpu)} with {dtype_name(fmt)} weights"


def cheapest_design_text(
    model: str, users: int, context: int, prompt: int, tpot_ms: float, ttft_s: float, budget_usd: float
) -> str:
    """The design ``cheapest_design`` keys, named, with its verdict and its price across the range of
    engine shares, in one sentence."""
    index = cheapest_design(model, users, context, prompt, tpot_ms, ttft_s, budget_usd)
    if index < 0:
        return "No design meets the targets at any share in the range."
    gpu, fmt = DESIGNS[int(index)]
    verdict = design_verdict(model, gpu, fmt, users, context, prompt, tpot_ms, ttft_s, budget_usd)
    price = design_usd_per_hour(gpu)
    fast = served_usd_per_million(model, gpu, fmt, users, context, price, decode_share("high"))
    slow = served_usd_per_million(model, gpu, fmt, users, context, price)
    which = "right at every share" if verdict == 1.0 else "right at some shares (none is right at every one)"
    text = (
        f"The cheapest design that is {which} is {design_name(index)}, "
        f"USD {fast:.3f} to {slow:.3f} per million tokens."
    )
    if verdict == 1.0:  # the room a large batch has to fall short of the batch-1 range (review O1)
        need = design_min_share(model, gpu, fmt, users, context, prompt, tpot_ms, ttft_s, budget_usd)
        low = decode_share("low")
        text += (
            f" It needs {need:.2f} of the decode bound, {1 - need / low:.0%} under the range's low end"
            f" ({low:.2f}): room for a batch of {int(users)} to fall that much further short of the"
            " bound than the batch-1 runs did."
        )
    return text


def design_price_spread(model: str, users: int, context: int) -> float:
    """How far apart the four designs' prices lie at one engine share: the dearest ÷ the cheapest − 1."""
    prices = [
        served_usd_per_million(model, gpu, fmt, users, context, design_usd_per_hour(gpu))
        for gpu, fmt in DESIGNS
    ]
    return max(prices) / min(prices) - 1


LABELS["design_name"] = design_name
LABELS["cheapest_design_text"] = cheapest_design_text
FUNCTIONS["design_price_spread"] = design_price_spread


def half_dtype_name(gpu: str) -> str:
    """The 16-bit format a GPU runs: "BF16" where the catalog has a BF16 peak for it, else "FP16"
    (a T4 or a V100 has no BF16; engines run FP16 there, with the same bytes)."""
    return "BF16" if has_peak(gpu, "bf16") else "FP16"


LABELS["half_dtype_name"] = half_dtype_name


# ------------------------------------------------- the indefinite article before a varying value

# Letters whose spoken name starts with a vowel sound: "an FP8", "an H100", "an MI300X", "an L4".
_VOWEL_NAMED_LETTERS = set("AEFHILMNORSX")
_NUMBER = re.compile(r"^[0-9][0-9,]*(\.[0-9]+)?")


def _article(value: Any) -> str:
    """The article "a" or "an" before ``value`` as a lesson prints it: a number as spoken ("an
    8,192", "an 11", "an 18.5", "an 80", "a 4,096"), a format, GPU or model id by its printed name, an
    initialism by its first letter's name ("an FP8", "an H100", "a BF16"), a word by its first sound
    ("a GeForce")."""
    if isinstance(value, (int, float)):
        return _spoken_number_article(f"{value:,}".lstrip("-"))
    text = _printed_name(str(value))
    word = text.split()[0] if text.split() else text
    if word[:1].isdigit():
        return _spoken_number_article(word)
    initialism = len(word) > 1 and (word.isupper() or any(c.isdigit() for c in word))
    if initialism and word[:1].isupper():
        return "an" if word[0] in _VOWEL_NAMED_LETTERS else "a"
    return "an" if word[:1].lower() in "aeiou" else "a"


def _printed_name(text: str) -> str:
    """A format, GPU or model id as a lesson prints it; any other text as it is."""
    if text in _DTYPE_NAMES:
        return _DTYPE_NAMES[text]
    for lookup in (gpu_name, model_name):
        try:
            return lookup(text)
        except (KeyError, ValueError):
            continue
    return text


def _spoken_number_article(digits: str) -> str:
    """The article before a number printed as ``digits`` ("8,192", "11.5", "4,096-token"): its
    leading group decides ("eight …", "eleven …", "eighteen …", "eighty …" take "an")."""
    found = _NUMBER.match(digits)
    lead = (found.group(0) if found else digits).split(",")[0].split(".")[0]
    return "an" if lead.startswith("8") or lead in ("11", "18") else "a"


def article(value: Any) -> str:
    """The indefinite article before ``value`` (see ``_article``), lower case: ``{{ article(tokens) }}``."""
    return _article(value)


def capital_article(value: Any) -> str:
    """The same article opening a sentence: "A" or "An"."""
    return _article(value).capitalize()


LABELS["article"] = article
LABELS["capital_article"] = capital_article
