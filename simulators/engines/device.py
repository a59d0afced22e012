"""The memory a device reports as its total (not its label), shared by every engine.

An engine's ``gpu_memory_utilization`` multiplies what CUDA's ``cudaMemGetInfo`` (torch's
``total_memory``, vLLM's ``total_memory=`` / ``total_gpu_memory`` line) reports, never the label.
Three ways to that number, best first, each named in ``DeviceTotal.how``:

1. **reading** — a real device's total as software saw it (``data/reported_memory.csv``: this
   project's own runs, or public logs, each with its URL).
2. **nvidia-smi rule** — a sourced nvidia-smi total (``data/nvidia_smi_memory.csv``, NVML's
   framebuffer) times the ratio CUDA's total bears to it, the ratio's range taken from every GPU
   that has both readings (the driver keeps a few hundred MiB more than NVML shows as used).
3. **label rule** — the label read as GiB (NVIDIA's "80GB" is 80 GiB of HBM) times the ratio
   readings bear to their labels, per vendor and memory kind (HBM, GDDR) when that group has two
   readings, else across vendors for that memory kind.

A rule carries its range (``low``..``high``) so a verdict near the line can say "tight". A
catalog row with neither a reading nor a rule (no memory label) is None: the reader types theirs.
"""

from __future__ import annotations

import csv
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from simulators.hardware import Accelerator, get_accelerator, load_catalog

DATA_DIR = Path(__file__).resolve().parent.parent / "data"
REPORTED_MEMORY_CSV = DATA_DIR / "reported_memory.csv"
NVIDIA_SMI_MEMORY_CSV = DATA_DIR / "nvidia_smi_memory.csv"
GiB = 2**30
MiB = 2**20


@dataclass(frozen=True)
class DeviceTotal:
    """The memory a device reports, how it was obtained, and its range (equal for a reading)."""

    gpu_id: str
    bytes: int
    low: int
    high: int
    how: str  # "reading", "nvidia-smi rule", "label rule"
    text: str  # one sentence a page can show
    source: str  # the URLs / files the number rests on

    @property
    def exact(self) -> bool:
        return self.how == "reading"


@cache
def _reported_memory_rows() -> dict[str, dict[str, str]]:
    with REPORTED_MEMORY_CSV.open(encoding="utf-8", newline="") as handle:
        rows = {row["accelerator_id"]: row for row in csv.DictReader(handle)}
    for row in rows.values():
        if int(row["reported_bytes"]) <= 0 or not row["source"].strip():
            raise ValueError(f"reported_memory.csv: row {row['accelerator_id']!r} needs bytes and a source")
    return rows


@cache
def _smi_rows() -> dict[str, dict[str, str]]:
    with NVIDIA_SMI_MEMORY_CSV.open(encoding="utf-8", newline="") as handle:
        rows = {row["accelerator_id"]: row for row in csv.DictReader(handle)}
    for row in rows.values():
        if int(row["smi_mib"]) <= 0 or not row["source"].strip():
            raise ValueError(f"nvidia_smi_memory.csv: row {row['accelerator_id']!r} needs MiB and a source")
    return rows


def _gpu_id(gpu: str | Accelerator) -> str:
    return gpu.id if isinstance(gpu, Accelerator) else str(gpu)


def smi_mib(gpu: str | Accelerator) -> int | None:
    """The total nvidia-smi shows for ``gpu`` (MiB), where a sourced reading exists, else None."""
    row = _smi_rows().get(_gpu_id(gpu))
    return int(row["smi_mib"]) if row else None


def _memory_kind(accel: Accelerator) -> str:
    kind = accel.memory_type.upper()
    if "HBM" in kind:
        return "HBM"
    if "GDDR" in kind:
        return "GDDR"
    return ""


def _label_gib(accel: Accelerator) -> float | None:
    """The vendor's number read as GiB ("80GB" → 80 GiB), per device."""
    if not accel.memory_bytes:
        return None
    unit = 2**30 if accel.memory_unit == "GiB" else 1e9
    return accel.memory_bytes / unit


@cache
def smi_ratio_band() -> tuple[float, float, tuple[str, ...]]:
    """(lowest, highest) CUDA total ÷ nvidia-smi total over the GPUs that have both readings."""
    readings, smi = _reported_memory_rows(), _smi_rows()
    both = sorted(set(readings) & set(smi))
    ratios = [int(readings[g]["reported_bytes"]) / (int(smi[g]["smi_mib"]) * MiB) for g in both]
    if len(ratios) < 2:
        raise ValueError("the nvidia-smi rule needs at least two GPUs with both readings")
    return min(ratios), max(ratios), tuple(both)


