"""Test helper: the memory of one Hugging Face ``transformers`` prefill, measured on the CPU.

transformers runs the same Python on the CPU as on a GPU, so the tensors a forward pass creates,
and when each is freed, are the same on both (only what a kernel allocates inside itself differs:
cuBLAS or the CPU's SDPA workspace). ``LiveTensorBytes`` is a ``TorchDispatchMode`` that sees
every aten op's outputs: it adds each new storage's ``nbytes`` when it first appears and takes
them off when the storage dies (``weakref.finalize`` on the storage, whose Python object PyTorch
keeps for as long as the storage lives), so its ``peak_bytes`` is what
``torch.cuda.max_memory_allocated()`` would add during the forward pass, less the caching
allocator's 512-byte rounding. Storages that exist before the pass (weights, buffers, the input)
are never counted.

``prefill`` builds a model from a config with random weights, runs one forward pass of
``tokens`` tokens with ``use_cache=True, logits_to_keep=1`` (the measured GPU runs' recipe,
shared/measured/README.md) and returns the peak as those runs define it: weights and buffers plus
the pass's peak, and ``cache_bytes``: every storage reachable from the returned cache, counted
once however many views point into it, each view counting its whole storage.

Imported only by tests; torch and transformers are test dependencies.
"""

from __future__ import annotations

import gc
import logging
import traceback
import warnings
import weakref
from dataclasses import dataclass, field
from typing import Any


def _dispatch_mode_class() -> type:
    import torch
    from torch.utils._python_dispatch import TorchDispatchMode
    from torch.utils._pytree import tree_leaves

    class LiveTensorBytes(TorchDispatchMode):
        """Bytes of the storages created while the mode is active and still alive; the peak.

        ``where=True`` also records, for each storage, the innermost transformers source line
        that made it (slow; for finding what the peak holds), and ``peak_live`` then lists the
        storages alive at the peak as (nbytes, op, shape, dtype, where).
        """

        def __init__(self, exclude: set[int] = frozenset(), where: bool = False) -> None:
            super().__init__()
            self.exclude = set(exclude)  # ids of storages that existed before
            self.where = where
            self.live: dict[int, tuple[int, str, tuple, str, str]] = {}
            self.current_bytes = 0
            self.peak_bytes = 0
            self.peak_live: list[tuple[int, str, tuple, str, str]] = []
            self.events: list[tuple[str, str, int]] = []  # with where=True: (op, where, bytes after it)

        def _release(self, key: int) -> None:
            entry = self.live.pop(key, None)
            if entry is not None:
                self.current_bytes -= entry[0]

        def _site(self) -> str:
            if not self.where:
                return ""
            for frame in reversed(traceback.extract_stack(limit=40)):
                if "transformers" in frame.filename or (
                    "/tests/" in frame.filename and "hf_prefill_oracle" not in frame.filename
                ):
                    path = frame.filename.split("site-packages/")[-1]
                    return f"{path}:{frame.lineno} {frame.line}"
            return ""

        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            out = func(*args, **(kwargs or {}))
            for tensor in tree_leaves(out):
                if not isinstance(tensor, torch.Tensor) or tensor.device.type == "meta":
                    continue
                storage = tensor.untyped_storage()
                key = id(storage)
                nbytes = storage.nbytes()
                if key in self.exclude:
                    continue
                if key in self.live:
                    grown = nbytes - self.live[key][0]  # an op that resized its output storage
                    if grown:
                        self.live[key] = (nbytes, *self.live[key][1:])
                        self.current_bytes += grown
                else:
                    self.live[key] = (nbytes, str(func), tuple(tensor.shape), str(tensor.dtype), self._site())
                    self.current_bytes += nbytes
                    weakref.finalize(storage, self._release, key)
            if self.where:
                self.events.append((str(func), self._site(), self.current_bytes))
            if self.current_bytes > self.peak_bytes:
                self.peak_bytes = self.current_bytes
                if self.where:
                    self.peak_live = sorted(self.live.values(), reverse=True)
            return out

    return LiveTensorBytes


