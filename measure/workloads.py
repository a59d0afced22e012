"""The measurement workloads: memory bandwidth, matmul, host<->device copies, launch overhead,
quantization error. (The transformer-step memory is in measure.transformer, the all-reduce in
measure.collectives.)

Every workload takes plain parameters plus optional `progress(fraction, message)` and
`should_stop()` callbacks, takes the server-wide measurement lock, and returns an `Outcome`:
the records it finished and a Status. Missing torch, an unusable device, out-of-memory and
cancellation come back as a Status, never as an exception.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from measure import status as st
from measure.device import device_name, import_torch, resolve_device
from measure.env import available_memory_bytes, cache_level_for, cpu_info
from measure.lock import busy_info, measurement_slot
from measure.results import (
    BandwidthRecord,
    CopyRecord,
    LaunchRecord,
    MatmulRecord,
    QuantizationRecord,
    Record,
)
from measure.timing import (
    Cancelled,
    ProgressFn,
    StopFn,
    TimingStats,
    calibrate_inner_loops,
    check_stop,
    l2_flusher,
    report,
    synchronize,
    time_op,
)

KiB = 1024
MiB = 1024**2
GiB = 1024**3

# ---------------------------------------------------------------------------------------------
# Shared plumbing


@dataclass(frozen=True)
class Context:
    """What every record needs to say about where it was measured."""

    torch: Any
    device: str
    device_name: str
    threads: int
    torch_version: str

    def common(self) -> dict[str, Any]:
        return {
            "device": self.device,
            "device_name": self.device_name,
            "torch_version": self.torch_version,
            "threads": self.threads,
        }


def prepare(device: str) -> tuple[Context | None, st.Status]:
    """Import torch and check the device; (None, status) when either is unusable."""
    torch, status = import_torch()
    if torch is None:
        return None, status
    resolved, status = resolve_device(torch, device)
    if resolved is None:
        return None, status
    return (
        Context(
            torch=torch,
            device=resolved,
            device_name=device_name(torch, resolved),
            threads=int(torch.get_num_threads()),
            torch_version=str(torch.__version__),
        ),
        st.ok(),
    )


def is_oom(exc: BaseException) -> bool:
    """True for out-of-memory on any device: torch.OutOfMemoryError, MemoryError, or the CPU
    allocator's "can't allocate memory" RuntimeError."""
    if isinstance(exc, MemoryError):
        return True
    if type(exc).__name__ == "OutOfMemoryError":
        return True
    text = str(exc).lower()
    return isinstance(exc, RuntimeError) and (
        "out of memory" in text or "can't allocate memory" in text or "not enough memory" in text
    )


def run_guarded(
    label: str,
    device: str,
    body: Callable[[Context, list[Record]], st.Status | None],
) -> st.Outcome:
    """Run `body(ctx, records)` under the measurement lock, turning every failure into a Status.

    `body` appends records as it goes, so a cancelled or out-of-memory run keeps what it finished;
    it may return a Status to report a partial or skipped run.
    """
    with measurement_slot(label) as got:
        if not got:
            info = busy_info()
            return st.Outcome((), st.busy(info["label"] if info else ""))
        ctx, status = prepare(device)
        if ctx is None:
            return st.Outcome((), status)
        records: list[Record] = []
        failure: st.Status | None = None
        try:
            result = body(ctx, records)
        except Cancelled:
            failure = st.cancelled(label)
        except Exception as exc:
            failure = st.oom(label, exc) if is_oom(exc) else st.error(label, exc)
        if failure is not None:
            # Outside the except block, so the traceback no longer pins the failed buffers.
            _free_device_memory(ctx)
            return st.Outcome(tuple(records), failure)
        return st.Outcome(tuple(records), result or st.ok(f"{len(records)} result(s)"))


def _free_device_memory(ctx: Context) -> None:
    import gc

    gc.collect()
    try:
        if ctx.device.startswith("cuda"):
            ctx.torch.cuda.empty_cache()
        elif ctx.device == "mps":
            ctx.torch.mps.empty_cache()
    except Exception:
        pass


def free_memory_bytes(ctx: Context) -> int | None:
    """Memory a new allocation could get now on ctx.device (bytes), or None if unknown."""
    torch = ctx.torch
    if ctx.device.startswith("cuda"):
        free, _total = torch.cuda.mem_get_info(ctx.device)
        return int(free)
    if ctx.device == "mps":
        try:
            return int(torch.mps.recommended_max_memory()) - int(torch.mps.driver_allocated_memory())
        except Exception:
            return available_memory_bytes()
    return available_memory_bytes()


