"""The parallelism model: ZeRO, collectives, the pipeline bubble, Megatron-LM's TP traffic, layouts."""

from dataclasses import replace

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from charts.parallelism import (
    COLOUR_BY,
    comm_vs_compute_figure,
    gpu_grid_figure,
    memory_breakdown_figure,
    pipeline_gantt_figure,
)
from charts.style import BASE_FONT_PX
from simulators.hardware import get_accelerator, get_interconnect
from simulators.llm_memory import ModelSpec, training_activation_bytes_per_layer
from simulators.parallelism import (
    Layout,
    activation_bytes_per_gpu,
    bus_bandwidth_factor,
    communication_per_step,
    compute_time_per_step,
    divisors,
    factorizations,
    gpu_roles,
    groups_cross_nodes,
    layout_notes,
    max_in_flight,
    megatron_bubble_ratio,
    memory_by_stage,
    per_gpu_memory,
    pipeline_bubble_fraction,
    pipeline_schedule,
    process_groups,
    ring_allreduce_bytes_per_gpu,
    schedule_idle_fraction,
    schedule_makespan,
    stage_params_per_gpu,
    step_time,
    tensor_parallel_bytes_per_layer,
    tensor_parallel_time_by_link,
)
from simulators.presets import get_model_preset

# A dense model of exactly 7.5e9 parameters, ZeRO's Figure 1 example size: 40 layers of
# 4·4000² (attention) + 3·4000·10000 (gated MLP) + 2·4000 (norms), a tied 34,919 × 4000
# embedding and a final norm: 7,360,320,000 + 139,676,000 + 4,000.
ZERO_EXAMPLE = ModelSpec(
    family="llama",
    hidden_size=4000,
    num_layers=40,
    num_heads=40,
    num_kv_heads=40,
    head_dim=100,
    intermediate_size=10000,
    vocab_size=34919,
    tie_word_embeddings=True,
)

LLAMA_3_70B = get_model_preset("llama-3-70b").spec

# The example: Llama-3-70B on 64 H100s (8 nodes of 8), TP 8, PP 4, DP 2, ZeRO-1,
# 16 micro-batches of 1 × 4096 tokens, with selective recompute and sequence parallelism.
EXAMPLE = Layout(
    dp=2,
    tp=8,
    pp=4,
    zero_stage=1,
    micro_batch=1,
    num_microbatches=16,
    seq=4096,
    nodes=8,
    gpus_per_node=8,
    sequence_parallel=True,
    recompute="selective",
)


def _model_states(breakdown):
    return sum(breakdown.get(k) for k in ("weights", "gradients", "optimizer"))


# --- ZeRO --------------------------------------------------------------------------------------


def test_the_zero_example_model_has_7_5_billion_parameters():
    assert ZERO_EXAMPLE.param_count() == 7_500_000_000


@pytest.mark.parametrize(("stage", "gb"), [(0, 120.0), (1, 31.4), (2, 16.6), (3, 1.9)])
def test_layout_path_reproduces_zero_figure_1(stage, gb):
    """ZeRO (arXiv 1910.02054) Fig. 1: Ψ = 7.5B on N_d = 64 GPUs: 120 / 31.4 / 16.6 / 1.9 GB."""
    layout = Layout(dp=64, tp=1, pp=1, zero_stage=stage, nodes=8, gpus_per_node=8)
    states = _model_states(per_gpu_memory(ZERO_EXAMPLE, layout))
    assert states / 1e9 == pytest.approx(gb, abs=0.05)


@settings(max_examples=40, deadline=None)
@given(st.sampled_from([1, 2, 4, 8, 16, 32, 64, 128]), st.sampled_from([1, 2, 4, 8, 16, 32, 64, 128]))
def test_more_data_parallel_gpus_never_raise_zero_3_state_per_gpu(dp_a, dp_b):
    """ZeRO-3 divides every model state by N_d (ZeRO §5): more GPUs can only lower the share."""
    small, large = sorted((dp_a, dp_b))
    per_gpu = [
        _model_states(
            per_gpu_memory(ZERO_EXAMPLE, Layout(dp=d, tp=1, pp=1, zero_stage=3, nodes=d, gpus_per_node=1))
        )
        for d in (small, large)
    ]
    assert per_gpu[1] <= per_gpu[0]


