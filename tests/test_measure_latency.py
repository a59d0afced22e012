"""Pointer-chase latency: the C program on the CPU, the Triton kernel on CUDA, and the ladder levels.

The ladder tests use the H100 family of simulators/data/memory_hierarchy.csv and the H100 run of
the project's measurement notes (../shared/measured/README.md, 2026-11-23).
"""

from __future__ import annotations

import json
import subprocess

import pytest

from measure import lock, status
from measure.latency import (
    build_pointer_chase,
    default_latency_sizes,
    latency,
)
from measure.views import chase_capacities, chase_level
from simulators.hierarchy import family

KiB, MiB, GiB = 1024, 1024**2, 1024**3


@pytest.fixture(autouse=True)
def _private_lock_and_cache(tmp_path, monkeypatch):
    monkeypatch.setenv(lock.LOCK_FILE_ENV, str(tmp_path / "measure.lock"))
    monkeypatch.setenv("GPU_FIELD_GUIDE_CACHE", str(tmp_path / "cache"))


def _cuda() -> bool:
    try:
        import torch
    except ImportError:
        return False
    return torch.cuda.is_available()


needs_cuda = pytest.mark.skipif(not _cuda(), reason="needs a CUDA GPU")


# --- the C program -------------------------------------------------------------------------------


def test_the_pointer_chase_compiles_once_and_is_reused(tmp_path):
    exe, first = build_pointer_chase(directory=tmp_path)
    assert exe is not None and first.ok, first
    again, second = build_pointer_chase(directory=tmp_path)
    assert again == exe and second.message.startswith("cached build")


def test_the_program_walks_one_cycle_through_every_line(tmp_path):
    """Sattolo's permutation is a single cycle: a walk of exactly `lines` loads from line 0 ends on
    line 0, and a walk one load shorter does not."""
    exe, _ = build_pointer_chase(directory=tmp_path)
    lines = 1024  # 64 KiB of 64-byte lines
    ends = []
    for loads in (lines, lines - 8):  # the walk is unrolled by 8
        out = subprocess.run(
            [str(exe), "64", "1", str(loads), "0", str(lines * 64)], capture_output=True, text=True
        )
        ends.append(json.loads(out.stdout)["end_line"])
    assert ends[0] == 0 and ends[1] != 0


def test_without_a_compiler_latency_says_what_to_install(monkeypatch):
    pytest.importorskip("torch")
    monkeypatch.delenv("CC", raising=False)
    monkeypatch.setenv("PATH", "")
    outcome = latency("cpu", sizes_bytes=[16 * KiB])
    assert (outcome.status.code, outcome.records) == (status.NO_COMPILER, ())
    assert "gcc" in outcome.status.install_hint


def test_an_l1_working_set_is_far_faster_than_one_far_past_the_last_level_cache():
    """16 KiB sits in any L1; the large set is at least twice the last-level cache the OS reports
    (and 256 MiB), so most loads miss every cache. On the 2-vCPU Xeon VM this was written on:
    about 1.4 ns vs 190-300 ns."""
    pytest.importorskip("torch")
    from measure.env import cpu_info
    from measure.latency import cpu_line_bytes

    caches = cpu_info().data_caches()
    llc = caches[-1].size_bytes if caches else 32 * MiB
    far = min(max(2 * llc, 256 * MiB), GiB)
    outcome = latency("cpu", sizes_bytes=[16 * KiB, far], repeats=3)
    assert outcome.ok, outcome.status
    small, large = outcome.records
    assert (small.kind, small.threads, small.line_bytes) == ("latency", 1, cpu_line_bytes())
    assert small.loads >= 8192 and small.p10_ns <= small.ns <= small.p90_ns
    assert "Sattolo" in small.method and small.cache_hint == "L1"
    assert large.ns / small.ns > 10


