"""Glossary corrections from issue 12 item 7, checked against the rendered terms.

Each test names the source of the corrected fact; the terms' own `sources` lists and
glossary/sources-checked.tsv say how each source was looked at.
"""

import pytest

from glossary import search
from glossary.loader import terms_by_id


def body(term_id: str) -> str:
    """The rendered body with line breaks folded, so phrases can wrap anywhere."""
    return " ".join(terms_by_id()[term_id].body.split())


@pytest.mark.parametrize(
    ("name", "term_id"),
    [
        ("SM architecture", "compute-capability"),
        ("CUDA device architecture", "cuda"),
        ("CUDA software platform", "cuda"),
    ],
)
def test_modal_glossary_page_names_find_our_term(name, term_id):
    """Modal's GPU glossary has pages with these titles (modal-labs/gpu-glossary, read_file)."""
    assert search(name, limit=1)[0].id == term_id


def test_tensor_core_uses_the_real_sass_mnemonic():
    """Disassembly prints `HMMA.16816.F32` (florianmattana/sass-king PR 28), not HMMA16...."""
    assert "`HMMA.16816.F32`" in body("tensor-core")


def test_a100_tensor_rate_per_sm_is_a_whole_number():
    """A100: 4 Tensor Cores per SM x 256 FP16 FMA per clock (A100 whitepaper, quoted on NVIDIA's
    developer forum thread 259131) = 1,024 FMAs = 2,048 FLOPs per clock per SM."""
    text = body("arithmetic-bandwidth")
    assert "1,024 fused multiply-adds, 2,048 FLOPs, per clock" in text
    assert "2,048 FLOP per clock" in body("clock-speed")


def test_vram_and_h100_quote_the_same_measured_h100_totals():
    """Measured by this project on an H100 80GB HBM3: torch total_memory 85,017,493,504 B,
    NVML 81,559 MiB; Modal's nvidia-smi table (modal-client PR 2797) also lists 81,559 MiB."""
    for term_id in ("vram", "h100"):
        text = body(term_id)
        assert "85,017,493,504 bytes" in text, term_id
        assert "81,559 MiB" in text, term_id
        assert "79.2 GiB" in text, term_id
        assert "81,090" not in text, term_id


def test_a100_81920_mib_is_attributed_to_nvidia_smi_not_pytorch():
    """Modal's table of nvidia-smi totals lists A100 80GB as 81920MiB; CUDA's totalGlobalMem
    is lower (mixbench issue 47: 81,049 MiB on an A100 80GB PCIe)."""
    for term_id in ("vram", "a100", "spec-sheet-reading"):
        assert "PyTorch reports 81,920" not in body(term_id), term_id
    assert "81,049 MiB" in body("vram")


def test_chunked_prefill_opens_with_the_definition_and_computes_intensity():
    """Intensity of a d x d layer on c tokens, 2-byte weights: c*d/(d + 2c); d = 4,096 is
    Llama-3.1-8B's hidden size (its config.json)."""
    text = body("chunked-prefill")
    assert text.startswith("**Chunked prefill** splits")
    assert "| 2,048 | 1,024 |" in text
    assert "| 128 | 120 |" in text


def test_nccl_and_all_reduce_agree_on_nvls():
    """NCCL maintainer, nccl-tests issue 212: ring busbw about 370 GB/s on 8 H100; NVLS (NVLink
    SHARP) all-reduce busbw peaks near 480 GB/s, above the 450 GB/s link rate."""
    for term_id in ("nccl", "all-reduce"):
        text = body(term_id)
        assert "NVLS" in text, term_id
        assert "480 GB/s" in text, term_id
        assert "370 GB/s" in text, term_id


def test_summaries_state_the_limits_of_their_numbers():
    """GeForce desktop cards start at 8 GB (RTX 4060); NVLink's 900 GB/s is the H100 SXM figure."""
    terms = terms_by_id()
    assert "8 to 32 GB" in terms["consumer-gpus"].summary
    assert "H100 SXM gets 900 GB/s" in terms["nvlink"].summary
    assert "600 GB/s bridge" in terms["nvlink"].summary


