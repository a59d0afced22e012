"""The roofline model (simulators/roofline.py) and its charts (charts/roofline.py).

Expected values are the worked points of /work/shared/reference/simulator-anchors.md ("SA"),
§1.2 (ridge points) and §1.3 (intensity formulas and worked points), which cite the scaling book
(jax-ml/scaling-book ``roofline.md`` and ``inference.md``) and Williams et al. 2009.
"""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from charts.roofline import decode_batch_figure, roofline_figure
from simulators.hardware import get_accelerator
from simulators.presets import get_model_preset
from simulators.roofline import (
    L2_READ_BANDWIDTH,
    ComputeRoof,
    MeasuredPoint,
    MemoryRoof,
    Operation,
    achievable_roofs,
    attainable_flops,
    attention,
    decode_crossover_batch,
    decode_intensity_limit,
    decode_step_op,
    elementwise,
    gemm,
    gemv,
    layernorm,
    linear,
    predict,
    prefill_op,
    reference_operations,
    ridge_point,
    rmsnorm,
    roofs,
    softmax,
    weight_only_gemv,
    weights_only_crossover_batch,
)

H100 = get_accelerator("h100-sxm")
A100 = get_accelerator("a100-80gb-sxm")
TPU_V5E = get_accelerator("tpu-v5e")
LLAMA_3_8B = get_model_preset("llama-3-8b").spec


def _h100_bf16_ridge() -> float:
    return ridge_point(H100.peak_flops("bf16"), H100.memory_bandwidth_bytes_per_s)


# ---------------------------------------------------------------- ridge points (SA §1.2)


def test_h100_sxm_bf16_ridge_point_is_295_flop_per_byte() -> None:
    """H100 SXM: 989.5 dense bf16 TFLOP/s / 3.35 TB/s = 295 FLOP/byte (SA §1.2)."""
    assert round(_h100_bf16_ridge()) == 295


def test_a100_80gb_bf16_ridge_point_is_153_flop_per_byte() -> None:
    """A100 80GB SXM: 312 TFLOP/s / 2.039 TB/s = 153 FLOP/byte (SA §1.2)."""
    assert round(ridge_point(A100.peak_flops("bf16"), A100.memory_bandwidth_bytes_per_s)) == 153


def test_h100_sxm_fp8_ridge_point_is_591_flop_per_byte() -> None:
    """H100 SXM fp8: 1,979 dense TFLOP/s / 3.35 TB/s = 591 (SA §1.2; Manning's "ridge ~590")."""
    assert round(ridge_point(H100.peak_flops("fp8"), H100.memory_bandwidth_bytes_per_s)) == 591


def test_h100_vector_fp32_ridge_point_is_20_flop_per_byte() -> None:
    """The second compute roof: H100 vector FP32 67 TFLOP/s / 3.35 TB/s = 20 FLOP/byte (SA §1.2)."""
    assert round(ridge_point(H100.peak_flops("fp32"), H100.memory_bandwidth_bytes_per_s)) == 20


def test_achievable_h100_ridge_is_about_264() -> None:
    """SA §3.2: realistic roofs (80% MAMF, 90% bandwidth) move the H100 ridge to about 264 FLOP/byte."""
    found = achievable_roofs(H100, "bf16")
    peak = next(r.peak_flops for r in found if isinstance(r, ComputeRoof))
    bandwidth = next(r.bandwidth_bytes_per_s for r in found if isinstance(r, MemoryRoof))
    assert peak / bandwidth == pytest.approx(264, rel=0.01)


# ---------------------------------------------------------------- roofs


def test_h100_roofs_are_tensor_vector_and_hbm_without_l2() -> None:
    """Two compute roofs (tensor bf16, vector FP32) and HBM; no sourced L2 bandwidth for H100 SXM."""
    kinds = [(type(r).__name__, getattr(r, "unit", getattr(r, "level", ""))) for r in roofs(H100, "bf16")]
    assert kinds == [("ComputeRoof", "tensor"), ("ComputeRoof", "vector"), ("MemoryRoof", "device")]


def test_tensor_roof_label_names_chip_precision_and_dense_tflops() -> None:
    """The brief's label: "H100 SXM ... bf16 tensor 989.5 TFLOP/s" (dense, from the catalog)."""
    assert roofs(H100, "bf16")[0].label == "H100 SXM (80GB) bf16 tensor 989.5 TFLOP/s"


