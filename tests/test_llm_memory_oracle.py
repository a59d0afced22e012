"""Parameter counts agree exactly with what Hugging Face transformers instantiates.

The oracle builds each config's causal-LM model on torch's meta device (tests/hf_oracle.py):
no weights are allocated and nothing is downloaded.
"""

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from simulators.llm_memory import ModelSpec
from simulators.presets import load_model_presets
from tests.hf_oracle import hf_param_count

pytest.importorskip(
    "transformers", reason="transformers is a test dependency: pip install -r requirements-dev.txt"
)

# One small config per family and per option that changes a size.
CASES = {
    "llama": dict(
        model_type="llama",
        hidden_size=256,
        intermediate_size=688,
        num_hidden_layers=3,
        num_attention_heads=8,
        num_key_value_heads=2,
        vocab_size=1000,
        attention_bias=True,
        mlp_bias=True,
    ),
    "llama-tied": dict(
        model_type="llama",
        hidden_size=256,
        intermediate_size=688,
        num_hidden_layers=3,
        num_attention_heads=8,
        vocab_size=1000,
        tie_word_embeddings=True,
        head_dim=64,
    ),
    "mistral": dict(
        model_type="mistral",
        hidden_size=256,
        intermediate_size=512,
        num_hidden_layers=2,
        num_attention_heads=8,
        num_key_value_heads=4,
        vocab_size=500,
        sliding_window=64,
    ),
    "mixtral": dict(
        model_type="mixtral",
        hidden_size=128,
        intermediate_size=256,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=2,
        vocab_size=300,
        num_local_experts=4,
        num_experts_per_tok=2,
    ),
    "qwen2": dict(
        model_type="qwen2",
        hidden_size=128,
        intermediate_size=256,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=2,
        vocab_size=300,
    ),
    "qwen2_moe": dict(
        model_type="qwen2_moe",
        hidden_size=128,
        intermediate_size=256,
        moe_intermediate_size=64,
        shared_expert_intermediate_size=96,
        num_hidden_layers=4,
        num_attention_heads=4,
        num_key_value_heads=2,
        vocab_size=300,
        num_experts=6,
        num_experts_per_tok=2,
        decoder_sparse_step=2,
        mlp_only_layers=[3],
    ),
    "qwen3": dict(
        model_type="qwen3",
        hidden_size=128,
        intermediate_size=256,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=2,
        head_dim=48,
        vocab_size=300,
        tie_word_embeddings=True,
    ),
    "qwen3_moe": dict(
        model_type="qwen3_moe",
        hidden_size=128,
        intermediate_size=256,
        moe_intermediate_size=64,
        num_hidden_layers=3,
        num_attention_heads=4,
        num_key_value_heads=2,
        head_dim=32,
        vocab_size=300,
        num_experts=6,
        num_experts_per_tok=2,
    ),
    "gemma": dict(
        model_type="gemma",
        hidden_size=128,
        intermediate_size=256,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=1,
        head_dim=64,
        vocab_size=300,
    ),
    "gemma2": dict(
        model_type="gemma2",
        hidden_size=128,
        intermediate_size=256,
        num_hidden_layers=4,
        num_attention_heads=4,
        num_key_value_heads=2,
        head_dim=64,
        vocab_size=300,
    ),
    "phi": dict(
        model_type="phi",
        hidden_size=128,
        intermediate_size=512,
        num_hidden_layers=2,
        num_attention_heads=4,
        vocab_size=300,
        qk_layernorm=True,
    ),
    "phi3": dict(
        model_type="phi3",
        hidden_size=128,
        intermediate_size=256,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=2,
        vocab_size=32064,
    ),
    "gpt2": dict(model_type="gpt2", n_embd=128, n_layer=2, n_head=4, vocab_size=300, n_positions=64),
    "gpt_neox": dict(
        model_type="gpt_neox",
        hidden_size=128,
        intermediate_size=512,
        num_hidden_layers=2,
        num_attention_heads=4,
        vocab_size=300,
    ),
    "gpt_bigcode": dict(
        model_type="gpt_bigcode", n_embd=128, n_layer=2, n_head=4, vocab_size=300, n_positions=64
    ),
    "gpt_bigcode-mha": dict(
        model_type="gpt_bigcode",
        n_embd=128,
        n_layer=2,
        n_head=4,
        vocab_size=300,
        n_positions=64,
        multi_query=False,
    ),
    "falcon7": dict(
        model_type="falcon", hidden_size=128, num_hidden_layers=2, num_attention_heads=4, vocab_size=300
    ),
    "falcon40": dict(
        model_type="falcon",
        hidden_size=128,
        num_hidden_layers=2,
        num_attention_heads=8,
        num_kv_heads=2,
        new_decoder_architecture=True,
        vocab_size=300,
    ),
    "falcon-seq": dict(
        model_type="falcon",
        hidden_size=128,
        num_hidden_layers=2,
        num_attention_heads=4,
        vocab_size=300,
        parallel_attn=False,
        multi_query=False,
        bias=True,
    ),
    "opt": dict(
        model_type="opt",
        hidden_size=128,
        ffn_dim=512,
        num_hidden_layers=2,
        num_attention_heads=4,
        vocab_size=300,
        max_position_embeddings=64,
    ),
    "opt-proj": dict(
        model_type="opt",
        hidden_size=128,
        ffn_dim=512,
        num_hidden_layers=2,
        num_attention_heads=4,
        vocab_size=300,
        max_position_embeddings=64,
        word_embed_proj_dim=64,
        do_layer_norm_before=False,
    ),
    "bloom": dict(model_type="bloom", hidden_size=128, n_layer=2, n_head=4, vocab_size=300),
    "starcoder2": dict(
        model_type="starcoder2",
        hidden_size=128,
        intermediate_size=512,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=2,
        vocab_size=300,
    ),
    "deepseek_v2": dict(
        model_type="deepseek_v2",
        hidden_size=128,
        intermediate_size=256,
        moe_intermediate_size=64,
        num_hidden_layers=3,
        num_attention_heads=4,
        vocab_size=300,
        n_routed_experts=6,
        n_shared_experts=2,
        num_experts_per_tok=2,
        first_k_dense_replace=1,
        kv_lora_rank=32,
        q_lora_rank=48,
        qk_nope_head_dim=16,
        qk_rope_head_dim=8,
        v_head_dim=16,
        head_dim=8,
    ),
    "deepseek_v2-noq": dict(
        model_type="deepseek_v2",
        hidden_size=128,
        intermediate_size=256,
        moe_intermediate_size=64,
        num_hidden_layers=3,
        num_attention_heads=4,
        vocab_size=300,
        n_routed_experts=6,
        n_shared_experts=1,
        num_experts_per_tok=2,
        first_k_dense_replace=1,
        kv_lora_rank=32,
        q_lora_rank=None,
        qk_nope_head_dim=16,
        qk_rope_head_dim=8,
        v_head_dim=16,
        head_dim=8,
    ),
    "deepseek_v3": dict(
        model_type="deepseek_v3",
        hidden_size=128,
        intermediate_size=256,
        moe_intermediate_size=64,
        num_hidden_layers=3,
        num_attention_heads=4,
        num_key_value_heads=4,
        vocab_size=300,
        n_routed_experts=8,
        n_shared_experts=1,
        num_experts_per_tok=2,
        first_k_dense_replace=1,
        kv_lora_rank=32,
        q_lora_rank=48,
        qk_nope_head_dim=16,
        qk_rope_head_dim=8,
        v_head_dim=16,
        n_group=2,
        topk_group=1,
        head_dim=8,
    ),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_param_count_matches_transformers(name):
    config = CASES[name]
    assert ModelSpec.from_hf_config(config).param_count() == hf_param_count(config)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    family=st.sampled_from(["llama", "mistral", "qwen2", "gemma", "starcoder2", "gpt_neox", "phi3"]),
    kv_heads=st.sampled_from([1, 2, 4]),
    head_dim=st.sampled_from([16, 32]),
    layers=st.integers(1, 3),
    inner=st.integers(8, 300),
    vocab=st.integers(32100, 32200),
    tied=st.booleans(),
)
def test_random_configs_match_transformers(family, kv_heads, head_dim, layers, inner, vocab, tied):
    config = {
        "model_type": family,
        "hidden_size": 4 * head_dim,
        "num_attention_heads": 4,
        "num_key_value_heads": kv_heads,
        "head_dim": head_dim,
        "num_hidden_layers": layers,
        "intermediate_size": inner,
        "vocab_size": vocab,
        "tie_word_embeddings": tied,
    }
    if family == "gpt_neox":
        del config["num_key_value_heads"], config["head_dim"]
    assert ModelSpec.from_hf_config(config).param_count() == hf_param_count(config)


PRESETS = [p for p in load_model_presets() if p.family != "openelm"]  # OpenELM needs remote code


@pytest.mark.parametrize("preset", PRESETS, ids=[p.id for p in PRESETS])
def test_every_preset_matches_transformers(preset):
    """The stored config.json of each preset, as transformers instantiates it on the meta device."""
    assert preset.spec.param_count() == hf_param_count(preset.config)
