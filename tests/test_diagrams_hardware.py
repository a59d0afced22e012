"""The hardware diagrams (charts/diagrams/gpu_hardware.py, programming_model.py,
memory_hierarchy.py, performance.py, numeric_formats.py, and the NVLink node of parallelism.py):
every builder runs with its defaults and with another GPU or input, shows the numbers of the
source functions, says them in its alt text, and draws a spec Plotly accepts."""

from __future__ import annotations

import csv
import json
import math

import plotly.graph_objects as go
import pytest

from charts.diagrams import (
    Diagram,
    build,
    builders,
    gpu_choices,
    gpu_hardware,
    memory_hierarchy,
    numeric_formats,
    parallelism,
    performance,
    programming_model,
    schematic,
    takes_gpu,
)
from simulators import hierarchy
from simulators.hardware import get_accelerator, get_interconnect, load_catalog
from simulators.llm_memory import weight_bytes
from simulators.parallelism import link_efficiency
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
    "tensor-core": {"gpu": "a100-40gb-sxm"},
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
    """Each subject module's diagrams are in the one registry; this file covers every hardware one."""
    modules = (gpu_hardware, programming_model, memory_hierarchy, performance, numeric_formats)
    registered = {i: b for module in modules for i, b in module.DIAGRAMS.items()}
    registered["nvlink-topology"] = parallelism.DIAGRAMS["nvlink-topology"]
    assert set(registered) == set(OTHER)
    for diagram_id, builder in registered.items():
        assert builders()[diagram_id] is builder


@pytest.mark.parametrize("diagram_id", sorted(OTHER))
def test_builds_with_defaults_and_other_inputs(diagram_id: str) -> None:
    _check(build(diagram_id), diagram_id)
    _check(builders()[diagram_id](**OTHER[diagram_id]), diagram_id)


def test_architecture_csv_rows_are_sourced() -> None:
    with schematic.ARCHITECTURE_CSV.open(newline="", encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle))
    assert rows
    ids = {a.id for a in load_catalog()} | {schematic.CUDA}
    for row in rows:
        # per accelerator, CUDA definitions, or a Tensor Core generation's instruction (sm_70 ...)
        assert row["id"] in ids or row["id"].startswith("sm_"), row
        assert float(row["value"]) > 0
        assert all(u.strip().startswith("https://") for u in row["source"].split(";")), row


def test_sm_numbers_come_from_the_data() -> None:
    for gpu in ("h100-sxm", "b200"):
        d = gpu_hardware.sm_diagram(gpu)
        acc = get_accelerator(gpu)
        assert d.table[0]["Whole GPU"] == acc.sm_count
        assert str(acc.sm_count) in d.alt
        tensor = next(r for r in d.table if r["Quantity"] == "Tensor Cores")
        assert tensor["Per SM"] == schematic.arch_fact(gpu, "tensor_cores_per_sm")
        assert tensor["Whole GPU"] == tensor["Per SM"] * acc.sm_count
    h100 = gpu_hardware.sm_diagram()
    registers = hierarchy.get_level("h100-sxm", "registers").capacity_bytes
    row = next(r for r in h100.table if r["Quantity"] == "Register file (KiB)")
    assert row["Per SM"] == registers / 2**10
    assert "4 sub-partitions" in h100.alt and "256 KiB" in h100.alt
    b200 = gpu_hardware.sm_diagram("b200")
    assert "4 sub-partitions" in b200.alt and "256 KiB of Tensor Memory" in b200.alt
    assert next(r for r in b200.table if r["Quantity"] == "Tensor Memory (KiB)")["Per SM"] == 256


@pytest.mark.parametrize("gpu", ["tpu-v4", "mi300x", "ryzen-9-7950x", "m3-max"])
def test_nvidia_structures_are_not_drawn_for_other_chips(gpu: str) -> None:
    """An SM, a warp's thread hierarchy, an mma.sync tile and register occupancy are NVIDIA's: a
    TPU, an AMD compute unit, a CPU core or an Apple GPU core is refused, not drawn as one
    (diagram review 2026-11, §2.1)."""
    for builder in (
        gpu_hardware.sm_diagram,
        programming_model.thread_hierarchy_diagram,
        gpu_hardware.tensor_core_diagram,
        performance.occupancy_diagram,
    ):
        with pytest.raises(ValueError, match="not NVIDIA GPUs"):
            builder(gpu=gpu)


