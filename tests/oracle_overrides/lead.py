"""Overrides for families read by simulators/model_config.py itself."""

OVERRIDES = {
    "deepseek_v2": {
        "config": {"num_experts_per_tok": 6, "moe_intermediate_size": 1536},
        "why": "DeepseekV2Config leaves num_experts_per_tok None, which its router cannot run, and "
        "its expert width 1407 is not a multiple of 8, which torch's grouped matmul refuses; "
        "DeepSeek-V2's own config.json sets 6 and 1536",
    },
}
