"""The "Will it fit?" calculator: memory per GPU, speed bounds and the tables the page shows.

Pure Python on top of ``llm_memory`` and the accelerator catalog; tables are lists of dicts
(one per row) so any front end can draw them. Units inside are bytes and seconds; the table
cells are formatted strings with their units.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from simulators.hardware import Accelerator
from simulators.llm_memory import (
    ATTENTION_KINDS,
    WEIGHT_FORMATS,
    MemoryBreakdown,
    ModelSpec,
    attention_kind,
    inference_memory,
    max_context_that_fits,
    resolve_attention,
    training_memory,
)
from simulators.llm_speed import DEFAULT_PREFILL_MFU, DecodeEstimate, decode_step, prefill_time_s

CONTEXT_STEPS = [2**k for k in range(9, 21)]  # 512 ... 1,048,576 tokens
# The longest context the page takes: 2^24 tokens, past the longest any preset was trained for
# (Llama 4 Scout's 10,485,760); a model's own limit is said beside the verdict.
CONTEXT_MAX = 2**24
MAX_GPUS = 1024
# Compute precision that a weight format runs its matmuls in. Weight-only formats (int8/int4/nf4
# with per-group scales) dequantize to bf16 (W4A16); fp8 runs on FP8 tensor cores (W8A8).
COMPUTE_DTYPE = {
    "fp32": "fp32",
    "bf16": "bf16",
    "fp16": "fp16",
    "fp8": "fp8",
    "int8": "bf16",
    "int4": "bf16",
    "nf4": "bf16",
}


# Formats whose matmuls run on the same tensor-core path at the same rate on NVIDIA parts: a chip
# without a BF16 figure runs a BF16 model in FP16 (T4, V100) and says so. Never the FP32 vector
# peak: that is another unit (CUDA cores, not tensor cores), and an A10G priced at it took 8.1 s
# to a first token against the A10's 2.0 s.
SIXTEEN_BIT = ("bf16", "fp16")


def compute_dtype(accelerator: Accelerator, weight_fmt: str) -> str | None:
    """The dtype whose peak applies: the format's compute dtype, else (for a 16-bit or
    weight-only format) the other 16-bit tensor format the chip has a figure for.

    None when the catalog has no sourced peak of that kind for the chip (A10G, Apple M-series,
    host CPUs): the page then says "no BF16 figure" instead of borrowing the FP32 vector peak.
    """
    own = COMPUTE_DTYPE.get(weight_fmt, "bf16")
    candidates = [own] if own == "fp32" else [own, *SIXTEEN_BIT]
    for dtype in candidates:
        if accelerator.supports(dtype):
            return dtype
    return None


def precision_note(accelerator: Accelerator, weight_fmt: str) -> str:
    """What the page says when the peak used is not the format's own: "" when it is."""
    own = COMPUTE_DTYPE.get(weight_fmt, "bf16")
    used = compute_dtype(accelerator, weight_fmt)
    if used == own:
        return ""
    if used is None:
        return f"No {own.upper()} figure for {accelerator.name} in the catalog: compute time not estimated."
    return f"{accelerator.name} has no {own.upper()} figure: its {used.upper()} tensor peak is used."


def peak_or_none(accelerator: Accelerator, weight_fmt: str) -> float | None:
    dtype = compute_dtype(accelerator, weight_fmt)
    return accelerator.peak_flops(dtype) if dtype else None


@dataclass(frozen=True)
class FitResult:
    """Everything the page shows for one configuration on one kind of GPU."""

    spec: ModelSpec
    gpu: Accelerator
    n_gpus: int
    memory: MemoryBreakdown
    memory_for: Callable[[int], MemoryBreakdown]  # same settings on n GPUs
    speed_for: Callable[[Accelerator, int], tuple[str, str]]  # (decode/step figure, prefill figure)
    decode: DecodeEstimate | None = None
    prefill_s: float | None = None
    speed_label: str = ""
    speed_value: str = ""
    speed_help: str = ""
    weight_fmt: str = "bf16"  # decides which peak FLOP/s applies
    attention: str = "flash"  # "flash" (fused kernel) or "eager" (score matrix in memory)

    @property
    def attention_label(self) -> str:
        """Which attention kernel the memory assumes, in words (``ATTENTION_KINDS``)."""
        return ATTENTION_KINDS[self.attention]

    @property
    def fits(self) -> bool:
        return fits_on(self.memory, self.gpu)

    @property
    def gpus_needed(self) -> int | None:
        return gpus_needed(self.memory_for, self.gpu)


