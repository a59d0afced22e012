"""Will it fit? views: memory per GPU against capacity, and decode time: memory vs compute.

Everything the page shows for one setting is computed once by ``outcome`` (cached as plain data,
shared by every session), so a rerun with the same controls costs only drawing.
"""

from __future__ import annotations

import contextlib
import re
from typing import Any

import streamlit as st

from charts.memory import memory_bars
from content.schema import CUSTOM_MODEL, params_for
from simulators import fit
from simulators.llm_memory import ModelSpec
from simulators.model_config import MAX_CONFIG_BYTES
from ui.chart import show
from ui.views import View
from ui.views.common import arrow, as_spec, catalog, metric_row, models

PAGE = "will-it-fit"
INFERENCE_KEYS = ("fit_wfmt", "fit_kvfmt", "fit_batch", "fit_ctx", "fit_attn", "fit_mfu")
ENGINE_KEYS = (
    "fit_engine",
    "fit_util",
    "fit_seqs",
    "fit_total",
    "fit_kernels",
    "fit_quant",
    "fit_ngl",
    "fit_np",
    "fit_ctk",
    "fit_ncmoe",
    "fit_host",
    "fit_frac",
    "fit_vver",
    "fit_pp",
    "fit_mbt",
    "fit_eager",
    "fit_nochunk",
)
TRAINING_KEYS = ("fit_recipe", "fit_seq", "fit_mb", "fit_zero", "fit_recompute", "fit_attn")
LORA_KEYS = ("fit_lora_rank", "fit_lora_mods")
CONFIG_KEY = "fit_config_text"  # a pasted/uploaded config.json (session only, never in the address)


def relevant(values: dict[str, Any]) -> tuple[tuple[str, Any], ...]:
    """The controls that change the result for the chosen task, as a hashable cache key."""
    keys = ["fit_model", "fit_task", "fit_gpu", "fit_gpus"]
    if values["fit_task"] == "inference":
        keys += [*INFERENCE_KEYS, *ENGINE_KEYS]
    else:
        keys += list(TRAINING_KEYS)
        if values["fit_task"] in ("lora", "qlora"):
            keys += list(LORA_KEYS)
    return tuple((k, values[k]) for k in keys)


def custom_config() -> str | None:
    """The config text the reader pasted or uploaded in this session, if any."""
    return st.session_state.get(CONFIG_KEY) or None


def _spec(model_id: str, config_text: str | None) -> tuple[ModelSpec | None, str]:
    if model_id != CUSTOM_MODEL:
        return models()[model_id].spec, ""
    if not config_text:
        return None, ""
    return fit.read_custom_config(config_text)


def _result(values: dict[str, Any], spec: ModelSpec) -> fit.FitResult:
    gpu = catalog()[values["fit_gpu"]]
    if values["fit_task"] == "inference":
        return fit.inference(
            spec,
            gpu,
            weight_fmt=values["fit_wfmt"],
            kv_fmt=values["fit_kvfmt"],
            batch=values["fit_batch"],
            context=values["fit_ctx"],
            n_gpus=values["fit_gpus"],
            mfu=values["fit_mfu"],
            attention=values["fit_attn"],
        )
    return fit.training(
        spec,
        gpu,
        task=values["fit_task"],
        recipe=values["fit_recipe"],
        seq=values["fit_seq"],
        micro_batch=values["fit_mb"],
        n_gpus=values["fit_gpus"],
        zero_stage=int(values["fit_zero"]),
        recompute=values["fit_recompute"],
        attention=values["fit_attn"],
        lora_rank=values.get("fit_lora_rank", 16),
        lora_modules=tuple(values.get("fit_lora_mods") or ()),
    )


def assumption_notes(values: dict[str, Any], spec: ModelSpec) -> list[str]:
    """What the page assumed for the reader, said beside the verdict: a default a tool takes by
    itself, or a context past the one the model was trained for."""
    notes = []
    if values["fit_task"] != "inference" and values.get("fit_recompute") == "auto":
        used, why = fit.resolve_recompute(values["fit_task"], "auto")
        label = params_for("will-it-fit")["fit_recompute"].label(used)
        notes.append(
            f"Activation recomputation: {label}, the tool's default ({why}). Change it under More settings."
        )
    if values["fit_task"] == "inference" and spec.max_positions and values["fit_ctx"] > spec.max_positions:
        notes.append(
            f"{values['fit_ctx']:,} tokens is past the {spec.max_positions:,} this model was trained for"
            " (max_position_embeddings): an engine refuses it unless told otherwise."
        )
    return notes


@st.cache_data(max_entries=64, show_spinner=False)
def outcome(key: tuple[tuple[str, Any], ...], config_text: str = "") -> dict[str, Any]:
    """Everything the page shows for one setting, as plain data (or ``{"error": …}``)."""
    values = dict(key)
    spec, error = _spec(values["fit_model"], config_text)
    if spec is None:
        return {"error": error, "spec": None}
    try:
        result = _result(values, spec)
    except ValueError as exc:  # an impossible combination the model refuses, in words
        return {"error": str(exc), "spec": None}
    gpu, n = result.gpu, values["fit_gpus"]
    memory = result.memory
    out: dict[str, Any] = {
        "error": "",
        "spec": spec,
        "title": f"{spec.name or 'Custom model'} on {n} × {gpu.name}",
        "memory": memory,
        "total": memory.total_bytes,
        "capacity": gpu.memory_bytes,
        "fits": result.fits,
        "gpus_needed": result.gpus_needed,
        "speed": (result.speed_label, result.speed_value, result.speed_help),
        "parts": arrow(fit.parts_table(memory)),
        "attention": result.attention_label,
        "pool": None,
    }
    out["chart"] = as_spec(
        memory_bars(
            [(f"{n} × {gpu.name}", memory)],
            capacity_bytes=gpu.memory_bytes,
            capacity_label=f"{gpu.name}: {gpu.memory_label}",
        )
    )
    if result.decode is not None:
        step = result.decode
        out["decode"] = {
            "memory_time_s": step.memory_time_s,
            "compute_time_s": step.compute_time_s,
            "bound": step.bound,
            "tokens_per_s": step.tokens_per_s,
            "per_sequence": step.tokens_per_s_per_sequence,
            "bytes": step.weight_bytes + step.kv_bytes,
            "prefill_s": result.prefill_s,
        }
        out["speed_table"] = arrow(fit.speed_table(result))
        common = {
            "kv_fmt": values["fit_kvfmt"],
            "batch": values["fit_batch"],
            "n_gpus": n,
            "attention": values["fit_attn"],
        }
        out["longest"] = fit.longest_context(spec, gpu, weight_fmt=values["fit_wfmt"], **common)
        out["formats"] = arrow(fit.formats_table(spec, gpu, context=values["fit_ctx"], **common))
        out["cache_chart"] = _cache_chart(spec, gpu, values["fit_ctx"], values["fit_kvfmt"])
    return out


@st.cache_data(max_entries=64, show_spinner="Sizing every accelerator in the catalog…")
def catalog_rows(key: tuple[tuple[str, Any], ...], config_text: str = ""):
    """The same setting on every accelerator the calculator knows (plain rows for a table)."""
    values = dict(key)
    spec, _ = _spec(values["fit_model"], config_text)
    if spec is None:
        return arrow([])
    chosen = [a for a in catalog().values() if a.memory_bytes and a.memory_bandwidth_bytes_per_s]
    return arrow(fit.catalog_table(_result(values, spec), chosen))


@st.cache_data(max_entries=1, show_spinner=False)
def validation_table():
    """Predicted vs measured prefill peaks of real models on an H100 (simulators/data/measured)."""
    rows = [
        {
            "Model": r["model"],
            "Prompt (tokens)": f"{r['prompt_tokens']:,}",
            "Attention": f"{r['measured_with']} → {r['attention']}",
            "Predicted (GB)": f"{r['predicted_gb']:,.2f}",
            "Measured (GB)": f"{r['measured_gb']:,.2f}",
            "Predicted ÷ measured": f"{r['ratio']:.3f}",
            "Why they differ": r["note"] or "—",
        }
        for r in fit.measured_validation_rows()
    ]
    return arrow(rows)


