"""Memory hierarchy: the data file, latency/bandwidth arithmetic, Little's law, placement, charts.

Published numbers come from /work/shared/reference/simulator-anchors.md §2 (RRZE gpu-benches,
markdewing/AI_kernels, mt4g, ml-engineering) and the sources named in each test's docstring.
"""

import csv
import math
import re
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from charts.hierarchy import ladder_figure, littles_law_figure, placement_figure, si, transfer_time_figure
from simulators import hierarchy as hier
from simulators.hierarchy import (
    DATA_PATH,
    HierarchyDataError,
    MeasuredPoint,
    bytes_in_flight,
    crossover_bytes,
    cycles_to_seconds,
    get_level,
    human_scale,
    load_hierarchy,
    occupancy_needed,
    offload_time_per_token_s,
    parse_hierarchy_csv,
    place_model,
    readable_duration,
    transfer_time_range_s,
    transfer_time_s,
    warps_in_flight,
)

EXPECTED_FAMILIES = {
    "v100-32gb-sxm2",
    "a100-80gb-sxm",
    "h100-sxm",
    "h200-sxm",
    "gh200-96gb",
    "rtx-4090",
    "m3-max",
    "cpu-norvig",
}
URL = re.compile(r"^https?://\S+\.\S+$")
ALL_LEVELS = [level for levels in load_hierarchy().values() for level in levels]
TIMED_LEVELS = [lv for lv in ALL_LEVELS if lv.has_latency and lv.bandwidth_per_device_bytes_per_s is not None]


# ---------------------------------------------------------------------------------------------
# The data file
# ---------------------------------------------------------------------------------------------


def test_families_cover_the_issue_list():
    """Issue 4: V100, A100, H100/H200, a consumer card, Apple M-series, a CPU (+ GH200)."""
    assert set(load_hierarchy()) == EXPECTED_FAMILIES


def test_every_kind_of_level_in_the_issue_appears_somewhere():
    levels = {lv.level for lv in ALL_LEVELS}
    wanted = {"registers", "l1", "shared", "l2", "device-memory", "host-memory", "nvlink-peer"}
    assert wanted | {"nvlink-c2c", "network", "nvme"} <= levels


def test_every_source_in_the_raw_file_is_a_url():
    with DATA_PATH.open(newline="", encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle))
    sources = [s.strip() for row in rows for s in row["source"].split(";")]
    assert sources and all(URL.match(s) for s in sources), [s for s in sources if not URL.match(s)]


def test_no_row_types_a_latency_both_in_cycles_and_in_ns():
    """ns are derived from cycles / clock in code; typing both would let them disagree."""
    with DATA_PATH.open(newline="", encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle))
    both = [(r["family"], r["level"]) for r in rows if r["latency_cycles_min"] and r["latency_ns_min"]]
    assert both == []


@pytest.mark.parametrize("level", ALL_LEVELS, ids=lambda lv: f"{lv.family}/{lv.level}")
def test_ranges_have_min_at_most_max(level):
    if level.has_latency:
        assert level.latency_min_s <= level.latency_mid_s <= level.latency_max_s


def test_capacity_always_comes_with_its_scope():
    assert all(lv.capacity_scope for lv in ALL_LEVELS if lv.capacity_bytes is not None)


def test_family_ids_match_the_accelerator_catalog():
    """Family ids double as catalog ids so a page can join the two files."""
    catalog = DATA_PATH.parent / "accelerators.csv"
    if not catalog.exists():
        pytest.skip("accelerators.csv not present")
    with catalog.open(newline="", encoding="utf-8") as handle:
        ids = {row["id"] for row in csv.DictReader(handle)}
    linked = {fam.accelerator_id for fam in hier.families() if fam.accelerator_id}
    assert linked <= ids, linked - ids


# ---------------------------------------------------------------------------------------------
# Validation errors name the line and the column
# ---------------------------------------------------------------------------------------------

