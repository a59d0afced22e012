"""Overrides for simulators/families/linear_attention.py: the deepest linear-attention hybrids,
whose torch delta-rule kernels loop over 64-token chunks in Python (on the meta device too), so
32,768 tokens through every linear layer take over 30 s. Fewer layers keep every kind of layer and
the layer pattern's period; every width stays the default."""

OVERRIDES = {
    "qwen3_next": {
        "config": {"num_hidden_layers": 16},
        "why": "48 layers x 512 chunks of the torch Gated DeltaNet loop take over 30 s; 16 layers keep "
        "four periods of full_attention_interval 4 (12 Gated DeltaNet, 4 gated attention) and the "
        "MoE on every layer",
    },
    "kimi_linear": {
        "config": {"num_hidden_layers": 9},
        "why": "27 layers x 512 chunks of the torch KDA loop take over 30 s; 9 layers keep the dense "
        "first layer, MLA at layers 4 and 8 (every fourth) and KDA + MoE layers",
    },
    "bailing_hybrid": {
        "config": {"num_hidden_layers": 12},
        "why": "42 layers x 512 chunks of the torch KDA loop take about a minute; 12 layers keep two "
        "groups of layer_group_size 6 (MLA last in each), the first_k_dense_replace 2 dense layers "
        "and the MoE layers",
    },
}
