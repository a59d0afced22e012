"""What each engine does with a model on a given machine: one module per engine, one ledger type.

- ``vllm``: vLLM's start-up ledger as its code computes it, and a reader for its logs.
- ``transformers``: the peak of one transformers prefill (``simulators.hf_runtime``).
- ``device``: the memory a device reports as its total, shared by every engine.
- ``ledger``: units, ``EngineError``, ``LogError``, and ``Ledger``/``Term`` — every engine's
  memory term by term, with its cause and source, derived or measured with a range.
- ``llamacpp``: llama.cpp's (and Ollama's) start-up: GGUF weights per device, KV cache, compute.
- ``logs``: ``parse_log(text)``, which recognises the engine and version of any start-up log.

Every public name is importable from ``simulators.engines``. Pure Python: no torch, no engine.
"""

from simulators.engines.device import (
    REPORTED_MEMORY_CSV,
    DeviceTotal,
    device_total,
    device_total_ids,
    reported_memory_bytes,
    reported_memory_ids,
    reported_memory_source,
)
from simulators.engines.ledger import (
    ENGINES,
    EngineError,
    GiB,
    Ledger,
    LogError,
    MiB,
    Term,
    resolve_gpu,
)
from simulators.engines.llamacpp import (
    LLAMACPP_VERSION,
    OLLAMA_VERSION,
    LlamaCppStartup,
    llamacpp_startup,
    ollama_startup,
    parse_llamacpp_log,
)
from simulators.engines.logs import detect_engine, parse_log
from simulators.engines.transformers import transformers_prefill
from simulators.engines.vllm import (
    DEFAULT_BLOCK_SIZE,
    LEDGER_TERMS,
    LOG_TERMS,
    VLLM_SOURCE,
    VLLM_VERSION,
    ConcurrencySpeed,
    KvGroup,
    KvPool,
    KvSpec,
    VllmStartup,
    WeightLayout,
    compare_with_log,
    format_gib,
    kv_layer_specs,
    kv_pool,
    ledger_breakdown,
    log_lines,
    parse_vllm_log,
    pipeline_stages,
    pp_partitions,
    rotary_table_bytes,
    scheduler_defaults,
    speed_at_concurrency,
    vision_tower_params,
    vllm_activation_bytes,
    vllm_startup,
    vllm_weight_bytes,
    weight_layout,
)

__all__ = [
    "DEFAULT_BLOCK_SIZE",
    "ENGINES",
    "LEDGER_TERMS",
    "LLAMACPP_VERSION",
    "LOG_TERMS",
    "OLLAMA_VERSION",
    "REPORTED_MEMORY_CSV",
    "VLLM_SOURCE",
    "VLLM_VERSION",
    "ConcurrencySpeed",
    "DeviceTotal",
    "EngineError",
    "GiB",
    "KvGroup",
    "KvPool",
    "KvSpec",
    "Ledger",
    "LlamaCppStartup",
    "LogError",
    "MiB",
    "Term",
    "VllmStartup",
    "WeightLayout",
    "compare_with_log",
    "detect_engine",
    "device_total",
    "device_total_ids",
    "format_gib",
    "kv_layer_specs",
    "kv_pool",
    "ledger_breakdown",
    "llamacpp_startup",
    "log_lines",
    "ollama_startup",
    "parse_llamacpp_log",
    "parse_log",
    "parse_vllm_log",
    "pipeline_stages",
    "pp_partitions",
    "reported_memory_bytes",
    "reported_memory_ids",
    "reported_memory_source",
    "resolve_gpu",
    "rotary_table_bytes",
    "scheduler_defaults",
    "speed_at_concurrency",
    "transformers_prefill",
    "vision_tower_params",
    "vllm_activation_bytes",
    "vllm_startup",
    "vllm_weight_bytes",
    "weight_layout",
]
