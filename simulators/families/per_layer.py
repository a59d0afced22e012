"""Decoders whose layers have shapes or kinds of their own: Gemma 4 (global layers with their own KV
heads and head size, K = V, KV-shared layers, per-layer embeddings, an optional MoE block beside
the MLP), Gemma 3n (AltUp, Laurel, per-layer inputs, KV sharing, per-layer MLP widths), Llama 4
text (chunked-attention layers, MoE interleave), Youtu (dense MLA), Laguna (per-layer query heads,
output gates), MiMo-V2-Flash (sliding layers with twice the KV heads and attention sinks, V head
smaller than K) and Hy V4 (MLA with a DSA indexer on some layers, hyper-connections).

Each reader follows the transformers modelling file named in its docstring: the same defaults as
the config class, per-layer attention parameters and cached elements written out, and a refusal
for every value the modelling code would not build or that the calculator does not model.
"""

from __future__ import annotations

from typing import Any

from simulators.families.common import kinds_list
from simulators.model_config import _LIMITS, _fail, _read_standard, _Reader, _sparse_layers

# ---------------------------------------------------------------------------------------------
# Helpers
# ---------------------------------------------------------------------------------------------


def _positive_list(r: _Reader, name: str, layers: int, limit_key: str) -> list[int]:
    """A list of one positive integer per layer (within the field's plausible limit)."""
    values = r.config.get(name)
    if not isinstance(values, list) or len(values) != layers:
        raise _fail(name, f"must be a number or a list with one entry per layer ({layers})")
    out = []
    for v in values:
        if isinstance(v, bool) or not isinstance(v, int) or not 1 <= v <= _LIMITS[limit_key]:
            raise _fail(name, f"every entry must be an integer from 1 to {_LIMITS[limit_key]:,}, got {v!r}")
        out.append(v)
    return out


def _not_null(cfg: dict, *names: str) -> None:
    """Refuse an explicit null where the config class wants a number (its strict check does too)."""
    for name in names:
        if name in cfg and cfg[name] is None:
            raise _fail(name, "is null: transformers cannot build this model without a number here")


def _window(r: _Reader, default: int) -> int:
    # A DynamicSlidingWindowLayer keeps the last (window - 1) tokens: a window of 1 keeps them all.
    return r.int("sliding_window", limit_key="sliding_window", default=default, minimum=2)


def _kv_sharing(r: _Reader, layer_types: list[str], layers: int, default: int) -> list[bool]:
    """Which layers reuse an earlier layer's K/V (Gemma 3n / Gemma 4 ``kv_sharing_modes``): the
    last ``num_kv_shared_layers``, each reading the last unshared layer of its own type."""
    shared = r.int("num_kv_shared_layers", limit_key="num_layers", default=default, minimum=0)
    if not shared:
        return [False] * layers
    first_shared = layers - shared
    if first_shared < 1 or set(layer_types[:first_shared]) != set(layer_types):
        raise _fail(
            "num_kv_shared_layers",
            f"{shared} shared layers leave no earlier layer of every attention type to share "
            "(transformers refuses this config)",
        )
    return [i >= first_shared for i in range(layers)]


def _heads_divide(heads: int, kv_heads: int, field: str, layer: int | None = None) -> None:
    if kv_heads < 1 or heads % kv_heads:
        where = f"layer {layer}: " if layer is not None else ""
        raise _fail(field, f"{where}{heads} query heads are not divisible by {kv_heads} KV heads")


# ---------------------------------------------------------------------------------------------
# Gemma 4
# ---------------------------------------------------------------------------------------------

_GEMMA4_LAYER_KEYS = frozenset({"head_dim", "num_key_value_heads"})


def _gemma4_per_layer(
    r: _Reader, layer_types: list[str], head_dim: int, kv_heads: int, k_eq_v: bool
) -> tuple[list[int], list[int]]:
    """Head size and KV heads of every layer: ``per_layer_config`` when given (as ``to_dict``
    writes it), otherwise ``global_head_dim`` and, with ``attention_k_eq_v``,
    ``num_global_key_value_heads`` on the full-attention layers (Gemma4TextConfig.__post_init__)."""
    layers = len(layer_types)
    dims, kvs = [head_dim] * layers, [kv_heads] * layers
    per_layer = r.config.get("per_layer_config")
    if "per_layer_config" in r.config and per_layer is not None:
        if not isinstance(per_layer, dict):
            raise _fail("per_layer_config", "must be an object of layer index -> overrides")
        for key, overrides in per_layer.items():
            try:
                idx = int(key)
            except (TypeError, ValueError):
                raise _fail("per_layer_config", f"key {key!r} is not a layer index") from None
            if not 0 <= idx < layers:
                raise _fail("per_layer_config", f"layer {idx} is outside 0..{layers - 1}")
            if not isinstance(overrides, dict):
                raise _fail("per_layer_config", f"layer {idx}: overrides must be an object")
            unknown = sorted(set(overrides) - _GEMMA4_LAYER_KEYS)
            if unknown:
                raise _fail(
                    "per_layer_config",
                    f"layer {idx} overrides {', '.join(unknown)}, which Gemma 4 does not read per "
                    "layer (only head_dim and num_key_value_heads)",
                )
            sub = _Reader(overrides)
            dims[idx] = sub.int("head_dim", limit_key="head_dim", default=dims[idx])
            kvs[idx] = sub.int("num_key_value_heads", limit_key="num_kv_heads", default=kvs[idx])
    else:
        if "global_head_dim" in r.config and r.config["global_head_dim"] is None:
            raise _fail("global_head_dim", "is null: the global layers would have no head size")
        global_dim = r.int("global_head_dim", limit_key="head_dim", default=512)
        global_kv = r.optional_int("num_global_key_value_heads", limit_key="num_kv_heads")
        for i, kind in enumerate(layer_types):
            if kind == "full_attention":
                dims[i] = global_dim
                if k_eq_v and global_kv is not None:
                    kvs[i] = global_kv
    # Gemma4TextRotaryEmbedding reads one head size per layer type.
    for kind in set(layer_types):
        if len({dims[i] for i, t in enumerate(layer_types) if t == kind}) > 1:
            raise _fail("per_layer_config", f"the {kind} layers do not share one head_dim")
    return dims, kvs


