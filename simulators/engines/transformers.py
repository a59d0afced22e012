"""transformers as an engine: the peak of one prefill as its code runs it.

The model lives in ``simulators.hf_runtime`` (each family's forward followed tensor by tensor as
transformers 5.23 runs it); this module is its place among the engines.
"""

from __future__ import annotations

from typing import Any

from simulators.model_config import ModelSpec


def transformers_prefill(spec: ModelSpec, **kwargs: Any) -> Any:
    """The peak of one transformers prefill: see ``simulators.hf_runtime.transformers_prefill``."""
    from simulators.hf_runtime import transformers_prefill as _prefill

    return _prefill(spec, **kwargs)


def transformers_verdict(
    peak_bytes: float, capacity_bytes: float, device: str = "the device's memory"
) -> Any:
    """The prefill peak against the device with the measured terms beyond the allocated peak:
    see ``simulators.hf_runtime.transformers_verdict``."""
    from simulators.hf_runtime import transformers_verdict as _verdict

    return _verdict(peak_bytes, capacity_bytes, device)
