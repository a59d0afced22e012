"""Mamba models and the hybrids built on a Mamba-2 mixer: Mamba and Falcon Mamba (Mamba-1
mixers), Mamba-2, and the hybrids of a Mamba-2 mixer with attention and MoE: Bamba, Falcon-H1
(attention and Mamba-2 side by side in every layer), Nemotron-H (one mixer per block: Mamba-2,
attention, MLP or MoE), Granite 4.0 hybrid (Mamba-2 or attention, then MoE + shared MLP) and ZAYA1
(attention with a convolved q/k path and a delayed value state, then a routed MoE).

A state-space layer keeps no per-token cache: its ``layer_state_bytes`` are the convolution state
(the last ``conv_kernel`` inputs of the depthwise convolution, kept in the activations' dtype: bf16)
and the SSM state (kept in float32: the torch scans accumulate it from float32 ``A`` and ``dt``),
as transformers' ``LinearAttentionLayer`` holds them after a forward. Every Mamba-2 mixer is sized by
one counter, ``_mamba2_mixer``.
"""

from __future__ import annotations

from typing import Any

from simulators.families.common import (
    CONV_STATE_BYTES,
    LEGACY_LAYER_TYPES,
    SSM_STATE_BYTES,
    attention_params,
    dt_rank,
    kinds_list,
    mamba1_mixer_params,
)
from simulators.model_config import _LIMITS, _fail, _Reader

# transformers' remap of legacy layer-type names (configuration_utils._LEGACY_LAYER_TYPE_REMAP)


# ---------------------------------------------------------------------------------------------
# Helpers
# ---------------------------------------------------------------------------------------------


def _mamba2_mixer(
    hidden: int,
    inner: int,
    heads: int,
    head_dim: int,
    groups: int,
    state: int,
    conv_kernel: int,
    *,
    conv_bias: bool,
    in_bias: bool,
    out_bias: bool,
    gated_norm: bool = True,
    field: str = "mamba_n_heads",
    groups_field: str = "mamba_n_groups",
) -> tuple[int, int]:
    """(parameters, state bytes per sequence) of one Mamba-2 mixer (transformers
    models/mamba2/modeling_mamba2.py: Mamba2Mixer; the same in Bamba, Falcon-H1, Nemotron-H and
    Granite 4.0 hybrid).

    in_proj: hidden -> gate (inner) + x, B, C (conv_dim = inner + 2 groups state) + dt (heads);
    depthwise conv1d over conv_dim channels; dt_bias, A_log, D per head; the gated RMSNorm over
    inner; out_proj inner -> hidden. Cache: conv state conv_dim x conv_kernel (bf16) and SSM state
    heads x head_dim x state (float32).
    """
    if heads * head_dim != inner:
        raise _fail(field, f"{heads} heads x head size {head_dim} must equal the mixer width {inner}")
    if heads % groups:
        raise _fail(groups_field, f"{heads} Mamba heads are not divisible by {groups} groups")
    conv_dim = inner + 2 * groups * state
    projection = inner + conv_dim + heads
    params = hidden * projection + (projection if in_bias else 0)
    params += conv_dim * conv_kernel + (conv_dim if conv_bias else 0)
    params += 3 * heads  # dt_bias, A_log, D
    params += inner if gated_norm else 0
    params += inner * hidden + (hidden if out_bias else 0)
    state_bytes = conv_dim * conv_kernel * CONV_STATE_BYTES + heads * head_dim * state * SSM_STATE_BYTES
    return params, state_bytes


def _auto_head_dim(r: _Reader, name: str, inner: int, heads: int) -> int:
    """A Mamba head size that may be "auto" (the mixer width / heads, as the config classes do)."""
    if r.config.get(name, "auto") == "auto":
        if inner % heads:
            raise _fail(name, f"'auto' needs {heads} Mamba heads to divide the mixer width {inner}")
        return inner // heads
    return r.int(name, limit_key="head_dim")


