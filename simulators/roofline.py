"""The bandwidth roofline: attainable FLOP/s, ridge points, and the FLOPs and bytes of LLM operations.

Williams, Waterman, Patterson, "Roofline: An Insightful Visual Performance Model for Multicore
Architectures", CACM 52(4), 2009 (doi.org/10.1145/1498765.1498785): a kernel that performs F
FLOPs while moving Q bytes between the chip and its memory has arithmetic (operational)
intensity I = F / Q, and it cannot run faster than ``min(peak FLOP/s, I x memory bandwidth)``.

Conventions (stated on the page; /work/shared/reference/simulator-anchors.md §0, "SA" below):

* 1 multiply-add = 2 FLOPs; a GEMM ``[M,K] x [K,N]`` costs ``2MNK``.
* Peaks are DENSE tensor-core rates (no 2:4 sparsity), from the accelerator catalog.
* Bytes are device-memory (HBM/GDDR) traffic, the "ideal" amount: every input read once and
  every output written once, as a perfectly tiled or fused kernel would. Real kernels move a
  little more (re-reads when tiles do not fit on chip), never less.
* Elementwise, softmax and normalization kernels run on the vector (CUDA-core) units, so their
  compute roof is the FP32 vector peak, not the tensor-core peak (SA §0).

Units: FLOPs, bytes, seconds, FLOP/s, bytes/s. Display units (TFLOP/s, GB) are the chart's job.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from simulators.hardware import Accelerator
from simulators.llm_memory import (
    ModelSpec,
    kv_cache_bytes,
    weight_bytes,
    weight_format,
)
from simulators.llm_speed import decode_step, prefill_time_s

# Bytes per element of each compute format. tf32 tensors are stored as fp32 in memory.
DTYPE_BYTES: dict[str, int] = {"fp32": 4, "tf32": 4, "bf16": 2, "fp16": 2, "fp8": 1, "int8": 1}

# What kind of operation a point is; the chart gives each kind its own marker shape.
KINDS: dict[str, str] = {
    "matmul": "matrix multiply (GEMM, Linear)",
    "matvec": "matrix-vector (GEMV, weight-only quantized)",
    "elementwise": "elementwise",
    "reduction": "softmax and normalization",
    "attention": "attention",
    "model": "whole model step (decode, prefill)",
}
# Kinds whose arithmetic runs on the vector units (SA §0); the rest run on tensor cores.
VECTOR_KINDS: frozenset[str] = frozenset({"elementwise", "reduction"})

# "Achievable" ceilings, SA §3.2. Matmul: the best measured bf16 matmul (MAMF finder, mean of 100
# after 50 warm-ups) reaches 80.3% of the dense peak on H100 SXM (794.5 of 989 TFLOPS), 86.9% on
# A100 SXM and 83.8% on GH200 (stas00/ml-engineering, compute/accelerator/README.md, MAMF table,
# read at commit 744d01e: https://github.com/stas00/ml-engineering). AMD MI300X reached 51.4%,
# so this NVIDIA rule overstates it. Memory: RRZE gpu-stream kernels reach about 85-95% of the
# datasheet bandwidth (https://github.com/RRZE-HPC/gpu-benches, gpu-stream, @1038c5d).
MATMUL_ACHIEVABLE_FRACTION = 0.8
MEMORY_ACHIEVABLE_FRACTION = 0.9
ACHIEVABLE_SOURCE = (
    "SA §3.2: MAMF matmul 80-87% of dense peak on NVIDIA (stas00/ml-engineering "
    "compute/accelerator, https://github.com/stas00/ml-engineering); "
    "gpu-stream 85-95% of datasheet bandwidth (https://github.com/RRZE-HPC/gpu-benches)"
)


@dataclass(frozen=True)
class L2Measurement:
    """A measured L2 read bandwidth: there is no datasheet figure for L2 bandwidth."""

    bandwidth_bytes_per_s: float
    working_set_bytes: int
    source: str
    note: str


# Measured L2 read bandwidth from the gpu-l2-cache benchmark of Dominik Ernst's gpu-benches
# (the repository RRZE-HPC/gpu-benches mirrors). The kernel sums a buffer of the stated size
# over and over (reads only; "Eff. bw" = bytes read / fastest of 7 runs; gpu-l2-cache/main.cu).
# Each value is the row at a working set of about 8 MiB: far above the L1s' reach and inside
# every L2's plateau. NVIDIA publishes no L2 bandwidth, and no measurement of an H100 SXM was
# found, so the H100 SXM has no L2 roof.
L2_READ_BANDWIDTH: dict[str, L2Measurement] = {
    "a100-80gb-sxm": L2Measurement(
        5436.5e9,
        8192 * 1024,
        "https://github.com/te42kyfo/gpu-benches/blob/3088b3337998d1d9fff53c7af665f587af83a178"
        "/gpu-l2-cache/a100_80.txt",
        "file a100_80.txt: the A100 80GB form factor (SXM or PCIe) is not stated",
    ),
    "h100-pcie": L2Measurement(
        6979.3e9,
        8448 * 1024,
        "https://github.com/te42kyfo/gpu-benches/blob/70c3826d5f0999617878ceb5938dc546d7f68708"
        "/gpu-l2-cache/h100_pcie.txt",
        "file h100_pcie.txt",
    ),
    "h200-sxm": L2Measurement(
        10251.9e9,
        8192 * 1024,
        "https://github.com/te42kyfo/gpu-benches/blob/3088b3337998d1d9fff53c7af665f587af83a178"
        "/gpu-l2-cache/h200.txt",
        "file h200.txt: the H200 form factor (SXM or NVL) is not stated",
    ),
}


# ---------------------------------------------------------------------------------------------
# The roofline itself
# ---------------------------------------------------------------------------------------------


def _check_positive(**values: float) -> None:
    for name, value in values.items():
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not value > 0:
            raise ValueError(f"{name} must be a positive number, got {value!r}")


def _check_count(**values: int) -> None:
    for name, value in values.items():
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise ValueError(f"{name} must be a whole number >= 1, got {value!r}")


def _dtype_bytes(dtype: str) -> int:
    try:
        return DTYPE_BYTES[dtype]
    except KeyError:
        raise ValueError(f"unknown dtype {dtype!r}; choose one of {list(DTYPE_BYTES)}") from None


def attainable_flops(intensity: float, peak_flops: float, bandwidth: float) -> float:
    """Attainable FLOP/s = min(peak FLOP/s, intensity x bandwidth) (Williams et al. 2009).

    ``intensity`` in FLOP/byte (>= 0), ``peak_flops`` in FLOP/s, ``bandwidth`` in bytes/s.
    """
    if isinstance(intensity, bool) or not isinstance(intensity, (int, float)) or not intensity >= 0:
        raise ValueError(f"intensity must be zero or positive, got {intensity!r}")
    _check_positive(peak_flops=peak_flops, bandwidth=bandwidth)
    return min(peak_flops, intensity * bandwidth)


def ridge_point(peak_flops: float, bandwidth: float) -> float:
    """The intensity (FLOP/byte) where the memory roof meets the compute roof: peak / bandwidth.

    Williams et al. 2009: the minimum intensity needed to reach peak. H100 SXM bf16:
    989.5e12 / 3.35e12 = 295 FLOP/byte (SA §1.2).
    """
    _check_positive(peak_flops=peak_flops, bandwidth=bandwidth)
    return peak_flops / bandwidth


@dataclass(frozen=True)
class Operation:
    """One kernel (or a whole model step) as the roofline sees it: FLOPs and bytes moved.

    ``dtype`` is the format the arithmetic runs in (one of ``DTYPE_BYTES``); it picks the tensor
    roof. ``kind`` is one of ``KINDS``; elementwise and reduction kinds are held to the vector
    FP32 roof instead (``compute_unit``). ``note`` says how the bytes were counted.
    """

    name: str
    flops: float
    bytes: float
    dtype: str = "bf16"
    kind: str = "matmul"
    note: str = ""
    label: str = ""  # short text for a chart marker; ``name`` when empty

    def __post_init__(self) -> None:
        if not self.name.strip():
            raise ValueError("an operation needs a name")
        if not (math.isfinite(self.flops) and self.flops >= 0):
            raise ValueError(f"{self.name}: flops must be finite and >= 0, got {self.flops!r}")
        if not (math.isfinite(self.bytes) and self.bytes > 0):
            raise ValueError(f"{self.name}: bytes must be finite and > 0, got {self.bytes!r}")
        _dtype_bytes(self.dtype)
        if self.kind not in KINDS:
            raise ValueError(f"{self.name}: kind {self.kind!r} is not one of {list(KINDS)}")

    @property
    def short_label(self) -> str:
        return self.label or self.name

    @property
    def intensity(self) -> float:
        """Arithmetic intensity, FLOP per byte of device-memory traffic."""
        return self.flops / self.bytes

    @property
    def compute_unit(self) -> str:
        """The units doing the math: "vector" for elementwise and reduction kernels, else "tensor"."""
        return "vector" if self.kind in VECTOR_KINDS else "tensor"

    def compute_time_s(self, peak_flops: float) -> float:
        _check_positive(peak_flops=peak_flops)
        return self.flops / peak_flops

    def memory_time_s(self, bandwidth: float) -> float:
        _check_positive(bandwidth=bandwidth)
        return self.bytes / bandwidth

    def time_s(self, peak_flops: float, bandwidth: float) -> float:
        """Predicted time = max(FLOPs / peak, bytes / bandwidth): the roofline's lower bound."""
        return max(self.compute_time_s(peak_flops), self.memory_time_s(bandwidth))

    def bound(self, peak_flops: float, bandwidth: float) -> str:
        """Which roof binds: "compute" when FLOP time >= byte time (intensity >= ridge), else "memory"."""
        return "compute" if self.compute_time_s(peak_flops) >= self.memory_time_s(bandwidth) else "memory"

    def attainable_flops(self, peak_flops: float, bandwidth: float) -> float:
        return attainable_flops(self.intensity, peak_flops, bandwidth)