def fits_on(memory: MemoryBreakdown, gpu: Accelerator) -> bool:
    return memory.total_bytes <= gpu.memory_bytes


def gpus_needed(
    memory_for: Callable[[int], MemoryBreakdown], gpu: Accelerator, limit: int = MAX_GPUS
) -> int | None:
    """Fewest GPUs whose per-GPU memory fits, or None if even ``limit`` do not (memory never grows with N)."""
    if not fits_on(memory_for(limit), gpu):
        return None
    lo, hi = 0, limit  # fits at hi, not known at lo
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if fits_on(memory_for(mid), gpu):
            hi = mid
        else:
            lo = mid
    return hi


def format_rate(tokens_per_s: float) -> str:
    if not math.isfinite(tokens_per_s):
        return "—"
    return f"{tokens_per_s:,.0f}" if tokens_per_s >= 100 else f"{tokens_per_s:,.1f}"


def format_seconds(seconds: float) -> str:
    """Two or three significant figures in the unit a person would use (µs, ms, s, min)."""
    for scale, unit in ((1e-6, "µs"), (1e-3, "ms"), (1.0, "s")):
        value = seconds / scale
        if value < 1000 or unit == "s":
            if unit == "s" and value >= 120:
                break
            return f"{value:,.1f} {unit}" if value < 10 else f"{value:,.0f} {unit}"
    return f"{seconds / 60:,.1f} min"


def inference(
    spec: ModelSpec,
    gpu: Accelerator,
    *,
    weight_fmt: str = "bf16",
    kv_fmt: str = "bf16",
    batch: int = 1,
    context: int = 8192,
    n_gpus: int = 1,
    mfu: float = DEFAULT_PREFILL_MFU,
    attention: str = "flash",
    prefill_chunk_tokens: int | None = None,
) -> FitResult:
    """Serving ``batch`` sequences of ``context`` tokens with ``n_gpus`` (tensor parallel).

    ``attention``: "flash" (fused kernel) or "eager" (the score matrix of the prefill chunk in
    memory), passed to ``inference_memory`` with ``prefill_chunk_tokens`` (default there: the
    prompt, capped at 8,192 tokens as chunked prefill does).
    """
    attention = attention_kind(attention)

    def memory_for(n: int) -> MemoryBreakdown:
        return inference_memory(
            spec,
            weight_fmt=weight_fmt,
            kv_fmt=kv_fmt,
            batch=batch,
            context_tokens=context,
            prefill_chunk_tokens=prefill_chunk_tokens,
            n_gpus=n,
            attention=attention,
        )

    def speed_for(accelerator: Accelerator, n: int) -> tuple[DecodeEstimate, float | None]:
        peak = peak_or_none(accelerator, weight_fmt)
        step = decode_step(
            spec,
            bandwidth_bytes_per_s=accelerator.memory_bandwidth_bytes_per_s,
            peak_flops=peak or math.inf,
            batch=batch,
            context_tokens=context,
            weight_fmt=weight_fmt,
            kv_fmt=kv_fmt,
            n_gpus=n,
        )
        prefill = (
            prefill_time_s(spec, context, peak_flops=peak, mfu=mfu, n_gpus=n, logits="last") if peak else None
        )
        return step, prefill

    def speed_cells(accelerator: Accelerator, n: int) -> tuple[str, str]:
        step, prefill = speed_for(accelerator, n)
        return format_rate(step.tokens_per_s_per_sequence), format_seconds(prefill) if prefill else "—"

    step, prefill = speed_for(gpu, n_gpus)
    return FitResult(
        spec=spec,
        gpu=gpu,
        n_gpus=n_gpus,
        memory=memory_for(n_gpus),
        memory_for=memory_for,
        speed_for=speed_cells,
        decode=step,
        prefill_s=prefill,
        weight_fmt=weight_fmt,
        attention=attention,
        speed_label="Decode speed bound",
        speed_value=f"{format_rate(step.tokens_per_s_per_sequence)} tok/s",
        speed_help=(
            f"Upper bound: {step.bound}-bound. Each step reads "
            f"{(step.weight_bytes + step.kv_bytes) / 1e9:,.2f} GB "
            f"over {n_gpus} × {gpu.memory_bandwidth_bytes_per_s / 1e12:,.2f} TB/s; batch of {batch} → "
            f"{format_rate(step.tokens_per_s)} tok/s in total. {precision_note(gpu, weight_fmt)}"
        ).strip(),
    )