# --- Collectives -------------------------------------------------------------------------------


@pytest.mark.parametrize(("n", "factor"), [(2, 1.0), (4, 1.5), (8, 1.75), (16, 1.875)])
def test_all_reduce_bus_bandwidth_factor_matches_nccl_tests(n, factor):
    """nccl-tests doc/PERFORMANCE.md: busbw = algbw × 2(n − 1)/n for all-reduce."""
    assert bus_bandwidth_factor("all-reduce", n) == factor


def test_all_gather_and_reduce_scatter_move_half_of_an_all_reduce():
    """nccl-tests: (n − 1)/n for ReduceScatter and AllGather; AllReduce = ReduceScatter + AllGather."""
    assert bus_bandwidth_factor("reduce-scatter", 8) == 0.875
    assert bus_bandwidth_factor("all-gather", 8) + bus_bandwidth_factor("reduce-scatter", 8) == 1.75


def test_ring_all_reduce_of_1_gb_over_8_gpus_sends_1_75_gb_per_gpu():
    """Ring all-reduce: 2(n − 1)/n × bytes = 2 × 7/8 × 1 GB."""
    assert ring_allreduce_bytes_per_gpu(1e9, 8) == 1.75e9


def test_a_single_gpu_communicates_nothing():
    assert ring_allreduce_bytes_per_gpu(1e9, 1) == 0


# --- The pipeline bubble ------------------------------------------------------------------------


def test_bubble_for_8_stages_and_32_microbatches_is_0_179():
    """GPipe's idle fraction (p − 1)/(m + p − 1) = 7/39 (calculator anchors §3)."""
    assert round(pipeline_bubble_fraction(8, 32), 3) == 0.179


def test_megatron_bubble_ratio_for_8_stages_and_32_microbatches_is_0_219():
    """Narayanan et al. 2021 §2.2.1: bubble time / ideal time = (p − 1)/m = 7/32."""
    assert round(megatron_bubble_ratio(8, 32), 3) == 0.219


@pytest.mark.parametrize("schedule", ["gpipe", "1f1b"])
@pytest.mark.parametrize(("p", "m"), [(1, 1), (2, 1), (4, 8), (4, 16), (8, 32), (5, 3), (3, 7)])
def test_idle_fraction_of_the_schedule_equals_the_formula(schedule, p, m):
    slots = pipeline_schedule(p, m, schedule)
    assert schedule_idle_fraction(slots) == pytest.approx(pipeline_bubble_fraction(p, m))


@settings(max_examples=60, deadline=None)
@given(st.integers(1, 12), st.integers(1, 40), st.sampled_from(["gpipe", "1f1b"]))
def test_any_schedule_idles_exactly_the_bubble_fraction(p, m, schedule):
    slots = pipeline_schedule(p, m, schedule)
    assert schedule_idle_fraction(slots) == pytest.approx(pipeline_bubble_fraction(p, m))


@pytest.mark.parametrize("schedule", ["gpipe", "1f1b"])
def test_step_lasts_m_plus_p_minus_1_forward_backward_pairs(schedule):
    """Narayanan et al. 2021 eq. 1: (m + p − 1)(t_f + t_b), with t_b = 2 t_f as in their Fig. 3."""
    assert schedule_makespan(pipeline_schedule(4, 8, schedule)) == (8 + 4 - 1) * (1 + 2)


def test_1f1b_keeps_at_most_p_minus_s_microbatches_in_flight():
    """Narayanan et al. 2021 §2.2.1: activations stashed for p or fewer micro-batches under 1F1B."""
    slots = pipeline_schedule(4, 16, "1f1b")
    assert [max_in_flight(slots, s) for s in range(4)] == [4, 3, 2, 1]


