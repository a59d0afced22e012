"""Result records, the versioned JSON file, and its validating loader.

File layout (schema 1):
    {"schema": 1, "tool": "gpu-field-guide measure", "created_utc": "...",
     "device": {...}, "results": [{"kind": "bandwidth", ...}, ...], "statuses": [...]}

Every record carries its kind, the device, torch version and thread count; timed records add
the median, p10, p90 and minimum in seconds per operation. Rates are stored twice: in base
units for code (`bytes_per_s`, `flops_per_s`) and in the display units the file format names
(`gb_per_s` decimal GB/s, `tflops` = 1e12 FLOP/s). Unknown fields are kept in `extra`, so a
newer file loads in an older app.
"""

from __future__ import annotations

import json
import math
from dataclasses import MISSING, asdict, dataclass, field, fields
from typing import Any, ClassVar

from measure.webgpu_checks import WEBGPU_TOOL, check_document, is_browser_document, normalized

SCHEMA_VERSION = 1
TOOL = "gpu-field-guide measure"
MAX_FILE_BYTES = 5 * 1024**2
MAX_RECORDS = 20_000

STREAM_CONVENTION = (
    "STREAM convention: copy counts 2 words per element (1 read + 1 write), triad 3 (2 reads + 1 write); "
    "write-allocate traffic is not counted."
)


@dataclass(frozen=True, kw_only=True)
class Record:
    """Fields every record has. `device` is "cpu", "cuda:0" or "mps"."""

    kind: ClassVar[str] = "record"
    device: str
    device_name: str = ""
    torch_version: str = ""
    threads: int = 0
    notes: str = ""
    extra: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        data = {"kind": self.kind}
        data.update(asdict(self))
        extra = data.pop("extra")
        for key, value in extra.items():
            data.setdefault(key, value)
        return data

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Record:
        known = {f.name for f in fields(cls)} - {"extra"}
        kwargs = {k: v for k, v in data.items() if k in known}
        extra = {k: v for k, v in data.items() if k not in known and k != "kind"}
        return cls(**kwargs, extra=extra)


@dataclass(frozen=True, kw_only=True)
class TimedRecord(Record):
    """A record with timing: seconds per operation over `repeats` samples."""

    median_s: float
    p10_s: float
    p90_s: float
    min_s: float
    repeats: int
    inner_loops: int = 1
    timer: str = "perf_counter"
    warm_cache: bool = True
    l2_flushed: bool = False


@dataclass(frozen=True, kw_only=True)
class BandwidthRecord(TimedRecord):
    """STREAM-style copy (a = b) or triad (a = b + s*c) over a working set of `bytes`.

    `bytes` is both the working set and the bytes counted per operation (STREAM convention,
    write-allocate not counted). `cache_hint` names the smallest cache that holds it.
    """

    kind: ClassVar[str] = "bandwidth"
    op: str
    bytes: int
    elements: int
    dtype: str
    gb_per_s: float
    bytes_per_s: float
    best_gb_per_s: float
    bytes_counted: str = STREAM_CONVENTION
    write_allocate_counted: bool = False
    cache_hint: str = ""
    # Set by measure.launch_bound when the run also measured launch overhead: True when the
    # per-call overhead, not the memory level, sets the time (cache_hint then says "launch-bound"
    # and `working_set_level` keeps the level the working set fits in). None: not checked.
    launch_bound: bool | None = None
    working_set_level: str = ""


@dataclass(frozen=True, kw_only=True)
class MatmulRecord(TimedRecord):
    """C = A @ B with A m x k and B k x n. flops = 2mnk; ideal bytes = (mk + kn + mn) x element size
    (each matrix moved once), so `intensity_flop_per_byte` places the point on a roofline."""

    kind: ClassVar[str] = "matmul"
    dtype: str
    m: int
    n: int
    k: int
    tflops: float
    flops_per_s: float
    flops: int
    bytes: int
    intensity_flop_per_byte: float
    best_tflops: float
    shape: str = "square"
    math: str = ""


