"""The memory hierarchy of GPUs, Apple silicon and a CPU: data, transfer times and Little's law.

One row of ``data/memory_hierarchy.csv`` per (hardware family, level): registers, L1/shared
memory, L2, device memory (HBM/GDDR/unified), host memory over PCIe or NVLink-C2C, a peer GPU
over NVLink, the network, an NVMe drive. Each row has a capacity with its scope (per SM, per
GPU, ...), a latency range, a bandwidth with its scope, and the URLs it came from. Latencies
measured in clock cycles are stored as cycles plus the clock used, and converted here.

Main latency sources: RRZE-HPC gpu-benches ``gpu-latency`` (one warp chasing pointers through a
buffer, https://github.com/RRZE-HPC/gpu-benches), with the spread between tools taken from
markdewing/AI_kernels and caps-tum/mt4g. Where published microbenchmarks disagree a level has a
range (min, max); the models use its midpoint unless told otherwise.

The functions here are the arithmetic the memory-hierarchy page shows:

* ``transfer_time_s``: time to move N bytes = latency + N / bandwidth;
* ``crossover_bytes`` / ``bytes_in_flight``: latency × bandwidth, read two ways (where the
  bandwidth term overtakes latency; how many bytes must be in flight to keep a level busy,
  Little's law);
* ``warps_in_flight`` / ``occupancy_needed``: those bytes as 32-thread warps per SM;
* ``human_scale``: latencies rescaled so that the fastest level takes one second;
* ``place_model``: weights and KV cache of a model placed on device memory, the rest streamed
  over the host link for every generated token.

Units inside: bytes, seconds, bytes/s. Conversion to GB, ns, ... happens at display.
"""

from __future__ import annotations

import csv
import functools
import math
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from simulators.units import binary_bytes, si

DATA_PATH = Path(__file__).resolve().parent / "data" / "memory_hierarchy.csv"

# Level ids in ladder order (closest to the ALUs first) with a generic display name. A family
# uses a subset; its rows carry their own specific names ("HBM3", "Host memory over PCIe 5.0").
LEVELS: dict[str, str] = {
    "registers": "Registers",
    "l1": "L1 cache",
    "shared": "Shared memory",
    "l2": "L2 cache",
    "l2-far": "L2 far partition",
    "device-memory": "Device memory",
    "nvlink-c2c": "NVLink-C2C",
    "host-memory": "Host memory",
    "nvlink-peer": "Peer GPU (NVLink)",
    "network": "Network",
    "nvme": "NVMe SSD",
    "disk": "Hard disk",
}

# Levels inside the GPU package, where "warps in flight per SM" is the natural unit.
ON_DEVICE_LEVELS = ("registers", "l1", "shared", "l2", "l2-far", "device-memory")

CAPACITY_UNITS_BYTES: dict[str, float] = {
    "B": 1.0,
    "KiB": 2.0**10,
    "MiB": 2.0**20,
    "GiB": 2.0**30,
    "GB": 1e9,
    "TB": 1e12,
}

# Bandwidth units the CSV may use. "B/cycle" needs the row's clock; "ns/MB" is a published
# "time to read 1 MB" (Norvig's table), inverted here rather than typed as a derived number.
_BANDWIDTH_PER_UNIT: dict[str, float] = {
    "GB/s": 1e9,
    "TB/s": 1e12,
    "Gbit/s": 1e9 / 8,
    "MiB/s": 2.0**20,
}
BANDWIDTH_UNITS = (*_BANDWIDTH_PER_UNIT, "B/cycle", "ns/MB")
BANDWIDTH_KINDS = ("spec", "measured")

LatencyChoice = Literal["min", "mid", "max"]

_ID = re.compile(r"^[a-z0-9]+(?:-[a-z0-9]+)*$")
_URL = re.compile(r"^https?://[^\s/$.?#][^\s]*\.[^\s]*$")
_COLUMNS = (
    "family",
    "family_name",
    "accelerator_id",
    "sm_count",
    "max_warps_per_sm",
    "level",
    "level_name",
    "order",
    "capacity_value",
    "capacity_unit",
    "capacity_scope",
    "latency_cycles_min",
    "latency_cycles_max",
    "clock_mhz",
    "latency_ns_min",
    "latency_ns_max",
    "bandwidth_value",
    "bandwidth_unit",
    "bandwidth_directions",
    "bandwidth_kind",
    "bandwidth_scope",
    "source",
    "notes",
)
_FAMILY_COLUMNS = ("family_name", "accelerator_id", "sm_count", "max_warps_per_sm")


class HierarchyDataError(ValueError):
    """A row of the hierarchy CSV breaks the schema; the message names the line and the column."""

    def __init__(self, path: Path | str, line: int, column: str, problem: str) -> None:
        self.path = str(path)
        self.line = line
        self.column = column
        self.problem = problem
        super().__init__(f"{Path(path).name} line {line}: column '{column}': {problem}")