def operation_peak_flops(op: Operation, accelerator: Accelerator) -> float | None:
    """The compute roof that binds ``op`` on ``accelerator`` (FLOP/s), or None when none is sourced.

    Vector kinds use the FP32 vector peak where the catalog has one (TPUs list none: then the
    tensor peak at ``op.dtype`` stands in); the rest use the dense tensor peak at ``op.dtype``.
    """
    if op.compute_unit == "vector" and accelerator.supports("fp32"):
        return accelerator.peak_flops("fp32")
    if accelerator.supports(op.dtype):
        return accelerator.peak_flops(op.dtype)
    return None


@dataclass(frozen=True)
class Prediction:
    """``op`` on one accelerator: which roof binds and the roofline's time."""

    operation: Operation
    accelerator_id: str
    peak_flops: float
    bandwidth_bytes_per_s: float

    @property
    def time_s(self) -> float:
        return self.operation.time_s(self.peak_flops, self.bandwidth_bytes_per_s)

    @property
    def bound(self) -> str:
        return self.operation.bound(self.peak_flops, self.bandwidth_bytes_per_s)

    @property
    def attainable_flops(self) -> float:
        return self.operation.attainable_flops(self.peak_flops, self.bandwidth_bytes_per_s)


def predict(op: Operation, accelerator: Accelerator) -> Prediction | None:
    """Roofline prediction of ``op`` on ``accelerator`` at datasheet peaks; None without a peak."""
    peak = operation_peak_flops(op, accelerator)
    if peak is None:
        return None
    return Prediction(op, accelerator.id, peak, accelerator.memory_bandwidth_bytes_per_s)


