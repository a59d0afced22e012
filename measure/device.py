"""Device discovery: CUDA GPUs through torch, NVIDIA telemetry through NVML, Apple MPS, the CPU.

Nothing here raises to the caller and nothing imports torch or pynvml at module top: each
probe imports inside its function and turns every failure (no torch, CPU-only build, no driver,
NVML errors) into a `Status` with an explanation and what to install.

NVML function names and units are those of nvidia-ml-py (`pynvml`): memory in bytes, clocks in
MHz, power in milliwatts (converted to watts here), temperature in degrees C, utilization in %
(docs.nvidia.com/deploy/nvml-api).
"""

from __future__ import annotations

import contextlib
import threading
import time
from dataclasses import asdict, dataclass, field, replace
from typing import Any

from measure import status as st
from measure.env import CpuInfo, cpu_info, is_hosted

# ---------------------------------------------------------------------------------------------
# torch


def import_torch() -> tuple[Any | None, st.Status]:
    """(torch, ok) or (None, a status saying why torch is unusable and what to install)."""
    try:
        import torch
    except ImportError as exc:
        return None, st.no_torch(exc)
    except Exception as exc:  # a broken install (missing shared library, ABI mismatch)
        return None, st.Status(
            False,
            st.NO_TORCH,
            "PyTorch is installed but failed to load, so nothing can be measured.",
            "Reinstall it: " + st.INSTALL_MEASURE,
            st._detail(exc),
        )
    return torch, st.ok(f"torch {torch.__version__}")


def cuda_status(torch: Any) -> st.Status:
    """Why CUDA is or is not usable with this torch, in words."""
    try:
        if torch.cuda.is_available() and torch.cuda.device_count() > 0:
            return st.ok(f"{torch.cuda.device_count()} CUDA device(s)")
    except Exception as exc:
        return st.no_gpu("cuda", "CUDA failed to initialise (driver or runtime problem).", exc)
    built_with = getattr(torch.version, "cuda", None) or getattr(torch.version, "hip", None)
    if not built_with:
        return st.no_gpu(
            "cuda",
            "This PyTorch build is CPU-only, so it cannot use an NVIDIA GPU even if one is present. "
            "CPU measurements still work.",
        )
    return st.no_gpu(
        "cuda",
        f"This PyTorch was built for CUDA/ROCm {built_with}, but no usable GPU was found: either there "
        "is no GPU, the NVIDIA driver is missing or too old, or CUDA_VISIBLE_DEVICES hides it.",
    )


@dataclass(frozen=True)
class CudaDeviceInfo:
    """One CUDA device as torch sees it (torch.cuda.get_device_properties)."""

    index: int
    name: str
    total_memory_bytes: int
    sm_count: int
    l2_cache_bytes: int | None
    compute_capability: tuple[int, int]
    uuid: str | None
    nvml: NvmlInfo | None = None

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["compute_capability"] = f"{self.compute_capability[0]}.{self.compute_capability[1]}"
        data["nvml"] = self.nvml.to_dict() if self.nvml else None
        return data


def cuda_devices(torch: Any) -> list[CudaDeviceInfo]:
    """Properties of every visible CUDA device (no CUDA context is created for this)."""
    devices = []
    for index in range(torch.cuda.device_count()):
        props = torch.cuda.get_device_properties(index)
        uuid = getattr(props, "uuid", None)
        devices.append(
            CudaDeviceInfo(
                index=index,
                name=str(props.name),
                total_memory_bytes=int(props.total_memory),
                sm_count=int(props.multi_processor_count),
                l2_cache_bytes=int(getattr(props, "L2_cache_size", 0)) or None,
                compute_capability=(int(props.major), int(props.minor)),
                uuid=str(uuid) if uuid is not None else None,
            )
        )
    return devices


@dataclass(frozen=True)
class MpsInfo:
    """Apple GPU through torch's MPS backend. Apple silicon shares memory with the CPU."""

    name: str
    recommended_max_memory_bytes: int | None

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def mps_probe(torch: Any, cpu: CpuInfo) -> tuple[MpsInfo | None, st.Status]:
    backend = getattr(torch.backends, "mps", None)
    try:
        available = bool(backend and backend.is_available())
    except Exception as exc:
        return None, st.unsupported(f"MPS check failed: {exc}")
    if not available:
        built = bool(backend and backend.is_built())
        why = (
            "This PyTorch has MPS support but no Apple GPU is available here."
            if built
            else "Apple MPS is only available with PyTorch on an Apple-silicon Mac."
        )
        return None, st.unsupported(why)
    try:
        recommended = int(torch.mps.recommended_max_memory())
    except Exception:
        recommended = None
    return MpsInfo(name=f"{cpu.model} GPU (MPS)", recommended_max_memory_bytes=recommended), st.ok("MPS")


