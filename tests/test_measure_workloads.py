"""Each workload on CPU at tiny sizes; GPU-only paths are skipped without a CUDA GPU."""

from __future__ import annotations

import math

import pytest

torch = pytest.importorskip("torch")

from measure import lock, status  # noqa: E402
from measure.collectives import allreduce, allreduce_bus_factor, ring_allreduce_time_s  # noqa: E402
from measure.results import AllReduceRecord, BandwidthRecord, MatmulRecord  # noqa: E402
from measure.transformer import (  # noqa: E402
    TransformerConfig,
    _cpu_profiled_peak,
    build_model,
    llama_parameter_count,
    profiler_peak_bytes,
    transformer_memory,
)
from measure.workloads import (  # noqa: E402
    bandwidth,
    host_device_copy,
    launch_overhead,
    matmul,
    quantization_error,
    run_guarded,
)

CUDA = torch.cuda.is_available()
needs_cuda = pytest.mark.skipif(not CUDA, reason="needs a CUDA GPU")
needs_two_gpus = pytest.mark.skipif(
    not CUDA or torch.cuda.device_count() < 2, reason="needs a CUDA GPU (two of them)"
)
KiB, MiB = 1024, 1024**2
TINY = TransformerConfig(
    vocab_size=512,
    hidden_size=64,
    intermediate_size=176,
    num_hidden_layers=2,
    num_attention_heads=4,
    num_key_value_heads=2,
)


@pytest.fixture(autouse=True)
def _private_lock_file(tmp_path, monkeypatch):
    monkeypatch.setenv(lock.LOCK_FILE_ENV, str(tmp_path / "measure.lock"))


# --- bandwidth -----------------------------------------------------------------------------------


def test_bandwidth_counts_bytes_the_stream_way():
    """STREAM counts 2 words per element for copy and 3 for triad, no write-allocate."""
    outcome = bandwidth("cpu", sizes_bytes=[48 * KiB, MiB], repeats=3, target_sample_s=0.001)
    assert outcome.ok, outcome.status
    by_key = {(r.op, r.elements): r for r in outcome.records}
    assert len(by_key) == 4
    for (op, elements), record in by_key.items():
        assert isinstance(record, BandwidthRecord)
        assert record.bytes == elements * {"copy": 2, "triad": 3}[op] * 4
        assert record.write_allocate_counted is False
        assert record.p10_s <= record.median_s <= record.p90_s
    assert by_key[("copy", 6144)].bytes == 48 * KiB


def test_bandwidth_reports_progress_and_can_be_cancelled():
    seen: list[float] = []
    calls = {"n": 0}

    def stop_after_first_record() -> bool:
        calls["n"] += 1
        return calls["n"] > 8

    outcome = bandwidth(
        "cpu",
        ops=("copy",),
        sizes_bytes=[16 * KiB, 32 * KiB, 64 * KiB, 128 * KiB],
        repeats=3,
        target_sample_s=0.001,
        progress=lambda fraction, _msg: seen.append(fraction),
        should_stop=stop_after_first_record,
    )
    assert outcome.status.code == status.CANCELLED
    assert 1 <= len(outcome.records) < 4
    assert seen and all(0.0 <= f <= 1.0 for f in seen)


def test_an_out_of_memory_error_becomes_an_explanation():
    def body(_ctx, _records):
        raise RuntimeError(
            "DefaultCPUAllocator: can't allocate memory: you tried to allocate 10995116277760 bytes."
        )

    outcome = run_guarded("bandwidth", "cpu", body)
    assert outcome.status.code == status.OOM and "smaller sizes" in outcome.status.message


# --- matmul --------------------------------------------------------------------------------------


def test_matmul_records_flops_bytes_and_intensity_for_the_roofline():
    """64x32x16: flops = 2*64*32*16 = 65,536; ideal fp32 bytes = (64*16 + 16*32 + 64*32)*4 = 14,336."""
    outcome = matmul("cpu", shapes=[(64, 32, 16)], dtypes=["float32", "bfloat16"], repeats=3)
    assert outcome.ok, outcome.status
    fp32, bf16 = outcome.records
    assert isinstance(fp32, MatmulRecord)
    assert (fp32.flops, fp32.bytes) == (65_536, 14_336)
    assert fp32.intensity_flop_per_byte == pytest.approx(65_536 / 14_336)
    assert bf16.bytes == 14_336 // 2
    assert fp32.tflops == pytest.approx(fp32.flops / fp32.median_s / 1e12)


