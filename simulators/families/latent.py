"""Multi-head latent attention (MLA) variants and DeepSeek-style mixtures of experts: DeepSeek-V3.2
and GLM-5 (sparse attention with an indexer that keeps keys of its own), A.X-K1/K2, MiniCPM3,
LongCat-Flash, dots.llm1, dots3-note and Solar Open.

What the cache keeps: transformers (5.x) caches MLA's *compressed* latent, not the decompressed K/V:
every MLA layer calls ``past_key_values.update(k_pass, k_rot)`` with the normalised kv_lora_rank
latent and the single shared RoPE key (qk_rope_head_dim), both bf16, before ``expand_kv``. So an MLA
layer keeps (kv_lora_rank + qk_rope_head_dim) numbers per token. DeepSeek Sparse Attention (DSA)
layers use ``DynamicIndexedLayer``, which also keeps the indexer's key (index_head_dim numbers per
token, bf16 after its LayerNorm) — counted in ``layer_kv_elements``.

Every reader reads the fields the transformers config class and modelling file use, with the config
class's defaults when a field is absent (``_with_defaults``), and refuses values whose shapes it does
not model.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from simulators.families.common import kinds_list
from simulators.model_config import _fail, _Reader

# ---------------------------------------------------------------------------------------------
# Helpers
# ---------------------------------------------------------------------------------------------


def _with_defaults(cfg: Mapping[str, Any], defaults: Mapping[str, Any]) -> _Reader:
    """A reader over the config with the config class's defaults for absent fields (an explicit
    null in the config stays null)."""
    return _Reader({**defaults, **cfg})


def _refuse_sliding(r: _Reader) -> None:
    """Models whose attention never uses a window: a ``sliding_window`` in the config would still
    make transformers' DynamicCache keep only a window of tokens, a mismatch we refuse to size."""
    for field in ("sliding_window", "attention_chunk_size"):
        if r.config.get(field) is not None:
            raise _fail(
                field, "this model's attention has no window; the cache it would build is not modelled"
            )


def _moe_layers_from_types(
    r: _Reader, layers: int, first_dense_default: int, *, with_freq: bool
) -> tuple[int, ...]:
    """MoE layers from ``mlp_layer_types`` ("dense"/"sparse"), or from the legacy
    ``first_k_dense_replace`` (and, where the config class reads it, ``moe_layer_freq``)."""
    kinds = kinds_list(r, "mlp_layer_types", layers, ("dense", "sparse"))
    if kinds is not None:
        return tuple(i for i, k in enumerate(kinds) if k == "sparse")
    first = r.int("first_k_dense_replace", limit_key="num_layers", default=first_dense_default, minimum=0)
    freq = r.int("moe_layer_freq", limit_key="num_layers", default=1) if with_freq else 1
    return tuple(i for i in range(layers) if i >= first and i % freq == 0)


def _required_lora(r: _Reader, field: str) -> int:
    """A LoRA rank that the model always uses (a null would build ``nn.Linear(h, None)``)."""
    if field in r.config and r.config[field] is None:
        raise _fail(field, "must be set: this model always compresses through it (null is not supported)")
    return r.int(field, limit_key="lora_rank")


def _mla_params(
    h: int, heads: int, q_lora: int, kv_lora: int, nope: int, rope: int, v: int, bias: bool
) -> int:
    """DeepseekV3Attention's parameters: q (q_a_proj + q_a_layernorm + q_b_proj, or one q_proj when
    q_lora is 0), kv_a_proj_with_mqa + kv_a_layernorm + kv_b_proj, o_proj; attention_bias on
    q_a_proj, kv_a_proj_with_mqa and o_proj."""
    if q_lora:
        q = h * q_lora + (q_lora if bias else 0) + q_lora + q_lora * heads * (nope + rope)
    else:
        q = h * heads * (nope + rope)
    kv = h * (kv_lora + rope) + ((kv_lora + rope) if bias else 0) + kv_lora + kv_lora * heads * (nope + v)
    o = heads * v * h + (h if bias else 0)
    return q + kv + o


def _indexer_params(h: int, q_lora: int, index_heads: int, index_dim: int) -> int:
    """DeepseekV32Indexer: wq_b (q_lora -> heads × dim), wk (h -> dim), k_norm (LayerNorm: weight and
    bias), weights_proj (h -> heads); none with bias."""
    return q_lora * index_heads * index_dim + h * index_dim + 2 * index_dim + h * index_heads


def _deepseek_moe(
    r: _Reader, moe_layers: tuple[int, ...], *, num_experts_alias: bool = False
) -> dict[str, Any]:
    """DeepSeek-V3-style MoE fields: routed experts of moe_intermediate_size, n_shared_experts shared
    experts of the same width fused into one MLP, a router matrix (its e_score_correction_bias is a
    buffer, not a parameter). ``num_experts_alias``: the config class lets a legacy num_experts
    replace n_routed_experts."""
    if not moe_layers:
        return {}
    names = ("num_experts",) if num_experts_alias else ()
    experts = r.int(*names, "n_routed_experts", "num_local_experts", limit_key="num_experts")
    top_k = r.int("num_experts_per_tok", limit_key="experts_per_token")
    if top_k > experts:
        raise _fail("num_experts_per_tok", f"{top_k} is more than the {experts} experts")
    return {
        "num_experts": experts,
        "experts_per_token": top_k,
        "expert_intermediate_size": r.int("moe_intermediate_size", limit_key="expert_intermediate_size"),
        "num_shared_experts": r.int("n_shared_experts", limit_key="num_shared_experts", default=1, minimum=0),
        "moe_layers": moe_layers,
    }


def _core(r: _Reader, family: str, name: str, *, tie_default: bool = False) -> dict[str, Any]:
    """Fields every reader here shares: sizes, vocabulary, tied head."""
    hidden = r.int("hidden_size", limit_key="hidden_size")
    heads = r.int("num_attention_heads", limit_key="num_heads")
    return {
        "family": family,
        "name": name,
        "hidden_size": hidden,
        "num_layers": r.int("num_hidden_layers", limit_key="num_layers"),
        "num_heads": heads,
        "vocab_size": r.int("vocab_size", limit_key="vocab_size"),
        "tie_word_embeddings": r.bool("tie_word_embeddings", default=tie_default),
        "max_positions": r.int("max_position_embeddings", limit_key="max_positions", default=0, minimum=0),
    }


