"""Every decoder-only text architecture of the pinned transformers is either sized exactly by the
calculator or refused with a reason — never silently wrong (issue 17).

transformers is the oracle (tests/arch_oracle.py): each architecture's default config is built on
the meta device, its parameters counted and its cache measured after forwards of 4,096 and 32,768
tokens. An architecture the calculator accepts must match within 0.5 % (parameters) and 1 % (cache
at both contexts); one it refuses must be listed below with the reason it gives, so a new
transformers release that adds an architecture fails here until someone decides which it is.
"""

from __future__ import annotations

import warnings

import pytest

pytest.importorskip("transformers", reason="transformers is a test dependency (requirements-dev.txt)")

from simulators.model_config import EXACT_FAMILIES, ModelSpec
from tests.arch_oracle import decoder_only_text_types, judge, oracle_config

TYPES = decoder_only_text_types()

# model_type -> the words of the refusal (what is not modelled yet, or the config field).
REFUSED = {
    "afmoe": "is an architecture the calculator has not been checked again",
    "axk1": "uses a variant of latent or sparse attention whose cache the",
    "axk2": "uses a variant of latent or sparse attention whose cache the",
    "bailing_hybrid": "has linear-attention layers",
    "bamba": "has state-space or recurrent layers",
    "beam": "is an architecture the calculator has not been checked again",
    "biogpt": "is an architecture the calculator has not been checked again",
    "blt": "is an architecture the calculator has not been checked again",
    "cohere_compass_text": "is an architecture the calculator has not been checked again",
    "cpmant": "is an architecture the calculator has not been checked again",
    "dbrx": "is an architecture the calculator has not been checked again",
    "deepseek_v2": "config field 'num_experts_per_tok / num_experts_per_token",
    "deepseek_v32": "uses a variant of latent or sparse attention whose cache the",
    "deepseek_v4": "uses a variant of latent or sparse attention whose cache the",
    "doge": "is an architecture the calculator has not been checked again",
    "dots1": "is an architecture the calculator has not been checked again",
    "dots3_note_text": "uses a variant of latent or sparse attention whose cache the",
    "falcon_h1": "has state-space or recurrent layers",
    "falcon_mamba": "has state-space or recurrent layers",
    "flint": "is an architecture the calculator has not been checked again",
    "gemma3n_text": "gives some layers their own KV heads",
    "gemma4_text": "gives some layers their own KV heads",
    "gemma4_unified_text": "gives some layers their own KV heads",
    "glm_moe_dsa": "uses a variant of latent or sparse attention whose cache the",
    "gpt_neo": "is an architecture the calculator has not been checked again",
    "granitemoehybrid": "has state-space or recurrent layers",
    "hrm_text": "is an architecture the calculator has not been checked again",
    "hunyuan_v1_dense": "is an architecture the calculator has not been checked again",
    "hunyuan_v1_moe": "is an architecture the calculator has not been checked again",
    "hy_v4": "is an architecture the calculator has not been checked again",
    "inkling2_text": "is an architecture the calculator has not been checked again",
    "inkling_text": "is an architecture the calculator has not been checked again",
    "jamba": "has state-space or recurrent layers",
    "jetmoe": "is an architecture the calculator has not been checked again",
    "kimi_linear": "has linear-attention layers",
    "laguna": "is an architecture the calculator has not been checked again",
    "lfm2": "has state-space or recurrent layers",
    "lfm2_moe": "has state-space or recurrent layers",
    "lfm3": "has state-space or recurrent layers",
    "llama4_text": "has chunked-attention layers (attention_chunk_size)",
    "longcat_flash": "is an architecture the calculator has not been checked again",
    "mamba": "has state-space or recurrent layers",
    "mamba2": "has state-space or recurrent layers",
    "mimo_v2_flash": "is an architecture the calculator has not been checked again",
    "minicpm3": "uses a variant of latent or sparse attention whose cache the",
    "minimax": "has linear-attention layers",
    "minimax_m3_vl_text": "has linear-attention layers",
    "ministral": "is an architecture the calculator has not been checked again",
    "mpt": "is an architecture the calculator has not been checked again",
    "nemotron": "is an architecture the calculator has not been checked again",
    "nemotron_h": "has state-space or recurrent layers",
    "olmo_hybrid": "has linear-attention layers",
    "openai-gpt": "is an architecture the calculator has not been checked again",
    "qwen3_5_moe_text": "has linear-attention layers",
    "qwen3_5_text": "has linear-attention layers",
    "qwen3_next": "has linear-attention layers",
    "qwen4_exp_text": "is an architecture the calculator has not been checked again",
    "recurrent_gemma": "has state-space or recurrent layers",
    "rwkv": "has state-space or recurrent layers",
    "solar_open": "is an architecture the calculator has not been checked again",
    "xlstm": "has state-space or recurrent layers",
    "youtu": "gives some layers their own KV heads",
    "zamba": "has state-space or recurrent layers",
    "zamba2": "has state-space or recurrent layers",
    "zaya": "has state-space or recurrent layers",
}


def _default_config(model_type: str) -> dict:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return oracle_config(model_type).to_dict()


def test_the_oracle_covers_every_decoder_only_text_architecture():
    assert len(TYPES) >= 130, len(TYPES)
    assert {"llama", "gemma4_text", "qwen3_next", "mamba", "deepseek_v3", "gpt_oss"} <= set(TYPES)
    stale = sorted(set(REFUSED) - set(TYPES))
    assert not stale, f"listed as refused but not an architecture of this transformers: {stale}"


@pytest.mark.parametrize("model_type", TYPES)
def test_each_architecture_is_exact_or_refused_with_its_reason(model_type):
    try:
        ModelSpec.from_hf_config(_default_config(model_type))
    except ValueError as exc:
        assert model_type in REFUSED, f"{model_type} is refused but not listed in REFUSED: {exc}"
        assert REFUSED[model_type] in str(exc), (REFUSED[model_type], str(exc))
        return
    assert model_type not in REFUSED, f"{model_type} is listed as refused but the calculator accepts it"
    verdict = judge(model_type)
    assert verdict.status == "exact", verdict


def test_every_family_called_exact_is_checked_here_or_by_its_real_configs():
    """EXACT_FAMILIES names only families this oracle accepts, plus DeepSeek-V2 and OpenELM, whose
    default configs transformers cannot run (checked through real configs in
    tests/test_llm_memory_oracle.py and the presets)."""
    accepted = {t for t in TYPES if t not in REFUSED}
    assert EXACT_FAMILIES - accepted == {"deepseek_v2", "openelm"}
    assert len(accepted) >= 55, len(accepted)
