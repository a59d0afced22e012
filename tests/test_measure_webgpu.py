"""The Python side of the browser suite (measure/webgpu.py, the "compute" record, the page): a real
run on Chromium's software adapter (tests/data/webgpu-swiftshader.json, written by ui/webgpu.js in a
quick run) validates in the project's schema; a file whose numbers were edited, whose kernels were
not verified, or that is not what the browser writes is refused with a message; catalog matching
reads only what the adapter says; the points reach the roofline, the datasheet table and the
ladder; the page shows uploaded browser results without rendering their text."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest

from measure import webgpu
from measure.catalog import datasheet_ratios, load_catalog
from measure.results import ComputeRecord, LatencyRecord, MatmulRecord, load_results
from tests import pages

RECORDED = Path(__file__).resolve().parent / "data" / "webgpu-swiftshader.json"
PAGE = "app_pages/your_hardware.py"


def recorded() -> dict:
    """A fresh copy of the recorded browser run (as the component sends it)."""
    return json.loads(RECORDED.read_text(encoding="utf-8"))


def refused(doc: dict) -> str:
    with pytest.raises(ValueError) as error:
        load_results(json.dumps(doc))
    return str(error.value)


def first(doc: dict, kind: str) -> dict:
    return next(r for r in doc["results"] if r["kind"] == kind)


def test_a_browser_run_is_a_results_file_of_the_project_schema():
    results = load_results(RECORDED.read_bytes())
    assert results.tool == "gpu-field-guide webgpu"
    assert {type(r) for r in results.by_kind("compute")} == {ComputeRecord}
    assert {type(r) for r in results.by_kind("matmul")} == {MatmulRecord}
    assert {type(r) for r in results.by_kind("latency")} == {LatencyRecord}
    kinds = {r["kind"] for r in results.to_dict()["results"]}
    assert kinds == set(webgpu.BROWSER_KINDS)
    assert results.device["adapter"]["architecture"] == "swiftshader"


def test_every_recorded_rate_is_its_bytes_or_flops_over_its_median_time():
    webgpu.check_document(recorded())  # raises if any rate does not follow from its time


@pytest.mark.parametrize(
    ("kind", "field", "says"),
    [
        ("bandwidth", "gb_per_s", "is not bytes ÷ median_s"),
        ("compute", "tflops", "is not flops ÷ median_s"),
        ("matmul", "tflops", "is not 2mnk ÷ median_s"),
        ("launch_overhead", "ops_per_s", "is not 1 ÷ median_s"),
    ],
)
def test_an_edited_rate_is_refused(kind, field, says):
    doc = recorded()
    first(doc, kind)[field] *= 1.5
    assert says in refused(doc)


def test_a_kernel_that_was_not_verified_is_never_drawn():
    doc = recorded()
    first(doc, "bandwidth")["verified"] = False
    assert "not verified" in refused(doc)
    del first(doc, "bandwidth")["verified"]
    assert "not verified" in refused(doc)


def test_a_record_from_elsewhere_or_of_another_kind_is_refused():
    doc = recorded()
    first(doc, "latency")["source"] = "cuda"
    assert 'source "webgpu"' in refused(doc)
    doc = recorded()
    doc["results"].append(copy.deepcopy(doc["results"][0]) | {"kind": "mystery"})  # loads elsewhere
    assert "the browser suite writes only" in refused(doc)


def test_times_out_of_order_and_a_latency_outside_its_spread_are_refused():
    doc = recorded()
    record = first(doc, "bandwidth")
    record["p10_s"], record["p90_s"] = record["p90_s"] * 2, record["p10_s"]
    assert "out of order" in refused(doc)
    doc = recorded()
    chase = first(doc, "latency")
    chase["ns"] = chase["p90_ns"] * 3
    assert "between p10_ns and p90_ns" in refused(doc)


def test_a_browser_file_must_say_which_adapter_ran_it():
    doc = recorded()
    del doc["device"]["adapter"]
    assert "adapter" in refused(doc)
    doc = recorded()
    doc["device"]["adapter"]["description"] = "x" * 500
    assert "longer than 200 characters" in refused(doc)


def test_catalog_matching_reads_only_what_the_adapter_says():
    match = webgpu.automatic_match({"vendor": "nvidia", "description": "NVIDIA GeForce RTX 4090"})
    assert match["id"] == "rtx-4090" and "adapter.info.description" in match["reason"]
    assert webgpu.automatic_match({"vendor": "apple", "description": "Apple M3 Max"})["id"] == "m3-max"
    # No variant word, no row: an M3 is not an M3 Max; a browser that names nothing matches nothing.
    assert webgpu.automatic_match({"vendor": "apple", "description": "Apple M3"}) is None
    assert webgpu.automatic_match({"vendor": "apple", "architecture": "metal-3"}) is None
    assert webgpu.automatic_match({"vendor": "amd", "description": "AMD Radeon RX 7900 XTX"}) is None
    # A software adapter is never a catalog GPU, whatever its strings say.
    fake = {"vendor": "google", "description": "H100", "is_fallback_adapter": True}
    assert webgpu.automatic_match(fake) is None


def test_the_device_is_named_from_the_adapter():
    assert webgpu.device_name({"vendor": "apple", "architecture": "metal-3"}) == "Apple GPU (metal-3)"
    assert webgpu.device_name({"vendor": "nvidia", "description": "NVIDIA GeForce RTX 4090"}) == (
        "NVIDIA GeForce RTX 4090"
    )
    swiftshader = recorded()["device"]["adapter"]
    assert webgpu.device_name(swiftshader) == "Google swiftshader (software adapter)"


def test_naming_the_gpu_labels_levels_from_its_ladder_and_marks_launch_bound_points():
    """Held to the RTX 4090 (72 MiB L2): every recorded bandwidth working set (at most 48 MiB) fits
    with room, so it is labelled L2 (or launch-bound); chase points get the ladder's level names."""
    doc = webgpu.finalize(recorded(), "rtx-4090")
    assert doc["device"]["catalog_match"] == {
        "id": "rtx-4090",
        "name": "GeForce RTX 4090",
        "reason": webgpu.READER_NAMED,
    }
    bandwidth = [r for r in doc["results"] if r["kind"] == "bandwidth"]
    assert {r["working_set_level"] for r in bandwidth} == {"L2"}
    assert all(r["launch_bound"] is not None for r in bandwidth)
    assert {r["cache_hint"] for r in bandwidth} <= {"L2", "launch-bound"}
    chase = {r["bytes"]: r["cache_hint"] for r in doc["results"] if r["kind"] == "latency"}
    assert chase[16 * 2**10] == "L1"
    assert webgpu.finalize(recorded(), "")["device"].get("catalog_match") is None
    assert webgpu.finalize(recorded())["device"].get("catalog_match") is None  # SwiftShader names none


