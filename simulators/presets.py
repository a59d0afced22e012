"""Model presets for the calculators: real Hugging Face config.json files stored as data.

``simulators/data/models/index.yaml`` lists each preset with the file holding its config and
where that copy was read; the configs themselves are unedited copies.
"""

from __future__ import annotations

import functools
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from simulators.llm_memory import ModelSpec

MODELS_DIR = Path(__file__).resolve().parent / "data" / "models"


@dataclass(frozen=True)
class ModelPreset:
    """A named model: its config, the spec read from it, and where both come from."""

    id: str
    name: str
    family: str
    spec: ModelSpec
    config: dict = field(hash=False, compare=False)
    sources: tuple[str, ...] = ()
    published_params: int | None = None
    published_params_source: str = ""
    notes: str = ""


def _as_int(value: Any) -> int | None:
    if value is None or value == "":
        return None
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    text = str(value).replace(",", "").replace("_", "").strip()
    return int(text) if text.isdigit() else None


def load_model_presets(directory: Path | str | None = None) -> list[ModelPreset]:
    """Every preset in ``index.yaml``, in its order; a broken entry raises ValueError naming it."""
    return list(_load(str(directory or MODELS_DIR)))


@functools.lru_cache(maxsize=2)
def _load(directory: str) -> tuple[ModelPreset, ...]:
    root = Path(directory)
    index = yaml.safe_load((root / "index.yaml").read_text(encoding="utf-8"))
    entries = index.get("presets", index.get("models")) if isinstance(index, dict) else index
    if not isinstance(entries, list):
        raise ValueError(f"{root / 'index.yaml'}: expected a list of presets")
    presets = []
    for entry in entries:
        preset_id = entry.get("id", "?")
        try:
            config = json.loads((root / entry["file"]).read_text(encoding="utf-8"))
            spec = ModelSpec.from_hf_config(config, name=entry["name"])
        except (KeyError, OSError, ValueError) as exc:
            raise ValueError(f"model preset {preset_id!r}: {exc}") from exc
        sources = tuple(
            str(entry[k])
            for k in ("official_url", "copy_source")
            if entry.get(k) and str(entry[k]).startswith("http")
        )
        presets.append(
            ModelPreset(
                id=preset_id,
                name=entry["name"],
                family=spec.family,
                spec=spec,
                config=config,
                sources=sources,
                published_params=_as_int(entry.get("published_params")),
                published_params_source=str(entry.get("published_params_source") or ""),
                notes=str(entry.get("notes") or ""),
            )
        )
    return tuple(presets)


def get_model_preset(preset_id: str) -> ModelPreset:
    """The preset with this id; ValueError listing the ids when it is unknown."""
    for preset in load_model_presets():
        if preset.id == preset_id:
            return preset
    raise ValueError(f"no model preset {preset_id!r}; choose one of {[p.id for p in load_model_presets()]}")
