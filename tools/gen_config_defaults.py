"""Write simulators/data/hf_config_defaults.json: the defaults of the config classes of the pinned
transformers, for the fields the calculator's parser reads.

Published configs leave fields out and rely on their config class's defaults, as transformers
does (google/gemma-3-4b-it names no attention heads, head size or vocabulary in its text_config).
``ModelSpec.from_hf_config`` fills such a field from this table (``ModelSpec.defaulted_fields``
says which), so the table must hold what transformers would use, and nothing else:

- model types: every family the parser sizes exactly (``EXACT_FAMILIES``, the family readers in
  simulators/families) and ``SUPPORTED_FAMILIES``, where transformers has a config class for it;
- fields: those the parser reads. Found by probing, not by listing names: each field of the class
  is changed in the class's default config, one at a time, and kept when the parse changes (a
  different ``ModelSpec`` or a refusal), so a field read under another spelling or by a family
  reader is caught, and a field the parser never looks at is left out;
- values: the dataclass default of the field, kept only when it is a constant (not None, which
  marks a value the class derives from other fields in ``__post_init__``), JSON-serialisable
  (numbers, strings, booleans and lists of them, not sub-config dicts), and still the value of the
  default instance after ``__post_init__`` and ``to_dict`` (a value the class rewrites is left out);
- aliases: the class's ``attribute_map`` names of a kept field (GPT-2's ``hidden_size`` for
  ``n_embd``): a config that gives the field under such a name is not filled;
- text_config_types: multimodal wrappers whose text model is a supported type (gemma3 ->
  gemma3_text), for a ``text_config`` that does not name its model_type.

Run it after changing the pinned transformers or the parser, and commit the file:

    .venv/bin/python tools/gen_config_defaults.py

tests/test_config_defaults.py re-derives every value from the config classes.
"""

from __future__ import annotations

import dataclasses
import json
import logging
import math
import sys
import warnings
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

OUT = ROOT / "simulators" / "data" / "hf_config_defaults.json"
# Fields of PreTrainedConfig itself (bookkeeping, no sizes) and the model_type key.
SKIP = frozenset({"model_type", "transformers_version", "architectures", "dtype", "torch_dtype"})


def _quiet() -> None:
    warnings.simplefilter("ignore")
    from transformers.utils import logging as hf_logging

    hf_logging.set_verbosity_error()
    logging.getLogger("transformers").setLevel(logging.ERROR)


def is_plain(value: Any) -> bool:
    """A JSON number, string, boolean, or a list of those (nested lists too); None is not."""
    if isinstance(value, bool | int | str):
        return True
    if isinstance(value, float):
        return math.isfinite(value)
    if isinstance(value, list):
        return all(is_plain(v) for v in value)
    return False


def declared_defaults(cls: type) -> dict[str, Any]:
    """The dataclass defaults of a config class (``default_factory`` called), by field name."""
    out: dict[str, Any] = {}
    for f in dataclasses.fields(cls):
        if f.default is not dataclasses.MISSING:
            out[f.name] = f.default
        elif f.default_factory is not dataclasses.MISSING:
            out[f.name] = f.default_factory()
    return out


def constant_defaults(cls: type) -> dict[str, Any]:
    """The fields whose default is a plain constant that the default instance keeps (see the
    module docstring): what transformers fills an absent field with."""
    instance = cls()
    as_dict = instance.to_dict()
    out = {}
    for name, value in declared_defaults(cls).items():
        if name in SKIP or value is None or not is_plain(value):
            continue
        try:
            kept = getattr(instance, name, None)
        except Exception:  # a per-layer attribute of a heterogeneous config: no one default
            continue
        if kept != value or as_dict.get(name, value) != value:
            continue  # rewritten by __post_init__ or to_dict: not a constant default
        out[name] = value
    return out


