"""Chart build speed: the graph_objects builders before the dict rewrite vs the dict builders now.

Run: python -m bench.charts_speed [--repeat N] [--old-commit SHA]

Each case of ``charts.examples`` is built by the current builder (a plain dict) and by the builder
as it was at ``--old-commit`` (a ``go.Figure``; its source is read with ``git show`` and loaded as
a module named ``old_charts.<file>``, so nothing old is kept in the tree). Both are then encoded the
way ``st.plotly_chart`` encodes a figure, ``plotly.io.to_json(x, validate=False)``. Inputs are built
once beforehand; each builder runs once to warm up and then ``--repeat`` times, and the median is
printed, in milliseconds. Cases whose builder or keywords did not exist before have no old column.
"""

from __future__ import annotations

import argparse
import importlib
import os
import platform
import statistics
import subprocess
import sys
import time
import types
from collections.abc import Callable
from pathlib import Path

import plotly.io as pio

from charts.examples import Case, cases

ROOT = Path(__file__).resolve().parent.parent
# The last commit whose charts/ built go.Figure objects (before the dict rewrite of issues 9/10).
OLD_COMMIT = "adc8be27286fb7bc51f1035dcc2c87daeacc982a"
OLD_PACKAGE = "old_charts"


def median_ms(function: Callable[[], object], repeat: int) -> float:
    function()  # warm-up
    times_s = []
    for _ in range(repeat):
        start = time.perf_counter()
        function()
        times_s.append(time.perf_counter() - start)
    return statistics.median(times_s) * 1e3


def load_old_charts(commit: str) -> dict[str, types.ModuleType]:
    """charts/*.py at ``commit`` as modules ``old_charts.<name>`` importing each other, not charts/."""
    listing = subprocess.run(
        ["git", "ls-tree", "--name-only", f"{commit}:charts"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    package = types.ModuleType(OLD_PACKAGE)
    package.__path__ = []
    sys.modules[OLD_PACKAGE] = package
    sources = {}
    for filename in listing:
        if filename.endswith(".py") and filename != "__init__.py":
            text = subprocess.run(
                ["git", "show", f"{commit}:charts/{filename}"],
                cwd=ROOT,
                capture_output=True,
                text=True,
                check=True,
            ).stdout
            sources[filename[:-3]] = text.replace("from charts.", f"from {OLD_PACKAGE}.").replace(
                "from charts import", f"from {OLD_PACKAGE} import"
            )
    modules: dict[str, types.ModuleType] = {}

    def load(name: str) -> types.ModuleType:
        if name in modules:
            return modules[name]
        module = types.ModuleType(f"{OLD_PACKAGE}.{name}")
        module.__file__ = f"<{commit[:10]}:charts/{name}.py>"
        sys.modules[module.__name__] = module
        setattr(package, name, module)
        modules[name] = module
        exec(compile(sources[name], module.__file__, "exec"), module.__dict__)
        return module

    # Import order: dependencies first (palette, style, memory are imported by others).
    for name in ("palette", "style", "memory", *sorted(sources)):
        if name in sources:
            load(name)
    return modules


def time_case(case: Case, module: types.ModuleType, repeat: int, *, old: bool) -> tuple[float, float]:
    kwargs = case.old_kwargs() if old else case.kwargs

    def build():
        return getattr(module, case.builder)(*case.args, **kwargs)

    figure = build()
    return median_ms(build, repeat), median_ms(lambda: pio.to_json(figure, validate=False), repeat)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument("--old-commit", default=OLD_COMMIT)
    parser.add_argument("--only-old", action="store_true", help="time the old builders only")
    args = parser.parse_args()
    machine = platform.processor() or platform.machine()
    print(f"# {machine}, {os.cpu_count()} CPUs, Python {platform.python_version()}")
    print(f"# old: charts/ at {args.old_commit[:10]} (go.Figure); new: charts/ in the working tree (dict)")
    print(
        "# ms, median of",
        args.repeat,
        "; encode = plotly.io.to_json(x, validate=False) as st.plotly_chart does",
    )
    all_cases = cases()  # build the inputs before timing anything
    old = load_old_charts(args.old_commit)
    header = f"{'case':<78} {'old build':>9} {'old json':>8} {'new build':>9} {'new json':>8} {'speed-up':>8}"
    print(header)
    print("-" * len(header))
    old_total = new_total = 0.0
    for case in all_cases:
        old_module = old.get(case.module)
        has_old = (
            old_module is not None
            and hasattr(old_module, case.builder)
            and not set(case.kwargs) & set(case.new_keywords)
        )
        ob = oj = float("nan")
        if has_old:
            ob, oj = time_case(case, old_module, args.repeat, old=True)
        if args.only_old:
            print(f"{case.name[:78]:<78} {ob:9.2f} {oj:8.2f}")
            continue
        nb, nj = time_case(case, importlib.import_module(f"charts.{case.module}"), args.repeat, old=False)
        ratio = (ob + oj) / (nb + nj) if has_old else float("nan")
        if has_old:
            old_total += ob + oj
            new_total += nb + nj
        cells = f"{ob:9.2f} {oj:8.2f}" if has_old else f"{'—':>9} {'—':>8}"
        speed = f"{ratio:7.0f}×" if has_old else f"{'—':>8}"
        print(f"{case.name[:78]:<78} {cells} {nb:9.2f} {nj:8.2f} {speed}")
    if not args.only_old and new_total:
        print("-" * len(header))
        print(
            f"{'total over cases with both (build + json)':<78} {old_total:18.1f} {new_total:18.1f} "
            f"{old_total / new_total:7.0f}×"
        )


if __name__ == "__main__":
    main()
