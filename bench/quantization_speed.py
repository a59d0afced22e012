"""Quantization simulator speed: median milliseconds per format for 1M and 4M float32 elements.

Run: python -m bench.quantization_speed [--repeat N]
Goal (issue 5): a slider redraw (quantize + error stats + value and error histograms) well under
100 ms for 1M elements. Each case runs once to warm up, then ``--repeat`` times; the median is printed.
The tensor is seeded N(0, 1) of shape [n / 1024, 1024].
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import time
from collections.abc import Callable

import numpy as np

from simulators.quantization import (
    STANDARD_SCHEMES,
    Scheme,
    error_stats,
    histogram,
    make_tensor,
)


def median_ms(function: Callable[[], object], repeat: int) -> float:
    function()  # warm-up
    times_s = []
    for _ in range(repeat):
        start = time.perf_counter()
        function()
        times_s.append(time.perf_counter() - start)
    return statistics.median(times_s) * 1e3


def redraw(x: np.ndarray, scheme: Scheme) -> None:
    """What a slider move recomputes: quantize, statistics, two 200-bin histograms."""
    approx = scheme.quantize(x)
    error_stats(x, approx)
    histogram(x, 200)
    histogram(approx - x, 200)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--repeat", type=int, default=7)
    args = parser.parse_args()
    print(f"numpy {np.__version__}, {platform.processor() or platform.machine()}, {os.cpu_count()} CPUs")
    for n in (2**20, 2**22):
        x = make_tensor("gaussian", (n // 1024, 1024), seed=0)
        print(f"\n{n / 2**20:.0f}M elements: median ms over {args.repeat} runs")
        print(f"{'scheme':44s} {'quantize':>9s} {'redraw':>9s}")
        for scheme in STANDARD_SCHEMES:
            quantize_ms = median_ms(lambda s=scheme, x=x: s.quantize(x), args.repeat)
            redraw_ms = median_ms(lambda s=scheme, x=x: redraw(x, s), args.repeat)
            print(f"{scheme.label:44s} {quantize_ms:9.1f} {redraw_ms:9.1f}")
        stats_ms = median_ms(lambda x=x: error_stats(x, x), args.repeat)
        hist_ms = median_ms(lambda x=x: histogram(x, 200), args.repeat)
        print(f"{'(error_stats alone)':44s} {stats_ms:9.1f}")
        print(f"{'(one 200-bin histogram alone)':44s} {hist_ms:9.1f}")


if __name__ == "__main__":
    main()