@cache
def label_ratio_bands() -> dict[tuple[str, str], tuple[float, float, tuple[str, ...]]]:
    """(vendor, memory kind) → (lowest, highest) reading ÷ label-as-GiB, and the GPUs behind it;
    ("", kind) pools every vendor for that memory kind."""
    groups: dict[tuple[str, str], list[tuple[float, str]]] = {}
    for gpu_id, row in _reported_memory_rows().items():
        try:
            accel = get_accelerator(gpu_id)
        except (KeyError, ValueError):
            continue
        label, kind = _label_gib(accel), _memory_kind(accel)
        if not label or not kind:
            continue
        ratio = int(row["reported_bytes"]) / (label * GiB)
        groups.setdefault((accel.vendor, kind), []).append((ratio, gpu_id))
        groups.setdefault(("", kind), []).append((ratio, gpu_id))
    return {
        key: (min(r for r, _ in v), max(r for r, _ in v), tuple(sorted(g for _, g in v)))
        for key, v in groups.items()
        if len(v) >= 2
    }


def device_total(gpu: str | Accelerator) -> DeviceTotal | None:
    """The memory ``gpu`` reports (bytes, range, how, source), or None when nothing covers it."""
    gpu_id = _gpu_id(gpu)
    row = _reported_memory_rows().get(gpu_id)
    if row:
        b = int(row["reported_bytes"])
        return DeviceTotal(gpu_id, b, b, b, "reading", row["how"], row["source"])
    try:
        accel = gpu if isinstance(gpu, Accelerator) else get_accelerator(gpu_id)
    except (KeyError, ValueError):
        return None
    smi = _smi_rows().get(gpu_id)
    if smi:
        lo_r, hi_r, basis = smi_ratio_band()
        total = int(smi["smi_mib"]) * MiB
        low, high = int(total * lo_r), int(total * hi_r)
        text = (
            f"Estimated: nvidia-smi shows {int(smi['smi_mib']):,} MiB ({smi['how']}); CUDA reports"
            f" {lo_r:.2%}–{hi_r:.2%} of nvidia-smi's total on the {len(basis)} GPUs read both ways"
            f" ({', '.join(basis)}), so {low / GiB:.2f}–{high / GiB:.2f} GiB."
        )
        return DeviceTotal(gpu_id, (low + high) // 2, low, high, "nvidia-smi rule", text, smi["source"])
    label, kind = _label_gib(accel), _memory_kind(accel)
    if not label or not kind:
        return None
    bands = label_ratio_bands()
    key = (accel.vendor, kind) if (accel.vendor, kind) in bands else ("", kind)
    if key not in bands:
        return None
    lo_r, hi_r, basis = bands[key]
    low, high = int(label * GiB * lo_r), int(label * GiB * hi_r)
    group = f"{accel.vendor} {kind}" if key[0] else f"{kind} (every vendor)"
    text = (
        f"Estimated from the label: {accel.memory_label} read as {label:g} GiB, times the"
        f" {lo_r:.2%}–{hi_r:.2%} that {group} devices with a reading report of theirs"
        f" ({', '.join(basis)}), so {low / GiB:.2f}–{high / GiB:.2f} GiB."
    )
    source = " ; ".join(_reported_memory_rows()[g]["source"] for g in basis)
    return DeviceTotal(gpu_id, (low + high) // 2, low, high, "label rule", text, source)


def reported_memory_bytes(gpu: str | Accelerator) -> int | None:
    """Bytes the device reports as its total (``cudaMemGetInfo``): a reading, else a named rule.

    An H100 "80GB" reports 79.18 GiB, not 80: the label is the HBM fitted, the driver keeps some.
    Where no device was read, the middle of the rule's range (``device_total`` gives the range
    and how; ``reported_memory_source`` says it). None when neither exists for this catalog row.
    """
    total = device_total(gpu)
    return total.bytes if total else None


def reported_memory_source(gpu: str | Accelerator) -> str:
    total = device_total(gpu)
    if not total:
        return ""
    return f"{total.text} ({total.source})"


def reported_memory_ids() -> tuple[str, ...]:
    """Catalog ids with a sourced device-reported capacity (a reading, not a rule)."""
    return tuple(_reported_memory_rows())


def device_total_ids() -> tuple[str, ...]:
    """Catalog ids with a device total of any kind (reading or rule)."""
    return tuple(a.id for a in load_catalog() if device_total(a) is not None)