def test_the_picker_offers_only_what_draws_and_says_who_is_left_out() -> None:
    """Every accelerator a diagram's picker offers builds; the ones it leaves out are counted under
    their reasons in ONE line, never listed by name (issue 34: the HBM term ended in ~40 names)."""
    catalog = load_catalog()
    for diagram_id in builders():
        if not takes_gpu(diagram_id):
            continue
        choices = gpu_choices(diagram_id)
        for gpu in choices.ids:
            builders()[diagram_id](gpu=gpu)
        left = [name for names in choices.left_out.values() for name in names]
        assert len(choices.ids) + len(left) == len(catalog)
        note = choices.note()
        if not left:
            assert note == ""
            continue
        assert "\n" not in note and note.startswith(
            f"Not offered: {len(left)} of {len(catalog)} accelerators"
        )
        assert not any(name in note for name in left), note  # counts and reasons, not a roll call
        assert all(f": {len(names)}" in note for names in choices.left_out.values())
        assert "'s memory" not in note  # a name cut out of a reason leaves no stray possessive
    sm = gpu_choices("sm")
    assert "b200" in sm.ids and "a100-80gb-sxm" in sm.ids
    assert not {"tpu-v4", "mi300x", "ryzen-9-7950x"} & set(sm.ids)
    assert "not NVIDIA GPUs: 20" in sm.note()  # 19, and the Radeon RX 7900 XTX
    hbm = gpu_choices("hbm-stack")
    left = 52 - len(hbm.ids)
    assert hbm.note() == f"Not offered: {left} of 52 accelerators (no sourced HBM stack count: {left})."


def test_warp_divergence_passes() -> None:
    d = programming_model.warp_simt_diagram()
    warp = schematic.cuda_fact("warp_size")
    assert warp == 32
    assert [r["Active lanes"] for r in d.table] == [32, 16, 16]
    assert "2 passes" in d.alt
    uniform = programming_model.warp_simt_diagram(taken_lanes=warp)
    assert len(uniform.table) == 2 and "1 pass," in uniform.alt
    with pytest.raises(ValueError):
        programming_model.warp_simt_diagram(taken_lanes=33)


def test_thread_hierarchy_sizes() -> None:
    d = programming_model.thread_hierarchy_diagram(n_elements=1000, threads_per_block=96)
    assert d.table[0]["Count"] == math.ceil(1000 / 96)
    assert d.table[2]["Count"] == 3
    assert "11 blocks" in d.alt
    with pytest.raises(ValueError):
        programming_model.thread_hierarchy_diagram(threads_per_block=2048)


def test_memory_hierarchy_matches_the_levels() -> None:
    d = memory_hierarchy.memory_hierarchy_diagram("h100-sxm")
    hbm = hierarchy.get_level("h100-sxm", "device-memory")
    row = next(r for r in d.table if r["Level"] == hbm.name)
    assert row["Capacity (bytes)"] == hbm.capacity_bytes
    assert row["Latency, midpoint (ns)"] == pytest.approx(hbm.latency_s("mid") * 1e9)
    assert si(hbm.latency_s("mid"), "s") in d.alt


def test_l1_and_shared_memory_are_one_rung() -> None:
    """Since Volta, L1 and shared memory are one SRAM per SM (the H100's 256 KiB, up to 228 KiB of it
    shared: CUDA C++ Programming Guide): one rung with both latencies, not shared memory below L1."""
    d = memory_hierarchy.memory_hierarchy_diagram("h100-sxm")
    rungs = [r for r in d.table if r["Level"].startswith("L1 cache / shared memory")]
    assert len(rungs) == 2  # the L1-hit and shared-memory latencies of the one rung
    assert {r["Capacity (bytes)"] for r in rungs} == {256 * 2**10}
    assert {r["Shared-memory carve-out, max (bytes)"] for r in rungs} == {228 * 2**10}
    assert not any(r["Level"] == "Shared memory" for r in d.table)
    assert "not sourced" not in json.dumps(d.spec)  # a missing value is a dash, as the caption says


