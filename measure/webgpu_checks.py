"""The one home of the checks a browser measurement (ui/webgpu.js, source "webgpu") gets before any
of its numbers is drawn, and of the figures recomputed from its raw bytes, FLOPs and times.

``measure.results.load_results`` applies ``check_document`` to every document ``is_browser_document``
recognises (by its shape, not only its label), and then draws only what ``recompute`` derives from
the record's bytes, FLOPs and times: a stored rate is compared, never trusted. ``measure.webgpu``
re-exports both. This module imports nothing from ``measure.results`` or ``measure.webgpu``, so the
two no longer import each other (issue 33, item 8); the catalog and the hierarchy data are read
lazily, for the software adapter's caps.

A browser file is self-reported: these checks catch a hand edit that breaks the file's own
arithmetic, a record relabelled as another source, a value of the wrong type and a figure no
software adapter can reach; they cannot prove that a consistent file was measured.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from functools import lru_cache
from typing import Any

SOURCE = "webgpu"
WEBGPU_TOOL = "gpu-field-guide webgpu"
BROWSER_KINDS = frozenset({"bandwidth", "compute", "launch_overhead", "latency", "matmul"})
RATE_TOLERANCE = 0.01  # a stored figure must equal its recomputed value to 1 %
MAX_TEXT = 200  # adapter strings: the browser cuts them at 200 characters too
MAX_NOTE = 2000  # method, verification and notes sentences
MAX_SAMPLES = 1000  # raw walk times per chase record
DISPATCH_MODE = "webgpu-dispatch"  # the in-pass empty-dispatch record: the launch-bound reference
SUBMIT_MODE = "webgpu-submit"
# A point whose p90 ÷ p10 exceeds this was re-measured once by the browser; if it still does it is
# marked noisy and kept out of the headline (a 2x spread means the slow decile took twice the fast).
NOISE_LIMIT = 2.0
MIN_TICKS = 100  # a sample shorter than 100 ticks of its timer has more than 1 % granularity
ELEMENT_BYTES = {"float32": 4, "float16": 2}

# Shape of a browser record: fields only ui/webgpu.js writes. A document with any of them, or with
# a record timed by a WebGPU timer, gets the browser checks whatever its source says.
_BROWSER_RECORD_FIELDS = frozenset(
    {"verification", "workgroup_size", "workgroups", "sample_s", "long_walk_s", "short_walk_s", "ticks"}
)
_BROWSER_DEVICE_FIELDS = frozenset({"adapter", "limits_refused", "features"})
_BROWSER_TIMER_WORDS = ("webgpu", "timestamp-query", "onsubmittedworkdone")
_SOFTWARE_WORDS = ("swiftshader", "llvmpipe", "lavapipe", "microsoft basic render", "warp")

# Field types of a browser record (a field absent is fine; one present must have its type).
_TEXT_FIELDS = frozenset(
    {
        "kind", "device", "device_name", "source", "op", "dtype", "mode", "timer", "method",
        "verification", "notes", "math", "shape", "cache_hint", "working_set_level", "launch_note",
        "bytes_counted", "torch_version", "noise_note", "ticks_note",
    }
)  # fmt: skip
_BOOL_FIELDS = frozenset(
    {"verified", "warm_cache", "l2_flushed", "write_allocate_counted", "noisy", "remeasured"}
)
_NULLABLE_BOOL_FIELDS = frozenset({"launch_bound", "huge_pages_advised"})
_NUMBER_FIELDS = frozenset(
    {
        "bytes", "elements", "flops", "m", "n", "k", "invocations", "iterations", "chains_per_invocation",
        "inner_loops", "repeats", "loads", "short_loads", "line_bytes", "workgroup_size", "workgroups",
        "threads", "ns", "p10_ns", "p90_ns", "min_ns", "median_s", "p10_s", "p90_s", "min_s", "sample_s",
        "gb_per_s", "bytes_per_s", "best_gb_per_s", "tflops", "flops_per_s", "best_tflops", "ops_per_s",
        "intensity_flop_per_byte", "ticks", "spread", "ring_lines", "laps", "warm_loads", "timed_loads",
    }
)  # fmt: skip
_LIST_FIELDS = frozenset({"long_walk_s", "short_walk_s"})


def _fail(where: str, message: str) -> None:
    raise ValueError(f"{where}: {message}")


def _is_number(value: Any) -> bool:
    return not isinstance(value, bool) and isinstance(value, int | float) and math.isfinite(value)


def _close(stored: Any, expected: float) -> bool:
    return _is_number(stored) and abs(float(stored) - expected) <= RATE_TOLERANCE * abs(expected)


def _percentile(sorted_values: Sequence[float], q: float) -> float:
    """numpy's default (linear) percentile, as ui/webgpu.js and measure/timing.py compute it."""
    if len(sorted_values) == 1:
        return sorted_values[0]
    pos = q / 100 * (len(sorted_values) - 1)
    lo = math.floor(pos)
    hi = min(lo + 1, len(sorted_values) - 1)
    return sorted_values[lo] + (sorted_values[hi] - sorted_values[lo]) * (pos - lo)