# ---------------------------------------------------------------------------------------------
# Roofs of an accelerator
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class ComputeRoof:
    """A horizontal roof: ``peak_flops`` (dense) on the tensor units at ``dtype``, or vector FP32."""

    label: str
    unit: str  # "tensor" or "vector"
    dtype: str
    peak_flops: float
    source: str
    achievable: bool = False


@dataclass(frozen=True)
class MemoryRoof:
    """A sloped roof: ``bandwidth_bytes_per_s`` of device memory or (measured) L2."""

    label: str
    level: str  # "device" or "l2"
    bandwidth_bytes_per_s: float
    source: str
    achievable: bool = False
    measured: bool = False


Roof = ComputeRoof | MemoryRoof


def _tflops(flops: float) -> str:
    return f"{flops / 1e12:,.4g}"


def roofs(accelerator: Accelerator, dtype: str = "bf16") -> list[Roof]:
    """The datasheet roofs of ``accelerator`` for work in ``dtype``, compute roofs first.

    * tensor units at ``dtype`` (dense), when the catalog has that peak;
    * vector FP32 (``peak_flops("fp32")``), when the catalog has it (TPUs do not);
    * device memory (HBM or GDDR) at the published bandwidth;
    * L2, only where ``L2_READ_BANDWIDTH`` holds a measured read bandwidth. Vendors publish L2
      sizes, not bandwidths; without a sourced figure there is no L2 roof (H100 SXM has none).

    An L2 roof belongs to the hierarchical roofline (one roof per memory level): it bounds a
    kernel whose data come from L2, measured by its intensity against L2 traffic. The operation
    points on our chart use device-memory intensity, so read the L2 roof as "how fast this could
    go if its working set stayed in L2".
    """
    _dtype_bytes(dtype)
    found: list[Roof] = []
    source = " ; ".join(accelerator.source)
    if dtype != "fp32" and accelerator.supports(dtype):
        peak = accelerator.peak_flops(dtype)
        found.append(
            ComputeRoof(
                f"{accelerator.name} {dtype} tensor {_tflops(peak)} TFLOP/s", "tensor", dtype, peak, source
            )
        )
    if accelerator.supports("fp32"):
        peak = accelerator.peak_flops("fp32")
        found.append(
            ComputeRoof(
                f"{accelerator.name} vector FP32 {_tflops(peak)} TFLOP/s", "vector", "fp32", peak, source
            )
        )
    bandwidth = accelerator.memory_bandwidth_bytes_per_s
    found.append(
        MemoryRoof(
            f"{accelerator.name} {accelerator.memory_type} {bandwidth / 1e12:,.3g} TB/s",
            "device",
            bandwidth,
            source,
        )
    )
    l2 = L2_READ_BANDWIDTH.get(accelerator.id)
    if l2 is not None:
        found.append(
            MemoryRoof(
                f"{accelerator.name} L2 {l2.bandwidth_bytes_per_s / 1e12:,.3g} TB/s (measured read)",
                "l2",
                l2.bandwidth_bytes_per_s,
                f"{l2.source} ({l2.note})",
                measured=True,
            )
        )
    return found


def achievable_roofs(accelerator: Accelerator, dtype: str = "bf16") -> list[Roof]:
    """Realistic ceilings: the tensor roof x ``MATMUL_ACHIEVABLE_FRACTION`` (0.8) and device
    memory x ``MEMORY_ACHIEVABLE_FRACTION`` (0.9), from the measurements in SA §3.2.

    H100 SXM bf16: 0.8 x 989.5 TFLOP/s over 0.9 x 3.35 TB/s moves the ridge from 295 to about 263
    FLOP/byte (SA §3.2 quotes 264 from the measured 794.5 TFLOP/s). The matmul fraction comes
    from NVIDIA parts (MI300X measured 51%), so only NVIDIA accelerators get an achievable tensor
    roof; the bandwidth fraction comes from GPUs (NVIDIA and AMD), so only GPUs get an achievable
    memory roof. No vector-unit fraction was sourced, so there is no achievable vector roof.
    """
    found: list[Roof] = []
    for roof in roofs(accelerator, dtype):
        if isinstance(roof, ComputeRoof) and roof.unit == "tensor" and accelerator.vendor == "NVIDIA":
            peak = roof.peak_flops * MATMUL_ACHIEVABLE_FRACTION
            found.append(
                ComputeRoof(
                    f"{accelerator.name} {dtype} achievable ~{_tflops(peak)} TFLOP/s "
                    f"({MATMUL_ACHIEVABLE_FRACTION:.0%} of peak)",
                    "tensor",
                    dtype,
                    peak,
                    ACHIEVABLE_SOURCE,
                    achievable=True,
                )
            )
        elif isinstance(roof, MemoryRoof) and roof.level == "device" and accelerator.kind == "gpu":
            bandwidth = roof.bandwidth_bytes_per_s * MEMORY_ACHIEVABLE_FRACTION
            found.append(
                MemoryRoof(
                    f"{accelerator.name} achievable ~{bandwidth / 1e12:,.3g} TB/s "
                    f"({MEMORY_ACHIEVABLE_FRACTION:.0%} of datasheet)",
                    "device",
                    bandwidth,
                    ACHIEVABLE_SOURCE,
                    achievable=True,
                )
            )
    return found


