"""llama.cpp's (and Ollama's) start-up memory, as the pinned llama.cpp build's own code computes it,
and a reader for the lines it prints.

Pinned build: llama.cpp ``ec98e2002`` (December 2025), the tree Ollama vendored in
``llama/llama.cpp`` for its 2026 releases v0.15.5 .. v0.24 (Ollama commit b1fccabb3, Makefile.sync
``FETCH_HEAD=ec98e2002``); the quantization rules were checked unchanged against llama.cpp
007dbbf (src/llama-quant.cpp). Every term names the file it follows:

- GGUF weights: each tensor's type from the quantization preset
  (``src/llama-quant.cpp: llama_tensor_get_type_impl``), each type's block size and bytes
  (``ggml/src/ggml-common.h``, ``data/gguf_types.csv``), the tensors in the file's order
  (``src/llama-model-loader.h: weight_name_comparer``), so the "file size" and each device's
  "model buffer size" for ``-ngl``, ``--tensor-split``, ``--n-cpu-moe`` and ``-ot``
  (``src/llama-model.cpp: load_tensors``: the input layer on the CPU; which layers ``-ngl k``
  offloads depends on the build, see below; a CPU buffer that
  maps the file covers the file range of its tensors; with ``--no-mmap`` the host's tensors are
  allocated, in the GPU's pinned host buffer where CUDA runs their op, and tensors overridden to
  the CPU in the plain CPU buffer before llama.cpp PR #14990; with no ``-ts`` the layers split by
  each device's free memory, "default split, by free memory"). Checked against mainline logs with
  the experts on the CPU (``-ot``) on one and two GPUs, with and without mmap (ik_llama.cpp#514 and
  discussion 357: every model buffer within 0.03 %). On Metal the device buffer is such a
  range too (``llama-model-loader.cpp: get_mapping_range``), so it depends on the file's tensor
  order: files llama-quantize writes from llama.cpp b3999 (PR #9935, ``weight_name_comparer``
  order) put output.weight before token_embd and the range spans the whole file; a file that
  existed before 2024-10-31 (``file_date``) keeps its converter's order, token_embd first, and
  maps the file less token_embd (llama.cpp#8886, a convert.py file of spring 2024: 4988.00 MiB
  as printed; 5332.44 MiB in quantize order).
- Which layers ``-ngl k`` puts on the GPUs (``src/llama-model.cpp: load_tensors``), by build:
  the pinned ec98e2002 and mainline builds up to b7376 offload the repeating layers first, from
  the last one down, and the output layer only when every block is on the GPU
  (``i_gpu_start = max(n_layer - k, 0)``: ``-ngl 2`` on 24 blocks puts blocks 22-23 there, no
  output). llama.cpp PR #18148 ("llama: offload output layer to GPU first", JohannesGaessler,
  https://github.com/ggml-org/llama.cpp/pull/18148) moved the output layer first
  (``i_gpu_start = max(n_layer + 1 - k, 0)``, ``dev_output = get_layer_buft_list(n_layer)``): the
  output layer, then the last k - 1 blocks (``-ngl 2``: the output layer and block 23); both print
  "offloaded 2/25 layers". Builds from b7548 have it (``build``): b7376 (380b4c984, vendored in
  Ollama PR #13451's commit "GGML update to 380b4c984") still computes
  ``std::max((int) hparams.n_layer - n_gpu_layers, (int) 0)``; b7548 (7ac890213, vendored in
  Ollama PR #13570's commit "Update to b7548") computes
  ``std::max(int(hparams.n_layer) + 1 - n_gpu_layers, 0)``; each b-number is the one its binary
  prints ("version: 7376 (380b4c984)", "version: 7548 (7ac890213)"). The merge lies between;
  a partial offload on a build in between is refused, its rule not being known.
  Every figure that follows from the placement follows the rule: the offloaded count, each
  device's model buffer and KV cache, and the -ngl that ``fit`` finds. Three real b7972
  partial offloads reproduce it (llama-server on a Radeon Pro VII: tests/data
  llamacpp_startups.jsonl, the klimtech-* rows).
- Later builds: llama.cpp PR #21277 (April 2026) keeps a sliding-window model's SWA cache in
  f16 whatever -ctk asks; a quantized cache on such a model is refused after b7972 (the build
  it landed in is not known here).
- Sliding-window cache by build: up to b5359 (de4c07f9, vendored by Ollama v0.7.0:
  ``src/llama-kv-cache.cpp``:103-104) every layer keeps the full context; from b7376 (380b4c984)
  the rule below; a sliding-window model on a build in between is refused (PR #13194, #13833).
- KV cache as allocated (``src/llama-context.cpp``: n_ctx padded to 256, one stream or one per
  sequence; ``src/llama-kv-cache.cpp``: one K and one V tensor per layer, per stream;
  ``src/llama-kv-cache-iswa.cpp``: sliding-window layers keep ``pad256(min(n_ctx_seq,
  n_swa*(unified ? n_seq : 1) + n_ubatch))`` cells).
  llama.cpp PR #21277 (2026-04-01) kept the sliding-window part f16 under a quantized KV cache;
  PR #21332 reverted it the next day ("in some cases the SWA cache actually takes significant
  portion of memory"), so, as in this build, both parts take the requested type.
  Checked against live llama-server allocations that unsloth reported (unslothai/unsloth#7530:
  Gemma 3 270M, 27.0 MiB at -c 1024 -np 3, 18.0 MiB at -np 4; 24 + 15 x np MiB at -c 8192).
- Hybrids (``hybrid_cache``): Qwen3-Next / Qwen3.5 keep KV on their full-attention layers only
  and one recurrent state per sequence (``src/llama-memory-hybrid.cpp``,
  ``src/llama-memory-recurrent.cpp``, ``src/llama-hparams.cpp``); their weights are not sized.
- Compute buffer per device. For a dense llama, qwen2 or qwen3 model on one GPU or several in
  layer-split mode (``reserve_graph_buffers``; ``reserve_compute_buffers`` for one GPU)
  the reserve graph is walked as the build does it: ``src/llama-context.cpp: graph_reserve`` (one
  micro-batch of ``n_ubatch`` tokens, all outputs), the graph of ``src/models/llama.cpp`` and
  ``src/llama-graph.cpp``, ``ggml-backend.cpp: ggml_backend_sched_split_graph`` (at 32 tokens or
  more a CPU layer's ops run on the GPU, ``ggml-cuda.cu: ggml_backend_cuda_device_offload_op``,
  each split copying in its inputs from the CPU: weights, the KQ mask, the K and V views over
  every cell) and ``ggml-alloc.c: ggml_gallocr_alloc_graph_impl`` / ``ggml_dyn_tallocr_alloc``
  (best-fit placement, freed space reused; the buffer is the high-water mark). Checked against
  six logs of three builds: 300.75, 304.00, 422.00 and 699.00 MiB reproduced to the printed
  figure, --fit's projections (26,973 and 11,602 MiB) and the graph splits (255, 114, 2, 2).
  A log that prints ``llama_new_context_with_model`` (builds up to early 2025) is walked on that
  build's graph (``legacy_graph``; llama.cpp ba1cb19cd as Ollama v0.5.7 vendored it: K/V stored
  by ggml_cpy with no set_rows indices, silu then mul in place where the pinned build fuses a
  swiglu that is not): a 2024 build's 2,094.50 and 70.51 MiB come out as printed.
  Every layer on several GPUs is run as a pipeline (``src/llama-context.cpp``: more than one
  device, -ngl above n_layer, split mode layer, offload_kqv, no tensor overrides;
  ``ggml-backend.cpp ggml_backend_sched_new_ext``: n_copies = GGML_SCHED_MAX_COPIES = 4): each
  layer's ops run on the GPU that holds it, a split starts at the next GPU's first layer, and
  ``ggml_backend_sched_split_graph`` makes every split input (the hidden state, the KQ mask,
  positions, indices, output ids) and every graph input n_copies times, flagged input and output
  so ``ggml-alloc.c`` places them first and never frees them: llama.cpp#11200's two RTX 3090s
  (Qwen2.5-32B shapes, -ts 41,24, 32,768 q8_0 cells) come out as printed, 233.00 / 237.51 MiB on
  the GPUs and 133.01 MiB on the host. The same walk gives the host's
  compute buffer (CUDA_Host / ROCm_Host, on the CPU device): 12.01 MiB as printed; -3.8 % and
  -4.9 % on the b7972 logs, one n_embd x n_ubatch f32 input short (later builds always allocate
  an embeddings input, llama.cpp PR #18550; not in the pinned tree). Otherwise (MoE, sliding-window,
  fused-QKV models, Metal, Ollama's own engine) the largest set of live tensors of
  that graph, a derived estimate labelled so (0.0 %, -0.4 %, +1.4 % on full offloads); with
  expert tensors in host memory the first GPU also holds the copy of one of them, estimated
  from the largest (five logs on two machines: -7.0 % .. +1.1 %). There the host's compute
  buffer is the graph inputs (``_host_input_bytes``: the token embeddings gathered on the CPU,
  the f32 KQ mask per cache, tokens, positions, output ids, set_rows's K/V indices by build):
  23.01, 40.01, 72.01, 40.01 MiB (phi-4 via Ollama's runner, three Qwen3-235B -ot logs) and
  Metal's CPU buffer 21.01 MiB (Gemma 3, b5359 rules) as printed; b5622 (between b5359 and
  b7376, set_rows not placed) gets the named range 36.01-38.01 MiB, printed 36.01. With no
  layer offloaded (or a CPU-only build) the CPU's own compute buffer is that estimate for a
  device holding every layer and the output: 300.75 and 304.75 MiB as printed (two Qwen3 MoE
  logs, b5273 CPU-only and b5269 with -ngl 0; the latter a BLAS build, where the BLAS backend
  prints that figure, the output's MUL_MAT with its copied input, the same output step, and
  the CPU backend's CUDA_Host buffer is not modelled). A GGML_BLAS build (``blas``) has a BLAS backend
  too, whose buffer (printed "CPU" beside CUDA_Host) holds the batch MUL_MATs on host weights
  with their copied input (``_blas_compute_bytes``): 8.25 MiB as printed for the MoE routers
  left on the CPU (ik_llama.cpp discussion 357, b5269 with OpenBLAS).
- Ollama: its defaults (``envconfig/config.go``, ``server/routes.go``, ``llm/server.go``) and its
  layer-offload decision (``llm/server.go: buildLayout``/``assignLayers``/``greedyFit``), the
  rules of v0.15.5 to v0.25.0-rc0; another release is refused by version (from v0.30.0 Ollama
  runs upstream llama-server at the build its LLAMA_CPP_VERSION names).

Pure Python, bytes throughout; MiB = 2^20 bytes as llama.cpp prints them.
"""

from __future__ import annotations

import csv
import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import cache, cached_property, lru_cache
from pathlib import Path
from typing import Any

from simulators.engines.device import reported_memory_bytes
from simulators.engines.ledger import EngineError, GiB, Ledger, LogError, MiB, Term, resolve_gpu
from simulators.hardware import Accelerator

LLAMACPP_VERSION = "ec98e2002"
LLAMACPP_SOURCE = "llama.cpp ec98e2002 (vendored by Ollama v0.15.5, llama/llama.cpp)"
OLLAMA_VERSION = "0.15.5"
OLLAMA_SOURCE = "Ollama v0.15.5 (commit b1fccabb3)"
# The Ollama releases whose rules ollama_startup follows, read in the Ollama repository's tags:
# from v0.15.5 (server/routes.go's VRAM-tiered default context, commit 0334ffa62, first tagged
# v0.15.5-rc0; v0.14.x-v0.15.4 default to a flat 4096 tokens, envconfig OLLAMA_CONTEXT_LENGTH)
# up to v0.25.0-rc0, the last tag whose llm/server.go still runs Ollama's own scheduler
# (buildLayout/assignLayers/greedyFit, unchanged from v0.15.5 in v0.24.0) over the vendored
# ec98e2002 (Makefile.sync FETCH_HEAD from v0.14.0). From v0.30.0 llm/llama_server.go starts
# upstream llama-server with -c num_ctx x parallel and -np, and passes no -ngl by default, so
# llama-server's own --fit places the layers: another engine's rules.
OLLAMA_RULES_FROM = (0, 15, 5)
OLLAMA_RULES_BEFORE = (0, 30, 0)
_RE_OLLAMA_VERSION_ARG = re.compile(r"v?(\d+)\.(\d+)\.(\d+)(?:-rc\d+)?")

DATA_DIR = Path(__file__).resolve().parent.parent / "data"
GGUF_TYPES_CSV = DATA_DIR / "gguf_types.csv"
OLLAMA_LLAMACPP_BUILDS_CSV = DATA_DIR / "ollama_llamacpp_builds.csv"  # each release's LLAMA_CPP_VERSION

GGUF_ALIGNMENT = 32  # gguf.h GGUF_DEFAULT_ALIGNMENT: each tensor's data starts on a 32-byte boundary
CUDA_ALIGNMENT = 128  # ggml-cuda.cu ggml_backend_cuda_buffer_type_get_alignment
CUDA_MATRIX_ROW_PADDING = 512  # ggml-cuda common.cuh MATRIX_ROW_PADDING (quantized rows padded on alloc)
N_CTX_PAD = 256  # src/llama-context.cpp: cparams.n_ctx = GGML_PAD(cparams.n_ctx, 256)
FIT_MARGIN = GiB  # common/common.h fit_params_target = 1024*1024*1024 (margin per device)
OLLAMA_MIN_MEMORY_CUDA = 457 * MiB  # ml/device.go DeviceInfo.MinimumMemory (CUDA/ROCm)
OLLAMA_MIN_MEMORY_METAL = 512 * MiB  # ml/device.go DeviceInfo.MinimumMemory (Metal)
_RE_GPU_BUFT = re.compile(r"(?:CUDA|ROCm)(\d+)")  # an -ot target naming one GPU's buffer type
HOST_ALIGNMENT = 32  # ggml-backend.cpp: the CPU (and CUDA_Host) buffer type's alignment, TENSOR_ALIGNMENT
# ggml/src/ggml-cuda/getrows.cu ggml_cuda_get_rows_switch_src0_type (and supports_op GET_ROWS):
# the types CUDA can gather token rows from; a k-quant token_embd is not one of them
# (llama.cpp#13211: "ggml_cuda_get_rows_switch_src0_type: unsupported src0 type: q6_K")
CUDA_GET_ROWS_TYPES = frozenset({"f32", "f16", "bf16", "q4_0", "q4_1", "q5_0", "q5_1", "q8_0"})
# llama.cpp PR #14990 (merged 2025-07-31): "when overriding to a CPU buffer, consider the extra
# buffer types", so a tensor -ot/--n-cpu-moe sends to the CPU takes the host buffer type like a
# CPU layer's; before it, such a tensor went to the plain CPU buffer. b5622 (2025-06-10) is before
# it (a b5192 log prints the overridden tensors in a "CPU" buffer); b6089 (2025-08-05, which added
# --n-cpu-moe, PR #15077) is after it; builds in between are not placed here.
PR14990_BEFORE_BUILD = 5622
PR14990_FROM_BUILD = 6089
# llama.cpp PR #18148 ("llama: offload output layer to GPU first", described 2025-12-17): -ngl k
# offloads the output layer first, then the last k-1 blocks. b7376 (380b4c984, vendored in Ollama
# PR #13451's "GGML update to 380b4c984") is before it: i_gpu_start = max(n_layer - k, 0);
# b7548 (7ac890213, vendored in Ollama PR #13570's "Update to b7548") is after it:
# i_gpu_start = max(n_layer + 1 - k, 0); a partial offload on a build in between is refused.
PR18148_BEFORE_BUILD = 7376
PR18148_FROM_BUILD = 7548
# llama.cpp PR #21277 ("kv-cache : do not quantize SWA KV cache", described 2026-04-01): the
# sliding-window layers' cache stays f16 whatever -ctk/-ctv ask. b7972 is before it (its log is in
# a transcript committed 2026-03-21: KlimtechRAG, session-ses_19marzec02_38.md); the build it
# landed in is not known here, so a quantized cache on a sliding-window model is refused after b7972.
PR21277_BEFORE_BUILD = 7972
# The sliding-window cache by build. llama.cpp PR #13194 ("kv-cache : add SWA support",
# described 2025-04-29: class llama_kv_cache_unified_iswa, a second, smaller cache for the SWA
# layers) and PR #13833 (2025-05-27: n_swa + n_ubatch cells) came after b5359 (de4c07f9, its
# number printed by "version: 5359 (de4c07f9)" in a llama.cpp issue): the tree Ollama v0.7.0
# vendored at de4c07f93 (Makefile.sync; llama/llama.cpp/src/llama-kv-cache.cpp:103-104) allocates
# every layer n_embd_k_gqa*kv_size, sliding-window or not (Gemma 3's n_swa only masks). b7376
# (380b4c984, Ollama commit 79c7f5488 "GGML update to 380b4c984") has the pinned rule
# (llama/llama.cpp/src/llama-kv-cache-iswa.cpp:50: GGML_PAD(min(size_base,
# n_swa*(unified ? n_seq_max : 1) + n_ubatch), 256)). A sliding-window model on a build in
# between is refused: its cells changed twice there and the builds are not placed here.
SWA_FULL_CELLS_UP_TO_BUILD = 5359
SWA_CACHE_FROM_BUILD = 7376
# The KV cache's set_rows index inputs (k_idxs, v_idxs): none in b5359 (de4c07f93's tree has no
# set_rows; the KQ mask's rows padded to GGML_KQ_MASK_PAD, 64 in its ggml.h:1816); on by default
# (llama-context.h supports_set_rows = true) in e54d41bef (Ollama 1a19df1f3, 2025-08-14) and in
# b7376 and the pinned build. A build in between gets a range (with and without them).
SET_ROWS_NONE_UP_TO_BUILD = 5359
SET_ROWS_FROM_BUILD = 7376
# A GGUF file's tensor order, by the llama-quantize build that wrote it. llama.cpp PR #9935
# ("loader: refactor tensor weights storage", merged as ab3d71f9 = build 3999 on 2024-10-31, the
# ggml CI run of that commit printing "build: 3999 (ab3d71f9)") made the loader's weights a
# std::map sorted by weight_name_comparer, and llama-quantize writes its output in that order.
# Before it the loader kept a vector in the input file's order (llama.cpp 7f9698470, llama.cpp:
# weights.emplace_back for each tensor of the file, ggml_get_first_tensor .. ggml_get_next_tensor)
# and llama_model_quantize_internal wrote ml.get_weight(i) for i in 0 .. n_tensors-1, that order:
# a file quantized then keeps its converter's order. convert.py (7f9698470^: lazy_load_safetensors_
# file, merge_multifile_models, write_all) and convert_hf_to_gguf.py (get_tensors) write a Hugging
# Face checkpoint's tensors shard by shard; the shards are cut in state_dict order
# (huggingface_hub serialization/_base.py split_state_dict_into_shards_factory), which opens with
# model.embed_tokens (transformers LlamaModel: embed_tokens, layers, norm; lm_head last), so
# token_embd is the file's first tensor (but for a generated tensor written ahead of the
# checkpoint's, Llama 3.1's rope_freqs: such a file is refused). Ollama's vendored tree changed
# from the vector to the map between llama.cpp 3f1ae2e3 and 40c6d79f (Ollama 527cc9789). The
# place of the other tensors in such a file is not followed here.
PR9935_MERGED = (2024, 10, 31)


