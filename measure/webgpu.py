"""Results measured in the reader's browser (ui/webgpu.js, source "webgpu"): the stricter checks a
browser file gets, its device's name, its catalog row and the labels its points need on the charts.

The browser suite writes the project's result schema (measure/results.py, schema 1) with records of
kinds bandwidth, compute (an FMA chain), launch_overhead (empty dispatches), latency (a pointer
chase) and matmul, each with ``source: "webgpu"`` and ``verified: true``, and a device with the
adapter's ``adapter.info`` (vendor, architecture, device, description). A browser names the GPU only
sometimes (Chrome fills ``description`` on some systems; Safari leaves it empty), so the catalog row
is matched from what the adapter says, or named by the reader (``finalize``).

Pure Python over plain documents: no torch, no Streamlit.
"""

from __future__ import annotations

import copy
import json
import math
from collections.abc import Mapping
from typing import Any

from measure.launch_bound import LAUNCH_BOUND_FACTOR, LAUNCH_BOUND_HINT

SOURCE = "webgpu"
BROWSER_KINDS = frozenset({"bandwidth", "compute", "launch_overhead", "latency", "matmul"})
# Rates must follow from the times they were computed from, to this relative tolerance.
RATE_TOLERANCE = 0.01
MAX_TEXT = 200  # adapter strings: the browser cuts them at 200 characters too
# Catalog kinds a browser can run on (not TPUs, Gaudi or server CPUs).
BROWSER_CATALOG_KINDS = ("gpu", "soc")
DISPATCH_MODE = "webgpu-dispatch"  # the in-pass empty-dispatch record: the launch-bound reference
READER_NAMED = "named by you on this page (the browser does not say which GPU it is)"

_VENDORS = {
    "nvidia": "NVIDIA",
    "amd": "AMD",
    "ati": "AMD",
    "intel": "Intel",
    "apple": "Apple",
    "qualcomm": "Qualcomm",
    "arm": "Arm",
    "google": "Google",
    "microsoft": "Microsoft",
    "imagination": "Imagination",
    "samsung": "Samsung",
    "mesa": "Mesa",
}


def _fail(where: str, message: str) -> None:
    raise ValueError(f"{where}: {message}")


def _close(measured: float, expected: float) -> bool:
    return (
        math.isfinite(measured)
        and math.isfinite(expected)
        and abs(measured - expected) <= (RATE_TOLERANCE * abs(expected))
    )


def _timing(where: str, record: Mapping[str, Any]) -> tuple[float, float, float, float]:
    """(min, p10, median, p90) seconds of a timed record, checked to be present and ordered."""
    values = []
    for name in ("min_s", "p10_s", "median_s", "p90_s"):
        value = record.get(name)
        if isinstance(value, bool) or not isinstance(value, int | float) or not value > 0:
            _fail(where, f"a browser measurement needs a positive {name!r}")
        values.append(float(value))
    low, p10, median, p90 = values
    slack = 1e-9 * median
    if not low <= p10 + slack <= median + 2 * slack <= p90 + 3 * slack:
        _fail(where, "its times are out of order (minimum ≤ p10 ≤ median ≤ p90 must hold)")
    return low, p10, median, p90