def test_a100_80gb_has_a_measured_l2_roof_above_its_hbm_roof() -> None:
    """gpu-benches gpu-l2-cache a100_80.txt: about 5.4 TB/s L2 reads vs 2.04 TB/s HBM2e."""
    l2 = [r for r in roofs(A100, "bf16") if isinstance(r, MemoryRoof) and r.level == "l2"]
    assert len(l2) == 1 and l2[0].bandwidth_bytes_per_s > 2.5 * A100.memory_bandwidth_bytes_per_s


def test_every_l2_measurement_cites_an_https_source() -> None:
    """No L2 bandwidth without a source: every entry links the data file it was read from."""
    assert all(m.source.startswith("https://github.com/") for m in L2_READ_BANDWIDTH.values())


def test_a100_has_no_fp8_tensor_roof() -> None:
    """A100 has no fp8 in hardware (catalog): only the vector roof and memory roofs remain."""
    assert not any(isinstance(r, ComputeRoof) and r.unit == "tensor" for r in roofs(A100, "fp8"))


# ---------------------------------------------------------------- GEMM and Linear (SA §1.3)


def test_gemm_intensity_formula_mnk_over_sum_of_matrix_sizes() -> None:
    """Scaling book roofline.md: a bf16 GEMM's intensity is MNK / (MK + KN + MN)."""
    m, n, k = 512, 1024, 2048
    assert gemm(m, n, k).intensity == pytest.approx(m * n * k / (m * k + k * n + m * n))


def test_gemm_4096_cubed_is_1365_flop_per_byte_and_compute_bound_on_h100() -> None:
    """SA §1.3: square n gives n/3; 4096^3 -> 1365 FLOP/byte, compute-bound at 989 TFLOP/s."""
    op = gemm(4096, 4096, 4096)
    assert round(op.intensity) == 1365 and predict(op, H100).bound == "compute"


@pytest.mark.parametrize(("n", "h100_tflops"), [(256, 286), (512, 572), (1024, 989)])
def test_small_gemms_attainable_on_h100(n: int, h100_tflops: int) -> None:
    """SA §1.3 worked points: GEMM 256^3 / 512^3 / 1024^3 reach 286 / 572 / 989 TFLOP/s on H100."""
    assert predict(gemm(n, n, n), H100).attainable_flops / 1e12 == pytest.approx(h100_tflops, abs=1)


@pytest.mark.parametrize(("tokens", "intensity"), [(1, 1.0), (8, 8.0), (64, 62), (256, 228), (1024, 683)])
def test_linear_4096_intensity_is_about_the_token_batch(tokens: int, intensity: float) -> None:
    """SA §1.3 (scaling book): Linear 4096x4096 at B = 1/8/64/256/1024 -> 1.0/8.0/62/228/683."""
    assert linear(tokens, 4096, 4096).intensity == pytest.approx(intensity, abs=0.05 if tokens <= 8 else 0.5)


def test_gemv_is_about_one_flop_per_byte_in_bf16() -> None:
    """SA §1.3: GEMV (decode, B=1) reads 2MK bytes for 2MK FLOPs: about 1 FLOP/byte."""
    assert gemv(4096, 4096).intensity == pytest.approx(1.0, rel=0.01)


def test_int8_weight_only_gemv_is_about_two_flop_per_byte() -> None:
    """SA §1.3 / scaling book: int8 weights halve the bytes, so the GEMV intensity is about 2."""
    assert weight_only_gemv(4096, 4096, weight_bits=8).intensity == pytest.approx(2.0, rel=0.03)


def test_int4_weight_only_gemv_is_about_four_flop_per_byte() -> None:
    """SA §1.3: int4 weights give about 4 FLOP/byte (a little less: 16-bit scale per 128 weights)."""
    assert weight_only_gemv(4096, 4096, weight_bits=4).intensity == pytest.approx(4.0, rel=0.05)


def test_int8_weight_only_linear_halves_the_critical_batch_on_tpu_v5e() -> None:
    """Scaling book, roofline chapter (SA §1.3): B_crit is 240 on TPU v5e in bf16 and about 120
    with int8 weights. The book neglects activation bytes; a 65536-wide layer makes them small."""
    ridge = TPU_V5E.ridge_point("bf16")
    width = 65536

    def b_crit(bits: int) -> int:
        return next(
            t
            for t in range(1, 1000)
            if weight_only_gemv(width, width, bits, tokens=t, scale_bits=0).intensity >= ridge
        )

    bf16 = next(t for t in range(1, 1000) if linear(t, width, width).intensity >= ridge)
    assert (bf16, b_crit(8)) == (pytest.approx(240, rel=0.03), pytest.approx(120, rel=0.03))


