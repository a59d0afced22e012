"""The inference and parallelism diagrams (charts/diagrams/llm_inference.py and parallelism.py):
every builder draws a valid Plotly figure with defaults and with another model or GPU, and the
numbers it shows are the simulators' own."""

from __future__ import annotations

import json
import math

import plotly.graph_objects as go
import pytest

from charts.diagrams import Diagram, block_grid, build, builders, llm_inference, parallelism
from simulators.hardware import get_accelerator, get_interconnect
from simulators.llm_memory import (
    attention_score_bytes,
    kv_cache_by_kind,
    kv_cache_bytes,
    model_state_bytes_per_gpu,
    weight_bytes,
)
from simulators.llm_speed import decode_step
from simulators.parallelism import (
    Layout,
    communication_per_step,
    gpu_roles,
    link_efficiency,
    pipeline_bubble_fraction,
    ring_allreduce_bytes_per_gpu,
    step_time,
    zero_model_state_bytes,
)
from simulators.presets import get_model_preset
from simulators.roofline import attention, decode_step_op, prefill_op
from simulators.units import binary_bytes

# Each diagram with its defaults, and once more with another model, GPU or size.
VARIANTS: dict[str, dict] = {
    "kv-cache-growth": {"model": "gemma-2-9b", "tokens": 5, "context": 4096},
    "paged-kv": {"model": "mistral-7b-v0.1", "tokens": 33, "other_tokens": 0, "block_tokens": 8},
    "gqa-sharing": {"model": "llama-3-70b"},
    "flash-attention": {"model": "qwen2.5-7b-instruct", "context": 4096, "gpu": "b200"},
    "pipeline-bubble": {"stages": 8, "microbatches": 16, "schedule": "gpipe"},
    "zero-stages": {"model": "llama-3-8b", "n_gpus": 8, "gpu": "h100-sxm"},
    "moe-routing": {"model": "deepseek-v3", "tokens": 4, "seed": 3},
    "compute-comm-overlap": {"nodes": 1, "gpus_per_node": 8, "microbatches": 4, "gpu": "h200-sxm"},
    "batching-tpot": {"model": "llama-3-70b", "gpu": "b200", "context": 4096},
    "parallelism-3d": {"model": "llama-3-70b", "dp": 2, "tp": 4, "pp": 2},
    "tp-pp-dp-splits": {"model": "mixtral-8x7b", "tp": 2, "pp": 8, "dp": 2, "batch": 8},
    "ring-all-reduce": {"n_gpus": 8, "model": "llama-3-70b", "link": "ib-ndr-4x"},
    "prefill-vs-decode": {"model": "mixtral-8x7b", "gpu": "a100-80gb-sxm", "batch": 16},
    "sliding-window-cache": {"model": "mistral-7b-v0.1", "max_context": 16384},
    "hybrid-cache": {"model": "gemma-2-9b", "context": 8192},
}
CALLS = [(diagram_id, {}) for diagram_id in VARIANTS] + list(VARIANTS.items())


def call_id(call: tuple[str, dict]) -> str:
    return call[0] + ("-variant" if call[1] else "")


def test_module_registers_its_diagrams() -> None:
    registered = {**llm_inference.DIAGRAMS, **parallelism.DIAGRAMS}
    del registered["nvlink-topology"]  # a hardware diagram: tests/test_diagrams_hardware.py
    assert set(registered) == set(VARIANTS)
    for diagram_id in VARIANTS:
        assert builders()[diagram_id] is registered[diagram_id]


@pytest.mark.parametrize("call", CALLS, ids=call_id)
def test_builder_draws_a_valid_figure(call: tuple[str, dict]) -> None:
    diagram_id, params = call
    d = build(diagram_id, **params)
    assert isinstance(d, Diagram)
    assert d.id == diagram_id
    go.Figure(d.spec)  # plotly's validation
    json.dumps(d.spec)
    assert d.alt.strip() and d.caption.strip()
    assert 0 < len(d.alt) < 600
    assert d.table and all(isinstance(row, dict) and row for row in d.table)
    height = d.spec["layout"].get("height")
    assert height is None or height <= block_grid.MAX_HEIGHT


