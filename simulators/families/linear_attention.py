"""Hybrids of full attention with linear-attention layers, whose cache keeps a fixed-size
convolution and recurrent state per linear layer instead of keys and values:

- Gated DeltaNet: Qwen3-Next, Qwen3.5 (dense and MoE) and OLMo Hybrid (one counter,
  ``_gated_deltanet``: their projections are laid out differently but hold the same weights);
- Kimi Delta Attention (KDA) beside MLA: Kimi Linear and Bailing hybrid (Ling 3.0);
- Lightning attention beside GQA: MiniMax-Text-01;
- and MiniMax-M3 (its text decoder), whose attention layers may add a lightning indexer that caches
  one key per token (no linear layer, but the same MiniMax family).

A linear layer's ``layer_state_bytes`` are what transformers' ``LinearAttentionLayer`` holds after a
forward: the convolution state (the last ``kernel`` inputs of the depthwise convolution, in the
activations' dtype: bf16) and the recurrent state (the delta-rule kernels return it in float32).
MiniMax's lightning attention keeps only its K^T V state, in the activations' dtype.
"""

from __future__ import annotations

from typing import Any

from simulators.families.common import CONV_STATE_BYTES, LEGACY_LAYER_TYPES, attention_params, kinds_list
from simulators.model_config import _fail, _Reader, _sparse_layers

DELTA_STATE_BYTES = 4  # the gated delta rule (GDN and KDA) returns its recurrent state in float32
LIGHTNING_STATE_BYTES = 2  # MiniMax's K^T V state is accumulated in the activations' dtype (bf16)

# transformers' remap of legacy layer-type names (configuration_utils._LEGACY_LAYER_TYPE_REMAP)


# ---------------------------------------------------------------------------------------------
# Helpers
# ---------------------------------------------------------------------------------------------


def _int(r: _Reader, defaults: dict[str, int], name: str, *alts: str, limit: str, minimum: int = 1) -> int:
    """``name`` (or an alternative spelling), with the config class's default when absent."""
    return r.int(name, *alts, limit_key=limit, default=defaults.get(name), minimum=minimum)


def _interval_types(r: _Reader, layers: int) -> list[str]:
    """Qwen3-Next / Qwen3.5: every ``full_attention_interval``-th layer (default 4) is full attention."""
    interval = r.int("full_attention_interval", limit_key="num_layers", default=4)
    return ["linear_attention" if (i + 1) % interval else "full_attention" for i in range(layers)]


def _gated_deltanet(r: _Reader, defaults: dict[str, int], hidden: int) -> tuple[int, int]:
    """(parameters, state bytes per sequence) of one Gated DeltaNet layer.

    transformers models/qwen3_next/modeling_qwen3_next.py: Qwen3NextGatedDeltaNet (in_proj_qkvz,
    in_proj_ba), models/qwen3_5/modeling_qwen3_5.py: Qwen3_5GatedDeltaNet (in_proj_qkv, _z, _b, _a)
    and models/olmo_hybrid/modeling_olmo_hybrid.py: OlmoHybridGatedDeltaNet (q, k, v, a, b, g): the
    same weights. Projections hidden -> q, k (key_dim each), v, z/g (value_dim each), a, b (one per
    value head); depthwise conv1d without bias over q, k, v; dt_bias and A_log per value head; the
    gated RMSNorm over head_v_dim; out_proj value_dim -> hidden. Cache: conv state
    (2 key_dim + value_dim) x kernel (bf16) and recurrent state v_heads x head_k_dim x head_v_dim
    (float32).
    """
    k_heads = _int(r, defaults, "linear_num_key_heads", limit="num_heads")
    v_heads = _int(r, defaults, "linear_num_value_heads", limit="num_heads")
    k_dim = _int(r, defaults, "linear_key_head_dim", limit="head_dim")
    v_dim = _int(r, defaults, "linear_value_head_dim", limit="head_dim")
    kernel = _int(r, defaults, "linear_conv_kernel_dim", limit="head_dim")
    if v_heads % k_heads:
        raise _fail(
            "linear_num_value_heads",
            f"{v_heads} value heads are not a multiple of the {k_heads} key heads (the layer cannot run)",
        )
    key_dim, value_dim = k_heads * k_dim, v_heads * v_dim
    conv_dim = 2 * key_dim + value_dim
    params = hidden * (conv_dim + value_dim + 2 * v_heads)  # q, k, v, z (gate), b, a
    params += conv_dim * kernel  # depthwise conv1d, no bias
    params += 2 * v_heads  # dt_bias, A_log
    params += v_dim  # gated RMSNorm over head_v_dim
    params += value_dim * hidden  # out_proj
    state = conv_dim * kernel * CONV_STATE_BYTES + v_heads * k_dim * v_dim * DELTA_STATE_BYTES
    return params, state


