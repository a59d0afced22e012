"""Will it fit, and how fast? Memory per GPU and speed bounds for any decoder-only model."""

from __future__ import annotations

import streamlit as st

from charts.memory import memory_bars
from content import load_page
from simulators import fit
from simulators.hardware import load_catalog
from simulators.llm_memory import (
    KV_FORMATS,
    LORA_MODULES,
    TRAINING_RECIPES,
    VLLM_DEFAULT_GPU_MEMORY_UTILIZATION,
    WEIGHT_FORMATS,
    ModelSpec,
)
from simulators.presets import load_model_presets
from ui.controls import (
    apply_preset_from_url,
    choice,
    format_bytes,
    multi_choice,
    notice,
    preset_buttons,
    prose,
)
from ui.measured import transformer_memory_rows

page = load_page("will_it_fit")
apply_preset_from_url(page, "fit_preset_applied")
st.title(page.meta["title"])
prose(page.body)
preset_buttons(page, columns=3)

presets = {p.id: p for p in load_model_presets()}
catalog = [a for a in load_catalog() if a.memory_bytes and a.memory_bandwidth_bytes_per_s]
gpus = {a.id: a for a in catalog}

TASKS = {"inference": "Inference", "full": "Full fine-tune", "lora": "LoRA", "qlora": "QLoRA"}
CUSTOM = "custom"

with st.container(border=True):
    c1, c2, c3, c4 = st.columns([3, 3, 3, 2])
    model_id = choice(
        "Model",
        {p.id: p.name for p in presets.values()} | {CUSTOM: "Custom config.json…"},
        key="fit_model",
        default="llama-3-8b" if "llama-3-8b" in presets else next(iter(presets)),
        container=c1,
    )
    task = choice("Task", TASKS, key="fit_task", default="inference", container=c2)
    gpu_id = choice(
        "GPU",
        {a.id: a.name for a in catalog},
        key="fit_gpu",
        default="h100-sxm" if "h100-sxm" in gpus else catalog[0].id,
        container=c3,
    )
    n_gpus = c4.number_input("GPUs", 1, 1024, 1, key="fit_gpus", bind="query-params")

    spec: ModelSpec | None = None
    if model_id == CUSTOM:
        with st.expander("Your config.json", expanded=True):
            prose(page.section("custom"))
            uploaded = st.file_uploader("Upload config.json", type=["json"], key="fit_upload")
            pasted = st.text_area("…or paste it here", key="fit_paste", height=160, max_chars=1_000_000)
            raw = uploaded.getvalue() if uploaded is not None else pasted
            if raw:
                spec, error = fit.read_custom_config(raw)
                if error:
                    st.error(f"That config cannot be read: {error}")
            else:
                st.info("Paste or upload a config to size it.")
    else:
        spec = presets[model_id].spec

    if task == "inference":
        i1, i2, i3, i4 = st.columns(4)
        weight_fmt = choice(
            "Weights",
            {k: f.label for k, f in WEIGHT_FORMATS.items()},
            key="fit_wfmt",
            default="bf16",
            container=i1,
        )
        kv_fmt = choice(
            "KV cache", {k: k.upper() for k in KV_FORMATS}, key="fit_kvfmt", default="bf16", container=i2
        )
        batch = i3.number_input("Batch (sequences)", 1, 4096, 1, key="fit_batch", bind="query-params")
        context = i4.select_slider(
            "Context (tokens per sequence)", fit.CONTEXT_STEPS, value=8192, key="fit_ctx", bind="query-params"
        )
        e1, e2 = st.columns([1, 2])
        engine = e1.toggle(
            "Serve with a vLLM-style engine",
            False,
            key="fit_engine",
            bind="query-params",
            help="The engine takes a fixed share of each GPU at start-up and fills the rest with KV blocks.",
        )
        utilization = e2.slider(
            "gpu_memory_utilization (share of each GPU the engine takes)",
            0.5,
            0.98,
            VLLM_DEFAULT_GPU_MEMORY_UTILIZATION,
            0.01,
            key="fit_util",
            bind="query-params",
            disabled=not engine,
        )
        mfu = st.slider(
            "Prefill MFU assumption",
            0.05,
            1.0,
            fit.DEFAULT_PREFILL_MFU,
            0.05,
            key="fit_mfu",
            bind="query-params",
            help="Fraction of peak FLOP/s a prefill reaches. Default from roofline.run's methodology (0.55).",
        )
    else:
        t1, t2, t3, t4 = st.columns(4)
        recipe = choice(
            "Training recipe",
            {k: r.label for k, r in TRAINING_RECIPES.items()},
            key="fit_recipe",
            default="mixed-adam-16",
            container=t1,
        )
        seq = t2.select_slider(
            "Sequence length", fit.CONTEXT_STEPS[:9], value=2048, key="fit_seq", bind="query-params"
        )
        micro_batch = t3.number_input("Micro-batch per GPU", 1, 512, 1, key="fit_mb", bind="query-params")
        zero = choice(
            "ZeRO stage",
            {"0": "0 (replicated)", "1": "1 (optimizer)", "2": "2 (+ gradients)", "3": "3 (+ parameters)"},
            key="fit_zero",
            default="0",
            container=t4,
        )
        r1, r2, r3 = st.columns(3)
        recompute = choice(
            "Activation recomputation",
            {"none": "None", "selective": "Selective", "full": "Full (checkpoint every layer)"},
            key="fit_recompute",
            default="none",
            container=r1,
        )
        flash = r2.toggle("FlashAttention", True, key="fit_flash", bind="query-params")
        lora_rank = 16
        lora_modules: list[str] = list(LORA_MODULES)
        if task in ("lora", "qlora"):
            lora_rank = r3.number_input("LoRA rank r", 1, 1024, 16, key="fit_lora_rank", bind="query-params")
            lora_modules = multi_choice(
                "LoRA target modules",
                {m: m for m in LORA_MODULES},
                key="fit_lora_mods",
                default=["q_proj", "k_proj", "v_proj", "o_proj"],
                help="Which linear layers get adapters. PEFT's default for Llama is q_proj and v_proj.",
            )
            if not lora_modules:
                st.warning("Choose at least one module to adapt.")
                st.stop()

