"""All-reduce over N processes with torch.distributed: algorithm and bus bandwidth over message
sizes, beside the ring model's prediction.

Backends: gloo for CPU processes, NCCL for GPUs (one process per GPU). The benchmark runs in a
separate Python process (`python -m measure.collectives`), which starts the ranks with
torch.multiprocessing.spawn and a file:// rendezvous; the caller (a Streamlit page, the CLI)
only reads its JSON lines, so no CUDA or process-group state leaks into the caller. Under
torchrun the same module runs one rank per process: `torchrun --nproc-per-node=2 -m
measure.collectives --from-env`.

Bandwidths follow NVIDIA/nccl-tests doc/PERFORMANCE.md: algbw = S / t, and for all-reduce
busbw = algbw x 2(n-1)/n, where S is the message size per rank and n the number of ranks.
"""

from __future__ import annotations

import argparse
import json
import os
import queue
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from measure import status as st
from measure.results import AllReduceRecord, Record
from measure.timing import ProgressFn, StopFn, TimingStats, check_stop, report
from measure.workloads import Context, KiB, MiB, run_guarded

ROOT = Path(__file__).resolve().parent.parent


def allreduce_bus_factor(world_size: int) -> float:
    """busbw / algbw for all-reduce: 2(n-1)/n (nccl-tests doc/PERFORMANCE.md)."""
    return 2.0 * (world_size - 1) / world_size


def ring_allreduce_time_s(
    message_bytes: float, world_size: int, link_bytes_per_s: float, overhead_s: float = 0.0
) -> float:
    """Best-case all-reduce time: overhead + (S / B) x 2(n-1)/n, with B each rank's bandwidth to
    the others in one direction (nccl-tests doc/PERFORMANCE.md, "AllReduce").

    The bytes each rank sends come from the parallelism simulator
    (``simulators.parallelism.ring_allreduce_bytes_per_gpu``: S x 2(n-1)/n), so the measured
    points and the simulator's model are the same formula.
    """
    from simulators.parallelism import ring_allreduce_bytes_per_gpu

    if world_size < 1 or link_bytes_per_s <= 0:
        raise ValueError("world_size must be >= 1 and link bandwidth positive")
    if world_size == 1:
        return overhead_s
    return overhead_s + ring_allreduce_bytes_per_gpu(message_bytes, world_size) / link_bytes_per_s


def default_allreduce_sizes(device: str, quick: bool) -> list[int]:
    top = (4 * MiB if quick else 64 * MiB) if device == "cpu" else (64 * MiB if quick else 1024 * MiB)
    sizes = []
    size = 4 * KiB
    while size <= top:
        sizes.append(size)
        size *= 4
    return sizes


