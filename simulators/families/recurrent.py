"""Recurrent, short-convolution and Mamba-1-hybrid models, and their hybrids with attention: Jamba,
Zamba, Zamba2, LFM2 (+MoE), LFM3, RecurrentGemma, RWKV and xLSTM (pure Mamba models and the
Mamba-2 hybrids are in ``mamba``).

Their token mixers keep a fixed-size state (convolution window, SSM or recurrent state) instead of
a KV cache that grows with the context: ``layer_kinds`` "ssm" / "recurrent" with
``layer_state_bytes`` (bytes as transformers keeps them for a bf16 model: convolution windows in
bf16, SSM states in float32 where the scan accumulates in float32), and "full" / "sliding" for the
attention layers. ``layer_attention_params`` gives every layer's token-mixer parameters.
"""

from __future__ import annotations

from typing import Any

from simulators.families.common import attention_params, dt_rank, kinds_list, mamba1_mixer_params
from simulators.model_config import _fail, _Reader

BF16 = 2  # bytes of a bf16 number (the model's dtype: convolution windows, K/V)
FP32 = 4  # bytes of a float32 number (SSM and recurrent states accumulated in float32)


# ---------------------------------------------------------------------------------------------
# Shared helpers
# ---------------------------------------------------------------------------------------------


def _kv_heads(r: _Reader, heads: int, default: int | None) -> int:
    """num_key_value_heads: the config class's default when absent, num_attention_heads when null
    (where the class maps None to the query heads; ``default`` None means that is the default too)."""
    if "num_key_value_heads" in r.config and r.config["num_key_value_heads"] is None:
        kv = heads
    else:
        kv = r.int("num_key_value_heads", limit_key="num_kv_heads", default=default or heads)
    if heads % kv:
        raise _fail(
            "num_key_value_heads",
            f"num_attention_heads ({heads}) must be divisible by the number of KV heads ({kv})",
        )
    return kv


def _number(r: _Reader, name: str, default: float | None) -> float | None:
    """A positive real-valued factor (absent: ``default``; null stays None)."""
    if name not in r.config:
        return default
    value = r.config[name]
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 < value <= 1024:
        raise _fail(name, f"must be a positive number, got {value!r}")
    return value


def _common(r: _Reader, family: str, name: str) -> dict[str, Any]:
    return {
        "family": family,
        "name": name,
        "max_positions": r.int("max_position_embeddings", limit_key="max_positions", default=0, minimum=0),
    }


# ---------------------------------------------------------------------------------------------
# LFM2, LFM2-MoE, LFM3 (Liquid AI): gated short convolutions + attention
# ---------------------------------------------------------------------------------------------


def _short_conv(h: int, kernel: int, bias: bool) -> int:
    """Lfm2ShortConv: depthwise conv1d (h x kernel), in_proj (h -> 3h), out_proj (h -> h)."""
    return h * kernel + h * 3 * h + h * h + ((h + 3 * h + h) if bias else 0)


def _lfm_layers(
    r: _Reader,
    family: str,
    hidden: int,
    layers: int,
    heads: int,
    kv: int,
    head_dim: int,
    kinds: list[str],
    *,
    attention_bias: bool = False,
    gate: bool = False,
) -> dict[str, Any]:
    """Per-layer mixers of the LFM family: "conv" layers keep a (hidden x conv_L_cache) bf16 window
    (LinearAttentionLayer.conv_states); attention layers keep K and V (q/k RMSNorm over head_dim)."""
    kernel = r.int("conv_L_cache", limit_key="head_dim", default=7 if family == "lfm3" else 3)
    conv_bias = r.bool("conv_bias", default=False)
    attention = attention_params(hidden, heads, kv, head_dim, qkv_bias=attention_bias, o_bias=attention_bias)
    attention += 2 * head_dim  # q_layernorm / k_layernorm (q_norm / k_norm in LFM3)
    if gate:
        attention += hidden * heads  # LFM3's g_proj: a sigmoid output gate per head
    out_kinds, mixers, kv_elements, states = [], [], [], []
    for kind in kinds:
        if kind == "conv":
            out_kinds.append("recurrent")
            mixers.append(_short_conv(hidden, kernel, conv_bias))
            kv_elements.append(0)
            states.append(hidden * kernel * BF16)
        else:
            out_kinds.append("sliding" if kind == "sliding_attention" else "full")
            mixers.append(attention)
            kv_elements.append(2 * kv * head_dim)
            states.append(0)
    return {
        "layer_kinds": tuple(out_kinds),
        "layer_attention_params": tuple(mixers),
        "layer_kv_elements": tuple(kv_elements),
        "layer_state_bytes": tuple(states),
    }


