"""The results file: versioned JSON out, validated JSON in (the page's upload path)."""

from __future__ import annotations

import json

import pytest

from measure.results import (
    MAX_FILE_BYTES,
    BandwidthRecord,
    GenericRecord,
    MatmulRecord,
    Results,
    load_results,
    record_kind,
)


def _bandwidth(**overrides):
    fields = dict(
        device="cpu",
        device_name="test CPU",
        torch_version="2.13.0",
        threads=2,
        median_s=1e-3,
        p10_s=0.9e-3,
        p90_s=1.2e-3,
        min_s=0.8e-3,
        repeats=5,
        op="triad",
        bytes=12_000_000,
        elements=1_000_000,
        dtype="float32",
        gb_per_s=12.0,
        bytes_per_s=12e9,
        best_gb_per_s=15.0,
        cache_hint="DRAM",
    )
    fields.update(overrides)
    return BandwidthRecord(**fields)


def _doc(results=None, **top):
    doc = {"schema": 1, "device": {"type": "cpu", "name": "test CPU"}, "results": results or []}
    doc.update(top)
    return doc


def test_results_round_trip_through_json():
    matmul = MatmulRecord(
        device="cpu",
        median_s=1e-3,
        p10_s=1e-3,
        p90_s=1e-3,
        min_s=1e-3,
        repeats=3,
        dtype="float32",
        m=64,
        n=32,
        k=16,
        tflops=6.5536e-5,
        flops_per_s=6.5536e7,
        flops=65536,
        bytes=14336,
        intensity_flop_per_byte=65536 / 14336,
        best_tflops=6.5536e-5,
    )
    original = Results(device={"type": "cpu"}, records=(_bandwidth(), matmul), quick=True, hosted=False)
    loaded = load_results(original.to_json())
    assert [r.to_dict() for r in loaded.records] == [r.to_dict() for r in original.records]
    assert (loaded.quick, loaded.hosted, loaded.schema) == (True, False, 1)


def test_the_issue_minimal_fields_are_enough_and_derived_fields_are_filled():
    """A file with only the fields issue 6 names loads; flops and rates follow from them."""
    doc = _doc(
        [
            {"kind": "bandwidth", "op": "copy", "bytes": 8192, "gb_per_s": 10.0},
            {"kind": "matmul", "dtype": "bfloat16", "m": 2, "n": 3, "k": 4, "tflops": 1.5},
        ]
    )
    loaded = load_results(json.dumps(doc))
    bw, mm = loaded.records
    assert bw.bytes_per_s == 10.0e9
    assert (mm.flops, mm.flops_per_s) == (2 * 2 * 3 * 4, 1.5e12)


def test_unknown_kinds_and_fields_are_kept_for_newer_files():
    doc = _doc([{"kind": "pointer_chase", "latency_s": 1e-7}, {**_bandwidth().to_dict(), "new_field": 7}])
    loaded = load_results(json.dumps(doc))
    chase, bw = loaded.records
    assert isinstance(chase, GenericRecord) and record_kind(chase) == "pointer_chase"
    assert chase.to_dict()["latency_s"] == 1e-7
    assert bw.to_dict()["new_field"] == 7
    assert [record_kind(r) for r in loaded.by_kind("bandwidth")] == ["bandwidth"]


def test_latency_and_decode_records_load_with_their_own_types():
    """The new kinds keep schema 1: a minimal latency record (bytes, ns) and a decode record load."""
    from measure.results import DecodeRecord, LatencyRecord

    doc = _doc(
        [
            {"kind": "latency", "bytes": 4096, "ns": 1.4, "loads": 10_000, "method": "C chase"},
            {
                "kind": "decode",
                "mode": "eager",
                "batch": 1,
                "step_s": 0.0508,
                "tok_s": 19.7,
                "bound_tok_s": 222.1,
                "fraction_of_bound": 0.0887,
                "weights_bytes": 15_009_857_536,
            },
        ]
    )
    latency, decode = load_results(json.dumps(doc)).records
    assert isinstance(latency, LatencyRecord) and (latency.bytes, latency.ns, latency.loads) == (
        4096,
        1.4,
        10_000,
    )
    assert (
        isinstance(decode, DecodeRecord) and decode.mode == "eager" and decode.weights_bytes == 15_009_857_536
    )
    assert load_results(Results(device={}, records=(latency, decode)).to_json()).records == (latency, decode)


