"""The hardware diagrams (charts/diagrams/hardware.py): every builder runs with its defaults and with
another GPU or input, shows the numbers of the source functions, says them in its alt text, and
draws a spec Plotly accepts."""

from __future__ import annotations

import csv
import json
import math

import plotly.graph_objects as go
import pytest

from charts.diagrams import Diagram, build, builders
from charts.diagrams import hardware as hw
from simulators import hierarchy
from simulators.hardware import get_accelerator, get_interconnect, load_catalog
from simulators.llm_memory import weight_bytes
from simulators.presets import get_model_preset
from simulators.quantization import FORMATS, format_grid
from simulators.units import si

# (diagram id, other parameters): each builder also runs with these.
OTHER = {
    "sm": {"gpu": "b200"},
    "warp-simt": {"taken_lanes": 5},
    "thread-hierarchy": {"gpu": "a100-80gb-sxm", "n_elements": 1000, "threads_per_block": 96},
    "memory-hierarchy": {"gpu": "a100-80gb-sxm"},
    "coalescing": {"strides": (1, 3, 16), "element_bytes": 2},
    "bank-conflicts": {"strides": (1, 4, 33)},
    "occupancy": {"gpu": "a100-80gb-sxm", "threads_per_block": 128, "registers_per_thread": 40},
    "hbm-stack": {"gpu": "b200"},
    "tensor-core": {"gpu": "a100-40gb-sxm", "dtype": "fp16"},
    "littles-law": {"gpu": "a100-80gb-sxm", "level": "l2"},
    "roofline-ridge": {"gpu": "b200", "dtype": "fp8"},
    "capacity-vs-bandwidth": {"gpu": "b200", "models": ("mixtral-8x7b",), "weight_format": "int4"},
    "nvlink-topology": {"gpu": "a100-80gb-sxm", "n_gpus": 4},
    "quantization-grid": {"formats": ("int8", "fp8_e5m2")},
    "tensor-vs-cuda-core": {"gpus": ("a100-80gb-sxm", "l40s"), "dtype": "bf16"},
}


def _check(diagram: Diagram, diagram_id: str) -> None:
    assert diagram.id == diagram_id
    assert diagram.alt.strip() and diagram.caption.strip()
    assert diagram.table and all(isinstance(row, dict) and row for row in diagram.table)
    json.dumps(diagram.spec)  # a plain dict, no numpy or plotly objects
    go.Figure(diagram.spec)  # Plotly validates every property
    assert diagram.spec["layout"]["height"] <= 520


def test_every_diagram_is_registered() -> None:
    assert set(hw.DIAGRAMS) == set(OTHER)
    for diagram_id in hw.DIAGRAMS:
        assert builders()[diagram_id] is hw.DIAGRAMS[diagram_id]


@pytest.mark.parametrize("diagram_id", sorted(OTHER))
def test_builds_with_defaults_and_other_inputs(diagram_id: str) -> None:
    _check(build(diagram_id), diagram_id)
    _check(hw.DIAGRAMS[diagram_id](**OTHER[diagram_id]), diagram_id)


def test_architecture_csv_rows_are_sourced() -> None:
    with hw.ARCHITECTURE_CSV.open(newline="", encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle))
    assert rows
    ids = {a.id for a in load_catalog()} | {hw.CUDA}
    for row in rows:
        assert row["id"] in ids, row
        assert float(row["value"]) > 0
        assert all(u.strip().startswith("https://") for u in row["source"].split(";")), row


def test_sm_numbers_come_from_the_data() -> None:
    for gpu in ("h100-sxm", "b200"):
        d = hw.sm_diagram(gpu)
        acc = get_accelerator(gpu)
        assert d.table[0]["Whole GPU"] == acc.sm_count
        assert str(acc.sm_count) in d.alt
        tensor = next(r for r in d.table if r["Quantity"] == "Tensor Cores")
        assert tensor["Per SM"] == hw.arch_fact(gpu, "tensor_cores_per_sm")
        assert tensor["Whole GPU"] == tensor["Per SM"] * acc.sm_count
    h100 = hw.sm_diagram()
    registers = hierarchy.get_level("h100-sxm", "registers").capacity_bytes
    row = next(r for r in h100.table if r["Quantity"] == "Register file (KiB)")
    assert row["Per SM"] == registers / 2**10
    assert "4 sub-partitions" in h100.alt and "256 KiB" in h100.alt
    assert "sub-partitions are not in the data" in hw.sm_diagram("b200").alt  # not sourced for B200


def test_warp_divergence_passes() -> None:
    d = hw.warp_simt_diagram()
    warp = hw.cuda_fact("warp_size")
    assert warp == 32
    assert [r["Active lanes"] for r in d.table] == [32, 16, 16]
    assert "2 passes" in d.alt
    uniform = hw.warp_simt_diagram(taken_lanes=warp)
    assert len(uniform.table) == 2 and "1 pass," in uniform.alt
    with pytest.raises(ValueError):
        hw.warp_simt_diagram(taken_lanes=33)


def test_thread_hierarchy_sizes() -> None:
    d = hw.thread_hierarchy_diagram(n_elements=1000, threads_per_block=96)
    assert d.table[0]["Count"] == math.ceil(1000 / 96)
    assert d.table[2]["Count"] == 3
    assert "11 blocks" in d.alt
    with pytest.raises(ValueError):
        hw.thread_hierarchy_diagram(threads_per_block=2048)