def read_lfm2(r: _Reader, cfg: dict, family: str, name: str) -> dict[str, Any]:
    """LFM2 (transformers models/lfm2/modeling_lfm2.py: Lfm2ShortConv, Lfm2Attention, Lfm2MLP;
    configuration_lfm2.py: Lfm2Config).

    Layers are "conv" (gated short convolution) or "full_attention", from ``layer_types`` or else
    ``full_attn_idxs`` (default: every layer attention). The SwiGLU MLP's width is
    ``block_ff_dim`` / ``intermediate_size``, cut to 2/3, scaled by ``block_ffn_dim_multiplier`` and
    rounded up to ``block_multiple_of`` when ``block_auto_adjust_ff_dim``. Norms: operator_norm and
    ffn_norm per layer and the final embedding_norm.
    """
    hidden = r.int("hidden_size", limit_key="hidden_size")
    layers = r.int("num_hidden_layers", limit_key="num_layers")
    heads = r.int("num_attention_heads", limit_key="num_heads")
    kv = _kv_heads(r, heads, 8)
    head_dim = r.int("head_dim", limit_key="head_dim", default=hidden // heads)
    if r.present("layer_types"):
        kinds = kinds_list(r, "layer_types", layers, {"conv", "full_attention"})
    else:
        idxs = r.config.get("full_attn_idxs")
        if idxs is None:
            idxs = list(range(layers))
        if not isinstance(idxs, list) or not all(
            isinstance(i, int) and not isinstance(i, bool) for i in idxs
        ):
            raise _fail("full_attn_idxs", "must be a list of layer indices")
        kinds = ["full_attention" if i in idxs else "conv" for i in range(layers)]

    inner = r.int("block_ff_dim", "intermediate_size", limit_key="intermediate_size")
    if r.bool("block_auto_adjust_ff_dim", default=True):
        inner = int(2 * inner / 3)
        multiplier = _number(r, "block_ffn_dim_multiplier", 1.0)
        if multiplier is not None:
            inner = int(multiplier * inner)
            multiple = r.int("block_multiple_of", limit_key="head_dim", default=256)
            inner = multiple * ((inner + multiple - 1) // multiple)
    if inner < 1:
        raise _fail("intermediate_size", f"gives an MLP of width {inner}")
    return _common(r, family, name) | {
        "hidden_size": hidden,
        "num_layers": layers,
        "num_heads": heads,
        "num_kv_heads": kv,
        "head_dim": head_dim,
        "intermediate_size": inner,
        "vocab_size": r.int("vocab_size", limit_key="vocab_size"),
        "tie_word_embeddings": r.bool("tie_embedding", "tie_word_embeddings", default=True),
        "norms_per_layer": 2,
        **_lfm_layers(r, family, hidden, layers, heads, kv, head_dim, kinds),
    }


def read_lfm2_moe(r: _Reader, cfg: dict, family: str, name: str) -> dict[str, Any]:
    """LFM2-MoE (transformers models/lfm2_moe/modeling_lfm2_moe.py: Lfm2MoeDecoderLayer,
    Lfm2MoeSparseMoeBlock, Lfm2MoeMLP; configuration_lfm2_moe.py).

    LFM2's conv / attention layers; the first ``num_dense_layers`` have a SwiGLU MLP of
    ``intermediate_size`` (no 2/3 adjustment), the others ``num_experts`` experts of
    ``moe_intermediate_size`` and a router (its ``expert_bias`` is a buffer, not a parameter).
    ``layer_types`` is required: transformers cannot build the model without it.
    """
    hidden = r.int("hidden_size", limit_key="hidden_size")
    layers = r.int("num_hidden_layers", limit_key="num_layers")
    heads = r.int("num_attention_heads", limit_key="num_heads")
    kv = _kv_heads(r, heads, 8)
    head_dim = r.int("head_dim", limit_key="head_dim", default=hidden // heads)
    if not r.present("layer_types"):
        raise _fail(
            "layer_types", "is missing: LFM2-MoE needs the kind (conv / full_attention) of every layer"
        )
    kinds = kinds_list(r, "layer_types", layers, {"conv", "full_attention"})
    inner = r.int("intermediate_size", limit_key="intermediate_size")
    experts = r.int("num_experts", limit_key="num_experts", default=32)
    top_k = r.int("num_experts_per_tok", limit_key="experts_per_token", default=4)
    if top_k > experts:
        raise _fail("num_experts_per_tok", f"{top_k} is more than the {experts} experts")
    dense = r.int("num_dense_layers", limit_key="num_layers", default=2, minimum=0)
    return _common(r, family, name) | {
        "hidden_size": hidden,
        "num_layers": layers,
        "num_heads": heads,
        "num_kv_heads": kv,
        "head_dim": head_dim,
        "intermediate_size": inner,
        "vocab_size": r.int("vocab_size", limit_key="vocab_size"),
        "tie_word_embeddings": r.bool("tie_embedding", "tie_word_embeddings", default=True),
        "norms_per_layer": 2,
        "num_experts": experts,
        "experts_per_token": top_k,
        "expert_intermediate_size": r.int(
            "moe_intermediate_size", limit_key="expert_intermediate_size", default=1792
        ),
        "moe_layers": tuple(range(min(dense, layers), layers)),
        **_lfm_layers(r, family, hidden, layers, heads, kv, head_dim, kinds),
    }


def read_lfm3(r: _Reader, cfg: dict, family: str, name: str) -> dict[str, Any]:
    """LFM3 (transformers models/lfm3/modeling_lfm3.py: Lfm3Attention, Lfm3ShortConv,
    Lfm3DecoderLayer, Lfm3MLP; configuration_lfm3.py: Lfm3Config).

    LFM2's short convolutions with full and sliding-window attention (``layer_types``; default
    every 4th layer from 2 full, every 4th from 4 sliding, the rest conv). Attention has
    ``head_dim`` (default 128), optional biases (``attention_bias``), q/k RMSNorm and, with
    ``use_attention_gate``, a per-head sigmoid gate (g_proj). The SwiGLU MLP is
    ``intermediate_size`` wide. ``use_sandwich_norm`` adds post-operator and post-FFN norms.
    """
    hidden = r.int("hidden_size", limit_key="hidden_size")
    layers = r.int("num_hidden_layers", limit_key="num_layers")
    heads = r.int("num_attention_heads", limit_key="num_heads")
    kv = _kv_heads(r, heads, 4)
    head_dim = r.int("head_dim", limit_key="head_dim", default=128)
    if r.present("layer_types"):
        kinds = kinds_list(r, "layer_types", layers, {"conv", "full_attention", "sliding_attention"})
    else:
        kinds = [
            "full_attention" if i % 4 == 2 else "sliding_attention" if i % 4 == 0 and i > 0 else "conv"
            for i in range(layers)
        ]
    out = _common(r, family, name) | {
        "hidden_size": hidden,
        "num_layers": layers,
        "num_heads": heads,
        "num_kv_heads": kv,
        "head_dim": head_dim,
        "intermediate_size": r.int("intermediate_size", limit_key="intermediate_size"),
        "vocab_size": r.int("vocab_size", limit_key="vocab_size"),
        "tie_word_embeddings": r.bool("tie_word_embeddings", default=True),
        "norms_per_layer": 4 if r.bool("use_sandwich_norm", default=True) else 2,
        **_lfm_layers(
            r,
            family,
            hidden,
            layers,
            heads,
            kv,
            head_dim,
            kinds,
            attention_bias=r.bool("attention_bias", default=False),
            gate=r.bool("use_attention_gate", default=True),
        ),
    }
    sliding = tuple(i for i, k in enumerate(kinds) if k == "sliding_attention")
    if sliding:
        if "sliding_window" in r.config and r.config["sliding_window"] is None:
            raise _fail("sliding_window", "is null but layer_types has sliding_attention layers")
        out["sliding_window"] = r.int("sliding_window", limit_key="sliding_window", default=256)
        out["sliding_layers"] = sliding
    return out


# ---------------------------------------------------------------------------------------------
# Jamba (AI21): Mamba + attention, MoE every other layer
# ---------------------------------------------------------------------------------------------


def read_jamba(r: _Reader, cfg: dict, family: str, name: str) -> dict[str, Any]:
    """Jamba (transformers models/jamba/modeling_jamba.py: JambaMambaMixer, JambaAttention,
    JambaSparseMoeBlock; configuration_jamba.py: JambaConfig.layers_block_type / layers_num_experts).

    Layer i is attention when i % attn_layer_period == attn_layer_offset, else a Mamba mixer of
    inner width mamba_expand x hidden_size, with RMSNorms on dt (rank), B and C (state). Its MLP is
    an MoE of num_experts experts of intermediate_size when i % expert_layer_period ==
    expert_layer_offset, else a SwiGLU MLP. Cache: K/V on attention layers; on Mamba layers the
    conv window (inner x mamba_d_conv, bf16) and the SSM state (inner x mamba_d_state, float32 —
    the scan accumulates in float32).
    """
    hidden = r.int("hidden_size", limit_key="hidden_size")
    layers = r.int("num_hidden_layers", limit_key="num_layers")
    heads = r.int("num_attention_heads", limit_key="num_heads")
    kv = _kv_heads(r, heads, 8)
    head_dim = r.int("head_dim", limit_key="head_dim", default=hidden // heads)
    inner_mlp = r.int("intermediate_size", limit_key="intermediate_size")
    periods = {}
    for key, default in (
        ("attn_layer_period", 8),
        ("attn_layer_offset", 4),
        ("expert_layer_period", 2),
        ("expert_layer_offset", 1),
    ):
        periods[key] = r.int(
            key, limit_key="num_layers", default=default, minimum=0 if "offset" in key else 1
        )
    for what in ("attn", "expert"):
        if periods[f"{what}_layer_offset"] >= periods[f"{what}_layer_period"]:
            raise _fail(f"{what}_layer_offset", f"must be smaller than {what}_layer_period")
    experts = r.int("num_experts", "num_local_experts", limit_key="num_experts", default=16)
    top_k = r.int("num_experts_per_tok", limit_key="experts_per_token", default=2)
    if experts > 1 and top_k > experts:  # with one expert, every MLP is dense and top_k unused
        raise _fail("num_experts_per_tok", f"{top_k} is more than the {experts} experts")

    state = r.int("mamba_d_state", limit_key="head_dim", default=16)
    conv = r.int("mamba_d_conv", limit_key="head_dim", default=4)
    inner = r.int("mamba_expand", limit_key="head_dim", default=2) * hidden
    rank = dt_rank(r, "mamba_dt_rank", hidden)
    mamba = mamba1_mixer_params(
        hidden,
        inner,
        conv,
        state,
        rank,
        conv_bias=r.bool("mamba_conv_bias", default=True),
        proj_bias=r.bool("mamba_proj_bias", default=False),
    )
    mamba += rank + 2 * state  # dt_layernorm, b_layernorm, c_layernorm
    attention = attention_params(hidden, heads, kv, head_dim, qkv_bias=False, o_bias=False)

    is_attention = [i % periods["attn_layer_period"] == periods["attn_layer_offset"] for i in range(layers)]
    moe = tuple(
        i
        for i in range(layers)
        if experts > 1 and i % periods["expert_layer_period"] == periods["expert_layer_offset"]
    )
    return _common(r, family, name) | {
        "hidden_size": hidden,
        "num_layers": layers,
        "num_heads": heads,
        "num_kv_heads": kv,
        "head_dim": head_dim,
        "intermediate_size": inner_mlp,
        "vocab_size": r.int("vocab_size", limit_key="vocab_size"),
        "tie_word_embeddings": r.bool("tie_word_embeddings", default=False),
        "norms_per_layer": 2,  # input_layernorm, pre_ff_layernorm
        "num_experts": experts if moe else 0,
        "experts_per_token": top_k if moe else 0,
        "expert_intermediate_size": inner_mlp if moe else 0,
        "moe_layers": moe,
        "layer_kinds": tuple("full" if a else "ssm" for a in is_attention),
        "layer_attention_params": tuple(attention if a else mamba for a in is_attention),
        "layer_kv_elements": tuple(2 * kv * head_dim if a else 0 for a in is_attention),
        "layer_state_bytes": tuple(
            0 if a else inner * conv * BF16 + inner * state * FP32 for a in is_attention
        ),
    }


# ---------------------------------------------------------------------------------------------
# Zamba, Zamba2 (Zyphra): Mamba layers, some with a shared attention + MLP block in front
# ---------------------------------------------------------------------------------------------


def _zamba_block_types(r: _Reader, layers: int, default: list[str]) -> list[str]:
    """layers_block_type (alias layer_types): "mamba" / "linear_attention" or "hybrid" per layer."""
    name = r.present("layers_block_type", "layer_types")
    if name is None:
        kinds = default
        if len(kinds) != layers:
            raise _fail(
                "layers_block_type",
                f"is missing, and the default pattern has {len(kinds)} layers, not num_hidden_layers "
                f"({layers}): give layers_block_type",
            )
    else:
        kinds = kinds_list(r, name, layers, {"mamba", "linear_attention", "hybrid"})
    return ["hybrid" if k == "hybrid" else "mamba" for k in kinds]


def read_zamba(r: _Reader, cfg: dict, family: str, name: str) -> dict[str, Any]:
    """Zamba (transformers models/zamba/modeling_zamba.py: ZambaMambaMixer, ZambaAttention,
    ZambaAttentionDecoderLayer, ZambaHybridLayer, ZambaModel; configuration_zamba.py).

    Every layer is a multi-head Mamba mixer (n_mamba_heads heads, per-head x_proj/dt_proj) with an
    input RMSNorm. "hybrid" layers first run one shared attention + SwiGLU block on concat(hidden,
    embeddings) of width attention_hidden_size, then their own linear (hidden x hidden). transformers
    ties the block's copies only when tie_word_embeddings is set (counted once, in the first hybrid
    layer); otherwise each hybrid layer keeps its own copy. Hybrid layers cache
    K/V (num_key_value_heads x attention_head_dim) besides their Mamba conv window (bf16) and SSM
    state (float32).
    """
    hidden = r.int("hidden_size", limit_key="hidden_size")
    layers = r.int("num_hidden_layers", limit_key="num_layers")
    heads = r.int("num_attention_heads", limit_key="num_heads")
    kv = _kv_heads(r, heads, 16)
    attn_hidden = r.config.get("attention_hidden_size") or 2 * hidden
    attn_hidden = r.int("attention_hidden_size", limit_key="hidden_size", default=attn_hidden)
    head_dim = r.config.get("attention_head_dim") or 2 * hidden // heads
    head_dim = r.int("attention_head_dim", "head_dim", limit_key="head_dim", default=head_dim)
    inner_mlp = r.int("intermediate_size", limit_key="intermediate_size")
    period = r.int("attn_layer_period", limit_key="num_layers", default=6)
    offset = r.int("attn_layer_offset", limit_key="num_layers", default=4, minimum=0)
    default = ["linear_attention", "linear_attention", "hybrid"] + [
        "hybrid" if i % period == offset else "linear_attention" for i in range(layers - 3)
    ]
    kinds = _zamba_block_types(r, layers, default)

    state = r.int("mamba_d_state", limit_key="head_dim", default=16)
    conv = r.int("mamba_d_conv", limit_key="head_dim", default=4)
    inner = r.int("mamba_expand", limit_key="head_dim", default=2) * hidden
    mamba_heads = r.int("n_mamba_heads", limit_key="num_heads", default=2)
    if inner % mamba_heads:
        raise _fail("n_mamba_heads", f"must divide mamba_expand x hidden_size ({inner})")
    rank = dt_rank(r, "mamba_dt_rank", hidden)
    # Per-head x_proj (rank + 2 state rows per head) and dt_proj add up to Mamba's shapes.
    mamba = mamba1_mixer_params(
        hidden,
        inner,
        conv,
        state,
        rank,
        conv_bias=r.bool("mamba_conv_bias", default=True),
        proj_bias=r.bool("mamba_proj_bias", default=False),
    )
    shared = attention_params(attn_hidden, heads, kv, head_dim, qkv_bias=False, o_bias=False, out=hidden)
    tie = r.bool("tie_word_embeddings", default=True)
    hybrids = [i for i, k in enumerate(kinds) if k == "hybrid"]
    owners = set(hybrids[:1] if tie else hybrids)  # layers whose shared block is counted
    mixers = []
    for i, kind in enumerate(kinds):
        params = mamba
        if kind == "hybrid":
            params += hidden * hidden  # the hybrid layer's own linear
        if i in owners:
            params += shared
        mixers.append(params)
    mamba_state = inner * conv * BF16 + inner * state * FP32
    return _common(r, family, name) | {
        "hidden_size": hidden,
        "num_layers": layers,
        "num_heads": heads,
        "num_kv_heads": kv,
        "head_dim": head_dim,
        "intermediate_size": inner_mlp,
        "vocab_size": r.int("vocab_size", limit_key="vocab_size"),
        "tie_word_embeddings": tie,
        "norms_per_layer": 1,  # each Mamba layer's input_layernorm
        # the shared block's input_layernorm (attention_hidden_size) and pre_ff_layernorm
        "extra_norm_params": len(owners) * (attn_hidden + hidden),
        "layer_intermediate": tuple(inner_mlp if i in owners else 0 for i in range(layers)),
        "layer_kinds": tuple("full" if k == "hybrid" else "ssm" for k in kinds),
        "layer_attention_params": tuple(mixers),
        "layer_kv_elements": tuple(2 * kv * head_dim if k == "hybrid" else 0 for k in kinds),
        "layer_state_bytes": (mamba_state,) * layers,
    }


_ZAMBA2_DEFAULT_BLOCKS = (
    ["linear_attention"]
    + (["linear_attention"] * 5 + ["hybrid"]) * 7
    + ["linear_attention"] * 4
    + ["hybrid"]
    + ["linear_attention"] * 3
    + ["hybrid"]
    + ["linear_attention"] * 2
)  # Zamba2Config's layers_block_type when absent


def read_zamba2(r: _Reader, cfg: dict, family: str, name: str) -> dict[str, Any]:
    """Zamba2 (transformers models/zamba2/modeling_zamba2.py: Zamba2MambaMixer, Zamba2Attention,
    Zamba2MLP, Zamba2AttentionDecoderLayer, Zamba2Model.get_layers; configuration_zamba2.py).

    Every layer is a Mamba2 mixer (n_mamba_heads heads, mamba_ngroups groups, gated RMSNorm) with
    an input RMSNorm. "hybrid" layers first run one of num_mem_blocks shared attention + MLP blocks
    (hybrid layer k uses block k % num_mem_blocks; each block's weights counted once), then their
    own linear. A block's attention reads 2 x hidden_size with heads of 2 x hidden_size / heads; its
    MLP (gate_up + down, biased with add_bias_linear) carries a LoRA-style adapter (hidden -> rank ->
    2 x intermediate) for each hybrid layer it serves, and its q/k/v carry one each when
    use_shared_attention_adapter. Cache: hybrid layers' K/V; every layer's conv window
    (intermediate + 2 x groups x state channels x mamba_d_conv, bf16) and SSM state (heads x
    head dim x state, float32).
    """
    hidden = r.int("hidden_size", limit_key="hidden_size")
    layers = r.int("num_hidden_layers", limit_key="num_layers")
    heads = r.int("num_attention_heads", limit_key="num_heads")
    kv = _kv_heads(r, heads, None)
    attn_hidden = 2 * hidden  # Zamba2Config sets these, whatever the config says
    head_dim = 2 * hidden // heads
    inner_mlp = r.config.get("intermediate_size") or 4 * hidden
    inner_mlp = r.int("intermediate_size", limit_key="intermediate_size", default=inner_mlp)
    kinds = _zamba_block_types(r, layers, _ZAMBA2_DEFAULT_BLOCKS)
    bias = r.bool("add_bias_linear", default=False)

    expand = _number(r, "mamba_expand", 2)
    if expand is None:
        raise _fail("mamba_expand", "must be a number")
    inner = int(expand * hidden)
    mamba_heads = r.int("n_mamba_heads", limit_key="num_heads", default=8)
    if inner % mamba_heads:
        raise _fail("n_mamba_heads", f"must divide mamba_expand x hidden_size ({inner})")
    groups = r.int("mamba_ngroups", limit_key="num_heads", default=1)
    if mamba_heads % groups:
        raise _fail("mamba_ngroups", f"must divide n_mamba_heads ({mamba_heads})")
    state = r.int("mamba_d_state", limit_key="head_dim", default=64)
    conv = r.int("mamba_d_conv", limit_key="head_dim", default=4)
    conv_dim = inner + 2 * groups * state
    mamba = hidden * (inner + conv_dim + mamba_heads) + ((inner + conv_dim + mamba_heads) if bias else 0)
    mamba += conv_dim * conv + conv_dim  # conv1d, always with bias
    mamba += 3 * mamba_heads  # dt_bias, A_log, D
    mamba += inner  # gated RMSNorm
    mamba += inner * hidden + (hidden if bias else 0)  # out_proj

    blocks = r.int("num_mem_blocks", limit_key="num_layers", default=1)
    rank = r.int("adapter_rank", limit_key="lora_rank", default=128)
    attention_adapters = r.bool("use_shared_attention_adapter", default=False)
    tie = r.bool("tie_word_embeddings", default=True)
    hybrids = [i for i, k in enumerate(kinds) if k == "hybrid"]
    attention = attention_params(attn_hidden, heads, kv, head_dim, qkv_bias=False, o_bias=False, out=hidden)
    mixers = [mamba + (hidden * hidden if k == "hybrid" else 0) for k in kinds]
    widths = [0] * layers
    # Hybrid layer k runs block k % num_mem_blocks. transformers ties the blocks' copies only when
    # tie_word_embeddings is set (PreTrainedModel.get_expanded_tied_weights_keys); otherwise every
    # hybrid layer keeps its own copy.
    owners = list(enumerate(hybrids[:blocks] if tie else hybrids))
    for k, layer in owners:
        served = len(range(k % blocks, len(hybrids), blocks))  # layers using this block: one adapter each
        mixers[layer] += attention + served * hidden * rank + served * rank * 2 * inner_mlp
        if attention_adapters:
            mixers[layer] += served * 3 * (attn_hidden * rank + rank * attn_hidden)
        widths[layer] = inner_mlp
    mamba_state = conv_dim * conv * BF16 + mamba_heads * (inner // mamba_heads) * state * FP32
    return _common(r, family, name) | {
        "hidden_size": hidden,
        "num_layers": layers,
        "num_heads": heads,
        "num_kv_heads": kv,
        "head_dim": head_dim,
        "intermediate_size": inner_mlp,
        "vocab_size": r.int("vocab_size", limit_key="vocab_size"),
        "tie_word_embeddings": tie,
        "mlp_bias": bias,
        "norms_per_layer": 1,  # each Mamba layer's input_layernorm
        "extra_norm_params": len(owners) * (attn_hidden + hidden),  # each block's two norms
        "layer_intermediate": tuple(widths),
        "layer_kinds": tuple("full" if k == "hybrid" else "ssm" for k in kinds),
        "layer_attention_params": tuple(mixers),
        "layer_kv_elements": tuple(2 * kv * head_dim if k == "hybrid" else 0 for k in kinds),
        "layer_state_bytes": (mamba_state,) * layers,
    }


# ---------------------------------------------------------------------------------------------
# RecurrentGemma (Griffin): RG-LRU recurrent blocks + local attention
# ---------------------------------------------------------------------------------------------


def read_recurrent_gemma(r: _Reader, cfg: dict, family: str, name: str) -> dict[str, Any]:
    """RecurrentGemma (transformers models/recurrent_gemma/modeling_recurrent_gemma.py:
    RecurrentGemmaRecurrentBlock, RecurrentGemmaRglru, RecurrentGemmaAttention, RecurrentGemmaMlp;
    configuration_recurrent_gemma.py).

    Layer i's temporal block is block_types[i % len(block_types)]: "recurrent" (linear_x, linear_y,
    linear_out with biases, a depthwise conv1d of conv1d_width over lru_width channels, and the
    RG-LRU: per-head block-diagonal input and recurrent gates) or "attention" (local attention over
    attention_window_size tokens, head_dim = hidden_size // heads, o_proj always biased). The MLP
    is gated, biased, intermediate_size // 2 wide. A recurrent block keeps its conv window
    (lru_width x (conv1d_width - 1), bf16) and RG-LRU state (lru_width, float32) on the module
    (conv1d_state, rg_lru.recurrent_states), outside past_key_values.
    """
    hidden = r.int("hidden_size", limit_key="hidden_size")
    layers = r.int("num_hidden_layers", limit_key="num_layers")
    heads = r.int("num_attention_heads", limit_key="num_heads")
    kv = _kv_heads(r, heads, None)
    head_dim = hidden // heads
    if head_dim < 1:
        raise _fail("num_attention_heads", f"is more than hidden_size ({hidden})")
    lru = r.int("lru_width", limit_key="hidden_size", default=hidden)
    if lru % heads:
        raise _fail("lru_width", f"must be divisible by num_attention_heads ({heads})")
    block = lru // heads
    width = r.int("conv1d_width", limit_key="head_dim", default=4)
    window = r.int("attention_window_size", "sliding_window", limit_key="sliding_window", default=2048)
    types = r.config.get("block_types", ["recurrent", "recurrent", "attention"])
    if not isinstance(types, list) or not types:
        raise _fail("block_types", "must be a non-empty list of block kinds")
    unknown = sorted({str(t) for t in types} - {"recurrent", "attention"})
    if unknown:
        raise _fail("block_types", f"blocks of kind {', '.join(unknown)} are not modelled")
    if len(types) * 100 < layers:
        raise _fail("block_types", "repeats at most 100 times in transformers: too few for num_hidden_layers")
    kinds = [types[i % len(types)] for i in range(layers)]
    inner = r.int("intermediate_size", limit_key="intermediate_size") // 2
    if inner < 1:
        raise _fail("intermediate_size", "gives an MLP of width 0")

    attention = attention_params(
        hidden, heads, kv, head_dim, qkv_bias=r.bool("attention_bias", default=False), o_bias=True
    )
    recurrent = 2 * (hidden * lru + lru) + lru * hidden + hidden  # linear_y, linear_x, linear_out
    recurrent += lru * width + lru  # conv_1d
    recurrent += lru + 2 * (heads * block * block + heads * block)  # recurrent_param, two gates
    sliding = tuple(i for i, k in enumerate(kinds) if k == "attention")
    return _common(r, family, name) | {
        "hidden_size": hidden,
        "num_layers": layers,
        "num_heads": heads,
        "num_kv_heads": kv,
        "head_dim": head_dim,
        "intermediate_size": inner,
        "vocab_size": r.int("vocab_size", limit_key="vocab_size"),
        "tie_word_embeddings": r.bool("tie_word_embeddings", default=True),
        "mlp_bias": True,
        "norms_per_layer": 2,  # temporal_pre_norm, channel_pre_norm
        "sliding_window": window if sliding else 0,
        "sliding_layers": sliding,
        "layer_kinds": tuple("sliding" if k == "attention" else "recurrent" for k in kinds),
        "layer_attention_params": tuple(attention if k == "attention" else recurrent for k in kinds),
        "layer_kv_elements": tuple(2 * kv * head_dim if k == "attention" else 0 for k in kinds),
        "layer_state_bytes": tuple(
            0 if k == "attention" else lru * (width - 1) * BF16 + lru * FP32 for k in kinds
        ),
    }


# ---------------------------------------------------------------------------------------------
# RWKV (v4) and xLSTM (mLSTM): recurrent only
# ---------------------------------------------------------------------------------------------


def read_rwkv(r: _Reader, cfg: dict, family: str, name: str) -> dict[str, Any]:
    """RWKV-4 (transformers models/rwkv/modeling_rwkv.py: RwkvSelfAttention, RwkvFeedForward,
    RwkvBlock, RwkvModel.forward's state; configuration_rwkv.py).

    Time mixing: key, value, receptance (hidden -> attention_hidden_size), output, time_decay,
    time_first and three time-mix vectors. Channel mixing: key (hidden -> intermediate_size, default
    4 x hidden), value back, and a hidden x hidden receptance with two time-mix vectors (counted with
    the mixer). LayerNorms (weight + bias): ln1, ln2 per block, pre_ln in block 0, ln_out. State:
    five (hidden x layers) tensors, the two token shifts in bf16 and the WKV numerator,
    denominator and max in float32 (returned as ``state``, not past_key_values).
    """
    hidden = r.int("hidden_size", limit_key="hidden_size")
    layers = r.int("num_hidden_layers", limit_key="num_layers")
    attn = r.int("attention_hidden_size", limit_key="hidden_size", default=hidden)
    if attn != hidden:
        raise _fail(
            "attention_hidden_size",
            f"{attn} differs from hidden_size ({hidden}): transformers' RWKV state is hidden_size wide",
        )
    inner = r.int("intermediate_size", limit_key="intermediate_size", default=4 * hidden)
    mixer = 3 * hidden * attn + attn * hidden + 2 * attn + 3 * hidden
    mixer += hidden * hidden + 2 * hidden  # channel-mix receptance and its time-mix vectors
    return _common(r, family, name) | {
        "max_positions": r.int("context_length", limit_key="max_positions", default=0, minimum=0),
        "hidden_size": hidden,
        "num_layers": layers,
        "num_heads": 1,  # RWKV-4's WKV has no heads: one channel-wise recurrence
        "num_kv_heads": 1,
        "head_dim": attn,
        "intermediate_size": inner,
        "vocab_size": r.int("vocab_size", limit_key="vocab_size"),
        "tie_word_embeddings": r.bool("tie_word_embeddings", default=False),
        "gated_mlp": False,  # channel-mix key and value
        "layer_norm": True,
        "norms_per_layer": 2,
        "extra_norm_params": 2 * hidden,  # block 0's pre_ln
        "layer_kinds": ("recurrent",) * layers,
        "layer_attention_params": (mixer,) * layers,
        "layer_kv_elements": (0,) * layers,
        "layer_state_bytes": (hidden * (2 * BF16 + 3 * FP32),) * layers,
    }


def _round_up(value: float, multiple: int) -> int:
    """xLSTM's round_up_to_next_multiple_of (float arithmetic, as in configuration_xlstm.py)."""
    return int(((value + multiple - 1) // multiple) * multiple)


def read_xlstm(r: _Reader, cfg: dict, family: str, name: str) -> dict[str, Any]:
    """xLSTM-7B-style mLSTM blocks (transformers models/xlstm/modeling_xlstm.py: xLSTMLayer,
    xLSTMFeedForward, xLSTMBlock, xLSTMCache; configuration_xlstm.py: xLSTMConfig).

    Each block: RMSNorm, mLSTM layer (q, k of hidden x qk_dim_factor, v and the output gate of
    hidden x v_dim_factor, input and forget gates per head with bias, a multi-head norm over v,
    out_proj), RMSNorm and a SwiGLU FFN of hidden x ffn_proj_factor rounded up to
    ffn_round_up_to_multiple_of (biases and norm biases with use_bias). xLSTMCache keeps per
    layer C (heads x qk_head_dim x v_head_dim), n (heads x qk_head_dim) and m (heads) in the
    model's dtype, and an int64 position counter.
    """
    hidden = r.int("hidden_size", limit_key="hidden_size", default=4096)
    embed = r.int("embedding_dim", limit_key="hidden_size", default=hidden)
    if embed != hidden:
        raise _fail("embedding_dim", f"{embed} differs from hidden_size ({hidden}): the blocks would not fit")
    cache_layers = r.int("num_hidden_layers", limit_key="num_layers", default=32)
    layers = r.int("num_blocks", limit_key="num_layers", default=cache_layers)
    if layers != cache_layers:
        raise _fail(
            "num_blocks", f"{layers} differs from num_hidden_layers ({cache_layers}), which sizes the cache"
        )
    heads = r.int("num_heads", limit_key="num_heads", default=8)
    bias = r.bool("use_bias", default=False)
    weight_mode = r.config.get("weight_mode", "single")
    if weight_mode not in ("single", "fused"):
        raise _fail("weight_mode", f"must be single or fused, got {weight_mode!r}")
    qk_factor = _number(r, "qk_dim_factor", 0.5)
    v_factor = _number(r, "v_dim_factor", 1.0)
    ffn_factor = _number(r, "ffn_proj_factor", 2.667)
    if qk_factor is None or v_factor is None or ffn_factor is None:
        raise _fail("qk_dim_factor / v_dim_factor / ffn_proj_factor", "must be numbers")
    qk, v = int(hidden * qk_factor), int(hidden * v_factor)
    # The layers use int(hidden x factor); xLSTMCache rounds it up to a multiple of 64.
    for field, dim, factor in (("qk_dim_factor", qk, qk_factor), ("v_dim_factor", v, v_factor)):
        if dim != _round_up(hidden * factor, 64) or dim % heads:
            raise _fail(field, f"gives {dim}, not a multiple of 64 and of num_heads: its cache would not fit")
    ffn = _round_up(
        hidden * ffn_factor, r.int("ffn_round_up_to_multiple_of", limit_key="head_dim", default=64)
    )

    mixer = hidden * (2 * qk + 2 * v) + ((2 * qk + 2 * v) if bias else 0)  # q, k, v, output gate
    mixer += 2 * (hidden * heads + heads)  # input and forget gates, always biased
    mixer += v + (v if bias else 0)  # multi-head norm
    mixer += v * hidden + (hidden if bias else 0)  # out_proj
    state = heads * ((qk // heads) * (v // heads) + qk // heads + 1) * BF16
    return _common(r, family, name) | {
        "hidden_size": hidden,
        "num_layers": layers,
        "num_heads": heads,
        "num_kv_heads": heads,
        "head_dim": v // heads,
        "intermediate_size": ffn,
        "vocab_size": r.int("vocab_size", limit_key="vocab_size"),
        # xLSTMForCausalLM declares no tied weights: lm_head is its own matrix whatever the config says
        "tie_word_embeddings": False,
        "mlp_bias": bias,
        "norms_per_layer": 2,  # norm_mlstm, norm_ffn (out_norm is the final norm)
        "extra_norm_params": 2 * hidden * layers if bias else 0,  # their biases
        "layer_kinds": ("recurrent",) * layers,
        "layer_attention_params": (mixer,) * layers,
        "layer_kv_elements": (0,) * layers,
        # + 8 bytes: the cache's int64 seqlen_offset, counted with the first layer
        "layer_state_bytes": (state + 8,) + (state,) * (layers - 1),
    }


READERS = {
    "jamba": read_jamba,
    "zamba": read_zamba,
    "zamba2": read_zamba2,
    "lfm2": read_lfm2,
    "lfm2_moe": read_lfm2_moe,
    "lfm3": read_lfm3,
    "recurrent_gemma": read_recurrent_gemma,
    "rwkv": read_rwkv,
    "xlstm": read_xlstm,
}
