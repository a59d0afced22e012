"""Speed bounds for a decoder-only LLM: decode tokens/s and prefill time.

Decode: bytes read per step over memory bandwidth (the roofline's memory roof) against FLOPs
over peak; prefill: FLOPs over peak × an assumed MFU. Units inside: bytes, seconds, FLOP and
FLOP/s. The byte counts come from ``simulators.llm_memory`` so the two never disagree.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from simulators.llm_memory import _check_nonnegative, _check_positive, kv_cache_bytes, weight_format
from simulators.model_config import ModelSpec

# Default utilisation for prefill (compute-bound) time: roofline.run's methodology page uses a
# 0.55 derate for prefill on H100-class GPUs; the user can change it on the page.
DEFAULT_PREFILL_MFU = 0.55


def expected_experts_touched(num_experts: int, experts_per_token: int, tokens: int) -> float:
    """Expected distinct experts a batch of tokens routes to, if routing were uniform.

    E × (1 − (1 − k/E)^tokens): one token reads k experts; a large batch reads nearly all E.
    (Uniform routing is an assumption; real routers are load-balanced towards it.)
    """
    if num_experts <= 0:
        return 0.0
    return num_experts * (1 - (1 - experts_per_token / num_experts) ** tokens)


def weight_bytes_read_per_step(
    spec: ModelSpec, batch: int, weight_fmt: str = "bf16", group_size: int | None = None
) -> float:
    """Weight bytes one decode step reads from memory.

    Every dense weight is read once per step; a mixture of experts reads only the experts its
    batch touches (``expected_experts_touched``). The input embedding is a table lookup: a step
    reads one row per sequence, not the table, so an untied embedding table is left out (a tied
    one is read in full by the output head). Linear layers are counted at the format's bits per
    weight (scales included), everything else at 16 bits, as ``weight_bytes`` stores them.
    """
    f = weight_format(weight_fmt)
    p = spec.param_breakdown()
    linear_bytes = f.bits_per_weight(group_size) / 8
    other_bytes = linear_bytes if not f.quantized else 2.0
    routed = p.routed_experts
    if spec.is_moe:
        routed *= expected_experts_touched(spec.num_experts, spec.experts_per_token, batch) / spec.num_experts
    linear = (p.attention + p.mlp + routed) * linear_bytes
    embeddings_read = p.embeddings - (0 if spec.tie_word_embeddings else spec.embedding_table_params())
    embeddings_read += 0 if spec.tie_word_embeddings else batch * spec.hidden_size
    other = (embeddings_read + p.lm_head + p.routers + p.norms) * other_bytes
    return linear + other


@dataclass(frozen=True)
class DecodeEstimate:
    """One decode step for a batch: bytes read, FLOPs, time, tokens/s, and which roof binds."""

    batch: int
    context_tokens: int
    weight_bytes: float
    kv_bytes: float
    flops: float
    memory_time_s: float
    compute_time_s: float

    @property
    def step_time_s(self) -> float:
        return max(self.memory_time_s, self.compute_time_s)

    @property
    def tokens_per_s(self) -> float:
        return self.batch / self.step_time_s if self.step_time_s > 0 else math.inf

    @property
    def tokens_per_s_per_sequence(self) -> float:
        return 1 / self.step_time_s if self.step_time_s > 0 else math.inf

    @property
    def bound(self) -> str:
        return "memory" if self.memory_time_s >= self.compute_time_s else "compute"

    @property
    def intensity_flop_per_byte(self) -> float:
        return self.flops / (self.weight_bytes + self.kv_bytes)


def decode_step(
    spec: ModelSpec,
    *,
    bandwidth_bytes_per_s: float,
    peak_flops: float,
    batch: int = 1,
    context_tokens: int = 4096,
    weight_fmt: str = "bf16",
    group_size: int | None = None,
    kv_fmt: str = "bf16",
    n_gpus: int = 1,
) -> DecodeEstimate:
    """Upper bound on decode speed: a step reads the weights once and every sequence's KV cache.

    time ≥ max(bytes read / bandwidth, FLOPs / peak), the roofline for one step ("How to Scale
    Your Model", inference chapter: step time = (B·KV + params) / bandwidth when memory-bound).
    FLOPs = 2 × active matmul parameters × batch (the untied embedding lookup does no
    multiplies) + attention 4 × layers × q_heads·d × cached tokens ×
    batch. ``n_gpus`` splits bytes and FLOPs evenly (ideal tensor parallelism, no communication).
    """
    _check_positive(batch=batch, bandwidth_bytes_per_s=bandwidth_bytes_per_s, n_gpus=n_gpus)
    if not peak_flops > 0:  # math.inf is allowed: "no compute roof known", memory bound only
        raise ValueError(f"peak_flops must be positive, got {peak_flops!r}")
    weights = weight_bytes_read_per_step(spec, batch, weight_fmt, group_size)
    kv = kv_cache_bytes(spec, context_tokens, batch, kv_fmt)
    cached = sum(spec.cached_tokens_per_layer(context_tokens)) / max(spec.num_layers, 1)
    q_width = spec.num_heads * (
        spec.qk_nope_head_dim + spec.qk_rope_head_dim if spec.uses_mla else spec.head_dim
    )
    attention_flops = 4 * spec.num_layers * q_width * cached * batch
    flops = 2 * spec.matmul_params(active=True) * batch + attention_flops
    return DecodeEstimate(
        batch=batch,
        context_tokens=context_tokens,
        weight_bytes=weights,
        kv_bytes=kv,
        flops=flops,
        memory_time_s=(weights + kv) / (bandwidth_bytes_per_s * n_gpus),
        compute_time_s=flops / (peak_flops * n_gpus),
    )


def prefill_time_s(
    spec: ModelSpec,
    prompt_tokens: int,
    *,
    peak_flops: float,
    mfu: float = DEFAULT_PREFILL_MFU,
    batch: int = 1,
    n_gpus: int = 1,
    logits: str = "all",
) -> float:
    """Time to process a prompt: FLOPs / (peak × MFU), FLOPs = 2 × active params × tokens + attention.

    Kaplan et al. 2020 (arXiv 2001.08361 §2.1): forward FLOPs ≈ 2N per token plus
    2 · n_layer · n_ctx · d_attn for attention; with a causal mask the average context is
    half the prompt. This is time-to-first-token without queueing or network.

    ``logits`` "all" multiplies every prompt token by the output head (a plain forward pass);
    "last" only each sequence's last token, as serving engines do (vLLM computes logits for the
    sampled positions only), which removes 2 × head params × (tokens − 1) per sequence.
    """
    if logits not in ("all", "last"):
        raise ValueError(f"logits must be 'all' or 'last', got {logits!r}")
    _check_positive(peak_flops=peak_flops, batch=batch, n_gpus=n_gpus)
    if not 0 < mfu <= 1:
        raise ValueError(f"MFU must be in (0, 1], got {mfu}")
    _check_nonnegative(prompt_tokens=prompt_tokens)
    tokens = prompt_tokens * batch
    q_width = spec.num_heads * (
        spec.qk_nope_head_dim + spec.qk_rope_head_dim if spec.uses_mla else spec.head_dim
    )
    attention = 2 * spec.num_layers * q_width * prompt_tokens * tokens  # 4·L·q·(T/2)·T
    flops = 2 * spec.matmul_params(active=True) * tokens + attention
    if logits == "last" and prompt_tokens > 0:
        tied = spec.vocab_size * (spec.embed_dim or spec.hidden_size)
        head = tied if spec.tie_word_embeddings else spec.param_breakdown().lm_head
        flops -= 2 * head * (prompt_tokens - 1) * batch
    return flops / (peak_flops * mfu * n_gpus)