def read_gemma4(r: _Reader, cfg: dict, family: str, name: str) -> dict[str, Any]:
    """Gemma 4 text (transformers models/gemma4/modeling_gemma4.py: Gemma4TextAttention,
    Gemma4TextMLP, Gemma4TextDecoderLayer, Gemma4TextRouter, Gemma4TextExperts, Gemma4TextModel;
    models/gemma4_unified/modeling_gemma4_unified.py: the same layers without per-layer embeddings
    or MoE).

    Sliding and full (global) layers; the full layers take their own head size and, with
    attention_k_eq_v, their own KV heads and no v_proj (V is the un-normed K projection, still cached
    apart). The last num_kv_shared_layers reuse the last unshared layer's K/V of their type: no
    k/v projections or norms, nothing cached, a double-width MLP with use_double_wide_mlp. q_norm and
    k_norm carry weights over the head; v_norm has none. Four norms per layer; with per-layer
    embeddings (hidden_size_per_layer_input) a packed table of vocab_size_per_layer_input ×
    layers × width, its projection from hidden_size and norm, and per layer a gate, a projection
    and a norm. With enable_moe_block every layer adds routed experts beside its dense MLP, a router
    (projection, a scale over hidden_size, a per-expert scale) and three more norms.
    """
    unified = family == "gemma4_unified_text"
    hidden = r.int("hidden_size", limit_key="hidden_size", default=2304)
    layers = r.int("num_hidden_layers", limit_key="num_layers", default=30)
    heads = r.int("num_attention_heads", limit_key="num_heads", default=8)
    kv_heads = r.int("num_key_value_heads", limit_key="num_kv_heads", default=4)
    head_dim = r.int("head_dim", limit_key="head_dim", default=256)
    inner = r.int("intermediate_size", limit_key="intermediate_size", default=9216)
    vocab = r.int("vocab_size", limit_key="vocab_size", default=262_144)
    bias = r.bool("attention_bias", default=False)
    k_eq_v = r.bool("attention_k_eq_v", default=False)
    double_wide = r.bool("use_double_wide_mlp", default=False)

    bidirectional = cfg.get("use_bidirectional_attention", "vision" if unified else None)
    if bidirectional not in (None, "vision", "all"):
        raise _fail("use_bidirectional_attention", f'must be null, "vision" or "all", got {bidirectional!r}')
    window = _window(r, 1024 if unified else 512)
    if bidirectional == "all":
        window = window // 2 + 1  # Gemma4TextConfig.__post_init__: exclusive bounds both ways

    default_types = ["full_attention" if (i + 1) % 6 == 0 else "sliding_attention" for i in range(layers)]
    layer_types = kinds_list(
        r, "layer_types", layers, ("sliding_attention", "full_attention"), default=default_types
    )
    layer_types[-1] = "full_attention"  # the config class forces the last layer to full attention
    dims, kvs = _gemma4_per_layer(r, layer_types, head_dim, kv_heads, k_eq_v)
    shared = _kv_sharing(r, layer_types, layers, default=0)

    kinds, attention, kv_elements, widths = [], [], [], []
    for i, (kind, d, kv) in enumerate(zip(layer_types, dims, kvs, strict=True)):
        _heads_divide(heads, kv, "num_key_value_heads", i)
        sliding = kind == "sliding_attention"
        params = 2 * hidden * heads * d + d  # q_proj, o_proj, q_norm
        params += (heads * d + hidden) if bias else 0
        if shared[i]:
            kinds.append("shared")
            kv_elements.append(0)
        else:
            projections = 1 if (k_eq_v and not sliding) else 2  # k_proj (+ v_proj)
            params += projections * (hidden * kv * d + (kv * d if bias else 0)) + d  # + k_norm
            kinds.append("sliding" if sliding else "full")
            kv_elements.append(2 * kv * d)
        attention.append(params)
        widths.append(inner * (2 if double_wide and shared[i] else 1))

    kw: dict[str, Any] = {
        "family": family,
        "name": name,
        "hidden_size": hidden,
        "num_layers": layers,
        "num_heads": heads,
        "num_kv_heads": kv_heads,
        "head_dim": head_dim,
        "intermediate_size": inner,
        "vocab_size": vocab,
        "tie_word_embeddings": r.bool("tie_word_embeddings", default=True),
        "qkv_bias": bias,
        "o_bias": bias,
        "norms_per_layer": 4,
        "qk_norm": "rms",
        "qk_norm_dim": head_dim,
        "max_positions": r.int(
            "max_position_embeddings",
            limit_key="max_positions",
            default=262_144 if unified else 131_072,
            minimum=0,
        ),
        "layer_kinds": tuple(kinds),
        "layer_kv_heads": tuple(kvs),
        "layer_head_dims": tuple(dims),
        "layer_intermediate": tuple(widths),
        "layer_attention_params": tuple(attention),
        "layer_kv_elements": tuple(kv_elements),
    }
    sliding_layers = tuple(i for i, k in enumerate(kinds) if k == "sliding")
    if sliding_layers:
        kw |= {"sliding_window": window, "sliding_layers": sliding_layers}

    other = extra_norms = lookup = 0
    if not unified:
        # Per-layer embeddings, off with a width of 0 (``if hidden_size_per_layer_input``).
        if "hidden_size_per_layer_input" in cfg and cfg["hidden_size_per_layer_input"] is None:
            raise _fail("hidden_size_per_layer_input", "is null: give 0 for no per-layer embeddings")
        ple = r.int("hidden_size_per_layer_input", limit_key="hidden_size", default=256, minimum=0)
        if ple:
            ple_vocab = r.int("vocab_size_per_layer_input", limit_key="vocab_size", default=262_144)
            lookup += ple_vocab * layers * ple  # embed_tokens_per_layer: a lookup table
            other += hidden * layers * ple  # per_layer_model_projection
            other += layers * 2 * hidden * ple  # per_layer_input_gate, per_layer_projection
            extra_norms += ple + layers * hidden  # per_layer_projection_norm, post_per_layer_input_norm
        if r.bool("enable_moe_block", default=False):
            experts = r.int("num_experts", limit_key="num_experts")
            top_k = r.int("top_k_experts", limit_key="experts_per_token")
            if top_k > experts:
                raise _fail("top_k_experts", f"{top_k} is more than the {experts} experts")
            kw |= {
                "num_experts": experts,
                "experts_per_token": top_k,
                "expert_intermediate_size": r.int(
                    "moe_intermediate_size", limit_key="expert_intermediate_size"
                ),
                "moe_layers": tuple(range(layers)),
                # The dense MLP runs beside the experts in every layer: an always-active expert.
                "shared_expert_intermediate_size": inner,
                # router.per_expert_scale: one learned number per expert, beside router.proj.
                "router_bias": True,
            }
            # The doubled MLPs of KV-shared layers, beyond the one shared expert counted per layer.
            other += sum(3 * hidden * (w - inner) for w in widths)
            # post_feedforward_layernorm_1/_2, pre_feedforward_layernorm_2 and router.scale (the
            # weight of the router's scale-free norm).
            extra_norms += layers * 4 * hidden
    kw |= {"other_params": other, "extra_norm_params": extra_norms, "lookup_params": lookup}
    return kw


