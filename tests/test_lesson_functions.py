"""The lesson functions that quote the shipped H100 run: they return the figures the project's
measurement notes publish (../shared/measured/README.md: one H100 80GB HBM3 SXM, 2026-11-23), so
lesson 11 quotes the sample instead of typing its numbers."""

from __future__ import annotations

import pytest

from lessons import functions as f


def test_the_h100_sample_figures_lesson_11_quotes():
    assert f.h100_bandwidth_gbs("triad") == pytest.approx(3051, abs=1)  # "triad 3,051 GB/s"
    assert f.h100_matmul_tflops("bfloat16", 8192) == pytest.approx(795, abs=1)  # "bf16 8192³ 795"
    assert f.h100_matmul_tflops("float8_e4m3fn", 8192) == pytest.approx(1460, abs=5)  # "fp8 1,460"
    assert f.h100_launch_us("eager") == pytest.approx(7.5, abs=0.05)  # "7.5 → 1.0 µs per op"
    assert f.h100_launch_us("cuda_graph") == pytest.approx(1.0, abs=0.05)
    assert f.h100_bandwidth_gbs("copy", 4096) == pytest.approx(0.44, abs=0.01)  # "0.4 GB/s at 4 KiB"
    assert f.h100_decode("tok_s") == pytest.approx(19.7, abs=0.05)
    assert f.h100_decode("step_ms", "cuda_graph") == pytest.approx(8.19, abs=0.01)
    assert f.h100_decode("tok_s", "cuda_graph") == pytest.approx(122, abs=0.5)
    steps = [f.h100_decode("step_ms", "eager", b, "dynamic") for b in (1, 8, 32, 64)]
    assert min(steps) >= 96 and max(steps) <= 104  # generate(): a flat step time
    assert f.h100_decode("tok_s", "eager", 64, "dynamic") == pytest.approx(628, abs=0.5)


def test_a_missing_or_ambiguous_h100_record_is_an_error_not_a_guess():
    with pytest.raises(ValueError, match="0 decode records"):
        f.h100_decode("tok_s", "eager", 3)
    with pytest.raises(ValueError, match="metric"):
        f.h100_decode("joules")
    with pytest.raises(ValueError, match="no 'scale' bandwidth"):
        f.h100_bandwidth_gbs("scale")


def test_lesson_11_quotes_the_sample_not_typed_numbers():
    from lessons.loader import LESSONS_DIR

    text = next(LESSONS_DIR.glob("11-*.md")).read_text()
    for typed in ("3,051 GB/s", "795 TFLOP/s", "50.8 ms", "8.19 ms", "7.5 µs", "628 tokens"):
        assert typed not in text, typed
    assert text.count("h100_decode(") >= 10 and "h100_bandwidth_gbs(" in text


def test_a_two_server_all_reduce_spreads_over_every_nic():
    """Review 2026-11 N1: 16 H100s in two servers of 8, one NDR port per GPU. Each of the 8 ports
    carries 1/8 of a GPU's 30.1 GB (30.1 ÷ 8 ÷ 40 GB/s = 94 ms) while NVLink carries the other 7/8
    at the same time; nccl-tests on such nodes reach a bus bandwidth of 400-450 GB/s
    (https://saturncloud.io/blog/crusoe-nccl-cluster-validation), 67-75 ms for the same bytes."""
    gradients_gb = f.weights_gb("llama-3-8b")
    ring_gb = gradients_gb * f.allreduce_factor(16)
    rail = f.allreduce_ms(gradients_gb, 16, "ib-ndr-4x", 8)
    assert rail == pytest.approx(ring_gb / 8 / 40 * 1e3, rel=1e-6)
    assert ring_gb / 450 * 1e3 < rail < 1.5 * ring_gb / 400 * 1e3
    assert f.allreduce_ms(gradients_gb, 16, "ib-ndr-4x") == pytest.approx(8 * rail, rel=1e-6)


def test_the_parallelism_page_uses_the_same_rail_model():
    """Data parallel over 2 nodes of 8: the page's gradient-reduction time is the lesson's."""
    page = f.par_comm_s("llama-3-8b", "dp", 2, 8, 1, 1, 16)
    assert page * 1e3 == pytest.approx(
        f.allreduce_ms(f.weights_gb("llama-3-8b"), 16, "ib-ndr-4x", 8), rel=1e-3
    )


def test_a_lesson_cannot_run_a_model_past_its_trained_context():
    """Llama 2: 4,096 tokens, Llama 3: 8,192, Llama 3.1: 131,072 (max_position_embeddings)."""
    assert [f.max_context(m) for m in ("llama-2-7b", "llama-3-8b", "llama-3.1-8b")] == [4096, 8192, 131072]
    for call in (
        lambda: f.kv_cache_gb("llama-2-7b", 8192),
        lambda: f.decode_tok_s("llama-3-8b", "h100-sxm", 1, 16384),
        lambda: f.inference_gb("llama-3-70b", "h200-sxm", "fp8", "fp8", 1, 32768),
    ):
        with pytest.raises(ValueError, match="trained context"):
            call()


