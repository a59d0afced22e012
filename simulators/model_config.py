"""Decoder-only LLMs from their Hugging Face ``config.json``: the ``ModelSpec`` and its exact sizes.

``ModelSpec.from_hf_config`` reads a config (every field that changes a size, under every
family's name for it) and ``ModelSpec.param_count`` returns exactly the number of parameters the
reference implementation (Hugging Face ``transformers``) instantiates; tests check this against
``transformers`` on torch's meta device and against published totals. What the sizes cost in
memory is ``simulators.llm_memory``; how fast it runs is ``simulators.llm_speed``.
"""

from __future__ import annotations

import copy
import functools
import json
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

# ---------------------------------------------------------------------------------------------
# Reading a config
# ---------------------------------------------------------------------------------------------

MAX_CONFIG_BYTES = 1_000_000  # a config.json is a few kB; the page refuses uploads beyond 1 MB

# Upper bounds "beyond any plausible model" (the largest public configs are far below these):
# they catch typos such as an extra zero, and keep the arithmetic finite.
_LIMITS = {
    "hidden_size": 131_072,
    "num_layers": 2_048,
    "num_heads": 4_096,
    "num_kv_heads": 4_096,
    "head_dim": 8_192,
    "intermediate_size": 1_048_576,
    "vocab_size": 16_777_216,
    "max_positions": 134_217_728,
    "num_experts": 8_192,
    "experts_per_token": 8_192,
    "expert_intermediate_size": 1_048_576,
    "shared_expert_intermediate_size": 1_048_576,
    "num_shared_experts": 1_024,
    "sliding_window": 134_217_728,
    "lora_rank": 1_048_576,
    "embed_dim": 131_072,
}
MAX_PARAMS = 100_000_000_000_000  # 1e14: two orders of magnitude above today's largest models

SUPPORTED_FAMILIES = (
    "llama",
    "mistral",
    "mixtral",
    "qwen2",
    "qwen2_moe",
    "qwen3",
    "qwen3_moe",
    "gemma",
    "gemma2",
    "phi",
    "phi3",
    "gpt2",
    "gpt_neox",
    "gpt_bigcode",
    "falcon",
    "opt",
    "bloom",
    "starcoder2",
    "deepseek_v2",
    "deepseek_v3",
)


# Families whose every size the calculator reproduces exactly: transformers builds each one's
# default config on the meta device, and its parameters and cache after 4,096 and 32,768 tokens
# match (tests/test_arch_oracle.py, run in CI over every decoder-only architecture the pinned
# transformers ships). DeepSeek-V2 and OpenELM are checked through their real configs instead
# (tests/test_llm_memory_oracle.py, the presets). Any other family is refused: a number that may be
# wrong is worse than none.
EXACT_FAMILIES = frozenset(
    {
        "apertus", "arcee", "bitnet", "bloom", "cohere", "cohere2", "cohere2_moe", "cwm", "deepseek_v2",
        "deepseek_v3",
        "diffllama", "ernie4_5", "exaone4", "falcon", "flex_olmo", "gemma", "gemma2", "gemma3_text",
        "glm", "glm4", "gpt-sw3", "gpt2", "gpt_bigcode", "gpt_neox", "gpt_oss", "granite",
        "granite_swa", "granitemoe", "granitemoe_swa", "granitemoeshared", "helium", "hyperclovax",
        "internlm3", "iquestcoder", "llama", "mellum", "minimax_m2", "ministral3", "mistral",
        "mixtral", "modernbert-decoder", "olmo", "olmo2", "olmo3", "olmoe", "openelm", "opt", "phi",
        "phi3", "phimoe", "qwen2", "qwen2_moe", "qwen3", "qwen3_moe", "seed_oss", "smollm3",
        "stablelm", "starcoder2", "vaultgemma",
        # non-gated MLPs
        "jais2", "nanochat", "persimmon",
        # fields spelled their own way
        "aria_text", "ernie4_5_moe", "exaone_moe", "glm4_moe", "glm4_moe_lite", "hy_v3", "kolibri1",
        # older architectures
        "codegen", "ctrl", "gpt_neox_japanese", "gptj", "xglm",
    }
)  # fmt: skip

# Why a family is refused, where the reason is known: filled from the family modules' REFUSALS
# (simulators/families), each naming what the calculator does not model.
NOT_YET_MODELLED: dict[str, str] = {}
# Layer kinds of ``layer_types`` the calculator models (others are refused, naming the field).
KNOWN_LAYER_TYPES = frozenset({"full_attention", "sliding_attention"})


# Kinds of layer the calculator sizes: how each keeps its cache. Full attention and MLA keep every
# token; sliding windows and chunks cap it; linear-attention, state-space and recurrent layers keep a
# fixed-size state instead (``layer_state_bytes``); a shared layer reads an earlier layer's cache.
LAYER_KINDS: dict[str, str] = {
    "full": "full attention",
    "sliding": "sliding window",
    "chunked": "chunked attention",
    "mla": "MLA latent",
    "linear": "linear attention (fixed state)",
    "ssm": "state-space (fixed state)",
    "recurrent": "recurrent (fixed state)",
    "shared": "shares an earlier layer's cache",
    "none": "no token mixer",
}
GROWING_KINDS = frozenset({"full", "mla"})


# Families whose attention always has as many KV heads as query heads, of hidden_size // heads.
_MULTI_HEAD_ONLY = frozenset({"persimmon", "gptj", "codegen", "ctrl", "gpt_neox_japanese", "xglm"})


# The GPT-2-style layer: LayerNorms with bias, a plain (non-gated) MLP, and biases on q, k, v, the
# attention output and the MLP. GPT-2, BLOOM, Phi, CTRL, XGLM and Persimmon all start from it.
_BIASED_LAYERNORM_BLOCK: dict[str, Any] = {
    "gated_mlp": False,
    "qkv_bias": True,
    "o_bias": True,
    "mlp_bias": True,
    "layer_norm": True,
}


def check_family(family: str) -> None:
    """Raise ``ValueError`` naming ``model_type`` unless the calculator is exact for ``family``."""
    if family in EXACT_FAMILIES:
        return
    reason = NOT_YET_MODELLED.get(family)
    what = (
        f"{family!r} {reason}"
        if reason
        else f"{family!r} is an architecture the calculator has not been checked against"
    )
    raise _fail(
        "model_type",
        f"{what}. The calculator refuses it rather than give a memory figure that may be wrong "
        f"(it is exact for {len(EXACT_FAMILIES)} families, checked against transformers).",
    )


def _fail(field_name: str, problem: str) -> ValueError:
    return ValueError(f"config field '{field_name}': {problem}")


class _Reader:
    """Typed access to a config dict under several alternative field names."""

    def __init__(self, config: Mapping[str, Any]) -> None:
        self.config = config

    def present(self, *names: str) -> str | None:
        for name in names:
            if name in self.config and self.config[name] is not None:
                return name
        return None

    def int(
        self,
        *names: str,
        limit_key: str,
        default: int | None = None,
        minimum: int = 1,
    ) -> int:
        name = self.present(*names)
        if name is None:
            if default is None:
                raise _fail(" / ".join(names), "is missing (needed to size the model)")
            return default
        value = self.config[name]
        if isinstance(value, bool) or not isinstance(value, int):
            if isinstance(value, float) and value.is_integer() and not isinstance(value, bool):
                value = int(value)
            else:
                raise _fail(name, f"must be an integer, got {value!r} ({type(value).__name__})")
        if value < minimum:
            raise _fail(name, f"must be at least {minimum}, got {value}")
        if value > _LIMITS[limit_key]:
            raise _fail(name, f"{value:,} is beyond any plausible model (limit {_LIMITS[limit_key]:,})")
        return value

    def optional_int(self, *names: str, limit_key: str, minimum: int = 1) -> int | None:
        if self.present(*names) is None:
            return None
        return self.int(*names, limit_key=limit_key, minimum=minimum)

    def bool(self, *names: str, default: bool) -> bool:
        name = self.present(*names)
        if name is None:
            return default
        value = self.config[name]
        if not isinstance(value, bool):
            raise _fail(name, f"must be true or false, got {value!r}")
        return value


