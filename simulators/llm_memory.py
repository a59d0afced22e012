"""Decoder-only LLMs from their Hugging Face ``config.json``: exact sizes, memory and speed bounds.

Three layers, each a set of small named functions:

1. ``ModelSpec.from_hf_config`` reads a config (every field that changes a size, under every
   family's name for it) and ``ModelSpec.param_count`` returns exactly the number of parameters
   the reference implementation (Hugging Face ``transformers``) instantiates; tests check this
   against ``transformers`` on torch's meta device and against published totals.
2. Memory terms (weights, KV cache, activations, gradients, optimizer states, runtime overhead)
   in bytes, each with its formula and source in the docstring; ``inference_memory`` and
   ``training_memory`` add them up into a ``MemoryBreakdown``.
3. Speed bounds: decode tokens/s from bytes read per token over memory bandwidth (the roofline's
   memory roof), prefill time from FLOPs over peak × an assumed MFU.

Units inside: bytes, seconds, FLOP and FLOP/s. Conversion to GB/GiB happens at display.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
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
        merged.setdefault("model_type", text.get("model_type") or config.get("model_type"))
        merged.setdefault(
            "tie_word_embeddings", config.get("tie_word_embeddings", text.get("tie_word_embeddings"))
        )
        config = merged
    return config


# ---------------------------------------------------------------------------------------------
# The model description
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class ParamBreakdown:
    """Parameters by role. ``routed_experts`` are the MoE experts that a token may or may not use."""

    embeddings: int  # token (+ learned position) embeddings, embedding norm, input/output projections
    lm_head: int  # 0 when tied to the token embedding
    attention: int  # q, k, v, o projections (+ biases, q/k norms, MLA down/up projections)
    mlp: int  # dense MLPs and shared experts
    routed_experts: int  # all routed experts of all MoE layers
    routers: int  # MoE gate matrices
    norms: int  # per-layer and final norms

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
    # Mixture of experts
    num_experts: int = 0
    experts_per_token: int = 0
    expert_intermediate_size: int = 0
    num_shared_experts: int = 0  # DeepSeek: shared experts of expert_intermediate_size each
    shared_expert_intermediate_size: int = 0  # Qwen2-MoE: one shared expert of this width
    shared_expert_gate: bool = False
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
    name: str = ""

    # -- construction --------------------------------------------------------------------------

    @classmethod
    def from_hf_config(cls, config: dict | str | bytes, name: str = "") -> ModelSpec:
        """Read a Hugging Face ``config.json`` (a dict, or its JSON text/bytes).

        Supports the families in ``SUPPORTED_FAMILIES`` and any config with the standard
        fields (``hidden_size``, ``num_hidden_layers``, ``num_attention_heads``,
        ``intermediate_size``, ``vocab_size``), read as a Llama-style decoder. Raises
        ``ValueError`` naming the field and the problem for anything malformed.
        """
        cfg = _parse_json(config)
        r = _Reader(cfg)
        family = cfg.get("model_type") or "llama"
        if not isinstance(family, str):
            raise _fail("model_type", f"must be a string, got {family!r}")
        family = family.strip().lower()
        if family in ("refinedweb", "refinedwebmodel"):  # early Falcon checkpoints
            family = "falcon"

        if family == "openelm":
            spec = cls(**_read_openelm(r, name or str(cfg.get("_name_or_path") or "")))
            _check_total(spec)
            return spec

        hidden = r.int("hidden_size", "n_embd", "d_model", "dim", limit_key="hidden_size")
        layers = r.int("num_hidden_layers", "n_layer", "num_layers", "n_layers", limit_key="num_layers")
        heads = r.int("num_attention_heads", "n_head", "num_heads", "n_heads", limit_key="num_heads")
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
        if family == "falcon" or family == "gpt_bigcode":
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
        head_dim = r.int("head_dim", limit_key="head_dim", default=head_dim_default or 0, minimum=0)
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
        }
        kw["tie_word_embeddings"] = r.bool("tie_word_embeddings", default=tie_default)

        if family in ("gpt2", "gpt_bigcode"):
            inner = r.int("n_inner", "intermediate_size", limit_key="intermediate_size", default=4 * hidden)
            kw |= {
                "gated_mlp": False,
                "qkv_bias": True,
                "o_bias": True,
                "mlp_bias": True,
                "layer_norm": True,
                "learned_positions": max_positions or r.int("n_positions", limit_key="max_positions"),
            }
            if r.bool("add_cross_attention", default=False):
                raise _fail(
                    "add_cross_attention", "encoder-decoder cross-attention is not a decoder-only model"
                )
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
            kw |= {
                "gated_mlp": False,
                "qkv_bias": True,
                "o_bias": True,
                "mlp_bias": True,
                "layer_norm": True,
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
            kw |= {
                "gated_mlp": False,
                "qkv_bias": True,
                "o_bias": True,
                "mlp_bias": True,
                "layer_norm": True,
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
            inner = r.int("intermediate_size", "ffn_dim", "ffn_hidden_size", limit_key="intermediate_size")
            attention_bias = r.bool("attention_bias", default=False)
            if family == "qwen2":
                qkv_bias, o_bias = True, False
            elif family == "qwen2_moe":
                qkv_bias, o_bias = r.bool("qkv_bias", default=True), False
            else:
                qkv_bias = o_bias = attention_bias
            kw |= {
                "gated_mlp": True,
                "qkv_bias": qkv_bias,
                "o_bias": o_bias,
                "mlp_bias": r.bool("mlp_bias", default=False)
                if family in ("llama", "deepseek_v2")
                else False,
                "norms_per_layer": 4 if family == "gemma2" else 2,
            }
            if family in ("qwen3", "qwen3_moe"):
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
        if family in ("deepseek_v2", "deepseek_v3"):
            kw |= _read_mla(r, heads)
        kw |= _read_sliding(r, cfg, family, layers)

        spec = cls(**kw)
        total = spec.param_count()
        if total > MAX_PARAMS:
            raise ValueError(
                f"config: {total:,} parameters is beyond any plausible model (limit {MAX_PARAMS:.0e})"
            )
        return spec

    # -- sizes ---------------------------------------------------------------------------------

    @property
    def is_moe(self) -> bool:
        return self.num_experts > 0 and bool(self.moe_layers)

    @property
    def uses_mla(self) -> bool:
        return self.kv_lora_rank > 0

    def param_breakdown(self) -> ParamBreakdown:
        """Parameters by role, exactly as Hugging Face ``transformers`` instantiates them."""
        h, layers = self.hidden_size, self.num_layers
        norm_size = (2 if self.layer_norm else 1) * (1 if self.norm_params else 0)
        embed_dim = self.embed_dim or h

        embeddings = self.vocab_size * embed_dim + self.learned_positions * h
        if self.embedding_norm:
            embeddings += norm_size * h
        if self.embed_dim and self.embed_dim != h:
            embeddings += 2 * self.embed_dim * h  # OPT's project_in and project_out
        lm_head = 0
        if not self.tie_word_embeddings:
            lm_head = self.vocab_size * embed_dim
        if self.lm_head_bias:
            lm_head += self.vocab_size

        attention = sum(self._attention_params_per_layer(q, kv) for q, kv, _ in self.layer_shapes())
        moe_layer_count = len(self.moe_layers) if self.is_moe else 0
        moe_set = set(self.moe_layers) if self.is_moe else set()
        mlp = sum(
            self._mlp_params(width, bias=self.mlp_bias)
            for i, (_, _, width) in enumerate(self.layer_shapes())
            if i not in moe_set
        )
        routed = routers = 0
        if moe_layer_count:
            per_expert = self._mlp_params(self.expert_intermediate_size, bias=False)
            routed = moe_layer_count * self.num_experts * per_expert
            routers = moe_layer_count * self.num_experts * h
            shared = 0
            if self.num_shared_experts:
                shared += self._mlp_params(
                    self.expert_intermediate_size * self.num_shared_experts, bias=False
                )
            if self.shared_expert_intermediate_size:
                shared += self._mlp_params(self.shared_expert_intermediate_size, bias=False)
            if self.shared_expert_gate:
                shared += h
            mlp += moe_layer_count * shared

        norms = layers * self.norms_per_layer * norm_size * h
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
        )

    def layer_shapes(self) -> list[tuple[int, int, int]]:
        """(query heads, KV heads, MLP width) of every layer."""
        layers = range(self.num_layers)
        heads = self.layer_heads or tuple(self.num_heads for _ in layers)
        kv_heads = self.layer_kv_heads or tuple(self.num_kv_heads for _ in layers)
        widths = self.layer_intermediate or tuple(self.intermediate_size for _ in layers)
        return list(zip(heads, kv_heads, widths, strict=True))

    def _attention_params_per_layer(self, q_heads: int, kv_heads: int) -> int:
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
        q_out = q_heads * self.head_dim
        kv_out = kv_heads * self.head_dim
        params = h * q_out + 2 * h * kv_out + q_out * h
        if self.qkv_bias:
            params += q_out + 2 * kv_out
        if self.o_bias:
            params += h
        if self.qk_norm == "rms":
            params += 2 * self.qk_norm_dim
        elif self.qk_norm == "layer":
            params += 4 * self.qk_norm_dim
        return params

    def _mlp_params(self, width: int, *, bias: bool) -> int:
        h = self.hidden_size
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
            self.vocab_size * (self.embed_dim or self.hidden_size) + self.learned_positions * self.hidden_size
        )

    def matmul_params(self, active: bool = True) -> int:
        """Parameters a token multiplies by: all (active) weights except an untied input-embedding
        table, which is a lookup (a tied table is multiplied by as the output head)."""
        lookup = 0 if self.tie_word_embeddings else self.embedding_table_params()
        return self.param_count(active=active) - lookup

    # -- KV cache ------------------------------------------------------------------------------

    def kv_elements_per_token(self) -> list[int]:
        """Numbers cached per token in each layer: K and V, or MLA's compressed latent."""
        if self.uses_mla:
            # DeepSeek-V2 §2.1: cache the kv_lora_rank latent plus the decoupled RoPE key.
            return [self.kv_lora_rank + self.qk_rope_head_dim] * self.num_layers
        return [2 * kv * self.head_dim for _, kv, _ in self.layer_shapes()]

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
        """Tokens each layer keeps: ``min(context, window)`` on sliding-window layers."""
        sliding = set(self.sliding_layers) if self.sliding_window else set()
        return [
            min(context_tokens, self.sliding_window) if i in sliding else context_tokens
            for i in range(self.num_layers)
        ]

    def with_overrides(self, **changes: Any) -> ModelSpec:
        """A copy with some fields changed (for what-if sliders)."""
        return replace(self, **changes)


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
        "num_experts_per_tok", "num_experts_per_token", "moe_top_k", "top_k", limit_key="experts_per_token"
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
    elif family in ("deepseek_v2", "deepseek_v3"):
        out["expert_intermediate_size"] = r.int("moe_intermediate_size", limit_key="expert_intermediate_size")
        out["num_shared_experts"] = r.int(
            "n_shared_experts", limit_key="num_shared_experts", default=0, minimum=0
        )
        first_dense = r.int("first_k_dense_replace", limit_key="num_layers", default=0, minimum=0)
        out["moe_layers"] = tuple(range(min(first_dense, layers), layers))
    else:
        out["expert_intermediate_size"] = r.int(
            "moe_intermediate_size",
            "expert_intermediate_size",
            limit_key="expert_intermediate_size",
            default=dense_inner,
        )
        out["moe_layers"] = tuple(range(layers))
    return out