# ---------------------------------------------------------------- vector-unit ops (SA §1.3)


def test_elementwise_add_is_0_167_flop_per_byte_in_bf16() -> None:
    """SA §1.3: a + b reads 2 and writes 1 element: 1 FLOP / 6 bytes = 0.167."""
    assert round(elementwise(1 << 20, 1, inputs=2, outputs=1).intensity, 3) == 0.167


def test_elementwise_add_is_0_083_flop_per_byte_in_fp32() -> None:
    """SA §1.3: the same add in fp32 moves 12 bytes per FLOP: 0.083."""
    assert round(elementwise(1 << 20, 1, 2, 1, dtype="fp32").intensity, 3) == 0.083


def test_relu_is_0_25_flop_per_byte() -> None:
    """SA §1.3 (NVIDIA's performance guide table): ReLU, 1 FLOP over 4 bytes in fp16/bf16 = 0.25."""
    assert elementwise(1 << 20, 1, inputs=1, outputs=1).intensity == pytest.approx(0.25)


def test_fused_rmsnorm_is_about_one_flop_per_byte() -> None:
    """SA §1.3: fused RMSNorm, about 4 FLOP per element over 4 bytes: about 1."""
    assert rmsnorm(4096, 4096, fused=True).intensity == pytest.approx(1.0, rel=0.02)


def test_fused_layernorm_is_about_two_flop_per_byte() -> None:
    """SA §1.3: fused LayerNorm "about 2" (NVIDIA: "< 10"); 7 FLOP per element over 4 bytes."""
    assert round(layernorm(4096, 4096, fused=True).intensity) == 2


def test_fused_softmax_is_1_25_flop_per_byte() -> None:
    """SA §1.3: fused row softmax, about 5 FLOP per element over 4 bytes = 1.25."""
    assert softmax(4096, 4096, fused=True).intensity == pytest.approx(1.25)


def test_unfused_rmsnorm_moves_three_and_a_half_times_the_bytes_of_fused() -> None:
    """Unfused (one HBM round trip per primitive: pow, mean, mul, mul weight) reads and writes
    about 7 N elements where the fused kernel moves 2 N: 3.5x the bytes."""
    ratio = rmsnorm(4096, 4096, fused=False).bytes / rmsnorm(4096, 4096, fused=True).bytes
    assert ratio == pytest.approx(3.5, rel=0.01)


def test_elementwise_ops_are_held_to_the_vector_roof() -> None:
    """SA §0: elementwise work runs on CUDA cores: its compute roof is vector FP32 (67 TF on H100)."""
    assert predict(elementwise(1 << 20, 100, 1, 1), H100).peak_flops == H100.peak_flops("fp32")


# ---------------------------------------------------------------- attention (SA §1.3)


def test_flash_attention_prefill_4096_is_2048_flop_per_byte() -> None:
    """Scaling book inference.md: FlashAttention intensity S T / (S + T) = N/2 = 2048 at N = 4096."""
    assert attention(1, 32, 32, 4096, 4096, 128, flash=True).intensity == pytest.approx(2048)


def test_naive_attention_prefill_4096_is_62_flop_per_byte() -> None:
    """SA §1.3: naive (S and P through HBM) N d / (2 (N + d)) = 62 at N = 4096, d = 128."""
    assert round(attention(1, 32, 32, 4096, 4096, 128, flash=False).intensity) == 62


def test_naive_attention_saturates_at_half_the_head_dim() -> None:
    """SA §1.3: naive attention intensity never exceeds d/2 = 64 however long the sequence."""
    assert attention(1, 1, 1, 1 << 17, 1 << 17, 128, flash=False).intensity == pytest.approx(64, rel=0.002)


def test_flash_and_naive_differ_only_by_the_four_score_matrix_passes() -> None:
    """Naive writes S, reads S, writes P, reads P: 4 x heads x T x S x 2 bytes more than Flash."""
    flash = attention(2, 8, 8, 1024, 1024, 64, flash=True)
    naive = attention(2, 8, 8, 1024, 1024, 64, flash=False)
    assert naive.bytes - flash.bytes == 4 * 2 * 8 * 1024 * 1024 * 2 and naive.flops == flash.flops