# ---------------------------------------------------------------------------------------------
# NVML

_nvml_lock = threading.Lock()
_nvml_state: dict[str, Any] = {"module": None, "failure": None, "failed_at": 0.0, "handles": {}}
_NVML_RETRY_S = 60.0


def _nvml_failure_status(pynvml: Any, exc: BaseException) -> st.Status:
    code = getattr(exc, "value", None)
    not_found = {
        getattr(pynvml, "NVML_ERROR_LIBRARY_NOT_FOUND", 12),
        getattr(pynvml, "NVML_ERROR_DRIVER_NOT_LOADED", 9),
    }
    if code in not_found:
        return st.Status(
            False,
            st.NO_DRIVER,
            "No NVIDIA driver was found (NVML's library libnvidia-ml is missing or not loaded), so there "
            "is no GPU telemetry. On a machine without an NVIDIA GPU this is expected; CPU measurements "
            "still work.",
            "If this machine has an NVIDIA GPU, install the NVIDIA driver (it ships libnvidia-ml).",
            st._detail(exc),
        )
    if code == getattr(pynvml, "NVML_ERROR_NO_PERMISSION", 4):
        return st.Status(
            False,
            st.NVML_ERROR,
            "NVML refused access (insufficient permissions), so there is no GPU telemetry.",
            "Run as a user allowed to query the GPU (inside containers, expose the driver utilities).",
            st._detail(exc),
        )
    return st.Status(
        False, st.NVML_ERROR, "NVML reported an error, so there is no GPU telemetry.", "", st._detail(exc)
    )


def nvml_module() -> tuple[Any | None, st.Status]:
    """The initialised pynvml module, or a status. nvmlInit runs once per process.

    A failed init is remembered for a minute, so a page polling every second stays cheap.
    """
    with _nvml_lock:
        if _nvml_state["module"] is not None:
            return _nvml_state["module"], st.ok("NVML")
        failure = _nvml_state["failure"]
        if failure is not None and time.monotonic() - _nvml_state["failed_at"] < _NVML_RETRY_S:
            return None, failure
        try:
            import pynvml
        except ImportError as exc:
            status = st.Status(
                False,
                st.NO_NVML,
                "nvidia-ml-py (pynvml) is not installed, so GPU telemetry (clocks, power, temperature) "
                "is not available.",
                st.INSTALL_NVML,
                st._detail(exc),
            )
            _nvml_state.update(failure=status, failed_at=time.monotonic())
            return None, status
        try:
            pynvml.nvmlInit()
        except Exception as exc:
            status = _nvml_failure_status(pynvml, exc)
            _nvml_state.update(failure=status, failed_at=time.monotonic())
            return None, status
        _nvml_state.update(module=pynvml, failure=None, handles={})
        return pynvml, st.ok("NVML")


def reset_nvml_cache() -> None:
    """Forget the cached NVML state (tests; or after installing a driver)."""
    with _nvml_lock:
        module = _nvml_state["module"]
        if module is not None:
            with contextlib.suppress(Exception):
                module.nvmlShutdown()
        _nvml_state.update(module=None, failure=None, failed_at=0.0, handles={})


def _q(fn: Any, *args: Any) -> Any:
    """Call an NVML query; None when this GPU does not support it or it fails."""
    try:
        return fn(*args)
    except Exception:
        return None


def _text(value: Any) -> str | None:
    if value is None:
        return None
    if isinstance(value, bytes):
        return value.decode("utf-8", "replace").rstrip("\x00")
    return str(value)


def _watts(milliwatts: Any) -> float | None:
    return None if milliwatts is None else float(milliwatts) / 1000.0


def _cuda_version_text(value: Any) -> str | None:
    """NVML encodes the CUDA driver version as 1000*major + 10*minor (12040 -> "12.4")."""
    if not isinstance(value, int) or value <= 0:
        return None
    return f"{value // 1000}.{(value % 1000) // 10}"