def config_in_use(values: dict[str, Any]) -> str:
    """The custom config text when the custom model is chosen (part of the cache key), or ""."""
    return (custom_config() or "") if values["fit_model"] == CUSTOM_MODEL else ""


def current(state) -> dict[str, Any]:
    """The outcome for ``state``'s controls. A config too large to be one is refused here, in
    words, before anything hashes or parses it."""
    values = state.values
    text = config_in_use(values)
    if len(text) > MAX_CONFIG_BYTES:
        return {
            "error": f"it is {len(text):,} characters long; a config.json is a few kB, and the "
            f"calculator reads at most {MAX_CONFIG_BYTES:,}. Check that this is the model's "
            "config.json, not its weights or tokenizer.",
            "spec": None,
        }
    return outcome(relevant(values), text)


def verdict(out: dict[str, Any]) -> list[dict[str, Any]]:
    """Memory per GPU, capacity, fits (red when it does not), and the speed bound."""
    headroom = out["capacity"] - out["total"]
    metrics = [
        {"label": "Memory per GPU", "value": f"{out['total'] / 1e9:,.1f} GB", "help": _both(out["total"])},
        {
            "label": "GPU capacity",
            "value": f"{out['capacity'] / 1e9:,.0f} GB",
            "help": _both(out["capacity"]),
        },
        {
            "label": "Fits?",
            "value": "Yes" if out["fits"] else "No",
            "delta": f"{headroom / 1e9:+,.1f} GB headroom"
            if out["fits"]
            else f"{-headroom / 1e9:,.1f} GB short",
            "delta_color": "green" if out["fits"] else "red",
            "delta_arrow": "off",
        },
    ]
    label, value, help_text = out["speed"]
    if label:
        metrics.append({"label": label, "value": value, "help": help_text})
    return metrics


def _both(n: float) -> str:
    return f"{n / 1e9:,.2f} GB = {n / 2**30:,.2f} GiB (GB = 10⁹ bytes, GiB = 2³⁰ bytes)"


def render_memory(state, container: Any, key: str) -> None:
    """The verdict and the memory bars for ``state``'s controls."""
    out = current(state)
    if out["error"] or out["spec"] is None:
        if out["error"]:
            container.error(f"That config cannot be read: {out['error']}")
        else:
            container.info(
                "Paste or upload a config.json to size it (a few kB: if the upload box shows an "
                "error on the file, that file was refused there)."
            )
        return
    metric_row(container, verdict(out))
    show(out["chart"], key=f"chart-{key}-memory", container=container)


def render_decode_time(state, container: Any, key: str) -> None:
    """Time per decode step to stream the bytes vs to do the FLOPs (inference only)."""
    out = current(state)
    decode = out.get("decode")
    if not decode:
        container.info("Decode time applies to inference: choose the Inference task.")
        return
    from charts.memory import decode_time_figure

    spec = decode_time_figure(decode["memory_time_s"], decode["compute_time_s"], label=out["title"])
    show(as_spec(spec), key=f"chart-{key}-decode_time", container=container)


CACHE_CONTEXTS = (1_024, 4_096, 16_384, 32_768, 131_072)


def cache_contexts(spec: ModelSpec, chosen: int) -> tuple[int, ...]:
    """The contexts the cache chart draws: powers from 1k to 128k plus the chosen one, within
    the model's trained maximum where it has one."""
    limit = spec.max_positions or max(CACHE_CONTEXTS)
    found = sorted({c for c in (*CACHE_CONTEXTS, chosen) if 0 < c <= max(limit, chosen)})
    return tuple(found)


def _cache_chart(spec: ModelSpec, gpu: Any, context: int, kv_fmt: str) -> dict[str, Any]:
    """The cache of one sequence against the context by layer kind, as a chart spec (built once
    per setting, inside ``outcome``'s cache)."""
    from charts.memory import cache_by_kind_figure
    from simulators.llm_memory import kv_cache_by_kind

    cache = kv_cache_by_kind(spec, cache_contexts(spec, context), 1, kv_fmt)
    return as_spec(
        cache_by_kind_figure(
            cache.contexts,
            cache.parts,
            cache.layers,
            cache.naive,
            model=f"{spec.name or 'Custom model'}, one sequence, {kv_fmt.upper()} cache, by layer",
            capacity_bytes=gpu.memory_bytes,
        )
    )


def render_cache_by_kind(state, container: Any, key: str) -> None:
    """The cache of one sequence against the context, by layer kind (inference only)."""
    out = current(state)
    if not out.get("cache_chart"):
        container.info("The cache by layer kind applies to inference: choose the Inference task.")
        return
    show(out["cache_chart"], key=f"chart-{key}-cache_by_kind", container=container)


def render_vllm_ledger(state, container: Any, key: str) -> None:
    """vLLM's start-up ledger as a bar and as the log lines it prints (inference)."""
    values = state.values
    if values["fit_task"] != "inference":
        container.info("vLLM's start-up ledger applies to inference: choose the Inference task.")
        return
    out = engine_outcome(relevant(values), config_in_use(values))
    if out["error"]:
        from ui.controls import plain

        container.error(f"vLLM cannot be sized for this setting: {plain(out['error'], 600)}")
        return
    metric_row(container, engine_verdict(out))
    show(out["chart"], key=f"chart-{key}-vllm", container=container)
    container.code("\n".join(out["lines"]), language=None, wrap_lines=True)


VIEWS = {
    "memory": View(
        PAGE,
        "memory",
        "Memory per GPU against its capacity",
        ("fit_model", "fit_gpu", "fit_gpus", "fit_wfmt", "fit_kvfmt", "fit_batch", "fit_ctx", "fit_attn"),
        render_memory,
    ),
    "decode-time": View(
        PAGE,
        "decode-time",
        "One decode step: streaming the bytes vs doing the math",
        ("fit_model", "fit_gpu", "fit_wfmt", "fit_batch", "fit_ctx"),
        render_decode_time,
    ),
    "vllm-ledger": View(
        PAGE,
        "vllm-ledger",
        "vLLM's start-up ledger: what it takes, and the KV block pool it leaves",
        ("fit_model", "fit_gpu", "fit_gpus", "fit_util", "fit_seqs", "fit_ctx"),
        render_vllm_ledger,
    ),
    "cache-by-kind": View(
        PAGE,
        "cache-by-kind",
        "The cache against the context, by layer kind",
        ("fit_model", "fit_gpu", "fit_kvfmt", "fit_ctx"),
        render_cache_by_kind,
    ),
}


# ---------------------------------------------------------------------------------------------
# The engine a reader runs: vLLM's start-up ledger (simulators/engines/vllm.py)
# ---------------------------------------------------------------------------------------------

VLLM_WEIGHT_FORMATS = {"bf16": None, "fp16": "float16", "fp32": "float32"}
VLLM_KV_FORMATS = {"bf16": "auto", "fp16": "auto", "fp8": "fp8"}


def _model_config(model_id: str, config_text: str) -> dict | None:
    """The raw config.json of a preset or of the reader's text (for quantization_config and
    hybrid models' state layers), or None when it cannot be read."""
    import json

    if model_id != CUSTOM_MODEL:
        return models()[model_id].config
    try:
        config = json.loads(config_text)
    except (ValueError, TypeError):
        return None
    return config if isinstance(config, dict) else None