def dtype_of(torch: Any, name: str) -> Any:
    dtype = getattr(torch, name, None)
    if dtype is None or not isinstance(dtype, torch.dtype):
        raise ValueError(f"torch has no dtype {name!r}")
    return dtype


def _sweep(lo: int, hi: int, factor: int) -> list[int]:
    sizes = []
    size = lo
    while size <= hi:
        sizes.append(size)
        size *= factor
    return sizes


# ---------------------------------------------------------------------------------------------
# Memory bandwidth

BANDWIDTH_OPS = {"copy": 2, "triad": 3}  # arrays touched per element (STREAM byte counting)


def default_bandwidth_sizes(ctx: Context, quick: bool, max_bytes: int | None = None) -> list[int]:
    """Working sets from 4 KiB up to a cap: x2 steps (x4 when quick).

    Cap: `max_bytes` if given, else 64 MiB / 1 GiB on a CPU (quick / full; 1 GiB is far past
    any CPU's last-level cache) and 256 MiB / 4 GiB on a GPU, and never more than a quarter of
    the memory free now.
    """
    if max_bytes is None:
        caps = {"cpu": (64 * MiB, GiB)}.get(ctx.device, (256 * MiB, 4 * GiB))
        max_bytes = caps[0] if quick else caps[1]
    free = free_memory_bytes(ctx)
    if free:
        max_bytes = min(max_bytes, free // 4)
    return _sweep(4 * KiB, max(max_bytes, 4 * KiB), 4 if quick else 2)


def bandwidth(
    device: str = "cpu",
    *,
    ops: Sequence[str] = ("copy", "triad"),
    sizes_bytes: Sequence[int] | None = None,
    max_bytes: int | None = None,
    dtype: str = "float32",
    repeats: int | None = None,
    quick: bool = False,
    target_sample_s: float | None = None,
    progress: ProgressFn | None = None,
    should_stop: StopFn | None = None,
) -> st.Outcome:
    """STREAM-style copy (a = b) and triad (a = b + s*c) over working sets from KB to GB.

    `sizes_bytes` are working sets (all arrays together); each array gets size / (2 or 3)
    bytes. Bandwidth counts 2 (copy) or 3 (triad) words per element and no write-allocate
    traffic, as McCalpin's STREAM does (the `bytes[4]` array of stream.c), so bytes counted
    equal the working set. Caches are warm on purpose: repeats reuse the same arrays, which is
    what makes the cache knees (L1/L2/L3/DRAM, or L2/device memory) visible. Each sample runs
    the operation enough times to last `target_sample_s`; small sizes are then dominated by the
    per-operation cost of launching a torch op, which the launch-overhead workload measures.
    Returns BandwidthRecords.
    """
    unknown = [op for op in ops if op not in BANDWIDTH_OPS]
    if unknown:
        return st.Outcome((), st.unsupported(f"Unknown bandwidth op(s) {unknown}; use copy and triad."))

    def body(ctx: Context, records: list[Record]) -> st.Status | None:
        torch = ctx.torch
        torch_dtype = dtype_of(torch, dtype)
        element = torch.empty((), dtype=torch_dtype).element_size()
        sizes = list(sizes_bytes) if sizes_bytes else default_bandwidth_sizes(ctx, quick, max_bytes)
        n_repeats = repeats or (5 if quick else 11)
        sample_s = target_sample_s or (0.002 if quick else 0.005)
        cpu = cpu_info() if ctx.device == "cpu" else None
        l2_bytes = None
        if ctx.device.startswith("cuda"):
            l2_bytes = int(torch.cuda.get_device_properties(ctx.device).L2_cache_size)
        steps = len(sizes) * len(ops)
        done = 0
        skipped = []
        for size in sizes:
            for op in ops:
                check_stop(should_stop)
                arrays = BANDWIDTH_OPS[op]
                elements = max(size // (arrays * element), 16)
                working_set = elements * arrays * element
                free = free_memory_bytes(ctx)
                if free is not None and working_set > free * 0.8:
                    skipped.append(working_set)
                    done += 1
                    continue
                report(progress, done / steps, f"{op} {working_set / MiB:.3g} MiB")
                a = torch.zeros(elements, dtype=torch_dtype, device=ctx.device)
                b = torch.randn(elements, device=ctx.device).to(torch_dtype)
                if op == "copy":

                    def fn(a: Any = a, b: Any = b) -> None:
                        a.copy_(b)

                else:
                    c = torch.randn(elements, device=ctx.device).to(torch_dtype)

                    def fn(a: Any = a, b: Any = b, c: Any = c) -> None:
                        torch.add(b, c, alpha=3.0, out=a)

                inner = calibrate_inner_loops(torch, fn, device=ctx.device, target_sample_s=sample_s)
                stats = time_op(
                    torch,
                    fn,
                    device=ctx.device,
                    repeats=n_repeats,
                    warmup=2,
                    inner_loops=inner,
                    should_stop=should_stop,
                )
                if cpu is not None:
                    hint = cache_level_for(working_set, cpu, ctx.threads)
                elif l2_bytes:
                    hint = "L2" if working_set <= l2_bytes else "device memory"
                else:
                    hint = "unified memory" if ctx.device == "mps" else ""
                fields = stats.fields()
                records.append(
                    BandwidthRecord(
                        **ctx.common(),
                        **fields,
                        warm_cache=True,
                        l2_flushed=False,
                        op=op,
                        bytes=working_set,
                        elements=elements,
                        dtype=dtype,
                        gb_per_s=working_set / stats.median_s / 1e9,
                        bytes_per_s=working_set / stats.median_s,
                        best_gb_per_s=working_set / stats.min_s / 1e9,
                        cache_hint=hint,
                    )
                )
                del a, b, fn
                done += 1
        report(progress, 1.0, "bandwidth done")
        if skipped:
            return st.ok(
                f"{len(records)} result(s); sizes from {min(skipped) / MiB:.0f} MiB skipped "
                "(not enough free memory)"
            )
        return None

    return run_guarded("memory bandwidth", device, body)


# ---------------------------------------------------------------------------------------------
# Matmul

MatmulShape = tuple[int, int, int]


def default_matmul_shapes(device: str, quick: bool) -> list[tuple[str, MatmulShape]]:
    """(label, (m, n, k)): square sizes, then skinny ones (small m: the decode-like, memory-bound
    end of the roofline)."""
    if device == "cpu":
        square = [256, 512, 1024] if quick else [256, 512, 1024, 2048]
        wide = 1024 if quick else 2048
        skinny_m = [1, 16] if quick else [1, 16, 128]
    else:
        square = [1024, 2048, 4096] if quick else [1024, 2048, 4096, 8192]
        wide = 4096 if quick else 8192
        skinny_m = [1, 16, 128] if quick else [1, 16, 128, 512]
    shapes = [("square", (s, s, s)) for s in square]
    shapes += [("skinny", (m, wide, wide)) for m in skinny_m]
    return shapes


def default_matmul_dtypes(torch: Any, device: str, quick: bool) -> list[str]:
    """float32 and bfloat16 everywhere; float16 unless quick on CPU; on CUDA also tf32 (from
    compute capability 8.0, Ampere) and float8_e4m3fn (from 8.9, Ada/Hopper, via torch._scaled_mm)."""
    if device == "cpu":
        return ["float32", "bfloat16"] if quick else ["float32", "bfloat16", "float16"]
    if device == "mps":
        return ["float32", "float16", "bfloat16"]
    major, minor = torch.cuda.get_device_capability(device)
    dtypes = ["float32"]
    if major >= 8:
        dtypes.append("tf32")
    dtypes += ["bfloat16", "float16"]
    if (major, minor) >= (8, 9) and hasattr(torch, "_scaled_mm"):
        dtypes.append("float8_e4m3fn")
    return dtypes


class _Fp32Precision:
    """Set CUDA fp32 matmul math to "ieee" or "tf32" for a block, then restore it.

    torch 2.9+ has two switches (legacy `allow_tf32`, new `fp32_precision`) and raises when a
    program mixes them, so this uses whichever the process already uses: the legacy one unless
    reading it raises (the new one was set to "tf32").
    """

    def __init__(self, torch: Any, mode: str) -> None:
        self.matmul = torch.backends.cuda.matmul
        self.mode = mode
        self.legacy = True
        self.saved: Any = None

    def __enter__(self) -> None:
        try:
            self.saved = self.matmul.allow_tf32
            self.matmul.allow_tf32 = self.mode == "tf32"
        except RuntimeError:
            self.legacy = False
            self.saved = self.matmul.fp32_precision
            self.matmul.fp32_precision = self.mode

    def __exit__(self, *_: Any) -> None:
        if self.legacy:
            self.matmul.allow_tf32 = self.saved
        else:
            self.matmul.fp32_precision = self.saved


def _matmul_operands(ctx: Context, dtype: str, m: int, n: int, k: int) -> tuple[Callable[[], Any], int, int]:
    """(fn computing one product, input element bytes, output element bytes)."""
    torch = ctx.torch
    dev = ctx.device
    if dtype == "float8_e4m3fn":
        a = torch.randn(m, k, device=dev).to(torch.float8_e4m3fn)
        # _scaled_mm wants the second operand column-major: build n x k and transpose.
        b = torch.randn(n, k, device=dev).to(torch.float8_e4m3fn).t()
        scale = torch.ones((), device=dev, dtype=torch.float32)

        def fp8() -> Any:
            return torch._scaled_mm(a, b, scale_a=scale, scale_b=scale, out_dtype=torch.bfloat16)

        return fp8, 1, 2
    torch_dtype = torch.float32 if dtype == "tf32" else dtype_of(torch, dtype)
    a = torch.randn(m, k, device=dev).to(torch_dtype)
    b = torch.randn(k, n, device=dev).to(torch_dtype)
    out = torch.empty(m, n, device=dev, dtype=torch_dtype)

    def mm() -> Any:
        return torch.matmul(a, b, out=out)

    size = a.element_size()
    return mm, size, size


def matmul(
    device: str = "cpu",
    *,
    shapes: Sequence[MatmulShape] | None = None,
    dtypes: Sequence[str] | None = None,
    repeats: int | None = None,
    quick: bool = False,
    max_call_s: float | None = None,
    progress: ProgressFn | None = None,
    should_stop: StopFn | None = None,
) -> st.Outcome:
    """Achieved FLOP/s of C = A @ B over square and skinny shapes and several dtypes.

    flops = 2mnk; ideal bytes = (mk + kn) x input size + mn x output size (each matrix moved
    once), so intensity_flop_per_byte = flops / bytes places each point on the roofline.
    Inputs are normally distributed (constant data draws less power and flatters the result).
    On CUDA each repeat is one product timed with events after an L2 flush (cold cache), as
    in mamf-finder; on CPU a sample repeats the product to last ~10 ms. "tf32" is float32
    storage with TF32 tensor-core math enabled for the block. Unsupported dtypes are skipped
    with a note, and so is a shape whose first product takes longer than `max_call_s`
    (default 1 s off CUDA: float16 on a CPU without fp16 arithmetic runs at ~1 GFLOP/s).
    Returns MatmulRecords.
    """

    def body(ctx: Context, records: list[Record]) -> st.Status | None:
        torch = ctx.torch
        dev = ctx.device
        plan = [("custom", s) for s in shapes] if shapes else default_matmul_shapes(dev, quick)
        kinds = list(dtypes) if dtypes else default_matmul_dtypes(torch, dev, quick)
        n_repeats = repeats or (5 if quick else 10)
        call_limit_s = max_call_s if max_call_s is not None else (2.0 if dev.startswith("cuda") else 1.0)
        flush = l2_flusher(torch, dev)
        skipped: list[str] = []
        steps = max(len(plan) * len(kinds), 1)
        done = 0
        for dtype in kinds:
            check_stop(should_stop)
            precision = (
                _Fp32Precision(torch, "tf32" if dtype == "tf32" else "ieee")
                if dev.startswith("cuda")
                else None
            )
            if precision:
                precision.__enter__()
            try:
                try:
                    probe, _, _ = _matmul_operands(ctx, dtype, 32, 32, 32)
                    probe()
                except Exception as exc:
                    if is_oom(exc):
                        raise
                    skipped.append(f"{dtype} ({type(exc).__name__}: {str(exc)[:80]})")
                    done += len(plan)
                    continue
                best_rate = 0.0
                for label, (m, n, k) in sorted(plan, key=lambda item: math.prod(item[1])):
                    check_stop(should_stop)
                    done += 1
                    if dtype == "float8_e4m3fn" and (m % 16 or n % 16 or k % 16):
                        continue  # _scaled_mm needs dimensions divisible by 16
                    in_size, out_size = _element_sizes(torch, dtype)
                    need = (m * k + k * n) * max(in_size, 4) + m * n * out_size
                    free = free_memory_bytes(ctx)
                    if free is not None and need > free // 4:
                        skipped.append(f"{dtype} {m}x{n}x{k} (needs {need / GiB:.1f} GiB)")
                        continue
                    report(progress, (done - 1) / steps, f"matmul {dtype} {m}x{n}x{k}")
                    fn, in_size, out_size = _matmul_operands(ctx, dtype, m, n, k)
                    flops = 2 * m * n * k
                    ideal_bytes = (m * k + k * n) * in_size + m * n * out_size
                    # Off CUDA, predict from the best rate this dtype reached so far, so a slow
                    # dtype (fp16 on most CPUs) is skipped before a product that would take minutes.
                    # (On CUDA a first call includes lazy kernel loading, so rates there mislead.)
                    if best_rate and not dev.startswith("cuda") and flops / best_rate > call_limit_s:
                        skipped.append(
                            f"{dtype} {m}x{n}x{k} (would take ~{flops / best_rate:.2g} s per product at "
                            f"{best_rate / 1e9:.2g} GFLOP/s)"
                        )
                        del fn
                        continue
                    first_s = _one_call_s(torch, fn, dev)
                    best_rate = max(best_rate, flops / first_s)
                    if first_s > call_limit_s:
                        skipped.append(f"{dtype} {m}x{n}x{k} (one product took {first_s:.2g} s)")
                        del fn
                        continue
                    if dev.startswith("cuda"):
                        stats = time_op(
                            torch,
                            fn,
                            device=dev,
                            repeats=n_repeats,
                            warmup=10,
                            flush=flush,
                            should_stop=should_stop,
                        )
                    else:
                        inner = calibrate_inner_loops(
                            torch, fn, device=dev, target_sample_s=0.01, max_inner_loops=1000
                        )
                        stats = time_op(
                            torch,
                            fn,
                            device=dev,
                            repeats=n_repeats,
                            warmup=2,
                            inner_loops=inner,
                            should_stop=should_stop,
                        )
                    records.append(
                        MatmulRecord(
                            **ctx.common(),
                            **stats.fields(),
                            warm_cache=flush is None,
                            l2_flushed=flush is not None,
                            dtype=dtype,
                            m=m,
                            n=n,
                            k=k,
                            tflops=flops / stats.median_s / 1e12,
                            flops_per_s=flops / stats.median_s,
                            flops=flops,
                            bytes=ideal_bytes,
                            intensity_flop_per_byte=flops / ideal_bytes,
                            best_tflops=flops / stats.min_s / 1e12,
                            shape=label,
                            math=_math_label(dev, dtype),
                        )
                    )
                    del fn
            finally:
                if precision:
                    precision.__exit__()
        report(progress, 1.0, "matmul done")
        if skipped:
            return st.ok(f"{len(records)} result(s); skipped: " + "; ".join(skipped))
        return None

    return run_guarded("matmul", device, body)


def _one_call_s(torch: Any, fn: Callable[[], Any], device: str) -> float:
    """Wall time of one call after synchronising (includes one-time setup: an upper bound)."""
    synchronize(torch, device)
    t0 = time.perf_counter()
    fn()
    synchronize(torch, device)
    return time.perf_counter() - t0


def _element_sizes(torch: Any, dtype: str) -> tuple[int, int]:
    """(input, output) bytes per element of a product in `dtype`."""
    if dtype == "float8_e4m3fn":
        return 1, 2  # fp8 inputs, bf16 output
    torch_dtype = torch.float32 if dtype == "tf32" else dtype_of(torch, dtype)
    size = torch.empty((), dtype=torch_dtype).element_size()
    return size, size


def _math_label(device: str, dtype: str) -> str:
    if dtype == "tf32":
        return "tf32"
    if dtype == "float32":
        return "ieee fp32" if device.startswith("cuda") else "fp32"
    if dtype.startswith("float8"):
        return "fp8 inputs, bf16 output (torch._scaled_mm)"
    return dtype


# ---------------------------------------------------------------------------------------------
# Host <-> device copies


def host_device_copy(
    device: str = "cuda",
    *,
    sizes_bytes: Sequence[int] | None = None,
    repeats: int | None = None,
    quick: bool = False,
    progress: ProgressFn | None = None,
    should_stop: StopFn | None = None,
) -> st.Outcome:
    """Host-to-device and device-to-host copy bandwidth from pageable and from pinned host memory.

    "Host to GPU copies are much faster when they originate from pinned (page-locked) memory"
    (PyTorch docs, CUDA semantics, "Use pinned memory buffers"), and non_blocking=True makes a
    copy asynchronous only when the host side is pinned (Tensor.cuda docs). Each sample:
    synchronize, copy_(non_blocking=True), synchronize, on the host clock, so both kinds are
    timed the way a program waits for them. CUDA only. Returns CopyRecords.
    """
    if not device.startswith("cuda"):
        return st.Outcome(
            (),
            st.unsupported(
                "Pageable vs pinned copies are a discrete-GPU topic (the PCIe or NVLink-C2C link); "
                "they are measured on CUDA devices only."
            ),
        )

    def body(ctx: Context, records: list[Record]) -> st.Status | None:
        torch = ctx.torch
        sizes = (
            list(sizes_bytes)
            if sizes_bytes
            else ([MiB, 16 * MiB, 64 * MiB] if quick else [MiB, 16 * MiB, 64 * MiB, 256 * MiB])
        )
        n_repeats = repeats or (5 if quick else 10)
        plan = [(size, d, mem) for size in sizes for d in ("h2d", "d2h") for mem in ("pageable", "pinned")]
        for i, (size, direction, memory) in enumerate(plan):
            check_stop(should_stop)
            report(progress, i / len(plan), f"{direction} {memory} {size / MiB:.0f} MiB")
            host = torch.empty(size, dtype=torch.uint8)
            if memory == "pinned":
                host = host.pin_memory()
            host.fill_(1)
            dev_buf = torch.empty(size, dtype=torch.uint8, device=ctx.device)
            if direction == "h2d":

                def fn(dst: Any = dev_buf, src: Any = host) -> None:
                    dst.copy_(src, non_blocking=True)

            else:

                def fn(dst: Any = host, src: Any = dev_buf) -> None:
                    dst.copy_(src, non_blocking=True)

            stats = _time_host_clock(torch, fn, ctx.device, n_repeats, should_stop)
            records.append(
                CopyRecord(
                    **ctx.common(),
                    **stats.fields(),
                    warm_cache=True,
                    direction=direction,
                    host_memory=memory,
                    bytes=size,
                    gb_per_s=size / stats.median_s / 1e9,
                    bytes_per_s=size / stats.median_s,
                )
            )
            del host, dev_buf, fn
        report(progress, 1.0, "copies done")
        return None

    return run_guarded("host-device copies", device, body)


def _time_host_clock(
    torch: Any, fn: Callable[[], Any], device: str, repeats: int, should_stop: StopFn | None
) -> Any:
    for _ in range(2):
        fn()
    synchronize(torch, device)
    samples = []
    for _ in range(repeats):
        check_stop(should_stop)
        synchronize(torch, device)
        t0 = time.perf_counter()
        fn()
        synchronize(torch, device)
        samples.append(time.perf_counter() - t0)
    return TimingStats.from_samples(samples, 1, "perf_counter")


# ---------------------------------------------------------------------------------------------
# Launch overhead


def launch_overhead(
    device: str = "cpu",
    *,
    min_run_time_s: float | None = None,
    graph_ops: int = 100,
    quick: bool = False,
    progress: ProgressFn | None = None,
    should_stop: StopFn | None = None,
) -> st.Outcome:
    """Tiny operations per second: `x.add_(1)` on a one-element tensor, so the time is all
    per-operation overhead (Python, dispatcher, and on a GPU the kernel launch).

    Eager mode is timed with torch.utils.benchmark.Timer.blocked_autorange (which synchronises
    CUDA around each block and reports a median over blocks). On CUDA the same `graph_ops`
    additions are also captured once in a CUDA Graph and replayed (torch.cuda.graph, PyTorch
    "CUDA Graphs" docs), which removes per-launch CPU work. Returns LaunchRecords.
    """

    def body(ctx: Context, records: list[Record]) -> st.Status | None:
        torch = ctx.torch
        from torch.utils.benchmark import Timer

        run_time = min_run_time_s or (0.2 if quick else 1.0)
        x = torch.zeros(1, device=ctx.device)
        report(progress, 0.0, "eager tiny ops")

        def stop_callback(_number: int, _time: float) -> None:
            check_stop(should_stop)

        kwargs: dict[str, Any] = {}
        if ctx.device == "mps":
            # Timer's default clock synchronises CUDA only; MPS work is asynchronous too.
            def mps_clock() -> float:
                torch.mps.synchronize()
                return time.perf_counter()

            kwargs["timer"] = mps_clock
        timer = Timer(stmt="x.add_(1)", globals={"x": x}, num_threads=ctx.threads, **kwargs)
        measurement = timer.blocked_autorange(callback=stop_callback, min_run_time=run_time)
        records.append(
            _launch_record(
                ctx, measurement.times, measurement.number_per_run, "eager", "torch.utils.benchmark"
            )
        )
        if ctx.device.startswith("cuda"):
            check_stop(should_stop)
            report(progress, 0.5, "CUDA Graph replay")
            side = torch.cuda.Stream()
            side.wait_stream(torch.cuda.current_stream())
            with torch.cuda.stream(side):  # warm up on a side stream before capture, as the docs do
                for _ in range(3):
                    x.add_(1)
            torch.cuda.current_stream().wait_stream(side)
            graph = torch.cuda.CUDAGraph()
            with torch.cuda.graph(graph):
                for _ in range(graph_ops):
                    x.add_(1)
            stats = time_op(
                torch, graph.replay, device=ctx.device, repeats=20, warmup=3, should_stop=should_stop
            )
            per_op = [s / graph_ops for s in (stats.min_s, stats.p10_s, stats.median_s, stats.p90_s)]
            records.append(
                LaunchRecord(
                    **ctx.common(),
                    median_s=per_op[2],
                    p10_s=per_op[1],
                    p90_s=per_op[3],
                    min_s=per_op[0],
                    repeats=stats.repeats,
                    inner_loops=graph_ops,
                    timer="cuda_event",
                    op="add_ on a 1-element tensor",
                    mode="cuda_graph",
                    ops_per_s=1.0 / per_op[2],
                )
            )
        report(progress, 1.0, "launch overhead done")
        return None

    return run_guarded("launch overhead", device, body)


def _launch_record(ctx: Context, times: Sequence[float], number: int, mode: str, timer: str) -> LaunchRecord:
    stats = TimingStats.from_samples(times, number, timer)
    return LaunchRecord(
        **ctx.common(),
        **stats.fields(),
        op="add_ on a 1-element tensor",
        mode=mode,
        ops_per_s=1.0 / stats.median_s,
    )


# ---------------------------------------------------------------------------------------------
# Quantization error on a real tensor

# Floating-point formats: mantissa bits and largest finite value (torch.finfo in torch 2.13).
FLOAT_FORMATS = {
    "bfloat16": {"mantissa_bits": 7, "bits": 16},
    "float16": {"mantissa_bits": 10, "bits": 16},
    "float8_e4m3fn": {"mantissa_bits": 3, "bits": 8},
    "float8_e5m2": {"mantissa_bits": 2, "bits": 8},
}
DEFAULT_QUANT_FORMATS = (
    "bfloat16",
    "float16",
    "float8_e4m3fn",
    "float8_e5m2",
    "int8_per_tensor",
    "int8_per_channel",
    "int4_block32",
    "int4_block64",
    "int4_block128",
)

# Round-to-nearest float with m mantissa bits, data inside the normal range:
# SQNR ~ 6.02 m + 13.5 dB (project reference notes, simulator-anchors.md section 4.1).
FLOAT_SQNR_OFFSET_DB = 13.5

# The same scheme in the simulator (simulators.quantization, numpy), for "measured vs simulated".
SIMULATOR_SCHEME = {
    "bfloat16": ("bf16", "none", None),
    "float16": ("fp16", "none", None),
    "float8_e4m3fn": ("fp8_e4m3", "tensor", None),
    "float8_e5m2": ("fp8_e5m2", "tensor", None),
    "int8_per_tensor": ("int8", "tensor", None),
    "int8_per_channel": ("int8", "channel", None),
}


def simulated_sqnr_db(x_numpy: Any, fmt: str) -> float | None:
    """SQNR of the simulator's quantizer (simulators.quantization) on the same tensor."""
    from simulators import quantization

    if fmt.startswith("int4_block"):
        scheme = ("int4", "group", int(fmt.removeprefix("int4_block")))
    else:
        scheme = SIMULATOR_SCHEME[fmt]
    name, granularity, group = scheme
    approx = quantization.quantize(
        x_numpy, name, granularity, group, axis=0 if granularity == "channel" else None
    )
    value = quantization.sqnr_db(x_numpy, approx)
    return value if math.isfinite(value) else None


def predict_float_sqnr_db(mantissa_bits: int) -> float:
    """Model SQNR of a float format for data inside its normal range (dB)."""
    return 20 * math.log10(2) * mantissa_bits + FLOAT_SQNR_OFFSET_DB


def predict_uniform_sqnr_db(signal_power: float, step_sizes_sq_mean: float) -> float:
    """Uniform-quantizer model: noise power = mean(step^2)/12 (no clipping, busy signal)."""
    return 10 * math.log10(signal_power / (step_sizes_sq_mean / 12.0))


def quantize_roundtrip(torch: Any, x: Any, fmt: str) -> tuple[Any, dict[str, Any]]:
    """x (float32) -> format -> float32, with the format's metadata and model prediction.

    Floats: per-tensor scaling so amax maps to the format's largest finite value for fp8
    (as fp8 training recipes do), clamped before the cast (torch versions differ on overflow),
    no scaling for bf16/fp16. Integers: symmetric absmax, levels +-(2^(b-1)-1), stored as
    torch.int8, per tensor, per row ("per_channel") or per block of B elements with one
    float32 scale per block (so 4 + 32/B bits per element).
    """
    info: dict[str, Any] = {}
    if fmt in FLOAT_FORMATS:
        spec = FLOAT_FORMATS[fmt]
        dtype = getattr(torch, fmt)
        if fmt.startswith("float8"):
            fmax = float(torch.finfo(dtype).max)
            scale = fmax / float(x.abs().max())
            y = (x * scale).clamp(-fmax, fmax).to(dtype).to(torch.float32) / scale
            info["granularity"] = "per-tensor scale (amax -> max finite)"
        else:
            y = x.to(dtype).to(torch.float32)
            info["granularity"] = "none (cast)"
        info["bits_per_element"] = float(spec["bits"])
        info["predicted_sqnr_db"] = predict_float_sqnr_db(spec["mantissa_bits"])
        info["prediction_model"] = "6.02*m + 13.5 dB (round-to-nearest float, normal range)"
        return y, info
    if fmt.startswith("int8") or fmt.startswith("int4"):
        bits = 8 if fmt.startswith("int8") else 4
        levels = 2 ** (bits - 1) - 1
        if fmt == "int8_per_tensor":
            groups = x.reshape(1, -1)
            info["granularity"] = "per tensor"
            overhead = 0.0
        elif fmt == "int8_per_channel":
            groups = x.reshape(x.shape[0], -1) if x.dim() >= 2 else x.reshape(1, -1)
            info["granularity"] = f"per row ({groups.shape[0]} rows)"
            overhead = 32.0 / groups.shape[1]
        elif fmt.startswith("int4_block"):
            block = int(fmt.removeprefix("int4_block"))
            if x.numel() % block:
                raise ValueError(f"{x.numel()} elements are not divisible by block {block}")
            groups = x.reshape(-1, block)
            info["granularity"] = f"per block of {block}"
            overhead = 32.0 / block
        else:
            raise ValueError(f"unknown format {fmt!r}")
        amax = groups.abs().amax(dim=1, keepdim=True).clamp_min(torch.finfo(torch.float32).tiny)
        step = amax / levels
        q = torch.round(groups / step).clamp(-levels, levels).to(torch.int8)
        y = (q.to(torch.float32) * step).reshape(x.shape)
        info["bits_per_element"] = bits + overhead
        signal = float(x.double().pow(2).mean())
        step_sq = float((step.double().pow(2) * groups.shape[1]).sum() / x.numel())
        info["predicted_sqnr_db"] = predict_uniform_sqnr_db(signal, step_sq)
        info["prediction_model"] = "uniform noise step^2/12 with the tensor's own absmax steps"
        return y, info
    raise ValueError(f"unknown format {fmt!r}")


def quantization_error(
    device: str = "cpu",
    *,
    formats: Sequence[str] = DEFAULT_QUANT_FORMATS,
    tensor: Any = None,
    shape: tuple[int, int] | None = None,
    seed: int = 0,
    quick: bool = False,
    progress: ProgressFn | None = None,
    should_stop: StopFn | None = None,
) -> st.Outcome:
    """Round-trip error of number formats on a real torch tensor, beside a model prediction.

    The tensor is `tensor` (any float tensor, e.g. a model weight) or torch.randn(shape) with
    `seed` (default 2048 x 2048, quick 1024 x 1024). Errors are computed in float64 on the CPU
    (rounding is the same on every device). SQNR = 10 log10(sum x^2 / sum (x - q(x))^2).
    sqnr_db is None when the round trip is lossless. `device` is accepted for a uniform
    signature; the arithmetic runs on the CPU. Returns QuantizationRecords.
    """
    del device

    def body(ctx: Context, records: list[Record]) -> st.Status | None:
        torch = ctx.torch
        if tensor is not None:
            x = tensor.detach().to("cpu", torch.float32)
            described = f"given tensor {tuple(x.shape)}"
        else:
            rows, cols = shape or ((1024, 1024) if quick else (2048, 2048))
            generator = torch.Generator().manual_seed(seed)
            x = torch.randn(rows, cols, generator=generator)
            described = f"torch.randn({rows}, {cols}), seed {seed}"
        x64 = x.double()
        x_numpy = x.numpy()
        signal = float(x64.pow(2).sum())
        for i, fmt in enumerate(formats):
            check_stop(should_stop)
            report(progress, i / len(formats), f"quantize {fmt}")
            y, info = quantize_roundtrip(torch, x, fmt)
            err = x64 - y.double()
            noise = float(err.pow(2).sum())
            records.append(
                QuantizationRecord(
                    **{**ctx.common(), "device": "cpu", "device_name": device_name(torch, "cpu")},
                    format=fmt,
                    granularity=info["granularity"],
                    bits_per_element=info["bits_per_element"],
                    elements=int(x.numel()),
                    tensor=described,
                    rmse=math.sqrt(noise / x.numel()),
                    sqnr_db=10 * math.log10(signal / noise) if noise > 0 else None,
                    max_abs_error=float(err.abs().max()),
                    predicted_sqnr_db=simulated_sqnr_db(x_numpy, fmt),
                    prediction_model="simulators.quantization on the same tensor (numpy, exact rounding)",
                    extra={"theory_sqnr_db": info["predicted_sqnr_db"], "theory": info["prediction_model"]},
                )
            )
        report(progress, 1.0, "quantization done")
        return None

    return run_guarded("quantization", "cpu", body)