@dataclass(frozen=True, kw_only=True)
class ComputeRecord(TimedRecord):
    """Arithmetic throughput of a kernel that does little but arithmetic. `op` "fma_chain": each
    thread runs independent chains of fused multiply-adds (2 FLOP per lane per fma), so the vector
    units, not memory, set the time. `flops` per operation; `bytes` the bytes it writes, so
    `intensity_flop_per_byte` (flops / bytes) places it far right on a roofline. Written by the
    browser suite (ui/webgpu.js, source "webgpu")."""

    kind: ClassVar[str] = "compute"
    op: str
    dtype: str
    flops: int
    tflops: float
    flops_per_s: float
    best_tflops: float
    bytes: int = 0
    intensity_flop_per_byte: float | None = None


@dataclass(frozen=True, kw_only=True)
class CopyRecord(TimedRecord):
    """Host<->device copy of `bytes` from pageable or pinned host memory."""

    kind: ClassVar[str] = "host_device_copy"
    direction: str
    host_memory: str
    bytes: int
    gb_per_s: float
    bytes_per_s: float


@dataclass(frozen=True, kw_only=True)
class LaunchRecord(TimedRecord):
    """Tiny operations per second: median_s is the time per operation."""

    kind: ClassVar[str] = "launch_overhead"
    op: str
    mode: str
    ops_per_s: float
    elements: int = 1


@dataclass(frozen=True, kw_only=True)
class QuantizationRecord(Record):
    """Round-trip error of one number format on a real tensor: x -> format -> float32."""

    kind: ClassVar[str] = "quantization"
    format: str
    granularity: str
    bits_per_element: float
    elements: int
    tensor: str
    rmse: float
    sqnr_db: float | None
    max_abs_error: float
    predicted_sqnr_db: float | None = None
    prediction_model: str = ""


@dataclass(frozen=True, kw_only=True)
class TransformerMemoryRecord(Record):
    """Peak memory of one step of a small Llama-style model built from `config`."""

    kind: ClassVar[str] = "transformer_memory"
    config: dict[str, Any]
    mode: str
    batch: int
    seq_len: int
    dtype: str
    optimizer: str
    parameters: int
    parameter_bytes: int
    optimizer_state_bytes: int = 0
    baseline_bytes: int
    peak_bytes: int
    method: str
    step_s: float = 0.0
    attention: str = "sdpa"
    autocast_dtype: str = ""


@dataclass(frozen=True, kw_only=True)
class AllReduceRecord(TimedRecord):
    """All-reduce of `bytes` per rank over `world_size` processes.

    algbw = bytes / time; busbw = algbw x 2(n-1)/n (NVIDIA/nccl-tests doc/PERFORMANCE.md).
    `predicted_s` is the ring model's time, model_overhead_s + (bytes / model_link_bytes_per_s)
    x 2(n-1)/n, when a link bandwidth was given.
    """

    kind: ClassVar[str] = "allreduce"
    backend: str
    world_size: int
    bytes: int
    dtype: str
    algbw_gb_per_s: float
    busbw_gb_per_s: float
    algbw_bytes_per_s: float
    busbw_bytes_per_s: float
    bus_factor: float
    predicted_s: float | None = None
    model_link_bytes_per_s: float | None = None
    model_overhead_s: float | None = None
    link_source: str = ""


@dataclass(frozen=True, kw_only=True)
class LatencyRecord(Record):
    """Load-to-use latency by pointer chasing over a working set of `bytes`.

    The working set is split into lines of `line_bytes`; one random cycle visits every line, and
    each load's address is the value the previous load returned, so loads cannot overlap.
    `ns` is the median time per load over `repeats` samples of `loads` dependent loads each.
    `cache_hint` names the smallest cache whose capacity holds the working set (a label, as for
    bandwidth points); `method` says how the chain was walked and timed.
    """

    kind: ClassVar[str] = "latency"
    bytes: int
    ns: float
    loads: int
    method: str
    line_bytes: int = 64
    repeats: int | None = None
    p10_ns: float | None = None
    p90_ns: float | None = None
    min_ns: float | None = None
    timer: str = ""
    cache_hint: str = ""
    huge_pages_advised: bool | None = None
    source: str = ""


