"""Accelerator and interconnect catalog: sourced specs as frozen dataclasses.

The data lives in ``simulators/data/accelerators.csv`` and
``simulators/data/interconnects.csv``; ``simulators/data/README.md`` states the
conventions. Every row carries at least one http(s) source URL. The files are
checked when they are loaded: a bad cell raises :class:`CatalogError` naming the
file, the row id and the column, so a typo fails the test suite, not a page.

Units inside the code are bytes, seconds and FLOP/s (int8: OP/s). The CSV keeps
the units vendors print (GB or GiB, GB/s, TFLOPS, MiB, Gb/s, us); conversion happens
here, once, at load time.
"""

from __future__ import annotations

import csv
import difflib
import functools
import math
import re
from dataclasses import dataclass
from pathlib import Path

DATA_DIR = Path(__file__).resolve().parent / "data"
ACCELERATORS_CSV = DATA_DIR / "accelerators.csv"
INTERCONNECTS_CSV = DATA_DIR / "interconnects.csv"

DTYPES: tuple[str, ...] = ("fp32", "tf32", "bf16", "fp16", "fp8", "int8", "fp4")
"""Formats ``Accelerator.peak_flops`` knows. fp32 is the vector (non-tensor) rate; fp4 is the
vendor's 4-bit float matrix rate (NVFP4 / MXFP4, microscaled)."""

MEMORY_UNITS: dict[str, int] = {"GB": 10**9, "GiB": 2**30}
"""Units a capacity label may be stated in (``memory_unit`` column; empty means GB)."""

KINDS: tuple[str, ...] = ("gpu", "tpu", "accelerator", "cpu", "soc")
INTERCONNECT_KINDS: tuple[str, ...] = ("host-device", "scale-up", "chip-to-chip", "scale-out")

ID_PATTERN = re.compile(r"^[a-z0-9]+(?:-[a-z0-9]+)*$")
URL_PATTERN = re.compile(r"^https?://[^\s/$.?#][^\s]*\.[^\s]*$")

GB = 1e9  # vendors' decimal gigabyte
MIB = 2**20  # cache sizes are binary (torch prints L2_cache_size in MiB)
TERA = 1e12
DDR_CHANNEL_BYTES = 8  # one 64-bit DDR channel (DDR5 splits it into two 32-bit subchannels)

# CSV column -> dtype, for the per-format peak columns (TFLOPS; int8 in TOPS).
_PEAK_COLUMNS: dict[str, str] = {
    "fp32": "fp32_tflops",
    "tf32": "tf32_dense_tflops",
    "bf16": "bf16_dense_tflops",
    "fp16": "fp16_dense_tflops",
    "fp8": "fp8_dense_tflops",
    "int8": "int8_dense_tops",
    "fp4": "fp4_dense_tflops",
}

ACCELERATOR_COLUMNS: tuple[str, ...] = (
    "id",
    "kind",
    "vendor",
    "name",
    "year",
    "architecture",
    "devices_per_board",
    "memory_gb",
    "memory_unit",
    "memory_type",
    "memory_bandwidth_gbytes_per_s",
    "memory_channels",
    "memory_mt_per_s",
    *_PEAK_COLUMNS.values(),
    "unsupported_dtypes",
    "tdp_w",
    "l2_llc_cache_mib",
    "sm_cu_count",
    "interconnect",
    "interconnect_id",
    "interconnect_gbytes_per_s",
    "host_link",
    "host_link_id",
    "cloud_instances",
    "source",
    "source_notes",
    "notes",
)

INTERCONNECT_COLUMNS: tuple[str, ...] = (
    "id",
    "name",
    "kind",
    "published_value",
    "published_unit",
    "published_direction",
    "links",
    "lanes",
    "transfer_rate_gt_per_s",
    "encoding_payload_bits",
    "encoding_total_bits",
    "measured_gbytes_per_s",
    "measured_setup",
    "latency_us",
    "source",
    "notes",
)


