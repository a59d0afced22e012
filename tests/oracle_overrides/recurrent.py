"""Oracle overrides for simulators/families/recurrent.py (Jamba, Zamba, LFM2-MoE, RecurrentGemma,
RWKV, xLSTM). Fewer layers keep every kind of layer and the layer pattern's period; shorter contexts
where the forward loops over the tokens in Python on CPU (Mamba's selective scan, the RG-LRU, RWKV's
WKV). The cache of these layers does not grow with the context, so short contexts still check it."""

from __future__ import annotations

OVERRIDES = {
    "jamba": {
        "config": {"num_hidden_layers": 8},
        "contexts": (256, 1024),
        "why": "the Mamba scan loops per token on CPU (default: over 120 s); 8 layers keep one attention "
        "period (attention at layer 4) and the MoE / dense alternation",
    },
    "zamba": {
        "config": {"num_hidden_layers": 9},
        "contexts": (256, 1024),
        "why": "the Mamba scan loops per token on CPU (default: over 120 s); 9 layers keep two hybrid "
        "layers (2 and 7), so the shared block's tying is checked",
    },
    "lfm2_moe": {
        "config": {"layer_types": ["full_attention" if i % 4 == 2 else "conv" for i in range(32)]},
        "why": "the default config has no layer_types and transformers cannot build it (TypeError); "
        "conv layers with an attention layer every fourth, as in LFM2-8B-A1B",
    },
    "recurrent_gemma": {
        "config": {"num_hidden_layers": 3},
        "contexts": (1024, 4096),
        "pass_cache": True,
        "why": "the RG-LRU loops per token on CPU (default: over 120 s); 3 layers are one block_types "
        "period (recurrent, recurrent, attention); contexts below and above the 2,048-token window. "
        "RecurrentGemma makes no cache object itself (its recurrent states live on the modules): the "
        "oracle passes it one for the attention layers",
    },
    "rwkv": {
        "config": {"num_hidden_layers": 2},
        "contexts": (256, 1024),
        "why": "the WKV recurrence loops per token on CPU (default: over 120 s); 2 layers keep block 0 "
        "(with its pre_ln) and an ordinary block",
    },
    "xlstm": {
        "config": {"num_hidden_layers": 4, "num_blocks": 4},
        "why": "the default's 32 blocks take about 70 s on CPU; every block is alike",
    },
}