def test_gpipe_keeps_all_microbatches_in_flight():
    slots = pipeline_schedule(4, 16, "gpipe")
    assert [max_in_flight(slots, s) for s in range(4)] == [16, 16, 16, 16]


@settings(max_examples=60, deadline=None)
@given(st.integers(2, 64), st.integers(1, 1000))
def test_more_microbatches_shrink_the_bubble(p, m):
    assert pipeline_bubble_fraction(p, m + 1) < pipeline_bubble_fraction(p, m)


def test_one_stage_has_no_bubble():
    assert pipeline_bubble_fraction(1, 4) == 0


# --- Tensor-parallel traffic --------------------------------------------------------------------


def test_tp_bytes_per_layer_match_megatron():
    """Narayanan et al. 2021 §3.2: 8·b·s·h·(t − 1)/t elements per layer per micro-batch per GPU.

    GPT-3 shapes (h = 12288, s = 2048), b = 1, t = 8, 2-byte activations.
    """
    b, s, h, t = 1, 2048, 12288, 8
    assert tensor_parallel_bytes_per_layer(h, s, b, t) == pytest.approx(8 * b * s * h * (t - 1) / t * 2)


def test_sequence_parallel_moves_the_same_volume_as_all_reduce():
    """Korthikanti et al. 2022 §4.2.2: all-gather + reduce-scatter instead of all-reduce, same bytes."""
    no_sp = communication_per_step(LLAMA_3_70B, replace(EXAMPLE, sequence_parallel=False))
    with_sp = communication_per_step(LLAMA_3_70B, EXAMPLE)
    tp = {t.key: t.bytes_per_gpu for t in no_sp}["tp"]
    assert {t.key: t.bytes_per_gpu for t in with_sp}["tp"] == pytest.approx(tp)


def test_tp_term_is_layers_of_the_stage_times_microbatches_times_per_layer():
    """l_stage · 8bsh(t−1)/t per micro-batch (Narayanan et al. 2021 §3.2), × m micro-batches."""
    tp = {t.key: t for t in communication_per_step(LLAMA_3_70B, EXAMPLE)}["tp"]
    per_layer = 8 * 1 * 4096 * 8192 * (8 - 1) / 8 * 2
    assert tp.bytes_per_gpu == pytest.approx(80 / 4 * 16 * per_layer)


def test_pipeline_sends_bsh_over_t_per_microbatch_with_scatter_gather():
    """Narayanan et al. 2021 §4.1: b·s·h/t between consecutive stages; a middle stage sends both ways."""
    pp = {t.key: t for t in communication_per_step(LLAMA_3_70B, EXAMPLE)}["pp"]
    assert pp.bytes_per_gpu == pytest.approx(2 * 16 * 1 * 4096 * 8192 * 2 / 8)


def test_tp_inside_a_node_uses_nvlink_and_across_nodes_the_network():
    inside = {t.key: t for t in communication_per_step(LLAMA_3_70B, EXAMPLE)}["tp"]
    across = Layout(dp=1, tp=16, pp=4, nodes=8, gpus_per_node=8, num_microbatches=16, seq=4096)
    spanning = {t.key: t for t in communication_per_step(LLAMA_3_70B, across)}["tp"]
    assert (inside.link_id, spanning.link_id) == ("nvlink-4", "ib-ndr-4x")