class CatalogError(ValueError):
    """A catalog CSV breaks the schema. The message names the file, the row and the column."""

    def __init__(self, path: Path | str, row: str, column: str, problem: str) -> None:
        self.path = str(path)
        self.row = row
        self.column = column
        self.problem = problem
        super().__init__(f"{Path(self.path).name}: row '{row}': column '{column}': {problem}")


@dataclass(frozen=True)
class Accelerator:
    """One accelerator (or host CPU / SoC) from ``accelerators.csv``, in SI units, PER DEVICE.

    "Device" is what the framework sees (one CUDA/ROCm device). Dual-die boards
    (Tesla K80, Tesla M60, Instinct MI250X) are published as board totals; here the
    capacity and throughput fields are divided by ``devices_per_board``: memory,
    bandwidth, FLOP/s, L2 and SM count. ``tdp_w`` and ``interconnect_bytes_per_s``
    stay as the vendor publishes them (per board / per package).

    ``memory_bytes`` is the vendor's capacity label in the unit the vendor states it
    (``memory_unit``: "GB" = 1e9 bytes, the default, or "GiB" = 2**30 bytes, as Google
    writes TPU HBM): ``label x unit / devices_per_board``. TPU v5p's "95 GiB" is
    102.0e9 bytes. Labels are not exact byte counts: NVIDIA's "80GB" parts are 80 GiB,
    so torch reports a little more than 80e9 bytes (A100 80GB: 81,920 MiB; H100 SXM:
    about 81,090 MiB). ``None`` for host CPUs, whose capacity depends on the DIMMs fitted.

    ``memory_bandwidth_bytes_per_s`` is the published peak (decimal GB/s x 1e9), or
    for host CPUs ``channels x 8 bytes x MT/s`` computed from the sourced inputs.

    Peak rates are DENSE (no 2:4 sparsity): vendors that print "with sparsity" numbers
    quote twice these values.
    """

    id: str
    name: str
    vendor: str
    kind: str
    year: int
    architecture: str
    devices_per_board: int
    memory_bytes: int | None
    memory_unit: str
    memory_bandwidth_bytes_per_s: float
    memory_type: str
    memory_channels: int | None
    memory_transfer_rate_mt_per_s: float | None
    fp32_flops: float | None
    tf32_dense_flops: float | None
    bf16_dense_flops: float | None
    fp16_dense_flops: float | None
    fp8_dense_flops: float | None
    int8_dense_ops: float | None
    fp4_dense_flops: float | None
    unsupported_dtypes: frozenset[str]
    tdp_w: float | None
    l2_bytes: int | None
    sm_count: int | None
    interconnect: str
    interconnect_id: str | None
    interconnect_bytes_per_s: float | None
    host_link: str
    host_link_id: str | None
    cloud_instances: str
    source: tuple[str, ...]
    source_notes: str
    notes: str

    def _peak_or_none(self, dtype: str) -> float | None:
        return {
            "fp32": self.fp32_flops,
            "tf32": self.tf32_dense_flops,
            "bf16": self.bf16_dense_flops,
            "fp16": self.fp16_dense_flops,
            "fp8": self.fp8_dense_flops,
            "int8": self.int8_dense_ops,
            "fp4": self.fp4_dense_flops,
        }[dtype]

    def supports(self, dtype: str) -> bool:
        """True when the catalog holds a sourced dense peak for ``dtype`` on this chip.

        False both when the chip lacks the format in hardware and when no figure was
        sourced; ``peak_flops`` says which. Raises ValueError for an unknown dtype name.
        """
        return self._peak_or_none(_check_dtype(dtype)) is not None

    def peak_flops(self, dtype: str) -> float:
        """Dense peak FLOP/s per device for ``dtype`` (int8: OP/s).

        fp32 is the vector (CUDA-core / non-tensor) rate; the others are matrix-unit
        rates without sparsity, at the vendor's spec clock. fp4 is the 4-bit float
        (NVFP4 / MXFP4) rate where the vendor publishes one.

        Raises:
            ValueError: the chip lacks the format in hardware (e.g. A100 has no fp8),
                no figure was sourced for it, or ``dtype`` is not one of ``DTYPES``.
        """
        dtype = _check_dtype(dtype)
        value = self._peak_or_none(dtype)
        if value is not None:
            return value
        if dtype in self.unsupported_dtypes:
            raise ValueError(f"{self.name} ({self.id}) does not support {dtype} in hardware")
        raise ValueError(f"{self.name} ({self.id}) has no sourced dense {dtype} peak in the catalog")

    def ridge_point(self, dtype: str) -> float:
        """Roofline ridge point in FLOP per byte: ``peak_flops(dtype) / memory bandwidth``.

        The arithmetic intensity at which a kernel stops being memory-bound
        (Williams, Waterman, Patterson 2009, "Roofline", CACM 52(4)). Example:
        H100 SXM bf16 989.5e12 / 3.35e12 = 295 FLOP/byte.
        """
        return self.peak_flops(dtype) / self.memory_bandwidth_bytes_per_s

    @property
    def available_dtypes(self) -> tuple[str, ...]:
        """The formats with a sourced peak, in ``DTYPES`` order."""
        return tuple(d for d in DTYPES if self.supports(d))

    @property
    def board_memory_bytes(self) -> int | None:
        """Memory of the whole board (``memory_bytes x devices_per_board``), as the vendor labels it."""
        return None if self.memory_bytes is None else self.memory_bytes * self.devices_per_board

    @property
    def memory_gb(self) -> float | None:
        """Per-device memory in decimal GB (1e9 bytes), for display."""
        return None if self.memory_bytes is None else self.memory_bytes / GB

    @property
    def memory_gib(self) -> float | None:
        """Per-device memory in GiB (2**30 bytes), for display."""
        return None if self.memory_bytes is None else self.memory_bytes / 2**30

    @property
    def memory_label(self) -> str | None:
        """Per-device capacity as the vendor states it, with its unit, e.g. "80 GB".

        A GiB figure also shows its decimal size, so it reads beside GB figures:
        TPU v5p -> "95 GiB (102.0 GB)". ``None`` for host CPUs.
        """
        if self.memory_bytes is None:
            return None
        stated = self.memory_bytes / MEMORY_UNITS[self.memory_unit]
        label = f"{stated:,.4g} {self.memory_unit}"
        if self.memory_unit != "GB":
            label += f" ({self.memory_bytes / GB:,.1f} GB)"
        return label