# ---------------------------------------------------------------------------------------------
# Measured points (from measure/)
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class MeasuredPoint:
    """A measured kernel to overlay on the roofline: its intensity and the FLOP/s it achieved.

    ``accelerator_id`` names the catalog entry whose roof it should be compared with (None: the
    first accelerator on the chart). ``dtype`` is the precision it ran in ("bf16", "fp8", …; ""
    when unknown): a point is only ever held to the roof of its own precision. ``note`` says how it
    was measured (device, median of how many runs, warm or cold cache).
    """

    name: str
    intensity: float
    achieved_flops: float
    accelerator_id: str | None = None
    note: str = ""
    dtype: str = ""

    def __post_init__(self) -> None:
        if not self.name.strip():
            raise ValueError("a measured point needs a name")
        for field_name in ("intensity", "achieved_flops"):
            value = getattr(self, field_name)
            if not (isinstance(value, (int, float)) and math.isfinite(value) and value > 0):
                raise ValueError(f"measured point {self.name!r}: {field_name} must be > 0, got {value!r}")

    def fraction_of_roof(self, peak_flops: float, bandwidth: float) -> float:
        """Achieved / attainable at this intensity: 1.0 means on the roof."""
        return self.achieved_flops / attainable_flops(self.intensity, peak_flops, bandwidth)

    def held_to(self, dtype: str) -> bool:
        """Whether this point belongs on a roofline drawn at ``dtype`` (unknown precision: yes)."""
        return not self.dtype or self.dtype == dtype


# A measured point this far above its roof is not a fast kernel but a counting or unit error
# (FLOPs counted twice, a sparse peak, seconds read as milliseconds): flagged, never shown as plausible.
ABOVE_ROOF_TOLERANCE = 1.02

# How torch names the precisions the measurement suite runs in, as the catalog's dtype ids.
TORCH_DTYPES = {
    "bfloat16": "bf16",
    "float16": "fp16",
    "half": "fp16",
    "float32": "fp32",
    "float": "fp32",
    "tf32": "tf32",
    "float8_e4m3fn": "fp8",
    "float8_e5m2": "fp8",
    "int8": "int8",
}


# ---------------------------------------------------------------------------------------------
# Operation constructors
# ---------------------------------------------------------------------------------------------


def gemm(m: int, n: int, k: int, dtype: str = "bf16") -> Operation:
    """``[M,K] x [K,N] -> [M,N]``: FLOPs ``2MNK``, bytes ``(MK + KN + MN) x bytes/element``.

    Scaling book ("How to Scale Your Model", roofline chapter, jax-ml/scaling-book
    ``roofline.md``): intensity ``MNK / (MK + KN + MN)`` in bf16, ``n/3`` for a square ``n``;
    4096^3 gives 1365 FLOP/byte (SA §1.3).
    """
    _check_count(m=m, n=n, k=k)
    size = _dtype_bytes(dtype)
    return Operation(
        name=f"GEMM {m}x{n}x{k}",
        flops=2 * m * n * k,
        bytes=size * (m * k + k * n + m * n),
        dtype=dtype,
        kind="matmul",
        note="reads A and B once, writes C once (ideal tiling)",
        label=f"GEMM {m}³" if m == n == k else f"GEMM {m}x{n}x{k}",
    )


def linear(
    tokens: int, d_in: int, d_out: int, weight_dtype: str = "bf16", act_dtype: str = "bf16"
) -> Operation:
    """A Linear layer on ``tokens`` tokens: FLOPs ``2 T D F``; bytes = weights + inputs + outputs.

    bytes = ``D F x weight bytes + T (D + F) x activation bytes``. With ``T << D, F`` the weights
    dominate and the intensity is about T FLOP/byte in bf16: the layer turns compute-bound when
    the token batch passes the ridge point (scaling book, roofline chapter; SA §1.3: 4096x4096 at
    T = 1 / 8 / 64 / 256 / 1024 gives 1.0 / 8.0 / 62 / 228 / 683).
    """
    _check_count(tokens=tokens, d_in=d_in, d_out=d_out)
    weights = d_in * d_out * _dtype_bytes(weight_dtype)
    activations = tokens * (d_in + d_out) * _dtype_bytes(act_dtype)
    return Operation(
        name=f"Linear {d_in}x{d_out}, {tokens} token{'s' if tokens != 1 else ''}",
        flops=2 * tokens * d_in * d_out,
        bytes=weights + activations,
        dtype=act_dtype,
        kind="matmul" if tokens > 1 else "matvec",
        note=f"weights {weight_dtype} read once; activations {act_dtype} in and out",
        label=f"Linear, {tokens} tok",
    )


def gemv(d_in: int, d_out: int, dtype: str = "bf16") -> Operation:
    """Matrix-vector product (one decode token through one Linear): about 1 FLOP/byte in bf16 (SA §1.3)."""
    op = linear(1, d_in, d_out, dtype, dtype)
    return Operation(f"GEMV {d_in}x{d_out}", op.flops, op.bytes, dtype, "matvec", op.note, "GEMV")


