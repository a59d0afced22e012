"""The roofline page in Streamlit's harness: URL state, presets, the decode batch crossing the ridge."""

from simulators import roofline
from simulators.hardware import get_accelerator
from simulators.presets import get_model_preset
from tests import pages
from tests.pages import metrics

PAGE = "app_pages/roofline.py"


def open_page(**query: str):
    return pages.open_page(PAGE, **query)


def test_default_view_shows_llama_3_8b_decode_crossover_on_h100():
    at = open_page()
    assert not at.exception
    expected = roofline.decode_crossover_batch(
        get_model_preset("llama-3-8b").spec, get_accelerator("h100-sxm")
    )
    assert metrics(at)["Compute-bound from batch"] == f"{expected:,}"
    assert metrics(at)["Decode step bound by"] == "memory"


def test_batch_from_the_url_past_the_crossover_is_compute_bound():
    at = open_page(rf_batch="512")
    assert not at.exception
    assert metrics(at)["Decode step bound by"] == "compute"


def test_moving_the_batch_slider_changes_the_bound():
    at = open_page()
    at.select_slider(key="rf_batch").set_value(1024).run()
    assert not at.exception
    assert metrics(at)["Decode step bound by"] == "compute"
    assert at.query_params["rf_batch"] in (["1024"], "1024")  # the address follows the slider


def test_long_context_never_crosses_and_says_why():
    at = open_page(rf_ctx="8192", rf_batch="4096")
    assert not at.exception
    assert metrics(at)["Compute-bound from batch"] == "never"
    limit = roofline.decode_intensity_limit(get_model_preset("llama-3-8b").spec, 8192)
    helps = [m.proto.help for m in at.get("metric")]
    assert any("levels off" in h and f"{limit:,.1f}" in h for h in helps)


def test_accelerators_and_sets_come_from_the_url():
    at = open_page(rf_gpus="mi300x,b200", rf_sets="attention", rf_dtype="fp8")
    assert not at.exception
    assert at.multiselect(key="rf_gpus").value == ["mi300x", "b200"]
    assert at.multiselect(key="rf_sets").value == ["attention"]


def test_a_precision_a_chip_lacks_is_explained_not_drawn():
    at = open_page(rf_gpus="a100-80gb-sxm", rf_dtype="fp8")
    assert not at.exception
    assert any("No sourced dense FP8 peak" in i.value for i in at.info)


def test_every_preset_opens():
    from content import load_page

    for preset in load_page("roofline").meta["presets"]:
        at = open_page(preset=preset["id"])
        assert not at.exception, preset["id"]
