"""The decode gap: tokens per second of a small Llama-style model at batch 1, beside the bound.

At batch 1 a decode step multiplies one token's activations by every weight matrix, so it must
read all the weights once: tok/s <= bandwidth / bytes read per step ("How to Scale Your Model",
inference chapter; simulators.llm_speed.decode_step). Eager PyTorch launches every small
operation from Python, one after another; at batch 1 that per-operation cost, not memory, can
set the pace. CUDA Graphs record the step's kernels once and replay them with one launch
(PyTorch docs, "CUDA Graphs"), which is how serving engines close most of the gap.

The model: measure.transformer.build_model (HF LlamaForCausalLM's structure and names) with
random weights, decoded by our own step over a static KV cache: the cache has a fixed number of
slots, the new key/value is written at the current position (a device tensor), attention runs
over every slot with the ones past the position masked out, and the greedy next token is fed
back on the device. Shapes never change, so the same step runs eagerly or inside a CUDA Graph.
The cache holds `context_tokens` of random keys and values before timing starts (no prefill is
timed; a decode step's cost does not depend on the values). torch is imported inside functions.
"""

from __future__ import annotations

import math
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from measure import status as st
from measure.env import cpu_info
from measure.results import DecodeRecord, Record
from measure.timing import ProgressFn, StopFn, TimingStats, check_stop, report, synchronize
from measure.transformer import TransformerConfig, build_model
from measure.workloads import Context, dtype_of, free_memory_bytes, run_guarded

MiB = 1024**2
GiB = 1024**3

# Small enough to decode in tens of milliseconds per step on a 2-core CPU, large enough that its
# weights (about 310 MB in float32) outgrow every cache, so a step streams them from DRAM.
CPU_CONFIG = TransformerConfig(
    vocab_size=32_000,
    hidden_size=1024,
    intermediate_size=2816,
    num_hidden_layers=4,
    num_attention_heads=16,
    num_key_value_heads=4,
)
# On a GPU: 8 layers at hidden 2048 (about 0.85 GB in bfloat16), Llama-shaped (head_dim 128).
CUDA_CONFIG = TransformerConfig(
    vocab_size=32_000,
    hidden_size=2048,
    intermediate_size=5632,
    num_hidden_layers=8,
    num_attention_heads=16,
    num_key_value_heads=4,
)
DEFAULT_CONTEXT_TOKENS = 128


def default_config(device: str) -> TransformerConfig:
    return CPU_CONFIG if device == "cpu" else CUDA_CONFIG


def weights_read_per_step_bytes(config: TransformerConfig, element_bytes: int, batch: int = 1) -> int:
    """Weight bytes one decode step reads: every parameter once, except an untied input embedding
    table, of which only `batch` rows are looked up (as simulators.llm_memory's
    weight_bytes_read_per_step counts it). Parameter count: measure.transformer.llama_parameter_count."""
    from measure.transformer import llama_parameter_count

    params = llama_parameter_count(config)
    if not config.tie_word_embeddings:
        params -= config.vocab_size * config.hidden_size - batch * config.hidden_size
    return params * element_bytes


def kv_read_per_step_bytes(
    config: TransformerConfig, context_tokens: float, element_bytes: int, batch: int = 1
) -> int:
    """KV-cache bytes one step must read: keys and values of every layer for the tokens in context,
    batch x layers x 2 x kv_heads x head_dim x context x element bytes (formula F7 of the calculator
    reference, simulators.llm_memory.kv_cache_bytes)."""
    per_token = 2 * config.num_hidden_layers * config.num_key_value_heads * config.resolved_head_dim
    return round(batch * per_token * context_tokens * element_bytes)