def weight_only_gemv(
    d_in: int,
    d_out: int,
    weight_bits: int = 4,
    group_size: int = 128,
    *,
    tokens: int = 1,
    act_dtype: str = "bf16",
    scale_bits: int = 16,
) -> Operation:
    """Weight-only quantized GEMV/Linear (GPTQ/AWQ-style int4 or int8 weights, bf16 math).

    The kernel reads packed ``weight_bits``-bit weights plus one ``scale_bits`` scale per
    ``group_size`` weights (16-bit scale per group of 128, as the ``int4``/``int8`` formats in
    ``llm_memory.WEIGHT_FORMATS``; pass ``scale_bits=32`` for a scale plus zero point), dequantizes
    on chip and multiplies in ``act_dtype``. FLOPs ``2 T D F`` (dequantization not counted). Bytes
    per weight fall from 2 to about 1 or 0.5, so the intensity at one token is about 2 (int8) or 4
    (int4) FLOP/byte and the batch at which a layer turns compute-bound halves or quarters
    (scaling book, roofline chapter, weight-only int8 question; SA §1.3).
    """
    _check_count(d_in=d_in, d_out=d_out, tokens=tokens, group_size=group_size)
    if weight_bits not in (4, 8):
        raise ValueError(f"weight_bits must be 4 or 8, got {weight_bits!r}")
    if isinstance(scale_bits, bool) or not isinstance(scale_bits, int) or scale_bits < 0:
        raise ValueError(f"scale_bits must be a whole number >= 0, got {scale_bits!r}")
    weights = d_in * d_out * (weight_bits + scale_bits / group_size) / 8
    activations = tokens * (d_in + d_out) * _dtype_bytes(act_dtype)
    what = "GEMV" if tokens == 1 else f"Linear, {tokens} tokens,"
    return Operation(
        name=f"int{weight_bits} weight-only {what} {d_in}x{d_out}",
        flops=2 * tokens * d_in * d_out,
        bytes=weights + activations,
        dtype=act_dtype,
        kind="matvec",
        note=f"int{weight_bits} weights + {scale_bits}-bit scale per {group_size}; {act_dtype} math",
        label=f"int{weight_bits} GEMV" if tokens == 1 else f"int{weight_bits} Linear, {tokens} tok",
    )


def elementwise(
    n: int,
    flops_per_element: float = 1,
    inputs: int = 2,
    outputs: int = 1,
    dtype: str = "bf16",
    name: str = "",
) -> Operation:
    """An elementwise kernel over ``n`` elements: FLOPs ``k n``, bytes ``(inputs + outputs) n x size``.

    ``a + b`` in bf16: 1 FLOP over 6 bytes = 0.167 FLOP/byte (0.083 in fp32); a unary op with k
    FLOPs per element: k/4 in bf16, ReLU (k = 1) 0.25 (SA §1.3).
    """
    _check_count(n=n, inputs=inputs, outputs=outputs)
    if not (isinstance(flops_per_element, (int, float)) and flops_per_element >= 0):
        raise ValueError(f"flops_per_element must be >= 0, got {flops_per_element!r}")
    return Operation(
        name=name or f"elementwise ({inputs} in, {outputs} out, {flops_per_element:g} FLOP/elem)",
        flops=flops_per_element * n,
        bytes=(inputs + outputs) * n * _dtype_bytes(dtype),
        dtype=dtype,
        kind="elementwise",
        note=f"{inputs} input(s) read, {outputs} output(s) written, {dtype}",
        label=name or "elementwise",
    )


@dataclass(frozen=True)
class _Step:
    """One kernel of an unfused sequence: FLOPs, and elements read and written."""

    name: str
    flops: float
    read_elements: float
    written_elements: float


def _sequence(steps: list[_Step], size: int) -> tuple[float, float, str]:
    flops = sum(s.flops for s in steps)
    nbytes = size * sum(s.read_elements + s.written_elements for s in steps)
    return flops, nbytes, " -> ".join(s.name for s in steps)


def softmax(rows: int, cols: int, fused: bool = True, dtype: str = "bf16") -> Operation:
    """Row-wise softmax of a ``rows x cols`` matrix, about 5 FLOPs per element.

    Fused (one kernel, online max/sum): read each element once, write once: 5 N FLOPs over
    2 N elements = 1.25 FLOP/byte in bf16 (SA §1.3). Unfused (one kernel per primitive, each
    through device memory): max (read N, write rows), subtract (read N + rows, write N),
    exp (read N, write N), sum (read N, write rows), divide (read N + rows, write N):
    8 N elements, about 0.31 FLOP/byte. Each primitive counts 1 FLOP per element.
    """
    _check_count(rows=rows, cols=cols)
    size = _dtype_bytes(dtype)
    n = rows * cols
    if fused:
        flops, nbytes, how = 5 * n, size * 2 * n, "one kernel: read once, write once"
    else:
        flops, nbytes, how = _sequence(
            [
                _Step("max", n, n, rows),
                _Step("sub", n, n + rows, n),
                _Step("exp", n, n, n),
                _Step("sum", n, n, rows),
                _Step("div", n, n + rows, n),
            ],
            size,
        )
        how = f"unfused: {how}"
    label = "fused" if fused else "unfused"
    return Operation(
        f"softmax {rows}x{cols} ({label})", flops, nbytes, dtype, "reduction", how, f"softmax {label}"
    )


