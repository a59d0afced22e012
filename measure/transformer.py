"""Memory of one step of a small Llama-style decoder, built from a config with random weights.

The model is our own minimal torch.nn module (embedding, RMSNorm, attention with grouped-query
heads and rotary position embeddings, SwiGLU MLP, LM head). Its parameter and module names are
those of Hugging Face's LlamaForCausalLM, so the tests load a transformers model's weights into
it and compare outputs. Nothing is downloaded. torch is imported inside functions only.

Peak memory:
- CUDA: torch.cuda.max_memory_allocated after reset_peak_memory_stats — bytes held by live
  tensors at the peak, as the caching allocator counts them. Memory the allocator has reserved
  but not handed out (torch.cuda.memory_reserved), the CUDA context, and anything allocated
  outside PyTorch are not included; nvidia-smi shows all of those.
- CPU: torch.profiler with profile_memory=True records every allocation and free made through
  PyTorch's CPU allocator during the step; the running sum's maximum is added to the bytes
  already live before the step (parameters, optimizer state, inputs, summed over their
  storages). Memory a library allocates behind PyTorch's allocator (oneDNN/MKL scratch,
  Python objects) is not seen, so the process's RSS is higher.
- MPS: no peak counter exists, so the workload reports "unsupported".
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Mapping
from dataclasses import asdict, dataclass, fields
from typing import Any

from measure import status as st
from measure.results import Record, TransformerMemoryRecord
from measure.timing import ProgressFn, StopFn, check_stop, report, synchronize
from measure.workloads import Context, dtype_of, run_guarded


@dataclass(frozen=True)
class TransformerConfig:
    """A Llama-style decoder. Field names follow Hugging Face's LlamaConfig, so a preset's
    config.json can be passed to `from_dict` as is (unknown keys are ignored)."""

    vocab_size: int = 4096
    hidden_size: int = 256
    intermediate_size: int = 704
    num_hidden_layers: int = 4
    num_attention_heads: int = 8
    num_key_value_heads: int = 4
    head_dim: int | None = None
    rms_norm_eps: float = 1e-5
    rope_theta: float = 10000.0
    tie_word_embeddings: bool = False

    @property
    def resolved_head_dim(self) -> int:
        return self.head_dim or self.hidden_size // self.num_attention_heads

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> TransformerConfig:
        known = {f.name for f in fields(cls)}
        values = {k: v for k, v in data.items() if k in known and v is not None}
        rope = data.get("rope_parameters") or data.get("rope_scaling") or {}
        if "rope_theta" not in values and isinstance(rope, Mapping) and "rope_theta" in rope:
            values["rope_theta"] = rope["rope_theta"]
        config = cls(**values)
        config.validate()
        return config

    def validate(self) -> None:
        if self.num_attention_heads % self.num_key_value_heads:
            raise ValueError("num_attention_heads must be a multiple of num_key_value_heads (GQA groups)")
        if self.resolved_head_dim % 2:
            raise ValueError("head_dim must be even for rotary embeddings")
        for name in ("vocab_size", "hidden_size", "intermediate_size", "num_hidden_layers"):
            if getattr(self, name) < 1:
                raise ValueError(f"{name} must be positive")

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def llama_parameter_count(config: TransformerConfig) -> int:
    """Parameters of a Llama-style decoder (no biases):
    V*h*(1 + untied) + L*[h*(n_h*d) + 2*h*(n_kv*d) + (n_h*d)*h + 3*h*I + 2*h] + h
    (formula F1 of the project's calculator reference, from the HF Llama modeling code)."""
    h, d = config.hidden_size, config.resolved_head_dim
    n_h, n_kv = config.num_attention_heads, config.num_key_value_heads
    per_layer = h * n_h * d + 2 * h * n_kv * d + n_h * d * h + 3 * h * config.intermediate_size + 2 * h
    embeddings = config.vocab_size * h * (1 if config.tie_word_embeddings else 2)
    return embeddings + config.num_hidden_layers * per_layer + h


def build_model(config: TransformerConfig, *, attention: str = "sdpa") -> Any:
    """A torch.nn.Module with HF LlamaForCausalLM's structure and names; forward(ids) -> logits.

    attention="sdpa" uses torch.nn.functional.scaled_dot_product_attention (causal);
    "eager" materialises the (seq x seq) score matrix and a float32 softmax, as HF's eager path.
    """
    import torch
    from torch import nn
    from torch.nn import functional as F

    if attention not in {"sdpa", "eager"}:
        raise ValueError("attention must be 'sdpa' or 'eager'")
    config.validate()
    head_dim = config.resolved_head_dim
    n_heads, n_kv = config.num_attention_heads, config.num_key_value_heads

    class RMSNorm(nn.Module):
        def __init__(self, size: int, eps: float) -> None:
            super().__init__()
            self.weight = nn.Parameter(torch.ones(size))
            self.eps = eps

        def forward(self, x: Any) -> Any:
            dtype = x.dtype
            x = x.to(torch.float32)
            x = x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps)
            return self.weight * x.to(dtype)

    def rotate_half(x: Any) -> Any:
        half = x.shape[-1] // 2
        return torch.cat((-x[..., half:], x[..., :half]), dim=-1)

    class Attention(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            h = config.hidden_size
            self.q_proj = nn.Linear(h, n_heads * head_dim, bias=False)
            self.k_proj = nn.Linear(h, n_kv * head_dim, bias=False)
            self.v_proj = nn.Linear(h, n_kv * head_dim, bias=False)
            self.o_proj = nn.Linear(n_heads * head_dim, h, bias=False)

        def forward(self, x: Any, cos: Any, sin: Any) -> Any:
            b, s, _ = x.shape
            q = self.q_proj(x).view(b, s, n_heads, head_dim).transpose(1, 2)
            k = self.k_proj(x).view(b, s, n_kv, head_dim).transpose(1, 2)
            v = self.v_proj(x).view(b, s, n_kv, head_dim).transpose(1, 2)
            q = q * cos + rotate_half(q) * sin
            k = k * cos + rotate_half(k) * sin
            groups = n_heads // n_kv
            k = k.repeat_interleave(groups, dim=1)
            v = v.repeat_interleave(groups, dim=1)
            if attention == "sdpa":
                out = F.scaled_dot_product_attention(q, k, v, is_causal=True, scale=head_dim**-0.5)
            else:
                scores = (q @ k.transpose(2, 3)) * head_dim**-0.5
                mask = torch.full((s, s), float("-inf"), device=x.device, dtype=scores.dtype).triu(1)
                weights = torch.softmax(scores + mask, dim=-1, dtype=torch.float32).to(q.dtype)
                out = weights @ v
            return self.o_proj(out.transpose(1, 2).reshape(b, s, n_heads * head_dim))

    class MLP(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            h, inner = config.hidden_size, config.intermediate_size
            self.gate_proj = nn.Linear(h, inner, bias=False)
            self.up_proj = nn.Linear(h, inner, bias=False)
            self.down_proj = nn.Linear(inner, h, bias=False)

        def forward(self, x: Any) -> Any:
            return self.down_proj(F.silu(self.gate_proj(x)) * self.up_proj(x))

    class DecoderLayer(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.self_attn = Attention()
            self.mlp = MLP()
            self.input_layernorm = RMSNorm(config.hidden_size, config.rms_norm_eps)
            self.post_attention_layernorm = RMSNorm(config.hidden_size, config.rms_norm_eps)

        def forward(self, x: Any, cos: Any, sin: Any) -> Any:
            x = x + self.self_attn(self.input_layernorm(x), cos, sin)
            return x + self.mlp(self.post_attention_layernorm(x))

    class Decoder(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.embed_tokens = nn.Embedding(config.vocab_size, config.hidden_size)
            self.layers = nn.ModuleList(DecoderLayer() for _ in range(config.num_hidden_layers))
            self.norm = RMSNorm(config.hidden_size, config.rms_norm_eps)

        def forward(self, ids: Any) -> Any:
            x = self.embed_tokens(ids)
            positions = torch.arange(ids.shape[1], device=ids.device, dtype=torch.float32)
            inv_freq = 1.0 / (
                config.rope_theta
                ** (torch.arange(0, head_dim, 2, device=ids.device, dtype=torch.float32) / head_dim)
            )
            angles = torch.outer(positions, inv_freq)
            emb = torch.cat((angles, angles), dim=-1)
            cos, sin = emb.cos().to(x.dtype), emb.sin().to(x.dtype)
            for layer in self.layers:
                x = layer(x, cos, sin)
            return self.norm(x)

    class CausalLM(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.model = Decoder()
            self.lm_head = nn.Linear(config.hidden_size, config.vocab_size, bias=False)
            if config.tie_word_embeddings:
                self.lm_head.weight = self.model.embed_tokens.weight

        def forward(self, ids: Any) -> Any:
            return self.lm_head(self.model(ids))

    return CausalLM()


def _storage_bytes(tensors: Iterable[Any]) -> int:
    """Bytes of the distinct storages behind `tensors` (shared and tied storage counted once)."""
    seen: dict[int, int] = {}
    for tensor in tensors:
        if tensor is None or not hasattr(tensor, "untyped_storage"):
            continue
        storage = tensor.untyped_storage()
        seen[storage.data_ptr()] = storage.nbytes()
    return sum(seen.values())


def profiler_peak_bytes(memory_events: Iterable[tuple[int, int]]) -> int:
    """Maximum of the running sum of allocation sizes (frees are negative), given
    (timestamp_ns, nbytes) pairs; 0 if the sum never goes above zero."""
    running = 0
    peak = 0
    for _, nbytes in sorted(memory_events, key=lambda e: e[0]):
        running += nbytes
        peak = max(peak, running)
    return peak


def _cpu_profiled_peak(torch: Any, step: Any) -> int:
    from torch.profiler import ProfilerActivity, profile

    with profile(activities=[ProfilerActivity.CPU], profile_memory=True) as prof:
        step()
    events = prof.profiler.kineto_results.events()
    cpu_type = torch._C._autograd.DeviceType.CPU
    memory = [
        (e.start_ns(), e.nbytes()) for e in events if e.name() == "[memory]" and e.device_type() == cpu_type
    ]
    return profiler_peak_bytes(memory)


def transformer_memory(
    config: TransformerConfig | Mapping[str, Any] | None = None,
    *,
    device: str = "cpu",
    batch: int = 4,
    seq_len: int = 256,
    mode: str = "train",
    dtype: str = "float32",
    optimizer: str = "adamw",
    autocast_dtype: str | None = None,
    attention: str = "sdpa",
    seed: int = 0,
    progress: ProgressFn | None = None,
    should_stop: StopFn | None = None,
) -> st.Outcome:
    """Peak memory of one training step (forward, backward, optimizer step) or one inference
    forward pass of a random-weight Llama-style model, with its parameter count.

    mode "train": parameters in `dtype`, optimizer "adamw" (torch.optim.AdamW, two state tensors
    per parameter), "sgd" (no state) or "none"; one warm-up step first, so optimizer state
    exists and the measured step is a steady-state one; gradients are set to None before it.
    mode "inference": torch.no_grad() forward only. `autocast_dtype` ("bfloat16"/"float16")
    runs the forward under torch.autocast (mixed precision) with parameters kept in `dtype`.
    Returns one TransformerMemoryRecord.
    """
    if mode not in {"train", "inference"}:
        return st.Outcome((), st.unsupported("mode must be 'train' or 'inference'"))
    if optimizer not in {"adamw", "sgd", "none"}:
        return st.Outcome((), st.unsupported("optimizer must be 'adamw', 'sgd' or 'none'"))
    try:
        cfg = config if isinstance(config, TransformerConfig) else TransformerConfig.from_dict(config or {})
    except (TypeError, ValueError) as exc:
        return st.Outcome((), st.unsupported(f"Invalid transformer config: {exc}"))

    def body(ctx: Context, records: list[Record]) -> st.Status | None:
        torch = ctx.torch
        dev = ctx.device
        if dev == "mps":
            return st.unsupported(
                "PyTorch has no peak-memory counter for MPS, so this workload runs on CUDA or CPU."
            )
        report(progress, 0.0, "building model")
        torch_dtype = dtype_of(torch, dtype)
        with torch.random.fork_rng(devices=[]):
            torch.manual_seed(seed)
            model = build_model(cfg, attention=attention).to(device=dev, dtype=torch_dtype)
            ids = torch.randint(0, cfg.vocab_size, (batch, seq_len + 1), device=dev)
        inputs, labels = ids[:, :-1].contiguous(), ids[:, 1:].contiguous()
        del ids
        opt = None
        if mode == "train" and optimizer == "adamw":
            opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
        elif mode == "train" and optimizer == "sgd":
            opt = torch.optim.SGD(model.parameters(), lr=1e-4)
        autocast = None
        if autocast_dtype:
            autocast_type = "cuda" if dev.startswith("cuda") else "cpu"
            autocast = (autocast_type, dtype_of(torch, autocast_dtype))

        def forward() -> Any:
            if autocast is None:
                return model(inputs)
            with torch.autocast(device_type=autocast[0], dtype=autocast[1]):
                return model(inputs)

        def step() -> None:
            if mode == "inference":
                with torch.no_grad():
                    forward()
                return
            logits = forward()
            loss = torch.nn.functional.cross_entropy(
                logits.reshape(-1, cfg.vocab_size).float(), labels.reshape(-1)
            )
            del logits
            loss.backward()
            if opt is not None:
                opt.step()
                opt.zero_grad(set_to_none=True)
            else:
                model.zero_grad(set_to_none=True)

        if mode == "inference":
            model.eval()
        check_stop(should_stop)
        report(progress, 0.2, "warm-up step")
        step()  # creates optimizer state; the measured step is a steady-state one
        synchronize(torch, dev)
        check_stop(should_stop)
        report(progress, 0.5, "measured step")
        params = list(model.parameters())
        parameter_bytes = _storage_bytes(params)
        state_tensors = (
            [] if opt is None else [v for s in opt.state.values() for v in s.values() if torch.is_tensor(v)]
        )
        optimizer_state_bytes = _storage_bytes(state_tensors)
        if dev.startswith("cuda"):
            torch.cuda.synchronize(dev)
            torch.cuda.reset_peak_memory_stats(dev)
            baseline = int(torch.cuda.memory_allocated(dev))
            step()
            torch.cuda.synchronize(dev)
            peak = int(torch.cuda.max_memory_allocated(dev))
            method = "torch.cuda.max_memory_allocated (caching allocator, live tensors)"
            caveat = (
                "Counts bytes in live PyTorch tensors at the peak. Not included: memory the caching "
                "allocator holds but has not handed out (memory_reserved), the CUDA context, and "
                "allocations made outside PyTorch; nvidia-smi shows all of those."
            )
        else:
            baseline = _storage_bytes([*params, *model.buffers(), *state_tensors, inputs, labels])
            peak = baseline + _cpu_profiled_peak(torch, step)
            method = "torch.profiler memory events (CPU allocator) + bytes live before the step"
            caveat = (
                "Counts allocations made through PyTorch's CPU allocator during the step, on top of the "
                "parameters, optimizer state and inputs already live. Scratch memory that oneDNN/MKL take "
                "behind PyTorch's allocator and Python objects are not seen; the process's RSS is higher."
            )
        check_stop(should_stop)
        report(progress, 0.8, "timing one step")
        synchronize(torch, dev)
        t0 = time.perf_counter()
        step()
        synchronize(torch, dev)
        step_s = time.perf_counter() - t0
        n_params = sum(p.numel() for p in params)
        records.append(
            TransformerMemoryRecord(
                **ctx.common(),
                config=cfg.to_dict(),
                mode=mode,
                batch=batch,
                seq_len=seq_len,
                dtype=dtype,
                optimizer=optimizer if mode == "train" else "none",
                parameters=int(n_params),
                parameter_bytes=parameter_bytes,
                baseline_bytes=baseline,
                peak_bytes=peak,
                method=method,
                step_s=step_s,
                attention=attention,
                autocast_dtype=autocast_dtype or "",
                optimizer_state_bytes=optimizer_state_bytes,
                notes=caveat,
            )
        )
        report(progress, 1.0, "transformer memory done")
        return None

    return run_guarded("transformer memory", device, body)