def test_memory_hierarchy_widths_are_whole_gpu_sizes_and_the_caption_follows_the_part() -> None:
    """Review 2026-11-28 §3.1: rung widths in one scope (per-SM levels times the SMs), the caption's
    L2 from the part (not always 50 MiB), an inversion said (V100: 20 MiB of registers outweigh
    10 MiB of L1), the headline against an L1 hit (not an FMA's issue latency), host memory's figure
    a copy's round trip, and no ladder of dashes (M3 Max) or without latencies (H200) offered."""
    v100 = memory_hierarchy.memory_hierarchy_diagram("v100-32gb-sxm2")
    fam = hierarchy.family("v100-32gb-sxm2")
    widths = {}
    for shape, row in zip(v100.spec["layout"]["shapes"], ("registers", "l1", "l2", "hbm"), strict=False):
        widths[row] = shape["x1"] - shape["x0"]
    registers = hierarchy.get_level("v100-32gb-sxm2", "registers").capacity_bytes * fam.sm_count
    l1 = hierarchy.get_level("v100-32gb-sxm2", "l1").capacity_bytes * fam.sm_count
    l2 = hierarchy.get_level("v100-32gb-sxm2", "l2").capacity_bytes
    assert registers > l1 > l2  # 20 MiB > 10 MiB > 6 MiB over the whole GPU
    assert widths["registers"] > widths["l1"] > widths["l2"] and widths["hbm"] > widths["registers"]
    assert "not every step holds more" in v100.caption and "Each step down holds more" not in v100.caption
    assert "6 MiB L2" in v100.caption and "50 MiB" not in v100.caption
    assert "slower than an L1 cache hit" in v100.spec["layout"]["title"]["text"]
    assert "copy round trip 30 µs" in v100.alt and "FMA issue" in v100.alt
    h100 = memory_hierarchy.memory_hierarchy_diagram("h100-sxm")
    assert "Each step down holds more" in h100.caption and "50 MiB L2" in h100.caption
    for gpu in ("m3-max", "h200-sxm"):
        with pytest.raises(ValueError):
            memory_hierarchy.memory_hierarchy_diagram(gpu)
        assert gpu not in gpu_choices("memory-hierarchy").ids


def test_bank_conflict_legend_names_the_colour_drawn() -> None:
    """The cells are tinted vermillion, which reads orange: the subtitle says orange, not red."""
    d = memory_hierarchy.bank_conflicts_diagram()
    subtitle = d.spec["layout"]["title"]["text"]
    assert "Orange" in subtitle and "Red" not in subtitle
    vermillion = schematic._tint(schematic.VERMILLION, 1.0).rsplit(",", 1)[0]  # "rgba(213,94,0"
    assert any(str(s.get("fillcolor", "")).startswith(vermillion) for s in d.spec["layout"]["shapes"])


def test_hbm_sites_are_drawn_alike_with_the_unused_one_empty() -> None:
    """H100: 6 sites, 5 stacks: 3 + 3 boxes of one height, the sixth dashed and empty (review: 3 + 2
    boxes of different heights looked like different stacks); H200's stacks are 24 GB as built."""
    d = memory_hierarchy.hbm_stack_diagram("h100-sxm")
    boxes = [s for s in d.spec["layout"]["shapes"] if s["type"] == "rect" and s["x0"] in (3, 73)]
    assert len(boxes) == 6
    assert len({round(b["y1"] - b["y0"], 6) for b in boxes}) == 1
    assert sum(1 for b in boxes if b["line"].get("dash") == "dash") == 1
    assert "6 sites on the package, 1 unused" in d.alt
    h200 = {r["Quantity"]: r["Value"] for r in memory_hierarchy.hbm_stack_diagram("h200-sxm").table}
    assert h200["One stack as built (sourced)"] == 24 and h200["HBM stacks"] == 6


def test_coalescing_sector_counts() -> None:
    assert memory_hierarchy.sectors_per_warp_load(1) == 4  # 32 × 4 B = 128 B = four 32-byte sectors
    assert memory_hierarchy.sectors_per_warp_load(32) == 32
    assert memory_hierarchy.sectors_per_warp_load(2) == 8
    d = memory_hierarchy.coalescing_diagram()
    assert d.table[-1]["Used (%)"] == pytest.approx(12.5)
    assert "12.5%" in d.alt


