"""Will it fit? views: memory per GPU against capacity, and decode time: memory vs compute.

Everything the page shows for one setting is computed once by ``outcome`` (cached as plain data,
shared by every session), so a rerun with the same controls costs only drawing.
"""

from __future__ import annotations

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
ENGINE_KEYS = ("fit_engine", "fit_util", "fit_seqs", "fit_total", "fit_kernels")
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
        "title": f"{spec.name or 'Custom model'} on vLLM {engines.VLLM_VERSION},"
        f" {values['fit_gpus']} × {gpu.name}",
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
    fits = total <= capacity
    metrics = [
        {"label": "Prefill peak", "value": f"{total / 1e9:,.1f} GB", "help": _both(total)},
        {"label": "Cache after the prefill", "value": f"{cache / 1e9:,.2f} GB", "help": _both(cache)},
        {
            "label": "Fits?",
            "value": "Yes" if fits else "No",
            "delta": f"{(capacity - total) / 1e9:+,.1f} GB" + (" headroom" if fits else " short"),
            "delta_color": "green" if fits else "red",
            "delta_arrow": "off",
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
        "notes": list(memory.notes),
    }