def test_kv_cache_growth_numbers() -> None:
    for model, tokens, context in (("llama-3-8b", 8, 8192), ("gemma-2-9b", 5, 4096)):
        spec = get_model_preset(model).spec
        d = llm_inference.kv_cache_growth(model=model, tokens=tokens, context=context)
        per_token = spec.kv_cache_bytes_per_token()
        assert binary_bytes(per_token) in d.alt
        assert binary_bytes(kv_cache_bytes(spec, context)) in d.alt
        assert d.table[-1]["KV cache (bytes)"] == kv_cache_bytes(spec, context)
        assert [r["KV cache (bytes)"] for r in d.table[:-1]] == [
            kv_cache_bytes(spec, n) for n in range(1, tokens + 1)
        ]
        # Growth (issue 34: not a uniform grid): row s holds s tokens' K and V, the newest one (code 2
        # for K, 3 for V) appended at that step, the earlier ones kept (0, 1), the rest not yet there.
        grid = d.spec["data"][0]["z"]
        assert len(grid) == tokens and len(grid[0]) == 2 * tokens
        for step, row in enumerate(grid, start=1):
            held = [c for c in row if c is not None]
            assert len(held) == 2 * step
            assert held[-2:] == [2, 3] and set(held[:-2]) <= {0, 1}
        # each row is labelled with the cache after that step, from the model
        labels = d.spec["data"][0]["y"]
        assert labels == [f"step {n}: {binary_bytes(kv_cache_bytes(spec, n))}" for n in range(1, tokens + 1)]
        assert binary_bytes(kv_cache_bytes(spec, tokens)) in d.alt


def test_paged_kv_blocks_and_waste() -> None:
    d = llm_inference.paged_kv()
    assert llm_inference.paged_block_tables([50, 40], 16) == [[0, 2, 4, 6], [1, 3, 5]]
    a_rows = [r for r in d.table if r["sequence"] == "A"]
    assert [r["physical block"] for r in a_rows] == [0, 2, 4, 6]
    assert sum(r["tokens stored"] for r in a_rows) == 50
    assert a_rows[-1]["empty slots"] == 4 * 16 - 50
    per_token = get_model_preset("llama-3-8b").spec.kv_cache_bytes_per_token()
    assert a_rows[0]["block size (bytes)"] == 16 * per_token
    assert binary_bytes(14 * per_token) in d.alt
    assert binary_bytes((8192 - 50) * per_token) in d.alt
    assert llm_inference.VLLM_DEFAULT_BLOCK_TOKENS == 16
    with pytest.raises(ValueError):
        llm_inference.paged_kv(tokens=500)  # too many blocks to draw


def test_gqa_sharing_numbers() -> None:
    for model in ("llama-3-8b", "llama-3-70b", "gpt2"):
        spec = get_model_preset(model).spec
        d = llm_inference.gqa_sharing(model=model)
        assert f"{spec.num_heads} query heads" in d.alt
        assert f"{spec.num_kv_heads} key-value heads" in d.alt
        assert d.table[0]["KV cache per token (bytes)"] == spec.kv_cache_bytes_per_token()
        mha = spec.kv_cache_bytes_per_token() * spec.num_heads // spec.num_kv_heads
        assert d.table[1]["KV cache per token (bytes)"] == mha
        # one query-head box per head and one KV box per KV head (brackets are paths)
        rects = [s for s in d.spec["layout"]["shapes"] if s["type"] == "rect"]
        assert len(rects) == spec.num_heads + spec.num_kv_heads
    with pytest.raises(ValueError):
        llm_inference.gqa_sharing(model="deepseek-v3")  # MLA: no KV heads