def summarize(values: Sequence[float]) -> dict[str, float]:
    """median, p10, p90 and minimum of samples, as the browser computes them."""
    s = sorted(float(v) for v in values)
    return {"median": _percentile(s, 50), "p10": _percentile(s, 10), "p90": _percentile(s, 90), "min": s[0]}


# ---------------------------------------------------------------------------------------------
# Recognising a browser document


def is_browser_document(doc: Mapping[str, Any]) -> bool:
    """True for a document the browser suite wrote, whatever it says it is: its device's source or
    type is "webgpu", its tool is the browser suite's, it carries a ``webgpu_run`` or an adapter, or
    any record says source "webgpu", was timed by a WebGPU timer, or has a field only the browser
    writes. A file relabelled as a CUDA run keeps those marks, so it still gets these checks."""
    if not isinstance(doc, Mapping):
        return False
    device = doc.get("device")
    if isinstance(device, Mapping):
        if SOURCE in (device.get("source"), device.get("type"), device.get("device")):
            return True
        if _BROWSER_DEVICE_FIELDS & set(device):
            return True
    if doc.get("tool") == WEBGPU_TOOL or "webgpu_run" in doc:
        return True
    results = doc.get("results")
    if not isinstance(results, list):
        return False
    for record in results:
        if not isinstance(record, Mapping):
            continue
        if SOURCE in (record.get("source"), record.get("device")) or _BROWSER_RECORD_FIELDS & set(record):
            return True
        timer = record.get("timer")
        if isinstance(timer, str) and any(w in timer.lower() for w in _BROWSER_TIMER_WORDS):
            return True
        mode = record.get("mode")
        if isinstance(mode, str) and mode.startswith("webgpu"):
            return True
    return False


def is_software_adapter(adapter: Mapping[str, Any]) -> bool:
    """An adapter that runs WGSL on the CPU: it says so (is_fallback_adapter), or names a known
    software rasterizer (SwiftShader, llvmpipe, lavapipe, WARP) in any of its strings."""
    if adapter.get("is_fallback_adapter") is True:
        return True
    text = " ".join(str(v) for v in adapter.values() if isinstance(v, str)).lower()
    return any(word in text for word in _SOFTWARE_WORDS)


# ---------------------------------------------------------------------------------------------
# Caps a software adapter cannot pass, and a floor no load can beat (computed from the data files)


@lru_cache(maxsize=1)
def software_caps() -> dict[str, Any]:
    """What a software adapter (WGSL run on the CPU) cannot exceed, with the reason in words:
    bandwidth above the fastest CPU memory system in the catalog, and no load faster than the
    fastest L1 hit in the hierarchy data (which holds for every device)."""
    from simulators import hardware
    from simulators.hierarchy import families

    cpus = [a for a in hardware.load_catalog() if a.kind == "cpu" and a.memory_bandwidth_bytes_per_s]
    fastest = max(cpus, key=lambda a: a.memory_bandwidth_bytes_per_s)
    l1 = [
        (level.latency_min_s, family.name)
        for family in families()
        for level in family.levels
        if level.level == "l1" and level.latency_min_s
    ]
    floor_s, floor_family = min(l1)
    return {
        "bytes_per_s": float(fastest.memory_bandwidth_bytes_per_s),
        "bandwidth_reason": (
            f"a software adapter runs the kernels on the CPU, and the fastest CPU memory in the catalog "
            f"({fastest.name}) moves {fastest.memory_bandwidth_bytes_per_s / 1e9:,.4g} GB/s; SwiftShader "
            "measures about 1 GB/s"
        ),
        "load_floor_ns": floor_s * 1e9,
        "floor_reason": (
            f"a dependent load cannot return faster than an L1 hit, {floor_s * 1e9:.3g} ns at the "
            f"fastest in the hierarchy data ({floor_family})"
        ),
    }


# ---------------------------------------------------------------------------------------------
# Types