@pytest.mark.parametrize("gpu", ["no-such-gpu", "tpu-v4", "epyc-9004-genoa"])
def test_only_a_gpu_a_browser_can_run_on_may_be_named(gpu):
    with pytest.raises(ValueError, match="is not a GPU in the catalog"):
        webgpu.finalize(recorded(), gpu)


def test_a_message_from_the_component_is_validated_like_an_upload():
    good = json.dumps({"seq": 3, "doc": recorded()})
    assert webgpu.from_component(good, 5 * 2**20)["device"]["source"] == "webgpu"
    cpu_sample = json.loads((Path(__file__).parent.parent / "measure/samples/h100-sxm-80gb.json").read_text())
    for payload, says in (
        ("{not json", "not JSON"),
        (json.dumps({"seq": 1}), "no results document"),
        (json.dumps({"seq": 1, "doc": cpu_sample}), "does not come from the browser suite"),
        (good, "more than"),
    ):
        with pytest.raises(ValueError, match=says):
            webgpu.from_component(payload, 100 if says == "more than" else 5 * 2**20)


def test_the_fma_chain_and_matmul_land_on_the_roofline_and_the_datasheet_table():
    from ui.measured import measured_roofline_points

    doc = webgpu.finalize(recorded(), "rtx-4090")
    points = measured_roofline_points(doc)
    assert {p.name.split(": ", 1)[1] for p in points} == {"float32 FMA chain", "float32 256×256×256"}
    assert all(p.dtype == "fp32" for p in points)
    fma = first(doc, "compute")
    assert next(p for p in points if "FMA" in p.name).intensity == fma["flops"] / fma["bytes"]
    row = next(r for r in load_catalog() if r["id"] == "rtx-4090")
    quantities = {r["quantity"] for r in datasheet_ratios(doc["results"], row)}
    assert {"FMA chain float32", "matmul float32"} <= quantities


