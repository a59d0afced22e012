"""Timing harness shared by the workloads: warm-ups, synchronisation, CUDA events, L2 flush,
median and spread of repeats.

Method (the checklist in the project's reference notes, after mamf-finder, triton's do_bench
and torch.utils.benchmark):
- warm up before timing, so one-time costs (allocation, kernel selection, page faults) are out;
- synchronise the device before reading a host clock; on CUDA time with event pairs
  (torch.cuda.Event(enable_timing=True), elapsed_time in milliseconds);
- on CUDA, flush the L2 by zeroing a buffer larger than the L2 before each timed repeat
  (256 MiB or twice the L2, whichever is larger), outside the timed region;
- run a short operation several times inside one sample ("inner loops") so a sample is long
  enough for the clock, and report time per operation;
- report the median with the 10th and 90th percentiles and the minimum, never the mean alone.
"""

from __future__ import annotations

import contextlib
import math
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

ProgressFn = Callable[[float, str], None]
StopFn = Callable[[], bool]

L2_FLUSH_MIN_BYTES = 256 * 1024**2  # mamf-finder and triton.testing.do_bench zero 256 MB between calls


class Cancelled(Exception):
    """Raised inside a workload when should_stop() says so; caught at the workload boundary."""


def check_stop(should_stop: StopFn | None) -> None:
    if should_stop is not None and should_stop():
        raise Cancelled


def report(progress: ProgressFn | None, fraction: float, message: str) -> None:
    """Call the progress callback, clamping to [0, 1]; a failing callback never stops a run."""
    if progress is None:
        return
    with contextlib.suppress(Exception):
        progress(min(max(fraction, 0.0), 1.0), message)


def percentile(sorted_values: Sequence[float], q: float) -> float:
    """Linear-interpolation percentile (numpy's default 'linear' method), q in [0, 100]."""
    if not sorted_values:
        raise ValueError("percentile of an empty sequence")
    position = (len(sorted_values) - 1) * q / 100.0
    lo = math.floor(position)
    hi = math.ceil(position)
    if lo == hi:
        return float(sorted_values[lo])
    return float(sorted_values[lo] + (sorted_values[hi] - sorted_values[lo]) * (position - lo))


@dataclass(frozen=True)
class TimingStats:
    """Seconds per operation over `repeats` samples (each sample averages `inner_loops` calls)."""

    median_s: float
    p10_s: float
    p90_s: float
    min_s: float
    max_s: float
    repeats: int
    inner_loops: int
    timer: str

    @classmethod
    def from_samples(cls, samples_s: Sequence[float], inner_loops: int, timer: str) -> TimingStats:
        values = sorted(float(s) for s in samples_s)
        return cls(
            median_s=percentile(values, 50),
            p10_s=percentile(values, 10),
            p90_s=percentile(values, 90),
            min_s=values[0],
            max_s=values[-1],
            repeats=len(values),
            inner_loops=inner_loops,
            timer=timer,
        )

    def fields(self) -> dict[str, Any]:
        return {
            "median_s": self.median_s,
            "p10_s": self.p10_s,
            "p90_s": self.p90_s,
            "min_s": self.min_s,
            "repeats": self.repeats,
            "inner_loops": self.inner_loops,
            "timer": self.timer,
        }


def synchronize(torch: Any, device: str) -> None:
    """Wait for queued device work, so a host clock read afterwards sees it finished."""
    if device.startswith("cuda"):
        torch.cuda.synchronize(device)
    elif device == "mps":
        torch.mps.synchronize()


def l2_flusher(torch: Any, device: str) -> Callable[[], None] | None:
    """A function that evicts the GPU L2 by zeroing a large buffer, or None off CUDA.

    Size: max(256 MiB, 2 x L2). Without it, a repeat finds the previous repeat's data in L2 and
    small working sets look faster than memory allows. CPU caches are not flushed: the CPU
    bandwidth sweep reads its cache knees on purpose (warm cache, stated in each record).
    """
    if not device.startswith("cuda"):
        return None
    props = torch.cuda.get_device_properties(device)
    size = max(L2_FLUSH_MIN_BYTES, 2 * int(getattr(props, "L2_cache_size", 0) or 0))
    buffer = torch.empty(size, dtype=torch.uint8, device=device)

    def flush() -> None:
        buffer.zero_()

    return flush


def time_op(
    torch: Any,
    fn: Callable[[], Any],
    *,
    device: str,
    repeats: int,
    warmup: int = 3,
    inner_loops: int = 1,
    flush: Callable[[], None] | None = None,
    should_stop: StopFn | None = None,
) -> TimingStats:
    """Time `fn` (seconds per call): `warmup` untimed calls, then `repeats` samples.

    CUDA: each sample is an event pair around `inner_loops` calls on the current stream, with
    `flush()` (if given) enqueued before the start event; one synchronize at the end reads
    all pairs. CPU and MPS: synchronize, perf_counter, calls, synchronize, perf_counter.
    """
    for _ in range(max(warmup, 0)):
        check_stop(should_stop)
        fn()
    synchronize(torch, device)
    samples: list[float] = []
    if device.startswith("cuda"):
        pairs = []
        for _ in range(repeats):
            check_stop(should_stop)
            if flush is not None:
                flush()
            start = torch.cuda.Event(enable_timing=True)
            end = torch.cuda.Event(enable_timing=True)
            start.record()
            for _ in range(inner_loops):
                fn()
            end.record()
            pairs.append((start, end))
        torch.cuda.synchronize(device)
        samples = [start.elapsed_time(end) / 1000.0 / inner_loops for start, end in pairs]
        return TimingStats.from_samples(samples, inner_loops, "cuda_event")
    for _ in range(repeats):
        check_stop(should_stop)
        if flush is not None:
            flush()
            synchronize(torch, device)
        t0 = time.perf_counter()
        for _ in range(inner_loops):
            fn()
        synchronize(torch, device)
        samples.append((time.perf_counter() - t0) / inner_loops)
    return TimingStats.from_samples(samples, inner_loops, "perf_counter")


def calibrate_inner_loops(
    torch: Any,
    fn: Callable[[], Any],
    *,
    device: str,
    target_sample_s: float,
    max_inner_loops: int = 10_000,
) -> int:
    """How many calls make one sample last about `target_sample_s` (at least 1).

    Times a few calls after one warm-up call; short operations need many calls per sample for
    the clock's resolution and the fixed cost of reading it to vanish.
    """
    fn()
    synchronize(torch, device)
    calls = 0
    t0 = time.perf_counter()
    while True:
        fn()
        calls += 1
        if calls >= 3 or calls >= max_inner_loops:
            synchronize(torch, device)
            elapsed = time.perf_counter() - t0
            if elapsed >= target_sample_s / 10 or calls >= max_inner_loops:
                break
    per_call = max(elapsed / calls, 1e-9)
    return int(min(max(1, round(target_sample_s / per_call)), max_inner_loops))
