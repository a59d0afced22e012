"""Measurements and simulators share one model: the same tensor, formula and catalog row."""

import pytest

from measure.catalog import load_catalog, match_catalog
from measure.collectives import ring_allreduce_time_s
from simulators.parallelism import ring_allreduce_bytes_per_gpu

pytest.importorskip("torch", reason="torch is a test dependency (requirements-dev.txt)")


def test_torch_casts_and_the_quantization_simulator_agree_on_the_same_tensor():
    """torch's dtype casts and scaled int formats give the SQNR the numpy simulator predicts."""
    from measure.workloads import quantization_error

    outcome = quantization_error("cpu", quick=True)
    assert outcome.status.ok, outcome.status.message
    assert len(outcome.records) >= 9
    for record in outcome.records:
        assert record.sqnr_db == pytest.approx(record.predicted_sqnr_db, abs=1e-3), record.format


def test_a_reported_h100_name_finds_its_catalog_row():
    """torch reports "NVIDIA H100 80GB HBM3" with 81,090 MiB and 132 SMs: the SXM row."""
    match = match_catalog("NVIDIA H100 80GB HBM3", load_catalog(), memory_bytes=81090 * 2**20, sm_count=132)
    assert match is not None and match.row["id"] == "h100-sxm"
    assert match.row["memory_bw_gbps"] == 3350


def test_the_collective_benchmark_uses_the_parallelism_ring_formula():
    """nccl-tests doc/PERFORMANCE.md: all-reduce moves 2(n-1)/n x S per rank; 8 ranks, 1 GB at 100 GB/s."""
    assert ring_allreduce_time_s(1e9, 8, 100e9) == pytest.approx(ring_allreduce_bytes_per_gpu(1e9, 8) / 100e9)
    assert ring_allreduce_time_s(1e9, 8, 100e9) == pytest.approx(0.0175)


def test_measured_results_are_compared_with_the_matched_datasheet_row():
    """90% of H100 SXM's 3,350 GB/s and 80% of its dense 989.5 BF16 TFLOP/s, as the page prints them."""
    from measure.views import datasheet_rows

    doc = {
        "device": {"catalog_match": {"id": "h100-sxm", "name": "H100 SXM (80GB)"}},
        "results": [
            {"kind": "bandwidth", "cache_hint": "device memory", "gb_per_s": 3015.0},
            {"kind": "matmul", "dtype": "bfloat16", "tflops": 791.6},
        ],
    }
    rows = {r["Quantity"]: r["Measured ÷ datasheet"] for r in datasheet_rows(doc)}
    assert rows == {"memory bandwidth": "90%", "matmul bfloat16": "80%"}