def vllm_arguments(values: dict[str, Any], config: dict | None) -> tuple[dict[str, Any], str]:
    """``engines.vllm_startup`` keywords for the page's controls, or ("", reason) for a setting
    vLLM cannot run as asked (the reason names the control)."""
    from simulators.engines import weight_layout

    kwargs: dict[str, Any] = {
        "tp": values["fit_gpus"],
        "max_model_len": values["fit_ctx"],
        "gpu_memory_utilization": values["fit_util"],
    }
    quantized = bool((config or {}).get("quantization_config"))
    fmt = values["fit_wfmt"]
    if not quantized:
        if fmt == "fp8":
            kwargs["quantization"] = "fp8"
        elif fmt in VLLM_WEIGHT_FORMATS:
            kwargs["dtype"] = VLLM_WEIGHT_FORMATS[fmt]
        else:
            return {}, (
                f"Weights: vLLM loads {fmt.upper()} weights only from a checkpoint quantized that way"
                " (AWQ, GPTQ, compressed-tensors), whose config.json has a quantization_config. Choose"
                " BF16 or FP8 (quantized at load), or upload that checkpoint's config.json."
            )
    if values["fit_kvfmt"] not in VLLM_KV_FORMATS:
        fmt = values["fit_kvfmt"].upper()
        return {}, f"KV cache: vLLM stores the cache in the model's dtype or FP8, not {fmt}."
    kwargs["kv_cache_dtype"] = VLLM_KV_FORMATS[values["fit_kvfmt"]]
    if values.get("fit_seqs"):
        kwargs["max_num_seqs"] = int(values["fit_seqs"])
    if values.get("fit_mbt"):
        kwargs["max_num_batched_tokens"] = int(values["fit_mbt"])
    if values.get("fit_pp", 1) > 1:
        kwargs["pp"] = int(values["fit_pp"])
    if values.get("fit_eager"):
        kwargs["enforce_eager"] = True
    if values.get("fit_nochunk"):
        kwargs["enable_chunked_prefill"] = False
    if values.get("fit_vver"):
        kwargs["version"] = values["fit_vver"]
    if values.get("fit_total"):
        kwargs["total_bytes"] = float(values["fit_total"]) * 2**30
    try:
        layout = weight_layout(config, dtype=kwargs.get("dtype"), quantization=kwargs.get("quantization"))
    except ValueError as exc:
        return {}, str(exc)
    kwargs["_layout_label"] = layout.label
    return kwargs, ""


@st.cache_data(max_entries=64, show_spinner=False)
def engine_outcome(key: tuple[tuple[str, Any], ...], config_text: str = "") -> dict[str, Any]:
    """vLLM's predicted start-up for one setting, as plain data (or ``{"error": …}``)."""
    from simulators import engines

    values = dict(key)
    spec, error = _spec(values["fit_model"], config_text)
    if spec is None:
        return {"error": error or "no model"}
    config = _model_config(values["fit_model"], config_text)
    kwargs, reason = vllm_arguments(values, config)
    if reason:
        return {"error": reason}
    kwargs.pop("_layout_label", None)
    gpu = catalog()[values["fit_gpu"]]
    try:
        startup = engines.vllm_startup(spec, gpu, config=config, **kwargs)
    except ValueError as exc:
        return {"error": str(exc)}
    speed = None
    if startup.fits:
        speed = engines.speed_at_concurrency(
            startup,
            spec,
            gpu,
            config=config,
            dtype=kwargs.get("dtype"),
            quantization=kwargs.get("quantization"),
        )
    breakdown = engines.ledger_breakdown(startup)
    chart = as_spec(
        memory_bars(
            [(f"vLLM on {gpu.name}", breakdown)],
            capacity_bytes=startup.total_bytes,
            capacity_label=f"reported {engines.format_gib(startup.total_bytes)} GiB",
            budget_bytes=startup.requested_bytes,
            budget_label=f"requested {startup.gpu_memory_utilization:.0%}",
        )
    )
    return {
        "error": "",
        "startup": startup,
        "speed": speed,
        "chart": chart,
        "lines": engines.log_lines(startup),
        "quantized": bool((config or {}).get("quantization_config")),
        "title": f"{spec.name or 'Custom model'} on vLLM {startup.ledger().version},"
        f" {values['fit_gpus']} × {gpu.name}"
        + (f" × {values['fit_pp']} stages" if values.get("fit_pp", 1) > 1 else ""),
    }


def engine_verdict(out: dict[str, Any]) -> list[dict[str, Any]]:
    """The ledger's headline: KV tokens, maximum concurrency, whether it starts, and the speed."""
    from simulators.engines import format_gib

    s = out["startup"]
    metrics = [
        {
            "label": "GPU KV cache size",
            "value": f"{s.kv_tokens:,} tokens" if s.kv_tokens else "—",
            "help": f"Available KV cache memory: {format_gib(s.kv_bytes)} GiB per GPU, in {s.num_blocks:,}"
            f" blocks of {s.block_size} tokens ({s.kv_groups} KV-cache group(s))",
        },
        {
            "label": f"Requests of {s.max_model_len:,} tokens at once",
            "value": f"{s.max_concurrency:,.2f}×" if s.max_concurrency else "—",
            "help": "vLLM's 'Maximum concurrency': KV blocks ÷ the blocks one request of max_model_len needs",
        },
        {
            "label": "Starts?",
            "value": {"fits": "Yes", "oom": "Then runs out", "refused": "No"}[s.verdict],
            "delta": f"{format_gib(s.headroom_bytes)} GiB left outside"
            if s.verdict == "fits"
            else ("after sizing" if s.verdict == "oom" else "vLLM refuses"),
            "delta_color": "green" if s.verdict == "fits" else "red",
            "delta_arrow": "off",
        },
    ]
    speed = out.get("speed")
    if speed is not None:
        metrics.append(
            {
                "label": "Decode with the pool full",
                "value": f"{speed.tokens_per_s_per_request:,.0f} tok/s each",
                "help": f"{speed.batch} requests × {speed.context_tokens:,} tokens: at most"
                f" {speed.tokens_per_s:,.0f} tokens/s in total, {speed.bound}-bound"
                f" ({(speed.weight_bytes + speed.kv_bytes) / 1e9:,.1f} GB read per step)",
            }
        )
    return metrics


def ledger_table(startup: Any) -> Any:
    """The ledger's terms with their values in GiB (as vLLM prints them) and GB."""
    from simulators.engines import LEDGER_TERMS, format_gib

    rows = [
        {
            "Term": "Memory the GPU reports",
            "GiB": format_gib(startup.total_bytes),
            "GB": f"{startup.total_bytes / 1e9:,.2f}",
        },
        {
            "Term": f"Requested ({startup.gpu_memory_utilization} × reported)",
            "GiB": format_gib(startup.requested_bytes),
            "GB": f"{startup.requested_bytes / 1e9:,.2f}",
        },
    ]
    for key, (label, _term) in LEDGER_TERMS.items():
        value = getattr(startup, key)
        rows.append({"Term": label, "GiB": format_gib(value), "GB": f"{value / 1e9:,.2f}"})
    rows.append(
        {
            "Term": "Left outside after CUDA graphs",
            "GiB": format_gib(startup.headroom_bytes),
            "GB": f"{startup.headroom_bytes / 1e9:,.2f}",
        }
    )
    return arrow(rows)


def log_comparison(startup: Any, text: str) -> dict[str, Any]:
    """A pasted log read and set beside the prediction, or ``{"error": …}`` in words."""
    from simulators import engines

    try:
        parsed = engines.parse_vllm_log(text)
    except ValueError as exc:
        return {"error": str(exc)}
    rows = engines.compare_with_log(startup, parsed)
    table = [
        {
            "Term": r["term"].removesuffix("_bytes").replace("_", " "),
            "Predicted": _term_value(r["term"], r["predicted"]),
            "Your log": _term_value(r["term"], r["measured"]),
            "Predicted ÷ log": f"{r['ratio']:.3f}",
            "Agrees": "yes" if r["agrees"] else "no",
            "Why it may differ": r["why"] or "—",
        }
        for r in rows
    ]
    chart = as_spec(
        memory_bars(
            [
                ("Predicted", engines.ledger_breakdown(startup)),
                ("Your log", engines.ledger_breakdown(parsed)),
            ],
            capacity_bytes=parsed.get("total_bytes") or startup.total_bytes,
            capacity_label="reported",
        )
    )
    return {"error": "", "parsed": parsed, "table": arrow(table), "rows": rows, "chart": chart}