def test_memory_hierarchy_matches_the_levels() -> None:
    d = hw.memory_hierarchy_diagram("h100-sxm")
    hbm = hierarchy.get_level("h100-sxm", "device-memory")
    row = next(r for r in d.table if r["Level"] == hbm.name)
    assert row["Capacity (bytes)"] == hbm.capacity_bytes
    assert row["Latency, midpoint (ns)"] == pytest.approx(hbm.latency_s("mid") * 1e9)
    assert si(hbm.latency_s("mid"), "s") in d.alt


def test_coalescing_sector_counts() -> None:
    assert hw.sectors_per_warp_load(1) == 4  # 32 × 4 B = 128 B = four 32-byte sectors
    assert hw.sectors_per_warp_load(32) == 32
    assert hw.sectors_per_warp_load(2) == 8
    d = hw.coalescing_diagram()
    assert d.table[-1]["Used (%)"] == pytest.approx(12.5)
    assert "12.5%" in d.alt


def test_bank_conflict_ways() -> None:
    assert hw.bank_ways(1)[1] == 1
    assert hw.bank_ways(2)[1] == 2
    assert hw.bank_ways(32)[1] == 32
    assert hw.bank_ways(33)[1] == 1  # padding a row by one word removes the conflict
    d = hw.bank_conflicts_diagram()
    assert [r["Passes"] for r in d.table] == [1, 2, 32]
    assert "32 passes" in d.alt


def test_occupancy_steps() -> None:
    fam = hierarchy.family("h100-sxm")
    assert hw.resident_warps(32, 256) == fam.max_warps_per_sm  # 65,536 registers / (32 × 32) = 64 warps
    assert hw.resident_warps(128, 256) == 16
    assert hw.resident_warps(255, 256) == 8
    d = hw.occupancy_diagram()
    assert "16 warps" in d.alt and str(fam.max_warps_per_sm) in d.alt
    assert max(r["Resident warps per SM"] for r in d.table) == fam.max_warps_per_sm


def test_hbm_stacks_multiply_to_the_catalog_bandwidth() -> None:
    for gpu in ("h100-sxm", "h200-sxm", "b200"):
        acc = get_accelerator(gpu)
        d = hw.hbm_stack_diagram(gpu)
        stacks = d.table[0]["Value"]
        per_stack = d.table[2]["Value"]
        assert stacks * per_stack * 1e9 == pytest.approx(acc.memory_bandwidth_bytes_per_s)
        assert si(acc.memory_bandwidth_bytes_per_s, "B/s") in d.alt
    with pytest.raises(ValueError):
        hw.hbm_stack_diagram("rtx-4090")


def test_tensor_core_flops_per_instruction_and_clock() -> None:
    d = hw.tensor_core_diagram()
    assert d.table[0]["FLOPs per instruction"] == 2 * 16 * 8 * 16
    assert d.table[1]["FLOPs per instruction"] == 2 * 32
    acc = get_accelerator("h100-sxm")
    per_clock = acc.peak_flops("bf16") / (acc.sm_count * hw.arch_fact("h100-sxm", "tensor_clock_mhz") * 1e6)
    assert d.table[2]["FLOPs per clock per SM"] == pytest.approx(per_clock)
    assert per_clock == pytest.approx(4096, rel=0.01)  # 4 Tensor Cores × 512 FMA × 2
    assert "4,096" in d.alt


def test_littles_law_numbers() -> None:
    level = hierarchy.get_level("h100-sxm", "device-memory")
    d = hw.littles_law_diagram()
    assert d.table[0]["Warps needed per SM"] == pytest.approx(hierarchy.warps_in_flight(level, 4))
    assert si(hierarchy.bytes_in_flight(level), "B") in d.alt


def test_roofline_ridge_equals_catalog() -> None:
    for gpu, dtype in (("h100-sxm", "bf16"), ("b200", "fp8")):
        acc = get_accelerator(gpu)
        d = hw.roofline_ridge_diagram(gpu, dtype)
        assert d.table[2]["Value"] == pytest.approx(acc.ridge_point(dtype))
        assert f"{acc.ridge_point(dtype):,.0f}" in d.alt


def test_capacity_vs_bandwidth_uses_model_weights() -> None:
    d = hw.capacity_vs_bandwidth_diagram()
    gb = weight_bytes(get_model_preset("llama-3-70b").spec, "bf16") / 1e9
    assert f"{gb:.0f} GB" in d.alt
    names = {row["GPU"] for row in d.table}
    assert get_accelerator("h100-sxm").name in names


def test_nvlink_per_link_bandwidth() -> None:
    link = get_interconnect(get_accelerator("h100-sxm").interconnect_id)
    d = hw.nvlink_topology_diagram()
    assert d.table[1]["Value"] == link.links
    assert d.table[2]["Value"] * link.links == pytest.approx(link.per_direction_bytes_per_s / 1e9)
    assert si(link.per_direction_bytes_per_s, "B/s") in d.alt


def test_quantization_grid_counts() -> None:
    d = hw.quantization_grid_diagram()
    for row in d.table:
        assert row["Distinct values"] == len(format_grid(row["Format"]))
        assert row["Largest value"] == FORMATS[row["Format"]].max_finite
    assert "253 values" in d.alt  # FP8 E4M3


def test_tensor_vs_cuda_core_peaks() -> None:
    d = hw.tensor_vs_cuda_core_diagram()
    h100 = get_accelerator("h100-sxm")
    row = next(r for r in d.table if r["GPU"] == h100.name)
    assert row["FP32 CUDA cores (TFLOP/s)"] == pytest.approx(h100.fp32_flops / 1e12)
    assert row["Ratio"] == pytest.approx(h100.peak_flops("fp16") / h100.fp32_flops)
    with pytest.raises(ValueError):
        hw.tensor_vs_cuda_core_diagram(gpus=("m3-max",))