def test_an_unsupported_dtype_is_skipped_with_a_note():
    outcome = matmul("cpu", shapes=[(16, 16, 16)], dtypes=["float32", "not_a_dtype"], repeats=2)
    assert outcome.ok and len(outcome.records) == 1
    assert "not_a_dtype" in outcome.status.message


@needs_cuda
def test_cuda_matmul_flushes_l2_and_covers_tensor_core_dtypes():
    outcome = matmul("cuda", shapes=[(1024, 1024, 1024)], repeats=3)
    assert outcome.ok, outcome.status
    assert all(r.l2_flushed and r.timer == "cuda_event" for r in outcome.records)
    major, _ = torch.cuda.get_device_capability()
    if major >= 8:
        assert {"float32", "tf32", "bfloat16"} <= {
            r.math if r.math == "tf32" else r.dtype for r in outcome.records
        }


# --- copies and launch overhead ------------------------------------------------------------------


def test_host_device_copies_are_a_gpu_topic():
    assert host_device_copy("cpu").status.code == status.UNSUPPORTED


@needs_cuda
def test_pinned_host_memory_copies_are_timed_both_ways():
    outcome = host_device_copy("cuda", sizes_bytes=[16 * MiB], repeats=3)
    assert outcome.ok, outcome.status
    assert {(r.direction, r.host_memory) for r in outcome.records} == {
        (d, m) for d in ("h2d", "d2h") for m in ("pageable", "pinned")
    }


def test_launch_overhead_on_cpu_uses_torch_utils_benchmark():
    outcome = launch_overhead("cpu", min_run_time_s=0.05)
    (record,) = outcome.records
    assert (record.mode, record.timer) == ("eager", "torch.utils.benchmark")
    assert record.ops_per_s == pytest.approx(1 / record.median_s)


@needs_cuda
def test_cuda_graphs_cut_the_launch_cost_per_op():
    outcome = launch_overhead("cuda", min_run_time_s=0.1)
    eager, graph = outcome.records
    assert graph.mode == "cuda_graph" and graph.median_s < eager.median_s


# --- quantization --------------------------------------------------------------------------------


def test_quantization_sqnr_matches_the_reference_table():
    """SQNR of N(0,1), 2^22 samples, torch 2.13 CPU (project reference, simulator-anchors.md 4.2):
    BF16 55.59, FP16 73.65, FP8 E4M3 (amax -> 448) 31.55, E5M2 25.57, INT4 block 64 19.36,
    block 128 18.61 dB; the table says +-0.05 dB across seeds."""
    formats = ("bfloat16", "float16", "float8_e4m3fn", "float8_e5m2", "int4_block64", "int4_block128")
    outcome = quantization_error(formats=formats, shape=(2048, 2048), seed=0)
    measured = {r.format: r.sqnr_db for r in outcome.records}
    reference = {
        "bfloat16": 55.59,
        "float16": 73.65,
        "float8_e4m3fn": 31.55,
        "float8_e5m2": 25.57,
        "int4_block64": 19.36,
        "int4_block128": 18.61,
    }
    assert measured == pytest.approx(reference, abs=0.1)


def test_a_lossless_round_trip_has_no_sqnr():
    exact = torch.tensor([[1.0, 0.5, -2.0, 0.25]])  # all exactly representable in bfloat16
    (record,) = quantization_error(formats=["bfloat16"], tensor=exact).records
    assert record.sqnr_db is None and record.rmse == 0.0


def test_per_channel_int8_beats_per_tensor_when_one_row_is_loud():
    x = torch.randn(64, 256, generator=torch.Generator().manual_seed(1))
    x[0] *= 60  # an outlier channel, as in LLM.int8()
    records = {
        r.format: r
        for r in quantization_error(formats=["int8_per_tensor", "int8_per_channel"], tensor=x).records
    }
    assert records["int8_per_channel"].sqnr_db > records["int8_per_tensor"].sqnr_db + 10


# --- transformer-step memory ---------------------------------------------------------------------


def test_our_model_is_llama_hf_weights_give_hf_logits():
    """Oracle: transformers' LlamaForCausalLM with the same config; names and outputs agree."""
    transformers = pytest.importorskip("transformers")
    config = transformers.LlamaConfig(**TINY.to_dict(), attn_implementation="eager")
    torch.manual_seed(0)
    hf = transformers.LlamaForCausalLM(config).eval()
    ours = build_model(TransformerConfig.from_dict(config.to_dict()), attention="eager").eval()
    missing, unexpected = ours.load_state_dict(hf.state_dict(), strict=False)
    assert (missing, unexpected) == ([], [])
    ids = torch.randint(0, TINY.vocab_size, (2, 24))
    with torch.no_grad():
        torch.testing.assert_close(ours(ids), hf(ids).logits)
    assert sum(p.numel() for p in ours.parameters()) == sum(p.numel() for p in hf.parameters())


