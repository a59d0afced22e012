"""transformers as the oracle for every decoder-only text architecture it ships.

For each causal-LM architecture of the pinned transformers (less encoders, encoder-decoders and
multimodal wrappers whose text model has a type of its own), build the model from its default
config on torch's meta device (no memory, no downloads), count its parameters, run one forward of
4,096 and of 32,768 tokens with ``use_cache=True`` and add up every tensor the returned cache
holds (keys and values, latents, convolution and recurrent states). Compare with
``ModelSpec.from_hf_config(...).param_count()`` and ``llm_memory.kv_cache_bytes(spec, C)``:

- exact: parameters within 0.5 %, cache within 1 % at both contexts;
- refused: ``from_hf_config`` raised ``ValueError`` (with its message);
- wrong: anything else — the calculator gave a number that is not the model's.

Used by tests/test_arch_oracle.py and by ``python -m tests.arch_oracle`` (prints the tally).
"""

from __future__ import annotations

import contextlib
import json
import logging
import signal
import sys
import time
import warnings
from dataclasses import asdict, dataclass
from typing import Any

CONTEXTS = (4_096, 32_768)
# Causal-LM classes that are not decoder-only text models: the text decoder of a vision
# encoder-decoder (TrOCR), of an encoder-decoder pair (BertGeneration), a speech model (Moshi) and a
# permutation language model (XLNet).
NOT_TEXT_DECODERS = frozenset({"trocr", "bert-generation", "moshi", "xlnet"})
PARAM_TOLERANCE = 0.005
CACHE_TOLERANCE = 0.01


@dataclass
class Verdict:
    """One architecture: what transformers builds and what the calculator says about it."""

    model_type: str
    status: str  # "exact", "refused", "wrong", "oracle-failed"
    reason: str = ""
    hf_params: int = 0
    our_params: int = 0
    hf_cache: tuple[int, ...] = ()
    our_cache: tuple[float, ...] = ()
    seconds: float = 0.0


def decoder_only_text_types() -> list[str]:
    """Every causal-LM model type of the installed transformers that is a decoder-only text model."""
    from transformers import AutoConfig
    from transformers.models.auto.modeling_auto import (
        MODEL_FOR_CAUSAL_LM_MAPPING_NAMES,
        MODEL_FOR_MASKED_LM_MAPPING_NAMES,
    )

    found = []
    for model_type in MODEL_FOR_CAUSAL_LM_MAPPING_NAMES:
        if model_type in NOT_TEXT_DECODERS or model_type in MODEL_FOR_MASKED_LM_MAPPING_NAMES:
            continue  # encoders that can also run as a decoder (BERT, RoBERTa, …)
        try:
            config = AutoConfig.for_model(model_type)
        except Exception:
            continue
        if getattr(config, "is_encoder_decoder", False):
            continue
        if hasattr(config, "text_config") and config.text_config is not None:
            continue  # a multimodal wrapper; its text model is listed under its own type
        if hasattr(config, "audio_config") or hasattr(config, "vision_config"):
            continue
        found.append(model_type)
    return found


def _cache_bytes(cache: Any) -> int:
    """Bytes of every tensor reachable from a cache object (each tensor counted once)."""
    import torch

    seen: set[int] = set()
    total = 0

    def walk(item: Any, depth: int) -> None:
        nonlocal total
        if depth > 8 or item is None:
            return
        if isinstance(item, torch.Tensor):
            if id(item) not in seen:
                seen.add(id(item))
                total += item.numel() * item.element_size()
            return
        if isinstance(item, (list, tuple)):
            for x in item:
                walk(x, depth + 1)
        elif isinstance(item, dict):
            for x in item.values():
                walk(x, depth + 1)
        elif hasattr(item, "__dict__") and not isinstance(item, type):
            for x in vars(item).values():
                walk(x, depth + 1)

    walk(cache, 0)
    return total


# Recurrent states some models keep on their modules, not in the cache they return
# (RecurrentGemma's temporal blocks: conv1d_state, rg_lru.recurrent_states).
MODULE_STATES = ("conv1d_state", "recurrent_states")


def _module_state_bytes(model: Any) -> int:
    import torch

    total = 0
    for module in model.modules():
        for name in MODULE_STATES:
            value = getattr(module, name, None)
            if isinstance(value, torch.Tensor):
                total += value.numel() * value.element_size()
    return total


class _Timeout(Exception):
    pass


@contextlib.contextmanager
def _time_limit(seconds: int):
    def stop(signum, frame):
        raise _Timeout(f"took over {seconds} s")

    previous = signal.signal(signal.SIGALRM, stop)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


