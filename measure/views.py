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
            # Two significant figures below 1 %: a software adapter's 0.004 % is not "0%".
            "Measured ÷ datasheet": f"{r['ratio']:.0%}" if r["ratio"] >= 0.01 else f"{100 * r['ratio']:.2g}%",
        }
        for r in datasheet_ratios(results.get("results", []), row)
    ]


# ---------------------------------------------------------------------------------------------
# Latency: pointer-chase points placed on a hardware family's memory ladder

# Levels a chase through global memory can hit (registers and shared memory are never reached).
_CHASE_LEVELS = ("l1", "l2", "l2-far", "device-memory")
# A working set is placed on a level when it is at most this share of the level's capacity: near
# the capacity itself part of the set is already evicted (the H100 chase at exactly 256 KiB, the
# L1's size, read 102 ns, between L1's 19-29 and L2's 143).
LEVEL_FILL = 0.75


def latency_pairs(records: Sequence[Record]) -> list[tuple[int, float]]:
    """(working-set bytes, ns per load) of each latency record, by working set."""
    return sorted(
        (int(r["bytes"]), float(r["ns"]))
        for r in records
        if r.get("kind") == "latency" and r.get("bytes") and r.get("ns")
    )


def chase_capacities(family: Any, device: Mapping[str, Any]) -> list[tuple[str | None, float]]:
    """(ladder level id or None, bytes one chasing thread can use there), fastest level first.

    GPU families: the family's own L1 (per SM: one thread runs on one SM), L2 and device-memory
    capacities. Where the family has a far L2 partition, the near "l2" level holds one partition,
    half the L2 ("Two 25 MB partitions (RRZE); this row is the near one", memory_hierarchy.csv),
    and "l2-far" the whole L2. CPU families: the measured CPU's own data caches from the results
    (L1, L2, L3 as reported; private caches count once, as one thread uses one core), then main
    memory. A level absent from the family's ladder (a CPU's L3 on a ladder without one) is None.
    """
    levels = {lv.level: lv for lv in family.levels}
    out: list[tuple[str | None, float]] = []
    if family.sm_count is not None:
        for level_id in _CHASE_LEVELS:
            level = levels.get(level_id)
            if level is None or not level.capacity_bytes:
                continue
            capacity = float(level.capacity_bytes)
            if level_id == "l2" and "l2-far" in levels:
                capacity /= 2
            out.append((level_id, capacity))
        return out
    caches = [
        c
        for c in ((device.get("cpu") or {}).get("caches") or [])
        if c.get("type") != "Instruction" and c.get("size_bytes")
    ]
    for cache in sorted(caches, key=lambda c: c["level"]):
        level_id = f"l{cache['level']}"
        out.append((level_id if level_id in levels else None, float(cache["size_bytes"])))
    if "host-memory" in levels:
        out.append(("host-memory", float("inf")))
    return out


def chase_level(working_set_bytes: float, capacities: Sequence[tuple[str | None, float]]) -> str | None:
    """The ladder level whose latency a chase over `working_set_bytes` measures, or None.

    A level claims working sets larger than the level before it and at most LEVEL_FILL of its
    own capacity. Between those (near a capacity, where part of the set is evicted) and inside a
    level the ladder does not show, the answer is None.
    """
    previous = 0.0
    for level_id, capacity in capacities:
        if previous < working_set_bytes <= LEVEL_FILL * capacity:
            return level_id
        previous = capacity
    return None


CHASE_LEVEL_NAMES = {
    "l1": "L1",
    "l2": "L2",
    "l2-far": "L2 (far)",
    "l3": "L3",
    "device-memory": "device memory",
    "host-memory": "DRAM",
}


def chase_hint(working_set_bytes: float, capacities: Sequence[tuple[str | None, float]]) -> str:
    """The label of a chase record: its level's name (``chase_level``), or "between L1 and L2"
    where the working set sits near a capacity and part of it is already evicted."""
    level = chase_level(working_set_bytes, capacities)
    if level is not None:
        return CHASE_LEVEL_NAMES.get(level, level)
    names = [CHASE_LEVEL_NAMES.get(lid or "", lid or "an unlisted cache") for lid, _ in capacities]
    for index, (_, capacity) in enumerate(capacities):
        if working_set_bytes <= capacity or index == len(capacities) - 1:
            if index + 1 < len(names) and working_set_bytes > LEVEL_FILL * capacity:
                return f"between {names[index]} and {names[index + 1]}"
            return names[index]
    return ""