def _check_types(where: str, record: Mapping[str, Any]) -> None:
    """Every field of a browser record has the type the views format it with."""
    for name, value in record.items():
        at = f"{where}.{name}"
        if name in _TEXT_FIELDS:
            if not isinstance(value, str):
                _fail(at, f"must be text, got {type(value).__name__}")
            if len(value) > MAX_NOTE:
                _fail(at, f"longer than {MAX_NOTE} characters")
        elif name in _BOOL_FIELDS:
            if not isinstance(value, bool):
                _fail(at, f"must be true or false, got {type(value).__name__}")
        elif name in _NULLABLE_BOOL_FIELDS:
            if value is not None and not isinstance(value, bool):
                _fail(at, f"must be true, false or null, got {type(value).__name__}")
        elif name in _NUMBER_FIELDS:
            if value is None:
                continue
            if name == "min_ns" and _is_number(value):
                continue  # one pair of walks may invert on a busy machine: the fastest may be < 0
            if not _is_number(value) or value < 0:
                _fail(at, f"must be a finite number ≥ 0, got {value!r}"[:200])
        elif name in _LIST_FIELDS:
            if not isinstance(value, list) or not 0 < len(value) <= MAX_SAMPLES:
                _fail(at, f"must be a list of 1 to {MAX_SAMPLES} times")
            if not all(_is_number(v) and v > 0 for v in value):
                _fail(at, "every time must be a positive number")
        elif isinstance(value, str):
            if len(value) > MAX_NOTE:
                _fail(at, f"longer than {MAX_NOTE} characters")
        elif value is not None and not isinstance(value, bool | int | float):
            _fail(at, f"must be text, a number or true/false, got {type(value).__name__}")
        elif isinstance(value, float) and not math.isfinite(value):
            _fail(at, "must be finite")


def _check_device(doc: Mapping[str, Any]) -> dict[str, Any]:
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
    for key in ("name", "limits_refused", "type", "source"):
        if key in device and not isinstance(device[key], str):
            _fail(f"device.{key}", "must be text")
    timer = device.get("timer", {})
    if not isinstance(timer, Mapping):
        _fail("device.timer", "must be a JSON object")
    for key, value in timer.items():
        if key.endswith("_s") and (not _is_number(value) or value <= 0):
            _fail(f"device.timer.{key}", f"must be a positive number, got {value!r}"[:200])
        elif not key.endswith("_s") and not isinstance(value, str):
            _fail(f"device.timer.{key}", "must be text")
    for key in ("limits", "browser", "catalog_match"):
        part = device.get(key)
        if part is None:
            continue
        if not isinstance(part, Mapping):
            _fail(f"device.{key}", "must be a JSON object")
        for name, value in part.items():
            if not isinstance(value, str | bool | int | float) and value is not None:
                _fail(f"device.{key}.{name}", "must be text, a number or true/false")
            if isinstance(value, str) and len(value) > MAX_NOTE:
                _fail(f"device.{key}.{name}", f"longer than {MAX_NOTE} characters")
    features = device.get("features", [])
    if not isinstance(features, list) or not all(isinstance(f, str) for f in features):
        _fail("device.features", "must be a list of names")
    run = doc.get("webgpu_run", {})
    if not isinstance(run, Mapping):
        _fail("webgpu_run", "must be a JSON object")
    if "elapsed_s" in run and (not _is_number(run["elapsed_s"]) or run["elapsed_s"] < 0):
        _fail("webgpu_run.elapsed_s", "must be a number of seconds")
    if "final" in run and not isinstance(run["final"], bool):
        _fail("webgpu_run.final", "must be true or false")
    for key, value in run.items():
        if key.endswith("_note") and not isinstance(value, str):
            _fail(f"webgpu_run.{key}", "must be text")
    for index, status in enumerate(doc.get("statuses") or []):
        if not isinstance(status, Mapping):
            _fail(f"statuses[{index}]", "must be a JSON object")
        for key in ("workload", "message", "code"):
            if key in status and not isinstance(status[key], str):
                _fail(f"statuses[{index}].{key}", "must be text")
    return dict(adapter)


# ---------------------------------------------------------------------------------------------
# Times and the figures they give


