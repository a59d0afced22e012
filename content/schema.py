"""The controls of every simulator page, as data (see content/params.py).

One definition per control: the page draws its widget from it, the address and presets are
checked against it, and a lesson step that embeds the page's chart shows the same control. Option
lists come from the data files (catalog, model presets, formats), so adding a GPU to the catalog
adds it to every picker. Imports no Streamlit.
"""

from __future__ import annotations

import functools

from content.params import Param, ParamSet
from measure.samples import list_samples
from measure.suite import WORKLOADS
from simulators import fit, parallelism, roofline
from simulators import quantization as q
from simulators.hardware import get_accelerator, host_cpus, load_catalog, load_interconnects
from simulators.hierarchy import families
from simulators.llm_memory import (
    KV_FORMATS,
    LORA_MODULES,
    TRAINING_RECIPES,
    VLLM_DEFAULT_GPU_MEMORY_UTILIZATION,
    WEIGHT_FORMATS,
)
from simulators.llm_speed import DEFAULT_PREFILL_MFU
from simulators.presets import load_model_presets
from ui.config_source import LINK_CHARS, LINK_PATTERN, REPO_ID_PATTERN

CUSTOM_MODEL = "custom"

ZERO_STAGES = {"0": "0 (replicated)", "1": "1 (optimizer)", "2": "2 (+ gradients)", "3": "3 (+ parameters)"}
RECOMPUTE = {
    "auto": "The tool's default (QLoRA: full; otherwise none)",
    "none": "None",
    "selective": "Selective",
    "full": "Full (checkpoint every layer)",
}
ATTENTION = {"flash": "Fused (FlashAttention / SDPA)", "eager": "Eager (score matrix in memory)"}
TASKS = {"inference": "Inference", "full": "Full fine-tune", "lora": "LoRA", "qlora": "QLoRA"}
ROOFLINE_DTYPES = {
    "bf16": "BF16",
    "fp16": "FP16",
    "fp8": "FP8",
    "tf32": "TF32",
    "int8": "INT8",
    "fp32": "FP32 (vector)",
}
TENSOR_KINDS = {
    "gaussian": "Gaussian (weights)",
    "laplace": "Laplace (heavier tails)",
    "student_t": "Student-t, 3 d.o.f. (heavy tails)",
    "uniform": "Uniform",
    "weights_outlier_channels": "Weights with a few outlier rows",
    "activations_outlier_channels": "Activations with outlier channels (×60)",
}
TENSOR_SIZES = {"256x1024": "256 × 1,024", "1024x1024": "1,024 × 1,024", "1024x4096": "1,024 × 4,096"}
GRANULARITY = {"none": "None (cast)", "tensor": "Per tensor", "channel": "Per channel", "group": "Per group"}
QUANT_VIEWS = {
    "one-format": "One format",
    "all-formats": "All formats",
    "outliers": "Outlier channels",
    "matmul": "Matmul: W4A16 vs W8A8",
    "model-size": "Model size",
}
PAR_VIEWS = {
    "grid": "GPU grid",
    "memory": "Memory per GPU",
    "communication": "Communication and time",
    "pipeline": "Pipeline schedule",
}
PAR_COLOUR = {
    "pp": "Pipeline stage",
    "tp": "Tensor-parallel rank",
    "dp": "Data-parallel replica",
    "zero": "ZeRO shard",
    "role": "Same weights",
}
MH_VIEWS = {
    "ladder": "Latency and bandwidth",
    "transfer": "Moving N bytes",
    "littles": "Little's law",
    "placement": "Where does my model live?",
}
HW_SECTIONS = {
    "results": "Results",
    "browser": "In your browser",
    "detect": "This machine",
    "telemetry": "Live telemetry",
    "run": "Run workloads",
    "method": "How we measure",
}
ROOFLINE_BATCHES = tuple(2**k for k in range(13))
ROOFLINE_CONTEXTS = (0, 512, 1024, 2048, 4096, 8192, 32768)


ENGINE_LABELS = {
    "vllm": "vLLM",
    "sglang": "SGLang 0.5.23",
    "llamacpp": "llama.cpp (llama-server)",
    "ollama": "Ollama 0.15.5",
    "compare": "vLLM, SGLang and llama.cpp side by side",
    "transformers": "transformers",
    "ideal": "Idealised",
}
# llama.cpp's quantization presets (llama-quantize's names) and its KV-cache types
GGUF_QUANTS = (
    "Q4_K_M",
    "Q4_K_S",
    "Q5_K_M",
    "Q5_K_S",
    "Q6_K",
    "Q8_0",
    "IQ4_XS",
    "Q3_K_M",
    "Q2_K",
    "BF16",
    "F16",
)
LLAMACPP_KV = {"f16": "f16", "q8_0": "q8_0", "q4_0": "q4_0"}
VLLM_VERSIONS = {"0.19": "0.19–0.20", "0.21+": "0.21–0.29 (V1 model runner)"}