# ---------------------------------------------------------------------------------------------
# Records
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class MemoryLevel:
    """One level of one family's hierarchy, in bytes, seconds and bytes/s.

    ``bandwidth_bytes_per_s`` is one direction, in ``bandwidth_scope`` (for example per SM for
    L1, per GPU for HBM); a datasheet figure that adds both directions of a link is halved at
    load time (``bandwidth_directions`` = 2). ``None`` means no sourced value.
    """

    family: str
    level: str
    name: str
    order: int
    sm_count: int | None
    max_warps_per_sm: int | None
    capacity_bytes: float | None
    capacity_scope: str
    latency_cycles_min: float | None
    latency_cycles_max: float | None
    clock_hz: float | None
    latency_min_s: float | None
    latency_max_s: float | None
    bandwidth_bytes_per_s: float | None
    bandwidth_scope: str
    bandwidth_kind: str
    bandwidth_directions: int | None
    sources: tuple[str, ...]
    notes: str

    @property
    def has_latency(self) -> bool:
        return self.latency_min_s is not None

    @property
    def has_bandwidth(self) -> bool:
        return self.bandwidth_bytes_per_s is not None

    @property
    def latency_mid_s(self) -> float | None:
        """Midpoint of the published latency range (arithmetic mean of min and max)."""
        if self.latency_min_s is None or self.latency_max_s is None:
            return None
        return (self.latency_min_s + self.latency_max_s) / 2

    def latency_s(self, which: LatencyChoice = "mid") -> float:
        """The latency at one end of the range or its midpoint; error if the level has none."""
        values = {"min": self.latency_min_s, "mid": self.latency_mid_s, "max": self.latency_max_s}
        if which not in values:
            raise ValueError(f"latency must be 'min', 'mid' or 'max', got {which!r}")
        value = values[which]
        if value is None:
            raise ValueError(f"{self.family}/{self.level} has no sourced latency")
        return value

    @property
    def bandwidth_is_per_sm(self) -> bool:
        return self.bandwidth_scope.startswith("per SM")

    @property
    def bandwidth_per_device_bytes_per_s(self) -> float | None:
        """Bandwidth of the whole device: a per-SM figure times the SM count, else as stored."""
        if self.bandwidth_bytes_per_s is None:
            return None
        if self.bandwidth_is_per_sm:
            if self.sm_count is None:
                return None
            return self.bandwidth_bytes_per_s * self.sm_count
        return self.bandwidth_bytes_per_s

    @property
    def bandwidth_per_sm_bytes_per_s(self) -> float | None:
        """Bandwidth one SM gets: a per-SM figure as stored, a device figure divided by SMs."""
        if self.bandwidth_bytes_per_s is None:
            return None
        if self.bandwidth_is_per_sm:
            return self.bandwidth_bytes_per_s
        if self.sm_count is None:
            return None
        return self.bandwidth_bytes_per_s / self.sm_count


@dataclass(frozen=True)
class HardwareFamily:
    """One accelerator (or CPU) with its levels in ladder order."""

    id: str
    name: str
    accelerator_id: str
    sm_count: int | None
    max_warps_per_sm: int | None
    levels: tuple[MemoryLevel, ...]

    def level(self, level_id: str) -> MemoryLevel:
        for item in self.levels:
            if item.level == level_id:
                return item
        known = ", ".join(item.level for item in self.levels)
        raise KeyError(f"{self.id} has no level {level_id!r} (has: {known})")

    def has_level(self, level_id: str) -> bool:
        return any(item.level == level_id for item in self.levels)


@dataclass(frozen=True)
class MeasuredPoint:
    """A measurement to draw beside the model: a latency, a bandwidth or a timed transfer.

    ``level`` places it on the ladder; ``nbytes`` with ``seconds`` places it on the
    transfer-time chart. ``label`` is the legend text ("your GPU, torch copy"). ``family``, when
    set, is the hardware family it was measured on: a ladder comparing two families draws it
    beside that family's published marks.
    """

    label: str
    level: str | None = None
    nbytes: float | None = None
    seconds: float | None = None
    bytes_per_s: float | None = None
    family: str = ""

    def __post_init__(self) -> None:
        if not self.label.strip():
            raise ValueError("a measured point needs a label")
        if self.seconds is None and self.bytes_per_s is None:
            raise ValueError(f"measured point {self.label!r} needs seconds or bytes_per_s")
        for name in ("nbytes", "seconds", "bytes_per_s"):
            value = getattr(self, name)
            if value is not None and not (math.isfinite(value) and value > 0):
                raise ValueError(f"measured point {self.label!r}: {name} must be > 0, got {value}")


# ---------------------------------------------------------------------------------------------
# Loading and validation
# ---------------------------------------------------------------------------------------------


