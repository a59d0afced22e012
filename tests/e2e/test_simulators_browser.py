"""Simulator pages in a real browser: typing a config, moving a slider, following a link."""

import json
import re

import pytest

from simulators.presets import get_model_preset

pytestmark = pytest.mark.e2e


def metric_value(page, label: str) -> str:
    """The value shown under a metric's label."""
    metric = page.locator('[data-testid="stMetric"]').filter(has_text=label).first
    metric.wait_for(timeout=30_000)
    return metric.locator('[data-testid="stMetricValue"]').inner_text()


def test_pasting_a_config_sizes_the_model(app_url, page):
    page.goto(f"{app_url}/will-it-fit?fit_model=custom", wait_until="domcontentloaded")
    box = page.get_by_label("…or paste it here")
    box.wait_for(timeout=30_000)
    box.fill(json.dumps(get_model_preset("gpt2").config))
    box.press("Control+Enter")
    value = metric_value(page, "Memory per GPU")
    assert re.fullmatch(r"[\d.,]+ GB", value), value


def test_pasting_garbage_shows_an_error_not_a_traceback(app_url, page):
    page.goto(f"{app_url}/will-it-fit?fit_model=custom", wait_until="domcontentloaded")
    box = page.get_by_label("…or paste it here")
    box.wait_for(timeout=30_000)
    box.fill('{"model_type": "llama", "hidden_size": -1}')
    box.press("Control+Enter")
    page.get_by_text("That config cannot be read").wait_for(timeout=30_000)
    assert page.locator('[data-testid="stException"]').count() == 0


def test_moving_the_batch_slider_flips_decode_to_compute_bound(app_url, page):
    page.goto(f"{app_url}/roofline", wait_until="domcontentloaded")
    label = "Decode step bound by"
    assert metric_value(page, label) == "memory"
    slider = page.get_by_role("slider", name="Batch")
    slider.focus()
    slider.press("End")  # the largest batch
    page.locator('[data-testid="stMetric"]').filter(has_text=label).get_by_text("compute").wait_for(
        timeout=30_000
    )
    assert re.search(r"[?&]rf_batch=4096", page.evaluate("location.href"))


def test_quantization_scale_choice_changes_the_error(app_url, page):
    page.goto(f"{app_url}/quantization?q_fmt=int4&q_gran=tensor", wait_until="domcontentloaded")
    before = metric_value(page, "SQNR")
    page.get_by_role("combobox", name=re.compile("^Scale")).click()
    page.get_by_role("option", name="Per group", exact=True).click()
    page.wait_for_function(
        "prev => [...document.querySelectorAll('[data-testid=\"stMetricValue\"]')]"
        ".some(e => e.innerText.endsWith('dB') && e.innerText !== prev)",
        arg=before,
        timeout=30_000,
    )
    after = metric_value(page, "SQNR")
    assert float(after.split()[0]) > float(before.split()[0])  # per-group scales beat one scale


def test_parallelism_keeps_the_product_when_one_degree_changes(app_url, page):
    """A link whose degrees do not fill the cluster is corrected and says so; then the reader types a
    new TP and DP follows, in the real browser (issue 34: it used to print an error and 24 layouts)."""
    page.goto(
        f"{app_url}/parallelism?par_nodes=1&par_gpn=8&par_tp=8&par_pp=2&par_dp=1",
        wait_until="domcontentloaded",
    )
    page.get_by_text("The cluster has 8 GPUs, so PP 2 → 1 followed").wait_for(timeout=30_000)
    assert page.locator('[data-testid="stException"]').count() == 0
    page.goto(f"{app_url}/parallelism?preset=llama3-70b-64xh100", wait_until="domcontentloaded")
    assert metric_value(page, "Pipeline bubble") == "15.8%"
    tp = page.get_by_role("spinbutton", name="Tensor parallel (TP)")
    tp.fill("4")
    tp.press("Enter")
    page.get_by_text("TP is 4, so DP 2 → 4 followed").wait_for(timeout=30_000)
    page.wait_for_function(
        "() => [...document.querySelectorAll('input')].some(e => e.getAttribute('aria-label')"
        " === 'Data parallel (DP)' && e.value === '4')",
        timeout=30_000,
    )
    assert page.locator('[data-testid="stException"]').count() == 0
    assert page.get_by_text("This layout does not work").count() == 0


def test_sample_measurements_are_shown_beside_the_simulator(app_url, page):
    page.goto(f"{app_url}/your-hardware?hw_sample=cpu-amd-epyc-2vcpu.json", wait_until="domcontentloaded")
    page.get_by_text("torch's casts vs the simulator").wait_for(timeout=60_000)
    page.get_by_text("All-reduce: measured").first.wait_for(timeout=30_000)  # the title wraps
    assert page.locator('[data-testid="stException"]').count() == 0


def test_the_gpu_sample_opens_with_its_latency_ladder(app_url, page):
    page.goto(f"{app_url}/your-hardware", wait_until="domcontentloaded")
    page.get_by_text("Showing the shipped sample h100-sxm-80gb.json").wait_for(timeout=60_000)
    page.locator(".js-plotly-plot").first.wait_for(timeout=30_000)
    assert page.locator('[data-testid="stException"]').count() == 0


def test_back_and_forward_restore_each_address_and_quick_moves_stick(app_url, page):
    """The browser's back and forward steps reopen each address (Streamlit marks those reruns as
    history navigation, and the state layer takes them even though it wrote them itself); two
    moves in quick succession end where the last one put the control, and so does the address
    (PageDown then End left the slider at 4,096 and the address at 2,048 before the state layer
    knew a stale address: it took the 4,096 the second rerun came with as the reader's own link
    and wrote nothing, while the browser showed 2,048)."""
    from playwright.sync_api import expect

    page.goto(f"{app_url}/roofline?rf_batch=8", wait_until="domcontentloaded")
    slider = page.get_by_role("slider", name="Batch")
    bound = page.locator('[data-testid="stMetric"]').filter(has_text="Decode step bound by")
    expect(slider).to_have_attribute("aria-valuetext", "8", timeout=60_000)
    slider.focus()
    slider.press("End")
    page.wait_for_function("location.search.includes('rf_batch=4096')", timeout=60_000)
    expect(bound).to_contain_text("compute", timeout=60_000)
    page.go_back()
    page.wait_for_function("location.search.includes('rf_batch=8')", timeout=60_000)
    expect(slider).to_have_attribute("aria-valuetext", "8", timeout=60_000)
    expect(bound).to_contain_text("memory", timeout=60_000)
    page.go_forward()
    page.wait_for_function("location.search.includes('rf_batch=4096')", timeout=60_000)
    expect(slider).to_have_attribute("aria-valuetext", "4,096", timeout=60_000)
    slider.focus()
    slider.press("PageDown")
    slider.press("End")  # two moves at once: the second rerun carried the address before the first
    page.wait_for_function("location.search.includes('rf_batch=4096')", timeout=60_000)
    expect(slider).to_have_attribute("aria-valuetext", "4,096", timeout=60_000)
    expect(bound).to_contain_text("compute", timeout=60_000)
    assert page.locator('[data-testid="stException"]').count() == 0