def _timing(where: str, record: Mapping[str, Any]) -> tuple[float, float, float, float]:
    """(min, p10, median, p90) seconds of a timed record, checked to be present and ordered."""
    values = []
    for name in ("min_s", "p10_s", "median_s", "p90_s"):
        value = record.get(name)
        if not _is_number(value) or not value > 0:
            _fail(where, f"a browser measurement needs a positive {name!r}")
        values.append(float(value))
    low, p10, median, p90 = values
    slack = 1e-9 * median
    if not low <= p10 + slack <= median + 2 * slack <= p90 + 3 * slack:
        _fail(where, "its times are out of order (minimum ≤ p10 ≤ median ≤ p90 must hold)")
    return low, p10, median, p90


def _count(where: str, record: Mapping[str, Any], name: str) -> int:
    value = record.get(name)
    if not _is_number(value) or value != int(value) or value < 1:
        _fail(where, f"needs a whole, positive {name!r}")
    return int(value)


def _chase_per_load(where: str, record: Mapping[str, Any]) -> list[float] | None:
    """ns per load of each (long, short) pair of walks, or None for a record without raw walks."""
    longs, shorts = record.get("long_walk_s"), record.get("short_walk_s")
    if longs is None and shorts is None:
        return None
    if not isinstance(longs, list) or not isinstance(shorts, list) or len(longs) != len(shorts):
        _fail(where, "long_walk_s and short_walk_s must be lists of the same length")
    loads = _count(where, record, "loads")
    short = _count(where, record, "short_loads")
    if short >= loads:
        _fail(where, "short_loads must be fewer than loads")
    return [(float(lo) - float(sh)) / (loads - short) * 1e9 for lo, sh in zip(longs, shorts, strict=True)]


def recompute(record: Mapping[str, Any]) -> dict[str, float]:
    """Every figure a browser record's charts and tables draw, computed from its bytes, FLOPs and
    times alone (stored rates are not read). Assumes ``check_document`` has passed."""
    kind = record.get("kind")
    out: dict[str, float] = {}
    if kind == "latency":
        per_load = _chase_per_load("latency", record)
        if per_load is not None:
            s = summarize(per_load)
            out.update(ns=s["median"], p10_ns=s["p10"], p90_ns=s["p90"], min_ns=s["min"])
        return out
    median, best = float(record["median_s"]), float(record["min_s"])
    if kind == "bandwidth":
        b = float(record["bytes"])
        out.update(gb_per_s=b / median / 1e9, bytes_per_s=b / median, best_gb_per_s=b / best / 1e9)
    elif kind in ("compute", "matmul"):
        flops = float(record["flops"])
        out.update(tflops=flops / median / 1e12, flops_per_s=flops / median, best_tflops=flops / best / 1e12)
        if record.get("bytes"):
            out["intensity_flop_per_byte"] = flops / float(record["bytes"])
    elif kind == "launch_overhead":
        out["ops_per_s"] = 1 / median
    return out


_FORMULAS = {
    "gb_per_s": "bytes ÷ median_s",
    "bytes_per_s": "bytes ÷ median_s",
    "best_gb_per_s": "bytes ÷ min_s",
    "tflops": "flops ÷ median_s",
    "flops_per_s": "flops ÷ median_s",
    "best_tflops": "flops ÷ min_s",
    "intensity_flop_per_byte": "flops ÷ bytes",
    "ops_per_s": "1 ÷ median_s",
    "ns": "the median of (long walk − short walk) ÷ the loads between them",
    "p10_ns": "the p10 of the walks' per-load times",
    "p90_ns": "the p90 of the walks' per-load times",
    "min_ns": "the fastest of the walks' per-load times",
}