HEADER = DATA_PATH.read_text(encoding="utf-8").splitlines()[0]
GOOD = (
    "x-gpu,X GPU,,10,64,device-memory,HBM,5,16,GB,per GPU,400,500,1000,,,1000,GB/s,1,spec,per GPU,"
    "https://example.org/x,"
)


def write_csv(tmp_path: Path, *rows: str) -> Path:
    path = tmp_path / "h.csv"
    path.write_text("\n".join([HEADER, *rows]) + "\n", encoding="utf-8")
    return path


def test_a_good_row_parses_and_converts_cycles_to_seconds(tmp_path):
    (fam,) = parse_hierarchy_csv(write_csv(tmp_path, GOOD))
    assert fam.levels[0].latency_min_s == pytest.approx(400 / 1e9)


@pytest.mark.parametrize(
    ("row", "column"),
    [
        (GOOD.replace(",400,500,1000,", ",500,400,1000,"), "latency_cycles_max"),
        (GOOD.replace(",400,500,1000,,,", ",400,500,1000,200,250,"), "latency_ns_min"),
        (GOOD.replace(",400,500,1000,", ",400,500,,"), "clock_mhz"),
        (GOOD.replace("https://example.org/x", "example dot org"), "source"),
        (GOOD.replace(",GB/s,", ",GB/hour,"), "bandwidth_unit"),
        (GOOD.replace(",16,GB,", ",-16,GB,"), "capacity_value"),
        (GOOD.replace("device-memory", "l7"), "level"),
        (GOOD.replace(",1,spec,", ",3,spec,"), "bandwidth_directions"),
    ],
)
def test_bad_rows_raise_an_error_naming_line_and_column(tmp_path, row, column):
    with pytest.raises(HierarchyDataError, match=rf"line 2: column '{column}'"):
        parse_hierarchy_csv(write_csv(tmp_path, row))


def test_family_columns_must_agree_across_rows(tmp_path):
    second = GOOD.replace(",10,64,device-memory,HBM,5,", ",12,64,l2,L2,3,")
    with pytest.raises(HierarchyDataError, match=r"line 3: column 'sm_count'"):
        parse_hierarchy_csv(write_csv(tmp_path, GOOD, second))


# ---------------------------------------------------------------------------------------------
# Cycles to ns: the reference table (simulator-anchors §2.1)
# ---------------------------------------------------------------------------------------------


def test_v100_l1_28_cycles_at_1380_mhz_is_20_ns():
    """RRZE gpu-latency: V100 L1 hit 28 cycles = 20 ns at 1380 MHz."""
    assert round(get_level("v100-32gb-sxm2", "l1").latency_min_s * 1e9) == 20


def test_a100_hbm_552_cycles_at_1410_mhz_is_392_ns():
    """RRZE: A100-80 DRAM 552 cycles = 392 ns at 1410 MHz (552 / 1.41 = 391.5)."""
    assert get_level("a100-80gb-sxm", "device-memory").latency_max_s * 1e9 == pytest.approx(392, abs=1)


def test_gh200_hbm_611_to_688_cycles_at_1980_mhz_is_309_to_348_ns():
    """RRZE (GH200): HBM 611-688 cycles = 309-348 ns at 1980 MHz; the row's min is RRZE's 611."""
    level = get_level("gh200-96gb", "device-memory")
    assert round(level.latency_min_s * 1e9) == 309
    assert cycles_to_seconds(688, level.clock_hz) * 1e9 == pytest.approx(348, abs=1)


def test_gh200_l2_280_cycles_is_142_ns():
    """RRZE (GH200): near-L2 hit 280 cycles = 142 ns."""
    assert get_level("gh200-96gb", "l2").latency_min_s * 1e9 == pytest.approx(142, abs=1)


# ---------------------------------------------------------------------------------------------
# Bandwidth units and published transfer times
# ---------------------------------------------------------------------------------------------


def test_h100_hbm_bandwidth_is_the_datasheet_3_35_tb_per_s():
    """NVIDIA H100 SXM datasheet: 3.35 TB/s."""
    assert get_level("h100-sxm", "device-memory").bandwidth_bytes_per_s == 3.35e12