if spec is None:
    st.stop()

gpu = gpus[gpu_id]
if task == "inference":
    result = fit.inference(
        spec, gpu, weight_fmt=weight_fmt, kv_fmt=kv_fmt, batch=batch, context=context, n_gpus=n_gpus, mfu=mfu
    )
else:
    result = fit.training(
        spec,
        gpu,
        task=task,
        recipe=recipe,
        seq=seq,
        micro_batch=micro_batch,
        n_gpus=n_gpus,
        zero_stage=int(zero),
        recompute=recompute,
        flash_attention=flash,
        lora_rank=lora_rank,
        lora_modules=lora_modules,
    )

st.subheader(f"{spec.name or 'Custom model'} on {n_gpus} × {gpu.name}", divider="gray")
m1, m2, m3, m4 = st.columns(4)
m1.metric(
    "Memory per GPU",
    f"{result.memory.total_bytes / 1e9:,.1f} GB",
    help=format_bytes(result.memory.total_bytes),
)
m2.metric("GPU capacity", f"{gpu.memory_bytes / 1e9:,.0f} GB", help=format_bytes(gpu.memory_bytes))
headroom = gpu.memory_bytes - result.memory.total_bytes
m3.metric(
    "Fits?",
    "Yes" if result.fits else "No",
    f"{headroom / 1e9:+,.1f} GB headroom",
    delta_color="normal" if result.fits else "inverse",
)
if result.speed_label:
    m4.metric(result.speed_label, result.speed_value, help=result.speed_help)

pool = fit.engine_pool(result, utilization) if task == "inference" and engine else None
st.plotly_chart(
    memory_bars(
        [(f"{n_gpus} × {gpu.name}", result.memory)],
        capacity_bytes=gpu.memory_bytes,
        capacity_label=f"{gpu.name}: {gpu.memory_bytes / 1e9:,.0f} GB",
        budget_bytes=pool.budget_bytes if pool else None,
        budget_label=f"engine takes {utilization:.0%}" if pool else "",
    ),
    key="fit_chart",
)
if pool is not None:
    p1, p2, p3 = st.columns(3)
    p1.metric("Engine takes", f"{pool.budget_bytes / 1e9:,.1f} GB", help=format_bytes(pool.budget_bytes))
    p2.metric(
        "KV-cache pool", f"{pool.pool_bytes / 1e9:,.1f} GB", help=f"{pool.pool_tokens:,} tokens of KV cache"
    )
    p3.metric(
        f"Sequences of {context:,} tokens at once",
        f"{pool.pool_tokens // max(context, 1):,}",
        "enough for this batch" if pool.fits else "not enough for this batch",
        delta_color="normal" if pool.fits else "inverse",
    )
    st.caption(
        "nvidia-smi shows the engine's whole share as used, whatever the batch: the pool is taken up front."
    )
if not result.fits:
    needed = result.gpus_needed
    st.warning(
        f"Does not fit: {format_bytes(result.memory.total_bytes)} per GPU "
        f"against {format_bytes(gpu.memory_bytes)}. "
        + (f"Splitting over {needed} × {gpu.name} would fit." if needed else "No number of these GPUs fits.")
    )
for line in result.memory.notes:
    st.info(line)

with st.expander("Where every byte goes", expanded=True):
    st.dataframe(fit.parts_table(result.memory), hide_index=True, width="stretch")
    prose(page.section("parts"))

if task == "inference":
    st.subheader("How fast?", divider="gray")
    st.dataframe(fit.speed_table(result), hide_index=True, width="stretch")
    prose(page.section("speed"))
    st.subheader("Inverse questions", divider="gray")
    q1, q2 = st.columns(2)
    with q1:
        longest = fit.longest_context(
            spec, gpu, weight_fmt=weight_fmt, kv_fmt=kv_fmt, batch=batch, n_gpus=n_gpus
        )
        st.metric(f"Longest context that fits on {n_gpus} × {gpu.name} at batch {batch}", longest)
    with q2:
        st.markdown(
            f"**Which weight format fits** on {n_gpus} × {gpu.name} at {context:,} tokens, batch {batch}:"
        )
        st.dataframe(
            fit.formats_table(spec, gpu, kv_fmt=kv_fmt, batch=batch, context=context, n_gpus=n_gpus),
            hide_index=True,
            width="stretch",
        )

st.subheader("Every accelerator in the catalog", divider="gray")
st.caption(
    f"Same settings on {n_gpus} device(s) of each kind. "
    "Memory is per device (dual-die boards count each die); "
    "speeds are upper bounds from datasheet bandwidth and the dense peak FLOP/s of the format shown "
    "(a chip without a sourced figure for it falls back to BF16, FP16 or FP32)."
)
st.dataframe(fit.catalog_table(result, catalog), hide_index=True, width="stretch")
measured_rows = transformer_memory_rows()
if measured_rows:
    with st.expander("Measured on your hardware: a small transformer step vs this model", expanded=True):
        st.dataframe(measured_rows, hide_index=True, width="stretch")
        st.caption(
            "From the results loaded on the Your hardware page; the prediction uses the same functions."
        )
notice(page.section("notice"))