@dataclass(frozen=True)
class NvmlInfo:
    """One GPU as NVML sees it. Any field may be None when the GPU does not report it."""

    index: int
    name: str | None
    uuid: str | None
    pci_bus_id: str | None
    driver_version: str | None
    cuda_driver_version: str | None
    memory_total_bytes: int | None
    memory_used_bytes: int | None
    sm_clock_mhz: int | None
    max_sm_clock_mhz: int | None
    mem_clock_mhz: int | None
    max_mem_clock_mhz: int | None
    power_limit_w: float | None
    power_draw_w: float | None
    temperature_c: int | None
    gpu_util_percent: int | None
    mem_util_percent: int | None
    pcie_gen: int | None
    pcie_width: int | None
    pcie_max_gen: int | None
    pcie_max_width: int | None
    nvlink_active_links: int | None

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def _nvlink_active(pynvml: Any, handle: Any) -> int | None:
    """Links reported as enabled; None when NVLink queries are not supported at all."""
    max_links = int(getattr(pynvml, "NVML_NVLINK_MAX_LINKS", 18))
    enabled = getattr(pynvml, "NVML_FEATURE_ENABLED", 1)
    active = 0
    supported = False
    for link in range(max_links):
        try:
            state = pynvml.nvmlDeviceGetNvLinkState(handle, link)
        except Exception:
            continue
        supported = True
        active += int(state == enabled)
    return active if supported else None


def _nvml_handle(pynvml: Any, index: int) -> Any:
    handles = _nvml_state["handles"]
    if index not in handles:
        handles[index] = pynvml.nvmlDeviceGetHandleByIndex(index)
    return handles[index]


def nvml_devices() -> tuple[list[NvmlInfo], st.Status]:
    """Every GPU NVML can see, with driver, clocks, power, temperature, utilization, PCIe, NVLink."""
    pynvml, status = nvml_module()
    if pynvml is None:
        return [], status
    try:
        count = int(pynvml.nvmlDeviceGetCount())
        driver = _text(_q(pynvml.nvmlSystemGetDriverVersion))
        cuda_driver = _cuda_version_text(_q(pynvml.nvmlSystemGetCudaDriverVersion))
        infos = []
        for index in range(count):
            handle = _nvml_handle(pynvml, index)
            memory = _q(pynvml.nvmlDeviceGetMemoryInfo, handle)
            util = _q(pynvml.nvmlDeviceGetUtilizationRates, handle)
            pci = _q(pynvml.nvmlDeviceGetPciInfo, handle)
            infos.append(
                NvmlInfo(
                    index=index,
                    name=_text(_q(pynvml.nvmlDeviceGetName, handle)),
                    uuid=_text(_q(pynvml.nvmlDeviceGetUUID, handle)),
                    pci_bus_id=_text(getattr(pci, "busId", None)),
                    driver_version=driver,
                    cuda_driver_version=cuda_driver,
                    memory_total_bytes=int(memory.total) if memory is not None else None,
                    memory_used_bytes=int(memory.used) if memory is not None else None,
                    sm_clock_mhz=_q(pynvml.nvmlDeviceGetClockInfo, handle, pynvml.NVML_CLOCK_SM),
                    max_sm_clock_mhz=_q(pynvml.nvmlDeviceGetMaxClockInfo, handle, pynvml.NVML_CLOCK_SM),
                    mem_clock_mhz=_q(pynvml.nvmlDeviceGetClockInfo, handle, pynvml.NVML_CLOCK_MEM),
                    max_mem_clock_mhz=_q(pynvml.nvmlDeviceGetMaxClockInfo, handle, pynvml.NVML_CLOCK_MEM),
                    power_limit_w=_watts(_q(pynvml.nvmlDeviceGetEnforcedPowerLimit, handle)),
                    power_draw_w=_watts(_q(pynvml.nvmlDeviceGetPowerUsage, handle)),
                    temperature_c=_q(pynvml.nvmlDeviceGetTemperature, handle, pynvml.NVML_TEMPERATURE_GPU),
                    gpu_util_percent=int(util.gpu) if util is not None else None,
                    mem_util_percent=int(util.memory) if util is not None else None,
                    pcie_gen=_q(pynvml.nvmlDeviceGetCurrPcieLinkGeneration, handle),
                    pcie_width=_q(pynvml.nvmlDeviceGetCurrPcieLinkWidth, handle),
                    pcie_max_gen=_q(pynvml.nvmlDeviceGetMaxPcieLinkGeneration, handle),
                    pcie_max_width=_q(pynvml.nvmlDeviceGetMaxPcieLinkWidth, handle),
                    nvlink_active_links=_nvlink_active(pynvml, handle),
                )
            )
    except Exception as exc:
        return [], _nvml_failure_status(pynvml, exc)
    return infos, st.ok(f"{len(infos)} GPU(s) via NVML")


# Clock-event reason bits (pynvml nvmlClocksEventReason*), named for the page.
CLOCK_EVENT_REASONS = {
    0x1: "idle",
    0x2: "application clocks setting",
    0x4: "software power cap",
    0x8: "hardware slowdown",
    0x10: "sync boost",
    0x20: "software thermal slowdown",
    0x40: "hardware thermal slowdown",
    0x80: "hardware power brake",
    0x100: "display clock setting",
}