# ---------------------------------------------------------------------------------------------
# Gemma 3n
# ---------------------------------------------------------------------------------------------


def read_gemma3n(r: _Reader, cfg: dict, family: str, name: str) -> dict[str, Any]:
    """Gemma 3n text (transformers models/gemma3n/modeling_gemma3n.py: Gemma3nTextAttention,
    Gemma3nTextMLP, Gemma3nTextAltUp, Gemma3nTextLaurelBlock, Gemma3nTextDecoderLayer,
    Gemma3nTextModel).

    Sliding and full layers of one shape; the last num_kv_shared_layers reuse the last unshared
    layer's K/V of their type (no k/v projections or k_norm, nothing cached). intermediate_size is
    one width or one per layer. Per layer, beside attention and MLP: AltUp (correct_output_scale,
    correction and prediction coefficients, a modality router and its norm), Laurel (a rank
    laurel_rank low-rank residual and its norm) and the per-layer input gate, projection and norm;
    four more norms. Model-wide: the packed per-layer embedding table, its projection from
    hidden_size and norm, and altup_num_inputs - 1 AltUp projections in and out.
    """
    hidden = r.int("hidden_size", limit_key="hidden_size", default=2048)
    layers = r.int("num_hidden_layers", limit_key="num_layers", default=35)
    heads = r.int("num_attention_heads", limit_key="num_heads", default=8)
    kv_heads = r.int("num_key_value_heads", limit_key="num_kv_heads", default=2)
    head_dim = r.int("head_dim", limit_key="head_dim", default=256)
    vocab = r.int("vocab_size", limit_key="vocab_size", default=262_400)
    bias = r.bool("attention_bias", default=False)
    if hidden % heads:  # Gemma3nTextConfig.validate_architecture
        raise _fail("num_attention_heads", f"hidden_size ({hidden}) is not a multiple of {heads} heads")
    _heads_divide(heads, kv_heads, "num_key_value_heads")

    inner_value = cfg.get("intermediate_size", 16_384)
    if isinstance(inner_value, list):
        widths = _positive_list(r, "intermediate_size", layers, "intermediate_size")
    else:
        widths = [r.int("intermediate_size", limit_key="intermediate_size", default=16_384)] * layers

    default_types = ["full_attention" if (i + 1) % 5 == 0 else "sliding_attention" for i in range(layers)]
    layer_types = kinds_list(
        r, "layer_types", layers, ("sliding_attention", "full_attention"), default=default_types
    )
    window = _window(r, 512)
    shared = _kv_sharing(r, layer_types, layers, default=15)

    ple = r.int("hidden_size_per_layer_input", limit_key="hidden_size", default=256)
    ple_vocab = r.int("vocab_size_per_layer_input", limit_key="vocab_size", default=262_144)
    altup = r.int("altup_num_inputs", limit_key="num_heads", default=4)
    active = r.int("altup_active_idx", limit_key="num_heads", default=0, minimum=0)
    if active >= altup:
        raise _fail("altup_active_idx", f"{active} is not one of the {altup} AltUp inputs")
    laurel = r.int("laurel_rank", limit_key="lora_rank", default=64)

    kinds, attention, kv_elements = [], [], []
    for i, kind in enumerate(layer_types):
        params = 2 * hidden * heads * head_dim + head_dim  # q_proj, o_proj, q_norm
        params += (heads * head_dim + hidden) if bias else 0
        if shared[i]:
            kinds.append("shared")
            kv_elements.append(0)
        else:
            params += 2 * (hidden * kv_heads * head_dim + (kv_heads * head_dim if bias else 0)) + head_dim
            kinds.append("sliding" if kind == "sliding_attention" else "full")
            kv_elements.append(2 * kv_heads * head_dim)
        attention.append(params)

    per_layer_other = (
        hidden + altup * altup + altup**3 + hidden * altup  # AltUp: scale, coefficients, router
        + 2 * hidden * laurel  # Laurel: linear_left, linear_right
        + 2 * hidden * ple  # per_layer_input_gate, per_layer_projection
    )  # fmt: skip
    lookup = ple_vocab * layers * ple  # embed_tokens_per_layer: a lookup table
    other = (
        hidden * layers * ple  # per_layer_model_projection
        + 2 * (altup - 1) * hidden * hidden  # altup_projections, altup_unembed_projections
        + layers * per_layer_other
    )
    kw: dict[str, Any] = {
        "family": family,
        "name": name,
        "hidden_size": hidden,
        "num_layers": layers,
        "num_heads": heads,
        "num_kv_heads": kv_heads,
        "head_dim": head_dim,
        "intermediate_size": max(widths),
        "vocab_size": vocab,
        "tie_word_embeddings": r.bool("tie_word_embeddings", default=True),
        "qkv_bias": bias,
        "o_bias": bias,
        "norms_per_layer": 4,
        "qk_norm": "rms",
        "qk_norm_dim": head_dim,
        "max_positions": r.int(
            "max_position_embeddings", limit_key="max_positions", default=32_768, minimum=0
        ),
        "layer_kinds": tuple(kinds),
        "layer_intermediate": tuple(widths),
        "layer_attention_params": tuple(attention),
        "layer_kv_elements": tuple(kv_elements),
        "other_params": other,
        "lookup_params": lookup,
        # AltUp router_norm, post_laurel_norm, post_per_layer_input_norm; per_layer_projection_norm
        "extra_norm_params": layers * 3 * hidden + ple,
    }
    sliding_layers = tuple(i for i, k in enumerate(kinds) if k == "sliding")
    if sliding_layers:
        kw |= {"sliding_window": window, "sliding_layers": sliding_layers}
    return kw


