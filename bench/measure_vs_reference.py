"""The measurement suite against reference implementations, in the same run, on this CPU.

1. Memory bandwidth: the suite's CPU triad (torch) against a STREAM-style triad compiled from C
   (bench/stream_triad.c, gcc -O3 -march=native -fopenmp) with the same array size, element
   type (float32) and thread count. Goal (issue 6): suite >= 0.8x the C triad.
2. fp32 matmul: the suite's torch matmul against numpy's (its bundled BLAS) at the same square
   sizes. Goal: torch >= 0.9x numpy.

The two sides alternate for a few rounds and each side's figure is the median over rounds, so
a burst of load from other processes hits both; the references run in their own processes
(the C binary, a numpy subprocess), so their worker threads never spin on torch's cores, and
each switch waits PAUSE_S. The ratio judged against the goal is median over rounds (suite) /
median over rounds (reference). On the 2-core VM this was written on, DRAM bandwidth is
bimodal from run to run (about 35 or 60 GB/s, for the C triad and the suite alike), so a single
pair of runs can differ by 1.7x either way; the per-round ratios' range is printed to show
that spread. The load average is printed too: on a busy machine the ratios mean little.

Run: python -m bench.measure_vs_reference [--elements N] [--sizes 512,1024,2048] [--rounds 3]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from measure.cli import format_table, human_bytes  # noqa: E402
from measure.results import BandwidthRecord, MatmulRecord  # noqa: E402
from measure.workloads import bandwidth, matmul  # noqa: E402

BANDWIDTH_GOAL = 0.8
MATMUL_GOAL = 0.9
PAUSE_S = 0.5


def blas_names() -> tuple[str, str]:
    """(torch's BLAS, numpy's BLAS) as their build configurations name them."""
    import numpy as np
    import torch

    config = torch.__config__.show()
    torch_blas = config.split("BLAS_INFO=", 1)[1].split(",", 1)[0] if "BLAS_INFO=" in config else "?"
    try:
        numpy_blas = np.show_config(mode="dicts")["Build Dependencies"]["blas"]["name"]
    except Exception:
        numpy_blas = "?"
    return torch_blas, numpy_blas


def compile_triad(workdir: Path) -> Path | None:
    """Build bench/stream_triad.c for float32; None without gcc."""
    gcc = shutil.which("gcc")
    if gcc is None:
        return None
    exe = workdir / "stream_triad"
    source = ROOT / "bench" / "stream_triad.c"
    flags = ["-O3", "-march=native", "-fopenmp", "-DSTREAM_TYPE=float"]
    subprocess.run([gcc, *flags, str(source), "-o", str(exe)], check=True)
    return exe


def c_triad(exe: Path, elements: int, passes: int, threads: int) -> dict:
    env = {**os.environ, "OMP_NUM_THREADS": str(threads)}
    cmd = [str(exe), str(elements), str(passes)]
    out = subprocess.run(cmd, check=True, capture_output=True, text=True, env=env)
    return json.loads(out.stdout)


def suite_triad(working_set: int, repeats: int) -> BandwidthRecord:
    outcome = bandwidth("cpu", ops=("triad",), sizes_bytes=[working_set], repeats=repeats)
    if not outcome.ok or not outcome.records:
        raise SystemExit(f"suite triad failed: {outcome.status}")
    record = outcome.records[0]
    assert isinstance(record, BandwidthRecord)
    return record


def suite_matmul_tflops(n: int, repeats: int) -> float:
    outcome = matmul("cpu", shapes=[(n, n, n)], dtypes=["float32"], repeats=repeats, max_call_s=60.0)
    if not outcome.ok or not outcome.records:
        raise SystemExit(f"suite matmul failed: {outcome.status}")
    record = outcome.records[0]
    assert isinstance(record, MatmulRecord)
    return record.tflops


NUMPY_MATMUL = """
import json, statistics, sys, time
import numpy as np
n, repeats = int(sys.argv[1]), int(sys.argv[2])
rng = np.random.default_rng(0)
a = rng.standard_normal((n, n), dtype=np.float32)
b = rng.standard_normal((n, n), dtype=np.float32)
c = np.empty((n, n), dtype=np.float32)
for _ in range(2):
    np.matmul(a, b, out=c)
t0 = time.perf_counter()
np.matmul(a, b, out=c)
inner = max(1, min(1000, round(0.01 / max(time.perf_counter() - t0, 1e-9))))
samples = []
for _ in range(repeats):
    t0 = time.perf_counter()
    for _ in range(inner):
        np.matmul(a, b, out=c)
    samples.append((time.perf_counter() - t0) / inner)