def family_for_accelerator(accelerator_id: str | None) -> Any:
    """The hierarchy family whose catalog row is ``accelerator_id`` (None when there is none)."""
    if not accelerator_id:
        return None
    from simulators.hierarchy import families

    return next((f for f in families() if f.accelerator_id == accelerator_id), None)


def label_gpu_chase(records: Sequence[Record], accelerator_id: str | None) -> list[Record]:
    """GPU latency records with ``cache_hint`` from the matched family's own capacities (its L1 per
    SM, its L2, device memory): on an H200 the 4-128 KiB chase is an L1 hit (22-28 ns), not "L2".
    Unchanged when the run matched no family with an SM ladder (no capacities to read)."""
    import dataclasses

    family = family_for_accelerator(accelerator_id)
    if family is None or family.sm_count is None:
        return list(records)
    capacities = chase_capacities(family, {"type": "cuda"})
    out: list[Record] = []
    for record in records:
        if getattr(record, "kind", "") == "latency" and getattr(record, "bytes", 0):
            record = dataclasses.replace(record, cache_hint=chase_hint(record.bytes, capacities))
        out.append(record)
    return out


def latency_ladder_points(results: Mapping[str, Any], family: Any) -> list[dict[str, Any]]:
    """Each latency record of `results` with the ladder level it lands on for `family` (None when
    it falls between levels): dicts {"bytes", "ns", "level"}. Empty when the results were not
    measured on this family (a CPU run belongs on the CPU ladder, a GPU run on the family whose
    catalog row it matched)."""
    device = results.get("device") or {}
    if device.get("type") == "cpu":
        if family.sm_count is not None:
            return []
    elif not family.accelerator_id or family.accelerator_id != (device.get("catalog_match") or {}).get("id"):
        return []
    capacities = chase_capacities(family, device)
    return [
        {"bytes": size, "ns": ns, "level": chase_level(size, capacities)}
        for size, ns in latency_pairs(results.get("results") or [])
    ]


def _short(value: float) -> str:
    """Whole numbers from 10 up, two significant figures below (0.5 ns, 4.7 ns)."""
    return f"{value:,.0f}" if value >= 10 else f"{value:.2g}"


def _ns_range(low: float, high: float) -> str:
    low_text, high_text = _short(low), _short(high)
    return low_text if low_text == high_text else f"{low_text}–{high_text}"


def latency_comparison_rows(results: Mapping[str, Any], family: Any) -> list[dict[str, str]]:
    """Measured pointer-chase latency against the family's published ladder, level by level.

    One row per level that has both a sourced latency and at least one measured point
    (``latency_ladder_points``): the working sets that landed there, the published and measured
    ranges in ns, measured ÷ published (midpoint over midpoint), then both in cycles (the
    measured ns at the clock the published row was converted with). Empty when the results were
    not measured on this family or have no latency records.
    """
    from measure.cli import human_bytes

    by_level: dict[str, list[dict[str, Any]]] = {}
    for point in latency_ladder_points(results, family):
        if point["level"] is not None:
            by_level.setdefault(point["level"], []).append(point)
    rows = []
    for level in family.levels:
        points = by_level.get(level.level)
        if not points or not level.has_latency:
            continue
        ns = [float(p["ns"]) for p in points]
        sizes = [int(p["bytes"]) for p in points]
        published_ns = (level.latency_s("min") * 1e9, level.latency_s("max") * 1e9)
        clock = level.clock_hz
        measured_mid = (min(ns) + max(ns)) / 2
        row = {
            "Level": level.name,
            "Working sets": f"{human_bytes(min(sizes))}–{human_bytes(max(sizes))}"
            if len(sizes) > 1
            else human_bytes(sizes[0]),
            "Published, ns": _ns_range(*published_ns),
            "Measured, ns": _ns_range(min(ns), max(ns)),
            "Measured ÷ published": f"{measured_mid / level.latency_s('mid') / 1e9:.2f}×",
            "Published, cycles": _ns_range(level.latency_cycles_min or 0, level.latency_cycles_max or 0)
            if level.latency_cycles_min
            else "—",
            # the measured time at the clock the published cycles were converted with
            "Measured, cycles": _ns_range(min(ns) * clock * 1e-9, max(ns) * clock * 1e-9) if clock else "—",
        }
        rows.append(row)
    return rows