def test_flash_attention_bytes_match_the_roofline_model() -> None:
    spec = get_model_preset("llama-3-8b").spec
    d = llm_inference.flash_attention()
    naive = attention(1, spec.num_heads, spec.num_kv_heads, 8192, 8192, spec.head_dim, flash=False)
    flash = attention(1, spec.num_heads, spec.num_kv_heads, 8192, 8192, spec.head_dim, flash=True)
    assert d.table[0]["total bytes"] == naive.bytes
    assert d.table[1]["total bytes"] == flash.bytes
    assert d.table[0]["S and P bytes"] == naive.bytes - flash.bytes == 4 * spec.num_heads * 8192**2 * 2
    assert d.table[2]["S and P bytes"] == attention_score_bytes(spec, 8192, 8192)
    assert f"{naive.bytes / 1e9:,.3g} GB" in d.alt
    assert f"{naive.bytes / flash.bytes:,.0f} times" in d.alt
    bw = get_accelerator("h100-sxm").memory_bandwidth_bytes_per_s
    assert d.table[0]["time at memory bandwidth (s)"] == naive.bytes / bw


@pytest.mark.parametrize(
    ("stages", "microbatches", "schedule"), [(4, 8, "1f1b"), (8, 16, "gpipe"), (2, 1, "1f1b")]
)
def test_pipeline_bubble_fraction(stages: int, microbatches: int, schedule: str) -> None:
    d = parallelism.pipeline_bubble(stages=stages, microbatches=microbatches, schedule=schedule)
    fraction = pipeline_bubble_fraction(stages, microbatches)
    assert f"{fraction:.1%}" in d.alt
    assert len(d.table) == stages
    idle = sum(r["idle (forward-pass units)"] for r in d.table)
    total = sum(r["step (forward-pass units)"] for r in d.table)
    assert math.isclose(idle / total, fraction)


def test_zero_stages_match_the_paper_formula() -> None:
    for model, n, gpu in (("llama-2-7b", 64, "a100-80gb-sxm"), ("llama-3-8b", 8, "h100-sxm")):
        params = get_model_preset(model).spec.param_count()
        d = parallelism.zero_stages(model=model, n_gpus=n, gpu=gpu)
        for stage, row in enumerate(d.table):
            assert row["total per GPU (bytes)"] == zero_model_state_bytes(params, n, stage)
            parts = model_state_bytes_per_gpu(params, parallelism.ZERO_RECIPE, n, stage)
            assert row["weights (bytes)"] + row["gradients (bytes)"] + row["optimizer states (bytes)"] == (
                pytest.approx(row["total per GPU (bytes)"])
            )
            assert row["optimizer states (bytes)"] == parts["optimizer"]
            assert f"stage {stage} {row['total per GPU (bytes)'] / 1e9:,.3g} GB" in d.alt
        assert get_accelerator(gpu).memory_label in d.alt


def test_moe_routing_picks_k_of_e() -> None:
    for model in ("mixtral-8x7b", "deepseek-v3"):
        spec = get_model_preset(model).spec
        d = llm_inference.moe_routing(model=model, tokens=4)
        grid = d.spec["data"][0]["z"]
        assert len(grid) == 4 and all(len(row) == spec.num_experts for row in grid)
        assert all(sum(row) == spec.experts_per_token for row in grid)
        assert f"to {spec.experts_per_token} experts" in d.alt
        assert f"{spec.param_count(active=True) / 1e9:,.1f}B" in d.alt
    # seeded: repeatable
    assert llm_inference.moe_routing(seed=1).spec == llm_inference.moe_routing(seed=1).spec
    with pytest.raises(ValueError):
        llm_inference.moe_routing(model="llama-3-8b")