@dataclass(frozen=True)
class Interconnect:
    """One link type from ``interconnects.csv``.

    The vendor's figure is kept as printed (``published_value`` in ``published_unit``,
    "GB/s" = 1e9 bytes/s or "Gb/s" = 1e9 bits/s, ``published_direction`` either
    "per-direction" or "bidirectional"); the byte rates below are derived from it.
    """

    id: str
    name: str
    kind: str
    published_value: float
    published_unit: str
    published_direction: str
    links: int | None
    lanes: int | None
    transfer_rate_gt_per_s: float | None
    encoding_payload_bits: int | None
    encoding_total_bits: int | None
    measured_bytes_per_s: float | None
    measured_setup: str
    latency_s: float | None
    source: tuple[str, ...]
    notes: str

    @property
    def per_direction_bytes_per_s(self) -> float:
        """Published rate in one direction, bytes/s (a bidirectional figure halved; bits / 8)."""
        bytes_per_s = self.published_value * 1e9 / (8 if self.published_unit == "Gb/s" else 1)
        return bytes_per_s / 2 if self.published_direction == "bidirectional" else bytes_per_s

    @property
    def bidirectional_bytes_per_s(self) -> float:
        """Both directions added, bytes/s: twice ``per_direction_bytes_per_s`` (links are full duplex)."""
        return 2 * self.per_direction_bytes_per_s

    @property
    def encoded_per_direction_bytes_per_s(self) -> float | None:
        """Payload rate per direction after line encoding, bytes/s, or None without line-rate inputs.

        ``GT/s x lanes x payload_bits / total_bits / 8``; for PCIe 5.0 x16:
        32 x 16 x 128/130 / 8 = 63.0 GB/s (PCI Express table at
        https://hpc-notes.pages.dev/reference/pcie).
        """
        if None in (
            self.transfer_rate_gt_per_s,
            self.lanes,
            self.encoding_payload_bits,
            self.encoding_total_bits,
        ):
            return None
        assert self.transfer_rate_gt_per_s is not None and self.lanes is not None
        assert self.encoding_payload_bits is not None and self.encoding_total_bits is not None
        bits_per_s = self.transfer_rate_gt_per_s * 1e9 * self.lanes
        return bits_per_s * self.encoding_payload_bits / self.encoding_total_bits / 8

    @property
    def payload_per_direction_bytes_per_s(self) -> float:
        """What one direction can carry, bytes/s: the rate after line encoding where the catalog has
        its line-rate inputs (PCIe 5.0 x16: 63.0 GB/s, not the raw 64), else the published rate.
        Efficiencies (``measured_fraction``, the 0.8 rule of thumb) apply to this."""
        return self.encoded_per_direction_bytes_per_s or self.per_direction_bytes_per_s

    @property
    def measured_fraction(self) -> float | None:
        """Measured one-way rate / spec one-way rate (encoded rate where known), or None.

        The usual rule of thumb is about 0.8 (ml-engineering ``network/README.md``).
        """
        if self.measured_bytes_per_s is None:
            return None
        return self.measured_bytes_per_s / self.payload_per_direction_bytes_per_s