def _kda(hidden: int, heads: int, head_dim: int, kernel: int, *, low_rank_gates: bool) -> tuple[int, int]:
    """(parameters, state bytes per sequence) of one Kimi Delta Attention layer.

    transformers models/kimi_linear/modeling_kimi_linear.py: KimiLinearDeltaAttention and
    KimiLinearForgetGate (``low_rank_gates``: the forget gate f_a -> f_b and the output gate
    g_a -> g_b go through head_dim) and models/bailing_hybrid/modeling_bailing_hybrid.py:
    BailingHybridDeltaAttention and BailingHybridForgetGate (full-rank f_proj and g_proj). Both:
    q, k, v (qkv_dim = heads x head_dim each), depthwise conv1d without bias over the three, dt_bias
    (qkv_dim) and A_log (one per head), b_proj (one per head), the gated RMSNorm over head_dim and
    o_proj. Cache: conv state 3 qkv_dim x kernel (bf16) and recurrent state heads x head_dim x
    head_dim (float32).
    """
    qkv = heads * head_dim
    params = 3 * hidden * qkv + 3 * qkv * kernel  # q, k, v; conv1d
    if low_rank_gates:
        params += 2 * (hidden * head_dim + head_dim * qkv)  # f_a, f_b; g_a, g_b
    else:
        params += 2 * hidden * qkv  # f_proj, g_proj
    params += qkv + heads  # dt_bias, A_log
    params += hidden * heads  # b_proj
    params += head_dim  # o_norm (gated RMSNorm)
    params += qkv * hidden  # o_proj
    state = 3 * qkv * kernel * CONV_STATE_BYTES + heads * head_dim * head_dim * DELTA_STATE_BYTES
    return params, state


def _mla(
    hidden: int,
    heads: int,
    q_lora: int,
    kv_lora: int,
    nope: int,
    rope: int,
    v_dim: int,
    *,
    bias: bool,
    head_gate: bool = False,
) -> int:
    """Multi-head latent attention (transformers models/deepseek_v3/modeling_deepseek_v3.py:
    DeepseekV3Attention, as Kimi Linear and Bailing hybrid use it): q_proj (or q_a, q_a_layernorm,
    q_b when q_lora > 0; q_a has the attention bias), kv_a_proj_with_mqa (bias), kv_a_layernorm,
    kv_b_proj, o_proj (bias); ``head_gate``: Bailing's g_proj, one sigmoid gate per head."""
    qk_head = nope + rope
    if q_lora:
        q = hidden * q_lora + (q_lora if bias else 0) + q_lora + q_lora * heads * qk_head
    else:
        q = hidden * heads * qk_head
    kv_a = kv_lora + rope
    kv = hidden * kv_a + (kv_a if bias else 0) + kv_lora + kv_lora * heads * (nope + v_dim)
    o = heads * v_dim * hidden + (hidden if bias else 0)
    return q + kv + o + (hidden * heads if head_gate else 0)


def _hybrid_layers(
    kinds: list[str], linear: tuple[int, int], full: int, full_kind: str, full_kv: int
) -> dict[str, Any]:
    """Per-layer fields from each layer's mixer: ``linear`` (params, state bytes) on linear layers,
    ``full`` params and ``full_kv`` cached elements per token on the attention layers."""
    is_linear = [k == "linear_attention" for k in kinds]
    return {
        "layer_kinds": tuple("linear" if lin else full_kind for lin in is_linear),
        "layer_attention_params": tuple(linear[0] if lin else full for lin in is_linear),
        "layer_kv_elements": tuple(0 if lin else full_kv for lin in is_linear),
        "layer_state_bytes": tuple(linear[1] if lin else 0 for lin in is_linear),
    }


def _tie(r: _Reader) -> bool:
    return r.bool("tie_word_embeddings", default=False)  # every config class here defaults to False


# ---------------------------------------------------------------------------------------------
# Qwen3-Next, Qwen3.5 (dense and MoE)
# ---------------------------------------------------------------------------------------------

_QWEN_LINEAR = {
    "head_dim": 256,
    "linear_conv_kernel_dim": 4,
    "linear_key_head_dim": 128,
    "linear_value_head_dim": 128,
    "linear_num_key_heads": 16,
    "linear_num_value_heads": 32,
    "moe_intermediate_size": 512,
    "shared_expert_intermediate_size": 512,
}
# Defaults of each config class (Qwen3NextConfig, Qwen3_5TextConfig, Qwen3_5MoeTextConfig).
_QWEN_DEFAULTS: dict[str, dict[str, int]] = {
    "qwen3_next": _QWEN_LINEAR
    | {
        "vocab_size": 151936,
        "hidden_size": 2048,
        "intermediate_size": 5632,
        "num_hidden_layers": 48,
        "num_attention_heads": 16,
        "num_key_value_heads": 2,
        "max_position_embeddings": 32768,
        "num_experts": 512,
        "num_experts_per_tok": 10,
    },
    "qwen3_5_text": _QWEN_LINEAR
    | {
        "vocab_size": 248320,
        "hidden_size": 4096,
        "intermediate_size": 12288,
        "num_hidden_layers": 32,
        "num_attention_heads": 16,
        "num_key_value_heads": 4,
        "max_position_embeddings": 32768,
    },
    "qwen3_5_moe_text": _QWEN_LINEAR
    | {
        "vocab_size": 248320,
        "hidden_size": 2048,
        "num_hidden_layers": 40,
        "num_attention_heads": 16,
        "num_key_value_heads": 2,
        "max_position_embeddings": 32768,
        "num_experts": 256,
        "num_experts_per_tok": 8,
    },
}
_QWEN_KINDS = frozenset({"linear_attention", "full_attention"})


