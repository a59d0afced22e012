"""Overrides for simulators/families/attention_mlp.py: values the default configs leave unset (or
set too short) for transformers to build or run them, as the real checkpoints set them."""

OVERRIDES = {
    "biogpt": {
        "config": {"attn_implementation": "eager"},
        "contexts": (512, 1024),
        "why": "BioGptModel builds an all-ones attention mask that SDPA's mask check reads with .item(), "
        "which the meta device cannot do (eager attention has no such check and the same cache); its "
        "learned table of max_position_embeddings (1,024) positions cannot run a longer input",
    },
    "gpt_neo": {
        "contexts": (1024, 2048),
        "why": "GPT-Neo has a learned table (and a causal-mask buffer) of max_position_embeddings "
        "(2,048) positions and cannot run a longer input; 1,024 and 2,048 are still beyond its local "
        "window of 256, so they show that the local layers cache every token",
    },
    "cohere_compass_text": {
        "config": {
            "rope_parameters": {
                "full_attention": {"rope_type": "default", "rope_theta": 10000.0},
                "sliding_attention": {"rope_type": "default", "rope_theta": 10000.0},
            },
            "layer_types": ["sliding_attention"] * 3 + ["full_attention"],
            "num_hidden_layers": 4,
        },
        "why": "CohereCompassTextConfig leaves rope_parameters empty, which its rotary embedding cannot "
        "build (it reads one entry per layer type); four layers in the 3 sliding : 1 full pattern of "
        "the older sliding_window_pattern (4) check the sliding-window cache as well. (In training "
        "mode, as the oracle builds it, the model keeps no cache: it stays refused until the oracle "
        "calls eval().)",
    },
    "dbrx": {
        "config": {
            "d_model": 256,
            "n_heads": 8,
            "n_layers": 3,
            "vocab_size": 1000,
            "max_seq_len": 4096,
            "attn_config": {"rope_theta": 10000.0, "kv_n_heads": 2, "clip_qkv": 8},
            "ffn_config": {"ffn_hidden_size": 320, "moe_num_experts": 6, "moe_top_k": 2},
        },
        "device": "cpu",
        "contexts": (256, 1024),
        "why": "DBRX's experts loop over the tokens routed to each (a data-dependent split the meta "
        "device cannot run), so it runs on the CPU with real weights at a small size: 3 layers, "
        "grouped KV heads and 6 experts, top-2 (DbrxAttentionConfig also lacks the rope_theta and "
        "clip_qkv its attention reads; DBRX's config.json sets them)",
    },
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