def _read_mla(r: _Reader, heads: int) -> dict[str, Any]:
    return {
        # An absent key means 1536 in transformers' DeepseekV2/V3Config; an explicit null means
        # no query compression (DeepSeek-V2-Lite).
        "q_lora_rank": (
            r.int("q_lora_rank", limit_key="lora_rank", minimum=0)
            if r.present("q_lora_rank")
            else (0 if "q_lora_rank" in r.config else 1536)
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

    bytes = batch × Σ_layers min(context, window_l) × (per-layer K+V elements) × bytes/value.
    The sum over layers handles Gemma 2's alternating local/global layers and Mistral's
    sliding window (formula F7 in the project's calculator anchors; per-layer rule as in
    unslothai/unsloth#4757).
    """
    _check_nonnegative(context_tokens=context_tokens, batch=batch)
    elements = spec.kv_elements_per_token()
    tokens = spec.cached_tokens_per_layer(context_tokens)
    return batch * kv_bytes_per_value(kv_fmt) * sum(e * t for e, t in zip(elements, tokens, strict=True))


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


def training_activation_bytes_per_layer(
    spec: ModelSpec,
    seq: int,
    micro_batch: int,
    *,
    tensor_parallel: int = 1,
    sequence_parallel: bool = False,
    recompute: str = "none",
    flash_attention: bool = True,
    dropout: bool = False,
    act_bytes: float = 2,
) -> float:
    """Activations one transformer layer saves for the backward pass, in bytes.

    Korthikanti et al. 2022, "Reducing Activation Recomputation in Large Transformer Models"
    (arXiv 2205.05198), §4 and Table 2: for a GPT layer with 16-bit activations and 1-byte
    dropout masks, s·b·h·(34 + 5·a·s/h) bytes, of which attention stores 11sbh + 5as²b, the MLP
    19sbh and the two LayerNorms 4sbh. Here the same accounting is written per tensor so that
    it also holds for GQA (K and V have kv_heads·d columns), gated MLPs (gate, up and their
    product) and models trained without dropout; with MHA, a 4h GELU MLP and dropout it is
    exactly the paper's 34 + 5as/h.

    - ``flash_attention`` drops the a·s² score terms (softmax output, its dropout mask and
      output): FlashAttention recomputes them in the backward pass (arXiv 2205.14135).
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
) -> MemoryBreakdown:
    """Memory per GPU to serve ``batch`` sequences of ``context_tokens`` (prompt + output).

    Weights and KV cache are split evenly over ``n_gpus`` (tensor parallelism shards both;
    the KV heads must divide by the GPU count for an exact split, noted when they do not).
    Activations are sized for ``prefill_chunk_tokens`` tokens in flight (default: the whole
    prompt of one sequence, capped at 8,192 as chunked prefill does) and the last-position
    logits of the batch (``logits_for_every_position`` for a plain forward pass, as a training
    framework runs it). Runtime overhead is per GPU.
    """
    _check_positive(batch=batch, n_gpus=n_gpus)
    _check_nonnegative(context_tokens=context_tokens, runtime_overhead_bytes=runtime_overhead_bytes)
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
    activations = max(
        inference_activation_bytes(spec, chunk, act_bytes) / n_gpus,
        logits_bytes(spec, batch, logit_positions),
    )
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
            f"{spec.kv_cache_bytes_per_token(kv_bytes_per_value(kv_fmt)):,} bytes per token"
            f" × {context_tokens:,} tokens × batch {batch}"
            + (" (sliding-window layers keep at most the window)" if spec.sliding_window else ""),
            "kv-cache",
        ),
        MemoryPart(
            "activations",
            "Activations and logits",
            activations,
            f"the larger of one layer's working set for {chunk:,} tokens in flight"
            " and the fp32 logits (freed layer by layer, so they never coexist)",
            "activation-memory",
        ),
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
    flash_attention: bool = True,
    lora_rank: int = 16,
    lora_modules: Sequence[str] = LORA_MODULES,
    base_fmt: str = "bf16",
    runtime_overhead_bytes: float = DEFAULT_RUNTIME_OVERHEAD_BYTES,
    act_bytes: float = 2,
) -> MemoryBreakdown:
    """Memory per GPU for one training step with data parallelism over ``n_gpus`` (ZeRO stage).

    ``method``: "full" (every parameter trained with ``recipe``), "lora" (frozen base at
    ``base_fmt``, adapters trained with ``recipe``), "qlora" (frozen base in NF4 with double
    quantization, 4.127 bits per linear weight; adapters as LoRA). Activations follow
    ``training_activation_bytes_per_layer`` × layers plus the logits and loss; they are not
    divided by data parallelism (each GPU runs its own micro-batch).
    """
    if method not in ("full", "lora", "qlora"):
        raise ValueError(f"method must be 'full', 'lora' or 'qlora', got {method!r}")
    _check_positive(seq=seq, micro_batch=micro_batch, n_gpus=n_gpus)
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
            + (", FlashAttention" if flash_attention else "")
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
# Speed bounds
# ---------------------------------------------------------------------------------------------

