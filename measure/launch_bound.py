"""Which bandwidth points measure per-call overhead instead of a memory level.

A bandwidth sample times a torch call (copy_ or add) many times over. When the working set is
small, the call finishes its memory traffic faster than the host can issue the next one, so the
time per call is the launch (dispatch) overhead and the "bandwidth" is bytes / overhead: on the
H100 run, 0.4 GB/s for a 4 KiB copy labelled "fits in L2". Such points are marked, not dropped.

Rule (used by the suite and by bench/build_h100_sample.py and build_h200_sample.py for the
shipped samples). The calls are queued back to back, so a call's time is the larger of the
host's issue time and the GPU's own time. A bandwidth record is launch-bound when both hold:
1. its best time per call is at most LAUNCH_BOUND_FACTOR (2) x the run's eager launch-overhead
   median (`x.add_(1)` on a one-element tensor): the overhead is at least half the call;
2. this working set or a larger one was called within FLOOR_FACTOR (1.25) x the run's floor, the
   fastest call of the same operation at any working set (the issue time itself): the time has
   not yet grown with the bytes (a larger set cannot be moved faster, so a noisy small point
   whose larger neighbours sit at the floor is overhead too).
A call that has outgrown the floor is the GPU's own time: the H100's 32 MiB copy took 9.2 us
against a 6.0 us floor (1.5x) and reads the L2; the H200's 32 MiB copy took 6.46 us against a
6.13 us floor (1.05x), no longer than its 64 KiB copy, so its 5.2 TB/s says only "at least":
about half the 9.8 TB/s that RRZE measured for the H200's L2. The best time (min_s) is used,
not the median, so that one noisy sample cannot hide a point that is launch-bound in its best
case. Pure Python over records or their dicts; imports no torch.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from measure.results import BandwidthRecord, LaunchRecord, Record

LAUNCH_BOUND_FACTOR = 2.0
FLOOR_FACTOR = 1.25
LAUNCH_BOUND_HINT = "launch-bound"


def rule_text(launch_s: float, floor_s: float | None = None) -> str:
    """The rule in words, with this run's overhead (and floor), for a record's notes."""
    text = (
        f"launch_bound rule: best time per call <= {LAUNCH_BOUND_FACTOR:g} x this run's eager launch "
        f"overhead ({launch_s * 1e6:.3g} us per op, the launch_overhead record), i.e. the overhead is at "
        "least half of the fastest call"
    )
    if floor_s is None:
        return text + "."
    return (
        f"{text}; and this working set or a larger one was called within {FLOOR_FACTOR:g} x the floor "
        f"({floor_s * 1e6:.3g} us, the fastest call of this operation at any working set): the time has "
        "not grown with the bytes."
    )


def _best_s(record: Mapping[str, Any]) -> float:
    return float(record.get("min_s") or record.get("median_s") or 0.0)


def floors(records: Iterable[Record | Mapping[str, Any]]) -> dict[str, list[tuple[int, float]]]:
    """Per bandwidth operation: (bytes, best seconds per call) of each of its points, by bytes."""
    found: dict[str, list[tuple[int, float]]] = {}
    for record in records:
        data = record.to_dict() if isinstance(record, Record) else record
        if data.get("kind") != BandwidthRecord.kind or _best_s(data) <= 0:
            continue
        found.setdefault(str(data.get("op") or ""), []).append((int(data.get("bytes") or 0), _best_s(data)))
    return {op: sorted(points) for op, points in found.items()}


def _scaling(points: Sequence[tuple[int, float]], size: int) -> tuple[float, float]:
    """(the floor: the fastest call at any working set; the fastest call at ``size`` or larger).
    A larger working set cannot be moved faster, so when one was, this point's time was overhead."""
    floor = min(best for _, best in points)
    envelope = min((best for n, best in points if n >= size), default=floor)
    return floor, envelope


def eager_launch_overhead_s(records: Iterable[Record | Mapping[str, Any]]) -> float | None:
    """Median seconds per op of the run's eager launch-overhead record, or None if it has none."""
    for record in records:
        data = record.to_dict() if isinstance(record, Record) else record
        if data.get("kind") == LaunchRecord.kind and data.get("mode") == "eager" and data.get("median_s"):
            return float(data["median_s"])
    return None


def launch_bound_fields(
    record: Mapping[str, Any], launch_s: float, same_op: Sequence[tuple[int, float]] | None = None
) -> dict[str, Any]:
    """Fields to set on one bandwidth record (as a dict): launch_bound, cache_hint, notes, level.

    ``same_op`` is (bytes, best seconds) of every point of the record's operation in the run
    (``floors``); without it only the first half of the rule applies. A launch-bound record's
    cache_hint becomes "launch-bound" (so no page reads it as a cache level's bandwidth) and
    `working_set_level` keeps the level its working set fits in.
    """
    best = _best_s(record)
    bound = 0.0 < best <= LAUNCH_BOUND_FACTOR * launch_s
    floor_s = None
    if same_op:
        floor_s, envelope_s = _scaling(same_op, int(record.get("bytes") or 0))
        bound = bound and envelope_s <= FLOOR_FACTOR * floor_s
    level = str(record.get("working_set_level") or record.get("cache_hint") or "")
    if level == LAUNCH_BOUND_HINT:
        level = ""
    earlier = str(record.get("notes") or "")
    for marker in ("Launch-bound:", "launch_bound rule:"):  # marking twice replaces, never repeats
        earlier = earlier.split(marker, 1)[0]
    notes = [earlier.strip()] if earlier.strip() else []
    if bound:
        where = f" (the working set fits in {level})" if level else ""
        notes.append(
            f"Launch-bound: the best call took {best * 1e6:.3g} us{where}, within "
            f"{LAUNCH_BOUND_FACTOR:g} x the {launch_s * 1e6:.3g} us launch overhead, so this measures "
            "per-call overhead, not the bandwidth of a memory level."
        )
    elif floor_s is not None and 0.0 < best <= LAUNCH_BOUND_FACTOR * launch_s:
        notes.append(
            f"Not launch-bound: the best call took {best * 1e6:.3g} us, {best / floor_s:.2g} x the "
            f"{floor_s * 1e6:.3g} us floor, so the GPU's own time per call, not the issue time, set it."
        )
    notes.append(rule_text(launch_s, floor_s))
    return {
        "launch_bound": bound,
        "cache_hint": LAUNCH_BOUND_HINT if bound else level,
        "working_set_level": level,
        "notes": " ".join(notes),
    }


def mark_launch_bound(records: Sequence[Record]) -> list[Record]:
    """The records with every BandwidthRecord checked against the run's eager launch overhead.

    Unchanged when the run has no eager launch-overhead record (nothing to compare with).
    """
    launch_s = eager_launch_overhead_s(records)
    if launch_s is None:
        return list(records)
    fastest = floors(records)
    out: list[Record] = []
    for record in records:
        if isinstance(record, BandwidthRecord):
            fields = launch_bound_fields(record.to_dict(), launch_s, fastest.get(record.op))
            record = dataclasses.replace(record, **fields)
        out.append(record)
    return out
