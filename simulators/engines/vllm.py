"""vLLM's start-up ledger, as vLLM 0.19.0's own code computes it, and a reader for its logs.

``llm_memory`` sizes an idealised runtime. People run engines, and an engine reserves memory in
its own way. This module follows what vLLM's source does, term by term, and names the file each
term comes from:

- ``vllm_startup`` reproduces the memory ledger vLLM 0.19.0 prints when it starts
  (``vllm/v1/worker/gpu_worker.py: determine_available_memory``): it requests
  ``gpu_memory_utilization`` × the memory the device reports, loads the weights in the
  checkpoint's own format, profiles one forward pass of ``max_num_batched_tokens`` tokens and a
  sampler warm-up over ``max_num_seqs`` sequences (the "activation" peak), counts the memory that
  is not PyTorch's, gives the rest to KV-cache blocks (one pool shared by the KV-cache groups of a
  hybrid model), and only then captures CUDA graphs on top of its budget. ``version="0.21+"``
  (any version 0.21-0.29) follows the later line, which estimates the graphs' pool first and
  takes it out of the KV budget, with the V1 model runner; the V2 model runner from 0.27 (when
  vLLM picks it, ``vllm_model_runner``), versions after 0.29 and before 0.19 are refused with the
  reason (``vllm_family``). Memory outside PyTorch comes from what allocates it on the node's fabric
  (``fabric_of``, ``non_torch_term``), and from the CUDA-graph profiling 0.19 runs inside its
  profiling window unless ``enforce_eager``; CUDA-graph memory from the capture sizes; both carry
  the range measured across machines (``MEASURED_SOURCES``), so a verdict near the line is
  "tight". The weights are the caching allocator's blocks for the tensors in the order the model
  class creates them (``vllm_allocator_rounding_bytes``), where that order is followed.
- ``parse_vllm_log`` reads those lines back from a real start-up log of vLLM 0.6 to the latest
  (its "GB" is GiB), ``log_settings`` gives the settings the log ran with and ``log_mismatches``
  names each that differs from the page's, so a reader can put what their engine printed beside
  the prediction (``compare_with_log``).

Pure Python: no torch, no vLLM. Sizes in bytes; GiB = 2^30 bytes, as vLLM prints them.
"""

from __future__ import annotations

import csv
import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any

from simulators.engines import allocator as _allocator
from simulators.engines.device import (
    device_total,
    reported_memory_bytes,
    reported_memory_source,
)
from simulators.engines.ledger import EngineError, GiB, Ledger, LogError, MiB, Term, resolve_gpu
from simulators.hardware import Accelerator
from simulators.llm_memory import inference_activation_bytes
from simulators.model_config import ModelSpec

VLLM_VERSION = "0.19.0"
# Each term below names the file of vLLM 0.19.0 it follows (the released wheel's source).
VLLM_SOURCE = "vLLM 0.19.0"


# ---------------------------------------------------------------------------------------------
# The checkpoint's weight format (quantization_config), as vLLM loads it
# ---------------------------------------------------------------------------------------------

DTYPE_BYTES = {"bfloat16": 2, "float16": 2, "half": 2, "float32": 4, "float": 4}


@dataclass(frozen=True)
class WeightLayout:
    """How the checkpoint's weights sit in GPU memory once vLLM has loaded them."""

    label: str
    dtype: str  # the activation / unquantized-weight dtype ("bfloat16", "float16")
    quantized: str  # which weights carry the quantized format: "none", "linear" or "experts"
    bits: float  # bits per quantized weight, scales included
    method: str = ""  # quant_method as the checkpoint (or --quantization) names it
    note: str = ""

    @property
    def dtype_bytes(self) -> int:
        return DTYPE_BYTES[self.dtype]


def _text_config(config: Mapping[str, Any]) -> Mapping[str, Any]:
    for key in ("text_config", "llm_config", "language_config"):
        inner = config.get(key)
        if isinstance(inner, Mapping) and inner:
            return inner
    return config


def _config_dtype(config: Mapping[str, Any]) -> str:
    for source in (config, _text_config(config)):
        value = source.get("torch_dtype") or source.get("dtype")
        if isinstance(value, str) and value in DTYPE_BYTES:
            return value
    return "bfloat16"


def _compressed_tensors_layout(qc: Mapping[str, Any], dtype: str) -> WeightLayout:
    groups = qc.get("config_groups") or {}
    weights = []
    for group in groups.values() if isinstance(groups, Mapping) else []:
        w = group.get("weights") if isinstance(group, Mapping) else None
        if isinstance(w, Mapping):
            weights.append(w)
    if not weights:
        raise EngineError("quantization_config.config_groups: no weight scheme to read")
    w = weights[0]
    num_bits = w.get("num_bits")
    kind = w.get("type")
    strategy = w.get("strategy")
    if not isinstance(num_bits, int) or kind not in ("float", "int"):
        raise EngineError("quantization_config.config_groups.*.weights: num_bits/type not understood")
    group_size = w.get("group_size") or 0
    if num_bits == 8:
        name = "FP8" if kind == "float" else "INT8"
        return WeightLayout(
            f"{name} weights (compressed-tensors, {strategy or 'per-tensor'} scales)",
            dtype,
            "linear",
            8.0,
            "compressed-tensors",
            "linear layers at 1 byte a weight; embeddings and the LM head stay 16-bit",
        )
    if num_bits == 4 and kind == "float" and group_size:
        # NVFP4 ("nvfp4-pack-quantized"): two e2m1 values a byte and an fp8 scale per group of 16
        # (plus one fp32 global scale per tensor, negligible)
        return WeightLayout(
            f"NVFP4 weights (compressed-tensors, group {group_size})",
            dtype,
            "linear",
            4 + 8 / group_size,
            "compressed-tensors",
            "linear layers at 4 bits plus an fp8 scale per group; embeddings and the LM head 16-bit",
        )
    if num_bits == 4 and kind == "int" and group_size:
        # W4A16 packs 8 int4 values per int32 and keeps a 16-bit scale per group
        return WeightLayout(
            f"INT4 weights (compressed-tensors, group {group_size})",
            dtype,
            "linear",
            4 + 16 / group_size,
            "compressed-tensors",
            "linear layers at 4 bits plus a 16-bit scale per group",
        )
    raise EngineError(f"quantization_config: {num_bits}-bit {kind} weights are not modelled yet")


def weight_layout(
    config: Mapping[str, Any] | None,
    *,
    dtype: str | None = None,
    quantization: str | None = None,
) -> WeightLayout:
    """The format vLLM loads the weights in: the checkpoint's own, or ``quantization="fp8"``.

    ``dtype=None`` is vLLM's "auto": the config's dtype, with float32 checkpoints cast down to
    bfloat16 (``vllm/config/model.py: _resolve_auto_dtype``). A ``quantization_config`` in the
    checkpoint decides the quantized format (``vllm/model_executor/layers/quantization/``):
    compressed-tensors FP8/INT8 (W8A8) and INT4 (W4A16), ``fp8`` (per-tensor or 128×128 blocks),
    ``mxfp4`` (gpt-oss: experts only, 4 bits + an 8-bit scale per 32 weights), AWQ/GPTQ (4 bits +
    per-group scales and zeros). Anything else is refused, naming the field.
    """
    config = config or {}
    resolved = dtype or _config_dtype(config)
    if resolved in ("float32", "float") and dtype is None:
        resolved = "bfloat16"  # "auto" casts a float32 checkpoint down
    resolved = {"half": "float16", "float": "float32"}.get(resolved, resolved)
    if resolved not in ("bfloat16", "float16", "float32"):
        raise EngineError(f"dtype {resolved!r}: choose bfloat16, float16 or float32")
    qc = config.get("quantization_config") or _text_config(config).get("quantization_config")
    if quantization and quantization not in ("fp8",) and not qc:
        raise EngineError(f"quantization={quantization!r}: only runtime 'fp8' is modelled")
    if qc:
        if not isinstance(qc, Mapping):
            raise EngineError("quantization_config must be an object")
        method = str(qc.get("quant_method", "")).lower()
        if method == "compressed-tensors":
            return _compressed_tensors_layout(qc, resolved)
        if method == "fp8":
            block = qc.get("weight_block_size")
            scale_bits = 32 / (block[0] * block[1]) if block else 0.0
            return WeightLayout(
                "FP8 weights" + (f" ({block[0]}×{block[1]} blocks)" if block else " (per-tensor scale)"),
                resolved,
                "linear",
                8 + scale_bits,
                "fp8",
                "linear layers at 1 byte a weight with fp32 scales; embeddings and the LM head 16-bit",
            )
        if method == "mxfp4":
            return WeightLayout(
                "MXFP4 experts (4-bit values, an 8-bit scale per 32)",
                resolved,
                "experts",
                4 + 8 / 32,
                "mxfp4",
                "the routed experts at 4.25 bits a weight; attention, router and embeddings in 16-bit",
            )
        if method in ("awq", "gptq", "awq_marlin", "gptq_marlin"):
            bits = qc.get("bits") or qc.get("w_bit")
            group = qc.get("group_size") or qc.get("q_group_size") or 128
            allowed = (4,) if method.startswith("awq") else (4, 8)
            if bits not in allowed or not isinstance(group, int) or group <= 0:
                raise EngineError(
                    f"quantization_config: {method} with bits={bits!r}, group_size={group!r} is not"
                    " modelled yet (4-bit AWQ/GPTQ and 8-bit GPTQ with groups are)"
                )
            # a 16-bit scale and a zero point of the same width per group of weights
            return WeightLayout(
                f"INT{bits} weights ({method.upper()}, group {group})",
                resolved,
                "linear",
                bits + (16 + bits) / group,
                method,
                f"linear layers at {bits} bits plus a scale and zero point per group",
            )
        if method == "modelopt":
            algo = str(qc.get("quant_algo", "")).upper()
            excluded = [
                m for m in qc.get("exclude_modules") or qc.get("ignore") or [] if "lm_head" not in str(m)
            ]
            if excluded:
                raise EngineError(
                    "quantization_config.exclude_modules: layers left out of the ModelOpt format"
                    f" ({', '.join(map(str, excluded[:3]))}…) are not modelled yet"
                )
            if algo == "FP8":
                return WeightLayout(
                    "FP8 weights (ModelOpt, per-tensor scale)", resolved, "linear", 8.0, "modelopt"
                )
            if algo == "NVFP4":
                group = int(qc.get("group_size") or 16)
                return WeightLayout(
                    f"NVFP4 weights (ModelOpt, group {group})",
                    resolved,
                    "linear",
                    4 + 8 / group,
                    "modelopt",
                    "linear layers at 4 bits plus an fp8 scale per group of 16",
                )
            raise EngineError(f"quantization_config.quant_algo {algo!r} (ModelOpt) is not modelled yet")
        if method == "bitsandbytes":
            # model_loader/bitsandbytes_loader.py: 4-bit weights packed two a byte with one
            # absmax per block of 64; double-quantized absmax are dequantized to fp32 at load
            # (_dequantize_dq), so every block keeps a 4-byte scale. 8-bit: int8 with a scale per row.
            if qc.get("load_in_4bit"):
                return WeightLayout(
                    f"4-bit bitsandbytes ({qc.get('bnb_4bit_quant_type', 'fp4')}, blocks of 64)",
                    resolved,
                    "linear",
                    4 + 32 / 64,
                    "bitsandbytes",
                    "linear layers at 4 bits plus an fp32 absmax per 64 weights",
                )
            if qc.get("load_in_8bit"):
                return WeightLayout("8-bit bitsandbytes (LLM.int8)", resolved, "linear", 8.0, "bitsandbytes")
            raise EngineError(
                "quantization_config: bitsandbytes without load_in_4bit or load_in_8bit is not understood"
            )
        raise EngineError(f"quantization_config.quant_method {method!r} is not modelled yet")
    if quantization == "fp8":
        return WeightLayout(
            "FP8 weights (quantized at load, per-tensor scale)",
            resolved,
            "linear",
            8.0,
            "fp8",
            "--quantization fp8 casts the linear layers to FP8 when loading",
        )
    label = {"bfloat16": "BF16", "float16": "FP16", "float32": "FP32"}[resolved]
    return WeightLayout(label, resolved, "none", 0.0)


_ARCH_CSV = Path(__file__).resolve().parent.parent / "data" / "gpu_architecture.csv"


@lru_cache(maxsize=1)
def _compute_capabilities() -> dict[str, float]:
    with _ARCH_CSV.open(encoding="utf-8", newline="") as handle:
        return {
            row["id"]: float(row["value"])
            for row in csv.DictReader(handle)
            if row["fact"] == "compute_capability"
        }


def compute_capability(accel: Accelerator) -> float | None:
    """The GPU's CUDA compute capability from the catalog (gpu_architecture.csv, each row sourced),
    or None where the catalog has none."""
    return _compute_capabilities().get(accel.id)


def fp8_runs_on_marlin(accel: Accelerator) -> bool:
    """Whether vLLM 0.19 runs an FP8 checkpoint through the weight-only Marlin kernels on this GPU.

    vllm/model_executor/kernels/linear/scaled_mm/marlin.py:36-56 (0.19.0): Marlin is the first
    FP8 linear kernel tried on CUDA (kernels/linear/__init__.py:108-115) and takes every GPU of
    compute capability 7.5 to below 8.9 (no FP8 tensor cores); the MoE layers choose their
    "MARLIN Fp8 MoE backend" on the same GPUs (fused_moe/oracle/fp8.py). Below 7.5 vLLM has no
    FP8 kernel at all, and the checkpoint is refused. Where the catalog gives no compute
    capability, an NVIDIA GPU the catalog marks without FP8 (``unsupported_dtypes``) is taken as
    below 8.9; an AMD GPU never uses Marlin (CUDA only)."""
    if accel.vendor != "NVIDIA":
        return False
    cc = compute_capability(accel)
    if cc is None:
        return "fp8" in accel.unsupported_dtypes
    if cc < 7.5:
        raise EngineError(
            f"{accel.name} (compute capability {cc:g}): vLLM has no FP8 kernel below 7.5"
            " (marlin_utils_fp8.py:24 is_fp8_marlin_supported); choose a 16-bit checkpoint"
        )
    return cc < 8.9


def is_fp8_checkpoint(layout: WeightLayout) -> bool:
    """An FP8 format vLLM 0.19 runs through Marlin below compute capability 8.9: ``fp8`` (a
    checkpoint's, or ``--quantization fp8``) and compressed-tensors FP8."""
    if layout.quantized != "linear":
        return False
    return layout.method == "fp8" or (
        layout.method == "compressed-tensors" and layout.label.startswith("FP8")
    )


def marlin_fp8_layout(layout: WeightLayout, config: Mapping[str, Any] | None) -> WeightLayout:
    """An FP8 checkpoint (``quant_method: fp8``, 128×128 blocks or per-tensor, or compressed-tensors
    FP8 with ``strategy`` block, channel or tensor) as vLLM 0.19 keeps it on a GPU without FP8
    (``fp8_runs_on_marlin``).

    utils/marlin_utils_fp8.py (0.19.0): the weight is repacked for Marlin at the same size
    (``pack_fp8_to_int32`` + ``gptq_marlin_repack``, 4 fp8 values an int32, no padding:
    :123-134, :241-262) and replaces the loaded one, so only the scales change. They are cast to
    the model dtype (``layer.orig_dtype``, :139-141 and :269) and expanded to one scale per output
    column: a block checkpoint's (K/128, N/128) fp32 ``weight_scale_inv`` is repeated 128 times
    along N (:174-183; experts :295-303) and becomes one 16-bit scale per 128 weights along K,
    the group size Marlin reads (``group_size = weight_block_size[1]``, :143 and :266); a
    per-tensor scale is repeated to every output column (:147-169; experts :278-290): one 16-bit
    scale per row of K weights, taken here with K = hidden size (a down projection's longer rows
    make it smaller still; either way under 0.1 % of the weights). The fp32 block scales are
    replaced, not kept. The Marlin workspaces (one int32 per SM per layer, :118, :236) are left
    out: a few KiB."""
    if not is_fp8_checkpoint(layout):
        return layout
    qc = (config or {}).get("quantization_config") or _text_config(config or {}).get("quantization_config")
    qc = qc if isinstance(qc, Mapping) else {}
    block = qc.get("weight_block_size")
    kind = "per-tensor scale"
    if layout.method == "compressed-tensors":
        # compressed_tensors.py:630-651: below 8.9 the W8A8 FP8 scheme becomes W8A16Fp8, whose
        # process_weights_after_loading is prepare_fp8_layer_for_marlin (w8a16_fp8.py:18-20)
        groups = qc.get("config_groups") or {}
        w = next((g.get("weights") for g in groups.values() if isinstance(g, Mapping)), None) or {}
        block = w.get("block_structure") if w.get("strategy") == "block" else None
        kind = f"per-{w.get('strategy') or 'tensor'} scales"
    scale_bits = layout.dtype_bytes * 8
    if block:
        group = int(block[1])
        bits = 8 + scale_bits / group
        label = f"FP8 weights ({block[0]}×{block[1]} blocks), Marlin: a {scale_bits}-bit scale per {group}"
    else:
        hidden = int(_text_config(config or {}).get("hidden_size") or 0)
        bits = 8 + (scale_bits / hidden if hidden else 0.0)
        label = f"FP8 weights ({kind}), Marlin: a {scale_bits}-bit scale per output column"
    return WeightLayout(
        label,
        layout.dtype,
        "linear",
        bits,
        layout.method,
        "no FP8 tensor cores: vLLM runs the fp8 weights through Marlin (weight-only), its scales"
        " expanded to the model dtype",
    )


# ---------------------------------------------------------------------------------------------
# Weights per GPU
# ---------------------------------------------------------------------------------------------

VOCAB_PADDING = 64  # vllm/model_executor/layers/vocab_parallel_embedding.py: DEFAULT_VOCAB_PADDING_SIZE