def overrides() -> dict[str, dict[str, Any]]:
    """Per-type changes to the default config and contexts (tests/oracle_overrides)."""
    from tests.oracle_overrides import load

    global _OVERRIDES
    if _OVERRIDES is None:
        _OVERRIDES = load()
    return _OVERRIDES


_OVERRIDES: dict[str, dict[str, Any]] | None = None


def contexts_for(model_type: str) -> tuple[int, ...]:
    return tuple(overrides().get(model_type, {}).get("contexts", CONTEXTS))


def oracle_config(model_type: str) -> Any:
    """The config the oracle builds: the default, with this type's overrides."""
    from transformers import AutoConfig

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return AutoConfig.for_model(model_type, **overrides().get(model_type, {}).get("config", {}))


def oracle(model_type: str, time_limit_s: int = 120) -> tuple[dict, int, tuple[int, ...]]:
    """(config as a dict, parameters, cache bytes at each of ``contexts_for(model_type)``) from
    transformers."""
    import torch
    from transformers import AutoModelForCausalLM
    from transformers.utils import logging as hf_logging

    hf_logging.set_verbosity_error()
    logging.getLogger("transformers").setLevel(logging.ERROR)
    with warnings.catch_warnings(), _time_limit(time_limit_s):
        warnings.simplefilter("ignore")
        config = oracle_config(model_type)
        # The meta device holds no data; a model whose forward reads values (a data-dependent
        # expert split) runs on the CPU instead, from a config its override keeps small.
        device = overrides().get(model_type, {}).get("device", "meta")
        with torch.device(device):
            model = AutoModelForCausalLM.from_config(config, torch_dtype=torch.bfloat16).eval()
        params = sum(p.numel() for p in model.parameters())
        caches = []
        for tokens in contexts_for(model_type):
            ids = torch.zeros((1, tokens), dtype=torch.long, device=device)
            given = {}
            if overrides().get(model_type, {}).get("pass_cache"):  # a model that makes none itself
                from transformers import DynamicCache

                given["past_key_values"] = DynamicCache(config=model.config)
            with torch.no_grad():
                out = model(input_ids=ids, use_cache=True, **given)
            cache = getattr(out, "past_key_values", None)
            if cache is None:
                cache = given.get("past_key_values")
            if cache is None:
                cache = getattr(out, "cache_params", None)
            if cache is None:
                cache = getattr(out, "state", None)  # RWKV returns its recurrent state as ``state``
            caches.append(_cache_bytes(cache) + _module_state_bytes(model))
    return config.to_dict(), params, tuple(caches)


def judge(model_type: str, time_limit_s: int = 120) -> Verdict:
    """Build ``model_type`` in transformers and compare the calculator with it."""
    from simulators.llm_memory import ModelSpec, kv_cache_bytes

    start = time.monotonic()
    try:
        config, hf_params, hf_cache = oracle(model_type, time_limit_s)
    except Exception as exc:
        return Verdict(model_type, "oracle-failed", f"{type(exc).__name__}: {str(exc)[:200]}")
    verdict = Verdict(model_type, "", hf_params=hf_params, hf_cache=hf_cache)
    try:
        spec = ModelSpec.from_hf_config(config)
        verdict.our_params = spec.param_count()
        verdict.our_cache = tuple(kv_cache_bytes(spec, tokens) for tokens in contexts_for(model_type))
    except ValueError as exc:
        verdict.status, verdict.reason = "refused", str(exc)
    else:
        off = abs(verdict.our_params - hf_params) / hf_params
        cache_off = max(
            abs(ours - theirs) / theirs if theirs else (0.0 if not ours else 1.0)
            for ours, theirs in zip(verdict.our_cache, hf_cache, strict=True)
        )
        if off <= PARAM_TOLERANCE and cache_off <= CACHE_TOLERANCE:
            verdict.status = "exact"
        else:
            verdict.status = "wrong"
            verdict.reason = f"parameters ×{verdict.our_params / hf_params:.3f}, cache off by {cache_off:.1%}"
    verdict.seconds = time.monotonic() - start
    return verdict


def main(argv: list[str]) -> int:
    types = argv or decoder_only_text_types()
    verdicts = []
    for model_type in types:
        verdict = judge(model_type)
        verdicts.append(verdict)
        print(
            f"{verdict.status:13s} {model_type:28s} {verdict.seconds:5.1f}s {verdict.reason[:110]}",
            flush=True,
        )
    tally: dict[str, int] = {}
    for verdict in verdicts:
        tally[verdict.status] = tally.get(verdict.status, 0) + 1
    print(json.dumps(tally))
    with open("/tmp/arch_oracle.json", "w", encoding="utf-8") as out:
        json.dump([asdict(v) for v in verdicts], out, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
