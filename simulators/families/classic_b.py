"""Decoders whose layers are standard attention + MLP but spelled or wired their own way: Hunyuan
(dense and MoE), Ministral, Nemotron, MPT, OpenAI GPT, HRM-Text and JetMoE.

Each reader starts from ``_read_standard`` with the closest family (or writes the few fields out
where the family's conventions differ too much) and changes what the transformers modelling file
named in its docstring does differently.
"""

from __future__ import annotations

from typing import Any

from simulators.model_config import _fail, _read_standard, _Reader

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
    "qwen4_exp_text": "has indexed-attention (QSA) layers, whose token indexer keeps a key cache of its own "
    "and selects tokens per query, beside linear-attention layers, hyper-connections and hashed n-gram "
    "per-layer embeddings, which the calculator does not model yet",
}