def _term_value(term: str, value: float) -> str:
    if term == "kv_tokens":
        return f"{int(value):,} tokens"
    if term == "max_concurrency":
        return f"{value:,.2f}×"
    return f"{value / 2**30:,.2f} GiB"


# ---------------------------------------------------------------------------------------------
# transformers: the peak of one prefill (simulators/hf_runtime.py through engines)
# ---------------------------------------------------------------------------------------------

HF_ATTENTION = {"flash": "sdpa", "eager": "eager"}


@st.cache_data(max_entries=64, show_spinner=False)
def transformers_outcome(key: tuple[tuple[str, Any], ...], config_text: str = "") -> dict[str, Any]:
    """One transformers prefill for one setting, as plain data (or ``{"error": …}``)."""
    from simulators import engines

    values = dict(key)
    spec, error = _spec(values["fit_model"], config_text)
    if spec is None:
        return {"error": error or "no model"}
    if values["fit_gpus"] != 1:
        return {"error": "GPUs: transformers' generate runs on one GPU here; set GPUs to 1."}
    if values["fit_wfmt"] not in ("bf16", "fp16"):
        return {"error": "Weights: the transformers prefill is sized for 16-bit weights (BF16 or FP16)."}
    gpu = catalog()[values["fit_gpu"]]
    try:
        memory = engines.transformers_prefill(
            spec,
            context_tokens=values["fit_ctx"],
            batch=values["fit_batch"],
            attention=HF_ATTENTION[values["fit_attn"]],
            kernels=bool(values.get("fit_kernels")),
            config=_model_config(values["fit_model"], config_text),
        )
    except ValueError as exc:
        return {"error": str(exc)}
    reported = engines.reported_memory_bytes(gpu)
    capacity = reported or gpu.memory_bytes
    label = f"reported {engines.format_gib(reported)} GiB" if reported else f"{gpu.name}: {gpu.memory_label}"
    total = memory.total_bytes
    cache = memory.get("cache")
    # the allocated peak plus the measured range of what the process holds beyond it
    whose = f"what the {gpu.name} reports" if reported else f"the {gpu.name}'s label, {gpu.memory_label}"
    verdict = engines.transformers_verdict(total, capacity, whose)
    fits = verdict.verdict == "fits"
    metrics = [
        {"label": "Prefill peak", "value": f"{total / 1e9:,.1f} GB", "help": _both(total)},
        {"label": "Cache after the prefill", "value": f"{cache / 1e9:,.2f} GB", "help": _both(cache)},
        {
            "label": "Fits?",
            "value": {"fits": "Yes", "tight": "Tight", "does not fit": "No"}[verdict.verdict],
            "delta": f"{(capacity - verdict.high_bytes) / 2**30:+,.1f} to"
            f" {(capacity - verdict.low_bytes) / 2**30:+,.1f} GiB left",
            "delta_color": "green" if fits else ("orange" if verdict.verdict == "tight" else "red"),
            "delta_arrow": "off",
            "help": verdict.message,
        },
    ]
    rows = [
        {
            "Part": p.label,
            "GB": f"{p.bytes / 1e9:,.3f}",
            "GiB": f"{p.bytes / 2**30:,.3f}",
            "What it is": p.explanation,
        }
        for p in memory.parts
    ]
    return {
        "error": "",
        "title": f"{spec.name or 'Custom model'} in transformers: one prefill of {values['fit_ctx']:,} tokens"
        f" × {values['fit_batch']} on {gpu.name}",
        "metrics": metrics,
        "chart": as_spec(
            memory_bars([("transformers prefill", memory)], capacity_bytes=capacity, capacity_label=label)
        ),
        "parts": arrow(rows),
        "verdict": verdict.message,
        "notes": list(memory.notes),
    }


# ---------------------------------------------------------------------------------------------
# SGLang and llama.cpp / Ollama (simulators/engines/sglang.py, llamacpp.py), side by side, and
# the command that fits (simulators/engines/commands.py): every number from the engines' functions
# ---------------------------------------------------------------------------------------------

SGLANG_KV = {"bf16": "auto", "fp16": "auto", "fp8": "fp8_e4m3"}
LLAMA_ENGINES = ("llamacpp", "ollama")


def _gib(n: float) -> str:
    return f"{n / 2**30:,.2f} GiB"


def _total(values: dict[str, Any]) -> float | None:
    return float(values["fit_total"]) * 2**30 if values.get("fit_total") else None


def sglang_call(values: dict[str, Any], config: dict) -> Any:
    """``engines.sglang_startup`` for the page's controls (``EngineError`` names a field)."""
    from simulators import engines

    kv = SGLANG_KV.get(values["fit_kvfmt"])
    if kv is None:
        raise engines.EngineError(
            "KV cache: SGLang stores the cache in the model's dtype or FP8,"
            f" not {values['fit_kvfmt'].upper()}."
        )
    return engines.sglang_startup(
        config,
        catalog()[values["fit_gpu"]],
        tp=values["fit_gpus"],
        mem_fraction_static=values.get("fit_frac") or None,
        context_length=values["fit_ctx"],
        kv_cache_dtype=kv,
        total_bytes=_total(values),
    )


def llamacpp_call(values: dict[str, Any], config: dict, engine: str = "llamacpp") -> Any:
    """``engines.llamacpp_startup`` (or ``ollama_startup``) for the page's controls: -c is the
    context × the parallel slots, so that each slot holds the page's context."""
    from simulators import engines

    gpu = catalog()[values["fit_gpu"]]
    n_parallel = int(values.get("fit_np") or 1)
    kv = values.get("fit_ctk") or "f16"
    if engine == "ollama":
        return engines.ollama_startup(
            config,
            gpu,
            quant=values["fit_quant"],
            num_ctx=values["fit_ctx"],
            num_parallel=n_parallel,
            kv_cache_type="" if kv == "f16" else kv,
            total_bytes=_total(values),
            host=values.get("fit_host"),
        )
    return engines.llamacpp_startup(
        config,
        gpu,
        quant=values["fit_quant"],
        n_ctx=values["fit_ctx"] * n_parallel,
        n_gpu_layers=int(values.get("fit_ngl", -1)),
        n_parallel=n_parallel,
        cache_type_k=kv,
        cache_type_v=kv,
        n_cpu_moe=int(values.get("fit_ncmoe") or 0),
        n_gpus=values["fit_gpus"],
        total_bytes=_total(values),
        host=values.get("fit_host"),
    )


def _ledger_chart(rows: list[tuple[str, Any]], headline: str, total: float) -> dict[str, Any]:
    from charts.engines import ledger_bars

    return as_spec(
        ledger_bars(rows, headline=headline, capacity_bytes=total, capacity_label=f"reports {_gib(total)}")
    )


def _ledger_table(ledger: Any) -> Any:
    return arrow(
        [
            {
                "Term": t.label,
                "GiB": f"{t.bytes / 2**30:,.2f}",
                "GB": f"{t.bytes / 1e9:,.2f}",
                "Derived or measured": t.kind
                if t.kind == "derived"
                else f"measured, {_gib(t.low)}–{_gib(t.high)}",
                "What allocates it": t.cause,
                "Follows": t.source,
            }
            for t in ledger.terms
        ]
    )