def check_document(doc: Mapping[str, Any]) -> None:
    """Raise ValueError, saying what is wrong, unless ``doc`` is a browser measurement whose numbers
    can be drawn: every record of a kind the browser suite writes, from source "webgpu", verified by
    its own kernel check, with a timer named, times in order, and every rate equal (within 1 %) to
    what its bytes, FLOPs or operations over its median time give. A hand-edited number fails the
    last check: the file is refused, not partly shown."""
    device = doc.get("device")
    if not isinstance(device, Mapping):
        _fail("device", "must be a JSON object")
    adapter = device.get("adapter")
    if not isinstance(adapter, Mapping):
        _fail("device.adapter", "a browser measurement must say which adapter ran it (adapter.info)")
    for key, value in adapter.items():
        if isinstance(value, str) and len(value) > MAX_TEXT:
            _fail(f"device.adapter.{key}", f"longer than {MAX_TEXT} characters")
        if not isinstance(value, str | bool | int | float) and value is not None:
            _fail(f"device.adapter.{key}", "must be a string, number or true/false")
    for index, record in enumerate(doc.get("results") or []):
        kind = record.get("kind")
        where = f"results[{index}] ({kind})"
        if kind not in BROWSER_KINDS:
            _fail(where, f"the browser suite writes only {', '.join(sorted(BROWSER_KINDS))}")
        if record.get("source") != SOURCE:
            _fail(where, 'every record of a browser measurement has source "webgpu"')
        if record.get("verified") is not True:
            _fail(
                where,
                "its kernel's result was not verified, and a result that was not checked is never "
                "drawn (a wrong result is an error, not a number)",
            )
        if not isinstance(record.get("timer"), str) or not record["timer"]:
            _fail(where, "must name the timer it was measured with")
        if kind == "latency":
            ns = float(record["ns"])
            p10, p90 = record.get("p10_ns"), record.get("p90_ns")
            if isinstance(p10, int | float) and isinstance(p90, int | float) and not p10 <= ns <= p90:
                _fail(where, "ns must lie between p10_ns and p90_ns")
            continue
        _, _, median, _ = _timing(where, record)
        if kind == "bandwidth":
            expected = record["bytes"] / median / 1e9
            if not _close(float(record["gb_per_s"]), expected):
                _fail(where, f"gb_per_s {record['gb_per_s']:.6g} is not bytes ÷ median_s ({expected:.6g})")
        elif kind == "compute":
            expected = record["flops"] / median / 1e12
            if not _close(float(record["tflops"]), expected):
                _fail(where, f"tflops {record['tflops']:.6g} is not flops ÷ median_s ({expected:.6g})")
        elif kind == "matmul":
            expected = 2 * record["m"] * record["n"] * record["k"] / median / 1e12
            if not _close(float(record["tflops"]), expected):
                _fail(where, f"tflops {record['tflops']:.6g} is not 2mnk ÷ median_s ({expected:.6g})")
        elif kind == "launch_overhead" and not _close(float(record["ops_per_s"]), 1 / median):
            _fail(where, f"ops_per_s {record['ops_per_s']:.6g} is not 1 ÷ median_s ({1 / median:.6g})")


def is_browser_document(doc: Mapping[str, Any]) -> bool:
    """True for a document the browser suite wrote (its device's source is "webgpu")."""
    device = doc.get("device") or {}
    return isinstance(device, Mapping) and SOURCE in (device.get("source"), device.get("type"))


def device_name(adapter: Mapping[str, Any]) -> str:
    """A name for the adapter: its description when the browser gives one ("NVIDIA GeForce RTX
    4090"), else vendor and architecture ("Apple GPU (metal-3)"); a software adapter says so."""
    description = str(adapter.get("description") or "").strip()
    vendor_key = str(adapter.get("vendor") or "").strip()
    vendor = _VENDORS.get(vendor_key.lower(), vendor_key)
    architecture = str(adapter.get("architecture") or "").strip()
    if adapter.get("is_fallback_adapter"):
        base = description or " ".join(p for p in (vendor, architecture) if p) or "unnamed adapter"
        return f"{base} (software adapter)"
    if description:
        return description
    if vendor and architecture:
        return f"{vendor} GPU ({architecture})"
    return f"{vendor or 'Unnamed'} GPU"


def catalog_rows() -> list[dict[str, Any]]:
    """Catalog rows a browser can run on (GPUs and systems-on-chip), as measure.catalog builds them."""
    from measure.catalog import load_catalog
    from simulators import hardware

    kinds = {a.id: a.kind for a in hardware.load_catalog()}
    return [row for row in load_catalog() if kinds.get(row["id"]) in BROWSER_CATALOG_KINDS]