# Default utilisation for prefill (compute-bound) time: roofline.run's methodology page uses a
# 0.55 derate for prefill on H100-class GPUs; the user can change it on the page.
DEFAULT_PREFILL_MFU = 0.55


def expected_experts_touched(num_experts: int, experts_per_token: int, tokens: int) -> float:
    """Expected distinct experts a batch of tokens routes to, if routing were uniform.

    E × (1 − (1 − k/E)^tokens): one token reads k experts; a large batch reads nearly all E.
    (Uniform routing is an assumption; real routers are load-balanced towards it.)
    """
    if num_experts <= 0:
        return 0.0
    return num_experts * (1 - (1 - experts_per_token / num_experts) ** tokens)


def weight_bytes_read_per_step(
    spec: ModelSpec, batch: int, weight_fmt: str = "bf16", group_size: int | None = None
) -> float:
    """Weight bytes one decode step reads from memory.

    Every dense weight is read once per step; a mixture of experts reads only the experts its
    batch touches (``expected_experts_touched``). The input embedding is a table lookup: a step
    reads one row per sequence, not the table, so an untied embedding table is left out (a tied
    one is read in full by the output head). Linear layers are counted at the format's bits per
    weight (scales included), everything else at 16 bits, as ``weight_bytes`` stores them.
    """
    f = weight_format(weight_fmt)
    p = spec.param_breakdown()
    linear_bytes = f.bits_per_weight(group_size) / 8
    other_bytes = linear_bytes if not f.quantized else 2.0
    routed = p.routed_experts
    if spec.is_moe:
        routed *= expected_experts_touched(spec.num_experts, spec.experts_per_token, batch) / spec.num_experts
    linear = (p.attention + p.mlp + routed) * linear_bytes
    embeddings_read = p.embeddings - (0 if spec.tie_word_embeddings else spec.embedding_table_params())
    embeddings_read += 0 if spec.tie_word_embeddings else batch * spec.hidden_size
    other = (embeddings_read + p.lm_head + p.routers + p.norms) * other_bytes
    return linear + other