def _sglang_outcome(values: dict[str, Any], spec: ModelSpec, config: dict) -> dict[str, Any]:
    from simulators import engines

    s = sglang_call(values, config)
    ledger = s.ledger()
    gpu = catalog()[values["fit_gpu"]]
    starts = {"fits": "Yes", "refused": "No"}[s.verdict]
    metrics = [
        {
            "label": "max_total_num_tokens",
            "value": f"{s.max_total_num_tokens:,} tokens" if s.max_total_num_tokens else "—",
            "help": f"The token pool: {_gib(s.kv_bytes)} per GPU, {s.cell.bytes_per_token:,.0f} bytes a token"
            f" ({s.cell.arch}), pages of {s.page_size}",
        },
        {
            "label": f"Requests of {s.context_len:,} tokens at once",
            "value": f"{min(s.max_total_num_tokens / s.context_len, s.max_running_requests):,.2f}×"
            if s.fits and s.context_len
            else "—",
            "help": f"The smaller of max_total_num_tokens ÷ context_len"
            f" ({s.max_total_num_tokens / max(s.context_len, 1):,.2f}) and max_running_requests"
            f" ({s.max_running_requests:,}"
            + (", capped by the state cache" if s.mamba is not None else "")
            + ")",
        },
        {
            "label": "mem_fraction_static",
            "value": f"{s.mem_fraction_static:.3f}",
            "help": (
                "SGLang's default for this GPU's capacity" if s.fraction_source == "default" else "as given"
            )
            + f"; the smallest that starts is {s.min_mem_fraction_static:.3f}",
        },
        {
            "label": "Starts?",
            "value": starts,
            "delta": "pool sized" if s.fits else "SGLang refuses",
            "delta_color": "green" if s.fits else "red",
            "delta_arrow": "off",
        },
    ]
    headline = (
        f"SGLang keeps {_gib(s.kv_bytes)} for {s.max_total_num_tokens:,} tokens of KV cache"
        f" on each {gpu.name}"
        if s.fits
        else f"SGLang refuses to start on {gpu.name}"
    )
    notes = list(s.notes)
    if ledger.tight:
        low, high = ledger.used_range
        notes.insert(
            0,
            f"Tight: with the measured terms' ranges the start-up takes {_gib(low)}–{_gib(high)}, which"
            f" straddles the {_gib(ledger.total_bytes)} the device reports.",
        )
    if values["fit_wfmt"] not in ("bf16", "fp16") and not config.get("quantization_config"):
        notes.append(
            f"SGLang loads the checkpoint as its config.json stores it ({s.weights_label}): the Weights"
            " control is not applied."
        )
    return {
        "error": "",
        "engine": "sglang",
        "kv_tokens": s.max_total_num_tokens,
        "title": f"{spec.name or 'Custom model'} on SGLang {engines.SGLANG_VERSION},"
        f" {values['fit_gpus']} × {gpu.name}",
        "verdict": s.verdict,
        "message": "" if s.fits else s.message,
        "metrics": metrics,
        "ledger": ledger,
        "chart": _ledger_chart([(f"SGLang on {gpu.name}", ledger)], headline, s.total_bytes),
        "lines": engines.sglang_log_lines(s),
        "table": _ledger_table(ledger),
        "notes": notes,
        "source": f"Device total: {s.total_source}. chunked_prefill_size {s.chunked_prefill_size:,},"
        f" cuda_graph_max_bs {s.cuda_graph_max_bs}, KV dtype {s.kv_cache_dtype}.",
    }


def _llamacpp_outcome(values: dict[str, Any], spec: ModelSpec, config: dict, engine: str) -> dict[str, Any]:
    from simulators.engines.commands import llamacpp_log_lines

    s = llamacpp_call(values, config, engine)
    gpu = catalog()[values["fit_gpu"]]
    gpus = s.gpu_devices
    n_layers = s.hparams.n_layer + 1
    name = "Ollama" if engine == "ollama" else "llama.cpp"
    fullest = max(gpus, key=lambda d: d.used_bytes) if gpus else None
    ledgers = []
    for i, d in enumerate(gpus):
        if d.layers:
            ledgers.append((f"{name}, {d.name}", s.ledger(i)))
    metrics = [
        {
            "label": "Layers on the GPU",
            "value": f"{s.offloaded_layers}/{n_layers}",
            "help": f"'offloaded {s.offloaded_layers}/{n_layers} layers to GPU'"
            " (the output layer counts as one)" + (f"; {s.notes[0]}" if s.notes else ""),
        },
        {
            "label": "KV cache",
            "value": _gib(s.kv_bytes),
            "help": f"{s.n_parallel} slot(s) × {s.n_ctx_seq:,} cells,"
            f" K {s.cache_type_k} and V {s.cache_type_v}"
            f" (-c {s.n_ctx:,})",
        },
        {
            "label": "Fullest GPU",
            "value": _gib(fullest.used_bytes) if fullest else "—",
            "help": (
                f"model {_gib(fullest.model_bytes)} + KV {_gib(fullest.kv_bytes)} + compute"
                f" {_gib(fullest.compute_bytes)} of {_gib(fullest.total_bytes or 0)}"
                if fullest
                else "no layer on a GPU"
            ),
        },
        {
            "label": "Starts?",
            "value": {"fits": "Yes", "offloads": "Offloads", "will not start": "No"}[s.verdict],
            "delta": (f"about {s.tokens_per_s:,.0f} tok/s decode" if s.tokens_per_s else s.verdict),
            "delta_color": {"fits": "green", "offloads": "orange", "will not start": "red"}[s.verdict],
            "delta_arrow": "off",
        },
    ]
    total = float(gpus[0].total_bytes or 0) if gpus else 0.0
    if s.verdict == "will not start" and fullest is not None:
        headline = f"{name} runs out of memory on {fullest.name}: {_gib(fullest.used_bytes)} of {_gib(total)}"
    else:
        headline = (
            f"{name} puts {s.offloaded_layers} of {n_layers} layers on {len(gpus)} × {gpu.name}:"
            f" {_gib(fullest.used_bytes if fullest else 0)} on the fullest"
        )
    notes = list(s.notes)
    if s.cpu_mapped_bytes:
        notes.append(
            f"{_gib(s.cpu_mapped_bytes)} of the {s.quant} file stay in host memory (CPU_Mapped, read through"
            " mmap): the token embeddings always, and every layer not on a GPU."
        )
    if values["fit_wfmt"] != "bf16" or values["fit_kvfmt"] != "bf16":
        notes.append(
            f"{name} reads a GGUF file: its format is the GGUF control ({s.quant})"
            " and its cache type -ctk/-ctv,"
            " not the Weights and KV cache controls."
        )
    return {
        "error": "",
        "engine": engine,
        "kv_tokens": s.n_ctx,  # cells: -c, shared by the slots
        "title": f"{spec.name or 'Custom model'} on {name} ({s.quant}), {values['fit_gpus']} × {gpu.name}",
        "verdict": s.verdict,
        "message": s.message if s.verdict != "fits" else "",
        "metrics": metrics,
        "ledger": ledgers[0][1] if ledgers else None,
        "chart": _ledger_chart(ledgers, headline, total) if ledgers else None,
        "lines": llamacpp_log_lines(s),
        "table": _ledger_table(ledgers[0][1]) if ledgers else arrow([]),
        "notes": notes,
        "source": f"GGUF {s.quant}: {s.weights_bytes / 2**30:,.2f} GiB file, {s.bpw:.2f} bits per weight;"
        f" flash attention {'on' if s.flash_attn else 'off'}.",
    }


@st.cache_data(max_entries=64, show_spinner=False)
def engine_ledger_outcome(key: tuple[tuple[str, Any], ...], config_text: str = "") -> dict[str, Any]:
    """SGLang's, llama.cpp's or Ollama's predicted start-up for one setting, as plain data; a
    setting the engine module refuses comes back as ``{"error": …}`` with its words."""
    from simulators.engines import EngineError

    values = dict(key)
    spec, error = _spec(values["fit_model"], config_text)
    config = _model_config(values["fit_model"], config_text)
    if spec is None or config is None:
        return {"error": error or "no config.json to read"}
    try:
        if values["fit_engine"] == "sglang":
            return _sglang_outcome(values, spec, config)
        return _llamacpp_outcome(values, spec, config, values["fit_engine"])
    except (EngineError, ValueError, KeyError) as exc:
        return {"error": str(exc)}