def test_decode_attention_mha_is_about_one_gqa8_about_eight() -> None:
    """SA §1.3: decode attention at 32k context: MHA about 1 FLOP/byte, GQA-8 about 8."""
    mha = attention(1, 32, 32, 1, 32768, 128).intensity
    gqa8 = attention(1, 32, 4, 1, 32768, 128).intensity
    assert (round(mha), round(gqa8)) == (1, 8)


# ---------------------------------------------------------------- whole-model decode and prefill


def test_llama3_8b_decode_at_batch_1_is_about_one_flop_per_byte() -> None:
    """SA §1.3: one decode step at batch 1 in bf16 reads every weight for 2 FLOPs per parameter:
    about 1 FLOP/byte (a little more with 4096 tokens of KV cache and its attention)."""
    assert decode_step_op(LLAMA_3_8B, 1, 4096).intensity == pytest.approx(1.0, rel=0.15)


def test_7b_bf16_decode_takes_about_4_ms_on_h100() -> None:
    """SA §1.3 decode anchor: 7B bf16 weights are about 13.5 GB; 13.5 GB / 3.35 TB/s = about 4 ms."""
    op = decode_step_op(get_model_preset("llama-2-7b").spec, 1, 0)
    assert predict(op, H100).time_s == pytest.approx(4e-3, rel=0.03)


def test_prefill_intensity_is_at_least_the_token_count_in_bf16() -> None:
    """Prefill of T tokens does 2 FLOPs per parameter per token over one read of the weights:
    at least T FLOP/byte (plus attention FLOPs), far past any ridge."""
    assert prefill_op(LLAMA_3_8B, 2048).intensity > 2048 * 0.95


def test_llama3_8b_decode_crosses_the_h100_ridge_at_batch_296_without_context() -> None:
    """Weights only: intensity = 2 P B / 2 P = B, so the crossover is the first integer at or
    above the ridge, 989.5/3.35 = 295.4 -> 296 (scaling book: compute-bound once B > ridge)."""
    assert decode_crossover_batch(LLAMA_3_8B, H100, "bf16", context_tokens=0) == math.ceil(_h100_bf16_ridge())


def test_weights_only_crossover_rule_matches_the_scaling_book_v5e_numbers() -> None:
    """Scaling book: B_crit = 240 on TPU v5e in bf16 (2 bytes/param) and 120 with int8 weights."""
    assert (weights_only_crossover_batch(240, 2), weights_only_crossover_batch(240, 1)) == (240, 120)


def test_llama3_8b_decode_never_crosses_the_h100_ridge_at_4096_context() -> None:
    """At 4096 tokens each sequence adds 4096 x 128 KiB of KV cache: intensity tends to
    (2 P + 4 L H d S) / (4 L H_kv d S) = 32.0 FLOP/byte, below the 295 ridge, so no batch helps.
    Llama 3 8B: P = 8.03e9 parameters less the 128,256 x 4,096 input-embedding lookup table,
    L = 32, H = 32, H_kv = 8, d = 128 (Meta's config)."""
    p, layers, heads, kv_heads, d, s = 8_030_261_248 - 128_256 * 4096, 32, 32, 8, 128, 4096
    expected_limit = (2 * p + 4 * layers * heads * d * s) / (2 * 2 * layers * kv_heads * d * s)
    assert decode_intensity_limit(LLAMA_3_8B, 4096) == pytest.approx(expected_limit)
    assert decode_crossover_batch(LLAMA_3_8B, H100, "bf16", context_tokens=4096) is None


def test_kv_cache_pushes_the_crossover_batch_up() -> None:
    """Each sequence's KV cache adds bytes as the batch grows, so 256 tokens of context need a
    bigger batch than none to reach the same ridge."""
    without = decode_crossover_batch(LLAMA_3_8B, H100, context_tokens=0)
    with_context = decode_crossover_batch(LLAMA_3_8B, H100, context_tokens=256)
    assert without is not None and with_context is not None and with_context > 2 * without


