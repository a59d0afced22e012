"""Configs as they are published: fields left out take their config class's default, as in
transformers (simulators/data/hf_config_defaults.json, written by tools/gen_config_defaults.py).

Google's own Gemma 3 configs (tests/data/configs, see the README there) name no attention heads,
head size or vocabulary in their text_config; transformers fills them from Gemma3TextConfig, and so
must the calculator, listing what it filled in ``ModelSpec.defaulted_fields``.
"""

from __future__ import annotations

import dataclasses
import json
import warnings
from pathlib import Path

import pytest

pytest.importorskip("transformers", reason="transformers is a test dependency (requirements-dev.txt)")

from simulators.llm_memory import kv_cache_bytes
from simulators.model_config import EXACT_FAMILIES, SUPPORTED_FAMILIES, ModelSpec, config_defaults

CONFIGS = Path(__file__).resolve().parent / "data" / "configs"
PRESETS = Path(__file__).resolve().parents[1] / "simulators" / "data" / "models"
TABLE = config_defaults()


def _config_class(model_type: str):
    from transformers.models.auto.configuration_auto import CONFIG_MAPPING

    return CONFIG_MAPPING[model_type]


def _load(name: str) -> dict:
    return json.loads((CONFIGS / f"{name}.json").read_text(encoding="utf-8"))


# --- (a) the table is transformers' --------------------------------------------------------------


def test_the_table_comes_from_the_pinned_transformers():
    import transformers

    assert TABLE["transformers_version"] == transformers.__version__, (
        "transformers moved: run .venv/bin/python tools/gen_config_defaults.py"
    )


def test_the_table_covers_every_model_type_the_parser_supports():
    from transformers.models.auto.configuration_auto import CONFIG_MAPPING

    supported = set(EXACT_FAMILIES) | set(SUPPORTED_FAMILIES)
    assert set(TABLE["not_in_transformers"]) == {t for t in supported if t not in CONFIG_MAPPING}
    assert set(TABLE["defaults"]) | set(TABLE["not_probed"]) == {t for t in supported if t in CONFIG_MAPPING}
    assert len(TABLE["defaults"]) >= 130
    assert TABLE["text_config_types"]["gemma3"] == "gemma3_text"


@pytest.mark.parametrize("model_type", sorted(TABLE["defaults"]))
def test_every_value_is_the_config_class_default(model_type):
    """Re-derived here from the class: its dataclass default, which the default instance (after
    ``__post_init__``) and its ``to_dict`` still hold; aliases are the class's attribute_map."""
    cls = _config_class(model_type)
    declared = {}
    for f in dataclasses.fields(cls):
        if f.default is not dataclasses.MISSING:
            declared[f.name] = f.default
        elif f.default_factory is not dataclasses.MISSING:
            declared[f.name] = f.default_factory()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        instance = cls()
    as_dict = instance.to_dict()
    for name, value in TABLE["defaults"][model_type].items():
        assert name in declared, f"{model_type}.{name} is not a field of {cls.__name__}"
        assert declared[name] == value and type(declared[name]) is type(value), (name, declared[name], value)
        assert getattr(instance, name) == value, name
        assert as_dict[name] == value, name
    aliases = {a: c for a, c in getattr(cls, "attribute_map", {}).items() if a != c}
    for name, names in TABLE["aliases"].get(model_type, {}).items():
        assert all(aliases.get(alias) == name for alias in names), (name, names)


def test_each_wrapper_builds_the_text_model_named_for_it():
    for wrapper, text_type in TABLE["text_config_types"].items():
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            assert _config_class(wrapper)().text_config.model_type == text_type, wrapper


def test_regenerating_the_table_gives_the_same_file():
    """The fields kept are those the parser reads today: a parser change that reads another field
    (or stops reading one) needs the table regenerated."""
    import importlib.util

    path = Path(__file__).resolve().parents[1] / "tools" / "gen_config_defaults.py"
    spec = importlib.util.spec_from_file_location("gen_config_defaults", path)
    gen = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(gen)
    fresh = gen.build_table()
    assert fresh == TABLE, "stale: run .venv/bin/python tools/gen_config_defaults.py"
    assert config_defaults() is TABLE  # the generator left the parser's table in place


# --- (b) Google's Gemma 3 configs ------------------------------------------------------------------

GEMMA3 = {
    # name: (parameters transformers builds for the text decoder, fields filled)
    "gemma-3-4b-it": (
        3_880_263_168,
        (
            "attention_bias",
            "head_dim",
            "max_position_embeddings",
            "num_attention_heads",
            "num_key_value_heads",
            "tie_word_embeddings",
            "vocab_size",
        ),
    ),
    "gemma-3-27b-it": (
        27_009_346_304,
        ("attention_bias", "max_position_embeddings", "tie_word_embeddings", "vocab_size"),
    ),
}


@pytest.mark.parametrize("name", sorted(GEMMA3))
def test_google_gemma_3_configs_parse_with_transformers_parameter_count(name):
    from tests.hf_oracle import hf_param_count

    config = _load(name)
    assert config["model_type"] == "gemma3" and "vocab_size" not in config["text_config"]
    spec = ModelSpec.from_hf_config(config)
    params, filled = GEMMA3[name]
    assert hf_param_count(config) == params  # transformers, on the meta device, from the same file
    assert spec.param_count() == params
    assert spec.defaulted_fields == filled
    # The filled values are Gemma3TextConfig's; the layer pattern is its sliding_window_pattern (6).
    assert (spec.vocab_size, spec.tie_word_embeddings, spec.max_positions) == (262_208, True, 131_072)
    assert spec.kinds() == tuple("full" if (i + 1) % 6 == 0 else "sliding" for i in range(spec.num_layers))
    assert spec.sliding_window == 1024


