"""The consumer GPUs people run llama.cpp, Ollama and vLLM on (issue 30 item 1, issue 31).

Catalog rows for RTX 3060 12GB, RTX 4060 Ti 16GB, RTX 4070 Ti SUPER, RTX 4080, RTX 4080 SUPER,
RTX 5060 Ti 16GB, RTX 5070 Ti, RTX 5080 and Radeon RX 7900 XTX (simulators/data/accelerators.csv),
each with the device total an engine starts from: a public reading (reported_memory.csv, with its
URL) or, where none was found, the label rule of simulators/engines/device.py with its range. The
three engines' start-ups of a small model must not refuse any of them for lack of a total.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from simulators import engines
from simulators.engines import GiB, device, llamacpp_startup, sglang_startup, vllm_startup
from simulators.hardware import get_accelerator
from simulators.presets import get_model_preset

NEW_CARDS = (
    "rtx-3060-12gb", "rtx-4060-ti-16gb", "rtx-4070-ti-super", "rtx-4080", "rtx-4080-super",
    "rtx-5060-ti-16gb", "rtx-5070-ti", "rtx-5080", "rx-7900-xtx",
)  # fmt: skip

# The total each public reading printed (GiB as the message rounds it), from reported_memory.csv's
# sources: vLLM 0.19's "Free memory on device cuda:0 (9.02/11.63 GiB)", PyTorch's OOM messages, and
# amdgpu's "VRAM Size: 24560 MiB" for the RX 7900 XTX.
PRINTED_GIB = {
    "rtx-3060-12gb": 11.63,
    "rtx-4060-ti-16gb": 15.55,
    "rtx-4080-super": 15.60,
    "rtx-5080": 15.48,
    "rx-7900-xtx": 24560 / 1024,
}
NO_READING = ("rtx-4070-ti-super", "rtx-4080", "rtx-5060-ti-16gb", "rtx-5070-ti")
ROOT = Path(__file__).resolve().parent.parent


@pytest.mark.parametrize("gpu", NEW_CARDS)
def test_each_card_resolves_a_device_total(gpu: str) -> None:
    total = engines.device_total(gpu)
    assert total is not None and total.low <= total.bytes <= total.high
    assert total.how in ("reading", "label rule") and total.source.startswith("https://")
    label = get_accelerator(gpu).memory_bytes  # "16 GB" etc. as printed: a decimal label
    assert 0.9 * label < total.bytes < label / 1e9 * GiB  # below the label read as GiB


@pytest.mark.parametrize("gpu", sorted(PRINTED_GIB))
def test_readings_are_the_printed_totals(gpu: str) -> None:
    total = engines.device_total(gpu)
    assert total.how == "reading" and total.exact
    assert total.bytes / GiB == pytest.approx(PRINTED_GIB[gpu], abs=0.005)


@pytest.mark.parametrize("gpu", NO_READING)
def test_cards_without_a_reading_take_the_nvidia_gddr_label_rule(gpu: str) -> None:
    total = engines.device_total(gpu)
    low_r, high_r, basis = device.label_ratio_bands()[("NVIDIA", "GDDR")]
    assert total.how == "label rule" and not total.exact
    assert total.low == int(16 * GiB * low_r) and total.high == int(16 * GiB * high_r)
    assert set(basis) >= {"rtx-3060-12gb", "rtx-4060-ti-16gb", "rtx-4080-super", "rtx-5080"}
    assert "Estimated from the label" in total.text


def test_the_3060_reading_is_what_the_held_out_vllm_log_printed() -> None:
    """The RTX 3060 12GB's reading is the total vLLM 0.19 printed on that card, which the held-out
    retriva row carries as its own total (it runs on the rtx-3090 row as a stand-in)."""
    lines = (ROOT / "tests/data/vllm_heldout_more.jsonl").read_text().splitlines()
    retriva = "retriva-docs-qwen3-0-6b-rtx-3060-12gb-eager-0.19.0"
    row = next(r for r in map(json.loads, lines) if r["id"] == retriva)
    total = engines.device_total("rtx-3060-12gb")
    assert total.bytes / GiB == pytest.approx(row["total_memory_gib"], abs=0.005)
    assert row["source"].split("/blob/")[0] in total.source


def test_each_new_reading_lies_inside_the_rule_made_from_the_others() -> None:
    """Leave one reading out: the NVIDIA GDDR label rule from the other readings brackets it."""
    rows = device._reported_memory_rows()
    ratios = {}
    for gpu, row in rows.items():
        acc = get_accelerator(gpu)
        if acc.vendor == "NVIDIA" and "GDDR" in acc.memory_type.upper():
            ratios[gpu] = int(row["reported_bytes"]) / (acc.memory_bytes / 1e9 * GiB)
    checked = 0
    for gpu in ("rtx-3060-12gb", "rtx-4060-ti-16gb", "rtx-4080-super", "rtx-5080"):
        others = [r for g, r in ratios.items() if g != gpu]
        assert min(others) <= ratios[gpu] <= max(others), gpu
        checked += 1
    assert checked == 4


@pytest.mark.parametrize("gpu", NEW_CARDS)
def test_three_engines_start_a_small_model_on_the_card(gpu: str) -> None:
    """Llama 3.2 1B on each card: vLLM, SGLang and llama.cpp start from the card's device total."""
    cfg = get_model_preset("llama-3.2-1b").config
    total = engines.device_total(gpu)
    v = vllm_startup(cfg, gpu, max_model_len=4096)
    assert v.total_bytes == total.bytes and total.text in v.total_source and v.kv_tokens > 0
    s = sglang_startup(cfg, gpu)
    assert s.total_bytes == total.bytes and s.max_total_num_tokens > 0
    ll = llamacpp_startup(cfg, gpu, n_ctx=4096)
    assert ll.offloaded_layers == cfg["num_hidden_layers"] + 1  # every block and the output layer
    # a larger device total gives vLLM a larger KV pool: the total is what the ledger uses
    bigger = vllm_startup(cfg, gpu, max_model_len=4096, total_bytes=total.bytes + GiB)
    assert bigger.kv_tokens > v.kv_tokens