# The activation recomputation a fine-tuning tool turns on by itself. PEFT's
# ``prepare_model_for_kbit_training(model, use_gradient_checkpointing=True, ...)``
# (huggingface/peft, src/peft/utils/other.py) enables gradient checkpointing on every k-bit
# (QLoRA) model unless told not to; full fine-tuning and plain LoRA leave it off by default
# (transformers' TrainingArguments.gradient_checkpointing defaults to False).
TOOL_DEFAULT_RECOMPUTE = {"qlora": "full", "lora": "none", "full": "none"}
TOOL_DEFAULT_REASON = {
    "qlora": "PEFT's prepare_model_for_kbit_training turns gradient checkpointing on for a k-bit model"
    " (use_gradient_checkpointing=True by default)",
    "lora": "transformers' Trainer leaves gradient checkpointing off unless asked",
    "full": "transformers' Trainer leaves gradient checkpointing off unless asked",
}


def resolve_recompute(task: str, recompute: str) -> tuple[str, str]:
    """``recompute`` as ``training_memory`` takes it, and why: "auto" is what the task's usual tool
    does by default (``TOOL_DEFAULT_RECOMPUTE``); any other value is the reader's own choice."""
    if recompute != "auto":
        return recompute, ""
    if task not in TOOL_DEFAULT_RECOMPUTE:
        raise ValueError(f"task {task!r} has no tool default for activation recomputation")
    return TOOL_DEFAULT_RECOMPUTE[task], TOOL_DEFAULT_REASON[task]


def training(
    spec: ModelSpec,
    gpu: Accelerator,
    *,
    task: str = "full",
    recipe: str = "mixed-adam-16",
    seq: int = 2048,
    micro_batch: int = 1,
    n_gpus: int = 1,
    zero_stage: int = 0,
    recompute: str = "none",
    flash_attention: bool | None = None,
    lora_rank: int = 16,
    lora_modules: Sequence[str] = (),
    mfu: float = 0.4,
    attention: str | None = None,
) -> FitResult:
    """One training step with data parallelism over ``n_gpus`` and the chosen ZeRO stage.

    ``attention`` ("flash" or "eager") or the older ``flash_attention`` switch, as in
    ``training_memory``; the result records which one was assumed.
    """
    attention = resolve_attention(attention, flash_attention)
    recompute, _ = resolve_recompute(task, recompute)
    kwargs = {
        "method": task,
        "recipe": recipe,
        "seq": seq,
        "micro_batch": micro_batch,
        "zero_stage": zero_stage,
        "recompute": recompute,
        "attention": attention,
        "lora_rank": lora_rank,
    }
    if lora_modules:
        kwargs["lora_modules"] = tuple(lora_modules)

    def memory_for(n: int) -> MemoryBreakdown:
        return training_memory(spec, n_gpus=n, **kwargs)

    def step_time(accelerator: Accelerator, n: int) -> float | None:
        # 6 FLOPs per parameter per token for forward + backward (Kaplan et al. 2020 §2.1).
        peak = peak_or_none(accelerator, "bf16")
        if peak is None:
            return None
        return 6 * spec.param_count(active=True) * seq * micro_batch * n / (peak * mfu * n)

    def speed_cells(accelerator: Accelerator, n: int) -> tuple[str, str]:
        t = step_time(accelerator, n)
        if t is None:
            return "—", "—"
        return format_rate(seq * micro_batch * n / t), format_seconds(t)

    t = step_time(gpu, n_gpus)
    speed: dict[str, str] = {
        "speed_help": precision_note(gpu, "bf16") or f"The catalog has no sourced peak FLOP/s for {gpu.name}."
    }
    if t is not None:
        speed = {
            "speed_label": "Training throughput bound",
            "speed_value": f"{format_rate(seq * micro_batch * n_gpus / t)} tok/s",
            "speed_help": (
                f"6 × {spec.param_count(active=True):,} active parameters × tokens ÷ (peak × MFU {mfu:.0%}); "
                "full fine-tuning FLOPs (LoRA still runs the frozen model's forward and backward). "
                f"{precision_note(gpu, 'bf16')}"
            ).strip(),
        }
    return FitResult(
        spec=spec,
        gpu=gpu,
        n_gpus=n_gpus,
        memory=memory_for(n_gpus),
        memory_for=memory_for,
        speed_for=speed_cells,
        attention=attention,
        **speed,
    )


