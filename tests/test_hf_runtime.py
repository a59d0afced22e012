"""transformers_prefill against transformers itself, run on the CPU, and against real GPU runs.

The CPU oracle (tests/hf_prefill_oracle.py) runs each architecture's own transformers 5.23 code
with small random bf16 configs and records every tensor storage the forward pass creates and frees:
its peak is what ``torch.cuda.max_memory_allocated()`` would add on a GPU, less what only a GPU
kernel allocates inside itself (the cuBLAS workspace, passed here as 0). On the pinned torch 2.13
CPU wheel the model and the oracle agree to the byte on the cache and on the pass's peak for every
case below; the weights differ only by the rotary ``inv_freq`` buffers, which ``weight_bytes``
does not count (a few hundred bytes). The assertions allow 0.1 % on the peak so that another CPU's
kernels do not fail them; the cache must be exact.
"""

import json
from pathlib import Path

import pytest

from simulators.fit import hf_sliding_window_prefill_extra_bytes, measured_prefill_memory
from simulators.hf_runtime import CUBLAS_WORKSPACE_SM90_BYTES, transformers_prefill
from simulators.llm_memory import ModelSpec, eager_score_bytes_per_element, kv_cache_bytes
from simulators.presets import get_model_preset

MEASURED = Path(__file__).resolve().parents[1] / "simulators" / "data" / "measured"