def _check_record(where: str, record: Mapping[str, Any], software: bool) -> None:
    kind = record.get("kind")
    if kind not in BROWSER_KINDS:
        _fail(where, f"the browser suite writes only {', '.join(sorted(BROWSER_KINDS))}")
    _check_types(where, record)
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
    caps = software_caps()
    if kind == "latency":
        _count(where, record, "bytes")
        if not _is_number(record.get("ns")):
            _fail(where, "a pointer chase needs its ns per load")
        per_load = _chase_per_load(where, record)
        ns, p10, p90 = record["ns"], record.get("p10_ns"), record.get("p90_ns")
        if _is_number(p10) and _is_number(p90) and not p10 <= ns <= p90:
            _fail(where, "ns must lie between p10_ns and p90_ns")
        if per_load is not None and not summarize(per_load)["p10"] > 0:
            _fail(where, "its long walks were not reliably slower than its short ones (p10 ≤ 0)")
        if record["ns"] < caps["load_floor_ns"]:
            _fail(where, f"ns {record['ns']:.3g} is faster than any load can be: {caps['floor_reason']}")
    else:
        _timing(where, record)
        if kind == "bandwidth":
            _count(where, record, "bytes")
        elif kind in ("compute", "matmul"):
            flops = _count(where, record, "flops")
            if kind == "matmul":
                m, n, k = (_count(where, record, name) for name in ("m", "n", "k"))
                if flops != 2 * m * n * k:
                    _fail(where, f"flops {flops:,} is not 2mnk ({2 * m * n * k:,})")
                size = ELEMENT_BYTES.get(str(record.get("dtype")))
                if size and record.get("bytes") != (m * k + k * n + m * n) * size:
                    _fail(where, "bytes is not (mk + kn + mn) × the element size (each matrix moved once)")
    for name, value in recompute(record).items():
        if name in record and not _close(record[name], value):
            stored = record[name]
            shown = f"{stored:.6g}" if _is_number(stored) else repr(stored)[:40]
            _fail(where, f"{name} {shown} is not {_FORMULAS[name]} ({value:.6g})")
        if name in ("ns", "p10_ns", "p90_ns", "min_ns") and name not in record:
            _fail(where, f"{name} is missing")
    if software:
        figures = recompute(record)
        rate = max(figures.get("gb_per_s", 0.0), figures.get("best_gb_per_s", 0.0)) * 1e9
        if rate > caps["bytes_per_s"]:
            _fail(
                where,
                f"{rate / 1e9:,.4g} GB/s is more than a software adapter can move: "
                + caps["bandwidth_reason"],
            )


def check_document(doc: Mapping[str, Any]) -> None:
    """Raise ValueError, saying what is wrong, unless ``doc`` is a browser measurement whose numbers
    can be drawn: every field of the type it is shown with, every record of a kind the browser suite
    writes, from source "webgpu", verified by its own kernel check, with a timer named, times in
    order, every stored figure equal (within 1 %) to what ``recompute`` gives from its bytes, FLOPs
    and times, a matmul's FLOPs and bytes those of its shape, no load faster than an L1 hit, and a
    software adapter's bandwidth within the fastest CPU memory. A hand-edited number fails: the file
    is refused, not partly shown."""
    if not isinstance(doc, Mapping):
        _fail("document", "must be a JSON object")
    adapter = _check_device(doc)
    software = is_software_adapter(adapter)
    results = doc.get("results")
    if not isinstance(results, list):
        _fail("results", "must be a list")
    for index, record in enumerate(results):
        if not isinstance(record, Mapping):
            _fail(f"results[{index}]", "must be a JSON object")
        _check_record(f"results[{index}] ({str(record.get('kind'))[:40]})", record, software)


def normalized(doc: Mapping[str, Any]) -> dict[str, Any]:
    """A checked browser document whose drawn figures are the recomputed ones (``recompute``), with
    each timed point's spread (p90 ÷ p10) and its noisy mark, and its tick count: the shortest
    sample (min_s × inner_loops) in ticks of the run's timer, flagged below 100."""
    out = dict(doc)
    timer = (doc.get("device") or {}).get("timer") or {}
    stamp = (
        timer.get("resolution_s")
        if timer.get("kind") == "timestamp-query"
        else timer.get("wall_granularity_s")
    )
    records = []
    for record in doc.get("results") or []:
        r = dict(record)
        r.update(recompute(record))
        if r.get("kind") == "latency":
            p10, p90 = r.get("p10_ns"), r.get("p90_ns")
            longs, shorts = r.get("long_walk_s"), r.get("short_walk_s")
            tick = stamp
            if longs and shorts and _is_number(tick) and tick > 0:
                r["ticks"] = min(float(a) - float(b) for a, b in zip(longs, shorts, strict=True)) / tick
        else:
            p10, p90 = r.get("p10_s"), r.get("p90_s")
            tick = timer.get("wall_granularity_s") if r.get("mode") == SUBMIT_MODE else stamp
            if _is_number(tick) and tick > 0:
                r["ticks"] = float(r["min_s"]) * float(r.get("inner_loops") or 1) / tick
        if _is_number(p10) and _is_number(p90) and p10 > 0:
            spread = p90 / p10
            r["spread"] = spread
            if spread > NOISE_LIMIT:
                r["noisy"] = True
        if _is_number(r.get("ticks")) and r["ticks"] < MIN_TICKS:
            r["ticks_note"] = (
                f"its shortest sample lasted {r['ticks']:,.3g} ticks of the timer, under the {MIN_TICKS} "
                "that keep the granularity below 1 %"
            )
        records.append(r)
    out["results"] = records
    return out