# ---------------------------------------------------------------------------------------------
# Llama 4 text
# ---------------------------------------------------------------------------------------------


def read_llama4_text(r: _Reader, cfg: dict, family: str, name: str) -> dict[str, Any]:
    """Llama 4 text (transformers models/llama4/modeling_llama4.py: Llama4TextAttention,
    Llama4TextDecoderLayer, Llama4TextMoe, Llama4TextExperts, Llama4Router, Llama4TextMLP).

    Llama attention (attention_bias on q, k, v and o; the q/k L2 norm has no weights). Layers in
    moe_layers (default: every interleave_moe_layer_step-th) have num_local_experts routed experts of
    intermediate_size, a router and one shared expert of intermediate_size; the others a dense MLP
    of intermediate_size_mlp. layer_types (default: chunked on RoPE layers, full on the NoPE layers
    of no_rope_layers) say which layers keep only the last attention_chunk_size tokens.
    """
    hidden = r.int("hidden_size", limit_key="hidden_size", default=5120)
    layers = r.int("num_hidden_layers", limit_key="num_layers", default=48)
    heads = r.int("num_attention_heads", limit_key="num_heads", default=40)
    _not_null(cfg, "num_key_value_heads", "head_dim")  # strict int fields
    kv_heads = r.int("num_key_value_heads", limit_key="num_kv_heads", default=8)
    head_dim = r.int("head_dim", limit_key="head_dim", default=128)
    _heads_divide(heads, kv_heads, "num_key_value_heads")
    expert_inner = r.int("intermediate_size", limit_key="expert_intermediate_size", default=8192)
    dense_inner = r.int("intermediate_size_mlp", limit_key="intermediate_size", default=16_384)
    bias = r.bool("attention_bias", default=False)

    step = r.int("interleave_moe_layer_step", limit_key="num_layers", default=1)
    moe_value = cfg.get("moe_layers")
    if moe_value is None:
        moe_layers = tuple(range(step - 1, layers, step))
    else:
        if not isinstance(moe_value, list) or not all(
            isinstance(i, int) and not isinstance(i, bool) for i in moe_value
        ):
            raise _fail("moe_layers", "must be a list of layer indices")
        moe_layers = tuple(i for i in range(layers) if i in set(moe_value))

    layer_types = cfg.get("layer_types")
    if layer_types is None:
        no_rope = cfg.get("no_rope_layers") or []
        if not no_rope:
            interval = r.int("no_rope_layer_interval", limit_key="num_layers", default=4)
            no_rope = [int((i + 1) % interval != 0) for i in range(layers)]
        if not isinstance(no_rope, list) or len(no_rope) < layers:
            raise _fail("no_rope_layers", f"must be a list with one entry per layer ({layers})")
        default_types = ["chunked_attention" if flag else "full_attention" for flag in no_rope[:layers]]
    else:
        default_types = []
    layer_types = kinds_list(
        r, "layer_types", layers, ("chunked_attention", "full_attention"), default=default_types
    )
    kinds = tuple("chunked" if t == "chunked_attention" else "full" for t in layer_types)
    kw: dict[str, Any] = {
        "family": family,
        "name": name,
        "hidden_size": hidden,
        "num_layers": layers,
        "num_heads": heads,
        "num_kv_heads": kv_heads,
        "head_dim": head_dim,
        "intermediate_size": dense_inner,
        "vocab_size": r.int("vocab_size", limit_key="vocab_size", default=202_048),
        "tie_word_embeddings": r.bool("tie_word_embeddings", default=False),
        "qkv_bias": bias,
        "o_bias": bias,
        "max_positions": r.int(
            "max_position_embeddings", limit_key="max_positions", default=131_072, minimum=0
        ),
        "layer_kinds": kinds,
    }
    if "chunked" in kinds:
        _not_null(cfg, "attention_chunk_size")  # null is allowed only without chunked layers
        # A chunked layer's DynamicSlidingWindowLayer keeps the last (chunk - 1) tokens; 1 keeps all.
        kw["attention_chunk"] = r.int(
            "attention_chunk_size", limit_key="sliding_window", default=8192, minimum=2
        )
    if moe_layers:
        experts = r.int("num_local_experts", limit_key="num_experts", default=16)
        top_k = r.int("num_experts_per_tok", limit_key="experts_per_token", default=1)
        if top_k > experts:
            raise _fail("num_experts_per_tok", f"{top_k} is more than the {experts} experts")
        kw |= {
            "num_experts": experts,
            "experts_per_token": top_k,
            "expert_intermediate_size": expert_inner,
            "shared_expert_intermediate_size": expert_inner,
            "moe_layers": moe_layers,
        }
    return kw