def test_gemma_3_4b_takes_heads_and_head_size_from_the_class():
    spec = ModelSpec.from_hf_config(_load("gemma-3-4b-it"))
    assert (spec.num_heads, spec.num_kv_heads, spec.head_dim) == (8, 4, 256)  # not 2560 / 8 = 320


@pytest.mark.parametrize("name", sorted(GEMMA3))
def test_gemma_3_cache_matches_transformers_after_a_forward(name):
    """The cache transformers holds after 4,096 and 32,768 tokens (meta device), within the
    arch oracle's 1 %: sliding layers keep the window, every sixth layer all tokens."""
    import torch
    from transformers import AutoConfig, AutoModelForCausalLM

    from tests.arch_oracle import CACHE_TOLERANCE, _cache_bytes

    config = _load(name)
    spec = ModelSpec.from_hf_config(config)
    text = dict(config["text_config"])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        hf_config = AutoConfig.for_model(text.pop("model_type"), **text)
        with torch.device("meta"):
            model = AutoModelForCausalLM.from_config(hf_config, torch_dtype=torch.bfloat16).eval()
    for tokens in (4_096, 32_768):
        with torch.no_grad():
            out = model(input_ids=torch.zeros((1, tokens), dtype=torch.long, device="meta"), use_cache=True)
        theirs = _cache_bytes(out.past_key_values)
        assert abs(kv_cache_bytes(spec, tokens) - theirs) <= CACHE_TOLERANCE * theirs, (tokens, theirs)


def test_a_filled_spec_equals_the_spec_of_the_complete_config():
    """defaulted_fields is provenance: not compared, not hashed (cached pages key on specs)."""
    published = _load("gemma-3-4b-it")
    spec = ModelSpec.from_hf_config(published)
    text = dict(published["text_config"])
    defaults = TABLE["defaults"]["gemma3_text"]
    complete = {**published, "text_config": {**text, **{k: defaults[k] for k in spec.defaulted_fields}}}
    full = ModelSpec.from_hf_config(complete)
    assert full.defaulted_fields == ()
    assert full == spec and hash(full) == hash(spec)
    assert ModelSpec.from_hf_config(json.dumps(published)).defaulted_fields == spec.defaulted_fields


def test_a_text_config_without_model_type_is_the_wrapper_text_model():
    published = _load("gemma-3-27b-it")
    text = {k: v for k, v in published["text_config"].items() if k != "model_type"}
    spec = ModelSpec.from_hf_config({**published, "text_config": text})
    assert spec.family == "gemma3_text"
    assert spec == ModelSpec.from_hf_config(published)


# --- what is not filled -----------------------------------------------------------------------------


def test_a_field_the_config_gives_is_never_filled():
    for path in sorted(PRESETS.glob("*.json")):
        config = json.loads(path.read_text(encoding="utf-8"))
        spec = ModelSpec.from_hf_config(config)
        assert not set(spec.defaulted_fields) & set(config.get("text_config", config)), path.name


def test_an_explicit_null_is_not_replaced_by_the_default():
    """DeepSeek-V2-Lite says q_lora_rank: null (no query compression); the class default is 1536."""
    config = json.loads((PRESETS / "deepseek-v2-lite.json").read_text(encoding="utf-8"))
    assert config["q_lora_rank"] is None and TABLE["defaults"]["deepseek_v2"]["q_lora_rank"] == 1536
    spec = ModelSpec.from_hf_config(config)
    assert spec.q_lora_rank == 0 and "q_lora_rank" not in spec.defaulted_fields


def test_a_field_given_under_another_name_is_not_filled():
    """An early Falcon names its heads and layers n_head and n_layer (FalconConfig: 71 and 32 by
    default); GPT-2's attribute_map lets a config say hidden_size for n_embd."""
    falcon = {
        "model_type": "RefinedWeb",
        "hidden_size": 8192,
        "n_head": 128,
        "n_head_kv": 8,
        "n_layer": 60,
        "new_decoder_architecture": True,
        "vocab_size": 65024,
    }
    spec = ModelSpec.from_hf_config(falcon)
    assert (spec.num_heads, spec.num_kv_heads, spec.num_layers) == (128, 8, 60)
    assert not {"num_attention_heads", "num_hidden_layers"} & set(spec.defaulted_fields)
    gpt2 = {"model_type": "gpt2", "hidden_size": 1024, "n_head": 16, "n_layer": 24}
    spec = ModelSpec.from_hf_config(gpt2)
    assert spec.hidden_size == 1024 and "n_embd" not in spec.defaulted_fields


def test_a_field_without_a_class_default_is_still_refused_by_name():
    """DeepseekV2Config leaves num_experts_per_tok null (no default): refused, naming the field."""
    config = json.loads((PRESETS / "deepseek-v2-lite.json").read_text(encoding="utf-8"))
    del config["num_experts_per_tok"]
    assert "num_experts_per_tok" not in TABLE["defaults"]["deepseek_v2"]
    with pytest.raises(ValueError, match="num_experts_per_tok"):
        ModelSpec.from_hf_config(config)


def test_a_config_without_model_type_gets_no_defaults():
    """Read as Llama-style, but no class is named, so no class default is assumed."""
    config = {"hidden_size": 4096, "num_hidden_layers": 32, "num_attention_heads": 32, "vocab_size": 32000}
    with pytest.raises(ValueError, match="intermediate_size"):
        ModelSpec.from_hf_config(config)
    assert ModelSpec.from_hf_config({**config, "intermediate_size": 11008}).defaulted_fields == ()