def _variants(value: Any) -> list[Any]:
    """Changed values of a field for the probe: each must differ from ``value``."""
    if isinstance(value, bool):
        return [not value]
    if isinstance(value, int):
        return [value + 1, 2 * value + 3]
    if isinstance(value, float):
        return [2 * value + 0.5]
    if isinstance(value, str):
        return [value + "_probe", ""]
    if isinstance(value, list):
        return [[*value, *value[-1:]] if value else [0], value[:-1] if value else ["probe"]]
    return []


def fields_read(family: str, config: dict[str, Any], candidates: dict[str, Any]) -> set[str]:
    """The candidate fields whose change changes what ``ModelSpec.from_hf_config`` makes of
    ``config`` (another spec, or a refusal)."""
    from simulators.model_config import ModelSpec

    def parse(cfg: dict[str, Any]) -> Any:
        try:
            return ModelSpec.from_hf_config(cfg)
        except (ValueError, TypeError, ZeroDivisionError, KeyError, IndexError) as exc:
            return f"refused: {type(exc).__name__}"

    base = parse(config)
    if isinstance(base, str):
        raise ValueError(f"{family}: the parser refuses this config ({base})")
    read = set()
    for name in candidates:
        for variant in _variants(config.get(name, candidates[name])):
            if parse({**config, name: variant}) != base:
                read.add(name)
                break
    return read


def _probe(family: str, cls: type, candidates: dict[str, Any]) -> list[str] | None:
    """The fields of ``candidates`` the parser reads for ``family``: probed on the class's default
    config, or, where the parser refuses that (DeepSeek-V2's default leaves its top-k null), on the
    config the transformers oracle builds for the type (tests/oracle_overrides). None when the
    parser refuses both (gpt-sw3, whose class is GPT-2's: its configs say model_type gpt2)."""
    from tests.arch_oracle import overrides

    config = {**cls().to_dict(), "model_type": family}
    tries = [config]
    change = overrides().get(family, {}).get("config")
    if change:
        tries.append({**cls(**change).to_dict(), "model_type": family})
    for attempt in tries:
        try:
            return sorted(fields_read(family, attempt, candidates))
        except ValueError:
            continue
    return None


# Calls whose string arguments are spellings of one field, read in that order: the _Reader
# methods (``r.int("num_attention_heads", "n_head", ...)``), the readers' helpers built on them
# (``_int(r, d, "num_local_experts", "num_experts", ...)``, ``_layer_count(cfg, ...)``) and
# ``kinds_list(r, ("layer_types", "layers_block_type"), ...)``.
_SPELLING_CALLS = frozenset({"int", "optional_int", "bool", "present", "_int", "_layer_count", "kinds_list"})


def parser_alternatives() -> list[list[str]]:
    """Names the parser reads as spellings of one quantity, from the calls in
    simulators/model_config.py and simulators/families/*.py named in ``_SPELLING_CALLS``. A config
    that gives one of them (an old Falcon's n_head) is not filled with the class default of
    another (num_attention_heads), which the parser would read first."""
    import ast

    families = sorted((ROOT / "simulators" / "families").glob("*.py"))
    sources = [ROOT / "simulators" / "model_config.py", *families]
    groups: set[tuple[str, ...]] = set()
    for path in sources:
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not isinstance(node, ast.Call):
                continue
            func = node.func
            called = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
            if called not in _SPELLING_CALLS:
                continue
            names: set[str] = set()
            for arg in node.args:
                elements = arg.elts if isinstance(arg, ast.Tuple) else [arg]
                names |= {
                    e.value for e in elements if isinstance(e, ast.Constant) and isinstance(e.value, str)
                }
            if len(names) > 1:
                groups.add(tuple(sorted(names)))
    return sorted(list(g) for g in groups)


def supported_types() -> list[str]:
    from simulators.model_config import EXACT_FAMILIES, SUPPORTED_FAMILIES

    return sorted(set(EXACT_FAMILIES) | set(SUPPORTED_FAMILIES))


