"""Memory of a decoder-only LLM: each term in bytes, and their totals for serving and training.

Memory terms (weights, KV cache, activations, the attention score matrix of an eager kernel,
gradients, optimizer states, runtime overhead) are small named functions, each with its formula
and source in the docstring; ``inference_memory`` and ``training_memory`` add them up into a
``MemoryBreakdown``. Units inside: bytes. Conversion to GB/GiB happens at display.

The model description lives in ``simulators.model_config`` (``ModelSpec`` and its limits are
re-exported here, the names every memory function takes); the speed bounds that read these byte
counts live in ``simulators.llm_speed``, which imports this module, never the other way round.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from simulators.model_config import LAYER_KINDS, ModelSpec
from simulators.model_config import MAX_CONFIG_BYTES as MAX_CONFIG_BYTES
from simulators.model_config import MAX_PARAMS as MAX_PARAMS
from simulators.model_config import SUPPORTED_FAMILIES as SUPPORTED_FAMILIES
from simulators.model_config import ParamBreakdown as ParamBreakdown

# ---------------------------------------------------------------------------------------------
# Number formats
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class WeightFormat:
    """How weights are stored: bits per value plus the scale overhead of quantized formats."""

    id: str
    label: str
    bits: float
    quantized: bool
    default_group_size: int = 0  # values sharing one scale; 0 = no scales
    scale_bits: float = 0.0  # bits per scale (and zero point) per group
    note: str = ""

    def bits_per_weight(self, group_size: int | None = None) -> float:
        """Effective bits per weight including scales: bits + scale_bits / group_size."""
        if not self.quantized or (self.default_group_size == 0 and not group_size):
            return self.bits  # unquantized, or one scale per tensor: its cost per weight is nil
        group = group_size or self.default_group_size
        if group <= 0:
            raise ValueError(f"{self.label}: group size must be positive, got {group}")
        return self.bits + self.scale_bits / group


WEIGHT_FORMATS: dict[str, WeightFormat] = {
    f.id: f
    for f in (
        WeightFormat("fp32", "FP32", 32, False),
        WeightFormat("bf16", "BF16", 16, False),
        WeightFormat("fp16", "FP16", 16, False),
        # FP8 (W8A8, as vLLM serves it) quantizes the linear layers with one scale per tensor;
        # embeddings and the LM head stay 16-bit like the other quantized formats.
        WeightFormat("fp8", "FP8 (E4M3, per-tensor scale)", 8, True, note="one scale per tensor: negligible"),
        # Group-wise integer formats keep an fp16 scale per group (symmetric), as in
        # GPTQ/AWQ's group size 128; AWQ also stores a zero point (asymmetric): see quantization page.
        WeightFormat("int8", "INT8 (fp16 scale per group)", 8, True, 128, 16),
        WeightFormat("int4", "INT4 (fp16 scale per group)", 4, True, 128, 16),
        # QLoRA (arXiv 2305.14314 §3): NF4 in blocks of 64 with an fp32 absmax per block = 4.5
        # bits; double quantization stores those scales in fp8 per 256-block: 4 + 8/64 + 32/(64·256).
        WeightFormat("nf4", "NF4 (block 64, double-quantized scales)", 4, True, 64, 8 + 32 / 256),
    )
}
KV_FORMATS: dict[str, float] = {"fp32": 4, "bf16": 2, "fp16": 2, "fp8": 1, "int8": 1, "int4": 0.5}
QLORA_BITS_PER_PARAM = 4 + 8 / 64 + 32 / (64 * 256)  # 4.127 bits: QLoRA §3, double quantization


def weight_format(fmt: str) -> WeightFormat:
    try:
        return WEIGHT_FORMATS[fmt]
    except KeyError:
        raise ValueError(f"unknown weight format {fmt!r}; choose one of {list(WEIGHT_FORMATS)}") from None


def kv_bytes_per_value(fmt: str) -> float:
    try:
        return KV_FORMATS[fmt]
    except KeyError:
        raise ValueError(f"unknown KV-cache format {fmt!r}; choose one of {list(KV_FORMATS)}") from None


# ---------------------------------------------------------------------------------------------
# Memory terms (bytes)
# ---------------------------------------------------------------------------------------------

# Runtime overhead default: the CUDA context and allocator slack. vram.asmirnov.xyz budgets a
# fixed 1000 MiB ("CUDA kernels") after measuring 300-2000 MiB across GPUs and PyTorch versions
# (github.com/furiousteabag/vram-calculator, app/_lib/index.ts; its blog post content/vram.md).
DEFAULT_RUNTIME_OVERHEAD_BYTES = 1000 * 2**20
# vLLM pre-allocates this fraction of each GPU's memory and turns what its weights, a profiled
# forward pass and non-torch memory leave into KV-cache blocks. Its long-standing default is 0.90
# (Anyscale's Ray Data LLM docs, docs.anyscale.com/llm/batch-inference/resource-allocation/gpu-memory);
# current vLLM's CacheConfig declares 0.92 (docs.vllm.ai/en/stable/api/vllm/config/cache/).
VLLM_DEFAULT_GPU_MEMORY_UTILIZATION = 0.9


def weight_bytes(spec: ModelSpec, fmt: str = "bf16", group_size: int | None = None) -> float:
    """Bytes of weights stored in ``fmt``.

    Quantized formats (int8, int4, nf4) apply to the decoder layers' linear weights only, with
    the scale overhead of their group size; embeddings, the LM head and norms stay in 16-bit,
    as GPTQ, AWQ and bitsandbytes leave them (bitsandbytes skips ``lm_head`` by default).
    Unquantized formats store every parameter at their width.
    """
    f = weight_format(fmt)
    p = spec.param_breakdown()
    if not f.quantized:
        return p.total * f.bits / 8
    quantized = p.linear_layers * f.bits_per_weight(group_size) / 8
    kept = (p.total - p.linear_layers) * 16 / 8
    return quantized + kept


def kv_cache_bytes(spec: ModelSpec, context_tokens: int, batch: int = 1, kv_fmt: str = "bf16") -> float:
    """KV cache for ``batch`` sequences of ``context_tokens``: per-layer sum, windows applied.

    bytes = batch × (Σ_layers min(context, window_l) × (per-layer K+V elements) × bytes/value
    + Σ_layers fixed state_l). Everything the model's cache holds after that many tokens: K/V per
    layer (capped at a window or chunk), MLA latents, and the fixed-size convolution and recurrent
    states of linear-attention and state-space layers (kept as the model keeps them, whatever
    ``kv_fmt``: a KV-cache format does not quantize them).
    The sum over layers handles Gemma 2's alternating local/global layers and Mistral's
    sliding window (formula F7 in the project's calculator anchors; per-layer rule as in
    unslothai/unsloth#4757).
    """
    _check_nonnegative(context_tokens=context_tokens, batch=batch)
    elements = spec.kv_elements_per_token()
    tokens = spec.cached_tokens_per_layer(context_tokens)
    grows = kv_bytes_per_value(kv_fmt) * sum(e * t for e, t in zip(elements, tokens, strict=True))
    return batch * (grows + spec.state_bytes())


@dataclass(frozen=True)
class CacheByKind:
    """The cache a model keeps against the context, split by layer kind (``kv_cache_by_kind``)."""

    contexts: tuple[int, ...]
    parts: dict[str, tuple[float, ...]]  # kind label -> bytes at each context
    layers: dict[str, int]  # kind label -> how many layers are of that kind
    naive: tuple[float, ...]  # every layer kept the whole context (the formula that ignores windows)

    @property
    def total(self) -> tuple[float, ...]:
        return tuple(sum(values) for values in zip(*self.parts.values(), strict=True))


def kv_cache_by_kind(
    spec: ModelSpec, contexts: Sequence[int], batch: int = 1, kv_fmt: str = "bf16"
) -> CacheByKind:
    """The cache at each context, summed per layer kind: full attention, sliding window (capped at
    its window) or MLA latent; and what a formula that treats every layer as full attention gives.

    The parts add up to ``kv_cache_bytes`` at every context (the same per-layer sum, F7 in the
    calculator anchors), so the chart of the parts and the calculator's total always agree.
    """
    _check_nonnegative(batch=batch)
    value = kv_bytes_per_value(kv_fmt)
    elements = spec.kv_elements_per_token()
    states = spec.layer_state_bytes or (0,) * spec.num_layers
    kinds = [_kind_label(spec, kind) for kind in spec.kinds()]
    parts: dict[str, list[float]] = {}
    naive = []
    for context in contexts:
        _check_nonnegative(context_tokens=context)
        tokens = spec.cached_tokens_per_layer(context)
        for kind in dict.fromkeys(kinds):
            parts.setdefault(kind, []).append(
                batch
                * sum(
                    value * e * t + s
                    for e, t, s, k in zip(elements, tokens, states, kinds, strict=True)
                    if k == kind
                )
            )
        naive.append(batch * value * sum(_naive_elements(spec)) * context)
    return CacheByKind(
        contexts=tuple(contexts),
        parts={kind: tuple(values) for kind, values in parts.items()},
        layers={kind: kinds.count(kind) for kind in dict.fromkeys(kinds)},
        naive=tuple(naive),
    )


def _cache_note(spec: ModelSpec, context_tokens: int, batch: int, kv_fmt: str) -> str:
    """How the cache figure is made: per-token bytes × tokens, caps, and fixed-size states."""
    kinds = set(spec.kinds())
    note = (
        f"{spec.kv_cache_bytes_per_token(kv_bytes_per_value(kv_fmt)):,} bytes per token"
        f" × {context_tokens:,} tokens × batch {batch}"
    )
    capped = [what for kind, what in (("sliding", "window"), ("chunked", "chunk")) if kind in kinds]
    if capped:
        note += f" ({' and '.join(capped)} layers keep at most the {' or '.join(capped)})"
    if spec.state_bytes():
        fixed = sum(1 for b in spec.layer_state_bytes if b)
        note += (
            f", plus {spec.state_bytes():,} bytes of fixed-size state per sequence in {fixed} "
            "linear-attention/state-space layers (whatever the context)"
        )
    return note


def _kind_label(spec: ModelSpec, kind: str) -> str:
    if kind == "sliding":
        return f"sliding window ({spec.sliding_window:,} tokens)"
    if kind == "chunked":
        return f"chunked attention ({spec.attention_chunk:,}-token chunks)"
    return LAYER_KINDS[kind]


def _naive_elements(spec: ModelSpec) -> list[int]:
    """Per-token elements of the 2023 formula: 2 × KV heads × head_dim on every layer, as if each
    were a full-attention layer with the model's main shape (latents as latents)."""
    if not spec.layer_kinds and not spec.layer_kv_elements:
        return spec.kv_elements_per_token()
    if spec.uses_mla:
        return [spec.kv_lora_rank + spec.qk_rope_head_dim] * spec.num_layers
    return [2 * spec.num_kv_heads * spec.head_dim] * spec.num_layers


def inference_activation_bytes(spec: ModelSpec, tokens_in_flight: int, act_bytes: float = 2) -> float:
    """Peak transient activations of one forward pass (one layer live at a time, FlashAttention).

    The widest moment of a decoder layer holds its input, the normalised copy, q/k/v and the
    MLP's gate and up projections plus their product: tokens × (2h + (heads + 2·kv_heads)·d +
    3·I) values (2·I for a non-gated MLP), plus the final logits in fp32 for the last position
    of each sequence, which ``inference_memory`` adds separately. Serving engines size this
    buffer by running a dummy batch of ``max_num_batched_tokens`` (vLLM's memory profiling);
    this is its closed-form counterpart. An estimate, not an exact figure.
    """
    _check_nonnegative(tokens_in_flight=tokens_in_flight)
    h, d = spec.hidden_size, spec.head_dim
    width = spec.expert_intermediate_size if spec.is_moe else spec.intermediate_size
    mlp = (3 if spec.gated_mlp else 2) * width * (spec.experts_per_token if spec.is_moe else 1)
    per_token = 2 * h + (spec.num_heads + 2 * spec.num_kv_heads) * d + mlp
    return tokens_in_flight * per_token * act_bytes


def logits_bytes(spec: ModelSpec, batch: int, positions: int, training: bool = False) -> float:
    """fp32 logits over the vocabulary: 4 · batch · positions · vocab, doubled in training.

    vram.asmirnov.xyz counts outputs as 4·b·s·V bytes, × 2 in training for the softmax
    probabilities kept for the loss (github.com/furiousteabag/vram-calculator). At inference a
    server computes logits for the last position of each sequence only (positions = 1).
    """
    _check_nonnegative(batch=batch, positions=positions)
    return 4 * batch * positions * spec.vocab_size * (2 if training else 1)


# ---------------------------------------------------------------------------------------------
# Attention kernels: fused (scores stay on chip) or eager (the score matrix is materialized)
# ---------------------------------------------------------------------------------------------

ATTENTION_KINDS: dict[str, str] = {
    "flash": "Fused kernel (FlashAttention, SDPA): the score matrix never reaches memory",
    "eager": "Eager: the score matrix is materialized in memory, one layer at a time",
}
# PyTorch's softmax(x, dtype=torch.float32) on a bf16 input first makes an fp32 copy, then writes
# an fp32 output (aten/src/ATen/native/SoftMax.cpp, see eager_score_bytes_per_element).
SOFTMAX_FP32_BYTES = 4


def attention_kind(attention: str) -> str:
    """``attention`` checked against ``ATTENTION_KINDS``; ValueError naming the choices otherwise."""
    if not isinstance(attention, str) or attention not in ATTENTION_KINDS:
        raise ValueError(
            f"attention must be 'flash' (fused kernel: scores never stored) or 'eager' "
            f"(score matrix materialized), got {attention!r}"
        )
    return attention


def resolve_attention(attention: str | None = None, flash_attention: bool | None = None) -> str:
    """The attention kind from the new ``attention`` and the older ``flash_attention`` switch.

    Neither given: "flash". One given: that one. Both: they must agree, else ValueError.
    """
    if attention is None:
        return "eager" if flash_attention is not None and not flash_attention else "flash"
    kind = attention_kind(attention)
    if flash_attention is not None and bool(flash_attention) != (kind == "flash"):
        raise ValueError(
            f"attention={attention!r} contradicts flash_attention={flash_attention!r}; pass only one"
        )
    return kind


def eager_score_bytes_per_element(act_bytes: float = 2) -> float:
    """Bytes per attention-score element that eager attention holds at its peak, the softmax.

    Hugging Face ``transformers``, ``eager_attention_forward`` (models/llama/modeling_llama.py,
    read at huggingface/transformers@5dd4a63548857797727ae73eeb6a6e886ea02a3e; 5.23 is the same)::

        attn_weights = torch.matmul(query, key_states.transpose(2, 3)) * scaling
        attn_weights = attn_weights + attention_mask
        attn_weights = nn.functional.softmax(attn_weights, dim=-1, dtype=torch.float32).to(query.dtype)
        attn_weights = nn.functional.dropout(attn_weights, p=dropout, training=module.training)

    Counted per score element, with ``a`` = bytes of the compute dtype (2 for bf16):

    - the matmul output and its scaled copy, a + a (the first is freed when the product exists);
    - the masked copy, a + a while the scaled one is still referenced;
    - the softmax: PyTorch's ``softmax(input, dim, dtype)`` (aten/src/ATen/native/SoftMax.cpp,
      pytorch/pytorch@52644650f0a9c47ad65f86154b9b835d0a74b6c1) converts a bf16 input with
      ``input_.toType(dtype)``, a 4-byte fp32 copy, then ``_softmax`` writes a 4-byte fp32
      output, while the masked bf16 scores are still referenced: a + 4 + 4 = **10 bytes** in bf16;
    - the cast back to the compute dtype, a + 4 + a = 8 (the fp32 copy is gone by then);
    - dropout at inference (``p = 0`` or eval mode) returns its input, no copy.

    Returns a + 4 + 4, or a + 4 when the compute dtype is already fp32 (the conversion is then a
    no-op). fp16 on CUDA takes a fused half-to-float softmax and peaks at 8 bytes; not modelled.
    The additive mask is shared by all heads and layers: ``attention_mask_bytes``.
    """
    _check_positive(act_bytes=act_bytes)
    return act_bytes + (0 if act_bytes == SOFTMAX_FP32_BYTES else SOFTMAX_FP32_BYTES) + SOFTMAX_FP32_BYTES


def attended_keys_per_layer(spec: ModelSpec, query_tokens: int, context_tokens: int) -> list[int]:
    """Keys each layer's score matrix spans when ``query_tokens`` new tokens of one sequence are
    processed and the sequence then holds ``context_tokens`` (the new ones included).

    A full-attention layer attends to the whole context. A sliding-window layer lets each query
    see itself and the window − 1 tokens before it, so a block of q consecutive queries spans at
    most window − 1 + q keys: min(context, window − 1 + q). That is the key length Hugging Face's
    ``DynamicSlidingWindowLayer`` returns (it caches window − 1 tokens and appends the new ones,
    cache_utils.py). A single prefill of a whole prompt (q = context) still spans all of it: the
    window shrinks the matrix only for chunks that come after the first window.
    """
    _check_nonnegative(query_tokens=query_tokens, context_tokens=context_tokens)
    context = max(context_tokens, query_tokens)
    sliding = set(spec.sliding_layers) if spec.sliding_window else set()
    return [
        min(context, spec.sliding_window - 1 + query_tokens) if i in sliding else context
        for i in range(spec.num_layers)
    ]


def attention_score_bytes(
    spec: ModelSpec, query_tokens: int, context_tokens: int, *, batch: int = 1, act_bytes: float = 2
) -> float:
    """Eager attention's score matrix at its peak, in bytes: one layer's worth.

    batch × max over layers (query heads × query_tokens × attended keys) ×
    ``eager_score_bytes_per_element(act_bytes)``, keys from ``attended_keys_per_layer``. Layers
    run one after another and each frees its scores before the next starts, so the peak is the
    largest layer, not the sum (measured: Llama-3.2-3B at 8,160 tokens peaked at one layer's
    matrix, simulators/data/measured/h100-eager-vs-flash-llama-3.2-3b.json). A fused kernel
    (FlashAttention) never stores it.
    """
    _check_positive(batch=batch)
    keys = attended_keys_per_layer(spec, query_tokens, context_tokens)
    heads = [q for q, _, _ in spec.layer_shapes()]
    elements = max((h * k for h, k in zip(heads, keys, strict=True)), default=0) * query_tokens
    return batch * elements * eager_score_bytes_per_element(act_bytes)


def attention_mask_bytes(
    spec: ModelSpec, query_tokens: int, context_tokens: int, *, batch: int = 1, act_bytes: float = 2
) -> float:
    """The additive masks eager attention adds to its scores: batch × query × keys × act_bytes each.

    ``transformers``' ``masking_utils.eager_mask`` turns the boolean (batch, 1, query, keys) mask
    into 0 / the dtype's minimum in the compute dtype, broadcast over heads and built once per
    forward pass: one mask for the full-attention layers and one for the sliding-window layers
    when the model has both kinds (Gemma 2).
    """
    _check_positive(batch=batch)
    keys = attended_keys_per_layer(spec, query_tokens, context_tokens)
    sliding = set(spec.sliding_layers) if spec.sliding_window else set()
    kinds = {(i in sliding): k for i, k in enumerate(keys)}  # one mask per kind of layer
    return batch * query_tokens * sum(kinds.values()) * act_bytes


def eager_attention_step_bytes(spec: ModelSpec, tokens_in_flight: int, act_bytes: float = 2) -> float:
    """Activations beside the scores while eager attention runs one layer, in bytes.

    The layer's input (the residual) and its normalised copy, 2h, the queries, heads · d, and
    with grouped-query attention the keys and values repeated to every query head
    (``repeat_kv`` in ``eager_attention_forward``), 2 · heads · d; this layer's own keys and
    values are already in the KV cache. Scores and mask: ``attention_score_bytes``,
    ``attention_mask_bytes``.
    """
    _check_nonnegative(tokens_in_flight=tokens_in_flight)
    h, d = spec.hidden_size, spec.head_dim
    repeated = 2 * spec.num_heads * d if spec.num_kv_heads < spec.num_heads else 0
    return tokens_in_flight * (2 * h + spec.num_heads * d + repeated) * act_bytes


def training_activation_bytes_per_layer(
    spec: ModelSpec,
    seq: int,
    micro_batch: int,
    *,
    tensor_parallel: int = 1,
    sequence_parallel: bool = False,
    recompute: str = "none",
    flash_attention: bool | None = None,
    dropout: bool = False,
    act_bytes: float = 2,
    attention: str | None = None,
) -> float:
    """Activations one transformer layer saves for the backward pass, in bytes.

    Korthikanti et al. 2022, "Reducing Activation Recomputation in Large Transformer Models"
    (arXiv 2205.05198), §4 and Table 2: for a GPT layer with 16-bit activations and 1-byte
    dropout masks, s·b·h·(34 + 5·a·s/h) bytes, of which attention stores 11sbh + 5as²b, the MLP
    19sbh and the two LayerNorms 4sbh. Here the same accounting is written per tensor so that
    it also holds for GQA (K and V have kv_heads·d columns), gated MLPs (gate, up and their
    product) and models trained without dropout; with MHA, a 4h GELU MLP and dropout it is
    exactly the paper's 34 + 5as/h.

    - ``attention="flash"`` (or the older ``flash_attention=True``, the default) drops the a·s²
      score terms (softmax output, its dropout mask and output): FlashAttention recomputes them
      in the backward pass (arXiv 2205.14135). ``attention="eager"`` (``flash_attention=False``)
      keeps them as the paper counts them, 16-bit softmax output (Megatron's fused softmax).
      Hugging Face's eager path would also keep its fp32 softmax output (4 bytes per score, see
      ``eager_score_bytes_per_element``); not counted here.
    - ``recompute="selective"`` also drops them (the paper's selective recomputation);
      ``"full"`` keeps only each layer's input, 2·sbh (paper §4.3).
    - Tensor parallelism splits everything except the LayerNorm inputs, the inputs of the
      first attention and MLP matmuls and the dropout masks after the blocks (10sbh in the
      paper); sequence parallelism splits those too.
    """
    _check_nonnegative(seq=seq, micro_batch=micro_batch)
    if tensor_parallel < 1:
        raise ValueError(f"tensor_parallel must be at least 1, got {tensor_parallel}")
    if recompute not in ("none", "selective", "full"):
        raise ValueError(f"recompute must be 'none', 'selective' or 'full', got {recompute!r}")
    flash_attention = resolve_attention(attention, flash_attention) == "flash"
    s, b, h = seq, micro_batch, spec.hidden_size
    t = tensor_parallel
    sbh = s * b * h
    w = act_bytes
    if recompute == "full":
        return w * sbh / (t if sequence_parallel else 1)

    q_cols = spec.num_heads * spec.head_dim
    kv_cols = spec.num_kv_heads * spec.head_dim
    width = spec.expert_intermediate_size * spec.experts_per_token if spec.is_moe else spec.intermediate_size
    mask = 1 if dropout else 0  # bytes per element of a dropout mask

    # Kept whole under TP without SP (the paper's 10sbh): LayerNorm inputs, the inputs of the
    # QKV and first MLP matmuls, and the dropout masks after attention and after the MLP.
    replicated = spec.norms_per_layer * w * sbh + w * sbh + w * sbh + 2 * mask * sbh
    if spec.norms_per_layer == 1:  # parallel attention: one LayerNorm, one shared input
        replicated = w * sbh + w * sbh + 2 * mask * sbh
    # Split across TP ranks: Q, K, V (for the score matmul and for the output), the attention
    # output (input of the output projection), and the MLP's hidden activations.
    split = w * s * b * (q_cols + 2 * kv_cols)  # Q and K (score matmul), V (weighted sum)
    split += w * s * b * q_cols  # attention output, input of the output projection
    if spec.gated_mlp:
        split += 3 * w * s * b * width  # gate and up outputs (activation inputs), their product
    else:
        split += 2 * w * s * b * width  # GELU input and the second matmul's input
    if not (flash_attention or recompute == "selective"):
        a = spec.num_heads
        scores = a * s * s * b
        split += w * scores + mask * scores + w * scores  # softmax out, dropout mask, dropout out
    elif flash_attention and recompute == "none":
        split += 4 * s * b * spec.num_heads  # fp32 log-sum-exp per row and head kept by FlashAttention
    if sequence_parallel:
        return (replicated + split) / t
    return replicated + split / t


@dataclass(frozen=True)
class TrainingRecipe:
    """Bytes per parameter for model states; the conventions the calculators disagree on."""

    id: str
    label: str
    weight_bytes: float  # working copy used in forward/backward
    master_bytes: float  # fp32 master copy kept by the optimizer (mixed precision)
    grad_bytes: float
    optimizer_bytes: float
    source: str

    @property
    def bytes_per_param(self) -> float:
        return self.weight_bytes + self.master_bytes + self.grad_bytes + self.optimizer_bytes


TRAINING_RECIPES: dict[str, TrainingRecipe] = {
    r.id: r
    for r in (
        TrainingRecipe(
            "mixed-adam-16",
            "Mixed precision + Adam: 16 B/param (ZeRO)",
            2,
            4,
            2,
            8,
            "ZeRO (arXiv 1910.02054 §3.1): fp16 params and grads 2Ψ + 2Ψ, fp32 params, momentum "
            "and variance KΨ with K = 12",
        ),
        TrainingRecipe(
            "mixed-adam-18",
            "Mixed precision + Adam, fp32 grads: 18 B/param (HF)",
            2,
            4,
            4,
            8,
            "Hugging Face 'Model training anatomy': 6 B weights (fp32 + fp16), 4 B gradients, "
            "8 B AdamW states",
        ),
        TrainingRecipe(
            "mixed-adam-20",
            "Mixed precision + Adam, fp32 grad accumulation: 20 B/param",
            2,
            4,
            2 + 4,
            8,
            "Ultra-Scale Playbook: bf16 params and grads, fp32 master, fp32 gradient accumulation "
            "buffer and Adam states",
        ),
        TrainingRecipe(
            "mixed-adam8bit",
            "Mixed precision + 8-bit Adam: 10 B/param",
            2,
            4,
            2,
            2,
            "bitsandbytes 8-bit optimizers keep both Adam states in 1 byte each (HF training anatomy: "
            "'8-bit AdamW optimizers: 2 bytes per param'); rest as the 16 B recipe",
        ),
        TrainingRecipe(
            "mixed-sgd-momentum",
            "Mixed precision + SGD with momentum: 12 B/param",
            2,
            4,
            2,
            4,
            "HF training anatomy: SGD with momentum keeps 4 bytes per param; rest as the 16 B recipe",
        ),
        TrainingRecipe(
            "fp32-adam",
            "Full fp32 + Adam: 16 B/param",
            4,
            0,
            4,
            8,
            "fp32 weights and gradients 4 + 4 B, Adam 8 B (Ultra-Scale Playbook, FP32 column)",
        ),
    )
}


def training_recipe(recipe: str) -> TrainingRecipe:
    try:
        return TRAINING_RECIPES[recipe]
    except KeyError:
        raise ValueError(
            f"unknown training recipe {recipe!r}; choose one of {list(TRAINING_RECIPES)}"
        ) from None


def model_state_bytes_per_gpu(
    num_params: float, recipe: str, n_gpus: int = 1, zero_stage: int = 0
) -> dict[str, float]:
    """Weights, gradients and optimizer states on one GPU under ZeRO data parallelism.

    ZeRO (Rajbhandari et al. 2019, arXiv 1910.02054, §5): stage 1 partitions optimizer states
    (fp32 master weights included) over N GPUs, stage 2 also gradients, stage 3 also the
    parameters. With the 16 B recipe this is ``simulators.parallelism.zero_model_state_bytes``.
    """
    if n_gpus < 1:
        raise ValueError(f"number of GPUs must be at least 1, got {n_gpus}")
    if zero_stage not in (0, 1, 2, 3):
        raise ValueError(f"ZeRO stage must be 0, 1, 2 or 3, got {zero_stage}")
    r = training_recipe(recipe)
    shard = {stage: (n_gpus if zero_stage >= stage else 1) for stage in (1, 2, 3)}
    return {
        "weights": num_params * r.weight_bytes / shard[3],
        "gradients": num_params * r.grad_bytes / shard[2],
        "optimizer": num_params * (r.master_bytes + r.optimizer_bytes) / shard[1],
    }


LORA_MODULES = ("q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj")


def lora_trainable_params(spec: ModelSpec, rank: int, modules: Sequence[str] = ("q_proj", "v_proj")) -> int:
    """Trainable LoRA parameters: Σ over layers and adapted modules of r × (d_in + d_out).

    LoRA (Hu et al. 2021, arXiv 2106.09685 §4.1): W + BA with B ∈ R^{d_out×r}, A ∈ R^{r×d_in}.
    PEFT prints 4,194,304 trainable parameters for Llama-7B with r = 8 on q_proj and v_proj.
    MoE expert MLPs are adapted per expert (all experts of every MoE layer).
    """
    if isinstance(rank, bool) or not isinstance(rank, int) or rank < 1:
        raise ValueError(f"LoRA rank must be a positive integer, got {rank!r}")
    unknown = [m for m in modules if m not in LORA_MODULES]
    if unknown:
        raise ValueError(f"unknown LoRA target modules {unknown}; choose from {list(LORA_MODULES)}")
    h, d = spec.hidden_size, spec.head_dim
    moe = set(spec.moe_layers) if spec.is_moe else set()
    total = 0
    for i, (q_heads, kv_heads, width) in enumerate(spec.layer_shapes()):
        shapes = {
            "q_proj": (h, q_heads * d),
            "k_proj": (h, kv_heads * d),
            "v_proj": (h, kv_heads * d),
            "o_proj": (q_heads * d, h),
        }
        for module in modules:
            if module in shapes:
                d_in, d_out = shapes[module]
                total += rank * (d_in + d_out)
            elif module == "gate_proj" and not spec.gated_mlp:
                continue  # a plain MLP has no gate: its two matrices are up_proj and down_proj here
            elif i in moe:
                # gate/up map h -> width and down maps width -> h: r·(h + width) per expert.
                total += spec.num_experts * rank * (h + spec.expert_intermediate_size)
            else:
                total += rank * (h + width)
    return total


# ---------------------------------------------------------------------------------------------
# Putting the terms together
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class MemoryPart:
    key: str
    label: str
    bytes: float
    explanation: str
    glossary: str = ""  # term id for a link


@dataclass(frozen=True)
class MemoryBreakdown:
    """Per-GPU memory, part by part. ``total_bytes`` is what must fit."""

    parts: tuple[MemoryPart, ...]
    n_gpus: int = 1
    notes: tuple[str, ...] = field(default=())

    @property
    def total_bytes(self) -> float:
        return sum(p.bytes for p in self.parts)

    def get(self, key: str) -> float:
        return sum(p.bytes for p in self.parts if p.key == key)


def inference_memory(
    spec: ModelSpec,
    *,
    weight_fmt: str = "bf16",
    group_size: int | None = None,
    kv_fmt: str = "bf16",
    batch: int = 1,
    context_tokens: int = 4096,
    prefill_chunk_tokens: int | None = None,
    n_gpus: int = 1,
    runtime_overhead_bytes: float = DEFAULT_RUNTIME_OVERHEAD_BYTES,
    act_bytes: float = 2,
    logits_for_every_position: bool = False,
    attention: str = "flash",
) -> MemoryBreakdown:
    """Memory per GPU to serve ``batch`` sequences of ``context_tokens`` (prompt + output).

    Weights and KV cache are split evenly over ``n_gpus`` (tensor parallelism shards both;
    the KV heads must divide by the GPU count for an exact split, noted when they do not).
    Activations are sized for ``prefill_chunk_tokens`` tokens in flight (default: the whole
    prompt of one sequence, capped at 8,192 as chunked prefill does) and the last-position
    logits of the batch (``logits_for_every_position`` for a plain forward pass, as a training
    framework runs it). Runtime overhead is per GPU.

    ``attention="flash"`` (default): a fused kernel keeps the scores on chip; nothing is added.
    ``attention="eager"`` adds an ``attention_scores`` part: the largest layer's score matrix
    for the chunk (``attention_score_bytes``: heads × chunk × attended keys × 10 bytes in bf16,
    sliding windows respected) plus the additive masks (``attention_mask_bytes``). The chunk is
    taken as the last one of a prompt that fills the context, so it attends to
    ``context_tokens`` keys (or to its own sequence when the context is 0: a plain forward
    pass). The transient peak is then the largest of three moments, never their sum: the
    attention step (``eager_attention_step_bytes`` + scores + masks), the MLP step (masks + the
    flash-case activations) and the logits; the ``activations`` part is that peak less the
    scores and masks.
    """
    _check_positive(batch=batch, n_gpus=n_gpus)
    _check_nonnegative(context_tokens=context_tokens, runtime_overhead_bytes=runtime_overhead_bytes)
    eager = attention_kind(attention) == "eager"
    notes = []
    chunk = prefill_chunk_tokens if prefill_chunk_tokens is not None else min(context_tokens, 8192)
    weights = weight_bytes(spec, weight_fmt, group_size) / n_gpus
    kv = kv_cache_bytes(spec, context_tokens, batch, kv_fmt) / n_gpus
    if n_gpus > 1 and not spec.uses_mla and spec.num_kv_heads % n_gpus:
        notes.append(
            f"{spec.num_kv_heads} KV heads do not split evenly over {n_gpus} GPUs: engines replicate "
            "KV heads, so the real KV cache per GPU is larger than shown."
        )
    logit_positions = max(chunk // batch, 1) if logits_for_every_position else 1
    # One decoder layer's working set is freed before the output head runs, so the transient
    # peak is the larger of the two, not their sum.
    layer_bytes = inference_activation_bytes(spec, chunk, act_bytes) / n_gpus
    logits = logits_bytes(spec, batch, logit_positions)
    activations = max(layer_bytes, logits)
    scores = 0.0
    rows = keys = 0
    if eager and chunk:
        # Tokens of one sequence in the chunk, and the keys they attend to.
        rows = min(chunk, max(context_tokens, math.ceil(chunk / batch)))
        keys = max(context_tokens, rows)
        sequences = chunk / rows
        masks = attention_mask_bytes(spec, rows, keys, act_bytes=act_bytes) * sequences
        scores = masks + attention_score_bytes(spec, rows, keys, act_bytes=act_bytes) * sequences / n_gpus
        attention_step = eager_attention_step_bytes(spec, chunk, act_bytes) / n_gpus + scores
        activations = max(attention_step, masks + layer_bytes, logits) - scores
    fmt = weight_format(weight_fmt)
    parts = (
        MemoryPart(
            "weights",
            f"Weights ({fmt.label})",
            weights,
            f"{spec.param_count():,} parameters"
            + (
                f" at {fmt.bits_per_weight(group_size):.3g} bits"
                " (linear layers; embeddings and LM head in 16-bit)"
                if fmt.quantized
                else f" × {fmt.bits / 8:g} bytes"
            )
            + (f", split over {n_gpus} GPUs" if n_gpus > 1 else ""),
            "weight-memory",
        ),
        MemoryPart(
            "kv_cache",
            f"KV cache ({kv_fmt.upper()})",
            kv,
            _cache_note(spec, context_tokens, batch, kv_fmt),
            "kv-cache",
        ),
        MemoryPart(
            "activations",
            "Activations and logits",
            activations,
            (
                f"the larger of one layer's working set for {chunk:,} tokens in flight"
                " and the fp32 logits (freed layer by layer, so they never coexist);"
                " fused attention: the score matrix never reaches memory"
                if not eager
                else f"what the peak holds besides the score matrix: one layer's working set for"
                f" {chunk:,} tokens in flight, or the fp32 logits, whichever moment is larger"
            ),
            "activation-memory",
        ),
    )
    if eager:
        parts += (
            MemoryPart(
                "attention_scores",
                "Attention scores (eager)",
                scores,
                f"one layer's score matrix: {chunk:,} tokens × up to {keys:,} keys"
                f" × {spec.num_heads} heads at {eager_score_bytes_per_element(act_bytes):g} bytes"
                " (scores, fp32 softmax copy and output), plus the additive mask; a fused kernel"
                " (FlashAttention) keeps all of it on chip",
                "flash-attention",
            ),
        )
    parts += (
        MemoryPart(
            "overhead",
            "CUDA context and allocator",
            runtime_overhead_bytes,
            "fixed per-GPU cost: CUDA context, kernels, allocator fragmentation (measured 0.3-2 GiB)",
            "vram-estimation",
        ),
    )
    return MemoryBreakdown(parts=parts, n_gpus=n_gpus, notes=tuple(notes))


def training_memory(
    spec: ModelSpec,
    *,
    method: str = "full",
    recipe: str = "mixed-adam-16",
    seq: int = 2048,
    micro_batch: int = 1,
    n_gpus: int = 1,
    zero_stage: int = 0,
    recompute: str = "none",
    flash_attention: bool | None = None,
    lora_rank: int = 16,
    lora_modules: Sequence[str] = LORA_MODULES,
    base_fmt: str = "bf16",
    runtime_overhead_bytes: float = DEFAULT_RUNTIME_OVERHEAD_BYTES,
    act_bytes: float = 2,
    attention: str | None = None,
) -> MemoryBreakdown:
    """Memory per GPU for one training step with data parallelism over ``n_gpus`` (ZeRO stage).

    ``method``: "full" (every parameter trained with ``recipe``), "lora" (frozen base at
    ``base_fmt``, adapters trained with ``recipe``), "qlora" (frozen base in NF4 with double
    quantization, 4.127 bits per linear weight; adapters as LoRA). Activations follow
    ``training_activation_bytes_per_layer`` × layers plus the logits and loss; they are not
    divided by data parallelism (each GPU runs its own micro-batch). ``attention`` is "flash"
    (default) or "eager", as in ``inference_memory``; ``flash_attention`` (True/False) is the
    older spelling of the same switch and still works.
    """
    if method not in ("full", "lora", "qlora"):
        raise ValueError(f"method must be 'full', 'lora' or 'qlora', got {method!r}")
    _check_positive(seq=seq, micro_batch=micro_batch, n_gpus=n_gpus)
    flash_attention = resolve_attention(attention, flash_attention) == "flash"
    total = spec.param_count()
    notes: list[str] = []
    if method == "full":
        states = model_state_bytes_per_gpu(total, recipe, n_gpus, zero_stage)
        frozen = 0.0
        trainable = total
    else:
        trainable = lora_trainable_params(spec, lora_rank, lora_modules)
        states = model_state_bytes_per_gpu(trainable, recipe, n_gpus, zero_stage)
        fmt = "nf4" if method == "qlora" else base_fmt
        frozen = weight_bytes(spec, fmt) / (n_gpus if zero_stage == 3 else 1)
    per_layer = training_activation_bytes_per_layer(
        spec, seq, micro_batch, recompute=recompute, flash_attention=flash_attention, act_bytes=act_bytes
    )
    activations = spec.num_layers * per_layer + logits_bytes(spec, micro_batch, seq, training=True)
    r = training_recipe(recipe)
    parts = []
    if frozen:
        parts.append(
            MemoryPart(
                "frozen_weights",
                "Frozen base weights" + (" (NF4)" if method == "qlora" else f" ({base_fmt.upper()})"),
                frozen,
                f"{total:,} parameters that are not trained"
                + (
                    f", {QLORA_BITS_PER_PARAM:.3f} bits per linear weight (QLoRA double quantization)"
                    if method == "qlora"
                    else ""
                ),
                "qlora" if method == "qlora" else "lora",
            )
        )
    zero_note = f", ZeRO-{zero_stage} over {n_gpus} GPUs" if zero_stage and n_gpus > 1 else ""
    parts += [
        MemoryPart(
            "weights",
            "Trainable weights" if method != "full" else "Weights (working copy)",
            states["weights"],
            f"{trainable:,} trainable parameters × {r.weight_bytes:g} B" + zero_note,
            "weight-memory",
        ),
        MemoryPart(
            "gradients",
            "Gradients",
            states["gradients"],
            f"{trainable:,} × {r.grad_bytes:g} B" + zero_note,
            "forward-backward-pass",
        ),
        MemoryPart(
            "optimizer",
            "Optimizer states (incl. fp32 master)",
            states["optimizer"],
            f"{trainable:,} × {r.master_bytes + r.optimizer_bytes:g} B ({r.label})" + zero_note,
            "optimizer-state",
        ),
        MemoryPart(
            "activations",
            "Activations",
            activations,
            f"{spec.num_layers} layers × seq {seq:,} × micro-batch {micro_batch}, recompute: {recompute}"
            + (", FlashAttention" if flash_attention else ", eager attention (score matrices kept)")
            + "; plus fp32 logits and softmax",
            "activation-memory",
        ),
        MemoryPart(
            "overhead",
            "CUDA context and allocator",
            runtime_overhead_bytes,
            "fixed per-GPU cost: CUDA context, kernels, allocator fragmentation (measured 0.3-2 GiB)",
            "vram-estimation",
        ),
    ]
    return MemoryBreakdown(parts=tuple(parts), n_gpus=n_gpus, notes=tuple(notes))


# ---------------------------------------------------------------------------------------------
# Inverse questions
# ---------------------------------------------------------------------------------------------


def max_context_that_fits(
    spec: ModelSpec,
    capacity_bytes: float,
    *,
    batch: int = 1,
    n_gpus: int = 1,
    limit: int | None = None,
    **inference_kwargs: Any,
) -> int:
    """Longest context (tokens per sequence) whose inference memory fits ``capacity_bytes`` per GPU.

    Memory grows monotonically with context, so a binary search over [0, limit] is exact.
    Returns 0 when not even an empty context fits. ``limit`` defaults to 2^24 tokens.
    """
    hi = limit if limit is not None else 1 << 24

    def fits(context: int) -> bool:
        m = inference_memory(spec, batch=batch, n_gpus=n_gpus, context_tokens=context, **inference_kwargs)
        return m.total_bytes <= capacity_bytes

    if not fits(0):
        return 0
    if fits(hi):
        return hi
    lo = 0
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if fits(mid):
            lo = mid
        else:
            hi = mid
    return lo


def gpus_needed(
    total_bytes_one_gpu: float, capacity_bytes: float, per_gpu_fixed_bytes: float = 0.0, max_gpus: int = 1024
) -> int | None:
    """Smallest N with (total − fixed) / N + fixed ≤ capacity, or None beyond ``max_gpus``.

    The shardable part (weights, KV cache) splits over N GPUs; the fixed part repeats on each.
    """
    shardable = total_bytes_one_gpu - per_gpu_fixed_bytes
    room = capacity_bytes - per_gpu_fixed_bytes
    if room <= 0:
        return None
    n = max(1, math.ceil(shardable / room))
    return n if n <= max_gpus else None


def _check_positive(**values: float) -> None:
    for name, value in values.items():
        if (
            isinstance(value, bool)
            or not isinstance(value, (int, float))
            or not value > 0
            or math.isinf(value)
        ):
            raise ValueError(f"{name} must be a positive number, got {value!r}")


def _check_nonnegative(**values: float) -> None:
    for name, value in values.items():
        if (
            isinstance(value, bool)
            or not isinstance(value, (int, float))
            or not value >= 0
            or math.isinf(value)
        ):
            raise ValueError(f"{name} must be zero or positive, got {value!r}")
