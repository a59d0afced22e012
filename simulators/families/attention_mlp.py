"""Decoders whose layers are attention + MLP (or MoE), wired or spelled their own way: AFMoE (Arcee
Trinity), Beam, BioGPT, Cohere Compass (North), CPM-Ant, DBRX, Doge, Flint, GPT-Neo, Hunyuan (dense
and MoE), Ministral, Nemotron, MPT, OpenAI GPT, HRM-Text and JetMoE.

Each reader starts from ``_read_standard`` with the closest family (or writes the fields out
where the family's conventions differ too much) and changes what the transformers modelling file
named in its docstring does differently. Fields a config class derives in ``__post_init__`` when
they are absent (``layer_types``, ``mlp_only_layers``, ...) are derived here the same way, with
the config class's defaults, before the standard reader sees the config.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from simulators.model_config import _fail, _read_standard, _Reader, _sparse_layers

_MOE_KEYS = (
    "num_experts",
    "experts_per_token",
    "expert_intermediate_size",
    "moe_layers",
    "num_shared_experts",
    "shared_expert_intermediate_size",
    "shared_expert_gate",
    "router_bias",
)


def _without(kw: dict[str, Any], keys: tuple[str, ...]) -> dict[str, Any]:
    return {k: v for k, v in kw.items() if k not in keys}


def _filled(
    cfg: Mapping[str, Any], absent: Mapping[str, Any], derived: Mapping[str, Callable[[], Any]]
) -> dict:
    """The config with the config class's defaults: ``absent`` where the key is missing, and
    ``derived`` (computed as ``__post_init__`` does) where it is missing or null."""
    out = dict(cfg)
    for key, value in absent.items():
        out.setdefault(key, value)
    for key, make in derived.items():
        if out.get(key) is None:
            out[key] = make()
    return out


def _layer_count(cfg: Mapping[str, Any], *names: str, default: int) -> int:
    return _Reader(cfg).int(*names, limit_key="num_layers", default=default)


def _need_window(kw: dict[str, Any], cfg: Mapping[str, Any]) -> None:
    """transformers builds a sliding-window layer only with a window: refuse a config that names
    sliding layers but sets none (its model cannot be built)."""
    types = cfg.get("layer_types") or []
    if "sliding_attention" in types and not kw.get("sliding_window"):
        raise _fail("sliding_window", "is missing or 0, but layer_types has sliding-window layers")


def _standard(cfg: dict, family: str, name: str) -> dict[str, Any]:
    return _read_standard(_Reader(cfg), cfg, family, name)


# ---------------------------------------------------------------------------------------------


def read_afmoe(r: _Reader, cfg: dict, family: str, name: str) -> dict[str, Any]:
    """Arcee AFMoE / Trinity (transformers models/afmoe/modeling_afmoe.py: AfmoeAttention,
    AfmoeDecoderLayer, AfmoeSparseMoeBlock, AfmoeTokenChoiceRouter).

    Llama attention (attention_bias on q, k, v, o) with RMSNorm over head_dim on q and k and an
    output gate ``gate_proj`` (hidden × heads·head_dim, no bias); four RMSNorms per layer (pre
    and post attention, pre and post MLP). The first ``num_dense_layers`` layers have a SwiGLU
    MLP of intermediate_size; the others a router (no bias), ``num_experts`` SwiGLU experts of
    moe_intermediate_size, one shared SwiGLU of moe_intermediate_size × num_shared_experts and an
    ``expert_bias`` parameter (one per expert). Sliding and full layers from ``layer_types``
    (default: every global_attn_every_n_layers-th layer full).
    """
    layers = _layer_count(cfg, "num_hidden_layers", default=32)
    every = r.int("global_attn_every_n_layers", limit_key="num_layers", default=4)
    cfg = _filled(
        cfg,
        {"head_dim": 128, "sliding_window": 1024, "intermediate_size": 6144},
        {
            "layer_types": lambda: [
                "sliding_attention" if (i + 1) % every else "full_attention" for i in range(layers)
            ]
        },
    )
    r = _Reader(cfg)
    kw = _without(_standard(cfg, "mistral", name), _MOE_KEYS)
    _need_window(kw, cfg)
    h, heads, head_dim = kw["hidden_size"], kw["num_heads"], kw["head_dim"]
    experts = r.int("num_experts", limit_key="num_experts", default=64)
    dense = r.int("num_dense_layers", limit_key="num_layers", default=1, minimum=0)
    top_k = r.int("num_experts_per_tok", limit_key="experts_per_token", default=6)
    if top_k > experts:
        raise _fail("num_experts_per_tok", f"{top_k} is more than the {experts} experts")
    kw |= {
        "family": family,
        "qk_norm": "rms",
        "qk_norm_dim": head_dim,
        "norms_per_layer": 4,
        "extra_attention_params": layers * h * heads * head_dim,  # gate_proj of every layer
        "num_experts": experts,
        "experts_per_token": top_k,
        "expert_intermediate_size": r.int(
            "moe_intermediate_size", limit_key="expert_intermediate_size", default=1408
        ),
        "num_shared_experts": r.int(
            "num_shared_experts", limit_key="num_shared_experts", default=2, minimum=0
        ),
        "router_bias": True,  # expert_bias: a parameter (requires_grad=False) of num_experts
        "moe_layers": tuple(range(min(dense, layers), layers)),
    }
    return kw


def read_beam(r: _Reader, cfg: dict, family: str, name: str) -> dict[str, Any]:
    """Reflection Beam (transformers models/beam/modeling_beam.py: BeamAttention, BeamMoE,
    BeamTopKRouter, BeamDecoderLayer).

    Llama attention (attention_bias on q, k, v, o) with RMSNorm over head_dim on q and k, an
    output gate ``gate_proj`` (hidden × heads·head_dim, no bias) and a ``gate_bias`` of one value
    per head; four RMSNorms per layer. ``mlp_layer_types`` says which layers are MoE (default:
    the first three dense): a router weight (num_experts × hidden; its score-correction bias is a
    buffer) and ``num_experts`` SwiGLU experts of moe_intermediate_size, no shared expert. Dense
    layers have a SwiGLU MLP of intermediate_size. ``layer_types`` default: every sixth layer and
    the last full attention, the others a sliding window.
    """
    layers = _layer_count(cfg, "num_hidden_layers", default=52)

    def layer_types() -> list[str]:
        types = ["sliding_attention" if (i + 1) % 6 else "full_attention" for i in range(layers)]
        types[-1] = "full_attention"
        return types

    cfg = _filled(
        cfg,
        {"head_dim": 128, "sliding_window": 512, "num_key_value_heads": 8, "intermediate_size": 20480},
        {
            "layer_types": layer_types,
            "mlp_layer_types": lambda: ["dense"] * min(3, layers) + ["sparse"] * (layers - min(3, layers)),
        },
    )
    r = _Reader(cfg)
    kw = _without(_standard(cfg, "mistral", name), _MOE_KEYS)
    _need_window(kw, cfg)
    h, heads, head_dim = kw["hidden_size"], kw["num_heads"], kw["head_dim"]
    experts = r.int("num_experts", limit_key="num_experts", default=256)
    top_k = r.int("num_experts_per_tok", limit_key="experts_per_token", default=8)
    if top_k > experts:
        raise _fail("num_experts_per_tok", f"{top_k} is more than the {experts} experts")
    kw |= {
        "family": family,
        "qk_norm": "rms",
        "qk_norm_dim": head_dim,
        "norms_per_layer": 4,
        # gate_proj (hidden × heads·head_dim) and gate_bias (one per head) of every layer
        "extra_attention_params": layers * (h * heads * head_dim + heads),
        "num_experts": experts,
        "experts_per_token": top_k,
        "expert_intermediate_size": r.int(
            "moe_intermediate_size", limit_key="expert_intermediate_size", default=2560
        ),
        "moe_layers": _sparse_layers(r, layers, min(3, layers)),
    }
    return kw


def read_biogpt(r: _Reader, cfg: dict, family: str, name: str) -> dict[str, Any]:
    """Microsoft BioGPT (transformers models/biogpt/modeling_biogpt.py: BioGptAttention,
    BioGptDecoderLayer, BioGptLearnedPositionalEmbedding, BioGptForCausalLM).

    GPT-2's layer written as separate Linears: q, k, v and out_proj with biases, a GELU MLP
    (fc1, fc2) of intermediate_size with biases, two LayerNorms per layer and a final one. The
    learned position table has max_position_embeddings + 2 rows (OPT's offset); the output
    projection is tied to the token embedding unless tie_word_embeddings is false. Full
    multi-head attention (head size hidden_size / heads).
    """
    cfg = _filled(cfg, {"intermediate_size": 4096, "max_position_embeddings": 1024}, {})
    r = _Reader(cfg)
    kw = _standard(cfg, "gpt2", name)
    heads = kw["num_heads"]
    if kw["hidden_size"] % heads:
        raise _fail("num_attention_heads", f"must divide hidden_size ({kw['hidden_size']})")
    kw |= {
        "family": family,
        "num_kv_heads": heads,
        "head_dim": kw["hidden_size"] // heads,
        "intermediate_size": r.int("intermediate_size", limit_key="intermediate_size"),
        "learned_positions": r.int("max_position_embeddings", limit_key="max_positions") + 2,
        "tie_word_embeddings": r.bool("tie_word_embeddings", default=True),
    }
    return kw


def read_cohere_compass_text(r: _Reader, cfg: dict, family: str, name: str) -> dict[str, Any]:
    """Cohere Compass / North text model (transformers models/cohere_compass/
    modeling_cohere_compass.py: CohereCompassAttention, CohereCompassDecoderLayer,
    CohereCompassLayerNorm, CohereCompassForCausalLM).

    Cohere's parallel block: one weight-only LayerNorm per layer feeds both the attention
    (attention_bias on q, k, v, o; no q/k norms) and the SwiGLU MLP (no biases); a final norm;
    the LM head tied by default. The config class always sets head_dim = hidden_size // heads,
    whatever the config says. Sliding-window layers from ``layer_types`` (default: every layer
    full attention, as CohereCompassTextConfig.__post_init__ sets it).
    """
    layers = _layer_count(cfg, "num_hidden_layers", default=40)
    hidden = r.int("hidden_size", limit_key="hidden_size", default=8192)
    heads = r.int("num_attention_heads", limit_key="num_heads", default=64)
    cfg = _filled(
        cfg,
        {"sliding_window": 4096, "intermediate_size": 22528},
        {"layer_types": lambda: ["full_attention"] * layers},
    )
    cfg["head_dim"] = hidden // heads  # CohereCompassTextConfig.__post_init__ overwrites it
    r = _Reader(cfg)
    kw = _without(_standard(cfg, "mistral", name), _MOE_KEYS)
    _need_window(kw, cfg)
    kw |= {
        "family": family,
        "norms_per_layer": 1,
        "parallel_attention": True,
        "tie_word_embeddings": r.bool("tie_word_embeddings", default=True),
    }
    return kw


def read_cpmant(r: _Reader, cfg: dict, family: str, name: str) -> dict[str, Any]:
    """OpenBMB CPM-Ant (transformers models/cpmant/modeling_cpmant.py: CpmAntAttention,
    CpmAntDenseGatedACT, CpmAntFeedForward, CpmAntSegmentPositionEmbedding, CpmAntModel,
    CpmAntForCausalLM).

    Pre-norm layers with weight-only LayerNorms (before attention, before the FFN; one more at
    the output): multi-head attention of num_attention_heads × dim_head without biases, a gated
    GELU FFN of dim_ff without biases. The input table has vocab_size + prompt_types ×
    prompt_length rows, beside a segment table (segment_types rows) and a relative position bias
    of (segment_types² + position_bias_num_buckets) × heads; the LM head is its own matrix of
    vocab_size rows (never tied). The forward prepends prompt_length prompt tokens, so every
    layer caches C + prompt_length tokens: the prompt's K and V are a fixed part of the cache.
    """
    hidden = r.int("hidden_size", limit_key="hidden_size", default=4096)
    heads = r.int("num_attention_heads", limit_key="num_heads", default=32)
    head_dim = r.int("dim_head", limit_key="head_dim", default=128)
    layers = r.int("num_hidden_layers", limit_key="num_layers", default=48)
    vocab = r.int("vocab_size", limit_key="vocab_size", default=30720)
    prompt_types = r.int("prompt_types", limit_key="vocab_size", default=32, minimum=0)
    prompt_length = r.int("prompt_length", limit_key="max_positions", default=32, minimum=0)
    segments = r.int("segment_types", limit_key="vocab_size", default=32, minimum=0)
    buckets = r.int("position_bias_num_buckets", limit_key="max_positions", default=512, minimum=0)
    kv_elements = 2 * heads * head_dim
    return {
        "family": family,
        "name": name,
        "hidden_size": hidden,
        "num_layers": layers,
        "num_heads": heads,
        "num_kv_heads": heads,
        "head_dim": head_dim,
        "intermediate_size": r.int("dim_ff", limit_key="intermediate_size", default=10240),
        "vocab_size": vocab,
        "tie_word_embeddings": False,  # lm_head is a matrix of its own (_tied_weights_keys is empty)
        "gated_mlp": True,  # w_0 (GELU) × w_1, then w_out
        # prompt rows of the input table, the segment table and the relative position bias
        "other_params": prompt_types * prompt_length * hidden
        + segments * hidden
        + (segments * segments + buckets) * heads,
        # the prompt_length prompt tokens' K and V in every layer (bf16), whatever the context
        "layer_state_bytes": (prompt_length * kv_elements * 2,) * layers,
    }


def read_dbrx(r: _Reader, cfg: dict, family: str, name: str) -> dict[str, Any]:
    """Databricks DBRX (transformers models/dbrx/modeling_dbrx.py: DbrxAttention, DbrxExpertGLU,
    DbrxRouter, DbrxNormAttentionNorm, DbrxModel, DbrxForCausalLM).

    Every layer: a weight-only LayerNorm, a fused Wqkv (hidden → hidden + 2 × kv_n_heads ×
    head_dim, head_dim = d_model // n_heads) and out_proj without biases, a second weight-only
    LayerNorm and an MoE of ``moe_num_experts`` SwiGLU experts (w1, v1, w2) of ffn_hidden_size
    with a router (no bias); no dense MLP, no shared expert. Final weight-only LayerNorm; the LM
    head is never tied. Attention and FFN sizes live in the ``attn_config`` and ``ffn_config``
    sub-dicts.
    """
    hidden = r.int("d_model", "hidden_size", limit_key="hidden_size", default=2048)
    heads = r.int("n_heads", "num_attention_heads", limit_key="num_heads", default=16)
    layers = r.int("n_layers", "num_hidden_layers", limit_key="num_layers", default=24)
    sub: dict[str, _Reader] = {}
    for key in ("attn_config", "ffn_config"):
        value = cfg.get(key) or {}
        if not isinstance(value, Mapping):
            raise _fail(key, "must be an object of attention / FFN settings")
        sub[key] = _Reader(value)
    kv_heads = sub["attn_config"].int("kv_n_heads", limit_key="num_kv_heads", default=1)
    if heads % kv_heads:
        raise _fail("attn_config.kv_n_heads", f"must divide n_heads ({heads})")
    ffn = sub["ffn_config"]
    width = ffn.int("ffn_hidden_size", limit_key="expert_intermediate_size", default=3584)
    experts = ffn.int("moe_num_experts", limit_key="num_experts", default=4)
    top_k = ffn.int("moe_top_k", limit_key="experts_per_token", default=1)
    if top_k > experts:
        raise _fail("ffn_config.moe_top_k", f"{top_k} is more than the {experts} experts")
    if r.bool("tie_word_embeddings", default=False):
        raise _fail("tie_word_embeddings", "DBRX does not support a tied LM head")
    return {
        "family": family,
        "name": name or str(cfg.get("_name_or_path") or ""),
        "hidden_size": hidden,
        "num_layers": layers,
        "num_heads": heads,
        "num_kv_heads": kv_heads,
        "head_dim": hidden // heads,
        "intermediate_size": width,
        "vocab_size": r.int("vocab_size", limit_key="vocab_size", default=32000),
        "max_positions": r.int("max_seq_len", limit_key="max_positions", default=2048),
        "num_experts": experts,
        "experts_per_token": top_k,
        "expert_intermediate_size": width,
        "moe_layers": tuple(range(layers)),
    }


def read_doge(r: _Reader, cfg: dict, family: str, name: str) -> dict[str, Any]:
    """SmallDoge Doge (transformers models/doge/modeling_doge.py: DogeAttention, DogeMLP,
    DogeDecoderLayer).

    Llama attention (attention_bias on q, k, v, o) with RMSNorm over head_dim on q and k, plus
    the dynamic-mask parameters: ``A`` (one per KV head) and ``dt_proj`` (KV heads × head_dim →
    KV heads, attention_bias). Each layer has two RMSNorms and two learned residual scales
    (input_residual, post_attention_residual, hidden_size each), a SwiGLU MLP with mlp_bias.
    The cache is the standard K/V (keep_window_size only masks); every layer slides when
    sliding_window is set. The cross-domain MoE (is_moe) is refused.
    """
    if r.bool("is_moe", default=False):
        raise _fail(
            "is_moe",
            "Doge's cross-domain MoE (single-neuron experts held in two embedding tables, a "
            "product-key router) is not modelled: the calculator's experts are MLPs",
        )
    # num_experts and num_experts_per_tok size only the MoE: read without them.
    plain = {k: v for k, v in cfg.items() if k not in ("num_experts", "num_experts_per_tok")}
    kw = _standard(plain, "mistral", name)
    layers, kv, head_dim = kw["num_layers"], kw["num_kv_heads"], kw["head_dim"]
    bias = r.bool("attention_bias", default=False)
    kw |= {
        "family": family,
        "mlp_bias": r.bool("mlp_bias", default=False),
        "qk_norm": "rms",
        "qk_norm_dim": head_dim,
        "norms_per_layer": 4,  # two RMSNorms and two residual scales, hidden_size each
        # A and dt_proj of every layer
        "extra_attention_params": layers * (kv + kv * head_dim * kv + (kv if bias else 0)),
    }
    return kw


def read_flint(r: _Reader, cfg: dict, family: str, name: str) -> dict[str, Any]:
    """RecursiveSI Flint (transformers models/flint/modeling_flint.py: FlintAttention,
    FlintSparseMoeBlock, FlintTopKRouter, FlintDecoderLayer).

    Llama attention (attention_bias on q, k, v, o) with RMSNorm over head_dim on q and k and one
    learned attention-sink logit per head (``sinks``); two RMSNorms per layer. A layer is MoE
    when it is not in ``mlp_only_layers`` (default [0, 1]), num_experts > 0 and (i + 1) %
    decoder_sparse_step == 0: a router (no bias), ``num_experts`` SwiGLU experts of
    moe_intermediate_size and one ungated shared SwiGLU of shared_expert_intermediate_size;
    other layers have a SwiGLU MLP of intermediate_size. ``layer_types`` default: the first two
    layers, every fourth from layer 1 and the last full, the others a sliding window.
    """
    layers = _layer_count(cfg, "num_hidden_layers", default=49)
    cfg = _filled(
        cfg,
        {"head_dim": 128, "sliding_window": 513, "num_key_value_heads": 4, "intermediate_size": 6144},
        {
            "layer_types": lambda: [
                "full_attention" if i < 2 or i % 4 == 1 or i == layers - 1 else "sliding_attention"
                for i in range(layers)
            ],
            "mlp_only_layers": lambda: [0, 1],
        },
    )
    r = _Reader(cfg)
    kw = _without(_standard(cfg, "mistral", name), _MOE_KEYS)
    _need_window(kw, cfg)
    head_dim, heads = kw["head_dim"], kw["num_heads"]
    kw |= {
        "family": family,
        "qk_norm": "rms",
        "qk_norm_dim": head_dim,
        "extra_attention_params": layers * heads,  # sinks
    }
    experts = r.int("num_experts", limit_key="num_experts", default=256, minimum=0)
    if not experts:
        return kw
    top_k = r.int("num_experts_per_tok", limit_key="experts_per_token", default=6)
    if top_k > experts:
        raise _fail("num_experts_per_tok", f"{top_k} is more than the {experts} experts")
    step = r.int("decoder_sparse_step", limit_key="num_layers", default=1)
    dense_only = cfg["mlp_only_layers"]
    if not isinstance(dense_only, list) or not all(
        isinstance(i, int) and not isinstance(i, bool) for i in dense_only
    ):
        raise _fail("mlp_only_layers", "must be a list of layer indices")
    kw |= {
        "num_experts": experts,
        "experts_per_token": top_k,
        "expert_intermediate_size": r.int(
            "moe_intermediate_size", limit_key="expert_intermediate_size", default=512
        ),
        "shared_expert_intermediate_size": r.int(
            "shared_expert_intermediate_size",
            limit_key="shared_expert_intermediate_size",
            default=1024,
            minimum=0,
        ),
        "moe_layers": tuple(i for i in range(layers) if i not in dense_only and (i + 1) % step == 0),
    }
    return kw


def read_gpt_neo(r: _Reader, cfg: dict, family: str, name: str) -> dict[str, Any]:
    """EleutherAI GPT-Neo (transformers models/gpt_neo/modeling_gpt_neo.py: GPTNeoSelfAttention,
    GPTNeoMLP, GPTNeoBlock, GPTNeoModel).

    GPT-2's layout with separate q, k, v projections without bias and out_proj with bias; a GELU
    MLP of intermediate_size (default 4 × hidden) with biases; LayerNorms; a learned position
    table of max_position_embeddings; LM head tied by default. ``attention_types`` alternates
    global and local layers, but the local window (window_size) exists only in the attention
    mask: the model's DynamicCache has no sliding layers (the config has no sliding_window or
    layer_types), so every layer keeps the K/V of every token.
    """
    types = cfg.get("attention_types")
    if types is None:
        types = [[["global", "local"], 12]]  # GPTNeoConfig.__post_init__
    expanded: list[str] = []
    try:
        for kinds, count in types:
            if isinstance(count, bool) or not isinstance(count, int) or count < 0:
                raise TypeError
            expanded.extend(list(kinds) * count)
    except (TypeError, ValueError):
        raise _fail("attention_types", 'must be a list of [["global" | "local", ...], repeat]') from None
    unknown = sorted({str(k) for k in expanded} - {"global", "local"})
    if unknown:
        raise _fail("attention_types", f"layers of kind {', '.join(unknown)} are not GPT-Neo's")
    cfg = _filled(cfg, {"max_position_embeddings": 2048}, {})
    kw = _standard(cfg, "gpt2", name)
    if len(expanded) != kw["num_layers"]:
        raise _fail("attention_types", f"gives {len(expanded)} layers for num_layers {kw['num_layers']}")
    heads = kw["num_heads"]
    kw |= {
        "family": family,
        "num_kv_heads": heads,
        "head_dim": kw["hidden_size"] // heads,
        "qkv_bias": False,
    }
    return kw


# Config fields Qwen 3's reader reads that Hunyuan's layers ignore (every layer is full attention;
# the MoE reader reads its own).
_IGNORED_BY_HUNYUAN = (
    "num_experts",
    "num_local_experts",
    "n_routed_experts",
    "moe_num_experts",
    "use_sliding_window",
    "sliding_window",
    "attention_window",
    "layer_types",
    "attention_chunk_size",
)


def _per_layer_list(r: _Reader, name: str, layers: int) -> list[Any] | None:
    """A field that may be one value or a list of one value per layer; ``None`` when absent."""
    value = r.config.get(name)
    if value is None:
        return None
    if isinstance(value, list):
        if len(value) != layers:
            raise _fail(name, f"must be a number or a list with one entry per layer ({layers})")
        return value
    return [value] * layers


def read_hunyuan_v1_dense(r: _Reader, cfg: dict, family: str, name: str) -> dict[str, Any]:
    """Tencent Hunyuan dense (transformers models/hunyuan_v1_dense/modeling_hunyuan_v1_dense.py:
    HunYuanDenseV1Attention, HunYuanDenseV1MLP, HunYuanDenseV1DecoderLayer).

    A Llama layer with RMSNorm over head_dim on q and k (query_layernorm, key_layernorm, as Qwen 3)
    and attention_bias on q, k, v and o; the MLP never has a bias. No sliding window.
    """
    # transformers builds q/k norms and per-layer K/V whatever Hunyuan's own flags say: a
    # checkpoint without them (use_qk_norm false) or sharing K/V across layers (use_cla) has
    # shapes transformers does not build.
    if not r.bool("use_qk_norm", default=True):
        raise _fail("use_qk_norm", "false is not modelled: transformers always builds the q/k norms")
    if r.bool("use_cla", default=False):
        raise _fail("use_cla", "cross-layer K/V sharing is not modelled (transformers does not build it)")
    # Qwen 3's reader would also read MoE and sliding-window fields (Hunyuan's checkpoints write
    # num_experts: 1 or sliding_window), which Hunyuan's attention ignores: read without them.
    plain = {k: v for k, v in cfg.items() if k not in _IGNORED_BY_HUNYUAN}
    kw = _read_standard(_Reader(plain), plain, "qwen3", name)
    kw["family"] = family
    return kw


def read_hunyuan_v1_moe(r: _Reader, cfg: dict, family: str, name: str) -> dict[str, Any]:
    """Tencent Hunyuan MoE (transformers models/hunyuan_v1_moe/modeling_hunyuan_v1_moe.py:
    HunYuanMoEV1Moe, HunYuanMoEV1Gate, HunYuanMoEV1Experts, HunYuanMoEV1MLP).

    The attention is Hunyuan dense's (q/k RMSNorm over head_dim). Every layer's MLP is an MoE:
    a router ``wg`` (hidden × num_experts, no bias), ``num_experts`` SwiGLU experts of
    ``intermediate_size`` and one always-on SwiGLU ``shared_mlp`` of ``intermediate_size`` (no
    gate on it). ``moe_topk`` may be one number or one per layer.
    """
    kw = read_hunyuan_v1_dense(r, cfg, family, name)
    layers, inner = kw["num_layers"], kw["intermediate_size"]
    experts = r.int("num_experts", "num_local_experts", limit_key="num_experts", default=1)
    top_ks = _per_layer_list(r, "moe_topk", layers) or [
        r.int("num_experts_per_tok", limit_key="experts_per_token", default=1)
    ]
    if any(isinstance(k, bool) or not isinstance(k, int) or not 1 <= k <= experts for k in top_ks):
        raise _fail("moe_topk", f"every entry must be an integer from 1 to num_experts ({experts})")
    if len(set(top_ks)) > 1:
        raise _fail("moe_topk", "a different top-k per layer is not modelled (one experts_per_token)")
    # Hunyuan's own checkpoints also write the expert width and shared-expert count per layer;
    # transformers sizes every expert and the one shared MLP from intermediate_size, so a
    # checkpoint that says otherwise has shapes transformers does not build.
    for field in ("moe_intermediate_size",):
        widths = _per_layer_list(r, field, layers)
        if widths is not None and any(w != inner for w in widths):
            raise _fail(field, f"experts of a width other than intermediate_size ({inner}) are not modelled")
    shared = _per_layer_list(r, "num_shared_expert", layers)
    if shared is not None and any(s != 1 for s in shared):
        raise _fail("num_shared_expert", "only one shared MLP per layer is modelled (as transformers builds)")
    if not r.bool("use_mixed_mlp_moe", default=True):
        raise _fail(
            "use_mixed_mlp_moe", "false (no shared MLP) is not modelled: transformers always builds one"
        )
    kw |= {
        "num_experts": experts,
        "experts_per_token": top_ks[0],
        "expert_intermediate_size": inner,
        "shared_expert_intermediate_size": inner,  # shared_mlp: one SwiGLU of intermediate_size
        "moe_layers": tuple(range(layers)),
    }
    return kw


def read_ministral(r: _Reader, cfg: dict, family: str, name: str) -> dict[str, Any]:
    """Ministral (transformers models/ministral/modeling_ministral.py: MinistralAttention,
    MinistralDecoderLayer).

    Mistral's layer (no biases, SwiGLU MLP) with a sliding window per layer from ``layer_types``;
    without it every layer slides when ``sliding_window`` is set (MinistralConfig.__post_init__),
    which is ``_read_sliding``'s convention for Mistral.
    """
    kw = _read_standard(r, cfg, "mistral", name)
    kw["family"] = family
    return kw


def read_nemotron(r: _Reader, cfg: dict, family: str, name: str) -> dict[str, Any]:
    """NVIDIA Nemotron (transformers models/nemotron/modeling_nemotron.py: NemotronAttention,
    NemotronMLP, NemotronLayerNorm1P).

    Llama-style attention (attention_bias on q, k, v and o, partial RoPE, which has no
    parameters) with a non-gated ReLU² MLP (up, down; mlp_bias) and LayerNorm1P norms that keep a
    weight and a bias.
    """
    kw = _read_standard(r, cfg, "llama", name)  # reads head_dim, num_key_value_heads, both biases
    kw |= {"family": family, "gated_mlp": False, "layer_norm": True}
    return kw


def read_openai_gpt(r: _Reader, cfg: dict, family: str, name: str) -> dict[str, Any]:
    """OpenAI GPT-1 (transformers models/openai/modeling_openai.py: Attention, MLP, Block,
    OpenAIGPTModel).

    GPT-2's biased Conv1D layer (c_attn, c_proj, c_fc) with an MLP of 4 × n_embd (no n_inner), a
    learned position table of n_positions rows, post-norm LayerNorms (ln_1, ln_2) and no final
    norm. Its attention keeps no cache: the forward takes no past_key_values and recomputes the
    whole sequence, so the cache is empty whatever the context.
    """
    kw = _read_standard(r, cfg, "gpt2", name)
    layers, hidden = kw["num_layers"], kw["hidden_size"]
    kw |= {
        "family": family,
        "intermediate_size": 4 * hidden,  # MLP(4 * nx, config): n_inner is not read
        "learned_positions": r.int("n_positions", "max_position_embeddings", limit_key="max_positions"),
        "final_norm": False,
        "layer_kv_elements": (0,) * layers,  # no KV cache in this implementation
    }
    return kw


def read_mpt(r: _Reader, cfg: dict, family: str, name: str) -> dict[str, Any]:
    """MosaicML MPT (transformers models/mpt/modeling_mpt.py: MptAttention, MptMLP, MptBlock,
    MptModel).

    Fused Wqkv (d_model → 3 × d_model) and out_proj without bias, every layer multi-head (head
    size d_model / n_heads), a GELU MLP of 4 × d_model without bias, LayerNorms whose bias is
    removed (weight only), ALiBi positions (no parameters) and a final norm_f. transformers reads
    none of attn_type, expansion_ratio, no_bias, qk_ln or learned_pos_emb: a checkpoint whose
    values would change those shapes is refused.
    """
    hidden = r.int("d_model", "hidden_size", limit_key="hidden_size")
    heads = r.int("n_heads", "num_attention_heads", limit_key="num_heads")
    if hidden % heads:
        raise _fail("n_heads", f"d_model ({hidden}) must be divisible by n_heads ({heads})")
    attn = r.config.get("attn_config") or {}
    if not isinstance(attn, dict):
        raise _fail("attn_config", "must be an object")
    if attn.get("attn_type", "multihead_attention") != "multihead_attention":
        raise _fail(
            "attn_config.attn_type", "only multihead_attention is built by transformers' MptAttention"
        )
    if attn.get("alibi", True) is not True:
        raise _fail(
            "attn_config.alibi", "learned positions instead of ALiBi are not built by transformers' MPT"
        )
    if attn.get("qk_ln", False):
        raise _fail("attn_config.qk_ln", "q/k LayerNorms are not built by transformers' MptAttention")
    if r.int("expansion_ratio", limit_key="head_dim", default=4) != 4:
        raise _fail("expansion_ratio", "transformers' MptMLP is always 4 × d_model wide")
    if not r.bool("no_bias", default=True):
        raise _fail("no_bias", "false (biases) is not built by transformers' MPT, which has none")
    layers = r.int("n_layers", "num_hidden_layers", limit_key="num_layers")
    return {
        "family": family,
        "name": name or str(cfg.get("_name_or_path") or ""),
        "hidden_size": hidden,
        "num_layers": layers,
        "num_heads": heads,
        "num_kv_heads": heads,
        "head_dim": hidden // heads,
        "intermediate_size": 4 * hidden,
        "vocab_size": r.int("vocab_size", limit_key="vocab_size"),
        "tie_word_embeddings": r.bool("tie_word_embeddings", default=True),
        "gated_mlp": False,
        "layer_norm": False,  # LayerNorm with bias = None: a weight only
        "max_positions": r.int("max_seq_len", limit_key="max_positions", default=2048),
    }


def read_hrm_text(r: _Reader, cfg: dict, family: str, name: str) -> dict[str, Any]:
    """HRM-Text (transformers models/hrm_text/modeling_hrm_text.py: HrmTextAttention,
    HrmTextStack, HrmTextModel).

    Two stacks (L_module, H_module) of ``num_layers_per_stack`` layers each, run recurrently:
    per high cycle, the L stack ``L_cycles`` times, then the H stack once. Every invocation has a
    cache slot of its own (``num_hidden_layers`` = layers per stack × H_cycles × (L_cycles + 1)),
    so each L-stack layer caches H_cycles × L_cycles copies of its K/V and each H-stack layer
    H_cycles. Attention is multi-head (k, v of num_attention_heads × head_dim) with an extra
    sigmoid gate_proj like q; the RMSNorms have no weight; z_L_init (hidden) is a parameter.
    """
    hidden = r.int("hidden_size", limit_key="hidden_size")
    heads = r.int("num_attention_heads", limit_key="num_heads")
    head_dim = r.int("head_dim", limit_key="head_dim", default=128)
    h_cycles = r.int("H_cycles", limit_key="num_layers", default=2)
    l_cycles = r.int("L_cycles", limit_key="num_layers", default=3)
    slots = r.int("num_hidden_layers", limit_key="num_layers", default=16)
    per_stack = r.optional_int("num_layers_per_stack", limit_key="num_layers")
    if per_stack is None:  # a config before HrmTextConfig.__post_init__: the per-stack count
        per_stack = slots
    elif slots != per_stack * h_cycles * (l_cycles + 1):
        raise _fail(
            "num_hidden_layers",
            f"{slots} cache slots differ from num_layers_per_stack × H_cycles × (L_cycles + 1) "
            f"({per_stack * h_cycles * (l_cycles + 1)}), which the model fills",
        )
    layers = 2 * per_stack  # L_module, then H_module
    bias = r.bool("attention_bias", default=False)
    width = heads * head_dim
    # q, k, v, gate: hidden → heads × head_dim; o: heads × head_dim → hidden (+ biases).
    attention = 5 * hidden * width + ((4 * width + hidden) if bias else 0)
    kv = 2 * width  # K and V per token, per cache slot
    return {
        "family": family,
        "name": name or str(cfg.get("_name_or_path") or ""),
        "hidden_size": hidden,
        "num_layers": layers,
        "num_heads": heads,
        "num_kv_heads": heads,
        "head_dim": head_dim,
        "intermediate_size": r.int("intermediate_size", limit_key="intermediate_size", default=4096),
        "vocab_size": r.int("vocab_size", limit_key="vocab_size", default=151808),
        "tie_word_embeddings": r.bool("tie_word_embeddings", default=False),
        "mlp_bias": r.bool("mlp_bias", default=False),
        "norm_params": False,  # HrmTextRMSNorm has no weight
        "final_norm": False,
        "layer_attention_params": (attention,) * layers,
        "layer_kv_elements": (kv * h_cycles * l_cycles,) * per_stack + (kv * h_cycles,) * per_stack,
        "other_params": hidden,  # z_L_init
        "max_positions": r.int("max_position_embeddings", limit_key="max_positions", default=0, minimum=0),
    }


def read_jetmoe(r: _Reader, cfg: dict, family: str, name: str) -> dict[str, Any]:
    """JetMoE (transformers models/jetmoe/modeling_jetmoe.py: JetMoeAttention, JetMoeMoA,
    JetMoeMoE, JetMoeParallelExperts, JetMoeTopKGating).

    Mixture of attention: per layer a shared kv_proj (hidden → 2 × kv_heads × kv_channels, no
    bias), ``num_local_experts`` query/output expert pairs (hidden ↔ kv_heads × kv_channels), a
    router (hidden × experts) and an output bias (hidden); top_k experts give top_k × kv_heads
    query heads. Mixture of experts: ``num_local_experts`` SwiGLU experts of intermediate_size
    (fused input_linear of 2 × width), a router and an output bias. The cache holds K/V of
    kv_heads × kv_channels.
    """
    hidden = r.int("hidden_size", limit_key="hidden_size")
    layers = r.int("num_hidden_layers", limit_key="num_layers")
    experts = r.int("num_local_experts", limit_key="num_experts", default=8)
    top_k = r.int("num_experts_per_tok", limit_key="experts_per_token", default=2)
    if top_k > experts:
        raise _fail("num_experts_per_tok", f"{top_k} is more than the {experts} experts")
    kv_heads = r.int("num_key_value_heads", limit_key="num_kv_heads", default=16)
    head_dim = r.int("kv_channels", "head_dim", limit_key="head_dim", default=128)
    inner = r.int("intermediate_size", limit_key="intermediate_size", default=5632)
    width = kv_heads * head_dim
    # MoA experts (input_linear + output_linear), its router and bias, and kv_proj.
    attention = 2 * experts * hidden * width + hidden * experts + hidden + 2 * hidden * width
    return {
        "family": family,
        "name": name or str(cfg.get("_name_or_path") or ""),
        "hidden_size": hidden,
        "num_layers": layers,
        "num_heads": kv_heads * top_k,  # JetMoeConfig: num_attention_heads = kv heads × top_k
        "num_kv_heads": kv_heads,
        "head_dim": head_dim,
        "intermediate_size": inner,
        "vocab_size": r.int("vocab_size", limit_key="vocab_size", default=32000),
        "tie_word_embeddings": r.bool("tie_word_embeddings", default=True),
        "layer_attention_params": (attention,) * layers,
        "layer_kv_elements": (2 * width,) * layers,  # K and V of kv_heads × kv_channels
        "num_experts": experts,
        "experts_per_token": top_k,
        "expert_intermediate_size": inner,
        "moe_layers": tuple(range(layers)),
        "other_params": layers * hidden,  # JetMoeMoE.bias, added after the experts
        "max_positions": r.int("max_position_embeddings", limit_key="max_positions", default=0, minimum=0),
    }


READERS = {
    "afmoe": read_afmoe,
    "beam": read_beam,
    "biogpt": read_biogpt,
    "cpmant": read_cpmant,
    "doge": read_doge,
    "flint": read_flint,
    "gpt_neo": read_gpt_neo,
    "cohere_compass_text": read_cohere_compass_text,
    "dbrx": read_dbrx,
    "hunyuan_v1_dense": read_hunyuan_v1_dense,
    "hunyuan_v1_moe": read_hunyuan_v1_moe,
    "ministral": read_ministral,
    "nemotron": read_nemotron,
    "openai-gpt": read_openai_gpt,
    "mpt": read_mpt,
    "hrm_text": read_hrm_text,
    "jetmoe": read_jetmoe,  # checked on the CPU (its routing reads values): tests/oracle_overrides
}

REFUSALS = {
    "blt": "is a byte-level latent transformer (a patcher, local byte encoder and decoder with "
    "cross-attention, and a global transformer over entropy-defined patches), whose patch count "
    "and so cache depend on the input, which the calculator does not model",
    "qwen4_exp_text": "has indexed-attention (QSA) layers, whose token indexer keeps a key cache of its own "
    "and selects tokens per query, beside linear-attention layers, hyper-connections and hashed n-gram "
    "per-layer embeddings, which the calculator does not model yet",
}
