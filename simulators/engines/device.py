"""The memory a device reports as its total (not its label), shared by every engine."""

from __future__ import annotations

import csv
from functools import cache
from pathlib import Path

from simulators.hardware import Accelerator

DATA_DIR = Path(__file__).resolve().parent.parent / "data"
REPORTED_MEMORY_CSV = DATA_DIR / "reported_memory.csv"


@cache
def _reported_memory_rows() -> dict[str, dict[str, str]]:
    with REPORTED_MEMORY_CSV.open(encoding="utf-8", newline="") as handle:
        rows = {row["accelerator_id"]: row for row in csv.DictReader(handle)}
    for row in rows.values():
        if int(row["reported_bytes"]) <= 0 or not row["source"].strip():
            raise ValueError(f"reported_memory.csv: row {row['accelerator_id']!r} needs bytes and a source")
    return rows


def reported_memory_bytes(gpu: str | Accelerator) -> int | None:
    """Bytes the device reports as its total (``cudaMemGetInfo``), where a real device was read.

    An H100 "80GB" reports 79.18 GiB, not 80: the label is the HBM fitted, the driver keeps some.
    None when no sourced reading exists for this catalog row (``data/reported_memory.csv``).
    """
    gpu_id = gpu.id if isinstance(gpu, Accelerator) else str(gpu)
    row = _reported_memory_rows().get(gpu_id)
    return int(row["reported_bytes"]) if row else None


def reported_memory_source(gpu: str | Accelerator) -> str:
    gpu_id = gpu.id if isinstance(gpu, Accelerator) else str(gpu)
    row = _reported_memory_rows().get(gpu_id)
    return f"{row['how']} ({row['source']})" if row else ""


def reported_memory_ids() -> tuple[str, ...]:
    """Catalog ids with a sourced device-reported capacity."""
    return tuple(_reported_memory_rows())