def test_runtime_api_can_load_libraries():
    """CUDA Runtime API 'Library Management' lists cudaLibraryLoadData and cudaLibraryGetKernel."""
    assert "`cudaLibraryLoadData`" in body("cuda-runtime-api")


def test_apple_silicon_tflops_history():
    """Apple quoted 2.6 TFLOPS for the M1 GPU (MacRumors, 2020-11-10)."""
    text = body("apple-silicon")
    assert "2.6 TFLOP/s" in text
    assert "no longer publishes" in text


@pytest.mark.parametrize("term_id", ["h100", "unified-memory", "apple-silicon", "mlx", "gpu-core"])
def test_mirrors_replaced(term_id):
    """Mirrors and secondary copies the issue named are gone from these terms' sources."""
    mirrors = ("authorea.com", "besthub.dev", "mintlify.com", "engadget.com", "neowin.net")
    assert not [u for u in terms_by_id()[term_id].sources if any(m in u for m in mirrors)]


def test_unified_memory_cites_a_page_that_states_546_gbps():
    """MacRumors' M4 Max report: 'up to 128GB of unified memory with up to 546GB/s'."""
    term = terms_by_id()["unified-memory"]
    assert "https://www.macrumors.com/2024/10/30/apple-announces-m4-max-chip/" in term.sources
    assert "546 GB/s" in term.body


def test_fp8_range_and_flash_attention_intensity_are_qualified():
    """E4M3 spans 2^-9 .. 448 (FP8 paper): log10(448 / 2^-9) = 5.4 decades."""
    assert "5.4 powers of ten" in body("fp8")
    assert "upper bounds" in body("flash-attention")


# Issue 34: the third glossary review (diagram-glossary-review-2026-11-28.md, sections 1 and 2).


def _catalog(gpu_id: str) -> dict:
    import csv
    from pathlib import Path

    path = Path(__file__).resolve().parent.parent / "simulators" / "data" / "accelerators.csv"
    with path.open(encoding="utf-8") as f:
        return next(row for row in csv.DictReader(f) if row["id"] == gpu_id)


def test_vera_rubin_compares_dense_fp4_with_the_catalog_b200():
    """Rubin's 35/50 PFLOP/s (NVIDIA's Rubin blog, Table 2) against the B200's dense FP4 from the
    catalog, never its 18 PFLOP/s sparse figure; the ridge rises, it does not 'barely move'."""
    b200 = _catalog("b200")
    dense_pf = float(b200["fp4_dense_tflops"]) / 1000
    bandwidth_tb = float(b200["memory_bandwidth_gbytes_per_s"]) / 1000
    text = body("vera-rubin")
    assert f"| FP4, dense | {dense_pf:.0f} PFLOP/s | 35 PFLOP/s" in text
    assert "18 PFLOP/s | 50" not in text and "barely moves" not in text
    low, high = 35 / dense_pf, 50 / dense_pf
    assert f"grows {low:.1f}× (training figure) to {high:.1f}×" in text
    ridge_b200 = dense_pf * 1000 / bandwidth_tb
    assert f"from {ridge_b200:,.0f} FLOP/byte on the B200 to {35000 / 22:,.0f}–{50000 / 22:,.0f}" in text
    assert 1.4 * ridge_b200 < 35000 / 22  # the ridge rises by 1.4x or more


def test_weak_sources_are_replaced_by_primary_ones():
    """Each term the review found weakly sourced now cites at least one primary page, and the
    personal blog behind the '142 kW' peak is gone with the figure."""
    from glossary.sources import is_secondary

    by_id = terms_by_id()
    for term_id in (
        "vera-rubin",
        "energy-per-token",
        "rail-optimized-topology",
        "liquid-cooling",
        "rack-power",
    ):
        assert any(not is_secondary(url) for url in by_id[term_id].sources), term_id
    for term_id in ("liquid-cooling", "rack-power"):
        assert "142" not in body(term_id)
        assert not any("manishklach" in url for url in by_id[term_id].sources)


