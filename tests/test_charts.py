"""Every chart builder returns a plain, valid Plotly figure dict that does not collide with itself.

The pages draw these dicts without Plotly's per-property validation (issue 9), so the validation
happens here, once: every case of ``charts.examples`` (representative inputs from the presets,
the catalog, the hierarchy families and the CPU sample in measure/samples/) must be accepted by
``json.dumps`` and by ``plotly.graph_objects.Figure``. The layout rules of issue 10 are checked on
the specs themselves: axis titles, legends below the plot, room for the mode bar, no "10^9", bars
labelled readably or not at all, colour-blind-safe colours, and the roofline's point labels.
"""

from __future__ import annotations

import importlib
import json
import math
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import plotly.graph_objects as go
import pytest

from charts.examples import Case, cases, sample_records
from charts.hierarchy import latency_sweep_figure
from charts.measure import bandwidth_figure
from charts.memory import PART_COLOURS, decode_time_figure, memory_bars
from charts.palette import OKABE_ITO
from charts.roofline import (
    LABEL_SPAN_X_DECADES,
    LABEL_SPAN_Y_DECADES,
    MAX_LABELS,
    decode_batch_figure,
    roofline_figure,
)
from charts.style import LEGEND_LINE_PX, MIN_PLOT_PX, MODEBAR_PX, phone_height, scale_fonts
from simulators.fit import inference
from simulators.hardware import get_accelerator
from simulators.hierarchy import family
from simulators.llm_memory import MemoryBreakdown, MemoryPart
from simulators.presets import get_model_preset
from simulators.roofline import decode_step_op, reference_operations

ROOT = Path(__file__).resolve().parent.parent
CASES = cases()
AXIS = re.compile(r"^[xy]axis\d*$")


def build(case: Case) -> dict[str, Any]:
    return case.call(importlib.import_module(f"charts.{case.module}"))


@pytest.fixture(scope="module")
def specs() -> dict[str, dict[str, Any]]:
    return {case.name: build(case) for case in CASES}


def strings(node: Any) -> list[str]:
    if isinstance(node, str):
        return [node]
    if isinstance(node, dict):
        return [s for value in node.values() for s in strings(value)]
    if isinstance(node, list):
        return [s for value in node for s in strings(value)]
    return []


def plain(text: str) -> str:
    return text.replace("<br>", " ")


