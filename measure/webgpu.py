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
from collections.abc import Mapping
from typing import Any

from measure.launch_bound import LAUNCH_BOUND_FACTOR, LAUNCH_BOUND_HINT
from measure.results import load_results
from measure.webgpu_checks import (  # noqa: F401  (the checks' one home, re-exported)
    BROWSER_KINDS,
    DISPATCH_MODE,
    MAX_TEXT,
    NOISE_LIMIT,
    RATE_TOLERANCE,
    SOURCE,
    SUBMIT_MODE,
    check_document,
    is_browser_document,
    is_software_adapter,
    recompute,
    software_caps,
)

# Catalog kinds a browser can run on (not TPUs, Gaudi or server CPUs).
BROWSER_CATALOG_KINDS = ("gpu", "soc")
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
    of measure.launch_bound, with the browser's robust dispatch cost: ``launch_reference``), and
    the run's notices (``notices``). Returns a new document.

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
    launch_s, out["launch_reference"] = launch_reference(records)
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
    out["webgpu_notices"] = notices(out)
    return out


def launch_reference(records: list[Mapping[str, Any]]) -> tuple[float | None, str]:
    """The dispatch cost the launch-bound rule uses, and why: the fastest sample (min_s) of the
    in-pass empty dispatches, each sample at least 64 dispatches, so one slow sample cannot decide;
    None when there is no such record, or when it exceeds a whole submit-and-wait (impossible: one
    more dispatch inside a pass cannot cost more than a round trip with a dispatch in it)."""
    dispatch = next(
        (r for r in records if r.get("kind") == "launch_overhead" and r.get("mode") == DISPATCH_MODE), None
    )
    submit = next(
        (r for r in records if r.get("kind") == "launch_overhead" and r.get("mode") == SUBMIT_MODE), None
    )
    if dispatch is None or not dispatch.get("min_s"):
        return None, "no in-pass dispatch cost was measured, so no point is called launch-bound"
    best = float(dispatch["min_s"])
    if submit is not None and submit.get("min_s") and best > float(submit["min_s"]):
        return None, (
            f"the in-pass dispatch cost ({best * 1e6:.3g} us) exceeds a whole submit-and-wait "
            f"({float(submit['min_s']) * 1e6:.3g} us), which cannot be: it is not used"
        )
    return best, f"one empty dispatch in a pass, its fastest sample: {best * 1e6:.3g} us"


# Expected length of a run; past twice this, the notice says the computer may have been busy.
EXPECTED_RUN_S = {True: 60.0, False: 300.0}
LADDER_DROP = 0.8  # a larger ring reading below 80 % of a smaller one's time is flagged


def notices(doc: Mapping[str, Any]) -> list[str]:
    """What a reader must know before trusting the run, in words: noisy points (p90 ÷ p10 above
    NOISE_LIMIT after one re-measurement, kept out of the headline), samples under 100 timer ticks,
    a pointer-chase ladder that falls as the ring grows, and a run that looks like a busy computer
    (over twice its expected length, or a third of its points noisy)."""
    records = list(doc.get("results") or [])
    out = []
    noisy = [r for r in records if r.get("noisy")]
    if noisy:
        names = ", ".join(_point_name(r) for r in noisy[:6]) + (" …" if len(noisy) > 6 else "")
        out.append(
            f"{len(noisy)} noisy point(s), whose slowest tenth took more than {NOISE_LIMIT:g}× their fastest "
            f"tenth even after a second measurement: {names}. They are drawn with their p10–p90 bars and "
            "left out of the headline."
        )
    short = [r for r in records if r.get("ticks_note")]
    if short:
        out.append(
            f"{len(short)} point(s) had samples under 100 ticks of the timer, so the timer's step is "
            f"more than 1 % of them: {', '.join(_point_name(r) for r in short[:6])}."
        )
    chase = sorted((r for r in records if r.get("kind") == "latency"), key=lambda r: r["bytes"])
    falls = [
        (a, b)
        for i, a in enumerate(chase)
        for b in chase[i + 1 :]
        if float(b["ns"]) < LADDER_DROP * float(a["ns"])
    ]
    if falls:
        a, b = falls[0]
        out.append(
            "The pointer-chase ladder falls as the ring grows "
            f"({_size(b['bytes'])} reads {float(b['ns']):,.3g} ns, {_size(a['bytes'])} "
            f"{float(a['ns']):,.3g} ns): a larger ring cannot be faster, so other work on this "
            "computer disturbed the smaller one. Run it again with nothing else busy."
        )
    run = doc.get("webgpu_run") or {}
    elapsed = run.get("elapsed_s")
    expected = EXPECTED_RUN_S[doc.get("quick") is not False]
    busy = isinstance(elapsed, int | float) and elapsed > 2 * expected
    if busy or (records and len(noisy) * 3 >= len(records) and len(noisy) >= 2):
        took = f"took {elapsed:,.1f} s, over twice the {expected:g} s expected, and " if busy else ""
        out.append(
            f"This computer looked busy: the run {took}{len(noisy)} of {len(records)} points were "
            "noisy. Close other tabs and programs and measure again; numbers from a busy machine read low."
        )
    return out