def automatic_match(adapter: Mapping[str, Any]) -> dict[str, str] | None:
    """The catalog row the adapter names ({id, name, reason}), or None. Only the adapter's own
    strings are read (description, then device): a software adapter matches nothing."""
    from measure.catalog import match_catalog

    if adapter.get("is_fallback_adapter"):
        return None
    rows = catalog_rows()
    for field in ("description", "device"):
        text = str(adapter.get(field) or "").strip()
        if not text:
            continue
        match = match_catalog(text, rows)
        if match:
            return {
                "id": str(match.row["id"]),
                "name": str(match.row["name"]),
                "reason": f"the browser's adapter.info.{field} {text[:80]!r}: {match.reason}",
            }
    return None


def _family(catalog_id: str | None):
    if not catalog_id:
        return None
    from simulators.hierarchy import families

    return next((f for f in families() if f.accelerator_id == catalog_id), None)


def _bandwidth_hint(working_set: float, l2_bytes: float | None) -> str:
    """The level a bandwidth working set measures on a GPU with this L2: "L2" when it fits with
    room (≤ 3/4 of it), "device memory" when it is 4× larger or more, else "" (partly both)."""
    if not l2_bytes:
        return ""
    if working_set <= 0.75 * l2_bytes:
        return "L2"
    if working_set >= 4 * l2_bytes:
        return "device memory"
    return ""


_LEVEL_NAMES = {"l1": "L1", "l2": "L2", "l2-far": "L2 (far)", "device-memory": "device memory"}


def finalize(doc: Mapping[str, Any], chosen_id: str | None = None) -> dict[str, Any]:
    """A validated browser document made ready to draw: its device named (``device_name``), its
    catalog row (``chosen_id``: None = what the adapter names, "" = none, else a catalog id the
    reader picked), cache labels on bandwidth and latency points from that row's memory ladder, and
    bandwidth points whose best time is within 2× one empty dispatch marked launch-bound (the rule
    of measure.launch_bound, with the browser's own dispatch cost). Returns a new document.

    Raises ValueError for a ``chosen_id`` that is not a browser-reachable catalog row.
    """
    out = copy.deepcopy(dict(doc))
    device = out.setdefault("device", {})
    adapter = device.get("adapter") or {}
    device["name"] = device_name(adapter)
    automatic = automatic_match(adapter)
    if chosen_id is None:
        match = automatic
    elif chosen_id == "":
        match = None
    else:
        row = next((r for r in catalog_rows() if r["id"] == chosen_id), None)
        if row is None:
            raise ValueError(f"{chosen_id!r} is not a GPU in the catalog")
        match = (
            automatic
            if automatic and automatic["id"] == chosen_id
            else {"id": row["id"], "name": row["name"], "reason": READER_NAMED}
        )
    if match:
        device["catalog_match"] = match
    else:
        device.pop("catalog_match", None)
    from measure.views import chase_capacities, chase_level

    family = _family(match["id"] if match else None)
    l2 = None
    capacities: list[tuple[str | None, float]] = []
    if family is not None:
        capacities = chase_capacities(family, device)
        if family.has_level("l2"):
            l2 = family.level("l2").capacity_bytes
    records = out.get("results") or []
    dispatch = next(
        (r for r in records if r.get("kind") == "launch_overhead" and r.get("mode") == DISPATCH_MODE), None
    )
    launch_s = float(dispatch["median_s"]) if dispatch and dispatch.get("median_s") else None
    for record in records:
        if record.get("kind") == "bandwidth":
            level = _bandwidth_hint(float(record["bytes"]), l2)
            record["working_set_level"] = level
            best = float(record.get("min_s") or record.get("median_s") or 0.0)
            bound = launch_s is not None and 0.0 < best <= LAUNCH_BOUND_FACTOR * launch_s
            record["launch_bound"] = bound if launch_s is not None else None
            record["cache_hint"] = LAUNCH_BOUND_HINT if bound else level
            if bound:
                record["launch_note"] = (
                    f"Launch-bound: the best pass took {best * 1e6:.3g} us, within {LAUNCH_BOUND_FACTOR:g} x "
                    f"one empty dispatch ({launch_s * 1e6:.3g} us), so it measures dispatch cost, "
                    "not a memory level."
                )
            else:
                record.pop("launch_note", None)
        elif record.get("kind") == "latency":
            level = chase_level(float(record["bytes"]), capacities) if capacities else None
            record["cache_hint"] = _LEVEL_NAMES.get(level or "", "")
    return out


