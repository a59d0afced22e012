"""What the theme pass costs a chart on every rerun: ``charts.contrast.for_theme`` against the JSON
encode that ``st.plotly_chart`` does anyway, for every example chart and every diagram.

Run: python -m bench.chart_theme [--repeat N]

Each spec is built once; then ``for_theme(spec, "light")``, ``for_theme(spec, "dark")`` and
``plotly.io.to_json(spec, validate=False)`` each run once to warm up and ``--repeat`` times, and the
medians are printed in milliseconds with the theme pass as a share of the encode (a ratio measured in
the same run, as this machine is shared).
"""

from __future__ import annotations

import argparse
import importlib
import os
import platform
import statistics
import time
from collections.abc import Callable

import plotly.io as pio

from charts.contrast import for_theme
from charts.diagrams import build, builders
from charts.examples import cases


def median_ms(function: Callable[[], object], repeat: int) -> float:
    function()
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        function()
        times.append((time.perf_counter() - start) * 1000)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--repeat", type=int, default=15)
    args = parser.parse_args()
    print(f"# {platform.machine()}, {os.cpu_count()} CPUs, Python {platform.python_version()}")
    print(f"# ms, median of {args.repeat}")
    specs = []
    for case in cases():
        figure = case.call(importlib.import_module(f"charts.{case.module}"))
        specs.append((case.name, figure.to_dict() if hasattr(figure, "to_dict") else figure))
    specs += [(f"diagram {d}", build(d).spec) for d in sorted(builders())]
    header = f"{'chart':<70} {'light':>7} {'dark':>7} {'encode':>7} {'share':>6}"
    print(header)
    print("-" * len(header))
    shares, worst = [], 0.0
    for name, spec in specs:
        light = median_ms(lambda spec=spec: for_theme(spec, "light"), args.repeat)
        dark = median_ms(lambda spec=spec: for_theme(spec, "dark"), args.repeat)
        encode = median_ms(lambda spec=spec: pio.to_json(spec, validate=False), args.repeat)
        share = max(light, dark) / encode
        shares.append(share)
        worst = max(worst, light, dark)
        print(f"{name[:70]:<70} {light:7.3f} {dark:7.3f} {encode:7.3f} {share:6.2f}")
    print(
        f"# {len(specs)} charts: theme pass median {statistics.median(shares):.2f}× the encode, "
        f"max {max(shares):.2f}×; slowest theme pass {worst:.3f} ms"
    )


if __name__ == "__main__":
    main()