# (id, config, prompt tokens, batch, attention): the smallest configs whose peak falls where the
# family's memory differs from a dense model (windows, experts, eager scores, linear layers).
LLAMA = dict(
    model_type="llama", hidden_size=256, intermediate_size=768, num_hidden_layers=2, num_attention_heads=8,
    num_key_value_heads=2, vocab_size=1024,
)  # fmt: skip
QWEN3 = dict(
    model_type="qwen3", hidden_size=128, intermediate_size=384, num_hidden_layers=3, num_attention_heads=8,
    num_key_value_heads=2, head_dim=32, vocab_size=512,
)  # fmt: skip
MISTRAL = dict(
    model_type="mistral", hidden_size=128, intermediate_size=256, num_hidden_layers=2, num_attention_heads=8,
    num_key_value_heads=2, head_dim=32, vocab_size=512, sliding_window=128,
)  # fmt: skip
GEMMA2 = dict(
    model_type="gemma2", hidden_size=128, intermediate_size=256, num_hidden_layers=3, num_attention_heads=4,
    num_key_value_heads=2, head_dim=32, vocab_size=512, sliding_window=64,
)  # fmt: skip
GEMMA3 = dict(
    model_type="gemma3_text", hidden_size=128, intermediate_size=256, num_hidden_layers=3,
    num_attention_heads=4, num_key_value_heads=2, head_dim=32, vocab_size=512, sliding_window=64,
    sliding_window_pattern=2,
)  # fmt: skip
GEMMA4 = dict(
    model_type="gemma4_text", hidden_size=64, intermediate_size=128, num_hidden_layers=3,
    num_attention_heads=8, num_key_value_heads=2, head_dim=32, global_head_dim=288,
    num_global_key_value_heads=2,
    attention_k_eq_v=True, layer_types=["sliding_attention", "sliding_attention", "full_attention"],
    sliding_window=64, vocab_size=256, hidden_size_per_layer_input=0, num_kv_shared_layers=0,
    enable_moe_block=False,
)  # fmt: skip
LLAMA4 = dict(
    model_type="llama4_text", hidden_size=128, intermediate_size=96, intermediate_size_mlp=256,
    num_hidden_layers=4, num_attention_heads=4, num_key_value_heads=2, head_dim=32, vocab_size=512,
    attention_chunk_size=64, num_local_experts=4, num_experts_per_tok=1, interleave_moe_layer_step=2,
)  # fmt: skip
GPT_OSS = dict(
    model_type="gpt_oss", hidden_size=128, intermediate_size=96, num_hidden_layers=2, num_attention_heads=8,
    num_key_value_heads=2, head_dim=32, vocab_size=512, sliding_window=64, num_local_experts=4,
    num_experts_per_tok=2, layer_types=["sliding_attention", "full_attention"],
)  # fmt: skip
QWEN3_5 = dict(
    model_type="qwen3_5_text", hidden_size=128, intermediate_size=256, num_hidden_layers=4,
    num_attention_heads=4, num_key_value_heads=2, head_dim=64, vocab_size=512, linear_num_key_heads=2,
    linear_key_head_dim=32, linear_num_value_heads=4, linear_value_head_dim=32, linear_conv_kernel_dim=4,
    full_attention_interval=2,
)  # fmt: skip
QWEN3_NEXT = dict(
    model_type="qwen3_next", hidden_size=128, intermediate_size=256, moe_intermediate_size=64,
    shared_expert_intermediate_size=96, num_experts=4, num_experts_per_tok=2, num_hidden_layers=4,
    num_attention_heads=4, num_key_value_heads=2, head_dim=64, vocab_size=512, linear_num_key_heads=2,
    linear_key_head_dim=32, linear_num_value_heads=4, linear_value_head_dim=32, linear_conv_kernel_dim=4,
    full_attention_interval=2,
)  # fmt: skip
QWEN3_NEXT_WIDE_MOE = QWEN3_NEXT | dict(
    moe_intermediate_size=512, shared_expert_intermediate_size=384, num_experts=8, num_experts_per_tok=4,
    num_hidden_layers=2, num_attention_heads=2, num_key_value_heads=1, head_dim=32, linear_num_key_heads=1,
    linear_key_head_dim=16, linear_num_value_heads=1, linear_value_head_dim=16,
)  # fmt: skip
QWEN3_5_MOE = dict(
    model_type="qwen3_5_moe_text", hidden_size=128, moe_intermediate_size=64,
    shared_expert_intermediate_size=96, num_experts=4, num_experts_per_tok=2, num_hidden_layers=4,
    num_attention_heads=8, num_key_value_heads=2, head_dim=64, vocab_size=512, linear_num_key_heads=2,
    linear_key_head_dim=32, linear_num_value_heads=4, linear_value_head_dim=32, linear_conv_kernel_dim=4,
    full_attention_interval=2,
)  # fmt: skip
NEMOTRON_H = dict(
    model_type="nemotron_h", hidden_size=128, intermediate_size=256, num_attention_heads=4,
    num_key_value_heads=2, head_dim=32, vocab_size=512, mamba_num_heads=4, mamba_head_dim=16, n_groups=2,
    ssm_state_size=8, conv_kernel=4, chunk_size=32, hybrid_override_pattern="M*E-", n_routed_experts=4,
    num_experts_per_tok=2, moe_intermediate_size=64, moe_shared_expert_intermediate_size=96,
)  # fmt: skip
NEMOTRON_H_MOE = NEMOTRON_H | dict(
    hidden_size=64, mamba_num_heads=2, hybrid_override_pattern="*E", n_routed_experts=8,
    num_experts_per_tok=4, moe_intermediate_size=256, moe_shared_expert_intermediate_size=256,
)  # fmt: skip
QWEN2_MOE = dict(
    model_type="qwen2_moe", hidden_size=128, intermediate_size=256, moe_intermediate_size=64,
    shared_expert_intermediate_size=96, num_experts=8, num_experts_per_tok=2, num_hidden_layers=2,
    num_attention_heads=4, num_key_value_heads=2, vocab_size=512,
)  # fmt: skip
MIXTRAL = dict(
    model_type="mixtral", hidden_size=128, intermediate_size=128, num_local_experts=4, num_experts_per_tok=2,
    num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=2, vocab_size=512,
)  # fmt: skip
PHI3 = dict(
    model_type="phi3", hidden_size=128, intermediate_size=256, num_hidden_layers=2, num_attention_heads=4,
    num_key_value_heads=2, vocab_size=512, sliding_window=127, pad_token_id=0,
)  # fmt: skip