def test_launch_bound_marking_follows_the_runs_own_overhead():
    """Best call within 2 x the eager launch overhead: launch-bound, and no longer "fits in L2"."""
    from measure.launch_bound import mark_launch_bound
    from measure.results import LaunchRecord

    launch = LaunchRecord(
        device="cuda:0",
        median_s=7.5e-6,
        p10_s=7e-6,
        p90_s=1e-5,
        min_s=7e-6,
        repeats=13,
        op="add_",
        mode="eager",
        ops_per_s=1 / 7.5e-6,
    )
    small = _bandwidth(bytes=4096, min_s=9.0e-6, median_s=9.25e-6, cache_hint="L2")
    large = _bandwidth(bytes=64 * 2**20, min_s=25.6e-6, median_s=25.6e-6, cache_hint="device memory")
    marked_small, marked_large, _ = mark_launch_bound([small, large, launch])
    assert (marked_small.launch_bound, marked_small.cache_hint, marked_small.working_set_level) == (
        True,
        "launch-bound",
        "L2",
    )
    assert (marked_large.launch_bound, marked_large.cache_hint) == (False, "device memory")
    assert mark_launch_bound(mark_launch_bound([small, launch]))[0].notes == marked_small.notes
    assert mark_launch_bound([small])[0].launch_bound is None  # no launch record: not checked


MALFORMED = [
    pytest.param(b"\xff\xfe not utf-8", "UTF-8", id="binary"),
    pytest.param("{not json", "Not valid JSON", id="not-json"),
    pytest.param("[1, 2]", "JSON object", id="top-level-list"),
    pytest.param(json.dumps({"device": {}, "results": []}), "Missing 'schema'", id="no-schema"),
    pytest.param(json.dumps(_doc(schema=2)), "Unsupported schema version 2", id="schema-2"),
    pytest.param(json.dumps(_doc(schema="1")), "'schema' must be an integer", id="schema-string"),
    pytest.param(json.dumps(_doc(schema=True)), "'schema' must be an integer", id="schema-bool"),
    pytest.param(json.dumps({"schema": 1, "results": []}), "'device'", id="no-device"),
    pytest.param(
        json.dumps({"schema": 1, "device": {}, "results": {}}), "'results' must be a list", id="results-dict"
    ),
    pytest.param(json.dumps(_doc(["x"])), "results[0]", id="result-not-object"),
    pytest.param(json.dumps(_doc([{"op": "copy"}])), "kind", id="no-kind"),
    pytest.param(
        json.dumps(_doc([{"kind": "bandwidth", "op": "copy", "bytes": 8}])), "'gb_per_s'", id="missing-field"
    ),
    pytest.param(
        json.dumps(_doc([{"kind": "bandwidth", "op": "copy", "bytes": "8", "gb_per_s": 1.0}])),
        "must be a number",
        id="bytes-string",
    ),
    pytest.param(
        json.dumps(_doc([{"kind": "matmul", "dtype": "float32", "m": True, "n": 1, "k": 1, "tflops": 1.0}])),
        "must be a number",
        id="bool-as-int",
    ),
    pytest.param(
        json.dumps(_doc([{"kind": "matmul", "dtype": "float32", "m": 1.5, "n": 1, "k": 1, "tflops": 1.0}])),
        "whole number",
        id="fractional-dimension",
    ),
    pytest.param(
        json.dumps(_doc([{"kind": "bandwidth", "op": "copy", "bytes": 8, "gb_per_s": -1.0}])),
        "plausible range",
        id="negative-bandwidth",
    ),
    pytest.param(
        json.dumps(_doc([{"kind": "bandwidth", "op": "copy", "bytes": 8, "gb_per_s": 1e6}])),
        "plausible range",
        id="absurd-bandwidth",
    ),
    pytest.param(
        json.dumps(_doc([{"kind": "matmul", "dtype": "float32", "m": 1, "n": 1, "k": 1, "tflops": 5e5}])),
        "plausible range",
        id="absurd-tflops",
    ),
    pytest.param(
        '{"schema": 1, "device": {}, "results": '
        '[{"kind": "bandwidth", "op": "copy", "bytes": 8, "gb_per_s": NaN}]}',
        "NaN",
        id="nan",
    ),
    pytest.param(
        json.dumps(_doc([{"kind": "bandwidth", "op": "scale", "bytes": 8, "gb_per_s": 1.0}])),
        "one of",
        id="unknown-op",
    ),
    pytest.param(json.dumps(_doc(quick="yes")), "'quick'", id="quick-not-bool"),
    pytest.param(
        json.dumps(_doc([{"kind": "latency", "bytes": 4096, "ns": -1.0}])), "plausible", id="negative-ns"
    ),
    pytest.param(json.dumps(_doc([{"kind": "latency", "bytes": 4096}])), "'ns'", id="latency-without-ns"),
    pytest.param(
        json.dumps(
            _doc(
                [
                    {
                        "kind": "decode",
                        "mode": "compiled",
                        "batch": 1,
                        "step_s": 0.01,
                        "tok_s": 100.0,
                        "bound_tok_s": None,
                        "fraction_of_bound": None,
                        "weights_bytes": 1,
                    }
                ]
            )
        ),
        "one of",
        id="decode-unknown-mode",
    ),
    pytest.param(b" " * (MAX_FILE_BYTES + 1), "too large", id="too-large"),
]


@pytest.mark.parametrize(("data", "message"), MALFORMED)
def test_malformed_files_raise_a_clear_value_error(data, message):
    with pytest.raises(ValueError) as info:
        load_results(data)
    assert message.lower() in str(info.value).lower()
