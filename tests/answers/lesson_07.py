"""Lesson 07 (fine-tuning-memory): its numeric answers recomputed without lessons/functions.py."""

from __future__ import annotations

from collections.abc import Callable

from simulators import fit
from tests.answers.common import (
    _gpu,
    _spec,
    llm_memory,
    parallelism,
)


def _activations_gb(model: str, micro: int = 1, seq: int = 2048, n: int = 1, stage: int = 0) -> float:
    """Will it fit?'s activation memory per GPU for a full fine-tune (fit.training)."""
    result = fit.training(
        _spec(model),
        _gpu("h100-sxm"),
        seq=int(seq),
        micro_batch=int(micro),
        n_gpus=int(n),
        zero_stage=int(stage),
    )
    return result.memory.get("activations") / 1e9


ANSWERS: dict[str, Callable[..., float]] = {
    # 07 fine-tuning-memory. ZeRO (arXiv 1910.02054 §3.1): mixed-precision Adam keeps 2 + 2 + 12 bytes
    # per parameter; stage 3 divides all of it by the data-parallel degree (§5).
    "fine-tuning-memory/full-ft-states": lambda model: (
        _spec(model).param_count() * llm_memory.training_recipe("mixed-adam-16").bytes_per_param / 1e9
    ),
    # Gradient accumulation: one micro-batch in flight, activations linear in its sequences.
    "fine-tuning-memory/grad-accum-activations": lambda model, micro, steps: (
        int(micro) * _activations_gb(model, micro=1)
    ),
    "fine-tuning-memory/zero3-states": lambda model, n: (
        parallelism.zero_model_state_bytes(_spec(model).param_count(), int(n), 3) / 1e9
    ),
    # PEFT prints 4,194,304 trainable parameters for Llama-7B, r = 8 on q_proj and v_proj.
    "fine-tuning-memory/lora-fraction": lambda model, rank: (
        llm_memory.lora_trainable_params(_spec(model), int(rank), ("q_proj", "v_proj"))
        / _spec(model).param_count()
        * 100
    ),
    # ZeRO stages 1-3 (model states, §5) plus activations, which no stage shards.
    "fine-tuning-memory/zero-worked-total": lambda model, n, stage, seq: (
        parallelism.zero_model_state_bytes(_spec(model).param_count(), int(n), int(stage)) / 1e9
        + _activations_gb(model, seq=seq, n=n, stage=stage)
    ),
}

# The right option (its position as written, ``Option.origin``) of a choice question whose answer
# depends on its inputs.
CHOICES: dict[str, Callable[..., int]] = {}