def layernorm(tokens: int, hidden: int, fused: bool = True, dtype: str = "bf16") -> Operation:
    """LayerNorm over ``hidden`` for ``tokens`` rows: 7 FLOPs per element.

    Per element: sum for the mean (1), subtract the mean (1), square (1), sum for the variance
    (1), multiply by 1/sigma (1), multiply by gamma (1), add beta (1); per row add eps and rsqrt.
    Fused: read x, gamma and beta, write y: about 7 / 4 = 1.75 FLOP/byte in bf16 (SA §1.3 "about
    2"; NVIDIA's performance guide "< 10"). Unfused (one kernel per primitive, through device
    memory): mean (read N, write rows), sub (read N + rows, write N), square (read N, write N),
    mean (read N, write rows), eps + rsqrt (rows), mul (read N + rows, write N), mul gamma
    (read N + hidden, write N), add beta (read N + hidden, write N): about 12 N elements.
    """
    _check_count(tokens=tokens, hidden=hidden)
    size = _dtype_bytes(dtype)
    n = tokens * hidden
    if fused:
        flops = 7 * n + 2 * tokens
        nbytes = size * (2 * n + 2 * hidden)
        how = "one kernel: read x, gamma, beta once, write y once"
    else:
        flops, nbytes, how = _sequence(
            [
                _Step("mean", n, n, tokens),
                _Step("sub", n, n + tokens, n),
                _Step("square", n, n, n),
                _Step("mean", n, n, tokens),
                _Step("add eps, rsqrt", 2 * tokens, tokens, tokens),
                _Step("mul", n, n + tokens, n),
                _Step("mul gamma", n, n + hidden, n),
                _Step("add beta", n, n + hidden, n),
            ],
            size,
        )
        how = f"unfused: {how}"
    label = "fused" if fused else "unfused"
    return Operation(
        f"LayerNorm {tokens}x{hidden} ({label})", flops, nbytes, dtype, "reduction", how, f"LayerNorm {label}"
    )


def rmsnorm(tokens: int, hidden: int, fused: bool = True, dtype: str = "bf16") -> Operation:
    """RMSNorm over ``hidden`` for ``tokens`` rows: 4 FLOPs per element.

    Per element: square (1), sum (1), multiply by 1/rms (1), multiply by the weight (1); per row
    add eps and rsqrt. Fused: read x and the weight, write y: about 4 / 4 = 1 FLOP/byte in bf16
    (SA §1.3). Unfused follows the eager steps of Hugging Face's ``LlamaRMSNorm.forward``
    (transformers 5.23): pow(2) (read N, write N), mean (read N, write rows), + eps and rsqrt
    (rows), multiply (read N + rows, write N), multiply by the weight (read N + hidden, write N):
    about 7 N elements, 0.29 FLOP/byte. (The real forward also casts to fp32 and back, which adds
    traffic; here every step stays in ``dtype``.)
    """
    _check_count(tokens=tokens, hidden=hidden)
    size = _dtype_bytes(dtype)
    n = tokens * hidden
    if fused:
        flops = 4 * n + 2 * tokens
        nbytes = size * (2 * n + hidden)
        how = "one kernel: read x and weight once, write y once"
    else:
        flops, nbytes, how = _sequence(
            [
                _Step("pow", n, n, n),
                _Step("mean", n, n, tokens),
                _Step("add eps, rsqrt", 2 * tokens, tokens, tokens),
                _Step("mul", n, n + tokens, n),
                _Step("mul weight", n, n + hidden, n),
            ],
            size,
        )
        how = f"unfused: {how}"
    label = "fused" if fused else "unfused"
    return Operation(
        f"RMSNorm {tokens}x{hidden} ({label})", flops, nbytes, dtype, "reduction", how, f"RMSNorm {label}"
    )


def attention(
    batch: int,
    heads: int,
    kv_heads: int,
    q_len: int,
    kv_len: int,
    head_dim: int,
    flash: bool = True,
    dtype: str = "bf16",
) -> Operation:
    """Scaled dot-product attention, without a causal mask: FLOPs ``4 B H T S d`` (QK^T and PV).

    FlashAttention reads Q, K, V once and writes O once: bytes ``size x B (2 H T d + 2 H_kv S d)``.
    With one KV head per query head that is the scaling book's ``4BSD + 4BTD`` in bf16 and the
    intensity ``S T / (S + T)``: N/2 for prefill (S = T = N; 2048 at N = 4096), about 1 for
    decode (T = 1); grouped-query attention divides the K/V bytes by the group size
    ``g = heads / kv_heads``, so decode reaches about g (scaling book ``inference.md``; SA §1.3).

    Naive attention also materialises the ``B H T S`` score matrix S and probabilities P in device
    memory: write S, read S (softmax), write P, read P (PV): ``4 B H T S`` more elements. For one
    head with S = T = N: ``4 N^2 d`` FLOPs over ``8 N d + 8 N^2`` bytes, an intensity of
    ``N d / (2 (N + d))`` that never exceeds ``d / 2`` (64 for d = 128; 62 at N = 4096).
    Softmax FLOPs are left out of both, so the two differ in bytes only.
    """
    _check_count(batch=batch, heads=heads, kv_heads=kv_heads, q_len=q_len, kv_len=kv_len, head_dim=head_dim)
    if heads % kv_heads:
        raise ValueError(f"heads ({heads}) must be a multiple of kv_heads ({kv_heads})")
    size = _dtype_bytes(dtype)
    flops = 4 * batch * heads * q_len * kv_len * head_dim
    q_and_o = 2 * batch * heads * q_len * head_dim
    k_and_v = 2 * batch * kv_heads * kv_len * head_dim
    elements = q_and_o + k_and_v
    if not flash:
        elements += 4 * batch * heads * q_len * kv_len
    group = heads // kv_heads
    grouping = "MHA" if group == 1 else ("MQA" if kv_heads == 1 else f"GQA-{group}")
    label = "FlashAttention" if flash else "naive"
    phase = "decode" if q_len == 1 else "prefill" if q_len == kv_len else f"{q_len} queries"
    how = (
        "Q, K, V read once, O written once"
        if flash
        else "also writes S, reads S, writes P, reads P through device memory"
    )
    return Operation(
        name=f"attention {phase} {label}, {grouping}, T={q_len}, S={kv_len}",
        flops=flops,
        bytes=elements * size,
        dtype=dtype,
        kind="attention",
        note=how,
        label=f"attn {phase} {'Flash' if flash else 'naive'}" + ("" if group == 1 else f" {grouping}"),
    )


