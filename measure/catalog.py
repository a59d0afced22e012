"""Match a measured device to its row in the accelerator catalog, and compare with the datasheet.

Rows are plain dicts with the columns below (name, memory_gb per board, devices_per_board,
memory_bw_gbps, sm_cu_count, dense TFLOP/s per dtype), built from the project's catalog
(``simulators.hardware``), so tests can also pass hand-made rows.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent

# Datasheet column for each measured dtype (all dense figures, TFLOP/s).
DTYPE_COLUMN = {
    "float32": "fp32_tflops",
    "tf32": "tf32_dense_tflops",
    "bfloat16": "fp16_bf16_dense_tflops",
    "float16": "fp16_bf16_dense_tflops",
    "float8_e4m3fn": "fp8_dense_tflops",
    "float8_e5m2": "fp8_dense_tflops",
}

# Apple variants, and the GeForce / Radeon suffixes that name another card ("RTX 4080" is not
# the "RTX 4080 SUPER" row, "RX 7900 XT" not the "RX 7900 XTX" one)
_VARIANT_WORDS = {"max", "pro", "ultra", "ti", "super", "xt", "xtx"}
_FORM_SXM = re.compile(r"^sxm\d*$")
_MEMORY_TOKEN = re.compile(r"^\d+gb$")
_MEMORY_TOLERANCE = 0.15  # torch reports a bit less than the label (e.g. 81,090 MiB on an "80GB" H100)


def load_catalog(path: str | Path | None = None) -> list[dict[str, Any]]:
    """The accelerator catalog (``simulators.hardware``) as dict rows; [] if it cannot be read."""
    from simulators import hardware

    try:
        accelerators = hardware.load_catalog(path)
    except (OSError, ValueError):
        return []

    def tera(value: float | None) -> float | None:
        return value / 1e12 if value else None

    rows = []
    for a in accelerators:
        board = a.board_memory_bytes
        rows.append(
            {
                "id": a.id,
                "vendor": a.vendor,
                "name": a.name,
                "memory_gb": board / 1e9 if board else None,
                "devices_per_board": a.devices_per_board,
                "memory_bw_gbps": a.memory_bandwidth_bytes_per_s / 1e9
                if a.memory_bandwidth_bytes_per_s
                else None,
                "sm_cu_count": a.sm_count,
                "fp32_tflops": tera(a.fp32_flops),
                "tf32_dense_tflops": tera(a.tf32_dense_flops),
                "fp16_bf16_dense_tflops": tera(a.bf16_dense_flops or a.fp16_dense_flops),
                "fp8_dense_tflops": tera(a.fp8_dense_flops),
            }
        )
    return rows


def _tokens(text: str) -> list[str]:
    return [t for t in re.split(r"[^a-z0-9]+", text.lower()) if t]


def _number(value: Any) -> float | None:
    try:
        number = float(value)
    except (TypeError, ValueError):
        return None
    return number if number > 0 else None


def _model_tokens(name_tokens: Sequence[str]) -> list[str]:
    """The tokens a device name must contain to be this row: its first token with a digit
    (h100, a10g, 4090, mi300x, m2), plus the word before it when that token is a bare short
    number ("gaudi 2")."""
    for i, token in enumerate(name_tokens):
        if any(ch.isdigit() for ch in token) and not _MEMORY_TOKEN.match(token):
            if token.isdigit() and len(token) < 3 and i > 0:
                return [name_tokens[i - 1], token]
            return [token]
    return []


@dataclass(frozen=True)
class CatalogMatch:
    row: Mapping[str, Any]
    score: float
    reason: str


def match_catalog(
    device_name: str,
    rows: Iterable[Mapping[str, Any]],
    *,
    memory_bytes: int | None = None,
    sm_count: int | None = None,
) -> CatalogMatch | None:
    """The catalog row for a device name such as "NVIDIA H100 80GB HBM3", or None.

    A row is a candidate when its model token (h100, a100, t4, ...) is a whole token of the
    device name. Candidates are dropped when their form factor contradicts the name (PCIe vs
    SXM), their Apple variant word (Max/Pro/Ultra) differs, their memory per device differs
    from `memory_bytes` by more than 15 %, or their SM count differs from `sm_count` (a MIG
    slice therefore matches nothing rather than a whole GPU's datasheet). The rest are ranked
    by how many of the row's other name tokens the device name shares, then memory closeness.
    """
    device_tokens = _tokens(device_name)
    device_set = set(device_tokens)
    device_gib = memory_bytes / 1024**3 if memory_bytes else None
    best: tuple[float, float, Mapping[str, Any], str] | None = None
    for row in rows:
        row_tokens = _tokens(str(row.get("name", "")))
        required = _model_tokens(row_tokens)
        if not required or not all(t in device_set for t in required):
            continue
        if ("pcie" in device_set and any(_FORM_SXM.match(t) for t in row_tokens)) or (
            "pcie" in row_tokens and "pcie" not in device_set
        ):
            continue
        if {w for w in row_tokens if w in _VARIANT_WORDS} != {
            w for w in device_tokens if w in _VARIANT_WORDS
        }:
            continue
        reasons = [f"name contains {' '.join(required)!r}"]
        memory_gap = 0.0
        row_memory = _number(row.get("memory_gb"))
        per_board = _number(row.get("devices_per_board")) or 1.0
        if device_gib is not None and row_memory is not None:
            per_device = row_memory / per_board
            memory_gap = abs(device_gib - per_device) / per_device
            if memory_gap > _MEMORY_TOLERANCE:
                continue
            reasons.append(f"memory {device_gib:.1f} GiB vs {per_device:g} GB listed")
        row_sms = _number(row.get("sm_cu_count"))
        if sm_count and row_sms is not None:
            if int(row_sms) != int(sm_count):
                continue
            reasons.append(f"{sm_count} SMs")
        shared = [t for t in row_tokens if t not in required and t in device_set]
        score = 10.0 + 2.0 * len(shared)
        key = (score, -memory_gap)
        if best is None or key > (best[0], best[1]):
            best = (score, -memory_gap, row, "; ".join(reasons))
    if best is None:
        return None
    return CatalogMatch(row=best[2], score=best[0], reason=best[3])


def datasheet_ratios(records: Iterable[Any], row: Mapping[str, Any]) -> list[dict[str, Any]]:
    """Measured best ÷ datasheet peak, one entry per comparable quantity.

    Memory: the best bandwidth among points whose working set is outside the caches
    (cache_hint "DRAM" or "HBM"/"device memory") against `memory_bw_gbps` (decimal GB/s).
    Matmul: the best median TFLOP/s per dtype against the dense column in DTYPE_COLUMN. An FP32
    FMA chain (the browser suite's "compute" record): against the vector FP32 column.
    Returns dicts {"quantity", "measured", "datasheet", "unit", "ratio"}.
    """
    best_bw: float | None = None
    best_fma: float | None = None
    best_tflops: dict[str, float] = {}
    for record in records:
        data = record.to_dict() if hasattr(record, "to_dict") else dict(record)
        if data.get("kind") == "bandwidth" and data.get("cache_hint") in {"DRAM", "HBM", "device memory"}:
            best_bw = max(best_bw or 0.0, float(data["gb_per_s"]))
        elif data.get("kind") == "matmul":
            key = data.get("math") if data.get("math") == "tf32" else data.get("dtype")
            best_tflops[str(key)] = max(best_tflops.get(str(key), 0.0), float(data["tflops"]))
        elif data.get("kind") == "compute" and data.get("dtype") == "float32":
            # An FMA chain runs on the vector units: the datasheet's (non-tensor) FP32 figure.
            best_fma = max(best_fma or 0.0, float(data["tflops"]))
    out = []
    sheet_bw = _number(row.get("memory_bw_gbps"))
    if best_bw and sheet_bw:
        out.append(
            {
                "quantity": "memory bandwidth",
                "measured": best_bw,
                "datasheet": sheet_bw,
                "unit": "GB/s",
                "ratio": best_bw / sheet_bw,
            }
        )
    sheet_fp32 = _number(row.get("fp32_tflops"))
    if best_fma and sheet_fp32:
        out.append(
            {
                "quantity": "FMA chain float32",
                "measured": best_fma,
                "datasheet": sheet_fp32,
                "unit": "TFLOP/s",
                "ratio": best_fma / sheet_fp32,
            }
        )
    for dtype, measured in sorted(best_tflops.items()):
        column = DTYPE_COLUMN.get(dtype)
        sheet = _number(row.get(column)) if column else None
        if sheet:
            out.append(
                {
                    "quantity": f"matmul {dtype}",
                    "measured": measured,
                    "datasheet": sheet,
                    "unit": "TFLOP/s (dense)",
                    "ratio": measured / sheet,
                }
            )
    return out
