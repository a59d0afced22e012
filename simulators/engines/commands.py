"""The command that fits: for a GPU, a model, a target context and a number of users, each engine's
flags, found by searching the engine's own start-up function (never a formula typed twice), and the
lines the engine will print with them.

- vLLM 0.19: the smallest ``--gpu-memory-utilization`` (in steps of 0.01) whose KV pool holds
  ``users`` requests of ``--max-model-len`` tokens with the CUDA graphs still fitting; BF16 cache
  first, FP8 when BF16 cannot. Where no setting fits, the longest context that starts, found the
  same way and checked against vLLM's own "estimated maximum model length is N".
- SGLang 0.5.23: the smallest ``--mem-fraction-static`` (steps of 0.01, from SGLang's own minimum
  ``sglang_min_mem_fraction`` up to the default it computes for the GPU) whose token pool holds
  ``users × context`` tokens.
- llama.cpp: ``-c users × context -np users``; every layer on the GPU(s) with an f16 cache, else a
  q8_0 then q4_0 cache (with ``-fa on``), else the fewest expert layers on the CPU
  (``--n-cpu-moe``), else the most layers ``-ngl`` that start; checked against llama.cpp's own
  ``--fit`` projection (which keeps 1 GiB free per device).

Pure Python on ``simulators.engines``' public functions.
"""

from __future__ import annotations

import functools
import re
import shlex
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from simulators.engines.ledger import EngineError, GiB, Ledger, MiB
from simulators.engines.llamacpp import LLAMACPP_VERSION, LlamaCppStartup, llamacpp_startup
from simulators.engines.sglang import (
    SGLANG_VERSION,
    SglangStartup,
    sglang_log_lines,
    sglang_min_mem_fraction,
    sglang_startup,
)
from simulators.engines.vllm import VLLM_VERSION, VllmStartup, log_lines, vllm_startup

UTIL_STEPS = tuple(round(0.01 * i, 2) for i in range(5, 99))  # vLLM --gpu-memory-utilization 0.05-0.98
FRACTION_STEP = 0.01
VLLM_ESTIMATE = re.compile(r"estimated maximum model length is (\d+)")


@dataclass(frozen=True)
class EngineCommand:
    """One engine's command for the target, with what it will print and how it was checked."""

    engine: str  # "vllm", "sglang", "llama.cpp"
    version: str
    verdict: str  # "fits", "offloads", "does not fit"
    message: str  # one sentence: what the search found
    flags: tuple[tuple[str, str], ...]  # (flag, value) in the order they are written
    command: str  # the whole command line, to copy
    lines: tuple[str, ...]  # the memory lines the engine prints with these flags
    checks: tuple[str, ...] = ()  # the engine's own suggestion, set beside the search's answer
    ledger: Ledger | None = None
    startup: Any = field(default=None, compare=False)


def _smallest(values: Sequence[float], ok: Callable[[float], bool]) -> float | None:
    """The first of the sorted ``values`` for which ``ok`` holds (``ok`` monotone: false then true)."""
    lo, hi, best = 0, len(values) - 1, None
    while lo <= hi:
        mid = (lo + hi) // 2
        if ok(values[mid]):
            best, hi = values[mid], mid - 1
        else:
            lo = mid + 1
    return best


def _largest_int(lo: int, hi: int, ok: Callable[[int], bool]) -> int | None:
    """The largest integer in [lo, hi] for which ``ok`` holds (``ok`` monotone: true then false)."""
    best = None
    while lo <= hi:
        mid = (lo + hi) // 2
        if ok(mid):
            best, lo = mid, mid + 1
        else:
            hi = mid - 1
    return best


def _check_target(context: int, users: int) -> None:
    if isinstance(context, bool) or not isinstance(context, int) or context < 1:
        raise EngineError(f"context must be a whole number of tokens, at least 1 (got {context!r})")
    if isinstance(users, bool) or not isinstance(users, int) or users < 1:
        raise EngineError(f"users must be a whole number, at least 1 (got {users!r})")