def live_tensor_bytes(exclude: set[int] = frozenset(), where: bool = False) -> Any:
    """A ``LiveTensorBytes`` dispatch mode (use it as a context manager); see the class."""
    return _dispatch_mode_class()(exclude, where)


def existing_storage_ids() -> set[int]:
    """ids of every tensor storage alive now (so a mode started after never counts them)."""
    import torch

    ids = set()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # isinstance on some deprecated module attributes warns
        for obj in gc.get_objects():
            try:
                if isinstance(obj, torch.Tensor) and obj.device.type != "meta":
                    ids.add(id(obj.untyped_storage()))
            except Exception:  # objects half torn down
                continue
    return ids


def storage_bytes(root: Any, max_depth: int = 10) -> int:
    """Bytes of every storage reachable from ``root`` (attributes, lists, tuples, dicts), each
    storage once, a view counting its whole storage (``untyped_storage().nbytes()``)."""
    import torch

    seen_objects: set[int] = set()
    storages: dict[int, int] = {}

    def walk(item: Any, depth: int) -> None:
        if item is None or depth > max_depth or id(item) in seen_objects:
            return
        seen_objects.add(id(item))
        if isinstance(item, torch.Tensor):
            storage = item.untyped_storage()
            if storage.nbytes():
                storages[storage.data_ptr()] = storage.nbytes()
            return
        if isinstance(item, (list, tuple, set)):
            for x in item:
                walk(x, depth + 1)
        elif isinstance(item, dict):
            for x in item.values():
                walk(x, depth + 1)
        elif hasattr(item, "__dict__") and not isinstance(item, type):
            for x in vars(item).values():
                walk(x, depth + 1)

    walk(root, 0)
    return sum(storages.values())


@dataclass
class Prefill:
    """One measured prefill: bytes, as ``torch.cuda.max_memory_allocated()`` would count them."""

    weights_bytes: int  # parameters and buffers
    pass_peak_bytes: int  # the forward pass's own peak, beyond the weights
    cache_bytes: int  # storages reachable from the returned cache
    peak_live: list = field(default_factory=list)  # with where=True: what the peak holds

    @property
    def peak_bytes(self) -> int:
        """Peak less what was allocated before the model: weights plus the pass's peak."""
        return self.weights_bytes + self.pass_peak_bytes


def build(config: dict, dtype: str = "bfloat16", attention: str = "sdpa") -> Any:
    """``AutoModelForCausalLM.from_config`` on the CPU with random weights, in eval mode."""
    import torch
    from transformers import AutoConfig, AutoModelForCausalLM
    from transformers.utils import logging as hf_logging

    hf_logging.set_verbosity_error()
    logging.getLogger("transformers").setLevel(logging.ERROR)
    config = dict(config)
    model_type = config.pop("model_type")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        cfg = AutoConfig.for_model(model_type, **config)
        torch.manual_seed(0)
        model = AutoModelForCausalLM.from_config(
            cfg, torch_dtype=getattr(torch, dtype), attn_implementation=attention
        )
    return model.eval()


def prefill(
    config: dict,
    tokens: int,
    *,
    batch: int = 1,
    attention: str = "sdpa",
    dtype: str = "bfloat16",
    where: bool = False,
) -> Prefill:
    """Build ``config`` (a dict with ``model_type``) and measure one prefill of ``tokens`` tokens."""
    import torch

    model = build(config, dtype, attention)
    weights = storage_bytes([list(model.parameters()), list(model.buffers())])
    torch.manual_seed(1)
    ids = torch.randint(0, model.config.get_text_config().vocab_size, (batch, tokens))
    gc.collect()
    mode = live_tensor_bytes(existing_storage_ids(), where=where)
    with torch.no_grad(), mode:
        out = model(input_ids=ids, use_cache=True, logits_to_keep=1)
    cache = out.past_key_values
    return Prefill(
        weights_bytes=weights,
        pass_peak_bytes=mode.peak_bytes,
        cache_bytes=storage_bytes(cache),
        peak_live=mode.peak_live,
    )