@dataclass(frozen=True)
class DecodeEstimate:
    """One decode step for a batch: bytes read, FLOPs, time, tokens/s, and which roof binds."""

    batch: int
    context_tokens: int
    weight_bytes: float
    kv_bytes: float
    flops: float
    memory_time_s: float
    compute_time_s: float

    @property
    def step_time_s(self) -> float:
        return max(self.memory_time_s, self.compute_time_s)

    @property
    def tokens_per_s(self) -> float:
        return self.batch / self.step_time_s if self.step_time_s > 0 else math.inf

    @property
    def tokens_per_s_per_sequence(self) -> float:
        return 1 / self.step_time_s if self.step_time_s > 0 else math.inf

    @property
    def bound(self) -> str:
        return "memory" if self.memory_time_s >= self.compute_time_s else "compute"

    @property
    def intensity_flop_per_byte(self) -> float:
        return self.flops / (self.weight_bytes + self.kv_bytes)


def decode_step(
    spec: ModelSpec,
    *,
    bandwidth_bytes_per_s: float,
    peak_flops: float,
    batch: int = 1,
    context_tokens: int = 4096,
    weight_fmt: str = "bf16",
    group_size: int | None = None,
    kv_fmt: str = "bf16",
    n_gpus: int = 1,
) -> DecodeEstimate:
    """Upper bound on decode speed: a step reads the weights once and every sequence's KV cache.

    time ≥ max(bytes read / bandwidth, FLOPs / peak), the roofline for one step ("How to Scale
    Your Model", inference chapter: step time = (B·KV + params) / bandwidth when memory-bound).
    FLOPs = 2 × active matmul parameters × batch (the untied embedding lookup does no
    multiplies) + attention 4 × layers × q_heads·d × cached tokens ×
    batch. ``n_gpus`` splits bytes and FLOPs evenly (ideal tensor parallelism, no communication).
    """
    _check_positive(batch=batch, bandwidth_bytes_per_s=bandwidth_bytes_per_s, n_gpus=n_gpus)
    if not peak_flops > 0:  # math.inf is allowed: "no compute roof known", memory bound only
        raise ValueError(f"peak_flops must be positive, got {peak_flops!r}")
    weights = weight_bytes_read_per_step(spec, batch, weight_fmt, group_size)
    kv = kv_cache_bytes(spec, context_tokens, batch, kv_fmt)
    cached = sum(spec.cached_tokens_per_layer(context_tokens)) / max(spec.num_layers, 1)
    q_width = spec.num_heads * (
        spec.qk_nope_head_dim + spec.qk_rope_head_dim if spec.uses_mla else spec.head_dim
    )
    attention_flops = 4 * spec.num_layers * q_width * cached * batch
    flops = 2 * spec.matmul_params(active=True) * batch + attention_flops
    return DecodeEstimate(
        batch=batch,
        context_tokens=context_tokens,
        weight_bytes=weights,
        kv_bytes=kv,
        flops=flops,
        memory_time_s=(weights + kv) / (bandwidth_bytes_per_s * n_gpus),
        compute_time_s=flops / (peak_flops * n_gpus),
    )