@settings(max_examples=12, deadline=None)
@given(
    preset=st.sampled_from(["llama-3-8b", "llama-2-7b", "mistral-7b-v0.1", "mixtral-8x7b", "gemma-2-9b"]),
    context=st.integers(min_value=0, max_value=300),
)
def test_crossover_is_the_first_batch_at_or_past_the_ridge(preset: str, context: int) -> None:
    """Property: at B* the step reaches the ridge and at B* - 1 it does not (or B* is None)."""
    spec = get_model_preset(preset).spec
    ridge = _h100_bf16_ridge()
    crossover = decode_crossover_batch(spec, H100, context_tokens=context)
    if crossover is None:
        assert decode_step_op(spec, 1 << 20, context).intensity < ridge
    else:
        assert decode_step_op(spec, crossover, context).intensity >= ridge
        assert crossover == 1 or decode_step_op(spec, crossover - 1, context).intensity < ridge


# ---------------------------------------------------------------- properties of the roofline

positive = st.floats(min_value=1e-3, max_value=1e18, allow_nan=False, allow_infinity=False)


@given(intensity=st.floats(min_value=0, max_value=1e9), peak=positive, bandwidth=positive)
def test_attainable_never_exceeds_peak_or_the_memory_roof(
    intensity: float, peak: float, bandwidth: float
) -> None:
    """Williams et al.: attainable = min(peak, I x BW), so it is at most each of the two."""
    value = attainable_flops(intensity, peak, bandwidth)
    assert value <= peak and value <= intensity * bandwidth


@given(
    a=st.floats(min_value=0, max_value=1e9),
    b=st.floats(min_value=0, max_value=1e9),
    peak=positive,
    bw=positive,
)
def test_attainable_is_monotone_in_intensity(a: float, b: float, peak: float, bw: float) -> None:
    """More FLOPs per byte never lowers the roof."""
    low, high = sorted((a, b))
    assert attainable_flops(low, peak, bw) <= attainable_flops(high, peak, bw)


@given(
    flops=st.floats(min_value=1, max_value=1e18),
    nbytes=st.floats(min_value=1, max_value=1e15),
    peak=st.floats(min_value=1e9, max_value=1e16),
    bw=st.floats(min_value=1e9, max_value=1e13),
)
def test_bound_agrees_with_the_ridge_and_time_is_the_larger_term(
    flops: float, nbytes: float, peak: float, bw: float
) -> None:
    """Memory-bound exactly when intensity < ridge; predicted time = max(FLOPs/peak, bytes/BW)."""
    op = Operation("x", flops, nbytes)
    expected = "compute" if flops / peak >= nbytes / bw else "memory"
    assert op.bound(peak, bw) == expected
    assert op.time_s(peak, bw) == max(flops / peak, nbytes / bw)


dims = st.integers(min_value=1, max_value=8192)


@given(m=dims, n=dims, k=dims)
def test_gemm_intensity_is_symmetric_in_m_and_n(m: int, n: int, k: int) -> None:
    """C = AB and C^T = B^T A^T move the same bytes for the same FLOPs."""
    assert gemm(m, n, k).intensity == pytest.approx(gemm(n, m, k).intensity)


@given(
    batch=st.integers(1, 8),
    group=st.sampled_from([1, 2, 4, 8]),
    kv_heads=st.integers(1, 8),
    q_len=st.integers(1, 4096),
    kv_len=st.integers(1, 4096),
    head_dim=st.sampled_from([64, 128, 256]),
)
def test_flash_never_moves_more_bytes_than_naive(
    batch: int, group: int, kv_heads: int, q_len: int, kv_len: int, head_dim: int
) -> None:
    """Same FLOPs, and FlashAttention's bytes are a subset of the naive kernel's."""
    args = (batch, kv_heads * group, kv_heads, q_len, kv_len, head_dim)
    flash, naive = attention(*args, flash=True), attention(*args, flash=False)
    assert flash.flops == naive.flops and flash.bytes < naive.bytes


@given(tokens=st.integers(1, 4096), hidden=st.integers(1, 8192))
def test_fusion_always_saves_bytes(tokens: int, hidden: int) -> None:
    """One kernel instead of one per primitive: fewer bytes for RMSNorm, LayerNorm and softmax."""
    for build in (rmsnorm, layernorm):
        assert build(tokens, hidden, fused=True).bytes < build(tokens, hidden, fused=False).bytes
    assert softmax(tokens, hidden, fused=True).bytes < softmax(tokens, hidden, fused=False).bytes