def _render(program: Sequence[str], flags: Sequence[tuple[str, str]]) -> str:
    parts = [" ".join(program)]
    parts += [f"{flag} {shlex.quote(value)}" if value != "" else flag for flag, value in flags]
    return " \\\n  ".join(parts)


# ---------------------------------------------------------------------------------------------
# vLLM
# ---------------------------------------------------------------------------------------------


def vllm_longest_context(config: Mapping[str, Any], gpu: Any, *, ceiling: int, **kwargs: Any) -> int:
    """The longest ``max_model_len`` up to ``ceiling`` at which ``vllm_startup`` is not refused."""

    def starts(n: int) -> bool:
        return vllm_startup(config, gpu, max_model_len=n, **kwargs).verdict != "refused"

    return _largest_int(1, ceiling, starts) or 0


def vllm_command(
    config: Mapping[str, Any],
    gpu: Any,
    *,
    context: int,
    users: int,
    tp: int = 1,
    model: str = "MODEL",
    dtype: str | None = None,
    quantization: str | None = None,
    total_bytes: float | None = None,
    version: str = "0.19",
) -> EngineCommand:
    """vLLM's flags for ``users`` requests of ``context`` tokens on ``tp`` × ``gpu``, for the
    ledger of ``version`` ("0.19" or "0.21+", as ``vllm_startup`` takes it)."""
    _check_target(context, users)
    base: dict[str, Any] = {"tp": tp, "max_model_len": context, "max_num_seqs": users, "version": version}
    if dtype:
        base["dtype"] = dtype
    if quantization:
        base["quantization"] = quantization
    if total_bytes:
        base["total_bytes"] = total_bytes

    @functools.cache  # each (utilisation, cache type) once: the searches below ask again
    def start(util: float, kv: str) -> VllmStartup:
        return vllm_startup(config, gpu, gpu_memory_utilization=util, kv_cache_dtype=kv, **base)

    def serves(util: float, kv: str) -> bool:
        s = start(util, kv)
        return s.verdict != "refused" and s.max_concurrency >= users

    chosen: tuple[float, str] | None = None
    for kv in ("auto", "fp8"):
        # the most KV the GPU gives: the largest utilisation whose CUDA graphs still fit
        top = next((u for u in reversed(UTIL_STEPS) if start(u, kv).verdict == "fits"), None)
        if top is None or not serves(top, kv):
            continue
        util = _smallest([u for u in UTIL_STEPS if u <= top], lambda u, kv=kv: serves(u, kv))
        if util is not None:
            chosen = (util, kv)
            break
    program = ["vllm", "serve", model]
    if chosen is None:
        kv = "auto"
        top = next((u for u in reversed(UTIL_STEPS) if start(u, kv).verdict == "fits"), UTIL_STEPS[-1])
        s = start(top, kv)
        checks = []
        longest = vllm_longest_context(
            config, gpu, ceiling=context, gpu_memory_utilization=top, kv_cache_dtype=kv, **_no_len(base)
        )
        m = VLLM_ESTIMATE.search(s.message)
        if m:
            same = int(m.group(1)) == longest
            checks.append(
                f"vLLM's own refusal says 'the estimated maximum model length is {m.group(1)}'; the search"
                f" over vllm_startup finds {longest:,}" + (" — the same." if same else " — they differ.")
            )
        if s.verdict == "fits" or s.max_concurrency:
            fp8 = start(top, "fp8")
            reason = (
                f"at --gpu-memory-utilization {top} vLLM holds {s.max_concurrency:.2f} requests of"
                f" {context:,} tokens with a BF16 cache and {fp8.max_concurrency:.2f} with FP8, not {users}"
            )
        else:
            reason = s.message.rstrip(".")
        message = f"Does not fit {users} × {context:,} tokens on {tp} GPU(s): {reason}."
        if longest and longest < context:
            message += f" The longest context one request can have there is {longest:,} tokens."
        flags = _vllm_flags(top, context, kv, users, tp)
        return EngineCommand(
            "vllm",
            VLLM_VERSION if version == "0.19" else version,
            "does not fit",
            message,
            tuple(flags),
            _render(program, flags),
            tuple(log_lines(s)),
            tuple(checks),
            s.ledger(),
            s,
        )
    util, kv = chosen
    s = start(util, kv)
    flags = _vllm_flags(util, context, kv, users, tp)
    message = (
        f"--gpu-memory-utilization {util} is the smallest that holds {users} request(s) of {context:,}"
        f" tokens ({s.kv_tokens:,} tokens of KV cache, {s.max_concurrency:.2f}×)"
        + (" with an FP8 cache (BF16 does not hold them)" if kv == "fp8" else "")
        + "."
    )
    checks = (
        f"vLLM's maximum concurrency at these flags: {s.max_concurrency:.2f}× ≥ {users}; at"
        f" {round(util - FRACTION_STEP, 2)} it holds "
        f"{start(round(util - FRACTION_STEP, 2), kv).max_concurrency:.2f}×."
        if util > UTIL_STEPS[0]
        else f"vLLM's maximum concurrency at these flags: {s.max_concurrency:.2f}× ≥ {users}.",
    )
    return EngineCommand(
        "vllm",
        VLLM_VERSION if version == "0.19" else version,
        "fits",
        message,
        tuple(flags),
        _render(program, flags),
        tuple(log_lines(s)),
        checks,
        s.ledger(),
        s,
    )


