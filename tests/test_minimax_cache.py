"""MiniMax-Text-01's cache: what transformers holds after a forward, against ``kv_cache_bytes``.

transformers models/minimax/modeling_minimax.py keeps two things in its ``MiniMaxCache`` (a
``DynamicCache``): keys and values of the full-attention layers in ``cache.layers``, and, for each
lightning-attention layer, its K^T V state (batch x heads x head_dim x head_dim, in the
activations' dtype) in ``cache.linear_cache`` (``set_linear_cache``), not in ``cache.layers``. A
count over ``cache.layers`` alone misses those states: for the default MiniMaxConfig (16 lightning
layers of 32 x 128 x 128 in bf16) a fixed 16 MiB, 6.25 % of the cache at 4,096 tokens and 0.78 % at
32,768. The calculator counts both, and every tensor reachable from the cache adds up to it.
"""

from __future__ import annotations

import warnings

import pytest

from simulators.llm_memory import kv_cache_bytes
from simulators.model_config import ModelSpec

torch = pytest.importorskip("torch", reason="torch is a test dependency (requirements-dev.txt)")
pytest.importorskip("transformers", reason="transformers is a test dependency (requirements-dev.txt)")

MIB = 2**20
# A MiniMax small enough to run for real on the CPU: 2 full and 2 lightning layers.
SMALL = dict(
    hidden_size=256,
    num_attention_heads=8,
    num_key_value_heads=2,
    head_dim=32,
    num_hidden_layers=4,
    intermediate_size=128,
    num_local_experts=4,
    num_experts_per_tok=2,
    vocab_size=1000,
)


def _bytes(item, seen: set) -> int:
    """Bytes of every tensor reachable from ``item``, each storage counted once (meta tensors
    have no storage address: each counted once by identity)."""
    if isinstance(item, torch.Tensor):
        key = id(item) if item.device.type == "meta" else item.untyped_storage().data_ptr()
        if key in seen:
            return 0
        seen.add(key)
        if item.device.type == "meta":
            return item.numel() * item.element_size()
        return item.untyped_storage().nbytes()
    if isinstance(item, list | tuple):
        return sum(_bytes(x, seen) for x in item)
    if isinstance(item, dict):
        return sum(_bytes(x, seen) for x in item.values())
    if hasattr(item, "__dict__") and not isinstance(item, type):
        return sum(_bytes(x, seen) for x in vars(item).values())
    return 0


def _forward(config, device: str, tokens: int):
    from transformers import AutoModelForCausalLM
    from transformers.utils import logging as hf_logging

    hf_logging.set_verbosity_error()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with torch.device(device):
            model = AutoModelForCausalLM.from_config(config, torch_dtype=torch.bfloat16).eval()
        with torch.no_grad():
            out = model(input_ids=torch.zeros((1, tokens), dtype=torch.long, device=device), use_cache=True)
    return out.past_key_values


@pytest.mark.parametrize(
    ("device", "changes", "tokens"),
    [
        ("cpu", SMALL, 300),  # a real forward: two lightning blocks of 256 tokens
        ("cpu", SMALL, 4_096),
        ("meta", {"num_hidden_layers": 4}, 4_096),  # the default sizes, four layers
    ],
)
def test_every_tensor_the_cache_holds_is_what_the_calculator_counts(device, changes, tokens):
    from transformers import MiniMaxConfig

    config = MiniMaxConfig(**changes)
    spec = ModelSpec.from_hf_config(config.to_dict())
    cache = _forward(config, device, tokens)
    assert type(cache).__name__ == "MiniMaxCache"

    states = [t for t in cache.linear_cache if isinstance(t, torch.Tensor)]
    assert len(states) == spec.kinds().count("linear") == spec.num_layers // 2
    for state in states:  # K^T V per head, in the activations' dtype
        assert tuple(state.shape) == (1, spec.num_heads, spec.head_dim, spec.head_dim)
        assert state.dtype == torch.bfloat16

    everything = _bytes(cache, set())
    in_layers = _bytes(cache.layers, set())
    in_linear_cache = _bytes(cache.linear_cache, set())
    assert everything == in_layers + in_linear_cache  # nothing else, nothing shared
    assert kv_cache_bytes(spec, tokens) == everything
    assert in_linear_cache == spec.state_bytes() > 0
    assert in_layers == kv_cache_bytes(spec, tokens) - spec.state_bytes()  # keys and values only


def test_the_default_minimax_keeps_16_mib_of_lightning_state_beside_its_kv_cache():
    """The 'fixed ~16 MiB on one side': the lightning states a count over cache.layers misses."""
    from transformers import MiniMaxConfig

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        config = MiniMaxConfig()
    spec = ModelSpec.from_hf_config(config.to_dict())
    assert spec.state_bytes() == 16 * 2 * 32 * 128 * 128 == 16 * MIB
    for tokens, share in ((4_096, 0.0625), (32_768, 0.0078125)):
        keys_values = kv_cache_bytes(spec, tokens) - spec.state_bytes()
        assert keys_values == 16 * tokens * 2 * 8 * 128 * 2  # 16 full layers, 8 KV heads of 128, bf16
        assert spec.state_bytes() / keys_values == share
    cache = _forward(config, "meta", 4_096)
    assert _bytes(cache, set()) == kv_cache_bytes(spec, 4_096) == 272 * MIB
    assert _bytes(cache.layers, set()) == 256 * MIB
