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
