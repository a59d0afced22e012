"""The whole suite in one call: what `python -m measure` and the page's "run all" button use."""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Sequence
from typing import Any

from measure import status as st
from measure.catalog import datasheet_ratios, load_catalog, match_catalog
from measure.collectives import allreduce
from measure.decode import datasheet_source, decode
from measure.device import device_summary
from measure.env import is_hosted
from measure.latency import latency
from measure.launch_bound import mark_launch_bound
from measure.lock import busy_info, measurement_slot
from measure.results import BandwidthRecord, Record, Results
from measure.timing import Cancelled, ProgressFn, StopFn, check_stop
from measure.transformer import TransformerConfig, transformer_memory
from measure.views import label_gpu_chase
from measure.workloads import (
    bandwidth,
    host_device_copy,
    launch_overhead,
    matmul,
    prepare,
    quantization_error,
)

WORKLOADS = (
    "bandwidth",
    "latency",
    "matmul",
    "host_device_copy",
    "launch_overhead",
    "decode",
    "quantization",
    "transformer_memory",
    "allreduce",
)
# Rough share of the run time, for one progress bar over the whole suite.
_WEIGHTS = {
    "bandwidth": 3,
    "latency": 2,
    "matmul": 4,
    "host_device_copy": 1,
    "launch_overhead": 1,
    "decode": 2,
    "quantization": 1,
    "transformer_memory": 2,
    "allreduce": 3,
}


def _scaled(progress: ProgressFn | None, start: float, span: float, name: str) -> ProgressFn | None:
    if progress is None:
        return None

    def inner(fraction: float, message: str) -> None:
        progress(start + span * fraction, f"{name}: {message}")

    return inner


def _best_dram_copy_bytes_per_s(records: Sequence[Record]) -> float | None:
    values = [
        r.bytes_per_s
        for r in records
        if isinstance(r, BandwidthRecord) and r.op == "copy" and r.cache_hint in {"DRAM", "device memory"}
    ]
    return max(values) if values else None


def _link_for_allreduce(
    device: str, records: Sequence[Record], catalog_row: dict[str, Any] | None
) -> tuple[float | None, str]:
    """Per-direction link bandwidth for the ring model, and where it came from."""
    if device == "cpu":
        copy = _best_dram_copy_bytes_per_s(records)
        if copy:
            return (
                copy,
                "measured DRAM copy bandwidth (gloo ranks on one machine exchange data through memory)",
            )
        return None, ""
    if catalog_row:
        try:
            bidirectional = float(catalog_row.get("interconnect_gbps") or 0)
        except ValueError:
            bidirectional = 0.0
        if bidirectional > 0:
            # Datasheet NVLink figures are bidirectional; the ring model wants one direction.
            return (
                bidirectional * 1e9 / 2,
                f"datasheet interconnect {bidirectional:g} GB/s bidirectional, halved",
            )
    return None, ""


def _bandwidth_for_decode(
    device: str, records: Sequence[Record], catalog_row: dict[str, Any] | None
) -> tuple[float | None, str]:
    """The decode bound's bandwidth: the matched datasheet on a GPU, the measured DRAM copy on a CPU."""
    if device == "cpu":
        copy = _best_dram_copy_bytes_per_s(records)
        if copy:
            return copy, "this run's bandwidth sweep: best DRAM copy (STREAM counting: read + write)"
        return None, ""
    if catalog_row and catalog_row.get("memory_bw_gbps"):
        return float(catalog_row["memory_bw_gbps"]) * 1e9, datasheet_source(catalog_row)
    return None, ""


