"""Will it fit? views: memory per GPU against capacity, and decode time: memory vs compute.

Everything the page shows for one setting is computed once by ``outcome`` (cached as plain data,
shared by every session), so a rerun with the same controls costs only drawing.
"""

from __future__ import annotations

from typing import Any

import streamlit as st

from charts.memory import memory_bars
from content.schema import CUSTOM_MODEL
from simulators import fit
from simulators.llm_memory import ModelSpec
from simulators.model_config import MAX_CONFIG_BYTES
from ui.chart import show
from ui.views import View
from ui.views.common import arrow, as_spec, catalog, metric_row, models

PAGE = "will-it-fit"
INFERENCE_KEYS = ("fit_wfmt", "fit_kvfmt", "fit_batch", "fit_ctx", "fit_attn", "fit_mfu")
TRAINING_KEYS = ("fit_recipe", "fit_seq", "fit_mb", "fit_zero", "fit_recompute", "fit_attn")
LORA_KEYS = ("fit_lora_rank", "fit_lora_mods")
CONFIG_KEY = "fit_config_text"  # a pasted/uploaded config.json (session only, never in the address)


def relevant(values: dict[str, Any]) -> tuple[tuple[str, Any], ...]:
    """The controls that change the result for the chosen task, as a hashable cache key."""
    keys = ["fit_model", "fit_task", "fit_gpu", "fit_gpus"]
    if values["fit_task"] == "inference":
        keys += [*INFERENCE_KEYS, "fit_engine", "fit_util"]
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
    pool = fit.engine_pool(result, values["fit_util"]) if values.get("fit_engine") else None
    if pool is not None:
        out["pool"] = {
            "budget": pool.budget_bytes,
            "pool": pool.pool_bytes,
            "tokens": pool.pool_tokens,
            "fits": pool.fits,
        }
    out["chart"] = as_spec(
        memory_bars(
            [(f"{n} × {gpu.name}", memory)],
            capacity_bytes=gpu.memory_bytes,
            capacity_label=f"{gpu.name}: {gpu.memory_label}",
            budget_bytes=pool.budget_bytes if pool else None,
            budget_label=f"engine takes {values['fit_util']:.0%}" if pool else "",
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
    "cache-by-kind": View(
        PAGE,
        "cache-by-kind",
        "The cache against the context, by layer kind",
        ("fit_model", "fit_gpu", "fit_kvfmt", "fit_ctx"),
        render_cache_by_kind,
    ),
}