def read_custom_config(raw: str | bytes) -> tuple[ModelSpec | None, str]:
    """Parse a pasted or uploaded config: (spec, "") or (None, the reason it cannot be read)."""
    try:
        return ModelSpec.from_hf_config(raw, name="Custom model"), ""
    except ValueError as exc:
        return None, str(exc)


def parts_table(memory: MemoryBreakdown) -> list[dict[str, str]]:
    """One row per memory part: label, GB, GiB, share, and how it is computed."""
    total = memory.total_bytes or 1
    return [
        {
            "Part": p.label,
            "GB (10⁹ B)": f"{p.bytes / 1e9:,.2f}",
            "GiB (2³⁰ B)": f"{p.bytes / 2**30:,.2f}",
            "Share": f"{p.bytes / total:.0%}",
            "How it is computed": p.explanation,
        }
        for p in memory.parts
    ] + [
        {
            "Part": "Total per GPU",
            "GB (10⁹ B)": f"{memory.total_bytes / 1e9:,.2f}",
            "GiB (2³⁰ B)": f"{memory.total_bytes / 2**30:,.2f}",
            "Share": "100%",
            "How it is computed": f"sum of the parts, on each of {memory.n_gpus} GPU(s)",
        }
    ]


def speed_table(result: FitResult) -> list[dict[str, str]]:
    """Decode bound and prefill time for the chosen GPU, with the arithmetic in words."""
    step = result.decode
    if step is None:
        return []
    bw = result.gpu.memory_bandwidth_bytes_per_s * result.n_gpus
    return [
        {
            "Quantity": "Bytes read per decode step",
            "Value": f"{(step.weight_bytes + step.kv_bytes) / 1e9:,.2f} GB",
            "How": f"weights {step.weight_bytes / 1e9:,.2f} GB + KV cache {step.kv_bytes / 1e9:,.2f} GB",
        },
        {
            "Quantity": "Memory time per step",
            "Value": format_seconds(step.memory_time_s),
            "How": f"bytes ÷ {bw / 1e12:,.2f} TB/s",
        },
        {
            "Quantity": "Compute time per step",
            "Value": format_seconds(step.compute_time_s)
            if compute_dtype(result.gpu, result.weight_fmt)
            else f"— ({precision_note(result.gpu, result.weight_fmt)})",
            "How": f"{step.flops / 1e12:,.2f} TFLOP ÷ dense "
            f"{(compute_dtype(result.gpu, result.weight_fmt) or 'no').upper()} peak",
        },
        {
            "Quantity": "Decode bound",
            "Value": f"{format_rate(step.tokens_per_s_per_sequence)} tok/s per sequence, "
            f"{format_rate(step.tokens_per_s)} tok/s total",
            "How": f"{step.bound}-bound; batch {step.batch}",
        },
        {
            "Quantity": "Prefill of the whole context (TTFT)",
            "Value": format_seconds(result.prefill_s)
            if result.prefill_s
            else f"— ({precision_note(result.gpu, result.weight_fmt) or 'no sourced peak FLOP/s'})",
            "How": f"2 × active params × {step.context_tokens:,} tokens + attention, ÷ (peak × MFU)",
        },
    ]


def longest_context(
    spec: ModelSpec,
    gpu: Accelerator,
    *,
    weight_fmt: str,
    kv_fmt: str,
    batch: int,
    n_gpus: int,
    attention: str = "flash",
) -> str:
    """ "Longest context that fits", as text with units."""
    n = max_context_that_fits(
        spec,
        gpu.memory_bytes,
        batch=batch,
        n_gpus=n_gpus,
        weight_fmt=weight_fmt,
        kv_fmt=kv_fmt,
        attention=attention,
    )
    if n == 0:
        return "None — the weights and fixed costs alone do not fit"
    text = f"{n:,} tokens"
    if spec.max_positions and n > spec.max_positions:
        text += f" (memory allows it; the model was trained for {spec.max_positions:,})"
    return text


def formats_table(
    spec: ModelSpec,
    gpu: Accelerator,
    *,
    kv_fmt: str,
    batch: int,
    context: int,
    n_gpus: int,
    attention: str = "flash",
) -> list[dict[str, str]]:
    """Each weight format's memory per GPU and whether it fits."""
    rows = []
    for fmt_id, fmt in WEIGHT_FORMATS.items():
        m = inference_memory(
            spec,
            weight_fmt=fmt_id,
            kv_fmt=kv_fmt,
            batch=batch,
            context_tokens=context,
            n_gpus=n_gpus,
            attention=attention,
        )
        rows.append(
            {
                "Weights": fmt.label,
                "Per GPU": f"{m.total_bytes / 1e9:,.1f} GB",
                "Fits": "yes" if fits_on(m, gpu) else "no",
            }
        )
    return rows