def test_compute_comm_overlap_matches_step_time() -> None:
    spec = get_model_preset("llama-3-8b").spec
    acc = get_accelerator("h100-sxm")
    layout = Layout(dp=16, tp=1, pp=1, num_microbatches=1, seq=4096, nodes=2, gpus_per_node=8)
    terms = communication_per_step(spec, layout)
    serial = step_time(spec, layout, acc, terms)
    d = parallelism.compute_comm_overlap()
    rows = {r["part"]: r for r in d.table}
    assert rows["step (s)"]["serial"] == serial.total_s
    assert rows["gradient all-reduce (s)"]["serial"] == serial.dp_s
    backward = rows["backward pass (s)"]["serial"]
    assert math.isclose(rows["forward pass (s)"]["serial"] + backward, serial.compute_s)
    # the last DDP bucket (25 MiB) is reduced only after the backward pass: a tail of its share of
    # the all-reduce, so the exposed part is the larger of the overflow and that tail
    grads = terms[0].bytes_per_gpu / ring_allreduce_bytes_per_gpu(1.0, 16)
    tail = serial.dp_s * parallelism.DDP_BUCKET_BYTES / grads
    assert parallelism.DDP_BUCKET_BYTES == 25 * 2**20
    exposed = max(serial.dp_s - backward, tail)
    assert math.isclose(rows["all-reduce exposed (s)"]["overlapped"], exposed)
    assert math.isclose(rows["step (s)"]["overlapped"], serial.compute_s + exposed)
    assert 0 < tail < 0.001  # a thin tail: 0.15 ms of 94 ms
    assert block_grid._seconds(serial.total_s) in d.alt


def test_compute_comm_overlap_spreads_rings_over_every_nic() -> None:
    """Two nodes of 8 H100s with one 400 Gb/s NIC per GPU: NCCL's rings leave each node through all 8,
    so each NIC carries 1/8 of a GPU's 2(n−1)/n × 16 GB ring bytes and the all-reduce takes about
    75–100 ms, hidden behind the 332 ms backward pass (diagram review 2026-11, §2.3). One GPU per
    node puts every byte through its one NIC, and part of it stays exposed."""
    rows = {r["part"]: r for r in parallelism.compute_comm_overlap().table}
    assert 0.075 <= rows["gradient all-reduce (s)"]["serial"] <= 0.100
    assert rows["all-reduce exposed (s)"]["overlapped"] < 0.001  # only the last bucket's tail
    one_per_node = {r["part"]: r for r in parallelism.compute_comm_overlap(nodes=4, gpus_per_node=1).table}
    assert one_per_node["all-reduce exposed (s)"]["overlapped"] > 0.01


def test_batching_tpot_is_the_decode_step() -> None:
    spec = get_model_preset("llama-3-8b").spec
    acc = get_accelerator("h100-sxm")
    d = llm_inference.batching_tpot()
    for row in d.table:
        step = decode_step(
            spec,
            bandwidth_bytes_per_s=acc.memory_bandwidth_bytes_per_s,
            peak_flops=acc.peak_flops("bf16"),
            batch=row["batch"],
            context_tokens=1024,
        )
        assert row["step time = TPOT (s)"] == step.step_time_s
        assert weight_bytes(spec) + kv_cache_bytes(spec, 1024, row["batch"]) <= acc.memory_bytes
    assert f"{d.table[0]['step time = TPOT (s)'] * 1e3:,.3g} ms" in d.alt
    # a long context leaves out the batches whose KV cache does not fit
    long = llm_inference.batching_tpot(context=32768)
    assert max(r["batch"] for r in long.table) < 256
    assert "do not fit" in long.caption


def test_parallelism_3d_ranks_follow_the_simulator() -> None:
    d = parallelism.parallelism_3d()
    spec = get_model_preset("llama-3-8b").spec
    roles = gpu_roles(Layout(dp=2, tp=2, pp=4, nodes=2, gpus_per_node=8), spec)
    assert [r["GPU (global rank)"] for r in d.table] == [r.rank for r in roles]
    assert [r["PP stage"] for r in d.table] == [r.pp_stage + 1 for r in roles]
    assert "16 GPUs" in d.alt
    texts = {a["text"] for a in d.spec["layout"]["annotations"]}
    assert {str(r) for r in range(16)} <= texts