def test_every_public_builder_has_a_case() -> None:
    """The gallery, these tests and the bench cover every builder the pages call."""
    expected = {
        "roofline_figure", "decode_batch_figure", "ladder_figure", "transfer_time_figure",
        "littles_law_figure", "placement_figure", "latency_sweep_figure", "bandwidth_figure",
        "allreduce_figure", "telemetry_figure", "memory_bars", "decode_time_figure",
        "gpu_grid_figure", "pipeline_gantt_figure", "memory_breakdown_figure", "comm_vs_compute_figure",
        "value_histogram_figure", "error_histogram_figure", "sqnr_vs_bits_figure",
        "per_channel_error_figure", "matmul_error_figure", "smoothquant_alpha_figure", "model_size_figure",
    }  # fmt: skip
    assert {case.builder for case in CASES} == expected


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_spec_is_plain_json_that_plotly_accepts(case: Case, specs) -> None:
    """json.dumps (strict: no NaN) and go.Figure (full validation) both accept the spec, and it
    holds only plain Python values: no numpy arrays or scalars reach the browser encoder."""
    spec = specs[case.name]

    def check(node: Any) -> None:
        assert not isinstance(node, (np.ndarray, np.generic)), f"numpy value in {case.name}"
        if isinstance(node, dict):
            for value in node.values():
                check(value)
        elif isinstance(node, list):
            for value in node:
                check(value)

    check(spec)
    json.dumps(spec, allow_nan=False)
    go.Figure(spec)
    assert set(spec) == {"data", "layout"} and all("type" in trace for trace in spec["data"])


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_every_cartesian_axis_has_a_title(case: Case, specs) -> None:
    layout = specs[case.name]["layout"]
    axes = {key: value for key, value in layout.items() if AXIS.match(key) and value.get("visible", True)}
    assert {"xaxis", "yaxis"} <= set(axes) | {
        k for k, v in layout.items() if AXIS.match(k) and v.get("visible") is False
    }
    for key, value in axes.items():
        assert value.get("title", {}).get("text", "").strip(), f"{case.name}: {key} has no title"


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_legend_sits_below_the_plot_and_the_title_below_the_mode_bar(case: Case, specs) -> None:
    """Legend: horizontal, at the bottom of the container, so Plotly reserves its height under the
    axis title (it never covers the plot). Title: above the plot with the mode bar's room on top."""
    layout = specs[case.name]["layout"]
    legend = layout["legend"]
    assert legend["orientation"] == "h"
    below = (legend["yref"] == "container" and legend["y"] <= 0.05 and legend["yanchor"] == "bottom") or (
        legend.get("yref", "paper") == "paper" and legend["y"] < 0
    )
    assert below, legend
    title = layout["title"]
    assert title["yref"] == "paper" and title["yanchor"] == "bottom" and title["automargin"] is True
    assert title["pad"]["t"] >= MODEBAR_PX >= 30


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_no_caret_exponents_and_readable_bar_labels(case: Case, specs) -> None:
    """Issue 10: no "10^9" on screen; a bar's label is either at a readable size or hidden."""
    spec = specs[case.name]
    assert not [s for s in strings(spec) if re.search(r"\d\^", s)]
    hides_small = spec["layout"].get("uniformtext", {}).get("mode") == "hide"
    for trace in spec["data"]:
        if trace["type"] == "bar" and trace.get("text"):
            size = trace.get("textfont", {}).get("size", spec["layout"]["font"]["size"])
            assert size >= 12 or hides_small, f"{case.name}: {trace.get('name')}"
            if trace.get("textposition") in (None, "auto", "inside"):
                assert hides_small, f"{case.name}: inside labels would shrink"


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_colours_are_okabe_ito_or_grey(case: Case, specs) -> None:
    """Okabe & Ito (2008) colour-blind-safe palette for every hue; greys for neutral lines.
    Colour scales (Viridis, also colour-blind safe) are not listed one by one."""

    def colours(node: Any, key: str = "") -> list[str]:
        if key == "colorscale":
            return []
        if isinstance(node, str):
            return [node] if re.fullmatch(r"#[0-9A-Fa-f]{6}|#[0-9A-Fa-f]{3}", node) else []
        if isinstance(node, dict):
            return [c for k, v in node.items() for c in colours(v, k)]
        if isinstance(node, list):
            return [c for v in node for c in colours(v, key)]
        return []

    allowed = {c.upper() for c in OKABE_ITO}
    for colour in colours(specs[case.name]):
        full = colour.upper() if len(colour) == 7 else "#" + "".join(ch * 2 for ch in colour[1:]).upper()
        grey = full[1:3] == full[3:5] == full[5:7]
        assert full in allowed or grey, f"{case.name}: {colour}"


def test_a_long_legend_makes_the_chart_taller_not_the_plot_shorter() -> None:
    """A page may ask for a short chart; on a phone the legend stacks one entry per row, so the
    height is raised until the plot keeps MIN_PLOT_PX below the title and above the legend."""
    from simulators.roofline import operation_set

    ops = operation_set("matmul") + operation_set("memory-bound")
    one = roofline_figure([H100], "bf16", ops, height=300)
    legend_lines = sum(t["name"].count("<br>") + 1 for t in one["data"] if t.get("showlegend", True))
    assert one["layout"]["height"] == phone_height(one["data"], one["layout"])
    assert one["layout"]["height"] > MIN_PLOT_PX + legend_lines * LEGEND_LINE_PX > 300
    two = roofline_figure([H100, get_accelerator("a100-80gb-sxm")], "bf16", ops, height=300)
    assert two["layout"]["height"] > one["layout"]["height"]
    tall = roofline_figure([H100], "bf16", ops, height=2000)
    assert tall["layout"]["height"] == 2000


