"""The Your hardware page: opens without torch, loads results (sample, upload, bad upload), runs."""

import json
from pathlib import Path

from tests import pages

ROOT = Path(__file__).resolve().parent.parent
PAGE = "app_pages/your_hardware.py"


def open_page(**query: str):
    return pages.open_page(PAGE, **query)


SAMPLE = next((ROOT / "measure" / "samples").glob("*.json"))


def test_opens_on_detect_without_probing():
    at = open_page()
    assert not at.exception
    assert any("Nothing has been probed yet" in c.value for c in at.caption)


def test_sample_results_draw_bandwidth_roofline_and_comparisons():
    at = open_page(hw_section="results", hw_source="sample")
    assert not at.exception
    assert len(at.get("plotly_chart")) >= 2  # bandwidth curve and all-reduce vs ring model
    shown = " ".join(str(df.value.to_dict()) for df in at.dataframe)
    assert "Simulator (dB)" in shown and "Predicted ÷ measured" in shown


def test_uploaded_results_are_validated():
    at = open_page(hw_section="results")
    at.file_uploader(key="hw_upload").upload("bad.json", b'{"schema": 99}', "application/json").run()
    assert not at.exception
    assert at.error and "cannot be used" in at.error[0].value
    at.file_uploader(key="hw_upload").upload("good.json", SAMPLE.read_bytes(), "application/json").run()
    assert not at.exception
    assert any("Loaded" in s.value for s in at.success)


def test_other_pages_show_the_loaded_measurements():
    """After loading results, the roofline page draws the measured matmul points."""
    at = open_page(hw_section="results", hw_source="sample")
    at.switch_page("app_pages/roofline.py").run()
    assert not at.exception
    chart = at.get("plotly_chart")[0].proto.spec
    assert "AMD EPYC" in chart


def test_telemetry_without_a_gpu_explains_itself():
    at = open_page(hw_section="telemetry")
    at.toggle(key="hw_live").set_value(True).run()
    assert not at.exception
    assert at.info, "no NVML here: the page must say why there is no telemetry"


def test_running_one_workload_from_the_page_stores_its_results():
    at = open_page(hw_section="run", hw_workloads="launch_overhead", hw_quick="true")
    at.text_input(key="hw_device").set_value("cpu")
    at.button(key="hw_run").click().run()
    assert not at.exception
    assert any("results" in s.value for s in at.success), [i.value for i in at.info]
    stored = at.session_state["measure_results"]
    assert stored["results"][0]["kind"] == "launch_overhead"
    json.dumps(stored)  # what other pages read is plain JSON


def test_detect_shows_the_cpu_and_each_layer_status():
    at = open_page()
    at.button(key="hw_detect").click().run()
    assert not at.exception
    shown = " ".join(m.value for m in at.markdown)
    assert "cores" in shown
    assert len(at.success) + len(at.info) >= 4  # torch, CUDA, NVML, MPS: each says where it stands


def test_measured_points_reach_the_other_simulator_pages():
    """Loaded results appear beside the predictions on Will it fit?, Parallelism and the CPU ladder."""
    at = open_page(hw_section="results", hw_source="sample")
    at.switch_page("app_pages/will_it_fit.py").run()
    assert not at.exception
    assert any("Predicted ÷ measured" in str(df.value.columns) for df in at.dataframe)
    at.switch_page("app_pages/parallelism.py").run()
    assert not at.exception
    assert any("ring formula" in c.value for c in at.caption)
    at.query_params["mh_a"] = "cpu-norvig"
    at.switch_page("app_pages/memory_hierarchy.py").run()
    assert not at.exception
    assert any("Measured points" in c.value for c in at.caption)


def test_names_in_an_uploaded_file_cannot_inject_markdown_or_html():
    import json as _json

    doc = _json.loads(SAMPLE.read_text())
    doc["device"]["name"] = "![x](http://example.invalid/a.png) <img src=x onerror=alert(1)>"
    at = open_page(hw_section="results")
    at.file_uploader(key="hw_upload").upload("evil.json", _json.dumps(doc).encode(), "application/json").run()
    assert not at.exception
    heading = next(h.value for h in at.subheader if "img" in h.value)
    assert "\\!\\[x\\]" in heading and "\\<img" in heading