# ---------------------------------------------------------------- parsing helpers


def _check_dtype(dtype: str) -> str:
    key = dtype.strip().lower() if isinstance(dtype, str) else dtype
    if key not in DTYPES:
        raise ValueError(f"unknown dtype {dtype!r}; expected one of {', '.join(DTYPES)}")
    return key


class _Row:
    """One CSV row with typed getters that raise CatalogError naming row and column."""

    def __init__(self, path: Path, label: str, cells: dict[str, str]) -> None:
        self.path = path
        self.label = label
        self.cells = cells

    def error(self, column: str, problem: str) -> CatalogError:
        return CatalogError(self.path, self.label, column, problem)

    def text(self, column: str, *, required: bool = False) -> str:
        value = (self.cells.get(column) or "").strip()
        if required and not value:
            raise self.error(column, "is required but empty")
        return value

    def number(self, column: str, *, required: bool = False) -> float | None:
        raw = self.text(column, required=required)
        if not raw:
            return None
        try:
            value = float(raw)
        except ValueError:
            raise self.error(column, f"{raw!r} is not a number") from None
        if not math.isfinite(value) or value <= 0:
            raise self.error(column, f"must be a positive number, got {raw!r}")
        return value

    def integer(self, column: str, *, required: bool = False) -> int | None:
        value = self.number(column, required=required)
        if value is None:
            return None
        if not value.is_integer():
            raise self.error(column, f"must be a whole number, got {self.text(column)!r}")
        return int(value)

    def slug(self, column: str, *, required: bool = False) -> str | None:
        value = self.text(column, required=required)
        if not value:
            return None
        if not ID_PATTERN.match(value):
            raise self.error(column, f"{value!r} is not a lowercase slug like 'h100-sxm'")
        return value

    def urls(self, column: str) -> tuple[str, ...]:
        items = tuple(u.strip() for u in self.text(column, required=True).split(";") if u.strip())
        bad = [u for u in items if not URL_PATTERN.match(u)]
        if bad:
            raise self.error(column, f"every entry must be an http(s) URL, got {bad[0]!r}")
        if not items:
            raise self.error(column, "needs at least one http(s) URL")
        return items

    def choice(self, column: str, allowed: tuple[str, ...]) -> str:
        value = self.text(column, required=True)
        if value not in allowed:
            raise self.error(column, f"{value!r} is not one of {', '.join(allowed)}")
        return value