def cycles_to_seconds(cycles: float, clock_hz: float) -> float:
    """Seconds taken by ``cycles`` clock cycles at ``clock_hz``: cycles / clock."""
    if clock_hz <= 0:
        raise ValueError(f"clock must be > 0 Hz, got {clock_hz}")
    return cycles / clock_hz


def _number(row: dict[str, str], column: str, line: int, path: Path) -> float | None:
    text = (row.get(column) or "").strip()
    if not text:
        return None
    try:
        value = float(text)
    except ValueError:
        raise HierarchyDataError(path, line, column, f"not a number: {text!r}") from None
    if not math.isfinite(value) or value <= 0:
        raise HierarchyDataError(path, line, column, f"must be a positive number, got {text!r}")
    return value


def _integer(row: dict[str, str], column: str, line: int, path: Path) -> int | None:
    value = _number(row, column, line, path)
    if value is None:
        return None
    if value != int(value):
        raise HierarchyDataError(path, line, column, f"must be a whole number, got {row[column]!r}")
    return int(value)


def _range(
    row: dict[str, str], low_col: str, high_col: str, line: int, path: Path
) -> tuple[float | None, float | None]:
    low = _number(row, low_col, line, path)
    high = _number(row, high_col, line, path)
    if (low is None) != (high is None):
        missing = high_col if high is None else low_col
        raise HierarchyDataError(path, line, missing, "a range needs both min and max")
    if low is not None and high is not None and low > high:
        raise HierarchyDataError(path, line, high_col, f"max {high} is below min {low}")
    return low, high


def _parse_row(row: dict[str, str], line: int, path: Path) -> MemoryLevel:
    family = (row.get("family") or "").strip()
    if not _ID.match(family):
        raise HierarchyDataError(path, line, "family", f"must be a lowercase slug, got {family!r}")
    level = (row.get("level") or "").strip()
    if level not in LEVELS:
        raise HierarchyDataError(path, line, "level", f"unknown level {level!r}; use one of {list(LEVELS)}")
    name = (row.get("level_name") or "").strip() or LEVELS[level]
    order_text = (row.get("order") or "").strip()
    if not order_text.isdigit():
        raise HierarchyDataError(path, line, "order", f"must be a whole number >= 0, got {order_text!r}")
    order = int(order_text)

    capacity_value = _number(row, "capacity_value", line, path)
    capacity_unit = (row.get("capacity_unit") or "").strip()
    capacity_bytes = None
    if capacity_value is not None:
        if capacity_unit not in CAPACITY_UNITS_BYTES:
            raise HierarchyDataError(
                path,
                line,
                "capacity_unit",
                f"must be one of {list(CAPACITY_UNITS_BYTES)}, got {capacity_unit!r}",
            )
        capacity_bytes = capacity_value * CAPACITY_UNITS_BYTES[capacity_unit]
        if not (row.get("capacity_scope") or "").strip():
            raise HierarchyDataError(
                path, line, "capacity_scope", "a capacity needs its scope (per SM, per GPU, ...)"
            )
    elif capacity_unit:
        raise HierarchyDataError(path, line, "capacity_value", "a unit without a value")

    clock_mhz = _number(row, "clock_mhz", line, path)
    clock_hz = clock_mhz * 1e6 if clock_mhz is not None else None
    cycles_min, cycles_max = _range(row, "latency_cycles_min", "latency_cycles_max", line, path)
    ns_min, ns_max = _range(row, "latency_ns_min", "latency_ns_max", line, path)
    if cycles_min is not None and ns_min is not None:
        raise HierarchyDataError(
            path,
            line,
            "latency_ns_min",
            "give cycles (with clock_mhz) or ns, not both: ns are derived from cycles",
        )
    latency_min_s = latency_max_s = None
    if cycles_min is not None and cycles_max is not None:
        if clock_hz is None:
            raise HierarchyDataError(
                path, line, "clock_mhz", "latency in cycles needs the clock it was measured at"
            )
        latency_min_s = cycles_to_seconds(cycles_min, clock_hz)
        latency_max_s = cycles_to_seconds(cycles_max, clock_hz)
    elif ns_min is not None and ns_max is not None:
        latency_min_s, latency_max_s = ns_min * 1e-9, ns_max * 1e-9

    bandwidth_value = _number(row, "bandwidth_value", line, path)
    bandwidth_unit = (row.get("bandwidth_unit") or "").strip()
    directions = _integer(row, "bandwidth_directions", line, path)
    kind = (row.get("bandwidth_kind") or "").strip()
    scope = (row.get("bandwidth_scope") or "").strip()
    bandwidth = None
    if bandwidth_value is not None:
        if bandwidth_unit not in BANDWIDTH_UNITS:
            raise HierarchyDataError(
                path,
                line,
                "bandwidth_unit",
                f"must be one of {list(BANDWIDTH_UNITS)}, got {bandwidth_unit!r}",
            )
        if directions not in (1, 2):
            raise HierarchyDataError(
                path, line, "bandwidth_directions", "1 (one direction) or 2 (both directions added)"
            )
        if kind not in BANDWIDTH_KINDS:
            raise HierarchyDataError(path, line, "bandwidth_kind", f"must be one of {list(BANDWIDTH_KINDS)}")
        if not scope:
            raise HierarchyDataError(
                path, line, "bandwidth_scope", "a bandwidth needs its scope (per SM, per GPU, ...)"
            )
        if bandwidth_unit == "B/cycle":
            if clock_hz is None:
                raise HierarchyDataError(path, line, "clock_mhz", "a bandwidth in B/cycle needs the clock")
            total = bandwidth_value * clock_hz
        elif bandwidth_unit == "ns/MB":
            total = 1e6 / (bandwidth_value * 1e-9)
        else:
            total = bandwidth_value * _BANDWIDTH_PER_UNIT[bandwidth_unit]
        bandwidth = total / directions
    elif bandwidth_unit or kind:
        raise HierarchyDataError(path, line, "bandwidth_value", "bandwidth unit or kind without a value")

    sources = tuple(s.strip() for s in (row.get("source") or "").split(";") if s.strip())
    if not sources:
        raise HierarchyDataError(path, line, "source", "every row needs at least one source URL")
    for source in sources:
        if not _URL.match(source):
            raise HierarchyDataError(path, line, "source", f"not a URL: {source!r}")

    return MemoryLevel(
        family=family,
        level=level,
        name=name,
        order=order,
        sm_count=_integer(row, "sm_count", line, path),
        max_warps_per_sm=_integer(row, "max_warps_per_sm", line, path),
        capacity_bytes=capacity_bytes,
        capacity_scope=(row.get("capacity_scope") or "").strip(),
        latency_cycles_min=cycles_min,
        latency_cycles_max=cycles_max,
        clock_hz=clock_hz,
        latency_min_s=latency_min_s,
        latency_max_s=latency_max_s,
        bandwidth_bytes_per_s=bandwidth,
        bandwidth_scope=scope,
        bandwidth_kind=kind,
        bandwidth_directions=directions if bandwidth is not None else None,
        sources=sources,
        notes=(row.get("notes") or "").strip(),
    )


