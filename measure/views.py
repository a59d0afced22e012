"""Rows for tables of measured results (plain dicts of display strings with units).

Pure Python over the JSON records ``python -m measure`` writes; imports no torch.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

Record = Mapping[str, Any]


def cache_rows(cpu: Mapping[str, Any]) -> list[dict[str, str]]:
    """The CPU's data and unified caches with their sizes."""
    return [
        {"Cache": f"L{c['level']} {c['type']}", "Size": f"{c['size_bytes'] / 1024:,.0f} KiB"}
        for c in cpu.get("caches", [])
        if c.get("type") != "Instruction" and c.get("size_bytes")
    ]


def matmul_rows(records: Sequence[Record]) -> list[dict[str, str]]:
    """Each matmul: shape, median TFLOP/s, arithmetic intensity and the spread of its timings."""
    return [
        {
            "Matmul": f"{r['dtype']} {r['m']}×{r['n']}×{r['k']}",
            "TFLOP/s (median)": f"{r['tflops']:.3g}",
            "Intensity (FLOP/byte)": f"{r['intensity_flop_per_byte']:.1f}",
            "Time p10–p90": f"{r['p10_s'] * 1e3:.3g}–{r['p90_s'] * 1e3:.3g} ms",
        }
        for r in records
        if r.get("kind") == "matmul"
    ]


def quantization_rows(records: Sequence[Record]) -> list[dict[str, str]]:
    """Each format: torch's measured SQNR beside the simulator's on the same tensor."""
    return [
        {
            "Format": r["format"],
            "Scale": r["granularity"],
            "Bits/element": f"{r['bits_per_element']:.3g}",
            "Measured SQNR (dB)": f"{r['sqnr_db']:.2f}" if r.get("sqnr_db") is not None else "exact",
            "Simulator (dB)": f"{r['predicted_sqnr_db']:.2f}" if r.get("predicted_sqnr_db") else "—",
        }
        for r in records
        if r.get("kind") == "quantization"
    ]


def transformer_memory_rows(records: Sequence[Record]) -> list[dict[str, str]]:
    """Each measured transformer step beside the calculator's prediction, with the ratio."""
    from simulators.fit import predicted_step_memory

    rows = []
    for record in records:
        if record.get("kind") != "transformer_memory":
            continue
        predicted = predicted_step_memory(dict(record))
        measured = record.get("peak_bytes")
        if predicted is None or not measured:
            continue
        config = record.get("config", {})
        rows.append(
            {
                "Step": f"{record.get('mode')} · batch {record.get('batch')} × {record.get('seq_len')} tokens"
                f" · {record.get('dtype')}",
                "Model": f"{config.get('num_hidden_layers')} layers × hidden {config.get('hidden_size')}"
                f" ({record.get('parameters', 0):,} parameters)",
                "Measured peak": f"{measured / 2**20:,.1f} MiB",
                "Predicted": f"{predicted.total_bytes / 2**20:,.1f} MiB",
                "Predicted ÷ measured": f"{predicted.total_bytes / measured:.2f}",
            }
        )
    return rows


def allreduce_rows(records: Sequence[Record]) -> list[dict[str, str]]:
    """Each all-reduce size: measured median, the ring model's prediction and their ratio."""
    rows = []
    for r in sorted((r for r in records if r.get("kind") == "allreduce"), key=lambda r: r["bytes"]):
        predicted = r.get("predicted_s")
        rows.append(
            {
                "Size per rank": f"{r['bytes'] / 1024:,.0f} KiB",
                "Measured (median)": f"{r['median_s'] * 1e3:.3g} ms",
                "Ring model": f"{predicted * 1e3:.3g} ms" if predicted else "—",
                "Measured ÷ model": f"{r['median_s'] / predicted:.2f}" if predicted else "—",
                "Bus bandwidth": f"{r.get('busbw_gb_per_s', 0):.3g} GB/s",
            }
        )
    return rows


def datasheet_rows(results: Mapping[str, Any]) -> list[dict[str, str]]:
    """Best measured bandwidth and matmul throughput against the matched catalog row's datasheet."""
    from measure.catalog import datasheet_ratios, load_catalog

    match = (results.get("device") or {}).get("catalog_match") or {}
    row = next(
        (r for r in load_catalog() if r["id"] == match.get("id") or r["name"] == match.get("name")), None
    )
    if row is None:
        return []
    return [
        {
            "Quantity": r["quantity"],
            "Measured (best)": f"{r['measured']:,.4g} {r['unit']}",
            "Datasheet": f"{r['datasheet']:,.4g} {r['unit']}",
            "Measured ÷ datasheet": f"{r['ratio']:.0%}",
        }
        for r in datasheet_ratios(results.get("results", []), row)
    ]