@dataclass(frozen=True, kw_only=True)
class DecodeRecord(Record):
    """Decode steps of a Llama-style model at `batch`, beside the memory-bandwidth bound.

    `step_s` is the median time of one step (one new token per sequence), `tok_s` = batch /
    step_s. The bound: a step must read `bytes_per_step` = `weights_bytes` (every weight except
    the untied embedding table, of which one row per sequence) + `kv_bytes` (the KV cache of the
    tokens in context), so tok/s <= batch x bandwidth / bytes_per_step ("How to Scale Your Model",
    inference chapter). `bound_source` says which bandwidth: a datasheet or a measured copy.
    """

    kind: ClassVar[str] = "decode"
    mode: str
    batch: int
    step_s: float
    tok_s: float
    bound_tok_s: float | None
    fraction_of_bound: float | None
    weights_bytes: int
    kv_bytes: int = 0
    bytes_per_step: int = 0
    bound_bandwidth_bytes_per_s: float | None = None
    bound_source: str = ""
    context_tokens: int = 0
    dtype: str = ""
    model: str = ""
    config: dict[str, Any] = field(default_factory=dict)
    parameters: int = 0
    cache: str = "static"
    method: str = ""
    steps: int | None = None
    repeats: int | None = None
    p10_step_s: float | None = None
    p90_step_s: float | None = None
    min_step_s: float | None = None
    timer: str = ""
    source: str = ""


RECORD_TYPES: dict[str, type[Record]] = {
    cls.kind: cls
    for cls in (
        BandwidthRecord,
        MatmulRecord,
        ComputeRecord,
        CopyRecord,
        LaunchRecord,
        QuantizationRecord,
        TransformerMemoryRecord,
        AllReduceRecord,
        LatencyRecord,
        DecodeRecord,
    )
}


@dataclass(frozen=True, kw_only=True)
class GenericRecord(Record):
    """A record of a kind this version does not know; its fields are in `extra`."""

    kind_name: str = "unknown"

    def to_dict(self) -> dict[str, Any]:
        data = super().to_dict()
        data["kind"] = data.pop("kind_name")
        return data


def record_kind(record: Record) -> str:
    """The record's kind string ("bandwidth", ...), also for records of unknown kinds."""
    return record.kind_name if isinstance(record, GenericRecord) else record.kind


@dataclass(frozen=True)
class Results:
    """A suite run or a loaded file: the device it measured, its records and per-workload statuses."""

    device: dict[str, Any]
    records: tuple[Record, ...]
    statuses: tuple[dict[str, Any], ...] = ()
    created_utc: str = ""
    quick: bool | None = None
    hosted: bool | None = None
    schema: int = SCHEMA_VERSION
    extra: dict[str, Any] = field(default_factory=dict)
    tool: str = TOOL

    def by_kind(self, kind: str) -> list[Record]:
        return [r for r in self.records if record_kind(r) == kind]

    def to_dict(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "schema": self.schema,
            "tool": self.tool,
            "created_utc": self.created_utc,
            "quick": self.quick,
            "hosted": self.hosted,
            "device": self.device,
            "results": [r.to_dict() for r in self.records],
            "statuses": list(self.statuses),
        }
        for key, value in self.extra.items():
            data.setdefault(key, value)
        return data

    def to_json(self, indent: int | None = 2) -> str:
        return json.dumps(self.to_dict(), indent=indent, allow_nan=False)


# ---------------------------------------------------------------------------------------------
# Validation

_TOP_LEVEL = {"schema", "tool", "created_utc", "quick", "hosted", "device", "results", "statuses"}

# Bounds far outside anything real: the fastest memory in the catalog is 8 TB/s and the fastest
# dense matmul below 10 PFLOP/s, so a value beyond these is a corrupt or hand-edited file.
MAX_GB_PER_S = 100_000.0
MAX_TFLOPS = 100_000.0
MAX_BYTES = 2**50
MAX_DIM = 2**24
MAX_SECONDS = 3600.0
MAX_LATENCY_NS = 1e7  # 10 ms for one load: far beyond any memory level, even a page fault
MAX_TOKENS_PER_S = 1e9


