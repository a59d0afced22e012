"""Tests for the accelerator and interconnect catalog (simulators/hardware.py).

Expected values are published figures: datasheets, /work/shared/reference/
simulator-anchors.md (SA) and ml-engineering's network chapter, cited per test.
"""

from __future__ import annotations

import csv
import dataclasses
import re
from collections.abc import Callable
from pathlib import Path

import pytest

from simulators.hardware import (
    ACCELERATORS_CSV,
    ID_PATTERN,
    INTERCONNECTS_CSV,
    URL_PATTERN,
    CatalogError,
    get_accelerator,
    get_interconnect,
    load_catalog,
    load_interconnects,
)

# ---------------------------------------------------------------- ridge points and peaks


def test_h100_sxm_bf16_ridge_point_is_295_flop_per_byte() -> None:
    """H100 SXM: 989.5 TFLOPS dense BF16 / 3.35 TB/s = 295 FLOP/byte (SA §1.2 table)."""
    assert round(get_accelerator("h100-sxm").ridge_point("bf16")) == 295


def test_a100_80gb_bf16_ridge_point_is_153_flop_per_byte() -> None:
    """A100 80GB SXM: 312 TFLOPS / 2.039 TB/s = 153 FLOP/byte (SA §1.2: 153-156 depending on 2.0 or 2.039)."""
    assert round(get_accelerator("a100-80gb-sxm").ridge_point("bf16")) == 153


def test_h100_sxm_fp8_ridge_point_is_591_flop_per_byte() -> None:
    """H100 SXM FP8: 1,979 TFLOPS dense / 3.35 TB/s = 591 (SA §1.2; Manning's "ridge ≈ 590")."""
    assert round(get_accelerator("h100-sxm").ridge_point("fp8")) == 591


def test_h200_bf16_ridge_point_is_206() -> None:
    """H200: same 989.5 TFLOPS over 4.8 TB/s = 206 FLOP/byte (SA §1.2)."""
    assert round(get_accelerator("h200-sxm").ridge_point("bf16")) == 206


def test_tpu_v5e_bf16_ridge_point_is_240() -> None:
    """TPU v5e: the scaling book's B_crit is 240 (1.97e14 / 8.2e11; SA §1.2). 819 GB/s gives 240.5."""
    assert get_accelerator("tpu-v5e").ridge_point("bf16") == pytest.approx(240, rel=0.01)


def test_h100_bf16_peak_is_the_dense_figure_not_the_sparse_one() -> None:
    """NVIDIA's H100 SXM page prints BF16 1,979 TFLOPS "with sparsity"; dense is 989.5 (ml-engineering)."""
    assert get_accelerator("h100-sxm").peak_flops("bf16") == pytest.approx(989.5e12)


def test_b200_bf16_peak_is_half_of_the_sparse_4_5_petaflops() -> None:
    """NVIDIA's HGX table lists B200 FP16/BF16 4.5 PF with sparsity, so 2,250 TFLOPS dense."""
    assert get_accelerator("b200").peak_flops("bf16") == pytest.approx(2250e12)


def test_a100_fp8_raises_a_value_error_naming_the_format() -> None:
    """A100 has no FP8 tensor cores (A100 datasheet; ml-engineering marks fp8 'X')."""
    with pytest.raises(ValueError, match=r"A100 80GB SXM.*fp8"):
        get_accelerator("a100-80gb-sxm").peak_flops("fp8")


def test_missing_hardware_format_and_missing_source_read_differently() -> None:
    """T4 lacks BF16 in hardware (T4 datasheet); A10G's BF16 exists but NVIDIA publishes no figure."""
    with pytest.raises(ValueError, match="does not support bf16 in hardware"):
        get_accelerator("t4").peak_flops("bf16")
    with pytest.raises(ValueError, match="no sourced dense bf16 peak"):
        get_accelerator("a10g").peak_flops("bf16")


def test_supports_reports_whether_a_peak_is_catalogued() -> None:
    """H100 has FP8 tensor cores (Hopper), A100 does not."""
    assert (
        get_accelerator("h100-sxm").supports("fp8"),
        get_accelerator("a100-80gb-sxm").supports("fp8"),
    ) == (
        True,
        False,
    )