def test_tp_across_nodes_runs_its_rings_over_every_nic():
    """TP 16 over two 8-GPU nodes: each node's 8 members leave through 8 NICs (one per GPU), so a
    GPU's ring bytes move at min(8 × one port, NVLink × 8/7), both at the same efficiency
    (``rail_allreduce_rate``), not at one port's rate."""
    layout = Layout(dp=1, tp=16, pp=4, nodes=8, gpus_per_node=8, num_microbatches=16, seq=4096)
    net = {t.key: t for t in communication_per_step(LLAMA_3_70B, layout)}["tp"]
    ib = get_interconnect("ib-ndr-4x")
    nvlink = get_interconnect("nvlink-4")
    rate = min(8 * ib.per_direction_bytes_per_s, nvlink.per_direction_bytes_per_s * 8 / 7) * 0.8
    assert net.time_s == pytest.approx(net.bytes_per_gpu / rate)
    assert net.time_s < net.bytes_per_gpu / (ib.per_direction_bytes_per_s * 0.8) / 4


def test_tp_over_the_network_is_many_times_slower_than_over_nvlink():
    """NVLink 4 moves 450 GB/s one way, one NDR port 50 GB/s (catalog): about 9× at equal efficiency."""
    times = dict(
        tensor_parallel_time_by_link(LLAMA_3_70B, EXAMPLE, ("nvlink-4", "ib-ndr-4x"), efficiency=0.8)
    )
    nvlink, network = times["NVLink 4 (H100, H200, GH200)"], times["InfiniBand NDR 4x port (400 Gb/s)"]
    assert network / nvlink == pytest.approx(450 / 50)


# --- Data-parallel traffic under ZeRO -----------------------------------------------------------


def _dp_bytes(stage, microbatches=1):
    layout = Layout(dp=64, tp=1, pp=1, zero_stage=stage, nodes=8, num_microbatches=microbatches)
    return sum(
        t.bytes_per_gpu for t in communication_per_step(ZERO_EXAMPLE, layout) if t.key.startswith("dp")
    )


def test_zero_1_and_2_move_what_plain_data_parallelism_moves():
    """ZeRO §7: P_os and P_os+g keep data parallelism's 2Ψ (reduce-scatter + all-gather)."""
    assert _dp_bytes(1) == pytest.approx(_dp_bytes(0))
    assert _dp_bytes(2) == pytest.approx(_dp_bytes(0))


def test_zero_3_moves_one_and_a_half_times_as_much():
    """ZeRO §7: 3Ψ against 2Ψ, "a modest 50% increase".

    ZeRO++ (arXiv 2306.10209): "3M, spreads evenly across 2 all-gather and 1 reduce-scatter".
    """
    assert _dp_bytes(3) / _dp_bytes(0) == pytest.approx(1.5)


# --- Layout, ranks and validation ---------------------------------------------------------------


def test_rank_order_matches_megatron_docstring_example():
    """Megatron-LM ``initialize_model_parallel`` docstring: 16 GPUs, TP 2, PP 4."""
    groups = process_groups(Layout(dp=2, tp=2, pp=4, nodes=2, gpus_per_node=8))
    assert groups["dp"] == [[0, 2], [1, 3], [4, 6], [5, 7], [8, 10], [9, 11], [12, 14], [13, 15]]
    assert groups["tp"] == [[0, 1], [2, 3], [4, 5], [6, 7], [8, 9], [10, 11], [12, 13], [14, 15]]
    assert groups["pp"] == [[0, 4, 8, 12], [1, 5, 9, 13], [2, 6, 10, 14], [3, 7, 11, 15]]


def test_roles_agree_with_the_groups():
    roles = gpu_roles(EXAMPLE, LLAMA_3_70B)
    assert (roles[9].node, roles[9].tp_rank, roles[9].dp_rank, roles[9].pp_stage) == (1, 1, 1, 0)
    assert roles[63].layers == (60, 80) and roles[63].holds_lm_head
    assert "ZeRO-1 shard 2/2" in roles[9].holds


def test_in_the_example_only_dp_and_pp_cross_nodes():
    assert groups_cross_nodes(EXAMPLE) == {"tp": False, "dp": True, "pp": True}