def test_nvlink_4_900_gb_per_s_is_450_each_way():
    """ml-engineering: NVLink 4 is 450 GBps unidirectional, 900 GBps duplex."""
    assert get_level("h100-sxm", "nvlink-peer").bandwidth_bytes_per_s == pytest.approx(450e9)


def test_ndr_400_gbit_per_s_is_50_gbyte_per_s():
    """Bits, not bytes: 400 Gb/s = 50 GB/s each way."""
    assert get_level("h100-sxm", "network").bandwidth_bytes_per_s == pytest.approx(50e9)


def test_h100_l1_aggregate_is_128_bytes_per_cycle_times_clock_times_sms():
    """RRZE: ~128 B/cycle/SM; 128 B x 1.98 GHz x 132 SMs for the whole GPU."""
    level = get_level("h100-sxm", "l1")
    assert level.bandwidth_per_device_bytes_per_s == pytest.approx(128 * 1.98e9 * 132)


@pytest.mark.parametrize(
    ("kib", "published_ms"),
    [(1, 0.03), (8, 0.03), (2048, 0.20), (16384, 1.38), (1048576, 86.91)],
)
def test_v100_pcie_model_reproduces_rrze_cudamemcpy_table(kib, published_ms):
    """RRZE cuda-memcpy (V100 PCIe 16GB): latency 0.03 ms + size / 12.35 GB/s fits its table."""
    level = get_level("v100-32gb-sxm2", "host-memory")
    assert transfer_time_s(level, kib * 1024) * 1e3 == pytest.approx(published_ms, rel=0.03, abs=0.005)


def test_norvig_reading_1_mb_from_memory_takes_250_us():
    """Norvig: 'read 1MB sequentially from memory: 250,000 nanosec' (plus one 100 ns fetch)."""
    level = get_level("cpu-norvig", "host-memory")
    assert transfer_time_s(level, 1e6) == pytest.approx(250e-6, rel=1e-3)


# ---------------------------------------------------------------------------------------------
# Transfer time and crossover
# ---------------------------------------------------------------------------------------------


@settings(max_examples=60, deadline=None)
@given(
    level=st.sampled_from(TIMED_LEVELS),
    a=st.floats(0, 1e12, allow_nan=False),
    b=st.floats(0, 1e12, allow_nan=False),
)
def test_transfer_time_grows_with_size(level, a, b):
    small, large = sorted((a, b))
    assert transfer_time_s(level, small) <= transfer_time_s(level, large)


@settings(max_examples=60, deadline=None)
@given(level=st.sampled_from(TIMED_LEVELS), n=st.floats(0, 1e12, allow_nan=False))
def test_mid_estimate_lies_inside_the_range(level, n):
    fast, slow = transfer_time_range_s(level, n)
    assert fast <= transfer_time_s(level, n) <= slow


@pytest.mark.parametrize("level", TIMED_LEVELS, ids=lambda lv: f"{lv.family}/{lv.level}")
def test_at_the_crossover_a_transfer_takes_twice_the_latency(level):
    n = crossover_bytes(level)
    assert transfer_time_s(level, n) == pytest.approx(2 * level.latency_mid_s)
    # a tenth of it costs 1.1 x latency (latency-dominated), ten times it 11 x (bandwidth-dominated)
    assert transfer_time_s(level, n / 10) == pytest.approx(1.1 * level.latency_mid_s)
    assert transfer_time_s(level, n * 10) == pytest.approx(11 * level.latency_mid_s)


def test_a_level_without_latency_cannot_give_a_transfer_time():
    with pytest.raises(ValueError, match="no sourced latency"):
        transfer_time_s(get_level("h200-sxm", "device-memory"), 1e6)


# ---------------------------------------------------------------------------------------------
# Little's law
# ---------------------------------------------------------------------------------------------