def read_qwen3_next(r: _Reader, cfg: dict, family: str, name: str) -> dict[str, Any]:
    """Qwen3-Next, Qwen3.5 and Qwen3.5-MoE (their text decoders): Gated DeltaNet layers and gated
    full-attention layers (``layer_types``, or every ``full_attention_interval``-th layer).

    transformers models/qwen3_next/modeling_qwen3_next.py (Qwen3NextAttention: q_proj doubled for
    the output gate, q_norm and k_norm over head_dim; Qwen3NextDecoderLayer: a sparse MoE block
    with a gated shared expert where num_experts > 0, the layer is not in mlp_only_layers and
    (i + 1) % decoder_sparse_step == 0, else a dense MLP), models/qwen3_5/modeling_qwen3_5.py
    (Qwen3_5DecoderLayer: every layer a dense MLP) and models/qwen3_5_moe/modeling_qwen3_5_moe.py
    (Qwen3_5MoeDecoderLayer: every layer the sparse MoE block). Gated DeltaNet: ``_gated_deltanet``.
    """
    d = _QWEN_DEFAULTS[family]
    hidden = _int(r, d, "hidden_size", limit="hidden_size")
    layers = _int(r, d, "num_hidden_layers", limit="num_layers")
    heads = _int(r, d, "num_attention_heads", limit="num_heads")
    kv_heads = _int(r, d, "num_key_value_heads", limit="num_kv_heads")
    if heads % kv_heads:
        raise _fail("num_key_value_heads", f"{heads} attention heads are not divisible by {kv_heads}")
    # An explicit null head_dim means hidden_size // heads (getattr(config, "head_dim") or ...).
    head_dim = (
        _int(r, d, "head_dim", limit="head_dim") if "head_dim" not in cfg or r.present("head_dim") else 0
    )
    head_dim = head_dim or hidden // heads
    bias = r.bool("attention_bias", default=False)
    kinds = kinds_list(
        r, "layer_types", layers, _QWEN_KINDS, default=_interval_types(r, layers), remap=LEGACY_LAYER_TYPES
    )

    linear = _gated_deltanet(r, d, hidden)
    full = (
        attention_params(hidden, heads, kv_heads, head_dim, qkv_bias=bias, o_bias=bias, q_gate=True)
        + 2 * head_dim
    )  # + q/k norms
    kw: dict[str, Any] = {
        "family": family,
        "name": name,
        "hidden_size": hidden,
        "num_layers": layers,
        "num_heads": heads,
        "num_kv_heads": kv_heads,
        "head_dim": head_dim,
        "vocab_size": _int(r, d, "vocab_size", limit="vocab_size"),
        "max_positions": _int(r, d, "max_position_embeddings", limit="max_positions", minimum=0),
        "tie_word_embeddings": _tie(r),
        "qk_norm": "rms",
        "qk_norm_dim": head_dim,
        **_hybrid_layers(kinds, linear, full, "full", 2 * kv_heads * head_dim),
    }

    if family == "qwen3_5_text":
        kw["intermediate_size"] = _int(r, d, "intermediate_size", limit="intermediate_size")
        return kw
    experts = _int(r, d, "num_experts", limit="num_experts", minimum=0 if family == "qwen3_next" else 1)
    expert_width = _int(r, d, "moe_intermediate_size", limit="expert_intermediate_size")
    if family == "qwen3_5_moe_text":
        moe_layers = tuple(range(layers))  # every layer is the sparse MoE block
        kw["intermediate_size"] = expert_width  # no dense MLP anywhere
    else:
        kw["intermediate_size"] = _int(r, d, "intermediate_size", limit="intermediate_size")
        step = r.int("decoder_sparse_step", limit_key="num_layers", default=1)
        dense_only = cfg.get("mlp_only_layers") or []
        if not isinstance(dense_only, list) or not all(
            isinstance(i, int) and not isinstance(i, bool) for i in dense_only
        ):
            raise _fail("mlp_only_layers", "must be a list of layer indices")
        moe_layers = tuple(i for i in range(layers) if i not in dense_only and (i + 1) % step == 0)
        if not experts:
            moe_layers = ()
    if moe_layers:
        top_k = _int(r, d, "num_experts_per_tok", limit="experts_per_token")
        if top_k > experts:
            raise _fail("num_experts_per_tok", f"{top_k} is more than the {experts} experts")
        kw |= {
            "num_experts": experts,
            "experts_per_token": top_k,
            "expert_intermediate_size": expert_width,
            "moe_layers": moe_layers,
            # one shared expert of its own width, behind a sigmoid gate (Linear(hidden, 1))
            "shared_expert_intermediate_size": _int(
                r, d, "shared_expert_intermediate_size", limit="shared_expert_intermediate_size", minimum=0
            ),
            "shared_expert_gate": True,
        }
    return kw