def _read_rows(path: Path, expected: tuple[str, ...]) -> list[_Row]:
    """Read a catalog CSV, check its header, and label each row by its id (or line)."""
    if not path.is_file():
        raise CatalogError(path, "-", "-", "file not found")
    with path.open(newline="", encoding="utf-8") as handle:
        reader = csv.DictReader(handle)
        header = tuple(reader.fieldnames or ())
        missing = [c for c in expected if c not in header]
        if missing:
            raise CatalogError(path, "header", missing[0], "column is missing")
        unknown = [c for c in header if c not in expected]
        if unknown:
            raise CatalogError(path, "header", unknown[0], "column is not in the schema")
        rows = []
        for record in reader:
            if None in record:  # more cells than header columns
                raise CatalogError(path, f"line {reader.line_num}", "-", "has more cells than the header")
            row_id = (record.get("id") or "").strip()
            label = row_id if row_id else f"line {reader.line_num}"
            rows.append(_Row(path, label, record))
    if not rows:
        raise CatalogError(path, "-", "-", "has no data rows")
    return rows


def _check_unique_ids(rows: list[_Row]) -> None:
    seen: set[str] = set()
    for row in rows:
        row_id = row.slug("id", required=True)
        assert row_id is not None
        if row_id in seen:
            raise row.error("id", f"duplicate id {row_id!r}")
        seen.add(row_id)


def _tera_per_device(value_tera: float | None, devices: int) -> float | None:
    """TFLOPS / TOPS as printed for the board -> FLOP/s (OP/s) per device."""
    return None if value_tera is None else value_tera * TERA / devices


