"""Overrides for the latent-attention / DeepSeek-style MoE families (simulators/families/latent.py)."""

OVERRIDES = {
    "dots1": {
        "config": {
            "n_routed_experts": 128,
            "num_experts_per_tok": 6,
            "n_shared_experts": 2,
            "first_k_dense_replace": 1,
        },
        "why": "Dots1Config leaves n_routed_experts, num_experts_per_tok and n_shared_experts null, which "
        "its MoE layers cannot build; dots.llm1's own config.json sets 128, 6 and 2 (first layer dense)",
    },
    "longcat_flash": {
        "config": {"moe_topk": 0},
        "why": "LongcatFlashExperts' forward calls torch.nonzero, which has no meta-device kernel; with "
        "moe_topk 0 the router picks no expert and the loop is skipped. moe_topk sizes no tensor "
        "(parameters and cache are unchanged)",
    },
}