def parse_hierarchy_csv(path: Path | str) -> tuple[HardwareFamily, ...]:
    """Read and validate a hierarchy CSV; raise ``HierarchyDataError`` naming line and column.

    Checks: known columns and level ids, positive numbers, min ≤ max, latency in cycles or in
    ns (never both), a clock for every cycle count, units from a fixed list, scopes present,
    every source a URL, family-level columns equal on all rows of a family, one row per level.
    """
    path = Path(path)
    with path.open(newline="", encoding="utf-8") as handle:
        reader = csv.DictReader(handle)
        header = tuple(reader.fieldnames or ())
        missing = [c for c in _COLUMNS if c not in header]
        if missing:
            raise HierarchyDataError(path, 1, missing[0], "column missing from the header")
        unknown = [c for c in header if c not in _COLUMNS]
        if unknown:
            raise HierarchyDataError(path, 1, unknown[0], "unknown column")
        by_family: dict[str, list[MemoryLevel]] = {}
        family_fields: dict[str, tuple[str, ...]] = {}
        for index, row in enumerate(reader):
            line = index + 2  # the header is line 1
            level = _parse_row(row, line, path)
            fields = tuple((row.get(c) or "").strip() for c in _FAMILY_COLUMNS)
            if level.family in family_fields and family_fields[level.family] != fields:
                first_diff = next(
                    c
                    for c, a, b in zip(_FAMILY_COLUMNS, fields, family_fields[level.family], strict=True)
                    if a != b
                )
                raise HierarchyDataError(
                    path, line, first_diff, f"differs from earlier rows of {level.family}"
                )
            family_fields.setdefault(level.family, fields)
            rows = by_family.setdefault(level.family, [])
            if any(r.level == level.level for r in rows):
                raise HierarchyDataError(path, line, "level", f"{level.family} already has {level.level!r}")
            if any(r.order == level.order for r in rows):
                raise HierarchyDataError(
                    path, line, "order", f"{level.family} already uses order {level.order}"
                )
            rows.append(level)
    if not by_family:
        raise HierarchyDataError(path, 2, "family", "no data rows")
    families = []
    for family_id, levels in by_family.items():
        name, accelerator_id, _sm, _warps = family_fields[family_id]
        first = levels[0]
        families.append(
            HardwareFamily(
                id=family_id,
                name=name or family_id,
                accelerator_id=accelerator_id,
                sm_count=first.sm_count,
                max_warps_per_sm=first.max_warps_per_sm,
                levels=tuple(sorted(levels, key=lambda item: item.order)),
            )
        )
    return tuple(families)


@functools.lru_cache(maxsize=1)
def _load_families() -> tuple[HardwareFamily, ...]:
    return parse_hierarchy_csv(DATA_PATH)