CASES = [
    ("llama-sdpa", LLAMA, 512, 1, "sdpa"),  # peak at the MLP of the last layer
    ("qwen3-sdpa-batch2", QWEN3, 384, 2, "sdpa"),
    ("qwen3-eager-batch2", QWEN3, 384, 2, "eager"),  # the fp32 softmax of one layer
    ("mistral-sliding-sdpa", MISTRAL, 384, 2, "sdpa"),  # whole-prompt K/V behind the window, masks
    ("gemma2-eager", GEMMA2, 192, 2, "eager"),
    ("gemma3-sliding-sdpa", GEMMA3, 192, 2, "sdpa"),
    ("gemma4-sdpa", GEMMA4, 256, 2, "sdpa"),  # 288-wide global heads: repeat_kv without a mask
    ("gemma4-eager", GEMMA4, 256, 1, "eager"),
    ("llama4-chunked-moe-sdpa", LLAMA4, 192, 2, "sdpa"),  # every token through every expert
    ("llama4-eager", LLAMA4, 192, 1, "eager"),  # bf16 softmax
    ("gpt-oss-eager", GPT_OSS, 256, 2, "eager"),  # attention sinks, bf16 softmax
    ("qwen3.5-linear", QWEN3_5, 200, 2, "sdpa"),  # torch_chunk_gated_delta_rule, padded chunks
    ("qwen3-next-linear-moe", QWEN3_NEXT, 200, 2, "sdpa"),
    ("qwen3-next-moe-peak", QWEN3_NEXT_WIDE_MOE, 128, 1, "sdpa"),  # shared expert, then routed ones
    ("qwen3.5-moe-eager", QWEN3_5_MOE, 256, 1, "eager"),
    ("nemotron-h-mamba2", NEMOTRON_H, 100, 1, "sdpa"),  # mamba2_chunk_scan's intermediates
    ("nemotron-h-eager", NEMOTRON_H, 128, 2, "eager"),
    ("nemotron-h-moe", NEMOTRON_H_MOE, 128, 1, "sdpa"),  # fp32-weighted ReLU² experts
    ("qwen2-moe", QWEN2_MOE, 200, 2, "sdpa"),  # shared expert; an unused sliding mask
    ("mixtral", MIXTRAL, 200, 1, "sdpa"),  # fp32 routing weights
    ("phi3-sliding-eager", PHI3, 200, 2, "eager"),
]


def _predict(config: dict, tokens: int, batch: int, attention: str, **kwargs):
    spec = ModelSpec.from_hf_config(config)
    return transformers_prefill(
        spec,
        context_tokens=tokens,
        batch=batch,
        attention=attention,
        kernels=False,
        config=config,
        cublas_workspace_bytes=0,
        **kwargs,
    )


# -- the oracle itself -------------------------------------------------------------------------


def test_the_oracle_counts_a_storage_once_frees_it_with_its_last_view_and_sees_the_softmax_copy():
    """Known allocations: 100 × 256 fp32 inputs (102,400 B), a matmul output (102,400 B) kept
    alive by a 10-element view, and softmax(dtype=fp64), which first copies its input to fp64
    (204,800 B) then writes an fp64 output (204,800 B): peak 614,400 B, and 0 B once all go."""
    torch = pytest.importorskip("torch")
    from tests.hf_prefill_oracle import existing_storage_ids, live_tensor_bytes

    w = torch.randn(256, 256)
    with live_tensor_bytes(existing_storage_ids()) as mode:
        x = torch.randn(100, 256)
        y = x @ w
        view = y.view(-1)[:10]
        del y
        probs = torch.softmax(x, -1, dtype=torch.float64)
        del probs, x
        left_with_the_view = mode.current_bytes
        del view
    assert (mode.peak_bytes, left_with_the_view, mode.current_bytes) == (614_400, 102_400, 0)


# -- the model against the oracle --------------------------------------------------------------