def _fail(where: str, message: str) -> None:
    raise ValueError(f"{where}: {message}")


def _check_number(where: str, value: Any, *, lo: float, hi: float, integer: bool = False) -> None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        _fail(where, f"must be a number, got {type(value).__name__}")
    if integer and not isinstance(value, int):
        _fail(where, f"must be a whole number, got {value!r}")
    if not math.isfinite(value):
        _fail(where, f"must be finite, got {value!r}")
    if not lo <= value <= hi:
        _fail(where, f"{value!r} is outside the plausible range [{lo:g}, {hi:g}]")


def _check_str(where: str, value: Any, choices: set[str] | None = None) -> None:
    if not isinstance(value, str) or not value:
        _fail(where, f"must be a non-empty string, got {value!r}")
    if choices is not None and value not in choices:
        _fail(where, f"must be one of {sorted(choices)}, got {value!r}")


# Required fields per kind: name -> checker arguments.
_REQUIRED: dict[str, dict[str, dict[str, Any]]] = {
    "bandwidth": {
        "op": {"str": {"copy", "triad"}},
        "bytes": {"lo": 1, "hi": MAX_BYTES, "integer": True},
        "gb_per_s": {"lo": 0.0, "hi": MAX_GB_PER_S},
    },
    "matmul": {
        "dtype": {"str": None},
        "m": {"lo": 1, "hi": MAX_DIM, "integer": True},
        "n": {"lo": 1, "hi": MAX_DIM, "integer": True},
        "k": {"lo": 1, "hi": MAX_DIM, "integer": True},
        "tflops": {"lo": 0.0, "hi": MAX_TFLOPS},
    },
    "compute": {
        "op": {"str": None},
        "dtype": {"str": None},
        "flops": {"lo": 1, "hi": MAX_BYTES * 1024, "integer": True},
        "tflops": {"lo": 0.0, "hi": MAX_TFLOPS},
    },
    "allreduce": {
        "backend": {"str": None},
        "world_size": {"lo": 1, "hi": 1_000_000, "integer": True},
        "bytes": {"lo": 1, "hi": MAX_BYTES, "integer": True},
        "algbw_gb_per_s": {"lo": 0.0, "hi": MAX_GB_PER_S},
        "busbw_gb_per_s": {"lo": 0.0, "hi": MAX_GB_PER_S},
    },
    "host_device_copy": {
        "direction": {"str": {"h2d", "d2h"}},
        "host_memory": {"str": {"pinned", "pageable"}},
        "bytes": {"lo": 1, "hi": MAX_BYTES, "integer": True},
        "gb_per_s": {"lo": 0.0, "hi": MAX_GB_PER_S},
    },
    "launch_overhead": {
        "mode": {"str": None},
        "ops_per_s": {"lo": 0.0, "hi": 1e12},
    },
    "quantization": {
        "format": {"str": None},
        "sqnr_db": {"lo": -1000.0, "hi": 1000.0, "nullable": True},
        "elements": {"lo": 1, "hi": MAX_BYTES, "integer": True},
    },
    "latency": {
        "bytes": {"lo": 1, "hi": MAX_BYTES, "integer": True},
        "ns": {"lo": 1e-3, "hi": MAX_LATENCY_NS},
    },
    "decode": {
        "mode": {"str": {"eager", "cuda_graph"}},
        "batch": {"lo": 1, "hi": MAX_DIM, "integer": True},
        "step_s": {"lo": 1e-9, "hi": MAX_SECONDS},
        "tok_s": {"lo": 0.0, "hi": MAX_TOKENS_PER_S},
        "bound_tok_s": {"lo": 0.0, "hi": MAX_TOKENS_PER_S, "nullable": True},
        "fraction_of_bound": {"lo": 0.0, "hi": 1000.0, "nullable": True},
        "weights_bytes": {"lo": 0, "hi": MAX_BYTES, "integer": True},
    },
    "transformer_memory": {
        "parameters": {"lo": 1, "hi": MAX_BYTES, "integer": True},
        "peak_bytes": {"lo": 0, "hi": MAX_BYTES, "integer": True},
        "batch": {"lo": 1, "hi": MAX_DIM, "integer": True},
        "seq_len": {"lo": 1, "hi": MAX_DIM, "integer": True},
    },
}