@dataclass(frozen=True)
class TelemetrySample:
    """One reading of a GPU's live state (NVML index `index`); None where not reported."""

    timestamp_s: float
    index: int
    sm_clock_mhz: int | None
    mem_clock_mhz: int | None
    power_draw_w: float | None
    power_limit_w: float | None
    temperature_c: int | None
    gpu_util_percent: int | None
    mem_util_percent: int | None
    memory_used_bytes: int | None
    memory_total_bytes: int | None
    clock_event_reasons: tuple[str, ...] = field(default_factory=tuple)

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["clock_event_reasons"] = list(self.clock_event_reasons)
        return data


def read_telemetry(device_index: int = 0) -> TelemetrySample | st.Status:
    """A cheap snapshot of GPU `device_index` (NVML numbering) for a once-a-second chart.

    NVML is initialised once per process and device handles are cached, so a call costs a few
    NVML queries (no torch import, no CUDA context). NVML numbers GPUs in PCI bus order; torch
    does too when CUDA_DEVICE_ORDER=PCI_BUS_ID, otherwise match them by `CudaDeviceInfo.nvml`.
    Returns a Status (never raises) without NVML, without a driver, or for a bad index.
    """
    pynvml, status = nvml_module()
    if pynvml is None:
        return status
    try:
        handle = _nvml_handle(pynvml, int(device_index))
    except Exception as exc:
        return st.Status(
            False, st.NVML_ERROR, f"NVML has no GPU with index {device_index}.", "", st._detail(exc)
        )
    memory = _q(pynvml.nvmlDeviceGetMemoryInfo, handle)
    util = _q(pynvml.nvmlDeviceGetUtilizationRates, handle)
    reasons_fn = getattr(pynvml, "nvmlDeviceGetCurrentClocksEventReasons", None) or getattr(
        pynvml, "nvmlDeviceGetCurrentClocksThrottleReasons", None
    )
    bits = _q(reasons_fn, handle) if reasons_fn else None
    reasons = tuple(name for bit, name in CLOCK_EVENT_REASONS.items() if isinstance(bits, int) and bits & bit)
    return TelemetrySample(
        timestamp_s=time.time(),
        index=int(device_index),
        sm_clock_mhz=_q(pynvml.nvmlDeviceGetClockInfo, handle, pynvml.NVML_CLOCK_SM),
        mem_clock_mhz=_q(pynvml.nvmlDeviceGetClockInfo, handle, pynvml.NVML_CLOCK_MEM),
        power_draw_w=_watts(_q(pynvml.nvmlDeviceGetPowerUsage, handle)),
        power_limit_w=_watts(_q(pynvml.nvmlDeviceGetEnforcedPowerLimit, handle)),
        temperature_c=_q(pynvml.nvmlDeviceGetTemperature, handle, pynvml.NVML_TEMPERATURE_GPU),
        gpu_util_percent=int(util.gpu) if util is not None else None,
        mem_util_percent=int(util.memory) if util is not None else None,
        memory_used_bytes=int(memory.used) if memory is not None else None,
        memory_total_bytes=int(memory.total) if memory is not None else None,
        clock_event_reasons=reasons,
    )


# ---------------------------------------------------------------------------------------------
# The whole picture


@dataclass(frozen=True)
class DeviceReport:
    """Everything discovery found, with a status per layer (torch, CUDA, NVML, MPS)."""

    cpu: CpuInfo
    torch_version: str | None
    torch_status: st.Status
    cuda: tuple[CudaDeviceInfo, ...]
    cuda_status: st.Status
    nvml: tuple[NvmlInfo, ...]
    nvml_status: st.Status
    mps: MpsInfo | None
    mps_status: st.Status
    hosted: bool

    def devices(self) -> list[str]:
        """Device strings a workload accepts here: "cpu", "cuda:0", ..., "mps"."""
        if self.torch_version is None:
            return []
        return ["cpu"] + [f"cuda:{d.index}" for d in self.cuda] + (["mps"] if self.mps else [])

    def to_dict(self) -> dict[str, Any]:
        return {
            "cpu": self.cpu.to_dict(),
            "torch_version": self.torch_version,
            "torch_status": self.torch_status.to_dict(),
            "cuda": [d.to_dict() for d in self.cuda],
            "cuda_status": self.cuda_status.to_dict(),
            "nvml": [n.to_dict() for n in self.nvml],
            "nvml_status": self.nvml_status.to_dict(),
            "mps": self.mps.to_dict() if self.mps else None,
            "mps_status": self.mps_status.to_dict(),
            "hosted": self.hosted,
        }