def _mla_fields(r: _Reader, q_lora: int) -> dict[str, Any]:
    return {
        "q_lora_rank": q_lora,
        "kv_lora_rank": r.int("kv_lora_rank", limit_key="lora_rank"),
        "qk_nope_head_dim": r.int("qk_nope_head_dim", limit_key="head_dim"),
        "qk_rope_head_dim": r.int("qk_rope_head_dim", limit_key="head_dim"),
        "v_head_dim": r.int("v_head_dim", limit_key="head_dim"),
    }


def _mla_spec(kw: dict[str, Any], r: _Reader, mla: dict[str, Any]) -> dict[str, Any]:
    """Standard MLA layers: the spec's head fields (KV heads = query heads, as MLA's expanded K/V)."""
    heads = kw["num_heads"]
    return (
        kw
        | mla
        | {
            "num_kv_heads": heads,
            "head_dim": mla["qk_nope_head_dim"] + mla["qk_rope_head_dim"],
            "qkv_bias": r.bool("attention_bias", default=False),
            "o_bias": r.bool("attention_bias", default=False),
        }
    )


# ---------------------------------------------------------------------------------------------
# DeepSeek-V3.2 and GLM-5 (DeepSeek Sparse Attention)
# ---------------------------------------------------------------------------------------------

_DEEPSEEK_V32_DEFAULTS = {
    "vocab_size": 129280,
    "hidden_size": 7168,
    "intermediate_size": 18432,
    "moe_intermediate_size": 2048,
    "num_hidden_layers": 61,
    "num_attention_heads": 128,
    "n_shared_experts": 1,
    "n_routed_experts": 256,
    "kv_lora_rank": 512,
    "q_lora_rank": 1536,
    "qk_rope_head_dim": 64,
    "v_head_dim": 128,
    "qk_nope_head_dim": 128,
    "num_experts_per_tok": 8,
    "max_position_embeddings": 163840,
    "index_head_dim": 128,
    "index_n_heads": 64,
    "first_k_dense_replace": 3,
}
_GLM_MOE_DSA_DEFAULTS = _DEEPSEEK_V32_DEFAULTS | {
    "vocab_size": 154880,
    "hidden_size": 6144,
    "intermediate_size": 12288,
    "num_hidden_layers": 78,
    "num_attention_heads": 64,
    "q_lora_rank": 2048,
    "v_head_dim": 256,
    "qk_nope_head_dim": 192,
    "max_position_embeddings": 202752,
    "index_n_heads": 32,
}


def _dsa(r: _Reader, family: str, name: str, indexed: list[bool]) -> dict[str, Any]:
    """DeepSeek-V3.2-style layers: MLA (always with q_lora_rank) plus, on the layers in
    ``indexed``, a DSA indexer whose key the cache also keeps."""
    kw = _core(r, family, name)
    layers, h = kw["num_layers"], kw["hidden_size"]
    # Every layer must be a DSA layer: its cache layer is then DynamicIndexedLayer.
    kinds_list(r, "layer_types", layers, ("indexed_attention",))
    mla = _mla_fields(r, _required_lora(r, "q_lora_rank"))
    index_dim = r.int("index_head_dim", limit_key="head_dim")
    index_heads = r.int("index_n_heads", limit_key="num_heads")
    if index_dim < mla["qk_rope_head_dim"]:
        raise _fail(
            "index_head_dim", f"{index_dim} is smaller than qk_rope_head_dim, which the indexer splits off"
        )
    latent = mla["kv_lora_rank"] + mla["qk_rope_head_dim"]
    kw = _mla_spec(kw, r, mla)
    kw["intermediate_size"] = r.int("intermediate_size", limit_key="intermediate_size")
    kw |= _deepseek_moe(r, _moe_layers_from_types(r, layers, 3, with_freq=False), num_experts_alias=True)
    kw["extra_attention_params"] = sum(indexed) * _indexer_params(
        h, mla["q_lora_rank"], index_heads, index_dim
    )
    # Per token: the latent and RoPE key, and the indexer's key on layers that run an indexer.
    kw["layer_kv_elements"] = tuple(latent + (index_dim if x else 0) for x in indexed)
    return kw


def read_deepseek_v32(r: _Reader, cfg: dict, family: str, name: str) -> dict[str, Any]:
    """DeepSeek-V3.2 (transformers models/deepseek_v32/modeling_deepseek_v32.py: DeepseekV32Attention,
    DeepseekV32Indexer, DeepseekV32MoE, DeepseekV32DecoderLayer; cache_utils.DynamicIndexedLayer).

    DeepSeek-V3's MLA with a query LoRA always, plus a DSA indexer in every layer (wq_b, wk, k_norm,
    weights_proj). The cache keeps per token and layer the kv_lora_rank latent, the RoPE key and the
    indexer's index_head_dim key. MoE layers from mlp_layer_types (default: first_k_dense_replace
    dense layers, then sparse); DeepSeek-V3 MoE (router matrix, experts, n_shared_experts shared)."""
    r = _with_defaults(cfg, _DEEPSEEK_V32_DEFAULTS)
    layers = r.int("num_hidden_layers", limit_key="num_layers")
    return _dsa(r, family, name, [True] * layers)