def test_the_capstone_pool_comes_from_the_reported_memory():
    """The capstone sizes the batch from vLLM's pool (the H100 and H200 samples' reported totals),
    and its TPOT divides the bound by lesson 11's measured share (8.19 ms against the bound)."""
    assert f.reported_memory_gb("h200-sxm") == pytest.approx(150.11, abs=0.01)  # torch total_memory
    tokens = f.vllm_kv_tokens("llama-3.1-8b", 0.9, 8192, "h100-sxm")
    assert f.served_sequences("llama-3.1-8b", "h100-sxm", "bf16", 8192) == tokens // 8192
    assert f.measured_decode_share() == pytest.approx(
        f.decode_memory_ms("llama-3.1-8b", "h100-sxm", 1, 512) / 8.19, rel=2e-3
    )
    bound = f.decode_memory_ms("llama-3.1-8b", "h200-sxm", 56, 8192, "fp8")
    assert f.served_tpot_ms("llama-3.1-8b", "h200-sxm", "fp8", 56, 8192) == pytest.approx(
        bound / f.measured_decode_share()
    )


def test_the_engine_share_range_comes_from_published_vllm_runs():
    """Review 2026-11-28 R1: the high end of the capstone's range is a serving engine. vLLM 0.23 on an
    A100 40GB ran Llama 3.1 8B at about 75 tokens/s at batch 1 (the page: "roughly 77%" of a bound
    that counts all 16 GB of weights); against the course's bound (15.0 GB streamed + KV at
    1,088 tokens over 1,555 GB/s) that is 73 %. vLLM 0.21 on an H100: 6.48 ms per token, 70 %."""
    assert f.engine_decode_share("vllm-a100") == pytest.approx(0.731, abs=0.005)
    assert f.engine_decode_share("vllm-h100") == pytest.approx(0.698, abs=0.005)
    everything = f.weights_gb("llama-3.1-8b") * 1e9 / 1555e9
    assert 75 * everything == pytest.approx(0.77, abs=0.01)  # the page's own figure: all weights, no KV
    assert f.decode_share("low") == f.measured_decode_share()
    assert f.decode_share("high") == f.engine_decode_share("vllm-a100")
    with pytest.raises(ValueError, match="low"):
        f.decode_share("middle")


def test_a_design_verdict_is_right_wrong_or_depends_on_the_engine_share():
    """A design needs ``design_min_share`` of the decode bound; right below the range, depends inside
    it, wrong above it or when the pool fails, or the TTFT even at the prefill range's high end,
    whatever the engine. 24 users of 16,384 tokens: the H100 with FP8 weights needs 59 % of the
    bound (inside 55-73 %); the H200 with BF16 weights has a TTFT of 0.55 s at 55 % of the peak and
    0.38 s at its measured matmul's 80 %: it depends for a 0.45 s target, is wrong for 0.3 s."""
    args = ("llama-3.1-8b", 24, 16384, 16384, 30, 0.45, 1.2)
    need = f.design_min_share(args[0], "h100-sxm", "fp8", *args[1:])
    assert f.decode_share("low") < need < f.decode_share("high")
    assert f.design_verdict(args[0], "h100-sxm", "fp8", *args[1:]) == 0.5
    assert f.design_ok(args[0], "h100-sxm", "fp8", *args[1:6], 2.49, 1.2, need * 1.001) == 1
    assert f.design_ok(args[0], "h100-sxm", "fp8", *args[1:6], 2.49, 1.2, need * 0.999) == 0
    assert f.design_verdict(args[0], "h200-sxm", "fp8", *args[1:]) == 1
    assert f.served_ttft_s(args[0], "h200-sxm", "bf16", 16384) == pytest.approx(0.550, abs=0.001)
    assert f.served_ttft_s(args[0], "h200-sxm", "bf16", 16384, "high") == pytest.approx(0.378, abs=0.002)
    assert f.design_verdict(args[0], "h200-sxm", "bf16", *args[1:]) == 0.5
    assert f.design_ok(args[0], "h200-sxm", "bf16", *args[1:6], 3.5, 1.2, 0, "high") == 1
    assert f.design_ok(args[0], "h200-sxm", "bf16", *args[1:6], 3.5, 1.2, 0, "low") == 0
    assert "prefill" in f.design_verdict_text(args[0], "h200-sxm", "bf16", *args[1:])
    tight = (*args[:5], 0.3, 1.2)
    assert f.design_min_share(tight[0], "h200-sxm", "bf16", *tight[1:]) == float("inf")
    assert f.design_verdict(tight[0], "h200-sxm", "bf16", *tight[1:]) == 0
    assert "depends" in f.design_verdict_text(args[0], "h100-sxm", "fp8", *args[1:])