# Optional fields that, when present, must be plausible too.
_OPTIONAL_NUMBERS = {
    "median_s": {"lo": 0.0, "hi": MAX_SECONDS},
    "p10_s": {"lo": 0.0, "hi": MAX_SECONDS},
    "p90_s": {"lo": 0.0, "hi": MAX_SECONDS},
    "min_s": {"lo": 0.0, "hi": MAX_SECONDS},
    "repeats": {"lo": 1, "hi": 10_000_000, "integer": True},
    "threads": {"lo": 0, "hi": 100_000, "integer": True},
    "bytes_per_s": {"lo": 0.0, "hi": MAX_GB_PER_S * 1e9},
    "flops_per_s": {"lo": 0.0, "hi": MAX_TFLOPS * 1e12},
    "intensity_flop_per_byte": {"lo": 0.0, "hi": 1e9},
    "loads": {"lo": 1, "hi": 1e15, "integer": True},
}


def _validate_record(index: int, record: Any) -> Record:
    where = f"results[{index}]"
    if not isinstance(record, dict):
        _fail(where, f"each result must be a JSON object, got {type(record).__name__}")
    kind = record.get("kind")
    _check_str(f"{where}.kind", kind)
    for name, rule in _REQUIRED.get(kind, {}).items():
        if name not in record:
            _fail(where, f"a {kind!r} result needs the field {name!r}")
        rule = dict(rule)
        if rule.pop("nullable", False) and record[name] is None:
            continue
        if "str" in rule:
            _check_str(f"{where}.{name}", record[name], rule["str"])
        else:
            _check_number(f"{where}.{name}", record[name], **rule)
    for name, rule in _OPTIONAL_NUMBERS.items():
        if name in record and record[name] is not None:
            _check_number(f"{where}.{name}", record[name], **rule)
    if "device" in record and not isinstance(record["device"], str):
        _fail(f"{where}.device", "must be a string such as 'cpu' or 'cuda:0'")
    cls = RECORD_TYPES.get(kind)
    data = dict(record)
    data.setdefault("device", "")
    if cls is None:
        extra = {k: v for k, v in data.items() if k not in {"kind", "device"}}
        return GenericRecord(device=str(data["device"]), kind_name=kind, extra=extra)
    _derive_missing(kind, data)
    missing_required = [
        f.name
        for f in fields(cls)
        if f.default is MISSING and f.default_factory is MISSING and f.name not in data  # type: ignore[misc]
    ]
    if missing_required:
        # Fields this version's record has but the file lacks: keep the record, fill blanks.
        for name in missing_required:
            data[name] = _blank_for(cls, name)
    try:
        return cls.from_dict(data)
    except TypeError as exc:  # pragma: no cover - from_dict only passes known fields
        _fail(where, str(exc))
        raise


def _blank_for(cls: type[Record], name: str) -> Any:
    """A placeholder for a field this version's record has but an older or foreign file lacks."""
    hint = str({f.name: f.type for f in fields(cls)}[name])
    if hint.startswith("dict"):
        return {}
    if hint == "str":
        return ""
    return None


def _derive_missing(kind: str, data: dict[str, Any]) -> None:
    """Fill fields that follow from the required ones (a minimal file still plots)."""
    if kind in {"bandwidth", "host_device_copy"}:
        data.setdefault("bytes_per_s", data["gb_per_s"] * 1e9)
        data.setdefault("best_gb_per_s", data["gb_per_s"])
    elif kind == "matmul":
        m, n, k = data["m"], data["n"], data["k"]
        data.setdefault("flops", 2 * m * n * k)
        data.setdefault("flops_per_s", data["tflops"] * 1e12)
        data.setdefault("best_tflops", data["tflops"])
    elif kind == "compute":
        data.setdefault("flops_per_s", data["tflops"] * 1e12)
        data.setdefault("best_tflops", data["tflops"])
    elif kind == "allreduce":
        data.setdefault("algbw_bytes_per_s", data["algbw_gb_per_s"] * 1e9)
        data.setdefault("busbw_bytes_per_s", data["busbw_gb_per_s"] * 1e9)