def from_component(payload: str, max_bytes: int) -> dict[str, Any]:
    """The document inside one message from the browser component (``{"seq", "doc"}`` as JSON),
    validated as an upload is (measure.results.load_results, which applies ``check_document``).
    Raises ValueError with a message for anything else."""
    from measure.results import load_results

    if not isinstance(payload, str):
        raise ValueError("the browser sent no text")
    if len(payload.encode("utf-8")) > max_bytes:
        raise ValueError(f"the browser sent more than {max_bytes:,} bytes")
    try:
        message = json.loads(payload)
    except json.JSONDecodeError as exc:
        raise ValueError(f"the browser sent text that is not JSON ({exc.msg})") from None
    if not isinstance(message, dict) or not isinstance(message.get("doc"), dict):
        raise ValueError("the browser's message holds no results document")
    doc = message["doc"]
    if not is_browser_document(doc):
        raise ValueError('the document does not come from the browser suite (device.source is not "webgpu")')
    return json.loads(load_results(json.dumps(doc, allow_nan=False)).to_json())


def _seconds(value: float) -> str:
    if value < 1e-6:
        return f"{value * 1e9:.3g} ns"
    if value < 1e-3:
        return f"{value * 1e6:.3g} µs"
    return f"{value * 1e3:.3g} ms"


def _flops(value: float) -> str:
    """FLOP/s in TFLOP/s from 1e12 up, else GFLOP/s (a laptop's FMA chain, a software adapter)."""
    return f"{value / 1e12:,.3g} TFLOP/s" if value >= 1e12 else f"{value / 1e9:,.3g} GFLOP/s"


def _size(n: float) -> str:
    from measure.cli import human_bytes

    return human_bytes(n)


def summary_rows(doc: Mapping[str, Any]) -> list[dict[str, str]]:
    """One row per browser record: kernel, size, result with its unit, p10–p90 spread, how it was
    checked. Display strings (decimal GB/s, TFLOP/s; binary sizes)."""
    rows = []
    for r in doc.get("results") or []:
        kind = r.get("kind")
        if kind == "bandwidth":
            kernel, size = f"{r['op']} (STREAM counting)", _size(r["bytes"])
            result = f"{r['gb_per_s']:,.3g} GB/s"
            spread = f"{r['bytes'] / r['p90_s'] / 1e9:,.3g}–{r['bytes'] / r['p10_s'] / 1e9:,.3g} GB/s"
        elif kind == "compute":
            kernel, size = f"FMA chain {r['dtype']}", f"{r.get('invocations', 0):,} invocations"
            result = _flops(r["flops"] / r["median_s"])
            spread = f"{_flops(r['flops'] / r['p90_s'])}–{_flops(r['flops'] / r['p10_s'])}"
        elif kind == "matmul":
            kernel, size = f"tiled matmul {r['dtype']}", f"{r['m']}×{r['n']}×{r['k']}"
            flops = 2 * r["m"] * r["n"] * r["k"]
            result = _flops(flops / r["median_s"])
            spread = f"{_flops(flops / r['p90_s'])}–{_flops(flops / r['p10_s'])}"
        elif kind == "launch_overhead":
            kernel = "empty dispatch, in one pass" if r.get("mode") == DISPATCH_MODE else "dispatch + wait"
            size, result = "1 workgroup", _seconds(float(r["median_s"]))
            spread = f"{_seconds(float(r['p10_s']))}–{_seconds(float(r['p90_s']))}"
        elif kind == "latency":
            kernel, size = "pointer chase", _size(r["bytes"])
            result = f"{r['ns']:,.3g} ns per load"
            p10, p90 = r.get("p10_ns"), r.get("p90_ns")
            spread = f"{p10:,.3g}–{p90:,.3g} ns" if p10 and p90 else "—"
        else:
            continue
        rows.append(
            {
                "Kernel": kernel,
                "Size": size,
                "Median": result,
                "p10–p90": spread,
                "Checked": "yes" if r.get("verified") is True else "no",
            }
        )
    return rows