def _parse_json(config: dict | str | bytes) -> dict[str, Any]:
    if isinstance(config, (bytes, bytearray)):
        if len(config) > MAX_CONFIG_BYTES:
            raise ValueError(f"config: {len(config):,} bytes is too large for a config.json (limit 1 MB)")
        try:
            config = bytes(config).decode("utf-8")
        except UnicodeDecodeError as exc:
            raise ValueError(f"config: not UTF-8 text ({exc.reason} at byte {exc.start})") from exc
    if isinstance(config, str):
        if len(config) > MAX_CONFIG_BYTES:
            raise ValueError(
                f"config: {len(config):,} characters is too large for a config.json (limit 1 MB)"
            )
        try:
            config = json.loads(config)
        except json.JSONDecodeError as exc:
            raise ValueError(
                f"config: invalid JSON ({exc.msg} at line {exc.lineno}, column {exc.colno})"
            ) from exc
        except RecursionError as exc:
            raise ValueError("config: invalid JSON (nested too deeply)") from exc
    if not isinstance(config, Mapping):
        raise ValueError(f"config: must be a JSON object ({{...}}), got {type(config).__name__}")
    config = dict(config)
    # Multimodal wrappers (Gemma 3, Llama 4, Mistral 3 ...) keep the decoder in text_config.
    text = config.get("text_config")
    if isinstance(text, Mapping) and not any(
        k in config for k in ("hidden_size", "n_embd", "d_model", "num_hidden_layers", "n_layer")
    ):
        merged = dict(text)
        wrapper = config.get("model_type")
        # A text_config without its own model_type has the wrapper's text model (gemma3 ->
        # gemma3_text, as the wrapper's config class builds it).
        text_types = config_defaults()["text_config_types"]
        text_type = text.get("model_type") or (
            text_types.get(wrapper, wrapper) if isinstance(wrapper, str) else wrapper
        )
        merged.setdefault("model_type", text_type)
        tie = config.get("tie_word_embeddings", text.get("tie_word_embeddings"))
        if tie is not None:  # absent: the text model's config class says (hf_config_defaults.json)
            merged.setdefault("tie_word_embeddings", tie)
        config = merged
    return config


# Defaults of the config classes of the pinned transformers, for the fields this parser reads
# (tools/gen_config_defaults.py writes the file, tests/test_config_defaults.py checks it).
CONFIG_DEFAULTS_PATH = Path(__file__).resolve().parent / "data" / "hf_config_defaults.json"


@functools.lru_cache(maxsize=1)
def config_defaults() -> dict[str, Any]:
    """The table in ``CONFIG_DEFAULTS_PATH``: ``defaults`` (model_type -> field -> the config
    class's default), ``aliases`` (model_type -> field -> its other names in the class's
    ``attribute_map``), ``text_config_types`` (multimodal wrapper -> its text model's type) and the
    ``transformers_version`` it was made from."""
    return json.loads(CONFIG_DEFAULTS_PATH.read_text(encoding="utf-8"))


@functools.lru_cache(maxsize=1)
def _alternatives() -> dict[str, frozenset[str]]:
    """Field -> the other names the parser reads for the same quantity (the table's groups)."""
    out: dict[str, set[str]] = {}
    for group in config_defaults()["alternatives"]:
        for name in group:
            out.setdefault(name, set()).update(set(group) - {name})
    return {name: frozenset(others) for name, others in out.items()}


def _fill_defaults(cfg: dict[str, Any], family: str) -> tuple[str, ...]:
    """Give every field of ``family``'s default table that ``cfg`` leaves out its config class's
    default, as transformers does when it builds the config; return the names filled, sorted.

    Only absent fields are filled: an explicit null keeps the meaning the parser gives it (no
    query compression for DeepSeek's q_lora_rank), and a field given under another name, of the
    class's ``attribute_map`` (GPT-2's hidden_size for n_embd) or one the parser reads in its place
    (an old Falcon's n_head for num_attention_heads), is not filled beside it. A field the
    class derives from others (its default is None: Llama's head_dim, num_key_value_heads) has no
    entry, so the parser's own rule (or its refusal naming the field) applies, as before."""
    table = config_defaults()
    defaults = table["defaults"].get(family, {})
    aliases = table["aliases"].get(family, {})
    filled = []
    for name, value in defaults.items():
        others = (*aliases.get(name, ()), *_alternatives().get(name, ()))
        if name in cfg or any(other in cfg for other in others):
            continue
        cfg[name] = copy.deepcopy(value)
        filled.append(name)
    return tuple(sorted(filled))


# ---------------------------------------------------------------------------------------------
# The model description
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class ParamBreakdown:
    """Parameters by role. ``routed_experts`` are the MoE experts that a token may or may not use."""

    embeddings: int  # token (+ learned position) embeddings, embedding norm, input/output projections
    lm_head: int  # 0 when tied to the token embedding
    attention: int  # token mixers: q, k, v, o (+ biases, q/k norms, MLA), linear-attention and SSM layers
    mlp: int  # dense MLPs and shared experts
    routed_experts: int  # all routed experts of all MoE layers
    routers: int  # MoE gate matrices
    norms: int  # per-layer and final norms
    other: int = 0  # outside the layer pattern (per-layer embeddings, Gemma 3n's AltUp, …)

    @property
    def total(self) -> int:
        return (
            self.embeddings
            + self.lm_head
            + self.attention
            + self.mlp
            + self.routed_experts
            + self.routers
            + self.norms
            + self.other
        )

    @property
    def linear_layers(self) -> int:
        """Weights of the decoder layers' matrix multiplies: what GPTQ/AWQ/bitsandbytes quantize."""
        return self.attention + self.mlp + self.routed_experts