def decode_step_op(
    spec: ModelSpec,
    batch: int,
    context_tokens: int = 0,
    weight_fmt: str = "bf16",
    kv_fmt: str = "bf16",
    *,
    dtype: str = "bf16",
    group_size: int | None = None,
) -> Operation:
    """One decode step of the whole model for ``batch`` sequences with ``context_tokens`` cached.

    Uses ``llm_speed.decode_step`` so the page and the memory calculator agree:
    FLOPs = 2 x active parameters x batch + attention ``4 x layers x q_heads d x context x batch``;
    bytes = every weight once (in ``weight_fmt``; for MoE, the experts the batch touches) + every
    sequence's KV cache (in ``kv_fmt``). At context 0 in bf16 the intensity is exactly the batch
    size: about 1 FLOP/byte at batch 1 (SA §1.3). The KV bytes grow with the batch, so at long
    context the intensity levels off below ``decode_intensity_limit`` instead of growing with B.

    As in ``decode_step``, an untied input-embedding table is a lookup (B rows read, no FLOPs),
    and activations are not counted.
    ``dtype`` is the format the math runs in (weight-only int4 still multiplies in bf16).
    """
    _check_count(batch=batch)
    step = decode_step(
        spec,
        bandwidth_bytes_per_s=1.0,
        peak_flops=math.inf,
        batch=batch,
        context_tokens=context_tokens,
        weight_fmt=weight_fmt,
        group_size=group_size,
        kv_fmt=kv_fmt,
    )
    name = spec.name or spec.family
    return Operation(
        name=f"{name} decode step, batch {batch}, context {context_tokens:,}",
        flops=step.flops,
        bytes=step.weight_bytes + step.kv_bytes,
        dtype=dtype,
        kind="model",
        note=(
            f"weights {step.weight_bytes / 1e9:,.2f} GB ({weight_fmt}) + "
            f"KV cache {step.kv_bytes / 1e9:,.2f} GB ({kv_fmt})"
        ),
        label=f"decode B={batch}",
    )


def prefill_op(
    spec: ModelSpec,
    tokens: int,
    batch: int = 1,
    weight_fmt: str = "bf16",
    kv_fmt: str = "bf16",
    *,
    dtype: str = "bf16",
) -> Operation:
    """Prefill of a ``tokens``-token prompt for ``batch`` sequences, the whole model.

    FLOPs as ``llm_speed.prefill_time_s`` counts them (Kaplan et al. 2020, arXiv 2001.08361
    §2.1): 2 x active parameters x tokens plus causal attention. Bytes: the weights read once
    plus the KV cache written once; activations are assumed to stay on chip (perfect fusion),
    so this is the least traffic a prefill can have. The intensity is about the number of tokens
    in bf16, which is why prefill is compute-bound.
    """
    _check_count(tokens=tokens, batch=batch)
    # prefill_time_s returns FLOPs / (peak x MFU); with both at 1 the seconds equal the FLOPs.
    flops = prefill_time_s(spec, tokens, peak_flops=1.0, mfu=1.0, batch=batch)
    weights = weight_bytes(spec, weight_fmt)
    kv = kv_cache_bytes(spec, tokens, batch, kv_fmt)
    name = spec.name or spec.family
    return Operation(
        name=f"{name} prefill, {tokens:,} tokens x {batch}",
        flops=flops,
        bytes=weights + kv,
        dtype=dtype,
        kind="model",
        note=f"weights {weights / 1e9:,.2f} GB read + KV cache {kv / 1e9:,.2f} GB written",
        label=f"prefill {tokens:,} tok",
    )


# ---------------------------------------------------------------------------------------------
# The decode batch that crosses the ridge
# ---------------------------------------------------------------------------------------------


def weights_only_crossover_batch(ridge_flop_per_byte: float, bytes_per_param: float) -> float:
    """B* ~ ridge x bytes_per_param / 2: the decode batch at which reading the weights once costs
    as much time as the FLOPs (2 per parameter per token), ignoring the KV cache.

    Scaling book, roofline chapter: a bf16 matmul with a small token batch is compute-bound when
    the batch exceeds the ridge (240 on TPU v5e), and int8 weights halve it (about 120).
    """
    _check_positive(ridge_flop_per_byte=ridge_flop_per_byte, bytes_per_param=bytes_per_param)
    return ridge_flop_per_byte * bytes_per_param / 2


def decode_intensity_limit(spec: ModelSpec, context_tokens: int, kv_fmt: str = "bf16") -> float:
    """The decode intensity as the batch grows without bound: FLOPs per sequence / KV bytes per sequence.

    The weights are shared by the batch but each sequence brings its own KV cache, so for large B
    intensity -> (2 x active params + attention FLOPs) / (KV bytes of one sequence). ``math.inf``
    at context 0. If this limit is below the ridge point, no batch makes decode compute-bound.
    """
    if context_tokens <= 0:
        return math.inf
    one = decode_step(
        spec,
        bandwidth_bytes_per_s=1.0,
        peak_flops=math.inf,
        batch=1,
        context_tokens=context_tokens,
        kv_fmt=kv_fmt,
    )
    return one.flops / one.kv_bytes