def test_tp_pp_dp_splits_numbers() -> None:
    spec = get_model_preset("llama-3-8b").spec
    d = parallelism.tp_pp_dp_splits()
    assert f"{spec.intermediate_size // 4:,} of the {spec.intermediate_size:,} columns" in d.alt
    assert f"{spec.num_layers // 4} of the {spec.num_layers} layers" in d.alt
    with pytest.raises(ValueError):
        parallelism.tp_pp_dp_splits(dp=3)  # 16 sequences do not split over 3


@pytest.mark.parametrize("n", [2, 3, 4, 8])
def test_ring_schedule_completes_and_counts_bytes(n: int) -> None:
    sends = parallelism.ring_schedule(n)
    assert len(sends) == 2 * (n - 1)
    assert all(sorted(step) == list(range(n)) for step in sends)  # every link carries one chunk per step
    d = parallelism.ring_all_reduce(n_gpus=n)
    grads = get_model_preset("llama-3-8b").spec.param_count() * 2
    per_step = grads / n
    assert all(row["bytes sent per GPU"] == per_step for row in d.table)
    assert math.isclose(sum(r["bytes sent per GPU"] for r in d.table), ring_allreduce_bytes_per_gpu(grads, n))
    assert f"= {2 * (n - 1)} steps" in d.alt
    link = get_interconnect("nvlink-4")
    assert d.table[0]["time at link rate (s)"] == per_step / (
        link.payload_per_direction_bytes_per_s * link_efficiency(link)
    )


def test_prefill_vs_decode_intensities() -> None:
    spec = get_model_preset("llama-3-8b").spec
    acc = get_accelerator("h100-sxm")
    d = llm_inference.prefill_vs_decode()
    rows = {r["phase"]: r for r in d.table}
    assert rows["Prefill"]["FLOP per byte"] == prefill_op(spec, 2048).intensity
    assert rows["Decode"]["FLOP per byte"] == decode_step_op(spec, 1, 2048).intensity
    assert rows["ridge"]["FLOP per byte"] == acc.ridge_point("bf16")
    assert rows["Prefill"]["bound"] == "compute" and rows["Decode"]["bound"] == "memory"
    assert f"ridge {acc.ridge_point('bf16'):,.0f}" in d.alt


def test_sliding_window_cache_levels_off() -> None:
    spec = get_model_preset("gemma-2-9b").spec
    d = llm_inference.sliding_window_cache()
    last = d.table[-1]
    assert last["context (tokens)"] == spec.max_positions
    assert last["tokens kept per sliding window layer"] == spec.sliding_window
    assert last["tokens kept per full attention layer"] == spec.max_positions
    assert last["cache total (bytes)"] == kv_cache_bytes(spec, spec.max_positions)
    assert f"{kv_cache_bytes(spec, spec.max_positions) / 1e9:,.3g} GB" in d.alt
    with pytest.raises(ValueError):
        llm_inference.sliding_window_cache(model="llama-3-8b")


def test_hybrid_cache_by_kind() -> None:
    spec = get_model_preset("nemotron-3-nano-30b-a3b").spec
    d = llm_inference.hybrid_cache()
    by_kind = kv_cache_by_kind(spec, [131_072])
    key = "cache at 131,072 tokens (bytes)"
    kinds = {r["layer kind"]: r for r in d.table}
    # The 23 layers without a token mixer are MoE FFNs (128 routed experts, 6 active), and say so
    # (diagram review 2026-11, hybrid-cache).
    moe = "MoE FFN, 6 of 128 experts (no token mixer)"
    for label, values in by_kind.parts.items():
        row = kinds[moe if label == "no token mixer" else label]
        assert row[key] == values[0]
        assert row["layers"] == by_kind.layers[label]
    assert kinds[moe]["layers"] == 23
    assert kinds["all layers as full attention"][key] == by_kind.naive[0]
    assert sum(r[key] for r in d.table[:-1]) == kv_cache_bytes(spec, 131_072)
    assert f"{kv_cache_bytes(spec, 131_072) / 1e9:,.3g} GB" in d.alt
    with pytest.raises(ValueError):
        llm_inference.hybrid_cache(model="llama-3-8b")  # one kind of layer only
