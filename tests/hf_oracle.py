"""Test helper: count the parameters Hugging Face transformers instantiates for a config.

Builds the causal-LM model on torch's meta device (no memory, no downloads). Imported only
by tests; torch and transformers are test dependencies (requirements-dev.txt).
"""

from __future__ import annotations

import logging
import warnings

# model_type -> the transformers type its ``architectures`` names (Kimi K2: DeepseekV3ForCausalLM).
REMOTE_TYPES = {"kimi_k2": "deepseek_v3"}


def hf_param_count(config: dict) -> int:
    import torch
    from transformers import AutoConfig, AutoModelForCausalLM
    from transformers.utils import logging as hf_logging

    hf_logging.set_verbosity_error()
    logging.getLogger("transformers").setLevel(logging.ERROR)
    from transformers.models.auto.configuration_auto import CONFIG_MAPPING

    config = dict(config)
    text = config.get("text_config")
    if isinstance(text, dict) and "hidden_size" not in config:  # a multimodal wrapper: its decoder
        config = {
            **text,
            "tie_word_embeddings": config.get("tie_word_embeddings", text.get("tie_word_embeddings")),
        }
        config = {k: v for k, v in config.items() if v is not None}
    model_type = config.pop("model_type")
    if model_type not in CONFIG_MAPPING:  # a remote-code type naming an architecture transformers has
        model_type = REMOTE_TYPES[model_type]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        cfg = AutoConfig.for_model(model_type, **config)
        with torch.device("meta"):
            model = AutoModelForCausalLM.from_config(cfg)
    return sum(p.numel() for p in model.parameters())