# ---------------------------------------------------------------------------------------------
# OLMo Hybrid
# ---------------------------------------------------------------------------------------------

_OLMO_DEFAULTS = {
    "vocab_size": 100352,
    "hidden_size": 3840,
    "intermediate_size": 11008,
    "num_hidden_layers": 32,
    "num_attention_heads": 30,
    "max_position_embeddings": 65536,
    "linear_conv_kernel_dim": 4,
}


def read_olmo_hybrid(r: _Reader, cfg: dict, family: str, name: str) -> dict[str, Any]:
    """OLMo Hybrid: Gated DeltaNet layers (pre-norm) and OLMo-2-style attention layers (post-norm,
    q_norm and k_norm over all heads), every layer a dense SwiGLU MLP and two RMSNorms.

    transformers models/olmo_hybrid/modeling_olmo_hybrid.py: OlmoHybridAttention (q, k, v, o with
    attention_bias; q_norm over heads x head_dim, k_norm over kv_heads x head_dim),
    OlmoHybridGatedDeltaNet (``_gated_deltanet``), OlmoHybridMLP. OlmoHybridConfig: layer_types
    default every 4th layer full (the last one if none), linear heads default to
    num_attention_heads, linear_key_head_dim to int(0.75 hidden / key heads), value dim to twice it.
    """
    d = dict(_OLMO_DEFAULTS)
    hidden = _int(r, d, "hidden_size", limit="hidden_size")
    layers = _int(r, d, "num_hidden_layers", limit="num_layers")
    heads = _int(r, d, "num_attention_heads", limit="num_heads")
    kv_heads = r.int("num_key_value_heads", limit_key="num_kv_heads", default=heads)
    if heads % kv_heads:
        raise _fail("num_key_value_heads", f"{heads} attention heads are not divisible by {kv_heads}")
    head_dim = r.int("head_dim", limit_key="head_dim", default=hidden // heads)
    default_kinds = ["full_attention" if i % 4 == 3 else "linear_attention" for i in range(layers)]
    if "full_attention" not in default_kinds:
        default_kinds[-1] = "full_attention"
    kinds = kinds_list(r, "layer_types", layers, _QWEN_KINDS, default=default_kinds, remap=LEGACY_LAYER_TYPES)
    if "linear_attention" not in kinds or "full_attention" not in kinds:
        raise _fail("layer_types", "OLMo Hybrid needs at least one linear and one full attention layer")
    d["linear_num_key_heads"] = r.int("linear_num_key_heads", limit_key="num_heads", default=heads)
    d["linear_num_value_heads"] = r.int("linear_num_value_heads", limit_key="num_heads", default=heads)
    d["linear_key_head_dim"] = r.int(
        "linear_key_head_dim", limit_key="head_dim", default=int(0.75 * hidden / d["linear_num_key_heads"])
    )
    d["linear_value_head_dim"] = 2 * d["linear_key_head_dim"]
    bias = r.bool("attention_bias", default=False)

    linear = _gated_deltanet(r, d, hidden)
    full = (
        attention_params(hidden, heads, kv_heads, head_dim, qkv_bias=bias, o_bias=bias)
        + (heads + kv_heads) * head_dim
    )  # + q/k norms
    return {
        "family": family,
        "name": name,
        "hidden_size": hidden,
        "num_layers": layers,
        "num_heads": heads,
        "num_kv_heads": kv_heads,
        "head_dim": head_dim,
        "intermediate_size": _int(r, d, "intermediate_size", limit="intermediate_size"),
        "vocab_size": _int(r, d, "vocab_size", limit="vocab_size"),
        "max_positions": _int(r, d, "max_position_embeddings", limit="max_positions", minimum=0),
        "tie_word_embeddings": _tie(r),
        **_hybrid_layers(kinds, linear, full, "full", 2 * kv_heads * head_dim),
    }


# ---------------------------------------------------------------------------------------------
# Kimi Linear, Bailing hybrid (Ling 3.0): KDA + MLA, DeepSeek-V3-style MoE
# ---------------------------------------------------------------------------------------------

_KIMI_DEFAULTS = {
    "vocab_size": 163840,
    "hidden_size": 2304,
    "intermediate_size": 9216,
    "moe_intermediate_size": 1024,
    "num_hidden_layers": 27,
    "num_attention_heads": 32,
    "num_shared_experts": 1,
    "kv_lora_rank": 512,
    "qk_rope_head_dim": 64,
    "v_head_dim": 128,
    "qk_nope_head_dim": 128,
    "num_experts_per_token": 8,
    "model_max_length": 1048576,
    "num_experts": 256,
    "linear_head_dim": 128,
    "linear_num_heads": 32,
    "linear_conv_kernel_dim": 4,
}
_BAILING_DEFAULTS = {
    "vocab_size": 157184,
    "hidden_size": 2560,
    "intermediate_size": 6144,
    "moe_intermediate_size": 768,
    "num_hidden_layers": 42,
    "num_attention_heads": 32,
    "num_shared_experts": 1,
    "kv_lora_rank": 512,
    "qk_rope_head_dim": 64,
    "v_head_dim": 128,
    "qk_nope_head_dim": 128,
    "num_experts_per_token": 8,
    "model_max_length": 262144,
    "num_experts": 512,
    "linear_head_dim": 128,  # BailingHybridConfig: head_dim (128), before it is set to qk_rope_head_dim
    "short_conv_kernel_size": 4,
    "layer_group_size": 6,
    "first_k_dense_replace": 2,
}


def read_kda_mla(r: _Reader, cfg: dict, family: str, name: str) -> dict[str, Any]:
    """Kimi Linear and Bailing hybrid (Ling 3.0): Kimi Delta Attention layers and MLA layers, a
    dense MLP or a DeepSeek-V3 MoE per ``mlp_layer_types`` (default: the first
    ``first_k_dense_replace`` dense, 1 for Kimi and 2 for Bailing).

    transformers models/kimi_linear/modeling_kimi_linear.py (KimiLinearDeltaAttention, KimiLinearAttention,
    KimiLinearMoE: routed experts of moe_intermediate_size, a router weight without a learned bias
    (e_score_correction_bias is a buffer), shared experts of moe_intermediate_size x n_shared_experts)
    and models/bailing_hybrid/modeling_bailing_hybrid.py (BailingHybridDeltaAttention with full-rank
    forget and output gates; BailingHybridAttention: MLA without query compression plus a per-head
    g_proj). KimiLinearConfig reads the linear sizes and layer kinds from ``linear_attn_config``
    (head_dim, num_heads, short_conv_kernel_size; full_attn_layers / kda_layers, 1-indexed) before the
    flat fields; BailingHybridConfig sizes KDA with head_dim, num_attention_heads and
    short_conv_kernel_size, and makes the last layer of every ``layer_group_size`` full attention.
    The MLA cache holds kv_lora_rank + qk_rope_head_dim per token.
    """
    kimi = family == "kimi_linear"
    d = _KIMI_DEFAULTS if kimi else _BAILING_DEFAULTS
    hidden = _int(r, d, "hidden_size", limit="hidden_size")
    layers = _int(r, d, "num_hidden_layers", limit="num_layers")
    heads = _int(r, d, "num_attention_heads", limit="num_heads")
    kv_lora = _int(r, d, "kv_lora_rank", limit="lora_rank")
    nope = _int(r, d, "qk_nope_head_dim", limit="head_dim", minimum=0)
    rope = _int(r, d, "qk_rope_head_dim", limit="head_dim", minimum=0)
    v_dim = _int(r, d, "v_head_dim", limit="head_dim")
    bias = r.bool("attention_bias", default=False)

    if kimi:
        sub = cfg.get("linear_attn_config") or {}
        if not isinstance(sub, dict):
            raise _fail("linear_attn_config", "must be an object")
        s = _Reader(sub)
        lin_dim = s.int(
            "head_dim", limit_key="head_dim", default=_int(r, d, "linear_head_dim", limit="head_dim")
        )
        lin_heads = s.int(
            "num_heads", limit_key="num_heads", default=_int(r, d, "linear_num_heads", limit="num_heads")
        )
        kernel = s.int(
            "short_conv_kernel_size",
            limit_key="head_dim",
            default=_int(r, d, "linear_conv_kernel_dim", limit="head_dim"),
        )
        default_kinds = ["full_attention" if i and i % 4 == 0 else "linear_attention" for i in range(layers)]
        if "full_attn_layers" in sub and "kda_layers" in sub:
            default_kinds = _kimi_layer_lists(sub, layers)
        q_lora = r.int("q_lora_rank", limit_key="lora_rank") if r.present("q_lora_rank") else 0
        first_dense = r.int("first_k_dense_replace", limit_key="num_layers", default=1, minimum=0)
    else:
        # A checkpoint's head_dim sizes KDA; a config transformers wrote keeps it as linear_head_dim
        # (its head_dim is then qk_rope_head_dim).
        lin_dim = _int(r, d, "linear_head_dim", "head_dim", limit="head_dim")
        lin_heads = heads  # BailingHybridConfig: linear_num_heads = num_attention_heads
        kernel = _int(r, d, "short_conv_kernel_size", "linear_conv_kernel_dim", limit="head_dim")
        group = _int(r, d, "layer_group_size", limit="num_layers")
        default_kinds = [
            "full_attention" if (i + 1) % group == 0 else "linear_attention" for i in range(layers)
        ]
        q_lora = 0  # BailingHybridAttention always has a plain q_proj
        first_dense = _int(r, d, "first_k_dense_replace", limit="num_layers", minimum=0)
    kinds = kinds_list(r, "layer_types", layers, _QWEN_KINDS, default=default_kinds, remap=LEGACY_LAYER_TYPES)

    linear = _kda(hidden, lin_heads, lin_dim, kernel, low_rank_gates=kimi)
    full = _mla(hidden, heads, q_lora, kv_lora, nope, rope, v_dim, bias=bias, head_gate=not kimi)
    kw: dict[str, Any] = {
        "family": family,
        "name": name,
        "hidden_size": hidden,
        "num_layers": layers,
        "num_heads": heads,
        "num_kv_heads": r.int("num_key_value_heads", limit_key="num_kv_heads", default=heads),
        "head_dim": rope,
        "intermediate_size": _int(r, d, "intermediate_size", limit="intermediate_size"),
        "vocab_size": _int(r, d, "vocab_size", limit="vocab_size"),
        "max_positions": _int(
            r, d, "model_max_length", "max_position_embeddings", limit="max_positions", minimum=0
        ),
        "tie_word_embeddings": _tie(r),
        "q_lora_rank": q_lora,
        "kv_lora_rank": kv_lora,
        "qk_nope_head_dim": nope,
        "qk_rope_head_dim": rope,
        "v_head_dim": v_dim,
        **_hybrid_layers(kinds, linear, full, "mla", kv_lora + rope),
    }
    moe_layers = _sparse_layers(r, layers, first_dense)
    if moe_layers:
        experts = _int(r, d, "num_experts", "num_local_experts", limit="num_experts")
        top_k = _int(r, d, "num_experts_per_token", "num_experts_per_tok", limit="experts_per_token")
        if top_k > experts:
            raise _fail("num_experts_per_token", f"{top_k} is more than the {experts} experts")
        kw |= {
            "num_experts": experts,
            "experts_per_token": top_k,
            "expert_intermediate_size": _int(r, d, "moe_intermediate_size", limit="expert_intermediate_size"),
            "num_shared_experts": _int(
                r, d, "num_shared_experts", "n_shared_experts", limit="num_shared_experts", minimum=0
            ),
            "moe_layers": moe_layers,
        }
    return kw


def _kimi_layer_lists(sub: dict, layers: int) -> list[str]:
    """Kimi checkpoints list their full-attention and KDA layers, 1-indexed."""
    kinds: list[str | None] = [None] * layers
    for field, kind in (("full_attn_layers", "full_attention"), ("kda_layers", "linear_attention")):
        indices = sub[field]
        if not isinstance(indices, list) or not all(
            isinstance(i, int) and not isinstance(i, bool) and 1 <= i <= layers for i in indices
        ):
            raise _fail(f"linear_attn_config.{field}", f"must be a list of layer numbers from 1 to {layers}")
        for i in indices:
            kinds[i - 1] = kind
    if None in kinds:
        raise _fail(
            "linear_attn_config",
            f"full_attn_layers and kda_layers leave layer {kinds.index(None) + 1} without a mixer",
        )
    return [str(k) for k in kinds]


# ---------------------------------------------------------------------------------------------
# MiniMax-Text-01 (lightning attention) and MiniMax-M3 (its text decoder)
# ---------------------------------------------------------------------------------------------

_MINIMAX_DEFAULTS = {
    "vocab_size": 32000,
    "hidden_size": 4096,
    "intermediate_size": 14336,
    "num_hidden_layers": 32,
    "num_attention_heads": 32,
    "num_key_value_heads": 8,
    "max_position_embeddings": 4096 * 32,
    "num_local_experts": 8,
    "num_experts_per_tok": 2,
}


def read_minimax(r: _Reader, cfg: dict, family: str, name: str) -> dict[str, Any]:
    """MiniMax-Text-01: lightning-attention and GQA layers (``layer_types``, default alternating
    full, linear, ...), every layer a Mixtral-style MoE (experts of intermediate_size, a router
    without bias, no shared expert).

    transformers models/minimax/modeling_minimax.py: MiniMaxLightningAttention (qkv_proj hidden ->
    3 heads x head_dim, output_gate, out_proj, an RMSNorm over heads x head_dim; the cache keeps its
    K^T V state, heads x head_dim x head_dim, in the activations' dtype), MiniMaxAttention (q, k, v,
    o without bias), MiniMaxSparseMoeBlock. MiniMaxCache is a DynamicCache built without the config:
    every attention layer keeps all its tokens, also when ``sliding_window`` is set (the window only
    masks), so attention layers are sized as full attention.
    """
    d = _MINIMAX_DEFAULTS
    hidden = _int(r, d, "hidden_size", limit="hidden_size")
    layers = _int(r, d, "num_hidden_layers", limit="num_layers")
    heads = _int(r, d, "num_attention_heads", limit="num_heads")
    kv_heads = _int(r, d, "num_key_value_heads", limit="num_kv_heads")
    if heads % kv_heads:
        raise _fail("num_key_value_heads", f"{heads} attention heads are not divisible by {kv_heads}")
    head_dim = r.int("head_dim", limit_key="head_dim", default=hidden // heads)
    if cfg.get("layer_types") is None and r.present("attn_type_list"):
        raise _fail(
            "attn_type_list",
            "transformers' MiniMaxConfig ignores it (it alternates full and linear layers unless "
            "layer_types is given) while the original code follows it: give layer_types",
        )
    default_kinds = ["full_attention" if (i + 1) % 2 else "linear_attention" for i in range(layers)]
    kinds = kinds_list(r, "layer_types", layers, _QWEN_KINDS, default=default_kinds, remap=LEGACY_LAYER_TYPES)
    inner = _int(r, d, "intermediate_size", limit="intermediate_size")
    experts = _int(r, d, "num_local_experts", "num_experts", limit="num_experts")
    top_k = _int(r, d, "num_experts_per_tok", limit="experts_per_token")
    if top_k > experts:
        raise _fail("num_experts_per_tok", f"{top_k} is more than the {experts} experts")

    width = heads * head_dim
    lightning = hidden * 3 * width + 2 * width * hidden + width  # qkv_proj, output_gate, out_proj; norm
    state = heads * head_dim * head_dim * LIGHTNING_STATE_BYTES
    full = attention_params(hidden, heads, kv_heads, head_dim)
    return {
        "family": family,
        "name": name,
        "hidden_size": hidden,
        "num_layers": layers,
        "num_heads": heads,
        "num_kv_heads": kv_heads,
        "head_dim": head_dim,
        "intermediate_size": inner,
        "vocab_size": _int(r, d, "vocab_size", limit="vocab_size"),
        "max_positions": _int(r, d, "max_position_embeddings", limit="max_positions", minimum=0),
        "tie_word_embeddings": _tie(r),
        "num_experts": experts,
        "experts_per_token": top_k,
        "expert_intermediate_size": inner,
        "moe_layers": tuple(range(layers)),
        **_hybrid_layers(kinds, (lightning, state), full, "full", 2 * kv_heads * head_dim),
    }


_M3_DEFAULTS = {
    "vocab_size": 200064,
    "hidden_size": 6144,
    "intermediate_size": 3072,
    "num_hidden_layers": 60,
    "num_attention_heads": 64,
    "num_key_value_heads": 4,
    "head_dim": 128,
    "max_position_embeddings": 524288,
    "num_local_experts": 128,
    "num_experts_per_tok": 4,
    "dense_intermediate_size": 12288,
    "shared_intermediate_size": 3072,
    "index_n_heads": 4,
    "index_head_dim": 128,
}
_M3_KINDS = frozenset({"full_attention", "minimax_m3_sparse"})
# MiniMaxM3VLTextConfig reads these from a checkpoint's sparse_attention_config (they win).
_M3_LEGACY_INDEX = {"index_n_heads": "sparse_num_index_heads", "index_head_dim": "sparse_index_dim"}


def read_minimax_m3(r: _Reader, cfg: dict, family: str, name: str) -> dict[str, Any]:
    """MiniMax-M3 (the text decoder of MiniMax-M3-VL): GQA with q_norm and k_norm over head_dim in
    every layer; layers of kind ``minimax_m3_sparse`` add a lightning indexer whose key (one
    index_head_dim vector per token) the cache keeps beside K and V. A MoE (routed experts of
    intermediate_size, router without a learned bias, one shared expert of shared_intermediate_size)
    or a dense MLP of dense_intermediate_size per ``mlp_layer_types``.

    transformers models/minimax_m3_vl/modeling_minimax_m3_vl.py: MiniMaxM3VLAttention,
    MiniMaxM3VLIndexer (q_proj hidden -> index_n_heads x index_head_dim, k_proj hidden ->
    index_head_dim, q_norm and k_norm over index_head_dim), MiniMaxM3VLSparseCacheLayer (idx_keys),
    MiniMaxM3VLSparseMoeBlock, MiniMaxM3VLDenseMLP (fused gate_up_proj: the same weights as a gated
    MLP). MiniMaxM3VLTextConfig takes the layer kinds from sparse_attention_config's
    sparse_attention_freq and the MLP kinds from moe_layer_freq when the lists are absent.
    """
    d = dict(_M3_DEFAULTS)
    sparse_cfg = cfg.get("sparse_attention_config") or {}
    if not isinstance(sparse_cfg, dict):
        raise _fail("sparse_attention_config", "must be an object")
    hidden = _int(r, d, "hidden_size", limit="hidden_size")
    layers = _int(r, d, "num_hidden_layers", limit="num_layers")
    heads = _int(r, d, "num_attention_heads", limit="num_heads")
    kv_heads = _int(r, d, "num_key_value_heads", limit="num_kv_heads")
    if heads % kv_heads:
        raise _fail("num_key_value_heads", f"{heads} attention heads are not divisible by {kv_heads}")
    head_dim = _int(r, d, "head_dim", limit="head_dim")
    s = _Reader(sparse_cfg)
    index_heads = s.int(
        _M3_LEGACY_INDEX["index_n_heads"],
        limit_key="num_heads",
        default=_int(r, d, "index_n_heads", limit="num_heads"),
    )
    index_dim = s.int(
        _M3_LEGACY_INDEX["index_head_dim"],
        limit_key="head_dim",
        default=_int(r, d, "index_head_dim", limit="head_dim"),
    )

    default_kinds = ["full_attention"] * layers
    freq = sparse_cfg.get("sparse_attention_freq")
    if cfg.get("layer_types") is None and freq is not None:
        if not isinstance(freq, list) or len(freq) != layers:
            raise _fail(
                "sparse_attention_config.sparse_attention_freq", f"must have one entry per layer ({layers})"
            )
        default_kinds = ["minimax_m3_sparse" if f else "full_attention" for f in freq]
    kinds = kinds_list(r, "layer_types", layers, _M3_KINDS, default=default_kinds, remap=LEGACY_LAYER_TYPES)

    moe_freq = cfg.get("moe_layer_freq")
    mlp_kinds = cfg.get("mlp_layer_types")
    if mlp_kinds is None and moe_freq is not None:
        if not isinstance(moe_freq, list) or len(moe_freq) != layers:
            raise _fail("moe_layer_freq", f"must be a list with one entry per layer ({layers})")
        moe_layers = tuple(i for i, f in enumerate(moe_freq) if f)
    else:
        moe_layers = _sparse_layers(r, layers, 0)  # default: every layer sparse

    full = attention_params(hidden, heads, kv_heads, head_dim) + 2 * head_dim  # + q/k norms
    indexer = hidden * index_heads * index_dim + hidden * index_dim + 2 * index_dim
    sparse = [k == "minimax_m3_sparse" for k in kinds]
    kv = 2 * kv_heads * head_dim
    kw: dict[str, Any] = {
        "family": family,
        "name": name,
        "hidden_size": hidden,
        "num_layers": layers,
        "num_heads": heads,
        "num_kv_heads": kv_heads,
        "head_dim": head_dim,
        "intermediate_size": _int(r, d, "dense_intermediate_size", limit="intermediate_size"),
        "vocab_size": _int(r, d, "vocab_size", limit="vocab_size"),
        "max_positions": _int(r, d, "max_position_embeddings", limit="max_positions", minimum=0),
        "tie_word_embeddings": _tie(r),
        "qk_norm": "rms",
        "qk_norm_dim": head_dim,
        "layer_kinds": ("full",) * layers,
        "layer_attention_params": tuple(full + (indexer if s_ else 0) for s_ in sparse),
        "layer_kv_elements": tuple(kv + (index_dim if s_ else 0) for s_ in sparse),
    }
    if moe_layers:
        experts = _int(r, d, "num_local_experts", "num_experts", limit="num_experts")
        top_k = _int(r, d, "num_experts_per_tok", limit="experts_per_token")
        if top_k > experts:
            raise _fail("num_experts_per_tok", f"{top_k} is more than the {experts} experts")
        kw |= {
            "num_experts": experts,
            "experts_per_token": top_k,
            "expert_intermediate_size": _int(r, d, "intermediate_size", limit="expert_intermediate_size"),
            "shared_expert_intermediate_size": _int(
                r, d, "shared_intermediate_size", limit="shared_expert_intermediate_size", minimum=0
            ),
            "moe_layers": moe_layers,
        }
    return kw


READERS = {
    "qwen3_next": read_qwen3_next,
    "qwen3_5_text": read_qwen3_next,
    "qwen3_5_moe_text": read_qwen3_next,
    "olmo_hybrid": read_olmo_hybrid,
    "kimi_linear": read_kda_mla,
    "bailing_hybrid": read_kda_mla,
    "minimax": read_minimax,
    "minimax_m3_vl_text": read_minimax_m3,
}