def catalog_table(result: FitResult, catalog: Sequence[Accelerator]) -> list[dict[str, str]]:
    """Every accelerator: memory per device, fits on N, devices needed, speed bounds."""
    rows = []
    speed_header, time_header = (
        ("Decode bound (tok/s per seq)", "Prefill (TTFT)")
        if result.decode is not None
        else ("Throughput bound (tok/s)", "Step time")
    )
    for accelerator in catalog:
        fits = fits_on(result.memory, accelerator)
        needed = gpus_needed(result.memory_for, accelerator)
        try:
            speed, time = result.speed_for(accelerator, result.n_gpus)
        except ValueError:
            speed, time = "—", "—"
        rows.append(
            {
                "Accelerator": accelerator.name,
                "Memory per device": accelerator.memory_label,
                "Bandwidth": f"{accelerator.memory_bandwidth_bytes_per_s / 1e12:,.2f} TB/s",
                f"Fits on {result.n_gpus}": "yes" if fits else "no",
                "Devices needed": str(needed) if needed else f"> {MAX_GPUS}",
                speed_header: speed,
                time_header: time,
                "Peak used": (compute_dtype(accelerator, result.weight_fmt) or "").upper()
                or f"no {COMPUTE_DTYPE.get(result.weight_fmt, 'bf16').upper()} figure",
            }
        )
    return rows


DTYPE_BYTES = {"float32": 4, "bfloat16": 2, "float16": 2}


def predicted_step_memory(record: dict) -> MemoryBreakdown | None:
    """The calculator's prediction for a measured transformer step (``python -m measure``).

    The record's config is a Llama-style decoder; training with AdamW in fp32 keeps weights,
    gradients and two Adam moments (the 16 B/param "fp32-adam" recipe) plus every layer's saved
    activations and the logits; inference keeps the weights, one layer's working set for all
    tokens at once and the logits of every position (the measured forward pass keeps no KV
    cache). No CUDA context is added: the measurement counts tensors only. Returns None when
    the record cannot be read.
    """
    try:
        config = {"model_type": "llama", **{k: v for k, v in record["config"].items() if v is not None}}
        spec = ModelSpec.from_hf_config(config)
        batch, seq = int(record["batch"]), int(record["seq_len"])
        act_bytes = DTYPE_BYTES[str(record.get("dtype", "float32"))]
    except (KeyError, TypeError, ValueError):
        return None
    if record.get("mode") == "train":
        recipe = "fp32-adam" if act_bytes == 4 else "mixed-adam-16"
        return training_memory(
            spec, recipe=recipe, seq=seq, micro_batch=batch, runtime_overhead_bytes=0, act_bytes=act_bytes
        )
    return inference_memory(
        spec,
        weight_fmt="fp32" if act_bytes == 4 else "bf16",
        batch=batch,
        context_tokens=0,
        prefill_chunk_tokens=batch * seq,
        runtime_overhead_bytes=0,
        act_bytes=act_bytes,
        logits_for_every_position=True,
    )


# ---------------------------------------------------------------------------------------------
# The model against real measurements (simulators/data/measured/README.md)
# ---------------------------------------------------------------------------------------------

MEASURED_DIR = Path(__file__).resolve().parent / "data" / "measured"
MEASURED_PREFILL_FILES = ("h100-hf-models-vs-fit.json", "h100-eager-vs-flash-llama-3.2-3b.json")
# Each run prefilled context − 32 tokens, leaving room for its 24 timed decode steps (README there).
MEASURED_DECODE_ROOM_TOKENS = 32
# The runs' attention implementation in this model's terms: SDPA dispatches to a fused kernel.
# Rows without an "attn" field ran transformers' default implementation; none of their peaks
# holds a score matrix (each lies far below the eager prediction, tests/test_measured_models.py),
# so they are compared with the fused case.
FRAMEWORK_ATTENTION = {"sdpa": "flash", "eager": "eager", "default": "flash"}


def measured_prefill_memory(spec: ModelSpec, prompt_tokens: int, attention: str = "flash") -> MemoryBreakdown:
    """This model's peak for one prefill as the measured runs did it.

    Hugging Face ``transformers`` prefilled the whole prompt in one forward pass (no chunking:
    ``prefill_chunk_tokens`` = the prompt), into a cache that then holds the prompt, with logits
    for the last position only; the peak is ``torch.cuda.max_memory_allocated()`` less what was
    allocated before the model, so tensors only: no CUDA context or allocator overhead.
    """
    return inference_memory(
        spec,
        context_tokens=prompt_tokens,
        prefill_chunk_tokens=prompt_tokens,
        runtime_overhead_bytes=0,
        attention=attention,
    )


