"""Load-to-use latency by pointer chasing, from a few KiB to past the last-level cache.

A working set is split into cache lines; one random cycle (a cyclic permutation) visits every
line, and each line holds the address of the next. Walking the chain makes every load's address
the value of the previous load, so loads cannot overlap and no prefetcher can guess ahead: the
time per load is the latency of the level that holds the working set (plus TLB misses where the
pages outgrow the TLB's reach). This is the method of lmbench's lat_mem_rd and of the GPU
pointer-chase microbenchmarks the Memory hierarchy page cites (RRZE-HPC gpu-benches).

- CPU: measure/pointer_chase.c, compiled here with the system compiler (cc, gcc or clang; CC
  wins) on first use and cached by the hash of its source, compiler and flags. One thread, 64-byte
  lines (the line size the OS reports), clock_gettime. No compiler: a `no_compiler` status.
- CUDA: a Triton kernel (Triton ships with CUDA builds of PyTorch) run as one program of one
  warp, so one thread's chain is walked; 128-byte lines. Each sample times GPU_TIMED_LOADS loads
  with CUDA events and subtracts a GPU_BASELINE_LOADS-load walk (launch and exit cost), after
  one untimed warm-up walk.

torch and triton are imported inside the functions that need them.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from measure import status as st
from measure.env import cache_level_for, cpu_info
from measure.results import LatencyRecord, Record
from measure.timing import ProgressFn, StopFn, TimingStats, check_stop, report
from measure.workloads import Context, free_memory_bytes, run_guarded

KiB = 1024
MiB = 1024**2
GiB = 1024**3

SOURCE = Path(__file__).with_name("pointer_chase.c")
COMPILE_FLAGS = ("-O2",)
COMPILERS = ("cc", "gcc", "clang")
CACHE_ENV = "GPU_FIELD_GUIDE_CACHE"

GPU_LINE_BYTES = 128  # L1 and L2 line size on NVIDIA GPUs (the H100 run used the same)
GPU_TIMED_LOADS = 20_000
GPU_BASELINE_LOADS = 10
CPU_WARM_MAX_LOADS = 1 << 23  # untimed warm-up: one full cycle, at most this many loads
CPU_WARM_PAST_LLC_LOADS = 1 << 18
GPU_WARM_MAX_LOADS = 1 << 20
SUBPROCESS_TIMEOUT_S = 300


# ---------------------------------------------------------------------------------------------
# Building the C program


def find_c_compiler() -> str | None:
    """Path of a C compiler: $CC if set and found, else cc, gcc or clang on PATH; None if none."""
    candidates = [os.environ["CC"].split()[0]] if os.environ.get("CC", "").strip() else []
    for name in [*candidates, *COMPILERS]:
        path = shutil.which(name)
        if path:
            return path
    return None


def cache_dir() -> Path:
    """Where compiled helpers are kept: $GPU_FIELD_GUIDE_CACHE, else $XDG_CACHE_HOME or ~/.cache,
    under gpu-field-guide/."""
    if os.environ.get(CACHE_ENV):
        return Path(os.environ[CACHE_ENV])
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "gpu-field-guide"


def build_pointer_chase(
    compiler: str | None = None, directory: Path | None = None
) -> tuple[Path | None, st.Status]:
    """Compile measure/pointer_chase.c once and return (executable, status).

    The executable's name carries a hash of the source, the compiler path and the flags, so an
    edit or another compiler builds a new one; a cached build is reused. (None, no_compiler)
    when there is no compiler, (None, error) when compiling fails.
    """
    compiler = compiler or find_c_compiler()
    if compiler is None:
        return None, st.no_compiler("The latency benchmark (pointer chase)")
    source = SOURCE.read_bytes()
    key = hashlib.sha256(source + compiler.encode() + " ".join(COMPILE_FLAGS).encode()).hexdigest()[:16]
    user = getattr(os, "getuid", lambda: 0)()  # Windows has no uid
    fallback = Path(tempfile.gettempdir()) / f"gpu-field-guide-{user}"
    for folder in (directory or cache_dir(), fallback):
        exe = folder / f"pointer_chase-{key}"
        if exe.is_file() and os.access(exe, os.X_OK):
            return exe, st.ok(f"cached build {exe}")
        try:
            folder.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(prefix=exe.name + ".", dir=folder)
            os.close(fd)
        except OSError:
            continue  # not writable: try the temp directory
        try:
            subprocess.run(
                [compiler, *COMPILE_FLAGS, str(SOURCE), "-o", tmp],
                check=True,
                capture_output=True,
                text=True,
                timeout=120,
            )
            os.replace(tmp, exe)  # atomic: a concurrent build never sees half a file
        except (OSError, subprocess.SubprocessError) as exc:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
            detail = getattr(exc, "stderr", "") or str(exc)
            return None, st.Status(
                False,
                st.ERROR,
                f"The latency benchmark did not compile with {compiler}; it was skipped.",
                "Check that the compiler works (`cc --version`), or set CC to another one.",
                detail.strip()[:500],
            )
        return exe, st.ok(f"compiled with {compiler}")
    return None, st.Status(False, st.ERROR, "No writable folder for the compiled latency benchmark.")


# ---------------------------------------------------------------------------------------------
# Sizes


def cpu_line_bytes() -> int:
    """The CPU's cache line size as the OS reports it (Linux sysfs, macOS sysctl), else 64."""
    path = Path("/sys/devices/system/cpu/cpu0/cache/index0/coherency_line_size")
    with contextlib.suppress(OSError, ValueError):
        value = int(path.read_text().strip())
        if value >= 8 and value % 8 == 0:
            return value
    if sys.platform == "darwin":
        with contextlib.suppress(OSError, ValueError, subprocess.SubprocessError):
            out = subprocess.run(["sysctl", "-n", "hw.cachelinesize"], capture_output=True, text=True)
            value = int(out.stdout.strip())
            if value >= 8 and value % 8 == 0:
                return value
    return 64


