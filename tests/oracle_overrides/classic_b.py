"""Overrides for simulators/families/classic_b.py: values the default configs leave unset (or
set too short) for transformers to build or run them, as the real checkpoints set them."""

OVERRIDES = {
    "hunyuan_v1_dense": {
        "config": {"head_dim": 128},
        "why": "HunYuanDenseV1Config leaves head_dim None and HunYuanDenseV1Attention reads it as is "
        "(None ** -0.5); Hunyuan-7B's config.json sets 128 (= hidden_size / heads)",
    },
    "hunyuan_v1_moe": {
        "config": {"head_dim": 128},
        "why": "HunYuanMoEV1Config leaves head_dim None, which HunYuanMoEV1Attention cannot build; "
        "Hunyuan-A13B's config.json sets 128",
    },
    "ministral": {
        "config": {"head_dim": 128},
        "why": "MinistralConfig leaves head_dim None, which MinistralAttention cannot build; "
        "Ministral-8B's config.json sets 128",
    },
    "nemotron": {
        "config": {"num_key_value_heads": 8},
        "why": "NemotronConfig leaves num_key_value_heads None, which NemotronAttention cannot build; "
        "Nemotron-4 15B (the default's shape) uses 8",
    },
    "mpt": {
        "config": {"max_seq_len": 32768},
        "why": "MptModel builds its ALiBi bias for max_seq_len (2,048) positions and cannot run a longer "
        "input; MPT-7B-StoryWriter sets 65,536. ALiBi has no parameters, so the sizes are unchanged",
    },
    "openai-gpt": {
        "contexts": (256, 512),
        "why": "GPT-1 has a learned table of n_positions (512) positions and cannot run a longer input",
    },
    "jetmoe": {
        "config": {
            "hidden_size": 256,
            "num_hidden_layers": 3,
            "num_attention_heads": 8,
            "num_key_value_heads": 4,
            "kv_channels": 32,
            "intermediate_size": 384,
            "vocab_size": 1000,
        },
        "device": "cpu",
        "contexts": (256, 1024),
        "why": "JetMoeTopKGating splits tokens by expert with expert_size.tolist(), which the meta device "
        "cannot run, so JetMoE runs on the CPU with real weights at a small size (the default's 8 "
        "experts, top-2, in attention and MLP)",
    },
}