def hf_sliding_window_prefill_extra_bytes(spec: ModelSpec, prompt_tokens: int, kv_bytes: float = 2) -> float:
    """Bytes Hugging Face ``transformers`` holds beyond this model at a sliding-window prefill (SDPA).

    1. ``DynamicSlidingWindowLayer.update`` (cache_utils.py) keeps
       ``full_key_states[:, :, -self.sliding_window + 1 :, :]``, a view: the whole prompt's keys
       and values stay allocated until the next update replaces them (checked with transformers
       5.23 on CPU: 24,969,216 bytes of storage behind a 12,570,624-byte key tensor of Phi-3 at
       4,064 tokens, freed by the first decode step). Beyond this model's min(prompt, window)
       tokens: Σ sliding layers (prompt − min(prompt, window)) × the layer's K+V bytes per token.
    2. SDPA can skip the mask only when no window cuts in (``masking_utils._ignore_causal_mask_sdpa``
       requires keys < window), so the forward pass builds one boolean (1, 1, prompt, prompt)
       mask: prompt² bytes.

    Neither is a score matrix: with a mask, PyTorch's SDPA leaves the flash kernel but its cuDNN
    and memory-efficient kernels take the mask and still keep the scores on chip
    (aten/src/ATen/native/transformers/cuda/sdp_utils.cpp: only ``can_use_flash_attention``
    checks ``check_for_attn_mask``). 0 for a model without sliding windows or a shorter prompt.
    """
    if not spec.sliding_window or prompt_tokens <= spec.sliding_window:
        return 0.0
    per_layer = spec.kv_elements_per_token()
    extra_tokens = prompt_tokens - spec.sliding_window
    kv = sum(per_layer[i] for i in spec.sliding_layers) * extra_tokens * kv_bytes
    return kv + prompt_tokens * prompt_tokens


def measured_validation_rows(directory: Path | str | None = None) -> list[dict]:
    """Predicted vs measured prefill peaks, one dict per measured run (H100, transformers).

    Keys: model, preset, context_tokens, prompt_tokens, measured_with (the run's attention
    implementation), attention (this model's switch), predicted_gb, measured_gb, ratio
    (predicted ÷ measured), and for sliding-window runs explained_gb / explained_ratio (the
    prediction plus ``hf_sliding_window_prefill_extra_bytes``) and a note saying why. GB = 10⁹ B.
    """
    from simulators.presets import get_model_preset  # presets imports llm_memory, not fit

    root = Path(directory) if directory is not None else MEASURED_DIR
    rows = []
    for name in MEASURED_PREFILL_FILES:
        for run in json.loads((root / name).read_text(encoding="utf-8")):
            preset = get_model_preset(run["preset"])
            spec = preset.spec
            prompt = int(run["context"]) - MEASURED_DECODE_ROOM_TOKENS
            measured_with = str(run.get("attn", "default"))
            attention = FRAMEWORK_ATTENTION[measured_with]
            predicted = measured_prefill_memory(spec, prompt, attention).total_bytes
            measured = float(run["prefill_peak_meas"])
            row = {
                "model": preset.name,
                "preset": preset.id,
                "context_tokens": int(run["context"]),
                "prompt_tokens": prompt,
                "measured_with": measured_with,
                "attention": attention,
                "predicted_gb": predicted / 1e9,
                "measured_gb": measured / 1e9,
                "ratio": predicted / measured,
                "explained_gb": None,
                "explained_ratio": None,
                "note": "",
            }
            extra = hf_sliding_window_prefill_extra_bytes(spec, prompt) if attention == "flash" else 0.0
            if extra:
                mask = prompt * prompt
                row |= {
                    "explained_gb": (predicted + extra) / 1e9,
                    "explained_ratio": (predicted + extra) / measured,
                    "note": (
                        f"Sliding window of {spec.sliding_window:,} tokens: transformers keeps every"
                        f" sliding layer's whole-prompt keys and values until the first decode step"
                        f" (+{(extra - mask) / 1e9:.2f} GB) and builds a {mask / 1e9:.2f} GB boolean"
                        " mask; the scores themselves stay on chip."
                    ),
                }
            rows.append(row)
    return rows
