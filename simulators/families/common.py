"""Pieces the family readers share: per-layer kind lists, attention and Mamba-1 parameter counts,
the dtypes transformers keeps states in. No READERS here: this module sizes no family itself."""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping

from simulators.model_config import _fail, _Reader

CONV_STATE_BYTES = 2  # a convolution state has the activations' dtype (bf16)
SSM_STATE_BYTES = 4  # a Mamba scan returns its SSM state in float32
# Older hybrid configs name their layers "mamba" / "attention"; transformers reads them as these.
LEGACY_LAYER_TYPES = {"mamba": "linear_attention", "attention": "full_attention"}


def kinds_list(
    r: _Reader,
    names: str | tuple[str, ...],
    layers: int | None,
    allowed: Iterable[str],
    *,
    default: list[str] | None = None,
    remap: Mapping[str, str] | None = None,
) -> list[str] | None:
    """A per-layer list of kinds under the first present of ``names`` (``remap`` renames legacy
    entries), each one of ``allowed``, one per layer (``layers`` None: any non-empty length).
    Absent or null: a copy of ``default`` (None if none). Anything else is refused, naming the field."""
    name = r.present(*((names,) if isinstance(names, str) else names))
    if name is None:
        return None if default is None else list(default)
    values = r.config[name]
    if not isinstance(values, list) or not values or (layers is not None and len(values) != layers):
        want = f" ({layers})" if layers is not None else ""
        raise _fail(name, f"must be a list with one entry per layer{want}")
    kinds = [(remap or {}).get(str(v), str(v)) for v in values]
    allowed = set(allowed)
    unknown = sorted(set(kinds) - allowed)
    if unknown:
        raise _fail(
            name,
            f"layers of kind {', '.join(unknown)} are not modelled (only {', '.join(sorted(allowed))}): "
            "refused rather than sized as something else",
        )
    return kinds


def attention_params(
    hidden: int,
    heads: int,
    kv_heads: int,
    head_dim: int,
    *,
    qkv_bias: bool = False,
    o_bias: bool = False,
    q_gate: bool = False,
    out: int | None = None,
) -> int:
    """q, k, v projections from ``hidden`` and o back to ``out`` (default ``hidden``), biases where
    asked; ``q_gate`` doubles q_proj (a per-channel output gate, Qwen3-Next)."""
    out = hidden if out is None else out
    q = heads * head_dim * (2 if q_gate else 1)
    kv = kv_heads * head_dim
    params = hidden * (q + 2 * kv) + heads * head_dim * out
    return params + ((q + 2 * kv) if qkv_bias else 0) + (out if o_bias else 0)


def mamba1_mixer_params(
    hidden: int, inner: int, conv: int, state: int, rank: int, *, conv_bias: bool, proj_bias: bool
) -> int:
    """A Mamba (v1) mixer (transformers MambaMixer): in_proj (hidden → 2 inner: x and gate),
    depthwise conv1d, x_proj (inner → dt rank + 2 state: dt, B, C), dt_proj (rank → inner, with
    bias), A_log (inner × state), D (inner), out_proj (inner → hidden)."""
    params = hidden * 2 * inner + (2 * inner if proj_bias else 0)
    params += inner * conv + (inner if conv_bias else 0)
    params += inner * (rank + 2 * state)
    params += rank * inner + inner
    params += inner * state + inner
    params += inner * hidden + (hidden if proj_bias else 0)
    return params


def dt_rank(r: _Reader, name: str, hidden: int, *, null_is_auto: bool = True) -> int:
    """A Mamba dt rank: an integer, or "auto" (the default) = ceil(hidden_size / 16); null reads as
    "auto" where the config class does so (Jamba, Zamba), else it is refused as missing (Mamba)."""
    value = r.config.get(name, "auto")
    if value == "auto" or (value is None and null_is_auto):
        return math.ceil(hidden / 16)
    return r.int(name, limit_key="hidden_size")