@dataclass
class StaticDecoder:
    """One greedy decode step of `model` over a static KV cache, on tensors that never change shape.

    `ids` (batch,) holds the current token of each sequence, `position` (a 0-d device tensor) the
    slot it is written to; `step()` appends its key/value, returns the logits (batch, vocab), writes
    the argmax into `ids` and advances `position`: everything stays on the device, so the same
    step can be captured in a CUDA Graph.
    """

    torch: Any
    model: Any
    config: TransformerConfig
    batch: int
    slots: int
    k_cache: list[Any]
    v_cache: list[Any]
    ids: Any
    position: Any
    inv_freq: Any
    slot_index: Any

    @classmethod
    def create(
        cls, torch: Any, model: Any, config: TransformerConfig, batch: int, slots: int
    ) -> StaticDecoder:
        weight = model.lm_head.weight
        device, dtype = weight.device, weight.dtype
        d, n_kv = config.resolved_head_dim, config.num_key_value_heads
        shape = (batch, n_kv, slots, d)
        return cls(
            torch=torch,
            model=model,
            config=config,
            batch=batch,
            slots=slots,
            k_cache=[torch.zeros(shape, device=device, dtype=dtype) for _ in range(config.num_hidden_layers)],
            v_cache=[torch.zeros(shape, device=device, dtype=dtype) for _ in range(config.num_hidden_layers)],
            ids=torch.zeros(batch, dtype=torch.long, device=device),
            position=torch.zeros((), dtype=torch.long, device=device),
            inv_freq=1.0
            / (config.rope_theta ** (torch.arange(0, d, 2, device=device, dtype=torch.float32) / d)),
            slot_index=torch.arange(slots, device=device),
        )

    def fill_context(self, tokens: int, seed: int = 0) -> None:
        """Random keys and values in the first `tokens` slots; the next step writes slot `tokens`."""
        torch = self.torch
        generator = torch.Generator(device=self.ids.device).manual_seed(seed)
        for cache in (*self.k_cache, *self.v_cache):
            cache.zero_()
            noise = torch.randn(cache[:, :, :tokens].shape, generator=generator, device=cache.device)
            cache[:, :, :tokens] = noise.to(cache.dtype)
        self.position.fill_(tokens)

    def step(self) -> Any:
        torch = self.torch
        functional = torch.nn.functional
        config = self.config
        b, d = self.batch, config.resolved_head_dim
        n_heads, n_kv = config.num_attention_heads, config.num_key_value_heads
        groups = n_heads // n_kv
        decoder = self.model.model
        x = decoder.embed_tokens(self.ids).unsqueeze(1)  # (b, 1, h)
        angles = self.position.to(torch.float32) * self.inv_freq
        emb = torch.cat((angles, angles), dim=-1)
        cos, sin = emb.cos().to(x.dtype), emb.sin().to(x.dtype)
        valid = self.slot_index <= self.position  # slots holding a token so far
        at = self.position.view(1)
        for index, layer in enumerate(decoder.layers):
            attn = layer.self_attn
            h = layer.input_layernorm(x)
            q = functional.linear(h, attn.q_proj.weight).view(b, n_heads, d)
            k = functional.linear(h, attn.k_proj.weight).view(b, n_kv, d)
            v = functional.linear(h, attn.v_proj.weight).view(b, n_kv, d)
            q = q * cos + _rotate_half(torch, q) * sin
            k = k * cos + _rotate_half(torch, k) * sin
            self.k_cache[index].index_copy_(2, at, k.unsqueeze(2))
            self.v_cache[index].index_copy_(2, at, v.unsqueeze(2))
            # Grouped-query attention: query head j*groups + g reads KV head j (HF's repeat_kv order).
            scores = (q.view(b, n_kv, groups, d) @ self.k_cache[index].transpose(-1, -2)) * d**-0.5
            scores = scores.masked_fill(~valid, float("-inf"))
            weights = torch.softmax(scores, dim=-1, dtype=torch.float32).to(q.dtype)
            out = (weights @ self.v_cache[index]).reshape(b, 1, n_heads * d)
            x = x + functional.linear(out, attn.o_proj.weight)
            h = layer.post_attention_layernorm(x)
            mlp = layer.mlp
            gated = functional.silu(functional.linear(h, mlp.gate_proj.weight)) * functional.linear(
                h, mlp.up_proj.weight
            )
            x = x + functional.linear(gated, mlp.down_proj.weight)
        logits = functional.linear(decoder.norm(x), self.model.lm_head.weight).squeeze(1)
        self.ids.copy_(logits.argmax(dim=-1))
        self.position.add_(1)
        return logits