def discover(include_nvml: bool = True) -> DeviceReport:
    """Probe the CPU, torch, CUDA devices, NVML and MPS. Never raises.

    The CPU is always described. torch is imported here (slow the first time, ~1 s), so a page
    should call this on demand or cache it, not at import.
    """
    cpu = cpu_info()
    nvml_infos: list[NvmlInfo] = []
    nvml_status = st.unsupported("NVML was not queried.")
    if include_nvml:
        nvml_infos, nvml_status = nvml_devices()
    torch, torch_status = import_torch()
    if torch is None:
        return DeviceReport(
            cpu=cpu,
            torch_version=None,
            torch_status=torch_status,
            cuda=(),
            cuda_status=torch_status,
            nvml=tuple(nvml_infos),
            nvml_status=nvml_status,
            mps=None,
            mps_status=torch_status,
            hosted=is_hosted(),
        )
    c_status = cuda_status(torch)
    cuda: list[CudaDeviceInfo] = []
    if c_status.ok:
        try:
            cuda = cuda_devices(torch)
        except Exception as exc:
            c_status = st.no_gpu("cuda", "Reading CUDA device properties failed.", exc)
    by_uuid = {(n.uuid or "").removeprefix("GPU-").removeprefix("MIG-"): n for n in nvml_infos}
    cuda = [replace(d, nvml=by_uuid.get((d.uuid or "").removeprefix("GPU-"))) for d in cuda]
    mps, m_status = mps_probe(torch, cpu)
    return DeviceReport(
        cpu=cpu,
        torch_version=str(torch.__version__),
        torch_status=torch_status,
        cuda=tuple(cuda),
        cuda_status=c_status,
        nvml=tuple(nvml_infos),
        nvml_status=nvml_status,
        mps=mps,
        mps_status=m_status,
        hosted=is_hosted(),
    )


def resolve_device(torch: Any, device: str) -> tuple[str | None, st.Status]:
    """Normalise "cpu" / "cuda" / "cuda:1" / "mps" / "auto" and check it is usable here."""
    name = (device or "cpu").strip().lower()
    if name == "auto":
        if torch.cuda.is_available():
            return "cuda:0", st.ok()
        backend = getattr(torch.backends, "mps", None)
        if backend is not None and backend.is_available():
            return "mps", st.ok()
        return "cpu", st.ok()
    if name == "cpu":
        return "cpu", st.ok()
    if name.startswith("cuda"):
        c_status = cuda_status(torch)
        if not c_status.ok:
            return None, c_status
        index = int(name.split(":", 1)[1]) if ":" in name else 0
        if index >= torch.cuda.device_count():
            return None, st.no_gpu(
                "cuda", f"There is no CUDA device {index}; this machine has {torch.cuda.device_count()}."
            )
        return f"cuda:{index}", st.ok()
    if name == "mps":
        backend = getattr(torch.backends, "mps", None)
        if backend is not None and backend.is_available():
            return "mps", st.ok()
        return None, st.no_gpu("mps", "Apple MPS is not available here (it needs an Apple-silicon Mac).")
    return None, st.unsupported(f"Unknown device {device!r}; use cpu, cuda, cuda:N or mps.")


def device_summary(torch: Any, device: str) -> dict[str, Any]:
    """What a results file says about the device it measured (JSON-ready)."""
    cpu = cpu_info()
    summary: dict[str, Any] = {
        "type": device.split(":")[0],
        "device": device,
        "torch_version": str(torch.__version__),
        "threads": int(torch.get_num_threads()),
        "cpu": cpu.to_dict(),
        "hosted": is_hosted(),
    }
    if device.startswith("cuda"):
        index = int(device.split(":")[1])
        info = cuda_devices(torch)[index]
        summary["name"] = info.name
        summary["cuda"] = info.to_dict()
        summary["cuda_runtime"] = getattr(torch.version, "cuda", None)
        nvml_infos, _ = nvml_devices()
        match = [n for n in nvml_infos if (n.uuid or "").removeprefix("GPU-") == (info.uuid or "")]
        summary["nvml"] = match[0].to_dict() if match else None
    elif device == "mps":
        summary["name"] = f"{cpu.model} GPU (MPS)"
    else:
        summary["name"] = cpu.model
    return summary


def device_name(torch: Any, device: str) -> str:
    if device.startswith("cuda"):
        return str(torch.cuda.get_device_name(int(device.split(":")[1])))
    if device == "mps":
        return f"{cpu_info().model} GPU (MPS)"
    return cpu_info().model