def decode_crossover_batch(
    spec: ModelSpec,
    accelerator: Accelerator,
    dtype: str = "bf16",
    context_tokens: int = 0,
    weight_fmt: str = "bf16",
    kv_fmt: str = "bf16",
    *,
    group_size: int | None = None,
    max_batch: int = 1 << 20,
) -> int | None:
    """The smallest batch at which one decode step reaches the ridge point (intensity >= ridge).

    A search over integers (bisection on ``decode_step_op(...).intensity``), not a closed form.
    The intensity never falls as the batch grows: FLOPs grow in proportion to B, the weight
    bytes are fixed (for MoE they grow more slowly than B), and the KV bytes grow in proportion to
    B. Returns None when even ``max_batch`` stays below the ridge.

    Weights only (context 0), intensity = 2 P B / (P x bytes_per_param), so
    B* ~ ridge x bytes_per_param / 2 (``weights_only_crossover_batch``): about the ridge itself
    in bf16. With context, each sequence adds its KV cache to the bytes, so B* is larger and,
    past the context where ``decode_intensity_limit`` drops below the ridge, there is no
    crossover at all. The ridge uses the dense tensor peak at ``dtype``; the search does not
    check that the batch's KV cache fits in memory.
    """
    _check_count(max_batch=max_batch)
    ridge = accelerator.ridge_point(dtype)

    def reaches(batch: int) -> bool:
        op = decode_step_op(
            spec, batch, context_tokens, weight_fmt, kv_fmt, dtype=dtype, group_size=group_size
        )
        return op.intensity >= ridge

    if not reaches(max_batch):
        return None
    if reaches(1):
        return 1
    low, high = 1, max_batch  # reaches(low) is False, reaches(high) is True
    while high - low > 1:
        middle = (low + high) // 2
        if reaches(middle):
            high = middle
        else:
            low = middle
    return high


def bytes_per_param(weight_fmt: str, group_size: int | None = None) -> float:
    """Bytes per weight of a ``llm_memory`` weight format, scales included (bf16: 2, int4/128: 0.5156)."""
    return weight_format(weight_fmt).bits_per_weight(group_size) / 8


# ---------------------------------------------------------------------------------------------
# The worked points of SA §1.3, for the page's default view
# ---------------------------------------------------------------------------------------------


def reference_operations(dtype: str = "bf16") -> list[Operation]:
    """The worked points of SA §1.3 (bytes in ``dtype``): GEMMs, a Linear layer at several token
    batches, elementwise add, norms and softmax (fused and unfused), attention prefill naive vs
    Flash, and decode attention MHA vs GQA-8 at 32k context.
    """
    ops: list[Operation] = [gemm(n, n, n, dtype) for n in (256, 1024, 4096)]
    ops += [linear(t, 4096, 4096, dtype, dtype) for t in (1, 64, 1024)]
    ops.append(weight_only_gemv(4096, 4096, 4))
    tokens, hidden = 4096, 4096
    ops.append(elementwise(tokens * hidden, 1, 2, 1, dtype, name="elementwise add"))
    ops += [rmsnorm(tokens, hidden, fused, dtype) for fused in (True, False)]
    ops.append(layernorm(tokens, hidden, True, dtype))
    ops.append(softmax(32 * 4096, 4096, True, dtype))
    ops += [attention(1, 32, 32, 4096, 4096, 128, flash, dtype) for flash in (False, True)]
    ops += [attention(1, 32, kv, 1, 32768, 128, True, dtype) for kv in (32, 4)]
    return ops


OPERATION_SETS: dict[str, str] = {
    "matmul": "Matrix multiplies: GEMMs and a Linear layer at 1, 64 and 1024 tokens",
    "memory-bound": "Elementwise, softmax and norms, fused and unfused",
    "attention": "Attention: naive vs FlashAttention (prefill), MHA vs GQA (decode)",
    "quantized": "Decode GEMV: bf16 vs int8 and int4 weight-only",
}


def operation_set(name: str, dtype: str = "bf16") -> list[Operation]:
    """One of the page's groups of example operations (``OPERATION_SETS``), sized as in SA §1.3."""
    tokens, hidden = 4096, 4096
    if name == "matmul":
        return [gemm(n, n, n, dtype) for n in (256, 1024, 4096)] + [
            linear(t, hidden, hidden, dtype, dtype) for t in (1, 64, 1024)
        ]
    if name == "memory-bound":
        return [
            elementwise(tokens * hidden, 1, 2, 1, dtype, name="elementwise add"),
            rmsnorm(tokens, hidden, True, dtype),
            rmsnorm(tokens, hidden, False, dtype),
            layernorm(tokens, hidden, True, dtype),
            layernorm(tokens, hidden, False, dtype),
            softmax(32 * 4096, 4096, True, dtype),
        ]
    if name == "attention":
        return [attention(1, 32, 32, 4096, 4096, 128, flash, dtype) for flash in (False, True)] + [
            attention(1, 32, kv, 1, 32768, 128, True, dtype) for kv in (32, 8)
        ]
    if name == "quantized":
        return [
            gemv(hidden, hidden, dtype),
            weight_only_gemv(hidden, hidden, 8),
            weight_only_gemv(hidden, hidden, 4),
        ]
    raise ValueError(f"unknown operation set {name!r}; choose from {list(OPERATION_SETS)}")