def _pad(value: int, multiple: int) -> int:
    return -(-value // multiple) * multiple


def _kv_heads_per_rank(kv_heads: int, tp: int) -> int:
    """``QKVParallelLinear``: KV heads are split over the ranks, or replicated when fewer than TP."""
    return max(1, kv_heads // tp)


def vllm_weight_bytes(
    spec: ModelSpec, layout: WeightLayout, tp: int = 1, config: Mapping[str, Any] | None = None
) -> dict[str, float]:
    """Bytes of weights on each GPU once vLLM has loaded them, by part.

    Linear layers (attention, MLP, experts) are split over the ``tp`` ranks; K and V projections
    are replicated when the model has fewer KV heads than ranks; the token embedding and the LM
    head are split by rows after padding the vocabulary to a multiple of 64
    (``vocab_parallel_embedding.py``); norms and routers stay whole on every rank. A rotary
    table of max positions × head size in the model dtype is a buffer of the model
    (``rotary_embedding/base.py``: ``cos_sin_cache``), counted here as vLLM's "weights" do. A
    multimodal checkpoint's vision encoder (``vision_tower_params``) is loaded in the model dtype,
    its matrices split over the ranks.
    """
    p = spec.param_breakdown()
    b = layout.dtype_bytes
    vocab_rows = _pad(spec.vocab_size, VOCAB_PADDING)
    embed_width = spec.embed_dim or spec.hidden_size
    token_table = vocab_rows * embed_width
    other_embeddings = max(p.embeddings - spec.vocab_size * embed_width, 0)
    embeddings = (token_table / tp + other_embeddings) * b
    lm_head = (vocab_rows * spec.hidden_size / tp) * b if p.lm_head else 0.0
    bits = layout.bits
    if layout.quantized == "linear":
        attention = p.attention * bits / 8 / tp
        mlp = p.mlp * bits / 8 / tp
        experts = p.routed_experts * bits / 8 / tp
    elif layout.quantized == "experts":
        attention = p.attention * b / tp
        mlp = p.mlp * b / tp
        experts = _mxfp4_expert_bytes(spec, tp, b)
    else:
        attention = p.attention * b / tp
        mlp = p.mlp * b / tp
        experts = p.routed_experts * b / tp
    # K/V projections replicated beyond the KV head count (QKVParallelLinear)
    replicated_kv = 0.0
    if tp > 1 and not spec.uses_mla and spec.num_kv_heads < tp:
        per_head = spec.hidden_size * spec.head_dim * 2  # K and V of one head
        kept = _kv_heads_per_rank(spec.num_kv_heads, tp)
        shard = spec.num_kv_heads / tp
        width = bits / 8 if layout.quantized == "linear" else b
        replicated_kv = spec.num_layers * per_head * (kept - shard) * width
    mla = _mla_extra_bytes(spec, layout, tp, config or {}) if spec.uses_mla else {}
    rotary = rotary_table_bytes(spec, config or {}, b)
    vision_matrices, vision_other = vision_tower_params(config or {})
    vision_whole = vision_replicated_params(config or {})
    return {
        "vision_tower": ((vision_matrices - vision_whole) / tp + vision_whole + vision_other) * b,
        "embeddings": embeddings,
        "lm_head": lm_head,
        "attention": attention + replicated_kv + sum(mla.values()),
        "mlp": mlp,
        "experts": experts,
        "routers_norms_other": (p.routers + p.norms + p.other) * b,
        "rotary_table": rotary,
    }


def _mla_extra_bytes(
    spec: ModelSpec, layout: WeightLayout, tp: int, config: Mapping[str, Any]
) -> dict[str, float]:
    """What vLLM 0.19 keeps on every rank of an MLA model beyond an even split of its attention.

    ``models/deepseek_v2.py``: the query and latent down-projections (``fused_qkv_a_proj``, a
    ``MergedColumnParallelLinear`` with ``disable_tp=True``, or ``kv_a_proj_with_mqa``, a
    ``ReplicatedLinear``, without a query LoRA) are whole on every rank; the sparse-attention
    lightning indexer of DeepSeek V3.2 / GLM-5.1 (``Indexer``: ``wq_b`` and ``wk`` in the
    checkpoint's format, ``weights_proj`` unquantized, a ``LayerNorm`` ``k_norm``) is built on
    every rank too, and is not in the model's own parameter count. ``layers/attention/
    mla_attention.py: process_weights_after_loading`` keeps a 16-bit copy of a quantized
    ``kv_b_proj`` (``W_UV``, ``W_UK_T``, "we just store fp16/bf16 copies"); an unquantized one
    is viewed in place.
    """
    b = layout.dtype_bytes
    width = layout.bits / 8 if layout.quantized == "linear" else b
    h, layers = spec.hidden_size, spec.num_layers
    down = h * ((spec.q_lora_rank or 0) + spec.kv_lora_rank + spec.qk_rope_head_dim)
    out = {"mla_down_projections": layers * down * (1 - 1 / tp) * width}
    text = _text_config(config)
    n, d = int(text.get("index_n_heads") or 0), int(text.get("index_head_dim") or 0)
    if n and d and text.get("index_topk"):
        q_in = spec.q_lora_rank or h
        out["sparse_indexer"] = layers * ((q_in * n * d + h * d) * width + (h * n + 2 * d) * b)
    if layout.quantized == "linear":
        heads = spec.num_heads / tp
        out["mla_kv_b_16bit_copy"] = (
            layers * spec.kv_lora_rank * heads * (spec.qk_nope_head_dim + spec.v_head_dim) * b
        )
    return out


def _rope_rows(rope: Mapping[str, Any], positions: int) -> int:
    """Positions of one rotary table (``rotary_embedding/``): ``max_position_embeddings``, times the
    factor for linear and dynamic-NTK scaling, the original length times the factor for YaRN, four
    times for multimodal RoPE (``mrope.py``)."""
    kind = str(rope.get("rope_type", rope.get("type", "default")))
    factor = float(rope.get("factor", 1.0) or 1.0)
    if rope.get("mrope_section"):
        return positions * 4
    if kind in ("linear", "dynamic"):
        return int(positions * factor)
    if kind in ("yarn", "deepseek_yarn"):
        return int(int(rope.get("original_max_position_embeddings", positions / factor)) * factor)
    return positions


def _rope_params(text: Mapping[str, Any]) -> Mapping[str, Any]:
    params = text.get("rope_parameters") or text.get("rope_scaling") or {}
    return params if isinstance(params, Mapping) else {}


def sparse_topk_buffer_bytes(spec: ModelSpec, config: Mapping[str, Any], max_num_batched_tokens: int) -> int:
    """The sparse-attention top-k index buffer of DeepSeek V3.2 and GLM-5.1 (``index_topk`` in the
    config): ``models/deepseek_v2.py:1155-1163`` (0.19.0) allocates max_num_batched_tokens x
    index_topk int32 on the device when ``DeepseekV2Model`` is built, so "Model loading took" counts
    it (64 MiB at 8,192 tokens and top-2,048), whole on every rank and every pipeline stage."""
    topk = _text_config(config).get("index_topk")
    return int(max_num_batched_tokens) * int(topk) * 4 if spec.uses_mla and topk else 0


def rotary_table_bytes(spec: ModelSpec, config: Mapping[str, Any], dtype_bytes: int) -> float:
    """The rotary embeddings' cos/sin tables, buffers the model builds once and keeps on the GPU.

    ``model_executor/layers/rotary_embedding/``: each distinct rotary embedding (``get_rope``
    caches them) keeps a table of positions × rotary dimension in the model dtype. The positions
    are ``max_position_embeddings``, times the factor for linear and dynamic-NTK scaling, the
    original length times the factor for YaRN, four times for multimodal RoPE (``mrope.py``: "we
    enlarge max_position_embeddings to 4 times"). Gemma 3 keeps a second, unscaled table for its
    sliding-window layers (``gemma3.py:164-181`` at 0.19.0: a default rope at
    ``rope_local_base_freq``, which the config class supplies when config.json leaves it out, as
    Gemma 3's checkpoints do). Llama 3 scaling keeps ``max_position_embeddings`` (Llama 4 Scout:
    10,485,760 positions).
    """
    text = _text_config(config)
    positions = spec.max_positions
    if not positions:
        return 0.0
    head = spec.qk_rope_head_dim if spec.uses_mla else spec.head_dim
    params = _rope_params(text)
    nested = [v for v in params.values() if isinstance(v, Mapping)]
    ropes = nested or [params]
    total = 0.0
    for rope in ropes:
        partial = float(rope.get("partial_rotary_factor", text.get("partial_rotary_factor", 1.0)) or 1.0)
        dim = int(head * partial) if not spec.uses_mla else head
        total += _rope_rows(rope, positions) * dim * dtype_bytes
    if spec.family in ("gemma3", "gemma3_text") and not nested and "sliding" in spec.kinds():
        total += positions * head * dtype_bytes
    return total


# ---------------------------------------------------------------------------------------------
# The caching allocator's blocks ("Model loading took" counts them, not the tensors' bytes)
# ---------------------------------------------------------------------------------------------
# "Model loading took" is DeviceMemoryProfiler's consumed_memory (v1/worker/gpu_model_runner.py:
# 4806-4808 at 0.19.0; utils/mem_utils.py:44-60): the platform's memory usage after the load
# less before, on CUDA torch.cuda.max_memory_allocated() just after empty_cache() and
# reset_peak_memory_stats() (platforms/cuda.py: get_current_memory_usage, read at vllm-project/
# vllm 002db49, the 0.19.0 copy read here lacking platforms/), i.e. the allocator's live blocks.
# The KV budget takes the same figure (mem_utils.py:252-281: weights_memory), while the blocks'
# free rests are reserved memory outside both (non_torch = used - reserved). A block is the
# request rounded up to 512 bytes, except where the allocator does not split off the rest of the
# free block it took. PyTorch's CUDA caching allocator (c10/cuda/CUDACachingAllocator.cpp:
# round_size, get_allocation_size, should_split, best-fit get_free_block; the rules
# simulators/engines/sglang.py follows) gives a request of 10 MiB or more its own segment rounded
# up to 2 MiB, one of 1-10 MiB a 20 MiB segment, one of at most 1 MiB a 2 MiB segment of the
# small pool, and splits a large block only when more than 1 MiB would remain. So a 42.5 MiB
# shard holds 44 MiB and gives 1.5 MiB back, while an 85 MiB shard keeps all of its 86 MiB
# segment: the extra 1 MiB counts as loaded.
# the rules' one home: simulators/engines/allocator.py


class _Block:
    __slots__ = ("addr", "free", "key", "next", "prev", "size", "small")

    def __init__(self, size: int, small: bool, addr: int = 0) -> None:
        self.size, self.small, self.free, self.addr = size, small, False, addr
        self.prev: _Block | None = None
        self.next: _Block | None = None
        self.key: tuple[int, int] = (0, 0)


def caching_allocator_allocated(events: Sequence[int]) -> int:
    """Bytes ``torch.cuda.memory_allocated()`` reports once these events have run on a fresh
    allocator. A positive event allocates that many bytes (the k-th allocation is tensor k); a
    negative event ``-(k + 1)`` frees tensor k, its block merging with free neighbours of the
    same segment. A live block keeps a rest too small to split off (the rules above). Among free
    blocks of one size the lowest address wins (``BlockComparatorSize``: size, then pointer); new
    segments are taken to come at rising addresses, a split's rest just after its block."""
    import bisect

    free_keys: dict[bool, list[tuple[int, int]]] = {True: [], False: []}
    by_key: dict[tuple[int, int], _Block] = {}
    live: list[_Block | None] = []
    top = 0  # the next segment's address

    def segment(size: int, small: bool) -> _Block:
        nonlocal top
        top += size
        return _Block(size, small, top - size)

    def put(block: _Block) -> None:
        block.free, block.key = True, (block.size, block.addr)
        by_key[block.key] = block
        bisect.insort(free_keys[block.small], block.key)

    def take(block: _Block) -> None:
        keys = free_keys[block.small]
        keys.pop(bisect.bisect_left(keys, block.key))
        del by_key[block.key]
        block.free = False

    for event in events:
        if event < 0:
            block = live[-event - 1]
            live[-event - 1] = None
            if block is None:
                continue
            prev, nxt = block.prev, block.next
            if prev is not None and prev.free:
                take(prev)
                prev.size += block.size
                prev.next = nxt
                if nxt is not None:
                    nxt.prev = prev
                block = prev
            if nxt is not None and nxt.free:
                take(nxt)
                block.size += nxt.size
                block.next = nxt.next
                if nxt.next is not None:
                    nxt.next.prev = block
            put(block)
            continue
        rounded = _allocator.round_size(event)
        small = _allocator.is_small(rounded)
        keys = free_keys[small]
        i = bisect.bisect_left(keys, (rounded, 0))
        if i < len(keys):
            block = by_key[keys[i]]
            take(block)
        else:
            block = segment(_allocator.allocation_size(rounded), small)
        remaining = block.size - rounded
        if _allocator.should_split(rounded, remaining):
            rest = _Block(remaining, small, block.addr + rounded)
            rest.prev, rest.next = block, block.next
            if block.next is not None:
                block.next.prev = rest
            block.next = rest
            block.size = rounded
            put(rest)
        live.append(block)
    return sum(block.size for block in live if block is not None)


class _LoadOrder:
    """The tensors a model creates on the GPU, in order (allocations and frees)."""

    def __init__(self) -> None:
        self.events: list[int] = []
        self.sizes: list[int] = []
        self.live = 0  # the live tensors' own bytes

    def alloc(self, nbytes: float) -> int:
        n = int(nbytes)
        self.events.append(n)
        self.sizes.append(n)
        self.live += n
        return len(self.sizes) - 1

    def free(self, index: int) -> None:
        self.events.append(-(index + 1))
        self.live -= self.sizes[index]

    def rope(self, positions: int, dim: int, dtype_bytes: int) -> None:
        """``RotaryEmbeddingBase.__init__`` on the GPU (rotary_embedding/base.py:58-63, 69-92 at
        0.19.0): inv_freq, t, freqs, cos, sin and their fp32 concatenation; the locals go on
        return, the table is cast to the model dtype, then the fp32 table goes."""
        half = dim // 2
        temps = [self.alloc(half * 4), self.alloc(positions * 4)]
        temps += [self.alloc(positions * half * 4) for _ in range(3)]  # freqs, cos, sin
        table = self.alloc(positions * dim * 4)  # torch.cat((cos, sin), dim=-1)
        for t in temps:
            self.free(t)
        self.alloc(positions * dim * dtype_bytes)
        self.free(table)


def _partial_rotary(text: Mapping[str, Any]) -> float:
    rope = text.get("rope_parameters") or text.get("rope_scaling") or {}
    value = rope.get("partial_rotary_factor") if isinstance(rope, Mapping) else None
    return float(value or text.get("partial_rotary_factor") or 1.0)


def _qwen35_vision_order(order: _LoadOrder, vision: Mapping[str, Any], tp: int, b: int) -> None:
    """Qwen 3.5's vision tower as models/qwen3_vl.py:321-420 (0.19.0) builds it: patch
    embedding, position table, its rotary embedding (8,192 positions, half the head), the
    merger (LayerNorm, fc1, fc2), then each block's two LayerNorms, attention QKV and
    projection, MLP fc1 and fc2, every linear with a bias."""
    h, heads, inter = int(vision["hidden_size"]), int(vision["num_heads"]), int(vision["intermediate_size"])
    out = int(vision["out_hidden_size"])
    p, t = int(vision["patch_size"]), int(vision["temporal_patch_size"])
    merged = h * int(vision["spatial_merge_size"]) ** 2
    channels, positions = int(vision.get("in_channels", 3)), int(vision["num_position_embeddings"])
    for n in (h * channels * t * p * p, h, positions * h):  # patch embedding, its bias, positions
        order.alloc(n * b)
    order.rope(8192, h // heads // 2, b)
    for n in (h, h, merged // tp * merged, merged // tp, out * (merged // tp), out):
        order.alloc(n * b)
    for _ in range(int(vision["depth"])):
        for n in (h, h, h, h, 3 * h // tp * h, 3 * h // tp, h * (h // tp), h):
            order.alloc(n * b)
        for n in (inter // tp * h, inter // tp, h * (inter // tp), h):
            order.alloc(n * b)


# Dense decoders whose vLLM 0.19.0 model class is followed tensor by tensor (models/qwen3.py,
# models/qwen2.py, models/gemma2.py, models/llama.py and models/phi3.py, which is
# LlamaForCausalLM); another family is not modelled (None).
DENSE_ORDER_FAMILIES = ("qwen3", "qwen2", "gemma2", "llama", "phi3")


def _dense_decoder_order(
    order: _LoadOrder,
    spec: ModelSpec,
    tp: int,
    b: int,
    cfg: Mapping[str, Any],
    stage: tuple[int, int, bool, bool] | None = None,
) -> None:
    """A dense decoder's tensors in the order vLLM 0.19.0's model class creates them.

    - Qwen3 (``Qwen3ForCausalLM``): ``qwen2.py:391-417`` (``Qwen2Model``, which ``Qwen3Model``
      extends): the token embedding, then each layer, then the final norm; ``qwen3.py:189-214`` a
      layer: attention, MLP, two RMSNorms; ``qwen3.py:98-143`` attention: ``qkv_proj`` (a bias when
      ``attention_bias``), ``o_proj``, the rotary table (``get_rope`` caches it: built once, at the
      first layer), ``q_norm`` and ``k_norm``; ``qwen2.py:93-100`` the MLP: ``gate_up_proj``,
      ``down_proj``; ``qwen3.py:294-304`` the LM head unless tied.
    - Qwen2 (``Qwen2ForCausalLM``): the same model (``qwen2.py:391-417``); a layer
      (``qwen2.py:266-290``): attention (``qkv_proj`` with a bias, ``qwen2.py:159-164``;
      ``o_proj`` 168; the rotary table 181), the MLP (93, 100), two RMSNorms; the LM head unless
      tied (``qwen2.py:555-565``).
    - Gemma 2 (``Gemma2ForCausalLM``, tied, ``gemma2.py:392``): ``gemma2.py:263-281`` the token
      embedding, each layer, the final norm and the fp32 ``normalizer`` scalar;
      ``gemma2.py:197-226`` a layer: attention (``qkv_proj``, ``o_proj``, the rotary table:
      ``gemma2.py:135-151``), MLP (``gemma2.py:71-78``) and four GemmaRMSNorms.
    - Llama and Phi-3 (``phi3.py``: ``Phi3ForCausalLM(LlamaForCausalLM)``): ``llama.py:376-389``
      the token embedding, each layer, the final norm; ``llama.py:288-312`` a layer: attention
      (``qkv_proj`` 164, ``o_proj`` 174, the rotary table built by ``_init_rotary_emb`` 183/245),
      the MLP (``gate_up_proj`` 94, ``down_proj`` 102), two RMSNorms; ``llama.py:539-546`` the LM
      head, always built and, when tied, swapped for the embedding (built, then freed).

    The attention layers' fp32 scale scalars (``attention.py:89-113``, 512-byte blocks of the
    small pool) are left out: under 4 KiB a layer.

    ``stage`` (first layer, end, first stage?, last stage?) builds one pipeline stage of Qwen2/3,
    Llama or Phi-3: ``utils.py:626-656`` (``make_layers``) builds only the stage's layers;
    ``qwen2.py:388-417`` and ``llama.py:373-391`` the embedding on the first stage (and on the last
    when tied), the final norm and the LM head on the last."""
    h, hd = spec.hidden_size, spec.head_dim
    vocab_rows = _pad(spec.vocab_size, VOCAB_PADDING)
    first, end, is_first, is_last = stage or (0, spec.num_layers, True, True)
    if is_first or (spec.tie_word_embeddings and is_last):
        order.alloc(vocab_rows // tp * h * b)  # embed_tokens (VocabParallelEmbedding)
    rope_built = False
    for heads, kv_heads, inter in spec.layer_shapes()[first:end]:
        rows = (heads // tp + 2 * _kv_heads_per_rank(kv_heads, tp)) * hd
        order.alloc(rows * h * b)  # qkv_proj
        if spec.qkv_bias:
            order.alloc(rows * b)
        order.alloc(h * (heads // tp * hd) * b)  # o_proj
        dim = int(hd * _partial_rotary(_text_config(cfg)))
        if not rope_built and dim and spec.max_positions:
            order.rope(int(rotary_table_bytes(spec, cfg, 1)) // dim, dim, b)
            rope_built = True
        if spec.qk_norm == "rms":  # Qwen3's q_norm and k_norm
            order.alloc(hd * b)
            order.alloc(hd * b)
        order.alloc(2 * inter // tp * h * b)  # gate_up_proj
        order.alloc(h * (inter // tp) * b)  # down_proj
        for _ in range(spec.norms_per_layer):
            order.alloc(h * b)
    if not is_last:
        return
    order.alloc(h * b)  # final norm
    if spec.family == "gemma2":
        order.alloc(4)  # normalizer, a float32 scalar buffer
    if not spec.tie_word_embeddings:
        order.alloc(vocab_rows // tp * h * b)  # lm_head (ParallelLMHead)
    elif spec.family in ("llama", "phi3"):  # built, then tie_weights drops it for the embedding
        order.free(order.alloc(vocab_rows // tp * h * b))


# the families whose pipeline stages are followed (Gemma 2 builds its embedding and norm on every
# stage, gemma2.py:263-274, which pipeline_stages does not size: not followed)
PP_ORDER_FAMILIES = ("qwen3", "qwen2", "llama", "phi3")


def pp_stage_rounding_bytes(
    spec: ModelSpec, layout: WeightLayout, tp: int, pp: int, config: Mapping[str, Any] | None = None
) -> list[float] | None:
    """``vllm_allocator_rounding_bytes`` for each pipeline stage of a dense Qwen2/3, Llama or Phi-3
    checkpoint in the model dtype (the layers split as ``pp_partitions``); None otherwise."""
    cfg = config or {}
    if (
        spec.family not in PP_ORDER_FAMILIES
        or layout.quantized != "none"
        or spec.is_moe
        or not set(spec.kinds()) <= {"full", "sliding"}
        or (isinstance(cfg.get("vision_config"), Mapping) and cfg.get("vision_config"))
    ):
        return None
    out, first = [], 0
    for k, n in enumerate(pp_partitions(spec.num_layers, pp)):
        order = _LoadOrder()
        stage = (first, first + n, k == 0, k == pp - 1)
        _dense_decoder_order(order, spec, max(1, tp), layout.dtype_bytes, cfg, stage)
        out.append(float(caching_allocator_allocated(order.events) - order.live))
        first += n
    return out


def _siglip_order(order: _LoadOrder, vision: Mapping[str, Any], text_hidden: int, tp: int, b: int) -> None:
    """Gemma 3's SigLIP tower and projector as vLLM 0.19.0 builds them (``gemma3_mm.py:515-521``):
    ``siglip.py:285-306`` the patch convolution (``Conv2dLayer``, weight and bias, whole on every
    rank), the position embedding and the int64 ``position_ids`` buffer; each encoder layer
    (``siglip.py:478-503``): ``qkv_proj`` and ``out_proj`` with biases (383-392), ``layer_norm1``,
    ``fc1`` and ``fc2`` with biases (456-463), ``layer_norm2``; the post-LayerNorm (no pooling head:
    ``vision_use_head`` false); then the projector (``gemma3_mm.py:420-432``): the
    ``mm_input_projection_weight`` (``torch.zeros``) and its RMSNorm."""
    h, inter = int(vision["hidden_size"]), int(vision["intermediate_size"])
    p, channels = int(vision["patch_size"]), int(vision.get("num_channels", 3))
    patches = (int(vision["image_size"]) // p) ** 2
    for n in (h * channels * p * p, h, patches * h):  # patch convolution, its bias, positions
        order.alloc(n * b)
    order.alloc(patches * 8)  # position_ids, int64
    for _ in range(int(vision["num_hidden_layers"])):
        for n in (3 * h // tp * h, 3 * h // tp, h * (h // tp), h, h, h):  # qkv, out_proj, layer_norm1
            order.alloc(n * b)
        for n in (inter // tp * h, inter // tp, h * (inter // tp), h, h, h):  # fc1, fc2, layer_norm2
            order.alloc(n * b)
    order.alloc(h * b)  # post_layernorm weight
    order.alloc(h * b)  # and bias
    order.alloc(h * text_hidden * b)  # mm_input_projection_weight
    order.alloc(h * b)  # mm_soft_emb_norm


def _gemma3_text_order(order: _LoadOrder, spec: ModelSpec, cfg: Mapping[str, Any], tp: int, b: int) -> None:
    """Gemma 3's language model as vLLM 0.19.0 builds it: ``gemma3.py:312-332`` the token
    embedding, each layer, the final norm and the fp32 ``normalizer``; a layer
    (``gemma3.py:244-271``): attention (``qkv_proj`` 142, ``o_proj`` 151, ``q_norm`` and ``k_norm``
    159-160, then the rotary table, 164-181: the sliding layers' default table and the full
    layers' scaled one, each built at the first layer of its kind), the MLP (77, 84) and four
    GemmaRMSNorms; ``gemma3.py:476-483`` the LM head, built and then tied to the embedding."""
    text = _text_config(cfg)
    h, hd = spec.hidden_size, spec.head_dim
    vocab_rows = _pad(spec.vocab_size, VOCAB_PADDING)
    order.alloc(vocab_rows // tp * h * b)  # embed_tokens
    params = _rope_params(text)
    built: set[str] = set()
    for kind, (heads, kv_heads, inter) in zip(spec.kinds(), spec.layer_shapes(), strict=True):
        order.alloc((heads // tp + 2 * _kv_heads_per_rank(kv_heads, tp)) * hd * h * b)  # qkv_proj
        order.alloc(h * (heads // tp * hd) * b)  # o_proj
        order.alloc(hd * b)  # q_norm
        order.alloc(hd * b)  # k_norm
        layer_type = "sliding_attention" if kind == "sliding" else "full_attention"
        if layer_type not in built and spec.max_positions:
            rope = params.get(layer_type) if isinstance(params.get(layer_type), Mapping) else None
            if rope is None:  # transformers v4 configs: the sliding layers' rope is a default one
                rope = {} if kind == "sliding" else params
            order.rope(_rope_rows(rope, spec.max_positions), hd, b)
            built.add(layer_type)
        order.alloc(2 * inter // tp * h * b)  # gate_up_proj
        order.alloc(h * (inter // tp) * b)  # down_proj
        for _ in range(4):
            order.alloc(h * b)
    order.alloc(h * b)  # final norm
    order.alloc(4)  # normalizer, a float32 scalar
    lm_head = order.alloc(vocab_rows // tp * h * b)  # built, then tied to the embedding
    if spec.tie_word_embeddings:
        order.free(lm_head)


def _frozen(value: Any) -> Any:
    """A hashable copy of a config (dicts as sorted item tuples, lists as tuples), for a cache key."""
    if isinstance(value, Mapping):
        return tuple(sorted((str(k), _frozen(v)) for k, v in value.items()))
    if isinstance(value, (list, tuple)):
        return tuple(_frozen(v) for v in value)
    return value


def vllm_allocator_rounding_bytes(
    spec: ModelSpec, layout: WeightLayout, tp: int = 1, config: Mapping[str, Any] | None = None
) -> float | None:
    """See ``_allocator_rounding``: the same bytes, remembered for the last configs asked (a command
    search starts the same checkpoint at a hundred utilisations; its load order does not change)."""
    try:
        key = (spec, layout, tp, _frozen(config or {}))
        hash(key)
    except TypeError:  # an unhashable value somewhere in the config: no cache
        return _allocator_rounding(spec, layout, tp, config)
    if key not in _ROUNDING_CACHE:
        if len(_ROUNDING_CACHE) >= 64:
            _ROUNDING_CACHE.pop(next(iter(_ROUNDING_CACHE)))  # the oldest entry
        _ROUNDING_CACHE[key] = _allocator_rounding(spec, layout, tp, config)
    return _ROUNDING_CACHE[key]


_ROUNDING_CACHE: dict[tuple, float | None] = {}


def _allocator_rounding(
    spec: ModelSpec, layout: WeightLayout, tp: int = 1, config: Mapping[str, Any] | None = None
) -> float | None:
    """Bytes "Model loading took" counts beyond the tensors vLLM loads: the allocator's live
    blocks (``caching_allocator_allocated``) less the tensors' own bytes, for the tensors in the
    order vLLM 0.19 creates them (model_loader/base_loader.py: load_model builds the model under
    ``with target_device``, read at vllm-project/vllm 01f62d3).
    Followed for Qwen 3.5's dense checkpoints in the model dtype: models/qwen3_5.py:118-260,
    445-510, 574-610; Gated DeltaNet layers as layers/mamba/gdn_linear_attn.py:226-358 creates
    them, full-attention layers as models/qwen3_next.py:200-276 (one rotary table, cached by
    get_rope), the vision tower as ``_qwen35_vision_order``. None (not modelled) for another
    model or a quantized checkpoint.

    Qwen3.5-27B at TP 4: each 85 MiB gate/up shard holds 86 MiB, each 15 MiB Gated DeltaNet output
    projection 16 MiB, the 16 full-attention layers' 35 MiB QKV and 15 MiB output shards 36 and
    16 MiB: 0.14 GiB. Qwen3.5-9B's shards are whole multiples of 2 MiB (48, 24, 20, 8 MiB)."""
    cfg = config or {}
    text = _text_config(cfg)
    gdn = ("linear_num_key_heads", "linear_num_value_heads", "linear_key_head_dim", "linear_value_head_dim")
    if layout.quantized != "none" or spec.is_moe:
        return None
    if spec.family == "gemma3_text" and set(spec.kinds()) <= {"full", "sliding"}:
        vision = cfg.get("vision_config")
        gemma3 = _LoadOrder()
        if isinstance(vision, Mapping) and vision:
            if vision.get("model_type") != "siglip_vision_model":
                return None
            _siglip_order(gemma3, vision, spec.hidden_size, max(1, tp), layout.dtype_bytes)
        _gemma3_text_order(gemma3, spec, cfg, max(1, tp), layout.dtype_bytes)
        return float(caching_allocator_allocated(gemma3.events) - gemma3.live)
    if spec.family in DENSE_ORDER_FAMILIES and set(spec.kinds()) <= {"full", "sliding"}:
        if isinstance(cfg.get("vision_config"), Mapping) and cfg.get("vision_config"):
            return None  # a vision tower's order is followed for Qwen 3.5 only
        dense = _LoadOrder()
        _dense_decoder_order(dense, spec, max(1, tp), layout.dtype_bytes, cfg)
        return float(caching_allocator_allocated(dense.events) - dense.live)
    if spec.family != "qwen3_5_text":
        return None
    if any(not text.get(k) for k in gdn):
        return None
    b = layout.dtype_bytes
    h, hd, tp = spec.hidden_size, spec.head_dim, max(1, tp)
    order = _LoadOrder()
    vision = cfg.get("vision_config")
    if isinstance(vision, Mapping) and vision:
        _qwen35_vision_order(order, vision, tp, b)
    vocab_rows = _pad(spec.vocab_size, VOCAB_PADDING)
    order.alloc(vocab_rows // tp * h * b)  # embed_tokens
    nk, nv = int(text["linear_num_key_heads"]), int(text["linear_num_value_heads"])
    v_dim = int(text["linear_value_head_dim"])
    key, value = nk * int(text["linear_key_head_dim"]), nv * v_dim
    kernel = int(text.get("linear_conv_kernel_dim", 4))
    gate = 2 if text.get("attn_output_gate", True) else 1
    rope_built = False
    for kind, (heads, kv_heads, inter) in zip(spec.kinds(), spec.layer_shapes(), strict=True):
        if kind == "linear":  # GatedDeltaNetAttention: conv1d, in_proj_qkvz, in_proj_ba, ...
            for n in ((2 * key + value) // tp * kernel, (2 * key + 2 * value) // tp * h, 2 * nv // tp * h):
                order.alloc(n * b)
            order.alloc(nv // tp * b)  # dt_bias
            order.alloc(nv // tp * 4)  # A_log, float32
            order.alloc(v_dim * b)  # RMSNormGated
            order.alloc(h * (value // tp) * b)  # out_proj
        else:  # Qwen3NextAttention: qkv_proj (query and gate), o_proj, rotary, q/k norms
            order.alloc((heads * gate // tp + 2 * _kv_heads_per_rank(kv_heads, tp)) * hd * h * b)
            order.alloc(h * (heads // tp * hd) * b)
            dim = int(hd * _partial_rotary(text))
            if not rope_built and dim and spec.max_positions:
                order.rope(int(rotary_table_bytes(spec, cfg, 1)) // dim, dim, b)
                rope_built = True
            order.alloc(hd * b)
            order.alloc(hd * b)
        order.alloc(2 * inter // tp * h * b)  # gate_up_proj
        order.alloc(h * (inter // tp) * b)  # down_proj
        order.alloc(h * b)  # input_layernorm
        order.alloc(h * b)  # post_attention_layernorm
    order.alloc(h * b)  # final norm
    if not spec.tie_word_embeddings:
        order.alloc(vocab_rows // tp * h * b)  # lm_head
    return float(caching_allocator_allocated(order.events) - order.live)


def _pad64(n: float) -> int:
    return _pad(math.ceil(n), 64)


def _mxfp4_expert_bytes(spec: ModelSpec, tp: int, dtype_bytes: int) -> float:
    """MXFP4 experts as vLLM 0.19 keeps them on Hopper (the Triton backend, ``triton_kernels``).

    ``quantization/mxfp4.py: create_weights`` loads each expert's gate-up (2I/TP × H) and down
    (H × I/TP) matrices as packed 4-bit values plus one uint8 scale per 32; ``_setup_kernel``
    swizzles the values into ``triton_kernels``' Hopper layout, which pads both matrix dimensions
    of the packed bytes to multiples of 64 (``tensor_details/layout_details/hopper_value.py``),
    keeps the swizzled scales in the kernel's precision config while the loaded scales stay
    registered on the layer (two copies), and holds the experts' biases. The padding of the
    swizzled scale layout itself is not modelled (see tests/test_engines.py for what that leaves).
    """
    if not spec.num_experts or (not spec.moe_layers and not spec.is_moe):
        return 0.0
    layers = len(spec.moe_layers) or spec.num_layers
    e, h = spec.num_experts, spec.hidden_size
    i = spec.expert_intermediate_size / tp
    values = e * (_pad64(h / 2) * _pad64(2 * i) + _pad64(i / 2) * _pad64(h))
    scales = e * (2 * i * h / 32 + h * i / 32)
    biases = e * (2 * i + h) * dtype_bytes if spec.expert_bias else 0.0
    return layers * (values + 2 * scales + biases)


# ---------------------------------------------------------------------------------------------
# Vision towers: a multimodal checkpoint's encoder, which vLLM loads beside the language model
# ---------------------------------------------------------------------------------------------


def vision_tower_params(config: Mapping[str, Any]) -> tuple[int, int]:
    """(matrix params, other params) of a multimodal checkpoint's vision encoder and projector.

    vLLM builds the checkpoint's whole architecture (``Resolved architecture:
    …ForConditionalGeneration``), so the encoder's weights count in "Model loading took". The
    families below follow transformers 5.23's modules, checked against it on the meta device
    (tests/test_engines.py): Llama 4's vision model, Qwen 3.5's vision tower, Gemma 4's vision
    tower and SigLIP (Gemma 3). Another ``vision_config`` is refused by name. (0, 0) without one.
    """
    vision = config.get("vision_config")
    if not isinstance(vision, Mapping) or not vision:
        return 0, 0
    text = _text_config(config)
    text_hidden = int(text.get("hidden_size", 0))
    kind = str(vision.get("model_type", ""))
    wrapper = str(config.get("model_type", ""))
    get = vision.get
    if kind == "llama4_vision_model":
        h, inter, layers = (
            int(get("hidden_size")),
            int(get("intermediate_size")),
            int(get("num_hidden_layers")),
        )
        p, size, channels = int(get("patch_size")), int(get("image_size")), int(get("num_channels", 3))
        ratio = float(get("pixel_shuffle_ratio", 0.5))
        matrices = layers * (4 * h * h + 2 * h * inter)
        other = layers * (4 * h + inter + h + 4 * h)  # q/k/v/o and fc biases, two LayerNorms
        other += h + ((size // p) ** 2 + 1) * h + 4 * h  # class embedding, positions, pre/post norms
        matrices += channels * p * p * h  # patch embedding (a linear over unfolded patches)
        shuffled = int(h / (ratio * ratio))
        proj_in, proj_out = int(get("projector_input_dim")), int(get("projector_output_dim"))
        matrices += shuffled * proj_in + proj_in * proj_out  # vision adapter MLP
        matrices += int(get("vision_output_dim")) * text_hidden  # multi-modal projector
        if get("multi_modal_projector_bias"):
            other += text_hidden
        return matrices, other
    if wrapper in ("qwen3_5", "qwen3_5_moe") and "depth" in vision:
        if get("deepstack_visual_indexes"):
            raise EngineError(
                "vision_config.deepstack_visual_indexes: Qwen's deepstack mergers are not modelled"
            )
        h, inter, layers = int(get("hidden_size")), int(get("intermediate_size")), int(get("depth"))
        p, t, channels = (
            int(get("patch_size")),
            int(get("temporal_patch_size", 2)),
            int(get("in_channels", 3)),
        )
        merge, out = int(get("spatial_merge_size", 2)), int(get("out_hidden_size"))
        matrices = layers * (4 * h * h + 2 * h * inter) + h * channels * t * p * p
        other = layers * (3 * h + h + inter + h + 4 * h) + h + int(get("num_position_embeddings")) * h
        merged = h * merge * merge
        matrices += merged * merged + out * merged
        other += 2 * h + merged + out
        return matrices, other
    if kind == "gemma4_vision":
        h, inter, layers = (
            int(get("hidden_size")),
            int(get("intermediate_size")),
            int(get("num_hidden_layers")),
        )
        heads, kv, d = int(get("num_attention_heads")), int(get("num_key_value_heads")), int(get("head_dim"))
        if get("attention_bias") or get("use_clipped_linears"):
            raise EngineError("vision_config.attention_bias / use_clipped_linears: not modelled")
        p = int(get("patch_size"))
        matrices = layers * (h * heads * d + 2 * h * kv * d + heads * d * h + 3 * h * inter)
        other = layers * (2 * d + 4 * h) + 2 * int(get("position_embedding_size")) * h
        matrices += h * 3 * p * p + text_hidden * h
        return matrices, other
    if kind == "siglip_vision_model":
        if get("vision_use_head", True) is not False:
            raise EngineError(
                "vision_config.vision_use_head: SigLIP's attention-pooling head is not modelled"
            )
        h, inter, layers = (
            int(get("hidden_size")),
            int(get("intermediate_size")),
            int(get("num_hidden_layers")),
        )
        p, size, channels = int(get("patch_size")), int(get("image_size")), int(get("num_channels", 3))
        matrices = layers * (4 * h * h + 2 * h * inter) + channels * p * p * h + h * text_hidden
        other = layers * (4 * h + inter + h + 4 * h) + h + (size // p) ** 2 * h + 2 * h + h
        return matrices, other
    raise EngineError(
        f"vision_config.model_type {kind!r}: this checkpoint's vision encoder is not modelled, and vLLM"
        " loads it beside the language model"
    )


def vision_replicated_params(config: Mapping[str, Any]) -> int:
    """The part of ``vision_tower_params``' matrices that vLLM 0.19.0 keeps whole on every TP rank.

    - Gemma 4: the tower is transformers' own module (``gemma4_mm.py:888``,
      ``AutoModel.from_config``: plain ``nn.Linear``) and the embedder a ``ReplicatedLinear``
      (``gemma4_mm.py:823``): all of it.
    - Gemma 3: SigLIP's patch convolution (``siglip.py:293``, ``Conv2dLayer``) and the projector's
      ``mm_input_projection_weight`` (``gemma3_mm.py:424-428``, an ``nn.Parameter``); the blocks' qkv,
      out, fc1 and fc2 are TP-parallel (``siglip.py:383-466``).
    - Qwen 3.5: the patch embedding (``qwen3_vl.py:163``, ``Conv3dLayer``); the blocks and the
      merger are TP-parallel.
    """
    vision = config.get("vision_config")
    if not isinstance(vision, Mapping) or not vision:
        return 0
    kind, wrapper, get = str(vision.get("model_type", "")), str(config.get("model_type", "")), vision.get
    if kind == "gemma4_vision":
        return vision_tower_params(config)[0]
    if kind == "siglip_vision_model":
        h, p = int(get("hidden_size")), int(get("patch_size"))
        text_hidden = int(_text_config(config).get("hidden_size", 0))
        return int(get("num_channels", 3)) * p * p * h + h * text_hidden
    if wrapper in ("qwen3_5", "qwen3_5_moe") and "depth" in vision:
        p, t = int(get("patch_size")), int(get("temporal_patch_size", 2))
        return int(get("hidden_size")) * int(get("in_channels", 3)) * t * p * p
    return 0


# The image processor's pixel cap of Qwen 3.5's checkpoints (preprocessor_config.json: "size":
# {"longest_edge": 16777216, "shortest_edge": 65536}, patch 16, merge 2, i.e. 4096 x 4096 px),
# as the Qwen3-VL/3.5 processor configs in the code index read (the file is not in config.json).
# vLLM profiles with the modality with the most tokens an item (encoder_budget.py:
# get_modality_with_max_tokens); the video processor's cap is taken to give fewer than an image
# (its config is not in the project), as a LAMBO start-up prints it (leadawon/LAMBO
# logs/vllm_serve.log at b73493e, vLLM 0.19.0, Qwen3.5-27B: "Encoder cache will be initialized
# with a budget of 16384 tokens, and profiled with 1 image items of the maximum feature size",
# after "Using backend AttentionBackendEnum.FLASH_ATTN for vit attention").
QWEN_VL_IMAGE_MAX_PIXELS = 16_777_216
MM_DEFAULT_LIMIT = 999  # config/multimodal.py:270: an unspecified modality allows 999 items a prompt


def _mm_limit(limit_mm_per_prompt: Mapping[str, int] | None, modality: str, language_model_only: bool) -> int:
    """config/multimodal.py:259-273: get_limit_per_prompt (0 for every modality when
    language_model_only; 999 for a modality the user did not name)."""
    if language_model_only:
        return 0
    value = (limit_mm_per_prompt or {}).get(modality)
    return MM_DEFAULT_LIMIT if value is None else int(value)


def _without_vision(config: Mapping[str, Any] | None) -> dict[str, Any]:
    return {k: v for k, v in (config or {}).items() if k != "vision_config"}


def vision_tower_loaded(
    config: Mapping[str, Any],
    limit_mm_per_prompt: Mapping[str, int] | None = None,
    language_model_only: bool = False,
) -> bool:
    """Whether vLLM builds the checkpoint's vision tower: model_executor/models/interfaces.py:249-289
    (``_mark_tower_model``) replaces it by a StageMissingLayer, with no weights, when the limit of
    every modality it serves (image and video) is 0 (``--limit-mm-per-prompt``, or
    ``--language-model-only``, which makes every limit 0)."""
    if not isinstance(config.get("vision_config"), Mapping) or not config.get("vision_config"):
        return False
    return any(_mm_limit(limit_mm_per_prompt, m, language_model_only) for m in _tower_modalities(config))


def _tower_modalities(config: Mapping[str, Any]) -> tuple[str, ...]:
    """The modalities a vision tower serves (the set each model file passes to _mark_tower_model):
    image and video for Qwen 3.5 (qwen3_5.py:597) and Gemma 4 (gemma4_mm.py:887), image alone
    for Gemma 3 (gemma3_mm.py:515) and Llama 4 (mllama4.py:758)."""
    wrapper = str(config.get("model_type", ""))
    return ("image", "video") if wrapper in ("qwen3_5", "qwen3_5_moe", "gemma4") else ("image",)


def _gemma3_encoder_profile(
    config: Mapping[str, Any],
    tp: int,
    b: int,
    max_num_batched_tokens: int,
    max_num_seqs: int,
    max_model_len: int,
    image_limit: int,
) -> dict[str, float]:
    """Gemma 3's SigLIP tower in vLLM 0.19.0's profile run, per GPU.

    ``models/gemma3_mm.py:88-125, 194-210``: an image is (crops + 1) x ``mm_tokens_per_image``
    tokens, with no crops unless pan-and-scan is asked for (the processor's default is off,
    assumed here), so the largest is one ``image_size``² image of 256 tokens; the budget and the
    items follow ``vision_encoder_profile`` (32 images at 8,192 batched tokens). The forward
    (``siglip.py:341-355, 420-431, 471-476, 505-521``): the patch embedding plus positions, then
    per layer the residual, the norm output and the larger of attention's qkv (3 rows / TP) with
    its per-head copies and output, and the MLP's fc1 output with its GELU (2 x patches x I / TP);
    the projector (``gemma3_mm.py:443-462``) pools 4 x 4 patches to a token and projects it to the
    text width. The inputs (3 x size² per image, model dtype) and the outputs are held to the end
    of the profile run. The patch convolution's cuDNN workspace is not counted.
    """
    vision = config["vision_config"]
    text = _text_config(config)
    h, inter = int(vision["hidden_size"]), int(vision["intermediate_size"])
    size, patch = int(vision["image_size"]), int(vision["patch_size"])
    per_item = int(config.get("mm_tokens_per_image", 256))
    budget = max(max_num_batched_tokens, per_item)
    items_per_prompt = max(1, min(image_limit, max_model_len // per_item))
    items = max(1, min(budget // per_item, max_num_seqs * items_per_prompt))
    patches = items * (size // patch) ** 2
    row = patches * h * b
    pixel_values = items * 3 * size * size * b
    attn = 7 * row / tp  # qkv (3), contiguous q/k/v (3), the attention output (1)
    mlp = 2 * patches * (inter / tp) * b
    layers = pixel_values + 2 * row + max(attn, mlp)
    outputs = items * per_item * int(text.get("hidden_size", 0)) * b
    projector = pixel_values + 3 * row + 2 * outputs  # post-norm, the contiguous copy, the matmul
    return {
        "budget_tokens": float(budget),
        "items": float(items),
        "tokens_per_item": float(per_item),
        "patches": float(patches),
        "pixel_values": float(pixel_values),
        "outputs": float(outputs),
        "encoder_peak": max(layers, projector),
        "held": float(pixel_values + outputs),
    }


# gemma4_mm.py:79-80: a video is up to 32 frames of at most 70 soft tokens each
GEMMA4_VIDEO_FRAMES, GEMMA4_VIDEO_SOFT_TOKENS = 32, 70
GEMMA4_DUMMY_SIDE = 224  # gemma4_mm.py:385-392: Gemma4ImageProcessor has size=None, so 224 x 224


def _gemma4_soft_tokens(width: int, height: int, patch: int, k: int, max_soft: int) -> int:
    """gemma4_mm.py:226-256 (``_compute_num_soft_tokens``): the aspect-preserving resize to at
    most max_soft x k² patches, in whole k x k pools, then one soft token a pool."""
    unit = patch * k
    scale = math.sqrt(max_soft * k * k / ((height / patch) * (width / patch)))
    target_h = max(unit, math.floor(height * scale / unit) * unit)
    target_w = max(unit, math.floor(width * scale / unit) * unit)
    return (target_h // patch) * (target_w // patch) // (k * k)


def _gemma4_encoder_profile(
    config: Mapping[str, Any],
    b: int,
    max_num_batched_tokens: int,
    max_num_seqs: int,
    max_model_len: int,
    limits: Mapping[str, int],
) -> dict[str, float]:
    """Gemma 4's vision tower in vLLM 0.19.0's profile run (no audio tower), per GPU.

    ``gemma4_mm.py:201-216``: an image is at most ``default_output_length`` (280) tokens, a video
    32 x (70 + 2 + 6) = 2,496, so the profile encodes dummy videos while video is allowed
    (``encoder_budget.py``: the modality with the most tokens an item). Each is 32 frames of 224 x
    224 (gemma4_mm.py:385-392, 420-455) cut into at most 70 x 3² = 630 patches and padded to 630
    (transformers' Gemma 4 image processor, called frame by frame: gemma4_mm.py:494-540); the
    tower (transformers' module, whole on every rank) runs one frame at a time and strips the
    padding, leaving 64 soft tokens a frame (gemma4_mm.py:1097-1150), projected to the text width
    and concatenated per video. Held to the end of the profile run: the inputs (patches x 3·16²,
    model dtype; position ids int64) and the outputs. The encoder's own peak, one frame's pass
    beside the inputs, the frame list and its concatenation, is taken as the inputs + twice the
    outputs + one gated-MLP block over 630 patches (residual, norm, gate, up, product).
    """
    vision, text = config["vision_config"], _text_config(config)
    if limits.get("video", 0) == 0:
        raise EngineError(
            "limit_mm_per_prompt: Gemma 4 with videos off is profiled on images (one at a time,"
            " gemma4_mm.py:1026-1090); that pass is not modelled"
        )
    patch, k = int(vision["patch_size"]), int(vision["pooling_kernel_size"])
    per_item = GEMMA4_VIDEO_FRAMES * (GEMMA4_VIDEO_SOFT_TOKENS + 2 + 6)
    budget = max(max_num_batched_tokens, per_item, int(vision.get("default_output_length", 280)))
    items_per_prompt = max(1, min(limits["video"], max_model_len // per_item))
    items = max(1, min(budget // per_item, max_num_seqs * items_per_prompt))
    frames = items * GEMMA4_VIDEO_FRAMES
    padded = GEMMA4_VIDEO_SOFT_TOKENS * k * k
    soft = _gemma4_soft_tokens(GEMMA4_DUMMY_SIDE, GEMMA4_DUMMY_SIDE, patch, k, GEMMA4_VIDEO_SOFT_TOKENS)
    pixel_values = frames * padded * 3 * patch * patch * b
    position_ids = frames * padded * 2 * 8
    outputs = frames * soft * int(text.get("hidden_size", 0)) * b
    h, inter = int(vision["hidden_size"]), int(vision["intermediate_size"])
    frame_pass = 2 * padded * h * b + 3 * padded * inter * b
    held = pixel_values + position_ids + outputs
    return {
        "budget_tokens": float(budget),
        "items": float(items),
        "tokens_per_item": float(per_item),
        "patches": float(frames * padded),
        "pixel_values": float(pixel_values),
        "outputs": float(outputs),
        "encoder_peak": float(held + outputs + frame_pass),
        "held": float(held),
    }


def vision_encoder_profile(
    config: Mapping[str, Any],
    *,
    tp: int,
    dtype_bytes: int,
    max_num_batched_tokens: int,
    max_num_seqs: int,
    max_model_len: int,
    limit_mm_per_prompt: Mapping[str, int] | None = None,
    language_model_only: bool = False,
    skip_mm_profiling: bool = False,
) -> dict[str, float] | None:
    """What the vision encoder adds to the profile run's torch peak, for a Qwen3-VL-style tower
    (Qwen 3.5), Gemma 3's SigLIP (``_gemma3_encoder_profile``) or Gemma 4's tower without an audio
    tower (``_gemma4_encoder_profile``), per GPU; None for a checkpoint without one, or a tower
    not yet followed (Llama 4, Gemma 4 with audio).

    vLLM 0.19.0, ``v1/worker/gpu_model_runner.py:5721-5794`` (``profile_run``): unless
    ``skip_mm_profiling`` (5725) or the encoder budget is 0 (5734: every modality's limit 0), it
    builds a batch of the modality with the most tokens per item (5748), runs
    ``self.model.embed_multimodal`` on it (5768) and keeps the outputs in ``encoder_cache`` (5778)
    through the decoder's dummy run (5782) and the sampler's (5789), clearing them at 5794; the
    dummy batch (``batched_dummy_mm_inputs``) is a local of profile_run, so it is alive as long.

    - **Size.** ``models/qwen2_vl.py:914-965`` (``get_image_size_with_most_features``): the
      processor's max pixels // (patch x merge)^2 merged tokens, factored near-square: 16,384 tokens
      (4096 x 4096 px); ``qwen3_vl.py:711-768``: an image is one temporal patch (2 frames padded to
      ``temporal_patch_size``), so 65,536 patches. ``v1/core/encoder_cache_manager.py:269-316``: the
      budget is max(max_num_batched_tokens, tokens per item) (scheduler.py:234-235 sets both
      scheduler figures to max_num_batched_tokens); ``multimodal/encoder_budget.py``
      (``_get_max_items``): items = max(1, min(budget // per item, max_num_seqs x
      max(1, min(limit, max_model_len // per item)))).
    - **Inputs.** ``pixel_values`` (patches x C·T·P², model dtype: the processor's float output is
      cast in ``call_hf_processor``'s ``maybe_cast_dtype``), held to the end of the profile run.
    - **Encoder forward** (``qwen3_vl.py:616-665``), on every rank with its TP shard of the linears
      (``mm_encoder_tp_mode`` "weights"; qkv/fc1 are Column-, proj/fc2 Row-parallel, so the residual
      stream is full width): the patch embedding (``layers/conv.py`` ``Conv3dLayer._forward_mulmat``:
      a permuted copy of the inputs, then a linear); then ``fast_pos_embed_interpolate``
      (``qwen3_vl.py:472-532``), whose four gathered position tables (4 x patches x hidden) stay
      referenced (``embeds``) until it returns, beside the combined table, its permuted copy and
      ``torch.cat``'s copy, while the patch embeddings wait: 4 + 3 rows of patches x hidden, plus the
      embeddings' one; the blocks (``qwen3_vl.py:247-266``, attention ``qwen2_5_vl.py:362-419``):
      the residual, the position table kept in ``encoder_metadata``, the norm output and the larger
      of attention's qkv + contiguous q/k + rotated q/k (7 shards of patches x hidden / TP) and the
      MLP's fc1 output + its activation. The ViT attention (FlashAttention varlen or SDPA, whichever
      ``get_vit_attn_backend`` picks) is linear in the patches; nothing patches² is kept.
    - **Outputs**: merged tokens x ``out_hidden_size`` in the model dtype, the merger's
      ``torch.cat`` copy (qwen3_vl.py:662), split into the per-item views that encoder_cache keeps.

    The profile run's peak is then max(encoder forward, inputs + outputs + the decoder's peak).
    """
    vision = config.get("vision_config")
    if not isinstance(vision, Mapping) or not vision:
        return None
    wrapper = str(config.get("model_type", ""))
    qwen = wrapper in ("qwen3_5", "qwen3_5_moe") and "depth" in vision
    gemma3 = wrapper == "gemma3" and vision.get("model_type") == "siglip_vision_model"
    gemma4 = wrapper == "gemma4" and vision.get("model_type") == "gemma4_vision"
    if gemma4 and config.get("audio_config"):
        return None  # an audio tower's items (the processor's audio_seq_length) are not modelled
    if not (qwen or gemma3 or gemma4):
        return None
    limits = {m: _mm_limit(limit_mm_per_prompt, m, language_model_only) for m in _tower_modalities(config)}
    if skip_mm_profiling or not any(limits.values()):
        return {"budget_tokens": 0.0, "items": 0.0, "encoder_peak": 0.0, "held": 0.0}
    if gemma4:
        return _gemma4_encoder_profile(
            config, dtype_bytes, max_num_batched_tokens, max_num_seqs, max_model_len, limits
        )
    image_limit = limits["image"]
    if not image_limit:
        raise EngineError(
            "limit_mm_per_prompt: a video-only profile (image limit 0) is not modelled; vLLM then"
            " profiles the encoder on a dummy video"
        )
    if gemma3:
        return _gemma3_encoder_profile(
            config, tp, dtype_bytes, max_num_batched_tokens, max_num_seqs, max_model_len, image_limit
        )
    g = vision.get
    patch, merge = int(g("patch_size")), int(g("spatial_merge_size", 2))
    temporal, channels = int(g("temporal_patch_size", 2)), int(g("in_channels", 3))
    h, inter, heads = int(g("hidden_size")), int(g("intermediate_size")), int(g("num_heads"))
    out_hidden = int(g("out_hidden_size"))
    unit = patch * merge
    per_item = QWEN_VL_IMAGE_MAX_PIXELS // (unit * unit)  # merged tokens of the largest image
    # qwen2_vl.py:959-963: the near-square factor pair keeps every token (aspect <= 200)
    budget = max(max_num_batched_tokens, per_item)
    items_per_prompt = max(1, min(image_limit, max_model_len // per_item))
    items = max(1, min(budget // per_item, max_num_seqs * items_per_prompt))
    patches = per_item * merge * merge * items
    b = dtype_bytes
    row = patches * h * b  # one full-width activation of every patch
    pixel_values = patches * channels * temporal * patch * patch * b
    patch_embed = pixel_values + pixel_values + row  # the permuted copy, then the linear's output
    # fast_pos_embed_interpolate, in rows of one item's patches x hidden, beside the k items'
    # patch embeddings: torch.cat's moment holds the last item's 4 tables, the k outputs and
    # their copy (3k + 4); with k >= 2, item k's tables are gathered while item k-1's are still
    # bound to ``embeds``, beside k - 1 outputs (2k + 7)
    per_row = row / items
    pos_embed = pixel_values + per_row * max(3 * items + 4, 2 * items + 7 if items > 1 else 0)
    head_dim = h // heads
    rotary = 2 * patches * (head_dim // 2) * b  # cos and sin kept in encoder_metadata
    attn = 7 * row / tp  # qkv (3), contiguous q/k (2) and rotated q/k (2) shards
    mlp = 2 * patches * (inter / tp) * b  # fc1's output and its activation
    blocks = pixel_values + row + row + rotary + row + max(attn, mlp)  # pos table, residual, norm
    outputs = items * per_item * out_hidden * b
    # merger (qwen3_vl.py:309-318): pos table, residual and norm output; fc1's shard and its GELU;
    # fc2's output and the torch.cat copy
    merger = pixel_values + 3 * row + 2 * row / tp + 2 * outputs
    peak = max(patch_embed, pos_embed, blocks, merger)
    return {
        "budget_tokens": float(budget),
        "items": float(items),
        "tokens_per_item": float(per_item),
        "patches": float(patches),
        "pixel_values": pixel_values,
        "outputs": outputs,
        "encoder_peak": peak,
        "held": pixel_values + outputs,
    }


# ---------------------------------------------------------------------------------------------
# Scheduler defaults and the profile run ("activation")
# ---------------------------------------------------------------------------------------------


LARGEST_TIER_FROM = (0, 28)  # the release whose servers take 16,384 tokens on >= 160 GiB
LARGEST_TIER_UNKNOWN = (
    "max_num_batched_tokens: on a device of 160 GiB or more the OpenAI-compatible server's default"
    " changed inside the 0.21-0.29 line (16,384 tokens from 0.28.0, vllm/engine/arg_utils.py"
    " get_batch_defaults, 0.29.0:2698-2707; 8,192 before it), so the line alone cannot say which."
    " Set --max-num-batched-tokens, or paste a start-up log, which names its version"
)


def scheduler_defaults(
    total_bytes: float, gpu_name: str = "", *, offline: bool = False, version: str = "0.19"
) -> tuple[int, int]:
    """``max_num_batched_tokens`` and ``max_num_seqs`` when the user sets neither.

    ``vllm/engine/arg_utils.py: get_batch_defaults``: on a device of at least 70 GiB that is not
    an A100, the OpenAI-compatible server takes 8,192 tokens and 1,024 sequences (the ``LLM``
    class 16,384 and 1,024); on others 2,048 and 256 (``LLM``: 8,192 and 256). From 0.28.0 a
    device of at least 160 GiB (B200, B300, MI355X) takes 16,384 and 1,024 for both (read in
    0.29.0's arg_utils.py:2698-2707; absent from 0.19.0's; v0.28.0 at 2cf0a6915 is where a
    source-pinned survey of that release, github id 69027517413 in the search index, found it
    first, v0.27.0 still topping out at the 70 GiB tier). The family id "0.21+" on such a device
    cannot choose between the two and is refused naming the field (``LARGEST_TIER_UNKNOWN``).
    """
    if total_bytes >= 160 * GiB and not offline:  # offline: 16,384 and 1,024 either way
        text = str(version).strip()
        if text == "0.21+":
            raise EngineError(LARGEST_TIER_UNKNOWN)
        release = _version_tuple(text)
        if release is not None and release >= LARGEST_TIER_FROM:
            return 16384, 1024
    big = total_bytes >= 70 * GiB and "a100" not in gpu_name.lower()
    if big:
        return (16384 if offline else 8192), 1024
    return (8192 if offline else 2048), 256


CHUNKED_OFF_HYBRID_NOT_MODELLED = (
    "chunked prefill off with a hybrid model's state layers (Mamba, Gated DeltaNet) is not"
    " modelled: vLLM ties it to prefix caching's mamba_cache_mode (0.19.0"
    " model_executor/models/config.py:423-460, 0.29.0 :609-644), whose 'align' mode asserts"
    " chunked prefill and whose 'all' mode sizes the state blocks differently"
)


def chunked_prefill_batched_tokens(
    max_num_batched_tokens: int | None,
    default: int,
    *,
    max_num_seqs: int,
    max_model_len: int,
    enable_chunked_prefill: bool = True,
) -> int:
    """``max_num_batched_tokens`` as vLLM resolves it, the user's (``max_num_batched_tokens``)
    or the usage context's ``default`` (``scheduler_defaults``).

    vLLM 0.19.0 ``vllm/engine/arg_utils.py:2180-2246``
    (``_set_default_max_num_seqs_and_batched_tokens_args``; the same rule in 0.29.0 at
    2872-2961): only when the user set none, chunked prefill off raises it to
    max(max_model_len, default) (0.19.0:2217-2222, 0.29.0:2915-2920, "If max_model_len is too
    short, use the default for higher throughput"), then any default is capped at max_num_seqs ×
    max_model_len (0.19.0:2224-2230). A value the user set is kept as given; with chunked prefill
    off one smaller than max_model_len makes ``config/scheduler.py`` ``verify_max_model_len``
    raise (0.19.0:259-270), which ``vllm_startup`` returns as a refusal. Chunked prefill off also
    drops the "Chunked prefill is enabled with max_num_batched_tokens=" line (scheduler.py:237-242
    prints it only when on).
    The profile's encoder batch (``multimodal/encoder_budget.py:167-171``, 0.29.0 :174-178) then
    cuts max_num_seqs to max_num_batched_tokens // tokens per item, which changes nothing here:
    the items are already at most max(max_num_batched_tokens, per item) // per item
    (``vision_encoder_profile``). Nothing else in the profile run reads the flag.
    """
    if max_num_batched_tokens is not None:
        return int(max_num_batched_tokens)
    batched = int(default)
    if not enable_chunked_prefill:
        batched = max(int(max_model_len), batched)
    return min(int(max_num_seqs) * int(max_model_len), batched)


def _next_power_of_two(n: int) -> int:
    return 1 << max(n - 1, 0).bit_length()


def vllm_activation_bytes(
    spec: ModelSpec,
    layout: WeightLayout,
    *,
    tp: int = 1,
    max_num_batched_tokens: int,
    max_num_seqs: int,
    num_sms: int | None,
) -> dict[str, float]:
    """The profile run's torch peak increase ("torch peak memory increase"), by term.

    ``gpu_model_runner.py: profile_run`` runs ``_dummy_run(max_num_tokens)`` with
    ``min(max_num_tokens, max_num_seqs)`` requests, then ``_dummy_sampler_run`` on their last
    hidden states. The peak is the larger of two moments, plus what outlives the forward pass:

    - **sampler** (``v1/sample/sampler.py`` and ``ops/topk_topp_sampler.py``): logits of
      requests × vocabulary in the model dtype, their float32 copy, ``softmax`` probabilities
      (float32) and the exponential noise ``q`` of ``random_sample`` (float32) are alive at once:
      2 + 4 + 4 + 4 bytes per logit;
    - **forward**: one decoder layer's widest working set for all tokens
      (``llm_memory.inference_activation_bytes``, MLP split over TP);
    - **kept**: the model's output hidden states for all tokens; the fused-MoE workspace
      (``fused_moe/modular_kernel.py: _allocate_buffers`` through the workspace manager, which
      keeps its largest size: tokens × top-k × max(I/TP, H) and tokens × top-k × max(2I/TP, H)
      in the model dtype, Triton experts; MXFP4 experts on Hopper run the monolithic
      ``OAITritonMxfp4ExpertsMonolithic``, which allocates inside the kernel and keeps nothing:
      ``fused_moe/oracle/mxfp4.py``); and the top-k/top-p kernel's per-program buffer
      (``ops/topk_topp_triton.py``: min(next power of two of min(SMs, requests), SMs) × vocab ×
      4 bytes, cached for the process) when there are 8 or more requests.
    """
    b = layout.dtype_bytes
    tokens = max_num_batched_tokens
    requests = min(tokens, max_num_seqs)
    vocab = spec.vocab_size
    vocab_padded = _pad(vocab, VOCAB_PADDING)
    sampler = requests * (vocab_padded * b + vocab * (4 + 4 + 4))
    sampler += 2 * requests * spec.hidden_size * b  # last hidden states and their rand_like copy
    forward = inference_activation_bytes(spec, tokens, b) / tp
    if spec.is_moe:
        # the routed experts' intermediates live in the MoE workspace (below), not the layer's
        routed = 3 * spec.expert_intermediate_size * spec.experts_per_token * tokens * b / tp
        forward = max(forward - routed, 0.0)
    hidden_out = tokens * spec.hidden_size * b
    moe = 0.0
    if spec.is_moe and spec.experts_per_token and layout.quantized != "experts":
        width = spec.expert_intermediate_size / tp
        k = spec.experts_per_token
        h = spec.hidden_size
        common = max(tokens * k * max(width, h), tokens * h)
        moe = (common + tokens * k * max(2 * width, h)) * b
    triton = 0.0
    if requests >= 8 and num_sms:
        programs = min(num_sms, requests)
        triton = min(_next_power_of_two(programs), num_sms) * vocab * 4
    return {
        "sampler": sampler,
        "forward": forward,
        "peak_moment": max(sampler, forward),
        "hidden_states": hidden_out,
        "moe_workspace": moe,
        "topk_topp_buffer": triton,
        "total": max(sampler, forward) + hidden_out + moe + triton,
    }


# Memory outside PyTorch's allocator that grows between the worker's first snapshot and the end
# of the profile run ("non-torch forward increase memory", utils/mem_utils.py: memory_profiling):
# CUDA kernels loaded on first use, cuBLAS/cuBLASLt handles, and at TP >= 2 the buffers NCCL and
# the custom all-reduce allocate on their first collective. It is a property of the driver, NCCL
# and the node, not of the model, so it is taken from real vLLM 0.19 start-ups on H100 nodes
# (tests/data/vllm_startups.jsonl and the calibration file: 0.24-0.25 GiB at TP 1 in three runs;
# 2.07 GiB per GPU at TP 2), never fitted to the run being predicted.
NON_TORCH_BYTES_TP1 = 0.25 * GiB
NON_TORCH_BYTES_TPN = 2.07 * GiB
# With pipeline parallelism alone (TP 1) the stages only pass activations point to point: 0.07 GiB
# on every worker of the two real start-ups with 2 and 4 stages (tests/data/vllm_startups.jsonl).
NON_TORCH_BYTES_PP = 0.07 * GiB
# CUDA-graph capture after the KV pool is sized (``gpu_model_runner.py: capture_model``): the
# graphs' private pool. vLLM 0.19 measures it by capturing, so it is a measured range here: 0.71,
# 0.91, 1.03 and 1.10 GiB in the four calibration start-ups (51 + 51 graphs, largest 512).
CUDA_GRAPH_BYTES = 1.10 * GiB
# The ranges these measured terms take over the real vLLM 0.19 start-ups in
# tests/data/vllm_startups.jsonl and the calibration file (tests/test_engines.py recomputes
# them): a verdict whose range straddles the line is "tight". All come from one planner study's
# H100 80GB nodes (NVLink): other fabrics and GPUs are not yet measured (issue 30, item 3).
MEASURED_RANGES_GIB: dict[str, tuple[float, float, int]] = {
    # term: (lowest, highest, runs)
    "non_torch_tp1": (0.24, 0.46, 46),
    "non_torch_tpn": (2.06, 2.21, 17),
    "cuda_graphs": (0.46, 1.85, 68),
}


# Non-torch memory at TP >= 2 over PCIe: NCCL moves data peer to peer or through host memory and
# allocates no NVLink SHARP buffers, and vLLM's custom all-reduce stays off beyond two PCIe GPUs
# (custom_all_reduce.py: "not supported on more than two PCIe-only GPUs"). Measured on two PCIe
# machines: 0.25 GiB per GPU on 2× RTX 4090 at TP 2
# (https://github.com/vllm-project/vllm/issues/13061) and 0.20 GiB on each worker of several
# 23.58 GiB GPUs (https://github.com/vllm-project/vllm/pull/14447), both vLLM 0.7-0.8 V0
# ("non_torch_memory takes"), the issue-30 analysis of five 0.19 PCIe logs finding 0.25 GiB
# right to +1-2 %.
NON_TORCH_PCIE_GIB = (0.20, 0.25)
# vLLM's custom all-reduce, when it runs (world size 2, 4, 6 or 8 in one node, and two GPUs or a
# fully NVLink-connected set: custom_all_reduce.py), allocates two IPC buffers outside PyTorch
# with cudaMalloc: meta_size() + max_size for the signals and max_size for the registered copy,
# max_size = 8 MiB (8192 × 1024); its 8 MiB rank_data is a torch tensor.
CUSTOM_AR_MAX_SIZE = 8192 * 1024
CUSTOM_AR_BYTES = 2 * CUSTOM_AR_MAX_SIZE


# Where each measured term comes from: one entry per machine (a repository or a thread), so a
# term resting on one machine shows (tests/test_engines.py checks every term has two, or is
# listed in SINGLE_SOURCE_TERMS and says so on the ledger).
MEASURED_SOURCES: dict[str, tuple[str, ...]] = {
    "non_torch_tp1": (
        "https://github.com/llm-d-incubation/llm-d-planner (vLLM 0.19, H100: 0.24-0.46 GiB)",
        "https://github.com/2215860382/VedioSifter (vLLM 0.12: 0.06 GiB)",
        "https://github.com/mrpid12org/imageworks (vLLM 0.10.2, a 16 GiB GPU: 0.02 GiB)",
        "https://github.com/benyucong/neo4j-graphrag-python (vLLM 0.10.2: 0.02-0.07 GiB)",
    ),
    "non_torch_eager": (
        "https://github.com/2215860382/VedioSifter (vLLM 0.12: 0.06 GiB)",
        "https://github.com/mrpid12org/imageworks (vLLM 0.10.2, eager and not: 0.02 GiB)",
        "https://github.com/benyucong/neo4j-graphrag-python (vLLM 0.10.2, H100: 0.02-0.07 GiB)",
    ),
    "non_torch_nvls": (
        "https://github.com/llm-d-incubation/llm-d-planner (vLLM 0.19, H100 TP 2-4: 2.06-2.21 GiB)",
        "https://github.com/vllm-project/vllm/pull/10511 (H100, V0: 1.79 GiB at TP 1, 3.58 at TP 2)",
    ),
    "non_torch_pcie": (
        "https://github.com/vllm-project/vllm/issues/13061 (2× RTX 4090, TP 2: 0.25 GiB)",
        "https://github.com/vllm-project/vllm/pull/14447 (23.58 GiB GPUs: 0.20 GiB)",
    ),
    "non_torch_pp": (
        "https://github.com/llm-d-incubation/llm-d-planner (vLLM 0.19, H100 PP 2 and 4: 0.07 GiB)",
    ),
    "cuda_graphs": (
        "https://github.com/llm-d-incubation/llm-d-planner (vLLM 0.19, H100, 102 graphs: 0.46-1.85 GiB)",
        "https://github.com/LukeJYK/AutoScientists (vLLM 0.26, 12 graphs: 0.11 GiB)",
    ),
}
SINGLE_SOURCE_TERMS = frozenset({"non_torch_pp"})
# The lowest TP-1 non-torch figure on the other machines above (vLLM 0.10-0.12): the range a
# one-GPU ledger carries runs from it to the 0.19 H100 runs' highest.
NON_TORCH_TP1_LOWEST_GIB = 0.02
# vLLM 0.19 measures the non-torch increase over the whole window of ``memory_profiling``
# (utils/mem_utils.py:197-281: after the window less the worker's init snapshot), and that window
# holds ``profile_cudagraph_memory`` too unless ``enforce_eager`` (v1/worker/gpu_worker.py:366-381:
# graphs captured into a throw-away pool beside a 512-block KV cache, gpu_model_runner.py:
# 5862-5960), so what that capture leaves outside PyTorch counts; with ``enforce_eager`` it does not
# run. The 0.19 figures above all come from start-ups that ran it (the 0.21+ line is not read here
# and keeps them). Start-ups whose window held no
# graph profiling (vLLM 0.10-0.12, before the estimate existed: eager or not) printed 0.02-0.07 GiB
# on three machines (tests/data/vllm_startups.jsonl, MEASURED_SOURCES["non_torch_eager"]): an
# eager 0.19 start-up takes that range, its highest as the central figure, so a verdict errs
# towards less KV rather than more.
NON_TORCH_NO_GRAPH_PROFILE_GIB = (NON_TORCH_TP1_LOWEST_GIB, 0.07)
NON_TORCH_BYTES_EAGER = NON_TORCH_NO_GRAPH_PROFILE_GIB[1] * GiB


def fabric_of(accel: Accelerator, fabric: str | None = None) -> str:
    """How the GPUs of one node talk: "nvlink-nvls" (NVLink 4/5 through NVSwitch: NCCL's NVLink
    SHARP buffers), "nvlink" (NVLink without SHARP: NVLink 2/3, bridges) or "pcie". From the
    catalog's interconnect row, or ``fabric`` ("nvlink" or "pcie") where a GPU comes in both."""
    iid = accel.interconnect_id or ""
    if fabric not in (None, "", "nvlink", "pcie"):
        raise EngineError(f"fabric {fabric!r}: choose 'nvlink' or 'pcie'")
    if fabric == "pcie" or (not fabric and not iid.startswith("nvlink")):
        return "pcie"
    if iid in ("nvlink-4", "nvlink-5"):
        return "nvlink-nvls"
    return "nvlink"


def non_torch_term(
    accel: Accelerator, tp: int, pp: int, fabric: str, *, graph_profiling: bool = True
) -> tuple[float, float, float, str]:
    """(bytes, low, high, cause) of the memory outside PyTorch on one GPU, from what allocates it.

    ``graph_profiling=False`` (``enforce_eager``): the profiling window holds no CUDA-graph
    profiling (gpu_worker.py:366-381), so the one-GPU part is that of start-ups without it
    (``NON_TORCH_NO_GRAPH_PROFILE_GIB``), at TP 1 and over PCIe (and NVLink without SHARP); the
    NVLink SHARP figure is measured whole on graph start-ups only and stays as it is.

    TP 1: CUDA kernels loaded on first use and cuBLAS/cuBLASLt workspaces (measured, 0.19 H100).
    PP alone: point-to-point sends, 0.07 GiB. TP >= 2 adds NCCL's buffers, which depend on the
    fabric: through NVSwitch (NVLink 4/5) NCCL sets up NVLink SHARP (NVLS) buffers, measured
    with the custom all-reduce at 2.06-2.21 GiB on H100 nodes; over PCIe neither (0.20-0.25
    GiB on two PCIe machines); on NVLink without SHARP the custom all-reduce's 16 MiB beside
    NCCL's peer-to-peer buffers, not measured: the range spans the two measured fabrics.
    """
    lo1, hi1, _ = MEASURED_RANGES_GIB["non_torch_tp1"]
    if tp == 1 and pp > 1:
        pp_bytes = NON_TORCH_BYTES_PP
        return (
            pp_bytes,
            pp_bytes,
            pp_bytes,
            "point-to-point sends between pipeline stages (measured on one study's H100 nodes only)",
        )
    eager_lo, eager_hi = NON_TORCH_NO_GRAPH_PROFILE_GIB
    base = NON_TORCH_BYTES_TP1 if graph_profiling else NON_TORCH_BYTES_EAGER
    eager = "" if graph_profiling else "; enforce_eager: no CUDA-graph profiling inside the window"
    if tp == 1:
        if not graph_profiling:
            return (base, eager_lo * GiB, eager_hi * GiB, "CUDA kernels and cuBLAS workspaces" + eager)
        low = min(lo1, NON_TORCH_TP1_LOWEST_GIB) * GiB
        return (NON_TORCH_BYTES_TP1, low, hi1 * GiB, "CUDA kernels and cuBLAS workspaces")
    if accel.vendor != "NVIDIA":
        raise EngineError(
            f"tp {tp} on {accel.name}: RCCL's buffers over Infinity Fabric are not measured; run"
            " one GPU per engine, or enter the non-torch memory your log prints"
        )
    pcie_lo, pcie_hi = NON_TORCH_PCIE_GIB
    if fabric == "pcie":
        custom = CUSTOM_AR_BYTES if tp == 2 else 0.0
        cause = "NCCL over PCIe (no NVLink SHARP)" + (
            ", the custom all-reduce's 16 MiB" if custom else "; custom all-reduce off beyond two PCIe GPUs"
        )
        low = (pcie_lo if graph_profiling else eager_lo) * GiB
        return (base + custom, low, max(pcie_hi, hi1) * GiB + custom, cause + eager)
    lo_n, hi_n, _ = MEASURED_RANGES_GIB["non_torch_tpn"]
    if fabric == "nvlink-nvls":
        # vLLM's own H100 check (PR #10511) added 1.79 GiB going from TP 1 to TP 2
        return (
            NON_TORCH_BYTES_TPN,
            min(lo_n, NON_TORCH_BYTES_TP1 / GiB + 1.79) * GiB,
            hi_n * GiB,
            "NCCL's NVLink SHARP buffers through NVSwitch and the custom all-reduce",
        )
    return (
        base + CUSTOM_AR_BYTES,
        (pcie_lo if graph_profiling else eager_lo) * GiB,
        hi_n * GiB,
        "NCCL over NVLink without SHARP and the custom all-reduce's 16 MiB (not measured)" + eager,
    )


def cuda_graph_capture_sizes(max_num_seqs: int) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """The batch sizes vLLM captures as CUDA graphs (0.19's FULL_AND_PIECEWISE default): piecewise
    graphs for 1, 2, 4, then every 8 to 248, then every 16, up to min(2 × max_num_seqs, 512)
    (``config/vllm.py``: max_cudagraph_capture_size), and full decode graphs for those sizes up to
    max_num_seqs. 1,024 sequences: 51 + 51 graphs, the largest 512, as the start-ups print
    ("Profiling CUDA graph memory: PIECEWISE=7 (largest=32), FULL=5 (largest=16)" at 16)."""
    largest = min(2 * max_num_seqs, 512)
    sizes = [1, 2, 4, *range(8, 256, 8), *range(256, 513, 16)]
    piecewise = tuple(n for n in sizes if n <= largest)
    return piecewise, tuple(n for n in piecewise if n <= max_num_seqs)


# Every captured graph keeps its own nodes and buffers in the graphs' pool: the real 0.19
# start-ups captured 102 graphs each (MEASURED_RANGES_GIB["cuda_graphs"]), 4.6-18.6 MiB a graph;
# the central figure is the calibration runs' largest, 1.10 GiB / 102. A 0.26 start-up on another
# machine capturing 12 graphs took 0.11 GiB (9.4 MiB a graph; tests/data/vllm_startups.jsonl).
CUDA_GRAPHS_CALIBRATED = 102
CUDA_GRAPH_BYTES_PER_GRAPH = CUDA_GRAPH_BYTES / CUDA_GRAPHS_CALIBRATED


def pp_partitions(num_layers: int, pp: int) -> list[int]:
    """Layers per pipeline stage (``distributed/utils.py: get_pp_indices``): an even split, the
    remainder going one each to the stages before the last, from the second-last backwards."""
    parts = [num_layers // pp] * pp
    for i in range(2, num_layers % pp + 2):
        parts[-i] += 1
    return parts


def pipeline_stages(
    spec: ModelSpec,
    weights_parts: Mapping[str, float],
    act: Mapping[str, float],
    pp: int,
    tokens: int,
    dtype_bytes: int,
) -> list[dict[str, Any]]:
    """Each pipeline stage's weights and profile-run peak.

    Stage 0 holds the token embedding (and a vision encoder), the last the LM head (its own copy
    when the embedding is tied); every stage its share of the layers and a rotary table. A stage
    other than the first keeps receive buffers for the hidden states and residual of
    ``max_num_batched_tokens`` tokens (``make_empty_intermediate_tensors``); every stage but the
    last holds the same two tensors it sends on; only the last runs the sampler.
    """
    layer_bytes = (
        weights_parts["attention"] + weights_parts["mlp"] + weights_parts["experts"]
    ) / spec.num_layers + weights_parts["routers_norms_other"] / spec.num_layers
    head = weights_parts["lm_head"] or weights_parts["embeddings"]
    hand_off = 2 * tokens * spec.hidden_size * dtype_bytes
    out, first = [], 0
    for k, n in enumerate(pp_partitions(spec.num_layers, pp)):
        last = k == pp - 1
        weights = n * layer_bytes + weights_parts["rotary_table"]
        if k == 0:
            weights += weights_parts["embeddings"] + weights_parts.get("vision_tower", 0.0)
        if last:
            weights += head
            activation = (
                hand_off
                + max(act["sampler"], act["forward"])
                + act["hidden_states"]
                + act["moe_workspace"]
                + act["topk_topp_buffer"]
            )
        else:
            activation = act["forward"] + act["moe_workspace"] + hand_off + (hand_off if k else 0.0)
        out.append({"first": first, "end": first + n, "weights": weights, "activation": activation})
        first += n
    return out


# ---------------------------------------------------------------------------------------------
# KV cache specs, groups and the block pool (vllm/v1/core/kv_cache_utils.py)
# ---------------------------------------------------------------------------------------------

DEFAULT_BLOCK_SIZE = 16  # vllm/config/cache.py: CacheConfig.DEFAULT_BLOCK_SIZE


@dataclass(frozen=True)
class KvSpec:
    """One layer's KV-cache spec, as ``vllm/v1/kv_cache_interface.py`` describes it."""

    kind: str  # "full", "sliding", "chunked", "mamba"
    block_size: int
    page_bytes: int  # bytes of one block of this layer
    window: int = 0  # sliding window or attention chunk (tokens)

    def max_memory_usage(self, max_model_len: int, max_num_batched_tokens: int) -> int:
        """Bytes one request of ``max_model_len`` needs in this layer (``max_memory_usage_bytes``)."""
        if self.kind == "full":
            return -(-max_model_len // self.block_size) * self.page_bytes
        if self.kind == "sliding":
            tokens = min(self.window - 1 + max_num_batched_tokens, max_model_len)
            return (-(-tokens // self.block_size) + 1) * self.page_bytes
        if self.kind == "chunked":
            tokens = min(self.window + max_num_batched_tokens, max_model_len)
            return -(-tokens // self.block_size) * self.page_bytes
        return self.page_bytes  # mamba, mamba_cache_mode "none": one state per request


@dataclass(frozen=True)
class KvGroup:
    """A KV-cache group: layers that share one block table."""

    spec: KvSpec
    layers: tuple[int, ...]
    padding: int = 0  # empty slots added so every group has the same number of layers


@dataclass(frozen=True)
class KvPool:
    """How the KV memory is cut into blocks, and what that holds."""

    groups: tuple[KvGroup, ...]
    block_bytes: int  # bytes one block id takes across the layers that share it
    num_blocks: int
    tokens: int  # "GPU KV cache size"
    max_concurrency: float  # "Maximum concurrency for max_model_len tokens per request"
    blocks_per_request: int
    needed_bytes: int  # KV memory one request of max_model_len needs
    uniform_type: bool = False
    notes: tuple[str, ...] = ()


def _mamba_state_page(config: Mapping[str, Any], spec: ModelSpec, tp: int, dtype_bytes: int) -> int:
    """Bytes of one sequence's state in one linear-attention / Mamba-2 layer, as vLLM keeps it.

    ``vllm/model_executor/layers/mamba/mamba_utils.py``: gated delta net (Qwen3-Next, Qwen 3.5)
    keeps a conv state of (kernel − 1) × (2·K heads·K dim + V heads·V dim)/TP in the model dtype
    and a recurrent state of V heads/TP × V dim × K dim in float32 unless
    ``mamba_ssm_cache_dtype`` says otherwise (the block sizes Qwen 3.5 start-ups print are those
    of a float32 state); Mamba-2 (Nemotron-H) a conv state of (kernel − 1) ×
    (intermediate + 2·groups·state)/TP in the model dtype and a state of heads/TP × head dim ×
    state size in ``mamba_ssm_cache_dtype`` (Nemotron-H: its config's value, else float16:
    ``models/config.py: NemotronHForCausalLMConfig``).
    """
    cfg = _text_config(config)
    family = spec.family
    if "linear_num_value_heads" in cfg:
        k_heads = int(cfg["linear_num_key_heads"])
        v_heads = int(cfg["linear_num_value_heads"])
        k_dim = int(cfg["linear_key_head_dim"])
        v_dim = int(cfg["linear_value_head_dim"])
        kernel = int(cfg.get("linear_conv_kernel_dim", 4))
        conv_dim = k_dim * k_heads * 2 + v_dim * v_heads
        if conv_dim % tp or v_heads % tp:
            raise EngineError(f"linear-attention heads do not split over TP {tp}")
        # the recurrent state in float32 unless the config names another dtype: the block sizes
        # vLLM 0.19 prints for Qwen 3.5 (784 tokens for the 27B at TP 1, 528 for the 397B at TP 8)
        # are those of a float32 state; bf16 would give 400 and 272
        ssm_bytes = DTYPE_BYTES.get(str(cfg.get("mamba_ssm_cache_dtype", "float32")), 4)
        conv = (kernel - 1) * (conv_dim // tp) * dtype_bytes
        state = (v_heads // tp) * v_dim * k_dim * ssm_bytes
        return conv + state
    if family in ("nemotron_h",) or "mamba_num_heads" in cfg:
        heads = int(cfg["mamba_num_heads"])
        head_dim = int(cfg["mamba_head_dim"])
        state_size = int(cfg["ssm_state_size"])
        groups = int(cfg.get("n_groups", 1))
        kernel = int(cfg.get("conv_kernel", 4))
        intermediate = heads * head_dim
        if groups % tp:
            groups = groups + (tp - groups % tp) if tp % groups else groups
        conv_dim = intermediate + 2 * groups * state_size
        if conv_dim % tp or heads % tp:
            raise EngineError(f"Mamba heads do not split over TP {tp}")
        ssm_dtype = str(cfg.get("mamba_ssm_cache_dtype", "float16"))
        ssm_bytes = DTYPE_BYTES.get(ssm_dtype, 2)
        conv = (kernel - 1) * (conv_dim // tp) * dtype_bytes
        state = (heads // tp) * head_dim * state_size * ssm_bytes
        return conv + state
    raise EngineError(
        f"{family}: vLLM's state layout for its fixed-state layers is not modelled (fields"
        " linear_num_value_heads or mamba_num_heads not in the config)"
    )


def kv_layer_specs(
    spec: ModelSpec,
    config: Mapping[str, Any] | None,
    *,
    tp: int,
    kv_bytes: int,
    dtype_bytes: int,
    block_size: int = DEFAULT_BLOCK_SIZE,
) -> tuple[list[tuple[int, KvSpec]], int, tuple[str, ...]]:
    """Every cached layer's spec (``Attention.get_kv_cache_spec`` and ``MambaBase``), per GPU.

    Returns (index, spec) pairs, the block size in force and notes. A hybrid model with
    fixed-state layers raises the attention block size until an attention page holds a state
    page (``models/config.py: HybridAttentionMambaModelConfig``, mamba_cache_mode "none": a
    multiple of 16 tokens), and pads the state page to the attention page.
    """
    notes: list[str] = []
    kinds = spec.kinds()
    shapes = spec.layer_shapes()
    head_dims = spec.layer_head_dims or (spec.head_dim,) * spec.num_layers
    per_token_1: dict[int, int] = {}
    for i, kind in enumerate(kinds):
        if kind in ("full", "sliding", "chunked"):
            _, kv_heads, _ = shapes[i]
            per_token_1[i] = 2 * _kv_heads_per_rank(kv_heads, tp) * head_dims[i] * kv_bytes
        elif kind == "mla":
            per_token_1[i] = (spec.kv_lora_rank + spec.qk_rope_head_dim) * kv_bytes
    # DeepSeek V3.2-style sparse attention (GLM-5.1 too): a lightning indexer keeps its own key
    # cache beside each MLA layer (models/deepseek_v2.py: DeepseekV32IndexerCache, an
    # MLAAttentionSpec of one head of index_head_dim + index_head_dim // 128 × 4 bytes: fp8 values
    # and an fp32 scale per 128, in uint8), and the sparse MLA backend takes blocks of 64 tokens
    index_dim = int(_text_config(config or {}).get("index_head_dim") or 0) if spec.uses_mla else 0
    if index_dim:
        if block_size == DEFAULT_BLOCK_SIZE:
            block_size = 64
            notes.append(
                "Sparse attention: vLLM's sparse MLA backend keeps blocks of 64 tokens, and each"
                f" layer's indexer keeps {index_dim + index_dim // 128 * 4} bytes a token beside"
                " its KV cache."
            )
        if kv_bytes == 1:
            # "fp8_ds_mla": the latent in fp8 with an fp32 scale per 128, the rope part in bf16
            for i in per_token_1:
                per_token_1[i] = spec.kv_lora_rank + spec.kv_lora_rank // 128 * 4 + spec.qk_rope_head_dim * 2
    state_kinds = [i for i, k in enumerate(kinds) if k in ("linear", "ssm", "recurrent")]
    mamba_page = 0
    if state_kinds:
        if config is None:
            raise EngineError(
                f"{spec.family}: a model with fixed-state layers needs its config.json to size"
                " vLLM's state pages"
            )
        mamba_page = _mamba_state_page(config, spec, tp, dtype_bytes)
        attn_1 = max(per_token_1.values()) if per_token_1 else 0
        if attn_1:
            needed = DEFAULT_BLOCK_SIZE * -(-mamba_page // (DEFAULT_BLOCK_SIZE * attn_1))
            if block_size < needed:
                block_size = needed
                notes.append(
                    f"Attention block size raised to {block_size} tokens so that an attention page"
                    " holds one layer's fixed state (vLLM does this for hybrid models)."
                )
    out: list[tuple[int, KvSpec]] = []
    for i, kind in enumerate(kinds):
        if i in per_token_1:
            page = per_token_1[i] * block_size
            if kind == "sliding":
                out.append((i, KvSpec("sliding", block_size, page, spec.sliding_window)))
            elif kind == "chunked":
                out.append((i, KvSpec("chunked", block_size, page, spec.attention_chunk)))
            else:
                out.append((i, KvSpec("full", block_size, page)))
        elif kind in ("linear", "ssm", "recurrent"):
            out.append((i, KvSpec("mamba", 0, mamba_page)))
        elif kind not in ("shared", "none"):
            raise EngineError(f"layer {i}: vLLM's cache for a {kind!r} layer is not modelled")
    if index_dim:
        index_page = (index_dim + index_dim // 128 * 4) * block_size
        out += [(spec.num_layers + i, KvSpec("full", block_size, index_page)) for i, _ in list(out)]
    if state_kinds:
        attn_pages = {s.page_bytes for _, s in out if s.kind != "mamba"}
        page = max(attn_pages) if attn_pages else mamba_page
        if page < mamba_page:
            raise EngineError("an attention page smaller than a state page")
        out = [(i, KvSpec("mamba", 0, page) if s.kind == "mamba" else s) for i, s in out]
    return out, block_size, tuple(notes)


def kv_pool(
    layer_specs: Sequence[tuple[int, KvSpec]],
    available_bytes: float,
    *,
    max_model_len: int,
    max_num_batched_tokens: int,
    hybrid_manager: bool = True,
) -> KvPool:
    """Blocks, tokens and maximum concurrency, as ``kv_cache_utils.py`` computes them.

    ``get_kv_cache_groups``: one group when every layer has the same spec; one group with a
    summed page when every layer is of one type but pages differ (``UniformTypeKVCacheSpecs``);
    otherwise pages are unified by raising the block size of the smaller ones, layers of each
    spec are split into groups of equal size (the smallest count, or the largest when it is
    under 1.5× the smallest), padding the last. ``get_num_blocks``: available // page // layers
    per group. ``_report_kv_cache_config``: tokens = blocks // groups × the smallest block size;
    maximum concurrency = blocks ÷ the blocks one request of ``max_model_len`` needs. Mamba
    layers take a block size of ``max_model_len`` (no prefix caching, mode "none").
    """
    notes: list[str] = []
    specs = [(i, s) for i, s in layer_specs]
    if not specs:
        return KvPool((), 0, 1, 0, 0.0, 0, 0, notes=("attention-free: no KV cache",))
    specs = [(i, KvSpec("mamba", max_model_len, s.page_bytes) if s.kind == "mamba" else s) for i, s in specs]
    if not hybrid_manager:
        specs = [
            (i, KvSpec("full", s.block_size, s.page_bytes) if s.kind in ("sliding", "chunked") else s)
            for i, s in specs
        ]
        notes.append(
            "vLLM turns its hybrid KV-cache manager off for chunked attention by default, so"
            " every layer keeps blocks for the whole context."
        )
    distinct = {s for _, s in specs}

    def usage(s: KvSpec) -> int:
        return s.max_memory_usage(max_model_len, max_num_batched_tokens)

    if len(distinct) == 1:
        (s,) = distinct
        n = len(specs)
        groups = (KvGroup(s, tuple(i for i, _ in specs)),)
        num_blocks = int(available_bytes // s.page_bytes // n) if available_bytes > 0 else 0
        per_request = -(-n * usage(s) // (s.page_bytes * n))
        needed = n * usage(s)
        tokens = num_blocks * s.block_size
        return KvPool(
            groups,
            s.page_bytes * n,
            num_blocks,
            tokens,
            num_blocks / per_request,
            per_request,
            needed,
            notes=tuple(notes),
        )
    kinds = {s.kind for s in distinct}
    windows = {s.window for s in distinct}
    block_sizes = {s.block_size for s in distinct}
    if len(kinds) == 1 and len(block_sizes) == 1 and (kinds == {"full"} or len(windows) == 1):
        # UniformTypeKVCacheSpecs: one group, a block is every layer's page together
        page_sum = sum(s.page_bytes for _, s in specs)
        num_blocks = int(available_bytes // page_sum) if available_bytes > 0 else 0
        max_pages = max(-(-usage(s) // s.page_bytes) for _, s in specs)
        (block_size,) = block_sizes
        group = KvGroup(specs[0][1], tuple(i for i, _ in specs))
        return KvPool(
            (group,),
            page_sum,
            num_blocks,
            num_blocks * block_size,
            num_blocks / max_pages,
            max_pages,
            sum(usage(s) for _, s in specs),
            uniform_type=True,
            notes=tuple(notes),
        )
    # unify page sizes (unify_kv_cache_spec_page_size)
    page = max(s.page_bytes for _, s in specs)
    unified = []
    for i, s in specs:
        if s.page_bytes != page:
            if page % s.page_bytes:
                raise EngineError("KV pages of different layers cannot be unified (vLLM raises too)")
            ratio = page // s.page_bytes
            s = KvSpec(s.kind, s.block_size * ratio, page, s.window)
        unified.append((i, s))
    by_spec: dict[KvSpec, list[int]] = {}
    for i, s in unified:
        by_spec.setdefault(s, []).append(i)
    counts = [len(v) for v in by_spec.values()]
    group_size = min(counts)
    if max(counts) < min(counts) * 1.5:
        group_size = max(counts)
    groups: list[KvGroup] = []
    for s, layers in by_spec.items():
        n_groups = -(-len(layers) // group_size)
        pad = group_size - len(layers) % group_size
        if pad != group_size:
            notes.append(f"{pad} padding layer(s) added to the {s.kind} groups, as vLLM does.")
        for g in range(n_groups):
            members = tuple(layers[g::n_groups])
            groups.append(KvGroup(s, members, group_size - len(members)))
    num_blocks = int(available_bytes // page // group_size) if available_bytes > 0 else 0
    min_block = min(g.spec.block_size for g in groups)
    tokens = num_blocks // len(groups) * min_block
    per_request_bytes = group_size * sum(usage(g.spec) for g in groups)
    per_request = -(-per_request_bytes // (page * group_size))
    needed = group_size * page * sum(-(-usage(g.spec) // page) for g in groups)
    return KvPool(
        tuple(groups),
        page * group_size,
        num_blocks,
        tokens,
        num_blocks / per_request,
        per_request,
        needed,
        notes=tuple(notes),
    )


# ---------------------------------------------------------------------------------------------
# The ledger
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class VllmStartup:
    """vLLM's start-up ledger for one GPU (per GPU when ``tp`` > 1), in bytes unless named."""

    model: str
    gpu: str
    tp: int
    pp: int
    max_model_len: int
    gpu_memory_utilization: float
    max_num_batched_tokens: int
    max_num_seqs: int
    block_size: int
    weights_label: str
    kv_cache_dtype: str
    total_bytes: float  # as the device reports it
    requested_bytes: float  # gpu_memory_utilization × total
    weights_bytes: float
    activation_bytes: float
    non_torch_bytes: float
    kv_bytes: float  # "Available KV cache memory"
    kv_tokens: int  # "GPU KV cache size"
    max_concurrency: float  # for max_model_len
    cuda_graph_bytes: float
    headroom_bytes: float  # total − requested − CUDA graphs
    verdict: str  # "fits", "refused", "oom"
    message: str
    num_blocks: int = 0
    kv_groups: int = 0
    needed_per_request_bytes: float = 0.0
    weights_parts: dict[str, float] = field(default_factory=dict, compare=False)
    activation_parts: dict[str, float] = field(default_factory=dict, compare=False)
    notes: tuple[str, ...] = ()
    total_source: str = ""
    version: str = "0.19"  # the modelled ledger ("0.19" or "0.21+"), see VLLM_LEDGERS
    fabric: str = "pcie"  # "nvlink-nvls", "nvlink" or "pcie" (fabric_of)
    non_torch_low: float = 0.0
    non_torch_high: float = 0.0
    non_torch_cause: str = ""
    total_low: float = 0.0  # the device total's range when it comes from a rule, not a reading
    total_high: float = 0.0

    @property
    def fits(self) -> bool:
        return self.verdict == "fits"

    @property
    def non_kv_bytes(self) -> float:
        return self.weights_bytes + self.activation_bytes + self.non_torch_bytes

    def ledger(self) -> Ledger:
        """This start-up as the engines' shared ``Ledger``: each term with its cause and source."""
        return Ledger(
            engine="vllm",
            version=VLLM_VERSION if self.version == "0.19" else f"{self.version} ledger",
            device=self.gpu,
            total_bytes=self.total_bytes,
            terms=tuple(
                Term(
                    key=_PART_KEYS[key],
                    label=label,
                    bytes=max(float(getattr(self, key)), 0.0),
                    cause=(
                        self.non_torch_cause
                        if key == "non_torch_bytes" and self.non_torch_cause
                        else _TERM_CAUSES[key]
                    ),
                    source=_TERM_SOURCES[key],
                    kind="measured" if key in _MEASURED_TERMS else "derived",
                    low=_MEASURED_TERMS[key](self)[0] if key in _MEASURED_TERMS else None,
                    high=_MEASURED_TERMS[key](self)[1] if key in _MEASURED_TERMS else None,
                    glossary=term,
                )
                for key, (label, term) in LEDGER_TERMS.items()
            ),
            verdict=self.verdict,
            message=self.message,
        )


def format_gib(value: float) -> str:
    """A size as vLLM prints it: GiB rounded to two decimals (``utils/mem_utils.py: format_gib``)."""
    return f"{round(value / GiB, 2)}"


def _as_spec(spec: ModelSpec | Mapping[str, Any], config: Mapping[str, Any] | None):
    """The spec and the config vLLM reads beside it: a spec read from a config carries it
    (``ModelSpec.source_config``), so both ways of calling size the same checkpoint."""
    if isinstance(spec, ModelSpec):
        return spec, config if config is not None else spec.source_config
    if isinstance(spec, Mapping):
        return ModelSpec.from_hf_config(dict(spec)), spec
    raise EngineError("spec must be a ModelSpec or a config.json object")


# A server started with --enable-lora holds more than the ledger sizes, from two causes in vLLM's
# code: every LoRA-wrapped linear layer preallocates its adapters' stacked A and B matrices at
# load time (lora/layers/base_linear.py: create_lora_weights, max_loras x max_lora_rank slots in
# the LoRA dtype), so "Model loading took" grows; and the profile run runs with dummy LoRAs active
# (v1/worker/lora_model_runner_mixin.py: maybe_profile_with_lora), so its peak grows. On the four
# vLLM 0.22 start-ups of Qwen3-8B at TP 2 on 2x T4 (tests/data/vllm_startups.jsonl) the three with
# LoRA print 7.70-7.71 GiB of weights against 7.64 without, and 3.92-4.37 GiB of KV memory where
# the ledger, without LoRA, is +5.2 to +6.6 % on tokens (+0.4 % on the one without). The profile
# run's LoRA terms are not followed here, so such a start-up is refused rather than sized.
LORA_NOT_MODELLED = (
    "vLLM's LoRA buffers (each LoRA layer's stacked A/B matrices, lora/layers/base_linear.py) and"
    " the profile run with dummy LoRAs (v1/worker/lora_model_runner_mixin.py) are not modelled;"
    " the ledger sizes a server without --enable-lora"
)


def vllm_startup(
    spec: ModelSpec | Mapping[str, Any],
    gpu: str | Accelerator,
    *,
    tp: int = 1,
    pp: int = 1,
    max_model_len: int | None,
    gpu_memory_utilization: float = 0.9,
    dtype: str | None = None,
    quantization: str | None = None,
    kv_cache_dtype: str = "auto",
    max_num_batched_tokens: int | None = None,
    max_num_seqs: int | None = None,
    enforce_eager: bool = False,
    config: Mapping[str, Any] | None = None,
    total_bytes: float | None = None,
    offline: bool = False,
    version: str = "0.19",
    fabric: str | None = None,
    enable_lora: bool = False,
    limit_mm_per_prompt: Mapping[str, int] | None = None,
    language_model_only: bool = False,
    skip_mm_profiling: bool = False,
    enable_chunked_prefill: bool = True,
) -> VllmStartup:
    """Predict what vLLM prints when it starts this model on ``gpu`` (per GPU).

    ``version``: "0.19" (0.19-0.20: CUDA graphs captured on top of the KV budget) or "0.21+"
    (or any version string; ``vllm_family`` maps it): from 0.21 vLLM estimates the graphs'
    pool first and takes it out of the KV budget. Another version is refused with the reason,
    and so is a version from 0.27 whose default model runner for this model is V2
    (``vllm_model_runner``, ``V2_RUNNER_NOT_MODELLED``).
    ``fabric`` ("nvlink" or "pcie") says how the node's GPUs talk where the catalog row comes in
    both (an A100 80GB on PCIe); by default the row's interconnect decides (``fabric_of``).
    ``enable_lora=True`` is refused with the reason (``LORA_NOT_MODELLED``).
    A multimodal checkpoint is taken as vLLM serves it by default: every modality allowed (999
    items a prompt), so the vision tower is loaded and the profile run encodes a largest dummy
    image first (``vision_encoder_profile``). ``limit_mm_per_prompt`` ({"image": 0, "video": 0})
    or ``language_model_only`` drop both, as vLLM does; ``skip_mm_profiling`` drops the encoder
    pass but keeps the tower's weights.

    ``spec`` is a ``ModelSpec`` or the model's ``config.json`` (needed for a checkpoint's
    ``quantization_config`` and for hybrid models' state layers; or pass it as ``config``).
    ``total_bytes`` overrides the device's reported memory (a log's ``total_memory``); by default
    it is the sourced reading for the catalog row (``reported_memory_bytes``), and a row without
    one is refused. ``offline`` uses the ``LLM`` class's batch defaults instead of the server's.
    ``enable_chunked_prefill=False`` (``--no-enable-chunked-prefill``) is vLLM's rule for a step
    that must hold a whole prompt (``chunked_prefill_batched_tokens``): the default batch grows
    to max_model_len, and a smaller batch the user set is refused as vLLM refuses it; with a
    hybrid model's state layers it is refused (``CHUNKED_OFF_HYBRID_NOT_MODELLED``).
    Refusals that vLLM itself would raise come back as ``verdict="refused"`` with its reason:
    a context above the model's limit, heads that do not split over TP, weights or
    activations that leave nothing for the cache, too little KV memory for one request.
    """
    spec, config = _as_spec(spec, config)
    accel = resolve_gpu(gpu)
    family = vllm_family(version)
    if enable_lora:
        raise EngineError(f"enable_lora: {LORA_NOT_MODELLED}")
    if not 0 < gpu_memory_utilization <= 1:
        raise EngineError(f"gpu_memory_utilization must be in (0, 1], got {gpu_memory_utilization!r}")
    if tp < 1 or pp < 1:
        raise EngineError("tp and pp must be at least 1")
    if pp > spec.num_layers:
        raise EngineError(f"pp {pp}: more pipeline stages than the model's {spec.num_layers} layers")
    if kv_cache_dtype not in ("auto", "fp8", "fp8_e4m3", "fp8_e5m2", "bfloat16", "float16"):
        raise EngineError(f"kv_cache_dtype {kv_cache_dtype!r} is not modelled")
    layout = weight_layout(config, dtype=dtype, quantization=quantization)
    runs_v2 = vllm_model_runner(version, config, spec, layout.quantized != "none") == "V2"
    if family == "0.21+" and runs_v2 and (_version_tuple(version) or (0, 0)) >= V2_RUNNER_FROM:
        archs = ", ".join((config or {}).get("architectures") or ()) or "this model"
        raise EngineError(
            f"vLLM {version} runs {archs} on its V2 model runner by default (config/vllm.py"
            f" use_v2_model_runner), and {V2_RUNNER_NOT_MODELLED}"
        )
    if is_fp8_checkpoint(layout) and fp8_runs_on_marlin(accel):
        layout = marlin_fp8_layout(layout, config)
    total = float(total_bytes) if total_bytes else reported_memory_bytes(accel)
    total_source = "given" if total_bytes else reported_memory_source(accel)
    rule = None if total_bytes else device_total(accel)
    total_low, total_high = (rule.low, rule.high) if rule else (total or 0.0, total or 0.0)
    if not total:
        raise EngineError(
            f"{accel.name}: no sourced reading of the memory this device reports. Enter the total"
            " your device reports (vLLM's total_memory= line, or torch.cuda.mem_get_info()[1]) in"
            " 'Memory the GPU reports'."
        )
    derived_max = spec.max_positions or 0
    model_len = int(max_model_len) if max_model_len else derived_max
    if model_len <= 0:
        raise EngineError("max_model_len: the config gives no max_position_embeddings; set one")
    user_batched = max_num_batched_tokens is not None
    # the >= 160 GiB tier changes only the batched tokens (max_num_seqs is 1,024 either way)
    tier_version = "0.19" if user_batched else version
    defaults = scheduler_defaults(total, accel.name, offline=offline, version=tier_version)
    seqs = int(max_num_seqs) if max_num_seqs is not None else defaults[1]
    batched = chunked_prefill_batched_tokens(
        int(max_num_batched_tokens) if user_batched else None,
        defaults[0],
        max_num_seqs=seqs,
        max_model_len=model_len,
        enable_chunked_prefill=enable_chunked_prefill,
    )
    if not enable_chunked_prefill and spec.state_bytes() > 0:
        raise EngineError(f"enable_chunked_prefill=False: {CHUNKED_OFF_HYBRID_NOT_MODELLED}")
    kv_bytes_per_value = 1 if kv_cache_dtype.startswith("fp8") else layout.dtype_bytes
    requested = math.ceil(total * gpu_memory_utilization)  # v1/worker/utils.py: request_memory
    tower = vision_tower_loaded(config or {}, limit_mm_per_prompt, language_model_only)
    weights_parts = vllm_weight_bytes(spec, layout, tp, config if tower else _without_vision(config))
    rounding = vllm_allocator_rounding_bytes(spec, layout, tp, config if tower else _without_vision(config))
    if rounding is not None:  # the allocator's blocks, as "Model loading took" counts them
        weights_parts["allocator_rounding"] = rounding
    topk_buffer = sparse_topk_buffer_bytes(spec, config or {}, batched)
    if topk_buffer:
        weights_parts["sparse_topk_buffer"] = topk_buffer
    weights = sum(weights_parts.values())
    act = vllm_activation_bytes(
        spec, layout, tp=tp, max_num_batched_tokens=batched, max_num_seqs=seqs, num_sms=accel.sm_count
    )
    encoder = vision_encoder_profile(
        config or {},
        tp=tp,
        dtype_bytes=layout.dtype_bytes,
        max_num_batched_tokens=batched,
        max_num_seqs=seqs,
        max_model_len=model_len,
        limit_mm_per_prompt=limit_mm_per_prompt,
        language_model_only=language_model_only,
        skip_mm_profiling=skip_mm_profiling,
    )
    if encoder is not None:
        # gpu_model_runner.py:5721-5794: the encoder's own peak, or its inputs and outputs held
        # through the decoder's and the sampler's dummy runs, whichever is larger
        act["encoder_peak"], act["encoder_held"] = encoder["encoder_peak"], encoder["held"]
        act["decoder_total"] = act["total"]
        act["total"] = max(encoder["encoder_peak"], encoder["held"] + act["total"])
    elif tower and not skip_mm_profiling:
        # another tower (Llama 4, Gemma 4 with audio): not yet followed from its source; its outputs
        # are taken as one text-width row per token of max_num_batched_tokens, kept to the end
        act["encoder_outputs"] = batched * spec.hidden_size * layout.dtype_bytes
        act["total"] += act["encoder_outputs"]
    activation = act["total"]
    node_fabric = fabric_of(accel, fabric)
    # gpu_worker.py:366-381 (0.19.0): CUDA-graph profiling inside the window unless enforce_eager;
    # the 0.21+ line keeps the 0.19 figure (0.21-0.26's worker measures as 0.19's, utils/mem_utils.py)
    non_torch, non_torch_low, non_torch_high, non_torch_cause = non_torch_term(
        accel, tp, pp, node_fabric, graph_profiling=not (enforce_eager and family == "0.19")
    )
    stages: list[dict[str, Any]] = []
    if pp > 1:
        stages = pipeline_stages(spec, weights_parts, act, pp, batched, layout.dtype_bytes)
        stage_rounding = pp_stage_rounding_bytes(
            spec, layout, tp, pp, config if tower else _without_vision(config)
        )
        for stage, extra in zip(stages, stage_rounding or (), strict=False):
            stage["weights"] += extra  # each stage's own allocator blocks
        for stage in stages:  # every stage's DeepseekV2Model builds the buffer
            stage["weights"] += topk_buffer
        if encoder is not None:  # the first stage runs the encoder pass as well (profile_run)
            first = stages[0]
            first["activation"] = max(encoder["encoder_peak"], encoder["held"] + first["activation"])
        weights, activation = stages[0]["weights"], stages[0]["activation"]
    piecewise, full = cuda_graph_capture_sizes(seqs)
    n_graphs = 0 if enforce_eager else len(piecewise) + len(full)
    graphs = n_graphs * CUDA_GRAPH_BYTES_PER_GRAPH
    available = requested - (weights + activation + non_torch)
    if family == "0.21+":
        # gpu_worker.py: the graphs' estimated pool comes out of the KV budget before it is cut
        available -= graphs
    name = spec.name or spec.family
    base = {
        "model": name,
        "gpu": accel.name,
        "tp": tp,
        "pp": pp,
        "max_model_len": model_len,
        "gpu_memory_utilization": gpu_memory_utilization,
        "max_num_batched_tokens": batched,
        "max_num_seqs": seqs,
        "weights_label": layout.label,
        "kv_cache_dtype": "fp8" if kv_cache_dtype.startswith("fp8") else layout.dtype,
        "total_bytes": total,
        "requested_bytes": float(requested),
        "weights_bytes": weights,
        "activation_bytes": activation,
        "non_torch_bytes": non_torch,
        "cuda_graph_bytes": graphs,
        "headroom_bytes": total - requested - (graphs if family == "0.19" else 0.0),
        "weights_parts": weights_parts,
        "activation_parts": act,
        "total_source": total_source,
        "fabric": node_fabric,
        "non_torch_low": float(non_torch_low),
        "non_torch_high": float(non_torch_high),
        "non_torch_cause": non_torch_cause,
        "version": family,
        "total_low": float(total_low),
        "total_high": float(total_high),
    }

    def refused(message: str, **extra: Any) -> VllmStartup:
        fields_ = {
            "block_size": DEFAULT_BLOCK_SIZE,
            "kv_bytes": max(available, 0.0),
            "kv_tokens": 0,
            "max_concurrency": 0.0,
            "verdict": "refused",
            "message": message,
        }
        return VllmStartup(**(base | fields_ | extra))

    if derived_max and model_len > derived_max:
        return refused(
            f"User-specified max_model_len ({model_len}) is greater than the derived max_model_len"
            f" (max_position_embeddings={derived_max} in the model's config.json): vLLM refuses to start."
        )
    if not enable_chunked_prefill and batched < model_len:
        # config/scheduler.py verify_max_model_len (0.19.0:259-270, 0.29.0:284-295)
        return refused(
            f"max_num_batched_tokens ({batched}) is smaller than max_model_len ({model_len}) with"
            " chunked prefill off (enable_chunked_prefill=False): vLLM refuses to start, as a"
            " prompt longer than one step could never run. Raise max_num_batched_tokens to at"
            " least max_model_len, lower max_model_len, or turn chunked prefill on."
        )
    if spec.num_heads % tp:
        return refused(
            f"Total number of attention heads ({spec.num_heads}) must be divisible by tensor"
            f" parallel size ({tp})."
        )
    kv_heads = spec.num_kv_heads
    if not spec.uses_mla and (kv_heads % tp if kv_heads >= tp else tp % kv_heads):
        return refused(f"{kv_heads} KV heads cannot be split or replicated evenly over {tp} GPUs.")
    if weights > requested:
        # vLLM loads the weights without looking at the request; only the device's own memory
        # stops the load. Past that, the profile run has nothing left (v1/worker/gpu_worker.py:
        # available KV = requested − non-KV memory; v1/core/kv_cache_utils.py:
        # _check_enough_kv_cache_memory raises "No available memory for the cache blocks").
        if weights >= total:
            how = "loading fails with CUDA out of memory"
        else:
            how = (
                f"they load (the device has {format_gib(total)} GiB), then the profile run fails with"
                " CUDA out of memory, or vLLM stops with 'No available memory for the cache blocks'"
            )
        return refused(
            f"The weights take {format_gib(weights)} GiB per GPU, more than the"
            f" {format_gib(requested)} GiB requested ({gpu_memory_utilization} × {format_gib(total)} GiB):"
            f" {how}. Use more GPUs (tensor parallelism) or a smaller format."
        )
    specs, block_size, spec_notes = kv_layer_specs(
        spec, config, tp=tp, kv_bytes=kv_bytes_per_value, dtype_bytes=layout.dtype_bytes
    )
    hybrid_manager = not any(s.kind == "chunked" for _, s in specs)
    pool = kv_pool(
        specs,
        available,
        max_model_len=model_len,
        max_num_batched_tokens=batched,
        hybrid_manager=hybrid_manager,
    )
    notes = spec_notes + pool.notes
    if accel.vendor != "NVIDIA":
        notes = (
            f"{accel.name}: the non-torch and CUDA-graph terms are measured on NVIDIA GPUs; HIP's own"
            " context and graphs are not measured, so their ranges are NVIDIA's.",
            *notes,
        )
    if rule is not None and not rule.exact:
        notes = (f"Device total: {rule.text} Enter the total your device reports to replace it.", *notes)
    if config is None:
        notes = (
            "This spec came with no config.json: the weights are taken in the model dtype, as no"
            " quantization_config or vision tower could be read. Pass the config to size a"
            " quantized or multimodal checkpoint.",
            *notes,
        )
    if stages:
        if len({s for _, s in specs}) > 1:
            raise EngineError("pp > 1 with several KV-cache groups (a hybrid model) is not modelled yet")
        # get_kv_cache_configs: every worker sizes its own layers' blocks, then all take the fewest
        pools = []
        for stage in stages:
            mine = [(i, s) for i, s in specs if stage["first"] <= i < stage["end"]]
            left = requested - (stage["weights"] + stage["activation"] + non_torch)
            stage["kv"] = left
            pools.append(
                kv_pool(
                    mine, left, max_model_len=model_len, max_num_batched_tokens=batched, hybrid_manager=True
                )
            )
        fewest = min(p.num_blocks for p in pools)
        per_request = pools[0].blocks_per_request
        pool = KvPool(
            pools[0].groups,
            pools[0].block_bytes,
            fewest,
            fewest * block_size,
            fewest / per_request,
            per_request,
            sum(p.needed_bytes for p in pools),
            notes=pools[0].notes,
        )
        short = [k for k, p in enumerate(pools) if p.needed_bytes > stages[k]["kv"]]
        if short or any(st["kv"] <= 0 for st in stages):
            # the stage that cannot hold one request decides, as each worker checks its own
            k = short[0] if short else min(range(pp), key=lambda n: stages[n]["kv"])
            available, pool = stages[k]["kv"], pools[k]
        summary = [
            f"Pipeline stage {k}: layers {st['first']}–{st['end'] - 1}, weights"
            f" {format_gib(st['weights'])} GiB, activation {format_gib(st['activation'])} GiB,"
            f" KV {format_gib(st['kv'])} GiB ({pools[k].num_blocks:,} blocks)."
            for k, st in enumerate(stages)
        ]
        notes = (
            *notes,
            *summary,
            "Every stage keeps as many blocks as the stage with the fewest; the log prints stage 0's terms.",
        )
    extra = {
        "block_size": block_size,
        "kv_bytes": available,
        "kv_tokens": pool.tokens,
        "max_concurrency": pool.max_concurrency,
        "num_blocks": pool.num_blocks,
        "kv_groups": len(pool.groups),
        "needed_per_request_bytes": float(pool.needed_bytes),
        "notes": notes,
    }
    if available <= 0:
        return refused(
            "No available memory for the cache blocks. Try increasing `gpu_memory_utilization`"
            " when initializing the engine.",
            **(extra | {"kv_bytes": available}),
        )
    if pool.needed_bytes > available:
        longest = _longest_model_len(specs, available, model_len, batched, hybrid_manager)
        hint = (
            f" Based on the available memory, the estimated maximum model length is {longest}."
            if longest
            else ""
        )
        return refused(
            f"To serve at least one request with the model's max seq len ({model_len}),"
            f" ({format_gib(pool.needed_bytes)} GiB KV cache is needed, which is larger than the"
            f" available KV cache memory ({format_gib(available)} GiB).{hint}",
            **extra,
        )
    if graphs and family == "0.19" and total - requested - graphs < 0:
        return VllmStartup(
            **(
                base
                | extra
                | {
                    "verdict": "oom",
                    "message": (
                        f"The KV pool is sized, then CUDA-graph capture needs about {format_gib(graphs)} GiB"
                        f" beyond the {format_gib(requested)} GiB requested, and only"
                        f" {format_gib(total - requested)} GiB are left: capture runs out of memory."
                        " Lower gpu_memory_utilization or pass --enforce-eager."
                    ),
                }
            )
        )
    return VllmStartup(
        **(
            base
            | extra
            | {
                "verdict": "fits",
                "message": (
                    f"{pool.tokens:,} tokens of KV cache: {pool.max_concurrency:.2f} requests of"
                    f" {model_len:,} tokens at once."
                ),
            }
        )
    )


def _longest_model_len(
    specs: Sequence[tuple[int, KvSpec]], available: float, model_len: int, batched: int, hybrid: bool
) -> int:
    """``estimate_max_model_len``: the longest context whose one request fits (binary search)."""

    def fits(length: int) -> bool:
        pool = kv_pool(
            specs, available, max_model_len=length, max_num_batched_tokens=batched, hybrid_manager=hybrid
        )
        return pool.needed_bytes <= available

    if not fits(1):
        return 0
    left, right, best = 1, model_len, 1
    while left <= right:
        mid = (left + right) // 2
        if fits(mid):
            best, left = mid, mid + 1
        else:
            right = mid - 1
    return best


def log_lines(startup: VllmStartup) -> list[str]:
    """The start-up lines vLLM 0.19 prints for this ledger, worded as it words them."""
    s = startup
    lines = [
        f"worker init memory snapshot: total_memory={format_gib(s.total_bytes)}GiB",
        f"worker requested memory: {format_gib(s.requested_bytes)}GiB",
        f"Model loading took {format_gib(s.weights_bytes)} GiB memory",
        (
            f"Memory profiling takes … Total non KV cache memory: {format_gib(s.non_kv_bytes)}GiB;"
            f" torch peak memory increase: {format_gib(s.activation_bytes)}GiB; non-torch forward"
            f" increase memory: {format_gib(s.non_torch_bytes)}GiB; weights memory:"
            f" {format_gib(s.weights_bytes)}GiB."
        ),
        f"Available KV cache memory: {format_gib(s.kv_bytes)} GiB",
    ]
    if s.verdict != "refused" or s.kv_tokens:
        lines += [
            f"GPU KV cache size: {s.kv_tokens:,} tokens",
            f"Maximum concurrency for {s.max_model_len:,} tokens per request: {s.max_concurrency:.2f}x",
        ]
    if s.cuda_graph_bytes:
        lines.append(f"Graph capturing finished, took {format_gib(s.cuda_graph_bytes)} GiB")
    return lines


# ---------------------------------------------------------------------------------------------
# Reading a real log
# ---------------------------------------------------------------------------------------------

MAX_LOG_CHARS = 2_000_000
_NUM = r"([0-9][0-9,]*(?:\.[0-9]+)?)"
# vLLM's "GB" is GiB: V0's ``vllm/worker/model_runner.py`` logs "Loading model weights took
# %.4f GB" and early V1's ``vllm/v1/worker/gpu_model_runner.py`` "Model loading took %.4f GB",
# both of ``consumed_memory / float(2**30)``; later versions print "GiB" for the same number.
_UNIT = {"gib": GiB, "gb": GiB, "mib": MiB, "mb": MiB}
LOG_PATTERNS: tuple[tuple[str, str, str], ...] = (
    # key, regex, unit ("GiB" etc., "count", "ratio")
    ("total_bytes", r"total_memory=" + _NUM + r"\s*GiB", "gib"),
    ("total_bytes", r"Free memory on device \([0-9.]+/" + _NUM + r" GiB\)", "gib"),
    ("requested_bytes", r"worker requested memory: " + _NUM + r"\s*GiB", "gib"),
    ("requested_bytes", r"Requested memory: [0-9.]+ \(util\), " + _NUM + r" GiB", "gib"),
    ("weights_bytes", r"weights memory: " + _NUM + r"\s*GiB", "gib"),
    ("weights_bytes", r"Model loading took " + _NUM + r"\s*(GiB|GB)", "unit"),
    ("weights_bytes", r"Loading model weights took " + _NUM + r"\s*(GiB|GB)", "unit"),
    ("weights_bytes", r"model weights take " + _NUM + r"\s*GiB", "gib"),
    ("activation_bytes", r"torch peak memory increase: " + _NUM + r"\s*GiB", "gib"),
    ("activation_bytes", r"PyTorch activation peak memory takes " + _NUM + r"\s*GiB", "gib"),
    (
        "activation_bytes",
        r"Actual usage is [0-9.]+ GiB for weight, " + _NUM + r" GiB for peak activation",
        "gib",
    ),
    ("non_torch_bytes", r"non-torch forward increase memory: " + _NUM + r"\s*GiB", "gib"),
    ("non_torch_bytes", r"non_torch_memory takes " + _NUM + r"\s*GiB", "gib"),
    ("non_torch_bytes", r"GiB for peak activation, " + _NUM + r" GiB for non-torch memory", "gib"),
    ("kv_bytes", r"Available KV cache memory: " + _NUM + r"\s*GiB", "gib"),
    ("kv_bytes", r"the rest of the memory reserved for KV Cache is " + _NUM + r"\s*GiB", "gib"),
    ("kv_tokens", r"GPU KV cache size: " + _NUM + r" tokens", "count"),
    ("max_concurrency", r"Maximum concurrency for [0-9,]+ tokens per request: " + _NUM + r"x", "ratio"),
    ("max_model_len", r"Maximum concurrency for " + _NUM + r" tokens per request", "count"),
    ("max_model_len", r"Using max model len " + _NUM, "count"),
    ("cuda_graph_bytes", r"CUDA graph pool memory: (-?" + _NUM[1:] + r" GiB \(actual\)", "gib"),
    ("cuda_graph_bytes", r"Graph capturing finished in [0-9.]+ secs?, took (-?" + _NUM[1:] + r" GiB", "gib"),
    ("tp", r"tensor_parallel_size=" + _NUM, "count"),
    ("gpu_memory_utilization", r"Requested memory: " + _NUM + r" \(util\)", "ratio"),
    ("gpu_memory_utilization", r"'gpu_memory_utilization': " + _NUM, "ratio"),
    ("num_gpu_blocks", r"num_gpu_blocks is: " + _NUM, "count"),
    ("num_gpu_blocks", r"# GPU blocks: " + _NUM, "count"),
    ("version", r"LLM engine \(v([0-9][0-9A-Za-z.+-]*)\)", "text"),
    ("version", r"vLLM API server version ([0-9][0-9A-Za-z.+-]*)", "text"),
    # -- fallbacks: read only where no line above gave the term --
    ("version", r"█\s+version ([0-9]+\.[0-9]+\.[0-9][0-9A-Za-z.+-]*)", "text"),  # the start-up banner
    # PyTorch's CUDA out-of-memory message names the device's total (torch's total_memory), the
    # reading simulators/data/reported_memory.csv takes from such messages
    ("total_bytes", r"GPU [0-9]+ has a total capacity of " + _NUM + r" GiB", "gib"),
    # V0 (0.6-0.9): "the current vLLM instance can use total_gpu_memory (23.58GiB) x
    # gpu_memory_utilization (0.99) = 23.35GiB", and 0.6.x's "Memory profiling results:
    # total_gpu_memory=… non_torch_memory=… kv_cache_size=… gpu_memory_utilization=…"
    ("total_bytes", r"total_gpu_memory \(" + _NUM + r"\s*GiB\)", "gib"),
    ("total_bytes", r"total_gpu_memory=" + _NUM + r"\s*GiB", "gib"),
    ("requested_bytes", r"gpu_memory_utilization \([0-9.]+\) = " + _NUM + r"\s*GiB", "gib"),
    ("gpu_memory_utilization", r"gpu_memory_utilization \(" + _NUM + r"\)", "ratio"),
    ("gpu_memory_utilization", r"gpu_memory_utilization=" + _NUM, "ratio"),
    ("non_torch_bytes", r"non_torch_memory=" + _NUM + r"\s*GiB", "gib"),
    ("kv_bytes", r"kv_cache_size=" + _NUM + r"\s*GiB", "gib"),
    # 0.6.5-0.6.6's tabular "Memory profiling results:" block, and its "# CUDA blocks"
    ("total_bytes", r"total_gpu_memory\s+" + _NUM + r"\s*GiB", "gib"),
    ("gpu_memory_utilization", r"gpu_memory_utilization\s+" + _NUM + r"\s*$", "ratio"),
    ("requested_bytes", r"the current vLLM instance can use\s+" + _NUM + r"\s*GiB", "gib"),
    ("weights_bytes", r"model weights take\s+" + _NUM + r"\s*GiB", "gib"),
    ("non_torch_bytes", r"non_torch_memory\s+" + _NUM + r"\s*GiB", "gib"),
    ("activation_bytes", r"PyTorch activation peak memory\s+(?:takes\s+)?" + _NUM + r"\s*GiB", "gib"),
    ("kv_bytes", r"available_kv_cache_memory\s+" + _NUM + r"\s*GiB", "gib"),
    ("num_gpu_blocks", r"# CUDA blocks: " + _NUM, "count"),
    # 0.21+: the graphs' estimate, and the closing summary line
    ("cuda_graph_estimate_bytes", r"Estimated CUDA graph memory: " + _NUM + r"\s*GiB", "gib"),
    (
        "cuda_graph_estimate_bytes",
        r"CUDA graph pool memory: [0-9.]+ GiB \(actual\), " + _NUM + r" GiB \(estimated\)",
        "gib",
    ),
    ("requested_bytes", r"Desired GPU memory utilization is \([0-9.]+, " + _NUM + r" GiB\)", "gib"),
    ("gpu_memory_utilization", r"Desired GPU memory utilization is \(" + _NUM + r",", "ratio"),
    (
        "activation_bytes",
        r"GiB for consumed memory \(weights \+ non-torch\), " + _NUM + r" GiB for peak",
        "gib",
    ),
    ("cuda_graph_bytes", r"GiB for peak activation, and " + _NUM + r" GiB for CUDAGraph memory", "gib"),
    # the settings a page can take from the log ("use this log's settings")
    ("tp", r"'tensor_parallel_size': " + _NUM, "count"),
    ("pp", r"pipeline_parallel_size=" + _NUM, "count"),
    ("pp", r"'pipeline_parallel_size': " + _NUM, "count"),
    ("max_model_len", r"max_seq_len=" + _NUM, "count"),
    ("max_model_len", r"'max_model_len': " + _NUM, "count"),
    ("max_num_seqs", r"'max_num_seqs': " + _NUM, "count"),
    ("max_num_seqs", r"max_num_seqs=" + _NUM, "count"),
    ("max_num_batched_tokens", r"max_num_batched_tokens=" + _NUM, "count"),
    ("max_num_batched_tokens", r"'max_num_batched_tokens': " + _NUM, "count"),
    ("enforce_eager", r"enforce_eager=(True|False)", "bool"),
    ("enforce_eager", r"'enforce_eager': (True|False)", "bool"),
    # chunked prefill: the non-default args ({'enable_chunked_prefill': False} from
    # --no-enable-chunked-prefill or LLM(enable_chunked_prefill=False)), the engine's config line
    # (0.19.0 config/vllm.py:1684, 0.29.0 :2424: "enable_chunked_prefill=False, "), and the line
    # config/scheduler.py prints only when it is on (0.19.0:237-242). Its absence is not read: the
    # line comes once from the front-end process and a pasted excerpt may leave it out.
    ("enable_chunked_prefill", r"'enable_chunked_prefill': (True|False)", "bool"),
    ("enable_chunked_prefill", r"[ ,(]enable_chunked_prefill=(True|False)", "bool"),
    ("enable_chunked_prefill", r"Chunked prefill is (enabled) with max_num_batched_tokens=", "bool"),
    ("enable_lora", r"'enable_lora': (True|False)", "bool"),
    ("enable_lora", r"[ ,(]enable_lora=(True|False)", "bool"),
    ("language_model_only", r"'language_model_only': (True|False)", "bool"),
    ("skip_mm_profiling", r"'skip_mm_profiling': (True|False)", "bool"),
    ("limit_mm_per_prompt", r"'limit_mm_per_prompt': \{([^{}]{0,200})\}", "text"),
    ("dtype", r"[ ,(]dtype=torch\.([a-z0-9]+)", "text"),
    ("quantization", r"[ ,(]quantization=([A-Za-z0-9_-]+)", "text"),
    ("kv_cache_dtype", r"kv_cache_dtype=([A-Za-z0-9_]+)", "text"),
    ("model", r"[ (]model='([^']{1,300})'", "text"),
)
_COMPILED = tuple((key, re.compile(rx), unit) for key, rx, unit in LOG_PATTERNS)
_FIRST_FALLBACK = next(i for i, (k, rx, _) in enumerate(LOG_PATTERNS) if rx.startswith("█"))
LOG_TERMS = (
    "total_bytes",
    "requested_bytes",
    "weights_bytes",
    "activation_bytes",
    "non_torch_bytes",
    "kv_bytes",
    "kv_tokens",
    "max_concurrency",
    "cuda_graph_bytes",
)


def parse_vllm_log(text: str, *, require_kv: bool = True) -> dict[str, Any]:
    """The start-up terms found in a real vLLM log, keyed and in units as ``VllmStartup``'s fields.

    Reads the lines of vLLM 0.6-0.19 however each version words them (DEBUG lines included),
    from any worker: a term printed by several ranks takes the first rank's value (they match
    unless the GPUs differ). Sizes come back in bytes (GiB = 2^30 as vLLM prints them),
    ``kv_tokens`` and ``max_model_len`` as integers. Raises ``LogError`` when the text has none
    of the lines that size the KV cache: a guess is never returned. ``require_kv=False`` reads a
    start-up that failed before it sized its cache (weights, total, settings, version).
    """
    if not isinstance(text, str):
        raise LogError("the log must be text")
    if len(text) > MAX_LOG_CHARS:
        raise LogError(f"the log is {len(text):,} characters; paste the start-up part (under 2 MB)")
    found: dict[str, Any] = {}
    rank: dict[str, int] = {}  # the pattern a key was read with: an earlier pattern wins
    seen: dict[str, int] = {}
    used: dict[str, int] = {}  # the pattern each key was read with
    for line in text.splitlines():
        if len(line) > 20_000:
            continue
        for index, (key, rx, unit) in enumerate(_COMPILED):
            m = rx.search(line)
            if not m:
                continue
            seen[key] = seen.get(key, 0) + 1
            tier = int(index >= _FIRST_FALLBACK)  # the first line wins, fallback patterns last
            if key in found and rank[key] <= tier:
                continue
            rank[key] = tier
            used[key] = index
            raw = m.group(1).replace(",", "")
            try:
                if unit == "text":
                    found[key] = m.group(1)
                elif unit == "bool":
                    found[key] = m.group(1) in ("True", "enabled")
                elif unit == "count":
                    found[key] = int(float(raw))
                elif unit == "ratio":
                    found[key] = float(raw)
                elif unit == "unit":
                    found[key] = float(raw) * _UNIT[m.group(2).lower()]
                else:
                    found[key] = float(raw) * _UNIT[unit]
            except (ValueError, KeyError):
                continue
    if require_kv and not any(k in found for k in ("kv_bytes", "kv_tokens", "num_gpu_blocks")):
        raise LogError(
            "No KV-cache line found: a vLLM start-up log prints 'Available KV cache memory' and"
            " 'GPU KV cache size'. Paste the lines from the engine's start-up (DEBUG lines help)."
        )
    found["ranks"] = max(seen.get("kv_bytes", 0), seen.get("kv_tokens", 0), 1)
    if (
        "activation_bytes" in found
        and "consumed memory" in _COMPILED[used["activation_bytes"]][1].pattern
        and (_version_tuple(str(found.get("version", ""))) or (0, 0)) >= (0, 27)
        and "cuda_graph_estimate_bytes" in found
        and "CUDA graph memory profiling is disabled" not in text  # then none is applied
    ):
        # from 0.27 the summary's "peak activation" is the transient peak plus the graphs' applied
        # estimate (0.27.1 v1/worker/gpu_worker.py:527-529); the term is the peak alone
        found["activation_bytes"] -= found["cuda_graph_estimate_bytes"]
    # v1/worker/gpu_worker.py logs "Using V2 Model Runner" once when V2 runs; the weights line
    # names its file: [model_runner.py:N] for V2 (v1/worker/gpu/), [gpu_model_runner.py:N] for V1
    # (V0's worker/model_runner.py used the same file name, so only from 0.21)
    loading = re.search(r"\[(gpu_)?model_runner\.py:\d+\] Model loading took", text)
    if (_version_tuple(str(found.get("version", ""))) or (0, 0)) >= (0, 21):
        if "Using V2 Model Runner" in text or (loading and not loading.group(1)):
            found["model_runner"] = "V2"
        elif loading:
            found["model_runner"] = "V1"
    engine_line = _ENGINE_LINE.search(text)
    if engine_line:  # "Initializing a V1 LLM engine (v0.9.2)"; V0 prints "an LLM engine" or "a V0 LLM engine"
        found["engine_generation"] = engine_line.group(1) or "V0"
    return found


_ENGINE_LINE = re.compile(r"Initializing an? (?:(V[01]) )?LLM engine \(v")


# ---------------------------------------------------------------------------------------------
# Versions: which vLLM ledgers are modelled, and a log's settings beside the page's
# ---------------------------------------------------------------------------------------------

# (first version, last version or None, family id, what differs) — each names the file it follows
VLLM_LEDGERS: tuple[tuple[tuple[int, int], tuple[int, int] | None, str, str], ...] = (
    (
        (0, 19),
        (0, 20),
        "0.19",
        "vllm/v1/worker/gpu_worker.py determine_available_memory: KV budget = requested −"
        " (weights + torch peak + non-torch); CUDA graphs captured afterwards, on top of it",
    ),
    (
        (0, 21),
        (0, 29),
        "0.21+",
        "vllm/v1/worker/gpu_worker.py determine_available_memory: profile_cudagraph_memory()"
        " estimates the graphs' pool before the KV cache is sized and subtracts it"
        " (available_kv_cache_memory_bytes = requested_memory − non_kv_cache_memory −"
        " cudagraph_memory_estimate_applied), with the V1 model runner: 0.19.0's own worker"
        " (gpu_worker.py:365-409) with VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS on, its default"
        " since 0.21.0 (0.29.0 gpu_worker.py:636-650, envs.py:2105-2107). The V2 model runner,"
        " vLLM's default for more models from 0.22 on (``vllm_model_runner``), is refused",
    ),
)
LAST_READ_VERSION = "0.29.0"  # the newest vLLM whose worker and runner choice were read here

# vllm/config/vllm.py VllmConfig.use_v2_model_runner, as each release chooses the runner by default
# (VLLM_USE_V2_MODEL_RUNNER unset, Triton present, no feature V2 lacks), read in the wheels of each
# minor release: (first minor, architectures taken by default, rule for the rest).
# 0.21.0: never by default (v1/worker/gpu_worker.py:156 reads only the environment variable);
# 0.22.0 (config/vllm.py:518-532) and 0.23.0 (:544-558): a listed architecture that is neither MoE
# nor quantized; 0.24.0 (:550-561): a listed architecture; 0.25.1 (:557-575), 0.26.0 (:605-622):
# a listed MoE or any model that is not MoE, neither hybrid nor attention-free; 0.27.1 (:637-
# 660), 0.28.0 (:691-712), 0.29.0: the same, a hybrid model only if listed.
# 0.26.0's list; 0.27 adds Kimi K3 and 0.28 DeepSeek V4 (0.29.0 keeps 0.28's)
_V2_LISTED_0_26 = frozenset(
    {
        "DeepseekV2ForCausalLM",
        "GraniteMoeForCausalLM",
        "InklingForCausalLM",
        "InklingForConditionalGeneration",
        "LongcatFlashNgramForCausalLM",
        "Qwen2MoeForCausalLM",
    }
)
_V2_RUNNER_RULES: tuple[tuple[tuple[int, int], frozenset[str], str], ...] = (
    ((0, 21), frozenset(), "never"),
    ((0, 22), frozenset({"Qwen3ForCausalLM"}), "listed dense unquantized"),
    (
        (0, 23),
        frozenset({"LlamaForCausalLM", "MistralForCausalLM", "Qwen3ForCausalLM"}),
        "listed dense unquantized",
    ),
    (
        (0, 24),
        frozenset(
            {
                "Qwen3ForCausalLM",
                "DeepseekV2ForCausalLM",
                "Qwen2MoeForCausalLM",
                "GraniteMoeForCausalLM",
                "LlamaForCausalLM",
                "MistralForCausalLM",
            }
        ),
        "listed",
    ),
    ((0, 25), frozenset({"DeepseekV2ForCausalLM", "Qwen2MoeForCausalLM", "GraniteMoeForCausalLM"}), "dense"),
    ((0, 26), _V2_LISTED_0_26, "dense"),
    ((0, 27), _V2_LISTED_0_26 | {"KimiK3ForConditionalGeneration"}, "dense, listed hybrids"),
    (
        (0, 28),
        _V2_LISTED_0_26 | {"KimiK3ForConditionalGeneration", "DeepseekV4ForCausalLM"},
        "dense, listed hybrids",
    ),
)

# From 0.27 the worker sizes the non-KV memory as the free memory consumed since the worker's
# snapshot (mem_get_info) plus the transient peak (0.27.1 and 0.29.0 utils/mem_utils.py:314-326:
# total_consumed + transient_peak_headroom; 0.26.0 and earlier: weights + torch peak increase +
# non-torch increase, as 0.19), so torch memory the model runner keeps after its profile run enters
# the budget. The V1 runner under it is within 5 % (a 0.26.1 dev build, Qwen3-Coder-30B-A3B:
# -3.7 %), the V2 runner under the old formula too (0.22.0 on 2x T4, Qwen3-8B: +0.4 %); the V2
# runner under the new one is not: vLLM 0.29.0 on an RTX 5090 (Qwen2.5-7B) consumed 15.65 GiB for
# 14.29 GiB of weights, 1.36 GiB beyond them where the ledger's non-torch term is 0.25 GiB, and
# its KV tokens came out +8.8 %. Its buffers (v1/worker/gpu/model_runner.py) are not followed.
V2_RUNNER_FROM = (0, 27)
V2_RUNNER_NOT_MODELLED = (
    "the V2 model runner (vllm/v1/worker/gpu/model_runner.py) under the worker's mem_get_info"
    " ledger of 0.27 on (utils/mem_utils.py:314-326: total_consumed + transient_peak_headroom) is"
    " not modelled: the memory that runner keeps after its profile run counts, and this ledger"
    " follows the V1 runner's; with VLLM_USE_V2_MODEL_RUNNER=0 vLLM keeps the V1 runner"
)


def vllm_model_runner(
    version: str, config: Mapping[str, Any] | None, spec: ModelSpec, quantized: bool
) -> str:
    """ "V2" where vLLM ``version`` runs this model on its V2 model runner by default, else "V1"
    (``_V2_RUNNER_RULES``, from each release's config/vllm.py). A family id ("0.21+") or a
    version without a minor is taken as the V1 runner, the one the ledger follows."""
    parsed = _version_tuple(version)
    if parsed is None or parsed < (0, 21):
        return "V1"
    rule = [r for r in _V2_RUNNER_RULES if r[0] <= parsed]
    if not rule:
        return "V1"
    _, listed, kind = rule[-1]
    archs = set((config or {}).get("architectures") or ())
    is_listed = bool(archs & listed)
    hybrid = spec.state_bytes() > 0
    if kind == "never":
        return "V1"
    if kind == "listed dense unquantized":
        return "V2" if is_listed and not spec.is_moe and not quantized else "V1"
    if kind == "listed":
        return "V2" if is_listed else "V1"
    if hybrid and (kind == "dense" or not is_listed):
        return "V1"
    return "V2" if is_listed or not spec.is_moe else "V1"


VLLM_FAMILIES = tuple(family for _, _, family, _ in VLLM_LEDGERS)


def _version_tuple(version: str) -> tuple[int, int] | None:
    m = re.match(r"v?(\d+)\.(\d+)", str(version).strip())
    return (int(m.group(1)), int(m.group(2))) if m else None


def vllm_family(version: str) -> str:
    """The modelled ledger a vLLM version follows ("0.19" or "0.21+"), or ``EngineError`` with the
    reason: V0 (0.6-0.10) profiles and sizes differently (its own worker.py), and V1 before 0.19
    (0.8-0.18) differs in the sampler warm-up, scheduler defaults and hybrid block sizing that this
    module follows only as 0.19 has them. A version carrying its engine, as ``log_settings`` gives
    it for a log before 0.19 ("0.9.2 (V1 engine)"), is refused naming that engine; one carrying
    its model runner from 0.21 ("0.29.0 (V2 model runner)") is refused where that runner is V2 and
    the version 0.27 or later (``V2_RUNNER_NOT_MODELLED``). After 0.29 (``LAST_READ_VERSION``):
    refused, not read."""
    if version in VLLM_FAMILIES:
        return version
    parsed = _version_tuple(version)
    if parsed is None:
        raise EngineError(f"version {version!r}: not a vLLM version (e.g. 0.19.0)")
    runner = re.search(r"\((V[12]) model runner\)", str(version))
    if runner and runner.group(1) == "V2" and parsed >= V2_RUNNER_FROM:  # the log shows the V2 runner
        raise EngineError(f"vLLM {version}: {V2_RUNNER_NOT_MODELLED}")
    for first, last, family, _ in VLLM_LEDGERS:
        if parsed >= first and (last is None or parsed <= last):
            return family
    if parsed > VLLM_LEDGERS[-1][1]:
        raise EngineError(
            f"vLLM {version}: not read here: the 0.21+ ledger follows vLLM's source up to"
            f" {LAST_READ_VERSION}, and later releases may change the worker or the model runner"
            f" (from 0.25 the V2 model runner is the default for most dense models); modelled:"
            f" 0.19-0.20 and 0.21-{LAST_READ_VERSION}"
        )
    engine = re.search(r"\((V[01]) engine\)", str(version))
    v1_before = (
        "V1 before 0.19 differs in its sampler warm-up, batch defaults and hybrid block sizing,"
        " which this ledger follows only as 0.19 has them"
    )
    v0 = "the V0 engine's ledger (vllm/worker/worker.py) is not modelled"
    if engine and engine.group(1) == "V0":
        reason = v0
    elif engine:  # the log shows the V1 engine (vllm/v1/engine/core.py's "Initializing a V1 LLM engine")
        reason = (
            "the V1 engine before 0.19 (0.8-0.18; this log's is"
            f" {parsed[0]}.{parsed[1]}) is not modelled: it differs in its sampler warm-up, batch"
            " defaults and hybrid block sizing, which this ledger follows only as 0.19 has them"
        )
    elif parsed < (0, 10):
        reason = (
            "the V0 engine's ledger (vllm/worker/worker.py) and V1's before 0.19 are not modelled"
            " (a log's 'Initializing a V1 LLM engine' line says which engine ran)"
        )
    else:
        reason = v1_before
    raise EngineError(f"vLLM {version}: {reason}; modelled: 0.19-0.20 and 0.21-{LAST_READ_VERSION}")


def log_settings(parsed: Mapping[str, Any]) -> dict[str, Any]:
    """The ``vllm_startup`` arguments a parsed log shows ("use this log's settings"): context,
    TP/PP, utilisation, the device's total, batch limits, eager, chunked prefill, dtype,
    quantization, KV dtype and the version. Only what the log printed; the rest stays the page's."""
    out: dict[str, Any] = {}
    for key in ("tp", "pp", "max_model_len", "max_num_seqs", "max_num_batched_tokens"):
        if parsed.get(key):
            out[key] = int(parsed[key])
    if parsed.get("gpu_memory_utilization"):
        out["gpu_memory_utilization"] = float(parsed["gpu_memory_utilization"])
    if parsed.get("total_bytes"):
        out["total_bytes"] = float(parsed["total_bytes"])
    if "enforce_eager" in parsed:
        out["enforce_eager"] = bool(parsed["enforce_eager"])
    if "enable_chunked_prefill" in parsed:
        out["enable_chunked_prefill"] = bool(parsed["enable_chunked_prefill"])
    if parsed.get("enable_lora"):
        out["enable_lora"] = True
    for key in ("language_model_only", "skip_mm_profiling"):
        if parsed.get(key):
            out[key] = True
    limits = parsed.get("limit_mm_per_prompt")
    if limits:  # "'image': 0, 'video': 0" (a count per modality; a dict of options is not read)
        out["limit_mm_per_prompt"] = {m: int(n) for m, n in re.findall(r"'(\w+)': (\d+)", limits)}
    if parsed.get("dtype") in ("bfloat16", "float16", "float32"):
        out["dtype"] = parsed["dtype"]
    q = parsed.get("quantization")
    if q and q != "None":
        out["quantization"] = q
    kv = parsed.get("kv_cache_dtype")
    if kv:
        out["kv_cache_dtype"] = kv
    if parsed.get("version"):
        out["version"] = str(parsed["version"])
        before = _version_tuple(out["version"])
        if parsed.get("engine_generation") and before is not None and before < (0, 19):
            # before 0.19 (0.8-0.10) V0 and V1 lived side by side: the refusal names the one that ran
            out["version"] += f" ({parsed['engine_generation']} engine)"
        if parsed.get("model_runner"):  # which model runner the log shows (0.21 on)
            out["version"] += f" ({parsed['model_runner']} model runner)"
    return out


_SETTING_WORDS = {
    "version": "vLLM version",
    "model": "model",
    "tp": "tensor parallel size",
    "pp": "pipeline parallel size",
    "max_model_len": "context (max_model_len)",
    "gpu_memory_utilization": "gpu_memory_utilization",
    "total_bytes": "memory the device reports",
    "max_num_seqs": "max_num_seqs",
    "max_num_batched_tokens": "max_num_batched_tokens",
    "enforce_eager": "enforce_eager",
    "enable_chunked_prefill": "chunked prefill (enable_chunked_prefill)",
    "enable_lora": "LoRA (enable_lora)",
    "language_model_only": "language_model_only (no vision tower)",
    "skip_mm_profiling": "skip_mm_profiling (no encoder pass in the profile run)",
    "limit_mm_per_prompt": "limit_mm_per_prompt",
    "kv_cache_dtype": "KV-cache dtype",
    "quantization": "quantization",
}


def log_mismatches(parsed: Mapping[str, Any], settings: Mapping[str, Any]) -> list[str]:
    """Each setting the log ran with that differs from the page's, in words, to be said before
    any term is compared. ``settings`` holds the page's values under ``vllm_startup``'s names
    (and ``version``, ``model``); a setting the log does not print is not compared. A version
    this module does not model is named with the reason."""
    out: list[str] = []
    shown = log_settings(parsed)
    if parsed.get("model"):
        shown["model"] = parsed["model"]
    version = shown.get("version")
    if version:
        try:
            family = vllm_family(version)
        except EngineError as exc:
            out.append(f"The log ran {exc}.")
        else:
            page = settings.get("version") or VLLM_FAMILIES[0]
            if vllm_family(str(page)) != family:
                out.append(f"The log ran vLLM {version} (the {family} ledger); the page models {page}.")
    if shown.get("enable_lora") and not settings.get("enable_lora"):
        out.append(f"The log ran with LoRA enabled (enable_lora): {LORA_NOT_MODELLED}")
    for key in ("language_model_only", "skip_mm_profiling", "limit_mm_per_prompt"):
        if shown.get(key) and key not in settings:  # the page takes the defaults: every modality on
            out.append(f"{_SETTING_WORDS[key]}: the log used {shown[key]!r}; the page takes vLLM's default.")
    for key, value in shown.items():
        if key in ("version", "enable_lora") or key not in settings or settings[key] is None:
            continue
        page = settings[key]
        if key == "total_bytes":
            if abs(float(page) / float(value) - 1) > 0.005:
                out.append(
                    f"The device reported {format_gib(float(value))} GiB in the log; the page uses"
                    f" {format_gib(float(page))} GiB."
                )
            continue
        if key == "model":
            if str(page).lower().split("/")[-1] != str(value).lower().rstrip("/").split("/")[-1]:
                out.append(f"The log loaded {value!r}; the page sizes {page!r}.")
            continue
        if key == "kv_cache_dtype" and {str(value), str(page)} <= {"auto", "bfloat16", "float16"}:
            continue
        if key == "gpu_memory_utilization":
            same = math.isclose(float(page), float(value), abs_tol=1e-9)
        else:
            same = page == value
        if not same:
            out.append(f"{_SETTING_WORDS[key]}: the log used {value!r}, the page {page!r}.")
    return out


_EXPLAIN = {
    "total_bytes": "the device reports a different total (driver, ECC, MIG): enter your device's total",
    "requested_bytes": "utilization × the reported total: a different total or utilization",
    "weights_bytes": "the checkpoint's format or tensors the model builds at load (vision tower, padding)",
    "activation_bytes": (
        "the profile run's peak: max_num_seqs × vocabulary logits in the sampler, the MoE"
        " workspace, or a multimodal model's vision encoder on its largest dummy image (off with"
        " --limit-mm-per-prompt 0 or --language-model-only); different batch limits change it"
    ),
    "non_torch_bytes": "CUDA, NCCL and cuBLAS memory outside PyTorch: it depends on the node, not the model",
    "kv_bytes": "what is left of the request after the three terms above",
    "kv_tokens": "the KV bytes divided by each token's cache (per KV-cache group)",
    "max_concurrency": "blocks ÷ the blocks one request of max_model_len needs",
    "cuda_graph_bytes": "measured by capturing the graphs: it depends on the model and the capture sizes",
}


def compare_with_log(startup: VllmStartup, parsed: Mapping[str, Any]) -> list[dict[str, Any]]:
    """Predicted beside measured, term by term: value, ratio and a sentence on why they differ."""
    rows = []
    for key in LOG_TERMS:
        if key not in parsed:
            continue
        predicted = float(getattr(startup, key))
        measured = float(parsed[key])
        ratio = predicted / measured if measured else math.nan
        off = abs(ratio - 1) if measured else math.inf
        tolerance = 0.02 if key in ("kv_tokens", "kv_bytes", "max_concurrency") else 0.01
        rows.append(
            {
                "term": key,
                "predicted": predicted,
                "measured": measured,
                "ratio": ratio,
                "agrees": off <= tolerance,
                "why": "" if off <= tolerance else _EXPLAIN[key],
            }
        )
    return rows


# ---------------------------------------------------------------------------------------------
# The ledger as a memory breakdown, and the speed at the pool's concurrency
# ---------------------------------------------------------------------------------------------

LEDGER_TERMS: dict[str, tuple[str, str]] = {
    # field: (label, glossary term id)
    "weights_bytes": ("Weights", "weight-memory"),
    "activation_bytes": ("Profile-run activation peak", "profile-run"),
    "non_torch_bytes": ("Non-torch memory (CUDA, NCCL)", "nccl-buffers"),
    "kv_bytes": ("KV block pool", "kv-block-pool"),
    "cuda_graph_bytes": ("CUDA graphs", "cuda-graph-memory"),
}
_PART_KEYS = {
    "weights_bytes": "weights",
    "activation_bytes": "activations",
    "non_torch_bytes": "overhead",
    "kv_bytes": "kv_cache",
    "cuda_graph_bytes": "cuda_graphs",
}


_TERM_CAUSES = {
    "weights_bytes": "the checkpoint's tensors as loaded, the rotary table and the allocator's blocks",
    "activation_bytes": "kept free for the largest batch the profile run measured",
    "non_torch_bytes": "CUDA kernels, cuBLAS and NCCL buffers outside PyTorch",
    "kv_bytes": "the rest of the request, cut into KV-cache blocks",
    "cuda_graph_bytes": "captured after the pool is sized, on top of the request",
}
_TERM_SOURCES = {
    "weights_bytes": f"{VLLM_SOURCE}: vllm/model_executor/model_loader, the checkpoint's quantization_config",
    "activation_bytes": f"{VLLM_SOURCE}: vllm/v1/worker/gpu_model_runner.py profile_run",
    "non_torch_bytes": f"{VLLM_SOURCE}: vllm/utils/mem_utils.py memory_profiling (measured)",
    "kv_bytes": f"{VLLM_SOURCE}: vllm/v1/core/kv_cache_utils.py",
    "cuda_graph_bytes": f"{VLLM_SOURCE}: vllm/v1/worker/gpu_model_runner.py capture_model (measured)",
}
# terms that rest on real runs, with the range seen across them


def _non_torch_range(s: VllmStartup) -> tuple[float, float]:
    if s.non_torch_high:
        return (min(s.non_torch_low, s.non_torch_bytes), max(s.non_torch_high, s.non_torch_bytes))
    return (s.non_torch_bytes, s.non_torch_bytes)


def _graph_range(s: VllmStartup) -> tuple[float, float]:
    if not s.cuda_graph_bytes:
        return (0.0, 0.0)
    lo, hi, _ = MEASURED_RANGES_GIB["cuda_graphs"]
    n = s.cuda_graph_bytes / CUDA_GRAPH_BYTES_PER_GRAPH
    return (lo * GiB * n / CUDA_GRAPHS_CALIBRATED, hi * GiB * n / CUDA_GRAPHS_CALIBRATED)


_MEASURED_TERMS = {
    "non_torch_bytes": _non_torch_range,
    "cuda_graph_bytes": _graph_range,
}


def ledger_breakdown(ledger: VllmStartup | Mapping[str, Any]) -> Any:
    """The ledger (predicted, or parsed from a log) as an ``llm_memory.MemoryBreakdown``: the
    parts of the GPU's memory vLLM takes, in the order it takes them, for the memory bar chart."""
    from simulators.llm_memory import MemoryBreakdown, MemoryPart

    get = (lambda k: ledger.get(k)) if isinstance(ledger, Mapping) else (lambda k: getattr(ledger, k))
    notes = {
        "weights_bytes": "the checkpoint's tensors as loaded, the rotary table and the allocator's blocks",
        "activation_bytes": "kept free for the largest batch the profile run measured",
        "non_torch_bytes": "CUDA kernels, cuBLAS and NCCL buffers outside PyTorch",
        "kv_bytes": "the rest of the request, cut into KV-cache blocks",
        "cuda_graph_bytes": "captured after the pool is sized, on top of the request",
    }
    parts = []
    for key, (label, term) in LEDGER_TERMS.items():
        value = get(key)
        if value is None:
            continue
        parts.append(MemoryPart(_PART_KEYS[key], label, max(float(value), 0.0), notes[key], term))
    return MemoryBreakdown(parts=tuple(parts))


@dataclass(frozen=True)
class ConcurrencySpeed:
    """A decode step with the pool full: ``batch`` requests of ``context_tokens`` each."""

    batch: int
    context_tokens: int
    weight_bytes: float  # read per step, all GPUs together
    kv_bytes: float  # read per step, all GPUs together
    flops: float
    memory_time_s: float
    compute_time_s: float
    compute_dtype: str

    @property
    def step_time_s(self) -> float:
        return max(self.memory_time_s, self.compute_time_s)

    @property
    def tokens_per_s(self) -> float:
        return self.batch / self.step_time_s

    @property
    def tokens_per_s_per_request(self) -> float:
        return 1 / self.step_time_s

    @property
    def bound(self) -> str:
        return "memory" if self.memory_time_s >= self.compute_time_s else "compute"


def speed_at_concurrency(
    startup: VllmStartup,
    spec: ModelSpec | Mapping[str, Any],
    gpu: str | Accelerator,
    *,
    config: Mapping[str, Any] | None = None,
    dtype: str | None = None,
    quantization: str | None = None,
) -> ConcurrencySpeed | None:
    """The decode step when the pool is full: ⌊max concurrency⌋ requests, each at ``max_model_len``.

    As ``llm_speed.decode_step`` bounds it (time ≥ max(bytes ÷ bandwidth, FLOPs ÷ peak), all
    ``tp`` GPUs reading their shard at once), with the bytes vLLM actually holds: the weights in
    the checkpoint's format (a MoE reads the experts its batch touches; the untied input
    embedding is a lookup) and every request's KV blocks. None when no request fits.
    """
    from simulators.llm_speed import decode_step, expected_experts_touched

    spec, config = _as_spec(spec, config)
    accel = resolve_gpu(gpu)
    batch = int(startup.max_concurrency)
    if startup.verdict != "fits" or batch < 1 or not accel.memory_bandwidth_bytes_per_s:
        return None
    layout = weight_layout(config, dtype=dtype, quantization=quantization)
    parts = startup.weights_parts  # the ledger's own weights, per GPU, by part
    experts = parts["experts"]
    if spec.is_moe and spec.num_experts:
        touched = expected_experts_touched(spec.num_experts, spec.experts_per_token, batch)
        experts *= touched / spec.num_experts
    head = parts["lm_head"] if parts["lm_head"] else parts["embeddings"]
    per_gpu = parts["attention"] + parts["mlp"] + experts + head + parts["routers_norms_other"]
    weight_read = per_gpu * startup.tp
    kv_read = batch * startup.needed_per_request_bytes * startup.tp
    context = startup.max_model_len
    # the FLOPs of one step are decode_step's (they do not depend on how the weights are stored)
    flops = decode_step(
        spec,
        bandwidth_bytes_per_s=accel.memory_bandwidth_bytes_per_s,
        peak_flops=math.inf,
        batch=batch,
        context_tokens=context,
    ).flops
    if layout.quantized == "linear" and layout.bits == 8 and "INT8" in layout.label:
        wanted = "int8"
    elif layout.quantized == "linear" and layout.bits == 8:
        wanted = "fp8"
    else:
        wanted = "fp16" if layout.dtype == "float16" else "bf16"
    dtype_used = next((d for d in (wanted, "bf16", "fp16") if accel.supports(d)), None)
    if dtype_used is None:
        return None
    n = startup.tp
    return ConcurrencySpeed(
        batch=batch,
        context_tokens=context,
        weight_bytes=weight_read,
        kv_bytes=kv_read,
        flops=flops,
        memory_time_s=(weight_read + kv_read) / (accel.memory_bandwidth_bytes_per_s * n),
        compute_time_s=flops / (accel.peak_flops(dtype_used) * n),
        compute_dtype=dtype_used,
    )