def test_h100_hbm_needs_about_72_warps_per_sm_with_4_byte_loads():
    """Little (1961): bytes in flight = latency x bandwidth.

    H100 HBM row: latency midpoint (611 + 834) / 2 = 722.5 cycles at 1.98 GHz = 364.9 ns;
    x 3.35e12 B/s = 1.222 MB in flight on the GPU; / 132 SMs = 9.26 kB per SM;
    / (4 B per thread x 32 threads) = 72.3 warps per SM - more than the 64 an SM can hold.
    """
    level = get_level("h100-sxm", "device-memory")
    latency_s = (611 + 834) / 2 / 1.98e9
    expected_bytes = latency_s * 3.35e12
    assert bytes_in_flight(level) == pytest.approx(expected_bytes)
    assert bytes_in_flight(level, per_sm=True) == pytest.approx(expected_bytes / 132)
    assert warps_in_flight(level) == pytest.approx(expected_bytes / 132 / (4 * 32))
    assert warps_in_flight(level) > 64
    assert occupancy_needed(level) > 1


def test_16_byte_vector_loads_need_a_quarter_of_the_warps():
    level = get_level("h100-sxm", "device-memory")
    assert warps_in_flight(level, bytes_per_thread=16) == pytest.approx(warps_in_flight(level) / 4)
    assert warps_in_flight(level, bytes_per_thread=16) < 64


@pytest.mark.parametrize("level", TIMED_LEVELS, ids=lambda lv: f"{lv.family}/{lv.level}")
def test_bytes_in_flight_equals_the_crossover_size(level):
    assert bytes_in_flight(level) == pytest.approx(crossover_bytes(level))


def test_per_sm_needs_an_sm_count():
    with pytest.raises(ValueError, match="SM count"):
        bytes_in_flight(get_level("cpu-norvig", "host-memory"), per_sm=True)


# ---------------------------------------------------------------------------------------------
# Human scale
# ---------------------------------------------------------------------------------------------


def test_human_scale_for_h100_keeps_ladder_order_and_ratios():
    entries = {e.level: e for e in human_scale(hier.family("h100-sxm").levels)}
    assert entries["l1"].scaled_s == pytest.approx(1.0)  # the default reference: fastest sourced level
    ladder = [entries[k].scaled_s for k in ("l1", "l2", "l2-far", "device-memory", "nvme")]
    assert ladder == sorted(ladder)
    hbm, l1 = get_level("h100-sxm", "device-memory"), get_level("h100-sxm", "l1")
    assert entries["device-memory"].scaled_s == pytest.approx(hbm.latency_mid_s / l1.latency_mid_s)


def test_human_scale_uses_registers_when_they_have_a_latency():
    """V100 has the only sourced register latency (4-cycle dependent FMA, Volta Tuning Guide)."""
    entries = human_scale(hier.family("v100-32gb-sxm2").levels, reference_seconds=1.0)
    assert entries[0].level == "registers"
    assert entries[0].scaled_text == "1 second"


def test_human_scale_rejects_a_reference_without_latency():
    with pytest.raises(ValueError, match="registers"):
        human_scale(hier.family("h100-sxm").levels, reference_level="registers")


@pytest.mark.parametrize(
    ("seconds", "text"),
    [
        (1, "1 second"),
        (0.9999999, "1 second"),
        (90, "1.5 minutes"),
        (0.84, "840 ms"),
        (3 * 86400, "3 days"),
        (2e-8, "20 ns"),
    ],
)
def test_readable_duration(seconds, text):
    assert readable_duration(seconds) == text


# ---------------------------------------------------------------------------------------------
# Where does my model live
# ---------------------------------------------------------------------------------------------


def test_7b_bf16_decode_on_h100_takes_about_4_ms_per_token():
    """simulator-anchors §1.3: 13.5 GB / 3.35 TB/s ~ 4 ms per token at batch 1."""
    placement = place_model(13.5e9, 0, hier.family("h100-sxm").levels)
    assert placement.fits_on_device
    assert round(placement.time_per_token_s * 1e3) == 4