def _rotate_half(torch: Any, x: Any) -> Any:
    half = x.shape[-1] // 2
    return torch.cat((-x[..., half:], x[..., :half]), dim=-1)


class CopyProbe:
    """Times torch copies over a working set well past the last-level cache (STREAM counting: 2
    words per element), for the CPU bound's bandwidth.

    The decode workload runs one copy before timing and one after each timed sample, so the
    bandwidth is measured under the same conditions as the steps (a shared machine's load comes
    and goes); `best_bytes_per_s` is the best copy, as STREAM reports its best time.
    """

    def __init__(self, ctx: Context) -> None:
        torch = ctx.torch
        caches = cpu_info().data_caches()
        llc = caches[-1].size_bytes if caches else 32 * MiB
        size = min(max(4 * llc, 256 * MiB), GiB)
        free = free_memory_bytes(ctx)
        if free:
            size = min(size, free // 8)
        self.elements = max(size // 8, 1)  # two float32 arrays
        self.working_set_bytes = 2 * self.elements * 4
        self.dst = torch.zeros(self.elements, dtype=torch.float32)
        self.src = torch.ones(self.elements, dtype=torch.float32)
        self.dst.copy_(self.src)  # first touch outside the timing
        self.best_bytes_per_s = 0.0
        self.copies = 0

    def __call__(self) -> None:
        t0 = time.perf_counter()
        self.dst.copy_(self.src)
        self.best_bytes_per_s = max(
            self.best_bytes_per_s, self.working_set_bytes / (time.perf_counter() - t0)
        )
        self.copies += 1

    def source(self) -> str:
        return (
            f"measured in this run: best of {self.copies} torch copy_ calls over a "
            f"{self.working_set_bytes / MiB:,.0f} MiB working set (STREAM counting: read + write), one "
            "before timing and one after each timed sample"
        )


def _datasheet_bandwidth(ctx: Context) -> tuple[float | None, str]:
    from measure.catalog import load_catalog, match_catalog
    from measure.device import device_summary

    summary = device_summary(ctx.torch, ctx.device)
    cuda = summary.get("cuda") or {}
    match = match_catalog(
        summary.get("name", ""),
        load_catalog(),
        memory_bytes=cuda.get("total_memory_bytes"),
        sm_count=cuda.get("sm_count"),
    )
    gbps = match.row.get("memory_bw_gbps") if match else None
    if not gbps:
        return None, ""
    return float(gbps) * 1e9, datasheet_source(match.row)


def _measured_device_copy(ctx: Context) -> tuple[float, str]:
    """Best of 5 device copies over up to 1 GiB (STREAM counting), when no datasheet row matched."""
    from measure.timing import time_op

    torch = ctx.torch
    size = min(GiB, (free_memory_bytes(ctx) or 4 * GiB) // 4)
    elements = max(size // 8, 1)
    src = torch.ones(elements, dtype=torch.float32, device=ctx.device)
    dst = torch.empty_like(src)
    stats = time_op(torch, lambda: dst.copy_(src), device=ctx.device, repeats=5, warmup=2)
    return (
        2 * elements * 4 / stats.min_s,
        f"measured here (no catalog row matched this GPU): best of 5 torch copy_ calls over "
        f"{2 * elements * 4 / MiB:,.0f} MiB (STREAM counting)",
    )


def datasheet_source(row: dict[str, Any] | Any) -> str:
    """How a catalog row's datasheet bandwidth is named in a decode record."""
    return (
        f"datasheet memory bandwidth of the matched catalog row {row.get('name')} "
        f"({float(row.get('memory_bw_gbps')):,.0f} GB/s, decimal)"
    )


def decode(
    device: str = "cpu",
    *,
    config: TransformerConfig | None = None,
    batches: Sequence[int] | None = None,
    modes: Sequence[str] | None = None,
    context_tokens: int = DEFAULT_CONTEXT_TOKENS,
    steps: int | None = None,
    repeats: int | None = None,
    dtype: str | None = None,
    bandwidth_bytes_per_s: float | None = None,
    bandwidth_source: str = "",
    quick: bool = False,
    seed: int = 0,
    progress: ProgressFn | None = None,
    should_stop: StopFn | None = None,
) -> st.Outcome:
    """Decode steps of a random-weight Llama-style model: median step time, tok/s and the bound.

    Modes: "eager" everywhere; on CUDA also "cuda_graph" (the step captured once with
    torch.cuda.graph after warm-up on a side stream, as the PyTorch docs do, then replayed).
    Each sample times `steps` consecutive steps (CUDA events on a GPU, perf_counter on a CPU);
    `step_s` is the median over `repeats` samples, tok/s = batch / step_s.

    The bound: tok/s <= batch x bandwidth / (weights read per step + KV cache of the tokens in
    context). Bandwidth on CUDA: `bandwidth_bytes_per_s` if given, else the datasheet figure of
    the matched catalog row (the suite passes the same). On a CPU: measured DRAM copy bandwidth,
    the best of `bandwidth_bytes_per_s` (the suite passes its bandwidth sweep's best DRAM copy)
    and copies timed between the decode samples (CopyProbe), so a busy moment on a shared machine
    cannot make the bound lower than what the memory delivered. Defaults: float32 and batch 1 on
    a CPU, bfloat16 and batches 1 and 16 (quick: 1) on CUDA. Returns DecodeRecords.
    """

    def body(ctx: Context, records: list[Record]) -> st.Status | None:
        torch = ctx.torch
        dev = ctx.device
        on_cuda = dev.startswith("cuda")
        if dev == "mps":
            return st.unsupported("The decode workload runs on a CPU or a CUDA GPU.")
        cfg = config or default_config(dev)
        dtype_name = dtype or ("bfloat16" if on_cuda else "float32")
        torch_dtype = dtype_of(torch, dtype_name)
        element = torch.empty((), dtype=torch_dtype).element_size()
        batch_list = list(batches or ((1,) if quick or not on_cuda else (1, 16)))
        mode_list = list(modes or (("eager", "cuda_graph") if on_cuda else ("eager",)))
        if "cuda_graph" in mode_list and not on_cuda:
            return st.unsupported("CUDA Graphs need a CUDA device.")
        n_steps = steps or (16 if on_cuda else 8)
        n_repeats = repeats or (3 if quick else 5)
        warmup = 3
        bandwidth, source = bandwidth_bytes_per_s, bandwidth_source
        probe = None
        if on_cuda and bandwidth is None:
            bandwidth, source = _datasheet_bandwidth(ctx)
            if bandwidth is None:
                bandwidth, source = _measured_device_copy(ctx)
        elif not on_cuda:
            report(progress, 0.0, "copy bandwidth for the bound")
            probe = CopyProbe(ctx)
            probe()
        report(progress, 0.05, "building the model")
        with torch.random.fork_rng(devices=[]):
            torch.manual_seed(seed)
            with torch.device(dev):
                model = build_model(cfg).to(dtype=torch_dtype).eval()
        n_params = sum(p.numel() for p in model.parameters())
        slots = context_tokens + warmup + n_steps * n_repeats + 8
        description = (
            f"Llama-style, {cfg.num_hidden_layers} layers × hidden {cfg.hidden_size} "
            f"({cfg.num_attention_heads} heads, {cfg.num_key_value_heads} KV; MLP {cfg.intermediate_size}; "
            f"vocab {cfg.vocab_size:,}), random {dtype_name} weights"
        )
        plan = [(b, m) for b in batch_list for m in mode_list]
        with torch.no_grad():
            for i, (batch, mode) in enumerate(plan):
                check_stop(should_stop)
                report(progress, 0.1 + 0.9 * i / len(plan), f"{mode} batch {batch}")
                decoder = StaticDecoder.create(torch, model, cfg, batch, slots)
                decoder.fill_context(context_tokens, seed)
                step = decoder.step
                if mode == "eager":
                    for _ in range(warmup):
                        step()
                else:
                    step = _capture(torch, decoder, warmup)
                samples = _time_steps(torch, dev, step, n_steps, n_repeats, should_stop, between=probe)
                if probe is not None and probe.best_bytes_per_s > (bandwidth or 0.0):
                    bandwidth, source = probe.best_bytes_per_s, probe.source()
                stats = TimingStats.from_samples(
                    samples, n_steps, "cuda_event" if on_cuda else "perf_counter"
                )
                # Tokens in context while timing: from the first timed step to the last.
                first = int(decoder.position.item()) - n_steps * n_repeats
                mean_context = first + (n_steps * n_repeats - 1) / 2 + 1
                weights = weights_read_per_step_bytes(cfg, element, batch)
                kv = kv_read_per_step_bytes(cfg, mean_context, element, batch)
                tok_s = batch / stats.median_s
                bound = bound_tok_s(bandwidth, weights + kv, batch) if bandwidth else None
                records.append(
                    DecodeRecord(
                        **ctx.common(),
                        mode=mode,
                        batch=batch,
                        step_s=stats.median_s,
                        tok_s=tok_s,
                        bound_tok_s=bound,
                        fraction_of_bound=tok_s / bound if bound else None,
                        weights_bytes=weights,
                        kv_bytes=kv,
                        bytes_per_step=weights + kv,
                        bound_bandwidth_bytes_per_s=bandwidth,
                        bound_source=source or "no bandwidth known for this device",
                        context_tokens=round(mean_context),
                        dtype=dtype_name,
                        model=description,
                        config=cfg.to_dict(),
                        parameters=int(n_params),
                        cache="static",
                        method=_method(mode, slots),
                        steps=n_steps,
                        repeats=stats.repeats,
                        p10_step_s=stats.p10_s,
                        p90_step_s=stats.p90_s,
                        min_step_s=stats.min_s,
                        timer=stats.timer,
                    )
                )
                del decoder, step
        report(progress, 1.0, "decode done")
        return None

    return run_guarded("decode", device, body)


def _method(mode: str, slots: int) -> str:
    base = (
        f"greedy decode over a static KV cache of {slots} slots (attention over every slot, those past the "
        "current position masked), next token fed back on the device; "
    )
    if mode == "eager":
        return base + "eager PyTorch: every op launched from Python"
    return base + "the step captured once with torch.cuda.graph and replayed (one launch per step)"


def _capture(torch: Any, decoder: StaticDecoder, warmup: int) -> Any:
    """Warm up on a side stream, capture one step in a CUDA Graph, return its replay function.

    The warm-up and capture advance the cache position; it is put back afterwards, so timing starts
    where the eager mode's did (PyTorch docs, "CUDA Graphs": warm up on a side stream first)."""
    start = int(decoder.position.item())
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        for _ in range(warmup):
            decoder.step()
    torch.cuda.current_stream().wait_stream(side)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        decoder.step()
    decoder.position.fill_(start + warmup)
    return graph.replay


def _time_steps(
    torch: Any,
    device: str,
    step: Any,
    steps: int,
    repeats: int,
    should_stop: StopFn | None,
    between: Any = None,
) -> list[float]:
    """Seconds per step, one value per sample of `steps` consecutive steps; `between()` (untimed)
    runs after each sample on the CPU path."""
    synchronize(torch, device)
    if device.startswith("cuda"):
        pairs = []
        for _ in range(repeats):
            check_stop(should_stop)
            begin = torch.cuda.Event(enable_timing=True)
            end = torch.cuda.Event(enable_timing=True)
            begin.record()
            for _ in range(steps):
                step()
            end.record()
            pairs.append((begin, end))
        torch.cuda.synchronize(device)
        return [b.elapsed_time(e) / 1000.0 / steps for b, e in pairs]
    samples = []
    for _ in range(repeats):
        check_stop(should_stop)
        t0 = time.perf_counter()
        for _ in range(steps):
            step()
        samples.append((time.perf_counter() - t0) / steps)
        if between is not None:
            between()
    return samples


def bound_tok_s(bandwidth_bytes_per_s: float, bytes_per_step: float, batch: int = 1) -> float:
    """The memory-bandwidth bound on decode speed: batch x bandwidth / bytes read per step."""
    if not (bandwidth_bytes_per_s > 0 and bytes_per_step > 0) or math.isinf(bytes_per_step):
        raise ValueError("bandwidth and bytes per step must be positive")
    return batch * bandwidth_bytes_per_s / bytes_per_step