def load_hierarchy() -> dict[str, list[MemoryLevel]]:
    """Every family's levels in ladder order, from ``data/memory_hierarchy.csv`` (validated once).

    Returns a fresh dict of fresh lists on each call; the records inside are frozen and shared.
    """
    return {family.id: list(family.levels) for family in _load_families()}


def families() -> list[HardwareFamily]:
    """The families in the data file, in file order."""
    return list(_load_families())


def family(family_id: str) -> HardwareFamily:
    """One family by id (``h100-sxm``, ``rtx-4090``, ...); KeyError lists the known ids."""
    for item in _load_families():
        if item.id == family_id:
            return item
    known = ", ".join(item.id for item in _load_families())
    raise KeyError(f"unknown family {family_id!r} (known: {known})")


def get_level(family_id: str, level_id: str) -> MemoryLevel:
    """One level of one family."""
    return family(family_id).level(level_id)


# ---------------------------------------------------------------------------------------------
# Transfer time, crossover, Little's law
# ---------------------------------------------------------------------------------------------


def _device_bandwidth(level: MemoryLevel) -> float:
    """The level's whole-device bandwidth, or a ValueError saying what is missing."""
    bandwidth = level.bandwidth_per_device_bytes_per_s
    if bandwidth is None:
        what = "an SM count" if level.has_bandwidth else "a sourced bandwidth"
        raise ValueError(f"{level.family}/{level.level} lacks {what}")
    return bandwidth


def transfer_time_s(level: MemoryLevel, nbytes: float, latency: LatencyChoice = "mid") -> float:
    """Time to move ``nbytes`` from ``level``: latency + nbytes / bandwidth (seconds).

    The first-order startup-plus-streaming model; RRZE's gpu-small-kernels benchmark fits the
    same shape, T = V / (a + V/b) with startup overhead a and bandwidth b
    (github.com/RRZE-HPC/gpu-benches). Bandwidth is the level's one-direction, whole-device
    figure (a per-SM L1 figure times the SM count: all SMs reading their own L1).
    ``latency`` picks the range's min, mid(point) or max.
    """
    if not (nbytes >= 0 and math.isfinite(nbytes)):
        raise ValueError(f"nbytes must be a finite number >= 0, got {nbytes}")
    return level.latency_s(latency) + nbytes / _device_bandwidth(level)


def transfer_time_range_s(level: MemoryLevel, nbytes: float) -> tuple[float, float]:
    """(fastest, slowest) transfer time over the published latency range."""
    return transfer_time_s(level, nbytes, "min"), transfer_time_s(level, nbytes, "max")


def crossover_bytes(level: MemoryLevel, latency: LatencyChoice = "mid") -> float:
    """Transfer size at which the bandwidth term equals the latency: latency × bandwidth.

    Below it a transfer is latency-dominated (sending twice as much costs almost nothing more),
    above it bandwidth-dominated; at exactly this size the transfer takes 2 × latency.
    """
    return level.latency_s(latency) * _device_bandwidth(level)


def bytes_in_flight(level: MemoryLevel, *, per_sm: bool = False, latency: LatencyChoice = "mid") -> float:
    """Bytes that must be requested but not yet delivered to keep ``level`` busy (Little's law).

    Little's law: items in a system = arrival rate × time each spends inside, L = λ·W
    (J. D. C. Little, "A Proof for the Queuing Formula: L = λW", Operations Research 9(3):383,
    1961, doi.org/10.1287/opre.9.3.383). For memory, λ is the bandwidth and W the latency, so
    bytes in flight = latency × bandwidth — the same number as ``crossover_bytes``.

    ``per_sm=False`` uses the whole device's bandwidth (per-SM levels times the SM count);
    ``per_sm=True`` uses one SM's share (device levels divided by the SM count).
    """
    if not per_sm:
        return level.latency_s(latency) * _device_bandwidth(level)
    bandwidth = level.bandwidth_per_sm_bytes_per_s
    if bandwidth is None:
        what = "an SM count" if level.has_bandwidth else "a sourced bandwidth"
        raise ValueError(f"{level.family}/{level.level} lacks {what} for a per-SM figure")
    return level.latency_s(latency) * bandwidth


def loads_in_flight(
    level: MemoryLevel, bytes_per_load: float, *, per_sm: bool = False, latency: LatencyChoice = "mid"
) -> float:
    """Independent loads of ``bytes_per_load`` bytes that must be outstanding at once."""
    if bytes_per_load <= 0:
        raise ValueError(f"bytes_per_load must be > 0, got {bytes_per_load}")
    return bytes_in_flight(level, per_sm=per_sm, latency=latency) / bytes_per_load