@settings(max_examples=25, deadline=None)
@given(batch=st.integers(1, 4096), context=st.integers(0, 8192))
def test_decode_intensity_grows_with_batch(batch: int, context: int) -> None:
    """The weights are shared by the batch, so one more sequence never lowers the intensity."""
    assert (
        decode_step_op(LLAMA_3_8B, batch + 1, context).intensity
        >= decode_step_op(LLAMA_3_8B, batch, context).intensity
    )


def test_operation_rejects_zero_bytes() -> None:
    """An operation that moves no bytes has no intensity: refuse it with a message."""
    with pytest.raises(ValueError, match="bytes"):
        Operation("empty", 1.0, 0.0)


# ---------------------------------------------------------------- charts


def _names(fig: dict) -> list[str]:
    return [trace.get("name", "") for trace in fig["data"]]


def _title(fig: dict) -> str:
    return fig["layout"]["title"]["text"].replace("<br>", " ")


def test_roofline_figure_draws_both_compute_roofs_memory_roof_and_ridge_per_accelerator() -> None:
    """Each accelerator gets a tensor roof, a vector FP32 roof, a memory roof and its ridge point,
    in one legend group whose single legend entry is the accelerator's name."""
    fig = roofline_figure([H100, A100], "bf16", reference_operations())
    names = _names(fig)
    for acc in (H100, A100):
        group = [t for t in fig["data"] if t.get("legendgroup") == acc.id]
        group_names = [t["name"] for t in group]
        assert any("tensor" in n for n in group_names) and any("vector FP32" in n for n in group_names)
        assert any(n.startswith("memory roof") for n in group_names)
        assert any("ridge point" in n for n in group_names)
        entries = [t["name"] for t in group if t.get("showlegend", True)]
        assert len(entries) == 1 and entries[0].startswith(f"{acc.name}: ridge")
    assert "compute roof: bf16 tensor 989.5 TFLOP/s" in names


def test_roofline_figure_tensor_roof_sits_at_989_5_tflops() -> None:
    """The y axis is in TFLOP/s: the H100 bf16 tensor roof is drawn at 989.5."""
    fig = roofline_figure([H100], "bf16")
    roof = next(t for t in fig["data"] if "tensor" in t.get("name", ""))
    assert roof["y"] == [989.5, 989.5]


def test_roofline_figure_axes_are_log_log_with_units() -> None:
    """Projector-readable axes: log scales, intensity in FLOP per byte, dense TFLOP/s."""
    fig = roofline_figure([H100], "bf16", reference_operations())
    xaxis, yaxis = fig["layout"]["xaxis"], fig["layout"]["yaxis"]
    assert (xaxis["type"], yaxis["type"]) == ("log", "log")
    assert "FLOP per byte" in xaxis["title"]["text"]
    y_title = yaxis["title"]["text"].replace("<br>", " ")
    assert "TFLOP/s" in y_title and "dense" in y_title


def test_roofline_figure_names_the_ridge_point() -> None:
    """The ridge point is marked and its value (295 FLOP/B on H100 bf16) is in the legend entry."""
    fig = roofline_figure([H100], "bf16")
    assert "H100 SXM (80GB): ridge 295 FLOP/B (bf16)" in [n.replace("<br>", " ") for n in _names(fig)]
    ridge = next(t for t in fig["data"] if t.get("name", "").startswith("ridge point"))
    assert ridge["x"] == [pytest.approx(989.5e12 / H100.memory_bandwidth_bytes_per_s)]


def test_operation_hover_gives_flops_bytes_intensity_bound_and_time() -> None:
    """Hovering GEMM 4096^3 says compute-bound on H100 and its predicted time."""
    fig = roofline_figure([H100], "bf16", [gemm(4096, 4096, 4096)])
    trace = next(t for t in fig["data"] if t.get("legendgroup") == "operations")
    hover = trace["hovertext"][0]
    for word in ("FLOPs", "bytes", "intensity", "compute-bound", "predicted"):
        assert word in hover
    assert trace["text"] == ["GEMM 4096³"]


def test_operation_markers_use_one_trace_per_kind_and_fusion() -> None:
    """Marker shape per kind: the reference operations span all kinds but 'model'; a kernel that
    comes fused and unfused has a filled and an open marker, each its own legend entry."""
    fig = roofline_figure([H100], "bf16", reference_operations())
    ops = [t for t in fig["data"] if t.get("legendgroup") == "operations"]
    symbols = [t["marker"]["symbol"] for t in ops]
    assert len(set(symbols)) == len(ops) == 6
    assert len({s.removesuffix("-open") for s in symbols}) == 5
    opened = [t for t in ops if t["marker"]["symbol"].endswith("-open")]
    assert len(opened) == 1 and "unfused" in opened[0]["name"]