@pytest.mark.parametrize(("case", "config", "tokens", "batch", "attention"), CASES, ids=[c[0] for c in CASES])
def test_prefill_peak_and_cache_match_transformers_on_the_cpu(case, config, tokens, batch, attention):
    pytest.importorskip("torch")
    pytest.importorskip("transformers")
    from tests.hf_prefill_oracle import prefill

    measured = prefill(config, tokens, batch=batch, attention=attention)
    predicted = _predict(config, tokens, batch, attention)
    pass_peak = predicted.total_bytes - predicted.get("weights")
    assert predicted.get("cache") == measured.cache_bytes
    assert pass_peak == pytest.approx(measured.pass_peak_bytes, rel=1e-3)
    assert predicted.total_bytes == pytest.approx(measured.peak_bytes, rel=1e-3)


# -- real GPU runs -----------------------------------------------------------------------------

# shared/measured/h200-transformers-calibration.jsonl: one H200, transformers 5.23, torch 2.11+cu130,
# random bf16 weights, one forward of context − 32 tokens with use_cache=True, logits_to_keep=1; the
# configs are the presets' (qwen3-8b, qwen3.5-27b). Qwen 3.5 ran without flash-linear-attention.
H200_CALIBRATION = [
    ("qwen3-8b", "sdpa", False, 8160, 18_501_449_216, 1_203_240_960),
    ("qwen3-8b", "eager", False, 8160, 39_469_364_736, 1_203_240_960),
    ("qwen3.5-27b", "sdpa", False, 8160, 57_342_939_648, 689_700_864),
]


@pytest.mark.parametrize(
    ("preset", "attention", "kernels", "tokens", "peak", "cache"),
    H200_CALIBRATION,
    ids=[f"{r[0]}-{r[1]}" for r in H200_CALIBRATION],
)
def test_h200_calibration_runs_within_half_a_percent_and_their_cache_exact(
    preset, attention, kernels, tokens, peak, cache
):
    """Predicted / measured: Qwen3-8B SDPA 0.9995, eager 0.9999, Qwen 3.5 27B (torch fallbacks)
    0.9998; the cache to the byte in all three."""
    spec = get_model_preset(preset).spec
    predicted = transformers_prefill(spec, context_tokens=tokens, attention=attention, kernels=kernels)
    assert predicted.get("cache") == cache
    assert predicted.total_bytes == pytest.approx(peak, rel=0.005)


def _h100_runs() -> list[dict]:
    runs = []
    for name in ("h100-hf-models-vs-fit.json", "h100-eager-vs-flash-llama-3.2-3b.json"):
        runs += json.loads((MEASURED / name).read_text(encoding="utf-8"))
    return runs


@pytest.mark.parametrize(
    "run", _h100_runs(), ids=lambda r: f"{r['preset']}-{r['context']}-{r.get('attn', 'default')}"
)
def test_h100_runs_within_half_a_percent(run):
    """simulators/data/measured (one H100, transformers 5.17): every run but Gemma-2-2B, whose
    default attention 5.17 ran as SDPA and 5.23 refuses (Gemma2PreTrainedModel._supports_sdpa =
    False), lands within 0.35 %: Phi-3-mini +0.32 %, Mistral-7B's sliding window +0.14 %."""
    spec = get_model_preset(run["preset"]).spec
    attention = "eager" if run.get("attn") == "eager" else "sdpa"
    if spec.family == "gemma2":
        with pytest.raises(ValueError, match="_supports_sdpa"):
            transformers_prefill(spec, context_tokens=run["context"] - 32, attention=attention)
        return
    predicted = transformers_prefill(spec, context_tokens=run["context"] - 32, attention=attention)
    assert predicted.total_bytes == pytest.approx(run["prefill_peak_meas"], rel=0.005)


def _llama4_scout_layers(layers: int) -> tuple[ModelSpec, dict]:
    config = json.loads(json.dumps(get_model_preset("llama-4-scout-17b-16e").config))
    config["text_config"]["num_hidden_layers"] = layers
    return ModelSpec.from_hf_config(config), config


@pytest.mark.parametrize(("tokens", "ratio"), [(8160, 1.24), (16352, 1.48)])
def test_llama4_scout_runs_every_expert_on_every_token(tokens, ratio):
    """The issue's H200 runs of Llama 4 Scout with 8 of its layers peaked 1.24× (8k context) and
    1.48× (16k) the engine-agnostic estimate: ``Llama4TextMoe`` repeats every token for each of
    the 16 experts (predicted 1.240 and 1.482)."""
    spec, config = _llama4_scout_layers(8)
    predicted = transformers_prefill(spec, context_tokens=tokens, config=config)
    assert predicted.total_bytes / measured_prefill_memory(spec, tokens).total_bytes == pytest.approx(
        ratio, abs=0.01
    )