def run_suite(
    device: str = "cpu",
    *,
    quick: bool = False,
    workloads: Sequence[str] | None = None,
    catalog: Sequence[dict[str, Any]] | None = None,
    progress: ProgressFn | None = None,
    should_stop: StopFn | None = None,
    log: Callable[[str], None] | None = None,
) -> Results | st.Status:
    """Run the chosen workloads (all by default) on one device, one after another.

    Returns Results (with a status per workload, including those skipped as unsupported here)
    or a Status when nothing could run: busy, no torch, or the device is not available.
    """
    chosen = [w for w in (workloads or WORKLOADS) if w in WORKLOADS]
    unknown = [w for w in (workloads or ()) if w not in WORKLOADS]
    if unknown:
        return st.unsupported(f"Unknown workload(s) {unknown}; choose from {list(WORKLOADS)}.")
    with measurement_slot("suite") as got:
        if not got:
            info = busy_info()
            return st.busy(info["label"] if info else "")
        ctx, status = prepare(device)
        if ctx is None:
            return status
        summary = device_summary(ctx.torch, ctx.device)
        rows = list(catalog) if catalog is not None else load_catalog()
        cuda_info = summary.get("cuda") or {}
        match = match_catalog(
            summary.get("name", ""),
            rows,
            memory_bytes=cuda_info.get("total_memory_bytes"),
            sm_count=cuda_info.get("sm_count"),
        )
        if match:
            summary["catalog_match"] = {
                "id": match.row.get("id"),
                "name": match.row.get("name"),
                "reason": match.reason,
            }
        records: list[Record] = []
        statuses: list[dict[str, Any]] = []
        total = sum(_WEIGHTS[w] for w in chosen)
        start = 0.0
        quick_tf = TransformerConfig()
        for name in chosen:
            span = _WEIGHTS[name] / total
            sub = _scaled(progress, start, span, name)
            start += span
            try:
                check_stop(should_stop)
            except Cancelled:
                statuses.append({"workload": name, **st.cancelled(name).to_dict()})
                continue
            if log:
                log(f"running {name} ...")
            if name == "bandwidth":
                outcome = bandwidth(ctx.device, quick=quick, progress=sub, should_stop=should_stop)
            elif name == "matmul":
                outcome = matmul(ctx.device, quick=quick, progress=sub, should_stop=should_stop)
            elif name == "host_device_copy":
                outcome = host_device_copy(ctx.device, quick=quick, progress=sub, should_stop=should_stop)
            elif name == "latency":
                outcome = latency(ctx.device, quick=quick, progress=sub, should_stop=should_stop)
            elif name == "launch_overhead":
                outcome = launch_overhead(ctx.device, quick=quick, progress=sub, should_stop=should_stop)
            elif name == "decode":
                bw, bw_source = _bandwidth_for_decode(ctx.device, records, dict(match.row) if match else None)
                outcome = decode(
                    ctx.device,
                    quick=quick,
                    bandwidth_bytes_per_s=bw,
                    bandwidth_source=bw_source,
                    progress=sub,
                    should_stop=should_stop,
                )
            elif name == "quantization":
                outcome = quantization_error(ctx.device, quick=quick, progress=sub, should_stop=should_stop)
            elif name == "transformer_memory":
                outcome = _transformer_both(ctx.device, quick, quick_tf, sub, should_stop)
            else:
                link, source = _link_for_allreduce(ctx.device, records, dict(match.row) if match else None)
                outcome = allreduce(
                    device=ctx.device,
                    quick=quick,
                    link_bytes_per_s=link,
                    link_source=source,
                    overhead_s=None,
                    progress=sub,
                    should_stop=should_stop,
                )
            records.extend(outcome.records)
            statuses.append({"workload": name, **outcome.status.to_dict()})
        # Small bandwidth points whose time is per-call overhead are labelled as such.
        records = mark_launch_bound(records)
        if summary.get("type") == "cuda":  # chase labels from the family's own L1/L2 capacities
            records = label_gpu_chase(records, (summary.get("catalog_match") or {}).get("id"))
        extra: dict[str, Any] = {}
        if match:
            extra["datasheet_ratios"] = datasheet_ratios(records, match.row)
        if progress:
            progress(1.0, "done")
        return Results(
            device=summary,
            records=tuple(records),
            statuses=tuple(statuses),
            created_utc=dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
            quick=quick,
            hosted=is_hosted(),
            extra=extra,
        )


def _transformer_both(
    device: str,
    quick: bool,
    config: TransformerConfig,
    progress: ProgressFn | None,
    should_stop: StopFn | None,
) -> st.Outcome:
    """A training step and an inference pass of the same small model."""
    dtype = "bfloat16" if device.startswith("cuda") else "float32"
    batch, seq = (2, 128) if quick else (4, 256)
    records: list[Record] = []
    final = st.ok()
    for i, mode in enumerate(("train", "inference")):
        part = _scaled(progress, i / 2, 0.5, mode) if progress else None
        outcome = transformer_memory(
            config,
            device=device,
            batch=batch,
            seq_len=seq,
            mode=mode,
            dtype=dtype,
            progress=part,
            should_stop=should_stop,
        )
        records.extend(outcome.records)
        if not outcome.ok:
            final = outcome.status
            break
    return st.Outcome(tuple(records), final)
