"""The Your hardware page: opens on a labelled real sample, loads and validates uploads (saying
which file is shown), runs a workload, detects the machine with one install box when torch is
missing, and sends measured points to the other pages."""

import json
import sys
from pathlib import Path

import pytest

from tests import pages

ROOT = Path(__file__).resolve().parent.parent
PAGE = "app_pages/your_hardware.py"
SAMPLES = ROOT / "measure" / "samples"
CPU_SAMPLE = SAMPLES / "cpu-amd-epyc-2vcpu.json"
GPU_SAMPLE = SAMPLES / "h100-sxm-80gb.json"


@pytest.fixture(autouse=True)
def own_data_dir(tmp_path, monkeypatch):
    """Each test keeps the server's last run in its own directory (GFG_DATA_DIR)."""
    monkeypatch.setenv("GFG_DATA_DIR", str(tmp_path))
    return tmp_path


def open_page(**query: str):
    return pages.open_page(PAGE, **query)


def _captions(at) -> str:
    """Every caption's text as shown (Markdown escapes of untrusted names removed)."""
    return " ".join(c.value for c in at.caption).replace("\\", "")


def _has_nvml() -> bool:
    try:
        import pynvml

        pynvml.nvmlInit()
        pynvml.nvmlShutdown()
        return True
    except Exception:
        return False


def test_opens_on_the_gpu_sample_labelled_as_a_sample():
    """Something real to look at straight away: the H100 run, its latency ladder and decode gap."""
    at = open_page()
    assert not at.exception
    assert "shipped sample h100-sxm-80gb.json" in _captions(at)
    specs = [c.proto.spec for c in at.get("plotly_chart")]
    assert len(specs) >= 3  # bandwidth sweep, pointer-chase latency, matmuls on the roofline
    assert any("NVIDIA H100" in s for s in specs)
    shown = " ".join(str(df.value.to_dict()) for df in at.dataframe)
    assert "eager" in shown  # the decode gap: measured tok/s beside the bound


def test_the_cpu_sample_draws_bandwidth_and_comparisons():
    at = open_page(hw_sample=CPU_SAMPLE.name)
    assert not at.exception
    assert f"shipped sample {CPU_SAMPLE.name}" in _captions(at)
    assert len(at.get("plotly_chart")) >= 2
    shown = " ".join(str(df.value.to_dict()) for df in at.dataframe)
    assert "Simulator (dB)" in shown and "Predicted ÷ measured" in shown


def test_an_upload_says_which_file_is_shown_and_a_rejected_one_says_why():
    at = open_page(hw_source="session")
    assert not at.exception
    assert any("python -m measure" in i.value for i in at.info)  # one box: how to get results
    at.file_uploader(key="hw_upload").upload("good.json", CPU_SAMPLE.read_bytes(), "application/json").run()
    assert not at.exception
    assert "your file good.json" in _captions(at)
    at.file_uploader(key="hw_upload").upload("bad.json", b'{"schema": 99}', "application/json").run()
    assert not at.exception
    assert at.error and "bad.json cannot be used" in at.error[0].value.replace("\\", "")
    assert "your file good.json" in _captions(at)  # the results still shown say where they are from


def test_other_pages_show_the_loaded_measurements():
    """After loading results, the roofline page draws the measured matmul points: a CPU's on that
    CPU's own measured roofs, never under the H100's (issue 26)."""
    at = open_page(hw_sample=CPU_SAMPLE.name)
    at.switch_page("app_pages/roofline.py").run()
    assert not at.exception
    gpu_chart, cpu_chart = (json.loads(c.proto.spec) for c in at.get("plotly_chart")[:2])
    assert "AMD EPYC" not in json.dumps(gpu_chart)  # not under a GPU's roof
    names = " ".join(str(t.get("name", "")) for t in cpu_chart["data"])
    assert "AMD EPYC" in names and "measured" in names and "H100" not in names
    assert any("own roofs" in m.value for m in at.markdown)


@pytest.mark.skipif(_has_nvml(), reason="NVML works on this machine: the no-GPU message does not apply")
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


def test_a_finished_run_survives_a_reload_of_the_page():
    """A reload starts a new session (session state is gone): the run is read back from the
    server's data directory, not replaced by "install torch" when torch is installed."""
    at = open_page(hw_section="run", hw_workloads="launch_overhead", hw_quick="true")
    at.text_input(key="hw_device").set_value("cpu")
    at.button(key="hw_run").click().run()
    assert any("survive a reload" in s.value for s in at.success)
    created = at.session_state["measure_results"]["created_utc"]
    reloaded = open_page(hw_section="results", hw_source="session")  # a fresh session
    assert not reloaded.exception
    assert reloaded.session_state["measure_results"]["created_utc"] == created
    assert "the last run on this server" in _captions(reloaded)
    assert not any("install" in i.value.lower() for i in reloaded.info)