def test_the_prefill_share_is_a_range_from_a_planning_figure_to_a_measured_matmul():
    """Review 2026-11-29 L1: the capstone's TTFT took one unsourced 55 %. The low end is roofline.run's
    default prefill MFU on H100-class GPUs (a planning figure); the high end is this project's 8,192³
    matmul on each GPU: 795 TFLOP/s BF16 (80 % of 989.5) and 1,458 FP8 (74 % of 1,979) on the H100,
    790 (80 %) and 1,446 (73 %) on the H200. A GPU the project did not measure is refused."""
    assert f.prefill_share("low") == 0.55
    assert f.prefill_share("high", "h100-sxm", "bf16") == pytest.approx(795.46 / 989.5, rel=1e-3)
    assert f.prefill_share("high", "h100-sxm", "fp8") == pytest.approx(1457.77 / 1979, rel=1e-3)
    assert f.prefill_share("high", "h200-sxm", "bf16") == pytest.approx(790.09 / 989.5, rel=1e-3)
    assert f.prefill_share("high", "h200-sxm", "fp8") == pytest.approx(1446.27 / 1979, rel=1e-3)
    with pytest.raises(ValueError, match="measured"):
        f.prefill_share("high", "a100-80gb-sxm", "bf16")
    with pytest.raises(ValueError, match="low"):
        f.prefill_share("middle")
    slow = f.served_ttft_s("llama-3.1-8b", "h100-sxm", "fp8", 16384, "low")
    fast = f.served_ttft_s("llama-3.1-8b", "h100-sxm", "fp8", 16384, "high")
    weights = f.prefill_linear_flops("llama-3.1-8b", 16384) / (
        f.prefill_share("high", "h100-sxm", "fp8") * 1979e12
    )
    attention = f.prefill_attention_flops("llama-3.1-8b", 16384) / (
        f.prefill_share("high", "h100-sxm") * 989.5e12
    )
    assert fast == pytest.approx(weights + attention) and fast < slow


def test_prefill_runs_only_the_last_token_through_the_output_head():
    """Review 2026-11-28 R3: engines compute logits for the last position only, so a 4,096-token
    Llama 3 8B prefill on an H100 at 55 % of the BF16 peak takes about 113 ms, not the 121 ms of
    running every token through the 0.53-billion-weight head; a tied head (Gemma 2) counts too."""
    assert f.prefill_ms("llama-3-8b", "h100-sxm", 4096, 0.55) == pytest.approx(113, abs=1)
    assert f.head_params("llama-3-8b") == 128256 * 4096
    assert f.head_params("gemma-2-9b") == 256000 * 3584 and f.tied_embeddings("gemma-2-9b") == 1
    every = (
        f.prefill_ms("llama-3-8b", "h100-sxm", 4096, 0.55)
        + 2 * f.head_params("llama-3-8b") * 4095 / (0.55 * f.peak_tflops("h100-sxm") * 1e12) * 1e3
    )
    assert every == pytest.approx(121, abs=1)


def test_prefill_prices_the_weights_and_the_attention_each_at_its_own_precision():
    """Review 2026-11-29 L2: with FP8 weights and a BF16 KV cache, the weights' matmuls run at the FP8
    peak but attention at the BF16 one. Llama 3.1 8B, 16,384 tokens on an H100 at 55 %: 2.287e14
    FLOPs ÷ (0.55 × 1,979e12) + 7.04e13 ÷ (0.55 × 989.5e12) = 0.210 + 0.129 = 0.339 s, not the
    0.275 s of pricing both at FP8; at 8,192 tokens 0.137 s, not 0.121 s."""
    attention = f.prefill_attention_flops("llama-3.1-8b", 16384)
    assert attention == pytest.approx(2 * 32 * 4096 * 16384**2, rel=1e-9)
    assert f.prefill_linear_flops("llama-3.1-8b", 16384) == pytest.approx(2.287e14, rel=1e-3)
    assert f.served_ttft_s("llama-3.1-8b", "h100-sxm", "fp8", 16384) == pytest.approx(0.339, abs=0.001)
    assert f.served_ttft_s("llama-3.1-8b", "h100-sxm", "fp8", 8192) == pytest.approx(0.137, abs=0.001)
    assert f.served_ttft_s("llama-3.1-8b", "h100-sxm", "bf16", 16384) == pytest.approx(0.550, abs=0.001)
    both_fp8 = (f.prefill_linear_flops("llama-3.1-8b", 16384) + attention) / (0.55 * 1979e12)
    assert both_fp8 == pytest.approx(0.275, abs=0.001)


def test_the_article_before_a_printed_value_follows_how_it_is_said():
    """Review 2026-11-29 L13: "a 8,192-token prompt", "a FP8 KV cache"."""
    assert [f.article(n) for n in (8192, 8160, 4096, 2048, 11, 18, 110, 80, 800, 8.2, 16384, 1)] == [
        "an", "an", "a", "a", "an", "an", "a", "an", "an", "an", "a", "a"
    ]  # fmt: skip
    assert [f.article(x) for x in ("fp8", "bf16", "int4", "nf4", "h100-sxm", "a100-80gb-sxm", "b200")] == [
        "an", "a", "an", "an", "an", "an", "a"
    ]  # fmt: skip
    assert f.article("mi300x") == "an" and f.article("rtx-4090") == "a" and f.article("l4") == "an"
    assert f.article("Tesla T4") == "a" and f.article("GeForce RTX 4090") == "a"
    assert f.capital_article(8192) == "An" and f.capital_article(4096) == "A"