def _file_predates_pr9935(file_date: object) -> bool:
    """Whether a GGUF file that existed by ``file_date`` (an ISO date, e.g. the day of the log that
    loaded it) was necessarily quantized before llama.cpp b3999 (PR #9935)."""
    from datetime import date

    if not isinstance(file_date, str):
        raise EngineError("file_date must be a date, YYYY-MM-DD (a day by which the GGUF file existed)")
    try:
        day = date.fromisoformat(file_date)
    except ValueError as exc:
        raise EngineError(
            f"file_date {file_date!r} is not a date, YYYY-MM-DD (a day by which the GGUF file existed)"
        ) from exc
    return day < date(*PR9935_MERGED)


# llama.cpp built with GGML_BLAS (ggml/src/ggml-blas/ggml-blas.cpp, as vendored by Ollama 8dd12c873
# at llama.cpp e1e8e099, 2025-05-01): the BLAS device is an ACCEL device, which llama-context.cpp
# puts between the GPUs and the CPU backend; its buffer type is the plain CPU one
# (ggml_backend_cpu_buffer_type, printed "CPU compute buffer" beside the CPU backend's CUDA_Host),
# it accepts host buffers (supports_buft: ggml_backend_buft_is_host) and, of the ops with a weight,
# MUL_MAT when ne0, ne1 and ne10 are all at least 32 (min_batch) on contiguous inputs, an f32 src1.
BLAS_MIN_BATCH = 32


# ---------------------------------------------------------------------------------------------
# GGUF types and the quantization presets
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class GgufType:
    name: str
    block_elements: int
    block_bytes: int
    source: str

    def row_bytes(self, n: int) -> int:
        if n % self.block_elements:
            raise EngineError(f"a row of {n} values is not a whole number of {self.name} blocks")
        return n // self.block_elements * self.block_bytes


@cache
def gguf_types() -> dict[str, GgufType]:
    """Every GGUF tensor type this module sizes, from ``data/gguf_types.csv`` (ggml-common.h)."""
    with GGUF_TYPES_CSV.open(encoding="utf-8", newline="") as handle:
        rows = list(csv.DictReader(handle))
    out = {}
    for row in rows:
        if not row["source"].strip():
            raise ValueError(f"gguf_types.csv: row {row['type']!r} needs a source")
        out[row["type"]] = GgufType(
            row["type"], int(row["block_elements"]), int(row["block_bytes"]), row["source"]
        )
    return out


def _t(name: str) -> GgufType:
    try:
        return gguf_types()[name]
    except KeyError as exc:
        raise EngineError(f"GGUF type {name!r} is not one this model sizes") from exc


# ftype -> the default tensor type (src/llama-quant.cpp: llama_ftype_get_default_type)
PRESETS: dict[str, str] = {
    "F32": "f32",
    "F16": "f16",
    "BF16": "bf16",
    "Q4_0": "q4_0",
    "Q4_1": "q4_1",
    "Q5_0": "q5_0",
    "Q5_1": "q5_1",
    "Q8_0": "q8_0",
    "Q2_K": "q2_K",
    "Q3_K_S": "q3_K",
    "Q3_K_M": "q3_K",
    "Q3_K_L": "q3_K",
    "Q4_K_S": "q4_K",
    "Q4_K_M": "q4_K",
    "Q5_K_S": "q5_K",
    "Q5_K_M": "q5_K",
    "Q6_K": "q6_K",
    "IQ4_NL": "iq4_nl",
    "IQ4_XS": "iq4_xs",
    "MXFP4_MOE": "mxfp4",
}
# general.file_type values (include/llama.h enum llama_ftype) for the presets above
FILE_TYPES: dict[int, str] = {
    0: "F32",
    1: "F16",
    2: "Q4_0",
    3: "Q4_1",
    7: "Q8_0",
    8: "Q5_0",
    9: "Q5_1",
    10: "Q2_K",
    11: "Q3_K_S",
    12: "Q3_K_M",
    13: "Q3_K_L",
    14: "Q4_K_S",
    15: "Q4_K_M",
    16: "Q5_K_S",
    17: "Q5_K_M",
    18: "Q6_K",
    25: "IQ4_NL",
    30: "IQ4_XS",
    32: "BF16",
    38: "MXFP4_MOE",
}
_QUANTIZED = {n for n in PRESETS.values() if n not in ("f32", "f16", "bf16")}
# tensor_type_fallback: a row that is not a whole number of blocks falls back to a 32-block type
_FALLBACK = {
    "q2_K": "q4_0",
    "q3_K": "q4_0",
    "q4_K": "q5_0",
    "q5_K": "q5_1",
    "q6_K": "q8_0",
    "iq4_xs": "iq4_nl",
}
KV_TYPES = ("f32", "f16", "bf16", "q8_0", "q4_0", "q4_1", "q5_0", "q5_1", "iq4_nl")


# ---------------------------------------------------------------------------------------------
# The model: hyper-parameters from a config.json or from GGUF metadata
# ---------------------------------------------------------------------------------------------

_HF_ARCH = {
    "llama": "llama",
    "mistral": "llama",
    "mixtral": "llama",
    "qwen2": "qwen2",
    "qwen3": "qwen3",
    "qwen3_moe": "qwen3moe",
    "gemma2": "gemma2",
    "gemma3": "gemma3",
    "gemma3_text": "gemma3",
    "phi3": "phi3",
}
ARCHS = ("llama", "qwen2", "qwen3", "qwen3moe", "gemma2", "gemma3", "phi3")


@dataclass(frozen=True)
class Hparams:
    arch: str
    n_layer: int
    n_embd: int
    n_ff: int
    n_head: int
    n_head_kv: int
    head_dim_k: int
    head_dim_v: int
    n_vocab: int
    n_ctx_train: int
    tied: bool
    n_expert: int = 0
    n_expert_used: int = 0
    n_ff_exp: int = 0
    n_swa: int = 0
    swa_layers: tuple[bool, ...] = ()
    rope_freqs: bool = False

    @property
    def n_gqa(self) -> int:
        return self.n_head // max(1, self.n_head_kv)

    @property
    def is_70b(self) -> bool:
        # src/llama-model.cpp load_hparams (LLM_ARCH_LLAMA): 80 layers with GQA is LLM_TYPE_70B
        return self.arch == "llama" and self.n_layer == 80 and self.n_head != self.n_head_kv

    def is_swa(self, il: int) -> bool:
        return bool(self.swa_layers) and self.swa_layers[il]


def _swa_pattern(n_layer: int, period: int) -> tuple[bool, ...]:
    # src/llama-hparams.cpp set_swa_pattern: layer il is SWA when il % n < n - 1
    return tuple(il % period < period - 1 for il in range(n_layer))


def _need(cfg: Mapping[str, Any], key: str, where: str) -> int:
    value = cfg.get(key)
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value <= 0:
        raise EngineError(f"{where} needs {key!r} (a positive number)")
    return int(value)


def _vocab(value: Any) -> int | None:
    if isinstance(value, (list, tuple)):
        return len(value)
    if isinstance(value, int) and not isinstance(value, bool) and value > 0:
        return value
    return None


def model_hparams(config: Mapping[str, Any]) -> Hparams:
    """The model as llama.cpp sees it, from a Hugging Face config.json or a dict of GGUF keys."""
    if not isinstance(config, Mapping):
        raise EngineError("config must be a config.json or GGUF metadata as a dict")
    if "general.architecture" in config:
        return _hparams_gguf(config)
    return _hparams_hf(config)