def test_parameter_formula_matches_the_built_model():
    """F1 (calculator reference): V*h*2 + L*(h*n_h*d + 2*h*n_kv*d + n_h*d*h + 3*h*I + 2h) + h,
    here 512*64*2 + 2*(4096 + 2*2048 + 4096 + 33792 + 128) + 64 = 158,016."""
    assert llama_parameter_count(TINY) == 158_016
    assert sum(p.numel() for p in build_model(TINY).parameters()) == 158_016


def test_profiler_peak_is_the_running_maximum_of_allocations():
    events = [(0, 4_000_000), (1, 4_000_000), (2, -4_000_000), (3, 8), (4, -8), (5, -4_000_000)]
    assert profiler_peak_bytes(events) == 8_000_000


def test_cpu_profiler_sees_two_live_4_mb_tensors_as_an_8_mb_peak():
    def step():
        a = torch.empty(1_000_000)  # 4,000,000 bytes
        b = torch.empty(1_000_000)
        del a, b

    assert _cpu_profiled_peak(torch, step) == 8_000_000


def test_training_step_peak_holds_weights_adam_state_and_gradients():
    train = transformer_memory(TINY, batch=2, seq_len=32, mode="train", dtype="float32")
    infer = transformer_memory(TINY, batch=2, seq_len=32, mode="inference", dtype="float32")
    assert train.ok and infer.ok, (train.status, infer.status)
    (t,), (i,) = train.records, infer.records
    param_bytes = 158_016 * 4
    assert (t.parameters, t.parameter_bytes) == (158_016, param_bytes)
    assert t.optimizer_state_bytes >= 2 * param_bytes  # AdamW: exp_avg and exp_avg_sq
    assert t.baseline_bytes >= 3 * param_bytes
    assert t.peak_bytes >= t.baseline_bytes + param_bytes  # gradients exist at the peak
    assert param_bytes <= i.peak_bytes < t.peak_bytes


def test_an_invalid_config_is_explained():
    outcome = transformer_memory({"num_attention_heads": 6, "num_key_value_heads": 4})
    assert outcome.status.code == status.UNSUPPORTED and "num_key_value_heads" in outcome.status.message


@needs_cuda
def test_cuda_peak_comes_from_max_memory_allocated():
    outcome = transformer_memory(TINY, device="cuda", batch=2, seq_len=64, dtype="bfloat16")
    (record,) = outcome.records
    assert (
        record.method.startswith("torch.cuda.max_memory_allocated")
        and record.peak_bytes > record.baseline_bytes
    )


# --- all-reduce ----------------------------------------------------------------------------------


@pytest.mark.parametrize(("n", "factor"), [(2, 1.0), (4, 1.5), (8, 1.75), (16, 1.875)])
def test_bus_factor(n, factor):
    """nccl-tests doc/PERFORMANCE.md: busbw = algbw x 2(n-1)/n (table in the calculator reference)."""
    assert allreduce_bus_factor(n) == factor


def test_ring_model_time():
    """1 GB over 8 ranks at 100 GB/s per direction: (1e9 / 1e11) x 1.75 = 17.5 ms."""
    assert ring_allreduce_time_s(1e9, 8, 1e11) == pytest.approx(0.0175)


def test_allreduce_with_two_gloo_processes():
    outcome = allreduce(
        2, sizes_bytes=[4 * KiB, 256 * KiB], repeats=3, link_bytes_per_s=1e10, overhead_s=None
    )
    assert outcome.ok, outcome.status
    small, large = outcome.records
    assert isinstance(large, AllReduceRecord)
    assert (large.backend, large.world_size, large.bytes) == ("gloo", 2, 256 * KiB)
    assert large.busbw_gb_per_s == pytest.approx(large.algbw_gb_per_s)  # factor 1 at n = 2
    assert large.algbw_gb_per_s == pytest.approx(256 * KiB / large.median_s / 1e9)
    assert large.predicted_s == pytest.approx(small.min_s + 256 * KiB / 1e10)
    assert math.isfinite(small.median_s) and small.median_s > 0


def test_allreduce_can_be_cancelled():
    outcome = allreduce(2, sizes_bytes=[4 * KiB], repeats=3, should_stop=lambda: True)
    assert outcome.status.code == status.CANCELLED


@needs_two_gpus
def test_allreduce_with_nccl():
    outcome = allreduce(device="cuda", sizes_bytes=[MiB, 64 * MiB], repeats=3)
    assert outcome.ok, outcome.status
    assert all(r.backend == "nccl" for r in outcome.records)
