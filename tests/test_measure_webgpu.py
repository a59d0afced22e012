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
        ("matmul", "tflops", "is not flops ÷ median_s"),
        ("launch_overhead", "ops_per_s", "is not 1 ÷ median_s"),
        ("bandwidth", "bytes_per_s", "is not bytes ÷ median_s"),
        ("bandwidth", "best_gb_per_s", "is not bytes ÷ min_s"),
        ("compute", "flops_per_s", "is not flops ÷ median_s"),
        ("matmul", "flops_per_s", "is not flops ÷ median_s"),
        ("compute", "intensity_flop_per_byte", "is not flops ÷ bytes"),
        ("latency", "ns", "is not the median"),
        ("latency", "p90_ns", "is not the p90"),
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


@pytest.mark.parametrize(
    ("field", "factor"), [("bytes_per_s", 1000), ("flops_per_s", 1000), ("gb_per_s", 1000)]
)
def test_every_drawn_rate_times_1000_is_refused(field, factor):
    """The issue's forgery: a rate the charts draw, ×1000, with the times left as they were."""
    doc = recorded()
    for record in doc["results"]:
        if field in record:
            record[field] *= factor
    assert "is not" in refused(doc)


def consistent_forgery(doc: dict, factor: float = 1000) -> dict:
    """Every time ÷ factor and every rate × factor: a file whose own arithmetic holds."""
    for r in doc["results"]:
        for name in ("median_s", "p10_s", "p90_s", "min_s", "sample_s"):
            if name in r:
                r[name] /= factor
        for name in (
            "gb_per_s",
            "bytes_per_s",
            "best_gb_per_s",
            "tflops",
            "flops_per_s",
            "best_tflops",
            "ops_per_s",
        ):
            if name in r:
                r[name] *= factor
        if r["kind"] == "latency":
            r["long_walk_s"] = [t / factor for t in r["long_walk_s"]]
            r["short_walk_s"] = [t / factor for t in r["short_walk_s"]]
            for name in ("ns", "p10_ns", "p90_ns", "min_ns"):
                r[name] /= factor
    return doc


def test_a_consistent_forgery_is_refused_by_what_a_software_adapter_can_do():
    doc = consistent_forgery(recorded())
    message = refused(doc)
    assert "more than a software adapter can move" in message and "EPYC 9004" in message
    # the chase alone: loads faster than an L1 hit
    chase_only = recorded()
    chase_only["results"] = [r for r in chase_only["results"] if r["kind"] == "latency"]
    assert "faster than any load can be" in refused(consistent_forgery(chase_only))
    caps = webgpu.software_caps()
    assert caps["bytes_per_s"] == 460.8e9 and caps["load_floor_ns"] == pytest.approx(0.5)


def test_a_relabelled_browser_file_still_gets_the_browser_checks():
    doc = recorded()
    doc["tool"] = "gpu-field-guide measure"
    doc["device"].update(type="cuda", source="cuda", device="cuda:0")
    for record in doc["results"]:
        record["source"] = "cuda"
        record["device"] = "cuda:0"
    assert webgpu.is_browser_document(doc)
    assert 'source "webgpu"' in refused(doc)
    # stripped of the device marks too, its records' own fields still say where they came from
    del doc["device"]["adapter"], doc["webgpu_run"]
    assert webgpu.is_browser_document(doc)
    assert "adapter" in refused(doc)


@pytest.mark.parametrize(
    ("kind", "field", "value", "says"),
    [
        ("latency", "p10_ns", "abc", "must be a finite number"),
        ("latency", "long_walk_s", "abc", "must be a list"),
        ("bandwidth", "op", 7, "must be text"),
        ("bandwidth", "p90_s", "abc", "must be a finite number"),
        ("compute", "invocations", [1], "must be a finite number"),
        ("matmul", "noisy", "yes", "must be true or false"),
        ("launch_overhead", "mode", None, "must be text"),
        ("bandwidth", "extra_field", {"a": 1}, "must be text, a number"),
    ],
)
def test_a_field_of_the_wrong_type_is_refused_with_its_name(kind, field, value, says):
    doc = recorded()
    first(doc, kind)[field] = value
    message = refused(doc)
    assert says in message and field in message