def read_glm_moe_dsa(r: _Reader, cfg: dict, family: str, name: str) -> dict[str, Any]:
    """GLM-5 (transformers models/glm_moe_dsa/modeling_glm_moe_dsa.py: GlmMoeDsaAttention,
    GlmMoeDsaIndexer, GlmMoeDsaMoE; configuration_glm_moe_dsa.py for indexer_types).

    DeepSeek-V3.2's layer, except that a layer whose indexer_types entry is "shared" has no indexer
    (it reuses the previous layer's top-k) and so neither its parameters nor its cached key.
    indexer_types defaults from index_topk_pattern ("F"/"S" per layer) or index_topk_freq /
    index_skip_topk_offset, as GlmMoeDsaConfig.__post_init__ derives it."""
    r = _with_defaults(cfg, _GLM_MOE_DSA_DEFAULTS)
    layers = r.int("num_hidden_layers", limit_key="num_layers")
    kinds = kinds_list(r, "indexer_types", layers, ("full", "shared"))
    if kinds is None:
        pattern = r.config.get("index_topk_pattern")
        if pattern is not None:
            if isinstance(pattern, str):
                if set(pattern) - {"F", "S"}:
                    raise _fail("index_topk_pattern", "must be a string of F (full) and S (shared)")
                pattern = [{"F": "full", "S": "shared"}[c] for c in pattern]
            if not isinstance(pattern, list) or len(pattern) != layers or set(pattern) - {"full", "shared"}:
                raise _fail("index_topk_pattern", f"must give full or shared for each of the {layers} layers")
            kinds = list(pattern)
        else:
            freq = max(r.int("index_topk_freq", limit_key="num_layers", default=1, minimum=0), 1)
            offset = r.int("index_skip_topk_offset", limit_key="num_layers", default=2, minimum=0)
            kinds = ["full" if max(i - offset + 1, 0) % freq == 0 else "shared" for i in range(layers)]
    if kinds and kinds[0] == "shared":
        raise _fail("indexer_types", "the first layer cannot reuse an earlier layer's indexer")
    return _dsa(r, family, name, [k == "full" for k in kinds])


# ---------------------------------------------------------------------------------------------
# A.X-K1 / A.X-K2
# ---------------------------------------------------------------------------------------------

_AXK1_DEFAULTS = {
    "vocab_size": 163840,
    "hidden_size": 7168,
    "intermediate_size": 18432,
    "moe_intermediate_size": 2048,
    "num_hidden_layers": 61,
    "num_attention_heads": 64,
    "n_shared_experts": 1,
    "n_routed_experts": 192,
    "kv_lora_rank": 512,
    "q_lora_rank": 1536,
    "qk_rope_head_dim": 64,
    "v_head_dim": 128,
    "qk_nope_head_dim": 128,
    "num_experts_per_tok": 8,
    "max_position_embeddings": 32768,
}
_AXK2_DEFAULTS = {
    "vocab_size": 163840,
    "hidden_size": 2048,
    "intermediate_size": 5120,
    "moe_intermediate_size": 512,
    "num_hidden_layers": 48,
    "num_attention_heads": 32,
    "n_shared_experts": 1,
    "n_routed_experts": 128,
    "kv_lora_rank": 128,
    "q_lora_rank": 384,
    "qk_rope_head_dim": 32,
    "v_head_dim": 64,
    "qk_nope_head_dim": 64,
    "num_experts_per_tok": 8,
    "max_position_embeddings": 131072,
    "index_head_dim": 128,
    "index_n_heads": 16,
    "gated_norm_rank": 16,
}


def read_axk1(r: _Reader, cfg: dict, family: str, name: str) -> dict[str, Any]:
    """SK Telecom A.X-K1 (transformers models/axk1/modeling_axk1.py: AXK1Attention, AXK1MoE,
    AXK1DecoderLayer).

    DeepSeek-V3 with MLA that always uses the query LoRA, and an RMSNorm (post_mlp_layernorm) on the
    output of every MoE block. MoE layers from mlp_layer_types, or from first_k_dense_replace
    (default 1) and moe_layer_freq (default 1): sparse when i >= first and i % freq == 0. The cache
    keeps MLA's latent and RoPE key."""
    r = _with_defaults(cfg, _AXK1_DEFAULTS)
    _refuse_sliding(r)
    kw = _core(r, family, name)
    kw = _mla_spec(kw, r, _mla_fields(r, _required_lora(r, "q_lora_rank")))
    kw["intermediate_size"] = r.int("intermediate_size", limit_key="intermediate_size")
    moe_layers = _moe_layers_from_types(r, kw["num_layers"], 1, with_freq=True)
    kw |= _deepseek_moe(r, moe_layers)
    kw["extra_norm_params"] = len(moe_layers) * kw["hidden_size"]  # post_mlp_layernorm
    return kw


def read_axk2(r: _Reader, cfg: dict, family: str, name: str) -> dict[str, Any]:
    """SK Telecom A.X-K2 (transformers models/axk2/modeling_axk2.py: AXK2Attention, AXK2Indexer,
    AXK2GatedRMSNorm, AXK2DecoderLayer).

    DeepSeek-V3.2's DSA layer with a different query path: q_a_proj (+ attention_bias) and
    q_a_layernorm, then one fused q_gate_proj from [normalised, raw] q latent (2 × q_lora_rank) to
    heads × (qk_head_dim + v_head_dim) (queries and a sigmoid output gate); no q_b_proj. The
    input_layernorm of every layer, and post_attention_layernorm of MoE layers, is a gated RMSNorm:
    the norm weight plus a low-rank gate MLP (fc1 hidden -> gated_norm_rank, fc2 back, no bias). The
    cache keeps the latent, the RoPE key and the indexer's key per token and layer."""
    r = _with_defaults(cfg, _AXK2_DEFAULTS)
    _refuse_sliding(r)
    kw = _core(r, family, name)
    layers, h, heads = kw["num_layers"], kw["hidden_size"], kw["num_heads"]
    kinds_list(r, "layer_types", layers, ("indexed_attention",))
    mla = _mla_fields(r, _required_lora(r, "q_lora_rank"))
    q_lora, kv_lora = mla["q_lora_rank"], mla["kv_lora_rank"]
    nope, rope, v = mla["qk_nope_head_dim"], mla["qk_rope_head_dim"], mla["v_head_dim"]
    index_dim = r.int("index_head_dim", limit_key="head_dim")
    index_heads = r.int("index_n_heads", limit_key="num_heads")
    if index_dim < rope:
        raise _fail(
            "index_head_dim", f"{index_dim} is smaller than qk_rope_head_dim, which the indexer splits off"
        )
    bias = r.bool("attention_bias", default=False)
    attention = (
        h * q_lora + (q_lora if bias else 0) + q_lora  # q_a_proj, q_a_layernorm
        + 2 * q_lora * heads * (nope + rope + v)  # q_gate_proj
        + h * (kv_lora + rope) + ((kv_lora + rope) if bias else 0) + kv_lora  # kv_a_proj, kv_a_layernorm
        + kv_lora * heads * (nope + v)  # kv_b_proj
        + heads * v * h + (h if bias else 0)  # o_proj
        + _indexer_params(h, q_lora, index_heads, index_dim)
    )  # fmt: skip
    kw = _mla_spec(kw, r, mla)
    kw["intermediate_size"] = r.int("intermediate_size", limit_key="intermediate_size")
    moe_layers = _moe_layers_from_types(r, layers, 1, with_freq=True)
    kw |= _deepseek_moe(r, moe_layers)
    rank = r.int("gated_norm_rank", limit_key="lora_rank")
    kw |= {
        "layer_attention_params": (attention,) * layers,
        "layer_kv_elements": (kv_lora + rope + index_dim,) * layers,
        # The gated norms' gate MLPs (fc1 + fc2), beside the two norm weights per layer.
        "extra_norm_params": (layers + len(moe_layers)) * 2 * h * rank,
    }
    return kw