@dataclass(frozen=True)
class ModelSpec:
    """Everything about a decoder-only model that changes its size, read from its config.

    Build it with ``ModelSpec.from_hf_config``; the fields are plain numbers so a spec can also
    be written by hand for a what-if.
    """

    family: str
    hidden_size: int
    num_layers: int
    num_heads: int
    num_kv_heads: int
    head_dim: int
    intermediate_size: int
    vocab_size: int
    tie_word_embeddings: bool = False
    gated_mlp: bool = True  # SwiGLU/GeGLU: gate, up, down; otherwise up, down (GPT-2 style)
    qkv_bias: bool = False
    o_bias: bool = False
    mlp_bias: bool = False
    layer_norm: bool = False  # LayerNorm (weight + bias) instead of RMSNorm (weight only)
    norms_per_layer: int = 2
    norm_params: bool = True  # False for OPT with layer_norm_elementwise_affine = false
    qk_norm: str = "none"  # "rms": RMSNorm over head_dim on q and k (Qwen3); "layer": LayerNorm (Phi)
    qk_norm_dim: int = 0
    final_norm: bool = True
    embedding_norm: bool = False  # BLOOM's word_embeddings_layernorm
    learned_positions: int = 0  # rows of a learned position table (GPT-2, OPT incl. its offset of 2)
    embed_dim: int = 0  # OPT's word_embed_proj_dim when it differs from hidden_size (0: same)
    lm_head_bias: bool = False
    parallel_attention: bool = False  # attention and MLP read the same input (GPT-J, Falcon, Phi)
    mlp_act_params: int = 0  # learned parameters of each dense MLP's activation (xIELU: alpha_p, alpha_n)
    extra_attention_params: int = 0  # outside the per-layer pattern (GPT-NeoX-Japanese's last o bias)
    # Mixture of experts
    num_experts: int = 0
    experts_per_token: int = 0
    expert_intermediate_size: int = 0
    num_shared_experts: int = 0  # DeepSeek: shared experts of expert_intermediate_size each
    shared_expert_intermediate_size: int = 0  # Qwen2-MoE: one shared expert of this width
    shared_expert_gate: bool = False
    shared_expert_bias: bool = False  # shared experts' projections have biases (ERNIE 4.5, Aria)
    router_bias: bool = False  # a learned per-expert score bias beside each router (ERNIE 4.5 MoE)
    expert_bias: bool = False  # routed experts' projections have biases (gpt-oss)
    moe_layers: tuple[int, ...] = ()
    # Multi-head latent attention (DeepSeek-V2/V3)
    q_lora_rank: int = 0
    kv_lora_rank: int = 0
    qk_nope_head_dim: int = 0
    qk_rope_head_dim: int = 0
    v_head_dim: int = 0
    # Attention span
    sliding_window: int = 0
    sliding_layers: tuple[int, ...] = ()  # layers that use the sliding window (others attend fully)
    max_positions: int = 0
    # Layer-wise scaling (OpenELM): per-layer query heads, KV heads and MLP widths. Empty
    # tuples mean every layer uses num_heads / num_kv_heads / intermediate_size.
    layer_heads: tuple[int, ...] = ()
    layer_kv_heads: tuple[int, ...] = ()
    layer_intermediate: tuple[int, ...] = ()
    # Layers that are not all alike (hybrids, per-layer shapes), written by the family readers in
    # simulators/families. Empty tuples: every layer is the standard attention layer above.
    layer_kinds: tuple[str, ...] = ()  # per layer, a key of LAYER_KINDS
    layer_head_dims: tuple[int, ...] = ()  # per-layer head size (Gemma 4's global layers)
    layer_attention_params: tuple[int, ...] = ()  # token-mixer parameters per layer, when not standard
    layer_kv_elements: tuple[int, ...] = ()  # numbers cached per token per layer, when not standard
    layer_state_bytes: tuple[int, ...] = ()  # fixed-size state per sequence per layer (conv + recurrent)
    attention_chunk: int = 0  # chunked-attention layers keep at most this many tokens (Llama 4)
    other_params: int = 0  # outside the layer pattern: extra projections, AltUp, hyper-connections
    lookup_params: int = 0  # more embedding tables, looked up not multiplied (Gemma 3n/4 per-layer)
    extra_norm_params: int = 0  # norms beyond norms_per_layer × layers (hybrid layers differ)
    name: str = ""
    # Config fields (Hugging Face names, sorted) the config left out and the parser filled with
    # their config class's default (simulators/data/hf_config_defaults.json), as transformers
    # does. Provenance only: not compared, so a spec equals one read from the complete config.
    defaulted_fields: tuple[str, ...] = field(default=(), compare=False)
    # The config.json the spec was read from, as given: a runtime needs what the layer pattern
    # does not carry (quantization_config, vision/audio towers, rope and state-layer fields), so
    # an engine fed this spec sizes it exactly as when fed the config. None for a hand-made spec.
    source_config: Mapping[str, Any] | None = field(default=None, compare=False, repr=False)

    # -- construction --------------------------------------------------------------------------

    @classmethod
    def from_hf_config(cls, config: dict | str | bytes, name: str = "") -> ModelSpec:
        """Read a Hugging Face ``config.json`` (a dict, or its JSON text/bytes).

        Supports the families in ``SUPPORTED_FAMILIES`` and any config with the standard
        fields (``hidden_size``, ``num_hidden_layers``, ``num_attention_heads``,
        ``intermediate_size``, ``vocab_size``), read as a Llama-style decoder. A field the
        config leaves out takes its config class's default where transformers has one (listed
        in the spec's ``defaulted_fields``). Raises ``ValueError`` naming the field and the
        problem for anything malformed or missing without a default.
        """
        cfg = _parse_json(config)
        # the config as given (a multimodal wrapper keeps its towers; _parse_json unwraps it)
        raw = config if isinstance(config, Mapping) else json.loads(config)
        source = copy.deepcopy(dict(raw))
        r = _Reader(cfg)
        family = cfg.get("model_type") or "llama"
        if not isinstance(family, str):
            raise _fail("model_type", f"must be a string, got {family!r}")
        family = family.strip().lower()
        if family in ("refinedweb", "refinedwebmodel"):  # early Falcon checkpoints
            family = "falcon"
        check_family(family)
        # Fields left out take their config class's default, as transformers does (a config
        # without model_type is read as Llama-style, but no class default is assumed for it).
        defaulted = _fill_defaults(cfg, family) if cfg.get("model_type") else ()
        reader = FAMILY_READERS.get(family)
        if reader is not None:
            kw = reader(r, cfg, family, name or str(cfg.get("_name_or_path") or ""))
        elif family == "openelm":
            kw = _read_openelm(r, name or str(cfg.get("_name_or_path") or ""))
        else:
            kw = _read_standard(r, cfg, family, name)
        spec = cls(**kw, defaulted_fields=defaulted, source_config=source)
        spec.check_layers()
        _check_total(spec)
        return spec

    # -- sizes ---------------------------------------------------------------------------------

    @property
    def is_moe(self) -> bool:
        return self.num_experts > 0 and bool(self.moe_layers)

    @property
    def uses_mla(self) -> bool:
        return self.kv_lora_rank > 0

    def param_breakdown(self) -> ParamBreakdown:
        """Parameters by role, exactly as Hugging Face ``transformers`` instantiates them.

        Worked out once per spec (a spec is frozen): the calculator asks for it for every
        accelerator, context and format it compares, and a large MoE walks hundreds of layers."""
        cached = self.__dict__.get("_param_breakdown")
        if cached is None:
            cached = self._count_params()
            object.__setattr__(self, "_param_breakdown", cached)
        return cached

    def _count_params(self) -> ParamBreakdown:
        h, layers = self.hidden_size, self.num_layers
        norm_size = (2 if self.layer_norm else 1) * (1 if self.norm_params else 0)
        embed_dim = self.embed_dim or h

        embeddings = self.vocab_size * embed_dim + self.learned_positions * h + self.lookup_params
        if self.embedding_norm:
            embeddings += norm_size * h
        if self.embed_dim and self.embed_dim != h:
            embeddings += 2 * self.embed_dim * h  # OPT's project_in and project_out
        lm_head = 0
        if not self.tie_word_embeddings:
            lm_head = self.vocab_size * embed_dim
        if self.lm_head_bias:
            lm_head += self.vocab_size

        if self.layer_attention_params:
            attention = sum(self.layer_attention_params)
        else:
            head_dims = self.layer_head_dims or (self.head_dim,) * layers
            attention = sum(
                self._attention_params_per_layer(q, kv, d)
                for (q, kv, _), d in zip(self.layer_shapes(), head_dims, strict=True)
            )
        attention += self.extra_attention_params
        moe_layer_count = len(self.moe_layers) if self.is_moe else 0
        moe_set = set(self.moe_layers) if self.is_moe else set()
        mlp = sum(
            self._mlp_params(width, bias=self.mlp_bias) + self.mlp_act_params
            for i, (_, _, width) in enumerate(self.layer_shapes())
            if i not in moe_set
        )
        routed = routers = 0
        if moe_layer_count:
            per_expert = self._mlp_params(self.expert_intermediate_size, bias=self.expert_bias)
            routed = moe_layer_count * self.num_experts * per_expert
            routers = moe_layer_count * self.num_experts * (h + (1 if self.router_bias else 0))
            shared = 0
            if self.num_shared_experts:
                shared += self._mlp_params(
                    self.expert_intermediate_size * self.num_shared_experts, bias=self.shared_expert_bias
                )
            if self.shared_expert_intermediate_size:
                shared += self._mlp_params(self.shared_expert_intermediate_size, bias=False)
            if self.shared_expert_gate:
                shared += h
            mlp += moe_layer_count * shared

        norms = layers * self.norms_per_layer * norm_size * h + self.extra_norm_params
        if self.final_norm:
            norms += norm_size * h
        return ParamBreakdown(
            embeddings=embeddings,
            lm_head=lm_head,
            attention=attention,
            mlp=mlp,
            routed_experts=routed,
            routers=routers,
            norms=norms,
            other=self.other_params,
        )

    def layer_shapes(self) -> list[tuple[int, int, int]]:
        """(query heads, KV heads, MLP width) of every layer."""
        layers = range(self.num_layers)
        heads = self.layer_heads or tuple(self.num_heads for _ in layers)
        kv_heads = self.layer_kv_heads or tuple(self.num_kv_heads for _ in layers)
        widths = self.layer_intermediate or tuple(self.intermediate_size for _ in layers)
        return list(zip(heads, kv_heads, widths, strict=True))

    def _attention_params_per_layer(self, q_heads: int, kv_heads: int, head_dim: int) -> int:
        h = self.hidden_size
        if self.uses_mla:
            qk_head = self.qk_nope_head_dim + self.qk_rope_head_dim
            if self.q_lora_rank:
                q = h * self.q_lora_rank + (self.q_lora_rank if self.qkv_bias else 0)
                q += self.q_lora_rank  # q_a_layernorm
                q += self.q_lora_rank * self.num_heads * qk_head
            else:
                q = h * self.num_heads * qk_head
            kv_a_out = self.kv_lora_rank + self.qk_rope_head_dim
            kv = h * kv_a_out + (kv_a_out if self.qkv_bias else 0)
            kv += self.kv_lora_rank  # kv_a_layernorm
            kv += self.kv_lora_rank * self.num_heads * (self.qk_nope_head_dim + self.v_head_dim)
            o = self.num_heads * self.v_head_dim * h + (h if self.o_bias else 0)
            return q + kv + o
        q_out = q_heads * head_dim
        kv_out = kv_heads * head_dim
        params = h * q_out + 2 * h * kv_out + q_out * h
        if self.qkv_bias:
            params += q_out + 2 * kv_out
        if self.o_bias:
            params += h
        if self.qk_norm == "rms":
            params += 2 * (self.qk_norm_dim if head_dim == self.head_dim else head_dim)
        elif self.qk_norm == "layer":
            params += 4 * (self.qk_norm_dim if head_dim == self.head_dim else head_dim)
        return params

    def _mlp_params(self, width: int, *, bias: bool) -> int:
        h = self.hidden_size
        if width == 0:  # a layer without an MLP (state-space blocks): no weights, no biases
            return 0
        if self.gated_mlp:
            return 3 * h * width + ((2 * width + h) if bias else 0)
        return 2 * h * width + ((width + h) if bias else 0)

    def param_count(self, active: bool = False) -> int:
        """Number of parameters; ``active=True`` counts what one token uses.

        For a mixture of experts, the active count keeps ``experts_per_token`` of the
        ``num_experts`` routed experts in each MoE layer (shared experts and routers always
        run). Dense models return the same number either way.
        """
        breakdown = self.param_breakdown()
        total = breakdown.total
        if active and self.is_moe:
            unused = self.num_experts - self.experts_per_token
            per_expert = breakdown.routed_experts // (len(self.moe_layers) * self.num_experts)
            total -= len(self.moe_layers) * unused * per_expert
        return total

    def embedding_table_params(self) -> int:
        """Rows × width of the input lookup tables (token, and learned positions)."""
        return (
            self.vocab_size * (self.embed_dim or self.hidden_size)
            + self.learned_positions * self.hidden_size
            + self.lookup_params
        )

    def matmul_params(self, active: bool = True) -> int:
        """Parameters a token multiplies by: all (active) weights except an untied input-embedding
        table, which is a lookup (a tied table is multiplied by as the output head), and other
        lookup tables (per-layer embeddings)."""
        lookup = self.lookup_params if self.tie_word_embeddings else self.embedding_table_params()
        return self.param_count(active=active) - lookup

    # -- KV cache ------------------------------------------------------------------------------

    def kv_elements_per_token(self) -> list[int]:
        """Numbers cached per token in each layer: K and V, or MLA's compressed latent (worked
        out once per spec, like ``param_breakdown``; each call gets its own list)."""
        cached = self.__dict__.get("_kv_elements")
        if cached is None:
            if self.layer_kv_elements:
                cached = self.layer_kv_elements
            elif self.uses_mla:
                # DeepSeek-V2 §2.1: cache the kv_lora_rank latent plus the decoupled RoPE key.
                cached = (self.kv_lora_rank + self.qk_rope_head_dim,) * self.num_layers
            else:
                head_dims = self.layer_head_dims or (self.head_dim,) * self.num_layers
                cached = tuple(
                    2 * kv * d for (_, kv, _), d in zip(self.layer_shapes(), head_dims, strict=True)
                )
            object.__setattr__(self, "_kv_elements", cached)
        return list(cached)

    def kv_cache_bytes_per_token(self, kv_bytes: float = 2) -> int:
        """Bytes of KV cache per token of context: 2 × layers × KV heads × head_dim × bytes.

        Source: the KV-cache formula in "How to Scale Your Model", inference chapter
        (jax-ml.github.io/scaling-book/inference/): 2 · bytes · KV heads · head_dim · layers.
        MLA models (DeepSeek-V2/V3) cache (kv_lora_rank + qk_rope_head_dim) per layer instead
        (DeepSeek-V2 paper, arXiv 2405.04434 §2.1.2), as serving engines do. Sliding windows do
        not change the per-token figure; they cap how many tokens are kept (``kv_cache_bytes``).
        """
        return round(sum(self.kv_elements_per_token()) * kv_bytes)

    def cached_tokens_per_layer(self, context_tokens: int) -> list[int]:
        """Tokens each layer keeps: ``min(context, window)`` on sliding-window layers,
        ``min(context, chunk)`` on chunked ones, none on layers that keep a fixed-size state or
        reuse another layer's cache."""
        out = []
        for kind in self.kinds():
            if kind == "sliding":
                out.append(min(context_tokens, self.sliding_window))
            elif kind == "chunked":
                out.append(min(context_tokens, self.attention_chunk))
            elif kind in GROWING_KINDS:
                out.append(context_tokens)
            else:
                out.append(0)
        return out

    def kinds(self) -> tuple[str, ...]:
        """Each layer's kind, a key of ``LAYER_KINDS`` (given, or from the sliding layers / MLA)."""
        if self.layer_kinds:
            return self.layer_kinds
        cached = self.__dict__.get("_kinds")
        if cached is None:
            sliding = set(self.sliding_layers) if self.sliding_window else set()
            base = "mla" if self.uses_mla else "full"
            cached = tuple("sliding" if i in sliding else base for i in range(self.num_layers))
            object.__setattr__(self, "_kinds", cached)
        return cached

    def state_bytes(self) -> int:
        """Bytes of fixed-size state one sequence keeps (linear-attention and state-space layers:
        convolution and recurrent states), whatever the context; 0 for attention-only models."""
        return sum(self.layer_state_bytes)

    def check_layers(self) -> None:
        """Raise ``ValueError`` if the per-layer fields disagree with each other (a reader's bug
        or a hand-written spec), so a wrong description is never sized."""
        n = self.num_layers
        for field_name in (
            "layer_kinds",
            "layer_head_dims",
            "layer_attention_params",
            "layer_kv_elements",
            "layer_state_bytes",
            "layer_heads",
            "layer_kv_heads",
            "layer_intermediate",
        ):
            values = getattr(self, field_name)
            if values and len(values) != n:
                raise ValueError(f"{field_name} has {len(values)} entries for {n} layers")
        unknown = set(self.layer_kinds) - set(LAYER_KINDS)
        if unknown:
            raise ValueError(f"layer_kinds: unknown kinds {sorted(unknown)}")
        if self.layer_kinds:
            sliding = tuple(i for i, k in enumerate(self.layer_kinds) if k == "sliding")
            if sliding != (tuple(self.sliding_layers) if self.sliding_window else ()):
                raise ValueError("layer_kinds and sliding_layers name different sliding-window layers")
            if "chunked" in self.layer_kinds and not self.attention_chunk:
                raise ValueError("chunked layers need attention_chunk")

    def with_overrides(self, **changes: Any) -> ModelSpec:
        """A copy with some fields changed (for what-if sliders)."""
        return replace(self, **changes)


