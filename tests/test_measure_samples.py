"""The shipped samples: listed without torch, validated on load, and drawn on the pages' charts.

Published numbers are those of the H100 run in the project's measurement notes
(../shared/measured/README.md, one H100 80GB HBM3 SXM, 2026-11-23).
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from measure.launch_bound import LAUNCH_BOUND_HINT
from measure.samples import list_samples, load_sample
from measure.views import decode_gap_rows, latency_ladder_points
from simulators.hierarchy import family

ROOT = Path(__file__).resolve().parent.parent
H100 = "h100-sxm-80gb.json"
KiB, MiB, GiB = 1024, 1024**2, 1024**3


@pytest.fixture(scope="module")
def h100() -> dict:
    return load_sample(H100)


def _cpu_sample_name() -> str:
    """The newest CPU sample (the one with latency records)."""
    cpu = [s for s in list_samples() if s.device_type == "cpu" and "latency" in s.kinds]
    return max(cpu, key=lambda s: s.created_utc).name


def test_list_samples_finds_a_cpu_and_a_gpu_run():
    samples = {s.name: s for s in list_samples()}
    assert {p.name for p in (ROOT / "measure" / "samples").glob("*.json")} == set(samples)
    gpu = samples[H100]
    assert (gpu.device_type, gpu.device_name, gpu.created_utc[:10]) == (
        "cuda",
        "NVIDIA H100 80GB HBM3",
        "2026-11-23",
    )
    assert "GPU" in gpu.label and {"latency", "decode", "bandwidth"} <= set(gpu.kinds)
    assert any(s.device_type == "cpu" for s in samples.values())


def test_every_sample_validates():
    for sample in list_samples():
        doc = load_sample(sample.name)
        assert doc["schema"] == 1 and len(doc["results"]) == sample.record_count


@pytest.mark.parametrize("name", ["../README.md", "nope.json", "/etc/passwd.json"])
def test_load_sample_takes_only_a_shipped_file_name(name):
    with pytest.raises(ValueError):
        load_sample(name)


def test_reading_samples_and_their_rows_imports_no_torch():
    code = (
        "import sys\n"
        "from measure.samples import list_samples, load_sample\n"
        "from measure.views import decode_gap_rows, latency_ladder_points\n"
        "from simulators.hierarchy import family\n"
        "for s in list_samples():\n"
        "    doc = load_sample(s.name)\n"
        "    decode_gap_rows(doc['results'])\n"
        "    latency_ladder_points(doc, family('h100-sxm'))\n"
        "print('torch' in sys.modules)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert out.stdout.strip() == "False", out.stderr


def test_h100_latency_lands_on_the_h100_ladder(h100):
    """README: L1 18.7-29 ns (<= 192 KiB), L2 143 ns (512 KiB-16 MiB), device memory 214-247 ns
    (256 MiB-4 GiB; 64 MiB read 218)."""
    points = latency_ladder_points(h100, family("h100-sxm"))
    by_level: dict[str | None, list[float]] = {}
    for point in points:
        by_level.setdefault(point["level"], []).append(point["ns"])
    assert len(by_level["l1"]) == 5 and all(18.6 <= ns <= 29.3 for ns in by_level["l1"])
    assert len(by_level["l2"]) == 4 and all(ns == pytest.approx(143.0, abs=0.2) for ns in by_level["l2"])
    assert len(by_level["device-memory"]) == 4 and all(214 <= ns <= 247 for ns in by_level["device-memory"])
    assert by_level["l2-far"] == [pytest.approx(195.6, abs=0.1)]  # 32 MiB, past one 25 MB partition
    assert len(by_level[None]) == 2  # 256 KiB (102 ns) and 48 MiB (212 ns) fall between levels


def test_h100_latency_stays_off_other_ladders(h100):
    assert latency_ladder_points(h100, family("a100-80gb-sxm")) == []
    assert latency_ladder_points(h100, family("cpu-norvig")) == []


def test_h100_decode_rows_show_the_gap(h100):
    """README: Llama-3.1-8B batch 1, eager 19.7 tok/s (9% of the 222 tok/s bound), compiled with CUDA
    Graphs 122 tok/s (55%)."""
    rows = decode_gap_rows(h100["results"])
    eager = next(r for r in rows if r["Mode"] == "eager PyTorch" and r["Batch"] == "1")
    graphs = next(r for r in rows if r["Mode"].startswith("CUDA Graphs") and r["Batch"] == "1")
    assert "Llama-3.1-8B" in eager["Model"]
    assert (eager["Measured tok/s"], eager["Bound tok/s"], eager["% of bound"]) == ("19.7", "222", "9%")
    assert (graphs["Measured tok/s"], graphs["% of bound"]) == ("122", "55%")


def test_h100_bytes_per_step_come_from_the_simulator(h100):
    """15.0 GB of weights read per step (README), plus the KV cache of the tokens in context."""
    record = next(
        r for r in h100["results"] if r["kind"] == "decode" and r["batch"] == 1 and r["cache"] == "static"
    )
    assert record["weights_bytes"] / 1e9 == pytest.approx(15.0, abs=0.05)
    assert record["bytes_per_step"] == record["weights_bytes"] + record["kv_bytes"]
    assert record["bound_bandwidth_bytes_per_s"] == 3.35e12 and "datasheet" in record["bound_source"]
    assert "same GPU the same day" in record["source"]


def test_h100_small_bandwidth_points_are_launch_bound_not_l2(h100):
    """README: 0.4 GB/s at 4 KiB is launch overhead (7.5 us eager), not cache bandwidth; the 64 MiB copy
    (25.6 us, 2.6 TB/s) is not."""
    copies = {r["bytes"]: r for r in h100["results"] if r["kind"] == "bandwidth" and r["op"] == "copy"}
    small, large = copies[4 * KiB], copies[64 * MiB]
    assert (small["launch_bound"], small["cache_hint"], small["working_set_level"]) == (
        True,
        LAUNCH_BOUND_HINT,
        "L2",
    )
    assert "launch_bound rule" in small["notes"] and "7.53 us" in small["notes"]
    assert (large["launch_bound"], large["cache_hint"]) == (False, "device memory")


def test_the_cpu_sample_has_latency_and_decode_records():
    doc = load_sample(_cpu_sample_name())
    pairs = [(r["bytes"], r["ns"]) for r in doc["results"] if r["kind"] == "latency"]
    assert pairs and min(b for b, _ in pairs) == 4 * KiB
    smallest = min(pairs)[1]
    largest = max(pairs)[1]
    assert largest / smallest > 10
    (eager,) = [r for r in doc["results"] if r["kind"] == "decode"]
    assert 0 < eager["fraction_of_bound"] <= 1
    levels = {p["level"] for p in latency_ladder_points(doc, family("cpu-norvig"))}
    assert {"l1", "l2"} <= levels


def test_h100_latency_against_the_published_ladder(h100):
    """The table under the Memory hierarchy ladder: README's measured ranges beside the sourced
    rows (memory_hierarchy.csv: HBM3 611-834 cycles at 1,980 MHz = 309-421 ns)."""
    from measure.views import latency_comparison_rows

    rows = {r["Level"]: r for r in latency_comparison_rows(h100, family("h100-sxm"))}
    assert list(rows) == ["L1 cache", "L2 cache", "L2 cache, far partition", "HBM3"]
    hbm = rows["HBM3"]
    assert hbm["Published, ns"] == "309–421" and hbm["Published, cycles"] == "611–834"
    assert hbm["Measured, ns"] == "214–247" and hbm["Working sets"] == "64 MiB–4 GiB"
    low, high = (float(x) for x in hbm["Measured, cycles"].split("–"))
    assert 424 <= low <= 425 and 488 <= high <= 490  # README: HBM ≈ 424-489 cycles at 1,980 MHz
    # The chase reads faster than the published midpoint: (214 + 247) / 2 ÷ (309 + 421) / 2.
    ratio = float(hbm["Measured ÷ published"].rstrip("×"))
    assert 0.60 <= ratio <= 0.66
    assert rows["L2 cache"]["Measured, ns"] == "143"
    assert latency_comparison_rows(h100, family("a100-80gb-sxm")) == []  # another GPU's ladder


def test_cpu_sample_against_norvigs_ladder_keeps_small_numbers_readable():
    from measure.views import latency_comparison_rows

    rows = {
        r["Level"]: r for r in latency_comparison_rows(load_sample(_cpu_sample_name()), family("cpu-norvig"))
    }
    assert rows["L1 cache"]["Published, ns"] == "0.5"  # Norvig's L1 reference, not "0"
    assert rows["L1 cache"]["Published, cycles"] == "—"  # a table in ns, no clock
    assert rows["L1 cache"]["Measured, cycles"] == "—"


H200 = "h200-sxm-141gb.json"


@pytest.fixture(scope="module")
def h200() -> dict:
    return load_sample(H200)


def test_the_h200_run_ships_with_its_provenance(h200):
    """../shared/measured/README.md: one NVIDIA H200 (141 GB HBM3e, 132 SMs, 60 MiB L2), the
    suite's full run of 2026-11-27, 135 records; the sample says where it came from and what the
    build script changed."""
    sample = next(s for s in list_samples() if s.name == H200)
    assert (sample.device_name, sample.created_utc[:10], sample.record_count) == (
        "NVIDIA H200",
        "2026-11-27",
        135,
    )
    assert "h200-sxm-141gb-full.json" in h200["provenance"]
    assert "bench/build_h200_sample.py" in h200["provenance"]
    assert h200["device"]["catalog_match"]["id"] == "h200-sxm"
    assert "| `h200-sxm-141gb.json` |" in (ROOT / "measure" / "samples" / "README.md").read_text()


def test_h200_chase_labels_come_from_the_h200_family(h200):
    """README of the H200 run: 22-28 ns for 4-128 KiB are L1 hits (the run labelled them "L2"),
    147 ns from 512 KiB to 16 MiB is L2, 329-343 ns from 64 MiB up is HBM3e."""
    hints = {r["bytes"]: (r["ns"], r["cache_hint"]) for r in h200["results"] if r["kind"] == "latency"}
    assert {hints[n * KiB][1] for n in (4, 8, 16, 32, 64, 128)} == {"L1"}
    assert all(21.5 <= hints[n * KiB][0] <= 28.5 for n in (4, 128))
    assert hints[256 * KiB][1] == "between L1 and L2"  # 92 ns: part of the set already evicted
    assert {hints[n * MiB][1] for n in (1, 16, 32)} == {"L2"}
    assert {hints[n * MiB][1] for n in (64, 1024)} == {"device memory"}


def test_a_point_is_launch_bound_only_while_its_time_has_not_grown_with_the_bytes(h100, h200):
    """measure.launch_bound's rule: within 2x the launch overhead, and this or a larger working set
    called within 1.25x the run's fastest call. The H100's 32 MiB copy took 9.2 us against a 6.0 us
    floor: the GPU's own time, so its 3.6 TB/s reads the L2. The H200's 32 MiB copy took 6.46 us
    against a 6.13 us floor, no longer than its 64 KiB copy: its 5.2 TB/s is a floor, about half
    the 9.8 TB/s RRZE measured for the H200's L2, so it stays launch-bound. Every 64 MiB point of
    both runs (18-26 us) is not."""

    def copies(doc):
        return {r["bytes"]: r for r in doc["results"] if r["kind"] == "bandwidth" and r["op"] == "copy"}

    h100_copy, h200_copy = copies(h100), copies(h200)
    assert h100_copy[32 * MiB]["launch_bound"] is False and h100_copy[16 * MiB]["launch_bound"] is True
    assert "Not launch-bound" in h100_copy[32 * MiB]["notes"]
    assert h200_copy[32 * MiB]["launch_bound"] is True
    assert h200_copy[512 * KiB]["launch_bound"] is True  # 8.7 us, but every larger set sat at the floor
    assert not h100_copy[64 * MiB]["launch_bound"] and not h200_copy[64 * MiB]["launch_bound"]
