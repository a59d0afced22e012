"""Changes to a default config that let transformers run it as the oracle, by module.

Each module defines ``OVERRIDES``: model_type -> {"config": {field: value}, "contexts": (…),
"why": "…"}. ``config`` is passed to ``AutoConfig.for_model`` (for a default config transformers
cannot build or run on the meta device, or one too slow for CI: fewer layers, the same kinds of
layer); ``contexts`` replaces (4,096, 32,768) where a per-token loop makes the long one too slow
on CPU; ``device`` "cpu" builds the model with real (random) weights instead of on the meta
device, for a model whose forward reads values (its override then keeps the config small). The
calculator reads the same changed config, so the comparison stays like for like.
"""

from __future__ import annotations

import importlib
import pkgutil
from typing import Any


def load() -> dict[str, dict[str, Any]]:
    merged: dict[str, dict[str, Any]] = {}
    for info in sorted(pkgutil.iter_modules(__path__), key=lambda m: m.name):
        module = importlib.import_module(f"{__name__}.{info.name}")
        for model_type, override in getattr(module, "OVERRIDES", {}).items():
            if model_type in merged:
                raise RuntimeError(f"{model_type} has two overrides")
            if not override.get("why"):
                raise RuntimeError(f"{model_type}: an override says why it is needed")
            merged[model_type] = override
    return merged