def _read_standard(r: _Reader, cfg: Mapping[str, Any], family: str, name: str = "") -> dict[str, Any]:
    """``ModelSpec`` fields of a standard decoder (every layer attention + MLP), read from its
    config: the Llama-style families and the older ones with branches of their own. Family
    readers (``simulators/families``) start from it and change what their layers do differently."""
    layer_types = cfg.get("layer_types")
    if isinstance(layer_types, list):
        unknown = sorted({str(t) for t in layer_types} - KNOWN_LAYER_TYPES)
        if unknown:
            raise _fail(
                "layer_types",
                f"layers of kind {', '.join(unknown)} are not modelled yet (only full and "
                "sliding-window attention): refused rather than sized as attention layers",
            )
    if cfg.get("attention_chunk_size"):
        raise _fail(
            "attention_chunk_size",
            "chunked attention is not modelled yet: its cache would be sized as full attention",
        )

    hidden = r.int("hidden_size", "n_embd", "d_model", "dim", limit_key="hidden_size")
    layers = r.int("num_hidden_layers", "n_layer", "num_layers", "n_layers", limit_key="num_layers")
    heads = r.int(
        "num_attention_heads", "n_head", "num_heads", "n_heads", "attention_heads", limit_key="num_heads"
    )
    vocab = r.int("vocab_size", "padded_vocab_size", limit_key="vocab_size")
    max_positions = r.int(
        "max_position_embeddings",
        "n_positions",
        "max_sequence_length",
        "seq_length",
        "n_ctx",
        limit_key="max_positions",
        default=0,
        minimum=0,
    )

    kw: dict[str, Any] = {"family": family, "name": name or str(cfg.get("_name_or_path") or "")}

    # Key/value heads: GQA field names, MQA flags.
    kv_default = heads
    if family == "falcon":
        if r.bool("new_decoder_architecture", default=False):
            kv_default = r.int("num_kv_heads", "n_head_kv", limit_key="num_kv_heads", default=heads)
        elif r.bool("multi_query", default=True):
            kv_default = 1
    elif family == "gpt_bigcode" and r.bool("multi_query", default=True):
        kv_default = 1
    if family in ("falcon", "gpt_bigcode") or family in _MULTI_HEAD_ONLY:
        kv_heads = kv_default
    else:
        kv_heads = r.int(
            "num_key_value_heads",
            "num_kv_heads",
            "n_head_kv",
            "multi_query_group_num",
            limit_key="num_kv_heads",
            default=kv_default,
        )
    if heads % kv_heads:
        raise _fail(
            "num_key_value_heads",
            f"num_attention_heads ({heads}) must be divisible by the number of KV heads ({kv_heads})",
        )

    head_dim_default = hidden // heads if hidden % heads == 0 else 0
    if family == "glm4_moe":  # its attention floors hidden_size / heads when head_dim is absent
        head_dim_default = hidden // heads
    elif family == "glm4_moe_lite":  # Glm4MoeLiteConfig maps head_dim to qk_rope_head_dim
        head_dim_default = r.int("qk_rope_head_dim", limit_key="head_dim")
    head_dim = r.int("head_dim", limit_key="head_dim", default=head_dim_default or 0, minimum=0)
    if family in _MULTI_HEAD_ONLY:  # their attention ignores head_dim: hidden_size // heads
        head_dim = head_dim_default
    if head_dim == 0:
        raise _fail(
            "head_dim",
            f"is missing and hidden_size ({hidden}) is not divisible by num_attention_heads ({heads})",
        )

    tie_default = family in {
        "gemma",
        "gemma2",
        "gpt2",
        "gpt_bigcode",
        "falcon",
        "opt",
        "bloom",
        "starcoder2",
        "ctrl",
        "gpt_neox_japanese",
        "xglm",
    }
    kw["tie_word_embeddings"] = r.bool("tie_word_embeddings", default=tie_default)
    if family in ("gpt2", "gpt_bigcode", "xglm") and r.bool("add_cross_attention", default=False):
        raise _fail("add_cross_attention", "encoder-decoder cross-attention is not a decoder-only model")

    if family in ("gpt2", "gpt_bigcode"):
        inner = r.int("n_inner", "intermediate_size", limit_key="intermediate_size", default=4 * hidden)
        kw |= _BIASED_LAYERNORM_BLOCK | {
            "learned_positions": max_positions or r.int("n_positions", limit_key="max_positions"),
        }
    elif family == "gpt_neox":
        inner = r.int("intermediate_size", limit_key="intermediate_size", default=4 * hidden)
        bias = r.bool("attention_bias", default=True)
        kw |= {
            "gated_mlp": False,
            "qkv_bias": bias,
            "o_bias": bias,
            "mlp_bias": True,
            "layer_norm": True,
            "parallel_attention": r.bool("use_parallel_residual", default=True),
        }
    elif family == "bloom":
        inner = 4 * hidden
        kw |= _BIASED_LAYERNORM_BLOCK | {
            "embedding_norm": True,
        }
    elif family == "opt":
        inner = r.int("ffn_dim", "intermediate_size", limit_key="intermediate_size", default=4 * hidden)
        bias = r.bool("enable_bias", default=True)
        embed_dim = r.int("word_embed_proj_dim", limit_key="embed_dim", default=hidden)
        kw |= {
            "gated_mlp": False,
            "qkv_bias": bias,
            "o_bias": bias,
            "mlp_bias": bias,
            "layer_norm": True,
            "norm_params": r.bool("layer_norm_elementwise_affine", default=True),
            "final_norm": r.bool("do_layer_norm_before", default=True)
            and not r.bool("_remove_final_layer_norm", default=False),
            "learned_positions": r.int("max_position_embeddings", limit_key="max_positions") + 2,
            "embed_dim": embed_dim if embed_dim != hidden else 0,
        }
    elif family == "phi":
        inner = r.int("intermediate_size", limit_key="intermediate_size", default=4 * hidden)
        qk_layernorm = r.bool("qk_layernorm", default=False)
        kw |= _BIASED_LAYERNORM_BLOCK | {
            "norms_per_layer": 1,
            "lm_head_bias": True,
            "parallel_attention": True,
            "qk_norm": "layer" if qk_layernorm else "none",
            "qk_norm_dim": hidden // heads if qk_layernorm else 0,
        }
    elif family == "falcon":
        inner = r.int(
            "ffn_hidden_size", "intermediate_size", limit_key="intermediate_size", default=4 * hidden
        )
        parallel = r.bool("parallel_attn", default=True)
        new_arch = r.bool("new_decoder_architecture", default=False)
        n_ln = cfg.get("num_ln_in_parallel_attn")
        if n_ln is None:
            n_ln = 2 if new_arch else 1
        if n_ln not in (1, 2) or isinstance(n_ln, bool):
            raise _fail("num_ln_in_parallel_attn", f"must be 1 or 2, got {n_ln!r}")
        bias = r.bool("bias", default=False)
        kw |= {
            "gated_mlp": False,
            "qkv_bias": bias,
            "o_bias": bias,
            "mlp_bias": bias,
            "layer_norm": True,
            "norms_per_layer": (n_ln if parallel else 2),
            "parallel_attention": parallel,
        }
    elif family in ("gptj", "codegen"):
        # GPT-J / CodeGen: attention and MLP in parallel after one LayerNorm; q, k, v (fused
        # in CodeGen) and out without bias; GELU MLP and LM head with bias.
        inner = r.int("n_inner", limit_key="intermediate_size", default=4 * hidden)
        kw |= {
            "gated_mlp": False,
            "mlp_bias": True,
            "layer_norm": True,
            "norms_per_layer": 1,
            "lm_head_bias": True,
            "parallel_attention": True,
        }
    elif family == "gpt_neox_japanese":
        # No biases except the last layer's attention output (dense_bias); MLP of
        # hidden_size × intermediate_multiple_size.
        multiple = cfg.get("intermediate_multiple_size", 4)
        if isinstance(multiple, bool) or not isinstance(multiple, (int, float)) or not 0 < multiple <= 64:
            raise _fail("intermediate_multiple_size", f"must be a positive number, got {multiple!r}")
        inner = int(hidden * multiple)
        if inner < 1:
            raise _fail("intermediate_multiple_size", f"gives an MLP of width {inner}")
        kw |= {"gated_mlp": False, "layer_norm": True, "extra_attention_params": hidden}
    elif family == "ctrl":
        # Salesforce CTRL: biases everywhere, ReLU MLP of width dff, LayerNorms, LM head bias.
        inner = r.int("dff", limit_key="intermediate_size", default=8192)
        kw |= _BIASED_LAYERNORM_BLOCK | {
            "lm_head_bias": True,
        }
    elif family == "xglm":
        # XGLM: sinusoidal positions (not parameters), biases everywhere, GELU MLP, LayerNorms.
        inner = r.int("ffn_dim", limit_key="intermediate_size", default=4096)
        kw |= _BIASED_LAYERNORM_BLOCK
    elif family == "persimmon":
        # Adept's Persimmon: fused qkv and dense with biases, LayerNorms, optional LayerNorm
        # over each head's q and k, ReLU² MLP with biases.
        inner = r.int("intermediate_size", limit_key="intermediate_size", default=4 * hidden)
        qk_layernorm = r.bool("qk_layernorm", default=True)
        kw |= _BIASED_LAYERNORM_BLOCK | {
            "qk_norm": "layer" if qk_layernorm else "none",
            "qk_norm_dim": head_dim if qk_layernorm else 0,
        }
    elif family in ("apertus", "arcee", "nanochat", "jais2"):
        # Llama-style attention with a non-gated MLP (up, activation, down): ReLU² (Arcee,
        # NanoChat, Jais 2) or xIELU (Apertus, whose activation learns alpha_p and alpha_n).
        inner = r.int("intermediate_size", limit_key="intermediate_size")
        bias = r.bool("attention_bias", default=family == "jais2")
        xielu = family == "apertus" and r.config.get("hidden_act", "xielu") == "xielu"
        kw |= {
            "gated_mlp": False,
            "qkv_bias": bias,
            "o_bias": bias,
            "mlp_bias": r.bool("mlp_bias", default=family == "jais2")
            if family in ("arcee", "jais2")
            else False,
            "layer_norm": family == "jais2",  # Jais 2: LayerNorm with bias; others RMSNorm
            "norm_params": family != "nanochat",  # NanoChat's RMSNorms have no weight
            "qk_norm": "rms" if family == "apertus" else "none",  # NanoChat's q/k norms: no weight
            "qk_norm_dim": head_dim if family == "apertus" else 0,
            "mlp_act_params": 2 if xielu else 0,
        }
    elif family == "starcoder2":
        inner = r.int("intermediate_size", limit_key="intermediate_size", default=4 * hidden)
        bias = r.bool("use_bias", default=True)
        kw |= {
            "gated_mlp": False,
            "qkv_bias": bias,
            "o_bias": bias,
            "mlp_bias": bias,
            "layer_norm": True,
        }
    else:
        # Llama-style: llama, mistral, mixtral, qwen2(+moe), qwen3(+moe), gemma(2), phi3,
        # deepseek_v2/v3, and any unknown family with the standard fields.
        if family == "kolibri1":  # every layer is MoE: no dense MLP width
            inner = r.int("moe_intermediate_size", limit_key="intermediate_size")
        else:
            inner = r.int("intermediate_size", "ffn_dim", "ffn_hidden_size", limit_key="intermediate_size")
        attention_bias = r.bool("attention_bias", default=False) and family not in (
            "kolibri1",
            "exaone_moe",
        )
        mlp_bias = (
            r.bool("mlp_bias", default=False)
            if family in ("llama", "deepseek_v2", "aria_text", "hy_v3")
            else False
        )
        if family == "qwen2":
            qkv_bias, o_bias = True, False
        elif family == "qwen2_moe":
            qkv_bias, o_bias = r.bool("qkv_bias", default=True), False
        elif family == "glm4_moe":
            qkv_bias, o_bias = attention_bias, False
        elif family in ("ernie4_5", "ernie4_5_moe"):
            # ERNIE 4.5: use_bias on every projection, the MLPs and the LM head.
            qkv_bias = o_bias = mlp_bias = r.bool("use_bias", default=False)
            kw["lm_head_bias"] = mlp_bias
        else:
            qkv_bias = o_bias = attention_bias
        kw |= {
            "gated_mlp": True,
            "qkv_bias": qkv_bias,
            "o_bias": o_bias,
            "mlp_bias": mlp_bias,
            # Gemma 2 and 3: a norm before and after both attention and MLP.
            "norms_per_layer": 4 if family in ("gemma2", "gemma3_text", "kolibri1") else 2,
        }
        if family in ("qwen3", "qwen3_moe", "kolibri1", "hy_v3", "exaone_moe", "gemma3_text") or (
            family == "glm4_moe" and r.bool("use_qk_norm", default=False)
        ):
            kw |= {"qk_norm": "rms", "qk_norm_dim": head_dim}

    kw |= {
        "hidden_size": hidden,
        "num_layers": layers,
        "num_heads": heads,
        "num_kv_heads": kv_heads,
        "head_dim": head_dim,
        "intermediate_size": inner,
        "vocab_size": vocab,
        "max_positions": max_positions,
    }

    kw |= _read_moe(r, family, layers, inner)
    if family == "gpt_oss":
        # gpt-oss: biased router and experts (gate_up_proj_bias, down_proj_bias) and one
        # learned attention-sink logit per head in every layer (self_attn.sinks).
        kw |= {"router_bias": True, "expert_bias": True, "extra_attention_params": layers * heads}
    if family in ("deepseek_v2", "deepseek_v3", "glm4_moe_lite"):
        kw |= _read_mla(r, heads, q_lora_default=768 if family == "glm4_moe_lite" else 1536)
    kw |= _read_sliding(r, cfg, family, layers)

    return kw