# ---------------------------------------------------------------------------------------------
# Youtu
# ---------------------------------------------------------------------------------------------

_YOUTU_DEFAULTS: dict[str, Any] = {
    "vocab_size": 128_256,
    "hidden_size": 2048,
    "intermediate_size": 6144,
    "num_hidden_layers": 32,
    "num_attention_heads": 16,
    "kv_lora_rank": 512,
    "q_lora_rank": 1536,
    "qk_rope_head_dim": 64,
    "v_head_dim": 128,
    "qk_nope_head_dim": 128,
    "max_position_embeddings": 131_072,
    "tie_word_embeddings": True,
    "attention_bias": False,
}
# DeepseekV3Config fields that YoutuConfig removes: the model is dense whatever they say.
_YOUTU_IGNORED = frozenset(
    {
        "n_shared_experts", "n_routed_experts", "num_experts_per_tok", "first_k_dense_replace",
        "moe_intermediate_size", "num_local_experts", "num_experts", "mlp_layer_types", "head_dim",
    }
)  # fmt: skip


def read_youtu(r: _Reader, cfg: dict, family: str, name: str) -> dict[str, Any]:
    """Tencent Youtu-LLM (transformers models/youtu/modeling_youtu.py: YoutuAttention, which is
    DeepseekV3Attention, YoutuMLP, YoutuDecoderLayer, YoutuModel).

    DeepSeek-V3's multi-head latent attention (q_lora_rank null: a plain q_proj; attention_bias on
    q_a_proj, kv_a_proj_with_mqa and o_proj) caching the kv_lora_rank latent and the RoPE key, in a
    Llama decoder with a dense SwiGLU MLP in every layer; embeddings tied by default.
    """
    for key in ("sliding_window", "layer_types", "attention_chunk_size"):
        if cfg.get(key) is not None:
            # LlamaModel's DynamicCache would read it and cap the latent cache: not modelled.
            raise _fail(key, "is not a Youtu field: its effect on the cache is not modelled")
    if "q_lora_rank" in cfg and cfg["q_lora_rank"] == 0:
        raise _fail("q_lora_rank", "0 builds empty query projections; use null for no compression")
    plain = {k: v for k, v in cfg.items() if k not in _YOUTU_IGNORED}
    for key, value in _YOUTU_DEFAULTS.items():
        if key not in plain:
            plain[key] = value
    # MLA expands the latent to every query head: num_key_value_heads sizes nothing.
    plain["num_key_value_heads"] = plain["num_attention_heads"]
    kw = _read_standard(_Reader(plain), plain, "deepseek_v3", name)
    kw["family"] = family
    return kw


