"""Lesson 07 (fine-tuning-memory): its numeric answers recomputed without lessons/functions.py."""

from __future__ import annotations

from collections.abc import Callable

from tests.answers.common import (
    _spec,
    llm_memory,
    parallelism,
)

ANSWERS: dict[str, Callable[..., float]] = {
    # ---- lessons 07, 08, 09, 10, 11 (add entries here)
    # 07 fine-tuning-memory. ZeRO (arXiv 1910.02054 §3.1): mixed-precision Adam keeps 2 + 2 + 12 bytes
    # per parameter; stage 3 divides all of it by the data-parallel degree (§5).
    "fine-tuning-memory/full-ft-states": lambda: (
        _spec("llama-3-8b").param_count() * llm_memory.training_recipe("mixed-adam-16").bytes_per_param / 1e9
    ),
    "fine-tuning-memory/zero3-states": lambda: (
        parallelism.zero_model_state_bytes(_spec("llama-3-8b").param_count(), 8, 3) / 1e9
    ),
    # PEFT prints 4,194,304 trainable parameters for Llama-7B, r = 8 on q_proj and v_proj.
    "fine-tuning-memory/lora-fraction": lambda: (
        llm_memory.lora_trainable_params(_spec("llama-2-7b"), 8, ("q_proj", "v_proj"))
        / _spec("llama-2-7b").param_count()
        * 100
    ),
}

# The right option (its position as written, ``Option.origin``) of a choice question whose answer
# depends on its inputs.
CHOICES: dict[str, Callable[..., int]] = {}
