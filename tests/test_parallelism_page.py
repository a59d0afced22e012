"""The parallelism page in Streamlit's harness: the issue's layout, bad layouts, every tab."""

import pytest

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


def test_a_link_whose_degrees_do_not_multiply_is_corrected_and_says_so():
    """TP 8 × PP 4 × DP 2 on 16 GPUs: TP is kept, PP and DP follow, and the page says so (issue 34:
    it used to print an error and a wall of 24 layouts)."""
    at = open_page(par_nodes="2", par_gpn="8", par_tp="8", par_pp="4", par_dp="2")
    assert not at.exception and not at.error
    values = {k: at.number_input(key=k).value for k in ("par_tp", "par_pp", "par_dp")}
    assert values == {"par_tp": 8, "par_pp": 2, "par_dp": 1}
    said = " ".join(i.value for i in at.info)
    assert "The cluster has 16 GPUs" in said and "PP 4 → 2" in said and "DP 2 → 1" in said


def test_changing_one_degree_keeps_the_product_and_says_which_followed():
    """The reader sets TP 8 -> 4 on 64 GPUs (TP 8, PP 4, DP 2): DP follows to 4, PP stays."""
    at = open_page(preset="llama3-70b-64xh100")
    at.number_input(key="par_tp").set_value(4).run()
    assert not at.exception and not at.error
    values = {k: at.number_input(key=k).value for k in ("par_tp", "par_pp", "par_dp")}
    assert values == {"par_tp": 4, "par_pp": 4, "par_dp": 4}
    said = " ".join(i.value for i in at.info)
    assert "TP is 4, so DP 2 → 4 followed" in said and "4 × 4 × 4 = 64 GPUs" in said
    # then DP 4 -> 8: PP follows (TP, the degree inside a node, is kept)
    at.number_input(key="par_dp").set_value(8).run()
    values = {k: at.number_input(key=k).value for k in ("par_tp", "par_pp", "par_dp")}
    assert values == {"par_tp": 4, "par_pp": 2, "par_dp": 8}
    assert "DP is 8, so PP 4 → 2 followed" in " ".join(i.value for i in at.info)
    layout = par.Layout(dp=8, tp=4, pp=2, nodes=8, gpus_per_node=8)
    assert layout.n_gpus == 64


def test_a_layout_the_model_cannot_take_lists_a_few_that_work():
    """PP 128 on 128 GPUs is more stages than Llama 3 70B's 80 layers: an error, and at most six
    layouts that fill the cluster AND split the model, not every factorization."""
    at = open_page(preset="llama3-70b-64xh100", par_nodes="16", par_tp="1", par_pp="128", par_dp="1")
    assert not at.exception
    assert "more pipeline stages" in at.error[0].value
    listed = at.caption[-1].value.split(": ", 1)[1].rstrip(".").split("; ")
    assert 1 <= len(listed) <= 6
    spec = get_model_preset("llama-3-70b").spec
    for text in listed:
        d, t, p = (int(part.split()[1]) for part in text.split(" × "))
        assert d * t * p == 128
        par.check_layout(spec, par.Layout(dp=d, tp=t, pp=p, nodes=16, gpus_per_node=8))


@pytest.mark.parametrize(
    ("degrees", "changed", "expected"),
    [
        ((4, 4, 2), "par_tp", (4, 4, 4)),  # TP 8 -> 4: DP follows
        ((8, 8, 2), "par_pp", (8, 8, 1)),  # PP 4 -> 8: DP follows
        ((8, 4, 4), "par_dp", (8, 2, 4)),  # DP 2 -> 4: PP follows, TP kept
        ((8, 4, 16), "par_dp", (4, 1, 16)),  # DP 16: PP 1, and TP must shrink to 4
        ((3, 4, 2), "par_tp", (2, 4, 8)),  # TP 3 does not divide 64: nearest divisor (2 on a tie)
        ((8, 4, 2), None, (8, 4, 2)),  # already 64: nothing moves
    ],
)
def test_rebalance_keeps_the_changed_degree(degrees, changed, expected):
    from ui.views.parallelism import rebalance

    tp, pp, dp, note = rebalance(64, *degrees, changed)
    assert (tp, pp, dp) == expected and tp * pp * dp == 64
    assert (note == "") == (degrees == expected)


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