def _no_len(base: Mapping[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in base.items() if k != "max_model_len"}


def _vllm_flags(util: float, context: int, kv: str, users: int, tp: int) -> list[tuple[str, str]]:
    flags = [
        ("--gpu-memory-utilization", f"{util:g}"),
        ("--max-model-len", str(context)),
        ("--kv-cache-dtype", kv),
        ("--max-num-seqs", str(users)),
    ]
    if tp > 1:
        flags.append(("--tensor-parallel-size", str(tp)))
    return flags


# ---------------------------------------------------------------------------------------------
# SGLang
# ---------------------------------------------------------------------------------------------


def sglang_command(
    config: Mapping[str, Any],
    gpu: Any,
    *,
    context: int,
    users: int,
    tp: int = 1,
    model: str = "MODEL",
    total_bytes: float | None = None,
) -> EngineCommand:
    """SGLang's flags for ``users`` requests of ``context`` tokens on ``tp`` × ``gpu``."""
    _check_target(context, users)
    need = context * users

    def start(fraction: float | None, kv: str) -> SglangStartup:
        return sglang_startup(
            config,
            gpu,
            tp=tp,
            mem_fraction_static=fraction,
            context_length=context,
            max_running_requests=users,
            kv_cache_dtype=kv,
            total_bytes=total_bytes,
        )

    def holds(s: SglangStartup) -> bool:
        # every request's tokens in the pool, and as many requests at once: a hybrid's state
        # cache caps max_running_requests (sglang.py: a fifth of the state slots)
        return s.max_total_num_tokens >= need and s.max_running_requests >= users

    default = start(None, "auto")
    if (
        default.verdict == "refused"
        and default.max_total_num_tokens == 0
        and "context_length" in default.message
    ):
        flags = _sglang_flags(default.mem_fraction_static, context, "auto", users, tp)
        return EngineCommand(
            "sglang",
            SGLANG_VERSION,
            "does not fit",
            default.message,
            tuple(flags),
            _render(["python", "-m", "sglang.launch_server", "--model-path", model], flags),
            tuple(sglang_log_lines(default)),
            (),
            default.ledger(),
            default,
        )
    top = default.mem_fraction_static
    minimum = sglang_min_mem_fraction(config, gpu, tp=tp, total_bytes=total_bytes)
    first = max(minimum, FRACTION_STEP)
    steps = [round(first + FRACTION_STEP * i, 2) for i in range(int((top - first) / FRACTION_STEP) + 2)]
    steps = sorted({min(round(f, 2), round(top, 3)) for f in steps if 0 < f < 1})
    chosen: tuple[float, str] | None = None
    for kv in ("auto", "fp8_e4m3"):
        if not holds(start(top, kv)):
            continue
        found = _smallest(steps, lambda f, kv=kv: holds(start(f, kv)))
        if found is not None:
            chosen = (found, kv)
            break
    program = ["python", "-m", "sglang.launch_server", "--model-path", model]
    checks = [
        f"SGLang's smallest fraction that starts at all (sglang_min_mem_fraction, as its refusal"
        f" prints it): {minimum:.3f}"
        + (" — no fraction starts it: the weights exceed the memory." if minimum >= 1 else "")
    ]
    beyond = None
    if chosen is None:
        # above SGLang's default the pool grows into the reserve it keeps for activations and graphs
        upper = [round(f, 2) for f in (0.01 * i for i in range(1, 100)) if top < round(f, 2) < 1]
        found = _smallest(upper, lambda f: holds(start(f, "auto")))
        if found is not None:
            chosen, beyond = (found, "auto"), top
    if chosen is None:
        s = start(top, "auto")
        flags = _sglang_flags(top, context, "auto", users, tp)
        if s.fits and s.max_total_num_tokens >= need:
            message = (
                f"Does not fit {users} × {context:,} tokens at once: the pool holds them"
                f" ({s.max_total_num_tokens:,} tokens) but SGLang runs at most"
                f" {s.max_running_requests:,} request(s) at a time, the cap its state cache sets,"
                " and no fraction below 1 lifts it to all of them."
            )
        elif s.fits:
            message = (
                f"Does not fit {users} × {context:,} tokens: at SGLang's default fraction {top:g}"
                f" (it keeps the rest for activations and CUDA graphs) the pool holds"
                f" {s.max_total_num_tokens:,} tokens, {s.max_total_num_tokens // context:,} such"
                " request(s), and no fraction below 1 holds them all."
            )
        else:
            message = f"Does not fit: {s.message}"
        return EngineCommand(
            "sglang",
            SGLANG_VERSION,
            "does not fit",
            message,
            tuple(flags),
            _render(program, flags),
            tuple(sglang_log_lines(s)),
            tuple(checks),
            s.ledger(),
            s,
        )
    fraction, kv = chosen
    s = start(fraction, kv)
    flags = _sglang_flags(fraction, context, kv, users, tp)
    if beyond is None:
        checks.append(
            f"{fraction:g} ≥ that minimum and ≤ SGLang's default for this GPU ({top:g}), which keeps"
            " the rest for activations and CUDA graphs."
        )
    else:
        checks.append(
            f"{fraction:g} is above SGLang's default for this GPU ({top:g}): the pool takes part of the"
            " reserve SGLang keeps for activations and CUDA graphs, so a long prefill or graph capture"
            " may run out of memory (tight)."
        )
    message = (
        f"--mem-fraction-static {fraction:g} is the smallest that holds {users} × {context:,} ="
        f" {need:,} tokens (max_total_num_tokens {s.max_total_num_tokens:,},"
        f" max_running_requests {s.max_running_requests:,})"
        + (" with an FP8 cache" if kv != "auto" else "")
        + "."
    )
    return EngineCommand(
        "sglang",
        SGLANG_VERSION,
        "fits" if beyond is None else "tight",
        message,
        tuple(flags),
        _render(program, flags),
        tuple(sglang_log_lines(s)),
        tuple(checks),
        s.ledger(),
        s,
    )


def _sglang_flags(fraction: float, context: int, kv: str, users: int, tp: int) -> list[tuple[str, str]]:
    flags = [
        ("--mem-fraction-static", f"{fraction:g}"),
        ("--context-length", str(context)),
        ("--max-running-requests", str(users)),
    ]
    if kv != "auto":
        flags.append(("--kv-cache-dtype", kv))
    if tp > 1:
        flags.append(("--tp", str(tp)))
    return flags


# ---------------------------------------------------------------------------------------------
# llama.cpp
# ---------------------------------------------------------------------------------------------


def llamacpp_log_lines(s: LlamaCppStartup) -> list[str]:
    """The memory lines llama.cpp prints for this start-up, worded as its build prints them
    (src/llama-model.cpp load_tensors, src/llama-kv-cache.cpp, src/llama-context.cpp), so that
    ``parse_llamacpp_log`` reads them back."""
    n_layers = s.hparams.n_layer + 1
    lines = [f"load_tensors: offloaded {s.offloaded_layers}/{n_layers} layers to GPU"]
    for d in s.devices:
        name = "CPU_Mapped" if d.total_bytes is None else d.name
        if d.model_bytes:
            lines.append(f"load_tensors: {name:>12} model buffer size = {d.model_bytes / MiB:9.2f} MiB")
    lines.append(f"llama_context: n_ctx         = {s.n_ctx}")
    lines.append(f"llama_context: n_ctx_seq     = {s.n_ctx_seq}")
    for d in s.devices:
        if d.kv_bytes:
            lines.append(f"llama_kv_cache: {d.name:>10} KV buffer size = {d.kv_bytes / MiB:9.2f} MiB")
    for d in s.devices:
        if d.total_bytes is not None and d.compute_bytes:
            lines.append(
                f"llama_context: {d.name:>10} compute buffer size = {d.compute_bytes / MiB:9.2f} MiB"
            )
    if s.verdict == "will not start":
        lines.append(f"(predicted) {s.message}")
    return lines


LLAMACPP_KV_STEPS = ("f16", "q8_0", "q4_0")


def llamacpp_command(
    config: Mapping[str, Any],
    gpu: Any,
    *,
    context: int,
    users: int,
    n_gpus: int = 1,
    quant: str = "Q4_K_M",
    model: str = "MODEL.gguf",
    total_bytes: float | None = None,
) -> EngineCommand:
    """llama-server's flags for ``users`` slots of ``context`` tokens on ``n_gpus`` × ``gpu``."""
    _check_target(context, users)
    n_ctx = context * users

    def start(kv: str, ngl: int, n_cpu_moe: int = 0, fit: bool = False) -> LlamaCppStartup:
        return placed(kv, ngl, n_cpu_moe, fit)  # the defaults filled in: one cache key per placement

    @functools.cache  # each placement once: the searches below ask again
    def placed(kv: str, ngl: int, n_cpu_moe: int, fit: bool) -> LlamaCppStartup:
        return llamacpp_startup(
            config,
            gpu,
            quant=quant,
            n_ctx=n_ctx,
            n_gpu_layers=ngl,
            n_parallel=users,
            cache_type_k=kv,
            cache_type_v=kv,
            flash_attn=True,
            n_cpu_moe=n_cpu_moe,
            n_gpus=n_gpus,
            total_bytes=total_bytes,
            fit=fit,
        )

    full = start("f16", -1)
    n_layers = full.hparams.n_layer + 1
    chosen: tuple[str, int, int] | None = None
    for kv in LLAMACPP_KV_STEPS:
        if start(kv, -1).verdict == "fits":
            chosen = (kv, -1, 0)
            break
    n_expert = full.hparams.n_expert
    n_layer = full.hparams.n_layer
    for kv in LLAMACPP_KV_STEPS[:2] if chosen is None and n_expert > 1 else ():
        # the fewest layers whose experts stay on the CPU (--n-cpu-moe counts from the first layer)
        on_gpu = _largest_int(0, n_layer, lambda k, kv=kv: start(kv, -1, n_layer - k).verdict == "fits")
        if on_gpu is not None:
            chosen = (kv, -1, n_layer - on_gpu)
            break
    verdict = "fits"
    if chosen is None:
        ngl = _largest_int(0, n_layers, lambda n: start("f16", n).verdict != "will not start")
        chosen = ("f16", ngl if ngl is not None else 0, 0)
        verdict = "offloads"
    kv, ngl, n_cpu_moe = chosen
    s = start(kv, ngl, n_cpu_moe)
    if s.verdict == "will not start":
        verdict = "does not fit"
    flags: list[tuple[str, str]] = [
        ("-m", model),
        ("-c", str(s.n_ctx)),
        ("-np", str(users)),
        ("-ngl", str(n_layers if ngl < 0 else ngl)),
        ("-fa", "on"),
        ("-ctk", kv),
        ("-ctv", kv),
    ]
    if n_cpu_moe:
        flags.append(("--n-cpu-moe", str(n_cpu_moe)))
    if n_gpus > 1:
        flags.append(("-ts", ",".join(["1"] * n_gpus)))
    gpus = s.gpu_devices
    used = max((d.used_bytes for d in gpus), default=0.0)
    if verdict == "fits":
        message = (
            f"Every layer on the GPU{'s' if n_gpus > 1 else ''} with a {kv} cache"
            + (f" and the experts of {n_cpu_moe} layer(s) on the CPU" if n_cpu_moe else "")
            + f": {users} slot(s) of {s.n_ctx_seq:,} tokens, {used / GiB:.2f} GiB on the fullest GPU."
        )
    elif verdict == "offloads":
        message = (
            f"Not every layer fits: -ngl {ngl} puts {s.offloaded_layers} of {n_layers} layers on the GPU"
            f" and {n_layers - s.offloaded_layers} on the CPU. {s.message}."
        )
    else:
        message = f"Does not start even with no layer on the GPU: {s.message}"
    fitted = start("f16", -1, 0, fit=True)
    checks = [
        f"llama.cpp's own --fit projection (default -ngl with f16, 1 GiB kept free per GPU):"
        f" {fitted.offloaded_layers}/{n_layers} layers on the GPU"
        + (f"; these flags put {s.offloaded_layers}/{n_layers}." if ngl >= 0 else ".")
    ]
    try:
        ledger = s.ledger()
    except EngineError:
        ledger = None
    return EngineCommand(
        "llama.cpp",
        LLAMACPP_VERSION,
        verdict,
        message,
        tuple(flags),
        _render(["llama-server"], flags),
        tuple(llamacpp_log_lines(s)),
        tuple(checks),
        ledger,
        s,
    )


def commands_that_fit(
    config: Mapping[str, Any],
    gpu: Any,
    *,
    context: int,
    users: int,
    n_gpus: int = 1,
    quant: str = "Q4_K_M",
    model: str = "MODEL",
    total_bytes: float | None = None,
    vllm_version: str = "0.19",
) -> dict[str, EngineCommand | str]:
    """Each engine's command for the target, or the ``EngineError`` text that refuses it."""
    out: dict[str, EngineCommand | str] = {}
    jobs: dict[str, Callable[[], EngineCommand]] = {
        "vllm": lambda: vllm_command(
            config,
            gpu,
            context=context,
            users=users,
            tp=n_gpus,
            model=model,
            total_bytes=total_bytes,
            version=vllm_version,
        ),
        "sglang": lambda: sglang_command(
            config, gpu, context=context, users=users, tp=n_gpus, model=model, total_bytes=total_bytes
        ),
        "llama.cpp": lambda: llamacpp_command(
            config,
            gpu,
            context=context,
            users=users,
            n_gpus=n_gpus,
            quant=quant,
            model=f"{model.split('/')[-1]}-{quant}.gguf",
            total_bytes=total_bytes,
        ),
    }
    for engine, job in jobs.items():
        try:
            out[engine] = job()
        except (EngineError, ValueError) as exc:
            out[engine] = str(exc)
    return out