def test_default_sizes_step_by_four_when_quick_and_reach_past_the_cache():
    quick = [4 * KiB, 16 * KiB, 64 * KiB, 256 * KiB, MiB, 4 * MiB, 16 * MiB, 64 * MiB, 128 * MiB]
    assert default_latency_sizes("cpu", True, llc_bytes=32 * MiB) == quick  # 4 x the LLC, then stop
    full = default_latency_sizes("cpu", False, llc_bytes=32 * MiB)
    assert full[0] == 4 * KiB and full[-1] == 256 * MiB and full[1] == 8 * KiB
    assert default_latency_sizes("cuda", False)[-1] == 4 * GiB
    assert default_latency_sizes("cuda", False, free_bytes=4 * GiB)[-1] == GiB


@needs_cuda
def test_the_triton_chase_sees_l1_faster_than_device_memory():
    outcome = latency("cuda", sizes_bytes=[16 * KiB, 1 * GiB], repeats=3)
    assert outcome.ok, outcome.status
    small, large = outcome.records
    assert small.timer == "cuda_event" and small.line_bytes == 128
    assert large.cache_hint == "device memory" and large.ns > 3 * small.ns


@needs_cuda
def test_the_triton_kernel_follows_the_chain():
    """Chain 0 -> 16 -> 32 -> 0 (int64 slots, 128-byte lines): 4 loads from 0 end on 16."""
    import torch

    from measure.latency import chase_kernel

    chain = torch.zeros(48, dtype=torch.int64, device="cuda")
    chain[0], chain[16], chain[32] = 16, 32, 0
    start = torch.zeros(1, dtype=torch.int64, device="cuda")
    end = torch.empty_like(start)
    chase_kernel()[(1,)](chain, start, 4, end, num_warps=1)
    assert int(end.item()) == 16


# --- which ladder level a working set measures ---------------------------------------------------


@pytest.mark.parametrize(
    ("working_set", "level"),
    [
        (4 * KiB, "l1"),
        (192 * KiB, "l1"),
        (256 * KiB, None),  # the L1's own size: read 102 ns on the H100, between L1 and L2
        (512 * KiB, "l2"),
        (16 * MiB, "l2"),
        (32 * MiB, "l2-far"),  # past one 25 MB partition
        (48 * MiB, None),
        (64 * MiB, "device-memory"),
        (4 * GiB, "device-memory"),
    ],
)
def test_h100_working_sets_land_on_the_level_that_holds_them(working_set, level):
    """H100 SXM ladder: L1 256 KiB per SM, L2 50 MiB in two 25 MB partitions (RRZE, as the CSV
    notes), HBM3 80 GB; a level claims sets up to 3/4 of its capacity."""
    capacities = chase_capacities(family("h100-sxm"), {"type": "cuda"})
    assert chase_level(working_set, capacities) == level


def test_a_cpu_run_uses_its_own_cache_sizes_and_skips_a_level_the_ladder_lacks():
    """The CPU ladder (Norvig's table) has L1, L2 and main memory but no L3."""
    device = {
        "type": "cpu",
        "cpu": {
            "caches": [
                {"level": 1, "type": "Data", "size_bytes": 48 * KiB},
                {"level": 1, "type": "Instruction", "size_bytes": 32 * KiB},
                {"level": 2, "type": "Unified", "size_bytes": MiB},
                {"level": 3, "type": "Unified", "size_bytes": 32 * MiB},
            ]
        },
    }
    capacities = chase_capacities(family("cpu-norvig"), device)
    levels = [chase_level(size, capacities) for size in (16 * KiB, 512 * KiB, 8 * MiB, 256 * MiB)]
    assert levels == ["l1", "l2", None, "host-memory"]


def test_the_cache_folder_follows_the_environment(tmp_path, monkeypatch):
    from measure.latency import cache_dir

    monkeypatch.setenv("GPU_FIELD_GUIDE_CACHE", str(tmp_path / "x"))
    assert cache_dir() == tmp_path / "x"
    monkeypatch.delenv("GPU_FIELD_GUIDE_CACHE")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert cache_dir() == tmp_path / "gpu-field-guide"