def test_unknown_dtype_name_is_rejected() -> None:
    """Only the formats in DTYPES are known; 'fp6' is not one of them."""
    with pytest.raises(ValueError, match="unknown dtype 'fp6'"):
        get_accelerator("b200").peak_flops("fp6")


# ---------------------------------------------------------------- fp4 and the 2025-26 rows


def test_b200_fp4_peak_is_half_of_the_sparse_18_petaflops() -> None:
    """NVIDIA's HGX table lists B200 FP4 18 PF with sparsity; ml-engineering lists 9,000 dense."""
    assert get_accelerator("b200").peak_flops("fp4") == pytest.approx(9000e12)


def test_gb300_fp4_peak_is_15_dense_petaflops() -> None:
    """NVIDIA's Blackwell Ultra blog: "15 PetaFLOPS dense NVFP4"; Verda's per-GPU GB300 table: FP4 15 PF
    without sparsity (https://developer.nvidia.com/blog/inside-nvidia-blackwell-ultra-the-chip-powering-the-ai-factory-era)."""
    assert get_accelerator("gb300").peak_flops("fp4") == pytest.approx(15_000e12)


def test_b300_has_288_gb_at_8_tb_per_s() -> None:
    """NVIDIA's Blackwell Ultra blog: 288 GB of HBM3E per GPU at 8 TB/s."""
    b300 = get_accelerator("b300")
    assert (b300.memory_bytes, b300.memory_bandwidth_bytes_per_s) == (288e9, pytest.approx(8e12))


def test_mi325x_bf16_is_mi300x_compute_with_256_gb() -> None:
    """ml-engineering: "MI325X is the same compute as MI300X, but has more memory" (1,307.4 TFLOPS dense BF16;
    256 GB HBM3E at 6 TB/s, AMD product page as quoted in Vultr's ROCm docs)."""
    mi325x, mi300x = get_accelerator("mi325x"), get_accelerator("mi300x")
    assert (mi325x.peak_flops("bf16"), mi325x.memory_bytes, mi325x.memory_bandwidth_bytes_per_s) == (
        mi300x.peak_flops("bf16"),
        256e9,
        pytest.approx(6e12),
    )


def test_tpu7x_peaks_are_googles_table() -> None:
    """docs.cloud.google.com/tpu/docs/tpu7x: peak BF16 2307 and FP8 4614 TFLOPs per chip."""
    tpu = get_accelerator("tpu7x")
    assert (tpu.peak_flops("bf16"), tpu.peak_flops("fp8")) == (pytest.approx(2307e12), pytest.approx(4614e12))


def test_dgx_spark_fp4_is_half_of_one_sparse_petaflop() -> None:
    """NVIDIA: DGX Spark delivers "up to 1 petaFLOP of FP4 (with sparsity)", so 500 TFLOPS dense; 273 GB/s
    (https://ai-infrastructure.net/dgx-spark/, citing NVIDIA's product page)."""
    spark = get_accelerator("dgx-spark")
    assert (spark.peak_flops("fp4"), spark.memory_bandwidth_bytes_per_s) == (
        pytest.approx(500e12),
        pytest.approx(273e9),
    )


def test_fp4_missing_in_hardware_and_missing_source_read_differently() -> None:
    """Hopper has no FP4 tensor cores (ml-engineering marks fp4 'X'); Google gives no FP4 rate for TPU7x."""
    with pytest.raises(ValueError, match=r"H100 SXM.*does not support fp4 in hardware"):
        get_accelerator("h100-sxm").peak_flops("fp4")
    with pytest.raises(ValueError, match=r"TPU7x.*no sourced dense fp4 peak"):
        get_accelerator("tpu7x").peak_flops("fp4")


# ---------------------------------------------------------------- capacity units


def test_tpu_v5p_95_gib_is_102_gb() -> None:
    """Google's v5p table: "HBM capacity per chip (GiB) 95". 95 x 2**30 bytes = 102.0e9 bytes, not 95e9."""
    v5p = get_accelerator("tpu-v5p")
    assert (v5p.memory_unit, v5p.memory_bytes, round(v5p.memory_bytes / 1e9, 1), v5p.memory_label) == (
        "GiB",
        95 * 2**30,
        102.0,
        "95 GiB (102.0 GB)",
    )