def _point_name(record: Mapping[str, Any]) -> str:
    kind = record.get("kind")
    if kind == "bandwidth":
        return f"{record.get('op')} {_size(record['bytes'])}"
    if kind == "latency":
        return f"chase {_size(record['bytes'])}"
    if kind == "matmul":
        return f"matmul {record.get('m')}"
    if kind == "compute":
        return f"FMA chain {record.get('dtype')}"
    return "empty dispatch" if record.get("mode") == DISPATCH_MODE else "submit and wait"


def _percent(ratio: float) -> str:
    """A ratio as a percentage with three significant figures: 0.004 % stays 0.004 %, not 0 %."""
    value = 100 * ratio
    return f"{value:,.0f} %" if value >= 100 else f"{float(f'{value:.3g}'):,g} %"


def headline(doc: Mapping[str, Any]) -> dict[str, Any] | None:
    """ "memory bandwidth ≈ X GB/s, Y % of <GPU>": the triad (else copy) at the largest working set
    measured, from its bytes and median time, noisy and launch-bound points left out; the ratio
    against the catalog row the document is held to (the adapter's own name, or the reader's pick),
    or None when no GPU is named. Returns {"gb_per_s", "bytes", "op", "ratio", "gpu", "text"}."""
    points = [
        r
        for r in doc.get("results") or []
        if r.get("kind") == "bandwidth" and not r.get("noisy") and not r.get("launch_bound")
    ]
    if not points:
        return None
    in_memory = [r for r in points if r.get("cache_hint") == "device memory"]
    points = in_memory or points
    top = max(r["bytes"] for r in points)
    at_top = [r for r in points if r["bytes"] >= top / 2]
    best = max(at_top, key=lambda r: (r.get("op") == "triad", r["bytes"]))
    gbps = float(best["bytes"]) / float(best["median_s"]) / 1e9
    match = (doc.get("device") or {}).get("catalog_match") or {}
    row = next((r for r in catalog_rows() if r["id"] == match.get("id")), None) if match else None
    sheet = row.get("memory_bw_gbps") if row else None
    ratio = gbps / sheet if sheet else None
    text = f"memory bandwidth ≈ {gbps:,.3g} GB/s"
    if ratio is not None:
        text += f", {_percent(ratio)} of {row['name']} ({sheet:,.4g} GB/s on its datasheet)"
        if best.get("cache_hint") == "L2":
            text += f"; its {_size(best['bytes'])} working set fits in that GPU's L2, so this reads the L2"
    else:
        name = (doc.get("device") or {}).get("name") or device_name(
            (doc.get("device") or {}).get("adapter") or {}
        )
        text += f" on {name}"
    return {
        "gb_per_s": gbps,
        "bytes": best["bytes"],
        "op": best.get("op"),
        "ratio": ratio,
        "gpu": row["name"] if row else None,
        "text": text,
    }


def from_component(payload: str, max_bytes: int) -> dict[str, Any]:
    """The document inside one message from the browser component (``{"seq", "doc"}`` as JSON),
    validated as an upload is (measure.results.load_results, which applies ``check_document``).
    Raises ValueError with a message for anything else."""
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