def _models() -> dict[str, str]:
    return {p.id: p.name for p in load_model_presets()}


def _choice(key: str, labels: dict, default, **kw) -> Param:
    return Param(key, "choice", default, options=tuple(labels), labels=labels, **kw)


def fit_gpus() -> dict[str, str]:
    """Accelerators the calculator can size: memory and bandwidth known."""
    return {a.id: a.name for a in load_catalog() if a.memory_bytes and a.memory_bandwidth_bytes_per_s}


def roofline_gpus() -> dict[str, str]:
    """Accelerators with a bandwidth and at least one sourced dense peak."""
    return {a.id: a.name for a in load_catalog() if a.memory_bandwidth_bytes_per_s and a.available_dtypes}


def parallelism_gpus() -> dict[str, str]:
    """GPUs with memory and a BF16 peak (training runs in BF16)."""
    return {a.id: a.name for a in load_catalog() if a.kind == "gpu" and a.memory_bytes and a.supports("bf16")}


def interconnects() -> tuple[dict[str, str], dict[str, str]]:
    """Links inside a node (NVLink, PCIe) and between nodes (InfiniBand, Ethernet)."""
    links = {i.id: i.name for i in load_interconnects()}
    intra = {k: v for k, v in links.items() if k.startswith(("nvlink-", "pcie-")) and k != "nvlink-c2c"}
    inter = {k: v for k, v in links.items() if k.startswith(("ib-", "eth-"))}
    return intra, inter