@st.cache_data(max_entries=32, show_spinner="Sizing the model on three engines…")
def side_by_side(key: tuple[tuple[str, Any], ...], config_text: str = "") -> dict[str, Any]:
    """The same model and GPU on vLLM, SGLang and llama.cpp: one chart of their ledgers, a table
    term by term with each engine's cause, and the engines that refuse, in their words."""
    from charts.engines import ledger_bars, ledger_rows

    values = dict(key)
    gpu = catalog()[values["fit_gpu"]]
    rows: list[tuple[str, Any]] = []
    refused: list[str] = []
    kv: dict[str, str] = {}
    vllm = engine_outcome(key, config_text)
    if vllm["error"]:
        refused.append(f"vLLM: {vllm['error']}")
    else:
        s = vllm["startup"]
        rows.append((f"vLLM {s.version}", s.ledger()))
        kv["vLLM"] = (
            f"{s.kv_tokens:,} tokens in {_gib(s.kv_bytes)} (a pool: {s.gpu_memory_utilization:g}"
            " of the total, less the rest)"
        )
        if s.verdict != "fits":
            refused.append(f"vLLM: {s.message}")
    for engine, label in (("sglang", "SGLang"), ("llamacpp", "llama.cpp")):
        out = engine_ledger_outcome(tuple({**values, "fit_engine": engine}.items()), config_text)
        if out["error"]:
            refused.append(f"{label}: {out['error']}")
            continue
        if out["ledger"] is not None:
            ledger = out["ledger"]
            rows.append(
                (
                    f"{label} {ledger.version}" if engine == "sglang" else f"{label} ({values['fit_quant']})",
                    ledger,
                )
            )
            term = ledger.get("kv_cache")
            kv[label] = f"{_gib(term.bytes)} — {term.cause}" if term else "—"
            if term and out.get("kv_tokens"):
                kv[label] = f"{out['kv_tokens']:,} tokens in {_gib(term.bytes)} — {term.cause}"
        if out["message"]:
            refused.append(f"{label}: {out['message']}")
    if not rows:
        return {"error": "; ".join(refused) or "no engine could size this setting", "refused": refused}
    parts = []
    for name, ledger in rows:
        term = ledger.get("kv_cache")
        parts.append(f"{name.split(' ')[0]} {term.bytes / 2**30:,.1f}" if term else name)
    headline = f"KV cache on one {gpu.name}: " + ", ".join(parts) + " GiB"
    total = max(ledger.total_bytes for _, ledger in rows)
    chart = as_spec(
        ledger_bars(
            rows,
            headline=headline,
            detail=f"{values['fit_ctx']:,}-token context; each engine's terms in GiB;"
            " hover a term for its cause",
            capacity_bytes=total,
            capacity_label=f"reports {_gib(total)}",
        )
    )
    why = []
    for name, ledger in rows:
        weights = ledger.get("weights")
        kv_term = ledger.get("kv_cache")
        w = weights.bytes if weights else 0.0
        k = kv_term.bytes if kv_term else 0.0
        rest = ledger.total_bytes - w - k
        why.append(
            f"{name}: weights {_gib(w)}, KV cache {_gib(k)}, and {_gib(rest)} of the"
            f" {_gib(ledger.total_bytes)} kept for everything else or left free"
        )
    return {
        "error": "",
        "chart": chart,
        "why": why,
        "table": arrow(ledger_rows(rows)),
        "refused": refused,
        "kv": kv,
        "engines": [name for name, _ in rows],
    }


def model_name(values: dict[str, Any]) -> str:
    """The name a command loads: the preset's Hugging Face repository where its sources give one,
    the reader's Hub id, else a placeholder."""
    import re

    if values["fit_model"] == CUSTOM_MODEL:
        return values.get("fit_hf") or "MODEL"
    for src in models()[values["fit_model"]].sources:
        m = re.match(r"https://huggingface\.co/([\w.-]+/[\w.-]+)", src)
        if m:
            return m.group(1)
    return values["fit_model"]


COMMAND_KEYS = (
    "fit_model",
    "fit_gpu",
    "fit_gpus",
    "fit_ctx",
    "fit_users",
    "fit_quant",
    "fit_total",
    "fit_hf",
    "fit_vver",
)


@st.cache_data(max_entries=32, show_spinner="Searching each engine's flags…")
def commands_outcome(key: tuple[tuple[str, Any], ...], config_text: str = "") -> dict[str, Any]:
    """Each engine's command for the page's GPU, model, context and users (plain data)."""
    from simulators.engines.commands import commands_that_fit

    values = dict(key)
    config = _model_config(values["fit_model"], config_text)
    if config is None:
        return {"error": "no config.json to read"}
    found = commands_that_fit(
        config,
        catalog()[values["fit_gpu"]],
        context=values["fit_ctx"],
        users=values["fit_users"],
        n_gpus=values["fit_gpus"],
        quant=values["fit_quant"],
        model=model_name(values),
        total_bytes=_total(values),
        vllm_version=values.get("fit_vver") or "0.19",
    )
    out = {}
    for engine, c in found.items():
        if isinstance(c, str):
            out[engine] = {"error": c}
        else:
            out[engine] = {
                "error": "",
                "verdict": c.verdict,
                "message": c.message,
                "command": c.command,
                "lines": list(c.lines),
                "checks": list(c.checks),
                "version": c.version,
            }
    return {"error": "", "engines": out}


def command_key(values: dict[str, Any]) -> tuple[tuple[str, Any], ...]:
    return tuple((k, values.get(k)) for k in COMMAND_KEYS)


# ---------------------------------------------------------------------------------------------
# Paste any engine's log: engine and version recognised, the log's settings, the diff in GiB
# ---------------------------------------------------------------------------------------------

ENGINE_NAMES = {"vllm": "vLLM", "sglang": "SGLang", "llama.cpp": "llama.cpp", "ollama": "Ollama"}
PAGE_ENGINE = {"vllm": "vllm", "sglang": "sglang", "llama.cpp": "llamacpp", "ollama": "ollama"}
_WHY = {
    "baseline_bytes": "the device's total less the CUDA context and NCCL: another total, or another process",
    "weights_bytes": "the checkpoint's format or tensors built at load (vision tower, padded vocabulary)",
    "kv_bytes": "what is left after the weights and the static reserve: follows the fraction and the total",
    "max_total_num_tokens": "the pool's bytes ÷ each token's bytes (heads, layers, KV dtype, TP)",
    "max_running_requests": "SGLang's default from the pool and the context, or the flag",
    "context_len": "--context-length, or the model's own limit",
    "model": "the layers on this device in the file's types; another quantization mix changes it",
    "kv": "cells × streams × layers on this device × the K and V types",
    "compute": "the reserve graph for one micro-batch: an estimate, not the allocator's sum",
    "offloaded_layers": "-ngl, or --fit's choice from the free memory",
    "n_ctx": "-c padded to 256 and multiplied by the slots",
}


def _bytes_row(term: str, predicted: float | None, logged: float, why: str, tol: float = 0.01) -> dict:
    """A size beside the log's, in GiB (the unit every engine's figure is turned into)."""
    agrees = predicted is not None and abs(predicted - logged) <= tol * max(abs(logged), 1.0)
    return {
        "Term": term,
        "Predicted": f"{predicted / 2**30:,.2f} GiB" if predicted is not None else "—",
        "Your log": f"{logged / 2**30:,.2f} GiB",
        "Difference": f"{(predicted - logged) / 2**30:+,.2f} GiB" if predicted is not None else "—",
        "Agrees": ("yes" if agrees else "no") if predicted is not None else "not predicted",
        "Why it may differ": "—" if agrees else why,
    }


def _count_row(
    term: str, predicted: float | None, logged: float, why: str, tol: float = 0.02, unit: str = ""
) -> dict:
    """A count (tokens, layers, requests) beside the log's."""
    agrees = predicted is not None and abs(predicted - logged) <= tol * max(abs(logged), 1.0)
    fmt = (lambda v: f"{v:,.2f}×") if unit == "×" else (lambda v: f"{v:,.0f}{' ' + unit if unit else ''}")
    return {
        "Term": term,
        "Predicted": fmt(predicted) if predicted is not None else "—",
        "Your log": fmt(logged),
        "Difference": (f"{predicted - logged:+,.2f}" if unit == "×" else f"{predicted - logged:+,.0f}")
        if predicted is not None
        else "—",
        "Agrees": "yes" if agrees else "no",
        "Why it may differ": "—" if agrees else why,
    }


