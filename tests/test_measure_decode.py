"""The decode gap: a static-KV-cache decode of a small Llama-style model beside the bandwidth bound."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")

from measure import lock  # noqa: E402
from measure.decode import (  # noqa: E402
    CPU_CONFIG,
    StaticDecoder,
    bound_tok_s,
    decode,
    kv_read_per_step_bytes,
    weights_read_per_step_bytes,
)
from measure.transformer import TransformerConfig, build_model  # noqa: E402
from simulators.llm_memory import ModelSpec, kv_cache_bytes  # noqa: E402
from simulators.llm_speed import weight_bytes_read_per_step  # noqa: E402

CUDA = torch.cuda.is_available()
needs_cuda = pytest.mark.skipif(not CUDA, reason="needs a CUDA GPU")
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


def test_static_cache_steps_give_the_full_forward_pass_logits():
    """Fed the same tokens one at a time, the cached step returns, at every position, the logits
    of the whole-sequence forward pass (measure.transformer.build_model, eager attention), for
    grouped-query heads and a batch of two."""
    torch.manual_seed(0)
    model = build_model(TINY, attention="eager").eval()
    ids = torch.randint(0, TINY.vocab_size, (2, 12))
    with torch.no_grad():
        reference = model(ids)
        decoder = StaticDecoder.create(torch, model, TINY, batch=2, slots=16)
        for t in range(ids.shape[1]):
            decoder.ids.copy_(ids[:, t])
            torch.testing.assert_close(decoder.step(), reference[:, t])
    assert int(decoder.position) == 12


def test_bytes_per_step_are_the_simulators_bytes():
    """Weights read per step and the KV cache equal simulators.llm_speed's weight_bytes_read_per_step
    and kv_cache_bytes for the same config (bf16, batch 1 and 8, 100 tokens in context)."""
    config = {k: v for k, v in CPU_CONFIG.to_dict().items() if v is not None}
    spec = ModelSpec.from_hf_config({**config, "model_type": "llama"})
    for batch in (1, 8):
        assert weights_read_per_step_bytes(CPU_CONFIG, 2, batch) == weight_bytes_read_per_step(
            spec, batch, "bf16"
        )
        assert kv_read_per_step_bytes(CPU_CONFIG, 100, 2, batch) == kv_cache_bytes(spec, 100, batch, "bf16")


def test_the_bound_is_bandwidth_over_bytes_per_step():
    """README of the H100 run: 3.35 TB/s over 15.08 GB read per step (Llama-3.1-8B) = 222 tok/s."""
    assert bound_tok_s(3.35e12, 15.0809e9) == pytest.approx(222.1, abs=0.1)
    assert bound_tok_s(3.35e12, 15.0809e9, batch=4) == pytest.approx(4 * 222.1, abs=0.5)


def test_eager_decode_on_a_cpu_reports_its_share_of_the_bound():
    outcome = decode("cpu", quick=True)
    assert outcome.ok, outcome.status
    (record,) = outcome.records
    assert (record.kind, record.mode, record.batch, record.cache) == ("decode", "eager", 1, "static")
    assert record.tok_s == pytest.approx(1 / record.step_s)
    assert record.weights_bytes == weights_read_per_step_bytes(CPU_CONFIG, 4)  # float32
    assert record.bytes_per_step == record.weights_bytes + record.kv_bytes
    assert record.bound_tok_s == pytest.approx(record.bound_bandwidth_bytes_per_s / record.bytes_per_step)
    assert "copy" in record.bound_source
    assert 0 < record.fraction_of_bound <= 1


def test_cuda_graphs_need_a_cuda_device():
    outcome = decode("cpu", config=TINY, modes=("cuda_graph",))
    assert outcome.status.code == "unsupported"


@needs_cuda
def test_cuda_graphs_decode_faster_than_eager_at_batch_1():
    """Issue 12: eager PyTorch reached 9% of the bound on the H100 and CUDA Graphs 55%."""
    outcome = decode("cuda", quick=True)
    assert outcome.ok, outcome.status
    modes = {r.mode: r for r in outcome.records}
    assert set(modes) == {"eager", "cuda_graph"}
    assert modes["cuda_graph"].tok_s > modes["eager"].tok_s
    assert all(0 < r.fraction_of_bound <= 1 for r in outcome.records)
    assert all(r.timer == "cuda_event" and r.dtype == "bfloat16" for r in outcome.records)
