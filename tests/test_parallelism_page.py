"""The parallelism page in Streamlit's harness: the issue's layout, bad layouts, every tab."""

from simulators import parallelism as par
from simulators.presets import get_model_preset
from tests import pages
from tests.pages import metrics

PAGE = "app_pages/parallelism.py"


def open_page(**query: str):
    return pages.open_page(PAGE, **query)


def test_llama_3_70b_on_64_h100_matches_the_model():
    """TP 8, PP 4, DP 2, ZeRO-1, 16 micro-batches: the page shows the model's memory and bubble."""
    at = open_page(preset="llama3-70b-64xh100")
    assert not at.exception
    layout = par.Layout(
        dp=2,
        tp=8,
        pp=4,
        zero_stage=1,
        num_microbatches=16,
        seq=4096,
        nodes=8,
        gpus_per_node=8,
        sequence_parallel=True,
        recompute="selective",
    )
    memory = par.per_gpu_memory(get_model_preset("llama-3-70b").spec, layout)
    shown = metrics(at)
    assert shown["Memory on the busiest GPU"] == f"{memory.total_bytes / 1e9:,.1f} GB"
    assert shown["Pipeline bubble"] == f"{3 / 19:.1%}"
    assert len(at.get("button_group")[0].proto.options) == 4  # grid, memory, communication, pipeline


def test_degrees_that_do_not_multiply_to_the_cluster_get_a_clear_message():
    at = open_page(par_nodes="2", par_gpn="8", par_tp="8", par_pp="4", par_dp="2")
    assert not at.exception
    assert "must multiply to the GPU count" in at.error[0].value
    assert "16 GPUs" in at.caption[-1].value or "16" in at.caption[-1].value


def test_every_preset_opens():
    from content import load_page

    for preset in load_page("parallelism").meta["presets"]:
        at = open_page(preset=preset["id"])
        assert not at.exception, preset["id"]
        assert not at.error, (preset["id"], [e.value for e in at.error])


def test_tensor_parallel_over_pcie_instead_of_nvlink_costs_efficiency():
    nvlink = open_page(preset="llama3-70b-64xh100")
    pcie = open_page(preset="llama3-70b-64xh100", par_intra="pcie-gen4-x16")
    assert not pcie.exception
    efficiency = [int(metrics(at)["Scaling efficiency"].rstrip("%")) for at in (nvlink, pcie)]
    assert efficiency[1] < efficiency[0]