# ---------------------------------------------------------------------------------------------
# Laguna
# ---------------------------------------------------------------------------------------------


def read_laguna(r: _Reader, cfg: dict, family: str, name: str) -> dict[str, Any]:
    """Poolside Laguna (transformers models/laguna/modeling_laguna.py: LagunaAttention,
    LagunaSparseMoeBlock, LagunaTopKRouter, LagunaExperts, LagunaMLP, LagunaDecoderLayer).

    Each layer has its own query heads (num_attention_heads_per_layer) over shared KV heads, q/k
    RMSNorm over head_dim, attention_bias on q, k, v and o, and a softplus output gate g_proj of one
    number per head (gating true or "per-head") or per head channel. Sliding or full attention from
    layer_types. mlp_layer_types picks a dense MLP (intermediate_size) or an MoE: routed experts of
    moe_intermediate_size, a router with a learned score-correction bias, one shared expert of
    shared_expert_intermediate_size.
    """
    if r.bool("moe_apply_router_weight_on_input", default=False):
        raise _fail("moe_apply_router_weight_on_input", "true is not supported by transformers' Laguna")
    hidden = r.int("hidden_size", limit_key="hidden_size", default=2048)
    layers = r.int("num_hidden_layers", limit_key="num_layers", default=40)
    heads = r.int("num_attention_heads", limit_key="num_heads", default=48)
    kv_heads = r.int("num_key_value_heads", limit_key="num_kv_heads", default=8)
    head_dim = r.int("head_dim", limit_key="head_dim", default=128)
    bias = r.bool("attention_bias", default=False)
    gating = cfg.get("gating", True)
    if not isinstance(gating, (bool, str)):
        raise _fail("gating", f'must be true/false, "per-head" or "per-element", got {gating!r}')
    per_head = gating is True or gating == "per-head"  # anything else gates every head channel
    if cfg.get("num_attention_heads_per_layer") is None:
        layer_heads = [heads] * layers
    else:
        layer_heads = _positive_list(r, "num_attention_heads_per_layer", layers, "num_heads")
    attention = []
    for i, q_heads in enumerate(layer_heads):
        _heads_divide(q_heads, kv_heads, "num_attention_heads_per_layer", i)
        q_out, kv_out = q_heads * head_dim, kv_heads * head_dim
        params = 2 * hidden * q_out + 2 * hidden * kv_out + 2 * head_dim  # q, o, k, v; q/k norms
        params += (q_out + 2 * kv_out + hidden) if bias else 0
        params += hidden * (q_heads if per_head else q_out)  # g_proj
        attention.append(params)

    layer_types = kinds_list(
        r, "layer_types", layers, ("full_attention", "sliding_attention"), default=["full_attention"] * layers
    )
    sliding = tuple(i for i, t in enumerate(layer_types) if t == "sliding_attention")
    experts = r.int("num_experts", limit_key="num_experts", default=256)
    top_k = r.int("num_experts_per_tok", limit_key="experts_per_token", default=8)
    if top_k > experts:
        raise _fail("num_experts_per_tok", f"{top_k} is more than the {experts} experts")
    kw: dict[str, Any] = {
        "family": family,
        "name": name,
        "hidden_size": hidden,
        "num_layers": layers,
        "num_heads": max(layer_heads),
        "num_kv_heads": kv_heads,
        "head_dim": head_dim,
        "intermediate_size": r.int("intermediate_size", limit_key="intermediate_size", default=8192),
        "vocab_size": r.int("vocab_size", limit_key="vocab_size", default=100_352),
        "tie_word_embeddings": r.bool("tie_word_embeddings", default=False),
        "qkv_bias": bias,
        "o_bias": bias,
        "qk_norm": "rms",
        "qk_norm_dim": head_dim,
        "max_positions": r.int(
            "max_position_embeddings", limit_key="max_positions", default=131_072, minimum=0
        ),
        "layer_heads": tuple(layer_heads),
        "layer_attention_params": tuple(attention),
        "num_experts": experts,
        "experts_per_token": top_k,
        "expert_intermediate_size": r.int(
            "moe_intermediate_size", limit_key="expert_intermediate_size", default=512
        ),
        "shared_expert_intermediate_size": r.int(
            "shared_expert_intermediate_size",
            limit_key="shared_expert_intermediate_size",
            default=512,
            minimum=0,
        ),
        "router_bias": True,  # gate.e_score_correction_bias is a parameter
        "moe_layers": _sparse_layers(r, layers, 1),
    }
    if sliding:
        kw |= {"sliding_window": _window(r, 512), "sliding_layers": sliding}
    return kw