def warps_in_flight(
    level: MemoryLevel,
    bytes_per_thread: float = 4,
    threads_per_warp: int = 32,
    *,
    per_sm: bool = True,
    latency: LatencyChoice = "mid",
) -> float:
    """Warps, each with one load of ``bytes_per_thread`` per thread outstanding, that keep
    ``level`` busy: bytes in flight / (bytes_per_thread × threads_per_warp). Per SM by default.

    Why GPUs need massive parallelism: a warp that issued a load waits a full latency before it
    can use the data. H100 HBM needs about a megabyte in flight across the GPU (≈350 ns ×
    3.35 TB/s), several kilobytes per SM, which with 4-byte loads is more warps than an SM can
    hold (64 on compute capability 9.0). So a kernel must keep many warps resident (occupancy)
    *and* give each of them several independent or wider loads (instruction-level parallelism,
    16-byte vector loads) — otherwise it cannot reach the bandwidth on the datasheet. The same
    reasoning at ALU scale is NVIDIA's: a 4-cycle FMA latency "can be hidden by as few as 4 warps
    per SM, assuming 4-way instruction-level parallelism" (Volta Tuning Guide §4.1.1,
    docs.nvidia.com/cuda/volta-tuning-guide).
    """
    if bytes_per_thread <= 0 or threads_per_warp <= 0:
        raise ValueError("bytes_per_thread and threads_per_warp must be > 0")
    return bytes_in_flight(level, per_sm=per_sm, latency=latency) / (bytes_per_thread * threads_per_warp)


def occupancy_needed(
    level: MemoryLevel,
    bytes_per_thread: float = 4,
    threads_per_warp: int = 32,
    latency: LatencyChoice = "mid",
) -> float:
    """Warps needed per SM (``warps_in_flight``) as a fraction of the SM's resident-warp limit.

    Above 1.0 even a fully occupied SM cannot saturate the level with one such load per thread.
    The limit is the Programming Guide's "maximum number of resident warps per SM".
    """
    if level.max_warps_per_sm is None:
        raise ValueError(f"{level.family} has no sourced resident-warp limit")
    needed = warps_in_flight(level, bytes_per_thread, threads_per_warp, per_sm=True, latency=latency)
    return needed / level.max_warps_per_sm


# ---------------------------------------------------------------------------------------------
# Human scale
# ---------------------------------------------------------------------------------------------

_SMALL_UNITS = ((1e-3, "ms"), (1e-6, "µs"), (1e-9, "ns"))
_LARGE_UNITS = (
    (365.25 * 86400.0, "year"),
    (86400.0, "day"),
    (3600.0, "hour"),
    (60.0, "minute"),
    (1.0, "second"),
)


def readable_duration(seconds: float) -> str:
    """A duration with a unit people picture: "1.5 minutes", "3.2 days", "840 ms"."""
    if not math.isfinite(seconds) or seconds < 0:
        raise ValueError(f"duration must be finite and >= 0, got {seconds}")
    if seconds == 0:
        return "0 seconds"
    seconds = float(f"{seconds:.3g}")  # round first, so 0.9999999 s reads "1 second", not "1e+03 ms"
    if seconds < 1:
        for size, unit in _SMALL_UNITS:
            if seconds >= size:
                return f"{seconds / size:.3g} {unit}"
        return f"{seconds / 1e-12:.3g} ps"
    for size, unit in _LARGE_UNITS:
        if seconds >= size:
            text = f"{seconds / size:.3g}"
            return f"{text} {unit}" if text == "1" else f"{text} {unit}s"
    raise AssertionError("unreachable")  # pragma: no cover


@dataclass(frozen=True)
class HumanScaleEntry:
    """One level's latency and the same latency on the human scale (``scaled_text`` to print)."""

    level: str
    name: str
    latency_s: float
    scaled_s: float

    @property
    def scaled_text(self) -> str:
        return readable_duration(self.scaled_s)


def human_scale(
    levels: Iterable[MemoryLevel],
    reference_level: str | None = None,
    reference_seconds: float = 1.0,
    latency: LatencyChoice = "mid",
) -> list[HumanScaleEntry]:
    """Latencies multiplied so that ``reference_level`` takes ``reference_seconds``.

    "If an L1 hit took one second, an HBM read would take ...". The reference defaults to the
    fastest level in ladder order that has a latency (registers where sourced, else L1).
    Levels without a sourced latency are left out.
    """
    with_latency = sorted((lv for lv in levels if lv.has_latency), key=lambda lv: lv.order)
    if not with_latency:
        raise ValueError("no level with a sourced latency")
    if reference_seconds <= 0:
        raise ValueError(f"reference_seconds must be > 0, got {reference_seconds}")
    if reference_level is None:
        reference = with_latency[0]
    else:
        matches = [lv for lv in with_latency if lv.level == reference_level]
        if not matches:
            raise ValueError(f"reference level {reference_level!r} is missing or has no latency")
        reference = matches[0]
    scale = reference_seconds / reference.latency_s(latency)
    return [
        HumanScaleEntry(
            level=lv.level,
            name=lv.name,
            latency_s=lv.latency_s(latency),
            scaled_s=lv.latency_s(latency) * scale,
        )
        for lv in with_latency
    ]