# ---------------------------------------------------------------------------------------------
# Decode: measured tokens per second beside the bandwidth bound

_MODE_NAMES = {"eager": "eager PyTorch", "cuda_graph": "CUDA Graphs"}


def _rate(value: float) -> str:
    return f"{value:,.0f}" if value >= 100 else f"{value:.3g}"


def decode_gap_rows(records: Sequence[Record]) -> list[dict[str, Any]]:
    """Each decode record: model, mode, batch, measured tok/s, the bandwidth bound and the share
    of it reached (display strings; tok/s to 3 significant figures, whole numbers from 100)."""
    rows = []
    for r in records:
        if r.get("kind") != "decode":
            continue
        mode = _MODE_NAMES.get(str(r.get("mode")), str(r.get("mode")))
        if "torch.compile" in str(r.get("method", "")):
            mode += " (torch.compile)"
        if r.get("cache") == "dynamic":
            mode += ", dynamic cache"
        bound = r.get("bound_tok_s")
        fraction = r.get("fraction_of_bound")
        rows.append(
            {
                "Model": str(r.get("model", "")),
                "Mode": mode,
                "Batch": str(r["batch"]),
                "Measured tok/s": _rate(float(r["tok_s"])),
                "Bound tok/s": _rate(float(bound)) if bound else "—",
                "% of bound": (f"{fraction:.0%}" if fraction >= 0.01 else f"{fraction:.2%}")
                if fraction is not None
                else "—",
            }
        )
    return rows


# ---------------------------------------------------------------------------------------------
# A CPU's own roof: from its own run, never a GPU's datasheet

_TORCH_TO_ROOF_DTYPE = {"float32": "fp32", "bfloat16": "bf16", "float16": "fp16"}


def measured_cpu_accelerator(results: Mapping[str, Any]) -> Any:
    """A catalog-shaped accelerator for a CPU run, whose roofs are the run's own best figures: the
    best main-memory (DRAM) copy bandwidth that was not launch-bound, and per precision the best
    matmul FLOP/s. A CPU's datasheet peak is not in the catalog (it depends on cores, clocks and
    vector width), so its points are held to these measured ceilings, labelled as such, and never
    drawn under a GPU's roof. None for a GPU run or a CPU run without both kinds of record."""
    from simulators.hardware import Accelerator

    device = results.get("device") or {}
    if device.get("type") != "cpu":
        return None
    records = [r for r in results.get("results") or [] if isinstance(r, Mapping)]
    dram = [
        float(r["bytes_per_s"])
        for r in records
        if r.get("kind") == "bandwidth"
        and r.get("cache_hint") in {"DRAM", "device memory"}
        and not r.get("launch_bound")
        and r.get("bytes_per_s")
    ]
    peaks: dict[str, float] = {}
    for r in records:
        dtype = _TORCH_TO_ROOF_DTYPE.get(str(r.get("dtype") or "").removeprefix("torch."))
        achieved = r.get("flops_per_s")
        if r.get("kind") == "matmul" and dtype and achieved:
            peaks[dtype] = max(peaks.get(dtype, 0.0), float(achieved))
    if not dram or not peaks:
        return None
    name = str(device.get("name") or (device.get("cpu") or {}).get("model") or "This CPU")
    return Accelerator(
        id="measured-cpu",
        name=f"{name[:60]} (measured)",
        vendor="",
        kind="cpu",
        year=0,
        architecture="",
        devices_per_board=1,
        memory_bytes=None,
        memory_unit="",
        memory_bandwidth_bytes_per_s=max(dram),
        memory_type="DRAM, best copy measured",
        memory_channels=None,
        memory_transfer_rate_mt_per_s=None,
        fp32_flops=peaks.get("fp32"),
        tf32_dense_flops=None,
        bf16_dense_flops=peaks.get("bf16"),
        fp16_dense_flops=peaks.get("fp16"),
        fp8_dense_flops=None,
        int8_dense_ops=None,
        fp4_dense_flops=None,
        unsupported_dtypes=frozenset(),
        tdp_w=None,
        l2_bytes=None,
        sm_count=None,
        interconnect="",
        interconnect_id=None,
        interconnect_bytes_per_s=None,
        host_link="",
        host_link_id=None,
        cloud_instances="",
        source=("this run's own best copy bandwidth and best matmul per precision",),
        source_notes="",
        notes="Measured ceilings, not a datasheet: the catalog has no peak FLOP/s for this CPU.",
    )