# ---------------------------------------------------------------------------------------------
# MiMo-V2-Flash
# ---------------------------------------------------------------------------------------------


def read_mimo_v2_flash(r: _Reader, cfg: dict, family: str, name: str) -> dict[str, Any]:
    """Xiaomi MiMo-V2-Flash (transformers models/mimo_v2_flash/modeling_mimo_v2_flash.py:
    MiMoV2FlashAttention, MiMoV2FlashMoE, MiMoV2FlashTopkRouter, MiMoV2FlashExperts,
    MiMoV2FlashDecoderLayer).

    Keys of head_dim, values of v_head_dim. Sliding layers have twice num_key_value_heads and one
    learned attention-sink logit per query head; attention_bias on q, k and v (never o). The window
    is sliding_window, or sliding_window_size + 1 when given. mlp_layer_types picks a dense MLP or
    an MoE of n_routed_experts (router without a learned bias: e_score_correction_bias is a
    buffer) and no shared expert.
    """
    hidden = r.int("hidden_size", limit_key="hidden_size", default=4096)
    layers = r.int("num_hidden_layers", limit_key="num_layers", default=48)
    heads = r.int("num_attention_heads", limit_key="num_heads", default=64)
    kv_heads = r.int("num_key_value_heads", limit_key="num_kv_heads", default=4)
    head_dim = r.int("head_dim", limit_key="head_dim", default=192)
    v_dim = r.int("v_head_dim", limit_key="head_dim", default=128)
    bias = r.bool("attention_bias", default=False)
    default_types = [
        "full_attention" if (i == 0 or not (i + 1) % 6) else "sliding_attention" for i in range(layers)
    ]
    layer_types = kinds_list(
        r, "layer_types", layers, ("full_attention", "sliding_attention"), default=default_types
    )
    attention, kv_elements, layer_kv = [], [], []
    for i, kind in enumerate(layer_types):
        swa = kind == "sliding_attention"
        kv = 2 * kv_heads if swa else kv_heads
        _heads_divide(heads, kv, "num_key_value_heads", i)
        params = hidden * heads * head_dim + hidden * kv * (head_dim + v_dim) + heads * v_dim * hidden
        params += (heads * head_dim + kv * (head_dim + v_dim)) if bias else 0
        params += heads if swa else 0  # sinks
        attention.append(params)
        kv_elements.append(kv * (head_dim + v_dim))
        layer_kv.append(kv)
    experts = r.int("n_routed_experts", "num_local_experts", limit_key="num_experts", default=256)
    top_k = r.int("num_experts_per_tok", limit_key="experts_per_token", default=8)
    if top_k > experts:
        raise _fail("num_experts_per_tok", f"{top_k} is more than the {experts} experts")
    kw: dict[str, Any] = {
        "family": family,
        "name": name,
        "hidden_size": hidden,
        "num_layers": layers,
        "num_heads": heads,
        "num_kv_heads": kv_heads,
        "head_dim": head_dim,
        "intermediate_size": r.int("intermediate_size", limit_key="intermediate_size", default=16_384),
        "vocab_size": r.int("vocab_size", limit_key="vocab_size", default=152_576),
        "tie_word_embeddings": r.bool("tie_word_embeddings", default=False),
        "qkv_bias": bias,
        "max_positions": r.int(
            "max_position_embeddings", limit_key="max_positions", default=131_072, minimum=0
        ),
        "layer_kv_heads": tuple(layer_kv),
        "layer_attention_params": tuple(attention),
        "layer_kv_elements": tuple(kv_elements),
        "num_experts": experts,
        "experts_per_token": top_k,
        "expert_intermediate_size": r.int(
            "moe_intermediate_size", limit_key="expert_intermediate_size", default=2048
        ),
        "moe_layers": _sparse_layers(r, layers, 1),
    }
    sliding = tuple(i for i, t in enumerate(layer_types) if t == "sliding_attention")
    if sliding:
        if r.present("sliding_window_size"):
            window = r.int("sliding_window_size", limit_key="sliding_window") + 1
        else:
            window = _window(r, 129)
        kw |= {"sliding_window": window, "sliding_layers": sliding}
    return kw


# ---------------------------------------------------------------------------------------------
# Hy V4
# ---------------------------------------------------------------------------------------------