def allreduce(
    world_size: int | None = None,
    *,
    device: str = "cpu",
    sizes_bytes: Sequence[int] | None = None,
    dtype: str = "float32",
    repeats: int | None = None,
    quick: bool = False,
    link_bytes_per_s: float | None = None,
    link_source: str = "",
    overhead_s: float | None = 0.0,
    timeout_s: float = 600.0,
    progress: ProgressFn | None = None,
    should_stop: StopFn | None = None,
) -> st.Outcome:
    """All-reduce (sum) of messages of `sizes_bytes` per rank across `world_size` processes.

    device "cpu": gloo, default 2 processes, each with torch threads = cores / processes.
    device "cuda": NCCL, one process per GPU, default all visible GPUs (needs at least 2).
    Each sample times several back-to-back all-reduces between barriers and takes the slowest
    rank's time; the median over `repeats` samples gives algbw and busbw. With
    `link_bytes_per_s` each record also carries the ring model's predicted time, overhead +
    (S / B) x 2(n-1)/n, with `overhead_s` fixed or, when None, the fastest sample of the smallest
    message (whose time is all overhead, nccl-tests' "Time" section). Returns AllReduceRecords.
    """
    kind = "cuda" if device.startswith("cuda") else device

    def body(ctx: Context, records: list[Record]) -> st.Status | None:
        torch = ctx.torch
        if kind == "cpu":
            backend = "gloo"
            n = world_size or 2
            if not torch.distributed.is_available() or not torch.distributed.is_gloo_available():
                return st.unsupported("This PyTorch build has no gloo backend for torch.distributed.")
        elif kind == "cuda":
            backend = "nccl"
            n = world_size or torch.cuda.device_count()
            if not torch.distributed.is_available() or not torch.distributed.is_nccl_available():
                return st.unsupported("This PyTorch build has no NCCL backend (Linux CUDA builds have it).")
            if n < 2 or torch.cuda.device_count() < n:
                return st.unsupported(
                    "An all-reduce between GPUs needs at least 2 GPUs; "
                    f"this machine has {torch.cuda.device_count()}."
                )
        else:
            return st.unsupported("All-reduce runs on CPU processes (gloo) or CUDA GPUs (NCCL).")
        if n < 2:
            return st.unsupported("An all-reduce needs at least 2 processes.")
        sizes = sorted(sizes_bytes) if sizes_bytes else default_allreduce_sizes(kind, quick)
        overhead = overhead_s
        reps = repeats or (5 if quick else 10)
        threads = max(1, (os.cpu_count() or 1) // n)
        cmd = [
            sys.executable,
            "-c",
            # Not `-m`: spawned ranks then unpickle measure.collectives._worker by its import path.
            "import sys; from measure.collectives import main; raise SystemExit(main(sys.argv[1:]))",
            "--world-size",
            str(n),
            "--backend",
            backend,
            "--dtype",
            dtype,
            "--repeats",
            str(reps),
            "--threads",
            str(threads),
            "--sizes",
            ",".join(str(s) for s in sizes),
        ]
        report(progress, 0.0, f"starting {n} {backend} processes")
        for line in _stream_child(cmd, timeout_s, should_stop):
            if line.get("event") == "error":
                return st.Status(
                    False, st.ERROR, "The all-reduce benchmark failed.", "", str(line.get("message", ""))
                )
            if line.get("event") != "result":
                continue
            size = int(line["bytes"])
            stats = TimingStats.from_samples(line["samples_s"], int(line["inner_loops"]), "perf_counter")
            algbw = size / stats.median_s
            factor = allreduce_bus_factor(n)
            if overhead is None:
                # The smallest message's fastest sample: its time is all fixed overhead.
                overhead = stats.min_s
            predicted = (
                ring_allreduce_time_s(size, n, link_bytes_per_s, overhead) if link_bytes_per_s else None
            )
            records.append(
                AllReduceRecord(
                    **{**ctx.common(), "device": "cpu" if kind == "cpu" else "cuda", "threads": threads},
                    **stats.fields(),
                    backend=backend,
                    world_size=n,
                    bytes=size,
                    dtype=dtype,
                    algbw_gb_per_s=algbw / 1e9,
                    busbw_gb_per_s=algbw * factor / 1e9,
                    algbw_bytes_per_s=algbw,
                    busbw_bytes_per_s=algbw * factor,
                    bus_factor=factor,
                    predicted_s=predicted,
                    model_link_bytes_per_s=link_bytes_per_s,
                    model_overhead_s=overhead if link_bytes_per_s else None,
                    link_source=link_source,
                )
            )
            report(progress, len(records) / len(sizes), f"all-reduce {size / KiB:.0f} KiB")
        report(progress, 1.0, "all-reduce done")
        if len(records) < len(sizes):
            return st.Status(False, st.ERROR, "The all-reduce benchmark stopped before all sizes finished.")
        return None

    return run_guarded("all-reduce", "cuda:0" if kind == "cuda" else kind, body)


class _ChildTimeout(Exception):
    pass


def _stream_child(cmd: list[str], timeout_s: float, should_stop: StopFn | None) -> Any:
    """Run the benchmark process, yielding its JSON lines; kill it on cancel or timeout."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(ROOT), env.get("PYTHONPATH", "")) if p)
    with tempfile.TemporaryFile(mode="w+") as err:
        proc = subprocess.Popen(
            cmd, stdout=subprocess.PIPE, stderr=err, text=True, env=env, cwd=str(ROOT), start_new_session=True
        )
        lines: queue.Queue[str | None] = queue.Queue()

        def pump() -> None:
            assert proc.stdout is not None
            for raw in proc.stdout:
                lines.put(raw)
            lines.put(None)

        reader = threading.Thread(target=pump, daemon=True)
        reader.start()
        deadline = time.monotonic() + timeout_s
        try:
            while True:
                check_stop(should_stop)
                if time.monotonic() > deadline:
                    raise _ChildTimeout
                try:
                    raw = lines.get(timeout=0.2)
                except queue.Empty:
                    continue
                if raw is None:
                    break
                raw = raw.strip()
                if raw.startswith("{"):
                    try:
                        yield json.loads(raw)
                    except ValueError:
                        continue
            proc.wait(timeout=30)
            if proc.returncode != 0:
                err.seek(0)
                tail = err.read()[-800:]
                yield {"event": "error", "message": f"exit code {proc.returncode}: {tail.strip()}"}
        except _ChildTimeout:
            _kill(proc)
            yield {"event": "error", "message": f"timed out after {timeout_s:.0f} s"}
        finally:
            if proc.poll() is None:
                _kill(proc)


def _kill(proc: subprocess.Popen[str]) -> None:
    """Stop the benchmark process and the ranks it spawned (its own process group)."""
    import signal

    try:
        os.killpg(proc.pid, signal.SIGTERM)
    except (ProcessLookupError, PermissionError, AttributeError):
        proc.terminate()
    try:
        proc.wait(timeout=10)
    except subprocess.TimeoutExpired:
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError, AttributeError):
            proc.kill()
        proc.wait(timeout=10)


# ---------------------------------------------------------------------------------------------
# The benchmark process (python -m measure.collectives)


def _worker(rank: int, world_size: int, init_method: str, cfg: dict[str, Any]) -> None:
    """One rank: time all-reduces of each size; rank 0 prints one JSON line per size."""
    from datetime import timedelta

    import torch
    import torch.distributed as dist

    torch.set_num_threads(int(cfg["threads"]))
    backend = cfg["backend"]
    if backend == "nccl":
        local = int(os.environ.get("LOCAL_RANK", rank))
        torch.cuda.set_device(local)
        device = f"cuda:{local}"
    else:
        device = "cpu"

    def sync() -> None:
        if device != "cpu":
            torch.cuda.synchronize(device)

    dist.init_process_group(
        backend, init_method=init_method, rank=rank, world_size=world_size, timeout=timedelta(seconds=120)
    )
    try:
        dtype = getattr(torch, cfg["dtype"])
        element = torch.empty((), dtype=dtype).element_size()
        check = torch.ones(4, dtype=dtype, device=device)
        dist.all_reduce(check)
        if float(check[0]) != world_size:
            raise RuntimeError(f"all-reduce sanity check failed: {float(check[0])} != {world_size}")
        for size in cfg["sizes"]:
            x = torch.zeros(max(int(size) // element, 1), dtype=dtype, device=device)
            for _ in range(3):
                dist.all_reduce(x)
            sync()
            singles = []
            for _ in range(5):
                t0 = time.perf_counter()
                dist.all_reduce(x)
                sync()
                singles.append(time.perf_counter() - t0)
            # The fastest single op sets how many ops fill a ~10 ms sample; every rank must
            # pick the same count, so take the largest estimate over ranks.
            estimate = torch.tensor([min(singles)], dtype=torch.float64, device=device)
            dist.all_reduce(estimate, op=dist.ReduceOp.MAX)
            inner = int(min(max(round(0.01 / max(float(estimate), 1e-7)), 1), 1000))
            samples = []
            for _ in range(int(cfg["repeats"])):
                if device == "cpu":
                    dist.barrier()
                else:
                    dist.barrier(device_ids=[torch.cuda.current_device()])
                sync()
                t0 = time.perf_counter()
                for _ in range(inner):
                    dist.all_reduce(x)
                sync()
                elapsed = torch.tensor(
                    [(time.perf_counter() - t0) / inner], dtype=torch.float64, device=device
                )
                dist.all_reduce(elapsed, op=dist.ReduceOp.MAX)  # the slowest rank sets the time
                samples.append(float(elapsed))
            if rank == 0:
                line = {
                    "event": "result",
                    "bytes": x.numel() * element,
                    "samples_s": samples,
                    "inner_loops": inner,
                }
                print(json.dumps(line), flush=True)
            del x
    finally:
        dist.destroy_process_group()


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m measure.collectives", description=__doc__.split("\n\n")[0]
    )
    parser.add_argument("--world-size", type=int, default=2)
    parser.add_argument("--backend", choices=["gloo", "nccl"], default="gloo")
    parser.add_argument("--dtype", default="float32")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--sizes", default=",".join(str(s) for s in default_allreduce_sizes("cpu", True)))
    parser.add_argument(
        "--from-env", action="store_true", help="run one rank as started by torchrun (env://)"
    )
    args = parser.parse_args(argv)
    cfg = {
        "backend": args.backend,
        "dtype": args.dtype,
        "repeats": args.repeats,
        "threads": args.threads,
        "sizes": [int(s) for s in args.sizes.split(",") if s],
    }
    if args.from_env:
        _worker(int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"]), "env://", cfg)
        return 0
    import torch.multiprocessing as mp

    with tempfile.TemporaryDirectory(prefix="gfg-allreduce-") as tmp:
        init_method = Path(tmp, "rendezvous").as_uri()
        mp.spawn(_worker, args=(args.world_size, init_method, cfg), nprocs=args.world_size, join=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