def llamacpp_gpu_devices(buffers: dict[str, Any]) -> list[str]:
    """The GPUs a llama.cpp log's model buffers name: one per numbered device (CUDA0, ROCm1,
    Vulkan0, SYCL0), one for Apple's Metal (its plain and mapped buffers); host buffers
    (CUDA_Host, ROCm_Host: pinned host memory), CPU ones and the row-split buffer are not GPUs."""
    found: list[str] = []
    for name in buffers:
        m = re.fullmatch(r"(CUDA|ROCm|Vulkan|SYCL)(\d+)", name)
        gpu = m.group(0) if m else ("Metal" if name.startswith("Metal") else None)
        if gpu and gpu not in found:
            found.append(gpu)
    return found


def log_settings(parsed: dict[str, Any]) -> dict[str, Any]:
    """The page's controls a parsed log sets ("Use this log's settings"): only what it printed."""
    from simulators.engines.llamacpp import preset_of

    engine = parsed["engine"]
    out: dict[str, Any] = {"fit_engine": PAGE_ENGINE[engine], "fit_task": "inference"}
    if engine == "vllm":
        from simulators import engines

        shown = engines.log_settings(parsed)  # vLLM's own reader of a log's settings
        for src, dst in (
            ("max_model_len", "fit_ctx"),
            ("tp", "fit_gpus"),
            ("pp", "fit_pp"),
            ("max_num_seqs", "fit_seqs"),
            ("max_num_batched_tokens", "fit_mbt"),
            ("gpu_memory_utilization", "fit_util"),
            ("enforce_eager", "fit_eager"),
        ):
            if src in shown:
                out[dst] = shown[src]
        if "enable_chunked_prefill" in shown:
            out["fit_nochunk"] = not shown["enable_chunked_prefill"]
        if shown.get("total_bytes"):
            out["fit_total"] = round(float(shown["total_bytes"]) / 2**30, 2)
        if str(shown.get("kv_cache_dtype", "")).startswith("fp8"):
            out["fit_kvfmt"] = "fp8"
        if shown.get("version"):
            # a version not modelled is said by the mismatches; the page's stays
            with contextlib.suppress(engines.EngineError):
                out["fit_vver"] = engines.vllm_family(str(shown["version"]))
    elif engine == "sglang":
        ctx = parsed.get("context_length") or parsed.get("context_len")
        if ctx:
            out["fit_ctx"] = int(ctx)
        if parsed.get("tp_size"):
            out["fit_gpus"] = int(parsed["tp_size"])
        if parsed.get("mem_fraction_static"):
            out["fit_frac"] = float(parsed["mem_fraction_static"])
    else:
        seq = parsed.get("n_ctx_seq") or parsed.get("n_ctx")
        if seq:
            out["fit_ctx"] = int(seq)
            if parsed.get("n_ctx") and parsed["n_ctx"] // int(seq) > 1:
                out["fit_np"] = int(parsed["n_ctx"]) // int(seq)
        kv = parsed.get("kv_types")
        if kv and kv[0] in ("f16", "q8_0", "q4_0"):
            out["fit_ctk"] = kv[0]
        preset = preset_of(parsed)
        if preset:
            out["fit_quant"] = preset
        gpus = llamacpp_gpu_devices(parsed.get("model_buffers") or {})
        if gpus:
            out["fit_gpus"] = len(gpus)
        offloaded, layers = parsed.get("offloaded_layers"), parsed.get("total_layers")
        if offloaded is not None and layers and offloaded < layers:
            out["fit_ngl"] = int(offloaded)
    return out


def _settings_words(key: str, value: Any) -> str:
    if key == "fit_total":
        return f"{value:,.2f} GiB"
    if key == "fit_engine":
        return str(value)
    return f"{value:,}" if isinstance(value, int) else str(value)


SETTING_NAMES = {
    "fit_engine": "engine",
    "fit_vver": "vLLM version",
    "fit_pp": "pipeline stages",
    "fit_mbt": "max_num_batched_tokens",
    "fit_eager": "enforce_eager",
    "fit_nochunk": "--no-enable-chunked-prefill",
    "fit_kvfmt": "KV cache",
    "fit_ctx": "context",
    "fit_gpus": "GPUs (TP)",
    "fit_util": "gpu_memory_utilization",
    "fit_total": "memory the device reports",
    "fit_seqs": "max_num_seqs",
    "fit_frac": "mem_fraction_static",
    "fit_np": "parallel slots (-np)",
    "fit_ctk": "KV-cache type",
    "fit_quant": "GGUF quantization",
    "fit_ngl": "-ngl",
}


def _version_words(parsed: dict[str, Any]) -> str:
    """The log's version against the version the page models, said plainly when it differs."""
    from simulators import engines

    engine, version = parsed["engine"], parsed.get("version")
    name = ENGINE_NAMES[engine]
    if not version:
        return f"The log does not print {name}'s version: it is compared with the modelled one."
    if engine == "vllm":
        try:
            from simulators.engines.vllm import vllm_family

            # the version with its engine before 0.19 ("0.9.2 (V1 engine)"), as log_settings gives it
            family = vllm_family(str(engines.log_settings(parsed).get("version") or version))
        except ImportError:
            family = "0.19" if str(version).startswith(("0.19", "0.20")) else ""
        except engines.EngineError as exc:
            return f"The log ran {exc}. The terms below are compared with 0.19 all the same."
        if family and family != "0.19":
            return f"The log ran vLLM {version} (the {family} ledger); the page models 0.19."
        if not family:
            return f"The log ran vLLM {version}; the page models 0.19: terms may differ for that reason."
        return ""
    modelled = {
        "sglang": engines.SGLANG_VERSION,
        "llama.cpp": engines.LLAMACPP_VERSION,
        "ollama": engines.OLLAMA_VERSION,
    }[engine]
    if modelled in str(version) or str(version).lstrip("v") == modelled:
        return ""
    return (
        f"The log ran {name} {version}; the page models {name} {modelled}: a term may differ because"
        " the version differs, not only the setting."
    )


def _vllm_mismatches(parsed: dict[str, Any], values: dict[str, Any], config_text: str) -> list[str]:
    """vLLM's own comparison of a log's settings with the page's (``engines.log_mismatches``),
    the page's settings as the ledger resolved them (its device total, its default batch limits)."""
    from simulators import engines

    page = {**values, "fit_engine": "vllm"}
    settings: dict[str, Any] = {
        "version": values.get("fit_vver") or "0.19",
        "model": model_name(values) if values["fit_model"] != CUSTOM_MODEL else None,
        "tp": values["fit_gpus"],
        "pp": values.get("fit_pp", 1),
        "max_model_len": values["fit_ctx"],
        "gpu_memory_utilization": values["fit_util"],
        "enforce_eager": bool(values.get("fit_eager")),
        "enable_chunked_prefill": not values.get("fit_nochunk"),
        "kv_cache_dtype": "fp8" if values["fit_kvfmt"] == "fp8" else "auto",
    }
    out = engine_outcome(relevant(page), config_text)
    if not out["error"]:
        s = out["startup"]
        settings |= {
            "total_bytes": s.total_bytes,
            "max_num_seqs": s.max_num_seqs,
            "max_num_batched_tokens": s.max_num_batched_tokens,
        }
    return engines.log_mismatches(parsed, settings)