def test_charts_import_no_plotly_at_run_time() -> None:
    """Building a chart must not import plotly (graph_objects validation is what issue 9 removed)."""
    code = (
        "import sys; import charts.roofline, charts.hierarchy, charts.measure, charts.memory, "
        "charts.parallelism, charts.quantization, charts.style; print('plotly' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


# ---------------------------------------------------------------------------------------------
# Presenter view


def test_scale_fonts_scales_ticks_titles_legend_labels_and_inline_sizes() -> None:
    spec = roofline_figure([get_accelerator("h100-sxm")], "bf16", reference_operations())
    before = json.dumps(spec)
    big = scale_fonts(spec, 1.4)
    assert json.dumps(spec) == before  # the input is not changed
    layout, scaled = spec["layout"], big["layout"]
    for key in ("xaxis", "yaxis"):
        assert scaled[key]["tickfont"]["size"] == pytest.approx(1.4 * layout[key]["tickfont"]["size"])
        assert scaled[key]["title"]["font"]["size"] == pytest.approx(
            1.4 * layout[key]["title"]["font"]["size"]
        )
    for path in (("font",), ("legend", "font"), ("hoverlabel", "font"), ("title", "font")):
        old, new = layout, scaled
        for step in path:
            old, new = old[step], new[step]
        assert new["size"] == pytest.approx(1.4 * old["size"])
    inline = re.findall(r"font-size:([0-9.]+)px", layout["title"]["text"])
    assert re.findall(r"font-size:([0-9.]+)px", scaled["title"]["text"]) == [
        f"{1.4 * float(s):g}" for s in inline
    ]
    labelled = [t for t in spec["data"] if t.get("text")]
    assert labelled
    for old, new in zip(spec["data"], big["data"], strict=True):
        if old.get("textfont", {}).get("size"):
            assert new["textfont"]["size"] == pytest.approx(1.4 * old["textfont"]["size"])
    assert layout["height"] < scaled["height"] < 1.4 * layout["height"]
    sweep = decode_batch_figure(LLAMA_3_8B, H100, [1, 64, 4096])
    (note,) = sweep["layout"]["annotations"]
    assert scale_fonts(sweep, 1.4)["layout"]["annotations"][0]["font"]["size"] == pytest.approx(
        1.4 * note["font"]["size"]
    )


def test_scale_fonts_gives_every_axis_an_explicit_tick_size(specs) -> None:
    """A browser check compares tick sizes: every axis of every chart must carry one to scale."""
    for name, spec in specs.items():
        big = scale_fonts(spec, 1.45)
        for key, value in big["layout"].items():
            if AXIS.match(key) and value.get("visible", True):
                assert value["tickfont"]["size"] >= 1.3 * 14, name


def test_scale_fonts_rejects_a_nonpositive_factor() -> None:
    with pytest.raises(ValueError, match="positive"):
        scale_fonts({"data": [], "layout": {}}, 0)


# ---------------------------------------------------------------------------------------------
# The roofline's decode path and point labels

H100 = get_accelerator("h100-sxm")
LLAMA_3_8B = get_model_preset("llama-3-8b").spec


def test_roofline_draws_the_decode_path_on_the_roof() -> None:
    """SA §1.3: at context 0 in bf16 a decode step's intensity is about the batch size; on the
    H100 roof (989.5 TFLOP/s bf16 dense, 3.35 TB/s) each point sits at min(peak, I × bandwidth)."""
    batches = [1, 4, 16, 64, 256, 1024, 4096]
    path = [decode_step_op(LLAMA_3_8B, b, 0) for b in batches]
    selected = decode_step_op(LLAMA_3_8B, 512, 0)
    spec = roofline_figure([H100], "bf16", decode_path=path, decode_selected=selected)
    trace = next(t for t in spec["data"] if t.get("legendgroup") == "decode")
    assert trace["x"] == [op.intensity for op in path]
    expected = [min(989.5e12, op.intensity * H100.memory_bandwidth_bytes_per_s) / 1e12 for op in path]
    assert trace["y"] == pytest.approx(expected)
    assert [x / b for x, b in zip(trace["x"], batches, strict=True)] == pytest.approx([1.0] * 7, rel=0.01)
    big = next(t for t in spec["data"] if t.get("legendgroup") == "decode-selected")
    assert big["x"] == [selected.intensity] and big["y"] == [pytest.approx(989.5)]
    assert big["marker"]["size"] > trace["marker"]["size"] and "B=512" in big["text"][0]
    assert "compute-bound" in big["name"]
    assert 2 <= sum(bool(t) for t in trace["text"]) < len(batches)  # a few batches labelled


def test_roofline_labels_never_share_a_band_and_are_few() -> None:
    """Labels of the matmul and memory-bound sets with a decode path: at most MAX_LABELS, and no
    two closer than the label span on both axes (in decades); the rest are in the hover."""
    from simulators.roofline import operation_set

    ops = [op for name in ("matmul", "memory-bound", "attention", "quantized") for op in operation_set(name)]
    path = [decode_step_op(LLAMA_3_8B, 2**k, 0) for k in range(13)]
    spec = roofline_figure([H100, get_accelerator("a100-80gb-sxm")], "bf16", ops, decode_path=path)
    placed = [
        (math.log10(x), math.log10(y), text, position)
        for trace in spec["data"]
        if isinstance(trace.get("text"), list)
        for x, y, text, position in zip(
            trace["x"], trace["y"], trace["text"], trace["textposition"], strict=True
        )
        if text
    ]
    assert 3 <= len(placed) <= MAX_LABELS
    for i, a in enumerate(placed):
        for b in placed[i + 1 :]:
            assert abs(a[0] - b[0]) >= LABEL_SPAN_X_DECADES or abs(a[1] - b[1]) >= LABEL_SPAN_Y_DECADES, (
                a,
                b,
            )
    hovered = [t for t in spec["data"] if t.get("legendgroup") == "operations"]
    assert sum(len(t["hovertext"]) for t in hovered) == len(ops)


def test_measured_points_share_one_legend_entry() -> None:
    """The CPU sample's 18 matmuls are one legend entry (stars), each point named in its hover."""
    from charts.examples import _roofline_measured

    points = _roofline_measured()
    spec = roofline_figure([H100], "bf16", measured=points)
    measured = [t for t in spec["data"] if t.get("legendgroup") == "measured"]
    assert len(measured) == 1 and len(measured[0]["x"]) == len(points) == len(sample_records("matmul"))
    assert set(measured[0]["marker"]["symbol"]) == {"star"}  # none above its roof
    assert [h.split("<br>")[0] for h in measured[0]["hovertext"]] == [
        f"<b>measured: {p.name}</b>" for p in points
    ]


# ---------------------------------------------------------------------------------------------
# New charts


def test_decode_time_figure_shows_both_times_and_names_the_slower() -> None:
    """Llama 3 70B on one H100, batch 1, 8,192 tokens: the bars are the model's own memory and
    compute times per step (llm_speed.decode_step), and the title names memory as the pace-setter
    with their ratio."""
    step = inference(get_model_preset("llama-3-70b").spec, H100, batch=1, context=8192).decode
    assert step is not None
    spec = decode_time_figure(step.memory_time_s, step.compute_time_s, label="Llama 3 70B on H100")
    memory, compute = spec["data"]
    assert memory["x"][0] == pytest.approx(step.memory_time_s * 1e3)  # axis in ms
    assert compute["x"][0] == pytest.approx(step.compute_time_s * 1e3)
    assert memory["text"][0].endswith(" ms") and compute["text"][0].endswith(" µs")
    ratio = step.memory_time_s / step.compute_time_s
    assert spec["layout"]["title"]["text"].startswith("Memory sets the pace")
    assert f"{ratio:,.0f}×" in plain(spec["layout"]["title"]["text"])
    assert "(ms)" in spec["layout"]["xaxis"]["title"]["text"]


def test_decode_time_figure_says_when_compute_is_slower() -> None:
    spec = decode_time_figure(2e-3, 5e-3)
    assert spec["layout"]["title"]["text"].startswith("Compute sets the pace")
    with pytest.raises(ValueError):
        decode_time_figure(float("nan"), 1.0)


def test_latency_sweep_bands_are_the_published_ranges() -> None:
    """H100 pointer-chase ranges from the hierarchy CSV (RRZE gpu-benches, mt4g): each band spans
    latency min to max in ns, over working sets from the previous level's capacity to its own (the
    near L2 holds one of two 25 MB partitions); the x ticks use binary prefixes."""
    levels = list(family("h100-sxm").levels)
    points = [(16 * 2**10, 18.0), (8 * 2**20, 130.0), (4 * 2**30, 380.0)]
    spec = latency_sweep_figure(points, levels, device_label="test")
    bands = {t["legendgroup"]: t for t in spec["data"] if t.get("fill") == "toself"}
    assert {"l1", "l2", "device-memory"} <= set(bands)
    for level_id, band in bands.items():
        level = next(lv for lv in levels if lv.level == level_id)
        low, high = min(band["y"]), max(band["y"])
        if not math.isclose(level.latency_s("min"), level.latency_s("max")):
            assert (low, high) == pytest.approx((level.latency_s("min") * 1e9, level.latency_s("max") * 1e9))
    l2_mib = family("h100-sxm").level("l2").capacity_bytes / 2**20
    assert (max(bands["l2"]["x"]), min(bands["l2-far"]["x"]), max(bands["l2-far"]["x"])) == (
        l2_mib / 2 * 2**20,
        l2_mib / 2 * 2**20,
        l2_mib * 2**20,
    )
    assert min(bands["l2"]["x"]) == max(bands["l1"]["x"]) == family("h100-sxm").level("l1").capacity_bytes
    measured = next(t for t in spec["data"] if t.get("mode") == "lines+markers")
    assert measured["y"] == [18.0, 130.0, 380.0]
    ticks = spec["layout"]["xaxis"]["ticktext"]
    assert {"KiB", "MiB", "GiB"} <= {t.split()[-1] for t in ticks}
    assert spec["layout"]["xaxis"]["type"] == spec["layout"]["yaxis"]["type"] == "log"


def test_bandwidth_figure_marks_launch_bound_points_open() -> None:
    records = [dict(r) for r in sample_records("bandwidth")]
    smallest = min(r["bytes"] for r in records)
    for record in records:
        record["launch_bound"] = record["bytes"] == smallest
    spec = bandwidth_figure(records)
    lines = [t for t in spec["data"] if t.get("mode") == "lines+markers"]
    symbols = [s for t in lines for s in t["marker"]["symbol"]]
    assert symbols.count("circle-open") == sum(r["launch_bound"] for r in records) >= 1
    assert any(
        "launch-bound" in t["name"] and "not cache bandwidth" in plain(t["name"]) for t in spec["data"]
    )
    assert not any(
        "launch-bound" in t.get("name", "") for t in bandwidth_figure(sample_records("bandwidth"))["data"]
    )


def test_memory_bars_colour_the_attention_score_matrix() -> None:
    """Eager attention's score matrix gets its own palette colour, not the fallback grey."""
    breakdown = MemoryBreakdown(
        parts=(
            MemoryPart("weights", "Weights", 16e9, "bf16 weights"),
            MemoryPart("attention_scores", "Attention scores", 4e9, "B × heads × T² × 2 bytes"),
        )
    )
    spec = memory_bars([("1 × H100", breakdown)], capacity_bytes=80e9)
    colours = {t["legendgroup"]: t["marker"]["color"] for t in spec["data"]}
    assert colours["attention_scores"] == PART_COLOURS["attention_scores"] in OKABE_ITO
    assert len(set(PART_COLOURS.values())) == len(PART_COLOURS)


def test_a_detached_title_comes_back_whole_and_the_plot_keeps_its_size():
    from charts.style import DETACHED_TOP_PX, detach_title, figure, phone_height, title

    headline = "Memory ladder: latency and bandwidth per level"
    detail = "Top: latency of one access. Bottom: bandwidth of the whole device & its links"
    spec = figure([], {"title": title(headline, detail), "height": 700})
    text = spec["layout"]["title"]["text"]
    assert text.count("<br>") >= 3  # wrapped for a phone inside the figure
    out, head, det = detach_title(spec)
    assert (head, det) == (headline, detail)  # breaks undone, tags dropped, "&" decoded
    assert "title" not in out["layout"] and spec["layout"]["title"]["text"] == text  # input kept
    assert out["layout"]["margin"]["t"] == DETACHED_TOP_PX  # room for the mode bar
    # The figure is shorter by exactly the room the title took: the plot area is unchanged.
    pad = spec["layout"]["title"]["pad"]
    taken = (text.count("<br>") + 1) * 24 + pad["t"] + pad["b"] - DETACHED_TOP_PX
    assert out["layout"]["height"] == 700 - taken
    # ... but never below what a phone needs.
    small = figure([], {"title": title(headline, detail), "height": 100})
    small_out = detach_title(small)[0]
    assert small_out["layout"]["height"] == phone_height([], small_out["layout"])
    # A figure without a title passes through.
    assert detach_title({"data": [], "layout": {}}) == ({"data": [], "layout": {}}, "", "")


def test_a_title_above_the_chart_is_escaped_html():
    from ui.chart import title_html

    out = title_html("<img src=x onerror=alert(1)> on H100", "costs $5 & up")
    assert "<img" not in out and "&lt;img" in out
    assert "$" not in out and "&#36;5" in out and "&amp;" in out
    assert out.startswith('<div class="fg-chart-title">') and "fg-chart-detail" in out
    assert "fg-chart-detail" not in title_html("Headline only", "")