def build_table() -> dict[str, Any]:
    """The whole table (what ``main`` writes)."""
    from simulators import model_config

    _quiet()
    # Probe the parser alone: no defaults from an earlier table (the probed configs are complete).
    empty = {"defaults": {}, "aliases": {}, "alternatives": [], "text_config_types": {}}
    loaded = model_config.config_defaults
    model_config.config_defaults = lambda: empty
    try:
        return _build_table()
    finally:
        model_config.config_defaults = loaded


def _build_table() -> dict[str, Any]:
    import transformers
    from transformers.models.auto.configuration_auto import CONFIG_MAPPING

    defaults: dict[str, dict[str, Any]] = {}
    aliases: dict[str, dict[str, list[str]]] = {}
    missing, unprobed = [], []
    for family in supported_types():
        if family not in CONFIG_MAPPING:
            missing.append(family)  # remote code (OpenELM) or a type naming another (Kimi K2)
            continue
        cls = CONFIG_MAPPING[family]
        candidates = constant_defaults(cls)
        kept = _probe(family, cls, candidates)
        if kept is None:
            unprobed.append(family)
            continue
        defaults[family] = {name: candidates[name] for name in kept}
        names = {}
        for alias, canonical in getattr(cls, "attribute_map", {}).items():
            if canonical in defaults[family] and alias != canonical:
                names.setdefault(canonical, []).append(alias)
        if names:
            aliases[family] = {k: sorted(v) for k, v in sorted(names.items())}

    wrappers = {}
    for model_type in sorted(CONFIG_MAPPING.keys()):
        if model_type in defaults:
            continue
        cls = CONFIG_MAPPING[model_type]
        if "text_config" not in (getattr(cls, "sub_configs", None) or {}):
            continue
        try:
            text = cls().text_config
        except Exception:  # a wrapper whose defaults need arguments: no default text type
            continue
        text_type = getattr(text, "model_type", None)
        if text_type in defaults:
            wrappers[model_type] = text_type
    # Only groups that name a field of the table matter.
    known = {name for fields in defaults.values() for name in fields}
    alternatives = [g for g in parser_alternatives() if known & set(g)]
    return {
        "about": "Config-class defaults of the fields ModelSpec.from_hf_config reads, from the pinned "
        "transformers; written by tools/gen_config_defaults.py, checked by tests/test_config_defaults.py.",
        "transformers_version": transformers.__version__,
        "not_in_transformers": sorted(missing),
        "not_probed": sorted(unprobed),
        "text_config_types": wrappers,
        "aliases": aliases,
        "alternatives": alternatives,
        "defaults": defaults,
    }


def dumps(table: dict[str, Any]) -> str:
    """JSON with one line per model type (the file stays short and diffs stay readable)."""
    lines = ["{"]
    items = list(table.items())
    for i, (key, value) in enumerate(items):
        comma = "," if i < len(items) - 1 else ""
        if isinstance(value, list) and value and key == "alternatives":
            lines.append(f"  {json.dumps(key)}: [")
            for j, v in enumerate(value):
                sep = "," if j < len(value) - 1 else ""
                lines.append(f"    {json.dumps(v)}{sep}")
            lines.append(f"  ]{comma}")
        elif isinstance(value, dict) and value and key in ("defaults", "aliases", "text_config_types"):
            lines.append(f"  {json.dumps(key)}: {{")
            inner = list(value.items())
            for j, (k, v) in enumerate(inner):
                sep = "," if j < len(inner) - 1 else ""
                lines.append(f"    {json.dumps(k)}: {json.dumps(v, sort_keys=True)}{sep}")
            lines.append(f"  }}{comma}")
        else:
            lines.append(f"  {json.dumps(key)}: {json.dumps(value)}{comma}")
    lines.append("}")
    return "\n".join(lines) + "\n"


def main() -> int:
    table = build_table()
    text = dumps(table)
    assert json.loads(text) == table
    OUT.write_text(text, encoding="utf-8")
    fields = sum(len(v) for v in table["defaults"].values())
    print(
        f"{OUT.relative_to(ROOT)}: {len(table['defaults'])} model types, {fields} fields, "
        f"{len(table['text_config_types'])} wrappers, transformers {table['transformers_version']}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