def load_results(data: bytes | str) -> Results:
    """Parse and validate a results file (bytes from an upload, or text).

    Raises ValueError with a message that says what is wrong: too large, not UTF-8, not JSON,
    not an object, wrong or missing schema version, missing or mistyped fields, implausible
    values (negative or non-finite numbers, bandwidths above 100 TB/s, above 100 PFLOP/s).
    """
    if isinstance(data, bytes | bytearray):
        if len(data) > MAX_FILE_BYTES:
            raise ValueError(f"File too large: {len(data):,} bytes (the limit is {MAX_FILE_BYTES:,}).")
        try:
            text = bytes(data).decode("utf-8")
        except UnicodeDecodeError as exc:
            raise ValueError(
                f"Not a text file: it is not valid UTF-8 ({exc.reason} at byte {exc.start})."
            ) from None
    elif isinstance(data, str):
        text = data
        if len(text.encode("utf-8")) > MAX_FILE_BYTES:
            raise ValueError(f"File too large (the limit is {MAX_FILE_BYTES:,} bytes).")
    else:
        raise ValueError(f"Expected bytes or str, got {type(data).__name__}.")
    try:
        doc = json.loads(text, parse_constant=_reject_constant)
    except json.JSONDecodeError as exc:
        raise ValueError(f"Not valid JSON: {exc.msg} (line {exc.lineno}, column {exc.colno}).") from None
    if not isinstance(doc, dict):
        raise ValueError(f"Expected a JSON object at the top level, got {type(doc).__name__}.")
    if "schema" not in doc:
        raise ValueError("Missing 'schema': this does not look like a `python -m measure` results file.")
    schema = doc["schema"]
    if isinstance(schema, bool) or not isinstance(schema, int):
        raise ValueError(f"'schema' must be an integer, got {schema!r}.")
    if schema != SCHEMA_VERSION:
        raise ValueError(
            f"Unsupported schema version {schema}; this app reads version {SCHEMA_VERSION}. "
            "Re-run `python -m measure` with this version of the app."
        )
    device = doc.get("device")
    if not isinstance(device, dict):
        raise ValueError("'device' must be a JSON object describing the measured device.")
    results = doc.get("results")
    if not isinstance(results, list):
        raise ValueError("'results' must be a list of result objects.")
    if len(results) > MAX_RECORDS:
        raise ValueError(f"Too many results: {len(results):,} (the limit is {MAX_RECORDS:,}).")
    if is_browser_document(doc):
        # Measured in a browser (ui/webgpu.js), whatever its labels say: every field type-checked,
        # every stored figure equal to what its bytes, FLOPs and times give, and only those drawn.
        check_document(doc)
        doc = normalized(doc)
        results = doc["results"]
    records = tuple(_validate_record(i, r) for i, r in enumerate(results))
    statuses = doc.get("statuses", [])
    if not isinstance(statuses, list) or not all(isinstance(s, dict) for s in statuses):
        raise ValueError("'statuses' must be a list of objects.")
    for key in ("quick", "hosted"):
        if doc.get(key) is not None and not isinstance(doc[key], bool):
            raise ValueError(f"'{key}' must be true, false or null.")
    created = doc.get("created_utc", "")
    if not isinstance(created, str):
        raise ValueError("'created_utc' must be a string.")
    return Results(
        device=device,
        records=records,
        statuses=tuple(statuses),
        created_utc=created,
        quick=doc.get("quick"),
        hosted=doc.get("hosted"),
        schema=schema,
        extra={k: v for k, v in doc.items() if k not in _TOP_LEVEL},
        tool=WEBGPU_TOOL if is_browser_document(doc) else TOOL,
    )


def _reject_constant(name: str) -> None:
    raise ValueError(f"Not valid JSON for results: {name} is not allowed (numbers must be finite).")