def test_points_at_the_same_place_name_each_other_in_their_hover() -> None:
    """The unfused RMSNorm and LayerNorm sit almost on one spot: each hover names the other."""
    fig = roofline_figure([H100], "bf16", reference_operations())
    hovers = [h for t in fig["data"] if t.get("legendgroup") == "operations" for h in t["hovertext"]]
    assert any("also here:" in h for h in hovers)


def test_measured_point_hover_shows_its_fraction_of_the_roof() -> None:
    """SA §3.2: MAMF 794.5 TFLOP/s on H100 SXM is 80% of the 989.5 roof at high intensity."""
    point = MeasuredPoint("GEMM 8192^3 (MAMF)", 2730, 794.5e12, "h100-sxm")
    fig = roofline_figure([H100, A100], "bf16", measured=[point])
    trace = next(t for t in fig["data"] if t.get("legendgroup") == "measured")
    assert "80%" in trace["hovertext"][0] and trace["marker"]["symbol"] == ["star"]


def test_a_measured_point_is_held_to_its_own_precisions_roof_only() -> None:
    """Issue 17: an FP8 matmul plotted against the BF16 roof read "147 % of it". A point of another
    precision is left off the chart (the title says so); on its own roof it is a normal point."""
    fp8 = MeasuredPoint("GEMM 8192^3 fp8", 2730, 1450e12, "h100-sxm", dtype="fp8")
    bf16_chart = roofline_figure([H100], "bf16", measured=[fp8])
    assert not [t for t in bf16_chart["data"] if t.get("legendgroup") == "measured"]
    title = bf16_chart["layout"]["title"]["text"].replace("<br>", " ")
    assert "measured fp8 points are held to their own precision's roof" in title
    fp8_chart = roofline_figure([H100], "fp8", measured=[fp8])
    trace = next(t for t in fp8_chart["data"] if t.get("legendgroup") == "measured")
    assert "73% of it" in trace["hovertext"][0] and trace["marker"]["symbol"] == ["star"]


def test_a_measured_point_above_its_roof_is_flagged_as_an_error() -> None:
    """1,450 TFLOP/s against H100's 989.5 dense BF16 roof is not a fast kernel but a counting error."""
    wrong = MeasuredPoint("GEMM 8192^3", 2730, 1450e12, "h100-sxm", dtype="bf16")
    trace = next(
        t
        for t in roofline_figure([H100], "bf16", measured=[wrong])["data"]
        if t.get("legendgroup") == "measured"
    )
    assert trace["marker"]["symbol"] == ["x"]
    assert "counting or unit error" in trace["hovertext"][0]


def test_show_achievable_adds_dashed_ceilings() -> None:
    """With show_achievable, each NVIDIA GPU gains a dashed 80%-peak and 90%-bandwidth roof."""
    fig = roofline_figure([H100], "bf16", show_achievable=True)
    dashed = [
        t
        for t in fig["data"]
        if t.get("legendgroup", "").endswith("achievable") and t.get("showlegend", True) is False
    ]
    assert len(dashed) == 2 and all(t["line"]["dash"] == "dash" for t in dashed)


def test_decode_batch_figure_prints_the_crossover_batch() -> None:
    """Llama 3 8B on H100 bf16, no context: the crossover line and title say batch 296."""
    fig = decode_batch_figure(LLAMA_3_8B, H100, [1, 8, 64, 512, 4096], selected_batch=64)
    assert "crossover at batch 296" in _title(fig)
    assert any(n.startswith("crossover: compute-bound from batch 296") for n in _names(fig))
    xaxis2 = fig["layout"]["xaxis2"]
    assert xaxis2["type"] == "log" and "Batch size" in xaxis2["title"]["text"]


def test_decode_batch_figure_says_never_at_long_context() -> None:
    """At 4096 tokens of context the intensity tops out below the ridge: the title says so."""
    fig = decode_batch_figure(LLAMA_3_8B, H100, [1, 64, 4096], context_tokens=4096)
    assert "never compute-bound" in _title(fig)