def prefill_time_s(
    spec: ModelSpec,
    prompt_tokens: int,
    *,
    peak_flops: float,
    mfu: float = DEFAULT_PREFILL_MFU,
    batch: int = 1,
    n_gpus: int = 1,
) -> float:
    """Time to process a prompt: FLOPs / (peak × MFU), FLOPs = 2 × active params × tokens + attention.

    Kaplan et al. 2020 (arXiv 2001.08361 §2.1): forward FLOPs ≈ 2N per token plus
    2 · n_layer · n_ctx · d_attn for attention; with a causal mask the average context is
    half the prompt. This is time-to-first-token without queueing or network.
    """
    _check_positive(peak_flops=peak_flops, batch=batch, n_gpus=n_gpus)
    if not 0 < mfu <= 1:
        raise ValueError(f"MFU must be in (0, 1], got {mfu}")
    _check_nonnegative(prompt_tokens=prompt_tokens)
    tokens = prompt_tokens * batch
    q_width = spec.num_heads * (
        spec.qk_nope_head_dim + spec.qk_rope_head_dim if spec.uses_mla else spec.head_dim
    )
    attention = 2 * spec.num_layers * q_width * prompt_tokens * tokens  # 4·L·q·(T/2)·T
    flops = 2 * spec.matmul_params(active=True) * tokens + attention
    return flops / (peak_flops * mfu * n_gpus)


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