def test_tpu7x_192_gib_and_v6e_32_gib() -> None:
    """Google's TPU7x comparison table states HBM per chip in GiB: v6e 32, TPU7x 192."""
    assert (get_accelerator("tpu-v6e").memory_bytes, get_accelerator("tpu7x").memory_bytes) == (
        32 * 2**30,
        192 * 2**30,
    )


def test_gb_is_the_default_unit_and_its_label_is_unchanged() -> None:
    """An empty memory_unit reads as decimal GB: H100's "80GB" label stays 80e9 bytes and reads "80 GB"."""
    h100 = get_accelerator("h100-sxm")
    assert (h100.memory_unit, h100.memory_bytes, h100.memory_label) == ("GB", 80e9, "80 GB")


def test_int8_is_in_ops_per_second() -> None:
    """T4 datasheet: INT8 130 TOPS (Turing has no sparsity, so dense)."""
    assert get_accelerator("t4").peak_flops("int8") == pytest.approx(130e12)


# ---------------------------------------------------------------- per-device convention


@pytest.mark.parametrize(
    ("accelerator_id", "board_gb"),
    [("mi250x", 128), ("k80", 24), ("m60", 16)],
)
def test_dual_die_boards_give_half_the_board_memory_per_device(accelerator_id: str, board_gb: int) -> None:
    """MI250X 2x64 GB (AMD), K80 2x12 GB (AWS p2 'GPU' = one GK210), M60 2x8 GB (M60 datasheet)."""
    assert get_accelerator(accelerator_id).memory_bytes == board_gb * 1e9 / 2


def test_dual_die_bandwidth_and_flops_are_per_device_too() -> None:
    """M60 datasheet totals: 2 x 160.4 GB/s and 2 x 4.825 TFLOPS FP32 (TechPowerUp per-GPU figures)."""
    m60 = get_accelerator("m60")
    assert (m60.memory_bandwidth_bytes_per_s, m60.peak_flops("fp32")) == (
        pytest.approx(160.4e9),
        pytest.approx(4.825e12),
    )


def test_nvidia_80gb_label_is_smaller_than_what_torch_reports() -> None:
    """torch reports total_memory = 81,920 MiB for A100 80GB: the "80GB" label is 80 GiB, not 80e9 bytes."""
    assert get_accelerator("a100-80gb-sxm").memory_bytes < 81_920 * 2**20


def test_host_cpu_bandwidth_is_derived_from_channels_and_transfer_rate() -> None:
    """Tom's Hardware: twelve 64-bit DDR5-4800 channels give 460.8 GB/s per Genoa socket."""
    assert get_accelerator("epyc-9004-genoa").memory_bandwidth_bytes_per_s == pytest.approx(460.8e9)


def test_l2_is_stored_in_bytes_from_mib() -> None:
    """deviceQuery on an L40S reports "L2 Cache Size: 100663296 bytes" (96 MiB)."""
    assert get_accelerator("l40s").l2_bytes == 100_663_296


# ---------------------------------------------------------------- catalog integrity


def test_catalog_keeps_every_reference_row_plus_host_cpus() -> None:
    """The reference CSV has 31 accelerators; the catalog adds three host CPUs, nine 2025-26 parts
    and nine consumer GPUs (RTX 3060 12GB to RX 7900 XTX, tests/test_consumer_gpus.py)."""
    catalog = load_catalog()
    assert (len(catalog), sum(acc.kind == "cpu" for acc in catalog)) == (52, 3)


def test_every_row_has_at_least_one_http_source() -> None:
    """Every figure must be traceable to a page that was read."""
    assert all(acc.source and all(URL_PATTERN.match(url) for url in acc.source) for acc in load_catalog())


def test_ids_are_unique_slugs() -> None:
    """Ids appear in URLs (?gpu=h100-sxm), so they must be unique lowercase slugs."""
    ids = [acc.id for acc in load_catalog()]
    assert len(set(ids)) == len(ids) and all(ID_PATTERN.match(i) for i in ids)