def test_tensor_rates_not_sourced_are_refused_as_unsourced_not_unsupported() -> None:
    with pytest.raises(ValueError, match="no sourced dense bf16 peak"):
        get_accelerator("rtx-4080-super").peak_flops("bf16")
    with pytest.raises(ValueError, match="does not support fp8 in hardware"):
        get_accelerator("rtx-3060-12gb").peak_flops("fp8")
    # RTX 5080: the '1,801 AI TOPS' are sparse FP4, so the dense peak is half
    assert get_accelerator("rtx-5080").peak_flops("fp4") == pytest.approx(1801e12 / 2)


def test_compute_capability_from_nvidias_table() -> None:
    from simulators.engines.vllm import compute_capability

    expected = {
        "rtx-3060-12gb": 8.6, "rtx-4060-ti-16gb": 8.9, "rtx-4070-ti-super": 8.9, "rtx-4080": 8.9,
        "rtx-4080-super": 8.9,
        "rtx-5060-ti-16gb": 12.0, "rtx-5070-ti": 12.0, "rtx-5080": 12.0,
    }  # fmt: skip
    assert {g: compute_capability(get_accelerator(g)) for g in expected} == expected


@pytest.mark.parametrize(
    ("device_name", "memory_gib", "expected"),
    [
        ("NVIDIA GeForce RTX 3060", 11.63, "rtx-3060-12gb"),
        ("NVIDIA GeForce RTX 4060 Ti", 15.55, "rtx-4060-ti-16gb"),
        ("NVIDIA GeForce RTX 4060 Ti", 7.6, None),  # the 8 GB card is not the 16 GB row
        ("NVIDIA GeForce RTX 4080 SUPER", 15.60, "rtx-4080-super"),
        ("NVIDIA GeForce RTX 4080", 15.6, "rtx-4080"),  # not the SUPER (80 SMs)
        ("NVIDIA GeForce RTX 4070 Ti SUPER", 15.6, "rtx-4070-ti-super"),
        ("NVIDIA GeForce RTX 4070 Ti", 11.7, None),  # the 12 GB card is neither row
        ("NVIDIA GeForce RTX 3060 Ti", 7.8, None),
        ("NVIDIA GeForce RTX 5070 Ti", 15.5, "rtx-5070-ti"),
        ("NVIDIA GeForce RTX 5070", 11.5, None),
        ("AMD Radeon RX 7900 XTX", 23.98, "rx-7900-xtx"),
        ("AMD Radeon RX 7900 XT", 19.98, None),
    ],
)
def test_a_measured_device_name_finds_its_own_row_only(device_name, memory_gib, expected) -> None:
    """measure/catalog.match_catalog: a suffix (Ti, SUPER, XT, XTX) names another card, so an RTX
    4080 is not the 4080 SUPER row and an RX 7900 XT is not matched to the XTX's datasheet."""
    from measure.catalog import load_catalog as measure_rows
    from measure.catalog import match_catalog

    match = match_catalog(device_name, measure_rows(), memory_bytes=int(memory_gib * GiB))
    assert (match.row["id"] if match else None) == expected


@pytest.mark.parametrize(
    ("reading", "gpu"),
    [("ollama-11292-4060ti-cuda0", "rtx-4060-ti-16gb"), ("lmstudio-1360-5060ti-cuda0", "rtx-5060-ti-16gb")],
)
def test_llamacpp_free_readings_sit_below_the_card_total(reading: str, gpu: str) -> None:
    """What llama.cpp found free at start (a public log's "N MiB free") is under the total the
    engines use for that card: the reading's, or the top of the label rule's range."""
    import csv

    from lessons.functions import llamacpp_logged_free_mib

    path = ROOT / "simulators/data/llamacpp_free_readings.csv"
    with path.open(encoding="utf-8", newline="") as handle:
        row = next(r for r in csv.DictReader(handle) if r["id"] == reading)
    assert row["gpu"] == gpu and f"- {row['free_mib']} MiB free" in row["line"]
    free = llamacpp_logged_free_mib(reading) * 2**20
    assert 8 * GiB < free < engines.device_total(gpu).high  # the 16 GB card, and under its total