def read_hy_v4(r: _Reader, cfg: dict, family: str, name: str) -> dict[str, Any]:
    """Tencent Hy V4 (transformers models/hy_v4/modeling_hy_v4.py: HYV4Attention, HYV4Indexer,
    HYV4HyperConnection, HYV4HyperHead, HYV4MoE, HYV4DecoderLayer, HYV4Model).

    DeepSeek-V3.2-style latent attention (q_lora_rank required; attention_bias on q_a_proj,
    kv_a_proj_with_mqa and o_proj) with a sigmoid output gate of v_head_dim per head and one sink
    logit per head. Layers whose indexer_types entry is "full" carry a DSA indexer (wq_b from the
    query latent, wk, a LayerNorm over index_head_dim, weights_proj) and cache its key beside the
    latent; "shared" layers reuse the previous full layer's top-k. Each layer has two
    hyper-connections over hc_mult streams; the model a hyper-head. MoE as DeepSeek-V3 (routed
    experts, a router whose correction bias is a buffer, n_shared_experts shared experts).
    """
    hidden = r.int("hidden_size", limit_key="hidden_size", default=2816)
    layers = r.int("num_hidden_layers", limit_key="num_layers", default=34)
    heads = r.int("num_attention_heads", limit_key="num_heads", default=32)
    bias = r.bool("attention_bias", default=False)
    if "q_lora_rank" in cfg and cfg["q_lora_rank"] is None:
        raise _fail("q_lora_rank", "is null: Hy V4's attention always compresses the query")
    q_rank = r.int("q_lora_rank", limit_key="lora_rank", default=1536)
    kv_rank = r.int("kv_lora_rank", limit_key="lora_rank", default=512)
    nope = r.int("qk_nope_head_dim", limit_key="head_dim", default=192)
    rope = r.int("qk_rope_head_dim", limit_key="head_dim", default=64)
    v_dim = r.int("v_head_dim", limit_key="head_dim", default=256)
    index_dim = r.int("index_head_dim", limit_key="head_dim", default=128)
    index_heads = r.int("index_n_heads", limit_key="num_heads", default=16)
    hc = r.int("hc_mult", limit_key="num_heads", default=4)
    if index_dim < rope:
        raise _fail("index_head_dim", f"{index_dim} is smaller than qk_rope_head_dim ({rope})")

    # "deepseek_sparse_attention" is the legacy name transformers maps to "indexed_attention".
    kinds_list(r, "layer_types", layers, ("indexed_attention", "deepseek_sparse_attention"))
    default_indexers = ["full" if i == 0 or (i - 1) % 4 == 0 else "shared" for i in range(layers)]
    indexers = kinds_list(r, "indexer_types", layers, ("full", "shared"), default=default_indexers)
    if indexers[0] == "shared":
        raise _fail("indexer_types", "the first layer has no earlier indexer to share")

    mla = (
        hidden * q_rank + (q_rank if bias else 0) + q_rank  # q_a_proj, q_a_layernorm
        + q_rank * heads * (nope + rope)  # q_b_proj
        + hidden * (kv_rank + rope) + ((kv_rank + rope) if bias else 0) + kv_rank  # kv_a, its norm
        + kv_rank * heads * (nope + v_dim)  # kv_b_proj
        + heads * v_dim * hidden + (hidden if bias else 0)  # o_proj
        + hidden * heads * v_dim + heads  # gate_proj, sinks
    )  # fmt: skip
    indexer = q_rank * index_heads * index_dim + hidden * index_dim + 2 * index_dim + hidden * index_heads
    attention = tuple(mla + (indexer if kind == "full" else 0) for kind in indexers)
    kv_elements = tuple(kv_rank + rope + (index_dim if kind == "full" else 0) for kind in indexers)
    # Two hyper-connections per layer (fn, base, scale) and the hyper-head (hc_fn, hc_base, hc_scale).
    hyper = layers * 2 * (2 * hc * hc * hidden + 2 * hc + 2) + hc * hc * hidden + hc + 1

    experts = r.int("n_routed_experts", "num_local_experts", limit_key="num_experts", default=256)
    top_k = r.int("num_experts_per_tok", limit_key="experts_per_token", default=8)
    if top_k > experts:
        raise _fail("num_experts_per_tok", f"{top_k} is more than the {experts} experts")
    return {
        "family": family,
        "name": name,
        "hidden_size": hidden,
        "num_layers": layers,
        "num_heads": heads,
        "num_kv_heads": heads,
        "head_dim": rope,
        "intermediate_size": r.int("intermediate_size", limit_key="intermediate_size", default=6912),
        "vocab_size": r.int("vocab_size", limit_key="vocab_size", default=120_832),
        "tie_word_embeddings": r.bool("tie_word_embeddings", default=False),
        "qkv_bias": bias,
        "o_bias": bias,
        "max_positions": r.int(
            "max_position_embeddings", limit_key="max_positions", default=262_144, minimum=0
        ),
        "q_lora_rank": q_rank,
        "kv_lora_rank": kv_rank,
        "qk_nope_head_dim": nope,
        "qk_rope_head_dim": rope,
        "v_head_dim": v_dim,
        "layer_kinds": ("mla",) * layers,
        "layer_attention_params": attention,
        "layer_kv_elements": kv_elements,
        "other_params": hyper,
        "num_experts": experts,
        "experts_per_token": top_k,
        "expert_intermediate_size": r.int(
            "moe_intermediate_size", limit_key="expert_intermediate_size", default=768
        ),
        "num_shared_experts": r.int("n_shared_experts", limit_key="num_shared_experts", default=1, minimum=0),
        "moe_layers": _sparse_layers(r, layers, 1),
    }


READERS = {
    "gemma4_text": read_gemma4,
    "gemma4_unified_text": read_gemma4,
    "gemma3n_text": read_gemma3n,
    "llama4_text": read_llama4_text,
    "youtu": read_youtu,
    "laguna": read_laguna,
    "mimo_v2_flash": read_mimo_v2_flash,
    "hy_v4": read_hy_v4,
}