# ---------------------------------------------------------------------------------------------
# Where does my model live
# ---------------------------------------------------------------------------------------------


def offload_time_per_token_s(bytes_per_token: float, link_bandwidth_bytes_per_s: float) -> float:
    """Seconds to stream ``bytes_per_token`` over a host link for every generated token.

    Decoding one token (batch 1) reads every weight once, so weights that do not fit in device
    memory cross the link once per token: time = bytes / link bandwidth (latency ignored: at
    gigabytes it is negligible).
    """
    if bytes_per_token < 0 or link_bandwidth_bytes_per_s <= 0:
        raise ValueError("bytes_per_token must be >= 0 and the link bandwidth > 0")
    return bytes_per_token / link_bandwidth_bytes_per_s


@dataclass(frozen=True)
class Placement:
    """Bytes of weights and KV cache held by one level."""

    level: str
    name: str
    weight_bytes: float
    kv_bytes: float


@dataclass(frozen=True)
class ModelPlacement:
    """Weights and KV cache placed on device memory; the overflow lives in host memory.

    Per-token times assume decode at batch 1: every weight and the whole KV cache are read once
    per generated token (the memory roof; simulator-anchors §1.3), device bytes from device
    memory, the overflow across the host link.
    """

    family: str
    device: MemoryLevel
    link: MemoryLevel | None
    usable_device_bytes: float
    weight_bytes: float
    kv_bytes: float
    weights_on_device_bytes: float
    kv_on_device_bytes: float
    host_capacity_bytes: float | None

    @property
    def weights_offloaded_bytes(self) -> float:
        return self.weight_bytes - self.weights_on_device_bytes

    @property
    def kv_offloaded_bytes(self) -> float:
        return self.kv_bytes - self.kv_on_device_bytes

    @property
    def offloaded_bytes(self) -> float:
        return self.weights_offloaded_bytes + self.kv_offloaded_bytes

    @property
    def fits_on_device(self) -> bool:
        return self.offloaded_bytes == 0

    @property
    def fits_in_host(self) -> bool | None:
        """Whether the overflow fits the host memory; None when the host size is not sourced."""
        if self.host_capacity_bytes is None:
            return None
        return self.offloaded_bytes <= self.host_capacity_bytes

    @property
    def placements(self) -> tuple[Placement, ...]:
        items = [
            Placement(
                self.device.level, self.device.name, self.weights_on_device_bytes, self.kv_on_device_bytes
            )
        ]
        if not self.fits_on_device:
            host_name = self.link.name if self.link is not None else "nowhere (no host link)"
            host_id = self.link.level if self.link is not None else "none"
            items.append(Placement(host_id, host_name, self.weights_offloaded_bytes, self.kv_offloaded_bytes))
        return tuple(items)

    @property
    def device_read_time_per_token_s(self) -> float:
        bandwidth = self.device.bandwidth_per_device_bytes_per_s
        assert bandwidth is not None  # checked in place_model
        return (self.weights_on_device_bytes + self.kv_on_device_bytes) / bandwidth

    @property
    def offload_time_per_token_s(self) -> float:
        """Link time per token; 0 when everything fits, infinite when there is no link."""
        if self.fits_on_device:
            return 0.0
        if self.link is None or self.link.bandwidth_bytes_per_s is None:
            return math.inf
        return offload_time_per_token_s(self.offloaded_bytes, self.link.bandwidth_bytes_per_s)

    @property
    def time_per_token_s(self) -> float:
        """Device reads plus link transfers, one after the other (no overlap)."""
        return self.device_read_time_per_token_s + self.offload_time_per_token_s

    @property
    def time_per_token_overlapped_s(self) -> float:
        """The bound with perfect overlap of device reads and link transfers."""
        return max(self.device_read_time_per_token_s, self.offload_time_per_token_s)

    @property
    def all_on_device_time_per_token_s(self) -> float:
        """What a token would cost if device memory were large enough for everything."""
        bandwidth = self.device.bandwidth_per_device_bytes_per_s
        assert bandwidth is not None
        return (self.weight_bytes + self.kv_bytes) / bandwidth

    @property
    def slowdown(self) -> float:
        """time_per_token_s / all_on_device_time_per_token_s (1.0 when it all fits)."""
        ideal = self.all_on_device_time_per_token_s
        return self.time_per_token_s / ideal if ideal > 0 else 1.0


def _host_link(levels: Sequence[MemoryLevel]) -> MemoryLevel | None:
    for level_id in ("nvlink-c2c", "host-memory"):
        for level in levels:
            if level.level == level_id and level.has_bandwidth:
                return level
    return None