def test_bank_conflict_ways() -> None:
    assert memory_hierarchy.bank_ways(1)[1] == 1
    assert memory_hierarchy.bank_ways(2)[1] == 2
    assert memory_hierarchy.bank_ways(32)[1] == 32
    assert memory_hierarchy.bank_ways(33)[1] == 1  # padding a row by one word removes the conflict
    d = memory_hierarchy.bank_conflicts_diagram()
    assert [r["Passes"] for r in d.table] == [1, 2, 32]
    assert "32 passes" in d.alt


def test_occupancy_steps() -> None:
    fam = hierarchy.family("h100-sxm")
    # 65,536 registers / (32 × 32) = 64 warps
    assert performance.resident_warps(32, 256) == fam.max_warps_per_sm
    assert performance.resident_warps(128, 256) == 16
    assert performance.resident_warps(255, 256) == 8
    d = performance.occupancy_diagram()
    assert "16 warps" in d.alt and str(fam.max_warps_per_sm) in d.alt
    assert max(r["Resident warps per SM"] for r in d.table) == fam.max_warps_per_sm


def test_hbm_stacks_multiply_to_the_catalog_bandwidth() -> None:
    for gpu in ("h100-sxm", "h200-sxm", "b200"):
        acc = get_accelerator(gpu)
        d = memory_hierarchy.hbm_stack_diagram(gpu)
        stacks = d.table[0]["Value"]
        per_stack = d.table[2]["Value"]
        assert stacks * per_stack * 1e9 == pytest.approx(acc.memory_bandwidth_bytes_per_s)
        assert si(acc.memory_bandwidth_bytes_per_s, "B/s") in d.alt
    with pytest.raises(ValueError):
        memory_hierarchy.hbm_stack_diagram("rtx-4090")


def test_tensor_core_flops_per_instruction_and_clock() -> None:
    d = gpu_hardware.tensor_core_diagram("a100-80gb-sxm")
    assert d.table[0]["FLOPs per instruction"] == 2 * 16 * 8 * 16
    assert d.table[1]["FLOPs per instruction"] == 2 * 32
    h100 = gpu_hardware.tensor_core_diagram()
    assert h100.table[0]["FLOPs per instruction"] == 2 * 64 * 256 * 16  # wgmma m64n256k16
    assert h100.table[1]["FLOPs per instruction"] == 2 * 128  # the warpgroup's 128 threads
    acc = get_accelerator("h100-sxm")
    clock_hz = schematic.arch_fact("h100-sxm", "tensor_clock_mhz") * 1e6
    per_clock = acc.peak_flops("bf16") / (acc.sm_count * clock_hz)
    assert h100.table[2]["FLOPs per clock per SM"] == pytest.approx(per_clock)
    assert per_clock == pytest.approx(4096, rel=0.01)  # 4 Tensor Cores × 512 FMA × 2
    assert "4,096" in h100.alt


# compute capability -> (instruction, m, n, k, products per instruction): PTX ISA / CUTLASS, as sourced
# in gpu_architecture.csv (issue 34 item 2).
INSTRUCTIONS = {
    "v100-32gb-sxm2": ("mma.sync m8n8k4", 8, 8, 4, 4),
    "t4": ("mma.sync m16n8k8", 16, 8, 8, 1),
    "quadro-rtx-8000": ("mma.sync m16n8k8", 16, 8, 8, 1),
    "a100-80gb-sxm": ("mma.sync m16n8k16", 16, 8, 16, 1),
    "rtx-4090": ("mma.sync m16n8k16", 16, 8, 16, 1),
    "rtx-5090": ("mma.sync m16n8k16", 16, 8, 16, 1),
    "h100-sxm": ("wgmma.mma_async m64n256k16", 64, 256, 16, 1),
    "gh200-96gb": ("wgmma.mma_async m64n256k16", 64, 256, 16, 1),
    "b200": ("tcgen05.mma m128n256k16", 128, 256, 16, 1),
    "gb300": ("tcgen05.mma m128n256k16", 128, 256, 16, 1),
}