def test_nvlink_fusion_moves_a_shard_one_way_at_900_gb_per_s():
    text = body("nvlink-fusion")
    assert f"{10 / 900 * 1000:.1f} ms" in text and "900 GB/s one way" in text


def test_zero_bubble_quotes_the_papers_own_gains():
    text = body("zero-bubble-pipeline")
    assert "up to 23%" in text and "31%" in text and "30% faster" not in text
    assert "https://arxiv.org/abs/2401.10241" in terms_by_id()["zero-bubble-pipeline"].sources


def test_rrze_latency_is_said_to_be_a_gh200_measurement():
    for term_id in ("cpu-vs-gpu", "littles-law"):
        assert "GH200" in body(term_id), term_id


def test_calibration_clip_optimum_is_the_apps_own_int4_grid():
    """Sweep fixed clips on the app's symmetric INT4 grid (simulators.quantization.format_grid),
    2**22 Gaussian samples, seed 0: the best clip and its SQNR are what the term says."""
    import numpy as np

    from simulators.quantization import format_grid

    top = float(format_grid("int4").max())
    x = np.random.default_rng(0).standard_normal(2**22).astype(np.float32)

    def sqnr(clip: float) -> float:
        step = clip / top
        q = np.clip(np.round(x / step), -top, top) * step
        return float(10 * np.log10(np.mean(x**2) / np.mean((x - q) ** 2)))

    clips = np.arange(2.0, 3.0, 0.01)
    values = [sqnr(c) for c in clips]
    best = int(np.argmax(values))
    text = body("calibration")
    assert f"about {clips[best]:.2f} standard deviations, giving {values[best]:.1f} dB" in text


def test_a_term_page_marks_its_secondary_sources():
    from glossary.sources import is_secondary
    from tests.pages import open_page

    term = terms_by_id()["nvlink-fusion"]
    at = open_page("app_pages/glossary.py", timeout=120, term=term.id)
    assert not at.exception
    sources = next(m.value for m in at.markdown if term.sources[0] in m.value)
    for line in sources.splitlines():
        url = line[line.index("](") + 2 : line.rindex(")")]
        assert line.endswith("(secondary source)") == is_secondary(url), line
    assert "(secondary source)" in sources and sources.count("(secondary source)") < len(term.sources)


# Review section 5: what a 2026 learner typed, and the term that must now answer it first.
MISSING_TERMS = [
    ("test-time compute", "test-time-compute"),
    ("reasoning tokens", "test-time-compute"),
    ("DeepSeek Sparse Attention", "sparse-attention"),
    ("NVIDIA Dynamo", "kv-aware-routing"),
    ("llm-d", "kv-aware-routing"),
    ("UALink", "ualink"),
    ("Ultra Ethernet", "ultra-ethernet"),
    ("Spectrum-X", "ultra-ethernet"),
    ("EPLB", "expert-load-balancing"),
    ("symmetric memory", "symmetric-memory"),
    ("Programmatic Dependent Launch", "programmatic-dependent-launch"),
    ("green contexts", "green-contexts"),
    ("MFMA", "amd-matrix-cores"),
    ("LMCache", "kv-cache-tiering"),
    ("Muon", "muon-optimizer"),
    ("silent data corruption", "silent-data-corruption"),
    ("power capping", "clock-locking"),
    ("co-packaged optics", "co-packaged-optics"),
    ("attention-FFN disaggregation", "attention-ffn-disaggregation"),
    ("H2O", "kv-cache-eviction"),
    ("YaRN", "rope-scaling"),
    ("DeepGEMM", "deepgemm"),
    ("PXN", "rail-optimized-topology"),
]


@pytest.mark.parametrize(("query", "term_id"), MISSING_TERMS, ids=[q for q, _ in MISSING_TERMS])
def test_a_missing_2026_term_is_found_first(query, term_id):
    assert search(query, limit=1)[0].id == term_id
