"""Model types that name an architecture transformers ships under another type: the config says
which in ``architectures``, and the reader sizes it as that architecture."""

from __future__ import annotations

from typing import Any

from simulators.model_config import _fail, _read_standard, _Reader


def read_kimi_k2(r: _Reader, cfg: dict, family: str, name: str) -> dict[str, Any]:
    """Kimi K2 (Moonshot AI): model_type "kimi_k2" with ``architectures`` DeepseekV3ForCausalLM,
    i.e. transformers models/deepseek_v3/modeling_deepseek_v3.py with Kimi's sizes (384 routed
    experts, 64 heads, one dense layer). Read exactly as DeepSeek-V3; refused when the config names
    another architecture (the remote code of a later Kimi model may differ)."""
    architectures = cfg.get("architectures") or []
    if architectures != ["DeepseekV3ForCausalLM"]:
        raise _fail(
            "architectures",
            f"kimi_k2 is sized as DeepseekV3ForCausalLM, which this config does not name ({architectures!r})",
        )
    kw = _read_standard(r, cfg, "deepseek_v3", name)  # latent attention included
    kw["family"] = family
    return kw


READERS = {"kimi_k2": read_kimi_k2}