def test_linked_interconnect_ids_exist() -> None:
    """interconnect_id and host_link_id point into interconnects.csv."""
    known = {link.id for link in load_interconnects()}
    used = {i for acc in load_catalog() for i in (acc.interconnect_id, acc.host_link_id) if i}
    assert used <= known


def test_load_catalog_returns_a_new_list_of_the_same_cached_records() -> None:
    """Callers may sort or filter the list; the records themselves are shared and frozen."""
    first, second = load_catalog(), load_catalog()
    assert first is not second and first[0] is second[0]


def test_records_are_frozen() -> None:
    """A cached record must never be mutated by a page."""
    with pytest.raises(dataclasses.FrozenInstanceError):
        get_accelerator("h100-sxm").memory_bytes = 1  # type: ignore[misc]


def test_get_accelerator_accepts_the_name_in_any_case() -> None:
    """Ids and names both resolve; 'h100 sxm (80gb)' is the catalog name of h100-sxm."""
    assert get_accelerator("h100 sxm (80gb)").id == "h100-sxm"


def test_unknown_accelerator_lists_close_ids() -> None:
    """A typo should point at the right id."""
    with pytest.raises(ValueError, match="h100-sxm"):
        get_accelerator("h100-sxn")


# ---------------------------------------------------------------- interconnect units


def test_pcie_gen5_x16_is_64_gb_per_s_each_way() -> None:
    """NVIDIA prints "PCIe Gen5 128 GB/s" for H100: both directions added, 64 GB/s each way."""
    assert get_interconnect("pcie-gen5-x16").per_direction_bytes_per_s == pytest.approx(64e9)


def test_pcie_gen5_x16_payload_rate_after_encoding_is_63_gb_per_s() -> None:
    """32 GT/s x 16 lanes x 128/130 / 8 = 63.0 GB/s (hpc-notes PCIe table; ml-engineering: 63 GBps)."""
    assert get_interconnect("pcie-gen5-x16").encoded_per_direction_bytes_per_s == pytest.approx(
        63.0e9, rel=1e-3
    )


def test_nvlink4_900_bidirectional_is_450_each_way() -> None:
    """ml-engineering network chapter: NVLink 4 = 18 links, 450 GBps unidirectional, 900 GBps duplex."""
    nvlink4 = get_interconnect("nvlink-4")
    assert (nvlink4.bidirectional_bytes_per_s, nvlink4.per_direction_bytes_per_s) == (
        pytest.approx(900e9),
        pytest.approx(450e9),
    )


def test_infiniband_ndr_400_gbit_is_50_gbyte_per_s() -> None:
    """ml-engineering: NDR 4x = 400 Gbps per direction. Bits, not bytes: 400 / 8 = 50 GB/s."""
    assert get_interconnect("ib-ndr-4x").per_direction_bytes_per_s == pytest.approx(50e9)


@pytest.mark.parametrize(
    ("link_id", "fraction"),
    [("pcie-gen3-x16", 0.78), ("pcie-gen5-x16", 0.88), ("nvlink-3", 0.91), ("nvlink-4", 0.83)],
)
def test_measured_fraction_of_spec(link_id: str, fraction: float) -> None:
    """SA §2.2 measured / spec one way: PCIe 3 12.35/15.75 (78%), PCIe 5 55.43/63 (88%),
    NVLink 3 274/300 (91%), NVLink 4 376/450 (83%)."""
    assert get_interconnect(link_id).measured_fraction == pytest.approx(fraction, abs=0.01)


def test_infiniband_hdr_latency_is_in_seconds() -> None:
    """ml-engineering: HDR latency 0.6 us."""
    assert get_interconnect("ib-hdr-4x").latency_s == pytest.approx(0.6e-6)


# ---------------------------------------------------------------- malformed files


def _write_modified(
    source: Path, target: Path, change: Callable[[list[dict[str, str]]], list[dict[str, str]]]
) -> Path:
    with source.open(newline="", encoding="utf-8") as handle:
        reader = csv.DictReader(handle)
        fieldnames = list(reader.fieldnames or [])
        rows = list(reader)
    rows = change(rows)
    with target.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.DictWriter(handle, fieldnames=fieldnames)
        writer.writeheader()
        writer.writerows(rows)
    return target


