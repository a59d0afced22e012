"""SGLang's start-up memory, as SGLang 0.5.23's own code computes it, and a reader for its logs.

SGLang sizes its KV cache differently from vLLM. It never profiles a forward pass; it keeps a
*static* fraction of the GPU for weights and the token pool and leaves the rest for activations
and CUDA graphs. ``sglang_startup`` follows the released wheel of SGLang 0.5.23 (PyPI,
2026-10-30), file by file:

- ``python/sglang/srt/arg_groups/memory_hook.py: handle_gpu_memory_settings``: the defaults that
  depend on the GPU's capacity (``chunked_prefill_size``, the decode CUDA-graph ``max_bs``) and
  the default ``mem_fraction_static = round((capacity − reserved) / capacity, 3)``, with
  ``reserved = 512 + 1.5 × max(chunked_prefill_size, 2048) + TP × PP / 8 × 1024 + graphs`` MiB
  (graphs: 2 MiB per decode batch size up to ``max_bs``, 8 MiB per prefill capture size, or
  1.5 GiB for MLA), at least 10 GiB on a GPU above 60 GiB; a multimodal checkpoint's fraction is
  lowered by ``adjust_mem_fraction_for_vlm``.
- ``python/sglang/srt/distributed/bootstrap.py: measure_pre_model_load_memory``: the free memory
  before the weights load (the least over the ranks), after CUDA, NCCL and custom all-reduce took
  their share — the *baseline* every later figure is measured against.
- ``python/sglang/srt/mem_cache/kv_cache_configurator.py: _profile_available_bytes``: the pool
  gets ``free memory after the weights − baseline × (1 − mem_fraction_static)``; when that is not
  positive SGLang refuses and prints the smallest fraction that would start
  (``sglang_min_mem_fraction``).
- ``python/sglang/srt/model_executor/pool_configurator.py``: bytes per token
  (``DefaultPoolConfigurator._compute_cell_size``: KV heads per rank × (K + V head size) × layers
  × element size; MLA: (kv_lora_rank + qk_rope_head_dim) × layers), the sliding-window split
  (``HybridSWAPoolConfigurator``: full-layer bytes + ``swa_full_tokens_ratio`` × sliding-layer
  bytes per token, both pools page-aligned), and ``max_total_num_tokens = bytes // cell`` aligned
  down to the page size.
- ``kv_cache_configurator.py: resolve_max_num_reqs``: ``max_running_requests``.
- Hybrid linear-attention models (Gated DeltaNet: Qwen3-Next, Qwen 3.5):
  ``kv_cache_configurator.py: _handle_max_mamba_cache`` (lines 3229-3410) takes the Mamba state
  pool out of the budget first: ``max_mamba_cache_size = int((budget × 0.9/1.9 − state) //
  state)`` request slots (``--mamba-full-memory-ratio`` 0.9), each slot one request's conv state
  (bfloat16) and SSM state (float32 unless the config or ``--mamba-ssm-dtype`` says otherwise) over
  every linear layer (``configs/qwen3_next.py: mamba2_cache_params``, ``configs/mamba_utils.py:
  Mamba2StateShape``), allocated with one padding slot (``memory_pool.py: MambaPool``); the rest
  is the full-attention layers' KV, and ``max_running_requests`` is at most a fifth of the slots
  (``_calculate_mamba_ratio``: 3 + the extra_buffer strategy's 2). A multimodal checkpoint keeps
  100 MiB of the budget back (``mm_runtime_reservation_gb``). Checked on two logs that print the
  Mamba pool (Qwen3.5-397B-A17B, inferred from the bytes, at TP 2 and TP 8): the state a slot
  times the printed slots gives the printed conv and SSM sizes, and the ratio rule gives back the
  printed slot count from the log's own pools. Nemotron-H's Mamba-2 layers take the same pool
  (``configs/nemotron_h.py``); other state-space families and recurrent layers are refused.
- ``managers/scheduler.py`` and ``mem_cache/memory_pool.py``: the lines it prints.

Older logs follow their own release where its rules differ (``rules="0.5.3"``,
``"0.4.4.post2"``, ``"0.4.0.post1"`` or ``"0.3.5"``, read from those PyPI wheels; see
``SGLANG_RULES``), and a log's own baseline ("Load weight begin", the least over the ranks) can
be given as ``baseline_bytes``. Against 36 public logs (tests/data/sglang_startups.jsonl and
its companion sglang_startups_more.jsonl) 27 are predicted, every one within 1 % (-0.12 % to
+0.86 %), and nine are refused by name because the log does not give what a prediction needs
(two Qwen 3.5 logs whose Mamba pool is checked but whose weights and fraction are not given —
experts on the CPU under ktransformers, FP8 experts through Marlin —, DeepSeek V3.2 and a DFlash
draft whose pools are checked but whose budget or weights the log does not print or source, a
fraction, checkpoint or config the log does not give, and a 4 x RTX 3090 PCIe log without a
baseline, which BASELINE_OVERHEAD_TPN, measured on NVLink nodes, does not cover). Issue 31's
bar, judged on the 27 logs whose inputs are known, stands at 27 of 27 within 2 %. The 15 logs of
SGLang's documentation CI (one H100 runner, TP 1, 0.3.5 to 0.4.4.post2 rules) all print
0.09-0.10 GiB more weights than predicted, from 2.4 GiB (Llama 3.2 1B) to 20.2 GiB (Llama 3.2
11B Vision) alike, so their tokens come out +0.14 % to +0.25 %; the cause is not found and no
term is fitted for it.

Llama 3.2 Vision (``MllamaForConditionalGeneration``) follows SGLang 0.4.0.post1's
``models/mllama.py`` only (``MLLAMA_RULES``): its Llama decoder (``mllama_text_config``), the
tiled ViT, projector and extra embedding rows (``mllama_extra_parts``), and one pool over all
``text_config.num_hidden_layers``, the cross-attention layers included (``profile_max_num_token``
uses ``num_hidden_layers``; the image's K and V take slots of the same pool).

DeepSeek V3.2 (DeepSeek Sparse Attention, ``index_topk`` in the config) gets SGLang 0.5.23's DSA
pool (``sglang_dsa_cell``): every layer's MLA latent, raw (kv_lora_rank + qk_rope_head_dim
elements) or, for the FP8 backends other than trtllm, a scaled row (512 FP8 values + a 4-byte
scale per 128 + the RoPE part in bfloat16: 656 bytes), plus the lightning indexer's K cache
(index_head_dim FP8 values + a 4-byte scale: 132 bytes) a layer, in 64-token pages. "auto" KV
is FP8 on Blackwell (trtllm: raw) and bfloat16 on Hopper (``sglang_dsa_layout``). The
sgl-project/sglang#11309 log (8 x B200, 2025-10) prints 48,068 bytes a token, the scaled row
and the indexer over 61 layers; it prints no baseline, weights or fraction, so its tokens stay
unpredicted.

Kimi K2.5 (``KimiK25ForConditionalGeneration``) has its own reading of SGLang's files
(``kimi_k25_weight_parts``): the MoonViT tower and projector of ``models/kimi_k25.py``, the MLA
decoder of ``models/deepseek_v2.py`` kept 16-bit where the checkpoint's compressed-tensors
``ignore`` list says so, and the routed experts as ``compressed_tensors_wNa16_moe.py`` stores
them (int32-packed int4, 16-bit group scales, and on the Triton method of ROCm and Blackwell the
act-order tensors Marlin frees). On 8 x MI355X (a ROCm 0.5.8.post1 image) it gives 73.37 GiB a
rank against 73.58 printed, and the tokens +0.13 %.

Reward models (``LlamaForSequenceClassification``, ``models/llama_reward.py``) keep a
``num_labels`` x hidden score layer instead of the LM head; under rules "0.3.5" a model with
tied embeddings still gets its own LM head (``models/llama.py``, ``models/qwen2.py``).

The weights figure SGLang prints ("Load weight end ... mem usage") is what the pool is
subtracted from, and it is more than the checkpoint: ``sglang_weight_parts`` adds the rotary
cos/sin table SGLang keeps in FP32 and the whole segments PyTorch's caching allocator holds for
each parameter (``get_available_gpu_memory`` measures free memory after ``empty_cache()``,
SGLang 0.4.3.post4 ``utils.py`` lines 189-191). QwQ-32B on 4 x L4 printed 15.54 GB against
15.29 GiB of checkpoint a rank: +0.03 GiB of FP32 table and +0.22 GiB of segments (3.5 MiB a
layer: a 17.5 MiB QKV shard holds 18 MiB, a 12.5 MiB output projection 14 MiB), 15.54 GiB
predicted; that log went from +8.84 % to +0.00 %.

Weights are sized with vLLM's reader (``engines.vllm.weight_layout``/``vllm_weight_bytes``):
SGLang loads the same checkpoint formats into the same per-tensor widths (its
``vocab_parallel_embedding.py`` pads the vocabulary to 64 as vLLM's does), except MXFP4 experts,
whose Hopper layout in SGLang is not modelled and is refused. Pure Python; sizes in bytes.
SGLang prints "GB" for 2^30 bytes (``memory_pool.py: GB = 1024 * 1024 * 1024``).
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from simulators.engines import allocator as _allocator
from simulators.engines.device import reported_memory_bytes, reported_memory_source, smi_mib
from simulators.engines.ledger import EngineError, GiB, Ledger, LogError, MiB, Term, resolve_gpu
from simulators.engines.vllm import (
    WeightLayout,
    fabric_of,
    rotary_table_bytes,
    vllm_weight_bytes,
    weight_layout,
)
from simulators.hardware import Accelerator
from simulators.model_config import ModelSpec

SGLANG_VERSION = "0.5.23"
SGLANG_SOURCE = "SGLang 0.5.23"
_PY = "python/sglang/srt/"
SOURCES = {
    "fraction": f"{SGLANG_SOURCE} {_PY}arg_groups/memory_hook.py: handle_gpu_memory_settings",
    "baseline": f"{SGLANG_SOURCE} {_PY}distributed/bootstrap.py: measure_pre_model_load_memory",
    "weights": f"{SGLANG_SOURCE} {_PY}model_executor/model_runner.py: load_model ('Load weight end')",
    "profile": f"{SGLANG_SOURCE} {_PY}mem_cache/kv_cache_configurator.py: _profile_available_bytes",
    "cell": f"{SGLANG_SOURCE} {_PY}model_executor/pool_configurator.py: DefaultPoolConfigurator",
    "swa": f"{SGLANG_SOURCE} {_PY}model_executor/pool_configurator.py: HybridSWAPoolConfigurator",
    "requests": f"{SGLANG_SOURCE} {_PY}mem_cache/kv_cache_configurator.py: resolve_max_num_reqs",
    "page": f"{SGLANG_SOURCE} {_PY}arg_groups/overrides.py: _page_size_default (1 on CUDA)",
    "mamba": (
        f"{SGLANG_SOURCE} {_PY}mem_cache/kv_cache_configurator.py: _handle_max_mamba_cache;"
        f" {_PY}configs/mamba_utils.py: Mamba2StateShape.create, mamba_cache_per_req;"
        f" {_PY}mem_cache/memory_pool.py: MambaPool"
    ),
}

# SGLang's default share of the sliding-window pool (server_args: swa_full_tokens_ratio=0.8)
SWA_FULL_TOKENS_RATIO = 0.8
DEFAULT_MAX_PREFILL_TOKENS = 16384  # server_args: max_prefill_tokens
# What CUDA, PyTorch, NCCL and the custom all-reduce take before the baseline is measured. SGLang
# prints no device total, so this rests on the vLLM start-ups in tests/data/vllm_startups.jsonl
# (the same CUDA context, NCCL communicator and custom all-reduce buffers, measured as the device
# total less vLLM's free memory at start): one GPU 0.41–1.50 GiB over 51 runs on H100s, typically
# 0.51; 2–4 GPUs 1.53–2.07 GiB over 16 runs, on NVLink H100 nodes (NCCL's NVLink SHARP buffers, the
# custom all-reduce). On a PCIe node neither is set up and the overhead is smaller, but a PCIe figure
# rests on one machine whose printed baseline and total are both sourced (4 x RTX 4090, 0.57 GiB:
# sglang-performance-test-qwen3-14b-4x4090-tp4), so none is modelled; such a start-up says so.
BASELINE_OVERHEAD_TP1 = (0.41 * GiB, 0.51 * GiB, 1.50 * GiB)  # (low, typical, high)
BASELINE_OVERHEAD_TPN = (1.53 * GiB, 1.80 * GiB, 2.07 * GiB)

KV_DTYPES = {"auto": None, "bfloat16": 2, "float16": 2, "fp8_e4m3": 1, "fp8_e5m2": 1}
_UNMODELLED_KV = {
    "fp4_e2m1": "FP4 KV needs a recipe and a scale buffer per 16 values (fp4_kv_cache_quant_method.py)",
    "mxfp8": "MXFP8 KV adds a scale per 32 values",
    "int8": "INT8 KV is not a CUDA KV dtype of SGLang 0.5.23",
}

# Older releases whose rules differ, each read from its PyPI wheel (python/sglang/srt/...):
# - 0.5.3 (2025-10): server_args.py _handle_gpu_memory_settings: the same profile and pools as
#   0.5.23, but its default fraction keeps no prefill CUDA-graph term and its capacity tiers
#   differ (below 35 GiB: chunked 2048, max_bs 16 / 80 from TP 4).
# - 0.4.4.post2 (2025-03): server_args.py __post_init__ sets the default fraction by TP size only
#   (0.88, 0.87 from TP 2, 0.85 from TP 4, 0.81 from TP 8, 0.79 from TP 16);
#   model_executor/model_runner.py __init__ multiplies *any* fraction of a multimodal model by
#   0.95 ("Automatically reduce --mem-fraction-static ..."), and profile_max_num_token sizes one
#   pool over every attention layer (num_hidden_layers x KV heads x head_dim: no sliding-window
#   pool), in GB floats: int((avail - total x (1 - f)) x 2^30 // cell).
# - 0.4.0.post1 (2024-12): the same fraction, multimodal x 0.95 and single pool as 0.4.4.post2
#   (server_args.py __post_init__, model_runner.py lines 115-117 and profile_max_num_token), but
#   its rotary table is cast to the model dtype (models/llama.py takes vLLM's get_rope; SGLang's
#   own layers/rotary_embedding.py keeps it in model dtype up to 0.4.1.post7 and in FP32 from
#   0.4.2.post4, "cache needs to be in FP32 for numerical stability").
# - 0.3.5 (2024-10/11; the 0.3.4.post2 wheel, built 2024-10-25, and 0.3.5, built 2024-11-03,
#   alike): the single pool, profile_max_num_token and multimodal x 0.95 of 0.4.0.post1 and its
#   model-dtype rotary table (models/llama.py and models/qwen2.py take vLLM's get_rope), but
#   server_args.py __post_init__ gives 0.83 from TP 8 (0.81 from 0.4.0), chunked_prefill_size is
#   8192 and cuda_graph_max_bs 160 whatever the GPU, and models/llama.py and models/qwen2.py
#   always build a ParallelLMHead (lines 305 and 276): a model with tie_word_embeddings gets a
#   second copy of its embedding, loaded from it after the checkpoint (0.4.0.post1's llama.py
#   line 308 shares the embedding instead).
SGLANG_RULES = ("0.5.23", "0.5.3", "0.4.4.post2", "0.4.0.post1", "0.3.5")
_OLD_RULES = ("0.4.4.post2", "0.4.0.post1", "0.3.5")  # fraction by TP, multimodal x 0.95, one pool
# the classes whose 0.3.5 files were read: each builds its own LM head even when tied
_UNTIED_HEAD_035 = ("LlamaForCausalLM", "Qwen2ForCausalLM")
RULE_SOURCES = {
    "0.5.23": SOURCES["fraction"],
    "0.5.3": "SGLang 0.5.3 python/sglang/srt/server_args.py: _handle_gpu_memory_settings",
    "0.4.0.post1": (
        "SGLang 0.4.0.post1 python/sglang/srt/server_args.py: __post_init__;"
        " model_executor/model_runner.py: profile_max_num_token; rotary table in model dtype"
    ),
    "0.4.4.post2": (
        "SGLang 0.4.4.post2 python/sglang/srt/server_args.py: __post_init__;"
        " model_executor/model_runner.py: __init__ (multimodal x 0.95), profile_max_num_token"
    ),
    "0.3.5": (
        "SGLang 0.3.5 (and 0.3.4.post2) python/sglang/srt/server_args.py: __post_init__;"
        " model_executor/model_runner.py: profile_max_num_token; models/llama.py, models/qwen2.py:"
        " a separate LM head; rotary table in model dtype"
    ),
}


def _capacity_defaults(gpu_mem_mib: float, tp: int) -> tuple[int, int]:
    """(chunked_prefill_size, decode CUDA-graph max_bs) from the GPU's capacity (memory_hook.py)."""
    if gpu_mem_mib < 20 * 1024:
        return 2048, 8
    if gpu_mem_mib < 35 * 1024:
        return 4096, 48 if tp < 4 else 160
    if gpu_mem_mib < 60 * 1024:
        return 4096, 32 if tp < 4 else 160
    if gpu_mem_mib < 160 * 1024:
        return 8192, 256 if tp < 4 else 512
    return 16384, 512