def _hparams_gguf(kv: Mapping[str, Any]) -> Hparams:
    arch = str(kv["general.architecture"])
    if arch not in ARCHS:
        raise EngineError(f"general.architecture {arch!r} is not one this model sizes ({', '.join(ARCHS)})")

    def g(key: str, default: Any = None) -> Any:
        return kv.get(f"{arch}.{key}", default)

    where = "the GGUF metadata"
    n_layer = _need(kv, f"{arch}.block_count", where)
    n_embd = _need(kv, f"{arch}.embedding_length", where)
    n_head = _need(kv, f"{arch}.attention.head_count", where)
    n_head_kv = int(g("attention.head_count_kv", n_head))
    head_k = int(g("attention.key_length", n_embd // n_head))
    head_v = int(g("attention.value_length", head_k))
    n_vocab = _vocab(g("vocab_size")) or _vocab(kv.get("tokenizer.ggml.tokens"))
    if not n_vocab:
        raise EngineError("the GGUF metadata needs 'tokenizer.ggml.tokens' (the vocabulary or its length)")
    n_expert = int(g("expert_count", 0) or 0)
    n_ff = int(g("feed_forward_length", 0) or 0)
    if n_expert == 0 and n_ff <= 0:
        raise EngineError(f"the GGUF metadata needs '{arch}.feed_forward_length'")
    n_swa = int(g("attention.sliding_window", 0) or 0)
    swa: tuple[bool, ...] = ()
    if arch == "gemma2":
        swa = _swa_pattern(n_layer, 2)
    elif arch == "gemma3":
        swa = _swa_pattern(n_layer, 6)
    tied = arch in ("gemma2", "gemma3")
    if kv.get("output_tied") is not None:
        tied = bool(kv["output_tied"])
    rope_freqs = False
    count = kv.get("tensor_count")
    if isinstance(count, int) and not isinstance(count, bool):
        # the file's own tensor count settles what the metadata does not say: an output tensor
        # (untied embeddings) and a rope_freqs tensor (Llama 3.1's rope scaling)
        base = Hparams(
            arch,
            n_layer,
            n_embd,
            n_ff,
            n_head,
            n_head_kv,
            head_k,
            head_v,
            n_vocab,
            0,
            True,
            n_expert,
            int(g("expert_used_count", 0) or 0),
            int(g("expert_feed_forward_length", 0) or 0),
        )
        extra = count - len(_tensors(base))
        if kv.get("output_tied") is None and arch not in ("gemma2", "gemma3"):
            tied = extra == 0 or (extra == 1 and kv.get("rope_freqs") is True)
        extra -= 0 if tied else 1
        if extra not in (0, 1):
            raise EngineError(f"tensor_count {count} does not match a {arch} model with these keys")
        rope_freqs = extra == 1
    return Hparams(
        arch=arch,
        n_layer=n_layer,
        n_embd=n_embd,
        n_ff=n_ff,
        n_head=n_head,
        n_head_kv=n_head_kv,
        head_dim_k=head_k,
        head_dim_v=head_v,
        n_vocab=n_vocab,
        n_ctx_train=int(g("context_length", 0) or 0),
        tied=tied,
        n_expert=n_expert,
        n_expert_used=int(g("expert_used_count", 0) or 0),
        n_ff_exp=int(g("expert_feed_forward_length", 0) or 0) or (n_ff if n_expert else 0),
        n_swa=n_swa if swa else 0,
        swa_layers=swa,
        rope_freqs=rope_freqs,
    )


def _hparams_hf(cfg: Mapping[str, Any]) -> Hparams:
    from simulators.model_config import _fill_defaults, _parse_json

    try:
        parsed = dict(_parse_json(dict(cfg)))  # a multimodal wrapper's text_config, unwrapped
    except ValueError as exc:
        raise EngineError(str(exc)) from exc
    if "tie_word_embeddings" not in parsed and "tie_word_embeddings" in cfg:
        parsed["tie_word_embeddings"] = cfg["tie_word_embeddings"]
    cfg = parsed
    # fields the config leaves out take their config class's default (data/hf_config_defaults.json)
    _fill_defaults(cfg, str(cfg.get("model_type", "")))
    model_type = str(cfg.get("model_type", ""))
    arch = _HF_ARCH.get(model_type)
    if arch is None:
        raise EngineError(
            f"model_type {model_type!r} is not one this model sizes ({', '.join(sorted(_HF_ARCH))})"
        )
    where = "the config"
    n_layer = _need(cfg, "num_hidden_layers", where)
    n_embd = _need(cfg, "hidden_size", where)
    n_head = _need(cfg, "num_attention_heads", where)
    n_head_kv = int(cfg.get("num_key_value_heads") or n_head)
    head = int(cfg.get("head_dim") or n_embd // n_head)
    n_vocab = _need(cfg, "vocab_size", where)
    n_expert = int(cfg.get("num_local_experts") or cfg.get("num_experts") or 0)
    n_ff = int(cfg.get("intermediate_size") or 0)
    n_ff_exp = int(cfg.get("moe_intermediate_size") or (n_ff if n_expert else 0))
    if arch == "gemma2":
        swa = _swa_pattern(n_layer, 2)
    elif arch == "gemma3":
        swa = _swa_pattern(n_layer, 6)
    else:
        swa = ()
    tied = bool(cfg.get("tie_word_embeddings", arch in ("gemma2", "gemma3")))
    rope = cfg.get("rope_scaling") or {}
    rope_freqs = arch == "llama" and isinstance(rope, Mapping) and rope.get("rope_type") == "llama3"
    return Hparams(
        arch=arch,
        n_layer=n_layer,
        n_embd=n_embd,
        n_ff=n_ff,
        n_head=n_head,
        n_head_kv=n_head_kv,
        head_dim_k=head,
        head_dim_v=head,
        n_vocab=n_vocab,
        n_ctx_train=int(cfg.get("max_position_embeddings") or 0),
        tied=tied,
        n_expert=n_expert,
        n_expert_used=int(cfg.get("num_experts_per_tok") or 0),
        n_ff_exp=n_ff_exp,
        n_swa=int(cfg.get("sliding_window") or 0) if swa else 0,
        swa_layers=swa,
        rope_freqs=rope_freqs,
    )


# ---------------------------------------------------------------------------------------------
# Tensors, their types, and where each lands
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Tensor:
    name: str
    shape: tuple[int, ...]  # ggml order: ne0 (the row) first
    layer: int  # -1 input (token_embd), -2 output, >= 0 a repeating block
    type: str = "f32"

    @property
    def n_elements(self) -> int:
        return math.prod(self.shape)

    @cached_property  # read for every tensor at every placement a search tries
    def nbytes(self) -> int:
        t = _t(self.type)
        return t.row_bytes(self.shape[0]) * math.prod(self.shape[1:])

    @property
    def is_expert(self) -> bool:
        return "_exps." in self.name


def _tensors(hp: Hparams) -> list[Tensor]:
    """The tensors of a GGUF file, in its order (src/llama-model-loader.h weight_name_comparer:
    tensors outside a block first, by name, then blocks by number, by name within a block)."""
    e, qd, kvd = hp.n_embd, hp.n_head * hp.head_dim_k, hp.n_head_kv * hp.head_dim_k
    vd = hp.n_head_kv * hp.head_dim_v
    top = [Tensor("output_norm.weight", (e,), -2), Tensor("token_embd.weight", (e, hp.n_vocab), -1)]
    if not hp.tied:
        top.append(Tensor("output.weight", (e, hp.n_vocab), -2))
    if hp.rope_freqs:
        top.append(Tensor("rope_freqs.weight", (hp.head_dim_k // 2,), 0))
    out = sorted(top, key=lambda t: t.name)
    for il in range(hp.n_layer):
        if hp.arch == "phi3":
            # src/llama-model.cpp LLM_ARCH_PHI3: fused QKV and a fused gate+up projection
            out += sorted(
                [
                    Tensor(f"blk.{il}.attn_norm.weight", (e,), il),
                    Tensor(f"blk.{il}.attn_qkv.weight", (e, qd + kvd + vd), il),
                    Tensor(f"blk.{il}.attn_output.weight", (qd, e), il),
                    Tensor(f"blk.{il}.ffn_norm.weight", (e,), il),
                    Tensor(f"blk.{il}.ffn_up.weight", (e, 2 * hp.n_ff), il),
                    Tensor(f"blk.{il}.ffn_down.weight", (hp.n_ff, e), il),
                ],
                key=lambda t: t.name,
            )
            continue
        blk = [
            Tensor(f"blk.{il}.attn_norm.weight", (e,), il),
            Tensor(f"blk.{il}.attn_q.weight", (e, qd), il),
            Tensor(f"blk.{il}.attn_k.weight", (e, kvd), il),
            Tensor(f"blk.{il}.attn_v.weight", (e, vd), il),
            Tensor(f"blk.{il}.attn_output.weight", (hp.n_head * hp.head_dim_v, e), il),
            Tensor(f"blk.{il}.ffn_norm.weight", (e,), il),
        ]
        if hp.arch == "qwen2":
            blk += [
                Tensor(f"blk.{il}.attn_q.bias", (qd,), il),
                Tensor(f"blk.{il}.attn_k.bias", (kvd,), il),
                Tensor(f"blk.{il}.attn_v.bias", (vd,), il),
            ]
        if hp.arch in ("qwen3", "qwen3moe", "gemma3"):
            blk += [
                Tensor(f"blk.{il}.attn_q_norm.weight", (hp.head_dim_k,), il),
                Tensor(f"blk.{il}.attn_k_norm.weight", (hp.head_dim_k,), il),
            ]
        if hp.arch in ("gemma2", "gemma3"):
            blk += [
                Tensor(f"blk.{il}.post_attention_norm.weight", (e,), il),
                Tensor(f"blk.{il}.post_ffw_norm.weight", (e,), il),
            ]
        if hp.n_expert > 1:
            f, n = hp.n_ff_exp, hp.n_expert
            blk += [
                Tensor(f"blk.{il}.ffn_gate_inp.weight", (e, n), il),
                Tensor(f"blk.{il}.ffn_gate_exps.weight", (e, f, n), il),
                Tensor(f"blk.{il}.ffn_up_exps.weight", (e, f, n), il),
                Tensor(f"blk.{il}.ffn_down_exps.weight", (f, e, n), il),
            ]
        else:
            blk += [
                Tensor(f"blk.{il}.ffn_gate.weight", (e, hp.n_ff), il),
                Tensor(f"blk.{il}.ffn_up.weight", (e, hp.n_ff), il),
                Tensor(f"blk.{il}.ffn_down.weight", (hp.n_ff, e), il),
            ]
        out += sorted(blk, key=lambda t: t.name)
    return out


def _allows_quantization(t: Tensor) -> bool:
    # src/llama-quant.cpp tensor_allows_quantization: 2-D and 3-D weights, not norms, not the router
    return (
        len(t.shape) >= 2
        and t.name.endswith("weight")
        and "_norm.weight" not in t.name
        and "ffn_gate_inp.weight" not in t.name
    )


def _category(name: str) -> str:
    # src/llama-quant.cpp tensor_get_category (same order of tests)
    if name == "output.weight":
        return "output"
    if name == "token_embd.weight":
        return "token_embd"
    for key, cat in (
        ("attn_qkv.weight", "attn_v"),
        ("attn_kv_b.weight", "attn_v"),
        ("attn_v.weight", "attn_v"),
        ("attn_k.weight", "attn_k"),
        ("attn_q.weight", "attn_q"),
        ("attn_output.weight", "attn_output"),
        ("ffn_up", "ffn_up"),
        ("ffn_gate", "ffn_gate"),
        ("ffn_down", "ffn_down"),
    ):
        if key in name:
            return cat
    return "other"


def _use_more_bits(i: int, n: int) -> bool:
    return i < n // 8 or i >= 7 * n // 8 or (i - n // 8) % 3 == 2


def quant_types(
    hp: Hparams, quant: str, output_tensor_type: str | None = None, token_embedding_type: str | None = None
) -> list[Tensor]:
    """Each tensor with the type a ``llama-quantize <preset>`` file stores it in:
    src/llama-quant.cpp llama_tensor_get_type_impl and tensor_type_fallback. The two overrides
    are llama-quantize's ``--output-tensor-type`` and ``--token-embedding-type`` (the "_L" files
    that keep both in q8_0); per-tensor ``--tensor-type`` patterns are not followed."""
    if quant not in PRESETS:
        raise EngineError(f"quant {quant!r} is not a preset this model follows ({', '.join(PRESETS)})")
    for name, value in (
        ("output_tensor_type", output_tensor_type),
        ("token_embedding_type", token_embedding_type),
    ):
        if value is not None and value not in gguf_types():
            raise EngineError(f"{name} {value!r} is not a GGUF type this model sizes")
    default = PRESETS[quant]
    tensors = _tensors(hp)
    n_attention_wv = sum(1 for t in tensors if _category(t.name) == "attn_v")
    n_expert = max(1, hp.n_expert)
    i_wv = 0
    i_down = 0
    out = []
    for t in tensors:
        if not _allows_quantization(t):
            # 1-D tensors (norms, biases) and the router stay as converted: F32
            out.append(Tensor(t.name, t.shape, t.layer, "f32"))
            continue
        if default not in _QUANTIZED:
            out.append(Tensor(t.name, t.shape, t.layer, default))
            continue
        cat = _category(t.name)
        new = default
        # llama_tensor_get_type: the user's embedding / output types win over the preset
        if token_embedding_type and cat == "token_embd":
            out.append(Tensor(t.name, t.shape, t.layer, token_embedding_type))
            continue
        if output_tensor_type and (cat == "output" or (hp.tied and cat == "token_embd")):
            out.append(Tensor(t.name, t.shape, t.layer, output_tensor_type))
            continue
        if cat == "output" or (hp.tied and cat == "token_embd"):
            if quant == "MXFP4_MOE" or t.shape[0] % _t(new).block_elements:
                new = "q8_0"
            elif new != "q8_0":
                new = "q6_K"
        elif quant == "MXFP4_MOE":
            new = "mxfp4" if len(t.shape) > 2 and t.shape[2] > 1 else "q8_0"
        elif cat == "token_embd":
            pass
        elif cat == "attn_v":
            if quant == "Q2_K":
                new = "q4_K" if hp.n_gqa >= 4 else "q3_K"
            elif quant == "Q3_K_M":
                new = "q5_K" if i_wv < 2 else "q4_K"
            elif quant == "Q3_K_L" or (quant in ("IQ4_NL", "IQ4_XS") and hp.n_gqa >= 4):
                new = "q5_K"
            elif quant in ("Q4_K_M", "Q5_K_M") and _use_more_bits(i_wv, n_attention_wv):
                new = "q6_K"
            elif quant == "Q4_K_S" and i_wv < 4:
                new = "q5_K"
            if hp.is_70b and new in ("q3_K", "q4_K"):
                new = "q5_K"
            if hp.n_expert == 8:
                new = "q8_0"
            i_wv += 1
        elif cat == "attn_k":
            if hp.n_expert == 8:
                new = "q8_0"
        elif cat == "ffn_down":
            i_layer, n_layer = (t.layer, hp.n_layer) if n_expert > 1 else (i_down, hp.n_layer)
            if quant == "Q2_K":
                new = "q3_K"
            elif quant == "Q3_K_M":
                new = "q5_K" if i_layer < n_layer // 16 else "q4_K"
            elif quant == "Q3_K_L":
                new = "q5_K"
            elif quant == "Q4_K_M":
                if _use_more_bits(i_layer, n_layer):
                    new = "q6_K"
            elif i_layer < n_layer // 8 and quant in ("IQ4_NL", "IQ4_XS"):
                new = "q5_K"
            elif quant == "Q5_K_M" and _use_more_bits(i_layer, n_layer):
                new = "q6_K"
            elif quant == "Q4_K_S" and i_layer < n_layer // 8:
                new = "q5_K"
            i_down += 1
        elif cat == "attn_output":
            if hp.n_expert == 8:
                if quant in ("Q2_K", "Q3_K_S", "Q3_K_M", "IQ4_NL", "Q4_K_S", "Q4_K_M", "IQ4_XS"):
                    new = "q5_K"
            elif quant == "Q2_K":
                new = "q3_K"
            elif quant == "Q3_K_M":
                new = "q4_K"
            elif quant == "Q3_K_L":
                new = "q5_K"
        # tensor_type_fallback: a row that is not a whole number of blocks
        if t.shape[0] % _t(new).block_elements:
            new = _FALLBACK.get(new, "f16")
            if t.shape[0] % _t(new).block_elements:
                new = "f16"
        out.append(Tensor(t.name, t.shape, t.layer, new))
    return out


def type_counts(tensors: Sequence[Tensor]) -> dict[str, int]:
    """The "llama_model_loader: - type X: N tensors" lines."""
    counts: dict[str, int] = {}
    for t in tensors:
        counts[t.type] = counts.get(t.type, 0) + 1
    return counts


def _pad(n: int, a: int) -> int:
    return (n + a - 1) // a * a


# ---------------------------------------------------------------------------------------------
# The start-up
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class DeviceMemory:
    """One device's buffers as llama.cpp prints them."""

    name: str  # "CUDA0", "CPU", "Metal", "BLAS" (a GGML_BLAS build's backend, host memory)
    model_bytes: float
    kv_bytes: float
    compute_bytes: float
    total_bytes: float | None = None  # what the device offers (None for the host)
    layers: int = 0

    @property
    def used_bytes(self) -> float:
        return self.model_bytes + self.kv_bytes + self.compute_bytes


@dataclass(frozen=True)
class LlamaCppStartup:
    engine: str  # "llama.cpp" or "ollama"
    version: str
    gpu: Accelerator
    quant: str
    hparams: Hparams
    tensors: tuple[Tensor, ...]
    file_bytes: int
    n_ctx: int
    n_ctx_seq: int
    n_parallel: int
    n_stream: int
    kv_cells: int
    swa_cells: int
    flash_attn: bool
    cache_type_k: str
    cache_type_v: str
    n_gpu_layers: int
    offloaded_layers: int  # as printed: "offloaded N/M layers to GPU" (M = n_layer + 1)
    devices: tuple[DeviceMemory, ...]
    cpu_mapped_bytes: float
    verdict: str  # "fits", "offloads", "will not start"
    message: str
    tokens_per_s: float | None = None
    notes: tuple[str, ...] = field(default_factory=tuple)
    output_first: bool = False  # the build offloads the output layer first (llama.cpp PR #18148)
    output_on_gpu: bool = False  # the output layer (output.weight, output_norm) is on a GPU
    # the reserve graph's splits when its compute buffers come from walking it
    # (reserve_compute_buffers), None where they are the estimates
    graph_splits: int | None = None
    # ggml-backend.cpp's n_copies: 4 (GGML_SCHED_MAX_COPIES) under pipeline parallelism (every layer
    # on several GPUs, llama-context.cpp), 1 otherwise
    n_copies: int = 1
    # the host's compute buffer as a named range (low, high) where the build's graph inputs are
    # not placed (set_rows's indices between b5359 and b7376); None where it is one figure
    host_compute_range: tuple[float, float] | None = None

    @property
    def repeating_layers_on_gpu(self) -> int:
        """The repeating blocks on the GPUs: the offloaded count less the output layer."""
        return self.offloaded_layers - int(self.output_on_gpu)

    @property
    def weights_bytes(self) -> float:
        return float(self.file_bytes)

    @property
    def kv_bytes(self) -> float:
        return sum(d.kv_bytes for d in self.devices)

    @property
    def compute_bytes(self) -> float:
        return sum(d.compute_bytes for d in self.devices if d.total_bytes is not None)

    @property
    def gpu_devices(self) -> tuple[DeviceMemory, ...]:
        return tuple(d for d in self.devices if d.total_bytes is not None)

    @property
    def bpw(self) -> float:
        return self.file_bytes * 8 / sum(t.n_elements for t in self.tensors)

    def type_counts(self) -> dict[str, int]:
        return type_counts(self.tensors)

    def ledger(self, device: int = 0) -> Ledger:
        """The first GPU's (or ``device``'s) memory term by term."""
        gpus = self.gpu_devices
        if not gpus:
            raise EngineError("no GPU holds anything: every layer is on the CPU")
        d = gpus[device]
        src = self.version
        name = "Ollama" if self.engine == "ollama" else "llama.cpp"
        terms = (
            Term(
                "weights",
                f"Model buffer ({d.name})",
                d.model_bytes,
                f"the {d.layers} layers on {d.name}, each tensor in its {self.quant} type",
                f"{LLAMACPP_SOURCE}: src/llama-model.cpp load_tensors; src/llama-quant.cpp;"
                " ggml/src/ggml-common.h",
            ),
            Term(
                "kv_cache",
                f"KV cache ({d.name})",
                d.kv_bytes,
                f"K ({self.cache_type_k}) and V ({self.cache_type_v}) for {self.kv_cells} cells"
                f" × {self.n_stream} "
                "stream(s) per layer on this device"
                + (f", {self.swa_cells} cells on sliding-window layers" if self.swa_cells else ""),
                f"{LLAMACPP_SOURCE}: src/llama-kv-cache.cpp, src/llama-kv-cache-iswa.cpp,"
                " src/llama-context.cpp",
            ),
            Term(
                "activations",
                f"Compute buffer ({d.name}, estimate)",
                d.compute_bytes,
                "the reserve graph's largest set of live tensors for one micro-batch: an estimate, "
                "not the allocator's own sum",
                f"{LLAMACPP_SOURCE}: src/llama-context.cpp graph_reserve",
            )
            if self.graph_splits is None
            else Term(
                "activations",
                f"Compute buffer ({d.name})",
                d.compute_bytes,
                f"the micro-batch's reserve graph cut into {self.graph_splits} splits, every tensor"
                " placed in graph order with freed space reused: the allocator's high-water mark"
                + (
                    "; the CPU layers' ops run here too, their weights and K/V views copied in"
                    if self.offloaded_layers < self.hparams.n_layer + 1
                    else ""
                )
                + (
                    f"; pipeline parallelism (n_copies={self.n_copies}): each input a split copies in"
                    f" from another device is held {self.n_copies} times, never freed"
                    if self.n_copies > 1
                    else ""
                ),
                f"{LLAMACPP_SOURCE}: src/llama-context.cpp graph_reserve;"
                " ggml/src/ggml-backend.cpp ggml_backend_sched_split_graph;"
                " ggml/src/ggml-alloc.c ggml_gallocr_alloc_graph_impl",
            ),
        )
        return Ledger(
            engine=self.engine,
            version=src if self.engine == "llama.cpp" else f"{OLLAMA_VERSION} (llama.cpp {LLAMACPP_VERSION})",
            device=self.gpu.id,
            total_bytes=float(d.total_bytes or 0),
            terms=terms,
            verdict=self.verdict,
            message=f"{name}: {self.message}",
        )


def _kv_layer_bytes(
    hp: Hparams, il: int, cells: int, n_stream: int, tk: str, tv: str, v_trans: bool
) -> tuple[int, int]:
    k = _t(tk).row_bytes(hp.n_head_kv * hp.head_dim_k) * cells * n_stream
    v = _t(tv).row_bytes(hp.n_head_kv * hp.head_dim_v) * cells * n_stream
    return k, v


def _compute_estimate(hp: Hparams, n_ubatch: int, n_kv: int, flash_attn: bool, with_output: bool) -> int:
    """The reserve graph's peak of live f32 tensors for ``n_ubatch`` tokens (all outputs), one
    device holding every layer: the larger of the output step (logits + the normed hidden
    state), the feed-forward step (gate, up and their product beside the residual stream) and,
    without flash attention, the attention scores (KQ for every head over the padded cache, the
    mask, Q/K/V)."""
    f32 = 4
    u = n_ubatch
    e = hp.n_embd
    output = (hp.n_vocab * u + e * u) * f32 if with_output else 0
    ff = hp.n_ff_exp * max(1, hp.n_expert_used) if hp.n_expert > 1 else hp.n_ff
    ffn = (3 * ff * u + 2 * e * u) * f32
    attn = 0
    if not flash_attn:
        attn = (hp.n_head * n_kv * u + n_kv * u + 3 * e * u) * f32
    return max(output, ffn, attn)


def _host_input_bytes(
    hp: Hparams, n_ubatch: int, n_kv: int, swa_cells: int, flash_attn: bool, set_rows: bool, n_copies: int = 1
) -> int:
    """The host's compute buffer where the reserve graph is not walked: the graph inputs, which
    ggml-backend.cpp's scheduler keeps on the CPU backend (its buffer printed as CUDA_Host /
    ROCm_Host beside a GPU, CPU beside Metal), ``n_copies`` times under pipeline parallelism.
    src/llama-graph.cpp (the pinned build; Ollama v0.15.5's vendored tree): build_inp_embd gathers
    the token rows from token_embd, which stays on the CPU (GET_ROWS is never offloaded), an f32
    n_embd x u; the tokens, positions and output ids (i32, u each); build_attn_inp_kv's f32 KQ mask
    (n_kv x u) and, with set_rows, the K and V indices (i64: u, and u x n_embd_v_gqa when V is
    transposed without flash attention); an iSWA model has a second mask and second indices over
    its sliding cache (build_attn_inp_kv_iswa). Without set_rows (b5359) the mask's rows are padded
    to GGML_KQ_MASK_PAD (64) and there are no indices. The rest of the graph runs on the GPUs."""
    u = n_ubatch
    f32 = 4
    rows = u if set_rows else _pad(u, 64)
    vd = hp.n_head_kv * hp.head_dim_v
    caches = [n_kv] + ([swa_cells] if hp.swa_layers else [])
    parts = [hp.n_embd * u * f32, 4 * u, 4 * u, 4 * u]
    for cells in caches:
        parts.append(cells * rows * f32)
        if set_rows:
            parts += [8 * u, 8 * u * (1 if flash_attn else vd)]
    return n_copies * sum(_pad(b, HOST_ALIGNMENT) for b in parts)


# ggml/src/ggml-cuda/ggml-cuda.cu ggml_backend_cuda_device_offload_op: an op on a weight in host
# memory runs on the GPU when its batch (MUL_MAT_ID: the tokens) is at least 32
CUDA_OFFLOAD_MIN_BATCH = 32


def _host_expert_copy_estimate(
    hp: Hparams, host_experts: Sequence[Tensor], n_ubatch: int, n_kv: int, flash_attn: bool
) -> int:
    """The first GPU's compute buffer when expert tensors stay in host memory (``-ot``,
    ``--n-cpu-moe``, CPU layers): ggml-backend.cpp's scheduler hands an op on a host weight to
    the lowest-numbered backend whose offload_op accepts it (CUDA0, for a micro-batch of at least
    32 tokens) and starts a new split at each such weight ("the memory of the previously
    offloaded weights can be reused"), so the buffer holds one copied expert tensor at a time:
    the largest, beside the f32 tensors live at its MUL_MAT_ID (the input and output over the
    routed experts, the residual stream and the FFN input) and the KQ mask every later layer
    reads (f16 with flash attention, f32 without). An estimate like ``_compute_estimate``."""
    u = n_ubatch
    k = max(1, hp.n_expert_used)
    live = (hp.n_ff_exp * k * u + hp.n_embd * k * u + 2 * hp.n_embd * u) * 4
    mask = n_kv * _pad(u, 64) * (2 if flash_attn else 4)  # GGML_KQ_MASK_PAD
    return max(t.nbytes for t in host_experts) + live + mask


def _blas_compute_bytes(host_matmuls: Sequence[tuple[str, int, int]], n_ubatch: int) -> int:
    """The BLAS backend's own compute buffer (a GGML_BLAS build beside one or more GPUs), from
    ggml-backend.cpp's scheduler (Ollama 8dd12c873's vendored ggml, llama.cpp e1e8e099): an op
    with a weight goes to the first backend that accepts the weight's buffer and the op
    (ggml_backend_sched_backend_from_buffer); a GPU's offload_op is asked only when that is the
    CPU backend, the last. A 2-D MUL_MAT on a host weight with ne0, ne1 (the micro-batch) and ne10
    of at least 32 is the BLAS backend's (ggml-blas.cpp supports_op; MUL_MAT_ID, GET_ROWS and MUL
    are not, so experts, token_embd and norms go to the GPU or stay on the CPU). Its input comes
    from a GPU (the norm before it, offloaded), so the split copies it into the BLAS buffer
    (``ggml_dup_tensor_layout``, freed after its last use with n_copies 1), and the product is
    freed once the next split has copied it: each such matmul holds its f32 input (ne10 x u) and
    output (ne0 x u) at once, and the buffer is the largest pair. ``host_matmuls``: (name, ne10,
    ne0) of each host weight a MUL_MAT reads; the MoE routers (ffn_gate_inp, each alone between
    offloaded ops) and the output projection are followed, a block's own matrices (a layer left
    on the CPU, whose Q/K/V share one input) are refused."""
    u = n_ubatch
    peak = 0
    for name, ne10, ne0 in host_matmuls:
        if u < BLAS_MIN_BATCH or ne10 < BLAS_MIN_BATCH or ne0 < BLAS_MIN_BATCH:
            continue  # the CPU backend's, or offloaded to a GPU
        if not (name.endswith(".ffn_gate_inp.weight") or name == "output"):
            raise EngineError(
                f"blas: the BLAS backend's buffer is followed for the MoE routers and the output"
                f" projection left in host memory; {name} (a layer's own matrix on the CPU) is not"
            )
        peak = max(peak, _pad(ne10 * u * 4, HOST_ALIGNMENT) + _pad(ne0 * u * 4, HOST_ALIGNMENT))
    return peak


# ---------------------------------------------------------------------------------------------
# The reserve graph as the scheduler splits it and the allocator places it
# ---------------------------------------------------------------------------------------------
# llama-context.cpp (ec98e2002) sizes each compute buffer by reserving the graph of one micro-batch
# of n_ubatch tokens with every output (graph_reserve), then a one-token graph, then the first
# again; a buffer keeps the largest size. ggml-backend.cpp ggml_backend_sched_split_graph assigns
# each op a backend and cuts the graph into splits; ggml-alloc.c ggml_gallocr_alloc_graph_impl then
# places every tensor of the split graph in its backend's buffer, in graph order, reusing freed
# space, and the buffer is that allocator's high-water mark. Followed here for the dense blocks of
# src/models/llama.cpp (and qwen2, the same block with Q/K/V biases; qwen3, RMS norms on Q and K)
# on one GPU or several in layer-split mode, with pipeline parallelism where llama-context.cpp
# enables it; the one-token graph is smaller and is not walked.

_VIEW_OPS = frozenset({"RESHAPE", "VIEW", "PERMUTE", "TRANSPOSE"})  # ggml.h ggml_is_view_op
# ggml-alloc.c ggml_op_can_inplace: the ops of this graph whose result may take a parent's memory
_INPLACE_OPS = frozenset({"ADD", "MUL", "ROPE", "RMS_NORM", "SOFT_MAX", "UNARY"})
# src/models/llama.cpp; qwen2.cpp / qwen2vl.cpp (biases on Q, K, V); qwen3.cpp (RMS norms on Q, K)
_GRAPH_ARCHS = ("llama", "qwen2", "qwen3")
# the scheduler's backends in priority order (llama-context.cpp: the GPUs, then the CPU last):
# backend i < n_gpus is CUDA<i>; backend n_gpus is the CPU
_GPU, _CPU = 0, 1  # with one GPU
# ggml-backend.cpp GGML_SCHED_MAX_COPIES: the copies of each split input under pipeline parallelism
GGML_SCHED_MAX_COPIES = 4


class _GT:
    """One tensor of the reserve graph: what ggml-backend.cpp's scheduler and ggml-alloc.c read
    of a ``struct ggml_tensor`` (op, sources, view source, buffer, flags)."""

    __slots__ = (
        "backend",
        "buf",
        "inp",
        "layout",
        "name",
        "nbytes",
        "op",
        "out",
        "pad",
        "rows",
        "src",
        "view_src",
        "weight",
    )

    def __init__(
        self,
        name: str,
        op: str,
        nbytes: int,
        src: Sequence[_GT] = (),
        *,
        view_src: _GT | None = None,
        buf: int | None = None,
        weight: bool = False,
        inp: bool = False,
        rows: int = 0,
        layout: tuple[Any, ...] = (),
        pad: int = 0,
    ) -> None:
        self.name = name
        self.op = op  # "NONE" for a leaf
        self.nbytes = nbytes
        self.src = list(src)
        self.view_src = view_src
        self.buf = buf  # pre-allocated in this backend's buffer (weights, the KV cache)
        self.weight = weight  # a buffer with GGML_BACKEND_BUFFER_USAGE_WEIGHTS
        self.inp = inp  # GGML_TENSOR_FLAG_INPUT
        self.rows = rows  # ggml-cuda.cu get_op_batch_size of the op
        self.layout = layout  # ggml_are_same_layout compares these
        self.backend = -1  # the scheduler's assignment
        self.pad = pad  # bytes the GPU buffer type adds (quantized rows padded to 512)
        self.out = False  # GGML_TENSOR_FLAG_OUTPUT: never freed, never taken over in place


def _graph_order(outputs: Sequence[_GT]) -> tuple[list[_GT], list[_GT]]:
    """ggml.c ggml_build_forward_expand / ggml_visit_parents: each expanded tensor's sources
    depth first, left to right, a node after its sources; leafs (op NONE) apart."""
    nodes: list[_GT] = []
    leafs: list[_GT] = []
    seen: set[int] = set()
    for out in outputs:
        stack: list[tuple[_GT, int]] = [(out, 0)]
        while stack:
            cur, i = stack.pop()
            if i == 0 and id(cur) in seen:
                continue
            if i < len(cur.src):
                stack.append((cur, i + 1))
                if id(cur.src[i]) not in seen:
                    stack.append((cur.src[i], 0))
                continue
            seen.add(id(cur))
            (leafs if cur.op == "NONE" else nodes).append(cur)
    return nodes, leafs


def _llama_reserve_graph(
    hp: Hparams,
    tensors: Sequence[Tensor],
    layer_backend: Sequence[int],
    *,
    cpu: int,
    u: int,
    n_kv: int,
    n_stream: int,
    fa: bool,
    cache_type_k: str,
    cache_type_v: str,
    pin_norm: bool,
    is_cuda_buft: bool = True,
    legacy: bool = False,
) -> tuple[list[_GT], list[_GT]]:
    """The reserve graph of src/models/llama.cpp at ec98e2002 (qwen2: biases on Q, K and V; qwen3: an RMS
    norm on Q and on K) for ``u`` tokens, all of them outputs; ``layer_backend[il]``: the backend holding
    each block's weights and KV cache and (index n_layer) the output layer's (a GPU, or ``cpu``). Tensors
    as llama-graph.cpp builds them: build_inp_embd (token rows gathered from token_embd on the CPU),
    build_attn_inp_kv (the KQ mask, f32 n_kv x u, cast to f16 with flash attention; set_rows indices),
    build_norm, build_attn (Q, V, K expanded, then the K and V stores: llama-kv-cache.cpp cpy_k/cpy_v,
    set_rows into the cache; get_k/get_v views over every cell), build_attn_mha (flash_attn_ext, or KQ,
    soft_max and KQV), build_ffn (swiglu of gate and up), the last block's rows picked by inp_out_ids, the
    output norm and logits.

    ``legacy``: the graph of the builds that print ``llama_new_context_with_model`` (llama.cpp
    ba1cb19cd, the tree Ollama v0.5.7 vendored in llama/llama.cpp, src/llama.cpp build_llama /
    build_qwen2): llm_build_kv expands Q, K, V, then llm_build_kv_store copies K and V into views
    of the cache (ggml_cpy: no set_rows, no k_idxs/v_idxs inputs), build_inp_KQ_mask pads the mask
    to GGML_KQ_MASK_PAD (32) rows, and llm_build_ffn computes silu(gate) then its product with up,
    each in place (ggml_op_can_inplace: UNARY, MUL), where the pinned build's fused swiglu (GLU,
    not in place) holds a third n_ff x u tensor beside gate and up."""
    f32 = 4
    e = hp.n_embd
    by_name = {t.name: t for t in tensors}
    kvd = hp.n_head_kv * hp.head_dim_k
    vd = hp.n_head_kv * hp.head_dim_v
    qd = hp.n_head * hp.head_dim_k
    emb = ("f32", e, u)

    def weight(name: str, b: int) -> _GT:
        t = by_name[name]
        pad = 0
        if is_cuda_buft and b != cpu and t.type in _QUANTIZED and t.shape[0] % CUDA_MATRIX_ROW_PADDING:
            pad = _t(t.type).row_bytes(CUDA_MATRIX_ROW_PADDING - t.shape[0] % CUDA_MATRIX_ROW_PADDING) * (
                t.n_elements // t.shape[0]
            )
        return _GT(name, "NONE", t.nbytes, buf=b, weight=True, pad=pad)

    def op(
        name: str, kind: str, src: Sequence[_GT], nbytes: int, layout: tuple[Any, ...], rows: int = u
    ) -> _GT:
        return _GT(name, kind, nbytes, src, rows=rows, layout=layout)

    def view(name: str, kind: str, parent: _GT, nbytes: int) -> _GT:
        root = parent.view_src if parent.view_src is not None else parent
        return _GT(name, kind, nbytes, [parent], view_src=root, layout=(name,))

    tokens = _GT("inp_tokens", "NONE", 4 * u, inp=True)
    pos = _GT("inp_pos", "NONE", 4 * u, inp=True)
    if legacy and hp.arch == "qwen3":
        raise EngineError("the llama_new_context_with_model builds predate qwen3's graph")
    k_idxs = _GT("k_idxs", "NONE", 8 * u, inp=True)
    # llama-kv-cache.cpp build_input_v_idxs: one index per element when V is transposed (no FA)
    v_idxs = _GT("v_idxs", "NONE", 8 * u * (1 if fa else vd), inp=True)
    mask_rows = _pad(u, 32) if legacy else u  # GGML_KQ_MASK_PAD in ba1cb19cd; unpadded at ec98e2002
    mask = _GT("kq_mask", "NONE", n_kv * mask_rows * f32, inp=True)
    out_ids = _GT("inp_out_ids", "NONE", 4 * u, inp=True)
    mask_cnv = (
        op("kq_mask_f16", "CPY", [mask], n_kv * mask_rows * 2, ("f16", n_kv, mask_rows)) if fa else mask
    )
    expanded: list[_GT] = []
    inp_l = op("inp_embd", "GET_ROWS", [weight("token_embd.weight", cpu), tokens], e * u * f32, emb, rows=0)
    for il in range(hp.n_layer):
        dev = layer_backend[il]
        inp_sa = inp_l
        norm = op(f"norm-{il}", "RMS_NORM", [inp_l], e * u * f32, emb)
        if pin_norm:  # llama-context.cpp graph_get_cb: "norm" on its layer's device
            norm.backend = dev
        cur = op(
            f"attn_norm-{il}", "MUL", [norm, weight(f"blk.{il}.attn_norm.weight", dev)], e * u * f32, emb
        )

        def proj(part: str, width: int, x: _GT = cur, il: int = il, dev: int = dev) -> _GT:
            y = op(
                f"{part}cur-{il}",
                "MUL_MAT",
                [weight(f"blk.{il}.attn_{part.lower()}.weight", dev), x],
                width * u * f32,
                ("f32", width, u),
            )
            if hp.arch == "qwen2":
                y = op(
                    f"{part}cur_b-{il}",
                    "ADD",
                    [y, weight(f"blk.{il}.attn_{part.lower()}.bias", dev)],
                    width * u * f32,
                    ("f32", width, u),
                )
            return y

        q = proj("Q", qd)
        k = proj("K", kvd)
        v = proj("V", vd)
        q3 = view(f"Q3-{il}", "RESHAPE", q, q.nbytes)
        k3 = view(f"K3-{il}", "RESHAPE", k, k.nbytes)
        v3 = view(f"V3-{il}", "RESHAPE", v, v.nbytes)
        if hp.arch == "qwen3":  # qwen3.cpp: build_norm of Q and K per head before RoPE
            for part, heads in (("q", hp.n_head), ("k", hp.n_head_kv)):
                x = q3 if part == "q" else k3
                shape = ("f32", hp.head_dim_k, heads, u)
                x = op(f"norm-{part}{il}", "RMS_NORM", [x], x.nbytes, shape)
                if pin_norm:
                    x.backend = dev
                x = op(
                    f"{part}_normed-{il}",
                    "MUL",
                    [x, weight(f"blk.{il}.attn_{part}_norm.weight", dev)],
                    x.nbytes,
                    shape,
                )
                q3, k3 = (x, k3) if part == "q" else (q3, x)
        q = op(f"Qrope-{il}", "ROPE", [q3, pos], q.nbytes, ("f32", hp.head_dim_k, hp.n_head, u))
        k = op(f"Krope-{il}", "ROPE", [k3, pos], k.nbytes, ("f32", hp.head_dim_k, hp.n_head_kv, u))
        k_cache = _GT(f"cache_k_l{il}", "NONE", 0, buf=dev)
        v_cache = _GT(f"cache_v_l{il}", "NONE", 0, buf=dev)
        if legacy:  # llm_build_kv_store: ggml_cpy into a view of the cache (transposed V without FA)
            v_src = v if fa else view(f"vT-{il}", "TRANSPOSE", v, v.nbytes)
            set_k = _GT(f"k_cache_view-{il} (copy)", "CPY", 0, [k], view_src=k_cache, rows=u)
            set_v = _GT(f"v_cache_view-{il} (copy)", "CPY", 0, [v_src], view_src=v_cache, rows=u)
            expanded += [q, k, v, set_k, set_v]  # llm_build_kv: "added to the graph together"
        else:
            set_k = _GT(
                f"set_rows_k-{il}",
                "SET_ROWS",
                0,
                [view(f"k2-{il}", "VIEW", k, k.nbytes), k_idxs],
                view_src=k_cache,
                rows=u,
            )
            set_v = _GT(
                f"set_rows_v-{il}",
                "SET_ROWS",
                0,
                [view(f"v2-{il}", "RESHAPE", v3, v.nbytes), v_idxs],
                view_src=v_cache,
                rows=u,
            )
            expanded += [q, v3, k, set_k, set_v]  # build_attn: "added to the graph together"
        k_bytes = n_kv * _t(cache_type_k).row_bytes(kvd) * n_stream
        v_bytes = n_kv * _t(cache_type_v).row_bytes(vd) * n_stream
        qp = view(f"qp-{il}", "PERMUTE", view(f"q4-{il}", "VIEW", q, q.nbytes), q.nbytes)
        kp = view(f"kp-{il}", "PERMUTE", view(f"k-{il}", "VIEW", k_cache, k_bytes), k_bytes)
        vp = view(f"vp-{il}", "PERMUTE", view(f"v-{il}", "VIEW", v_cache, v_bytes), v_bytes)
        if fa:
            att = op(
                f"fattn-{il}",
                "FLASH_ATTN_EXT",
                [qp, kp, vp, mask_cnv],
                hp.head_dim_v * hp.n_head * u * f32,
                ("f32", hp.head_dim_v, hp.n_head, u),
            )
            att = view(f"kqv_out-{il}", "RESHAPE", att, att.nbytes)
        else:
            kq = op(f"kq-{il}", "MUL_MAT", [kp, qp], n_kv * u * hp.n_head * f32, ("f32", n_kv, u, hp.n_head))
            kq = op(f"kq_soft_max-{il}", "SOFT_MAX", [kq, mask], kq.nbytes, kq.layout)
            kqv = op(f"kqv-{il}", "MUL_MAT", [vp, kq], hp.head_dim_v * u * hp.n_head * f32, ("kqv",))
            att = op(
                f"kqv_merged_cont-{il}",
                "CONT",
                [view(f"kqvp-{il}", "PERMUTE", kqv, kqv.nbytes)],
                kqv.nbytes,
                ("f32", hp.head_dim_v * hp.n_head, u),
            )
        cur = op(
            f"attn_out-{il}", "MUL_MAT", [weight(f"blk.{il}.attn_output.weight", dev), att], e * u * f32, emb
        )
        if il == hp.n_layer - 1:
            cur = op(f"out_rows-{il}", "GET_ROWS", [cur, out_ids], e * u * f32, emb, rows=0)
            inp_sa = op(f"sa_rows-{il}", "GET_ROWS", [inp_sa, out_ids], e * u * f32, emb, rows=0)
        ffn_inp = op(f"ffn_inp-{il}", "ADD", [cur, inp_sa], e * u * f32, emb)
        norm = op(f"norm-f{il}", "RMS_NORM", [ffn_inp], e * u * f32, emb)
        if pin_norm:
            norm.backend = dev
        cur = op(f"ffn_norm-{il}", "MUL", [norm, weight(f"blk.{il}.ffn_norm.weight", dev)], e * u * f32, emb)
        ff = ("f32", hp.n_ff, u)
        up = op(
            f"ffn_up-{il}", "MUL_MAT", [weight(f"blk.{il}.ffn_up.weight", dev), cur], hp.n_ff * u * f32, ff
        )
        gate = op(
            f"ffn_gate-{il}",
            "MUL_MAT",
            [weight(f"blk.{il}.ffn_gate.weight", dev), cur],
            hp.n_ff * u * f32,
            ff,
        )
        if legacy:  # llm_build_ffn LLM_FFN_SILU, LLM_FFN_PAR: silu(gate) * up
            silu = op(f"ffn_silu-{il}", "UNARY", [gate], hp.n_ff * u * f32, ff)
            glu = op(f"ffn_gate_par-{il}", "MUL", [silu, up], hp.n_ff * u * f32, ff)
        else:
            glu = op(f"ffn_swiglu-{il}", "GLU", [gate, up], hp.n_ff * u * f32, ff)
        down = op(
            f"ffn_down-{il}", "MUL_MAT", [weight(f"blk.{il}.ffn_down.weight", dev), glu], e * u * f32, emb
        )
        inp_l = op(f"l_out-{il}", "ADD", [down, ffn_inp], e * u * f32, emb)
    out_b = layer_backend[hp.n_layer]
    norm = op("norm", "RMS_NORM", [inp_l], e * u * f32, emb)
    cur = op("result_norm", "MUL", [norm, weight("output_norm.weight", out_b)], e * u * f32, emb)
    out_w = weight("token_embd.weight" if hp.tied else "output.weight", out_b)  # tied: duplicated
    logits = op("result_output", "MUL_MAT", [out_w, cur], hp.n_vocab * u * f32, ("f32", hp.n_vocab, u))
    return _graph_order([*expanded, logits])


def _sched_split(
    nodes: list[_GT],
    leafs: list[_GT],
    op_offload: bool = True,
    *,
    n_backends: int = 2,
    n_copies: int = 1,
) -> tuple[list[_GT], list[_GT], int]:
    """ggml-backend.cpp ggml_backend_sched_split_graph (ec98e2002) for the GPUs (backends 0 ..
    n_backends - 2, in priority order) and the CPU (the last backend).

    Pass 1: an op takes its pre-allocated destination's backend (a KV store, a cache view: the
    backend of the GPU holding that layer), a graph input the CPU, an op on a weight the weight's
    backend, except that a weight in host memory hands its op to the first GPU when that GPU's
    offload_op accepts it (ggml-cuda.cu ggml_backend_cuda_device_offload_op: get_op_batch_size >=
    32; GET_ROWS never): at a micro-batch of 32 or more every op of a CPU layer runs on CUDA0,
    its weights copied there. Passes 2-4 spread each GPU (then any backend) up and down to
    unassigned ops; an op left over takes the backend that holds most of its sources. Pass 5 cuts
    a split at each change of backend and at each weight from another backend ("the memory of
    the previously offloaded weights can be reused"); a source from another backend (a GPU
    cannot read another GPU's or the host's buffer: ggml_backend_cuda_device_supports_buft) is
    copied into the split's backend once per (source, backend) and the copy replaces it.

    With ``n_copies`` > 1 (pipeline parallelism) every such copy is made ``n_copies`` times and
    each copy is flagged input and output, and each graph input (tokens, positions, the KQ mask,
    the KV indices, the output ids) gets ``n_copies`` copies on its own backend, flagged the
    same; all of them go into the graph's leafs, ahead of its own, so that ggml-alloc.c places
    them first and never frees them.

    Returns the leafs in the order the allocator takes them, the sequence of nodes it walks (at
    the start of each split, each input's dependency and its current copy), each tensor with its
    backend set, and the number of splits."""
    cpu = n_backends - 1

    def buf_of(t: _GT) -> int | None:
        if t.buf is not None:
            return t.buf
        return t.view_src.buf if t.view_src is not None else None

    def from_cur(t: _GT) -> int:
        b = buf_of(t)
        if b is not None:
            return b
        if t.inp:
            return cpu
        for s in t.src:
            if t.op != "ROPE" and s.weight:
                if op_offload and s.buf == cpu and cpu > 0 and t.op != "GET_ROWS" and t.rows >= 32:
                    return 0  # the highest-priority GPU whose offload_op wants it
                return s.buf if s.buf is not None else -1
        return -1

    for t in (*leafs, *nodes):
        if t.backend == -1:
            t.backend = from_cur(t)
    order = [t for t in nodes if t.op not in _VIEW_OPS]
    for seq, gpu_only in ((order, True), (order[::-1], True), (order, False), (order[::-1], False)):
        cur = -1
        for t in seq:
            if t.backend != -1:
                cur = -1 if (gpu_only and t.backend == cpu) else t.backend
            elif cur != -1:
                t.backend = cur

    def bid(t: _GT) -> int:
        b = buf_of(t)
        if b is not None:
            return b
        if t.backend != -1:
            return t.backend
        return t.view_src.backend if t.view_src is not None else -1

    for t in order:  # pass 3: an unassigned op to the backend holding most of its sources
        if t.backend == -1:
            counts = [sum(1 for s in t.src if bid(s) == b) for b in range(n_backends)]
            t.backend = counts.index(max(counts))  # the first of the best, in priority order
    for t in nodes:  # pass 4: views and sources follow their source or their user
        if t.view_src is not None and t.backend == -1:
            t.backend = bid(t.view_src)
        for s in t.src:
            if s.backend == -1:
                s.backend = bid(s.view_src) if s.view_src is not None else t.backend
        if t.backend == -1:
            t.backend = 0
    copies: dict[tuple[int, int], _GT] = {}
    input_leafs: list[_GT] = []  # the graph inputs' copies (n_copies > 1)
    split_leafs: list[_GT] = []  # the split inputs' copies (n_copies > 1)
    seen_inputs: set[int] = set()
    out: list[_GT] = []
    split_nodes: list[_GT] = []
    split_inputs: list[_GT] = []
    cur_b: int | None = None
    n_splits = 0

    def close() -> None:
        out.extend(split_inputs)
        out.extend(split_nodes)

    def dup(s: _GT, b: int, c: int) -> _GT:
        d = _GT(f"{s.name}#{b}#{c}", "NONE", s.nbytes, pad=s.pad if b != cpu else 0, inp=n_copies > 1)
        d.backend = b
        d.out = n_copies > 1  # "prevent ggml-alloc from overwriting the tensor"
        return d

    for t in nodes:
        if t.op in _VIEW_OPS:
            split_nodes.append(t)
            continue
        b = t.backend
        new = b == cur_b and bool(split_inputs) and any(s.weight and bid(s) != cur_b for s in t.src)
        if cur_b is None or b != cur_b or new:
            if cur_b is not None:
                close()
            cur_b, split_inputs, split_nodes = b, [], []
            n_splits += 1
        for j, s in enumerate(t.src):
            if s.inp and n_copies > 1 and id(s) not in seen_inputs:
                # the original is the current copy; the others are new tensors on its backend
                seen_inputs.add(id(s))
                s.out = True
                input_leafs.append(s)
                input_leafs.extend(dup(s, bid(s), c) for c in range(1, n_copies))
            if bid(s) != cur_b:
                key = (id(s), cur_b)
                if key not in copies:
                    made = [dup(s, cur_b, c) for c in range(n_copies)]
                    copies[key] = made[0]
                    if n_copies > 1:
                        split_leafs.extend(made)
                    # "add a dependency to the input source so that it is not freed before the copy"
                    dep = _GT(f"{s.name} (view)", "NONE", 0, [s], view_src=s.view_src or s)
                    dep.backend = bid(s)
                    split_inputs += [dep, made[0]]
                t.src[j] = copies[key]
        split_nodes.append(t)
    close()
    for t in out:
        t.backend = bid(t)
    for t in leafs:
        t.backend = bid(t)
    return [*input_leafs, *split_leafs, *leafs], out, n_splits


class _DynAlloc:
    """ggml-alloc.c ggml_dyn_tallocr (one chunk): the best-fitting free block other than the last,
    else the last block, which grows the buffer; a freed block merges with its neighbours."""

    def __init__(self, alignment: int) -> None:
        self.align = alignment
        self.blocks: list[list[int]] = [[0, 1 << 62]]
        self.max_size = 0

    def alloc(self, size: int) -> int:
        size = _pad(size, self.align)
        best, best_size = len(self.blocks) - 1, None
        for i, (_, sz) in enumerate(self.blocks[:-1]):
            if sz >= size and (best_size is None or sz <= best_size):
                best, best_size = i, sz
        blk = self.blocks[best]
        addr = blk[0]
        blk[0] += size
        blk[1] -= size
        if blk[1] == 0:
            del self.blocks[best]
        self.max_size = max(self.max_size, addr + size)
        return addr

    def free(self, addr: int, size: int) -> None:
        size = _pad(size, self.align)
        for i, blk in enumerate(self.blocks):
            if blk[0] + blk[1] == addr:
                blk[1] += size
                if i + 1 < len(self.blocks) and blk[0] + blk[1] == self.blocks[i + 1][0]:
                    blk[1] += self.blocks.pop(i + 1)[1]
                return
            if addr + size == blk[0]:
                blk[0] = addr
                blk[1] += size
                if i > 0 and self.blocks[i - 1][0] + self.blocks[i - 1][1] == blk[0]:
                    self.blocks[i - 1][1] += self.blocks.pop(i)[1]
                return
        pos = 0
        while pos < len(self.blocks) and self.blocks[pos][0] < addr:
            pos += 1
        self.blocks.insert(pos, [addr, size])


def _gallocr_sizes(
    leafs: Sequence[_GT], seq: Sequence[_GT], alignments: Mapping[int, int], cpu: int = _CPU
) -> dict[int, int]:
    """ggml-alloc.c ggml_gallocr_alloc_graph_impl (ec98e2002): the graph's leafs first (under
    pipeline parallelism the copies of every input come first among them), then each node in
    order, in place over a parent no one else reads when the op allows it, the layouts match and
    the parent is not an output (a view is never taken over: it is not the allocator's own), a
    tensor freed when its last reader (and every view of it) has run, an output never. Each
    backend's buffer (``alignments``: one per backend; ``cpu`` the host's, whose tensors are not
    padded) is its high-water mark."""
    allocs = {b: _DynAlloc(a) for b, a in alignments.items()}
    own: dict[int, tuple[int, int, int]] = {}  # id -> (backend, offset, size)
    done: set[int] = set()
    children: dict[int, int] = {}
    views: dict[int, int] = {}

    def alloc(t: _GT, b: int) -> None:
        k = id(t)
        if t.buf is not None or t.view_src is not None or k in done:
            return
        done.add(k)
        if t.op in _INPLACE_OPS:
            for p in t.src:
                pk = id(p)
                if (
                    pk in own
                    and not p.out
                    and p.layout == t.layout
                    and children.get(pk, 0) == 1
                    and views.get(pk, 0) == 0
                ):
                    own[k] = own.pop(pk)
                    return
        size = t.nbytes + (t.pad if b != cpu else 0)
        own[k] = (b, allocs[b].alloc(size), size)

    def free(t: _GT) -> None:
        if t.out:  # "graph outputs are never freed"
            return
        b, addr, size = own.pop(id(t))
        allocs[b].free(addr, size)

    for t in leafs:
        alloc(t, t.backend)
    for t in seq:
        if t.view_src is not None and t.op != "NONE":
            views[id(t.view_src)] = views.get(id(t.view_src), 0) + 1
        for s in t.src:
            children[id(s)] = children.get(id(s), 0) + 1
    for t in seq:
        for p in t.src:
            alloc(p, t.backend)
        alloc(t, t.backend)
        for p in t.src:
            pk = id(p)
            children[pk] -= 1
            if children[pk] == 0 and views.get(pk, 0) == 0:
                if p.view_src is not None:
                    vk = id(p.view_src)
                    views[vk] -= 1
                    if views[vk] == 0 and children.get(vk, 0) == 0 and vk in own:
                        free(p.view_src)
                elif pk in own:
                    free(p)
    return {b: a.max_size for b, a in allocs.items()}


def reserve_graph_buffers(
    hp: Hparams,
    tensors: Sequence[Tensor],
    layer_devices: Sequence[int],
    n_gpus: int = 1,
    *,
    n_ubatch: int,
    n_kv: int,
    n_stream: int = 1,
    flash_attn: bool = True,
    cache_type_k: str = "f16",
    cache_type_v: str = "f16",
    full_offload: bool | None = None,
    n_copies: int = 1,
    legacy: bool = False,
) -> tuple[tuple[int, ...], int, int]:
    """Each GPU's and the host's compute buffer (bytes) and the graph splits of the reserve graph at
    ``n_ubatch`` tokens, for a dense llama, qwen2 or qwen3 model over ``n_gpus`` GPUs in layer-split
    mode (``layer_devices``: each block's GPU, -1 for the CPU, then the output layer's), as the
    pinned build's scheduler splits it and its allocator places it.

    Each layer's ops run on the GPU that holds its weights and KV cache (the "norm" at a layer's
    start is pinned there when every layer is offloaded: llama-context.cpp graph_get_cb); a split
    starts where the next GPU's layers do, and the hidden state, the f16 KQ mask made on CUDA0 and
    the small inputs (positions, KV indices, output ids) are copied into it. ``n_copies`` > 1 is
    pipeline parallelism (ggml-backend.cpp ``ggml_backend_sched_new_ext``: ``n_copies = parallel ?
    GGML_SCHED_MAX_COPIES : 1``): each of those copies is held ``n_copies`` times, and each graph
    input ``n_copies`` times in the host's buffer, never freed (``ggml_backend_sched_split_graph``).
    ``legacy``: the graph of the builds that print ``llama_new_context_with_model``
    (``_llama_reserve_graph``)."""
    if hp.arch not in _GRAPH_ARCHS or hp.n_expert > 1 or hp.swa_layers:
        raise EngineError(f"the reserve graph is followed for dense {', '.join(_GRAPH_ARCHS)} models only")
    if len(layer_devices) != hp.n_layer + 1 or any(not -1 <= d < n_gpus for d in layer_devices):
        raise EngineError(
            f"layer_devices: one GPU index (or -1) per block and the output layer ({hp.n_layer + 1})"
        )
    if full_offload is None:
        full_offload = all(d >= 0 for d in layer_devices)
    # one walk per distinct placement: the --fit loop and the command's search ask for the same
    # placements again (a 70B on a 4090: 16 walks, 10 distinct)
    return _reserve_graph_walk(
        hp,
        tuple(tensors),
        tuple(layer_devices),
        n_gpus,
        n_ubatch,
        n_kv,
        n_stream,
        flash_attn,
        cache_type_k,
        cache_type_v,
        full_offload,
        n_copies,
        legacy,
    )


@lru_cache(maxsize=128)
def _reserve_graph_walk(
    hp: Hparams,
    tensors: tuple[Tensor, ...],
    layer_devices: tuple[int, ...],
    n_gpus: int,
    n_ubatch: int,
    n_kv: int,
    n_stream: int,
    flash_attn: bool,
    cache_type_k: str,
    cache_type_v: str,
    full_offload: bool,
    n_copies: int,
    legacy: bool,
) -> tuple[tuple[int, ...], int, int]:
    """``reserve_graph_buffers`` once its arguments are checked (the walk itself, cached)."""
    cpu = n_gpus
    u = n_ubatch
    nodes, leafs = _llama_reserve_graph(
        hp,
        tensors,
        [cpu if d < 0 else d for d in layer_devices],
        cpu=cpu,
        u=u,
        n_kv=n_kv,
        n_stream=n_stream,
        fa=flash_attn,
        cache_type_k=cache_type_k,
        cache_type_v=cache_type_v,
        pin_norm=u < 32 or full_offload,
        legacy=legacy,
    )
    leafs, seq, n_splits = _sched_split(nodes, leafs, n_backends=n_gpus + 1, n_copies=n_copies)
    alignments = {g: CUDA_ALIGNMENT for g in range(n_gpus)} | {cpu: HOST_ALIGNMENT}
    sizes = _gallocr_sizes(leafs, seq, alignments, cpu)
    return tuple(sizes[g] for g in range(n_gpus)), sizes[cpu], n_splits


def reserve_compute_buffers(
    hp: Hparams,
    tensors: Sequence[Tensor],
    on_gpu: Sequence[bool],
    *,
    n_ubatch: int,
    n_kv: int,
    n_stream: int = 1,
    flash_attn: bool = True,
    cache_type_k: str = "f16",
    cache_type_v: str = "f16",
    full_offload: bool | None = None,
    legacy: bool = False,
) -> tuple[int, int, int]:
    """The GPU's and the host's compute buffers (bytes) and the graph splits of the reserve graph
    at ``n_ubatch`` tokens, for a dense llama, qwen2 or qwen3 model on one GPU (``on_gpu``: each block,
    then the output layer), as the pinned build's scheduler splits it and its allocator places it
    (``reserve_graph_buffers`` with one GPU).

    This is where a partial offload's GPU buffer comes from: at a micro-batch of 32 or more a
    CPU layer's ops run on the GPU, so the GPU buffer holds, at that layer's attention, copies of
    its K and V views over every cell and, at the first layer, the f32 KQ mask copied in beside
    its f16 cast (Bielik 11B, 23 CPU layers at 98,304 cells: 192 + 192 + 192 + 96 MiB)."""
    if hp.arch not in _GRAPH_ARCHS or hp.n_expert > 1 or hp.swa_layers:
        raise EngineError(f"the reserve graph is followed for dense {', '.join(_GRAPH_ARCHS)} models only")
    gpus, host, n_splits = reserve_graph_buffers(
        hp,
        tensors,
        [0 if g else -1 for g in on_gpu],
        1,
        n_ubatch=n_ubatch,
        n_kv=n_kv,
        n_stream=n_stream,
        flash_attn=flash_attn,
        cache_type_k=cache_type_k,
        cache_type_v=cache_type_v,
        full_offload=full_offload,
        legacy=legacy,
    )
    return gpus[0], host, n_splits


def _float32(x: float) -> float:
    import struct

    return struct.unpack("f", struct.pack("f", x))[0]


def llamacpp_startup(
    config: Mapping[str, Any],
    gpu: str | Accelerator,
    *,
    quant: str = "Q4_K_M",
    n_ctx: int,
    n_gpu_layers: int = -1,
    n_parallel: int = 1,
    cache_type_k: str = "f16",
    cache_type_v: str = "f16",
    flash_attn: bool | None = None,
    n_cpu_moe: int = 0,
    tensor_split: Sequence[float] | None = None,
    n_batch: int = 2048,
    n_ubatch: int = 512,
    total_bytes: float | None = None,
    kv_unified: bool = False,
    n_gpus: int = 1,
    override_tensors: Sequence[tuple[str, str]] = (),
    fit: bool = True,
    engine: str = "llama.cpp",
    output_tensor_type: str | None = None,
    token_embedding_type: str | None = None,
    host: str | None = None,
    use_mmap: bool = True,
    build: int | None = None,
    legacy_graph: bool = False,
    file_date: str | None = None,
    blas: bool = False,
) -> LlamaCppStartup:
    """What llama.cpp allocates when it loads ``config`` quantized as ``quant`` on ``gpu``.

    ``n_ctx`` 0 means the model's trained context. ``n_gpu_layers`` -1 is llama.cpp's default:
    every layer, then (``fit``, on by default in this build: common/common.h ``fit_params``) as
    many layers as leave a 1 GiB margin on the device. ``tensor_split`` (one weight per GPU) or
    ``n_gpus`` equal GPUs. ``override_tensors``: ``-ot`` pairs (regex, "CPU"). ``host``: the
    catalog's CPU whose memory holds the layers left on the CPU (it sets the decode speed of a
    partial offload); by default the catalog's desktop CPU, since a card that offloads is most
    often in a desktop — a server socket reads its share several times faster.
    ``use_mmap`` False (``--no-mmap``): the host's weights are loaded into allocated buffers, not
    mapped, each tensor padded to 32 bytes: a CPU layer's tensors (and token_embd) in the GPU
    backend's pinned host buffer ("CUDA_Host") when CUDA can run their op, else in "CPU"; a
    tensor overridden to the CPU in "CPU" before llama.cpp PR #14990, in the host buffer from it
    on (``build``: the log's build number, ``None`` for the pinned build, which has it).
    ``build`` also picks the layer placement: up to b7376 and in the pinned build, ``-ngl k`` puts
    the last k blocks on the GPU and the output layer only when every block is; from b7548
    (llama.cpp PR #18148) the output layer first, then the last k - 1 blocks; a partial
    offload on a build in between is refused.
    ``legacy_graph``: the log prints ``llama_new_context_with_model`` (an early-2025 or older
    build); where the reserve graph is walked it is that build's (``_llama_reserve_graph``: FFN
    as silu then mul in place, K/V stored by ggml_cpy, the mask padded to 32 rows).
    ``file_date``: a day (YYYY-MM-DD) by which the GGUF file existed, such as its log's date. The
    file's tensor order sets a mapped range (a CPU buffer under mmap, a Metal buffer): by default
    llama-quantize's weight_name_comparer order (llama.cpp b3999, PR #9935, on); a file that
    existed before 2024-10-31 keeps its converter's order, token_embd first (see PR9935_MERGED),
    and a placement whose mapped range depends on the rest of that order is refused.
    ``blas``: llama.cpp built with GGML_BLAS; the BLAS backend's compute buffer (printed "CPU
    compute buffer" beside a GPU's host buffer) is the ``"BLAS"`` device's (_blas_compute_bytes).
    """
    acc = resolve_gpu(gpu)
    hp = model_hparams(config)
    for name, value in (("cache_type_k", cache_type_k), ("cache_type_v", cache_type_v)):
        if value not in KV_TYPES:
            raise EngineError(f"{name} {value!r} is not a KV type llama.cpp accepts ({', '.join(KV_TYPES)})")
    for name, value in (
        ("n_ctx", n_ctx),
        ("n_parallel", n_parallel),
        ("n_batch", n_batch),
        ("n_ubatch", n_ubatch),
    ):
        if isinstance(value, bool) or not isinstance(value, int) or value < (0 if name == "n_ctx" else 1):
            raise EngineError(f"{name} must be a whole number ≥ {0 if name == 'n_ctx' else 1}")
    if not isinstance(n_gpu_layers, int) or n_gpu_layers < -1:
        raise EngineError("n_gpu_layers must be -1 (all) or a whole number ≥ 0")
    if not isinstance(n_cpu_moe, int) or n_cpu_moe < 0:
        raise EngineError("n_cpu_moe must be a whole number ≥ 0")
    if n_cpu_moe and hp.n_expert <= 1:
        raise EngineError("n_cpu_moe applies to a mixture-of-experts model; this one has no experts")
    if tensor_split is not None:
        if not tensor_split or any((not isinstance(x, (int, float))) or x < 0 for x in tensor_split):
            raise EngineError("tensor_split needs one non-negative weight per GPU")
        n_gpus = len(tensor_split)
    if not isinstance(n_gpus, int) or n_gpus < 1:
        raise EngineError("n_gpus must be a whole number ≥ 1")
    fa = True if flash_attn is None else bool(flash_attn)
    if cache_type_v not in ("f32", "f16", "bf16") and not fa:
        # src/llama-context.cpp llama_init_from_model: "V cache quantization requires flash_attn"
        raise EngineError("cache_type_v: a quantized V cache requires flash attention (flash_attn=True)")

    if acc.vendor == "Apple" and total_bytes is None:
        # ggml-metal-device.m: the Metal device reports recommendedMaxWorkingSetSize as its total,
        # a share of the Mac's RAM that macOS chooses and that no formula here can source
        raise EngineError(
            "total_bytes: on a Mac, llama.cpp's Metal device offers recommendedMaxWorkingSetSize, not the"
            " RAM; give the figure the log prints (ggml_metal_init: recommendedMaxWorkingSetSize), or"
            " metal_working_set(ram) for the range measured on Macs (2/3 to 3/4 of the RAM)"
        )
    dev_total = (
        float(total_bytes)
        if total_bytes is not None
        else float(reported_memory_bytes(acc) or acc.memory_bytes or 0)
    )
    if dev_total <= 0:
        raise EngineError(f"gpu {acc.id!r} has no memory capacity in the catalog: give total_bytes")
    is_metal = acc.vendor == "Apple"
    if not isinstance(use_mmap, bool):
        raise EngineError("use_mmap must be true or false")
    if build is not None and (isinstance(build, bool) or not isinstance(build, int) or build < 1):
        raise EngineError("build must be llama.cpp's build number (the log's 'build: N'), a whole number")
    if not use_mmap and is_metal:
        raise EngineError(
            "use_mmap: --no-mmap on Metal (device buffers allocated, not mapped) is not modelled"
        )
    override_to_host = True  # the pinned build has PR #14990
    if build is not None and not use_mmap and (override_tensors or n_cpu_moe):
        if build <= PR14990_BEFORE_BUILD:
            override_to_host = False
        elif build < PR14990_FROM_BUILD:
            raise EngineError(
                f"build {build}: whether it has llama.cpp PR #14990 (2025-07-31, the host buffer for"
                " tensors overridden to the CPU under --no-mmap) is not known here; it is placed for"
                f" builds up to b{PR14990_BEFORE_BUILD} and from b{PR14990_FROM_BUILD}"
            )
    # src/llama-model.cpp load_tensors: the output layer first from llama.cpp PR #18148 on
    output_first: bool | None = False  # the pinned ec98e2002 does not have it
    if build is not None:
        if build <= PR18148_BEFORE_BUILD:
            output_first = False
        elif build >= PR18148_FROM_BUILD:
            output_first = True
        else:
            output_first = None  # not known: refused below if the placement depends on it
    host_name = ("ROCm" if acc.vendor == "AMD" else "CUDA") + "_Host"
    for pair in override_tensors:
        if isinstance(pair, str) or not (
            isinstance(pair, Sequence) and len(pair) == 2 and all(isinstance(x, str) for x in pair)
        ):
            raise EngineError("override_tensors: each -ot entry is a (regex, buffer type) pair")
        try:
            re.compile(pair[0])
        except re.error as exc:
            raise EngineError(f"override_tensors: {pair[0]!r} is not a regular expression ({exc})") from exc
        m = _RE_GPU_BUFT.fullmatch(pair[1].strip())
        if not (pair[1].strip().upper().startswith("CPU") or (m and int(m.group(1)) < n_gpus)):
            raise EngineError(
                f"override_tensors: buffer type {pair[1]!r} is not CPU or one of the {n_gpus} GPUs (CUDA0 …)"
            )

    tensors = quant_types(hp, quant, output_tensor_type, token_embedding_type)
    file_bytes = sum(t.nbytes for t in tensors)
    # a file that existed before llama.cpp b3999 keeps its converter's order: token_embd first
    converter_order = file_date is not None and _file_predates_pr9935(file_date)
    if converter_order and hp.rope_freqs:
        # convert_hf_to_gguf.py LlamaModel.prepare_tensors (ik_llama.cpp 3f7899c25, mainline of
        # 2024-08) writes Llama 3.1's rope_freqs before the checkpoint's tensors
        raise EngineError(
            f"file_date {file_date}: a file quantized before llama.cpp b3999 keeps its converter's order,"
            " and a converter that writes rope_freqs (Llama 3.1's rope factors) puts it ahead of"
            " token_embd; that order is not followed"
        )
    if converter_order:
        tensors = sorted(tensors, key=lambda t: t.name != "token_embd.weight")  # stable: the rest as is
    if not isinstance(blas, bool):
        raise EngineError("blas must be true or false")
    if blas and is_metal:
        raise EngineError("blas: a BLAS backend beside Metal (both print a CPU buffer) is not modelled")
    if blas and engine != "llama.cpp":
        raise EngineError("blas: a BLAS backend is followed for llama.cpp's own scheduler, not Ollama's")

    # n_ctx, streams, batch (src/llama-context.cpp)
    ctx = n_ctx or hp.n_ctx_train
    if ctx <= 0:
        raise EngineError("n_ctx is 0 and the config gives no trained context: give n_ctx")
    ctx = _pad(ctx, N_CTX_PAD)
    if kv_unified:
        n_ctx_seq = ctx
    else:
        n_ctx_seq = _pad(ctx // n_parallel, N_CTX_PAD)
        ctx = n_ctx_seq * n_parallel
    n_stream = 1 if kv_unified else n_parallel
    nb = min(ctx, n_batch)
    nu = min(nb, n_ubatch)
    swa_cells = 0
    if hp.swa_layers:
        swa_cells = _pad(min(n_ctx_seq, hp.n_swa * (n_parallel if kv_unified else 1) + nu), 256)
    build_no = build  # the nested placement function below is also named build
    if hp.swa_layers and build_no is not None and build_no < SWA_CACHE_FROM_BUILD:
        if build_no > SWA_FULL_CELLS_UP_TO_BUILD:
            raise EngineError(
                f"build {build_no}: a sliding-window model's cache cells changed between"
                f" b{SWA_FULL_CELLS_UP_TO_BUILD} and b{SWA_CACHE_FROM_BUILD} (llama.cpp PR #13194, #13833);"
                f" they are modelled up to b{SWA_FULL_CELLS_UP_TO_BUILD} (every layer at the full context)"
                f" and from b{SWA_CACHE_FROM_BUILD}"
            )
        swa_cells = n_ctx_seq  # no separate SWA cache yet: every layer keeps the full context
    quantized_kv = [
        n
        for n, t in (("cache_type_k", cache_type_k), ("cache_type_v", cache_type_v))
        if t not in ("f32", "f16", "bf16")
    ]
    if hp.swa_layers and quantized_kv and build_no is not None and build_no > PR21277_BEFORE_BUILD:
        raise EngineError(
            f"{quantized_kv[0]}: from llama.cpp PR #21277 (April 2026) a sliding-window model's SWA"
            f" layers keep an f16 cache whatever -ctk/-ctv ask; build {build_no} may have it, and"
            f" quantized caches on sliding-window models are modelled up to b{PR21277_BEFORE_BUILD}"
        )

    # the reserve graph is walked (reserve_graph_buffers) for a dense llama/qwen2/qwen3 model on one
    # GPU or several in layer-split mode, with no -ot; otherwise the compute buffers are the
    # estimates below. Not for Ollama: its own engine builds its own graph
    # (model/models/*/model.go), which is not the one walked here
    graph_followed = (
        engine == "llama.cpp"
        and not is_metal
        and hp.arch in _GRAPH_ARCHS
        and hp.n_expert <= 1
        and not hp.swa_layers
        and not override_tensors
    )
    last_splits: dict[str, int | None] = {"n": None}  # of the last placement built with its buffers
    last_copies: dict[str, int] = {"n": 1}  # the scheduler's n_copies for that placement
    host_range: dict[str, tuple[float, float] | None] = {"r": None}  # of the last placement
    if build_no is None or build_no >= SET_ROWS_FROM_BUILD:
        set_rows_opts: tuple[bool, ...] = (True,)
    elif build_no <= SET_ROWS_NONE_UP_TO_BUILD:
        set_rows_opts = (False,)
    else:
        set_rows_opts = (False, True)  # not placed: a range

    def build(ngl: int, with_compute: bool = True) -> tuple[list[DeviceMemory], float, int, bool]:
        n_layer = hp.n_layer
        ngl_eff = n_layer + 1 if ngl < 0 else ngl
        if output_first is None and 0 < ngl_eff <= n_layer:
            raise EngineError(
                f"build {build_no}: whether -ngl {ngl_eff} of {n_layer + 1} layers offloads the output layer"
                " first (llama.cpp PR #18148) is not known for this build; the placement is followed"
                f" for builds up to b{PR18148_BEFORE_BUILD} and from b{PR18148_FROM_BUILD}"
            )
        # src/llama-model.cpp load_tensors: i_gpu_start = max(n_layer - ngl, 0) before PR #18148,
        # max(n_layer + 1 - ngl, 0) from it on (the output layer, index n_layer, goes first)
        i_gpu_start = max(n_layer + (1 if output_first else 0) - ngl_eff, 0)
        act = min(ngl_eff, n_layer + 1)
        weights = list(tensor_split) if tensor_split is not None else [1.0] * n_gpus
        total = sum(weights) or 1.0
        splits = []
        acc_sum = 0.0
        for w in weights:
            acc_sum += w
            splits.append(_float32(_float32(acc_sum) / _float32(total)))

        def dev_of(il: int) -> int:  # -1 = CPU
            if il < i_gpu_start or (il - i_gpu_start) >= act:
                return -1
            x = _float32(float(il - i_gpu_start) / act)
            for i, s in enumerate(splits):
                if x < s:
                    return i
            return len(splits) - 1

        patterns = [(re.compile(p), d) for p, d in override_tensors]
        model = [0.0] * n_gpus
        layers = [0] * n_gpus
        cpu_idx: list[int] = []
        overridden: set[int] = set()
        gpu_idx: dict[int, list[int]] = {}
        offsets = []
        off = 0
        for t in tensors:
            off = _pad(off, GGUF_ALIGNMENT)
            offsets.append((off, off + t.nbytes))
            off += t.nbytes
        layer_dev = [dev_of(il) for il in range(n_layer + 1)]  # the output layer last
        for i, t in enumerate(tensors):
            if t.layer == -1:
                d = -1
            elif t.layer == -2:
                d = layer_dev[n_layer]
            else:
                d = layer_dev[t.layer]
            if t.is_expert and t.layer < n_cpu_moe:
                d = -1  # common/arg.cpp --n-cpu-moe: blk.N.ffn_(up|down|gate)_exps on the CPU
                overridden.add(i)
            for pat, where in patterns:
                if pat.search(t.name):
                    if where.upper().startswith("CPU"):
                        d = -1
                        overridden.add(i)
                    elif m := _RE_GPU_BUFT.fullmatch(where.strip()):
                        d = int(m.group(1))  # -ot ...=CUDA1: that device's buffer
                    break
            if d < 0:
                cpu_idx.append(i)
            else:
                size = t.nbytes
                if t.type in _QUANTIZED and t.shape[0] % CUDA_MATRIX_ROW_PADDING and not is_metal:
                    size += _t(t.type).row_bytes(
                        CUDA_MATRIX_ROW_PADDING - t.shape[0] % CUDA_MATRIX_ROW_PADDING
                    )
                model[d] += _pad(size, CUDA_ALIGNMENT)
                gpu_idx.setdefault(d, []).append(i)
        if converter_order:
            # only token_embd's place (first) is known: a mapped range is followed where it is
            # token_embd alone or every other tensor (a tied output maps token_embd on Metal too)
            rest = set(range(1, len(tensors)))
            mapped = [set(cpu_idx)] if use_mmap or is_metal else []
            if is_metal:
                mapped += [set(ix) for ix in gpu_idx.values()]
            if any(s and s != {0} and s != rest for s in mapped) or (is_metal and hp.tied):
                raise EngineError(
                    f"file_date {file_date}: a file quantized before llama.cpp b3999 (PR #9935) keeps"
                    " its converter's tensor order, of which only token_embd's place (first) is"
                    " followed; this placement maps a file range that depends on the rest of it"
                )
        if is_metal:
            # src/llama-model.cpp load_tensors: a device that can wrap host memory (Metal) maps
            # the file range from its first tensor to its last, as the CPU buffer does. A tied
            # output is token_embd duplicated into the output layer's context under its own name
            # (llama-model-loader.cpp create_tensor, TENSOR_DUPLICATED), so get_mapping_range
            # counts token_embd's place in the file: the range covers it, nothing is added
            # (llama.cpp's loader; Ollama's own engine keeps the duplicate added below)
            embd_i = next(i for i, t in enumerate(tensors) if t.name == "token_embd.weight")
            for d, idx in gpu_idx.items():
                ends = [offsets[idx[0]][0], offsets[idx[-1]][1]]
                if hp.tied and d == dev_of(n_layer) and engine == "llama.cpp":
                    ends += list(offsets[embd_i])
                model[d] = max(ends) - min(ends)
        if hp.tied and not (is_metal and engine == "llama.cpp"):
            # the output reuses token_embd, duplicated onto the output layer's device (allocated)
            d = dev_of(n_layer)
            emb = next(t for t in tensors if t.name == "token_embd.weight")
            if d >= 0:
                model[d] += _pad(emb.nbytes, CUDA_ALIGNMENT)
        for il in range(n_layer):
            d = dev_of(il)
            if d >= 0:
                layers[d] += 1
        if dev_of(n_layer) >= 0:
            layers[dev_of(n_layer)] += 1
        cpu_mapped = 0.0
        host_bufs: dict[str, float] = {}
        if cpu_idx and (use_mmap or is_metal):
            cpu_mapped = offsets[cpu_idx[-1]][1] - offsets[cpu_idx[0]][0]
        elif cpu_idx:
            # src/llama-model.cpp load_tensors without mmap: one buffer per buffer type, allocated
            # (ggml_backend_alloc_ctx_tensors_from_buft), each tensor padded to the type's alignment;
            # select_weight_buft takes the first type of make_cpu_buft_list whose device runs the
            # weight's op: the GPU's host buffer, then the CPU's
            for i in cpu_idx:
                t = tensors[i]
                buft = host_name
                if i in overridden and not override_to_host:
                    buft = "CPU"  # before PR #14990: the override's own buffer type, as given
                elif t.name == "token_embd.weight" and t.type not in CUDA_GET_ROWS_TYPES:
                    buft = "CPU"  # GET_ROWS of a k-quant does not run on CUDA
                host_bufs[buft] = host_bufs.get(buft, 0.0) + _pad(t.nbytes, HOST_ALIGNMENT)
        # KV cache per device (offload_kqv on: each layer's cache on its layer's device)
        kv = [0.0] * n_gpus
        kv_cpu = 0.0
        for il in range(n_layer):
            cells = swa_cells if hp.is_swa(il) else n_ctx_seq
            k, v = _kv_layer_bytes(hp, il, cells, n_stream, cache_type_k, cache_type_v, not fa)
            d = dev_of(il)
            if d >= 0:
                kv[d] += k + v
            else:
                kv_cpu += k + v
        full = all(dev_of(il) >= 0 for il in range(n_layer + 1))
        devs = []
        host_experts = [tensors[i] for i in cpu_idx if tensors[i].is_expert]
        graph_gpu: tuple[int, ...] | None = None
        graph_host = 0.0  # the host's compute buffer (printed as CUDA_Host / ROCm_Host), when walked
        if graph_followed and with_compute:
            # src/llama-context.cpp llama_context: pipeline parallelism when there is more than one
            # device, -ngl above n_layer (every layer offloaded), split mode layer (the only one
            # modelled), offload_kqv (on) and no tensor overrides; CUDA and ROCm devices have the
            # async compute and events it also requires
            pipeline = n_gpus > 1 and ngl_eff > n_layer and not override_tensors and not n_cpu_moe
            last_copies["n"] = GGML_SCHED_MAX_COPIES if pipeline else 1
            graph_gpu, graph_host, last_splits["n"] = reserve_graph_buffers(
                hp,
                tensors,
                [dev_of(il) for il in range(n_layer + 1)],
                n_gpus,
                n_ubatch=nu,
                n_kv=n_ctx_seq,
                n_stream=n_stream,
                flash_attn=fa,
                cache_type_k=cache_type_k,
                cache_type_v=cache_type_v,
                full_offload=ngl_eff > n_layer,
                n_copies=last_copies["n"],
                legacy=bool(legacy_graph),
            )
        host_range["r"] = None
        if graph_gpu is None and with_compute and engine == "llama.cpp" and any(layers):
            # the estimate path: the host's buffer holds the graph inputs (_host_input_bytes); with
            # no layer offloaded the CPU backend runs the graph in its own buffer, not sized here
            pipeline = n_gpus > 1 and ngl_eff > n_layer and not override_tensors and not n_cpu_moe
            sizes = [
                _host_input_bytes(
                    hp, nu, n_ctx_seq, swa_cells, fa, sr, GGML_SCHED_MAX_COPIES if pipeline else 1
                )
                for sr in set_rows_opts
            ]
            graph_host = float(max(sizes))
            if len(sizes) > 1:
                host_range["r"] = (float(min(sizes)), float(max(sizes)))
        elif graph_gpu is None and with_compute and engine == "llama.cpp":
            # no layer offloaded (or a CPU-only build, which prints the same): the CPU backend holds
            # every layer and the output and runs the graph in its own ("CPU") buffer; the same
            # derived estimate as a GPU's that holds them all (_compute_estimate)
            graph_host = float(_compute_estimate(hp, nu, n_ctx_seq, fa, with_output=True))
        for g in range(n_gpus):
            comp = 0.0
            if not with_compute:
                pass
            elif graph_gpu is not None:
                comp = float(graph_gpu[g])
            elif layers[g]:
                last = g == dev_of(n_layer)
                comp = _compute_estimate(hp, nu, n_ctx_seq, fa, with_output=last or not full)
            if g == 0 and host_experts and not is_metal and nu >= CUDA_OFFLOAD_MIN_BATCH:
                comp = max(comp, _host_expert_copy_estimate(hp, host_experts, nu, n_ctx_seq, fa))
            name = "Metal" if is_metal else f"CUDA{g}"
            devs.append(DeviceMemory(name, model[g], kv[g], comp, dev_total, layers[g]))
        host_layers = sum(1 for il in range(n_layer + 1) if dev_of(il) < 0)
        if host_bufs.get(host_name):
            devs.append(DeviceMemory(host_name, host_bufs[host_name], 0.0, 0.0, None, 0))
        if blas:
            # the BLAS backend (an ACCEL device, GGML_BLAS builds): the MUL_MATs on host weights
            host_mm = [
                ("output" if tensors[i].name == "output.weight" else tensors[i].name, *tensors[i].shape)
                for i in cpu_idx
                if len(tensors[i].shape) == 2 and tensors[i].name != "token_embd.weight"
            ]
            if dev_of(n_layer) < 0 and with_compute and nu >= BLAS_MIN_BATCH:
                # the output's MUL_MAT would be the BLAS backend's, its logits leaving the GPU's
                # buffer, where the GPU's estimate counts them
                raise EngineError(
                    "blas: the output layer in host memory with a BLAS backend (its logits in the"
                    " BLAS buffer, not a GPU's) is not followed; offload every layer (-ngl 99)"
                )
            comp = float(_blas_compute_bytes(host_mm, nu)) if with_compute else 0.0
            devs.append(DeviceMemory("BLAS", 0.0, 0.0, comp, None, 0))
        devs.append(
            DeviceMemory(
                "CPU", cpu_mapped + host_bufs.get("CPU", 0.0), kv_cpu, float(graph_host), None, host_layers
            )
        )
        offloaded = sum(layers)
        return devs, cpu_mapped, offloaded, dev_of(n_layer) >= 0

    n_layers_max = hp.n_layer + 1
    ngl = n_gpu_layers
    notes: list[str] = []
    devs, cpu_mapped, offloaded, output_on_gpu = build(ngl)
    over = any(d.used_bytes > dev_total for d in devs if d.total_bytes is not None)
    if (
        ngl == -1
        and fit
        and any(d.used_bytes > dev_total - FIT_MARGIN for d in devs if d.total_bytes is not None)
    ):
        # src/llama.cpp llama_params_fit_impl: fewer layers until every device keeps its margin
        budget = dev_total - FIT_MARGIN
        for n in range(n_layers_max - 1, -1, -1):
            if graph_followed and n > 0:
                # weights and KV alone over the margin: no compute buffer can help (and the
                # reserve graph, the slow part, is not walked for this count)
                bare = build(n, with_compute=False)[0]
                if any(d.used_bytes > budget for d in bare if d.total_bytes is not None):
                    continue
            devs, cpu_mapped, offloaded, output_on_gpu = build(n)
            if all(d.used_bytes <= dev_total - FIT_MARGIN for d in devs if d.total_bytes is not None):
                ngl = n
                notes.append(f"--fit: {n} of {n_layers_max} layers keep a 1 GiB margin on each GPU")
                if total_bytes is None:
                    notes.append(
                        "--fit measures the memory free when llama.cpp starts (its log's 'N MiB free'),"
                        " a few hundred MiB below the reported total this count used (the CUDA context,"
                        " a display): give that figure as the device's memory for the exact count"
                    )
                break
        over = any(d.used_bytes > dev_total for d in devs if d.total_bytes is not None)
    if over:
        worst = max((d for d in devs if d.total_bytes is not None), key=lambda d: d.used_bytes)
        verdict = "will not start"
        message = (
            f"{worst.name} needs {worst.used_bytes / GiB:.2f} GiB (model {worst.model_bytes / MiB:.0f} MiB, "
            f"KV {worst.kv_bytes / MiB:.0f} MiB, compute {worst.compute_bytes / MiB:.0f} MiB) of "
            f"{dev_total / GiB:.2f} GiB: cudaMalloc fails (fewer layers with -ngl, a smaller -c,"
            " or a quantized KV cache)"
        )
    elif offloaded < n_layers_max:
        verdict = "offloads"
        message = (
            f"offloads {offloaded}/{n_layers_max} layers to the GPU; "
            f"{n_layers_max - offloaded} stay on the CPU"
        )
    else:
        verdict = "fits"
        message = f"all {n_layers_max} layers on the GPU" + ("s" if n_gpus > 1 else "")
    if (
        not graph_followed
        and not is_metal
        and offloaded < n_layers_max
        and nu >= CUDA_OFFLOAD_MIN_BATCH
        and verdict != "will not start"
    ):
        notes.append(
            "compute buffer: an estimate that does not hold the copies a CPU layer's ops make on the GPU"
            f" at a {nu}-token micro-batch (its K/V views, the KQ mask, the output weight when the output"
            " layer stays on the CPU): the reserve graph is walked for dense llama, qwen2 and qwen3 models"
            " only, so the GPU may need more than shown"
        )
    tps = None
    if verdict != "will not start":
        host_row = _host_row(host)
        tps = _decode_tokens_per_s(acc, devs, is_metal, host_row)
        if tps is not None and verdict == "offloads":
            message += f"; decode about {tps:.0f} tokens/s, bound by reading both sides' weights" + (
                "" if is_metal or host_row is None else f" (the CPU's share from {_host_label(host_row)})"
            )
    return LlamaCppStartup(
        engine=engine,
        version=LLAMACPP_VERSION,
        gpu=acc,
        quant=quant,
        hparams=hp,
        tensors=tuple(tensors),
        file_bytes=file_bytes,
        n_ctx=ctx,
        n_ctx_seq=n_ctx_seq,
        n_parallel=n_parallel,
        n_stream=n_stream,
        kv_cells=n_ctx_seq,
        swa_cells=swa_cells,
        flash_attn=fa,
        cache_type_k=cache_type_k,
        cache_type_v=cache_type_v,
        n_gpu_layers=ngl,
        offloaded_layers=offloaded,
        devices=tuple(devs),
        cpu_mapped_bytes=cpu_mapped,
        verdict=verdict,
        message=message,
        tokens_per_s=tps,
        notes=tuple(notes),
        output_first=bool(output_first),
        output_on_gpu=output_on_gpu,
        graph_splits=last_splits["n"] if graph_followed else None,
        n_copies=last_copies["n"] if graph_followed else 1,
        host_compute_range=host_range["r"],
    )


def _decode_tokens_per_s(
    acc: Accelerator, devs: Sequence[DeviceMemory], is_metal: bool, host: str | None
) -> float | None:
    """One token reads every weight once: the GPU's share at its bandwidth, the host's share at the
    host CPU's memory bandwidth (a catalog CPU row), when a layer stays on the CPU."""
    from simulators.hardware import get_accelerator

    gpu_bytes = sum(d.model_bytes + d.kv_bytes for d in devs if d.total_bytes is not None)
    cpu_bytes = sum(d.model_bytes + d.kv_bytes for d in devs if d.total_bytes is None)
    gpu_bw = acc.memory_bandwidth_bytes_per_s
    t = gpu_bytes / gpu_bw
    if cpu_bytes and not is_metal:
        if host is None:
            return None
        t += cpu_bytes / get_accelerator(host).memory_bandwidth_bytes_per_s
    elif cpu_bytes:
        t += cpu_bytes / gpu_bw  # a Mac's CPU reads the same unified memory
    return 1.0 / t if t > 0 else None


def _host_row(host: str | None) -> str | None:
    """``host`` checked against the catalog's CPUs, or the default: the first desktop CPU."""
    from simulators.hardware import host_cpus

    hosts = host_cpus()
    if host is None:
        return hosts[0] if hosts else None
    if host not in hosts:
        raise EngineError(f"host {host!r} is not a CPU of the catalog ({', '.join(hosts)})")
    return host


def _host_label(host: str) -> str:
    from simulators.hardware import get_accelerator

    row = get_accelerator(host)
    return f"{row.name}, {row.memory_type}, {row.memory_bandwidth_bytes_per_s / 1e9:,.1f} GB/s"


# ---------------------------------------------------------------------------------------------
# Metal: the working set a Mac's GPU offers
# ---------------------------------------------------------------------------------------------

METAL_WORKING_SET_CSV = DATA_DIR / "metal_working_set.csv"


@cache
def _metal_rows() -> tuple[dict[str, str], ...]:
    with METAL_WORKING_SET_CSV.open(encoding="utf-8", newline="") as handle:
        rows = tuple(csv.DictReader(handle))
    for row in rows:
        if not row["source"].startswith("https://") or int(row["working_set_bytes"]) <= 0:
            raise ValueError(f"metal_working_set.csv: row {row['mac']!r} needs bytes and a source")
    return rows


def metal_working_set(ram_bytes: float) -> tuple[float, float]:
    """The range of recommendedMaxWorkingSetSize a Mac with ``ram_bytes`` of unified memory offers
    llama.cpp's Metal device (ggml-metal-device.m reports it as the device's total).

    Measured, not derived: macOS chooses the share and Apple does not publish the rule. The
    two Macs read (data/metal_working_set.csv) offered 2/3 (8 GiB) and 3/4 (96 GiB) of their RAM;
    the range is the smallest and largest share seen, applied to ``ram_bytes``.
    """
    if isinstance(ram_bytes, bool) or not isinstance(ram_bytes, (int, float)) or ram_bytes <= 0:
        raise EngineError("ram_bytes must be the Mac's unified memory in bytes (> 0)")
    shares = [int(r["working_set_bytes"]) / int(r["ram_bytes"]) for r in _metal_rows()]
    return (ram_bytes * min(shares), ram_bytes * max(shares))


# ---------------------------------------------------------------------------------------------
# Hybrid models: attention KV on the full-attention layers, recurrent state on the others
# ---------------------------------------------------------------------------------------------

_HYBRID_TYPES = ("qwen3_next", "qwen3_5_text", "qwen3_5_moe_text", "qwen3_5", "qwen3_5_moe")


@dataclass(frozen=True)
class HybridCache:
    """What llama.cpp allocates for a hybrid model's memory (src/llama-memory-hybrid.cpp)."""

    attention_layers: int
    recurrent_layers: int
    kv_cells: int  # per stream
    n_stream: int
    kv_bytes: int
    r_bytes: int  # conv states: (d_conv - 1) x (d_inner + 2 n_group d_state) f32 per cell
    s_bytes: int  # ssm states: d_state x d_inner f32 per cell
    rs_cells: int  # max(1, n_seq_max): one state per sequence

    @property
    def rs_bytes(self) -> int:
        return self.r_bytes + self.s_bytes


def hybrid_cache(
    config: Mapping[str, Any],
    *,
    n_ctx: int,
    n_parallel: int = 1,
    kv_unified: bool = False,
    cache_type_k: str = "f16",
    cache_type_v: str = "f16",
) -> HybridCache:
    """The KV cache and recurrent state of a Qwen3-Next / Qwen3.5 model (gated delta net layers
    with a full-attention layer every ``full_attention_interval``), from its config.json.

    src/llama-model.cpp create_memory: a hybrid model gets llama_memory_hybrid, whose attention
    cache holds ``n_ctx`` cells (padded to 256 by llama-context.cpp) per stream, and whose
    recurrent cache holds ``max(1, n_seq_max)`` cells of R and S in f32
    (src/llama-memory-recurrent.cpp); src/llama-hparams.cpp n_embd_r / n_embd_s size one cell;
    convert_hf_to_gguf.py maps ssm.inner_size = linear_value_head_dim x linear_num_value_heads,
    ssm.state_size = linear_key_head_dim, ssm.group_count = linear_num_key_heads, ssm.conv_kernel =
    linear_conv_kernel_dim. The weights of these models are not sized here.
    """
    if not isinstance(config, Mapping):
        raise EngineError("config must be a config.json as a dict")
    cfg = config.get("text_config") if isinstance(config.get("text_config"), Mapping) else config
    model_type = str(cfg.get("model_type", ""))
    if model_type not in _HYBRID_TYPES:
        raise EngineError(
            f"model_type {model_type!r} is not a hybrid this model sizes ({', '.join(_HYBRID_TYPES)})"
        )
    for name, value in (("cache_type_k", cache_type_k), ("cache_type_v", cache_type_v)):
        if value not in KV_TYPES:
            raise EngineError(f"{name} {value!r} is not a KV type llama.cpp accepts ({', '.join(KV_TYPES)})")
    if isinstance(n_ctx, bool) or not isinstance(n_ctx, int) or n_ctx < 1:
        raise EngineError("n_ctx must be a whole number >= 1")
    if isinstance(n_parallel, bool) or not isinstance(n_parallel, int) or n_parallel < 1:
        raise EngineError("n_parallel must be a whole number >= 1")
    where = "the config"
    n_layer = _need(cfg, "num_hidden_layers", where)
    n_head_kv = _need(cfg, "num_key_value_heads", where)
    head = _need(cfg, "head_dim", where)
    types = cfg.get("layer_types")
    if isinstance(types, list) and len(types) == n_layer:
        attention = [t == "full_attention" for t in types]
    else:
        interval = _need(cfg, "full_attention_interval", where)
        attention = [(il + 1) % interval == 0 for il in range(n_layer)]
    d_conv = _need(cfg, "linear_conv_kernel_dim", where)
    d_state = _need(cfg, "linear_key_head_dim", where)
    n_group = _need(cfg, "linear_num_key_heads", where)
    d_inner = _need(cfg, "linear_value_head_dim", where) * _need(cfg, "linear_num_value_heads", where)
    n_attn = sum(attention)
    n_recr = n_layer - n_attn
    ctx = _pad(n_ctx, N_CTX_PAD)
    n_stream = 1 if kv_unified else n_parallel
    kv = (
        n_attn
        * ctx
        * n_stream
        * (_t(cache_type_k).row_bytes(n_head_kv * head) + _t(cache_type_v).row_bytes(n_head_kv * head))
    )
    cells = max(1, n_parallel)
    r = n_recr * cells * (d_conv - 1) * (d_inner + 2 * n_group * d_state) * 4
    s_ = n_recr * cells * d_state * d_inner * 4
    return HybridCache(n_attn, n_recr, ctx, n_stream, kv, r, s_, cells)


# ---------------------------------------------------------------------------------------------
# Ollama: its defaults and its offload decision
# ---------------------------------------------------------------------------------------------


@cache
def _ollama_llamacpp_builds() -> dict[str, int]:
    with OLLAMA_LLAMACPP_BUILDS_CSV.open(newline="") as f:
        return {row["ollama_version"]: int(row["llamacpp_build"]) for row in csv.DictReader(f)}


def ollama_llamacpp_build(version: str) -> int | None:
    """The llama.cpp build an Ollama release from v0.30.0 runs as its llama-server (the release's
    LLAMA_CPP_VERSION file, read in the Ollama tags: v0.30.0 b9452 .. v0.32.15 b10488), or None
    for a release not listed."""
    m = _RE_OLLAMA_VERSION_ARG.fullmatch(str(version).strip())
    return _ollama_llamacpp_builds().get(".".join(m.groups())) if m else None


def ollama_default_ctx(total_vram_bytes: float) -> int:
    """server/routes.go (Ollama v0.15.5): 262144 tokens from 47 GiB of VRAM, 32768 from 23 GiB,
    else 4096."""
    if total_vram_bytes >= 47 * GiB:
        return 262144
    if total_vram_bytes >= 23 * GiB:
        return 32768
    return 4096


def ollama_startup(
    config: Mapping[str, Any],
    gpu: str | Accelerator,
    *,
    quant: str = "Q4_K_M",
    num_ctx: int | None = None,
    num_parallel: int = 1,
    kv_cache_type: str = "",
    flash_attention: bool | None = None,
    total_bytes: float | None = None,
    host: str | None = None,
    version: str | None = None,
) -> LlamaCppStartup:
    """What Ollama asks llama.cpp for, and how many layers its scheduler puts on the GPU.

    ``version``: the Ollama release (as its log prints it, "0.20.2"); ``None`` is v0.15.5. The
    rules here are v0.15.5's and hold up to v0.25.0-rc0; an earlier or a later release (from
    v0.30.0 Ollama runs upstream llama-server) is refused by name, not predicted with them.
    The context is capped at the model's trained context (llm/server.go NewLlamaServer:
    "requested context size too large for model", num_ctx = n_ctx_train).

    Defaults (envconfig/config.go, server/routes.go): context 4k/32k/256k by VRAM, one parallel
    slot (OLLAMA_NUM_PARALLEL=1), OLLAMA_KV_CACHE_TYPE empty (f16). Flash attention
    (llm/server.go NewLlamaServer, a GGUF model on the llama.cpp runner): left to llama.cpp
    ("auto", which enables it on CUDA and Metal) unless OLLAMA_FLASH_ATTENTION is set
    (``flash_attention`` True or False); a quantized KV type is used only when flash attention
    was set on ("OLLAMA_FLASH_ATTENTION must be enabled to use a quantized
    OLLAMA_KV_CACHE_TYPE"). The KV size is num_ctx × parallel
    (llm/server.go ``KvSize: opts.NumCtx * numParallel``). Layers: llm/server.go greedyFit fills
    the GPU from the last layer (the output layer first) with each layer's weights and cache,
    after reserving DeviceInfo.MinimumMemory (457 MiB CUDA, 512 MiB Metal) and the graph; when
    not every layer fits it drops the output layer and tries again (assignLayers).
    """
    if version is not None:
        m = _RE_OLLAMA_VERSION_ARG.fullmatch(str(version).strip())
        if not m:
            raise EngineError(f"version {version!r} is not an Ollama release number (like 0.20.2)")
        v = tuple(int(x) for x in m.groups())
        if v < OLLAMA_RULES_FROM:
            raise EngineError(
                f"version {version}: Ollama before 0.15.5 is not modelled (a flat 4096-token default"
                " context until v0.15.4, and before v0.14.0 another vendored llama.cpp tree); the rules"
                " here are v0.15.5's, which hold up to v0.25.0-rc0"
            )
        if v >= OLLAMA_RULES_BEFORE:
            b = ollama_llamacpp_build(version)
            runs = f"b{b}, its LLAMA_CPP_VERSION" if b else "the llama.cpp build it bundles"
            raise EngineError(
                f"version {version}: from v0.30.0 Ollama runs upstream llama-server (llm/llama_server.go:"
                " -c num_ctx x parallel, -np, no -ngl, so llama-server's --fit places the layers), not"
                f" v0.15.5's scheduler; model it with llamacpp_startup at {runs}"
            )
    acc = resolve_gpu(gpu)
    if acc.vendor == "Apple" and total_bytes is None:
        raise EngineError(
            "total_bytes: on a Mac, Ollama sees the Metal device's recommendedMaxWorkingSetSize, not the RAM;"
            " give the figure its log prints"
        )
    total = (
        float(total_bytes)
        if total_bytes is not None
        else float(reported_memory_bytes(acc) or acc.memory_bytes or 0)
    )
    ctx = num_ctx if num_ctx is not None else ollama_default_ctx(total)
    train = model_hparams(config).n_ctx_train
    if train and isinstance(ctx, int) and ctx > train:
        ctx = train  # llm/server.go NewLlamaServer: opts.NumCtx = trainCtx
    kvt = kv_cache_type.lower() or "f16"
    if kvt not in ("f16", "q8_0", "q4_0"):
        raise EngineError(f"kv_cache_type {kv_cache_type!r} is not one Ollama accepts (f16, q8_0, q4_0)")
    if kvt != "f16" and flash_attention is not True:
        kvt = "f16"  # llm/server.go: the quantized type is dropped unless flash attention is set on
    kw = dict(
        quant=quant,
        n_ctx=ctx * num_parallel,
        n_parallel=num_parallel,
        cache_type_k=kvt,
        cache_type_v=kvt,
        flash_attn=flash_attention,
        total_bytes=total,
        kv_unified=False,
        fit=False,
        engine="ollama",
        host=host,
    )
    full = llamacpp_startup(config, acc, n_gpu_layers=-1, **kw)
    hp = full.hparams
    n_layers = hp.n_layer + 1
    gpu_dev = full.gpu_devices[0]
    # per-layer sizes (weights + cache) as Ollama's layout sees them
    per_layer = [0.0] * n_layers
    for t in full.tensors:
        if t.layer >= 0:
            per_layer[t.layer] += t.nbytes
        elif t.layer == -2:
            per_layer[-1] += t.nbytes
    if hp.tied:
        per_layer[-1] += next(t.nbytes for t in full.tensors if t.name == "token_embd.weight")
    per_layer_kv = full.kv_bytes / hp.n_layer
    for il in range(hp.n_layer):
        per_layer[il] += per_layer_kv
    minimum = OLLAMA_MIN_MEMORY_METAL if acc.vendor == "Apple" else OLLAMA_MIN_MEMORY_CUDA
    free = max(0.0, total - minimum - gpu_dev.compute_bytes)
    layers = list(per_layer)
    count = 0
    for _ in range(2):
        space = free
        count = 0
        for size in reversed(layers):
            if size > space:
                break
            space -= size
            count += 1
        if count == len(layers):
            break
        layers = layers[:-1]
    return llamacpp_startup(config, acc, n_gpu_layers=count, **kw)


# ---------------------------------------------------------------------------------------------
# Logs
# ---------------------------------------------------------------------------------------------

_UNIT = {"B": 1, "KiB": 2**10, "MiB": 2**20, "GiB": 2**30, "KB": 1e3, "MB": 1e6, "GB": 1e9}
_RE_BUILD = re.compile(r"build:\s*(\d+)\s*\(([0-9a-f]+)\)")
# "version=0.5.7" in older lines, "Listening on 127.0.0.1:11434 (version 0.20.2)" (server/routes.go)
_RE_OLLAMA_VER = re.compile(r'(?:version[=:]\s*"?|\(version )v?(\d+\.\d+\.\d+[\w.-]*?)\)?(?=["\s)]|$)')
_RE_MODEL_BUF = re.compile(
    r"(?:load_tensors|llm_load_tensors):\s+(\S+?)(?: model)? buffer size\s*=\s*([\d.]+) MiB"
)
_RE_KV_BUF = re.compile(
    r"(?:llama_kv_cache\w*|llama_kv_cache_init|llama_kv_cache_unified|init):"
    r"\s+(\S+) KV buffer size\s*=\s*([\d.]+) MiB"
)
_RE_KV_SIZE = re.compile(
    r"llama_kv_cache\w*:\s+size\s*=\s*([\d.]+) MiB\s*\(\s*(\d+) cells,\s*(\d+) layers,"
    r"\s*(\d+)(?:/(\d+))? seqs\),"
    r"\s*K \((\w+)\):\s*([\d.]+) MiB,\s*V \((\w+)\):\s*([\d.]+) MiB"
)
_RE_KV_SELF = re.compile(
    r"KV self size\s*=\s*([\d.]+) MiB,\s*K \((\w+)\):\s*([\d.]+) MiB,\s*V \((\w+)\):\s*([\d.]+) MiB"
)
_RE_COMPUTE = re.compile(
    r"(?:llama_context|llama_new_context_with_model|llama_init_from_model|graph_reserve|sched_reserve):"
    r"\s+(\S+) compute buffer size\s*=\s*([\d.]+) MiB"
)
_RE_OFFLOAD = re.compile(r"offloaded (\d+)/(\d+) layers to GPU")
_RE_SPLITS = re.compile(r"graph splits = (\d+)")  # the first reserve's (micro-batch) graph
# src/llama.cpp llama_params_fit_impl: the memory the start-up settings would take on the GPUs
_RE_FIT_PROJECTED = re.compile(r"llama_params_fit_impl: projected to use (\d+) MiB of device memory")
# the device's name may hold its own parentheses ("AMD Radeon (TM) Pro VII")
_RE_DEV_FREE = re.compile(r"using device (\w+) \((?:[^()]|\([^()]*\))*\)(?: \([^)]*\))? - (\d+) MiB free")
_RE_MMAP = re.compile(
    r"load_tensors: loading model tensors, this can take a while\.\.\. \(mmap = (true|false)"
)
_RE_PIPELINE = re.compile(r"pipeline parallelism enabled \(n_copies=(\d+)\)")
_RE_NCTX = re.compile(r"(?:llama_context|llama_new_context_with_model):\s+n_ctx\s*=\s*(\d+)")
_RE_NCTX_SEQ = re.compile(r"llama_context:\s+n_ctx_seq\s*=\s*(\d+)")
_RE_FILE_SIZE = re.compile(r"(?:file|model) size\s*=\s*([\d.]+) (GiB|MiB)(?:\s*\(([\d.]+) BPW\))?")
_RE_FILE_TYPE = re.compile(r"(?:file type|model ftype)\s*=\s*(.+?)\s*$", re.M)
_RE_TYPE_COUNT = re.compile(r"llama_model_loader: - type\s+(\w+):\s+(\d+) tensors")
_RE_TENSOR_LINE = re.compile(r"llama_model_loader: - tensor\s+\d+:\s+(\S+)\s+(\w+)\s+\[\s*([\d,\s]+)\]")
_RE_PRINT_INFO = re.compile(r"(?:print_info|llm_load_print_meta):\s+(\w+)\s+=\s+(\S+)")
_RE_KV_META = re.compile(r"llama_model_loader: - kv\s+\d+:\s+(\S+)\s+(\S+)\s+=\s+(.*)$")
_RE_TENSORS = re.compile(r"loaded meta data with \d+ key-value pairs and (\d+) tensors")
_RE_RS_SIZE = re.compile(
    r"llama_memory_recurrent:\s+size\s*=\s*([\d.]+) MiB\s*\(\s*(\d+) cells,.*?R \((\w+)\):\s*([\d.]+) MiB,"
    r"\s*S \((\w+)\):\s*([\d.]+) MiB"
)
_RE_SWA_CELLS = re.compile(r"creating\s+SWA KV cache, size = (\d+) cells")
_RE_OLLAMA_WEIGHTS = re.compile(r'msg="model weights" device=(\S+) size="([\d.]+) (\w+)"')
_RE_OLLAMA_KV = re.compile(r'msg="kv cache" device=(\S+) size="([\d.]+) (\w+)"')
_RE_OLLAMA_GRAPH = re.compile(r'msg="compute graph" device=(\S+) size="([\d.]+) (\w+)"')
_RE_OLLAMA_TOTAL = re.compile(r'msg="total memory" size="([\d.]+) (\w+)"')
_RE_OLLAMA_OFFLOAD = re.compile(
    r'msg="?offload(?: to \w+)?"?(?: library=\w+)? layers\.requested=(-?\d+)'
    r" layers\.model=(\d+) layers\.offload=(\d+)"
)
_RE_OLLAMA_REQ = re.compile(
    r"memory\.(required\.full|required\.partial|required\.kv|graph\.full|graph\.partial|weights\.total)"
    r'="([\d.]+) (\w+)"'
)
_RE_WORKING_SET = re.compile(r"recommendedMaxWorkingSetSize\s*=\s*([\d.]+) MB")


def _gguf_value(kind: str, raw: str) -> Any:
    raw = raw.strip()
    m = re.match(r"arr\[\w+,\s*(\d+)\]", kind)
    if kind.startswith("arr"):
        m2 = re.match(r"arr\[\w+,(\d+)\]", kind)
        return int(m2.group(1)) if m2 else (int(m.group(1)) if m else None)
    if kind in ("u32", "i32", "u64", "i64", "u16", "i16", "u8", "i8"):
        try:
            return int(raw)
        except ValueError:
            return None
    if kind in ("f32", "f64"):
        try:
            return float(raw)
        except ValueError:
            return None
    if kind == "bool":
        return raw == "true"
    return raw


def _strip(text: str) -> str:
    # ANSI colours and timestamps some front ends add
    return re.sub(r"\x1b\[[0-9;]*m|\[[0-9;]*m", "", text)


def parse_llamacpp_log(text: str) -> dict[str, Any]:
    """Every memory figure of a llama.cpp (or Ollama) start-up log, in bytes.

    Keys: ``engine``, ``version``, ``model_buffers`` {device: bytes}, ``kv_buffers`` {device:
    bytes}, ``kv_bytes``, ``kv_cells``, ``kv_layers``, ``kv_types``, ``compute_buffers``
    {device: bytes}, ``offloaded_layers``/``total_layers``, ``n_ctx``, ``file_bytes``, ``bpw``,
    ``file_type``, ``type_counts``, ``metadata`` (the GGUF keys printed), ``tensor_count``,
    ``graph_splits`` (of the micro-batch graph), ``fit_projected_bytes`` (--fit's projection of
    the start-up settings, whole MiB).
    """
    if not isinstance(text, str) or not text.strip():
        raise LogError("the log is empty: paste the lines llama.cpp printed as it started")
    text = _strip(text)
    out: dict[str, Any] = {"engine": "llama.cpp", "version": None}
    if re.search(r"level=\w+ source=\S+\.go:\d+", text):
        out["engine"] = "ollama"
        m = _RE_OLLAMA_VER.search(text)
        out["version"] = m.group(1) if m else None
    m = _RE_BUILD.search(text)
    if m:
        out["build"] = f"b{m.group(1)} ({m.group(2)})"
        if int(m.group(1)) > 0:  # Ollama's vendored tree prints "build: 0"
            out["build_number"] = int(m.group(1))  # llamacpp_startup(build=...) picks its rules by it
        if out["engine"] == "llama.cpp":
            out["version"] = out["build"]
    if "llama_new_context_with_model:" in text:
        # the context's lines before llama.cpp renamed the function llama_init_from_model: a build
        # whose reserve graph is the older one (llamacpp_startup(legacy_graph=True))
        out["legacy_context"] = True
    m = _RE_PIPELINE.search(text)
    if m:
        out["n_copies"] = int(m.group(1))  # "pipeline parallelism enabled (n_copies=4)"
    model: dict[str, float] = {}
    for dev, mib in _RE_MODEL_BUF.findall(text):
        model[dev] = model.get(dev, 0.0) + float(mib) * MiB
    kvb: dict[str, float] = {}
    for dev, mib in _RE_KV_BUF.findall(text):
        kvb[dev] = kvb.get(dev, 0.0) + float(mib) * MiB
    comp: dict[str, float] = {}
    for dev, mib in _RE_COMPUTE.findall(text):
        comp[dev] = float(mib) * MiB  # the last reserve wins
    if model:
        out["model_buffers"] = model
    if kvb:
        out["kv_buffers"] = kvb
    if comp:
        out["compute_buffers"] = comp
    sizes = _RE_KV_SIZE.findall(text)
    if sizes:
        out["kv_bytes"] = sum(float(s[0]) for s in sizes) * MiB
        out["kv_cells"] = [int(s[1]) for s in sizes]
        out["kv_layers"] = [int(s[2]) for s in sizes]
        out["kv_seqs"] = [(int(s[3]), int(s[4] or s[3])) for s in sizes]  # mid-2025 builds print "N seqs"
        out["kv_types"] = (sizes[0][5], sizes[0][7])
    else:
        ks = _RE_KV_SELF.search(text)
        if ks:
            out["kv_bytes"] = float(ks.group(1)) * MiB
            out["kv_types"] = (ks.group(2), ks.group(4))
    if "kv_bytes" not in out and kvb:
        out["kv_bytes"] = sum(kvb.values())
    rs = _RE_RS_SIZE.search(text)
    if rs:
        out["rs_bytes"] = float(rs.group(1)) * MiB
        out["rs_cells"] = int(rs.group(2))
        out["r_bytes"] = float(rs.group(4)) * MiB
        out["s_bytes"] = float(rs.group(6)) * MiB
    swa = _RE_SWA_CELLS.findall(text)
    if swa:
        out["swa_cells"] = int(swa[-1])
    m = _RE_OFFLOAD.search(text)
    if m:
        out["offloaded_layers"], out["total_layers"] = int(m.group(1)), int(m.group(2))
    m = _RE_SPLITS.search(text)
    if m:
        out["graph_splits"] = int(m.group(1))
    m = _RE_FIT_PROJECTED.search(text)
    if m:
        out["fit_projected_bytes"] = int(m.group(1)) * MiB
    free = _RE_DEV_FREE.findall(text)
    if free:
        # src/llama.cpp llama_model_load_from_file_impl prints each device's free memory; with no
        # -ts, src/llama-model.cpp load_tensors splits the layers in these proportions
        # ("default split, by free memory")
        out["device_free_bytes"] = {dev: int(mib) * MiB for dev, mib in free}
    m = _RE_MMAP.search(text)
    if m:
        out["use_mmap"] = m.group(1) == "true"
    nctx = _RE_NCTX.findall(text)
    if nctx:
        out["n_ctx"] = int(nctx[-1])
    m = _RE_NCTX_SEQ.search(text)
    if m:
        out["n_ctx_seq"] = int(m.group(1))
    m = _RE_FILE_SIZE.search(text)
    if m:
        out["file_bytes"] = float(m.group(1)) * _UNIT[m.group(2)]
        if m.group(3):
            out["bpw"] = float(m.group(3))
    m = _RE_FILE_TYPE.search(text)
    if m:
        out["file_type"] = m.group(1)
    counts = {t: int(n) for t, n in _RE_TYPE_COUNT.findall(text)}
    if counts:
        out["type_counts"] = counts
    meta: dict[str, Any] = {}
    for line in text.splitlines():
        mm = _RE_KV_META.search(line)
        if mm:
            meta[mm.group(1)] = _gguf_value(mm.group(2), mm.group(3))
    m = _RE_TENSORS.search(text)
    if m:
        out["tensor_count"] = int(m.group(1))
    if meta:
        out["metadata"] = meta
    listed = {name: typ for name, typ, _shape in _RE_TENSOR_LINE.findall(text)}
    if listed:
        out["tensor_types"] = listed
    info: dict[str, Any] = {}
    for key, value in _RE_PRINT_INFO.findall(text):
        try:
            info[key] = int(value)
        except ValueError:
            info[key] = value
    if info:
        out["print_info"] = info
    for key, rx in (
        ("ollama_weights", _RE_OLLAMA_WEIGHTS),
        ("ollama_kv", _RE_OLLAMA_KV),
        ("ollama_graph", _RE_OLLAMA_GRAPH),
    ):
        found = {}
        for dev, val, unit in rx.findall(text):
            found[dev] = found.get(dev, 0.0) + float(val) * _UNIT.get(unit, 1)
        if found:
            out[key] = found
    m = _RE_OLLAMA_OFFLOAD.search(text)
    if m:
        out["ollama_layers_requested"] = int(m.group(1))
        out["ollama_layers_model"] = int(m.group(2))
        out["ollama_layers_offload"] = int(m.group(3))
        tail = text[m.start() : text.find("\n", m.start()) if "\n" in text[m.start() :] else len(text)]
        out["ollama_estimate"] = {k: float(v) * _UNIT.get(u, 1) for k, v, u in _RE_OLLAMA_REQ.findall(tail)}
    m = _RE_WORKING_SET.search(text)
    if m:
        out["metal_working_set_bytes"] = float(m.group(1)) * 1e6
    figures = (
        "model_buffers",
        "kv_bytes",
        "compute_buffers",
        "ollama_weights",
        "ollama_layers_offload",
        "offloaded_layers",
        "file_bytes",
        "type_counts",
        "tensor_count",
        "metadata",
        "tensor_types",
        "rs_bytes",
    )
    if not any(k in out for k in figures):
        raise LogError(
            "This looks like llama.cpp or Ollama output, but it has none of the memory lines "
            "(model buffer size, KV buffer size, compute buffer size): paste the whole start-up."
        )
    return out


# print_info name -> GGUF key suffix (src/llama-model.cpp print_info prints the hparams it loaded)
_PRINT_INFO_KEYS = {
    "n_layer": "block_count",
    "n_embd": "embedding_length",
    "n_ff": "feed_forward_length",
    "n_head": "attention.head_count",
    "n_head_kv": "attention.head_count_kv",
    "n_embd_head_k": "attention.key_length",
    "n_embd_head_v": "attention.value_length",
    "n_ctx_train": "context_length",
    "n_expert": "expert_count",
    "n_expert_used": "expert_used_count",
    "n_ff_exp": "expert_feed_forward_length",
    "n_swa": "attention.sliding_window",
    "n_vocab": "vocab_size",
}


def log_config(parsed: Mapping[str, Any]) -> dict[str, Any]:
    """The model a parsed log describes, as GGUF keys ``llamacpp_startup`` takes: the
    "llama_model_loader: - kv" lines, completed by the hyper-parameters print_info printed,
    with the file's tensor count."""
    meta = dict(parsed.get("metadata") or {})
    info = parsed.get("print_info") or {}
    arch = meta.get("general.architecture") or info.get("arch")
    if arch and info:
        meta.setdefault("general.architecture", arch)
        for name, suffix in _PRINT_INFO_KEYS.items():
            value = info.get(name)
            if isinstance(value, int) and not (name in ("n_expert", "n_swa") and value == 0):
                meta.setdefault(f"{arch}.{suffix}", value)
    if not meta:
        raise EngineError("the log prints no GGUF metadata (llama_model_loader: - kv or print_info lines)")
    if "tensor_count" in parsed:
        meta["tensor_count"] = parsed["tensor_count"]
    return meta


def preset_of(parsed: Mapping[str, Any]) -> str | None:
    """The quantization preset a log's general.file_type names, when this module follows it."""
    ft = (parsed.get("metadata") or {}).get("general.file_type")
    return FILE_TYPES.get(ft) if isinstance(ft, int) else None