def test_a_step_that_misses_a_divisor_moves_on_in_its_direction():
    """A number box steps by one: TP 2 -> 3 on 64 GPUs goes on to 4, and 4 -> 3 back to 2, so the
    reader is never stuck on a degree that snaps back."""
    from ui.views.parallelism import rebalance

    assert rebalance(64, 3, 4, 8, "par_tp", was=2)[:3] == (4, 4, 4)
    assert rebalance(64, 3, 4, 4, "par_tp", was=4)[:3] == (2, 4, 8)
    assert "TP 3 does not divide 64 GPUs, so it is 4" in rebalance(64, 3, 4, 8, "par_tp", was=2)[3]


# ---------------------------------------------------------------------------------------------
# "What to notice" speaks only of controls the view on screen has (issue 34): every **bold** name in
# a notice is the title of a control drawn with that view, or the label of one of the page's views.
# ---------------------------------------------------------------------------------------------


def _notices():
    """(page, view, notice text, titles of the controls drawn with that view, view labels)."""
    import re as _re

    from content import load_page
    from content.schema import MH_VIEWS, PAR_VIEWS, QUANT_VIEWS, params_for
    from ui.views import memory_hierarchy as mh
    from ui.views import quantization as qv

    def titles(page_path, keys):
        params = params_for(page_path)
        return {params[k].title for k in keys}

    out = []
    quant = load_page("quantization")
    for name, view in qv.VIEWS.items():
        shown = titles("quantization", ("q_view", *view.controls))
        out.append(("quantization", name, quant.notice(name), shown, set(QUANT_VIEWS.values())))
    memory = load_page("memory_hierarchy")
    extra = {"littles": ("mh_load",), "placement": ("mh_model", "mh_ctx", "mh_wfmt", "mh_kvfmt")}
    for name in mh.VIEWS:
        shown = titles("memory-hierarchy", ("mh_view", "mh_a", "mh_b", *extra.get(name, ())))
        out.append(("memory_hierarchy", name, memory.notice(name), shown, set(MH_VIEWS.values())))
    par_page = load_page("parallelism")
    every = [p.key for p in params_for("parallelism").params]  # the page draws all its controls
    for name in PAR_VIEWS:
        out.append(
            (
                "parallelism",
                name,
                par_page.notice(name),
                titles("parallelism", every),
                set(PAR_VIEWS.values()),
            )
        )
    roof = load_page("roofline")
    out.append(
        (
            "roofline",
            "",
            roof.notice(),
            titles("roofline", [p.key for p in params_for("roofline").params]),
            set(),
        )
    )
    fit = load_page("will_it_fit")
    inference = (
        "fit_model",
        "fit_task",
        "fit_gpu",
        "fit_gpus",
        "fit_wfmt",
        "fit_kvfmt",
        "fit_ctx",
        "fit_batch",
    )
    training = ("fit_model", "fit_task", "fit_gpu", "fit_gpus", "fit_recipe", "fit_seq", "fit_mb", "fit_zero")
    out.append(("will_it_fit", "inference", fit.notice(""), titles("will-it-fit", inference), set()))
    out.append(("will_it_fit", "training", fit.notice("training"), titles("will-it-fit", training), set()))
    return [
        (page, view, _re.sub(r"\s+", " ", text), shown, labels) for page, view, text, shown, labels in out
    ]


def test_what_to_notice_names_only_controls_its_view_has():
    import re as _re

    checked = 0
    for page, view, text, shown, labels in _notices():
        assert text.strip(), (page, view)
        for name in _re.findall(r"\*\*([^*]+)\*\*", text):
            assert name in shown | labels, (page, view, name, sorted(shown))
            checked += 1
    assert checked >= 15  # the notices do name controls; each one is checked


def test_a_view_without_a_control_is_not_told_to_use_it():
    """The bug the issue names: a notice sending the reader to a control the view does not draw.
    Quantization's Matmul view has only α; its notice must not mention Format, Tensor or Scale."""
    from content import load_page

    text = load_page("quantization").notice("matmul")
    assert "**Format**" not in text and "**Tensor**" not in text and "**Scale**" not in text
    assert "SmoothQuant migration strength α" in text
