"""Multi-GPU parallelism: how model state, activations and traffic split over GPUs.

Pure functions in bytes and seconds. Sources are named per function. The main sources:

- Shoeybi et al. 2019, "Megatron-LM" (arXiv 1909.08053) §3: tensor parallelism (TP) needs two
  all-reduces in the forward and two in the backward pass of every transformer layer.
- Narayanan et al. 2021, "Efficient Large-Scale Language Model Training on GPU Clusters Using
  Megatron-LM" (arXiv 2104.04473): §2.2 pipeline schedules and the bubble (p − 1)/m, §3.2 the
  communication of TP (8·b·s·h·(t − 1)/t elements per layer per micro-batch) and of pipeline
  parallelism (PP, b·s·h per micro-batch between consecutive stages), §4.1 the scatter/gather
  optimisation (b·s·h/t per link).
- Korthikanti et al. 2022, "Reducing Activation Recomputation in Large Transformer Models"
  (arXiv 2205.05198): activations with TP, sequence parallelism (SP) and selective recompute,
  and the first pipeline stage under 1F1B (eq. 5).
- Rajbhandari et al. 2019, "ZeRO" (arXiv 1910.02054): §5 memory of the three stages, §7
  communication (stage 3 moves 3Ψ against data parallelism's 2Ψ, "a modest 50% increase").
- NVIDIA nccl-tests ``doc/PERFORMANCE.md``: bus-bandwidth factors of the collectives.

Rank order: Megatron-LM's default ``order="tp-cp-ep-dp-pp"`` (``megatron/core/parallel_state.py``,
``initialize_model_parallel``): the TP rank varies fastest, then the data-parallel (DP) rank,
then the pipeline stage. Consecutive ranks share a node, so a TP group of up to
``gpus_per_node`` GPUs stays on NVLink, where its per-layer all-reduces need the bandwidth.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from simulators.hardware import Accelerator, Interconnect, get_interconnect
from simulators.llm_memory import (
    DEFAULT_RUNTIME_OVERHEAD_BYTES,
    MemoryBreakdown,
    MemoryPart,
    ModelSpec,
    logits_bytes,
    model_state_bytes_per_gpu,
    training_activation_bytes_per_layer,
    training_recipe,
)


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


# ---------------------------------------------------------------------------------------------
# Collectives and the pipeline bubble
# ---------------------------------------------------------------------------------------------

COLLECTIVES = ("all-reduce", "reduce-scatter", "all-gather", "all-to-all", "broadcast", "reduce")


def bus_bandwidth_factor(collective: str, n_gpus: int) -> float:
    """How many times its buffer each GPU sends in a bandwidth-optimal collective over n GPUs.

    NVIDIA nccl-tests ``doc/PERFORMANCE.md``: busbw = algbw × factor, with 2(n − 1)/n for
    all-reduce, (n − 1)/n for reduce-scatter, all-gather and all-to-all, and 1 for broadcast and
    reduce. For all-gather and reduce-scatter the buffer is the full (gathered) size. The time
    of a collective on S bytes is at least S × factor / (link bandwidth in one direction).
    """
    _check_count("n_gpus", n_gpus)
    if collective not in COLLECTIVES:
        raise ValueError(f"unknown collective {collective!r}; choose one of {list(COLLECTIVES)}")
    n = n_gpus
    if collective == "all-reduce":
        return 2 * (n - 1) / n
    if collective in ("reduce-scatter", "all-gather", "all-to-all"):
        return (n - 1) / n
    return 1.0 if n > 1 else 0.0


def ring_allreduce_bytes_per_gpu(nbytes: float, n_gpus: int) -> float:
    """Bytes each GPU sends (and receives) in a ring all-reduce of an ``nbytes`` buffer: 2(n − 1)/n × nbytes.

    A ring all-reduce is a reduce-scatter followed by an all-gather, 2(n − 1) steps of nbytes/n
    each (nccl-tests ``doc/PERFORMANCE.md``; Patarasuk and Yuan 2009 show it is bandwidth-optimal).
    """
    _check_nonnegative("nbytes", nbytes)
    return bus_bandwidth_factor("all-reduce", n_gpus) * nbytes


def pipeline_bubble_fraction(stages: int, microbatches: int) -> float:
    """Fraction of a step a GPU sits idle in a GPipe or 1F1B pipeline: (p − 1) / (m + p − 1).

    Both schedules fill and drain the pipeline with p − 1 forward and p − 1 backward slots
    (Narayanan et al. 2021 §2.2.1: "The time spent in the bubble is the same for this new
    schedule"), while m micro-batches of work fill the rest: step = (m + p − 1)(t_f + t_b).
    GPipe (Huang et al. 2019, §2.3) states it as O((K − 1)/(M + K − 1)). For p = 8, m = 32 it
    is 0.179; Megatron's normalisation by the ideal time instead (``megatron_bubble_ratio``)
    gives 0.219 for the same pipeline.
    """
    _check_count("stages", stages)
    _check_count("microbatches", microbatches)
    return (stages - 1) / (microbatches + stages - 1)


def megatron_bubble_ratio(stages: int, microbatches: int) -> float:
    """Bubble time over ideal compute time: (p − 1) / m (Narayanan et al. 2021 §2.2.1).

    The extra time a step takes relative to a perfect pipeline; it can exceed 1. Related to the
    idle fraction f by f = r / (1 + r).
    """
    _check_count("stages", stages)
    _check_count("microbatches", microbatches)
    return (stages - 1) / microbatches


# ---------------------------------------------------------------------------------------------
# Pipeline schedules (for the Gantt chart)
# ---------------------------------------------------------------------------------------------

SCHEDULES = ("gpipe", "1f1b")
BACKWARD_OVER_FORWARD = 2.0  # backward ≈ 2 × forward: two matmuls per weight instead of one
MAX_SCHEDULE_SLOTS = 100_000  # keeps a Gantt chart drawable


@dataclass(frozen=True)
class Slot:
    """One forward or backward pass of one micro-batch on one pipeline stage.

    Times are in units of one micro-batch's forward pass on one stage.
    """

    stage: int
    microbatch: int
    phase: str  # "forward" or "backward"
    start: float
    end: float


def _stage_order(stage: int, stages: int, microbatches: int, schedule: str) -> list[tuple[str, int]]:
    if schedule == "gpipe":
        return [("forward", i) for i in range(microbatches)] + [("backward", i) for i in range(microbatches)]
    # 1F1B (PipeDream-Flush): warm-up forwards, then one forward / one backward, then cool-down.
    warmup = min(stages - stage - 1, microbatches)
    order = [("forward", i) for i in range(warmup)]
    next_forward, next_backward = warmup, 0
    while next_forward < microbatches:
        order.append(("forward", next_forward))
        next_forward += 1
        order.append(("backward", next_backward))
        next_backward += 1
    order += [("backward", i) for i in range(next_backward, microbatches)]
    return order


def pipeline_schedule(
    stages: int,
    microbatches: int,
    schedule: str = "1f1b",
    backward_over_forward: float = BACKWARD_OVER_FORWARD,
) -> list[Slot]:
    """Every forward and backward pass of one training step, placed in time, stage by stage.

    - ``"gpipe"``: all forward passes, then all backward passes (Huang et al. 2019, Fig. 2;
      Narayanan et al. 2021 Fig. 3). Keeps activations of all m micro-batches.
    - ``"1f1b"``: PipeDream-Flush, Megatron-LM's default (Narayanan et al. 2021 §2.2.1, Fig. 4):
      stage s runs min(p − s − 1, m) warm-up forwards, then alternates one forward and one
      backward, then drains. At most p − s micro-batches are in flight on stage s.

    A pass starts as soon as its stage is free and its input is ready (the previous stage's
    forward, the next stage's backward); communication takes no time here. Times are in units
    of one forward pass, a backward takes ``backward_over_forward`` of them (2 by default, the
    assumption of Narayanan et al.'s Fig. 3). The idle fraction of the result equals
    ``pipeline_bubble_fraction`` for both schedules.
    """
    _check_count("stages", stages)
    _check_count("microbatches", microbatches)
    if schedule not in SCHEDULES:
        raise ValueError(f"schedule must be one of {list(SCHEDULES)}, got {schedule!r}")
    if not backward_over_forward > 0 or math.isinf(backward_over_forward):
        raise ValueError(f"backward_over_forward must be positive, got {backward_over_forward!r}")
    if 2 * stages * microbatches > MAX_SCHEDULE_SLOTS:
        raise ValueError(
            f"{stages} stages × {microbatches} micro-batches is too large a schedule to draw "
            f"(limit {MAX_SCHEDULE_SLOTS:,} passes)"
        )
    duration = {"forward": 1.0, "backward": float(backward_over_forward)}
    orders = [_stage_order(s, stages, microbatches, schedule) for s in range(stages)]
    position = [0] * stages
    stage_free = [0.0] * stages
    finished: dict[tuple[int, str, int], float] = {}
    slots: list[Slot] = []
    remaining = sum(len(o) for o in orders)
    while remaining:
        progressed = False
        for s in range(stages):
            while position[s] < len(orders[s]):
                phase, mb = orders[s][position[s]]
                if phase == "forward":
                    dep = (s - 1, "forward", mb) if s > 0 else None
                else:
                    dep = (s + 1, "backward", mb) if s < stages - 1 else (s, "forward", mb)
                if dep is not None and dep not in finished:
                    break
                start = max(stage_free[s], finished[dep] if dep is not None else 0.0)
                end = start + duration[phase]
                slots.append(Slot(s, mb, phase, start, end))
                finished[(s, phase, mb)] = end
                stage_free[s] = end
                position[s] += 1
                remaining -= 1
                progressed = True
        if not progressed:  # pragma: no cover - the orders above never deadlock
            raise RuntimeError("pipeline schedule deadlocked")
    return sorted(slots, key=lambda x: (x.stage, x.start))


def schedule_makespan(slots: Sequence[Slot]) -> float:
    """End of the last pass: the step time in units of one forward pass."""
    return max((s.end for s in slots), default=0.0)


def schedule_idle_fraction(slots: Sequence[Slot]) -> float:
    """Idle GPU time over total GPU time in a schedule: 1 − busy / (stages × makespan)."""
    if not slots:
        return 0.0
    stages = 1 + max(s.stage for s in slots)
    busy = sum(s.end - s.start for s in slots)
    return 1 - busy / (stages * schedule_makespan(slots))


def schedule_idle_intervals(slots: Sequence[Slot]) -> list[tuple[int, float, float]]:
    """(stage, start, end) of every gap in which a stage waits, up to the end of the step."""
    if not slots:
        return []
    stages = 1 + max(s.stage for s in slots)
    makespan = schedule_makespan(slots)
    gaps = []
    for stage in range(stages):
        t = 0.0
        for slot in sorted((s for s in slots if s.stage == stage), key=lambda x: x.start):
            if slot.start > t + 1e-9:
                gaps.append((stage, t, slot.start))
            t = max(t, slot.end)
        if makespan > t + 1e-9:
            gaps.append((stage, t, makespan))
    return gaps


def max_in_flight(slots: Sequence[Slot], stage: int) -> int:
    """Most micro-batches whose forward is done and backward is not, on one stage.

    That is how many micro-batches' activations the stage must keep (Narayanan et al. 2021
    §2.2.1: at most p for 1F1B, m for GPipe).
    """
    events = []
    for s in slots:
        if s.stage != stage:
            continue
        if s.phase == "forward":
            events.append((s.end, 1))
        else:
            events.append((s.end, -1))
    in_flight = peak = 0
    for _, delta in sorted(events, key=lambda e: (e[0], e[1])):
        in_flight += delta
        peak = max(peak, in_flight)
    return peak


def microbatches_in_flight(stage: int, stages: int, microbatches: int, schedule: str = "1f1b") -> int:
    """Micro-batches whose activations stage ``stage`` holds at its peak.

    1F1B: min(p − s, m), so the first stage holds p (Narayanan et al. 2021 §2.2.1; Korthikanti
    et al. 2022 §4.2.3). GPipe: all m.
    """
    if schedule not in SCHEDULES:
        raise ValueError(f"schedule must be one of {list(SCHEDULES)}, got {schedule!r}")
    if schedule == "gpipe":
        return microbatches
    return min(stages - stage, microbatches)


# ---------------------------------------------------------------------------------------------
# The layout
# ---------------------------------------------------------------------------------------------

MAX_GPUS = 16_384  # keeps the per-GPU roles list and the grid chart small enough for a page
MAX_MICROBATCHES = 4_096
MAX_SEQ = 1_048_576
MAX_MICRO_BATCH = 4_096
RECOMPUTE = ("none", "selective", "full")


@dataclass(frozen=True)
class Layout:
    """How a training job spreads over GPUs: DP × TP × PP (× ZeRO stage) plus the batch.

    ``num_microbatches`` is m, the micro-batches each pipeline runs per optimizer step (the
    global batch is dp × m × micro_batch sequences of ``seq`` tokens). Construction checks the
    numbers that need no model; ``check_layout(spec, layout)`` checks the ones that do.
    """

    dp: int
    tp: int
    pp: int
    zero_stage: int = 0
    micro_batch: int = 1
    num_microbatches: int = 1
    seq: int = 2048
    nodes: int = 1
    gpus_per_node: int = 8
    sequence_parallel: bool = False
    recompute: str = "none"
    schedule: str = "1f1b"

    def __post_init__(self) -> None:
        for name, limit in (
            ("dp", MAX_GPUS),
            ("tp", MAX_GPUS),
            ("pp", MAX_GPUS),
            ("nodes", MAX_GPUS),
            ("gpus_per_node", MAX_GPUS),
            ("micro_batch", MAX_MICRO_BATCH),
            ("num_microbatches", MAX_MICROBATCHES),
            ("seq", MAX_SEQ),
        ):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ValueError(f"{name} must be a positive whole number, got {value!r}")
            if value > limit:
                raise ValueError(f"{name} = {value:,} is above the limit of {limit:,}")
        if self.zero_stage not in (0, 1, 2, 3) or isinstance(self.zero_stage, bool):
            raise ValueError(f"ZeRO stage must be 0, 1, 2 or 3, got {self.zero_stage!r}")
        if not isinstance(self.sequence_parallel, bool):
            raise ValueError(f"sequence_parallel must be True or False, got {self.sequence_parallel!r}")
        if self.recompute not in RECOMPUTE:
            raise ValueError(f"recompute must be one of {list(RECOMPUTE)}, got {self.recompute!r}")
        if self.schedule not in SCHEDULES:
            raise ValueError(f"schedule must be one of {list(SCHEDULES)}, got {self.schedule!r}")
        cluster = self.nodes * self.gpus_per_node
        if cluster > MAX_GPUS:
            raise ValueError(f"{cluster:,} GPUs is above the limit of {MAX_GPUS:,}")
        product = self.dp * self.tp * self.pp
        if product != cluster:
            raise ValueError(
                f"DP × TP × PP = {self.dp} × {self.tp} × {self.pp} = {product:,} GPUs, but the cluster "
                f"has {self.nodes} node{'s' if self.nodes != 1 else ''} × {self.gpus_per_node} GPUs = "
                f"{cluster:,}: the three degrees must multiply to the GPU count"
            )

    @property
    def n_gpus(self) -> int:
        return self.dp * self.tp * self.pp

    @property
    def tokens_per_step(self) -> int:
        """Tokens in one optimizer step over the whole job: dp × m × micro-batch × seq."""
        return self.dp * self.num_microbatches * self.micro_batch * self.seq


def divisors(n: int) -> list[int]:
    """The divisors of n in increasing order (the degrees a slider may offer for n GPUs)."""
    _check_count("n", n)
    small = [d for d in range(1, math.isqrt(n) + 1) if n % d == 0]
    return sorted(set(small + [n // d for d in small]))


def factorizations(n_gpus: int) -> list[tuple[int, int, int]]:
    """Every (dp, tp, pp) whose product is n_gpus."""
    return [(n_gpus // (tp * pp), tp, pp) for tp in divisors(n_gpus) for pp in divisors(n_gpus // tp)]


def layers_per_stage(num_layers: int, stages: int) -> list[int]:
    """Transformer layers on each pipeline stage: L/p each, the first L mod p stages one more.

    Narayanan et al. 2021 §2.2 give each stage an equal number of layers; when L is not a
    multiple of p the remainder goes here to the earliest stages (as numpy's ``array_split``
    does), and ``layout_notes`` says so.
    """
    _check_count("num_layers", num_layers)
    _check_count("stages", stages)
    if stages > num_layers:
        raise ValueError(f"PP = {stages} is more pipeline stages than the model's {num_layers} layers")
    base, extra = divmod(num_layers, stages)
    return [base + (1 if s < extra else 0) for s in range(stages)]


def _first_layer(num_layers: int, stages: int, stage: int) -> int:
    return sum(layers_per_stage(num_layers, stages)[:stage])


def check_layout(spec: ModelSpec, layout: Layout) -> None:
    """Raise ValueError with a plain message when the model cannot be split this way.

    Megatron-LM splits attention by heads (Shoeybi et al. 2019 §3), so TP must divide the query
    heads and the MLP width. KV heads (GQA) must divide by TP or TP by them; in the second case
    each KV head is replicated on TP / kv_heads GPUs (noted by ``layout_notes``). PP cannot
    exceed the number of layers.
    """
    t = layout.tp
    heads = spec.num_heads
    if spec.layer_heads:
        bad = sorted({q for q in spec.layer_heads if q % t})
        if bad:
            raise ValueError(f"TP = {t} does not divide the query heads of every layer ({bad})")
    elif heads % t:
        raise ValueError(
            f"TP = {t} does not divide the {heads} attention heads: tensor parallelism splits "
            f"attention by heads, so TP must be one of {[d for d in divisors(heads) if d <= 64]}"
        )
    if not spec.uses_mla:
        kv_values = set(spec.layer_kv_heads) or {spec.num_kv_heads}
        for kv in sorted(kv_values):
            if kv % t and t % kv:
                raise ValueError(
                    f"TP = {t} and the {kv} KV heads do not divide one another: each GPU must hold "
                    f"whole KV heads (TP a divisor of {kv}, or a multiple of it to replicate them)"
                )
    widths = set(spec.layer_intermediate) or {
        spec.expert_intermediate_size if spec.is_moe else spec.intermediate_size
    }
    for width in sorted(widths):
        if width % t:
            raise ValueError(f"TP = {t} does not divide the MLP width {width:,}")
    if layout.pp > spec.num_layers:
        raise ValueError(
            f"PP = {layout.pp} is more pipeline stages than the model's {spec.num_layers} layers"
        )


def layout_notes(spec: ModelSpec, layout: Layout) -> tuple[str, ...]:
    """Warnings about a valid layout: what it costs or what the model leaves out."""
    notes = []
    t = layout.tp
    if not spec.uses_mla and spec.num_kv_heads < t:
        notes.append(
            f"TP = {t} exceeds the {spec.num_kv_heads} KV heads: each KV head is replicated on "
            f"{t // spec.num_kv_heads} GPUs (their K/V weights are not split further)."
        )
    if groups_cross_nodes(layout)["tp"]:
        notes.append(
            f"A TP group of {t} GPUs spans nodes: its {_tp_collectives_per_layer(layout)} "
            "per layer and micro-batch run over the inter-node network instead of NVLink. Narayanan "
            "et al. 2021 (Takeaway #1): use TP up to the GPUs of one server, PP across servers."
        )
    if spec.num_layers % layout.pp:
        notes.append(
            f"{spec.num_layers} layers do not split evenly over {layout.pp} stages: the first "
            f"{spec.num_layers % layout.pp} stages get one layer more, and the slowest stage sets "
            "the pace."
        )
    if layout.sequence_parallel and t == 1:
        notes.append("Sequence parallelism has no effect without tensor parallelism (TP = 1).")
    if layout.num_microbatches < layout.pp and layout.pp > 1:
        notes.append(
            f"Only {layout.num_microbatches} micro-batches for {layout.pp} stages: at least half of the step "
            "is pipeline bubble."
        )
    if layout.zero_stage >= 2 and layout.pp > 1:
        notes.append(
            "ZeRO-2/3 with pipeline parallelism: gradients (and parameters) are re-communicated for "
            "every micro-batch here, because the full gradient is not kept between micro-batches."
        )
    if spec.uses_mla and t > 1:
        notes.append(
            "Multi-head latent attention: all its projections are counted as split over TP here, "
            "including the low-rank down-projections a real implementation may replicate."
        )
    if spec.is_moe:
        notes.append(
            "Mixture of experts: experts are split over TP like a dense MLP here; expert "
            "parallelism is not modelled."
        )
    return tuple(notes)


# ---------------------------------------------------------------------------------------------
# Who holds what
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class GpuRole:
    """One GPU's place in the layout and what it holds."""

    rank: int
    node: int
    local_index: int
    dp_rank: int
    tp_rank: int
    pp_stage: int
    layers: tuple[int, int]  # [first, last) transformer layers of its stage; (0, 0) without a model
    holds_embedding: bool
    holds_lm_head: bool
    zero_shard: int | None  # index of its ZeRO shard within its DP group; None without ZeRO
    zero_stage: int
    dp: int
    tp: int
    pp: int

    @property
    def holds(self) -> str:
        """What this GPU keeps, in words (for hover text)."""
        parts = []
        if self.layers != (0, 0):
            first, last = self.layers
            parts.append(f"layers {first}–{last - 1} (stage {self.pp_stage + 1} of {self.pp})")
        else:
            parts.append(f"pipeline stage {self.pp_stage + 1} of {self.pp}")
        if self.holds_embedding:
            parts.append("token embedding")
        if self.holds_lm_head:
            parts.append("LM head")
        if self.tp > 1:
            parts.append(f"1/{self.tp} of each weight matrix (TP shard {self.tp_rank})")
        else:
            parts.append("whole weight matrices")
        if self.zero_shard is None or self.dp == 1:
            parts.append(f"replica {self.dp_rank + 1} of {self.dp}: full optimizer state")
        else:
            sharded = {1: "optimizer states", 2: "optimizer states and gradients"}.get(
                self.zero_stage, "optimizer states, gradients and parameters"
            )
            parts.append(f"ZeRO-{self.zero_stage} shard {self.zero_shard + 1}/{self.dp} of its {sharded}")
        return "; ".join(parts)


def gpu_roles(layout: Layout, spec: ModelSpec | None = None) -> list[GpuRole]:
    """Every GPU's ranks and contents, in global rank order.

    Megatron-LM's default order (tp fastest, then dp, then pp):
    rank = tp_rank + tp × (dp_rank + dp × pp_stage); node = rank // gpus_per_node. With TP = 2,
    PP = 4 on 16 GPUs this gives TP groups [0, 1], [2, 3] …, DP groups [0, 2], [1, 3] … and PP
    groups [0, 4, 8, 12] …, the example in the docstring of Megatron-LM's
    ``initialize_model_parallel``. ``spec`` (optional) fills in the layers of each stage.
    """
    roles = []
    splits = layers_per_stage(spec.num_layers, layout.pp) if spec is not None else []
    starts = [sum(splits[:i]) for i in range(len(splits))]
    for rank in range(layout.n_gpus):
        tp_rank = rank % layout.tp
        dp_rank = (rank // layout.tp) % layout.dp
        stage = rank // (layout.tp * layout.dp)
        if spec is not None:
            layers = (starts[stage], starts[stage] + splits[stage])
            tied_copy = spec.tie_word_embeddings and stage == layout.pp - 1 and layout.pp > 1
        else:
            layers = (0, 0)
            tied_copy = False
        roles.append(
            GpuRole(
                rank=rank,
                node=rank // layout.gpus_per_node,
                local_index=rank % layout.gpus_per_node,
                dp_rank=dp_rank,
                tp_rank=tp_rank,
                pp_stage=stage,
                layers=layers,
                holds_embedding=stage == 0 or tied_copy,
                holds_lm_head=stage == layout.pp - 1,
                zero_shard=dp_rank if layout.zero_stage >= 1 else None,
                zero_stage=layout.zero_stage,
                dp=layout.dp,
                tp=layout.tp,
                pp=layout.pp,
            )
        )
    return roles


def process_groups(layout: Layout) -> dict[str, list[list[int]]]:
    """The global ranks of every TP, DP and PP group (Megatron-LM's default order)."""
    t, d, p = layout.tp, layout.dp, layout.pp

    def rank(tp_rank: int, dp_rank: int, stage: int) -> int:
        return tp_rank + t * (dp_rank + d * stage)

    return {
        "tp": [[rank(i, j, s) for i in range(t)] for s in range(p) for j in range(d)],
        "dp": [[rank(i, j, s) for j in range(d)] for s in range(p) for i in range(t)],
        "pp": [[rank(i, j, s) for s in range(p)] for j in range(d) for i in range(t)],
    }


def members_per_node(layout: Layout) -> dict[str, int]:
    """For TP, DP and PP: the fewest members any group has on one node (all of them if no group
    crosses a node). A crossing collective's rings leave each node through that many NICs."""
    g = layout.gpus_per_node
    found = {}
    for kind, groups in process_groups(layout).items():
        counts = [
            sum(1 for r in group if r // g == node) for group in groups for node in {r // g for r in group}
        ]
        found[kind] = min(counts)
    return found


def rail_allreduce_rate(
    intra_bytes_per_s: float, inter_bytes_per_s: float, members_on_node: int, crosses: bool = True
) -> float:
    """Effective rate of a ring collective whose group spans nodes with ``members_on_node`` GPUs on
    each, one NIC per GPU (rail-optimised nodes), bytes/s of each GPU's ring traffic.

    NCCL splits the buffer over channels and routes each channel's ring out of the node through a
    different GPU and NIC, so each NIC carries 1/k of a GPU's ring bytes R and NVLink the other
    (k − 1)/k, at the same time: time = max(R/k ÷ NIC rate, R(k − 1)/k ÷ NVLink rate)
    (NCCL's rings over NICs, ``NCCL_IB_HCA`` listing every HCA; nccl-tests doc/PERFORMANCE.md:
    busbw "should reflect the speed of the hardware bottleneck"). With k = 1 (one member per
    node, or a node with one NIC) every byte crosses the NIC. A group inside one node: NVLink.
    """
    if not crosses:
        return intra_bytes_per_s
    k = max(1, int(members_on_node))
    if k == 1:
        return inter_bytes_per_s
    return min(k * inter_bytes_per_s, intra_bytes_per_s * k / (k - 1))


def groups_cross_nodes(layout: Layout) -> dict[str, bool]:
    """For TP, DP and PP: does any group have members on two nodes?"""
    g = layout.gpus_per_node
    return {
        kind: any(len({r // g for r in group}) > 1 for group in groups)
        for kind, groups in process_groups(layout).items()
    }


# ---------------------------------------------------------------------------------------------
# Memory per GPU
# ---------------------------------------------------------------------------------------------


def stage_params_per_gpu(spec: ModelSpec, layout: Layout, stage: int) -> float:
    """Parameters one GPU of pipeline stage ``stage`` holds before ZeRO: its stage's share / TP.

    Transformer layers: attention and MLP matrices split over TP (Shoeybi et al. 2019 §3),
    norms replicated; KV heads fewer than TP are replicated, not split. The token embedding
    and LM head are split over TP by vocabulary (Megatron-LM's vocab-parallel embedding) and sit
    on the first and last stage; with tied embeddings and PP > 1 the last stage keeps its own copy
    of the embedding (Megatron-LM's embedding group).
    """
    check_layout(spec, layout)
    if not 0 <= stage < layout.pp:
        raise ValueError(f"stage must be between 0 and {layout.pp - 1}, got {stage}")
    t = layout.tp
    b = spec.param_breakdown()
    layers = layers_per_stage(spec.num_layers, layout.pp)[stage]
    final_norm = (2 if spec.layer_norm else 1) * spec.hidden_size if spec.final_norm else 0
    final_norm *= 1 if spec.norm_params else 0
    per_layer_norms = (b.norms - final_norm) / spec.num_layers
    per_layer_split = (b.attention + b.mlp + b.routed_experts + b.routers) / spec.num_layers
    per_layer = per_layer_split / t + per_layer_norms
    if not spec.uses_mla and spec.num_kv_heads < t:
        # Each GPU keeps one whole KV head instead of kv_heads/t of the K and V projections.
        kv_cols = spec.head_dim
        per_layer += 2 * spec.hidden_size * kv_cols * (1 - spec.num_kv_heads / t)
    params = layers * per_layer
    if stage == 0:
        params += b.embeddings / t
    if stage == layout.pp - 1:
        params += b.lm_head / t + final_norm
        if spec.tie_word_embeddings and layout.pp > 1:
            params += b.embeddings / t
    return params


def activation_bytes_per_gpu(
    spec: ModelSpec,
    layout: Layout,
    stage: int,
    *,
    flash_attention: bool = True,
    dropout: bool = False,
    act_bytes: float = 2,
) -> float:
    """Activations pipeline stage ``stage`` keeps at its peak, on one GPU, in bytes.

    Per layer: ``training_activation_bytes_per_layer`` (Korthikanti et al. 2022 Table 2, with
    TP, SP and recompute). Times the stage's layers, times the micro-batches in flight
    (``microbatches_in_flight``: p − s under 1F1B, m under GPipe). On the first stage under
    1F1B with m ≥ p that is L/p layers × p = L layers' worth, independent of p (Korthikanti
    eq. 5). Full recompute keeps each layer's input and rebuilds one layer's full activations
    during its backward, so one layer's full set is added. The last stage adds the fp32 logits
    of its one in-flight micro-batch, split over TP by vocabulary.
    """
    check_layout(spec, layout)
    if not 0 <= stage < layout.pp:
        raise ValueError(f"stage must be between 0 and {layout.pp - 1}, got {stage}")
    per_layer_kwargs = dict(
        tensor_parallel=layout.tp,
        sequence_parallel=layout.sequence_parallel and layout.tp > 1,
        flash_attention=flash_attention,
        dropout=dropout,
        act_bytes=act_bytes,
    )
    per_layer = training_activation_bytes_per_layer(
        spec, layout.seq, layout.micro_batch, recompute=layout.recompute, **per_layer_kwargs
    )
    layers = layers_per_stage(spec.num_layers, layout.pp)[stage]
    in_flight = microbatches_in_flight(stage, layout.pp, layout.num_microbatches, layout.schedule)
    total = in_flight * layers * per_layer
    if layout.recompute == "full":
        total += training_activation_bytes_per_layer(
            spec, layout.seq, layout.micro_batch, recompute="none", **per_layer_kwargs
        )
    if stage == layout.pp - 1:
        total += logits_bytes(spec, layout.micro_batch, layout.seq, training=True) / layout.tp
    return total


def memory_by_stage(
    spec: ModelSpec,
    layout: Layout,
    recipe: str = "mixed-adam-16",
    *,
    flash_attention: bool = True,
    dropout: bool = False,
    runtime_overhead_bytes: float = DEFAULT_RUNTIME_OVERHEAD_BYTES,
) -> list[MemoryBreakdown]:
    """Memory of one GPU of each pipeline stage (all GPUs of a stage hold the same amount).

    Model states: the GPU's parameters (``stage_params_per_gpu``) × the recipe's bytes per
    parameter, then ZeRO over the DP group (``model_state_bytes_per_gpu``; Rajbhandari et al.
    2019 §5). Activations: ``activation_bytes_per_gpu``. Plus the runtime overhead. Left out:
    communication buffers, the allocator's fragmentation beyond the overhead, and the temporary
    full-size parameters ZeRO-3 gathers for the layer being computed.
    """
    check_layout(spec, layout)
    r = training_recipe(recipe)
    notes = layout_notes(spec, layout)
    out = []
    for stage in range(layout.pp):
        params = stage_params_per_gpu(spec, layout, stage)
        states = model_state_bytes_per_gpu(params, recipe, layout.dp, layout.zero_stage)
        acts = activation_bytes_per_gpu(spec, layout, stage, flash_attention=flash_attention, dropout=dropout)
        first, count = (
            _first_layer(spec.num_layers, layout.pp, stage),
            layers_per_stage(spec.num_layers, layout.pp)[stage],
        )
        where = f"stage {stage + 1} of {layout.pp} (layers {first}–{first + count - 1}"
        where += ", embedding" if stage == 0 else ""
        where += ", LM head" if stage == layout.pp - 1 else ""
        where += ")"
        shard = (
            f", ZeRO-{layout.zero_stage} over {layout.dp} DP ranks"
            if layout.zero_stage and layout.dp > 1
            else ""
        )
        in_flight = microbatches_in_flight(stage, layout.pp, layout.num_microbatches, layout.schedule)
        parts = (
            MemoryPart(
                "weights",
                "Weights (working copy)",
                states["weights"],
                f"{params:,.0f} parameters on this GPU ({where}, 1/{layout.tp} by TP) × "
                f"{r.weight_bytes:g} B" + (shard if layout.zero_stage >= 3 else ""),
                "weight-memory",
            ),
            MemoryPart(
                "gradients",
                "Gradients",
                states["gradients"],
                f"{params:,.0f} × {r.grad_bytes:g} B" + (shard if layout.zero_stage >= 2 else ""),
                "forward-backward-pass",
            ),
            MemoryPart(
                "optimizer",
                "Optimizer states (incl. fp32 master)",
                states["optimizer"],
                f"{params:,.0f} × {r.master_bytes + r.optimizer_bytes:g} B ({r.label})"
                + (shard if layout.zero_stage >= 1 else ""),
                "optimizer-state",
            ),
            MemoryPart(
                "activations",
                "Activations",
                acts,
                f"{count} layers × {in_flight} micro-batch{'es' if in_flight != 1 else ''} in flight "
                f"({layout.schedule.upper()}), micro-batch {layout.micro_batch} × seq {layout.seq:,}, "
                f"TP {layout.tp}{' + SP' if layout.sequence_parallel and layout.tp > 1 else ''}, "
                f"recompute: {layout.recompute}" + ("; plus fp32 logits" if stage == layout.pp - 1 else ""),
                "activation-memory",
            ),
            MemoryPart(
                "overhead",
                "CUDA context and allocator",
                runtime_overhead_bytes,
                "fixed per-GPU cost: CUDA context, kernels, allocator fragmentation (measured 0.3-2 GiB)",
                "vram-estimation",
            ),
        )
        out.append(MemoryBreakdown(parts=parts, n_gpus=layout.n_gpus, notes=(where, *notes)))
    return out


def per_gpu_memory(
    spec: ModelSpec,
    layout: Layout,
    recipe: str = "mixed-adam-16",
    *,
    stage: int | None = None,
    flash_attention: bool = True,
    dropout: bool = False,
    runtime_overhead_bytes: float = DEFAULT_RUNTIME_OVERHEAD_BYTES,
) -> MemoryBreakdown:
    """Memory of one GPU: of ``stage``, or by default of the most loaded stage.

    Under 1F1B that is usually the first stage: it holds the embedding and p micro-batches of
    activations (Korthikanti et al. 2022 §4.2.3). Its first note names the stage.
    """
    breakdowns = memory_by_stage(
        spec,
        layout,
        recipe,
        flash_attention=flash_attention,
        dropout=dropout,
        runtime_overhead_bytes=runtime_overhead_bytes,
    )
    if stage is None:
        return max(breakdowns, key=lambda b: b.total_bytes)
    if not 0 <= stage < layout.pp:
        raise ValueError(f"stage must be between 0 and {layout.pp - 1}, got {stage}")
    return breakdowns[stage]


# ---------------------------------------------------------------------------------------------
# Communication per step
# ---------------------------------------------------------------------------------------------

DEFAULT_LINK_EFFICIENCY = 0.8  # ml-engineering network/README.md: expect ~80% of the advertised rate
DEFAULT_INTER_NODE_LINK = "ib-ndr-4x"  # one 400 Gb/s NDR port per GPU, as on H100 nodes (catalog note)


def link_efficiency(link: Interconnect) -> float:
    """Fraction of a link's one-way rate a transfer reaches: the catalog's measured fraction, else 0.8.

    0.8 is ml-engineering's rule of thumb (``network/README.md``, quoted in interconnects.csv).
    """
    measured = link.measured_fraction
    return measured if measured is not None else DEFAULT_LINK_EFFICIENCY


def tensor_parallel_bytes_per_layer(
    hidden_size: int,
    seq: int,
    micro_batch: int,
    tp: int,
    *,
    act_bytes: float = 2,
    recompute: str = "none",
) -> float:
    """Bytes one GPU sends for TP in one layer and one micro-batch (forward + backward).

    Megatron-LM (Shoeybi et al. 2019 §3; Narayanan et al. 2021 §2.3, §3.2): two all-reduces in
    the forward pass (after attention and after the MLP) and two in the backward pass, each of
    b·s·h activations, so 4 × 2(t − 1)/t × b·s·h = 8·b·s·h·(t − 1)/t elements. With sequence
    parallelism each all-reduce becomes a reduce-scatter plus an all-gather of the same total
    volume (Korthikanti et al. 2022 §4.2.2; nccl-tests: (t−1)/t + (t−1)/t = 2(t−1)/t). Full
    recompute reruns the forward pass before the backward, adding its two all-reduces.
    """
    _check_count("tp", tp)
    if recompute not in RECOMPUTE:
        raise ValueError(f"recompute must be one of {list(RECOMPUTE)}, got {recompute!r}")
    collectives = 6 if recompute == "full" else 4
    message = micro_batch * seq * hidden_size * act_bytes
    return collectives * ring_allreduce_bytes_per_gpu(message, tp)


def _tp_collectives_per_layer(layout: Layout) -> str:
    n = 6 if layout.recompute == "full" else 4
    if layout.sequence_parallel:
        return f"{n} all-gathers and {n} reduce-scatters"
    return f"{n} all-reduces"


@dataclass(frozen=True)
class CommTerm:
    """One kind of traffic in a training step, on the busiest GPU for it."""

    key: str  # "tp", "pp", "dp", "dp_reduce_scatter", "dp_all_gather"
    name: str
    collective: str
    group_size: int
    bytes_per_gpu: float  # sent by one GPU per step (bus-bandwidth accounting)
    link_id: str
    link_name: str
    crosses_nodes: bool
    bandwidth_bytes_per_s: float  # effective one-way rate used: spec rate × efficiency
    formula: str
    overlappable: bool = False  # can hide behind the backward pass (DP gradient traffic)

    @property
    def time_s(self) -> float:
        """bytes / effective bandwidth; latency is left out (large messages)."""
        if self.bytes_per_gpu == 0:
            return 0.0
        return self.bytes_per_gpu / self.bandwidth_bytes_per_s


def communication_per_step(
    spec: ModelSpec,
    layout: Layout,
    *,
    recipe: str = "mixed-adam-16",
    intra_node_link: str = "nvlink-4",
    inter_node_link: str = DEFAULT_INTER_NODE_LINK,
    efficiency: float | None = None,
    act_bytes: float = 2,
    pp_scatter_gather: bool = True,
) -> list[CommTerm]:
    """Bytes and time of each kind of traffic in one optimizer step, per GPU.

    A group whose GPUs share a node uses ``intra_node_link`` (NVLink or PCIe); a collective whose
    group spans nodes runs its rings over one network port per member on each node (rail-optimised
    nodes, ``rail_allreduce_rate``): with k members per node each port carries 1/k of the bytes,
    so only a group with one member per node sends everything through ``inter_node_link``.
    Time = bytes / (one-way rate × efficiency), efficiency from ``link_efficiency`` unless given.
    Each term is taken on the pipeline stage where it is largest.

    - TP: ``tensor_parallel_bytes_per_layer`` × layers of the stage × m micro-batches
      (Narayanan et al. 2021 §3.2: l_stage · 8bsh(t − 1)/t per micro-batch).
    - PP: point-to-point sends of b·s·h activations forward and their gradients backward, per
      micro-batch and stage boundary (Narayanan et al. 2021 §3.2). With TP, each TP rank sends
      1/t of it (scatter/gather optimisation, §4.1); a middle stage sends both directions.
    - DP: the gradients of the GPU's parameters once per step. ZeRO 0/1: ring all-reduce,
      2(d − 1)/d × Ψ (ZeRO-1 = reduce-scatter + all-gather, same volume). ZeRO-2: gradients
      reduce-scattered after every micro-batch's backward (the full gradient is never kept) and
      updated parameters all-gathered once. ZeRO-3: parameters all-gathered for every
      micro-batch's forward and again for its backward, gradients reduce-scattered: 3Ψ per
      micro-batch against 2Ψ per step (ZeRO §7; ZeRO++ arXiv 2306.10209: "a total communication
      volume of 3M, spreads evenly across 2 all-gather and 1 reduce-scatter").
    """
    check_layout(spec, layout)
    r = training_recipe(recipe)
    crosses = groups_cross_nodes(layout)
    intra = get_interconnect(intra_node_link)
    inter = get_interconnect(inter_node_link)
    if efficiency is not None and not 0 < efficiency <= 1:
        raise ValueError(f"efficiency must be in (0, 1], got {efficiency!r}")

    per_node = members_per_node(layout)

    def link_for(kind: str) -> tuple[Interconnect, float]:
        link = inter if crosses[kind] else intra

        def rate(found: Interconnect) -> float:
            eff = efficiency if efficiency is not None else link_efficiency(found)
            return found.payload_per_direction_bytes_per_s * eff

        if kind == "pp" or not crosses[kind]:
            return link, rate(link)
        # a collective across nodes: its rings leave each node through one NIC per member there
        return link, rail_allreduce_rate(rate(intra), rate(inter), per_node[kind])

    h, s, b, m = spec.hidden_size, layout.seq, layout.micro_batch, layout.num_microbatches
    t, d, p = layout.tp, layout.dp, layout.pp
    terms: list[CommTerm] = []

    max_layers = max(layers_per_stage(spec.num_layers, p))
    if t > 1:
        per_layer = tensor_parallel_bytes_per_layer(
            h, s, b, t, act_bytes=act_bytes, recompute=layout.recompute
        )
        link, bw = link_for("tp")
        sp = layout.sequence_parallel
        terms.append(
            CommTerm(
                key="tp",
                name="TP: " + ("all-gather + reduce-scatter (SP)" if sp else "all-reduces") + " per layer",
                collective="all-gather + reduce-scatter" if sp else "all-reduce",
                group_size=t,
                bytes_per_gpu=per_layer * max_layers * m,
                link_id=link.id,
                link_name=link.name,
                crosses_nodes=crosses["tp"],
                bandwidth_bytes_per_s=bw,
                formula=(
                    f"{_tp_collectives_per_layer(layout)} per layer × {max_layers} layers × {m} "
                    f"micro-batches; each moves 2(t−1)/t × b·s·h × {act_bytes:g} B (t = {t})"
                ),
            )
        )
    if p > 1:
        message = b * s * h * act_bytes / (t if (pp_scatter_gather or layout.sequence_parallel) else 1)
        directions = 2 if p > 2 else 1
        link, bw = link_for("pp")
        terms.append(
            CommTerm(
                key="pp",
                name="PP: activations and their gradients between stages",
                collective="send/recv",
                group_size=2,
                bytes_per_gpu=directions * m * message,
                link_id=link.id,
                link_name=link.name,
                crosses_nodes=crosses["pp"],
                bandwidth_bytes_per_s=bw,
                formula=(
                    f"b·s·h × {act_bytes:g} B"
                    + (f" / t (scatter/gather, t = {t})" if message < b * s * h * act_bytes else "")
                    + f" per micro-batch × {m} micro-batches"
                    + (" × 2 (a middle stage sends forward and backward)" if directions == 2 else "")
                ),
            )
        )
    if d > 1:
        params = max(stage_params_per_gpu(spec, layout, stage) for stage in range(p))
        grad_bytes = params * r.grad_bytes
        weight_bytes = params * r.weight_bytes
        link, bw = link_for("dp")
        common = dict(
            group_size=d,
            link_id=link.id,
            link_name=link.name,
            crosses_nodes=crosses["dp"],
            bandwidth_bytes_per_s=bw,
            overlappable=True,
        )
        z = layout.zero_stage
        if z <= 1:
            terms.append(
                CommTerm(
                    key="dp",
                    name="DP: gradient all-reduce" + (" (ZeRO-1: reduce-scatter + all-gather)" if z else ""),
                    collective="all-reduce",
                    bytes_per_gpu=ring_allreduce_bytes_per_gpu(grad_bytes, d),
                    formula=(
                        f"2(d−1)/d × {params:,.0f} gradients × {r.grad_bytes:g} B, once per step (d = {d})"
                    ),
                    **common,
                )
            )
        else:
            rs_calls = m
            terms.append(
                CommTerm(
                    key="dp_reduce_scatter",
                    name=f"DP: gradient reduce-scatter (ZeRO-{z})",
                    collective="reduce-scatter",
                    bytes_per_gpu=rs_calls * bus_bandwidth_factor("reduce-scatter", d) * grad_bytes,
                    formula=(
                        f"(d−1)/d × {params:,.0f} gradients × {r.grad_bytes:g} B after each of "
                        f"{m} micro-batches (d = {d})"
                    ),
                    **common,
                )
            )
            ag_calls = 2 * m if z == 3 else 1
            terms.append(
                CommTerm(
                    key="dp_all_gather",
                    name=(
                        "DP: parameter all-gather, forward and backward (ZeRO-3)"
                        if z == 3
                        else "DP: all-gather of updated parameters (ZeRO-2)"
                    ),
                    collective="all-gather",
                    bytes_per_gpu=ag_calls * bus_bandwidth_factor("all-gather", d) * weight_bytes,
                    formula=(
                        f"(d−1)/d × {params:,.0f} parameters × {r.weight_bytes:g} B"
                        + (f" × 2 per micro-batch × {m}" if z == 3 else ", once per step")
                        + f" (d = {d})"
                    ),
                    **common,
                )
            )
    return terms


def tensor_parallel_time_by_link(
    spec: ModelSpec,
    layout: Layout,
    link_ids: Sequence[str] = ("nvlink-4", "pcie-gen5-x16", "ib-ndr-4x"),
    *,
    efficiency: float | None = None,
    act_bytes: float = 2,
) -> list[tuple[str, float]]:
    """(link name, seconds per step) of the layout's TP traffic if it ran over each link.

    Why TP stays inside a node: the bytes are fixed by the model and layout
    (``tensor_parallel_bytes_per_layer`` × layers of the busiest stage × m), so the time scales
    with 1 / (one-way rate × efficiency). Narayanan et al. 2021 §3.2: "when t is larger than the
    number of GPUs in a single node, the overhead of performing tensor model parallelism across
    slower inter-node links can be impractical".
    """
    check_layout(spec, layout)
    per_layer = tensor_parallel_bytes_per_layer(
        spec.hidden_size,
        layout.seq,
        layout.micro_batch,
        layout.tp,
        act_bytes=act_bytes,
        recompute=layout.recompute,
    )
    total = per_layer * max(layers_per_stage(spec.num_layers, layout.pp)) * layout.num_microbatches
    out = []
    for link_id in link_ids:
        link = get_interconnect(link_id)
        eff = efficiency if efficiency is not None else link_efficiency(link)
        out.append((link.name, total / (link.payload_per_direction_bytes_per_s * eff)))
    return out


# ---------------------------------------------------------------------------------------------
# Compute and step time
# ---------------------------------------------------------------------------------------------

DEFAULT_MFU = 0.4  # Llama 3 405B trained at 38-43% MFU on H100 (calculator-anchors.md §3)


def training_flops_per_step(spec: ModelSpec, layout: Layout) -> float:
    """Model FLOPs of one step: 6 × parameters × tokens (Kaplan et al. 2020 §2.1).

    Active parameters for a mixture of experts. Full recompute adds a second forward pass,
    8 × parameters × tokens (Narayanan et al. 2021 eq. 4); selective recompute's few percent
    are left out.
    """
    per_token = 8 if layout.recompute == "full" else 6
    return per_token * spec.param_count(active=True) * layout.tokens_per_step


def compute_time_per_step(
    spec: ModelSpec,
    layout: Layout,
    accelerator: Accelerator,
    mfu: float = DEFAULT_MFU,
    dtype: str = "bf16",
) -> float:
    """Seconds of compute per step, pipeline bubble included, communication excluded.

    Ideal time = FLOPs / (n_gpus × peak × MFU), with ``training_flops_per_step`` and ``mfu``
    the fraction of peak the GPUs reach while busy. The bubble stretches it by
    (m + p − 1)/m = 1 + (p − 1)/m (Narayanan et al. 2021 §2.2.1).
    """
    ideal = _ideal_compute_s(spec, layout, accelerator, mfu, dtype)
    return ideal * (1 + megatron_bubble_ratio(layout.pp, layout.num_microbatches))


def _ideal_compute_s(
    spec: ModelSpec, layout: Layout, accelerator: Accelerator, mfu: float, dtype: str
) -> float:
    if not 0 < mfu <= 1:
        raise ValueError(f"MFU must be in (0, 1], got {mfu!r}")
    peak = accelerator.peak_flops(dtype)
    return training_flops_per_step(spec, layout) / (layout.n_gpus * peak * mfu)


@dataclass(frozen=True)
class StepTime:
    """One optimizer step, split into what the GPU does and what it waits for, in seconds."""

    compute_s: float  # ideal: FLOPs / (n × peak × MFU)
    tp_s: float
    pp_s: float
    bubble_s: float  # (p − 1)/m × (compute + TP + PP): fill and drain
    dp_s: float
    dp_exposed_s: float  # the part of DP traffic not hidden behind the backward pass
    model_flops: float  # 6 × active parameters × tokens (no recompute counted)
    cluster_peak_flops: float  # n_gpus × peak FLOP/s

    @property
    def total_s(self) -> float:
        return self.compute_s + self.tp_s + self.pp_s + self.bubble_s + self.dp_exposed_s

    @property
    def communication_s(self) -> float:
        return self.tp_s + self.pp_s + self.dp_s

    @property
    def scaling_efficiency(self) -> float:
        """Ideal compute time over the step time: 1 when n GPUs are exactly n times faster."""
        return self.compute_s / self.total_s if self.total_s else 0.0

    @property
    def achieved_mfu(self) -> float:
        """Model FLOPs (6ND) over the cluster's peak FLOPs in the step time (PaLM App. B's MFU)."""
        return self.model_flops / (self.cluster_peak_flops * self.total_s) if self.total_s else 0.0


def step_time(
    spec: ModelSpec,
    layout: Layout,
    accelerator: Accelerator,
    terms: Sequence[CommTerm],
    *,
    mfu: float = DEFAULT_MFU,
    dtype: str = "bf16",
    dp_overlap: float = 0.0,
) -> StepTime:
    """Step time from compute, the bubble and communication, with a stated overlap assumption.

    Assumptions: TP and PP traffic sits on the critical path (TP's all-reduces sit between
    matmuls; each micro-batch waits for its activations), so it lengthens every pipeline slot
    and the bubble grows with it: pipeline time = (compute + TP + PP) × (1 + (p − 1)/m)
    (Narayanan et al. 2021 eq. 1 with communication added to t_f + t_b). DP traffic can be
    overlapped with the backward pass; ``dp_overlap`` is the fraction hidden (0 by default:
    nothing hidden, the pessimistic bound; PyTorch DDP and Megatron-LM overlap gradient
    all-reduce with backward when enabled). Latency and congestion are left out.
    """
    if not 0 <= dp_overlap <= 1:
        raise ValueError(f"dp_overlap must be between 0 and 1, got {dp_overlap!r}")
    compute = _ideal_compute_s(spec, layout, accelerator, mfu, dtype)
    tp = sum(term.time_s for term in terms if term.key == "tp")
    pp = sum(term.time_s for term in terms if term.key == "pp")
    dp = sum(term.time_s for term in terms if term.key.startswith("dp"))
    bubble = megatron_bubble_ratio(layout.pp, layout.num_microbatches) * (compute + tp + pp)
    return StepTime(
        compute_s=compute,
        tp_s=tp,
        pp_s=pp,
        bubble_s=bubble,
        dp_s=dp,
        dp_exposed_s=dp * (1 - dp_overlap),
        model_flops=6 * spec.param_count(active=True) * layout.tokens_per_step,
        cluster_peak_flops=layout.n_gpus * accelerator.peak_flops(dtype),
    )


def scaling_efficiency(step: StepTime) -> float:
    """Ideal compute time / step time (see ``StepTime.scaling_efficiency``)."""
    return step.scaling_efficiency


# ---------------------------------------------------------------------------------------------
# Checks
# ---------------------------------------------------------------------------------------------


def _check_count(name: str, value: int) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ValueError(f"{name} must be a positive whole number, got {value!r}")


def _check_nonnegative(name: str, value: float) -> None:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not value >= 0 or math.isinf(value):
        raise ValueError(f"{name} must be zero or positive, got {value!r}")


# ---------------------------------------------------------------------------------------------
# Tables for the page (rows of display strings with units)
# ---------------------------------------------------------------------------------------------


def communication_table(terms: Sequence[CommTerm]) -> list[dict[str, str]]:
    """One row per kind of traffic: collective, group, link, bytes per GPU, time, and the formula."""
    return [
        {
            "Traffic": t.name,
            "Collective": t.collective,
            "Group": f"{t.group_size} GPUs",
            "Link": t.link_name + (" (across nodes)" if t.crosses_nodes else ""),
            "Per GPU per step": f"{t.bytes_per_gpu / 1e9:,.2f} GB",
            "Effective rate": f"{t.bandwidth_bytes_per_s / 1e9:,.0f} GB/s",
            "Time": f"{t.time_s * 1e3:,.1f} ms",
            "Formula": t.formula,
        }
        for t in terms
    ]
