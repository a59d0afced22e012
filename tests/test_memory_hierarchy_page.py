"""The memory-hierarchy page in Streamlit's harness: opens, follows the URL, compares two families."""

from simulators import hierarchy
from tests import pages

PAGE = "app_pages/memory_hierarchy.py"


def open_page(**query: str):
    return pages.open_page(PAGE, **query)


def test_page_opens_and_every_view_draws():
    for name in ("ladder", "transfer", "littles", "placement"):
        at = open_page(mh_view=name)
        assert not at.exception, name
        assert at.get("plotly_chart"), name


def test_url_chooses_the_hardware_and_the_load_width():
    at = open_page(mh_a="a100-80gb-sxm", mh_b="none", mh_load="16", mh_view="littles")
    assert not at.exception
    assert at.selectbox(key="mh_a").value == "a100-80gb-sxm"
    assert at.select_slider(key="mh_load").value == 16
    hbm = hierarchy.get_level("a100-80gb-sxm", "device-memory")
    warps = f"{hierarchy.warps_in_flight(hbm, 16):,.1f}"
    assert any(warps in str(df.value.to_dict()) for df in at.dataframe)


def test_offloading_a_70b_model_shows_its_cost_per_token():
    at = open_page(preset="offload-70b")
    assert not at.exception
    labels = [m.label for m in at.get("metric")]
    assert labels.count("Time per token") == 2  # H100 and GH200 side by side


def test_a_family_without_a_host_link_or_sm_count_does_not_crash():
    at = open_page(mh_a="m3-max", mh_b="cpu-norvig")
    assert not at.exception
    shown = " ".join(i.value for i in at.info)
    assert "no published latency measurements" in shown  # Apple publishes no GPU cache latencies
    at = open_page(mh_a="m3-max", mh_b="cpu-norvig", mh_view="placement")
    assert not at.exception
    assert "no device-memory level" in " ".join(i.value for i in at.info)  # a CPU has nothing to offload


def test_every_number_on_the_ladder_is_listed_with_its_source():
    at = open_page(mh_a="h100-sxm", mh_b="none")
    assert not at.exception
    table = next(df.value for df in at.dataframe if "Source" in df.value.columns)
    assert len(table) == len(hierarchy.family("h100-sxm").levels)
    assert table["Source"].str.startswith("http").all()


def test_a_fresh_ladder_shows_the_shipped_h100_measurements_and_why_they_differ():
    at = open_page(preset="h100-ladder")
    assert not at.exception
    spec = at.get("plotly_chart")[0].proto.spec
    assert "Measured" in spec and "pointer chase over 1 GiB" in spec  # the sample's crosses
    assert any("h100-sxm-80gb.json" in c.value for c in at.caption)  # labelled as a sample
    tables = [df.value for df in at.dataframe if "Measured ÷ published" in df.value.columns]
    assert len(tables) == 1
    hbm = tables[0].set_index("Level").loc["HBM3"]
    assert hbm["Measured, ns"] == "214–247" and hbm["Published, ns"] == "309–421"
    assert any("TLB" in m.value for m in at.markdown)  # the explanation beside the table


def test_a_gpu_without_a_sample_gets_no_measured_points_or_table():
    at = open_page(mh_a="a100-80gb-sxm", mh_b="none", mh_view="ladder")
    assert not at.exception
    assert "Measured" not in at.get("plotly_chart")[0].proto.spec
    assert not [df for df in at.dataframe if "Measured ÷ published" in df.value.columns]