@pytest.mark.parametrize("gpu", sorted(INSTRUCTIONS))
def test_tensor_core_draws_the_parts_own_instruction(gpu: str) -> None:
    """V100 m8n8k4 (4 per warp), Turing m16n8k8, Ampere/Ada/RTX Blackwell m16n8k16, Hopper wgmma,
    B200/B300 tcgen05: the title, alt, table and the drawn tiles follow the picked part."""
    name, m, n, k, mmas = INSTRUCTIONS[gpu]
    d = gpu_hardware.tensor_core_diagram(gpu)
    assert name in d.alt and name in d.table[0]["Operation"]
    assert d.table[0]["FLOPs per instruction"] == 2 * m * n * k * mmas
    a, b, c = d.spec["layout"]["shapes"][:3]
    width = {key: s["x1"] - s["x0"] for key, s in zip("abc", (a, b, c), strict=True)}
    height = {key: s["y1"] - s["y0"] for key, s in zip("abc", (a, b, c), strict=True)}
    # to aspect: A is m tall and k wide, B k tall and n wide, C m tall and n wide, one unit per element
    unit = width["a"] / k
    assert height["a"] == pytest.approx(m * unit) and width["b"] == pytest.approx(n * unit)
    assert height["b"] == pytest.approx(k * unit) and height["c"] == pytest.approx(m * unit)
    assert d.spec["layout"]["yaxis"]["scaleanchor"] == "x"


@pytest.mark.parametrize("gpu", ["k80", "m60"])
def test_tensor_core_is_not_offered_without_tensor_cores(gpu: str) -> None:
    with pytest.raises(ValueError, match="no Tensor Cores"):
        gpu_hardware.tensor_core_diagram(gpu)
    assert gpu not in gpu_choices("tensor-core").ids
    assert "no Tensor Cores: 2" in gpu_choices("tensor-core").note()


def test_littles_law_numbers() -> None:
    level = hierarchy.get_level("h100-sxm", "device-memory")
    d = performance.littles_law_diagram()
    assert d.table[0]["Warps needed per SM"] == pytest.approx(hierarchy.warps_in_flight(level, 4))
    assert si(hierarchy.bytes_in_flight(level), "B") in d.alt


def test_roofline_ridge_equals_catalog() -> None:
    for gpu, dtype in (("h100-sxm", "bf16"), ("b200", "fp8")):
        acc = get_accelerator(gpu)
        d = performance.roofline_ridge_diagram(gpu, dtype)
        assert d.table[2]["Value"] == pytest.approx(acc.ridge_point(dtype))
        assert f"{acc.ridge_point(dtype):,.0f}" in d.alt


def test_capacity_vs_bandwidth_uses_model_weights() -> None:
    d = performance.capacity_vs_bandwidth_diagram()
    gb = weight_bytes(get_model_preset("llama-3-70b").spec, "bf16") / 1e9
    assert f"{gb:.0f} GB" in d.alt
    names = {row["GPU"] for row in d.table}
    assert get_accelerator("h100-sxm").name in names


def test_nvlink_per_link_bandwidth() -> None:
    link = get_interconnect(get_accelerator("h100-sxm").interconnect_id)
    d = parallelism.nvlink_topology_diagram()
    assert d.table[1]["Value"] == link.links
    assert d.table[2]["Value"] * link.links == pytest.approx(link.per_direction_bytes_per_s / 1e9)
    assert si(link.per_direction_bytes_per_s, "B/s") in d.alt


def test_quantization_grid_counts() -> None:
    d = numeric_formats.quantization_grid_diagram()
    for row in d.table:
        assert row["Distinct values"] == len(format_grid(row["Format"]))
        assert row["Largest value"] == FORMATS[row["Format"]].max_finite
    assert "253 values" in d.alt  # FP8 E4M3


def test_tensor_vs_cuda_core_peaks() -> None:
    d = gpu_hardware.tensor_vs_cuda_core_diagram()
    h100 = get_accelerator("h100-sxm")
    row = next(r for r in d.table if r["GPU"] == h100.name)
    assert row["FP32 CUDA cores (TFLOP/s)"] == pytest.approx(h100.fp32_flops / 1e12)
    assert row["Ratio"] == pytest.approx(h100.peak_flops("fp16") / h100.fp32_flops)
    with pytest.raises(ValueError):
        gpu_hardware.tensor_vs_cuda_core_diagram(gpus=("m3-max",))
    # A linear axis from zero, so bar length is proportional (a log axis made B200's 30× look smaller
    # than V100's 8×: diagram review 2026-11, §2.4).
    assert d.spec["layout"]["xaxis"].get("type") in (None, "linear")
    assert d.spec["layout"]["xaxis"]["range"][0] == 0