def _hybrid_attention(
    r: _Reader, heads_default: int, kv_default: int | None, head_dim_default: int = 0
) -> tuple[int, int, int]:
    """(heads, KV heads, head size) of a hybrid's attention layers: ``getattr(config, "head_dim",
    hidden_size // num_attention_heads)`` in their modelling files (``head_dim_default`` where the
    config class has a head_dim of its own). ``kv_default`` None: an absent ``num_key_value_heads``
    means as many as the query heads."""
    hidden = r.int("hidden_size", limit_key="hidden_size", default=4096)
    heads = r.int("num_attention_heads", limit_key="num_heads", default=heads_default)
    if kv_default is None or ("num_key_value_heads" in r.config and r.config["num_key_value_heads"] is None):
        kv_default = heads  # the config classes turn a null num_key_value_heads into num_attention_heads
    kv_heads = r.int("num_key_value_heads", limit_key="num_kv_heads", default=kv_default)
    if heads % kv_heads:
        raise _fail("num_key_value_heads", f"{heads} attention heads are not divisible by {kv_heads}")
    head_dim = r.int("head_dim", limit_key="head_dim", default=head_dim_default or hidden // heads)
    return heads, kv_heads, head_dim


# ---------------------------------------------------------------------------------------------
# Pure state-space models
# ---------------------------------------------------------------------------------------------


def read_mamba(r: _Reader, cfg: dict, family: str, name: str) -> dict[str, Any]:
    """Mamba and Falcon Mamba: every layer an RMSNorm and a Mamba-1 mixer, no MLP.

    transformers models/mamba/modeling_mamba.py: MambaMixer (and
    models/falcon_mamba/modeling_falcon_mamba.py: FalconMambaMixer, whose extra B/C/dt RMSNorms
    have no weights: buffers, not parameters).
    """
    hidden = r.int("hidden_size", limit_key="hidden_size", default=768)
    layers = r.int("num_hidden_layers", limit_key="num_layers", default=32)
    vocab = r.int("vocab_size", limit_key="vocab_size", default=50280)
    state = r.int("state_size", limit_key="head_dim", default=16)
    conv_kernel = r.int("conv_kernel", limit_key="head_dim", default=4)
    expand = r.int("expand", limit_key="num_heads", default=2)
    inner = expand * hidden  # MambaConfig.__post_init__ sets intermediate_size = expand x hidden_size
    given = r.optional_int("intermediate_size", limit_key="intermediate_size")
    if given is not None and given != inner:
        raise _fail(
            "intermediate_size",
            f"{given} differs from expand x hidden_size = {inner}, which transformers builds instead",
        )
    rank = dt_rank(r, "time_step_rank", hidden, null_is_auto=False)  # MambaConfig's "auto"
    use_bias = r.bool("use_bias", default=False)
    conv_bias = r.bool("use_conv_bias", default=True)

    mixer = mamba1_mixer_params(
        hidden, inner, conv_kernel, state, rank, conv_bias=conv_bias, proj_bias=use_bias
    )
    # Cache: conv state inner x conv_kernel (bf16), SSM state inner x state (float32).
    state_bytes = inner * conv_kernel * CONV_STATE_BYTES + inner * state * SSM_STATE_BYTES
    return {
        "family": family,
        "name": name,
        "hidden_size": hidden,
        "num_layers": layers,
        # No attention: one "head" as wide as the mixer (what the activation estimates read).
        "num_heads": 1,
        "num_kv_heads": 1,
        "head_dim": inner,
        "intermediate_size": 0,  # no MLP
        "vocab_size": vocab,
        "tie_word_embeddings": r.bool("tie_word_embeddings", default=True),
        "norms_per_layer": 1,  # one RMSNorm before the mixer, and norm_f
        "layer_kinds": ("ssm",) * layers,
        "layer_attention_params": (mixer,) * layers,
        "layer_kv_elements": (0,) * layers,
        "layer_state_bytes": (state_bytes,) * layers,
    }


def read_mamba2(r: _Reader, cfg: dict, family: str, name: str) -> dict[str, Any]:
    """Mamba-2: every layer an RMSNorm and a Mamba-2 mixer, no MLP.

    transformers models/mamba2/modeling_mamba2.py: Mamba2Mixer, Mamba2Block (mixer width
    int(expand x hidden_size), which Mamba2Config checks equals num_heads x head_dim).
    """
    hidden = r.int("hidden_size", limit_key="hidden_size", default=4096)
    layers = r.int("num_hidden_layers", limit_key="num_layers", default=64)
    heads = r.int("num_heads", limit_key="num_heads", default=128)
    head_dim = r.int("head_dim", limit_key="head_dim", default=64)
    inner = r.int("expand", limit_key="num_heads", default=2) * hidden
    mixer, state_bytes = _mamba2_mixer(
        hidden,
        inner,
        heads,
        head_dim,
        r.int("n_groups", limit_key="num_heads", default=8),
        r.int("state_size", limit_key="head_dim", default=128),
        r.int("conv_kernel", limit_key="head_dim", default=4),
        conv_bias=r.bool("use_conv_bias", default=True),
        in_bias=r.bool("use_bias", default=False),
        out_bias=r.bool("use_bias", default=False),
        field="num_heads",
        groups_field="n_groups",
    )
    return {
        "family": family,
        "name": name,
        "hidden_size": hidden,
        "num_layers": layers,
        "num_heads": heads,  # the SSM heads (no attention)
        "num_kv_heads": heads,
        "head_dim": head_dim,
        "intermediate_size": 0,  # no MLP
        "vocab_size": r.int("vocab_size", limit_key="vocab_size", default=32768),
        "tie_word_embeddings": r.bool("tie_word_embeddings", default=False),
        "norms_per_layer": 1,
        "layer_kinds": ("ssm",) * layers,
        "layer_attention_params": (mixer,) * layers,
        "layer_kv_elements": (0,) * layers,
        "layer_state_bytes": (state_bytes,) * layers,
    }


# ---------------------------------------------------------------------------------------------
# Mamba-2 hybrids
# ---------------------------------------------------------------------------------------------


def _hybrid_spec(
    family: str,
    name: str,
    hidden: int,
    kinds: list[str],
    heads: int,
    kv_heads: int,
    head_dim: int,
    mixer: tuple[int, int],
    attention: int,
) -> dict[str, Any]:
    """Per-layer fields of a model whose layers are either a Mamba-2 mixer ("ssm") or attention
    ("full"): mixer or attention parameters, K/V elements, state bytes."""
    ssm = [k == "ssm" for k in kinds]
    return {
        "family": family,
        "name": name,
        "hidden_size": hidden,
        "num_layers": len(kinds),
        "num_heads": heads,
        "num_kv_heads": kv_heads,
        "head_dim": head_dim,
        "layer_kinds": tuple(kinds),
        "layer_attention_params": tuple(mixer[0] if s else attention for s in ssm),
        "layer_kv_elements": tuple(0 if s else 2 * kv_heads * head_dim for s in ssm),
        "layer_state_bytes": tuple(mixer[1] if s else 0 for s in ssm),
    }


def read_bamba(r: _Reader, cfg: dict, family: str, name: str) -> dict[str, Any]:
    """Bamba: Mamba-2 layers with full attention at ``attn_layer_indices``; every layer then a
    gated MLP; two RMSNorms per layer.

    transformers models/bamba/modeling_bamba.py: BambaMixer, BambaAttention, BambaMLP,
    BambaDecoderLayer.
    """
    hidden = r.int("hidden_size", limit_key="hidden_size", default=4096)
    layers = r.int("num_hidden_layers", limit_key="num_layers", default=32)
    indices = cfg.get("attn_layer_indices") or []
    if not isinstance(indices, list) or not all(
        isinstance(i, int) and not isinstance(i, bool) for i in indices
    ):
        raise _fail("attn_layer_indices", "must be a list of layer indices")
    kinds = ["full" if i in indices else "ssm" for i in range(layers)]
    given = kinds_list(
        r,
        ("layers_block_type", "layer_types"),
        layers,
        {"linear_attention", "full_attention"},
        remap=LEGACY_LAYER_TYPES,
    )
    if given is not None and [k == "full_attention" for k in given] != [k == "full" for k in kinds]:
        raise _fail(
            "layer_types", "disagrees with attn_layer_indices, from which BambaConfig builds the layers"
        )
    heads, kv_heads, head_dim = _hybrid_attention(r, 32, 8)
    inner = r.int("mamba_expand", limit_key="num_heads", default=2) * hidden
    mamba_heads = r.int("mamba_n_heads", limit_key="num_heads", default=128)
    mixer = _mamba2_mixer(
        hidden,
        inner,
        mamba_heads,
        _auto_head_dim(r, "mamba_d_head", inner, mamba_heads),
        r.int("mamba_n_groups", limit_key="num_heads", default=1),
        r.int("mamba_d_state", limit_key="head_dim", default=256),
        r.int("mamba_d_conv", limit_key="head_dim", default=4),
        conv_bias=r.bool("mamba_conv_bias", default=True),
        in_bias=r.bool("mamba_proj_bias", default=False),
        out_bias=r.bool("mamba_proj_bias", default=False),
    )
    attention_bias = r.bool("attention_bias", default=False)
    attention = attention_params(
        hidden, heads, kv_heads, head_dim, qkv_bias=attention_bias, o_bias=attention_bias
    )
    return _hybrid_spec(family, name, hidden, kinds, heads, kv_heads, head_dim, mixer, attention) | {
        "intermediate_size": r.int("intermediate_size", limit_key="intermediate_size", default=14336),
        "vocab_size": r.int("vocab_size", limit_key="vocab_size", default=128000),
        "tie_word_embeddings": r.bool("tie_word_embeddings", default=False),
        "mlp_bias": r.bool("mlp_bias", default=False),
        "max_positions": r.int("max_position_embeddings", limit_key="max_positions", default=0, minimum=0),
    }


def read_falcon_h1(r: _Reader, cfg: dict, family: str, name: str) -> dict[str, Any]:
    """Falcon-H1: every layer runs attention and a Mamba-2 mixer side by side, then a gated MLP;
    two RMSNorms per layer. Its mixer is mamba_d_ssm wide (expand x hidden_size when null), with
    the gated RMSNorm only when mamba_rms_norm, and out_proj biased by projectors_bias.

    transformers models/falcon_h1/modeling_falcon_h1.py: FalconH1Mixer, FalconH1Attention,
    FalconH1MLP, FalconH1DecoderLayer (the muP multipliers are buffers, not parameters).
    """
    hidden = r.int("hidden_size", limit_key="hidden_size", default=4096)
    layers = r.int("num_hidden_layers", limit_key="num_layers", default=32)
    heads, kv_heads, head_dim = _hybrid_attention(r, 32, 8)
    if "mamba_d_ssm" in cfg and cfg["mamba_d_ssm"] is None:
        inner = r.int("mamba_expand", limit_key="num_heads", default=2) * hidden
    else:
        inner = r.int("mamba_d_ssm", limit_key="intermediate_size", default=1024)
    mamba_heads = r.int("mamba_n_heads", limit_key="num_heads", default=128)
    mixer, state_bytes = _mamba2_mixer(
        hidden,
        inner,
        mamba_heads,
        _auto_head_dim(r, "mamba_d_head", inner, mamba_heads),
        r.int("mamba_n_groups", limit_key="num_heads", default=1),
        r.int("mamba_d_state", limit_key="head_dim", default=256),
        r.int("mamba_d_conv", limit_key="head_dim", default=4),
        conv_bias=r.bool("mamba_conv_bias", default=True),
        in_bias=r.bool("mamba_proj_bias", default=False),
        out_bias=r.bool("projectors_bias", default=False),
        gated_norm=r.bool("mamba_rms_norm", default=False),
    )
    attention_bias = r.bool("attention_bias", default=False)
    attention = attention_params(
        hidden, heads, kv_heads, head_dim, qkv_bias=attention_bias, o_bias=attention_bias
    )
    return {
        "family": family,
        "name": name,
        "hidden_size": hidden,
        "num_layers": layers,
        "num_heads": heads,
        "num_kv_heads": kv_heads,
        "head_dim": head_dim,
        "intermediate_size": r.int("intermediate_size", limit_key="intermediate_size", default=14336),
        "vocab_size": r.int("vocab_size", limit_key="vocab_size", default=128000),
        "tie_word_embeddings": r.bool("tie_word_embeddings", default=False),
        "mlp_bias": r.bool("mlp_bias", default=False),
        "max_positions": r.int("max_position_embeddings", limit_key="max_positions", default=0, minimum=0),
        # Every layer keeps K/V for every token and the mixer's fixed state.
        "layer_kinds": ("full",) * layers,
        "layer_attention_params": (attention + mixer,) * layers,
        "layer_kv_elements": (2 * kv_heads * head_dim,) * layers,
        "layer_state_bytes": (state_bytes,) * layers,
    }


def read_granitemoehybrid(r: _Reader, cfg: dict, family: str, name: str) -> dict[str, Any]:
    """Granite 4.0 hybrid: each layer a Mamba-2 mixer or attention (``layer_types``), then a MoE of
    gated experts plus a gated shared MLP (only the shared MLP when num_local_experts is 0); two
    RMSNorms per layer.

    transformers models/granitemoehybrid/modeling_granitemoehybrid.py: GraniteMoeHybridMambaLayer,
    GraniteMoeHybridAttention, GraniteMoeHybridMoE, GraniteMoeHybridMLP, GraniteMoeHybridDecoderLayer.
    """
    hidden = r.int("hidden_size", limit_key="hidden_size", default=4096)
    layers = r.int("num_hidden_layers", limit_key="num_layers", default=32)
    types = kinds_list(
        r,
        ("layer_types", "layers_block_type"),
        layers,
        {"linear_attention", "full_attention"},
        remap=LEGACY_LAYER_TYPES,
    )
    kinds = ["ssm" if t == "linear_attention" else "full" for t in types or ["linear_attention"] * layers]
    heads, kv_heads, head_dim = _hybrid_attention(r, 32, None)
    inner = r.int("mamba_expand", limit_key="num_heads", default=2) * hidden
    mamba_heads = r.int("mamba_n_heads", limit_key="num_heads", default=128)
    mixer = _mamba2_mixer(
        hidden,
        inner,
        mamba_heads,
        _auto_head_dim(r, "mamba_d_head", inner, mamba_heads),
        r.int("mamba_n_groups", limit_key="num_heads", default=1),
        r.int("mamba_d_state", limit_key="head_dim", default=256),
        r.int("mamba_d_conv", limit_key="head_dim", default=4),
        conv_bias=r.bool("mamba_conv_bias", default=True),
        in_bias=r.bool("mamba_proj_bias", default=False),
        out_bias=r.bool("mamba_proj_bias", default=False),
    )
    attention_bias = r.bool("attention_bias", default=False)
    attention = attention_params(
        hidden, heads, kv_heads, head_dim, qkv_bias=attention_bias, o_bias=attention_bias
    )
    spec = _hybrid_spec(family, name, hidden, kinds, heads, kv_heads, head_dim, mixer, attention)
    shared = r.int(
        "shared_intermediate_size", limit_key="shared_expert_intermediate_size", default=1024, minimum=0
    )
    experts = r.int("num_local_experts", limit_key="num_experts", default=8, minimum=0)
    spec |= {
        "vocab_size": r.int("vocab_size", limit_key="vocab_size", default=32000),
        "tie_word_embeddings": r.bool("tie_word_embeddings", default=False),
        "max_positions": r.int("max_position_embeddings", limit_key="max_positions", default=0, minimum=0),
    }
    if not experts:  # dense: only the shared MLP (input_linear to 2 x width, output_linear)
        return spec | {"intermediate_size": shared}
    top_k = r.int("num_experts_per_tok", limit_key="experts_per_token", default=2)
    if top_k > experts:
        raise _fail("num_experts_per_tok", f"{top_k} is more than the {experts} experts")
    return spec | {
        "intermediate_size": shared,
        "num_experts": experts,
        "experts_per_token": top_k,
        # gate_up_proj (2 x width) and down_proj per expert; a router of experts x hidden_size
        "expert_intermediate_size": r.int(
            "intermediate_size", limit_key="expert_intermediate_size", default=11008
        ),
        "shared_expert_intermediate_size": shared,
        "moe_layers": tuple(range(layers)),
    }


_NEMOTRON_PATTERN = {"M": "linear_attention", "E": "moe", "*": "full_attention", "-": "mlp"}


def read_nemotron_h(r: _Reader, cfg: dict, family: str, name: str) -> dict[str, Any]:
    """Nemotron-H: a stack of blocks, each an RMSNorm and one mixer: Mamba-2, attention (no
    biases), a ReLU² MLP (up, down) or a MoE of ReLU² experts (optionally through a latent
    projection) with a sigmoid router and one shared ReLU² expert.

    transformers models/nemotron_h/modeling_nemotron_h.py: NemotronHMamba2Mixer, NemotronHAttention,
    NemotronHMLP, NemotronHMoE, NemotronHExperts, NemotronHTopkRouter, NemotronHBlock. The layers
    come from layers_block_type (or the older hybrid_override_pattern string); num_hidden_layers is
    ignored, as in NemotronHConfig. Multi-token-prediction layers are not built by transformers.
    """
    allowed = set(_NEMOTRON_PATTERN.values())
    types = kinds_list(r, ("layers_block_type", "layer_types"), None, allowed, remap=LEGACY_LAYER_TYPES)
    if types is None:
        pattern = cfg.get("hybrid_override_pattern")
        if pattern is None:
            types = ["linear_attention", "moe", "full_attention", "mlp"]  # NemotronHConfig's default
        elif not isinstance(pattern, str) or not pattern or set(pattern) - set(_NEMOTRON_PATTERN):
            raise _fail(
                "hybrid_override_pattern", "must be a string of M (Mamba), E (MoE), * (attention), - (MLP)"
            )
        else:
            types = [_NEMOTRON_PATTERN[c] for c in pattern]
    layers = len(types)
    if layers > _LIMITS["num_layers"]:
        raise _fail("layers_block_type", f"{layers:,} layers is beyond any plausible model")

    hidden = r.int("hidden_size", limit_key="hidden_size", default=4096)
    if "head_dim" in cfg and cfg["head_dim"] is None:
        raise _fail("head_dim", "is null, which NemotronHAttention cannot build")
    heads, kv_heads, head_dim = _hybrid_attention(r, 32, 8, head_dim_default=128)
    older = r.optional_int("attention_head_dim", limit_key="head_dim")
    if older is not None and older != head_dim:
        raise _fail(
            "attention_head_dim", f"{older} differs from head_dim {head_dim}, which transformers builds"
        )

    # Older configs spell the mixer's fields mamba_*; NemotronHConfig takes those first.
    mamba_heads = r.int("mamba_num_heads", limit_key="num_heads", default=128)
    mamba_head_dim = r.int("mamba_head_dim", limit_key="head_dim", default=64)
    use_bias = r.bool("use_bias", default=False)  # the mixer's in_proj and out_proj
    mixer = _mamba2_mixer(
        hidden,
        mamba_heads * mamba_head_dim,
        mamba_heads,
        mamba_head_dim,
        r.int("mamba_n_groups", "n_groups", limit_key="num_heads", default=8),
        r.int("ssm_state_size", limit_key="head_dim", default=128),
        r.int("mamba_d_conv", "conv_kernel", limit_key="head_dim", default=4),
        conv_bias=r.bool("mamba_conv_bias", "use_conv_bias", default=True),
        in_bias=use_bias,
        out_bias=use_bias,
        field="mamba_num_heads",
        groups_field=r.present("mamba_n_groups") or "n_groups",
    )
    attention = attention_params(hidden, heads, kv_heads, head_dim)

    inner = r.int("intermediate_size", limit_key="intermediate_size", default=21504)
    mlp_bias = r.bool("mlp_bias", default=False)
    kinds = {"linear_attention": "ssm", "full_attention": "full", "moe": "none", "mlp": "none"}
    spec: dict[str, Any] = {
        "family": family,
        "name": name,
        "hidden_size": hidden,
        "num_layers": layers,
        "num_heads": heads,
        "num_kv_heads": kv_heads,
        "head_dim": head_dim,
        "intermediate_size": inner,
        "vocab_size": r.int("vocab_size", limit_key="vocab_size", default=131072),
        "tie_word_embeddings": r.bool("tie_word_embeddings", default=False),
        "gated_mlp": False,  # up_proj, ReLU², down_proj: the MLP blocks, experts and shared expert
        "norms_per_layer": 1,
        "max_positions": r.int("max_position_embeddings", limit_key="max_positions", default=0, minimum=0),
        "layer_kinds": tuple(kinds[t] for t in types),
        "layer_attention_params": tuple(
            mixer[0] if t == "linear_attention" else attention if t == "full_attention" else 0 for t in types
        ),
        "layer_kv_elements": tuple(2 * kv_heads * head_dim if t == "full_attention" else 0 for t in types),
        "layer_state_bytes": tuple(mixer[1] if t == "linear_attention" else 0 for t in types),
        "layer_intermediate": tuple(inner if t == "mlp" else 0 for t in types),
    }
    # MLP biases are added here, not through mlp_bias (which would also give the layers without an
    # MLP a down_proj bias): up (width) + down (hidden) per MLP block.
    other = types.count("mlp") * (inner + hidden) if mlp_bias else 0

    moe_layers = tuple(i for i, t in enumerate(types) if t == "moe")
    if moe_layers:
        experts = r.int("n_routed_experts", "num_local_experts", limit_key="num_experts", default=8)
        top_k = r.int("num_experts_per_tok", limit_key="experts_per_token", default=2)
        if top_k > experts:
            raise _fail("num_experts_per_tok", f"{top_k} is more than the {experts} experts")
        groups = r.int("n_group", limit_key="num_experts", default=1)
        if experts % groups:
            raise _fail("n_group", f"{experts} experts do not split into {groups} routing groups")
        width = r.int("moe_intermediate_size", limit_key="expert_intermediate_size", default=7688)
        # NemotronHMLP(intermediate_size=0) falls back to intermediate_size (``x or config.x``).
        shared = (
            r.int(
                "moe_shared_expert_intermediate_size",
                limit_key="shared_expert_intermediate_size",
                default=7688,
                minimum=0,
            )
            or inner
        )
        latent = r.optional_int("moe_latent_size", limit_key="hidden_size")
        if latent is not None:
            # Experts work in the latent width: up latent -> width, down width -> latent. Written as
            # experts of hidden_size x (width x latent / hidden_size), which has the same parameters.
            if (width * latent) % hidden:
                raise _fail(
                    "moe_latent_size",
                    f"experts of {width} x latent {latent} are not a whole number of hidden_size ({hidden}) "
                    "rows, which the calculator's expert shape needs",
                )
            # fc1_latent_proj (hidden -> latent) and fc2_latent_proj (latent -> hidden)
            other += len(moe_layers) * (2 * hidden * latent + ((latent + hidden) if mlp_bias else 0))
            width = width * latent // hidden
        if mlp_bias:  # the shared expert's up and down biases
            other += len(moe_layers) * (shared + hidden)
        spec |= {
            "num_experts": experts,
            "experts_per_token": top_k,
            "expert_intermediate_size": width,
            "shared_expert_intermediate_size": shared,  # one shared expert, no gate
            "moe_layers": moe_layers,
        }
    return spec | {"other_params": other}


def read_zaya(r: _Reader, cfg: dict, family: str, name: str) -> dict[str, Any]:
    """ZAYA1: every layer attention with Compressed Convolutional Attention (q and k through a
    depthwise then a grouped causal conv, half of each value head from the previous token), then a
    MoE of gated experts with an MLP router that carries state from layer to layer.

    transformers models/zaya/modeling_zaya.py: ZayaCCAProjection, ZayaQKNorm, ZayaAttention,
    ZayaRouter, ZayaRouterMLP, ZayaExperts, ZayaResidualScaling, ZayaDecoderLayer, ZayaModel.
    Layers are "hybrid" (full attention) or "hybrid_sliding" (sliding window); each keeps K/V and a
    fixed state: the last (cca_time0 - 1) + (cca_time1 - 1) q/k inputs of the convolution and the
    previous token's delayed value projection, both bf16.
    """
    hidden = r.int("hidden_size", limit_key="hidden_size", default=2048)
    layers = r.int("num_hidden_layers", limit_key="num_layers", default=40)
    heads = r.int("num_attention_heads", limit_key="num_heads", default=8)
    kv_heads = r.int("num_key_value_heads", limit_key="num_kv_heads", default=2)
    if heads % kv_heads:
        raise _fail("num_key_value_heads", f"{heads} attention heads are not divisible by {kv_heads}")
    head_dim = r.int("head_dim", limit_key="head_dim", default=128)
    bias = r.bool("attention_bias", default=False)
    types = (
        kinds_list(r, ("layer_types",), layers, {"hybrid", "hybrid_sliding"}, remap=LEGACY_LAYER_TYPES)
        or ["hybrid"] * layers
    )
    window = 0
    if "hybrid_sliding" in types:
        # A DynamicSlidingWindowLayer keeps the last (window - 1) tokens: a window of 1 keeps them all.
        window = r.int("sliding_window", limit_key="sliding_window", minimum=2)

    q, kv = heads * head_dim, kv_heads * head_dim
    half_v = kv // 2  # v_proj_current and v_proj_delayed each give half of every value head
    channels = q + kv  # the q/k convolution's channels
    k0 = r.int("cca_time0", limit_key="head_dim", default=2)
    k1 = r.int("cca_time1", limit_key="head_dim", default=2)
    attention = hidden * (q + kv + 2 * half_v) + ((q + kv + 2 * half_v) if bias else 0)  # q, k, v halves
    attention += channels * k0 + channels  # conv_qk_depthwise (one weight per channel and tap) + bias
    attention += channels * head_dim * k1 + channels  # conv_qk_grouped: heads + KV heads groups + bias
    attention += q * hidden + (hidden if bias else 0)  # o_proj
    attention += kv_heads  # ZayaQKNorm.temp
    state_bytes = (channels * ((k0 - 1) + (k1 - 1)) + half_v) * CONV_STATE_BYTES

    experts = r.int("num_experts", limit_key="num_experts", default=16)
    top_k = r.int("num_experts_per_tok", limit_key="experts_per_token", default=1)
    if top_k != 1:
        raise _fail("num_experts_per_tok", f"{top_k}: ZayaConfig supports one expert per token only")
    width = r.int("moe_intermediate_size", limit_key="expert_intermediate_size", default=2048)
    rh = r.int("router_hidden_size", limit_key="hidden_size", default=256)
    # ZayaRouter: down_proj (biased) to router_hidden_size, a router_states_scale on every layer but
    # the first, and ZayaRouterMLP: RMSNorm, fc1 and fc2 (biased), out_proj to experts + 1 (a skip).
    routers = layers * (hidden * rh + rh + rh + 2 * (rh * rh + rh) + rh * (experts + 1)) + (layers - 1) * rh
    extra_router = routers - layers * experts * hidden  # the spec counts experts x hidden per layer
    if extra_router < 0:
        raise _fail(
            "router_hidden_size",
            f"{rh} gives routers smaller than the experts x hidden_size the calculator counts per layer",
        )
    return {
        "family": family,
        "name": name,
        "hidden_size": hidden,
        "num_layers": layers,
        "num_heads": heads,
        "num_kv_heads": kv_heads,
        "head_dim": head_dim,
        "intermediate_size": width,
        "vocab_size": r.int("vocab_size", limit_key="vocab_size", default=262272),
        "tie_word_embeddings": r.bool("tie_word_embeddings", default=True),
        "lm_head_bias": r.bool("lm_head_bias", default=False),
        "max_positions": r.int("max_position_embeddings", limit_key="max_positions", default=0, minimum=0),
        "num_experts": experts,
        "experts_per_token": top_k,
        "expert_intermediate_size": width,  # gate_up_proj (2 x width) and down_proj per expert
        "moe_layers": tuple(range(layers)),
        "other_params": extra_router,
        # Two ZayaResidualScaling per layer (4 vectors each) and the input scale and bias.
        "extra_norm_params": layers * 8 * hidden + 2 * hidden,
        "sliding_window": window,
        "sliding_layers": tuple(i for i, t in enumerate(types) if t == "hybrid_sliding"),
        "layer_kinds": tuple("sliding" if t == "hybrid_sliding" else "full" for t in types),
        "layer_attention_params": (attention,) * layers,
        "layer_kv_elements": (2 * kv,) * layers,
        "layer_state_bytes": (state_bytes,) * layers,
    }


READERS = {
    "mamba": read_mamba,
    "falcon_mamba": read_mamba,
    "mamba2": read_mamba2,
    "bamba": read_bamba,
    "falcon_h1": read_falcon_h1,
    "nemotron_h": read_nemotron_h,
    "granitemoehybrid": read_granitemoehybrid,
    "zaya": read_zaya,
}