def test_70b_bf16_on_one_h100_streams_the_overflow_over_pcie_each_token():
    """140 GB of weights, 80 GB of HBM: 60 GB cross PCIe 5.0 x16 at 63 GBps each way
    (ml-engineering's payload rate) for every generated token."""
    placement = place_model(140e9, 0, hier.family("h100-sxm").levels)
    assert placement.weights_offloaded_bytes == pytest.approx(60e9)
    assert placement.offload_time_per_token_s == pytest.approx(60e9 / 63e9)
    assert placement.offload_time_per_token_s == offload_time_per_token_s(60e9, 63e9)
    assert placement.slowdown > 10


def test_gh200_offloads_over_nvlink_c2c():
    placement = place_model(140e9, 0, hier.family("gh200-96gb").levels)
    assert placement.link.level == "nvlink-c2c"
    assert placement.offload_time_per_token_s == pytest.approx(44e9 / 450e9)


def test_unified_memory_has_nowhere_to_offload():
    placement = place_model(140e9, 0, hier.family("m3-max").levels)
    assert placement.link is None and math.isinf(placement.time_per_token_s)


@settings(max_examples=80, deadline=None)
@given(
    fam=st.sampled_from([f for f in hier.families() if f.has_level("device-memory")]),
    weights=st.floats(0, 5e11, allow_nan=False),
    kv=st.floats(0, 2e11, allow_nan=False),
    usable=st.floats(0.5, 1.0),
)
def test_placement_conserves_bytes_and_respects_capacity(fam, weights, kv, usable):
    placement = place_model(weights, kv, fam.levels, usable_fraction=usable)
    assert sum(p.weight_bytes for p in placement.placements) == pytest.approx(weights)
    assert sum(p.kv_bytes for p in placement.placements) == pytest.approx(kv)
    on_device = placement.weights_on_device_bytes + placement.kv_on_device_bytes
    assert on_device <= placement.usable_device_bytes * (1 + 1e-12)
    assert placement.fits_on_device == (weights + kv <= placement.usable_device_bytes)


# ---------------------------------------------------------------------------------------------
# Charts
# ---------------------------------------------------------------------------------------------


def _plain(text: str) -> str:
    return text.replace("<br>", " ")


def test_ladder_has_latency_and_bandwidth_traces_per_family_on_log_axes():
    families = [hier.family("h100-sxm"), hier.family("rtx-4090")]
    fig = ladder_figure(families, [MeasuredPoint("my copy", level="device-memory", bytes_per_s=2.9e12)])
    names = [_plain(t["name"]) for t in fig["data"]]
    for fam in families:
        assert any(n.startswith(f"{fam.name}: latency") for n in names)
        assert any(n.startswith(f"{fam.name}: bandwidth") for n in names)
    measured = next(t for t in fig["data"] if t["name"].startswith("Measured"))
    assert measured["yaxis"] == "y2" and measured["customdata"][0][0] == "my copy"
    assert "offsetgroup" not in measured  # no family given: the middle of the level
    layout = fig["layout"]
    assert layout["yaxis"]["type"] == "log" and layout["yaxis2"]["type"] == "log"
    assert "Latency" in layout["yaxis"]["title"]["text"] and "Bandwidth" in layout["yaxis2"]["title"]["text"]
    assert "ns" in " ".join(layout["yaxis"]["ticktext"])
    assert layout["font"]["size"] >= 16


def test_ladder_error_bars_span_the_published_range():
    fig = ladder_figure([hier.family("h100-sxm")])
    latency = next(t for t in fig["data"] if "latency" in t["name"])
    i = [_plain(x) for x in latency["x"]].index("Device memory")
    hbm = get_level("h100-sxm", "device-memory")
    assert latency["y"][i] + latency["error_y"]["array"][i] == pytest.approx(hbm.latency_max_s)
    assert latency["y"][i] - latency["error_y"]["arrayminus"][i] == pytest.approx(hbm.latency_min_s)


