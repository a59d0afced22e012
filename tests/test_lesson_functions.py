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