def _capacity_defaults_053(gpu_mem_mib: float, tp: int) -> tuple[int, int]:
    """(chunked_prefill_size, cuda_graph_max_bs) of SGLang 0.5.3's server_args.py."""
    if gpu_mem_mib < 20 * 1024:
        return 2048, 8
    if gpu_mem_mib < 35 * 1024:
        return 2048, 16 if tp < 4 else 80
    if gpu_mem_mib < 60 * 1024:
        return 4096, 32 if tp < 4 else 160
    if gpu_mem_mib < 160 * 1024:
        return 8192, 256 if tp < 4 else 512
    return 16384, 512


def _prefill_capture_sizes(max_bs: int) -> list[int]:
    """``cuda_graph_hook.py: generate_prefill_cuda_graph_batch_sizes``."""
    sizes = (
        list(range(4, 33, 4))
        + list(range(48, 257, 16))
        + list(range(288, 513, 32))
        + list(range(576, 1025, 64))
        + list(range(1280, 4097, 256))
        + list(range(4608, max_bs + 1, 512))
    )
    return [s for s in sizes if s <= max_bs]


def _vlm_factor(config: Mapping[str, Any]) -> float:
    """``adjust_mem_fraction_for_vlm``: 0.95 × a factor from the vision tower's size (ViT-L/14 = 1)."""
    vision = config.get("vision_config")
    if not isinstance(vision, Mapping):
        return 1.0
    # Kimi K2.5's vision_config names its sizes vt_*; SGLang reads KimiK25VisionConfig's own
    # num_hidden_layers / hidden_size, which keep the class defaults (27, 1152)
    defaults = _MOONVIT_DEFAULTS if _is_kimi_k25(config) else {"num_hidden_layers": 24, "hidden_size": 1024}
    layers = int(vision.get("num_hidden_layers", vision.get("depth", defaults["num_hidden_layers"])) or 24)
    hidden = int(vision.get("hidden_size", defaults["hidden_size"]) or 1024)
    ratio = layers * hidden**2 / (24 * 1024**2)
    return 0.95 * max(0.8, min(1.05, 1.0 - 0.1 * (ratio - 1.0)))


def default_mem_fraction_static(
    gpu_mem_bytes: float,
    *,
    tp: int = 1,
    chunked_prefill_size: int | None = None,
    max_running_requests: int | None = None,
    mla: bool = False,
    config: Mapping[str, Any] | None = None,
    rules: str = "0.5.23",
) -> dict[str, Any]:
    """SGLang 0.5.23's defaults for a GPU of ``gpu_mem_bytes`` (``handle_gpu_memory_settings``).

    ``rules`` names an older release whose default differs (``SGLANG_RULES``): "0.5.3" keeps no
    prefill-graph term and has its own capacity tiers; "0.4.4.post2" takes the fraction from
    the TP size alone.

    Returns ``mem_fraction_static``, ``chunked_prefill_size``, ``cuda_graph_max_bs`` and the
    ``reserved_mib`` it keeps for activations and graphs. SGLang reads the capacity from
    ``nvidia-smi --query-gpu=memory.total`` (MiB), about 0.5 GiB above what CUDA reports; the
    fraction is rounded to 3 decimals, so the difference moves it by at most 0.001 or 0.002.
    """
    gpu_mem = gpu_mem_bytes / MiB
    if rules not in SGLANG_RULES:
        raise EngineError(f"rules {rules!r}: choose one of {', '.join(SGLANG_RULES)}")
    if rules == "0.3.5":  # server_args.py: 0.83 from TP 8, chunked 8192 and max_bs 160 on any GPU
        fraction = 0.79 if tp >= 16 else 0.83 if tp >= 8 else 0.85 if tp >= 4 else 0.87 if tp >= 2 else 0.88
        return {
            "mem_fraction_static": fraction,
            "chunked_prefill_size": 8192 if chunked_prefill_size is None else chunked_prefill_size,
            "cuda_graph_max_bs": 160,
            "reserved_mib": gpu_mem * (1 - fraction),
        }
    if rules in _OLD_RULES:
        fraction = 0.79 if tp >= 16 else 0.81 if tp >= 8 else 0.85 if tp >= 4 else 0.87 if tp >= 2 else 0.88
        chunked = 2048 if gpu_mem < 25_000 else 8192
        if chunked_prefill_size is not None:
            chunked = chunked_prefill_size
        return {
            "mem_fraction_static": fraction,
            "chunked_prefill_size": chunked,
            "cuda_graph_max_bs": (8 if tp < 4 else 80) if gpu_mem < 25_000 else 160,
            "reserved_mib": gpu_mem * (1 - fraction),
        }
    if rules == "0.5.3":
        chunked_default, max_bs = _capacity_defaults_053(gpu_mem, tp)
        chunked = chunked_prefill_size if chunked_prefill_size is not None else chunked_default
        if max_running_requests is not None and max_bs > max_running_requests:
            max_bs = max_running_requests
        tokens = max(chunked, 2048) if chunked > 0 else max(DEFAULT_MAX_PREFILL_TOKENS, 2048)
        reserved = 512 + tokens * 1.5 + max_bs * 2 + tp / 8 * 1024
        if gpu_mem > 60 * 1024:
            reserved = max(reserved, 10 * 1024)
        fraction = round((gpu_mem - reserved) / gpu_mem, 3)
        if config is not None and config.get("vision_config"):
            fraction = fraction * _vlm_factor(config)
        return {
            "mem_fraction_static": fraction,
            "chunked_prefill_size": chunked,
            "cuda_graph_max_bs": max_bs,
            "reserved_mib": reserved,
        }
    chunked_default, max_bs = _capacity_defaults(gpu_mem, tp)
    chunked = chunked_prefill_size if chunked_prefill_size is not None else chunked_default
    if max_running_requests is not None and max_bs > max_running_requests:
        max_bs = max_running_requests
    activation_tokens = max(chunked, 2048) if chunked > 0 else max(DEFAULT_MAX_PREFILL_TOKENS, 2048)
    reserved = 512 + activation_tokens * 1.5 + tp / 8 * 1024
    graphs = max_bs * 2  # decode graphs
    prefill_max = chunked if not mla else min(8192, chunked)
    graphs += 1.5 * 1024 if mla else len(_prefill_capture_sizes(prefill_max)) * 8
    reserved += graphs
    if gpu_mem > 60 * 1024:
        reserved = max(reserved, 10 * 1024)
    fraction = round((gpu_mem - reserved) / gpu_mem, 3)
    if config is not None and config.get("vision_config"):
        fraction = fraction * _vlm_factor(config)
    return {
        "mem_fraction_static": fraction,
        "chunked_prefill_size": chunked,
        "cuda_graph_max_bs": max_bs,
        "reserved_mib": reserved,
    }


# ---------------------------------------------------------------------------------------------
# The token pool
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class SglangCell:
    """Bytes one token takes in SGLang's pools, per GPU."""

    full_bytes: int  # per token across the full-attention (or MLA) layers
    swa_bytes: int = 0  # per token across the sliding-window layers
    full_layers: int = 0
    swa_layers: int = 0
    arch: str = "MHA"  # "MHA", "MLA", "MLA + DSA indexer", "SWA hybrid"
    indexer_bytes: int = 0  # of full_bytes: DeepSeek Sparse Attention's indexer K cache a token

    @property
    def bytes_per_token(self) -> float:
        """The divisor of ``max_total_num_tokens`` (SWA: full + ratio × sliding)."""
        return self.full_bytes + SWA_FULL_TOKENS_RATIO * self.swa_bytes


def _text(config: Mapping[str, Any]) -> Mapping[str, Any]:
    for key in ("text_config", "llm_config", "language_config"):
        inner = config.get(key)
        if isinstance(inner, Mapping) and inner:
            return inner
    return config


# ---------------------------------------------------------------------------------------------
# The Mamba (linear-attention state) pool of hybrid models: Qwen3-Next, Qwen 3.5
# ---------------------------------------------------------------------------------------------

# server_args ``--mamba-full-memory-ratio``: "The ratio of mamba state memory to full kv cache
# memory", unset -> 0.9 (SGLang 0.5.23 arg_groups/fields/schedule.py lines 220-228, fallback=0.9;
# the same default since SGLang's Qwen3-Next docs, sgl-project/sglang PR 15337, 2025-12-17).
MAMBA_FULL_MEMORY_RATIO = 0.9
# Mamba state slots one running request takes (kv_cache_configurator.py _calculate_mamba_ratio,
# lines 3062-3088): MAMBA_CACHE_SIZE_MAX_RUNNING_REQUESTS_RATIO = 3, plus the radix cache's
# tracking slots: the strategy "auto" resolves to extra_buffer for Qwen3-Next / Qwen 3.5 with the
# overlap scheduler on (arg_groups/overrides.py lines 477-485, _MAMBA_EXTRA_BUFFER_ARCHS, the
# triton linear-attention backend by default), and extra_buffer with overlap adds 2
# (mem_cache/allocation_sizing.py get_mamba_tracking_slots, lines 11-19): 3 + 2 = 5. Seen in a
# run: --max-mamba-cache-size 40 printed max_running_requests=8, "40 / 5"
# (https://github.com/jpezzulli/sglang-rtxpro6000/issues/5, 2026-09-14).
MAMBA_SLOTS_PER_REQUEST = 5
_SSM_DTYPES = {"float32": 4, "bfloat16": 2, "float16": 2}
# What a multimodal checkpoint reserves out of the pool budget for allocations made after sizing
# (kv_cache_configurator.py mm_runtime_reservation_gb, lines 202-219: SGLANG_VLM_CACHE_SIZE_MB
# = 100 by default, environ.py line 1598; the CUDA feature-transport pools only when chosen).
MM_RUNTIME_RESERVATION = 100 * MiB


@dataclass(frozen=True)
class SglangMambaState:
    """One request's linear-attention state in SGLang's Mamba pool, per GPU, over every
    Gated DeltaNet layer (``BaseLinearStateParams.mamba_cache_per_req``)."""

    layers: int
    conv_shape: tuple[int, int]  # per layer: (conv_dim / TP, kernel - 1), bfloat16
    ssm_shape: tuple[int, int, int]  # per layer: (V heads / TP, V head dim, K head dim)
    ssm_dtype: str
    conv_bytes: int  # per request, all layers
    ssm_bytes: int
    kind: str = "Gated DeltaNet"  # or "Mamba-2" (Nemotron-H)

    @property
    def per_request_bytes(self) -> int:
        return self.conv_bytes + self.ssm_bytes