def _parse_accelerator(row: _Row) -> Accelerator:
    devices = row.integer("devices_per_board", required=True)
    assert devices is not None

    memory_stated = row.number("memory_gb")
    memory_unit = row.text("memory_unit") or "GB"
    if memory_unit not in MEMORY_UNITS:
        raise row.error("memory_unit", f"{memory_unit!r} is not one of {', '.join(MEMORY_UNITS)}")
    unit_bytes = MEMORY_UNITS[memory_unit]
    memory_bytes = None if memory_stated is None else round(memory_stated * unit_bytes / devices)

    channels = row.integer("memory_channels")
    mt_per_s = row.number("memory_mt_per_s")
    if (channels is None) != (mt_per_s is None):
        column = "memory_mt_per_s" if mt_per_s is None else "memory_channels"
        raise row.error(column, "memory_channels and memory_mt_per_s go together")
    published_bw = row.number("memory_bandwidth_gbytes_per_s")
    derived_bw = (
        None if channels is None or mt_per_s is None else channels * DDR_CHANNEL_BYTES * mt_per_s * 1e6
    )
    if published_bw is None and derived_bw is None:
        raise row.error(
            "memory_bandwidth_gbytes_per_s", "is empty and there are no memory_channels/memory_mt_per_s"
        )
    if published_bw is not None and derived_bw is not None and abs(published_bw * GB / derived_bw - 1) > 0.01:
        raise row.error(
            "memory_bandwidth_gbytes_per_s",
            f"{published_bw} GB/s disagrees with channels x 8 B x MT/s = {derived_bw / GB:.1f} GB/s",
        )
    board_bw = published_bw * GB if published_bw is not None else derived_bw
    assert board_bw is not None

    peaks = {dtype: row.number(column) for dtype, column in _PEAK_COLUMNS.items()}
    unsupported = frozenset(d.strip() for d in row.text("unsupported_dtypes").split(";") if d.strip())
    for dtype in unsupported:
        if dtype not in DTYPES:
            raise row.error("unsupported_dtypes", f"{dtype!r} is not one of {', '.join(DTYPES)}")
        if peaks[dtype] is not None:
            raise row.error(_PEAK_COLUMNS[dtype], f"has a value but {dtype} is listed in unsupported_dtypes")

    sm_board = row.integer("sm_cu_count")
    if sm_board is not None and sm_board % devices:
        raise row.error("sm_cu_count", f"{sm_board} does not divide by devices_per_board={devices}")
    l2_mib = row.number("l2_llc_cache_mib")

    interconnect_gb = row.number("interconnect_gbytes_per_s")
    return Accelerator(
        id=row.slug("id", required=True) or "",
        name=row.text("name", required=True),
        vendor=row.text("vendor", required=True),
        kind=row.choice("kind", KINDS),
        year=row.integer("year", required=True) or 0,
        architecture=row.text("architecture", required=True),
        devices_per_board=devices,
        memory_bytes=memory_bytes,
        memory_unit=memory_unit,
        memory_bandwidth_bytes_per_s=board_bw / devices,
        memory_type=row.text("memory_type", required=True),
        memory_channels=channels,
        memory_transfer_rate_mt_per_s=mt_per_s,
        fp32_flops=_tera_per_device(peaks["fp32"], devices),
        tf32_dense_flops=_tera_per_device(peaks["tf32"], devices),
        bf16_dense_flops=_tera_per_device(peaks["bf16"], devices),
        fp16_dense_flops=_tera_per_device(peaks["fp16"], devices),
        fp8_dense_flops=_tera_per_device(peaks["fp8"], devices),
        int8_dense_ops=_tera_per_device(peaks["int8"], devices),
        fp4_dense_flops=_tera_per_device(peaks["fp4"], devices),
        unsupported_dtypes=unsupported,
        tdp_w=row.number("tdp_w"),
        l2_bytes=None if l2_mib is None else round(l2_mib * MIB / devices),
        sm_count=None if sm_board is None else sm_board // devices,
        interconnect=row.text("interconnect"),
        interconnect_id=row.slug("interconnect_id"),
        interconnect_bytes_per_s=None if interconnect_gb is None else interconnect_gb * GB,
        host_link=row.text("host_link"),
        host_link_id=row.slug("host_link_id"),
        cloud_instances=row.text("cloud_instances"),
        source=row.urls("source"),
        source_notes=row.text("source_notes"),
        notes=row.text("notes"),
    )


def parse_accelerators_csv(path: Path | str) -> tuple[Accelerator, ...]:
    """Parse and validate an accelerators CSV (no caching). Raises CatalogError on any bad cell."""
    path = Path(path)
    rows = _read_rows(path, ACCELERATOR_COLUMNS)
    _check_unique_ids(rows)
    accelerators = tuple(_parse_accelerator(row) for row in rows)
    names: dict[str, str] = {}
    for row, acc in zip(rows, accelerators, strict=True):
        key = _normalize(acc.name)
        if key in names:
            raise row.error("name", f"{acc.name!r} clashes with row '{names[key]}'")
        names[key] = acc.id
    return accelerators


def _parse_interconnect(row: _Row) -> Interconnect:
    payload = row.integer("encoding_payload_bits")
    total = row.integer("encoding_total_bits")
    if (payload is None) != (total is None):
        raise row.error(
            "encoding_total_bits" if total is None else "encoding_payload_bits",
            "payload and total bits go together",
        )
    if payload is not None and total is not None and payload > total:
        raise row.error("encoding_payload_bits", f"{payload} exceeds encoding_total_bits={total}")
    measured = row.number("measured_gbytes_per_s")
    latency_us = row.number("latency_us")
    return Interconnect(
        id=row.slug("id", required=True) or "",
        name=row.text("name", required=True),
        kind=row.choice("kind", INTERCONNECT_KINDS),
        published_value=row.number("published_value", required=True) or 0.0,
        published_unit=row.choice("published_unit", ("GB/s", "Gb/s")),
        published_direction=row.choice("published_direction", ("per-direction", "bidirectional")),
        links=row.integer("links"),
        lanes=row.integer("lanes"),
        transfer_rate_gt_per_s=row.number("transfer_rate_gt_per_s"),
        encoding_payload_bits=payload,
        encoding_total_bits=total,
        measured_bytes_per_s=None if measured is None else measured * GB,
        measured_setup=row.text("measured_setup", required=measured is not None),
        latency_s=None if latency_us is None else latency_us * 1e-6,
        source=row.urls("source"),
        notes=row.text("notes"),
    )