def test_gpt_oss_20b_eager_softmax_stays_in_bf16():
    """The issue's run: gpt-oss-20b under eager attention peaked at 0.80× the eager estimate, which
    upcasts the softmax to fp32; gpt-oss's sink softmax keeps bf16 (predicted 0.803×)."""
    spec = get_model_preset("gpt-oss-20b").spec
    predicted = transformers_prefill(spec, context_tokens=8160, attention="eager")
    eager = measured_prefill_memory(spec, 8160, "eager").total_bytes
    assert predicted.total_bytes / eager == pytest.approx(0.80, abs=0.01)


def test_gemma4_31b_sliding_layers_keep_the_whole_prompt():
    """The issue's run: Gemma 4 31B at a 32k context peaked at 99.6 GB with 29.5 GB in its cache,
    where the window needs 3.5 GB. Predicted for the text model: 98.3 GB and 29.50 GB (the 50
    sliding layers hold all 32,736 prompt tokens behind their 1,024-token view). The preset's
    config builds Gemma4ForConditionalGeneration, whose vision tower adds 0.576 B parameters
    (1.15 GB) that ModelSpec, a text model, does not count: 99.4 GB with them."""
    spec = get_model_preset("gemma-4-31b-it").spec
    predicted = transformers_prefill(spec, context_tokens=32736)
    assert predicted.get("cache") / 1e9 == pytest.approx(29.5, abs=0.05)
    assert predicted.total_bytes / 1e9 == pytest.approx(99.6, rel=0.02)


# -- the layer over llm_memory -----------------------------------------------------------------


def test_a_dense_sdpa_prefill_is_the_engine_agnostic_estimate_plus_the_cublas_workspace():
    """Llama-3.1-8B at 8,160 tokens: transformers' peak is within 0.5 % of
    ``measured_prefill_memory``, the weights are the same part, the cache the same bytes."""
    spec = get_model_preset("llama-3.1-8b").spec
    predicted = transformers_prefill(spec, context_tokens=8160)
    baseline = measured_prefill_memory(spec, 8160)
    assert predicted.get("weights") == baseline.get("weights")
    assert predicted.get("cache") == baseline.get("kv_cache")
    assert predicted.get("cublas_workspace") == CUBLAS_WORKSPACE_SM90_BYTES
    assert predicted.total_bytes == pytest.approx(baseline.total_bytes, rel=0.005)


def test_the_sliding_window_cache_is_fits_extra_bytes_less_the_mask():
    """Mistral-7B at 8,160 tokens (window 4,096): the cache beyond ``kv_cache_bytes`` is
    ``hf_sliding_window_prefill_extra_bytes`` less its T × T mask term, plus each layer's 8-byte
    ``_sliding_window_tensor``."""
    spec = get_model_preset("mistral-7b-v0.1").spec
    extra = hf_sliding_window_prefill_extra_bytes(spec, 8160) - 8160 * 8160
    cache = transformers_prefill(spec, context_tokens=8160).get("cache")
    assert cache - kv_cache_bytes(spec, 8160) == extra + 8 * spec.num_layers


def test_eager_fp32_softmax_holds_llm_memorys_bytes_per_score():
    """One Qwen3-8B layer's eager moment at 8,160 tokens holds 32 heads × 8,160² scores at
    ``eager_score_bytes_per_element`` = 10 bytes (bf16 input, fp32 copy, fp32 output)."""
    spec = get_model_preset("qwen3-8b").spec
    predicted = transformers_prefill(spec, context_tokens=8160, attention="eager")
    assert predicted.get("attention_scores") == 32 * 8160**2 * eager_score_bytes_per_element(2)


# -- refusals ----------------------------------------------------------------------------------


