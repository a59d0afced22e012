"""Which bandwidth points measure per-call overhead instead of a memory level.

A bandwidth sample times a torch call (copy_ or add) many times over. When the working set is
small, the call finishes its memory traffic faster than the host can issue the next one, so the
time per call is the launch (dispatch) overhead and the "bandwidth" is bytes / overhead: on the
H100 run, 0.4 GB/s for a 4 KiB copy labelled "fits in L2". Such points are marked, not dropped.

Rule (used by the suite and by bench/build_h100_sample.py for the shipped sample): a bandwidth
record is launch-bound when its best time per call is at most LAUNCH_BOUND_FACTOR x the run's
eager launch-overhead median (`x.add_(1)` on a one-element tensor), i.e. when the launch
overhead is at least half of even the fastest call. The best time (min_s) is used, not the
median, so that one noisy sample cannot hide a point that is launch-bound in its best case.
Pure Python over records or their dicts; imports no torch.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from measure.results import BandwidthRecord, LaunchRecord, Record

LAUNCH_BOUND_FACTOR = 2.0
LAUNCH_BOUND_HINT = "launch-bound"


def rule_text(launch_s: float) -> str:
    """The rule in words, with this run's overhead, for a record's notes."""
    return (
        f"launch_bound rule: best time per call <= {LAUNCH_BOUND_FACTOR:g} x this run's eager launch "
        f"overhead ({launch_s * 1e6:.3g} us per op, the launch_overhead record), i.e. the overhead is at "
        "least half of the fastest call."
    )


def eager_launch_overhead_s(records: Iterable[Record | Mapping[str, Any]]) -> float | None:
    """Median seconds per op of the run's eager launch-overhead record, or None if it has none."""
    for record in records:
        data = record.to_dict() if isinstance(record, Record) else record
        if data.get("kind") == LaunchRecord.kind and data.get("mode") == "eager" and data.get("median_s"):
            return float(data["median_s"])
    return None


def launch_bound_fields(record: Mapping[str, Any], launch_s: float) -> dict[str, Any]:
    """Fields to set on one bandwidth record (as a dict): launch_bound, cache_hint, notes, level.

    A launch-bound record's cache_hint becomes "launch-bound" (so no page reads it as a cache
    level's bandwidth) and `working_set_level` keeps the level its working set fits in.
    """
    best = float(record.get("min_s") or record.get("median_s") or 0.0)
    bound = 0.0 < best <= LAUNCH_BOUND_FACTOR * launch_s
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
    notes.append(rule_text(launch_s))
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
    out: list[Record] = []
    for record in records:
        if isinstance(record, BandwidthRecord):
            record = dataclasses.replace(record, **launch_bound_fields(record.to_dict(), launch_s))
        out.append(record)
    return out