def sglang_mamba_state(
    config: Mapping[str, Any], spec: ModelSpec, *, tp: int, mamba_ssm_dtype: str | None = None
) -> SglangMambaState:
    """The Gated DeltaNet state SGLang 0.5.23 keeps per request slot, per GPU.

    ``configs/qwen3_next.py: mamba2_cache_params`` (lines 287-313; Qwen 3.5's text config is a
    ``Qwen3NextConfig``, ``configs/qwen3_5.py``) calls ``Mamba2StateShape.create``
    (``configs/mamba_utils.py`` lines 199-247) with intermediate = V heads × V dim, groups = K
    heads, heads = V heads, head dim = V dim, state = K dim: the conv state is
    ((V heads × V dim + 2 × K heads × K dim) / TP, kernel − 1) in bfloat16
    (``SGLANG_MAMBA_CONV_DTYPE``), the SSM state (V heads / TP, V dim, K dim) in the config's
    ``mamba_ssm_dtype``, else float32 (``mamba2_state_dtype``, lines 47-108; ``--mamba-ssm-dtype``
    overrides both). The layers are those ``layers_block_type`` marks linear: every layer but
    each ``full_attention_interval``-th (lines 259-285).
    """
    cfg = _text(config)
    kinds = spec.kinds()
    if "ssm" in kinds:
        return _nemotron_h_state(config, spec, tp=tp, mamba_ssm_dtype=mamba_ssm_dtype)
    needed = (
        "linear_num_key_heads",
        "linear_num_value_heads",
        "linear_key_head_dim",
        "linear_value_head_dim",
    )
    missing = [k for k in needed if not isinstance(cfg.get(k), int) or cfg.get(k) <= 0]
    if missing:
        raise EngineError(
            f"config {missing[0]}: SGLang's Mamba pool is modelled for Gated DeltaNet layers"
            " (Qwen3-Next, Qwen 3.5), whose config gives linear_num_key_heads,"
            " linear_num_value_heads, linear_key_head_dim and linear_value_head_dim"
        )
    k_heads, v_heads = int(cfg["linear_num_key_heads"]), int(cfg["linear_num_value_heads"])
    k_dim, v_dim = int(cfg["linear_key_head_dim"]), int(cfg["linear_value_head_dim"])
    kernel = int(cfg.get("linear_conv_kernel_dim", 4) or 4)
    interval = cfg.get("full_attention_interval")
    linear_ids = [i for i, k in enumerate(kinds) if k == "linear"]
    if isinstance(interval, int) and interval > 0:
        by_interval = [i for i in range(spec.num_layers) if (i + 1) % interval]
        if by_interval != linear_ids:
            raise EngineError(
                f"config layer_types: SGLang places linear layers by full_attention_interval"
                f" ({interval}), and this config's layer_types disagree; not modelled"
            )
    ssm_name = mamba_ssm_dtype or str(
        cfg.get("mamba_ssm_dtype") or config.get("mamba_ssm_dtype") or "float32"
    )
    return _mamba2_state(
        intermediate=v_heads * v_dim,
        groups=k_heads,
        heads=v_heads,
        head_dim=v_dim,
        state=k_dim,
        kernel=kernel,
        layers=len(linear_ids),
        tp=tp,
        ssm_name=ssm_name,
    )