def test_unmodelled_family_is_refused_naming_the_field():
    spec = get_model_preset("deepseek-v3").spec
    with pytest.raises(ValueError, match="model_type"):
        transformers_prefill(spec, context_tokens=1024)


@pytest.mark.parametrize("preset", ["gpt-oss-20b", "gemma-2-2b-it"])
def test_sdpa_is_refused_where_transformers_refuses_it(preset):
    with pytest.raises(ValueError, match="_supports_sdpa = False"):
        transformers_prefill(get_model_preset(preset).spec, context_tokens=1024)


@pytest.mark.parametrize("preset", ["qwen3.5-27b", "nemotron-3-nano-30b-a3b"])
def test_fused_linear_attention_and_mamba_kernels_are_refused(preset):
    """flash-linear-attention's and mamba-ssm's buffers are outside transformers' code."""
    with pytest.raises(ValueError, match="kernels=False"):
        transformers_prefill(get_model_preset(preset).spec, context_tokens=1024)


def test_linear_attention_shapes_need_the_config():
    """ModelSpec keeps no field for Gated DeltaNet's heads: a spec that is no preset needs config=."""
    config = dict(QWEN3_5, hidden_size=256)
    spec = ModelSpec.from_hf_config(config)
    with pytest.raises(ValueError, match="linear_num_key_heads"):
        transformers_prefill(spec, context_tokens=128, kernels=False)
    assert transformers_prefill(spec, context_tokens=128, kernels=False, config=config).total_bytes > 0


@pytest.mark.parametrize(("field", "value"), [("attention", "flash"), ("context_tokens", 0), ("batch", True)])
def test_bad_settings_are_refused(field, value):
    kwargs = {"context_tokens": 128, field: value}
    with pytest.raises(ValueError, match=field):
        transformers_prefill(get_model_preset("qwen3-8b").spec, **kwargs)


# ---------------------------------------------------------------------------------------------
# The verdict (issue 30, Build item 2): the allocated peak plus the measured terms beyond it
# ---------------------------------------------------------------------------------------------


def test_outside_allocator_readings_are_the_messages_arithmetic():
    """Each reading is PyTorch's own out-of-memory message: non-PyTorch memory is what the process
    holds less what PyTorch allocated and reserved; the readings come from at least two machines."""
    from simulators.hf_runtime import outside_allocator_readings

    readings = {r.id: r for r in outside_allocator_readings()}
    assert len({r.source for r in readings.values()}) >= 2
    tgi = readings["tgi-1356-h100"]
    assert tgi.non_pytorch_bytes == pytest.approx((79.08 - 78.11) * 2**30 - 131.85 * 2**20)
    assert tgi.slack_bytes == pytest.approx(131.85 * 2**20)


def _h200_peak(preset: str, context: int, attention: str) -> float:
    p = get_model_preset(preset)
    memory = transformers_prefill(p.spec, context_tokens=context, attention=attention, config=p.config)
    return memory.total_bytes


def test_gpt_oss_20b_at_16k_on_an_h200_is_tight_not_a_fit():
    """Issue 30: gpt-oss-20b at 16k on an H200 ran out of memory with an allocated peak inside the
    139.80 GiB the device reports; with the measured non-PyTorch memory and allocator slack the
    verdict is "tight", the range straddling the device. A 1B model at 4k plainly fits."""
    from simulators import engines
    from simulators.hf_runtime import transformers_verdict

    h200 = engines.reported_memory_bytes("h200-sxm")
    peak = _h200_peak("gpt-oss-20b", 16384, "eager")
    v = transformers_verdict(peak, h200, "what the H200 reports")
    assert peak < h200  # the allocated peak alone would have said "fits"
    assert v.verdict == "tight" and v.low_bytes <= h200 < v.high_bytes
    assert v.message.startswith("Tight") and "GiB (what the H200 reports)" in v.message
    small = transformers_verdict(_h200_peak("llama-3.2-1b", 4096, "sdpa"), h200)
    assert small.verdict == "fits" and small.high_bytes < h200
    assert transformers_verdict(h200 * 1.01, h200).verdict == "does not fit"