def test_wrong_types_in_the_device_and_run_are_refused():
    for where, key, value in (
        ("timer", "resolution_s", "abc"),
        ("timer", "kind", 3),
        ("browser", "user_agent", {"x": 1}),
    ):
        doc = recorded()
        doc["device"][where][key] = value
        assert key in refused(doc)
    doc = recorded()
    doc["webgpu_run"]["elapsed_s"] = "long"
    assert "elapsed_s" in refused(doc)


def test_a_matmul_must_count_its_own_flops_and_bytes():
    doc = recorded()
    first(doc, "matmul")["flops"] *= 2
    assert "is not 2mnk" in refused(doc)
    doc = recorded()
    first(doc, "matmul")["bytes"] //= 2
    assert "each matrix moved once" in refused(doc)


def test_drawn_figures_are_recomputed_from_bytes_flops_and_times():
    """Within the 1 % tolerance a stored rate may differ; what is drawn is the recomputed one."""
    doc = recorded()
    bandwidth = first(doc, "bandwidth")
    bandwidth["gb_per_s"] *= 1.009
    loaded = load_results(json.dumps(doc)).to_dict()
    drawn = first(loaded, "bandwidth")
    assert drawn["gb_per_s"] == bandwidth["bytes"] / bandwidth["median_s"] / 1e9
    chase = first(loaded, "latency")
    per_load = sorted(
        (a - b) / (chase["loads"] - chase["short_loads"]) * 1e9
        for a, b in zip(chase["long_walk_s"], chase["short_walk_s"], strict=True)
    )
    assert chase["ns"] == pytest.approx(per_load[len(per_load) // 2]) and chase["min_ns"] == per_load[0]


def test_the_chase_walks_at_least_one_lap_of_every_ring_past_8_mib():
    """Recorded on the software adapter: each ring's timed walks (pairs of a long and a short walk,
    each starting where the last ended) cover its every line at least once, up to 256 MiB."""
    chase = [r for r in recorded()["results"] if r["kind"] == "latency"]
    assert max(r["bytes"] for r in chase) >= 256 * 2**20
    for r in chase:
        lines = r["bytes"] // r["line_bytes"]
        timed = len(r["long_walk_s"]) * (r["loads"] + r["short_loads"])
        assert timed == r["timed_loads"] and r["warm_loads"] >= lines
        if r["bytes"] > 8 * 2**20:
            assert timed >= lines, (r["bytes"], timed, lines)
            assert "starts where the previous one ended" in r["method"]


def test_the_launch_bound_rule_uses_the_fastest_dispatch_sample():
    """The issue's 9.65 ms outlier as the in-pass dispatch's median (its fastest sample unchanged):
    the bandwidth points are labelled as in the normal run."""
    normal = webgpu.finalize(recorded(), "rtx-4090")
    doc = recorded()
    dispatch = next(r for r in doc["results"] if r.get("mode") == "webgpu-dispatch")
    dispatch["median_s"] = dispatch["p90_s"] = 9.65e-3
    dispatch["ops_per_s"] = 1 / 9.65e-3
    slow = webgpu.finalize(json.loads(load_results(json.dumps(doc)).to_json()), "rtx-4090")
    labels = [(r["bytes"], r["cache_hint"]) for r in normal["results"] if r["kind"] == "bandwidth"]
    assert labels == [(r["bytes"], r["cache_hint"]) for r in slow["results"] if r["kind"] == "bandwidth"]
    assert "fastest sample" in slow["launch_reference"]


def test_an_in_pass_dispatch_dearer_than_a_submit_and_wait_is_not_used():
    doc = recorded()
    records = doc["results"]
    submit = next(r for r in records if r.get("mode") == "webgpu-submit")
    dispatch = next(r for r in records if r.get("mode") == "webgpu-dispatch")
    launch_s, why = webgpu.launch_reference(records)
    assert launch_s == dispatch["min_s"]
    for name in ("min_s", "p10_s", "median_s", "p90_s"):
        dispatch[name] = 2 * submit["p90_s"]
    launch_s, why = webgpu.launch_reference(records)
    assert launch_s is None and "cannot be" in why
    assert all(r["launch_bound"] is None for r in webgpu.finalize(doc)["results"] if r["kind"] == "bandwidth")


def test_noisy_points_are_marked_and_left_out_of_the_headline():
    doc = recorded()
    triads = [r for r in doc["results"] if r["kind"] == "bandwidth" and r["op"] == "triad"]
    top = max(triads, key=lambda r: r["bytes"])
    top["p90_s"] = top["p10_s"] * 3  # a 3x spread
    loaded = json.loads(load_results(json.dumps(doc)).to_json())
    marked = next(r for r in loaded["results"] if r["kind"] == "bandwidth" and r["bytes"] == top["bytes"])
    assert marked["noisy"] is True and marked["spread"] == pytest.approx(3)
    finished = webgpu.finalize(loaded, "rtx-4090")
    assert any("noisy point" in n for n in finished["webgpu_notices"])
    assert webgpu.headline(finished)["bytes"] != top["bytes"]


def test_a_ladder_that_falls_as_the_ring_grows_is_flagged():
    doc = recorded()
    chase = sorted((r for r in doc["results"] if r["kind"] == "latency"), key=lambda r: r["bytes"])
    doc["results"] = [r for r in doc["results"] if r["kind"] != "latency"] + [chase[0], chase[-1]]
    assert not any("ladder falls" in n for n in webgpu.notices(webgpu.finalize(doc)))
    chase[-1]["ns"] = chase[0]["ns"] / 2
    assert any("ladder falls" in n for n in webgpu.notices(doc))


def test_the_headline_names_the_gpu_and_prints_small_ratios_in_full():
    finished = webgpu.finalize(recorded(), "rtx-4090")
    line = webgpu.headline(finished)
    triad = max(
        (r for r in finished["results"] if r["kind"] == "bandwidth" and r["op"] == "triad"),
        key=lambda r: r["bytes"],
    )
    assert line["gb_per_s"] == pytest.approx(triad["bytes"] / triad["median_s"] / 1e9)
    assert line["gpu"] == "GeForce RTX 4090" and line["ratio"] == pytest.approx(line["gb_per_s"] / 1008)
    assert "% of GeForce RTX 4090" in line["text"] and " 0 %" not in line["text"]
    assert webgpu._percent(0.00004) == "0.004 %" and webgpu._percent(0.5) == "50 %"
    assert webgpu.headline(webgpu.finalize(recorded(), ""))["ratio"] is None


def test_the_checks_have_one_home_and_no_import_circle():
    import subprocess
    import sys

    code = (
        "import sys, measure.results; "
        "print('measure.webgpu' in sys.modules, 'measure.launch_bound' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.split() == ["False", "False"]
    source = (Path(__file__).parent.parent / "measure/webgpu_checks.py").read_text(encoding="utf-8")
    assert "from measure.results" not in source and "from measure.webgpu " not in source
    assert webgpu.check_document is __import__("measure.webgpu_checks").webgpu_checks.check_document


def test_times_out_of_order_and_a_latency_outside_its_spread_are_refused():
    doc = recorded()
    record = first(doc, "bandwidth")
    record["p10_s"], record["p90_s"] = record["p90_s"] * 2, record["p10_s"]
    assert "out of order" in refused(doc)
    doc = recorded()
    chase = first(doc, "latency")
    chase["ns"] = chase["p90_ns"] * 3
    assert "between p10_ns and p90_ns" in refused(doc)
    doc = recorded()
    first(doc, "latency")["long_walk_s"][0] *= 5  # a raw walk edited: the figures no longer follow
    assert "is not the" in refused(doc)


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
    # An RX 7900 XT is not the catalog's RX 7900 XTX: a suffix names another card.
    assert webgpu.automatic_match({"vendor": "amd", "description": "AMD Radeon RX 7900 XT"}) is None
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


def test_the_browser_section_says_its_headline_notices_and_its_own_method():
    """The browser section's 'About these measurements' describes the browser records (warm cache,
    the noise limit, 64 dispatches, 100 ticks), not the Python suite's CUDA events and L2 flush."""
    from content import load_page

    method = load_page("your_hardware").section("browser-method")
    records = recorded()["results"]
    assert all(r["warm_cache"] is True and r["l2_flushed"] is False for r in records)
    assert "Warm cache" in method and "`l2_flushed: false`" in method and "CUDA events" not in method
    assert f"more than {webgpu.NOISE_LIMIT:g}× its 10th" in method and "at least 64 per sample" in method
    assert "100 ticks" in method
    chase = first(recorded(), "latency")
    assert (
        "starts where the previous one ended" in chase["method"] and "starts where the last ended" in method
    )
    at = pages.open_page(PAGE, hw_section="browser")
    doc = webgpu.from_component(json.dumps({"seq": 1, "doc": recorded()}), 5 * 2**20)
    at.session_state["hw_webgpu_doc"] = (doc, "recorded")
    at.run()
    assert not at.exception
    assert any(s.value.startswith("Memory bandwidth ≈") for s in at.subheader)
    assert any("Warm cache" in m.value for m in at.markdown)
    assert not any("CUDA events" in m.value for m in at.markdown)
    at.selectbox(key="hw-webgpu-gpu").set_value("rtx-4090").run()
    headline = next(s.value for s in at.subheader if s.value.startswith("Memory bandwidth"))
    assert "% of GeForce RTX 4090" in headline.replace("\\", "")


def test_forged_uploads_are_refused_on_the_page_without_a_traceback():
    """The issue's forgeries through the uploader: a message each, nothing drawn, no exception."""
    relabelled = recorded()
    relabelled["device"].update(source="cuda", type="cuda")
    for r in relabelled["results"]:
        r["source"] = "cuda"
    wrong_type = recorded()
    first(wrong_type, "latency")["p10_ns"] = "abc"
    scaled = recorded()
    for r in scaled["results"]:
        for name in ("bytes_per_s", "flops_per_s"):
            if name in r:
                r[name] *= 1000
    for name, doc in (
        ("consistent.json", consistent_forgery(recorded())),
        ("scaled.json", scaled),
        ("relabelled.json", relabelled),
        ("types.json", wrong_type),
    ):
        at = pages.open_page(PAGE, hw_source="session")
        at.file_uploader(key="hw_upload").upload(name, json.dumps(doc).encode(), "application/json").run()
        assert not at.exception, name
        assert f"{name} cannot be used" in at.error[0].value.replace("\\", ""), name
        assert not at.get("plotly_chart"), name


def test_an_uploaded_browser_file_is_said_to_be_self_reported():
    at = pages.open_page(PAGE, hw_source="session")
    at.file_uploader(key="hw_upload").upload("mine.json", RECORDED.read_bytes(), "application/json").run()
    assert not at.exception
    assert any("self-reported" in c.value for c in at.caption)


def test_the_h200_wgpu_run_is_the_calibration_the_page_states():
    """The shared H200 run of the same WGSL through wgpu (Vulkan), tests/data/h200-wgsl-wgpu.json,
    against the shipped H200 torch sample: the ratio the page states, and kernels of the same shape
    (vec4<f32> arrays, workgroups of 256) in ui/webgpu.js."""
    from content import load_page

    wgpu = json.loads((Path(__file__).parent / "data" / "h200-wgsl-wgpu.json").read_text(encoding="utf-8"))
    assert wgpu["adapter"]["device"] == "NVIDIA H200" and wgpu["adapter"]["backend_type"] == "Vulkan"
    torch_run = json.loads((Path(__file__).parent.parent / "measure/samples/h200-sxm-141gb.json").read_text())
    triad = max(
        (r for r in torch_run["results"] if r["kind"] == "bandwidth" and r["op"] == "triad"),
        key=lambda r: r["bytes"],
    )
    ratio = wgpu["triad_GBps"] / triad["gb_per_s"]
    text = load_page("your_hardware").section("browser-limits")
    assert f"read {wgpu['triad_GBps']:,.0f} GB/s, {ratio:.2f} of the {triad['gb_per_s']:,.0f} GB/s" in text
    script = (Path(__file__).parent.parent / "ui/webgpu.js").read_text(encoding="utf-8")
    kernel = script[script.index("  triad: /* wgsl */") : script.index("  // Counts, on the GPU")]
    assert "array<vec4<f32>>" in kernel and "@workgroup_size(256)" in kernel and "b[i] + S * c[i]" in kernel
