"""Every numeric lesson answer, recomputed straight from the simulators and data files.

``ANSWERS["<lesson-id>/<question-id>"]`` computes the number a lesson's ``answer:`` expression
should give, WITHOUT going through lessons/functions.py — so a mistake in a lesson expression or
in a lesson function shows up as a mismatch. tests/test_lessons.py requires an entry for every
numeric question and checks that ``grade(question, value)`` is true and
``grade(question, 1.5 × value + 1)`` is false.
"""

from __future__ import annotations

from collections.abc import Callable

from simulators import hierarchy, llm_memory, llm_speed, parallelism, roofline
from simulators import quantization as quant
from simulators.hardware import get_accelerator
from simulators.presets import get_model_preset


def _gpu(gpu_id: str):
    return get_accelerator(gpu_id)


def _decode(spec, gpu, **kwargs):
    """One decode step on ``gpu`` at its datasheet bandwidth and dense BF16 peak (llm_speed)."""
    return llm_speed.decode_step(
        spec,
        bandwidth_bytes_per_s=gpu.memory_bandwidth_bytes_per_s,
        peak_flops=gpu.bf16_dense_flops,
        **kwargs,
    )


def _spec(model_id: str):
    return get_model_preset(model_id).spec


ANSWERS: dict[str, Callable[[], float]] = {
    # ---- 03 roofline
    "roofline/ridge-h100": lambda: (
        _gpu("h100-sxm").bf16_dense_flops / _gpu("h100-sxm").memory_bandwidth_bytes_per_s
    ),
    "roofline/crossover-llama3-8b": lambda: roofline.decode_crossover_batch(
        _spec("llama-3-8b"), _gpu("h100-sxm"), "bf16", 0
    ),
    # ---- lessons 01, 02, 04, 05, 06 (add entries here)
    # 01 gpu-basics
    "gpu-basics/threads-in-flight": lambda: (
        _gpu("h100-sxm").sm_count * hierarchy.family("h100-sxm").max_warps_per_sm * 32
    ),
    "gpu-basics/tensor-vs-cuda-cores": lambda: (
        _gpu("h100-sxm").bf16_dense_flops / _gpu("h100-sxm").peak_flops("fp32")
    ),
    "gpu-basics/gemm-gflop": lambda: (
        2 * 2048 * _spec("llama-3-8b").intermediate_size * _spec("llama-3-8b").hidden_size / 1e9
    ),
    "gpu-basics/gemm-time": lambda: (
        # [2048, hidden] x [hidden, intermediate] at the dense peak or the bandwidth, whichever binds
        max(
            2
            * 2048
            * _spec("llama-3-8b").intermediate_size
            * _spec("llama-3-8b").hidden_size
            / _gpu("h100-sxm").bf16_dense_flops,
            2
            * (
                2048 * _spec("llama-3-8b").hidden_size
                + _spec("llama-3-8b").hidden_size * _spec("llama-3-8b").intermediate_size
                + 2048 * _spec("llama-3-8b").intermediate_size
            )
            / _gpu("h100-sxm").memory_bandwidth_bytes_per_s,
        )
        * 1e6
    ),
    # 02 memory-hierarchy
    "memory-hierarchy/bytes-in-flight": lambda: (
        hierarchy.get_level("h100-sxm", "device-memory").latency_s("mid")
        * hierarchy.get_level("h100-sxm", "device-memory").bandwidth_per_device_bytes_per_s
        / 1e6
    ),
    "memory-hierarchy/offload-slowdown": lambda: (
        hierarchy.place_model(
            llm_memory.weight_bytes(_spec("llama-3-70b"), "bf16"),
            llm_memory.kv_cache_bytes(_spec("llama-3-70b"), 8192, 1, "bf16"),
            hierarchy.family("h100-sxm").levels,
            usable_fraction=0.9,
        ).slowdown
    ),
    "memory-hierarchy/decode-bound-tok-s": lambda: (
        _decode(
            _spec("llama-3-8b"),
            _gpu("h100-sxm"),
            batch=1,
            context_tokens=0,
        ).tokens_per_s
    ),
    # 04 sizing-vram
    "sizing-vram/llama2-long-batch": lambda: (
        2
        * _spec("llama-2-7b").num_layers
        * _spec("llama-2-7b").num_kv_heads
        * _spec("llama-2-7b").head_dim
        * 2
        * 32768
        * 8
        / 1e9
    ),
    "sizing-vram/total-llama3-8b": lambda: (
        llm_memory.inference_memory(_spec("llama-3-8b"), context_tokens=8192).total_bytes / 1e9
    ),
    "sizing-vram/estimate-in-gib": lambda: (
        llm_memory.inference_memory(
            _spec("llama-3-70b"), weight_fmt="fp8", kv_fmt="fp8", context_tokens=8192
        ).total_bytes
        / 2**30
    ),
    "sizing-vram/engine-pool-tokens": lambda: (
        (
            0.9 * _gpu("h100-sxm").memory_bytes
            - llm_memory.inference_memory(_spec("llama-3-8b"), context_tokens=8192).total_bytes
            + llm_memory.kv_cache_bytes(_spec("llama-3-8b"), 8192)
        )
        // _spec("llama-3-8b").kv_cache_bytes_per_token()
    ),
    # 05 prefill-decode
    "prefill-decode/ttft-4k-prompt": lambda: (
        llm_speed.prefill_time_s(
            _spec("llama-3-8b"), 4096, peak_flops=_gpu("h100-sxm").bf16_dense_flops, mfu=0.55
        )
        * 1e3
    ),
    "prefill-decode/tpot-batch-1": lambda: (
        _decode(
            _spec("llama-3-8b"),
            _gpu("h100-sxm"),
            batch=1,
            context_tokens=4096,
        ).memory_time_s
        * 1e3
    ),
    "prefill-decode/batch-32-throughput": lambda: (
        _decode(
            _spec("llama-3-8b"),
            _gpu("h100-sxm"),
            batch=32,
            context_tokens=4096,
        ).tokens_per_s
    ),
    # 06 quantization
    "quantization/fp8-scale": lambda: quant.FORMATS["fp8_e4m3"].max_finite / 3.5,
    "quantization/smoothquant-factor": lambda: 60**0.5 / 0.5 ** (1 - 0.5),
    "quantization/int4-decode-speedup": lambda: (
        _decode(
            _spec("llama-3-8b"),
            _gpu("rtx-4090"),
            context_tokens=8192,
            weight_fmt="int4",
        ).tokens_per_s
        / _decode(
            _spec("llama-3-8b"),
            _gpu("rtx-4090"),
            context_tokens=8192,
            weight_fmt="bf16",
        ).tokens_per_s
    ),
    # ---- lessons 07, 08, 09, 10, 11 (add entries here)
    # 07 fine-tuning-memory. ZeRO (arXiv 1910.02054 §3.1): mixed-precision Adam keeps 2 + 2 + 12 bytes
    # per parameter; stage 3 divides all of it by the data-parallel degree (§5).
    "fine-tuning-memory/full-ft-states": lambda: (
        _spec("llama-3-8b").param_count() * llm_memory.training_recipe("mixed-adam-16").bytes_per_param / 1e9
    ),
    "fine-tuning-memory/zero3-states": lambda: (
        parallelism.zero_model_state_bytes(_spec("llama-3-8b").param_count(), 8, 3) / 1e9
    ),
    # PEFT prints 4,194,304 trainable parameters for Llama-7B, r = 8 on q_proj and v_proj.
    "fine-tuning-memory/lora-fraction": lambda: (
        llm_memory.lora_trainable_params(_spec("llama-2-7b"), 8, ("q_proj", "v_proj"))
        / _spec("llama-2-7b").param_count()
        * 100
    ),
    # 08 attention-kernels. MHA caches 2 (K, V) × layers × query heads × head_dim × 2 bytes per token.
    "attention-kernels/gqa-mha-bytes": lambda: (
        2
        * _spec("llama-3-70b").num_layers
        * _spec("llama-3-70b").num_heads
        * _spec("llama-3-70b").head_dim
        * 2
        / 1e6
    ),
    # Eager attention's peak per score (llm_memory.eager_score_bytes_per_element) × heads × N².
    "attention-kernels/score-matrix-gb": lambda: (
        _spec("llama-3.2-3b").num_heads * 8160**2 * llm_memory.eager_score_bytes_per_element(2) / 1e9
    ),
    # 09 many-gpus. Ring all-reduce: each GPU sends 2(n − 1)/n × the buffer (nccl-tests PERFORMANCE.md).
    "many-gpus/dp-allreduce-gb": lambda: (
        parallelism.ring_allreduce_bytes_per_gpu(_spec("llama-3-8b").param_count() * 2, 8) / 1e9
    ),
    "many-gpus/bubble-p8-m32": lambda: parallelism.pipeline_bubble_fraction(8, 32) * 100,
    # 10 choosing-hardware. Decode bound = bandwidth ÷ bytes per step (M4 Max: no sourced peak).
    "choosing-hardware/m4max-70b-tok-s": lambda: (
        llm_speed.decode_step(
            _spec("llama-3-70b"),
            bandwidth_bytes_per_s=_gpu("m4-max").memory_bandwidth_bytes_per_s,
            peak_flops=float("inf"),
            batch=1,
            context_tokens=8192,
            weight_fmt="int4",
        ).tokens_per_s
    ),
    "choosing-hardware/gpu-hours-per-million": lambda: (
        1e6
        / (
            _decode(
                _spec("llama-3-8b"),
                _gpu("h100-sxm"),
                batch=1,
                context_tokens=4096,
            ).tokens_per_s
            * 3600
        )
    ),
    # 11 measuring. 3,051 GB/s: STREAM triad measured on this project's H100 SXM
    # (/work/shared/measured/README.md, measure/samples/h100-sxm-80gb.json); MFU = 6 N × tokens/s ÷
    # (GPUs × dense peak) (PaLM, arXiv 2204.02311 App. B).
    "measuring/triad-share": lambda: 3051e9 / _gpu("h100-sxm").memory_bandwidth_bytes_per_s * 100,
    "measuring/mfu-8gpu": lambda: (
        6 * _spec("llama-3-8b").param_count() * 48000 / (8 * _gpu("h100-sxm").bf16_dense_flops) * 100
    ),
}
