"""The published quality data (simulators/data/quantization_quality.csv) and its loader.

Each test checks numbers printed in a source:
- Huang et al., "An Empirical Study of LLaMA3 Quantization" (v1: "How Good Are Low-bit Quantized
  LLaMA3 Models?"), https://arxiv.org/abs/2404.14047, v3 Tables 1, 2 and 5;
- llama.cpp pull request 6936, https://github.com/ggerganov/llama.cpp/pull/6936, table
  "LLaMA 2 vs. LLaMA 3 comparison", row "Mean PPL ratio".
"""

from __future__ import annotations

import csv
from pathlib import Path

import pytest

from simulators.quality import DATA_PATH, QualityDataError, load_quality, quality_row


def test_llama3_8b_table1_fp16_and_4bit():
    """arXiv 2404.14047 Table 1: LLaMA3-8B FP16 6.1; RTN W4 g128 8.5; GPTQ 6.5; AWQ 6.6 (WikiText2)."""
    assert quality_row("llama-3-8b", "rtn", 4, 128).baseline == 6.1
    assert quality_row("llama-3-8b", "rtn", 4, 128).value == 8.5
    assert quality_row("llama-3-8b", "gptq", 4, 128).value == 6.5
    assert quality_row("llama-3-8b", "awq", 4, 128).value == 6.6


def test_llama3_8b_table1_8bit_per_channel():
    """arXiv 2404.14047 Table 1: 8-bit weights, no grouping ('-'): RTN 6.2, GPTQ 6.1, AWQ 6.1."""
    assert quality_row("llama-3-8b", "rtn", 8, None).value == 6.2
    assert quality_row("llama-3-8b", "gptq", 8, None).value == 6.1
    assert quality_row("llama-3-8b", "awq", 8, None).value == 6.1


def test_llama1_and_llama2_table5():
    """arXiv 2404.14047 Table 5: LLaMA-7B FP16 5.7, RTN W4 g128 6.0; LLaMA2-7B FP16 5.5, RTN 5.7."""
    assert (quality_row("llama-7b", "rtn", 4).baseline, quality_row("llama-7b", "rtn", 4).value) == (5.7, 6.0)
    assert (quality_row("llama-2-7b", "rtn", 4).baseline, quality_row("llama-2-7b", "rtn", 4).value) == (
        5.5,
        5.7,
    )
    assert quality_row("llama-2-7b", "gptq", 3).value == 6.3


def test_llama3_70b_table2():
    """arXiv 2404.14047 Table 2: LLaMA3-70B FP16 2.9, GPTQ W3 g128 5.2, AWQ W3 g128 4.8."""
    assert quality_row("llama-3-70b", "gptq", 3).baseline == 2.9
    assert quality_row("llama-3-70b", "gptq", 3).value == 5.2
    assert quality_row("llama-3-70b", "awq", 3).value == 4.8


def test_llama_cpp_generation_ratios():
    """llama.cpp PR 6936, Mean PPL ratio: L2 7b q4_K_M 1.014242, L3 8b q4_K_M 1.028160."""
    assert quality_row("llama-2-7b", "llama.cpp-q4_k_m", 4, 32).value == 1.014242
    assert quality_row("llama-3-8b", "llama.cpp-q4_k_m", 4, 32).value == 1.028160
    assert quality_row("llama-3-8b", "llama.cpp-q8_0", 8, 32).baseline == 1


def test_llama3_is_more_fragile_than_llama2_at_the_same_setting():
    """The seeds' claim, in the sources' numbers: same method and bits, Llama 3 8B loses more."""
    for method, bits, group in (
        ("rtn", 4, 128),
        ("rtn", 3, 128),
        ("gptq", 3, 128),
        ("llama.cpp-q4_k_m", 4, 32),
    ):
        llama2 = quality_row("llama-2-7b", method, bits, group).relative_increase
        llama3 = quality_row("llama-3-8b", method, bits, group).relative_increase
        assert llama3 > 1.9 * llama2, (method, bits, llama2, llama3)


def test_every_row_is_sourced_and_consistent():
    rows = load_quality()
    assert len({r.id for r in rows}) == len(rows)
    assert {r.generation for r in rows} >= {1, 2, 3}
    assert {r.weight_bits for r in rows} >= {8, 4, 3}
    for row in rows:
        assert row.source in {
            "https://arxiv.org/abs/2404.14047",
            "https://github.com/ggerganov/llama.cpp/pull/6936",
        }
        assert row.table and row.value > 0 and row.baseline > 0


def _write(tmp_path: Path, change: dict[str, str]) -> Path:
    with DATA_PATH.open(newline="", encoding="utf-8") as handle:
        reader = csv.DictReader(handle)
        fields = list(reader.fieldnames or [])
        rows = list(reader)
    rows[0].update(change)
    path = tmp_path / "quantization_quality.csv"
    with path.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.DictWriter(handle, fieldnames=fields)
        writer.writeheader()
        writer.writerows(rows)
    return path


@pytest.mark.parametrize(
    ("change", "column"),
    [
        ({"value": "six"}, "value"),
        ({"baseline": "-1"}, "baseline"),
        ({"group_size": "0"}, "group_size"),
        ({"method": "magic"}, "method"),
        ({"metric": "vibes"}, "metric"),
        ({"source": "arxiv 2404.14047"}, "source"),
        ({"weight_bits": "3"}, "id"),
        ({"generation": "x"}, "generation"),
    ],
)
def test_a_bad_cell_is_named_by_row_and_column(tmp_path, change, column):
    path = _write(tmp_path, change)
    with pytest.raises(QualityDataError) as info:
        load_quality.__wrapped__(path)
    message = str(info.value)
    assert "line 2" in message and "llama-7b/rtn/w4g128" in message and f"column {column!r}" in message


def test_a_missing_row_is_an_error():
    with pytest.raises(QualityDataError, match="no quality row"):
        quality_row("llama-3-8b", "rtn", 2, 128)
