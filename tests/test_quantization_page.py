"""The quantization page in Streamlit's harness: one format, all formats, outliers, matmul, sizes."""

from simulators import quantization as q
from tests import pages
from tests.pages import metrics

PAGE = "app_pages/quantization.py"


def open_page(**query: str):
    return pages.open_page(PAGE, **query)


def test_default_int8_per_tensor_on_a_gaussian():
    at = open_page()
    assert not at.exception
    x = q.make_tensor("gaussian", (1024, 1024), 0)
    expected = q.sqnr_db(x, q.quantize(x, "int8", "tensor"))
    assert metrics(at)["SQNR"] == f"{expected:.2f} dB"
    assert at.get("button_group")[0].proto.options  # the view picker: one format, all formats, …


def test_each_view_draws_only_its_own_charts():
    """Only the open view is computed (a rerun is a class's capacity): the matmul view draws its
    two charts and none of the one-format histograms."""
    at = open_page(q_view="matmul", q_alpha="0.75")
    assert not at.exception
    assert len(at.get("plotly_chart")) == 2
    assert "SQNR" not in metrics(at)


def test_outlier_preset_shows_per_tensor_int8_wrecked():
    at = open_page(preset="int8-outliers")
    assert not at.exception
    x = q.make_tensor("activations_outlier_channels", (1024, 1024), 0)
    assert metrics(at)["SQNR"] == f"{q.sqnr_db(x, q.quantize(x, 'int8', 'tensor')):.2f} dB"


def test_group_nf4_from_the_url_costs_its_scale_bits():
    at = open_page(q_fmt="nf4", q_gran="group", q_group="64")
    assert not at.exception
    assert metrics(at)["Bits per parameter"] == "4.500"


def test_impossible_combination_is_explained():
    at = open_page(q_fmt="mxfp4", q_gran="channel")
    assert not at.exception
    assert at.warning and "does not exist" in at.warning[0].value


def test_every_preset_opens():
    from content import load_page

    for preset in load_page("quantization").meta["presets"]:
        at = open_page(preset=preset["id"])
        assert not at.exception, preset["id"]