def test_summary_rows_say_each_kernel_its_result_and_that_it_was_checked():
    rows = webgpu.summary_rows(recorded())
    assert len(rows) == len(recorded()["results"])
    assert {r["Checked"] for r in rows} == {"yes"}
    assert any(r["Median"].endswith("GB/s") for r in rows) and any("ns per load" in r["Median"] for r in rows)


def test_the_page_shows_an_uploaded_browser_file_and_refuses_a_forged_one():
    at = pages.open_page(PAGE, hw_source="session")
    at.file_uploader(key="hw_upload").upload("webgpu.json", RECORDED.read_bytes(), "application/json").run()
    assert not at.exception
    assert "your file webgpu.json" in " ".join(c.value for c in at.caption).replace("\\", "")
    assert len(at.get("plotly_chart")) >= 2  # bandwidth sweep, pointer-chase ladder
    forged = recorded()
    first(forged, "compute")["tflops"] *= 100
    upload = at.file_uploader(key="hw_upload")
    upload.upload("forged.json", json.dumps(forged).encode(), "application/json").run()
    assert not at.exception
    message = at.error[0].value.replace("\\", "")
    assert "forged.json cannot be used" in message and "is not flops ÷ median_s" in message


def test_text_in_a_browser_file_is_shown_as_text():
    doc = recorded()
    doc["device"]["adapter"]["description"] = "<img src=x onerror=alert(1)> **bold** [link](http://x)"
    doc["device"]["adapter"]["is_fallback_adapter"] = False
    at = pages.open_page(PAGE, hw_source="session")
    at.file_uploader(key="hw_upload").upload("evil.json", json.dumps(doc).encode(), "application/json").run()
    assert not at.exception
    header = at.header[0].value
    assert "\\<img" in header and "\\*\\*bold" in header and "\\[link\\]" in header


def test_the_browser_section_draws_a_kept_run_and_the_roofline_page_its_points():
    at = pages.open_page(PAGE, hw_section="browser")
    assert not at.exception
    doc = webgpu.from_component(json.dumps({"seq": 1, "doc": recorded()}), 5 * 2**20)
    at.session_state["hw_webgpu_doc"] = (doc, "recorded")
    at.run()
    assert not at.exception
    assert any("software adapter" in w.value for w in at.warning)
    assert [s.label for s in at.selectbox if s.label == "Which GPU is this?"]
    at.selectbox(key="hw-webgpu-gpu").set_value("rtx-4090").run()
    assert not at.exception
    assert any("Roofline: GeForce RTX 4090, FP32 matmuls and FMA chain" in m.value for m in at.markdown)
    at.switch_page("app_pages/roofline.py")
    at.query_params["rf_dtype"] = "fp32"
    at.run()
    assert not at.exception
    assert any("FMA chain" in c.proto.spec for c in at.get("plotly_chart"))


def test_an_uploaded_browser_file_keeps_the_gpu_it_was_saved_with():
    """A download made after naming the GPU draws under that GPU's roofline when loaded back."""
    named = webgpu.finalize(recorded(), "rtx-4090")
    at = pages.open_page(PAGE, hw_source="session")
    at.file_uploader(key="hw_upload").upload(
        "named.json", json.dumps(named).encode(), "application/json"
    ).run()
    assert not at.exception
    assert any("Roofline: GeForce RTX 4090, FP32" in m.value for m in at.markdown)