def _set_cell(row_id: str, column: str, value: str) -> Callable[[list[dict[str, str]]], list[dict[str, str]]]:
    def change(rows: list[dict[str, str]]) -> list[dict[str, str]]:
        for row in rows:
            if row["id"] == row_id:
                row[column] = value
        return rows

    return change


@pytest.mark.parametrize(
    ("row_id", "column", "value", "problem"),
    [
        ("h100-sxm", "memory_gb", "eighty", "is not a number"),
        ("a100-80gb-sxm", "memory_bandwidth_gbytes_per_s", "-2039", "must be a positive number"),
        ("l4", "sm_cu_count", "58.5", "whole number"),
        ("t4", "source", "NVIDIA T4 datasheet", "http(s) URL"),
        ("a100-40gb-sxm", "fp8_dense_tflops", "624", "listed in unsupported_dtypes"),
        ("m60", "sm_cu_count", "33", "does not divide"),
        ("ryzen-9-7950x", "memory_mt_per_s", "", "go together"),
        ("b200", "kind", "superchip", "is not one of"),
        ("rtx-4090", "interconnect_id", "NVLink 4", "lowercase slug"),
        ("tpu-v5p", "memory_unit", "GiBytes", "is not one of GB, GiB"),
        ("b300", "fp4_dense_tflops", "fifteen", "is not a number"),
        ("h100-sxm", "fp4_dense_tflops", "1979", "listed in unsupported_dtypes"),
    ],
)
def test_malformed_cell_names_the_row_and_column(
    tmp_path: Path, row_id: str, column: str, value: str, problem: str
) -> None:
    """Each broken cell fails loading with a message naming its row id and its column."""
    path = _write_modified(ACCELERATORS_CSV, tmp_path / "accelerators.csv", _set_cell(row_id, column, value))
    with pytest.raises(CatalogError, match=rf"row '{row_id}': column '{column}': .*{re.escape(problem)}"):
        load_catalog(path)


def test_duplicate_id_is_reported(tmp_path: Path) -> None:
    """Two rows sharing an id would make ?gpu= links ambiguous."""
    path = _write_modified(
        ACCELERATORS_CSV, tmp_path / "accelerators.csv", _set_cell("h100-pcie", "id", "h100-sxm")
    )
    with pytest.raises(CatalogError, match=r"row 'h100-sxm': column 'id': duplicate id"):
        load_catalog(path)


def test_bad_id_shape_is_reported(tmp_path: Path) -> None:
    """Ids must be lowercase slugs."""
    path = _write_modified(ACCELERATORS_CSV, tmp_path / "accelerators.csv", _set_cell("l4", "id", "L4 GPU"))
    with pytest.raises(CatalogError, match=r"row 'L4 GPU': column 'id': .*lowercase slug"):
        load_catalog(path)


def test_missing_column_is_reported(tmp_path: Path) -> None:
    """A header without memory_gb is rejected before any row is read."""
    text = ACCELERATORS_CSV.read_text(encoding="utf-8").replace(",memory_gb,", ",memory_size,", 1)
    path = tmp_path / "accelerators.csv"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(CatalogError, match=r"row 'header': column 'memory_gb': column is missing"):
        load_catalog(path)


def test_malformed_interconnect_unit_is_reported(tmp_path: Path) -> None:
    """Units must say bits (Gb/s) or bytes (GB/s) explicitly."""
    path = _write_modified(
        INTERCONNECTS_CSV, tmp_path / "interconnects.csv", _set_cell("eth-400g", "published_unit", "Gbps")
    )
    with pytest.raises(CatalogError, match=r"row 'eth-400g': column 'published_unit'"):
        load_interconnects(path)


def test_unmodified_copy_loads(tmp_path: Path) -> None:
    """The path parameter reads the same data as the default file."""
    path = _write_modified(ACCELERATORS_CSV, tmp_path / "accelerators.csv", lambda rows: rows)
    assert [acc.id for acc in load_catalog(path)] == [acc.id for acc in load_catalog()]