def test_b200_is_two_dies_with_four_stacks_each() -> None:
    """B200: two dies joined by NV-HBI (10 TB/s), each with four 24 GB HBM3E stacks (TweakTown,
    GTC 2024, as in gpu_architecture.csv)."""
    d = memory_hierarchy.hbm_stack_diagram("b200")
    rows = {r["Quantity"]: r["Value"] for r in d.table}
    assert rows["GPU dies"] == 2 and rows["HBM stacks"] == 8
    assert rows["Die-to-die link (NV-HBI)"] == 10_000
    assert rows["One stack as built (sourced)"] == 24
    assert "2 dies (4 each, joined by NV-HBI)" in d.alt


# ---------------------------------------------------------------------------------------------
# Every picker choice of every hardware diagram (issue 34, acceptance): each offered part is drawn
# from its own data (the figure's numbers equal that part's catalog or sourced values), nothing
# offered crashes, and what cannot be drawn is not offered.
# ---------------------------------------------------------------------------------------------


def _rate_gb(link_id: str) -> float:
    link = get_interconnect(link_id)
    return link.payload_per_direction_bytes_per_s * link_efficiency(link) / 1e9


def _expect_sm(d: Diagram, acc) -> None:
    assert d.table[0]["Whole GPU"] == acc.sm_count and f"{acc.sm_count} SMs" in d.alt


def _expect_thread_hierarchy(d: Diagram, acc) -> None:
    cc = schematic.arch_fact(acc.id, "compute_capability")
    clusters = "clusters" in d.alt
    if cc is not None:
        assert clusters == (cc >= 9.0)  # thread block clusters from compute capability 9.0
    sm = d.table[-1]
    try:
        limit = hierarchy.family(acc.id).max_warps_per_sm
    except KeyError:
        limit = None
    assert sm["Count"] == limit


def _expect_tensor_core(d: Diagram, acc) -> None:
    ins = gpu_hardware.tensor_core_instruction(acc.id)
    assert d.table[0]["FLOPs per instruction"] == 2 * ins.m * ins.n * ins.k * ins.mmas
    assert ins.name in d.alt and acc.name in d.alt


def _expect_flash_attention(d: Diagram, acc) -> None:
    for row in d.table[:2]:
        expected = row["total bytes"] / acc.memory_bandwidth_bytes_per_s
        assert row["time at memory bandwidth (s)"] == pytest.approx(expected)


_BATCH1_BYTES: dict[str, float] = {}


def _expect_batching_tpot(d: Diagram, acc) -> None:
    assert acc.name in d.alt
    # batch 1 reads the same bytes on every part: its memory time × the part's bandwidth is constant
    moved = d.table[0]["memory time (s)"] * acc.memory_bandwidth_bytes_per_s
    assert moved == pytest.approx(_BATCH1_BYTES.setdefault("bytes", moved))


def _expect_ridge_row(d: Diagram, acc) -> None:
    ridge = next(r for r in d.table if r.get("phase") == "ridge")
    assert ridge["FLOP per byte"] == pytest.approx(acc.ridge_point("bf16"))


def _expect_memory_hierarchy(d: Diagram, acc) -> None:
    fam = hierarchy.family(acc.id)
    hbm = hierarchy.get_level(acc.id, "device-memory")
    row = next(r for r in d.table if r["Level"] == hbm.name)
    assert row["Capacity (bytes)"] == hbm.capacity_bytes and fam.name in d.alt


def _expect_hbm_stack(d: Diagram, acc) -> None:
    rows = {r["Quantity"]: r["Value"] for r in d.table}
    assert rows["HBM stacks"] == schematic.arch_fact(acc.id, "hbm_stacks")
    assert rows["HBM stacks"] * rows["Bandwidth per stack"] * 1e9 == pytest.approx(
        acc.memory_bandwidth_bytes_per_s
    )


def _expect_nvlink(d: Diagram, acc) -> None:
    link = get_interconnect(acc.interconnect_id)
    rows = {r["Quantity"]: r["Value"] for r in d.table}
    assert rows["NVLink links per GPU"] == link.links
    assert rows["Bandwidth per GPU, each way"] * 1e9 == pytest.approx(link.per_direction_bytes_per_s)


