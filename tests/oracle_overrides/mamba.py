"""Overrides for simulators/families/mamba.py.

Mamba and Falcon Mamba: the Mamba-1 torch scan loops over every token in Python (on the meta
device too). Bamba and Granite 4.0 hybrid: their config classes default to Mamba layers only, and a
cache without an attention layer cannot run (DynamicCache.get_seq_length refuses), so they get the
attention layers of their real checkpoints, every size left as the default.
"""

_MAMBA1 = {
    "config": {"num_hidden_layers": 4},
    "contexts": (256, 1024),
    "why": "MambaMixer's torch scan loops over every token and layer in Python: 32 layers x "
    "(4,096 + 32,768) tokens take several minutes; 4 layers (all alike) and contexts of 256 and "
    "1,024 tokens size the same mixer and its fixed state in a few seconds",
}

OVERRIDES = {
    "mamba": _MAMBA1,
    "falcon_mamba": _MAMBA1,
    "bamba": {
        "config": {"attn_layer_indices": [9, 18, 27]},
        "why": "BambaConfig's default has no attention layer (attn_layer_indices None), which "
        "transformers cannot run (get_seq_length needs one); Bamba-9B's config.json puts attention at "
        "layers 9, 18 and 27",
    },
    "granitemoehybrid": {
        "config": {"layer_types": ["attention" if i % 10 == 5 else "mamba" for i in range(32)]},
        "why": "GraniteMoeHybridConfig's default has no attention layer, which transformers cannot run "
        "(get_seq_length needs one); like Granite 4.0-H, about one layer in ten is attention "
        "(layers 5, 15 and 25 of the default 32)",
    },
}