def _mamba2_state(
    *,
    intermediate: int,
    groups: int,
    heads: int,
    head_dim: int,
    state: int,
    kernel: int,
    layers: int,
    tp: int,
    ssm_name: str,
    kind: str = "Gated DeltaNet",
) -> SglangMambaState:
    """``Mamba2StateShape.create`` (SGLang 0.5.23 ``configs/mamba_utils.py`` lines 199-247) and
    ``mamba_cache_per_req`` (lines 115-125), conv state in bfloat16 (``SGLANG_MAMBA_CONV_DTYPE``)."""
    if groups % tp:  # extra_groups_for_head_shards (mamba_utils.py lines 28-37)
        groups += tp - groups
    conv_dim = intermediate + 2 * groups * state
    if conv_dim % tp or heads % tp:
        raise EngineError(
            f"tp {tp}: the state heads ({heads} heads, conv width {conv_dim}) do not divide over"
            " it (mamba_utils.py divide())"
        )
    if ssm_name not in _SSM_DTYPES:
        raise EngineError(f"mamba_ssm_dtype {ssm_name!r}: choose one of {', '.join(_SSM_DTYPES)}")
    conv_shape = (conv_dim // tp, kernel - 1)
    ssm_shape = (heads // tp, head_dim, state)
    conv = conv_shape[0] * conv_shape[1] * 2 * layers
    ssm = ssm_shape[0] * ssm_shape[1] * ssm_shape[2] * _SSM_DTYPES[ssm_name] * layers
    return SglangMambaState(layers, conv_shape, ssm_shape, ssm_name, conv, ssm, kind)


def _nemotron_h_state(
    config: Mapping[str, Any], spec: ModelSpec, *, tp: int, mamba_ssm_dtype: str | None
) -> SglangMambaState:
    """Nemotron-H's Mamba-2 layers (SGLang 0.5.23 ``configs/nemotron_h.py: mamba2_cache_params``,
    lines 424-439): intermediate = mamba_num_heads × mamba_head_dim, groups = n_groups, state =
    ssm_state_size, over the layers ``hybrid_override_pattern`` marks "M" (lines 408-414). Its
    config class has no ``mamba_ssm_dtype``, so the SSM state is float32 (``mamba2_state_dtype``)
    whatever the checkpoint's ``mamba_ssm_cache_dtype`` says, unless ``--mamba-ssm-dtype``."""
    cfg = _text(config)
    archs = [str(a) for a in (config.get("architectures") or [])]
    if not any(a.startswith("NemotronH") for a in archs):
        raise EngineError(
            f"architectures {archs or '(none)'}: SGLang's Mamba pool is modelled for Gated DeltaNet"
            " (Qwen3-Next, Qwen 3.5) and Nemotron-H's Mamba-2 layers only"
        )
    needed = ("mamba_num_heads", "mamba_head_dim", "ssm_state_size", "n_groups")
    missing = [k for k in needed if not isinstance(cfg.get(k), int) or cfg.get(k) <= 0]
    if missing:
        raise EngineError(f"config {missing[0]}: Nemotron-H's Mamba-2 state needs {', '.join(needed)}")
    pattern = str(cfg.get("hybrid_override_pattern") or "")
    layers = pattern.count("M")
    if layers != spec.kinds().count("ssm"):
        raise EngineError("config hybrid_override_pattern: its Mamba layers differ from the layers read")
    return _mamba2_state(
        intermediate=int(cfg["mamba_num_heads"]) * int(cfg["mamba_head_dim"]),
        groups=int(cfg["n_groups"]),
        heads=int(cfg["mamba_num_heads"]),
        head_dim=int(cfg["mamba_head_dim"]),
        state=int(cfg["ssm_state_size"]),
        kernel=int(cfg.get("conv_kernel", 4) or 4),
        layers=layers,
        tp=tp,
        ssm_name=mamba_ssm_dtype or "float32",
        kind="Mamba-2",
    )


def sglang_mamba_cache_size(
    rest_bytes: float, per_request: int, ratio: float = MAMBA_FULL_MEMORY_RATIO
) -> int:
    """``max_mamba_cache_size`` when neither it nor a radix-less request cap is given: the Mamba
    pool gets ratio / (1 + ratio) of the budget, less one padding slot (SGLang 0.5.23
    ``kv_cache_configurator.py: _handle_max_mamba_cache`` lines 3345-3395, in GB floats as it
    computes them)."""
    rest_gb = rest_bytes / GiB
    budget = rest_gb * ratio / (1 + ratio) * (1 << 30)
    return int((budget - per_request) // per_request)


def sglang_cell(spec: ModelSpec, *, tp: int, kv_bytes: int, single_pool: bool = False) -> SglangCell:
    """Per-token bytes of the KV pools, as ``pool_configurator.py`` computes them per GPU.

    MHA/GQA layers keep ``max(1, KV heads // TP)`` heads of K and V (``get_num_kv_heads``); MLA
    layers keep the latent and the RoPE key (``calculate_mla_kv_cache_dim``), whole on every
    rank. A model with sliding-window layers gets SGLang's hybrid SWA pools. Gated DeltaNet
    layers (Qwen3-Next, Qwen 3.5) keep no KV here: their state is the Mamba pool
    (``sglang_mamba_state``), as do Nemotron-H's Mamba-2 layers. Recurrent layers and chunked
    attention are refused by name.
    ``single_pool``: one pool over every attention layer, sliding ones included, as SGLang
    0.4.4.post2's ``profile_max_num_token`` sizes it.
    """
    kinds = spec.kinds()
    shapes = spec.layer_shapes()
    head_dims = spec.layer_head_dims or (spec.head_dim,) * spec.num_layers
    full = swa = n_full = n_swa = 0
    for i, kind in enumerate(kinds):
        if kind == "mla":
            full += (spec.kv_lora_rank + spec.qk_rope_head_dim) * kv_bytes
            n_full += 1
        elif kind in ("full", "sliding"):
            _, kv_heads, _ = shapes[i]
            per = max(1, kv_heads // tp) * 2 * head_dims[i] * kv_bytes
            if kind == "full" or single_pool:
                full, n_full = full + per, n_full + 1
            else:
                swa, n_swa = swa + per, n_swa + 1
        elif kind in ("shared", "none"):
            continue
        elif kind in ("linear", "ssm") and not single_pool:
            # a Gated DeltaNet layer keeps no KV: its state lives in the Mamba pool
            # (sglang_mamba_state); DefaultPoolConfigurator counts only
            # mambaish.full_attention_layer_ids (SGLang 0.5.23 pool_configurator.py lines 229-236)
            continue
        elif kind in ("linear", "ssm", "recurrent"):
            raise EngineError(
                f"layer {i} ({kind}): SGLang's state pool for this layer kind is not modelled"
                + (
                    " under these rules (only SGLang 0.5.23's Mamba pool is)"
                    if kind in ("linear", "ssm")
                    else " (recurrent layers: only Gated DeltaNet and Nemotron-H's Mamba-2 are)"
                )
            )
        else:
            raise EngineError(f"layer {i}: SGLang's pool for a {kind!r} layer is not modelled")
    if n_swa and not n_full:
        raise EngineError(
            "a model whose every layer is sliding-window: SGLang's all-SWA pool is not modelled"
        )
    arch = "SWA hybrid" if n_swa else ("MLA" if spec.uses_mla else "MHA")
    return SglangCell(full, swa, n_full, n_swa, arch)


# ---------------------------------------------------------------------------------------------
# DeepSeek Sparse Attention (DeepSeek V3.2): the MLA latent and the lightning indexer's K cache
# ---------------------------------------------------------------------------------------------

# configs/model_config.py is_deepseek_dsa: these classes with index_topk in the config (the
# others it lists, GLM-5, LongCat, Mistral Large 3 ..., are not modelled here)
DSA_ARCHS = ("DeepseekV3ForCausalLM", "DeepseekV32ForCausalLM")
DSA_QUANT_BLOCK = 128  # mem_cache/memory_pool.py DSATokenToKVPool.quant_block_size
DSA_PAGE_SIZE = 64  # arg_groups/model_overrides/deepseek_v2.py: 64 x index_kpool on CUDA
DSA_SOURCE = (
    f"{SGLANG_SOURCE} {_PY}model_executor/pool_configurator.py: _compute_cell_size,"
    " _compute_dsa_indexer_cell_size; mem_cache/kv_cache_configurator.py:"
    " calculate_mla_kv_cache_dim; mem_cache/memory_pool.py: DSATokenToKVPool;"
    " arg_groups/overrides.py: DSA kv_cache_dtype and backend defaults"
)


def _is_dsa(config: Mapping[str, Any]) -> bool:
    return bool(_text(config).get("index_topk") or config.get("index_topk"))


def _sm_major(accel: Accelerator) -> int | None:
    """The CUDA compute capability's major version SGLang's DSA defaults read, from the
    catalog's architecture name: Blackwell 10 or more (B200 10, GB10 and RTX 50 12), Hopper 9."""
    arch = accel.architecture.lower()
    if "blackwell" in arch:
        return 10
    if "hopper" in arch:
        return 9
    return None


def sglang_dsa_layout(kv_cache_dtype: str, sm_major: int) -> tuple[str, bool]:
    """(KV dtype, scaled FP8 layout?) SGLang 0.5.23 picks for DeepSeek DSA.

    ``arg_groups/overrides.py``: "auto" is fp8_e4m3 from SM 10 (Blackwell), else bfloat16, and
    only bfloat16 and fp8_e4m3 are accepted; FP8 KV takes the trtllm backends on Blackwell and
    flashmla_kv on Hopper (``_dsa_split_backend_resolution``). ``calculate_mla_kv_cache_dim``:
    trtllm reads the raw latent (kv_lora_rank + qk_rope_head_dim bytes in FP8); the other FP8
    backends a scaled row (kv_lora_rank FP8 values + a 4-byte scale per 128 + the RoPE part in
    bfloat16)."""
    dtype = kv_cache_dtype
    if dtype == "auto":
        dtype = "fp8_e4m3" if sm_major >= 10 else "bfloat16"
    dtype = {"bf16": "bfloat16"}.get(dtype, dtype)
    if dtype not in ("bfloat16", "fp8_e4m3"):
        raise EngineError(
            f"kv_cache_dtype {kv_cache_dtype!r}: DeepSeek DSA only supports bfloat16 or fp8_e4m3"
            " (SGLang 0.5.23 arg_groups/overrides.py)"
        )
    return dtype, dtype == "fp8_e4m3" and sm_major < 10


def sglang_dsa_cell(
    spec: ModelSpec, config: Mapping[str, Any], *, kv_dtype: str, scaled_fp8: bool
) -> SglangCell:
    """Bytes a token takes in SGLang 0.5.23's DSA pool on one GPU: every layer's MLA latent
    (``calculate_mla_kv_cache_dim`` x element size, whole on every rank) plus the lightning
    indexer's K cache (``_compute_dsa_indexer_cell_size``: index_head_dim FP8 values + a 4-byte
    scale per 128, uint8, over the layers that compute their own top-k: every layer unless the
    config shares them, ``dsa_layer_skips_topk``)."""
    cfg = _text(config)
    rank, rope = spec.kv_lora_rank, spec.qk_rope_head_dim
    dtype_bytes = {"bfloat16": 2, "fp8_e4m3": 1}.get(kv_dtype)
    if dtype_bytes is None:
        raise EngineError(f"kv_cache_dtype {kv_dtype!r}: DeepSeek DSA only supports bfloat16 or fp8_e4m3")
    if scaled_fp8:
        if rank % DSA_QUANT_BLOCK:
            raise EngineError(f"config kv_lora_rank {rank}: must be a multiple of {DSA_QUANT_BLOCK}")
        latent = rank + rank // DSA_QUANT_BLOCK * 4 + rope * 2
    else:
        latent = (rank + rope) * dtype_bytes
    index_dim = int(cfg.get("index_head_dim") or 0)
    if index_dim != 128:
        raise EngineError(f"config index_head_dim {index_dim!r}: SGLang's DSA pool asserts 128")
    for key in ("index_kpool", "indexer_types", "index_topk_pattern", "index_topk_freq", "cli_factor"):
        if cfg.get(key) not in (None, 1):
            raise EngineError(f"config {key}: shared or pooled indexer layers are not modelled")
    layers = sum(k == "mla" for k in spec.kinds())
    if layers != spec.num_layers:
        raise EngineError("config: a DSA model whose every layer is not MLA is not modelled")
    indexer = (index_dim + index_dim // DSA_QUANT_BLOCK * 4) * layers
    return SglangCell(latent * layers + indexer, 0, layers, 0, "MLA + DSA indexer", indexer)


# ---------------------------------------------------------------------------------------------
# The start-up
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class SglangStartup:
    """SGLang's start-up on one GPU (per GPU when ``tp`` > 1), in bytes unless named."""

    model: str
    gpu: str
    tp: int
    total_bytes: float  # as the device reports it
    baseline_bytes: float  # free memory before the weights ("Load weight begin. avail mem")
    mem_fraction_static: float
    weights_bytes: float  # "Load weight end. ... mem usage"
    slack_bytes: float  # baseline × (1 − mem_fraction_static): kept for activations and graphs
    pool_bytes: float  # what _profile_available_bytes hands the pool
    kv_bytes: float  # the pools as allocated (K + V, or the MLA latent)
    max_total_num_tokens: int
    swa_tokens: int
    cell: SglangCell
    page_size: int
    context_len: int
    max_running_requests: int
    chunked_prefill_size: int
    max_prefill_tokens: int
    cuda_graph_max_bs: int
    kv_cache_dtype: str
    weights_label: str
    verdict: str  # "fits" or "refused"
    message: str
    min_mem_fraction_static: float = 0.0
    fraction_source: str = "given"
    total_source: str = ""
    weights_parts: dict[str, float] = field(default_factory=dict, compare=False)
    notes: tuple[str, ...] = ()
    mamba: SglangMambaState | None = None  # hybrid linear-attention models: one request's state
    max_mamba_cache_size: int = 0  # request slots of the Mamba pool
    mm_reserved_bytes: float = 0.0  # kept out of the pool for multimodal allocations

    @property
    def fits(self) -> bool:
        return self.verdict == "fits"

    @property
    def mamba_conv_bytes(self) -> float:
        """The conv states as allocated: max_mamba_cache_size + 1 slots (slot 0 pads)."""
        return float((self.max_mamba_cache_size + 1) * self.mamba.conv_bytes) if self.mamba else 0.0

    @property
    def mamba_ssm_bytes(self) -> float:
        """The SSM (recurrent) states as allocated: max_mamba_cache_size + 1 slots."""
        return float((self.max_mamba_cache_size + 1) * self.mamba.ssm_bytes) if self.mamba else 0.0

    @property
    def mamba_bytes(self) -> float:
        return self.mamba_conv_bytes + self.mamba_ssm_bytes

    @property
    def context_bytes(self) -> float:
        """CUDA context, NCCL and custom all-reduce: the device's total less the baseline."""
        return self.total_bytes - self.baseline_bytes

    @property
    def unused_bytes(self) -> float:
        """The pool budget that page alignment and whole tokens leave unallocated."""
        return max(self.pool_bytes - self.kv_bytes - self.mamba_bytes - self.mm_reserved_bytes, 0.0)

    def ledger(self) -> Ledger:
        """This start-up as the engines' shared ``Ledger``: each term with its cause and source."""
        low, _, high = BASELINE_OVERHEAD_TP1 if self.tp == 1 else BASELINE_OVERHEAD_TPN
        terms = (
            Term(
                "cuda_context",
                "CUDA context, NCCL, custom all-reduce",
                max(self.context_bytes, 0.0),
                "What the process holds before SGLang measures its baseline free memory.",
                SOURCES["baseline"] + "; size measured on vLLM start-ups with the same context",
                kind="measured",
                low=low,
                high=high,
            ),
            Term(
                "weights",
                f"Weights ({self.weights_label})",
                self.weights_bytes,
                "The checkpoint loaded per GPU (tensor-parallel shards, padded vocabulary), the"
                " rotary table in FP32 and the caching allocator's whole segments"
                f" ({self.weights_parts.get('allocator_rounding', 0.0) / MiB:,.0f} MiB).",
                SOURCES["weights"],
                glossary="model-weights",
            ),
            Term(
                "kv_cache",
                f"KV cache ({self.max_total_num_tokens:,} tokens)",
                max(self.kv_bytes, 0.0),
                f"The token pool: {self.cell.arch}, {self.cell.bytes_per_token:,.0f} bytes a token.",
                SOURCES["swa"]
                if self.cell.swa_layers
                else DSA_SOURCE
                if self.cell.indexer_bytes
                else SOURCES["cell"],
                glossary="kv-cache",
            ),
            *(
                (
                    Term(
                        "mamba_state",
                        f"Linear-attention state ({self.max_mamba_cache_size:,} request slots)",
                        self.mamba_bytes,
                        f"SGLang's Mamba pool: {self.mamba.layers} {self.mamba.kind} layers,"
                        f" {self.mamba.per_request_bytes / MiB:,.2f} MiB a request slot (conv state"
                        f" bfloat16, SSM state {self.mamba.ssm_dtype}), max_mamba_cache_size + 1 slots.",
                        SOURCES["mamba"],
                    ),
                )
                if self.mamba
                else ()
            ),
            *(
                (
                    Term(
                        "mm_reserved",
                        "Kept for multimodal allocations",
                        self.mm_reserved_bytes,
                        "SGLANG_VLM_CACHE_SIZE_MB (100) taken out of the pool budget before sizing.",
                        f"{SGLANG_SOURCE} {_PY}mem_cache/kv_cache_configurator.py: mm_runtime_reservation_gb",
                    ),
                )
                if self.mm_reserved_bytes
                else ()
            ),
            Term(
                "unallocated_pool",
                "Pool budget left by page alignment",
                self.unused_bytes,
                "Whole tokens and whole pages: the remainder of the static budget stays free.",
                SOURCES["profile"],
            ),
            Term(
                "static_slack",
                "Kept for activations and CUDA graphs",
                max(self.slack_bytes, 0.0),
                f"baseline × (1 − mem_fraction_static {self.mem_fraction_static:g}): never given to"
                " the pool.",
                SOURCES["profile"],
            ),
        )
        return Ledger(
            engine="sglang",
            version=SGLANG_VERSION,
            device=self.gpu,
            total_bytes=self.total_bytes,
            terms=terms,
            verdict=self.verdict,
            message=self.message,
        )


# PyTorch's CUDA caching allocator (c10/cuda/CUDACachingAllocator.cpp, the same rules from
# PyTorch 2.5, which SGLang 0.4.3 ran on, to 2.9): sizes round up to 512 bytes; a request of at
# most 1 MiB is carved from 2 MiB segments (a block splits when 512 bytes or more remain); a
# request below 10 MiB from a 20 MiB segment; a larger one gets its own segment rounded up to
# 2 MiB (get_allocation_size). A large block splits only when more than 1 MiB would remain
# (should_split); best fit first (get_free_block). SGLang leaves the allocator's defaults
# (no expandable segments).
# the rules' one home: simulators/engines/allocator.py


def caching_allocator_reserved(sizes: list[int]) -> int:
    """Bytes ``cudaMalloc``'d by PyTorch's caching allocator for tensors allocated in this order
    and never freed (``CUDACachingAllocator.cpp``: ``round_size``, ``get_allocation_size``,
    ``should_split``, best-fit ``get_free_block``)."""
    import bisect

    free: dict[bool, list[int]] = {True: [], False: []}  # small pool, large pool: sorted free blocks
    reserved = 0
    for size in sizes:
        if size <= 0:
            continue
        rounded = _allocator.round_size(size)
        blocks = free[_allocator.is_small(rounded)]
        i = bisect.bisect_left(blocks, rounded)
        if i < len(blocks):
            block = blocks.pop(i)
        else:
            block = _allocator.allocation_size(rounded)
            reserved += block
        remaining = block - rounded
        if _allocator.should_split(rounded, remaining):
            bisect.insort(blocks, remaining)
    return reserved


def _parameter_sizes(spec: ModelSpec, layout: Any, tp: int, *, own_head: bool = False) -> list[int]:
    """The large per-rank parameters of the decoder in the order the model creates them: the
    vocabulary-parallel embedding, per layer the merged QKV and the output projection, the merged
    gate/up and down projections (or an MoE layer's fused w13 / w2 expert tensors and its shared
    expert), then the LM head. MLA and state-space layers are left out (their tensors are many
    and small beside the experts), as are norms, biases and scales (the small pool)."""
    b = layout.dtype_bytes
    width = math.floor(layout.bits) / 8 if layout.quantized == "linear" else b
    h = spec.hidden_size
    vocab_rows = -(-spec.vocab_size // 64) * 64  # vocab_parallel_embedding.py pads to 64
    embed = vocab_rows // tp * (spec.embed_dim or h) * b
    sizes = [embed]
    kinds = spec.kinds()
    head_dims = spec.layer_head_dims or (spec.head_dim,) * spec.num_layers
    moe = set(spec.moe_layers) if spec.is_moe else set()
    for i, (heads, kv_heads, inter) in enumerate(spec.layer_shapes()):
        if kinds[i] in ("full", "sliding"):
            d = head_dims[i]
            q = heads // tp * d
            kv = max(1, kv_heads // tp) * d
            sizes += [int((q + 2 * kv) * h * width), int(h * q * width)]
        if i in moe:
            e_inter = spec.expert_intermediate_size // tp
            sizes += [
                int(spec.num_experts * 2 * e_inter * h * width),
                int(spec.num_experts * h * e_inter * width),
            ]
            shared = (
                spec.shared_expert_intermediate_size
                or spec.expert_intermediate_size * spec.num_shared_experts
            )
            if shared:
                sizes += [int(2 * shared // tp * h * width), int(h * shared // tp * width)]
        elif inter:
            mult = 2 if spec.gated_mlp else 1
            sizes += [int(mult * inter // tp * h * width), int(h * inter // tp * width)]
    if not spec.tie_word_embeddings or own_head:
        sizes.append(vocab_rows // tp * h * b)
    return sizes


# A reward model's class (SGLang 0.4.0.post1 to 0.5.23 ``models/llama_reward.py``:
# ``LlamaForSequenceClassification`` builds ``LlamaModel`` and ``self.score = nn.Linear(hidden,
# config.num_labels, bias=False)``, no LM head; ``load_weights`` is LlamaForCausalLM's).
SEQUENCE_CLASSIFIERS = ("LlamaForSequenceClassification",)


def _is_sequence_classifier(config: Mapping[str, Any]) -> bool:
    return any(str(a) in SEQUENCE_CLASSIFIERS for a in (config.get("architectures") or []))


def _num_labels(config: Mapping[str, Any]) -> int:
    """transformers' ``PretrainedConfig.num_labels``: len(id2label), two when neither is given."""
    if config.get("num_labels"):
        return int(config["num_labels"])
    return len(config.get("id2label") or {}) or 2


def allocator_rounding_bytes(
    spec: ModelSpec, layout: Any, tp: int, *, lm_head: bool = True, own_head: bool = False
) -> float:
    """What the caching allocator holds beyond the parameters' own bytes once they are loaded.

    SGLang's "Load weight end ... mem usage" is the drop in ``torch.cuda.mem_get_info`` free
    memory after ``torch.cuda.empty_cache()`` (SGLang 0.4.3.post4 ``utils.py:
    get_available_gpu_memory`` lines 189-191; ``model_runner.py: load_model`` lines 319 and
    389), so it counts whole allocator segments, not tensors: a 17.5 MiB QKV shard holds an
    18 MiB segment, a 12.5 MiB output projection 14 MiB (its 1.5 MiB rest splits off but no
    later parameter fits it). QwQ-32B at TP 4: 3.5 MiB a layer, 0.22 GiB over 64 layers."""
    sizes = _parameter_sizes(spec, layout, tp, own_head=own_head)
    if not lm_head and not spec.tie_word_embeddings:
        sizes = sizes[:-1]  # a sequence classifier's small score head stays in the small pool
    return float(caching_allocator_reserved(sizes) - sum(sizes))


# ---------------------------------------------------------------------------------------------
# Llama 3.2 Vision (mllama): a Llama decoder with cross-attention layers and a tiled ViT
# ---------------------------------------------------------------------------------------------

MLLAMA_ARCH = "MllamaForConditionalGeneration"
# the releases whose models/mllama.py was read (the 0.4.0.post1 wheel, 2024-12-06)
MLLAMA_RULES = ("0.4.0.post1",)
MLLAMA_SOURCE = "SGLang 0.4.0.post1 python/sglang/srt/models/mllama.py"
_MLLAMA_TEXT_KEYS = (
    "hidden_size",
    "intermediate_size",
    "num_attention_heads",
    "num_hidden_layers",
    "num_key_value_heads",
    "vocab_size",
    "max_position_embeddings",
    "rope_theta",
    "rope_scaling",
    "rms_norm_eps",
    "hidden_act",
)
_MLLAMA_VISION_KEYS = (
    "hidden_size",
    "intermediate_size",
    "attention_heads",
    "num_hidden_layers",
    "num_global_layers",
    "image_size",
    "patch_size",
    "num_channels",
    "max_num_tiles",
    "supported_aspect_ratios",
    "vision_output_dim",
)


def _is_mllama(config: Mapping[str, Any]) -> bool:
    return MLLAMA_ARCH in [str(a) for a in (config.get("architectures") or [])]


def mllama_text_config(config: Mapping[str, Any]) -> dict[str, Any]:
    """The Llama decoder inside an mllama checkpoint, as a ``LlamaForCausalLM`` config.

    SGLang 0.4.0.post1 ``models/mllama.py: MllamaTextModel`` builds ``num_hidden_layers`` layers:
    ``LlamaDecoderLayer`` (``models/llama.py``) except at ``cross_attention_layers``, where
    ``MllamaCrossAttentionDecoderLayer`` keeps the same shapes (a ``QKVParallelLinear`` of
    heads x head_dim + 2 x KV heads x head_dim over hidden, the output projection, LlamaMLP, two
    RMSNorms) plus a q/k RMSNorm of head_dim and two scalar gates (``mllama_extra_parts``).
    The decoder reads its sizes from ``text_config``; a missing one is refused by name."""
    text = config.get("text_config")
    if not isinstance(text, Mapping):
        raise EngineError("config text_config: an mllama checkpoint keeps its decoder in text_config")
    missing = [k for k in _MLLAMA_TEXT_KEYS if k not in text and k not in ("rope_scaling", "hidden_act")]
    if missing:
        raise EngineError(f"config text_config.{missing[0]}: needed to size the mllama decoder")
    if config.get("quantization_config") or text.get("quantization_config"):
        raise EngineError("config quantization_config: a quantized mllama checkpoint is not modelled")
    out: dict[str, Any] = {k: text[k] for k in _MLLAMA_TEXT_KEYS if k in text}
    out.update(
        architectures=["LlamaForCausalLM"],
        model_type="llama",
        tie_word_embeddings=bool(text.get("tie_word_embeddings", False)),
        torch_dtype=str(text.get("torch_dtype") or config.get("torch_dtype") or "bfloat16"),
    )
    return out


def mllama_extra_parts(
    config: Mapping[str, Any], tp: int, dtype_bytes: int
) -> tuple[dict[str, float], list[int]]:
    """What an mllama checkpoint adds to its Llama decoder, per GPU, in bytes by part, and the
    large tensors in the order SGLang creates them (for the caching allocator).

    Following SGLang 0.4.0.post1 ``models/mllama.py`` (every tensor in the model dtype):

    - ``MllamaVisionModel``: the patch embedding, a ``ColumnParallelLinear`` of channels x
      patch^2 -> hidden (``ColumnParallelConv2dPatch``); ``class_embedding`` (hidden);
      ``MllamaPrecomputedPositionEmbedding``: a gate, positions ((image / patch)^2 + 1) x hidden
      and a tile embedding of (max_aspect_ratio_id + 1) rows x max_num_tiles x positions x
      hidden (``nn.Embedding``, whole on every rank); pre- and post-tile embeddings
      ((max_aspect_ratio_id + 1) x max_num_tiles x hidden, gated); two LayerNorms; then
      ``num_hidden_layers`` encoder layers and ``num_global_layers`` gated ones, each a
      bias-free ``QKVParallelLinear`` (3 x hidden x hidden) and ``RowParallelLinear`` output, an
      MLP ``fc1``/``fc2`` with biases, two LayerNorms (and two gates in the global layers).
      ``max_aspect_ratio_id`` is ``len(supported_aspect_ratios)`` (transformers'
      ``MllamaVisionConfig``).
    - ``multi_modal_projector``: ``nn.Linear(vision_output_dim, text hidden, bias=True)``, whole.
    - ``MllamaTextModel.embed_tokens`` is a ``VocabParallelEmbedding(vocab_size + 8, hidden)``:
      8 rows more than the Llama decoder's table, padded to 64.
    - each cross-attention layer's q/k RMSNorm (head_dim each) and two gates.
    """
    vision = config.get("vision_config")
    text = config.get("text_config") or {}
    if not isinstance(vision, Mapping):
        raise EngineError("config vision_config: an mllama checkpoint keeps its vision tower there")
    missing = [k for k in _MLLAMA_VISION_KEYS if k not in vision]
    if missing:
        raise EngineError(f"config vision_config.{missing[0]}: needed to size mllama's vision tower")
    b = dtype_bytes
    h = int(vision["hidden_size"])
    inter = int(vision["intermediate_size"])
    heads = int(vision["attention_heads"])
    if h % heads or heads % tp or inter % tp:
        raise EngineError(f"tp {tp}: mllama's vision heads ({heads}) and MLP ({inter}) must divide over it")
    layers, global_layers = int(vision["num_hidden_layers"]), int(vision["num_global_layers"])
    patch, size, channels = int(vision["patch_size"]), int(vision["image_size"]), int(vision["num_channels"])
    tiles = int(vision["max_num_tiles"])
    ratio_rows = len(vision["supported_aspect_ratios"]) + 1  # max_aspect_ratio_id + 1
    positions = (size // patch) ** 2 + 1
    out_dim, text_h = int(vision["vision_output_dim"]), int(text["hidden_size"])
    # split over TP / whole on every rank, in parameters
    patch_linear = channels * patch * patch * h
    tile_embedding = ratio_rows * tiles * positions * h
    embeds_whole = h + 1 + positions * h + tile_embedding + 2 * (ratio_rows * tiles * h + 1) + 4 * h
    per_layer_split = 3 * h * h + h * h + h * inter + inter + inter * h
    per_layer_whole = h + 4 * h  # fc2 bias (RowParallelLinear keeps it whole), two LayerNorms
    encoder = (layers + global_layers) * (per_layer_split / tp + per_layer_whole) + 2 * global_layers
    vision_bytes = (patch_linear / tp + embeds_whole + encoder) * b
    projector = (out_dim * text_h + text_h) * b
    vocab = int(text["vocab_size"])
    rows_more = -(-(vocab + 8) // 64) * 64 - -(-vocab // 64) * 64
    head_dim = text_h // int(text["num_attention_heads"])
    cross = len(text.get("cross_attention_layers") or [])
    parts = {
        "vision_tower": float(vision_bytes),
        "multi_modal_projector": float(projector),
        "embeddings_extra_rows": float(rows_more * text_h / tp * b),
        "cross_attention_norms_gates": float(cross * (2 * head_dim + 2) * b),
    }
    sizes = [
        patch_linear // tp * b,
        positions * h * b,
        tile_embedding * b,
    ]
    for _ in range(layers + global_layers):
        sizes += [3 * h * h // tp * b, h * h // tp * b, h * inter // tp * b, inter * h // tp * b]
    return parts, sizes


# ---------------------------------------------------------------------------------------------
# Kimi K2.5 (KimiK25ForConditionalGeneration): MoonViT, its projector and a DeepSeek V3 decoder
# whose routed experts are compressed-tensors W4A16
# ---------------------------------------------------------------------------------------------

KIMI_K25_ARCH = "KimiK25ForConditionalGeneration"
KIMI_K25_SOURCE = (
    f"{SGLANG_SOURCE} {_PY}models/kimi_k25.py (MoonViT3dPretrainedModel, K2VLMultiModalProjector),"
    f" {_PY}configs/kimi_k25.py (KimiK25VisionConfig), {_PY}models/deepseek_v2.py (DeepseekV3ForCausalLM),"
    f" {_PY}layers/quantization/compressed_tensors/schemes/compressed_tensors_wNa16_moe.py"
)
# KimiK25VisionConfig's own defaults (configs/kimi_k25.py lines 36-56): the tower is built from
# num_hidden_layers / hidden_size / num_attention_heads / intermediate_size, which Kimi K2.5's
# config.json leaves to the class (it names them vt_*; the class keeps those as extra attributes)
_MOONVIT_DEFAULTS = {
    "num_hidden_layers": 27,
    "hidden_size": 1152,
    "num_attention_heads": 16,
    "intermediate_size": 4304,
    "patch_size": 14,
    "init_pos_emb_height": 64,
    "init_pos_emb_width": 64,
    "init_pos_emb_time": 4,
    "merge_kernel_size": [2, 2],
    "text_hidden_size": 7168,
}
# compressed-tensors' "ignore" patterns that keep everything but the routed experts unquantized
_KIMI_IGNORED = ("lm_head", "self_attn", "shared_experts", "mlp\\.(gate|up|gate_up|down)_proj")


def _is_kimi_k25(config: Mapping[str, Any]) -> bool:
    return KIMI_K25_ARCH in [str(a) for a in (config.get("architectures") or [])]


def _kimi_expert_scheme(text: Mapping[str, Any]) -> int:
    """The group size of Kimi K2.5's routed-expert INT4 scheme, after checking the
    quantization_config is the one modelled: compressed-tensors pack-quantized, 4-bit symmetric
    int weights in groups, no activation order, and every other linear layer ignored."""
    qc = text.get("quantization_config")
    if not isinstance(qc, Mapping) or str(qc.get("quant_method", "")).lower() != "compressed-tensors":
        raise EngineError(
            "text_config.quantization_config: Kimi K2.5 is modelled with its compressed-tensors W4A16"
            " routed experts only"
        )
    if qc.get("format") != "pack-quantized":
        raise EngineError(f"quantization_config.format {qc.get('format')!r}: only pack-quantized is modelled")
    groups = [g for g in (qc.get("config_groups") or {}).values() if isinstance(g, Mapping)]
    if len(groups) != 1 or not isinstance(groups[0].get("weights"), Mapping):
        raise EngineError("quantization_config.config_groups: one weight scheme is modelled for Kimi K2.5")
    w = groups[0]["weights"]
    if (
        w.get("num_bits") != 4
        or w.get("type") != "int"
        or w.get("strategy") != "group"
        or not w.get("symmetric", False)
        or w.get("actorder")
        or not isinstance(w.get("group_size"), int)
    ):
        raise EngineError(
            "quantization_config.config_groups.*.weights: only symmetric 4-bit int groups without"
            " actorder are modelled for Kimi K2.5"
        )
    ignore = " ".join(str(p) for p in qc.get("ignore") or [])
    missing = [p for p in _KIMI_IGNORED if p not in ignore]
    if missing:
        raise EngineError(
            f"quantization_config.ignore: {missing[0]!r} not ignored; the model keeps attention, the"
            " dense and shared MLPs and the LM head unquantized"
        )
    return int(w["group_size"])


def kimi_k25_moe_backend(accel: Accelerator) -> str:
    """Which W4A16 MoE method SGLang 0.5.23 picks (compressed_tensors.py get_moe_scheme, lines
    912-951): Triton on ROCm and, by default, on SM100 (Blackwell); Marlin elsewhere on CUDA."""
    if accel.vendor.upper() == "AMD":
        return "triton"
    return "triton" if _sm_major(accel) == 10 else "marlin"


def kimi_k25_weight_parts(
    config: Mapping[str, Any], tp: int, *, moe_backend: str = "marlin", dtype_bytes: int = 2
) -> tuple[dict[str, float], list[int]]:
    """Kimi K2.5's weights on one of ``tp`` GPUs as SGLang 0.5.23 builds them, by part, and the
    sizes of its tensors in the order they are allocated (for the caching allocator).

    - ``vision_tower`` (``models/kimi_k25.py`` MoonViT3dPretrainedModel, lines 510-560): the patch
      convolution (``Conv2dLayer``, with bias) and the learnable position table (height x width x
      hidden; its sin-cos time table is a buffer of 4 rows), then per block two LayerNorms, the MLP
      (``kimi_vl_moonvit.py`` MLP2, lines 321-390: plain ``nn.Linear`` fc0/fc1 with biases, whole
      on every rank, as MoonViTEncoderLayer passes no ``use_tensor_parallel``) and
      ``VisionAttention`` (``layers/attention/vision.py`` lines 1123-1235: a QKVParallelLinear and a
      RowParallelLinear over the attention TP ranks, biases on both; ``mm_enable_dp_encoder`` off),
      and a final LayerNorm. Built with no quantization (only ModelSlim quantizes it) and cast to
      the language model's dtype. The 2D rotary table is made at the first image, not at load.
    - ``mm_projector`` (K2VLMultiModalProjector, lines 588-616): a LayerNorm and two
      ReplicatedLinear layers with biases (merge 2 x 2: 4,608 -> 4,608 -> 7,168), whole.
    - the DeepSeek V3 decoder (``models/deepseek_v2.py``): a VocabParallelEmbedding and
      ParallelLMHead; per layer MLA (lines 2069-2163: ``fused_qkv_a_proj_with_mqa`` whole on every
      rank, ``q_b_proj``/``kv_b_proj`` column- and ``o_proj`` row-parallel, two RMSNorms), the
      absorbed ``w_kc``/``w_vc`` copies of ``kv_b_proj`` made after loading
      (``deepseek_common/deepseek_weight_loader.py`` lines 762-786: ``.contiguous()`` copies,
      ``kv_b_proj`` kept), the dense MLP of the first ``first_k_dense_replace`` layers and, in the
      MoE layers, the router (``MoEGate``: experts x hidden in the model dtype and an FP32
      correction bias), the shared expert (DeepseekV2MLP, TP-parallel: SGLang logs "Config does
      not support fused shared expert(s)" for the compressed-tensors checkpoint, lines 3357-3374)
      and the routed experts. All of these but the routed experts stay 16-bit: the checkpoint's
      ``ignore`` list names attention, the shared experts, the dense MLP and the LM head.
    - the routed experts (``compressed_tensors_wNa16_moe.py`` CompressedTensorsWNA16MoE
      ``create_weights``, lines 100-281): per rank ``w13_weight_packed`` [E, hidden/8, 2 x
      inter/TP] and ``w2_weight_packed`` [E, inter/TP/8, hidden] int32 (eight int4 values each),
      ``w13_weight_scale`` [E, hidden/group, 2 x inter/TP] and ``w2_weight_scale`` [E,
      inter/TP/group, hidden] in the model dtype, two [E, 2] FP32 shape tensors, and the act-order
      tensors ``w13_weight_g_idx``/``w13_g_idx_sort_indices`` [E, hidden] and
      ``w2_weight_g_idx``/``w2_g_idx_sort_indices`` [E, inter/TP] int32. The Marlin method
      (``process_weights_after_loading``, lines 282-404) replaces the act-order tensors by empty
      ones without act order; the Triton method (CompressedTensorsWNA16TritonMoE, lines 499-533,
      the ROCm path "Using CompressedTensorsWNA16TritonMoE (ROCm)") only transposes the weights
      and scales into new tensors of the same size and keeps the act-order tensors
      (``expert_act_order_tensors``).
    - the rotary table (``layers/rotary_embedding/rope_variant.py``
      DeepseekScalingRotaryEmbedding: original_max_position_embeddings x factor rows of
      qk_rope_head_dim, FP32 on CUDA and HIP, ``base.py`` lines 115-120), one for all layers.
    """
    if moe_backend not in ("marlin", "triton"):
        raise EngineError(f"moe_backend {moe_backend!r}: 'marlin' or 'triton'")
    text = _text(config)
    vision = config.get("vision_config")
    if not isinstance(vision, Mapping):
        raise EngineError("config vision_config: Kimi K2.5 keeps its MoonViT settings there")
    if "vt_hidden_size" not in vision:
        raise EngineError("config vision_config.vt_hidden_size: needed to size Kimi K2.5's projector")
    group = _kimi_expert_scheme(text)
    b = dtype_bytes
    v = {k: vision.get(k, d) for k, d in _MOONVIT_DEFAULTS.items()}
    vh, vi, vl, vn = (
        int(v[k]) for k in ("hidden_size", "intermediate_size", "num_hidden_layers", "num_attention_heads")
    )
    if vn % tp:
        raise EngineError(f"tp {tp}: MoonViT's {vn} attention heads must divide over it")
    p = int(v["patch_size"])
    sizes: list[int] = []
    tower = [3 * p * p * vh * b, vh * b]  # patch convolution and its bias
    tower += [int(v["init_pos_emb_height"]) * int(v["init_pos_emb_width"]) * vh * b]
    tower += [int(v["init_pos_emb_time"]) * vh * b]  # the sin-cos time table (a buffer)
    for _ in range(vl):
        tower += [vh * b] * 4  # norm0, norm1: weight and bias
        tower += [vi * vh * b, vi * b, vh * vi * b, vh * b]  # MLP2 fc0, fc1 (nn.Linear, whole)
        tower += [3 * vh // tp * vh * b, 3 * vh // tp * b]  # qkv_proj and its bias, sharded
        tower += [vh * (vh // tp) * b, vh * b]  # proj (row-parallel) and its full bias
    tower += [vh * b] * 2  # final_layernorm
    merge = v["merge_kernel_size"]
    mh = int(vision["vt_hidden_size"]) * int(merge[0]) * int(merge[1])
    th = int(v["text_hidden_size"])
    projector = [int(vision["vt_hidden_size"]) * b] * 2 + [mh * mh * b, mh * b, th * mh * b, th * b]
    sizes += tower + projector

    h, layers = int(text["hidden_size"]), int(text["num_hidden_layers"])
    heads = int(text["num_attention_heads"])
    if heads % tp:
        raise EngineError(f"tp {tp}: Kimi K2.5's {heads} attention heads must divide over it")
    hl = heads // tp
    ql, kl, rd = int(text["q_lora_rank"]), int(text["kv_lora_rank"]), int(text["qk_rope_head_dim"])
    nd, vd = int(text["qk_nope_head_dim"]), int(text["v_head_dim"])
    experts, inter = int(text["n_routed_experts"]), int(text["moe_intermediate_size"])
    shared = inter * int(text.get("n_shared_experts") or 0)
    dense_layers, dense_inter = int(text.get("first_k_dense_replace") or 0), int(text["intermediate_size"])
    if inter % tp or (inter // tp) % group or h % group or dense_inter % tp or shared % tp:
        raise EngineError(
            f"tp {tp}: Kimi K2.5's expert ({inter}), shared and dense MLP widths must divide over it"
            f" in whole groups of {group}"
        )
    vocab_rows = -(-int(text["vocab_size"]) // 64) * 64
    rope = _rope_rows_mla(text)
    ip = inter // tp
    embed = vocab_rows // tp * h * b
    parts = {
        "vision_tower": float(sum(tower)),
        "mm_projector": float(sum(projector)),
        "embeddings": float(embed),
        "lm_head": float(embed),
        "attention": 0.0,
        "mla_absorbed_copies": 0.0,
        "mlp": 0.0,
        "experts": 0.0,
        "expert_act_order_tensors": 0.0,
        "routers_norms_other": 0.0,
        "rotary_table": float(rope * rd * 4),
    }
    sizes.append(embed)
    w13 = experts * (h // 8) * 2 * ip * 4
    w2 = experts * (ip // 8) * h * 4
    s13 = experts * (h // group) * 2 * ip * b
    s2 = experts * (ip // group) * h * b
    for i in range(layers):
        # fused_qkv_a_proj_with_mqa, q_a_layernorm, q_b_proj, kv_b_proj, o_proj, kv_a_layernorm
        attn = [h * (ql + kl + rd) * b, hl * (nd + rd) * ql * b, hl * (nd + vd) * kl * b, h * hl * vd * b]
        parts["attention"] += sum(attn)
        parts["routers_norms_other"] += (ql + kl + 2 * h) * b  # two MLA norms, two layer norms
        sizes += [attn[0], ql * b, attn[1], attn[2], attn[3], kl * b]
        if i == 0:
            sizes.append(int(parts["rotary_table"]))  # get_rope's one table, made with layer 0
        if i < dense_layers:
            mlp = [2 * dense_inter // tp * h * b, h * (dense_inter // tp) * b]
            parts["mlp"] += sum(mlp)
            sizes += mlp
        else:
            router = [experts * h * b, experts * 4]
            weights = [w13, w2, s13, s2, experts * 2 * 4, experts * 2 * 4]
            act_order = [experts * h * 4, experts * ip * 4, experts * h * 4, experts * ip * 4]
            mlp = [2 * shared // tp * h * b, h * (shared // tp) * b] if shared else []
            parts["routers_norms_other"] += sum(router) + sum(weights[4:])
            parts["experts"] += sum(weights[:4])
            parts["mlp"] += sum(mlp)
            # the Marlin method frees the act-order tensors after loading (empty replacements)
            kept = act_order if moe_backend == "triton" else []
            parts["expert_act_order_tensors"] += sum(kept)
            sizes += router + weights + kept + mlp
        sizes += [h * b, h * b]  # input and post-attention RMSNorms
    parts["routers_norms_other"] += h * b  # the final norm
    sizes += [h * b, embed]
    copies = [size for _ in range(layers) for size in (kl * hl * nd * b, kl * hl * vd * b)]
    parts["mla_absorbed_copies"] = float(sum(copies))  # w_kc, w_vc, made after loading
    sizes += copies
    parts["allocator_rounding"] = float(caching_allocator_reserved(sizes) - sum(sizes))
    return parts, sizes


def _rope_rows_mla(text: Mapping[str, Any]) -> int:
    """Rows of DeepseekScalingRotaryEmbedding's table: original_max_position_embeddings x factor
    (``rope_variant.py`` _compute_cos_sin_cache), or max_position_embeddings without scaling."""
    rope = text.get("rope_scaling") or text.get("rope_parameters") or {}
    positions = int(text.get("max_position_embeddings") or 0)
    if isinstance(rope, Mapping) and rope.get("factor"):
        original = int(rope.get("original_max_position_embeddings", positions))
        return int(original * float(rope["factor"]))
    return positions


def sglang_weight_parts(
    spec: ModelSpec,
    layout: Any,
    tp: int,
    config: Mapping[str, Any],
    *,
    rules: str = "0.5.23",
    moe_backend: str = "marlin",
) -> dict[str, float]:
    """The weights SGLang's "Load weight end ... mem usage" counts, per GPU, by part.

    vLLM's reader (``vllm_weight_bytes``: same checkpoint formats, same shards, vocabulary padded
    to 64), with two rules of SGLang's own:

    - the rotary cos/sin table stays in FP32 on CUDA (SGLang 0.4.3.post4
      ``layers/rotary_embedding.py`` lines 81-86, "cache needs to be in FP32 for numerical
      stability"; 0.5.23 ``layers/rotary_embedding/base.py`` lines 115-120), twice vLLM's
      model-dtype table; under rules "0.4.0.post1" it is cast to the model dtype (vLLM's
      ``get_rope``, which SGLang 0.4.0.post1's ``models/llama.py`` imports). Gemma 3 under
      0.4.4.post2 keeps no table (``models/gemma3_causal.py``:
      ``Gemma3RotaryEmbedding`` holds only ``inv_freq``);
    - whole allocator segments (``allocator_rounding_bytes``);
    - a reward model (``SEQUENCE_CLASSIFIERS``) has no LM head but a ``num_labels`` x hidden
      score layer (``models/llama_reward.py``), kept whole on every rank (``nn.Linear``);
    - under rules "0.3.5" a model with tied embeddings still gets its own LM head (``models/llama.py``
      and ``models/qwen2.py`` always build a ``ParallelLMHead``); other tied classes are refused
      under those rules, their files not having been read;
    - Llama 3.2 Vision (``MLLAMA_ARCH``): the Llama decoder of ``mllama_text_config`` plus the
      vision tower, projector, 8 more embedding rows and the cross-attention layers' norms and
      gates (``mllama_extra_parts``), all counted in the allocator's segments;
    - Kimi K2.5 (``KIMI_K25_ARCH``): ``kimi_k25_weight_parts``, its own reading of SGLang's files
      (MoonViT, the projector, the MLA decoder with W4A16 routed experts on ``moe_backend``).
    """
    if _is_kimi_k25(config):
        return kimi_k25_weight_parts(config, tp, moe_backend=moe_backend, dtype_bytes=layout.dtype_bytes)[0]
    mllama = _is_mllama(config)
    if mllama:
        config = mllama_text_config(config) | {"_mllama": config}
    parts = dict(vllm_weight_bytes(spec, layout, tp, config))
    classifier = _is_sequence_classifier(config)
    archs = [str(a) for a in (config.get("architectures") or [])]
    own_head = rules == "0.3.5" and spec.tie_word_embeddings and not classifier
    if own_head:
        if not set(archs) & set(_UNTIED_HEAD_035):
            raise EngineError(
                f"rules '0.3.5': architectures {archs or '(none)'} with tie_word_embeddings: whether"
                f" that release shares the embedding with the LM head is known only for"
                f" {', '.join(_UNTIED_HEAD_035)} (they do not)"
            )
        parts["lm_head"] = parts["embeddings"]
    if classifier:
        parts["lm_head"] = float(_num_labels(config) * spec.hidden_size * layout.dtype_bytes)
    rope_config = _without_mrope(config)
    if rules in _OLD_RULES and any(a.startswith("Gemma3") for a in archs):
        parts["rotary_table"] = 0.0
    elif rules in ("0.4.0.post1", "0.3.5"):
        parts["rotary_table"] = float(rotary_table_bytes(spec, rope_config, layout.dtype_bytes))
    else:
        parts["rotary_table"] = float(rotary_table_bytes(spec, rope_config, 4))
    if mllama:
        extra, vision_sizes = mllama_extra_parts(config["_mllama"], tp, layout.dtype_bytes)
        parts.update(extra)
        # created in this order: the vision model, the decoder (its table 8 rows longer), the
        # projector (models/mllama.py MllamaForConditionalGeneration.__init__)
        text_sizes = _parameter_sizes(spec, layout, tp)
        text_sizes[0] += int(extra["embeddings_extra_rows"])
        sizes = vision_sizes + text_sizes + [int(extra["multi_modal_projector"])]
        parts["allocator_rounding"] = float(caching_allocator_reserved(sizes) - sum(sizes))
        return parts
    parts["allocator_rounding"] = allocator_rounding_bytes(
        spec, layout, tp, lm_head=not classifier, own_head=own_head
    )
    return parts


def _without_mrope(config: Mapping[str, Any]) -> Mapping[str, Any]:
    """The config with ``mrope_section`` taken out of its rope settings, so that vLLM's
    ``rotary_table_bytes`` sizes the table as SGLang does: SGLang's MRotaryEmbedding passes
    ``max_position_embeddings`` to RotaryEmbedding unchanged (0.5.23
    ``layers/rotary_embedding/mrope.py`` lines 60-77, built by ``factory.py`` lines 242-255 with
    ``max_position``; YaRNScalingMRotaryEmbedding, lines 440-519, takes the original length x
    factor as the plain YaRN table does; 0.4.3.post4 ``layers/rotary_embedding.py`` lines
    800-815 alike), where vLLM's ``mrope.py`` enlarges it four times."""

    def strip(rope: Any) -> Any:
        if not isinstance(rope, Mapping):
            return rope
        if "mrope_section" in rope:
            return {k: v for k, v in rope.items() if k != "mrope_section"}
        return {k: strip(v) if isinstance(v, Mapping) else v for k, v in rope.items()}

    def fix(section: Mapping[str, Any]) -> dict[str, Any]:
        out = dict(section)
        for key in ("rope_scaling", "rope_parameters"):
            if isinstance(out.get(key), Mapping):
                out[key] = strip(out[key])
        return out

    out = fix(config)
    for key in ("text_config", "llm_config", "language_config"):
        if isinstance(out.get(key), Mapping):
            out[key] = fix(out[key])
    return out


def _context_len(spec: ModelSpec, config: Mapping[str, Any]) -> int:
    """``configs/model_config.py: get_context_length``: the first length key the config has."""
    text = _text(config)
    for key in (
        "max_sequence_length",
        "seq_length",
        "max_seq_len",
        "model_max_length",
        "max_position_embeddings",
    ):
        value = text.get(key)
        if isinstance(value, int) and value > 0:
            return value
    return spec.max_positions or 0


def _resolve_max_running_requests(tokens: int, context_len: int, requested: int | None) -> int:
    """``resolve_max_num_reqs``: 512 requests per context of tokens, within 2048..4096, ≤ half the tokens."""
    estimated = int(tokens / context_len * 512) if context_len else 2048
    estimated = max(min(estimated, 4096), 2048)
    if requested is not None:
        return min(max(1, requested), tokens // 2)
    return min(estimated, tokens // 2)


def _page_align(n: int, page: int) -> int:
    return n // page * page


def sglang_startup(
    config: Mapping[str, Any],
    gpu: str | Accelerator,
    *,
    tp: int = 1,
    mem_fraction_static: float | None = None,
    context_length: int | None = None,
    max_running_requests: int | None = None,
    chunked_prefill_size: int | None = None,
    kv_cache_dtype: str = "auto",
    page_size: int | None = None,
    total_bytes: float | None = None,
    baseline_bytes: float | None = None,
    rules: str = SGLANG_VERSION,
    max_mamba_cache_size: int | None = None,
    mamba_full_memory_ratio: float | None = None,
    mamba_ssm_dtype: str | None = None,
) -> SglangStartup:
    """Predict what SGLang 0.5.23 prints when it starts the model of ``config`` on ``gpu``.

    ``config`` is the model's Hugging Face ``config.json`` (a dict). ``total_bytes`` is the
    memory the device reports (``torch.cuda.mem_get_info()[1]``); by default the sourced reading
    for the catalog row, and a row without one is refused. ``mem_fraction_static=None`` is
    SGLang's default from the GPU's capacity (``default_mem_fraction_static``).
    ``baseline_bytes`` is the free memory SGLang measured before the weights (its "Load weight
    begin. avail mem" line); by default the device total less the measured CUDA/NCCL overhead.
    ``rules`` follows an older release where its rules differ (``SGLANG_RULES``: the default
    fraction, the multimodal reduction, the sliding-window pool).

    Hybrid models with Gated DeltaNet layers (Qwen3-Next, Qwen 3.5) get SGLang 0.5.23's Mamba
    pool first: ``mamba_full_memory_ratio`` (0.9) / (1 + ratio) of the budget buys
    ``max_mamba_cache_size`` request slots of conv + SSM state (``sglang_mamba_state``), the
    rest goes to the full-attention layers' KV, and ``max_running_requests`` is at most
    ``max_mamba_cache_size // 5`` (``MAMBA_SLOTS_PER_REQUEST``). ``max_mamba_cache_size``,
    ``mamba_full_memory_ratio`` and ``mamba_ssm_dtype`` are SGLang's flags of those names.

    Refusals SGLang itself would raise come back as ``verdict="refused"`` with its words: a
    context above the model's limit, weights that leave nothing for the pool (with the smallest
    fraction that would start). What this module does not model raises ``EngineError`` naming the
    field: FP4/MXFP8 KV, recurrent layers or a Mamba-2 family other than Nemotron-H (and any
    state layers under rules older than 0.5.23), MXFP4 experts, speculative drafts, DSA under
    other rules or on other GPUs than Hopper and Blackwell, Llama 3.2 Vision under other rules
    than 0.4.0.post1.

    DeepSeek V3.2 (``index_topk``) gets the DSA pool (``sglang_dsa_cell``): its KV dtype and row
    layout follow the GPU (``sglang_dsa_layout``) and its pages are 64 tokens whatever
    ``page_size`` asks.
    """
    if not isinstance(config, Mapping):
        raise EngineError("config must be the model's config.json object")
    text_view: Mapping[str, Any] = config
    dsa = _is_dsa(config)
    if _is_mllama(config):
        if rules not in MLLAMA_RULES:
            raise EngineError(
                f"rules {rules!r}: Llama 3.2 Vision (MllamaForConditionalGeneration) is modelled only"
                f" as {MLLAMA_SOURCE} builds it (rules {', '.join(MLLAMA_RULES)})"
            )
        text_view = mllama_text_config(config)
    try:
        spec = ModelSpec.from_hf_config(dict(text_view))
    except ValueError as exc:
        raise EngineError(f"config: {exc}") from exc
    accel = resolve_gpu(gpu)
    if not isinstance(tp, int) or tp < 1:
        raise EngineError(f"tp must be a whole number of GPUs, at least 1 (got {tp!r})")
    if kv_cache_dtype in _UNMODELLED_KV:
        raise EngineError(
            f"kv_cache_dtype {kv_cache_dtype!r} is not modelled: {_UNMODELLED_KV[kv_cache_dtype]}"
        )
    if kv_cache_dtype not in KV_DTYPES:
        raise EngineError(f"kv_cache_dtype {kv_cache_dtype!r}: choose one of {', '.join(KV_DTYPES)}")
    if mem_fraction_static is not None and not 0 < float(mem_fraction_static) < 1:
        raise EngineError(f"mem_fraction_static must be between 0 and 1 (got {mem_fraction_static!r})")
    page = 1 if page_size is None else page_size
    if not isinstance(page, int) or page < 1:
        raise EngineError(f"page_size must be a whole number of tokens, at least 1 (got {page_size!r})")
    dsa_notes: list[str] = []
    if dsa:  # model_overrides/deepseek_v2.py sets it whatever was asked; DSATokenToKVPool asserts it
        if page != DSA_PAGE_SIZE and page_size is not None:
            dsa_notes.append(f"SGLang sets page size {DSA_PAGE_SIZE} for DeepSeek DSA (asked {page}).")
        page = DSA_PAGE_SIZE
    if context_length is not None and (not isinstance(context_length, int) or context_length < 1):
        raise EngineError(f"context_length must be a whole number of tokens (got {context_length!r})")
    if max_running_requests is not None and (
        not isinstance(max_running_requests, int) or max_running_requests < 1
    ):
        raise EngineError(
            f"max_running_requests must be a whole number, at least 1 (got {max_running_requests!r})"
        )
    if chunked_prefill_size is not None and (
        not isinstance(chunked_prefill_size, int) or chunked_prefill_size == 0
    ):
        raise EngineError(
            f"chunked_prefill_size must be a whole number of tokens, or -1 (got {chunked_prefill_size!r})"
        )
    if dsa:
        archs = [str(a) for a in (config.get("architectures") or [])]
        if not set(archs) & set(DSA_ARCHS):
            raise EngineError(
                f"architectures {archs or '(none)'} with index_topk: SGLang's DSA pool is modelled for"
                f" {', '.join(DSA_ARCHS)} (DeepSeek V3.2)"
            )
        if rules != "0.5.23":
            raise EngineError(
                f"rules {rules!r}: DeepSeek Sparse Attention's indexer pool is modelled only as"
                " SGLang 0.5.23 sizes it (pool_configurator.py)"
            )
    layout = weight_layout(text_view)
    moe_backend = "marlin"
    if _is_kimi_k25(config):
        group = _kimi_expert_scheme(_text(config))
        moe_backend = kimi_k25_moe_backend(accel)
        layout = WeightLayout(
            f"INT4 routed experts (compressed-tensors W4A16, group {group}, {moe_backend} MoE)",
            layout.dtype,
            "experts",
            4 + 16 / group,
            "compressed-tensors",
            "the routed experts at 4 bits plus a 16-bit scale per group; the rest 16-bit",
        )
    if layout.method == "mxfp4":
        raise EngineError(
            "quantization_config.quant_method 'mxfp4': SGLang's MXFP4 expert layout is not modelled"
        )
    total = float(total_bytes) if total_bytes else reported_memory_bytes(accel)
    total_source = "given" if total_bytes else reported_memory_source(accel)
    if not total:
        raise EngineError(
            f"{accel.name}: no sourced reading of the memory this device reports. Enter the total"
            " your device reports (torch.cuda.mem_get_info()[1]) in 'Memory the GPU reports'."
        )
    # SGLang reads the capacity its defaults depend on from nvidia-smi (MiB): the sourced NVML total
    # where this GPU has one and no total was given, else the total the device reports.
    smi = smi_mib(accel) if not total_bytes else None
    capacity = smi * MiB if smi else total
    defaults = default_mem_fraction_static(
        capacity,
        tp=tp,
        chunked_prefill_size=chunked_prefill_size,
        max_running_requests=max_running_requests,
        mla=spec.uses_mla,
        config=config,
        rules=rules,
    )
    fraction = (
        float(mem_fraction_static) if mem_fraction_static is not None else defaults["mem_fraction_static"]
    )
    notes: list[str] = []
    if rules in _OLD_RULES and config.get("vision_config"):
        # model_runner.py __init__ (0.4.4.post2): any fraction of a multimodal model times 0.95
        fraction *= 0.95
        notes.append(
            f"SGLang {rules} lowers --mem-fraction-static of a multimodal model by 0.95"
            f" (model_runner.py): {fraction:.3f}."
        )
    kv_value = KV_DTYPES[kv_cache_dtype] or layout.dtype_bytes
    kv_label = {1: "fp8", 2: layout.dtype, 4: "float32"}.get(kv_value, layout.dtype)
    if kv_cache_dtype in ("fp8_e4m3", "fp8_e5m2"):
        kv_label = kv_cache_dtype
    if dsa:
        major = _sm_major(accel)
        if major is None:
            raise EngineError(
                f"{accel.name} ({accel.architecture}): SGLang's DSA defaults are modelled for Hopper"
                " and Blackwell GPUs"
            )
        dsa_kv, scaled = sglang_dsa_layout(kv_cache_dtype, major)
        cell = sglang_dsa_cell(spec, config, kv_dtype=dsa_kv, scaled_fp8=scaled)
        kv_label = dsa_kv
        notes.extend(dsa_notes)
        notes.append(
            f"DeepSeek DSA: {dsa_kv} KV ({'scaled FP8 rows, flashmla_kv' if scaled else 'raw rows'}),"
            f" {cell.full_bytes - cell.indexer_bytes:,} bytes of MLA latent and {cell.indexer_bytes:,} of"
            f" indexer K cache a token over {cell.full_layers} layers; pages of {page} tokens."
        )
    else:
        cell = sglang_cell(spec, tp=tp, kv_bytes=kv_value, single_pool=rules in _OLD_RULES)
    mamba = None
    if {"linear", "ssm"} & set(spec.kinds()):
        if rules != "0.5.23":
            raise EngineError(
                f"rules {rules!r}: the Mamba pool of linear-attention layers is modelled only as"
                " SGLang 0.5.23 sizes it (kv_cache_configurator.py _handle_max_mamba_cache)"
            )
        mamba = sglang_mamba_state(config, spec, tp=tp, mamba_ssm_dtype=mamba_ssm_dtype)
    elif max_mamba_cache_size is not None or mamba_full_memory_ratio is not None:
        raise EngineError(
            "max_mamba_cache_size / mamba_full_memory_ratio: this model has no linear-attention"
            " layers, so SGLang keeps no Mamba pool"
        )
    if max_mamba_cache_size is not None and (
        not isinstance(max_mamba_cache_size, int) or max_mamba_cache_size < 1
    ):
        raise EngineError(
            f"max_mamba_cache_size must be a whole number of request slots, at least 1"
            f" (got {max_mamba_cache_size!r})"
        )
    ratio = MAMBA_FULL_MEMORY_RATIO if mamba_full_memory_ratio is None else mamba_full_memory_ratio
    if not isinstance(ratio, (int, float)) or not ratio > 0:
        raise EngineError(f"mamba_full_memory_ratio must be above 0 (got {mamba_full_memory_ratio!r})")
    derived_len = _context_len(spec, config)
    context_len = context_length or derived_len
    weights_parts = sglang_weight_parts(spec, layout, tp, config, rules=rules, moe_backend=moe_backend)
    weights = float(sum(weights_parts.values()))
    if baseline_bytes is not None:
        if not isinstance(baseline_bytes, (int, float)) or not 0 < baseline_bytes <= total:
            raise EngineError(
                f"baseline_bytes must be the free memory before the weights, above 0 and at most the"
                f" device total (got {baseline_bytes!r})"
            )
        baseline = float(baseline_bytes)
    else:
        overhead = (BASELINE_OVERHEAD_TP1 if tp == 1 else BASELINE_OVERHEAD_TPN)[1]
        baseline = total - overhead
        if tp > 1 and fabric_of(accel) == "pcie":
            notes.append(
                "The memory CUDA and NCCL take before the weights was measured on NVLink nodes"
                f" ({BASELINE_OVERHEAD_TPN[0] / GiB:.2f}-{BASELINE_OVERHEAD_TPN[2] / GiB:.2f} GiB); a PCIe"
                " node sets up no NVLink buffers and takes less (0.57 GiB on one 4 x RTX 4090 run), so"
                " this pool is likely too small: give the log's 'Load weight begin' figure as the baseline."
            )
    after_weights = baseline - weights
    slack = baseline * (1 - fraction)
    # a multimodal checkpoint keeps 100 MiB of the budget for its embedding cache (0.5.23 only)
    mm_reserved = MM_RUNTIME_RESERVATION if rules == "0.5.23" and config.get("vision_config") else 0.0
    pool = after_weights - slack - mm_reserved
    minimum = 1 - after_weights / baseline if baseline > 0 else 1.0
    base: dict[str, Any] = {
        "model": spec.name or str(_text(config).get("model_type", "model")),
        "gpu": accel.name,
        "tp": tp,
        "total_bytes": total,
        "baseline_bytes": baseline,
        "mem_fraction_static": fraction,
        "weights_bytes": weights,
        "slack_bytes": slack,
        "pool_bytes": pool,
        "cell": cell,
        "page_size": page,
        "context_len": context_len,
        "chunked_prefill_size": defaults["chunked_prefill_size"],
        "max_prefill_tokens": DEFAULT_MAX_PREFILL_TOKENS,
        "cuda_graph_max_bs": defaults["cuda_graph_max_bs"],
        "kv_cache_dtype": kv_label,
        "weights_label": layout.label,
        "min_mem_fraction_static": minimum,
        "fraction_source": "given" if mem_fraction_static is not None else "default",
        "total_source": total_source,
        "weights_parts": weights_parts,
        "mamba": mamba,
        "mm_reserved_bytes": mm_reserved,
    }

    def refused(message: str) -> SglangStartup:
        return SglangStartup(
            **base,
            kv_bytes=0.0,
            max_total_num_tokens=0,
            swa_tokens=0,
            max_running_requests=0,
            verdict="refused",
            message=message,
            notes=tuple(notes),
        )

    if derived_len and context_len > derived_len:
        return refused(
            f"User-specified context_length ({context_len}) is greater than the derived context_length"
            f" ({derived_len}) of the model's config.json: SGLang refuses to start"
            " (SGLANG_ALLOW_OVERWRITE_LONGER_CONTEXT_LEN=1 overrides it)."
        )
    heads = spec.num_heads
    if heads % tp:
        return refused(f"Total number of attention heads ({heads}) must be divisible by tp size ({tp}).")
    if weights >= baseline:
        # the weights do not load at all: PyTorch's allocator fails mid-load (CUDA out of memory),
        # before SGLang's own profile and its --mem-fraction-static advice (model_runner.py)
        return refused(
            f"The weights ({weights / GiB:.2f} GiB a GPU) do not fit in the {baseline / GiB:.2f} GiB"
            " free before loading: SGLang stops with CUDA out of memory while it loads them, whatever"
            " --mem-fraction-static says. Spread them over more GPUs (--tp) or use a smaller format."
        )
    slots = 0
    if mamba is not None:  # _profile_available_bytes calls _handle_max_mamba_cache before its check
        per = mamba.per_request_bytes
        slots = (
            max_mamba_cache_size
            if max_mamba_cache_size is not None
            else sglang_mamba_cache_size(pool, per, float(ratio))
        )
        if slots <= 0:
            return refused(
                "Not enough GPU memory for hybrid (mamba/linear-attention) state cache. Computed"
                f" max_mamba_cache_size={slots} (total_rest_memory={pool / GiB:.2f} GB,"
                f" mamba_cache_per_req={per / MiB:.2f} MB)."
                + (" " + sglang_min_mem_fraction_message(fraction, minimum) if pool <= 0 else "")
            )
        # _handle_max_mamba_cache returns what the slots (+1 padding slot) leave for the KV
        pool -= (slots + 1) * per
        base["max_mamba_cache_size"] = slots
    if pool <= 0:
        return refused(sglang_min_mem_fraction_message(fraction, minimum))
    pool_int = int(pool)
    if cell.full_bytes == 0:
        raise EngineError("a model with no attention layers: SGLang's pure-Mamba pool is not modelled")
    tokens = _page_align(int(pool_int // cell.bytes_per_token), page)
    swa_tokens = _page_align(int(tokens * SWA_FULL_TOKENS_RATIO), page) if cell.swa_layers else 0
    if tokens <= 0:
        return refused(
            "Not enough memory. Please try to increase --mem-fraction-static."
            f" Current value: mem_fraction_static={fraction}"
        )
    # memory_pool.py allocates size + page_size slots per layer (slot 0 is the padding slot)
    kv = (tokens + page) * cell.full_bytes + ((swa_tokens + page) * cell.swa_bytes if cell.swa_layers else 0)
    reqs = _resolve_max_running_requests(tokens, context_len, max_running_requests)
    if mamba is not None:
        cap = slots // MAMBA_SLOTS_PER_REQUEST
        if cap <= 0:
            return refused(
                "Hybrid (mamba/linear-attention) state cache is too small to serve any requests."
                f" max_mamba_cache_size={slots}, mamba_ratio={MAMBA_SLOTS_PER_REQUEST},"
                f" resulting max_num_reqs={cap}."
            )
        if cap < reqs:
            notes.append(
                f"max_running_requests is capped to {cap} by the mamba state cache"
                f" (max_mamba_cache_size={slots}, {MAMBA_SLOTS_PER_REQUEST} state slots per request)."
            )
        reqs = min(reqs, cap)
        notes.append(
            f"Mamba pool: {slots:,} request slots of {mamba.per_request_bytes / MiB:,.2f} MiB"
            f" ({mamba.layers} {mamba.kind} layers; SSM state {mamba.ssm_dtype})."
        )
    if cell.swa_layers:
        notes.append(
            f"Sliding-window layers keep {swa_tokens:,} tokens ({SWA_FULL_TOKENS_RATIO:g} × the full"
            " pool, swa_full_tokens_ratio); full layers keep max_total_num_tokens."
        )
    return SglangStartup(
        **base,
        kv_bytes=float(kv),
        max_total_num_tokens=tokens,
        swa_tokens=swa_tokens,
        max_running_requests=reqs,
        verdict="fits",
        message=(
            f"{tokens:,} tokens of KV cache: {tokens / context_len:.2f} requests of {context_len:,}"
            " tokens at once."
            if context_len
            else f"{tokens:,} tokens of KV cache."
        ),
        notes=tuple(notes),
    )


def sglang_min_mem_fraction_message(fraction: float, minimum: float) -> str:
    """SGLang's refusal when the weights leave nothing for the pool (``_profile_available_bytes``)."""
    suggested = math.ceil(minimum * 1000) / 1000
    return (
        f"Loaded weights leave no GPU memory for the KV cache under --mem-fraction-static={fraction}."
        f" Raise --mem-fraction-static above {suggested:.3f} (minimum viable = 1 - available/pre ="
        f" {minimum:.4f}). If using speculative decoding, draft weights are now counted."
    )


def sglang_min_mem_fraction(
    config: Mapping[str, Any],
    gpu: str | Accelerator,
    *,
    tp: int = 1,
    total_bytes: float | None = None,
) -> float:
    """The smallest ``--mem-fraction-static`` that leaves the pool any memory, rounded up to
    3 decimals as SGLang 0.5.23 suggests it (``1 − free after weights / baseline``). A value
    of 1 or more means no fraction starts it: the weights alone exceed the baseline."""
    s = sglang_startup(config, gpu, tp=tp, mem_fraction_static=0.5, total_bytes=total_bytes)
    return math.ceil(s.min_mem_fraction_static * 1000) / 1000


def sglang_log_lines(s: SglangStartup) -> list[str]:
    """The lines SGLang prints for this start-up (``model_runner.py``, ``memory_pool.py``,
    ``scheduler.py``), with the predicted figures."""
    gb = GiB
    lines = [f"Load weight begin. avail mem={s.baseline_bytes / gb:.2f} GB"]
    if s.weights_bytes >= s.baseline_bytes:  # the load itself runs out of memory: no "Load weight end"
        return [*lines, s.message]
    lines.append(
        f"Load weight end. avail mem={(s.baseline_bytes - s.weights_bytes) / gb:.2f} GB,"
        f" mem usage={s.weights_bytes / gb:.2f} GB."
    )
    if not s.fits:
        return [*lines, s.message]
    if s.cell.swa_layers:
        lines.append(
            f"Use sliding window memory pool. full_layer_tokens={s.max_total_num_tokens},"
            f" swa_layer_tokens={s.swa_tokens}"
        )
    if s.mamba is not None:  # memory_pool.py MambaPool.__init__ (lines 1003-1009)
        lines.append(
            f"Mamba Cache is allocated. max_mamba_cache_size: {s.max_mamba_cache_size},"
            f" conv_state size: {s.mamba_conv_bytes / gb:.2f}GB,"
            f" ssm_state size: {s.mamba_ssm_bytes / gb:.2f}GB "
        )
    if s.cell.arch.startswith("MLA"):
        lines.append(
            f"KV Cache is allocated. #tokens: {s.max_total_num_tokens}, KV size: {s.kv_bytes / gb:.2f} GB"
        )
    else:
        half = s.kv_bytes / 2 / gb
        lines.append(
            f"KV Cache is allocated. #tokens: {s.max_total_num_tokens}, K size: {half:.2f} GB,"
            f" V size: {half:.2f} GB"
        )
    lines.append(
        f"max_total_num_tokens={s.max_total_num_tokens}, chunked_prefill_size={s.chunked_prefill_size},"
        f" max_prefill_tokens={s.max_prefill_tokens}, max_running_requests={s.max_running_requests},"
        f" context_len={s.context_len}"
    )
    return lines


# ---------------------------------------------------------------------------------------------
# Reading a real log
# ---------------------------------------------------------------------------------------------

MAX_LOG_CHARS = 2_000_000
_NUM = r"([0-9][0-9,]*(?:\.[0-9]+)?)"
_FIELDS: tuple[tuple[str, str, float | None], ...] = (
    # key, pattern (first group is the figure), unit (None: a count)
    ("baseline_bytes", r"Load weight begin\. avail mem=" + _NUM + r" ?GB", GiB),
    ("after_weights_bytes", r"Load weight end\..*?avail mem=" + _NUM + r" ?GB", GiB),
    ("weights_bytes", r"Load weight end\..*?mem usage=" + _NUM + r" ?GB", GiB),
    ("distributed_bytes", r"Init torch distributed ends\. mem usage=" + _NUM + r" ?GB", GiB),
    ("kv_tokens", r"KV Cache is allocated\..*?#tokens: " + _NUM, None),
    ("k_bytes", r"KV Cache is allocated\..*?K size: " + _NUM + r" ?GB", GiB),
    ("v_bytes", r"KV Cache is allocated\..*?V size: " + _NUM + r" ?GB", GiB),
    ("kv_latent_bytes", r"KV Cache is allocated\..*?KV size: " + _NUM + r" ?GB", GiB),
    ("after_pool_bytes", r"Memory pool end\. avail mem=" + _NUM + r" ?GB", GiB),
    ("cuda_graph_bytes", r"Capture cuda graph end\..*?mem usage=" + _NUM + r" ?GB", GiB),
    ("max_total_num_tokens", r"max_total_num_tokens=" + _NUM, None),
    ("chunked_prefill_size", r"max_total_num_tokens=.*?chunked_prefill_size=(-?[0-9]+)", None),
    ("max_prefill_tokens", r"max_prefill_tokens=" + _NUM, None),
    ("max_running_requests", r"max_total_num_tokens=.*?max_running_requests=" + _NUM, None),
    ("context_len", r"max_total_num_tokens=.*?context_len=" + _NUM, None),
    ("available_gpu_mem_bytes", r"available_gpu_mem=" + _NUM + r" ?GB", GiB),
    ("max_mamba_cache_size", r"Mamba Cache is allocated\. max_mamba_cache_size: " + _NUM, None),
    ("mamba_conv_bytes", r"Mamba Cache is allocated\..*?conv_state size: " + _NUM + r" ?GB", GiB),
    ("mamba_ssm_bytes", r"Mamba Cache is allocated\..*?ssm_state size: " + _NUM + r" ?GB", GiB),
    ("full_layer_tokens", r"full_layer_tokens=" + _NUM, None),
    ("swa_layer_tokens", r"swa_layer_tokens=" + _NUM, None),
)
_COMPILED = tuple((key, re.compile(rx), unit) for key, rx, unit in _FIELDS)
_BEGIN = re.compile(
    r"^.*?\b((?:DP[0-9]+ )?TP[0-9]+)?\]? ?Load weight begin\. avail mem=" + _NUM, re.MULTILINE
)
_ARGS = {
    "mem_fraction_static": (r"mem_fraction_static=([0-9.]+)", r"--mem-fraction-static[ =]([0-9.]+)", float),
    "tp_size": (r"\btp_size=([0-9]+)", r"--(?:tp|tp-size|tensor-parallel-size)[ =]([0-9]+)", int),
    "context_length": (r"\bcontext_length=([0-9]+)", r"--context-length[ =]([0-9]+)", int),
    "page_size": (r"\bpage_size=([0-9]+)", r"--page-size[ =]([0-9]+)", int),
    "kv_cache_dtype": (r"kv_cache_dtype='([a-z0-9_]+)'", r"--kv-cache-dtype[ =]([a-z0-9_]+)", str),
    "model_path": (r"model_path='([^']+)'", r"--model(?:-path)?[ =](\S+)", str),
}
_VERSION = re.compile(
    r"(?:sglang(?:[ _-]?version)?\s*[:=]=?\s*|lmsysorg/sglang:v?|sglang==|SGLang v)"
    r"v?([0-9]+\.[0-9]+\.[0-9]+(?:\.post[0-9]+|rc[0-9]+|\.dev[0-9]+)?)",
    re.IGNORECASE,
)


def parse_sglang_log(text: str) -> dict[str, Any]:
    """Every memory figure of an SGLang start-up log, in bytes (SGLang's "GB" is 2^30 bytes).

    Keys: ``engine`` ("sglang"), ``version`` (from an ``sglang: x.y.z`` / ``sglang==x.y.z`` /
    image-tag line, else None), the server arguments it shows (``mem_fraction_static``,
    ``tp_size``, ``context_length``, ``page_size``, ``kv_cache_dtype``, ``model_path``), and the
    figures of rank 0's lines: ``baseline_bytes`` (Load weight begin), ``after_weights_bytes``
    and ``weights_bytes`` (Load weight end), ``kv_tokens``, ``k_bytes``/``v_bytes`` or
    ``kv_latent_bytes``, ``kv_bytes`` (their sum), ``after_pool_bytes``, ``cuda_graph_bytes``,
    ``max_total_num_tokens``, ``chunked_prefill_size``, ``max_prefill_tokens``,
    ``max_running_requests``, ``context_len``, ``available_gpu_mem_bytes``, the Mamba pool of a
    hybrid model (``max_mamba_cache_size``, ``mamba_conv_bytes``, ``mamba_ssm_bytes``), and
    ``baseline_min_bytes`` (the least "Load weight begin" over the ranks, the baseline SGLang
    uses) with ``baseline_ranks``. Raises ``LogError``
    when none of SGLang's memory lines is there.
    """
    if not isinstance(text, str) or not text.strip():
        raise LogError("the log is empty: paste the lines SGLang printed as it started")
    if len(text) > MAX_LOG_CHARS:
        raise LogError(f"the log is longer than {MAX_LOG_CHARS:,} characters: paste the start-up lines only")
    found: dict[str, Any] = {"engine": "sglang", "version": None}
    for key, rx, unit in _COMPILED:
        m = rx.search(text)
        if m:
            value = float(m.group(1).replace(",", ""))
            found[key] = value * unit if unit else int(value)
    for key, (arg_rx, cli_rx, kind) in _ARGS.items():
        m = re.search(arg_rx, text) or re.search(cli_rx, text)
        if m:
            try:
                found[key] = kind(m.group(1))
            except ValueError:
                continue
    m = _VERSION.search(text)
    if m:
        found["version"] = m.group(1)
    # SGLang sizes the pool from the least free memory over the ranks (bootstrap.py:
    # measure_pre_model_load_memory, get_available_gpu_memory(distributed=True)); each rank prints
    # its own. A rank's later "Load weight begin" (a speculative draft) is not a baseline.
    begins: dict[str, float] = {}
    for m in _BEGIN.finditer(text):
        begins.setdefault(m.group(1) or "", float(m.group(2).replace(",", "")) * GiB)
    if begins:
        found["baseline_min_bytes"] = min(begins.values())
        found["baseline_ranks"] = len(begins)
    if "k_bytes" in found and "v_bytes" in found:
        found["kv_bytes"] = found["k_bytes"] + found["v_bytes"]
    elif "kv_latent_bytes" in found:
        found["kv_bytes"] = found["kv_latent_bytes"]
    figures = {k for k, _, _ in _FIELDS}
    if not figures & found.keys():
        raise LogError(
            "This looks like SGLang, but none of its memory lines is here (Load weight end, KV Cache is"
            " allocated, max_total_num_tokens=): paste the lines it printed as it started."
        )
    return found