def test_nvlink_systems_are_drawn_as_8_of_n() -> None:
    """Review nit: GH200 was drawn as '8 GPUs through NVSwitch'; it ships in NVLink systems of up to
    256 (DGX GH200), as GB200/GB300 in 72-GPU racks: the figure says 8 of N."""
    gh200 = parallelism.nvlink_topology_diagram("gh200-96gb").spec["layout"]["title"]["text"]
    assert "8 of up to 256 GPUs" in gh200
    assert "8 of the 72 GPUs" in parallelism.nvlink_topology_diagram("gb300").spec["layout"]["title"]["text"]
    assert "of " not in parallelism.nvlink_topology_diagram("h100-sxm").spec["layout"]["title"]["text"][:12]


def _expect_zero_stages(d: Diagram, acc) -> None:
    assert f"{acc.name} holds {acc.memory_label}" in d.alt


def _expect_overlap(d: Diagram, acc) -> None:
    """The all-reduce rate is the part's own links: NVLink or PCIe inside, one NIC per GPU across."""
    fabric = parallelism.training_fabric(acc.id)
    rate = next(r for r in d.table if r["part"].startswith("all-reduce rate"))["serial"]
    intra = _rate_gb(fabric.intra_link_id)
    assert get_interconnect(fabric.intra_link_id).id == (
        acc.interconnect_id if (acc.interconnect_id or "").startswith("nvlink") else acc.host_link_id
    )
    if fabric.inter_link_id:  # 2 nodes of k GPUs, k NICs each: min(k × NIC, NVLink × k/(k−1))
        k = fabric.node_gpus
        assert rate == pytest.approx(min(k * _rate_gb(fabric.inter_link_id), intra * k / (k - 1)))
        assert "InfiniBand" in d.alt
    else:  # one server, or one NVLink domain: the ring never leaves the scale-up link
        assert rate == pytest.approx(intra)
        assert "InfiniBand" not in d.alt.replace("no InfiniBand", "")


def _expect_occupancy(d: Diagram, acc) -> None:
    fam = hierarchy.family(acc.id)
    assert max(r["Resident warps per SM"] for r in d.table) == fam.max_warps_per_sm


def _expect_littles_law(d: Diagram, acc) -> None:
    hbm = hierarchy.get_level(acc.id, "device-memory")
    assert f"{hbm.latency_s('mid') * 1e9:.0f} ns latency" in d.alt
    assert si(acc.memory_bandwidth_bytes_per_s, "B/s") in d.alt


def _expect_roofline_ridge(d: Diagram, acc) -> None:
    assert d.table[2]["Value"] == pytest.approx(acc.ridge_point("bf16"))


def _expect_capacity(d: Diagram, acc) -> None:
    chosen = d.spec["data"][1]
    assert chosen["x"] == [acc.memory_bytes / 1e9]
    assert chosen["y"] == [acc.memory_bandwidth_bytes_per_s / 1e12]


EXPECT = {
    "sm": _expect_sm,
    "thread-hierarchy": _expect_thread_hierarchy,
    "tensor-core": _expect_tensor_core,
    "flash-attention": _expect_flash_attention,
    "batching-tpot": _expect_batching_tpot,
    "prefill-vs-decode": _expect_ridge_row,
    "memory-hierarchy": _expect_memory_hierarchy,
    "hbm-stack": _expect_hbm_stack,
    "nvlink-topology": _expect_nvlink,
    "zero-stages": _expect_zero_stages,
    "compute-comm-overlap": _expect_overlap,
    "occupancy": _expect_occupancy,
    "littles-law": _expect_littles_law,
    "roofline-ridge": _expect_roofline_ridge,
    "capacity-vs-bandwidth": _expect_capacity,
}


def test_every_diagram_with_a_picker_has_a_check() -> None:
    assert {d for d in builders() if takes_gpu(d)} == set(EXPECT)


@pytest.mark.parametrize("diagram_id", sorted(EXPECT))
def test_every_picker_choice_is_drawn_from_that_parts_data(diagram_id: str) -> None:
    choices = gpu_choices(diagram_id)
    assert choices.ids, diagram_id
    for gpu in choices.ids:
        d = build(diagram_id, gpu=gpu)
        _check(d, diagram_id)
        EXPECT[diagram_id](d, get_accelerator(gpu))
    # and what is left out really cannot be drawn: its builder refuses it with the reason given
    names = {a.name: a.id for a in load_catalog()}
    for left in choices.left_out.values():
        for name in left:
            with pytest.raises((ValueError, KeyError)):
                builders()[diagram_id](gpu=names[name])