# ---------------------------------------------------------------------------------------------
# MiniCPM3, LongCat-Flash
# ---------------------------------------------------------------------------------------------

_MINICPM3_DEFAULTS = {
    "vocab_size": 73448,
    "hidden_size": 2560,
    "intermediate_size": 6400,
    "num_hidden_layers": 62,
    "num_attention_heads": 40,
    "max_position_embeddings": 32768,
    "kv_lora_rank": 256,
    "q_lora_rank": 768,
    "qk_nope_head_dim": 64,
    "qk_rope_head_dim": 32,
}


def read_minicpm3(r: _Reader, cfg: dict, family: str, name: str) -> dict[str, Any]:
    """OpenBMB MiniCPM3 (transformers models/minicpm3/modeling_minicpm3.py: MiniCPM3Attention is
    DeepseekV2Attention; Llama MLP and decoder layer; embedding scale is a buffer).

    A Llama decoder whose attention is DeepSeek-V2's MLA: q_lora_rank (null: one q_proj), the
    latent and RoPE key cached. v_head_dim defaults to hidden_size // num_attention_heads;
    attention_bias on q_a_proj, kv_a_proj_with_mqa and o_proj; mlp_bias on the MLP. Tied embeddings
    by default."""
    r = _with_defaults(cfg, _MINICPM3_DEFAULTS)
    _refuse_sliding(r)
    kw = _core(r, family, name, tie_default=True)
    hidden, heads = kw["hidden_size"], kw["num_heads"]
    if hidden % heads:
        raise _fail("num_attention_heads", f"hidden_size ({hidden}) must be a multiple of it ({heads})")
    q_lora = (
        0
        if "q_lora_rank" in cfg and cfg["q_lora_rank"] is None
        else r.int("q_lora_rank", limit_key="lora_rank")
    )
    mla = _mla_fields(
        _Reader({**r.config, "v_head_dim": r.config.get("v_head_dim") or hidden // heads}), q_lora
    )
    kw = _mla_spec(kw, r, mla)
    kw["intermediate_size"] = r.int("intermediate_size", limit_key="intermediate_size")
    kw["mlp_bias"] = r.bool("mlp_bias", default=False)
    return kw


_LONGCAT_DEFAULTS = {
    "vocab_size": 131072,
    "hidden_size": 6144,
    "num_attention_heads": 64,
    "max_position_embeddings": 131072,
    "ffn_hidden_size": 12288,
    "q_lora_rank": 1536,
    "kv_lora_rank": 512,
    "qk_nope_head_dim": 128,
    "qk_rope_head_dim": 64,
    "v_head_dim": 128,
    "moe_topk": 12,
    "n_routed_experts": 512,
    "zero_expert_num": 256,
    "expert_ffn_hidden_size": 2048,
}


def read_longcat_flash(r: _Reader, cfg: dict, family: str, name: str) -> dict[str, Any]:
    """Meituan LongCat-Flash (transformers models/longcat_flash/modeling_longcat_flash.py:
    LongcatFlashDecoderLayer, LongcatFlashMLA, LongcatFlashMoE, LongcatFlashExperts,
    LongcatFlashTopkRouter).

    Each of num_layers decoder layers holds two MLA sublayers (q LoRA always), two dense MLPs of
    ffn_hidden_size, four RMSNorms and one shortcut MoE. The spec counts 2 × num_layers sublayers
    (each caches MLA's latent and RoPE key); the MoE sits on the even sublayers, whose dense MLP is
    counted as a shared expert of ffn_hidden_size (it runs for every token, as a shared expert would).
    The MoE's router (classifier, + bias when router_bias) scores n_routed_experts + zero_expert_num
    experts; the zero experts are identities, but gate_up_proj is allocated for all of them (only
    down_proj is n_routed_experts long): the zero experts' router rows and gate_up rows are
    ``other_params``."""
    r = _with_defaults(cfg, _LONGCAT_DEFAULTS)
    _refuse_sliding(r)
    if r.present("num_layers"):
        logical = r.int("num_layers", limit_key="num_layers")
    elif r.present("num_hidden_layers"):
        logical = r.int("num_hidden_layers", limit_key="num_layers", minimum=2) // 2
    else:
        logical = 28
    kw = _core(_Reader({**r.config, "num_hidden_layers": 2 * logical}), family, name)
    h = kw["hidden_size"]
    mla = _mla_fields(r, _required_lora(r, "q_lora_rank"))
    qk = r.config.get("qk_head_dim")
    if qk is not None and qk != mla["qk_nope_head_dim"] + mla["qk_rope_head_dim"]:
        raise _fail(
            "qk_head_dim", "must equal qk_nope_head_dim + qk_rope_head_dim (other splits are not modelled)"
        )
    kw = _mla_spec(kw, r, mla)
    ffn = r.int("ffn_hidden_size", "intermediate_size", limit_key="intermediate_size")
    routed = r.int("n_routed_experts", "num_local_experts", limit_key="num_experts", minimum=0)
    zero = r.int("zero_expert_num", limit_key="num_experts", default=0, minimum=0)
    width = r.int("expert_ffn_hidden_size", "moe_intermediate_size", limit_key="expert_intermediate_size")
    top_k = r.int("moe_topk", "num_experts_per_tok", limit_key="experts_per_token", minimum=0)
    router_bias = r.bool("router_bias", default=False)
    kw["intermediate_size"] = ffn
    per_moe_other = zero * h + ((routed + zero) if router_bias else 0)
    if routed:
        if top_k > routed + zero:
            raise _fail("moe_topk", f"{top_k} is more than the {routed + zero} experts")
        per_moe_other += zero * 2 * width * h  # gate_up_proj rows of the zero experts
        kw |= {
            "num_experts": routed,
            "experts_per_token": min(top_k, routed),
            "expert_intermediate_size": width,
            "shared_expert_intermediate_size": ffn,
            "moe_layers": tuple(range(0, 2 * logical, 2)),
        }
    kw["other_params"] = logical * per_moe_other
    return kw


# ---------------------------------------------------------------------------------------------
# dots.llm1, Solar Open (grouped-query attention + DeepSeek-style MoE)
# ---------------------------------------------------------------------------------------------

_DOTS1_DEFAULTS = {
    "vocab_size": 152064,
    "hidden_size": 4608,
    "intermediate_size": 10944,
    "moe_intermediate_size": 1408,
    "num_hidden_layers": 62,
    "num_attention_heads": 32,
    "max_position_embeddings": 2048,
    "first_k_dense_replace": 0,
    "sliding_window": 4096,
    "max_window_layers": 62,
}


def read_dots1(r: _Reader, cfg: dict, family: str, name: str) -> dict[str, Any]:
    """rednote dots.llm1 (transformers models/dots1/modeling_dots1.py: Dots1Attention, Dots1MoE,
    Dots1TopkRouter, Dots1DecoderLayer).

    Qwen 3's attention (q/k RMSNorm over head_dim, attention_bias on q, k, v, o) and DeepSeek-V3's
    MoE from layer first_k_dense_replace on (n_shared_experts shared experts of
    moe_intermediate_size). Sliding-window layers from layer_types, or those at or past
    max_window_layers when sliding_window is set (Dots1Config.__post_init__); the cache keeps the
    last sliding_window - 1 tokens there (counted as sliding_window)."""
    r = _with_defaults(cfg, _DOTS1_DEFAULTS)
    kw = _core(r, family, name)
    hidden, layers, heads = kw["hidden_size"], kw["num_layers"], kw["num_heads"]
    kv = r.int("num_key_value_heads", limit_key="num_kv_heads", default=heads)
    if heads % kv:
        raise _fail("num_key_value_heads", f"num_attention_heads ({heads}) must be divisible by it ({kv})")
    head_dim = r.int("head_dim", limit_key="head_dim", default=hidden // heads)
    bias = r.bool("attention_bias", default=False)
    kw |= {
        "num_kv_heads": kv,
        "head_dim": head_dim,
        "intermediate_size": r.int("intermediate_size", limit_key="intermediate_size"),
        "qkv_bias": bias,
        "o_bias": bias,
        "qk_norm": "rms",
        "qk_norm_dim": head_dim,
    }
    first = r.int("first_k_dense_replace", limit_key="num_layers", minimum=0)
    moe_layers = tuple(range(min(first, layers), layers))
    if moe_layers:
        for field in ("n_routed_experts", "num_experts_per_tok", "n_shared_experts"):
            if not r.present(field) and not (field == "n_routed_experts" and r.present("num_local_experts")):
                raise _fail(
                    field, "is needed by the MoE layers (Dots1Config leaves it null, which cannot be built)"
                )
    kw |= _deepseek_moe(r, moe_layers)
    window = r.int("sliding_window", limit_key="sliding_window", default=0, minimum=0)
    types = kinds_list(r, "layer_types", layers, ("full_attention", "sliding_attention"))
    if types is None:
        first_sliding = r.int("max_window_layers", limit_key="num_layers", minimum=0)
        types = [
            "sliding_attention" if window and i >= first_sliding else "full_attention" for i in range(layers)
        ]
    sliding = tuple(i for i, t in enumerate(types) if t == "sliding_attention")
    if sliding and not window:
        raise _fail("sliding_window", "sliding-attention layers need a window")
    if sliding:
        kw |= {"sliding_window": window, "sliding_layers": sliding}
    return kw


_SOLAR_OPEN_DEFAULTS = {
    "vocab_size": 196608,
    "hidden_size": 4096,
    "num_hidden_layers": 48,
    "num_attention_heads": 64,
    "num_key_value_heads": 8,
    "max_position_embeddings": 131072,
    "moe_intermediate_size": 1280,
    "num_experts_per_tok": 8,
    "n_shared_experts": 1,
    "n_routed_experts": 128,
    "head_dim": 128,
}


def read_solar_open(r: _Reader, cfg: dict, family: str, name: str) -> dict[str, Any]:
    """Upstage Solar Open (transformers models/solar_open/modeling_solar_open.py:
    SolarOpenAttention, SolarOpenMoE, SolarOpenDecoderLayer).

    Llama attention (attention_bias on q, k, v; o_proj never biased; head_dim default 128) and GLM-4.5's
    MoE in every layer: routed experts of moe_intermediate_size, n_shared_experts shared experts of the
    same width, a router matrix (its correction bias is a buffer). No dense MLP, no window."""
    r = _with_defaults(cfg, _SOLAR_OPEN_DEFAULTS)
    _refuse_sliding(r)
    kw = _core(r, family, name)
    layers, heads = kw["num_layers"], kw["num_heads"]
    kv = r.int("num_key_value_heads", limit_key="num_kv_heads")
    if heads % kv:
        raise _fail("num_key_value_heads", f"num_attention_heads ({heads}) must be divisible by it ({kv})")
    moe = _deepseek_moe(r, tuple(range(layers)))
    kw |= moe | {
        "num_kv_heads": kv,
        "head_dim": r.int("head_dim", limit_key="head_dim"),
        "intermediate_size": moe["expert_intermediate_size"],  # unused: every layer is MoE
        "qkv_bias": r.bool("attention_bias", default=False),
    }
    return kw


# ---------------------------------------------------------------------------------------------
# dots3-note (text): DSA layers and sliding-window MLA layers of their own shapes
# ---------------------------------------------------------------------------------------------

_DOTS3_DEFAULTS = {
    "vocab_size": 152064,
    "hidden_size": 5120,
    "intermediate_size": 13824,
    "moe_intermediate_size": 1536,
    "num_hidden_layers": 46,
    "num_attention_heads": 128,
    "num_key_value_heads": 128,
    "n_shared_experts": 1,
    "n_routed_experts": 256,
    "kv_lora_rank": 512,
    "q_lora_rank": 1024,
    "qk_rope_head_dim": 64,
    "v_head_dim": 128,
    "qk_nope_head_dim": 128,
    "num_experts_per_tok": 8,
    "max_position_embeddings": 524288,
    "index_head_dim": 128,
    "index_n_heads": 64,
    "head_dim": 256,
    "shared_experts_intermediate_size": 1536,
}
# The sliding-window layers' shapes when the config gives no per_layer_config (the released
# checkpoint's swa_* fields; Dots3NoteTextConfig.__post_init__).
_DOTS3_SWA_DEFAULTS = {
    "num_attention_heads": 64,
    "num_key_value_heads": 64,
    "q_lora_rank": 1024,
    "kv_lora_rank": 1024,
    "head_dim": 256,
    "qk_nope_head_dim": 192,
    "v_head_dim": 128,
}
# Fields a layer of per_layer_config may change: the attention's shapes (read per layer below) and
# fields that size nothing.
_DOTS3_PER_LAYER_SIZES = frozenset(
    {
        "num_attention_heads", "num_key_value_heads", "q_lora_rank", "kv_lora_rank", "head_dim",
        "qk_nope_head_dim", "qk_rope_head_dim", "v_head_dim", "attention_bias", "index_head_dim",
        "index_n_heads",
    }
)  # fmt: skip
_DOTS3_PER_LAYER_NEUTRAL = frozenset(
    {
        "rms_norm_eps",
        "attention_dropout",
        "rope_parameters",
        "rope_theta",
        "partial_rotary_factor",
        "index_topk",
    }
)


def _dots3_layer_types(r: _Reader, layers: int) -> list[str]:
    """layer_types, or Dots3NoteTextConfig's derivation: DSA ("indexed_attention", or
    "full_attention" when use_dsa is false) on layers 0, 1 and i % 4 == 1, sliding elsewhere when
    use_sliding_window (default true). use_dsa (default true unless per_layer_config is given) renames
    full to indexed layers, or back."""
    use_dsa = r.config.get("use_dsa", None if "per_layer_config" in r.config else True)
    if use_dsa is not None and not isinstance(use_dsa, bool):
        raise _fail("use_dsa", f"must be true or false, got {use_dsa!r}")
    types = kinds_list(r, "layer_types", layers, ("indexed_attention", "full_attention", "sliding_attention"))
    if types is None:
        use_sliding = r.bool("use_sliding_window", default=True)
        full = "full_attention" if use_dsa is False else "indexed_attention"
        types = [
            full if not use_sliding or i < 2 or i % 4 == 1 else "sliding_attention" for i in range(layers)
        ]
    if use_dsa is not None:
        old, new = (
            ("full_attention", "indexed_attention") if use_dsa else ("indexed_attention", "full_attention")
        )
        types = [new if t == old else t for t in types]
    return types


def _dots3_per_layer(r: _Reader, types: list[str]) -> list[dict[str, Any]]:
    """Each layer's config: the global fields with its per_layer_config overrides, or (absent) the
    swa_* shapes on the sliding-window layers."""
    layers = len(types)
    fields = sorted(_DOTS3_PER_LAYER_SIZES)
    base = {f: r.config.get(f) for f in fields}
    overrides: dict[int, dict[str, Any]] = {}
    per_layer = r.config.get("per_layer_config")
    if per_layer is not None:
        if not isinstance(per_layer, Mapping):
            raise _fail("per_layer_config", "must map layer indices to field overrides")
        for key, values in per_layer.items():
            try:
                index = int(key)
            except (TypeError, ValueError):
                raise _fail("per_layer_config", f"key {key!r} is not a layer index") from None
            if not 0 <= index < layers or not isinstance(values, Mapping):
                raise _fail(
                    "per_layer_config", f"entry {key!r} must be a layer index below {layers} with fields"
                )
            unknown = sorted(
                set(values) - _DOTS3_PER_LAYER_SIZES - _DOTS3_PER_LAYER_NEUTRAL - {"sliding_window"}
            )
            if unknown:
                raise _fail("per_layer_config", f"per-layer {', '.join(unknown)} are not modelled")
            if "sliding_window" in values and values["sliding_window"] != r.config.get("sliding_window"):
                raise _fail("per_layer_config", "a per-layer sliding_window is not modelled")
            overrides[index] = dict(values)
    else:
        swa = {f: r.config.get(f"swa_{f}", d) for f, d in _DOTS3_SWA_DEFAULTS.items()}
        swa["qk_rope_head_dim"] = r.config.get(
            "swa_qk_rope_head_dim", swa["head_dim"] - swa["qk_nope_head_dim"]
        )
        overrides = {i: swa for i, t in enumerate(types) if t == "sliding_attention"}
    return [base | overrides.get(i, {}) for i in range(layers)]


def read_dots3_note_text(r: _Reader, cfg: dict, family: str, name: str) -> dict[str, Any]:
    """rednote dots3-note, text model (transformers models/dots3_note/modeling_dots3_note.py:
    Dots3NoteTextAttention, Dots3NoteTextIndexer, Dots3NoteTextMoE, Dots3NoteTextDecoderLayer;
    configuration_dots3_note.py: Dots3NoteTextConfig for the layer pattern and per-layer shapes).

    Every layer is MLA with a query LoRA, an RMSNorm on the shared RoPE key (k_rope_only_layernorm)
    and a per-head sigmoid output gate (g_proj: hidden -> heads). Each layer takes its shapes from
    per_layer_config (the sliding-window layers differ: by default 64 heads, kv_lora_rank 1024,
    qk_nope_head_dim 192). DSA layers ("indexed_attention") add DeepSeek-V3.2's indexer and cache its
    key (in float32: the model runs those layers' RoPE in float32); sliding layers keep the latent
    and RoPE key of the last sliding_window - 1 tokens (counted as sliding_window); "full_attention"
    layers keep every token's latent. MoE layers from
    mlp_layer_types or first_k_dense_replace / moe_layer_freq (a number or a per-layer list), with
    n_shared_experts shared experts of shared_experts_intermediate_size."""
    r = _with_defaults(cfg, _DOTS3_DEFAULTS)
    kw = _core(r, family, name)
    layers, h = kw["num_layers"], kw["hidden_size"]
    types = _dots3_layer_types(r, layers)
    attention, elements = [], []
    for i, (kind, lc) in enumerate(zip(types, _dots3_per_layer(r, types), strict=True)):
        lr = _Reader(lc)
        where = f"layer {i}: "
        if lc.get("q_lora_rank") is None:
            raise _fail("q_lora_rank", where + "must be set (dots3-note always compresses queries)")
        heads = lr.int("num_attention_heads", limit_key="num_heads")
        mla = _mla_fields(lr, lr.int("q_lora_rank", limit_key="lora_rank"))
        q_lora, kv_lora, rope = mla["q_lora_rank"], mla["kv_lora_rank"], mla["qk_rope_head_dim"]
        params = _mla_params(
            h,
            heads,
            q_lora,
            kv_lora,
            mla["qk_nope_head_dim"],
            rope,
            mla["v_head_dim"],
            lr.bool("attention_bias", default=False),
        )
        params += rope + h * heads  # k_rope_only_layernorm, g_proj
        cached = kv_lora + rope
        if kind == "indexed_attention":
            index_dim = lr.int("index_head_dim", limit_key="head_dim")
            if index_dim < rope:
                raise _fail(
                    "index_head_dim", where + "is smaller than qk_rope_head_dim, which the indexer splits off"
                )
            params += _indexer_params(h, q_lora, lr.int("index_n_heads", limit_key="num_heads"), index_dim)
            # The model computes the indexed layers' RoPE in float32 (inputs_embeds.float()), so the
            # indexer's cached key is float32: two bf16-sized numbers each.
            cached += 2 * index_dim
        attention.append(params)
        elements.append(cached)
        if i == 0:
            kw = _mla_spec(kw, r, mla)
    sliding = tuple(i for i, t in enumerate(types) if t == "sliding_attention")
    window = r.config.get("sliding_window")
    if window is None:
        window = r.config.get("sliding_window_size", 512)
    window = _Reader({"sliding_window": window}).int("sliding_window", limit_key="sliding_window")
    moe_layers = _dots3_moe_layers(r, layers)
    kw |= _deepseek_moe(r, moe_layers)
    if moe_layers:
        shared_width = r.int(
            "moe_shared_expert_intermediate_size",
            "shared_experts_intermediate_size",
            limit_key="shared_expert_intermediate_size",
            minimum=0,
        )
        kw["shared_expert_intermediate_size"] = shared_width * kw.pop("num_shared_experts")
    kw |= {
        "intermediate_size": r.int("intermediate_size", limit_key="intermediate_size"),
        "layer_kinds": tuple("sliding" if t == "sliding_attention" else "mla" for t in types),
        "layer_attention_params": tuple(attention),
        "layer_kv_elements": tuple(elements),
    }
    if sliding:
        kw |= {"sliding_window": window, "sliding_layers": sliding}
    return kw


def _dots3_moe_layers(r: _Reader, layers: int) -> tuple[int, ...]:
    kinds = kinds_list(r, "mlp_layer_types", layers, ("dense", "sparse"))
    if kinds is not None:
        return tuple(i for i, k in enumerate(kinds) if k == "sparse")
    first = r.int("first_k_dense_replace", limit_key="num_layers", default=1, minimum=0)
    freq = r.config.get("moe_layer_freq", 1)
    if isinstance(freq, list):
        if len(freq) != layers:
            raise _fail("moe_layer_freq", f"as a list must have one entry per layer ({layers})")
        return tuple(i for i in range(layers) if i >= first and bool(freq[i]))
    freq = r.int("moe_layer_freq", limit_key="num_layers", default=1)
    return tuple(i for i in range(layers) if i >= first and i % freq == 0)


# ---------------------------------------------------------------------------------------------
# Inkling (text): GQA with short convolutions and relative logits, DeepSeek-style MoE
# ---------------------------------------------------------------------------------------------

_INKLING_DEFAULTS = {
    "vocab_size": 201024,
    "hidden_size": 6144,
    "num_hidden_layers": 66,
    "num_attention_heads": 64,
    "num_key_value_heads": 8,
    "head_dim": 128,
    "swa_num_attention_heads": 64,
    "swa_num_key_value_heads": 16,
    "swa_head_dim": 128,
    "sliding_window_size": 512,
    "d_rel": 16,
    "rel_extent": 1024,
    "max_position_embeddings": 131072,
    "conv_kernel_size": 4,
    "intermediate_size": 24576,
    "moe_intermediate_size": 3072,
    "n_routed_experts": 256,
    "num_experts_per_tok": 6,
    "n_shared_experts": 2,
}


def read_inkling_text(r: _Reader, cfg: dict, family: str, name: str) -> dict[str, Any]:
    """Thinking Machines Inkling, text model (transformers models/inkling/modeling_inkling.py:
    InklingAttention, InklingShortConvolution, InklingRelativeLogits, InklingDecoderLayer, InklingMoE,
    InklingTopkRouter, InklingSharedExperts, InklingNormedEmbedding; cache_utils
    LinearAttentionAnd{Full,SlidingWindow}AttentionLayer).

    Layers are "hybrid" (global attention: num_attention_heads / num_key_value_heads / head_dim) or
    "hybrid_sliding" (swa_* shapes, a window of sliding_window_size), from layer_types or
    local_layer_ids (default: every layer but each sixth). Attention: q, k, v, o and r_proj (hidden ->
    heads × d_rel) without bias, depthwise short convolutions (kernel conv_kernel_size, no bias) on k
    and v, q/k RMSNorm over head_dim, and a relative-logits bank d_rel × rel_extent (sliding layers:
    × sliding_window_size). Each layer adds two more short convolutions over hidden_size (after the
    attention and after the MLP), counted with the token mixer. The cache keeps K and V (bf16; the
    sliding layers the last sliding_window_size - 1 tokens, counted as the window) and four float32
    convolution states per layer of kernel × channels (k, v, attention and MLP convolutions).
    MLPs: a dense SwiGLU with a learned global_scale, or the MoE (mlp_layer_types, or the first
    dense_mlp_idx layers dense): routed experts and n_shared_experts shared experts of
    moe_intermediate_size, a router over routed + shared experts with a global_scale. The token
    embedding has an RMSNorm. A checkpoint's dense_intermediate_size is the dense width, and its
    intermediate_size then the experts' (InklingTextConfig.__post_init__)."""
    r = _with_defaults(cfg, _INKLING_DEFAULTS)
    kw = _core(r, family, name)
    layers, h = kw["num_layers"], kw["hidden_size"]
    types = kinds_list(r, "layer_types", layers, ("hybrid", "hybrid_sliding"))
    if types is None:
        local = r.config.get("local_layer_ids")
        if local is None:
            local_set = {i for i in range(layers) if (i + 1) % 6}
        elif isinstance(local, list) and all(isinstance(i, int) and not isinstance(i, bool) for i in local):
            local_set = set(local)
        else:
            raise _fail("local_layer_ids", "must be a list of layer indices")
        types = ["hybrid_sliding" if i in local_set else "hybrid" for i in range(layers)]
    kinds = kinds_list(r, "mlp_layer_types", layers, ("dense", "sparse"))
    if kinds is None:
        dense = r.int("dense_mlp_idx", limit_key="num_layers", default=0, minimum=0)
        kinds = ["dense" if i < dense else "sparse" for i in range(layers)]
    if r.present("dense_intermediate_size"):
        dense_width = r.int("dense_intermediate_size", limit_key="intermediate_size")
        expert_width = r.int("intermediate_size", limit_key="expert_intermediate_size")
    else:
        dense_width = r.int("intermediate_size", limit_key="intermediate_size")
        expert_width = r.int("moe_intermediate_size", limit_key="expert_intermediate_size")
    window = r.int("sliding_window_size", "sliding_window", limit_key="sliding_window")
    kernel = r.int("conv_kernel_size", "sconv_kernel_size", limit_key="head_dim")
    d_rel = r.int("d_rel", limit_key="head_dim")
    rel_extent = r.int("rel_extent", limit_key="sliding_window")
    shapes = {
        "hybrid": (
            r.int("num_attention_heads", limit_key="num_heads"),
            r.int("num_key_value_heads", limit_key="num_kv_heads"),
            r.int("head_dim", limit_key="head_dim"),
            rel_extent,
        ),
        "hybrid_sliding": (
            r.int("swa_num_attention_heads", limit_key="num_heads"),
            r.int("swa_num_key_value_heads", limit_key="num_kv_heads"),
            r.int("swa_head_dim", limit_key="head_dim"),
            window,
        ),
    }
    for kind, (q, kv, _, _) in shapes.items():
        if q % kv:
            prefix = "swa_" if kind == "hybrid_sliding" else ""
            raise _fail(f"{prefix}num_key_value_heads", f"must divide the {q} query heads")
    attention, elements, state = [], [], []
    for kind in types:
        q, kv, d, extent = shapes[kind]
        attention.append(
            h * q * d + 2 * h * kv * d + h * q * d_rel + q * d * h  # q, k, v, r_proj, o
            + 2 * kv * d * kernel + 2 * d + d_rel * extent  # k/v convolutions, q/k norms, relative logits
            + 2 * h * kernel  # the layer's attention and MLP short convolutions
        )  # fmt: skip
        elements.append(2 * kv * d)
        state.append(4 * kernel * (2 * kv * d + 2 * h))  # float32 convolution states
    moe_layers = tuple(i for i, k in enumerate(kinds) if k == "sparse")
    g, kv_g, d_g, _ = shapes["hybrid"]
    kw |= {
        "num_heads": g,
        "num_kv_heads": kv_g,
        "head_dim": d_g,
        "intermediate_size": dense_width,
        "mlp_act_params": 1,  # each dense MLP's global_scale
        "embedding_norm": True,
        "layer_kinds": tuple("sliding" if t == "hybrid_sliding" else "full" for t in types),
        "layer_attention_params": tuple(attention),
        "layer_kv_elements": tuple(elements),
        "layer_state_bytes": tuple(state),
    }
    sliding = tuple(i for i, t in enumerate(types) if t == "hybrid_sliding")
    if sliding:
        kw |= {"sliding_window": window, "sliding_layers": sliding}
    if moe_layers:
        experts = r.int("n_routed_experts", "num_local_experts", limit_key="num_experts")
        shared = r.int("n_shared_experts", limit_key="num_shared_experts")
        top_k = r.int("num_experts_per_tok", limit_key="experts_per_token")
        if top_k > experts:
            raise _fail("num_experts_per_tok", f"{top_k} is more than the {experts} experts")
        kw |= {
            "num_experts": experts,
            "experts_per_token": top_k,
            "expert_intermediate_size": expert_width,
            "num_shared_experts": shared,
            "moe_layers": moe_layers,
            # The router also scores the shared experts, and has a global_scale.
            "other_params": len(moe_layers) * (shared * h + 1),
        }
    return kw


READERS = {
    "deepseek_v32": read_deepseek_v32,
    "glm_moe_dsa": read_glm_moe_dsa,
    "axk1": read_axk1,
    "axk2": read_axk2,
    "minicpm3": read_minicpm3,
    "longcat_flash": read_longcat_flash,
    "dots1": read_dots1,
    "solar_open": read_solar_open,
    "dots3_note_text": read_dots3_note_text,
    "inkling_text": read_inkling_text,
}

REFUSALS = {
    "deepseek_v4": "compresses its KV cache (compressed-sparse and heavily-compressed attention: a "
    "sliding window of shared K=V plus one compressed entry per compress_rate tokens, an indexer over "
    "compressed keys, compressor buffers and overlap states) and mixes layers through hyper-connections; "
    "the calculator has no layer kind whose cache grows as context / compression rate beside a capped window",
    "inkling2_text": "has input-dependent (dynamic) short convolutions, block attention residuals and "
    "separate sliding and full decoder layers, whose parameters and convolution states the calculator "
    "does not model yet",
}