def log_mismatches(parsed: dict[str, Any], values: dict[str, Any], config_text: str = "") -> list[str]:
    """What the log ran with that differs from the page, said before any term is compared (for a
    vLLM log, in vLLM's own words: ``engines.log_mismatches``)."""
    out = []
    vllm = parsed["engine"] == "vllm"
    if vllm:
        out += _vllm_mismatches(parsed, values, config_text)
    else:
        words = _version_words(parsed)
        if words:
            out.append(words)
    for key, value in log_settings(parsed).items():
        if key == "fit_task" or values.get(key) is None:
            continue
        if vllm and key != "fit_engine":
            continue  # said above
        page = values[key]
        same = (
            abs(float(page) - float(value)) < 0.005
            if key in ("fit_total", "fit_util", "fit_frac")
            else page == value
        )
        if key == "fit_total" and not page:
            same = False
        if key == "fit_frac" and not page:
            same = False
        if key == "fit_engine":
            if not same:
                page_name = params_for(PAGE)["fit_engine"].label(page)
                out.append(
                    f"The log is from {ENGINE_NAMES[parsed['engine']]}; the page shows {page_name}: the"
                    f" terms below are {ENGINE_NAMES[parsed['engine']]}'s prediction for the page's settings."
                )
            continue
        if not same:
            out.append(
                f"{SETTING_NAMES.get(key, key)}: the log used {_settings_words(key, value)}, the page"
                f" {_settings_words(key, page) if page not in (0, 0.0) else 'the default'}."
            )
    layers = parsed.get("total_layers") or parsed.get("ollama_layers_model")
    if layers and not vllm and parsed["engine"] != "sglang":
        mine = _llama_layers(values, config_text)
        if mine and mine != layers:
            out.append(
                f"The log's model has {layers} layers (the output layer counted, as llama.cpp counts"
                f" them); the page's has {mine}: it is another model."
            )
    model = (
        parsed.get("model") or parsed.get("model_path") or (parsed.get("metadata") or {}).get("general.name")
    )
    if model and values["fit_model"] != CUSTOM_MODEL and not vllm:  # vLLM's model said above
        preset = models()[values["fit_model"]]
        name = str(model).lower().replace("-", " ").replace("_", " ").rstrip("/").split("/")[-1]
        mine = {preset.name.lower().replace("-", " "), values["fit_model"].replace("-", " ")}
        if not any(m in name or name in m for m in mine):
            out.append(f"The log loaded {str(model)[:120]!r}; the page sizes {preset.name}.")
    return out


def _llama_layers(values: dict[str, Any], config_text: str) -> int | None:
    """The page's model's layers as llama.cpp counts them (repeating layers + the output layer)."""
    from simulators import engines
    from simulators.engines.llamacpp import model_hparams

    config = _model_config(values["fit_model"], config_text)
    try:
        return model_hparams(config).n_layer + 1 if config else None
    except engines.EngineError:
        return None


def _sglang_rows(parsed: dict[str, Any], s: Any) -> list[dict]:
    rows = []
    for key, label in (
        ("baseline_bytes", "Free before the weights (Load weight begin)"),
        ("weights_bytes", "Weights (Load weight end, mem usage)"),
        ("kv_bytes", "KV cache (K + V, or the latent)"),
    ):
        if key in parsed:
            rows.append(_bytes_row(label, getattr(s, key), parsed[key], _WHY[key]))
    for key, label in (
        ("max_total_num_tokens", "max_total_num_tokens"),
        ("max_running_requests", "max_running_requests"),
        ("context_len", "context_len"),
    ):
        if key in parsed:
            unit = "tokens" if key != "max_running_requests" else "requests"
            rows.append(_count_row(label, getattr(s, key), parsed[key], _WHY[key], unit=unit))
    return rows


def _llamacpp_rows(parsed: dict[str, Any], s: Any) -> list[dict]:
    devices = {("CPU" if d.total_bytes is None else d.name): d for d in s.devices}

    def device(name: str) -> Any:
        return devices.get("CPU" if name.startswith("CPU") else name)

    rows = []
    for field, attr, label, why in (
        ("model_buffers", "model_bytes", "model buffer", _WHY["model"]),
        ("kv_buffers", "kv_bytes", "KV buffer", _WHY["kv"]),
        ("compute_buffers", "compute_bytes", "compute buffer", _WHY["compute"]),
    ):
        for name, logged in (parsed.get(field) or {}).items():
            d = device(name)
            predicted = getattr(d, attr) if d is not None else None
            if field == "compute_buffers" and d is not None and d.total_bytes is None:
                predicted = None  # the host's compute buffer is not modelled
            rows.append(
                _bytes_row(
                    f"{name} {label}", predicted, logged, why, 0.10 if field == "compute_buffers" else 0.01
                )
            )
    if "ollama_layers_offload" in parsed:
        rows.append(
            _count_row(
                "layers Ollama offloads",
                s.offloaded_layers,
                parsed["ollama_layers_offload"],
                "Ollama's own fit from its estimate of each layer's weights and cache",
                0,
                "layers",
            )
        )
    if "offloaded_layers" in parsed:
        rows.append(
            _count_row(
                "layers on the GPU",
                s.offloaded_layers,
                parsed["offloaded_layers"],
                _WHY["offloaded_layers"],
                0,
            )
        )
    if "n_ctx" in parsed:
        rows.append(_count_row("n_ctx", s.n_ctx, parsed["n_ctx"], _WHY["n_ctx"], 0, "cells"))
    return rows


def log_comparison_any(text: str, values: dict[str, Any], config_text: str = "") -> dict[str, Any]:
    """Any engine's pasted log: its engine and version, every memory figure it printed (GiB), what
    differs between its settings and the page's (said first), and the diff term by term against
    that engine's prediction for the page's settings. ``{"error": …}`` in words when unplaceable."""
    from simulators import engines

    try:
        parsed = engines.parse_log(text)
    except (engines.LogError, ValueError) as exc:
        return {"error": str(exc)}
    engine = parsed["engine"]
    figures = []
    for key, value in parsed.items():
        if isinstance(value, dict) and key not in ("type_counts", "metadata", "print_info"):
            for dev, b in value.items():
                if isinstance(b, (int, float)) and not isinstance(b, bool):
                    figures.append({"Figure": f"{key} · {dev}", "GiB": f"{b / 2**30:,.2f}"})
        elif key.endswith("_bytes") and isinstance(value, (int, float)):
            figures.append({"Figure": key, "GiB": f"{value / 2**30:,.2f}"})
    settings = log_settings(parsed)
    result: dict[str, Any] = {
        "error": "",
        "engine": engine,
        "engine_name": ENGINE_NAMES[engine],
        "version": parsed.get("version"),
        "parsed": parsed,
        "settings": settings,
        "mismatches": log_mismatches(parsed, values, config_text),
        "figures": arrow(figures),
        "rows": [],
        "predict_error": "",
    }
    page = {**values, "fit_engine": PAGE_ENGINE[engine]}
    config = _model_config(values["fit_model"], config_text)
    try:
        if engine == "vllm":
            out = engine_outcome(relevant(page), config_text)
            if out["error"]:
                raise engines.EngineError(out["error"])
            rows = []
            for r in engines.compare_with_log(out["startup"], parsed):
                if r["term"] in ("kv_tokens", "max_concurrency"):
                    unit = "tokens" if r["term"] == "kv_tokens" else "×"
                    row = _count_row(
                        r["term"].replace("_", " "), r["predicted"], r["measured"], r["why"], unit=unit
                    )
                    row["Agrees"] = "yes" if r["agrees"] else "no"
                else:
                    row = _bytes_row(
                        r["term"].removesuffix("_bytes").replace("_", " "),
                        r["predicted"],
                        r["measured"],
                        r["why"],
                    )
                    row["Agrees"] = "yes" if r["agrees"] else "no"
                rows.append(row)
        elif config is None:
            raise engines.EngineError("no config.json to predict from")
        elif engine == "sglang":
            rows = _sglang_rows(parsed, sglang_call(page, config))
        else:
            rows = _llamacpp_rows(parsed, llamacpp_call(page, config, PAGE_ENGINE[engine]))
    except (engines.EngineError, ValueError, KeyError) as exc:
        result["predict_error"] = str(exc)
        rows = []
    result["rows"] = rows
    result["table"] = arrow(rows)
    return result