def test_gpu_count_mismatch_is_explained():
    with pytest.raises(ValueError, match=r"2 × 8 × 4 = 64 GPUs, but the cluster has 4 nodes × 8 GPUs = 32"):
        Layout(dp=2, tp=8, pp=4, nodes=4, gpus_per_node=8)


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"zero_stage": 4}, "ZeRO stage"),
        ({"recompute": "some"}, "recompute"),
        ({"schedule": "interleaved"}, "schedule"),
        ({"dp": 0}, "dp must be a positive whole number"),
        ({"num_microbatches": 2.5}, "num_microbatches"),
    ],
)
def test_bad_layout_values_are_rejected(changes, message):
    fields = {"dp": 1, "tp": 1, "pp": 1, "nodes": 1, "gpus_per_node": 1} | changes
    with pytest.raises(ValueError, match=message):
        Layout(**fields)


def test_tp_must_divide_the_attention_heads():
    layout = Layout(dp=1, tp=3, pp=1, nodes=1, gpus_per_node=3)
    with pytest.raises(ValueError, match="does not divide the 64 attention heads"):
        per_gpu_memory(LLAMA_3_70B, layout)


def test_tp_and_kv_heads_must_divide_one_another():
    spec = ModelSpec(
        family="llama",
        hidden_size=3072,
        num_layers=4,
        num_heads=24,
        num_kv_heads=6,
        head_dim=128,
        intermediate_size=8192,
        vocab_size=32000,
    )
    with pytest.raises(ValueError, match="6 KV heads do not divide one another"):
        per_gpu_memory(spec, Layout(dp=1, tp=4, pp=1, nodes=1, gpus_per_node=4))


def test_tp_beyond_kv_heads_replicates_them():
    layout = Layout(dp=1, tp=16, pp=4, nodes=8, gpus_per_node=8)
    assert any("replicated" in note for note in layout_notes(LLAMA_3_70B, layout))


def test_more_stages_than_layers_is_rejected():
    tiny = ZERO_EXAMPLE.with_overrides(num_layers=2)
    with pytest.raises(ValueError, match="more pipeline stages than the model's 2 layers"):
        per_gpu_memory(tiny, Layout(dp=1, tp=1, pp=4, nodes=1, gpus_per_node=4))


def test_factorizations_of_64_gpus_all_multiply_to_64():
    options = factorizations(64)
    assert len(options) == len(set(options)) == 28  # ordered triples of powers of 2: C(6 + 2, 2)
    assert all(dp * tp * pp == 64 for dp, tp, pp in options)
    assert divisors(12) == [1, 2, 3, 4, 6, 12]


# --- Memory per GPU -----------------------------------------------------------------------------


def test_first_stage_params_per_gpu_from_llama_3_70b_shapes():
    """20 layers of (2·8192² + 2·8192·1024 + 3·8192·28672)/8 + 2·8192 norms, plus 128,256 × 8192 / 8."""
    per_layer = (2 * 8192 * 8192 + 2 * 8192 * 1024 + 3 * 8192 * 28672) // 8 + 2 * 8192
    assert stage_params_per_gpu(LLAMA_3_70B, EXAMPLE, 0) == 20 * per_layer + 128256 * 8192 // 8


def test_stages_without_tp_add_up_to_the_whole_model():
    layout = Layout(dp=1, tp=1, pp=4, nodes=1, gpus_per_node=4)
    total = sum(stage_params_per_gpu(LLAMA_3_70B, layout, s) for s in range(4))
    assert total == LLAMA_3_70B.param_count()


@pytest.mark.parametrize("pp", [2, 4, 8])
def test_first_stage_activations_do_not_depend_on_pipeline_depth(pp):
    """Korthikanti et al. 2022 eq. 5: L/p layers × p micro-batches in flight = L layers' worth."""
    layout = Layout(dp=1, tp=8, pp=pp, nodes=pp, gpus_per_node=8, num_microbatches=16, seq=4096)
    per_layer = training_activation_bytes_per_layer(LLAMA_3_70B, 4096, 1, tensor_parallel=8)
    assert activation_bytes_per_gpu(LLAMA_3_70B, layout, 0) == pytest.approx(80 * per_layer)


