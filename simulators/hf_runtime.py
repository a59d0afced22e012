"""transformers' real peak: the GPU memory of one Hugging Face prefill, as its code allocates it.

``transformers_prefill`` follows one forward pass of ``AutoModelForCausalLM`` in transformers 5.23
(``model(input_ids, use_cache=True, logits_to_keep=1)`` on a fresh ``DynamicCache``, bf16 weights)
tensor by tensor: every tensor the model's Python creates is allocated when its line runs and
freed when the last Python reference to it goes, as PyTorch's caching allocator counts them. The
peak it returns is ``torch.cuda.max_memory_allocated()`` less what was allocated before the model
(the weights stay; the CUDA context is not a tensor), the measurement of the project's GPU runs
(simulators/data/measured/README.md).

It is a layer over ``simulators.llm_memory``, not a second memory model: the weights are
``simulators.fit.measured_prefill_memory``'s, every layer's shape and cached bytes per token are the
spec's (``ModelSpec.kinds``, ``layer_shapes``, ``kv_elements_per_token``, ``layer_state_bytes``),
eager attention's fp32 softmax costs ``llm_memory.eager_score_bytes_per_element`` per score, and
what transformers holds beyond that idealised runtime is what this module adds, each term named
after the transformers 5.23 file and function it comes from:

- the whole prompt's keys and values behind every sliding-window or chunked layer's window
  (``cache_utils.DynamicSlidingWindowLayer.update`` keeps a view into the concatenated prompt), the
  boolean masks of ``masking_utils.sdpa_mask`` and the additive copy PyTorch's SDPA makes of one
  (``fit.hf_sliding_window_prefill_extra_bytes`` is the first and the boolean mask, to the byte);
- the model-level tensors that live through the whole pass (``inputs_embeds``, ``position_ids``,
  the rotary tables), each layer's input, its residual and its normalised copies;
- eager attention's scores with each model's softmax dtype (most upcast to fp32; gpt-oss's sinks
  and Llama 4 keep bf16) and the probabilities the decoder layer keeps through its MLP;
- mixture-of-experts blocks as their code runs them: Llama 4's ``Llama4TextMoe`` multiplies every
  token by every expert; the other families run ``integrations/moe.py``'s default
  ``grouped_mm_experts_forward`` over the tokens routed to each expert;
- with ``kernels=False`` (no flash-linear-attention, causal-conv1d or mamba-ssm installed), the
  torch fallbacks of Gated DeltaNet (``torch_chunk_gated_delta_rule``) and Mamba-2
  (``mamba2_chunk_scan``) with their chunked intermediates.

Families followed: Llama, Mistral, Qwen 2/3 (and Qwen2-MoE, Qwen3-MoE, Mixtral), Phi-3, Gemma 2/3/4
(dense text models), Llama 4, gpt-oss, Qwen3-Next, Qwen 3.5 (and its MoE) and Nemotron-H.
Checked tensor by tensor against transformers itself on the CPU (tests/test_hf_runtime.py, with
tests/hf_prefill_oracle.py) and against real H100/H200 runs. Anything not read from transformers
5.23's code raises ``ValueError`` naming the family, field or setting: a figure that may be wrong
is worse than none. Pure Python, no torch.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from typing import Any

from simulators.llm_memory import MemoryBreakdown, MemoryPart, ModelSpec

TRANSFORMERS_VERSION = "5.23.0"
ACT_BYTES = 2  # bf16 activations, weights and cache: the measured runs' dtype
FP32_BYTES = 4
INT32_BYTES = 4
INT64_BYTES = 8
COMPLEX64_BYTES = 8
# PyTorch reserves one cuBLAS workspace through its caching allocator at the first matmul, so
# max_memory_allocated() counts it: ":4096:8" (32 MiB) on sm90 (H100/H200) unless
# CUBLAS_WORKSPACE_CONFIG says otherwise (aten/src/ATen/cuda/CublasHandlePool.cpp,
# parseChosenWorkspaceSize; cuBLASLt shares it by default, getCUDABlasLtWorkspaceSize).
CUBLAS_WORKSPACE_SM90_BYTES = 4096 * 8 * 1024
ATTENTION_IMPLEMENTATIONS = ("sdpa", "eager")
# transformers' sdpa_attention.use_gqa_in_sdpa: without a mask, SDPA's enable_gqa serves grouped
# heads up to this head size; beyond it (and with any mask) repeat_kv copies K and V per query head.
SDPA_GQA_MAX_HEAD_DIM = 256

# Parts of the breakdown, in the order a page shows them: (label, glossary term).
PART_LABELS: dict[str, tuple[str, str]] = {
    "weights": ("Weights (BF16)", "weight-memory"),
    "cache": ("Cache after the prefill (as transformers keeps it)", "kv-cache"),
    "activations": ("Activations at the peak", "activation-memory"),
    "masks": ("Attention masks", "sliding-window-attention"),
    "attention_scores": ("Attention scores (eager)", "flash-attention"),
    "experts": ("Mixture-of-experts working set", "mixture-of-experts"),
    "linear_attention": ("Gated DeltaNet working set", "linear-attention"),
    "state_space": ("Mamba-2 working set", "state-space-model"),
    "cublas_workspace": ("cuBLAS workspace", "cublas"),
}


# ---------------------------------------------------------------------------------------------
# The allocator: live bytes over the forward pass, and what the peak holds
# ---------------------------------------------------------------------------------------------


class _Timeline:
    """Bytes of live tensors as the pass allocates and frees them; the peak and its make-up."""

    def __init__(self) -> None:
        self.live: dict[str, tuple[float, str]] = {}
        self.by_part: dict[str, float] = {}
        self.now = 0.0
        self.peak = 0.0
        self.peak_parts: dict[str, float] = {}
        self.peak_moment = ""
        self.moment = ""
        self.part = "activations"  # the part new allocations count towards

    def alloc(self, name: str, nbytes: float, part: str | None = None) -> str:
        if name in self.live:
            raise RuntimeError(f"hf_runtime: {name} allocated twice")  # a bug in a family's plan
        part = part or self.part
        self.live[name] = (float(nbytes), part)
        self.by_part[part] = self.by_part.get(part, 0.0) + nbytes
        self.now += nbytes
        if self.now > self.peak:
            self.peak = self.now
            self.peak_parts = dict(self.by_part)
            self.peak_moment = self.moment
        return name

    def free(self, *names: str) -> None:
        for name in names:
            nbytes, part = self.live.pop(name)
            self.by_part[part] -= nbytes
            self.now -= nbytes

    def bytes_of(self, part: str) -> float:
        return self.by_part.get(part, 0.0)


# ---------------------------------------------------------------------------------------------
# What a layer looks like, from the spec (and the config where the spec has no field for it)
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Layer:
    """One decoder layer as its transformers class builds it (from ``ModelSpec``)."""

    index: int
    kind: str  # a key of llm_memory.LAYER_KINDS
    heads: int
    kv_heads: int
    head_dim: int
    mlp_width: int  # dense MLP width (0: none)
    moe: bool
    window: int  # sliding window or attention chunk, tokens (0: none)
    kv_elements: int  # K+V numbers cached per token (0 for state layers)
    state_bytes: int  # fixed-size state per sequence (linear-attention / SSM layers)


@dataclass(frozen=True)
class _Model:
    spec: ModelSpec
    layers: tuple[_Layer, ...]
    given_config: Mapping[str, Any] | None

    @functools.cached_property
    def config(self) -> Mapping[str, Any]:
        """The config passed in (its decoder part), else that of a preset with an equal spec."""
        if self.given_config is not None:
            return _text_config(self.given_config)
        return _preset_config(self.spec)

    @property
    def family(self) -> str:
        return self.spec.family

    @property
    def hidden(self) -> int:
        return self.spec.hidden_size

    def cfg(self, key: str, default: Any = None) -> Any:
        """A config field, or its config class's default when absent (an explicit null stays None,
        as transformers keeps it: a falsy flag)."""
        return self.config.get(key, default)

    def cfg_int(self, key: str, default: int, *alternatives: str) -> int:
        for name in (key, *alternatives):
            if name in self.config:
                value = self.config[name]
                if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                    raise ValueError(f"config field {name!r}: must be a positive integer, got {value!r}")
                return value
        return default


def _layers_from_spec(spec: ModelSpec) -> tuple[_Layer, ...]:
    kinds = spec.kinds()
    head_dims = spec.layer_head_dims or (spec.head_dim,) * spec.num_layers
    states = spec.layer_state_bytes or (0,) * spec.num_layers
    moe = set(spec.moe_layers) if spec.is_moe else set()
    layers = []
    for i, (kind, (heads, kv, width), d, e, s) in enumerate(
        zip(kinds, spec.layer_shapes(), head_dims, spec.kv_elements_per_token(), states, strict=True)
    ):
        window = (
            spec.sliding_window if kind == "sliding" else spec.attention_chunk if kind == "chunked" else 0
        )
        layers.append(_Layer(i, kind, heads, kv, d, width, i in moe, window, e, s))
    return tuple(layers)


def _text_config(config: Mapping[str, Any] | None) -> dict[str, Any]:
    """The decoder's fields: a multimodal wrapper's text_config merged under its top level."""
    if not config:
        return {}
    config = dict(config)
    text = config.get("text_config")
    if isinstance(text, Mapping) and "hidden_size" not in config:
        return {**config, **text}
    return config


def _preset_config(spec: ModelSpec) -> dict[str, Any]:
    """The config of a preset whose spec equals ``spec`` (its name aside); {} when none does."""
    from simulators.presets import load_model_presets  # presets imports llm_memory, not this module

    found = []
    for preset in load_model_presets():
        if preset.spec.family == spec.family and replace(spec, name=preset.spec.name) == preset.spec:
            found.append(preset.config)
    return _text_config(found[0]) if len(found) == 1 else {}


def _need(m: _Model, *fields: str) -> None:
    """Refuse a family whose memory depends on config fields ModelSpec has no place for, when
    neither ``config`` nor a preset with an equal spec supplies them."""
    if not m.config:
        raise ValueError(
            f"config fields {', '.join(repr(f) for f in fields)}: {m.family}'s prefill depends on them and"
            " ModelSpec does not keep them; pass config= (the model's config.json)"
        )


# ---------------------------------------------------------------------------------------------
# Building blocks: each allocates and frees what one transformers function does
# ---------------------------------------------------------------------------------------------


def _repeat_copies(layer: _Layer) -> bool:
    """``repeat_kv`` (x[:, :, None].expand(b, kv, n_rep, T, d).reshape(b, kv × n_rep, T, d)) copies
    only when it must merge a real head dimension with the repeats: one KV head stays a view."""
    return layer.heads != layer.kv_heads and layer.kv_heads > 1


class _Pass:
    """One forward pass of ``batch`` sequences of ``tokens`` tokens, on a timeline."""

    def __init__(self, model: _Model, batch: int, tokens: int, attention: str, kernels: bool) -> None:
        self.m = model
        self.b, self.T, self.N = batch, tokens, batch * tokens
        self.attention = attention
        self.kernels = kernels
        self.t = _Timeline()
        self._n = 0

    def alloc(self, what: str, nbytes: float, part: str | None = None) -> str:
        self._n += 1
        return self.t.alloc(f"{what}#{self._n}", nbytes, part)

    def free(self, *names: str | None) -> None:
        self.t.free(*(n for n in names if n))

    def at(self, moment: str, part: str = "activations") -> None:
        self.t.moment = moment
        self.t.part = part

    # -- model level -------------------------------------------------------------------------

    def cache_init(self) -> None:
        """``DynamicCache(config=...)``: each sliding or chunked layer's ``_sliding_window_tensor``,
        an int64 moved to the device at its first update (cache_utils.DynamicSlidingWindowLayer)."""
        for layer in self.m.layers:
            if layer.kind in ("sliding", "chunked"):
                self.alloc(f"window_tensor{layer.index}", INT64_BYTES, "cache")

    def position_ids(self) -> str:
        """``torch.arange(T) + past_seen_tokens`` then ``unsqueeze(0)`` (each model's forward)."""
        arange = self.alloc("arange", self.T * INT64_BYTES)
        ids = self.alloc("position_ids", self.T * INT64_BYTES)
        self.free(arange)
        return ids

    def rotary_tables(self, width: int, *, duplicated: bool = True, rows: int = 1) -> list[str]:
        """``*RotaryEmbedding.forward``: freqs = position_ids.float() × inv_freq, emb = cat(freqs,
        freqs) (gpt-oss uses freqs as is), cos = emb.cos() × attention_scaling, sin likewise, both
        returned in bf16; ``width`` is the tables' last dimension, ``rows`` the position_ids' batch."""
        n = rows * self.T
        half = width // 2 if duplicated else width
        pos_f = self.alloc("pos_float", n * FP32_BYTES)
        freqs = self.alloc("freqs", n * half * FP32_BYTES)
        self.free(pos_f)
        emb = self.alloc("emb", n * width * FP32_BYTES) if duplicated else None
        tables = []
        for what in ("cos", "sin"):
            raw = self.alloc(f"{what}_raw", n * width * FP32_BYTES)
            tables.append(self.alloc(f"{what}_scaled", n * width * FP32_BYTES))
            self.free(raw)
        out = [self.alloc("cos", n * width * ACT_BYTES), self.alloc("sin", n * width * ACT_BYTES)]
        self.free(freqs, emb, *tables)
        return out

    def bool_mask(self, kind: str) -> str:
        """``masking_utils.sdpa_mask``: the index vectors (arange + offset for q and kv), then the
        mask function broadcast to one boolean (1, 1, T, T) tensor, expanded (not copied) to the
        batch. A sliding window is ``and_masks(sliding_window_overlay, causal_mask_function)``: a
        1-byte start, the overlay (q − window, then the comparison), their ``&``, the causal
        comparison, and the final ``&``, three T × T tensors at once. A chunked mask compares
        ``(kv − left_padding[b]) // chunk`` with the queries' for each sequence: (b, 1, T, T)."""
        b, T = self.b, self.T
        idx = [self.alloc("arange_b", b * INT64_BYTES), self.alloc("arange_h", INT64_BYTES)]
        for _ in range(2):
            raw = self.alloc("arange", T * INT64_BYTES)
            idx.append(self.alloc("idx", T * INT64_BYTES))
            self.free(raw)
        if kind == "full":
            mask = self.alloc("mask", T * T, "masks")
        elif kind == "sliding":
            one = self.alloc("mask_start", 1)
            shifted = self.alloc("q_minus_window", T * INT64_BYTES)
            overlay = self.alloc("overlay", T * T)
            self.free(shifted)
            first = self.alloc("mask_and", T * T)
            self.free(one, overlay)
            causal = self.alloc("causal", T * T)
            mask = self.alloc("mask", T * T, "masks")
            self.free(first, causal)
        elif kind == "chunked":
            one = self.alloc("mask_start", 1)
            pad = self.alloc("left_padding", b * INT64_BYTES)
            temps = []
            for _ in range(2):  # (kv − lp[b]) // chunk, (q − lp[b]) // chunk
                sub = self.alloc("sub", b * T * INT64_BYTES)
                temps.append(self.alloc("floordiv", b * T * INT64_BYTES))
                self.free(sub)
            overlay = self.alloc("overlay", b * T * T)
            self.free(*temps)
            first = self.alloc("mask_and", b * T * T)
            self.free(one, overlay)
            causal = self.alloc("causal", T * T)
            mask = self.alloc("mask", b * T * T, "masks")
            self.free(first, causal, pad)
        else:
            raise RuntimeError(f"hf_runtime: no mask for {kind}")
        self.free(*idx)
        return mask

    def eager_mask(self, kind: str) -> str:
        """``masking_utils.eager_mask``: the boolean mask, then ``torch.where(mask, 0, min)`` in
        the compute dtype, materialised at the batch's (b, 1, T, T)."""
        boolean = self.bool_mask(kind)
        zero = self.alloc("zero", ACT_BYTES)
        additive = self.alloc("eager_mask", self.b * self.T * self.T * ACT_BYTES, "masks")
        self.free(boolean, zero)
        return additive

    def masks(self, kinds: tuple[str, ...] | None = None) -> dict[str, str]:
        """The masks ``*Model.forward`` builds, once per layer type, in ``kinds``' order
        (masking_utils.create_causal_mask and its sliding/chunked siblings). Under SDPA none for
        full attention (``_ignore_causal_mask_sdpa``: ``is_causal`` instead) and none for a window
        the prompt has not reached; under eager always an additive mask (``eager_mask``)."""
        if kinds is None:
            kinds = tuple(dict.fromkeys(layer.kind for layer in self.m.layers))
        windows = {layer.kind: layer.window for layer in self.m.layers}
        masks: dict[str, str] = {}
        for kind in kinds:
            if kind not in ("full", "sliding", "chunked"):
                continue
            self.at(f"{kind} mask")
            if self.attention == "eager":
                masks[kind] = self.eager_mask(kind)
            elif kind != "full" and windows.get(kind, 0) <= self.T:
                masks[kind] = self.bool_mask(kind)
        return masks

    # -- normalisation -----------------------------------------------------------------------

    def _mean_rsqrt(self, E: float, R: float) -> tuple[str, str]:
        """x.pow(2).mean(-1, keepdim=True), + eps, rsqrt: (mean, rsqrt) left alive."""
        pw = self.alloc("norm_pow", E * FP32_BYTES)
        mean = self.alloc("norm_mean", R * FP32_BYTES)
        self.free(pw)
        ve = self.alloc("norm_var_eps", R * FP32_BYTES)
        rs = self.alloc("norm_rsqrt", R * FP32_BYTES)
        self.free(ve)
        return mean, rs

    def llama_norm(self, width: int, rows: int = 1, *, fp32_weight: bool = False) -> str:
        """``LlamaRMSNorm.forward`` (Qwen2/3, Mistral, Qwen3-Next's gated variant's first half):
        x.to(fp32), variance = x.pow(2).mean(-1), x × rsqrt(variance + eps), weight × x.to(bf16).
        ``fp32_weight``: gpt-oss (``(weight × x).to(bf16)``) and Nemotron-H
        (``(weight.to(fp32) × x).to(bf16)``): the product with the fp32 x is fp32, then cast."""
        E, R = self.N * width, self.N * rows
        f32 = self.alloc("norm_f32", E * FP32_BYTES)
        mean, rs = self._mean_rsqrt(E, R)
        prod = self.alloc("norm_prod", E * FP32_BYTES)
        self.free(rs, f32)
        if fp32_weight:
            wf = self.alloc("norm_weight_f32", width * FP32_BYTES) if self.m.family == "nemotron_h" else None
            scaled = self.alloc("norm_scaled", E * FP32_BYTES)
            self.free(wf)
            out = self.alloc("normed", E * ACT_BYTES)
            self.free(scaled, prod, mean)
            return out
        cast = self.alloc("norm_cast", E * ACT_BYTES)
        out = self.alloc("normed", E * ACT_BYTES)
        self.free(cast, prod, mean)
        return out

    def gemma_norm(self, width: int, rows: int = 1) -> str:
        """``Gemma2RMSNorm`` / ``Gemma3RMSNorm`` / ``Qwen3NextRMSNorm.forward``: _norm(x.float())
        (x × rsqrt(mean(x²) + eps)), × (1 + weight.float()), then type_as(x)."""
        E, R = self.N * width, self.N * rows
        f32 = self.alloc("norm_f32", E * FP32_BYTES)
        rs = self._rsqrt_of_mean(E, R)
        o1 = self.alloc("norm_o1", E * FP32_BYTES)
        self.free(rs, f32)
        wf = self.alloc("norm_weight_f32", width * FP32_BYTES)
        w1 = self.alloc("norm_one_plus_w", width * FP32_BYTES)
        self.free(wf)
        o2 = self.alloc("norm_o2", E * FP32_BYTES)
        self.free(w1, o1)
        out = self.alloc("normed", E * ACT_BYTES)
        self.free(o2)
        return out

    def _rsqrt_of_mean(self, E: float, R: float) -> str:
        """rsqrt(x.pow(2).mean(-1, keepdim=True) + eps) as one expression: its temporaries go as it
        runs; only the rsqrt is left."""
        pw = self.alloc("norm_pow", E * FP32_BYTES)
        mean = self.alloc("norm_mean", R * FP32_BYTES)
        self.free(pw)
        ve = self.alloc("norm_var_eps", R * FP32_BYTES)
        self.free(mean)
        rs = self.alloc("norm_rsqrt", R * FP32_BYTES)
        self.free(ve)
        return rs

    def gemma4_norm(self, width: int, rows: int = 1, *, scale: bool = True) -> str:
        """``Gemma4RMSNorm.forward``: _norm(x.float()) (mean(x²) + eps, then x × pow(·, −0.5)),
        × weight.float() when ``with_scale``, then type_as(x)."""
        E, R = self.N * width, self.N * rows
        f32 = self.alloc("norm_f32", E * FP32_BYTES)
        pw = self.alloc("norm_pow", E * FP32_BYTES)
        mean = self.alloc("norm_mean", R * FP32_BYTES)
        self.free(pw)
        ms = self.alloc("norm_mean_eps", R * FP32_BYTES)
        self.free(mean)
        pr = self.alloc("norm_pow_half", R * FP32_BYTES)
        o1 = self.alloc("norm_o1", E * FP32_BYTES)
        self.free(pr, ms, f32)
        if scale:
            wf = self.alloc("norm_weight_f32", width * FP32_BYTES)
            o2 = self.alloc("norm_o2", E * FP32_BYTES)
            self.free(wf, o1)
            o1 = o2
        out = self.alloc("normed", E * ACT_BYTES)
        self.free(o1)
        return out

    def llama4_norm(self, width: int, rows: int = 1, *, weight: bool = True) -> str:
        """``Llama4TextRMSNorm.forward``: _norm(x.float()).type_as(x) × weight; without ``weight``
        it is ``Llama4TextL2Norm`` (the q/k norm of RoPE layers)."""
        E, R = self.N * width, self.N * rows
        f32 = self.alloc("norm_f32", E * FP32_BYTES)
        rs = self._rsqrt_of_mean(E, R)
        o1 = self.alloc("norm_o1", E * FP32_BYTES)
        self.free(rs, f32)
        cast = self.alloc("norm_cast", E * ACT_BYTES)
        self.free(o1)
        if not weight:
            return cast
        out = self.alloc("normed", E * ACT_BYTES)
        self.free(cast)
        return out

    # -- attention ---------------------------------------------------------------------------

    def rope(self, elements: float, fraction: float = 1.0) -> str:
        """``apply_rotary_pos_emb`` with ``rotate_half``: (x × cos) + (cat(−x2, x1) × sin), on the
        first ``fraction`` of each head (``x[..., :rotary_dim]``; the caller cats the rest back)."""
        n = elements * ACT_BYTES * fraction
        t1 = self.alloc("rope_xcos", n)
        neg = self.alloc("rope_neg", n / 2)
        rot = self.alloc("rope_rot", n)
        self.free(neg)
        t2 = self.alloc("rope_rotsin", n)
        self.free(rot)
        out = self.alloc("rope_out", n)
        self.free(t1, t2)
        return out

    def rope_gptoss(self, elements: float) -> str:
        """gpt-oss ``_apply_rotary_emb``: first = x1 × cos − x2 × sin, second = x2 × cos + x1 × sin
        (half-width products), then cat((first, second))."""
        half = elements * ACT_BYTES / 2
        parts = []
        for _ in range(2):
            a = self.alloc("rope_a", half)
            c = self.alloc("rope_c", half)
            parts.append(self.alloc("rope_half", half))
            self.free(a, c)
        out = self.alloc("rope_out", 2 * half)
        self.free(*parts)
        return out

    def cache_update(self, layer: _Layer, k: str, v: str | None) -> None:
        """``DynamicLayer.update`` / ``DynamicSlidingWindowLayer.update``: torch.cat([empty,
        key_states]) copies the prompt's keys, then values, into the cache. A sliding or chunked
        layer keeps ``full[:, :, -window + 1:]``, a view: the whole prompt's storage stays. The
        attention then drops its own key_states and value_states (reassigned to the cache's)."""
        half = layer.kv_elements / 2 * ACT_BYTES
        self.alloc(f"cache_k{layer.index}", self.N * half, "cache")
        self.alloc(f"cache_v{layer.index}", self.N * half, "cache")
        self.free(k, v)

    def sdpa(self, layer: _Layer, mask: str | None) -> str:
        """``integrations/sdpa_attention.sdpa_attention_forward``: without a mask and with a head
        size up to 256 grouped heads run in the kernel (``use_gqa_in_sdpa``); otherwise
        ``repeat_kv`` materialises K and V for every query head. PyTorch's SDPA turns a boolean
        mask into an additive one in the query dtype, of the mask's broadcast shape (b, 1, T, T)
        (aten/src/ATen/native/transformers/attention.cpp, convert_boolean_attn_mask). The fused
        kernel writes the output and an fp32 log-sum-exp per row and head; the output is already
        laid out (b, T, heads, d), so ``transpose(1, 2).contiguous()`` copies nothing."""
        b, T, N = self.b, self.T, self.N
        rep = []
        if _repeat_copies(layer) and (mask is not None or layer.head_dim > SDPA_GQA_MAX_HEAD_DIM):
            for _ in range(2):
                rep.append(self.alloc("repeat_kv", b * layer.heads * T * layer.head_dim * ACT_BYTES))
        additive = self.alloc("sdpa_additive_mask", b * T * T * ACT_BYTES, "masks") if mask else None
        out = self.alloc("sdpa_out", N * layer.heads * layer.head_dim * ACT_BYTES)
        lse = self.alloc("sdpa_lse", b * layer.heads * T * FP32_BYTES)
        self.free(lse, additive, *rep)
        return out

    def eager(self, layer: _Layer, mask: str | None, *, softmax: str = "fp32") -> tuple[str, str]:
        """``eager_attention_forward``: repeat_kv(K), repeat_kv(V); scores = matmul(q, kᵀ) ×
        scaling (+ mask); softmax; output = matmul(probs, V), transposed and made contiguous.
        Returns (output, probabilities): the caller keeps the probabilities (``attn_weights``).

        ``softmax``: "fp32" (models/llama/modeling_llama.py and most copies: softmax(dtype=fp32)
        then .to(bf16): ``eager_score_bytes_per_element`` = the bf16 input, its fp32 copy, the fp32
        output), "bf16" (Llama 4: softmax in the scores' dtype) or "sinks" (gpt-oss: cat with the
        per-head sink logit, minus the row max, softmax in bf16, sink column dropped by a view)."""
        b, T, N = self.b, self.T, self.N
        S = b * layer.heads * T * T
        rep = []
        if _repeat_copies(layer):
            for _ in range(2):
                rep.append(self.alloc("repeat_kv", b * layer.heads * T * layer.head_dim * ACT_BYTES))
        self.t.part = "attention_scores"
        raw = self.alloc("scores_matmul", S * ACT_BYTES)
        scores = self.alloc("scores_scaled", S * ACT_BYTES)
        self.free(raw)
        if mask is not None:
            masked = self.alloc("scores_masked", S * ACT_BYTES)
            self.free(scores)
            scores = masked
        keep = None
        if softmax == "fp32":
            upcast = self.alloc("scores_fp32", S * FP32_BYTES)
            soft = self.alloc("softmax_fp32", S * FP32_BYTES)
            self.free(upcast)
            probs = self.alloc("probs", S * ACT_BYTES)
            self.free(soft, scores)
        elif softmax == "bf16":
            probs = self.alloc("probs", S * ACT_BYTES)
            self.free(scores)
        else:  # sinks
            S1 = b * layer.heads * T * (T + 1)
            combined = self.alloc("scores_with_sink", S1 * ACT_BYTES)
            row_max = self.alloc("row_max", b * layer.heads * T * ACT_BYTES)
            row_arg = self.alloc("row_argmax", b * layer.heads * T * INT64_BYTES)
            self.free(row_arg)  # .max(...).values: the returned pair goes before the subtraction
            shifted = self.alloc("scores_shifted", S1 * ACT_BYTES)
            self.free(combined, row_max)
            probs = self.alloc("probs", S1 * ACT_BYTES)
            self.free(scores)  # attn_weights reassigned to the probabilities' view
            keep = shifted  # combined_logits stays until the function returns
        self.t.part = "activations"
        out = self.alloc("attn_out", N * layer.heads * layer.head_dim * ACT_BYTES)
        out_c = self.alloc("attn_out_contiguous", N * layer.heads * layer.head_dim * ACT_BYTES)
        self.free(out, keep, *rep)
        return out_c, probs

    def attend(
        self, layer: _Layer, masks: dict[str, str], *, softmax: str = "fp32"
    ) -> tuple[str, str | None]:
        mask = masks.get(layer.kind)
        if self.attention == "sdpa":
            return self.sdpa(layer, mask), None
        return self.eager(layer, mask, softmax=softmax)

    # -- MLP ---------------------------------------------------------------------------------

    def gated_mlp(self, width: int) -> str:
        """``down_proj(act_fn(gate_proj(x)) * up_proj(x))`` (``LlamaMLP.forward`` and its copies)."""
        N = self.N
        n = N * width * ACT_BYTES
        gate = self.alloc("mlp_gate", n)
        act = self.alloc("mlp_act", n)
        self.free(gate)
        up = self.alloc("mlp_up", n)
        prod = self.alloc("mlp_prod", n)
        self.free(act, up)
        down = self.alloc("mlp_down", N * self.m.hidden * ACT_BYTES)
        self.free(prod)
        return down

    def relu2_mlp(self, width: int) -> str:
        """``NemotronHMLP.forward``: down_proj(act_fn(up_proj(x))), act_fn = ReLUSquaredActivation
        (relu, then square)."""
        n = self.N * width * ACT_BYTES
        up = self.alloc("mlp_up", n)
        relu = self.alloc("mlp_relu", n)
        sq = self.alloc("mlp_square", n)
        self.free(relu, up)
        down = self.alloc("mlp_down", self.N * self.m.hidden * ACT_BYTES)
        self.free(sq)
        return down

    def grouped_mm_experts(
        self,
        top_k: int,
        width: int,
        experts: int,
        *,
        gate: str = "default",
        bias: bool = False,
        weights_bytes: int = ACT_BYTES,
    ) -> str:
        """``integrations/moe.grouped_mm_experts_forward``, the default ``experts_implementation``
        (modeling_utils.get_correct_experts_implementation: "grouped_mm" for classes decorated with
        ``use_experts_implementation``): S = tokens × top_k rows sorted by expert, gathered hidden
        states, one grouped matmul up (gate and up, or up alone), the gate, one grouped matmul
        down, weighted by the routing weights (fp32 weights promote the product), unsorted, summed
        over top_k and cast back. Locals live until it returns; ``histc``'s input is a float copy
        of the sorted ids on a CPU and an int32 one on CUDA, 4 bytes a row either way.

        ``gate``: "default" (``act_fn(gate) * up``), "gptoss" (GptOssExperts._apply_gate: clamp,
        gate × sigmoid(gate × alpha), (up + 1) × glu) or "relu2" (no gate: ReLU² of up)."""
        N, h, E = self.N, self.m.hidden, experts
        S = N * top_k
        prev = self.t.part
        self.t.part = "experts"
        ids_sorted = self.alloc("expert_ids_sorted", S * INT64_BYTES)
        perm = self.alloc("perm", S * INT64_BYTES)
        div = self.alloc("perm_div", S * INT64_BYTES)
        gathered = self.alloc("gathered", S * h * ACT_BYTES)
        self.free(div)
        sw = self.alloc("sample_weights", S * weights_bytes)
        histc_in = self.alloc("histc_input", S * 4)
        counts = self.alloc("tokens_per_expert", E * 4)
        offsets = self.alloc("offsets", E * INT32_BYTES)
        up_width = width if gate == "relu2" else 2 * width
        up_bias = self.alloc("up_bias", S * up_width * ACT_BYTES) if bias else None
        up = self.alloc("grouped_up", S * up_width * ACT_BYTES)
        n = S * width * ACT_BYTES
        if gate == "default":
            act = self.alloc("act", n)
            gated = self.alloc("gated", n)
            self.free(act)
        elif gate == "gptoss":
            g = self.alloc("gate_clamped", n)
            u = self.alloc("up_clamped", n)
            ga = self.alloc("gate_alpha", n)
            sig = self.alloc("sigmoid", n)
            self.free(ga)
            glu = self.alloc("glu", n)
            self.free(sig)
            u1 = self.alloc("up_plus_one", n)
            gated = self.alloc("gated", n)
            self.free(u1, g, u, glu)
        else:  # relu2
            relu = self.alloc("relu", n)
            gated = self.alloc("gated", n)
            self.free(relu)
        self.free(up)
        down_bias = self.alloc("down_bias", S * h * ACT_BYTES) if bias else None
        self.free(up_bias)
        down = self.alloc("grouped_down", S * h * ACT_BYTES)
        self.free(gated)
        wb = max(ACT_BYTES, weights_bytes)  # bf16 × fp32 routing weights is fp32
        weighted = self.alloc("weighted", S * h * wb)
        inv = self.alloc("inv_perm", S * INT64_BYTES)
        ar = self.alloc("arange", S * INT64_BYTES)
        self.free(ar)
        unsorted = self.alloc("weighted_unsorted", S * h * wb)
        self.free(weighted)
        summed = self.alloc("experts_sum", N * h * wb)
        self.free(ids_sorted, perm, gathered, sw, histc_in, counts, offsets, down_bias, down, unsorted, inv)
        if wb != ACT_BYTES:
            out = self.alloc("experts_out", N * h * ACT_BYTES)
            self.free(summed)
            summed = out
        self.t.part = prev
        return summed


def _finish(
    p: _Pass,
    hidden: str,
    model_locals: list[str | None],
    norm: Callable[[], str],
    *,
    logits: str = "bf16",
    softcap: bool = False,
) -> None:
    """The final norm, the end of ``*Model.forward`` (its locals go), then
    ``*ForCausalLM.forward``: the last position's hidden state (``slice_logits_to_keep``, a view)
    through ``lm_head`` while the model output still holds the last hidden state; logits in bf16
    (``.float()`` after the head: Nemotron-H), optionally soft-capped (Gemma: /cap, tanh, ×cap)."""
    p.at("final norm")
    last = norm()
    p.free(hidden)
    p.free(*model_locals)
    p.at("logits")
    n = p.b * p.m.spec.vocab_size
    out = p.alloc("logits", n * ACT_BYTES)
    if logits == "fp32":
        f = p.alloc("logits_fp32", n * FP32_BYTES)
        p.free(out)
        out = f
    if softcap:
        for what in ("div", "tanh", "mul"):
            nxt = p.alloc(f"logits_{what}", n * ACT_BYTES)
            p.free(out)
            out = nxt
    p.free(last)


# ---------------------------------------------------------------------------------------------
# Llama-style decoders (Llama, Mistral, Qwen 2/3 and their MoE cousins, Phi-3)
# ---------------------------------------------------------------------------------------------


def _llama_like(p: _Pass) -> None:
    """``LlamaForCausalLM`` (models/llama/modeling_llama.py) and the families whose decoder is the
    same code: ``MistralForCausalLM``, ``Qwen2ForCausalLM``, ``Qwen3ForCausalLM`` (q_norm and
    k_norm over head_dim right after q_proj and k_proj, Qwen3Attention.forward), and the
    mixture-of-experts cousins ``MixtralForCausalLM``, ``Qwen2MoeForCausalLM`` and
    ``Qwen3MoeForCausalLM``, whose sparse layers run ``_softmax_moe``.

    ``*Model.forward``: inputs_embeds, position_ids, the masks of the layer types present, the
    rotary table, then each ``*DecoderLayer``: residual = input, input_layernorm, self_attn (q/k/v
    projections, RoPE, cache update, attention, o_proj), residual add, post_attention_layernorm,
    MLP, residual add. The layer's input stays alive while it runs (the model's loop variable), as
    does inputs_embeds (a local of the model's forward); under eager the decoder layer keeps the
    attention probabilities (``hidden_states, _ = self.self_attn(...)``) through its MLP."""
    m, N, h = p.m, p.N, p.m.hidden
    qk_norm = m.family in ("qwen3", "qwen3_moe")
    p.at("embeddings")
    embeds = p.alloc("inputs_embeds", N * h * ACT_BYTES)
    p.cache_init()
    pos = p.position_ids()
    if m.family in ("qwen2_moe", "qwen3_moe") and m.spec.sliding_window:
        raise ValueError(
            f"config field 'use_sliding_window': {m.family}'s sliding layers are not followed; refused"
        )
    # Qwen2MoeModel.forward builds a sliding-window mask even without sliding layers: its config sets
    # sliding_window = 0 then, so the mask is never skipped (and never used).
    masks = p.masks(("full", "sliding") if m.family == "qwen2_moe" else None)
    tables = p.rotary_tables(m.layers[0].head_dim)
    hidden = embeds
    for layer in m.layers:
        p.at(f"layer {layer.index} attention")
        Q, K = N * layer.heads * layer.head_dim, N * layer.kv_heads * layer.head_dim
        normed = p.llama_norm(h)
        q = p.alloc("q_proj", Q * ACT_BYTES)
        if qk_norm:
            q_n = p.llama_norm(layer.heads * layer.head_dim, layer.heads)
            p.free(q)
            q = q_n
        k = p.alloc("k_proj", K * ACT_BYTES)
        if qk_norm:
            k_n = p.llama_norm(layer.kv_heads * layer.head_dim, layer.kv_heads)
            p.free(k)
            k = k_n
        v = p.alloc("v_proj", K * ACT_BYTES)
        q_e = p.rope(Q)
        k_e = p.rope(K)
        p.free(q, k)
        p.cache_update(layer, k_e, v)
        out, probs = p.attend(layer, masks)
        o = p.alloc("o_proj", N * h * ACT_BYTES)
        p.free(out, q_e, normed)
        resid = p.alloc("residual_add", N * h * ACT_BYTES)
        p.free(o)
        p.at(f"layer {layer.index} MLP")
        normed2 = p.llama_norm(h)
        down = _softmax_moe(p) if layer.moe else p.gated_mlp(layer.mlp_width)
        p.free(normed2)
        new_hidden = p.alloc("layer_out", N * h * ACT_BYTES)
        p.free(down, resid, probs)
        if hidden != embeds:
            p.free(hidden)
        hidden = new_hidden
    _finish(p, hidden, [embeds, pos, *masks.values(), *tables], lambda: p.llama_norm(h))


def _sandwich_tail(
    p: _Pass, layer: _Layer, N: int, h: int, out: str, probs: str | None, done: tuple[str, ...], norm
) -> str:
    """The Gemma layers' sandwich after attention (``Gemma2DecoderLayer`` / ``Gemma3DecoderLayer`` /
    ``Gemma4TextDecoderLayer.forward``): o_proj, post-attention norm, residual add, pre-feed-forward
    norm, the gated MLP, post-feed-forward norm, residual add. Frees what the attention left
    (``out`` and ``done``) as the code drops it; returns the layer's output."""
    o = p.alloc("o_proj", N * h * ACT_BYTES)
    p.free(out, *done)
    post = norm()
    p.free(o)
    resid = p.alloc("residual_add", N * h * ACT_BYTES)
    p.free(post)
    p.at(f"layer {layer.index} MLP")
    normed2 = norm()
    down = p.gated_mlp(layer.mlp_width)
    p.free(normed2)
    post2 = norm()
    p.free(down)
    new_hidden = p.alloc("layer_out", N * h * ACT_BYTES)
    p.free(post2, resid, probs)
    return new_hidden


def _softmax_moe(p: _Pass) -> str:
    """The softmax top-k mixture-of-experts blocks: ``Qwen2MoeSparseMoeBlock`` /
    ``Qwen3NextSparseMoeBlock`` (Qwen 3.5-MoE's is the same code: the shared expert first, the
    router, the experts, sigmoid(shared_expert_gate) × shared output added), ``Qwen3MoeSparseMoeBlock``
    and ``MixtralSparseMoeBlock`` (router and experts only). The routers (``*TopKRouter.forward``):
    bf16 logits, softmax in fp32 (a float copy, then the softmax), top-k, normalised in place where
    ``norm_topk_prob`` (always in Mixtral and Qwen 3.5-MoE), then cast back to bf16 except in
    Mixtral, whose fp32 weights make the experts' weighted products fp32
    (``grouped_mm_experts_forward``)."""
    m, N, h = p.m, p.N, p.m.hidden
    E, k_top = m.spec.num_experts, m.spec.experts_per_token
    family = m.family
    shared_width = (
        m.spec.shared_expert_intermediate_size
        if family in ("qwen2_moe", "qwen3_next", "qwen3_5_moe_text")
        else 0
    )
    normalise = family in ("mixtral", "qwen3_5_moe_text") or bool(
        m.cfg("norm_topk_prob", family == "qwen3_next")
    )
    fp32_weights = family == "mixtral"
    shared = p.gated_mlp(shared_width) if shared_width else None
    p.t.part = "experts"
    logits = p.alloc("router_logits", N * E * ACT_BYTES)
    f32 = p.alloc("router_f32", N * E * FP32_BYTES)
    probs = p.alloc("router_probs", N * E * FP32_BYTES)
    p.free(f32)
    top_v = p.alloc("top_values", N * k_top * FP32_BYTES)
    top_i = p.alloc("top_indices", N * k_top * INT64_BYTES)
    if normalise:
        total = p.alloc("top_sum", N * FP32_BYTES)
        p.free(total)
    if fp32_weights:
        weights = top_v
    else:
        weights = p.alloc("routing_weights", N * k_top * ACT_BYTES)
        p.free(top_v)
    p.free(probs)
    p.t.part = "activations"
    routed = p.grouped_mm_experts(
        k_top, m.spec.expert_intermediate_size, E, weights_bytes=FP32_BYTES if fp32_weights else ACT_BYTES
    )
    if shared is None:
        p.free(logits, weights, top_i)
        return routed
    lin = p.alloc("shared_gate", N * ACT_BYTES)
    sig = p.alloc("shared_gate_sigmoid", N * ACT_BYTES)
    p.free(lin)
    gated = p.alloc("shared_gated", N * h * ACT_BYTES)
    p.free(sig, shared)
    out = p.alloc("moe_out", N * h * ACT_BYTES)
    p.free(routed, gated, logits, weights, top_i)
    return out


def _phi3(p: _Pass) -> None:
    """``Phi3ForCausalLM`` (models/phi3/modeling_phi3.py): one mask (sliding-window when the config
    has a window), a rotary table over ``partial_rotary_factor`` of the head, and decoder layers
    whose ``Phi3Attention`` slices q, k and v out of one ``qkv_proj`` output (kept alive, a local,
    until the attention returns) and rebuilds each rotated head with ``torch.cat([rotated, pass])``
    even when nothing passes; ``Phi3MLP`` takes gate and up from one ``gate_up_proj`` output
    (``up * act(gate)``, the fused output alive through the down projection)."""
    m, N, h = p.m, p.N, p.m.hidden
    fraction = _rope_fraction(m, default=1.0)
    p.at("embeddings")
    embeds = p.alloc("inputs_embeds", N * h * ACT_BYTES)
    p.cache_init()
    pos = p.position_ids()
    masks = p.masks()
    tables = p.rotary_tables(int(m.layers[0].head_dim * fraction))
    hidden = embeds
    for layer in m.layers:
        p.at(f"layer {layer.index} attention")
        Q, K = N * layer.heads * layer.head_dim, N * layer.kv_heads * layer.head_dim
        normed = p.llama_norm(h)
        qkv = p.alloc("qkv_proj", (Q + 2 * K) * ACT_BYTES)
        q_r = p.rope(Q, fraction)
        q_e = p.alloc("q_cat", Q * ACT_BYTES)
        p.free(q_r)
        k_r = p.rope(K, fraction)
        k_e = p.alloc("k_cat", K * ACT_BYTES)
        p.free(k_r)
        p.cache_update(layer, k_e, None)
        out, probs = p.attend(layer, masks)
        o = p.alloc("o_proj", N * h * ACT_BYTES)
        p.free(out, q_e, qkv, normed)
        resid = p.alloc("residual_add", N * h * ACT_BYTES)
        p.free(o)
        p.at(f"layer {layer.index} MLP")
        normed2 = p.llama_norm(h)
        n = N * layer.mlp_width * ACT_BYTES
        gate_up = p.alloc("gate_up_proj", 2 * n)
        act = p.alloc("mlp_act", n)
        prod = p.alloc("mlp_prod", n)
        p.free(act)
        down = p.alloc("mlp_down", N * h * ACT_BYTES)
        p.free(prod, gate_up, normed2)
        new_hidden = p.alloc("layer_out", N * h * ACT_BYTES)
        p.free(down, resid, probs)
        if hidden != embeds:
            p.free(hidden)
        hidden = new_hidden
    _finish(p, hidden, [embeds, pos, *masks.values(), *tables], lambda: p.llama_norm(h))


# ---------------------------------------------------------------------------------------------
# Gemma 2, 3 and 4
# ---------------------------------------------------------------------------------------------


def _gemma(p: _Pass) -> None:
    """``Gemma2ForCausalLM`` (models/gemma2/modeling_gemma2.py) and ``Gemma3ForCausalLM``
    (models/gemma3/modeling_gemma3.py): the scaled word embedding (embedding × embed_scale), a
    causal and a sliding-window mask, one rotary table (Gemma 2) or one per layer type (Gemma 3's
    local and global bases), and decoder layers with four ``Gemma*RMSNorm`` (x.float() × (1 +
    weight)): input, post-attention (on the attention output, before the residual add),
    pre-feedforward and post-feedforward. Gemma 3 normalises q and k over head_dim after all three
    projections. Gemma 2's eager attention soft-caps the scores (/cap, tanh, ×cap: never more than
    two bf16 score tensors at once, below the fp32 softmax) and its logits."""
    m, N, h = p.m, p.N, p.m.hidden
    gemma3 = m.family == "gemma3_text"
    p.at("embeddings")
    raw = p.alloc("embedding", N * h * ACT_BYTES)
    scale = p.alloc("embed_scale", ACT_BYTES)
    embeds = p.alloc("inputs_embeds", N * h * ACT_BYTES)
    p.free(raw, scale)
    p.cache_init()
    pos = p.position_ids()
    masks = p.masks(("full", "sliding"))
    kinds = tuple(dict.fromkeys(layer.kind for layer in m.layers)) if gemma3 else ("one",)
    tables = [t for _ in kinds for t in p.rotary_tables(m.layers[0].head_dim)]
    hidden = embeds
    for layer in m.layers:
        p.at(f"layer {layer.index} attention")
        Q, K = N * layer.heads * layer.head_dim, N * layer.kv_heads * layer.head_dim
        normed = p.gemma_norm(h)
        q = p.alloc("q_proj", Q * ACT_BYTES)
        k = p.alloc("k_proj", K * ACT_BYTES)
        v = p.alloc("v_proj", K * ACT_BYTES)
        if gemma3:
            q_n = p.gemma_norm(layer.heads * layer.head_dim, layer.heads)
            p.free(q)
            k_n = p.gemma_norm(layer.kv_heads * layer.head_dim, layer.kv_heads)
            p.free(k)
            q, k = q_n, k_n
        q_e = p.rope(Q)
        k_e = p.rope(K)
        p.free(q, k)
        p.cache_update(layer, k_e, v)
        out, probs = p.attend(layer, masks)
        new_hidden = _sandwich_tail(p, layer, N, h, out, probs, (q_e, normed), lambda: p.gemma_norm(h))
        if hidden != embeds:
            p.free(hidden)
        hidden = new_hidden
    softcap = m.cfg("final_logit_softcapping", 30.0 if m.family == "gemma2" else None) is not None
    _finish(p, hidden, [embeds, pos, *masks.values(), *tables], lambda: p.gemma_norm(h), softcap=softcap)


def _gemma4_k_eq_v(m: _Model) -> bool:
    """``attention_k_eq_v``: from the config, else from the spec's parameters of a full layer
    (``simulators.families.per_layer.read_gemma4`` counts one projection for K=V, two otherwise)."""
    if "attention_k_eq_v" in m.config:
        return bool(m.config["attention_k_eq_v"])
    spec = m.spec
    for layer in m.layers:
        if layer.kind != "full":
            continue
        h, d, kv = spec.hidden_size, layer.head_dim, layer.kv_heads
        bias = spec.qkv_bias
        base = 2 * h * layer.heads * d + d + ((layer.heads * d + h) if bias else 0) + d
        one = h * kv * d + (kv * d if bias else 0)
        params = spec.layer_attention_params[layer.index]
        if params in (base + one, base + 2 * one) and one:
            return params == base + one
        raise ValueError(
            f"config field 'attention_k_eq_v': not readable from the spec of layer {layer.index}"
        )
    return False


def _gemma4(p: _Pass) -> None:
    """``Gemma4ForCausalLM`` (models/gemma4/modeling_gemma4.py), its dense text model: the scaled
    word embedding, a causal and a sliding-window mask, one rotary table per layer type at that
    type's head size (the global layers' proportional RoPE encodes the whole head), and
    ``Gemma4TextDecoderLayer``s with four ``Gemma4RMSNorm``s (x.float(), × pow(mean(x²) + eps,
    −0.5), × weight.float()). ``Gemma4TextAttention.forward`` normalises and rotates q before
    projecting k; with ``attention_k_eq_v`` the global layers' values are the un-normalised key
    projection (no v_proj) until ``v_norm`` (no weight) copies them; the global layers' 512-wide
    heads exceed ``use_gqa_in_sdpa``'s 256, so ``repeat_kv`` copies K and V even without a mask.
    Per-layer embeddings, KV sharing and the MoE block are refused (not followed here)."""
    m, N, h = p.m, p.N, p.m.hidden
    spec = m.spec
    if spec.lookup_params:
        raise ValueError(
            "config field 'hidden_size_per_layer_input': Gemma 4's per-layer embeddings are not followed"
        )
    if "shared" in spec.kinds():
        raise ValueError("config field 'num_kv_shared_layers': Gemma 4's KV sharing is not followed; refused")
    if spec.is_moe:
        raise ValueError("config field 'enable_moe_block': Gemma 4's MoE block is not followed; refused")
    k_eq_v = _gemma4_k_eq_v(m)
    p.at("embeddings")
    raw = p.alloc("embedding", N * h * ACT_BYTES)
    scale = p.alloc("embed_scale", ACT_BYTES)
    embeds = p.alloc("inputs_embeds", N * h * ACT_BYTES)
    p.free(raw, scale)
    p.cache_init()
    pos = p.position_ids()
    masks = p.masks(("full", "sliding"))
    widths = {layer.kind: layer.head_dim for layer in m.layers}
    tables = [t for kind in sorted(widths) for t in p.rotary_tables(widths[kind])]
    hidden = embeds
    for layer in m.layers:
        p.at(f"layer {layer.index} attention")
        Q, K = N * layer.heads * layer.head_dim, N * layer.kv_heads * layer.head_dim
        normed = p.gemma4_norm(h)
        q = p.alloc("q_proj", Q * ACT_BYTES)
        q_n = p.gemma4_norm(layer.heads * layer.head_dim, layer.heads)
        p.free(q)
        q_r = p.rope(Q)
        p.free(q_n)
        k = p.alloc("k_proj", K * ACT_BYTES)
        shared_v = k_eq_v and layer.kind == "full"
        v = k if shared_v else p.alloc("v_proj", K * ACT_BYTES)
        k_n = p.gemma4_norm(layer.kv_heads * layer.head_dim, layer.kv_heads)
        if not shared_v:
            p.free(k)
        k_r = p.rope(K)
        p.free(k_n)
        v_n = p.gemma4_norm(layer.kv_heads * layer.head_dim, layer.kv_heads, scale=False)
        p.free(v)
        p.cache_update(layer, k_r, v_n)
        out, probs = p.attend(layer, masks)
        new_hidden = _sandwich_tail(p, layer, N, h, out, probs, (q_r, normed), lambda: p.gemma4_norm(h))
        if hidden != embeds:
            p.free(hidden)
        hidden = new_hidden
    softcap = m.cfg("final_logit_softcapping") is not None  # Gemma4TextConfig's default: None
    _finish(p, hidden, [embeds, pos, *masks.values(), *tables], lambda: p.gemma4_norm(h), softcap=softcap)


# ---------------------------------------------------------------------------------------------
# Llama 4: chunked attention, every expert on every token
# ---------------------------------------------------------------------------------------------


def _llama4(p: _Pass) -> None:
    """``Llama4ForCausalLM`` (models/llama4/modeling_llama4.py). ``Llama4TextModel.forward``: a
    causal and a chunked mask (``create_chunked_causal_mask``: per sequence, (b, 1, T, T)), the
    complex rotary table (``Llama4TextRotaryEmbedding``: torch.polar, complex64). Each
    ``Llama4TextDecoderLayer``: ``Llama4TextRMSNorm``; ``Llama4TextAttention`` with RoPE as complex
    products on chunked layers (``apply_rotary_emb``, in fp32) and the weightless L2 q/k norm
    there (``use_qk_norm``), the attention-temperature scale on the NoPE layers
    (``attn_temperature_tuning``: a fp32 product, cast back); eager attention's softmax stays in
    bf16. The layer keeps its normalised input and the attention output
    (``attention_states, _ = self.self_attn(...)``) until it returns.

    ``Llama4TextMoe.forward`` runs every token through every expert: ``hidden_states.repeat(E, 1)``
    scaled by the sigmoid router scores (zero for unchosen experts), ``Llama4TextExperts``'s
    ``bmm`` over (E, tokens, 2 × intermediate), the gated product and the ``bmm`` down, then the
    shared expert beside the E × tokens routed output, summed over experts."""
    m, N, h, T = p.m, p.N, p.m.hidden, p.T
    _need(m, "use_qk_norm", "attn_temperature_tuning")
    qk_norm = bool(m.cfg("use_qk_norm", True))
    temperature = bool(m.cfg("attn_temperature_tuning", True))
    E, width = m.spec.num_experts, m.spec.expert_intermediate_size
    p.at("embeddings")
    embeds = p.alloc("inputs_embeds", N * h * ACT_BYTES)
    p.cache_init()
    pos = p.position_ids()
    masks = p.masks(("full", "chunked"))
    half = m.layers[0].head_dim // 2
    pos_f = p.alloc("pos_float", T * FP32_BYTES)
    freqs = p.alloc("freqs", T * half * FP32_BYTES)
    p.free(pos_f)
    ones = p.alloc("ones", T * half * FP32_BYTES)
    polar = p.alloc("polar", T * half * COMPLEX64_BYTES)
    p.free(ones)
    freq_cis = p.alloc("freq_cis", T * half * COMPLEX64_BYTES)
    p.free(polar, freqs)
    hidden = embeds
    for layer in m.layers:
        p.at(f"layer {layer.index} attention")
        Q, K = N * layer.heads * layer.head_dim, N * layer.kv_heads * layer.head_dim
        rope = layer.kind == "chunked"  # no_rope_layers: the NoPE layers attend fully
        normed = p.llama4_norm(h)
        q = p.alloc("q_proj", Q * ACT_BYTES)
        k = p.alloc("k_proj", K * ACT_BYTES)
        v = p.alloc("v_proj", K * ACT_BYTES)
        temps = []
        if rope:
            xq, xk = p.alloc("xq_f32", Q * FP32_BYTES), p.alloc("xk_f32", K * FP32_BYTES)
            xq_out, xk_out = p.alloc("xq_out", Q * FP32_BYTES), p.alloc("xk_out", K * FP32_BYTES)
            q_r, k_r = p.alloc("q_rope", Q * ACT_BYTES), p.alloc("k_rope", K * ACT_BYTES)
            p.free(xq, xk, xq_out, xk_out, q, k)
            q, k = q_r, k_r
            if qk_norm:
                q_n = p.llama4_norm(layer.heads * layer.head_dim, layer.heads, weight=False)
                p.free(q)
                k_n = p.llama4_norm(layer.kv_heads * layer.head_dim, layer.kv_heads, weight=False)
                p.free(k)
                q, k = q_n, k_n
        elif temperature:
            raw = p.alloc("arange", T * INT64_BYTES)
            positions = p.alloc("positions", T * INT64_BYTES)
            p.free(raw)
            x = p.alloc("positions_float", T * FP32_BYTES)
            for step in ("plus_one", "div", "floor", "log1p", "times_scale", "plus_one_again"):
                nxt = p.alloc(step, T * FP32_BYTES)
                p.free(x)
                x = nxt
            temps = [positions, x]
            scaled = p.alloc("q_scaled_fp32", Q * FP32_BYTES)
            q_s = p.alloc("q_scaled", Q * ACT_BYTES)
            p.free(scaled, q)
            q = q_s
        p.cache_update(layer, k, v)
        out, probs = p.attend(layer, masks, softmax="bf16")
        attn_states = p.alloc("o_proj", N * h * ACT_BYTES)
        p.free(out, q, *temps)
        resid = p.alloc("residual_add", N * h * ACT_BYTES)
        p.free(normed)
        p.at(f"layer {layer.index} MLP")
        normed2 = p.llama4_norm(h)
        router_logits = None
        if layer.moe:
            p.t.part = "experts"
            router_logits = p.alloc("router_logits", N * E * ACT_BYTES)
            top_v = p.alloc("top_values", N * m.spec.experts_per_token * ACT_BYTES)
            top_i = p.alloc("top_indices", N * m.spec.experts_per_token * INT64_BYTES)
            full = p.alloc("router_full", N * E * ACT_BYTES)
            as_f32 = p.alloc("router_f32", N * E * FP32_BYTES)
            sig = p.alloc("router_sigmoid", N * E * FP32_BYTES)
            p.free(as_f32)
            scores = p.alloc("router_scores", N * E * ACT_BYTES)
            p.free(sig, full, top_v, top_i)
            repeated = p.alloc("routed_in_repeat", E * N * h * ACT_BYTES)
            col = p.alloc("scores_column", E * N * ACT_BYTES)
            routed_in = p.alloc("routed_in", E * N * h * ACT_BYTES)
            p.free(col, repeated)
            gate_up = p.alloc("experts_gate_up", E * N * 2 * width * ACT_BYTES)
            act = p.alloc("experts_act", E * N * width * ACT_BYTES)
            prod = p.alloc("experts_prod", E * N * width * ACT_BYTES)
            p.free(act)
            routed_out = p.alloc("experts_down", E * N * h * ACT_BYTES)
            p.free(prod, gate_up)
            p.t.part = "activations"
            shared = p.gated_mlp(width)
            summed = p.alloc("experts_sum", N * h * ACT_BYTES, "experts")
            p.free(summed, routed_in, routed_out, scores)
            down = shared
        else:
            down = p.gated_mlp(layer.mlp_width)
        p.free(normed2)
        if router_logits:
            p.free(probs)  # `hidden_states, _ = hidden_states`: _ now holds the router logits
            probs = router_logits
        new_hidden = p.alloc("layer_out", N * h * ACT_BYTES)
        p.free(down, resid, attn_states, probs)
        if hidden != embeds:
            p.free(hidden)
        hidden = new_hidden
    _finish(p, hidden, [embeds, pos, *masks.values(), freq_cis], lambda: p.llama4_norm(h))


# ---------------------------------------------------------------------------------------------
# gpt-oss: attention sinks, eager only
# ---------------------------------------------------------------------------------------------


def _gpt_oss(p: _Pass) -> None:
    """``GptOssForCausalLM`` (models/gpt_oss/modeling_gpt_oss.py), eager only (``_supports_sdpa =
    False``). ``GptOssModel.forward``: a causal and a sliding-window mask, a half-width rotary
    table (emb = freqs), decoder layers with ``GptOssRMSNorm`` (weight × the fp32 x, an fp32
    product cast back), ``_apply_rotary_emb`` on the two halves,
    and ``eager_attention_forward`` with attention sinks: the scores concatenated with each head's
    sink logit, less their row max, a softmax in bf16 (no fp32 upcast), the sink column dropped by
    a view; the shifted logits stay until it returns and the probabilities through the MLP.
    ``GptOssMLP``: ``GptOssTopKRouter`` (biased logits, top-k, softmax of the top values) and
    ``GptOssExperts`` through ``grouped_mm_experts_forward`` with biases and its clamped SwiGLU."""
    m, N, h = p.m, p.N, p.m.hidden
    E, k_top, width = m.spec.num_experts, m.spec.experts_per_token, m.spec.expert_intermediate_size
    p.at("embeddings")
    p.cache_init()
    embeds = p.alloc("inputs_embeds", N * h * ACT_BYTES)
    pos = p.position_ids()
    masks = p.masks(("full", "sliding"))
    tables = p.rotary_tables(m.layers[0].head_dim // 2, duplicated=False)
    hidden = embeds
    for layer in m.layers:
        p.at(f"layer {layer.index} attention")
        Q, K = N * layer.heads * layer.head_dim, N * layer.kv_heads * layer.head_dim
        normed = p.llama_norm(h, fp32_weight=True)
        q = p.alloc("q_proj", Q * ACT_BYTES)
        k = p.alloc("k_proj", K * ACT_BYTES)
        v = p.alloc("v_proj", K * ACT_BYTES)
        q_e = p.rope_gptoss(Q)
        k_e = p.rope_gptoss(K)
        p.free(q, k)
        p.cache_update(layer, k_e, v)
        out, probs = p.attend(layer, masks, softmax="sinks")
        o = p.alloc("o_proj", N * h * ACT_BYTES)
        p.free(out, q_e, normed)
        resid = p.alloc("residual_add", N * h * ACT_BYTES)
        p.free(o)
        p.at(f"layer {layer.index} MLP")
        normed2 = p.llama_norm(h, fp32_weight=True)
        logits = p.alloc("router_logits", N * E * ACT_BYTES, "experts")
        top_v = p.alloc("top_values", N * k_top * ACT_BYTES, "experts")
        top_i = p.alloc("top_indices", N * k_top * INT64_BYTES, "experts")
        scores = p.alloc("router_scores", N * k_top * ACT_BYTES, "experts")
        p.free(top_v)
        down = p.grouped_mm_experts(k_top, width, E, gate="gptoss", bias=True)
        p.free(logits, top_i, normed2, probs)  # the MLP returns; `_` now holds the router scores
        new_hidden = p.alloc("layer_out", N * h * ACT_BYTES)
        p.free(down, resid, scores)
        if hidden != embeds:
            p.free(hidden)
        hidden = new_hidden
    _finish(p, hidden, [embeds, pos, *masks.values(), *tables], lambda: p.llama_norm(h, fp32_weight=True))


# ---------------------------------------------------------------------------------------------
# Qwen3-Next and Qwen 3.5: Gated DeltaNet hybrids
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class _DeltaNet:
    """A Gated DeltaNet layer's shapes (Qwen3NextGatedDeltaNet / Qwen3_5GatedDeltaNet.__init__)."""

    k_heads: int
    k_dim: int
    v_heads: int
    v_dim: int
    kernel: int

    @property
    def key_dim(self) -> int:
        return self.k_heads * self.k_dim

    @property
    def value_dim(self) -> int:
        return self.v_heads * self.v_dim

    @property
    def conv_dim(self) -> int:
        return 2 * self.key_dim + self.value_dim


# Config-class defaults of transformers 5.23 (Qwen3NextConfig, Qwen3_5TextConfig, Qwen3_5MoeTextConfig).
_DELTANET_DEFAULTS = {
    "linear_num_key_heads": 16,
    "linear_key_head_dim": 128,
    "linear_num_value_heads": 32,
    "linear_value_head_dim": 128,
    "linear_conv_kernel_dim": 4,
}

DELTA_RULE_CHUNK = 64  # torch_chunk_gated_delta_rule's chunk_size


def _rope_fraction(m: _Model, default: float = 0.25) -> float:
    """partial_rotary_factor, top level or in rope_parameters (Qwen3-Next's and Qwen 3.5's config
    classes default to 0.25, Phi-3's to 1)."""
    rope = m.config.get("rope_parameters") or m.config.get("rope_scaling") or {}
    value = m.config.get(
        "partial_rotary_factor", rope.get("partial_rotary_factor") if isinstance(rope, Mapping) else None
    )
    return float(default if value is None else value)


def _qwen3_next(p: _Pass) -> None:
    """``Qwen3NextForCausalLM`` (models/qwen3_next/modeling_qwen3_next.py), ``Qwen3_5ForCausalLM``
    (models/qwen3_5/modeling_qwen3_5.py) and ``Qwen3_5MoeForCausalLM``: Gated DeltaNet layers and
    gated full-attention layers, ``*RMSNorm`` as x.float() × (1 + weight).

    Attention (``Qwen3NextAttention.forward``): q_proj writes queries and output gates together, the
    gate is copied out (``reshape``), q/k normalised, partial RoPE (``apply_rotary_pos_emb`` on the
    first ``partial_rotary_factor`` of each head, then ``torch.cat`` with the rest), and the output
    multiplied by sigmoid(gate) before o_proj. Qwen 3.5's rotary table is multimodal RoPE
    (``Qwen3_5TextRotaryEmbedding``: three position rows per sequence, recomposed).

    Gated DeltaNet (``Qwen3NextGatedDeltaNet.forward``; Qwen 3.5's has separate in_proj_qkv, _z, _b,
    _a): the projections, the q/k/v concatenation, the cache's convolution state, the depthwise
    causal convolution with SiLU (``causal_conv1d_fn``'s torch fallback: ``F.conv1d`` over T + k − 1
    outputs, sliced), β = sigmoid(b), g = −exp(A_log) × softplus(a + dt_bias) in fp32, the delta rule
    (``_delta_rule``), the recurrent state copied into the cache, ``*RMSNormGated`` (norm, then ×
    SiLU(z), in fp32) and out_proj. Sparse layers run ``Qwen3NextSparseMoeBlock``: the shared
    expert first, the softmax top-k router, the experts through ``grouped_mm_experts_forward``, the
    sigmoid-gated shared output added."""
    m, N, h = p.m, p.N, p.m.hidden
    _need(m, *_DELTANET_DEFAULTS)
    qwen35 = m.family in ("qwen3_5_text", "qwen3_5_moe_text")
    dn = _DeltaNet(*(m.cfg_int(key, default) for key, default in _DELTANET_DEFAULTS.items()))
    fraction = _rope_fraction(m)
    head_dim = next((layer.head_dim for layer in m.layers if layer.kind == "full"), m.spec.head_dim)
    rotary = int(head_dim * fraction)
    p.at("embeddings")
    embeds = p.alloc("inputs_embeds", N * h * ACT_BYTES)
    pos = p.position_ids()
    tables = _mrope_tables(p, rotary) if qwen35 else p.rotary_tables(rotary)
    masks = p.masks(("full",))
    hidden = embeds
    for layer in m.layers:
        p.at(f"layer {layer.index} {'Gated DeltaNet' if layer.kind == 'linear' else 'attention'}")
        normed = p.gemma_norm(h)
        probs = None
        if layer.kind == "linear":
            out = _gated_deltanet(p, layer, dn, qwen35)
        else:
            out, probs = _gated_attention(p, layer, masks, fraction)
        p.free(normed)
        resid = p.alloc("residual_add", N * h * ACT_BYTES)
        p.free(out)
        p.at(f"layer {layer.index} MLP")
        normed2 = p.gemma_norm(h)
        down = _softmax_moe(p) if layer.moe else p.gated_mlp(layer.mlp_width)
        p.free(normed2)
        new_hidden = p.alloc("layer_out", N * h * ACT_BYTES)
        p.free(down, resid, probs)
        if hidden != embeds:
            p.free(hidden)
        hidden = new_hidden
    _finish(p, hidden, [embeds, pos, *masks.values(), *tables], lambda: p.gemma_norm(h))


def _mrope_tables(p: _Pass, rotary: int) -> list[str]:
    """``Qwen3_5TextRotaryEmbedding.forward``: position_ids expanded to (3, b, T), freqs =
    ids.float() × inv_freq, cos and sin of all three rows, each recomposed
    (``recomposition_frequencies``: the first row overwritten in place, then cat with itself) to
    (b, T, rotary) in fp32, then cast to bf16."""
    n3 = 3 * p.N
    half = rotary // 2
    pos_f = p.alloc("pos_float", n3 * FP32_BYTES)
    freqs = p.alloc("freqs", n3 * half * FP32_BYTES)
    p.free(pos_f)
    raw = []
    for what in ("cos", "sin"):
        r = p.alloc(f"{what}_raw", n3 * half * FP32_BYTES)
        raw.append(p.alloc(f"{what}_scaled", n3 * half * FP32_BYTES))
        p.free(r)
    cos3, sin3 = raw
    sin_r = p.alloc("sin_recomposed", p.N * rotary * FP32_BYTES)
    p.free(sin3)
    cos_r = p.alloc("cos_recomposed", p.N * rotary * FP32_BYTES)
    p.free(cos3)
    out = [p.alloc("cos", p.N * rotary * ACT_BYTES), p.alloc("sin", p.N * rotary * ACT_BYTES)]
    p.free(cos_r, sin_r, freqs)
    return out


def _gated_attention(
    p: _Pass, layer: _Layer, masks: dict[str, str], fraction: float
) -> tuple[str, str | None]:
    N, h = p.N, p.m.hidden
    Q, K = N * layer.heads * layer.head_dim, N * layer.kv_heads * layer.head_dim
    q_and_gate = p.alloc("q_proj", 2 * Q * ACT_BYTES)
    gate = p.alloc("gate_copy", Q * ACT_BYTES)
    q = p.gemma_norm(layer.heads * layer.head_dim, layer.heads)
    p.free(q_and_gate)
    k_proj = p.alloc("k_proj", K * ACT_BYTES)
    k = p.gemma_norm(layer.kv_heads * layer.head_dim, layer.kv_heads)
    p.free(k_proj)
    v = p.alloc("v_proj", K * ACT_BYTES)
    # Both heads rotated, then each rebuilt by torch.cat([embedded, pass]) (even with nothing to pass).
    q_r = p.rope(Q, fraction)
    k_r = p.rope(K, fraction)
    q_e = p.alloc("q_cat", Q * ACT_BYTES)
    p.free(q_r)
    k_e = p.alloc("k_cat", K * ACT_BYTES)
    p.free(k_r)
    q_r, k_r = q_e, k_e
    p.free(q, k)
    p.cache_update(layer, k_r, v)
    out, probs = p.attend(layer, masks)
    sig = p.alloc("gate_sigmoid", Q * ACT_BYTES)
    gated = p.alloc("gated_out", Q * ACT_BYTES)
    p.free(sig, out)
    o = p.alloc("o_proj", N * h * ACT_BYTES)
    p.free(gated, gate, q_r)
    return o, probs


def _causal_conv(p: _Pass, layer: _Layer, channels: int, kernel: int, x: str, *, owns_input: bool) -> str:
    """The cache's convolution state (``LinearAttentionLayer.lazy_initialization``: zeros of
    (b, channels, kernel)) and ``update_conv_state``, which pads a prompt shorter than the kernel,
    then ``causal_conv1d_fn``'s torch fallback: ``F.conv1d`` with kernel − 1 zeros of padding
    (T + kernel − 1 outputs), sliced to T, SiLU. ``owns_input``: the caller's only reference to
    ``x`` is the variable the convolution's result replaces, so ``x`` goes then."""
    b, tokens = p.b, p.T
    p.alloc(f"conv_state{layer.index}", b * channels * kernel * ACT_BYTES, "cache")
    padded = None
    if tokens < kernel:
        padded = p.alloc("conv_input_padded", b * channels * kernel * ACT_BYTES)
        if owns_input:
            p.free(x)
            owns_input = False
    length = max(tokens, kernel)
    conv = p.alloc("conv1d", b * channels * (length + kernel - 1) * ACT_BYTES)
    act = p.alloc("conv_silu", b * channels * length * ACT_BYTES)
    p.free(conv, padded, x if owns_input else None)
    return act


def _gated_deltanet(p: _Pass, layer: _Layer, dn: _DeltaNet, qwen35: bool) -> str:
    N, h, b = p.N, p.m.hidden, p.b
    K, V, C, vh = dn.key_dim, dn.value_dim, dn.conv_dim, dn.v_heads
    locals_: list[str] = []
    if qwen35:
        qkv = p.alloc("in_proj_qkv", N * C * ACT_BYTES)
        z = p.alloc("in_proj_z", N * V * ACT_BYTES)
        b_ = p.alloc("in_proj_b", N * vh * ACT_BYTES)
        a_ = p.alloc("in_proj_a", N * vh * ACT_BYTES)
        locals_ += [z, b_, a_]
        mixed = qkv
    else:
        qkvz = p.alloc("in_proj_qkvz", N * (C + V) * ACT_BYTES)
        ba = p.alloc("in_proj_ba", N * 2 * vh * ACT_BYTES)
        # fix_query_key_value_ordering: value, z, b and a reshaped out of their interleaved views
        value = p.alloc("value_copy", N * V * ACT_BYTES)
        z = p.alloc("z_copy", N * V * ACT_BYTES)
        b_ = p.alloc("b_copy", N * vh * ACT_BYTES)
        a_ = p.alloc("a_copy", N * vh * ACT_BYTES)
        q_c = p.alloc("query_copy", N * K * ACT_BYTES)
        k_c = p.alloc("key_copy", N * K * ACT_BYTES)
        mixed = p.alloc("mixed_qkv", N * C * ACT_BYTES)
        locals_ += [qkvz, ba, z, b_, a_]
    act = _causal_conv(p, layer, C, dn.kernel, mixed, owns_input=True)
    if not qwen35:
        p.free(q_c, k_c, value)
    locals_.append(act)
    beta = p.alloc("beta", N * vh * ACT_BYTES)
    g_parts = [p.alloc("a_log_f32", vh * FP32_BYTES)]
    g_parts.append(p.alloc("a_log_exp", vh * FP32_BYTES))
    p.free(g_parts[0])
    g_parts.append(p.alloc("neg", vh * FP32_BYTES))
    p.free(g_parts[1])
    a_f = p.alloc("a_f32", N * vh * FP32_BYTES)
    a_b = p.alloc("a_plus_bias", N * vh * FP32_BYTES)
    p.free(a_f)
    sp = p.alloc("softplus", N * vh * FP32_BYTES)
    p.free(a_b)
    g = p.alloc("g", N * vh * FP32_BYTES)
    p.free(sp, g_parts[2])
    locals_ += [beta, g]
    if p.kernels:
        raise ValueError(
            "kernels: with flash-linear-attention installed, Gated DeltaNet runs fla's"
            " chunk_gated_delta_rule, whose buffers are outside transformers' code; pass kernels=False"
            " for the torch fallback transformers uses without it"
        )
    core, state = _delta_rule(p, dn)
    p.alloc(f"recurrent_state{layer.index}", b * vh * dn.k_dim * dn.v_dim * FP32_BYTES, "cache")
    locals_.append(state)
    normed = _gated_rms_norm(p, V, vh)
    p.free(core)
    out = p.alloc("out_proj", N * h * ACT_BYTES)
    p.free(normed, *locals_)
    return out


def _gated_rms_norm(p: _Pass, width: int, heads: int) -> str:
    """``Qwen3NextRMSNormGated.forward`` over each head: x.to(fp32), variance, x × rsqrt, weight ×
    x.to(bf16), × silu(gate.to(fp32)) (fp32), .to(bf16)."""
    E, R = p.N * width, p.N * heads
    f32 = p.alloc("norm_f32", E * FP32_BYTES)
    mean, rs = p._mean_rsqrt(E, R)
    prod = p.alloc("norm_prod", E * FP32_BYTES)
    p.free(rs, f32)
    cast = p.alloc("norm_cast", E * ACT_BYTES)
    weighted = p.alloc("norm_weighted", E * ACT_BYTES)
    p.free(cast, prod)
    gate32 = p.alloc("gate_f32", E * FP32_BYTES)
    silu = p.alloc("gate_silu", E * FP32_BYTES)
    p.free(gate32)
    gated = p.alloc("norm_gated", E * FP32_BYTES)
    p.free(silu, weighted)
    out = p.alloc("normed", E * ACT_BYTES)
    p.free(gated, mean)
    return out


def _delta_rule(p: _Pass, dn: _DeltaNet) -> tuple[str, str]:
    """``torch_chunk_gated_delta_rule`` (the torch fallback when flash-linear-attention is absent):
    q and k repeated to the value heads, q, k, v, β and g transposed to (b, heads, T, ·) in fp32,
    q and k L2-normalised (``l2norm``), q scaled, all padded to whole chunks of 64, v·β and k·β,
    the per-chunk cumulative decay and the pairwise (64 × 64) decay matrices, the chunk-local
    systems (k·β kᵀ and q kᵀ, each × decay), two triangular solves, the zero state and output,
    q and k rescaled by their decays; then a loop over chunks writing the output in place and
    carrying the fp32 recurrent state. Returns (bf16 output (b, T, v_heads, v_dim), state)."""
    b, T = p.b, p.T
    vh, kd, vd = dn.v_heads, dn.k_dim, dn.v_dim
    chunk = DELTA_RULE_CHUNK
    Tp = -(-T // chunk) * chunk
    n, npad = b * vh * T, b * vh * Tp  # rows per (batch, head, token), unpadded and padded
    prev = p.t.part
    p.t.part = "linear_attention"
    q_in = k_in = None
    if dn.k_heads != vh:
        q_in = p.alloc("q_repeat", n * kd * ACT_BYTES)
        k_in = p.alloc("k_repeat", n * kd * ACT_BYTES)
    q = p.alloc("q_f32", n * kd * FP32_BYTES)
    k = p.alloc("k_f32", n * kd * FP32_BYTES)
    v = p.alloc("v_f32", n * vd * FP32_BYTES)
    beta = p.alloc("beta_f32", n * FP32_BYTES)
    decay = p.alloc("g_f32", n * FP32_BYTES)
    p.free(q_in, k_in)
    for which in ("q", "k"):  # l2norm: x * rsqrt((x * x).sum(-1) + eps)
        sq = p.alloc("l2_sq", n * kd * FP32_BYTES)
        s = p.alloc("l2_sum", n * FP32_BYTES)
        p.free(sq)
        se = p.alloc("l2_sum_eps", n * FP32_BYTES)
        p.free(s)
        inv = p.alloc("l2_inv", n * FP32_BYTES)
        p.free(se)
        normed = p.alloc("l2_normed", n * kd * FP32_BYTES)
        p.free(inv)
        if which == "q":
            p.free(q)
            q = normed
        else:
            p.free(k)
            k = normed
    scaled = p.alloc("q_scaled", n * kd * FP32_BYTES)
    p.free(q)
    q = scaled
    q_p = p.alloc("q_padded", npad * kd * FP32_BYTES)
    k_p = p.alloc("k_padded", npad * kd * FP32_BYTES)
    v_p = p.alloc("v_padded", npad * vd * FP32_BYTES)
    p.free(q, k, v)
    beta_p = p.alloc("beta_padded", npad * FP32_BYTES)
    decay_p = p.alloc("g_padded", npad * FP32_BYTES)
    p.free(beta, decay)
    v_beta = p.alloc("v_beta", npad * vd * FP32_BYTES)
    k_beta = p.alloc("k_beta", npad * kd * FP32_BYTES)
    ones = p.alloc("ones", chunk * chunk)
    upper = p.alloc("upper_mask", chunk * chunk)
    p.free(ones)
    cum = p.alloc("cum_decay", npad * FP32_BYTES)
    pair = npad * chunk * FP32_BYTES  # (b, heads, chunks, 64, 64)
    pw = p.alloc("pairwise", pair)
    for step in ("masked", "exp"):
        nxt = p.alloc(f"pairwise_{step}", pair)
        p.free(pw)
        pw = nxt
    mm = p.alloc("kbeta_k", pair)
    ut = p.alloc("ut_system", pair)
    p.free(mm)
    mm = p.alloc("q_k", pair)
    intra = p.alloc("intra_chunk_attn", pair)
    p.free(mm)
    ex = p.alloc("cum_decay_exp", npad * FP32_BYTES)
    dkb = p.alloc("decayed_k_beta", npad * kd * FP32_BYTES)
    p.free(ex)
    new_values = p.alloc("new_values", npad * vd * FP32_BYTES)
    k_cum = p.alloc("k_cumdecay", npad * kd * FP32_BYTES)
    state = p.alloc("recurrent_state", b * vh * kd * vd * FP32_BYTES)
    core = p.alloc("core_attn_out", npad * vd * FP32_BYTES)
    ex = p.alloc("cum_decay_exp", npad * FP32_BYTES)
    q2 = p.alloc("q_decayed", npad * kd * FP32_BYTES)
    p.free(ex, q_p)
    sub = p.alloc("decay_to_end", npad * FP32_BYTES)
    ex = p.alloc("decay_to_end_exp", npad * FP32_BYTES)
    p.free(sub)
    k2 = p.alloc("k_decayed", npad * kd * FP32_BYTES)
    p.free(ex, k_p)
    chunk_decay = p.alloc("chunk_decay", b * vh * (Tp // chunk) * FP32_BYTES)
    # One pass of the loop over chunks: its temporaries, and the state it replaces.
    rows = b * vh * chunk
    mm = p.alloc("kcum_state", rows * vd * FP32_BYTES)
    v_new = p.alloc("v_new", rows * vd * FP32_BYTES)
    p.free(mm)
    inter = p.alloc("inter_chunk", rows * vd * FP32_BYTES)
    mm = p.alloc("intra_v", rows * vd * FP32_BYTES)
    add = p.alloc("chunk_out", rows * vd * FP32_BYTES)
    p.free(mm, add)
    decayed = p.alloc("state_decayed", b * vh * kd * vd * FP32_BYTES)
    mm = p.alloc("k_v", b * vh * kd * vd * FP32_BYTES)
    new_state = p.alloc("state_next", b * vh * kd * vd * FP32_BYTES)
    p.free(decayed, mm, state)
    state = new_state
    # core_attn_out is zeros_like(new_values), whose layout is solve_triangular's column-major one,
    # so reshape(padded_output_shape) copies it (the loop's v_new and inter_chunk_attn still live).
    flat = p.alloc("core_attn_out_reshaped", npad * vd * FP32_BYTES)
    p.free(core)
    p.t.part = prev
    out = p.alloc("core_out_bf16", b * T * vh * vd * ACT_BYTES)
    p.free(flat, q2, k2, v_p, beta_p, decay_p, v_beta, k_beta, upper, cum, pw, ut, intra, dkb)
    p.free(new_values, k_cum, chunk_decay, v_new, inter)
    return out, state


# ---------------------------------------------------------------------------------------------
# Nemotron-H: Mamba-2 hybrids
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Mamba2:
    """A Mamba-2 mixer's shapes (NemotronHMamba2Mixer.__init__)."""

    heads: int
    head_dim: int
    groups: int
    state: int
    kernel: int
    chunk: int

    @property
    def inner(self) -> int:
        return self.heads * self.head_dim

    @property
    def conv_dim(self) -> int:
        return self.inner + 2 * self.groups * self.state


# NemotronHConfig's defaults in transformers 5.23 (the older mamba_* spellings are read first).
_MAMBA2_FIELDS = {
    ("mamba_num_heads",): 128,
    ("mamba_head_dim",): 64,
    ("mamba_n_groups", "n_groups"): 8,
    ("ssm_state_size",): 128,
    ("mamba_d_conv", "conv_kernel"): 4,
    ("mamba_chunk_size", "chunk_size"): 128,
}


def _nemotron_h(p: _Pass) -> None:
    """``NemotronHForCausalLM`` (models/nemotron_h/modeling_nemotron_h.py): a stack of
    ``NemotronHBlock`` (``NemotronHRMSNorm``, its fp32 weight product cast back, then one mixer and
    the residual add); no rotary table; one causal mask for the attention blocks; logits cast to
    fp32 (``lm_head(...).float()``).

    Mixers: ``NemotronHAttention`` (no RoPE), ``NemotronHMLP`` (ReLU², non-gated),
    ``NemotronHMoE`` (``NemotronHTopkRouter``'s fp32 sigmoid group-top-k router, non-gated ReLU²
    experts through ``grouped_mm_experts_forward`` with fp32 routing weights, then the shared
    expert) and ``NemotronHMamba2Mixer`` (``_mamba2``)."""
    m, N, h = p.m, p.N, p.m.hidden
    _need(m, *(names[0] for names in _MAMBA2_FIELDS))
    mamba = _Mamba2(*(m.cfg_int(names[0], default, *names[1:]) for names, default in _MAMBA2_FIELDS.items()))
    p.at("embeddings")
    embeds = p.alloc("inputs_embeds", N * h * ACT_BYTES)
    pos = p.position_ids()
    masks = p.masks(("full",))
    hidden = embeds
    for layer in m.layers:
        what = {"ssm": "Mamba-2", "full": "attention"}.get(layer.kind, "MoE" if layer.moe else "MLP")
        p.at(f"layer {layer.index} {what}")
        normed = p.llama_norm(h, fp32_weight=True)
        probs = None
        if layer.kind == "ssm":
            out = _mamba2(p, layer, mamba)
        elif layer.kind == "full":
            Q, K = N * layer.heads * layer.head_dim, N * layer.kv_heads * layer.head_dim
            q = p.alloc("q_proj", Q * ACT_BYTES)
            k = p.alloc("k_proj", K * ACT_BYTES)
            v = p.alloc("v_proj", K * ACT_BYTES)
            p.cache_update(layer, k, v)
            attn, probs = p.attend(layer, masks)
            out = p.alloc("o_proj", N * h * ACT_BYTES)
            p.free(attn, q)
        elif layer.moe:
            out = _nemotron_moe(p)
        else:
            out = p.relu2_mlp(layer.mlp_width)
        new_hidden = p.alloc("layer_out", N * h * ACT_BYTES)
        p.free(normed, out, probs)
        if hidden != embeds:
            p.free(hidden)
        hidden = new_hidden
    _finish(
        p, hidden, [embeds, pos, *masks.values()], lambda: p.llama_norm(h, fp32_weight=True), logits="fp32"
    )


def _nemotron_moe(p: _Pass) -> str:
    """``NemotronHMoE.forward`` with ``NemotronHTopkRouter.forward``: fp32 logits from fp32
    copies of the input and router weight, sigmoid scores, the biased choice scores, group top-2
    sums and the group mask, the masked choice, top-k, gathered and normalised weights × the
    routed scaling factor; then the experts and the shared expert on the block's input."""
    m, N, h = p.m, p.N, p.m.hidden
    E, k_top = m.spec.num_experts, m.spec.experts_per_token
    groups = m.cfg_int("n_group", 1)
    top_groups = m.cfg_int("topk_group", 1)
    p.t.part = "experts"
    x32 = p.alloc("router_in_f32", N * h * FP32_BYTES)
    w32 = p.alloc("router_w_f32", E * h * FP32_BYTES)
    logits = p.alloc("router_logits", N * E * FP32_BYTES)
    p.free(x32, w32)
    scores = p.alloc("scores", N * E * FP32_BYTES)
    choice = p.alloc("scores_for_choice", N * E * FP32_BYTES)
    gv = p.alloc("group_top2", N * groups * 2 * FP32_BYTES)
    gi = p.alloc("group_top2_idx", N * groups * 2 * INT64_BYTES)
    p.free(gi)
    gsum = p.alloc("group_scores", N * groups * FP32_BYTES)
    p.free(gv)
    tv = p.alloc("group_topk", N * top_groups * FP32_BYTES)
    gidx = p.alloc("group_idx", N * top_groups * INT64_BYTES)
    p.free(tv)
    gmask = p.alloc("group_mask", N * groups * FP32_BYTES)
    smask = p.alloc("score_mask", N * E * FP32_BYTES) if groups > 1 else None
    as_bool = p.alloc("score_mask_bool", N * E)
    inv = p.alloc("score_mask_not", N * E)
    masked = p.alloc("choice_masked", N * E * FP32_BYTES)
    p.free(as_bool, inv, choice)
    kv = p.alloc("topk_values", N * k_top * FP32_BYTES)
    idx = p.alloc("topk_indices", N * k_top * INT64_BYTES)
    p.free(kv)
    weights = p.alloc("topk_weights", N * k_top * FP32_BYTES)
    den = None
    if m.cfg("norm_topk_prob", True):
        s = p.alloc("weights_sum", N * FP32_BYTES)
        den = p.alloc("denominator", N * FP32_BYTES)
        p.free(s)
    scaled = p.alloc("topk_weights_scaled", N * k_top * FP32_BYTES)
    p.free(weights, scores, masked, gsum, gidx, gmask, smask, den)
    p.t.part = "activations"
    routed = p.grouped_mm_experts(
        k_top, m.spec.expert_intermediate_size, E, gate="relu2", weights_bytes=FP32_BYTES
    )
    shared = p.relu2_mlp(m.spec.shared_expert_intermediate_size)
    out = p.alloc("moe_out", N * h * ACT_BYTES)
    p.free(shared, routed, logits, scaled, idx)
    return out


def _einsum(p: _Pass, copies: list[float], out: float, what: str) -> str:
    """``torch.einsum`` of two operands: the operands it has to permute into a batched matmul
    layout are copied (``clone``), ``bmm`` writes the output, the copies go."""
    made = [p.alloc(f"{what}_operand", nbytes) for nbytes in copies]
    result = p.alloc(what, out)
    p.free(*made)
    return result


def _segment_sum_exp(p: _Pass, rows: float, size: int) -> str:
    """``segment_sum`` then ``torch.exp``: the input expanded to (…, size, size) and masked, its
    cumsum, masked again (two boolean size × size tril masks and their negations), exponentiated."""
    P = rows * size * size * FP32_BYTES
    ones = p.alloc("ones", size * size)
    mask = p.alloc("tril", size * size)
    p.free(ones)
    neg = p.alloc("not_mask", size * size)
    masked = p.alloc("segsum_masked", P)
    p.free(neg)
    cums = p.alloc("segsum_cumsum", P)
    ones = p.alloc("ones", size * size)
    mask2 = p.alloc("tril", size * size)
    p.free(ones, mask)
    neg = p.alloc("not_mask", size * size)
    segsum = p.alloc("segsum", P)
    p.free(neg, cums, masked, mask2)
    out = p.alloc("segsum_exp", P)
    p.free(segsum)
    return out


def _mamba2(p: _Pass, layer: _Layer, mb: _Mamba2) -> str:
    """``NemotronHMamba2Mixer.forward`` without mamba-ssm: in_proj (gate, x·B·C, dt), A = −exp(A_log),
    the cache's convolution state, the depthwise causal convolution with SiLU (``causal_conv1d_fn``'s
    torch fallback), ``mamba2_chunk_scan`` (the SSD algorithm in fp32: dt through softplus and
    clamp, x, B and C upcast and B/C repeated to every head, the D residual, x·dt and A·dt, all
    padded to whole chunks, the cumulative A, L = exp(segment_sum(A)), the chunk-local
    G = C·Bᵀ and M = G·L, Y_diag, the chunk states and their decay across chunks, Y_off, and the
    output); the final state copied into the cache; ``NemotronHRMSNormGated`` (× SiLU(gate) then a
    grouped RMSNorm, in fp32), cast to bf16, out_proj."""
    N, h, b, T = p.N, p.m.hidden, p.b, p.T
    inner, C, nh, G, n, cs = mb.inner, mb.conv_dim, mb.heads, mb.groups, mb.state, mb.chunk
    proj = p.alloc("in_proj", N * (inner + C + nh) * ACT_BYTES)
    a1 = p.alloc("a_log_f32", nh * FP32_BYTES)
    a2 = p.alloc("a_exp", nh * FP32_BYTES)
    p.free(a1)
    A = p.alloc("A", nh * FP32_BYTES)
    p.free(a2)
    xbc = _causal_conv(p, layer, C, mb.kernel, proj, owns_input=False)
    if p.kernels:
        raise ValueError(
            "kernels: with mamba-ssm installed, Mamba-2 runs mamba_chunk_scan_combined, whose buffers"
            " are outside transformers' code; pass kernels=False for the torch fallback transformers"
            " uses without it"
        )
    prev = p.t.part
    p.t.part = "state_space"
    Tp = -(-T // cs) * cs
    nc = Tp // cs
    rows = b * Tp  # padded token rows
    d1 = p.alloc("dt_plus_bias", N * nh * ACT_BYTES)
    d2 = p.alloc("dt_softplus", N * nh * ACT_BYTES)
    p.free(d1)
    dt = p.alloc("dt_clamped", N * nh * ACT_BYTES)
    p.free(d2)
    x32 = p.alloc("x_f32", N * inner * FP32_BYTES)
    reps = []
    for what in ("B", "C"):
        f = p.alloc(f"{what}_f32", N * G * n * FP32_BYTES)
        reps.append(p.alloc(f"{what}_repeated", N * nh * n * FP32_BYTES))
        p.free(f)
    pad = p.alloc("x_padded_for_D", rows * inner * FP32_BYTES)
    d_res = p.alloc("D_residual", rows * inner * FP32_BYTES)
    p.free(pad)
    dtf = p.alloc("dt_f32", N * nh * FP32_BYTES)
    x_dt = p.alloc("x_dt", N * inner * FP32_BYTES)
    p.free(dtf, x32)
    dtf = p.alloc("dt_f32", N * nh * FP32_BYTES)
    a_dt = p.alloc("A_dt", N * nh * FP32_BYTES)
    p.free(dtf)
    x_p = p.alloc("x_chunks", rows * inner * FP32_BYTES)
    a_p = p.alloc("A_chunks", rows * nh * FP32_BYTES)
    b_p = p.alloc("B_chunks", rows * nh * n * FP32_BYTES)
    c_p = p.alloc("C_chunks", rows * nh * n * FP32_BYTES)
    p.free(x_dt, a_dt, *reps)
    a_cum = p.alloc("A_cumsum", rows * nh * FP32_BYTES)
    L = _segment_sum_exp(p, b * nh * nc, cs)
    P = b * nh * Tp * cs * FP32_BYTES
    G_ = _einsum(p, [rows * nh * n * FP32_BYTES] * 2, P, "G")
    M = p.alloc("M", P)
    y_diag = _einsum(p, [rows * inner * FP32_BYTES], rows * inner * FP32_BYTES, "Y_diag")
    sub = p.alloc("decay_sub", rows * nh * FP32_BYTES)
    decay = p.alloc("decay_states", rows * nh * FP32_BYTES)
    p.free(sub)
    b_decay = p.alloc("B_decay", rows * nh * n * FP32_BYTES)
    states = _einsum(
        p, [rows * inner * FP32_BYTES, rows * nh * n * FP32_BYTES], b * nc * inner * n * FP32_BYTES, "states"
    )
    zeros = p.alloc("previous_states", b * inner * n * FP32_BYTES)
    cat = p.alloc("states_cat", b * (nc + 1) * inner * n * FP32_BYTES)
    p.free(states)
    padded = p.alloc("A_last_padded", b * nh * (nc + 1) * FP32_BYTES)
    decay_chunk = _segment_sum_exp(p, b * nh, nc + 1)
    p.free(padded)
    new_states = _einsum(p, [], b * (nc + 1) * inner * n * FP32_BYTES, "new_states")
    p.free(cat)
    sdo = p.alloc("state_decay_out", rows * nh * FP32_BYTES)
    cts = _einsum(
        p,
        [rows * nh * n * FP32_BYTES, b * nc * inner * n * FP32_BYTES],
        rows * inner * FP32_BYTES,
        "C_times_states",
    )
    y_off = p.alloc("Y_off", rows * inner * FP32_BYTES)
    add = p.alloc("Y_sum", rows * inner * FP32_BYTES)
    out = p.alloc("Y_contiguous", rows * inner * FP32_BYTES)
    p.free(add)
    out2 = p.alloc("Y_plus_D", rows * inner * FP32_BYTES)
    p.free(out)
    p.free(dt, d_res, x_p, a_p, b_p, c_p, a_cum, L, G_, M, y_diag, decay, b_decay, zeros, decay_chunk)
    p.free(sdo, cts, y_off)
    p.t.part = prev
    p.alloc(f"ssm_state{layer.index}", b * inner * n * FP32_BYTES, "cache")
    g32 = p.alloc("gate_f32", N * inner * FP32_BYTES)
    silu = p.alloc("gate_silu", N * inner * FP32_BYTES)
    p.free(g32)
    prod = p.alloc("gated", N * inner * FP32_BYTES)
    p.free(silu)
    pw = p.alloc("norm_pow", N * inner * FP32_BYTES)
    mean = p.alloc("norm_mean", N * G * FP32_BYTES)
    p.free(pw)
    ve = p.alloc("norm_var_eps", N * G * FP32_BYTES)
    rs = p.alloc("norm_rsqrt", N * G * FP32_BYTES)
    p.free(ve)
    normed = p.alloc("norm_prod", N * inner * FP32_BYTES)
    p.free(rs, prod)
    weighted = p.alloc("norm_weighted", N * inner * FP32_BYTES)
    p.free(normed, mean, out2)
    cast = p.alloc("scan_bf16", N * inner * ACT_BYTES)
    result = p.alloc("out_proj", N * h * ACT_BYTES)
    p.free(cast, weighted, proj, A, xbc, new_states)
    return result


# ---------------------------------------------------------------------------------------------
# The public function
# ---------------------------------------------------------------------------------------------


_FAMILIES: dict[str, Callable[[_Pass], None]] = {
    "llama": _llama_like,
    "mistral": _llama_like,
    "qwen2": _llama_like,
    "qwen3": _llama_like,
    "mixtral": _llama_like,
    "qwen2_moe": _llama_like,
    "qwen3_moe": _llama_like,
    "phi3": _phi3,
    "gemma2": _gemma,
    "gemma3_text": _gemma,
    "llama4_text": _llama4,
    "gpt_oss": _gpt_oss,
    "qwen3_next": _qwen3_next,
    "qwen3_5_text": _qwen3_next,
    "qwen3_5_moe_text": _qwen3_next,
    "nemotron_h": _nemotron_h,
    "gemma4_text": _gemma4,
}

# Families whose transformers class refuses attn_implementation="sdpa" (``_supports_sdpa = False``).
_NO_SDPA = {"gemma2": "Gemma2PreTrainedModel", "gpt_oss": "GptOssPreTrainedModel"}


def transformers_prefill(
    spec: ModelSpec,
    *,
    context_tokens: int,
    batch: int = 1,
    attention: str = "sdpa",
    kernels: bool = True,
    config: Mapping[str, Any] | None = None,
    cublas_workspace_bytes: float = CUBLAS_WORKSPACE_SM90_BYTES,
) -> MemoryBreakdown:
    """Peak GPU memory of one transformers 5.23 prefill of ``context_tokens`` tokens per sequence.

    ``model(input_ids, use_cache=True, logits_to_keep=1)`` with ``batch`` sequences, bf16 weights,
    ``attn_implementation=attention`` ("sdpa" or "eager"); ``kernels=False`` when the optional
    fused kernels (flash-linear-attention, causal-conv1d, mamba-ssm) are absent, so linear-attention
    and Mamba layers run their torch fallbacks. ``total_bytes`` is the peak of
    ``torch.cuda.max_memory_allocated()`` less what was allocated before the model: weights, the
    pass's peak and the cuBLAS workspace (``cublas_workspace_bytes``: 32 MiB on an H100 or H200,
    0 on a CPU). The part keyed "cache" is what the returned cache holds right after the prefill
    (every storage it reaches, a view counting its whole storage); the other parts are what the
    peak holds besides the weights and that cache.

    ``config`` is the model's config.json, read only for what ``ModelSpec`` keeps no field for
    (Gated DeltaNet and Mamba-2 head shapes, Llama 4's q/k norm and temperature, Gemma 4's
    attention_k_eq_v); without it, a preset with an equal spec supplies it. Raises ``ValueError``
    naming the family, field or setting it cannot size exactly: a family whose code is not
    followed here, SDPA where transformers refuses it (Gemma 2, gpt-oss), and ``kernels=True`` for
    Gated DeltaNet or Mamba-2 layers (flash-linear-attention's and mamba-ssm's buffers are
    allocated outside transformers' code).
    """
    if attention not in ATTENTION_IMPLEMENTATIONS:
        raise ValueError(
            f"attention must be 'sdpa' or 'eager' (transformers' attn_implementation), got {attention!r}"
        )
    for name, value in (("context_tokens", context_tokens), ("batch", batch)):
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise ValueError(f"{name} must be a positive integer, got {value!r}")
    if (
        isinstance(cublas_workspace_bytes, bool)
        or not isinstance(cublas_workspace_bytes, (int, float))
        or not (0 <= cublas_workspace_bytes < float("inf"))
    ):
        raise ValueError(f"cublas_workspace_bytes must be zero or positive, got {cublas_workspace_bytes!r}")
    run = _FAMILIES.get(spec.family)
    if run is None:
        raise ValueError(
            f"config field 'model_type': transformers_prefill follows transformers {TRANSFORMERS_VERSION}'s"
            f" code for {', '.join(sorted(_FAMILIES))}; {spec.family!r} is not one of them, so its peak"
            " is refused rather than guessed"
        )
    if attention == "sdpa" and spec.family in _NO_SDPA:
        raise ValueError(
            f"attention: {_NO_SDPA[spec.family]} sets _supports_sdpa = False, so transformers refuses"
            f" attn_implementation='sdpa' for {spec.family!r}; use 'eager'"
        )
    model = _Model(spec, _layers_from_spec(spec), config)
    p = _Pass(model, batch, context_tokens, attention, kernels)
    run(p)
    return _breakdown(p, cublas_workspace_bytes)


def _breakdown(p: _Pass, cublas_workspace_bytes: float) -> MemoryBreakdown:
    from simulators.fit import measured_prefill_memory  # fit imports llm_memory, not this module

    spec = p.m.spec
    baseline = measured_prefill_memory(spec, p.T, "flash" if p.attention == "sdpa" else "eager")
    cache = p.t.bytes_of("cache")
    at_peak = dict(p.t.peak_parts)
    # The "cache" part is the whole cache after the pass; at a peak inside the pass the later layers
    # had not written theirs, so the working set's parts (activations first) give that back.
    unwritten = left = cache - at_peak.pop("cache", 0.0)
    for key in sorted(at_peak, key=lambda k: (k != "activations", -at_peak[k])):
        taken = min(left, at_peak[key])
        at_peak[key] -= taken
        left -= taken
    if cublas_workspace_bytes:
        at_peak["cublas_workspace"] = float(cublas_workspace_bytes)
    parts = [
        _part("weights", baseline.get("weights"), f"{spec.param_count():,} parameters × 2 bytes (bf16)"),
        _part("cache", cache, _cache_explanation(p)),
    ]
    for key in PART_LABELS:
        if at_peak.get(key, 0.0) > 0:
            parts.append(_part(key, at_peak[key], _EXPLANATIONS[key]))
    notes = [
        f"Peak at {p.t.peak_moment} of transformers {TRANSFORMERS_VERSION}'s forward pass"
        f" ({p.attention}, batch {p.b}, {p.T:,} tokens{'' if p.kernels else ', torch fallbacks'});"
        f" the engine-agnostic estimate (llm_memory.inference_memory, no context overhead) is"
        f" {baseline.total_bytes / 1e9:,.2f} GB."
    ]
    if unwritten > 0:
        notes.append(
            f"At the peak the layers after it had not yet written {unwritten / 1e9:,.2f} GB of the"
            " cache: the working-set parts are the peak less the whole cache."
        )
    if cublas_workspace_bytes:
        notes.append(
            f"cuBLAS workspace: {cublas_workspace_bytes / 2**20:,.4g} MiB (sm90's default: 32 MiB;"
            " 0 on a CPU)."
        )
    return MemoryBreakdown(parts=tuple(parts), notes=tuple(notes))


def _part(key: str, nbytes: float, explanation: str) -> MemoryPart:
    label, term = PART_LABELS[key]
    return MemoryPart(key, label, nbytes, explanation, term)


def _cache_explanation(p: _Pass) -> str:
    windowed = sum(1 for layer in p.m.layers if layer.kind in ("sliding", "chunked"))
    states = sum(1 for layer in p.m.layers if layer.state_bytes)
    text = f"keys and values of all {p.T:,} prompt tokens × batch {p.b} in every attention layer"
    if windowed:
        text += (
            f"; {windowed} sliding-window/chunked layers keep a view of their last window into the"
            " whole prompt's storage (DynamicSlidingWindowLayer.update), so they hold all of it until"
            " the first decode step"
        )
    if states:
        text += f"; {states} linear-attention/state-space layers keep their convolution and recurrent states"
    return text


_EXPLANATIONS = {
    "activations": "what the peak moment holds besides the cache: inputs_embeds, the layer's input,"
    " residual and normalised copies, projections, the rotary tables",
    "masks": "boolean masks built once per layer type, and the additive copy SDPA or eager attention"
    " makes of one",
    "attention_scores": "eager attention's score matrix of one layer (and the probabilities an earlier"
    " step keeps): bf16 scores, fp32 softmax input and output where the model upcasts",
    "experts": "the mixture-of-experts block's routed token copies and their projections",
    "linear_attention": "the Gated DeltaNet torch fallback's chunked intermediates (fp32)",
    "state_space": "the Mamba-2 torch fallback's chunked intermediates (fp32)",
    "cublas_workspace": "one cuBLAS workspace, allocated through PyTorch's caching allocator at the first"
    " matmul (CublasHandlePool.cpp)",
}


# ---------------------------------------------------------------------------------------------
# The verdict: what the process holds beyond max_memory_allocated(), as a measured range
# ---------------------------------------------------------------------------------------------

# ``transformers_prefill`` is the peak of ``torch.cuda.max_memory_allocated()``. The device also
# holds what PyTorch's caching allocator never counts as allocated: the CUDA context, kernels
# loaded on first use and library handles ("non-PyTorch memory"), and the allocator's reserved but
# unallocated slack (segments cached whole and split, c10/cuda/CUDACachingAllocator.cpp). Neither
# follows from the model, so both are measured: PyTorch's own out-of-memory message prints the
# process's memory in use, what PyTorch allocated and what it reserved but left unallocated, so each
# report gives non-PyTorch memory (in use - allocated - reserved unallocated) and the slack, on its
# machine. simulators/data/torch_oom_readings.csv keeps the reports read, each with its URL and the
# message; the ranges below are computed from them. (The project's own H100 and H200 transformers
# runs, /work/shared/measured, recorded max_memory_allocated() only, so they cannot give either.)
OOM_READINGS_CSV = "torch_oom_readings.csv"
_SIZE_UNITS = {"GiB": 2**30, "MiB": 2**20}


def _size(text: str) -> float:
    number, unit = text.strip().split()
    return float(number) * _SIZE_UNITS[unit]


@dataclass(frozen=True)
class OutsideAllocatorReading:
    """One machine's reading, from PyTorch's out-of-memory message (bytes)."""

    id: str
    gpu: str
    total_bytes: float
    process_bytes: float
    allocated_bytes: float
    slack_bytes: float
    source: str

    @property
    def non_pytorch_bytes(self) -> float:
        return self.process_bytes - self.allocated_bytes - self.slack_bytes


@functools.cache
def outside_allocator_readings() -> tuple[OutsideAllocatorReading, ...]:
    """The readings in simulators/data/torch_oom_readings.csv, checked as they load."""
    import csv
    from pathlib import Path

    path = Path(__file__).parent / "data" / OOM_READINGS_CSV
    out = []
    with path.open(encoding="utf-8") as f:
        for row in csv.DictReader(f):
            reading = OutsideAllocatorReading(
                row["id"],
                row["gpu"],
                _size(row["total"]),
                _size(row["process"]),
                _size(row["allocated"]),
                _size(row["reserved_unallocated"]),
                row["source"],
            )
            if not (0 < reading.allocated_bytes <= reading.process_bytes <= reading.total_bytes):
                raise ValueError(f"{OOM_READINGS_CSV}: row {row['id']!r}: sizes out of order")
            if reading.non_pytorch_bytes <= 0 or not row["source"].startswith("https://"):
                raise ValueError(f"{OOM_READINGS_CSV}: row {row['id']!r}: no non-PyTorch memory or no URL")
            out.append(reading)
    return tuple(out)


@dataclass(frozen=True)
class PeakVerdict:
    """Whether one transformers prefill fits a device once the measured terms are added.

    ``low_bytes``/``high_bytes``: the peak plus the lowest/highest non-PyTorch memory and the
    lowest/highest allocator slack of the readings. "fits" when even the high end is within the
    device, "does not fit" when even the low end is beyond it, "tight" when the range straddles it.
    """

    verdict: str
    peak_bytes: float
    capacity_bytes: float
    low_bytes: float
    high_bytes: float
    non_pytorch: tuple[float, float]
    slack: tuple[float, float]
    machines: int
    message: str


def transformers_verdict(
    peak_bytes: float, capacity_bytes: float, device: str = "the device's memory"
) -> PeakVerdict:
    """The verdict on a ``transformers_prefill`` peak against ``capacity_bytes`` (the memory the
    device reports; ``device`` says whose, e.g. "what the H200 SXM reports"), with the measured
    range of what the process holds beyond the allocated peak."""
    if not (peak_bytes >= 0 and capacity_bytes > 0):
        raise ValueError("peak_bytes must be zero or positive and capacity_bytes positive")
    readings = outside_allocator_readings()
    non_pytorch = (
        min(r.non_pytorch_bytes for r in readings),
        max(r.non_pytorch_bytes for r in readings),
    )
    slack = (min(r.slack_bytes for r in readings), max(r.slack_bytes for r in readings))
    low = peak_bytes + non_pytorch[0] + slack[0]
    high = peak_bytes + non_pytorch[1] + slack[1]
    if high <= capacity_bytes:
        verdict = "fits"
    elif low > capacity_bytes:
        verdict = "does not fit"
    else:
        verdict = "tight"

    def gib(n: float) -> str:
        return f"{n / 2**30:,.2f}"

    message = (
        f"{verdict.capitalize()}: the allocated peak is {gib(peak_bytes)} GiB; with memory outside"
        f" PyTorch's allocator ({gib(non_pytorch[0])}-{gib(non_pytorch[1])} GiB: CUDA context,"
        f" kernels, library handles) and the allocator's reserved-but-unallocated slack"
        f" ({gib(slack[0])}-{gib(slack[1])} GiB), measured in {len(readings)} out-of-memory reports"
        f" on {len({r.source for r in readings})} machines, the process needs {gib(low)}-{gib(high)}"
        f" GiB against {gib(capacity_bytes)} GiB ({device})."
    )
    return PeakVerdict(
        verdict,
        peak_bytes,
        capacity_bytes,
        low,
        high,
        non_pytorch,
        slack,
        len({r.source for r in readings}),
        message,
    )