def parse_interconnects_csv(path: Path | str) -> tuple[Interconnect, ...]:
    """Parse and validate an interconnects CSV (no caching). Raises CatalogError on any bad cell."""
    path = Path(path)
    rows = _read_rows(path, INTERCONNECT_COLUMNS)
    _check_unique_ids(rows)
    return tuple(_parse_interconnect(row) for row in rows)


@functools.cache
def _default_catalog() -> tuple[Accelerator, ...]:
    return parse_accelerators_csv(ACCELERATORS_CSV)


@functools.cache
def _default_interconnects() -> tuple[Interconnect, ...]:
    return parse_interconnects_csv(INTERCONNECTS_CSV)


# ---------------------------------------------------------------- public API


def load_catalog(path: Path | str | None = None) -> list[Accelerator]:
    """All accelerators, in file order, as a new list.

    The default file is parsed once per process and cached; pass ``path`` to read
    another file (parsed on every call, used by tests for malformed input).
    """
    return list(_default_catalog() if path is None else parse_accelerators_csv(path))


def load_interconnects(path: Path | str | None = None) -> list[Interconnect]:
    """All interconnect link types, in file order, as a new list (default file cached)."""
    return list(_default_interconnects() if path is None else parse_interconnects_csv(path))


def _normalize(name: str) -> str:
    return re.sub(r"[\s\-_./()]+", "", name.casefold())


def get_accelerator(id_or_name: str, path: Path | str | None = None) -> Accelerator:
    """The accelerator whose id or name matches (case-, space- and punctuation-insensitive).

    Raises:
        ValueError: nothing matches; the message lists the closest ids.
    """
    catalog = load_catalog(path)
    key = _normalize(id_or_name)
    for acc in catalog:
        if key in (_normalize(acc.id), _normalize(acc.name)):
            return acc
    ids = [acc.id for acc in catalog]
    close = difflib.get_close_matches(id_or_name.strip().lower(), ids, n=5, cutoff=0.4)
    hint = ", ".join(close) if close else ", ".join(ids)
    raise ValueError(f"unknown accelerator {id_or_name!r}; closest ids: {hint}")


def get_interconnect(interconnect_id: str, path: Path | str | None = None) -> Interconnect:
    """The interconnect with this id. Raises ValueError listing the closest ids."""
    links = load_interconnects(path)
    for link in links:
        if link.id == interconnect_id.strip().lower():
            return link
    ids = [link.id for link in links]
    close = difflib.get_close_matches(interconnect_id.strip().lower(), ids, n=5, cutoff=0.4)
    raise ValueError(f"unknown interconnect {interconnect_id!r}; closest ids: {', '.join(close or ids)}")


def host_cpus() -> tuple[str, ...]:
    """The catalog's CPUs with a memory bandwidth, desktop first: the host memory that holds the
    layers an engine leaves on the CPU (llama.cpp's partial offload reads them from there)."""
    rows = [row for row in load_catalog() if row.kind == "cpu" and row.memory_bandwidth_bytes_per_s]
    rows.sort(key=lambda row: ("desktop" not in row.name.lower(), row.memory_bandwidth_bytes_per_s))
    return tuple(row.id for row in rows)