def default_latency_sizes(
    device: str, quick: bool, *, llc_bytes: int | None = None, free_bytes: int | None = None
) -> list[int]:
    """Working sets from 4 KiB (x4 steps when quick, else x2) up to a cap, plus the cap itself.

    Cap on a CPU: 4 x the last-level cache (quick) or 8 x (full), at least 64 / 256 MiB and at
    most 256 MiB / 1 GiB: a random chain through n x the LLC still hits it about 1/n of the time,
    so the largest sets must be several times the LLC. On a GPU: 256 MiB (quick) or 4 GiB, past
    any L2 (50 MiB on an H100) and, at GiB sizes, past the TLB's reach. Never more than a quarter
    of `free_bytes`.
    """
    if device == "cpu":
        llc = llc_bytes or 32 * MiB
        cap = min(
            max(llc * (4 if quick else 8), 64 * MiB if quick else 256 * MiB), 256 * MiB if quick else GiB
        )
    else:
        cap = 256 * MiB if quick else 4 * GiB
    if free_bytes:
        cap = min(cap, free_bytes // 4)
    cap = max(cap, 4 * KiB)
    sizes = []
    size = 4 * KiB
    while size <= cap:
        sizes.append(size)
        size *= 4 if quick else 2
    if sizes[-1] != cap:
        sizes.append(cap)
    return sizes


# ---------------------------------------------------------------------------------------------
# The workload


def latency(
    device: str = "cpu",
    *,
    sizes_bytes: Sequence[int] | None = None,
    quick: bool = False,
    repeats: int | None = None,
    line_bytes: int | None = None,
    progress: ProgressFn | None = None,
    should_stop: StopFn | None = None,
) -> st.Outcome:
    """Nanoseconds per dependent load over working sets from KiB to past the last-level cache.

    CPU: the compiled C chase (see the module docstring), one thread. CUDA: the Triton chase.
    `repeats` samples per working set (5 quick, 9 full); `ns` is their median. MPS is not
    supported (no Triton backend). Returns LatencyRecords, or a status that says what is missing
    (no compiler, no Triton).
    """

    def body(ctx: Context, records: list[Record]) -> st.Status | None:
        n_repeats = repeats or (5 if quick else 9)
        if ctx.device == "cpu":
            return _cpu_latency(
                ctx, records, sizes_bytes, quick, n_repeats, line_bytes, progress, should_stop
            )
        if ctx.device.startswith("cuda"):
            return _cuda_latency(
                ctx, records, sizes_bytes, quick, n_repeats, line_bytes, progress, should_stop
            )
        return st.unsupported(
            "Pointer-chase latency runs on a CPU (a C program) or a CUDA GPU (a Triton kernel); "
            f"{ctx.device} has neither path."
        )

    return run_guarded("latency", device, body)


def _common(ctx: Context) -> dict[str, Any]:
    return {**ctx.common(), "threads": 1}  # one thread walks the chain


def _cpu_latency(
    ctx: Context,
    records: list[Record],
    sizes_bytes: Sequence[int] | None,
    quick: bool,
    n_repeats: int,
    line_bytes: int | None,
    progress: ProgressFn | None,
    should_stop: StopFn | None,
) -> st.Status | None:
    report(progress, 0.0, "compiling the pointer chase")
    exe, status = build_pointer_chase()
    if exe is None:
        return status
    compiler = Path(find_c_compiler() or "cc").name
    cpu = cpu_info()
    caches = cpu.data_caches()
    llc = caches[-1].size_bytes if caches else None
    line = line_bytes or cpu_line_bytes()
    sizes = (
        list(sizes_bytes)
        if sizes_bytes
        else default_latency_sizes("cpu", quick, llc_bytes=llc, free_bytes=free_memory_bytes(ctx))
    )
    method = (
        f"C pointer chase (measure/pointer_chase.c, {compiler} {' '.join(COMPILE_FLAGS)}): one thread walks "
        f"a random cyclic permutation (Sattolo) of {line}-byte lines, each load's address being the "
        "previous load's value; an untimed warm-up walk (one full cycle up to the last-level cache's size, "
        f"at most {CPU_WARM_MAX_LOADS:,} loads; {CPU_WARM_PAST_LLC_LOADS:,} past it), then {n_repeats} "
        "samples of about 20 ms of dependent loads, timed with clock_gettime(CLOCK_MONOTONIC); "
        "ns = median per load"
    )
    for i, size in enumerate(sizes):
        check_stop(should_stop)
        report(progress, (i + 0.5) / len(sizes), f"chase {size / KiB:,.0f} KiB")
        lines = max(size // line, 2)
        # Warm every line while the set could sit in a cache; past the LLC a short walk is enough.
        warm = min(lines if size <= (llc or size) else CPU_WARM_PAST_LLC_LOADS, CPU_WARM_MAX_LOADS)
        out = subprocess.run(
            [str(exe), str(line), str(n_repeats), "0", str(warm), str(size)],
            capture_output=True,
            text=True,
            timeout=SUBPROCESS_TIMEOUT_S,
        )
        if out.returncode != 0:
            return st.Status(
                False,
                st.OOM if "allocation" in out.stderr else st.ERROR,
                f"The pointer chase stopped at {size / MiB:.3g} MiB; smaller sizes are kept.",
                "",
                out.stderr.strip()[:500],
            )
        result = json.loads(out.stdout.strip().splitlines()[-1])
        stats = TimingStats.from_samples(result["samples_ns"], result["loads"], "clock_gettime")
        huge = bool(result.get("huge_pages_advised"))
        records.append(
            LatencyRecord(
                **_common(ctx),
                bytes=int(result["bytes"]),
                ns=stats.median_s,
                loads=int(result["loads"]),
                method=method,
                line_bytes=int(result["line_bytes"]),
                repeats=stats.repeats,
                p10_ns=stats.p10_s,
                p90_ns=stats.p90_s,
                min_ns=stats.min_s,
                timer="clock_gettime(CLOCK_MONOTONIC)",
                cache_hint=cache_level_for(int(result["bytes"]), cpu, 1),
                huge_pages_advised=huge,
                notes=(
                    "2 MiB-aligned with madvise(MADV_HUGEPAGE); whether the kernel backed it with huge "
                    "pages depends on its transparent-huge-page setting."
                    if huge
                    else ""
                ),
            )
        )
    report(progress, 1.0, "latency done")
    return None


# The Triton kernel is built on first use; `tl` is bound then, before the kernel is compiled.
tl: Any = None
_CHASE_KERNEL: Any = None


def _chase(next_ptr, start_ptr, n_loads, end_ptr):
    """Triton: start at index *start_ptr, follow n_loads indices, store where the walk ended."""
    index = tl.load(start_ptr)
    for _ in range(n_loads):
        index = tl.load(next_ptr + index)
    tl.store(end_ptr, index)


def chase_kernel() -> Any:
    """The Triton pointer-chase kernel (imports triton); raises ImportError without it."""
    global tl, _CHASE_KERNEL
    if _CHASE_KERNEL is None:
        import triton
        import triton.language as language

        tl = language
        _CHASE_KERNEL = triton.jit(_chase)
    return _CHASE_KERNEL


def _cuda_latency(
    ctx: Context,
    records: list[Record],
    sizes_bytes: Sequence[int] | None,
    quick: bool,
    n_repeats: int,
    line_bytes: int | None,
    progress: ProgressFn | None,
    should_stop: StopFn | None,
) -> st.Status | None:
    torch = ctx.torch
    try:
        kernel = chase_kernel()
    except ImportError as exc:
        return st.Status(
            False,
            st.UNSUPPORTED,
            "GPU latency is measured with a Triton kernel, and Triton is not installed here.",
            "CUDA builds of PyTorch ship Triton; or `pip install triton`.",
            f"{type(exc).__name__}: {exc}",
        )
    dev = ctx.device
    line = line_bytes or GPU_LINE_BYTES
    stride = line // 8  # int64 slots per line
    l2 = int(getattr(torch.cuda.get_device_properties(dev), "L2_cache_size", 0) or 0)
    sizes = (
        list(sizes_bytes)
        if sizes_bytes
        else default_latency_sizes("cuda", quick, free_bytes=free_memory_bytes(ctx))
    )
    method = (
        f"Triton pointer chase: one program of one warp walks a random cyclic permutation of {line}-byte "
        "lines (torch.randperm), each load's address being the previous load's value; an untimed warm-up "
        f"walk, then {n_repeats} samples of {GPU_TIMED_LOADS:,} loads timed with CUDA events minus a "
        f"{GPU_BASELINE_LOADS}-load walk (launch cost); ns = median per load"
    )
    generator = torch.Generator(device=dev).manual_seed(0)
    for i, size in enumerate(sizes):
        check_stop(should_stop)
        report(progress, (i + 0.5) / len(sizes), f"chase {size / KiB:,.0f} KiB")
        lines = max(size // line, 2)
        chain = torch.zeros(lines * stride, dtype=torch.int64, device=dev)
        order = torch.randperm(lines, device=dev, generator=generator)
        chain[order * stride] = torch.roll(order, -1) * stride  # line order[k] -> order[k + 1]
        del order
        start = torch.zeros(1, dtype=torch.int64, device=dev)
        end = torch.zeros(1, dtype=torch.int64, device=dev)
        scratch = torch.zeros(1, dtype=torch.int64, device=dev)
        # Warm-up: a full cycle while the set could still sit in L2, else a bounded walk.
        warm = lines if size <= 4 * max(l2, 1) else min(lines, GPU_WARM_MAX_LOADS)
        kernel[(1,)](chain, start, warm, end, num_warps=1)
        pairs = []
        for _ in range(n_repeats):
            start.copy_(end)
            events = [torch.cuda.Event(enable_timing=True) for _ in range(4)]
            events[0].record()
            kernel[(1,)](chain, start, GPU_TIMED_LOADS, end, num_warps=1)
            events[1].record()
            events[2].record()
            kernel[(1,)](chain, start, GPU_BASELINE_LOADS, scratch, num_warps=1)
            events[3].record()
            pairs.append(events)
        torch.cuda.synchronize(dev)
        samples_ns = [
            (e[0].elapsed_time(e[1]) - e[2].elapsed_time(e[3])) * 1e6 / (GPU_TIMED_LOADS - GPU_BASELINE_LOADS)
            for e in pairs
        ]
        stats = TimingStats.from_samples(samples_ns, GPU_TIMED_LOADS, "cuda_event")
        if stats.median_s <= 0:
            return st.Status(False, st.ERROR, f"The GPU chase at {size / KiB:,.0f} KiB timed below zero.")
        records.append(
            LatencyRecord(
                **_common(ctx),
                bytes=lines * line,
                ns=stats.median_s,
                loads=GPU_TIMED_LOADS,
                method=method,
                line_bytes=line,
                repeats=stats.repeats,
                p10_ns=stats.p10_s,
                p90_ns=stats.p90_s,
                min_ns=stats.min_s,
                timer="cuda_event",
                cache_hint="L2" if l2 and lines * line <= l2 else "device memory",
            )
        )
        del chain, start, end, scratch
    report(progress, 1.0, "latency done")
    return None