def test_detect_shows_the_cpu_and_each_layer_status():
    at = open_page(hw_section="detect")
    at.button(key="hw_detect").click().run()
    assert not at.exception
    assert "cores" in " ".join(m.value for m in at.markdown)
    assert len(at.success) + len(at.info) >= 4  # torch, CUDA, NVML, MPS: each says where it stands


def test_without_torch_detect_shows_one_install_box(monkeypatch):
    """No torch (as on Streamlit Community Cloud): one box says what to do, not one per layer."""
    monkeypatch.setitem(sys.modules, "torch", None)  # `import torch` now raises ImportError
    at = open_page(hw_section="detect")
    at.button(key="hw_detect").click().run()
    assert not at.exception
    boxes = [i.value for i in at.info if "requirements-measure.txt" in i.value]
    assert len(boxes) == 1, boxes


def test_measured_points_reach_the_other_simulator_pages():
    """Loaded results appear beside the predictions on Will it fit?, Parallelism and the CPU ladder."""
    at = open_page(hw_sample=CPU_SAMPLE.name)
    at.switch_page("app_pages/will_it_fit.py").run()
    assert not at.exception
    assert any("Predicted ÷ measured" in str(df.value.columns) for df in at.dataframe)
    at.query_params["par_view"] = "communication"
    at.switch_page("app_pages/parallelism.py").run()
    assert not at.exception
    assert any("ring formula" in c.value for c in at.caption)
    at.query_params.clear()
    at.query_params["mh_a"] = "cpu-norvig"
    at.switch_page("app_pages/memory_hierarchy.py").run()
    assert not at.exception
    assert any("Measured points" in c.value for c in at.caption)


def test_the_gpu_sample_puts_measured_latency_on_the_h100_ladder():
    at = open_page()
    at.query_params.clear()
    at.query_params["mh_b"] = "none"
    at.switch_page("app_pages/memory_hierarchy.py").run()
    assert not at.exception
    assert "pointer chase" in at.get("plotly_chart")[0].proto.spec


def test_names_in_an_uploaded_file_cannot_inject_markdown_or_html():
    doc = json.loads(CPU_SAMPLE.read_text())
    doc["device"]["name"] = "![x](http://example.invalid/a.png) <img src=x onerror=alert(1)>"
    at = open_page(hw_source="session")
    at.file_uploader(key="hw_upload").upload("evil.json", json.dumps(doc).encode(), "application/json").run()
    assert not at.exception
    heading = next(h.value for h in at.header if "img" in h.value)
    assert "\\!\\[x\\]" in heading and "\\<img" in heading


def test_every_shipped_sample_is_offered():
    from content.schema import page_params

    offered = set(page_params()["your-hardware"]["hw_sample"].options)
    assert offered == {p.name for p in SAMPLES.glob("*.json")}


def test_the_cpu_sample_puts_measured_latency_on_the_cpu_ladder():
    """Issue 12: `python -m measure --device cpu` records latency; the CPU ladder draws it."""
    at = open_page(hw_sample="cpu-intel-xeon-2vcpu.json")
    at.query_params.clear()
    at.query_params["mh_a"] = "cpu-norvig"
    at.query_params["mh_b"] = "none"
    at.switch_page("app_pages/memory_hierarchy.py").run()
    assert not at.exception
    assert "pointer chase" in at.get("plotly_chart")[0].proto.spec


def test_the_h100_sample_draws_each_precisions_matmuls_against_their_own_roof():
    """Issue 17: the sample's FP8 and FP32 matmuls were drawn against the BF16 roof ("147 % of
    it"). Now one roofline per precision measured, and no point of the real H100 run lands above
    the roof of its own precision."""
    from measure.samples import H100_SAMPLE, load_sample
    from ui.views.your_hardware import results_view

    built = results_view("h100-test", load_sample(H100_SAMPLE))
    roofs = {name: spec for name, spec in built["charts"] if name.startswith("roof-")}
    assert {"roof-bf16", "roof-fp8", "roof-fp32"} <= set(roofs), sorted(roofs)
    for name, spec in roofs.items():
        measured = [t for t in spec["data"] if t.get("legendgroup") == "measured"]
        assert measured, name
        for trace in measured:
            assert set(trace["marker"]["symbol"]) == {"star"}, (name, trace["hovertext"])
            assert all("counting or unit error" not in h for h in trace["hovertext"])