def _check_total(spec: ModelSpec) -> None:
    total = spec.param_count()
    if total > MAX_PARAMS:
        raise ValueError(
            f"config: {total:,} parameters is beyond any plausible model (limit {MAX_PARAMS:.0e})"
        )


def _make_divisible(value: float, divisor: int) -> int:
    """OpenELM's (and MobileNet's) rounding of a width to a multiple of ``divisor``, never >10% down."""
    new_value = max(divisor, int(value + divisor / 2) // divisor * divisor)
    if new_value < 0.9 * value:
        new_value += divisor
    return new_value


def _int_list(r: _Reader, name: str, length: int, limit_key: str) -> tuple[int, ...]:
    values = r.config.get(name)
    if not isinstance(values, list) or len(values) != length:
        raise _fail(name, f"must be a list with one entry per layer ({length})")
    out = []
    for v in values:
        if isinstance(v, bool) or not isinstance(v, int) or not 1 <= v <= _LIMITS[limit_key]:
            raise _fail(name, f"every entry must be an integer from 1 to {_LIMITS[limit_key]:,}, got {v!r}")
        out.append(v)
    return tuple(out)


def _read_openelm(r: _Reader, name: str) -> dict[str, Any]:
    """Apple OpenELM (arXiv 2404.14619): layer-wise scaling of heads and MLP widths.

    Shapes follow Apple's modeling_openelm.py (trust_remote_code): qkv_proj without bias,
    q/k RMSNorm over head_dim when normalize_qk_projections, GLU MLP of width
    make_divisible(ffn_multiplier × model_dim, ffn_dim_divisor), two RMSNorms per layer.
    """
    hidden = r.int("model_dim", "hidden_size", limit_key="hidden_size")
    layers = r.int("num_transformer_layers", "num_hidden_layers", limit_key="num_layers")
    head_dim = r.int("head_dim", limit_key="head_dim")
    heads = _int_list(r, "num_query_heads", layers, "num_heads")
    kv_heads = _int_list(r, "num_kv_heads", layers, "num_kv_heads")
    for i, (q, kv) in enumerate(zip(heads, kv_heads, strict=True)):
        if q % kv:
            raise _fail("num_kv_heads", f"layer {i}: {q} query heads are not divisible by {kv} KV heads")
    multipliers = r.config.get("ffn_multipliers")
    if isinstance(multipliers, (int, float)) and not isinstance(multipliers, bool):
        multipliers = [multipliers] * layers
    if not isinstance(multipliers, list) or len(multipliers) != layers:
        raise _fail("ffn_multipliers", f"must be a number or a list with one entry per layer ({layers})")
    if not all(isinstance(m, (int, float)) and not isinstance(m, bool) and 0 < m <= 64 for m in multipliers):
        raise _fail("ffn_multipliers", "every entry must be a positive number (at most 64)")
    divisor = r.int("ffn_dim_divisor", limit_key="head_dim", default=256)
    widths = tuple(_make_divisible(m * hidden, divisor) for m in multipliers)
    qk_norm = r.bool("normalize_qk_projections", default=False)
    return {
        "family": "openelm",
        "name": name,
        "hidden_size": hidden,
        "num_layers": layers,
        "num_heads": max(heads),
        "num_kv_heads": max(kv_heads),
        "head_dim": head_dim,
        "intermediate_size": max(widths),
        "vocab_size": r.int("vocab_size", limit_key="vocab_size"),
        "tie_word_embeddings": r.bool("share_input_output_layers", default=False),
        "gated_mlp": r.bool("ffn_with_glu", default=True),
        "qk_norm": "rms" if qk_norm else "none",
        "qk_norm_dim": head_dim if qk_norm else 0,
        "layer_heads": heads,
        "layer_kv_heads": kv_heads,
        "layer_intermediate": widths,
        "max_positions": r.int("max_context_length", limit_key="max_positions", default=0, minimum=0),
    }


def _read_moe(r: _Reader, family: str, layers: int, dense_inner: int) -> dict[str, Any]:
    experts = r.optional_int(
        "num_local_experts",
        "num_experts",
        "n_routed_experts",
        "moe_num_experts",
        limit_key="num_experts",
        minimum=0,
    )
    if not experts:
        return {}
    top_k = r.int(
        "num_experts_per_tok",
        "num_experts_per_token",
        "moe_top_k",
        "top_k",
        "moe_k",  # ERNIE 4.5
        "moe_topk",  # Aria
        limit_key="experts_per_token",
    )
    if top_k > experts:
        raise _fail("num_experts_per_tok", f"{top_k} is more than the {experts} experts")
    out: dict[str, Any] = {"num_experts": experts, "experts_per_token": top_k}
    if family == "mixtral":
        out["expert_intermediate_size"] = dense_inner
        out["moe_layers"] = tuple(range(layers))
    elif family in ("qwen2_moe", "qwen3_moe"):
        out["expert_intermediate_size"] = r.int("moe_intermediate_size", limit_key="expert_intermediate_size")
        step = r.int("decoder_sparse_step", limit_key="num_layers", default=1)
        dense_only = r.config.get("mlp_only_layers") or []
        if not isinstance(dense_only, list) or not all(
            isinstance(i, int) and not isinstance(i, bool) for i in dense_only
        ):
            raise _fail("mlp_only_layers", "must be a list of layer indices")
        out["moe_layers"] = tuple(i for i in range(layers) if i not in dense_only and (i + 1) % step == 0)
        if family == "qwen2_moe":
            shared = r.int(
                "shared_expert_intermediate_size",
                limit_key="shared_expert_intermediate_size",
                default=0,
                minimum=0,
            )
            out["shared_expert_intermediate_size"] = shared
            out["shared_expert_gate"] = True
    elif family in ("hy_v3", "exaone_moe"):
        # mlp_layer_types says which layers are MoE (default: the first dense, or the first
        # first_k_dense_replace in EXAONE MoE); shared experts of moe_intermediate_size each.
        out["expert_intermediate_size"] = r.int("moe_intermediate_size", limit_key="expert_intermediate_size")
        out["num_shared_experts"] = r.int(
            "num_shared_experts", limit_key="num_shared_experts", default=1, minimum=0
        )
        if family == "hy_v3":
            out["shared_expert_bias"] = r.bool("mlp_bias", default=False)
            first_dense = 1
        else:
            first_dense = r.int("first_k_dense_replace", limit_key="num_layers", default=1, minimum=0)
        out["moe_layers"] = _sparse_layers(r, layers, first_dense)
    elif family in ("deepseek_v2", "deepseek_v3", "glm4_moe", "glm4_moe_lite"):
        out["expert_intermediate_size"] = r.int("moe_intermediate_size", limit_key="expert_intermediate_size")
        # Absent fields take the defaults of each family's config class in transformers.
        out["num_shared_experts"] = r.int(
            "n_shared_experts",
            limit_key="num_shared_experts",
            default=2 if family == "deepseek_v2" else 1,
            minimum=0,
        )
        if family == "glm4_moe_lite":
            out["moe_layers"] = _sparse_layers(r, layers, 1)
        else:
            first_dense = r.int(
                "first_k_dense_replace",
                limit_key="num_layers",
                default={"deepseek_v2": 0, "deepseek_v3": 3}.get(family, 1),
                minimum=0,
            )
            out["moe_layers"] = tuple(range(min(first_dense, layers), layers))
    elif family == "ernie4_5_moe":
        # A layer is MoE when (i + 1) % moe_layer_interval == 0 and start <= i <= end (end -1: last).
        out["expert_intermediate_size"] = r.int("moe_intermediate_size", limit_key="expert_intermediate_size")
        out["num_shared_experts"] = r.int(
            "moe_num_shared_experts", limit_key="num_shared_experts", default=0, minimum=0
        )
        out["shared_expert_bias"] = r.bool("use_bias", default=False)
        out["router_bias"] = True  # moe_statics.e_score_correction_bias, a parameter
        interval = r.int("moe_layer_interval", limit_key="num_layers", default=1)
        start = r.int("moe_layer_start_index", limit_key="num_layers", default=0, minimum=0)
        end = r.config.get("moe_layer_end_index", -1)
        if isinstance(end, bool) or not isinstance(end, int) or end < -1:
            raise _fail("moe_layer_end_index", f"must be a layer index or -1, got {end!r}")
        end = layers - 1 if end == -1 else end
        out["moe_layers"] = tuple(i for i in range(layers) if (i + 1) % interval == 0 and start <= i <= end)
    elif family == "aria_text":
        # Every layer is MoE; experts are intermediate_size wide, the shared experts together
        # intermediate_size × moe_num_shared_experts, with mlp_bias.
        out["expert_intermediate_size"] = dense_inner
        out["num_shared_experts"] = r.int(
            "moe_num_shared_experts", limit_key="num_shared_experts", default=2, minimum=0
        )
        out["shared_expert_bias"] = r.bool("mlp_bias", default=False)
        out["moe_layers"] = tuple(range(layers))
    else:
        out["expert_intermediate_size"] = r.int(
            "moe_intermediate_size",
            "expert_intermediate_size",
            limit_key="expert_intermediate_size",
            default=dense_inner,
        )
        out["moe_layers"] = tuple(range(layers))
        if family == "kolibri1":  # one ungated shared expert of its own width
            out["shared_expert_intermediate_size"] = r.int(
                "shared_expert_intermediate_size",
                limit_key="shared_expert_intermediate_size",
                default=0,
                minimum=0,
            )
    return out


def _sparse_layers(r: _Reader, layers: int, first_dense: int) -> tuple[int, ...]:
    """MoE layers from ``mlp_layer_types`` ("dense" or "sparse" per layer); absent, all but the
    first ``first_dense`` layers."""
    kinds = r.config.get("mlp_layer_types")
    if kinds is None:
        return tuple(range(min(first_dense, layers), layers))
    if not isinstance(kinds, list) or len(kinds) != layers or not set(map(str, kinds)) <= {"dense", "sparse"}:
        raise _fail("mlp_layer_types", f'must be a list of "dense" or "sparse", one per layer ({layers})')
    return tuple(i for i, kind in enumerate(kinds) if kind == "sparse")


def _read_mla(r: _Reader, heads: int, q_lora_default: int = 1536) -> dict[str, Any]:
    return {
        # An absent key means 1536 in transformers' DeepseekV2/V3Config (768 in GLM-4.7-Flash's
        # Glm4MoeLiteConfig); an explicit null means no query compression (DeepSeek-V2-Lite).
        "q_lora_rank": (
            r.int("q_lora_rank", limit_key="lora_rank", minimum=0)
            if r.present("q_lora_rank")
            else (0 if "q_lora_rank" in r.config else q_lora_default)
        ),
        "kv_lora_rank": r.int("kv_lora_rank", limit_key="lora_rank"),
        "qk_nope_head_dim": r.int("qk_nope_head_dim", limit_key="head_dim"),
        "qk_rope_head_dim": r.int("qk_rope_head_dim", limit_key="head_dim"),
        "v_head_dim": r.int("v_head_dim", limit_key="head_dim"),
    }


def _read_sliding(r: _Reader, cfg: Mapping[str, Any], family: str, layers: int) -> dict[str, Any]:
    """Which layers use a sliding window, from ``layer_types`` or the family's convention."""
    window = r.int("sliding_window", "attention_window", limit_key="sliding_window", default=0, minimum=0)
    if family in ("qwen2", "qwen2_moe", "qwen3", "qwen3_moe") and not r.bool(
        "use_sliding_window", default=False
    ):
        window = 0
    if not window:
        return {}
    layer_types = cfg.get("layer_types")
    if layer_types is None and family == "kolibri1":  # Kolibri1Config: every fifth layer is full
        layer_types = ["full_attention" if (i + 1) % 5 == 0 else "sliding_attention" for i in range(layers)]
    if layer_types is None and family in ("exaone_moe", "gemma3_text"):
        # From sliding_window_pattern: every pattern-th layer is full attention; absent, 4 in
        # ExaoneMoeConfig and 6 in Gemma3TextConfig.__post_init__ (Google's Gemma 3 configs give
        # neither layer_types nor the pattern).
        pattern = cfg.get("sliding_window_pattern", 6 if family == "gemma3_text" else 4)
        if isinstance(pattern, bool) or not isinstance(pattern, int) or pattern < (family == "gemma3_text"):
            raise _fail(
                "sliding_window_pattern",
                f"{pattern!r} without layer_types is not read: give layer_types to size this model",
            )
        layer_types = [
            "sliding_attention" if pattern and (i + 1) % pattern else "full_attention" for i in range(layers)
        ]
    if layer_types is not None:
        if not isinstance(layer_types, list) or len(layer_types) != layers:
            raise _fail("layer_types", f"must be a list with one entry per layer ({layers})")
        sliding = tuple(i for i, t in enumerate(layer_types) if t == "sliding_attention")
    elif family == "gemma2":
        sliding = tuple(range(0, layers, 2))  # Gemma 2 alternates local (even) and global layers
    elif family in ("qwen2", "qwen2_moe", "qwen3", "qwen3_moe"):
        first_full = r.int("max_window_layers", limit_key="num_layers", default=layers, minimum=0)
        sliding = tuple(range(first_full, layers))
    else:
        sliding = tuple(range(layers))  # Mistral 7B v0.1: every layer
    return {"sliding_window": window, "sliding_layers": sliding} if sliding else {}


# Family readers (simulators/families): loaded last, since they read configs with the helpers above.
from simulators.families import load_readers, load_refusals  # noqa: E402

FAMILY_READERS = load_readers()
EXACT_FAMILIES = EXACT_FAMILIES | frozenset(FAMILY_READERS)
NOT_YET_MODELLED.update(load_refusals())
for _family in FAMILY_READERS:
    NOT_YET_MODELLED.pop(_family, None)