def test_transfer_chart_has_one_legend_line_per_level_and_the_crossovers():
    levels = hier.family("v100-32gb-sxm2").levels
    point = MeasuredPoint("RRZE 1 GiB copy", nbytes=2**30, seconds=86.91e-3)
    fig = transfer_time_figure(levels, [point])
    in_legend = [_plain(t["name"]) for t in fig["data"] if t.get("showlegend", True) is not False]
    timed = [lv.name for lv in levels if lv.has_latency and lv.has_bandwidth]
    assert [n for n in in_legend if n in timed] == timed
    crossover = next(t for t in fig["data"] if t["name"].startswith("Crossover"))
    assert len(crossover["x"]) == len(timed)
    measured = next(t for t in fig["data"] if t["name"].startswith("Measured"))
    assert measured["x"] == [2**30] and measured["customdata"][0][0] == "RRZE 1 GiB copy"
    layout = fig["layout"]
    assert layout["xaxis"]["type"] == "log" and layout["yaxis"]["type"] == "log"
    assert "bytes" in layout["xaxis"]["title"]["text"]


def test_littles_law_bars_are_the_model_numbers_with_the_warp_limit_marked():
    fig = littles_law_figure([hier.family("h100-sxm")])
    bars = fig["data"][0]
    assert bars["type"] == "bar"
    hbm = get_level("h100-sxm", "device-memory")
    assert bars["y"][[_plain(x) for x in bars["x"]].index("Device memory")] == pytest.approx(
        warps_in_flight(hbm)
    )
    limit = fig["layout"]["shapes"][0]
    assert limit["y0"] == limit["y1"] == 64 and "64 warps" in _plain(limit["name"]) and limit["showlegend"]
    assert "Warps per SM" in _plain(fig["layout"]["yaxis"]["title"]["text"])


def test_placement_chart_shows_device_and_host():
    fig = placement_figure(place_model(140e9, 10e9, hier.family("h100-sxm").levels))
    bars = [t for t in fig["data"] if t["type"] == "bar"]
    assert {t["name"] for t in bars} == {"Weights (GB)", "KV cache (GB)"}
    assert len(bars[0]["y"]) == 2
    assert "ms per token" in fig["layout"]["title"]["text"]


@pytest.mark.parametrize(("value", "unit", "text"), [(3.65e-7, "s", "365 ns"), (3.35e12, "B/s", "3.35 TB/s")])
def test_si_labels(value, unit, text):
    assert si(value, unit) == text


def test_measured_points_sit_beside_the_family_they_were_measured_on_with_one_legend_entry():
    families = [hier.family("h100-sxm"), hier.family("cpu-norvig")]
    measured = [
        MeasuredPoint("H100 chase", level="device-memory", seconds=230e-9, family="h100-sxm"),
        MeasuredPoint("H100 triad", level="device-memory", bytes_per_s=3.05e12, family="h100-sxm"),
        MeasuredPoint("CPU chase", level="host-memory", seconds=210e-9, family="cpu-norvig"),
    ]
    fig = ladder_figure(families, measured)
    traces = [t for t in fig["data"] if _plain(t["name"]).startswith("Measured")]
    h100 = [t for t in traces if t.get("offsetgroup") == "h100-sxm"]
    cpu = [t for t in traces if t.get("offsetgroup") == "cpu-norvig"]
    assert {t["yaxis"] for t in h100} == {"y", "y2"} and [t["yaxis"] for t in cpu] == ["y"]
    # One legend entry per family, naming it and counting its points.
    legend = [_plain(t["name"]) for t in traces if t["showlegend"]]
    assert legend == [
        "Measured on NVIDIA H100 SXM5 80 GB: 2 points, hover for each",
        f"Measured on {families[1].name}: 1 point, hover for each",
    ]
    # Each family's published marks share the offset group, so the crosses line up beside them.
    assert any(
        t.get("offsetgroup") == "h100-sxm" and not _plain(t["name"]).startswith("Measured")
        for t in fig["data"]
    )