@functools.cache
def page_params() -> dict[str, ParamSet]:
    """url_path -> the page's controls. Built once per process (the data files are read once)."""
    models = _models()
    weight_labels = {k: f.label for k, f in WEIGHT_FORMATS.items()}
    kv_labels = {k: k.upper() for k in KV_FORMATS}
    intra, inter = interconnects()
    hierarchy_names = {f.id: f.name for f in families()}
    shipped = list_samples()
    samples = {s.name: s.label for s in shipped}
    default_sample = next((s.name for s in shipped if s.device_type == "cuda"), shipped[0].name)
    sets = [
        ParamSet(
            "will-it-fit",
            (
                _choice(
                    "fit_model", models | {CUSTOM_MODEL: "Custom config.json…"}, "llama-3-8b", title="Model"
                ),
                _choice("fit_task", TASKS, "inference", title="Task"),
                _choice("fit_gpu", fit_gpus(), "h100-sxm", title="GPU"),
                Param(
                    "fit_gpus",
                    "int",
                    1,
                    lo=1,
                    hi=1024,
                    title="GPUs",
                    help="Inference splits the model over them (tensor parallel); training replicates it "
                    "(data parallel) unless ZeRO shards it.",
                ),
                _choice(
                    "fit_wfmt",
                    weight_labels,
                    "bf16",
                    title="Weights",
                    help="Bytes per parameter of the weights. Quantized formats store the linear layers in "
                    "4 or 8 bits plus a 16-bit scale per group.",
                ),
                _choice(
                    "fit_kvfmt",
                    kv_labels,
                    "bf16",
                    title="KV cache",
                    help="Bytes per cached key/value element.",
                ),
                Param(
                    "fit_batch",
                    "int",
                    1,
                    lo=1,
                    hi=4096,
                    title="Batch",
                    help="Sequences decoded together: each has its own KV cache, all share the weights.",
                ),
                Param(
                    "fit_hf",
                    "text",
                    "",
                    hi=200,
                    pattern=REPO_ID_PATTERN,
                    title="Hugging Face model id",
                    help="An owner and a name, such as Qwen/Qwen3-32B: the app reads the model's config.json"
                    " from the Hub when this server can reach it.",
                ),
                # a pasted config.json, packed into the address so its view can be shared
                Param("fit_cfg", "text", "", hi=LINK_CHARS, pattern=LINK_PATTERN, title="Pasted config"),
                Param(
                    "fit_ctx",
                    "int",
                    8192,
                    lo=1,
                    hi=fit.CONTEXT_MAX,
                    step=1024,
                    title="Context (tokens)",
                    help="Prompt plus generated tokens held in the KV cache of each sequence: any whole"
                    " number (a log's max_model_len such as 40,960 included); the buttons step by 1,024.",
                ),
                _choice(
                    "fit_attn",
                    ATTENTION,
                    "flash",
                    title="Attention kernel",
                    help="Fused kernels ([FlashAttention](glossary?term=flash-attention), PyTorch SDPA) keep "
                    "the attention score matrix on chip; eager attention writes heads × tokens × tokens "
                    "scores to memory, one layer at a time.",
                ),
                _choice(
                    "fit_engine",
                    ENGINE_LABELS,
                    "vllm",
                    title="Engine",
                    help="vLLM: its start-up ledger, as its own code sizes it ([KV block pool]"
                    "(glossary?term=kv-block-pool), [max concurrency](glossary?term=max-concurrency)). "
                    "SGLang: its [static memory fraction](glossary?term=static-memory-fraction) and "
                    "[token pool](glossary?term=token-pool). llama.cpp and Ollama: a "
                    "[GGUF](glossary?term=gguf) file's buffers per device and "
                    "[layer offload](glossary?term=layer-offload). "
                    "transformers: the peak of one prefill as its code runs it. Idealised: weights, "
                    "KV cache, one layer's activations and a fixed overhead.",
                ),
                Param(
                    "fit_total",
                    "float",
                    0.0,
                    lo=0.0,
                    hi=1024.0,
                    step=0.01,
                    title="Memory the GPU reports (GiB; 0 = the catalog's reading)",
                    help="What the device itself reports, e.g. vLLM's 'total_memory=' line or "
                    "torch.cuda.mem_get_info()[1] ÷ 2³⁰; 0 takes the catalog's sourced reading (an H100 "
                    "80GB reports 79.18 GiB). The label on the box is more than the device reports.",
                ),
                Param(
                    "fit_kernels",
                    "bool",
                    False,
                    title="Fused linear-attention and Mamba kernels installed",
                    help="transformers runs Gated DeltaNet and Mamba-2 layers with flash-linear-attention "
                    "and mamba-ssm when they are installed, else with its own torch fallbacks, whose "
                    "chunked intermediates this page sizes.",
                ),
                Param(
                    "fit_quant",
                    "choice",
                    "Q4_K_M",
                    options=GGUF_QUANTS,
                    title="GGUF file (quantization)",
                    help="The [GGUF](glossary?term=gguf) preset llama-quantize wrote: each tensor in the type"
                    " its [k-quant](glossary?term=gguf) mix gives it (Q4_K_M: mostly q4_K, some q6_K).",
                ),
                Param(
                    "fit_ngl",
                    "int",
                    -1,
                    lo=-1,
                    hi=1024,
                    title="-ngl (layers on the GPU; -1 = all, then --fit)",
                    help="llama.cpp's --n-gpu-layers: the layers whose weights and cache go to the GPU; the"
                    " rest stay in host memory ([layer offload](glossary?term=layer-offload)). -1 is its"
                    " default: all of them, then --fit drops layers until 1 GiB stays free.",
                ),
                Param(
                    "fit_np",
                    "int",
                    1,
                    lo=1,
                    hi=256,
                    title="-np (parallel slots)",
                    help="llama-server's --parallel: the context (-c) is shared between this many slots,"
                    " each with its own stream of the KV cache.",
                ),
                _choice(
                    "fit_ctk",
                    LLAMACPP_KV,
                    "f16",
                    title="-ctk / -ctv (KV-cache type)",
                    help="llama.cpp's cache type for K and V; a quantized V needs flash attention (on here).",
                ),
                _choice(
                    "fit_host",
                    {h: get_accelerator(h).name for h in host_cpus()},
                    host_cpus()[0],
                    title="Host CPU (memory for the layers left on it)",
                    help="A partial offload reads the layers left on the CPU from the host's memory at"
                    " its bandwidth: a desktop's two DDR5 channels or a server socket's twelve.",
                ),
                Param(
                    "fit_ncmoe",
                    "int",
                    0,
                    lo=0,
                    hi=1024,
                    title="--n-cpu-moe (layers' experts on the CPU)",
                    help="A mixture-of-experts model: the expert tensors of the first N layers stay in host"
                    " memory ([expert offload](glossary?term=expert-offload)).",
                ),
                Param(
                    "fit_frac",
                    "float",
                    0.0,
                    lo=0.0,
                    hi=0.99,
                    step=0.001,
                    title="--mem-fraction-static (0 = SGLang's default)",
                    help="The share of the memory free before the weights that SGLang gives weights and"
                    " the token pool ([static memory fraction](glossary?term=static-memory-fraction));"
                    " 0 takes the default SGLang computes from the GPU's capacity.",
                ),
                Param(
                    "fit_users",
                    "int",
                    1,
                    lo=1,
                    hi=4096,
                    title="Users at once",
                    help="Requests served together, each up to the context: the command that fits sizes"
                    " each engine's flags for this many.",
                ),
                _choice(
                    "fit_vver",
                    VLLM_VERSIONS,
                    "0.19",
                    title="vLLM version",
                    help="0.19–0.20 capture CUDA graphs after sizing the KV cache, on top of the budget;"
                    " from 0.21 vLLM estimates the graphs' memory first and takes it out of the KV budget."
                    " From 0.27 a model on the V2 model runner is not modelled (refused with the reason).",
                ),
                Param(
                    "fit_pp",
                    "int",
                    1,
                    lo=1,
                    hi=64,
                    title="Pipeline stages (vLLM PP)",
                    help="--pipeline-parallel-size: the layers split into this many stages, each on its own"
                    " GPUs (the GPUs above are the tensor-parallel size of one stage).",
                ),
                Param(
                    "fit_mbt",
                    "int",
                    0,
                    lo=0,
                    hi=1_048_576,
                    title="max_num_batched_tokens (0 = vLLM's default)",
                    help="The most tokens one vLLM step processes; its profile run is a forward pass of"
                    " this many tokens, so it sets part of the activation peak.",
                ),
                Param(
                    "fit_eager",
                    "bool",
                    False,
                    title="--enforce-eager (no CUDA graphs)",
                    help="vLLM runs without capturing CUDA graphs: no graph memory, slower decode steps.",
                ),
                Param(
                    "fit_nochunk",
                    "bool",
                    False,
                    title="--no-enable-chunked-prefill",
                    help="A whole prompt runs in one step, so vLLM's default max_num_batched_tokens grows to"
                    " the context and its profile run (the activation peak) with it; a"
                    " max_num_batched_tokens set below the context is refused, as vLLM refuses it.",
                ),
                Param(
                    "fit_seqs",
                    "int",
                    0,
                    lo=0,
                    hi=65_536,
                    title="max_num_seqs (0 = vLLM's default)",
                    help="Requests vLLM schedules at once: any whole number, as a log prints it. Its profile"
                    " run warms the sampler up on this many, so it sets the activation peak"
                    " ([profile run](glossary?term=profile-run)).",
                ),
                Param(
                    "fit_util",
                    "float",
                    VLLM_DEFAULT_GPU_MEMORY_UTILIZATION,
                    lo=0.5,
                    hi=0.98,
                    step=0.01,
                    title="gpu_memory_utilization",
                    help="The share of the memory the GPU reports that vLLM takes at start-up for "
                    "weights, activations and the KV block pool ([gpu_memory_utilization]"
                    "(glossary?term=gpu-memory-utilization)).",
                ),
                Param(
                    "fit_mfu",
                    "float",
                    DEFAULT_PREFILL_MFU,
                    lo=0.05,
                    hi=1.0,
                    step=0.05,
                    title="Prefill efficiency (MFU)",
                    help="Model FLOPs utilization: the share of the GPU's peak FLOP/s a prefill actually "
                    "reaches. Sets the time to first token.",
                ),
                _choice(
                    "fit_recipe",
                    {k: r.label for k, r in TRAINING_RECIPES.items()},
                    "mixed-adam-16",
                    title="Training recipe",
                    help="Bytes per parameter for weights, gradients and optimizer states.",
                ),
                Param(
                    "fit_seq",
                    "choice",
                    2048,
                    options=tuple(fit.CONTEXT_STEPS[:9]),
                    title="Sequence length (tokens)",
                ),
                Param("fit_mb", "int", 1, lo=1, hi=512, title="Micro-batch per GPU"),
                _choice(
                    "fit_zero",
                    ZERO_STAGES,
                    "0",
                    title="ZeRO stage",
                    help="Shards optimizer states (1), gradients (2) and weights (3) over the data-parallel "
                    "GPUs.",
                ),
                _choice(
                    "fit_recompute",
                    RECOMPUTE,
                    "auto",
                    title="Activation recomputation",
                    help="Keep fewer activations for the backward pass and recompute them instead. The"
                    " tool's default is what the usual tool does unless told otherwise: PEFT's k-bit"
                    " (QLoRA) preparation turns gradient checkpointing on; full fine-tuning and LoRA"
                    " leave it off.",
                ),
                Param("fit_lora_rank", "int", 16, lo=1, hi=1024, title="LoRA rank r"),
                Param(
                    "fit_lora_mods",
                    "multi",
                    ("q_proj", "k_proj", "v_proj", "o_proj"),
                    options=tuple(LORA_MODULES),
                    title="LoRA target modules",
                    help="Which linear layers get adapters. PEFT's default for Llama is q_proj and v_proj.",
                ),
            ),
        ),
        ParamSet(
            "roofline",
            (
                Param(
                    "rf_gpus",
                    "multi",
                    ("h100-sxm", "a100-80gb-sxm"),
                    options=tuple(roofline_gpus()),
                    labels=roofline_gpus(),
                    max_selections=4,
                    title="Accelerators",
                ),
                _choice(
                    "rf_dtype",
                    ROOFLINE_DTYPES,
                    "bf16",
                    title="Precision",
                    help="The compute roof is the dense datasheet peak at this precision.",
                ),
                Param(
                    "rf_sets",
                    "multi",
                    ("matmul", "memory-bound"),
                    options=tuple(roofline.OPERATION_SETS),
                    labels=roofline.OPERATION_SETS,
                    title="Example operations",
                ),
                Param(
                    "rf_achievable",
                    "bool",
                    False,
                    title="Achievable roofs",
                    help="≈80% of the matmul peak and ≈90% of the bandwidth, as measured on real chips.",
                ),
                Param(
                    "rf_decode",
                    "bool",
                    True,
                    title="Decode step on the roofline",
                    help="One decode step of the whole model, at every batch size, on the first accelerator.",
                ),
                _choice("rf_model", models, "llama-3-8b", title="Model (decode step)"),
                Param(
                    "rf_batch",
                    "choice",
                    1,
                    options=ROOFLINE_BATCHES,
                    title="Batch",
                    help="Sequences decoding together: they share each weight read.",
                ),
                Param(
                    "rf_ctx",
                    "choice",
                    0,
                    options=ROOFLINE_CONTEXTS,
                    title="Context (tokens)",
                    help="Tokens already in each sequence's KV cache: read on every step, once per sequence.",
                ),
            ),
        ),
        ParamSet(
            "quantization",
            (
                _choice("q_view", QUANT_VIEWS, "one-format", title="View"),
                _choice("q_kind", TENSOR_KINDS, "gaussian", title="Tensor"),
                _choice("q_size", TENSOR_SIZES, "1024x1024", title="Shape"),
                Param("q_seed", "int", 0, lo=0, hi=10_000, title="Seed"),
                _choice(
                    "q_fmt",
                    {n: f"{n.upper().replace('_', ' ')} — {s.description}" for n, s in q.FORMATS.items()},
                    "int8",
                    title="Format",
                ),
                _choice(
                    "q_gran",
                    GRANULARITY,
                    "tensor",
                    title="Scale",
                    help="How many values share one scale: the whole tensor, a row (channel) or a group.",
                ),
                Param("q_group", "choice", 128, options=(16, 32, 64, 128, 256, 1024), title="Group size"),
                Param("q_sym", "bool", True, title="Symmetric (no zero point)"),
                Param(
                    "q_alpha",
                    "float",
                    0.5,
                    lo=0.0,
                    hi=1.0,
                    step=0.05,
                    title="SmoothQuant migration strength α",
                    help="How much of the activations' outlier scale moves into the weights "
                    "(0: none, 1: all).",
                ),
                _choice("q_model", models, "llama-3-8b", title="Model"),
            ),
        ),
        ParamSet(
            "parallelism",
            (
                _choice("par_view", PAR_VIEWS, "grid", title="View"),
                _choice("par_model", models, "llama-3-70b", title="Model"),
                _choice("par_gpu", parallelism_gpus(), "h100-sxm", title="GPU"),
                Param("par_nodes", "int", 8, lo=1, hi=256, title="Nodes"),
                Param("par_gpn", "int", 8, lo=1, hi=16, title="GPUs per node"),
                Param(
                    "par_tp",
                    "int",
                    8,
                    lo=1,
                    hi=1024,
                    title="Tensor parallel (TP)",
                    help="GPUs that split every matrix multiply of a layer.",
                ),
                Param(
                    "par_pp",
                    "int",
                    4,
                    lo=1,
                    hi=1024,
                    title="Pipeline parallel (PP)",
                    help="Stages: each holds a slice of the layers.",
                ),
                Param(
                    "par_dp",
                    "int",
                    2,
                    lo=1,
                    hi=4096,
                    title="Data parallel (DP)",
                    help="Replicas that each take a slice of the batch and average gradients.",
                ),
                _choice("par_zero", ZERO_STAGES, "1", title="ZeRO stage"),
                Param(
                    "par_m",
                    "int",
                    16,
                    lo=1,
                    hi=1024,
                    title="Micro-batches per step (m)",
                    help="More micro-batches shrink the pipeline bubble (p − 1)/(m + p − 1).",
                ),
                Param(
                    "par_seq",
                    "choice",
                    4096,
                    options=(512, 1024, 2048, 4096, 8192, 16384),
                    title="Sequence length (tokens)",
                ),
                _choice(
                    "par_recompute",
                    {k: v.split(" (")[0] for k, v in RECOMPUTE.items()},
                    "none",
                    title="Recomputation",
                ),
                _choice("par_schedule", {"1f1b": "1F1B", "gpipe": "GPipe"}, "1f1b", title="Schedule"),
                _choice("par_intra", intra, "nvlink-4", title="Link inside a node"),
                _choice(
                    "par_inter",
                    inter,
                    parallelism.DEFAULT_INTER_NODE_LINK,
                    title="Link between nodes (per GPU)",
                ),
                Param("par_sp", "bool", False, title="Sequence parallelism"),
                _choice(
                    "par_recipe",
                    {k: r.label for k, r in TRAINING_RECIPES.items()},
                    "mixed-adam-16",
                    title="Training recipe",
                ),
                Param(
                    "par_mfu",
                    "float",
                    parallelism.DEFAULT_MFU,
                    lo=0.1,
                    hi=0.8,
                    step=0.05,
                    title="MFU while computing",
                    help="Model FLOPs utilization: share of peak FLOP/s reached while computing.",
                ),
                Param(
                    "par_overlap",
                    "float",
                    0.0,
                    lo=0.0,
                    hi=1.0,
                    step=0.1,
                    title="DP traffic hidden behind backward",
                ),
                _choice("par_colour", PAR_COLOUR, "pp", title="Colour GPUs by", widget="segmented"),
            ),
        ),
        ParamSet(
            "memory-hierarchy",
            (
                _choice("mh_view", MH_VIEWS, "ladder", title="View"),
                _choice("mh_a", hierarchy_names, "h100-sxm", title="Hardware"),
                _choice("mh_b", {"none": "— nothing —"} | hierarchy_names, "rtx-4090", title="Compare with"),
                Param(
                    "mh_load",
                    "choice",
                    4,
                    options=(1, 2, 4, 8, 16),
                    title="Bytes each thread loads at once",
                    help="4 = one float32; 16 = a 128-bit vector load (float4).",
                ),
                _choice("mh_model", models, "llama-3-70b", title="Model"),
                _choice("mh_wfmt", weight_labels, "bf16", title="Weights"),
                _choice("mh_kvfmt", kv_labels, "bf16", title="KV cache"),
                Param(
                    "mh_ctx",
                    "choice",
                    8192,
                    options=tuple(2**k for k in range(10, 18)),
                    title="Context (tokens)",
                ),
            ),
        ),
        ParamSet(
            "your-hardware",
            (
                _choice("hw_section", HW_SECTIONS, "results", title="Section", widget="segmented"),
                _choice(
                    "hw_source",
                    {
                        "sample": "A sample shipped with the app",
                        "session": "Your own results (run or upload)",
                    },
                    "sample",
                    title="Results to show",
                    widget="radio",
                ),
                _choice("hw_sample", samples, default_sample, title="Sample"),
                Param("hw_quick", "bool", True, title="Quick (seconds)"),
                Param(
                    "hw_workloads",
                    "multi",
                    tuple(WORKLOADS),
                    options=tuple(WORKLOADS),
                    labels={w: w.replace("_", " ") for w in WORKLOADS},
                    title="Workloads",
                ),
            ),
        ),
    ]
    return {s.page: s for s in sets}


def params_for(page: str) -> ParamSet:
    """The controls of the page at ``page`` (its url_path); KeyError for a page without any."""
    return page_params()[page]
