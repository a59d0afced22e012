"""Multi-GPU parallelism: how model state, activations and traffic split over GPUs.

Pure functions in bytes and seconds. Sources are named per function.
"""

from __future__ import annotations


def zero_model_state_bytes(num_params: float, n_gpus: int, stage: int, k: int = 12) -> float:
    """Model-state bytes per GPU under ZeRO data parallelism (mixed precision + Adam).

    Rajbhandari et al. 2019, "ZeRO: Memory Optimizations Toward Training Trillion Parameter
    Models" (arXiv 1910.02054), §5 and Figure 1, with Ψ parameters, N_d GPUs and K bytes of
    optimizer state per parameter (K = 12 for Adam's fp32 master copy, momentum and variance):

    - stage 0 (plain data parallelism): (2 + 2 + K) Ψ
    - stage 1 (P_os, optimizer states partitioned): 2Ψ + 2Ψ + KΨ / N_d
    - stage 2 (P_os+g, gradients too): 2Ψ + (2 + K) Ψ / N_d
    - stage 3 (P_os+g+p, parameters too): (2 + 2 + K) Ψ / N_d

    Figure 1's example, Ψ = 7.5B, N_d = 64: 120 GB, 31.4 GB, 16.6 GB, 1.9 GB.
    """
    if isinstance(n_gpus, bool) or not isinstance(n_gpus, int) or n_gpus < 1:
        raise ValueError(f"n_gpus must be a positive integer, got {n_gpus!r}")
    if stage not in (0, 1, 2, 3):
        raise ValueError(f"ZeRO stage must be 0, 1, 2 or 3, got {stage!r}")
    if not num_params >= 0:
        raise ValueError(f"num_params must be zero or positive, got {num_params!r}")
    params, grads, optimizer = 2.0 * num_params, 2.0 * num_params, float(k) * num_params
    if stage >= 1:
        optimizer /= n_gpus
    if stage >= 2:
        grads /= n_gpus
    if stage >= 3:
        params /= n_gpus
    return params + grads + optimizer