print(json.dumps({"tflops": 2 * n**3 / statistics.median(samples) / 1e12}))
"""


def numpy_matmul_tflops(n: int, repeats: int) -> float:
    """Median TFLOP/s of np.matmul on float32 n x n normal matrices, sampled as the suite samples
    (2 warm-ups, samples of ~10 ms, median), in a separate process so numpy's BLAS threads
    never share this process (or its cores' spin-waiting) with torch's."""
    out = subprocess.run(
        [sys.executable, "-c", NUMPY_MATMUL, str(n), str(repeats)], check=True, capture_output=True, text=True
    )
    return json.loads(out.stdout)["tflops"]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--elements", type=int, default=2**26, help="elements per array (float32); default 3 x 256 MiB"
    )
    parser.add_argument("--passes", type=int, default=11, help="timed passes per round")
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--sizes", default="512,1024,2048", help="square fp32 matmul sizes")
    args = parser.parse_args()

    import numpy as np
    import torch

    threads = torch.get_num_threads()
    cpus = os.cpu_count() or 1
    print(f"torch {torch.__version__} ({threads} threads), numpy {np.__version__}, {cpus} CPUs")
    print(f"load average before: {os.getloadavg()[0]:.2f} (1 min) on {cpus} CPUs")

    # 1. Triad, alternating C and suite.
    working_set = 3 * 4 * args.elements
    c_medians: list[float] = []
    s_medians: list[float] = []
    bw_ratio = None
    with tempfile.TemporaryDirectory(prefix="stream-triad-") as tmp:
        exe = compile_triad(Path(tmp))
        for _ in range(args.rounds):
            if exe is not None:
                time.sleep(PAUSE_S)
                ref = c_triad(exe, args.elements, args.passes + 1, threads)
                if not ref["check_ok"]:
                    raise SystemExit("C triad produced wrong values")
                c_medians.append(ref["median_gb_per_s"])
            time.sleep(PAUSE_S)
            rec = suite_triad(working_set, args.passes)
            s_medians.append(rec.gb_per_s)
    rows = [
        [
            "suite triad (torch.add, out=)",
            human_bytes(working_set),
            f"{statistics.median(s_medians):.1f}",
            f"{max(s_medians):.1f}",
        ]
    ]
    if c_medians:
        rows.append(
            [
                f"C triad (gcc -O3 -fopenmp, {threads} threads)",
                human_bytes(working_set),
                f"{statistics.median(c_medians):.1f}",
                f"{max(c_medians):.1f}",
            ]
        )
        paired = [s_ / c_ for s_, c_ in zip(s_medians, c_medians, strict=True)]
        bw_ratio = statistics.median(s_medians) / statistics.median(c_medians)
    else:
        print("gcc not found: no C triad to compare with.")
    print(f"\nTriad bandwidth, {args.rounds} rounds (STREAM counting: 3 words per element)")
    print(format_table(["implementation", "working set", "median of rounds GB/s", "best round GB/s"], rows))
    if bw_ratio is not None:
        verdict = "meets" if bw_ratio >= BANDWIDTH_GOAL else "BELOW"
        print(
            f"ratio suite / C (medians over rounds): {bw_ratio:.2f}x "
            f"(per-round ratios {min(paired):.2f}-{max(paired):.2f}x; "
            f"{verdict} the {BANDWIDTH_GOAL}x goal)"
        )

    # 2. fp32 matmul, alternating torch (in process) and numpy (subprocess) per size.
    rows = []
    size_ratios = []
    for n in [int(s) for s in args.sizes.split(",") if s]:
        torch_runs, numpy_runs = [], []
        for _ in range(args.rounds):
            time.sleep(PAUSE_S)
            torch_runs.append(suite_matmul_tflops(n, 5))
            time.sleep(PAUSE_S)
            numpy_runs.append(numpy_matmul_tflops(n, 5))
        paired = [t / p for t, p in zip(torch_runs, numpy_runs, strict=True)]
        size_ratios.append(statistics.median(torch_runs) / statistics.median(numpy_runs))
        rows.append(
            [
                str(n),
                f"{statistics.median(torch_runs) * 1e3:.1f}",
                f"{statistics.median(numpy_runs) * 1e3:.1f}",
                f"{size_ratios[-1]:.2f}x",
                f"{min(paired):.2f}-{max(paired):.2f}x",
            ]
        )
    torch_blas, numpy_blas = blas_names()
    print(f"\nfp32 matmul, square n x n x n, GFLOP/s (median of {args.rounds} rounds)")
    print(f"BLAS: torch uses {torch_blas}, numpy uses {numpy_blas}")
    print(format_table(["n", "torch (suite)", "numpy", "ratio", "per-round range"], rows))
    geo = statistics.geometric_mean(size_ratios)
    verdict = "meets" if geo >= MATMUL_GOAL else "BELOW"
    print(f"geometric mean over sizes of torch / numpy: {geo:.2f}x ({verdict} the {MATMUL_GOAL}x goal)")
    print(f"load average after: {os.getloadavg()[0]:.2f} (1 min)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