def place_model(
    weight_bytes: float,
    kv_bytes: float,
    levels: Sequence[MemoryLevel],
    *,
    usable_fraction: float = 1.0,
    kv_first: bool = True,
) -> ModelPlacement:
    """Place a model's weights and KV cache on a family's levels.

    Device memory takes ``usable_fraction`` of its capacity (leave room for activations and the
    CUDA context). With ``kv_first`` the KV cache is placed first — it grows with every token and
    is read every step — and weights fill what is left; the overflow goes to host memory and
    crosses the host link (NVLink-C2C on GH200, else PCIe) once per generated token. A family
    without a host link (Apple unified memory) gets an infinite offload time if it overflows.
    """
    if weight_bytes < 0 or kv_bytes < 0:
        raise ValueError("weight_bytes and kv_bytes must be >= 0")
    if not 0 < usable_fraction <= 1:
        raise ValueError(f"usable_fraction must be in (0, 1], got {usable_fraction}")
    devices = [lv for lv in levels if lv.level == "device-memory"]
    if not devices:
        raise ValueError("these levels have no device-memory level to place a model on")
    device = devices[0]
    if device.capacity_bytes is None or device.bandwidth_per_device_bytes_per_s is None:
        raise ValueError(f"{device.family}/device-memory needs a capacity and a bandwidth")
    usable = device.capacity_bytes * usable_fraction
    if kv_first:
        kv_on_device = min(kv_bytes, usable)
        weights_on_device = min(weight_bytes, usable - kv_on_device)
    else:
        weights_on_device = min(weight_bytes, usable)
        kv_on_device = min(kv_bytes, usable - weights_on_device)
    host = next((lv for lv in levels if lv.level == "host-memory"), None)
    return ModelPlacement(
        family=device.family,
        device=device,
        link=_host_link(levels),
        usable_device_bytes=usable,
        weight_bytes=float(weight_bytes),
        kv_bytes=float(kv_bytes),
        weights_on_device_bytes=float(weights_on_device),
        kv_on_device_bytes=float(kv_on_device),
        host_capacity_bytes=host.capacity_bytes if host is not None else None,
    )


# ---------------------------------------------------------------------------------------------
# Tables for the page (rows of display strings with units)
# ---------------------------------------------------------------------------------------------


def human_scale_table(fam: HardwareFamily) -> tuple[str, list[dict[str, str]]]:
    """(reference level name, rows): each level's latency and the same latency if the reference took 1 s."""
    entries = human_scale(fam.levels)
    rows = [
        {"Level": e.name, "Measured latency": si(e.latency_s, "s"), "On the human scale": e.scaled_text}
        for e in entries
    ]
    return entries[0].name, rows


def transfer_table(levels: Sequence[MemoryLevel]) -> list[dict[str, str]]:
    """Crossover size and the time for 4 KiB and 1 GB from every level with a latency and a bandwidth."""
    return [
        {
            "Level": lv.name,
            "Latency × bandwidth (crossover)": si(crossover_bytes(lv), "B"),
            "Time for 4 KiB": si(transfer_time_s(lv, 4096), "s"),
            "Time for 1 GB": si(transfer_time_s(lv, 1e9), "s"),
        }
        for lv in levels
        if lv.has_latency and lv.bandwidth_per_device_bytes_per_s
    ]


def littles_law_table(fams: Sequence[HardwareFamily], bytes_per_thread: float = 4) -> list[dict[str, str]]:
    """Bytes in flight across the chip and warps per SM needed, for each on-device level."""
    rows = []
    for fam in fams:
        for lv in fam.levels:
            if lv.has_latency and lv.bandwidth_per_device_bytes_per_s and lv.level in ON_DEVICE_LEVELS:
                rows.append(
                    {
                        "Hardware": fam.name,
                        "Level": lv.name,
                        "Bytes in flight (whole chip)": si(bytes_in_flight(lv), "B"),
                        "Warps per SM, one load each": f"{warps_in_flight(lv, bytes_per_thread):,.1f}",
                        "SM limit": str(fam.max_warps_per_sm or "—"),
                    }
                )
    return rows


def levels_table(fam: HardwareFamily) -> list[dict[str, str]]:
    """Every level of a family as published: capacity, latency range, bandwidth, and the source."""
    rows = []
    for lv in sorted(fam.levels, key=lambda lv: lv.order):
        latency = "—"
        if lv.has_latency:
            low, high = lv.latency_s("min"), lv.latency_s("max")
            latency = si(low, "s") if low == high else f"{si(low, 's')} – {si(high, 's')}"
        bandwidth = lv.bandwidth_per_device_bytes_per_s
        size = lv.capacity_bytes
        rows.append(
            {
                "Level": lv.name,
                "Capacity": (
                    f"{binary_bytes(size)} = {si(size, 'B')} {lv.capacity_scope}".strip() if size else "—"
                ),
                "Latency": latency,
                "Bandwidth": f"{si(bandwidth, 'B/s')} ({lv.bandwidth_kind})" if bandwidth else "—",
                "Source": lv.sources[0] if lv.sources else "",
            }
        )
    return rows