def test_first_stage_is_the_most_loaded_in_the_example():
    stages = memory_by_stage(LLAMA_3_70B, EXAMPLE)
    assert per_gpu_memory(LLAMA_3_70B, EXAMPLE) is not None
    assert max(range(4), key=lambda s: stages[s].total_bytes) == 0


def test_sequence_parallelism_and_selective_recompute_shrink_activations():
    plain = replace(EXAMPLE, sequence_parallel=False, recompute="none")
    smaller = per_gpu_memory(LLAMA_3_70B, EXAMPLE, stage=0).get("activations")
    assert smaller < per_gpu_memory(LLAMA_3_70B, plain, stage=0).get("activations")


# --- Compute and step time ----------------------------------------------------------------------


def test_compute_time_is_6nd_over_peak_times_mfu_plus_the_bubble():
    """6 × params × tokens / (GPUs × peak × MFU) × (1 + (p − 1)/m); H100 SXM dense bf16 989.5 TFLOP/s."""
    h100 = get_accelerator("h100-sxm")
    tokens = 2 * 16 * 1 * 4096
    ideal = 6 * LLAMA_3_70B.param_count() * tokens / (64 * 989.5e12 * 0.4)
    assert compute_time_per_step(LLAMA_3_70B, EXAMPLE, h100, mfu=0.4) == pytest.approx(ideal * (1 + 3 / 16))


def test_hiding_all_dp_traffic_leaves_only_tp_pp_and_the_bubble():
    h100 = get_accelerator("h100-sxm")
    terms = communication_per_step(LLAMA_3_70B, EXAMPLE)
    step = step_time(LLAMA_3_70B, EXAMPLE, h100, terms, dp_overlap=1.0)
    assert step.total_s == pytest.approx(step.compute_s + step.tp_s + step.pp_s + step.bubble_s)
    assert 0 < step.scaling_efficiency < 1


# --- Charts -------------------------------------------------------------------------------------


@pytest.mark.parametrize("colour_by", COLOUR_BY)
def test_grid_has_one_cell_per_gpu(colour_by):
    fig = gpu_grid_figure(EXAMPLE, colour_by, LLAMA_3_70B)
    grid = fig["data"][0]
    assert grid["type"] == "heatmap"
    assert sum(value is not None for row in grid["z"] for value in row) == 64
    assert sorted(int(text) for row in grid["text"] for text in row) == list(range(64))
    assert fig["layout"]["font"]["size"] == BASE_FONT_PX


def test_grid_with_many_groups_uses_a_colour_bar():
    layout = Layout(dp=16, tp=1, pp=1, nodes=2, gpus_per_node=8)
    fig = gpu_grid_figure(layout, "dp")
    assert fig["data"][0]["colorbar"]["title"]["text"] == "DP rank"


def test_gantt_title_prints_the_bubble():
    fig = pipeline_gantt_figure(pipeline_schedule(8, 32, "1f1b"), "1f1b")
    title = fig["layout"]["title"]["text"]
    assert "17.9%" in title and "0.219" in title
    assert {trace["name"] for trace in fig["data"]} >= {"Idle: pipeline bubble"}


def test_memory_and_communication_charts_build():
    h100 = get_accelerator("h100-sxm")
    memory = memory_breakdown_figure(memory_by_stage(LLAMA_3_70B, EXAMPLE), h100.memory_bytes)
    terms = communication_per_step(LLAMA_3_70B, EXAMPLE)
    comm = comm_vs_compute_figure(terms, step_time(LLAMA_3_70B, EXAMPLE, h100, terms))
    assert len(memory["data"]) == 4 * 5
    assert "scaling efficiency" in comm["layout"]["title"]["text"]
    assert comm["layout"]["xaxis"]["title"]["text"] == "Time per optimizer step (s)"
