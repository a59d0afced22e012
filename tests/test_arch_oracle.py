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
    "blt": "is a byte-level latent transformer",
    "deepseek_v4": "compresses its KV cache",
    "inkling2_text": "has input-dependent (dynamic) short convolutions",
    "qwen4_exp_text": "has indexed-attention (QSA) layers",
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
    """EXACT_FAMILIES names only families this oracle accepts, plus OpenELM (remote code) and Kimi K2
    (a remote-code type naming DeepseekV3ForCausalLM), checked through their real configs in
    tests/test_llm_memory_oracle.py and the presets. At least 90 % of the architectures are exact."""
    accepted = {t for t in TYPES if t not in REFUSED}
    assert EXACT_FAMILIES - accepted == {"kimi_k2", "openelm"}
    assert len(accepted) >= 0.9 * len(TYPES), (len(accepted), len(TYPES))
