"""Device discovery: NVML read through a fake pynvml, CPU caches, catalog matching, datasheet ratios."""

from __future__ import annotations

import sys
import types

import pytest

from measure import status
from measure.catalog import datasheet_ratios, match_catalog
from measure.device import TelemetrySample, nvml_devices, read_telemetry, reset_nvml_cache
from measure.env import CacheLevel, CpuInfo, cache_level_for, cpu_info
from measure.results import BandwidthRecord

MiB = 1024**2

# Rows copied from the project's accelerator catalog (/work/shared/reference/accelerators.csv,
# columns as there). Only the columns the matcher and the ratios read.
CATALOG = [
    {
        "name": "H200 SXM",
        "memory_gb": "141",
        "memory_bw_gbps": "4800",
        "sm_cu_count": "132",
        "devices_per_board": "1",
    },
    {
        "name": "H100 SXM (80GB)",
        "memory_gb": "80",
        "memory_bw_gbps": "3350",
        "sm_cu_count": "132",
        "devices_per_board": "1",
        "fp32_tflops": "67",
        "tf32_dense_tflops": "494.5",
        "fp16_bf16_dense_tflops": "989.5",
        "fp8_dense_tflops": "1979",
    },
    {
        "name": "H100 PCIe (80GB)",
        "memory_gb": "80",
        "memory_bw_gbps": "2000",
        "sm_cu_count": "114",
        "devices_per_board": "1",
    },
    {
        "name": "A100 80GB SXM",
        "memory_gb": "80",
        "memory_bw_gbps": "2039",
        "sm_cu_count": "108",
        "devices_per_board": "1",
    },
    {
        "name": "A100 40GB SXM",
        "memory_gb": "40",
        "memory_bw_gbps": "1555",
        "sm_cu_count": "108",
        "devices_per_board": "1",
    },
    {
        "name": "L40S",
        "memory_gb": "48",
        "memory_bw_gbps": "864",
        "sm_cu_count": "142",
        "devices_per_board": "1",
    },
    {"name": "L4", "memory_gb": "24", "memory_bw_gbps": "300", "sm_cu_count": "", "devices_per_board": "1"},
    {
        "name": "A10G",
        "memory_gb": "24",
        "memory_bw_gbps": "600",
        "sm_cu_count": "80",
        "devices_per_board": "1",
    },
    {
        "name": "A10",
        "memory_gb": "24",
        "memory_bw_gbps": "600",
        "sm_cu_count": "72",
        "devices_per_board": "1",
    },
    {"name": "T4", "memory_gb": "16", "memory_bw_gbps": "320", "sm_cu_count": "40", "devices_per_board": "1"},
    {
        "name": "Tesla K80",
        "memory_gb": "24",
        "memory_bw_gbps": "480",
        "sm_cu_count": "",
        "devices_per_board": "2",
    },
    {
        "name": "GH200 Grace Hopper (96GB HBM3)",
        "memory_gb": "96",
        "memory_bw_gbps": "4000",
        "sm_cu_count": "",
    },
    {
        "name": "M2 Max",
        "memory_gb": "96",
        "memory_bw_gbps": "400",
        "sm_cu_count": "38",
        "devices_per_board": "1",
    },
]


@pytest.mark.parametrize(
    ("device_name", "memory_mib", "sms", "expected"),
    [
        # Names, memory and SM counts as torch.cuda.get_device_properties printed them in public logs.
        ("NVIDIA H100 80GB HBM3", 81090, 132, "H100 SXM (80GB)"),
        ("NVIDIA H100 PCIe", 81008, 114, "H100 PCIe (80GB)"),
        ("NVIDIA A100-SXM4-80GB", 81920, 108, "A100 80GB SXM"),
        ("Tesla T4", 15102, 40, "T4"),
        ("NVIDIA A10G", 22587, 80, "A10G"),
        ("NVIDIA H200", 143771, None, "H200 SXM"),  # NVML's name and total memory
        ("AMD EPYC", None, None, None),
    ],
)
def test_devices_match_their_catalog_row(device_name, memory_mib, sms, expected):
    match = match_catalog(device_name, CATALOG, memory_bytes=memory_mib and memory_mib * MiB, sm_count=sms)
    assert (match.row["name"] if match else None) == expected


def test_a_gpu_slice_with_fewer_sms_matches_no_whole_gpu_datasheet():
    assert match_catalog("NVIDIA A100-SXM4-80GB", CATALOG, memory_bytes=10 * 1024**3, sm_count=14) is None


def test_apple_variant_words_must_agree():
    assert match_catalog("Apple M2 Max", CATALOG).row["name"] == "M2 Max"
    assert match_catalog("Apple M2", CATALOG) is None


def test_datasheet_ratios_compare_device_memory_and_dense_tensor_peaks():
    common = dict(
        device="cuda:0", median_s=1.0, p10_s=1.0, p90_s=1.0, min_s=1.0, repeats=1, elements=1, dtype="float32"
    )
    hbm = BandwidthRecord(
        **common,
        op="copy",
        bytes=1,
        gb_per_s=3015.0,
        bytes_per_s=3.015e12,
        best_gb_per_s=3015.0,
        cache_hint="device memory",
    )
    in_l2 = BandwidthRecord(
        **common, op="copy", bytes=1, gb_per_s=9000.0, bytes_per_s=9e12, best_gb_per_s=9000.0, cache_hint="L2"
    )
    matmul = {"kind": "matmul", "dtype": "bfloat16", "tflops": 791.6, "math": "bfloat16"}
    ratios = {r["quantity"]: r["ratio"] for r in datasheet_ratios([hbm, in_l2, matmul], CATALOG[1])}
    assert ratios == pytest.approx({"memory bandwidth": 3015 / 3350, "matmul bfloat16": 791.6 / 989.5})


# --- CPU -----------------------------------------------------------------------------------------


def test_cpu_info_describes_this_machine_without_torch():
    info = cpu_info()
    assert info.logical_cores >= 1 and info.model
    assert all(c.size_bytes > 0 for c in info.caches)


def test_cache_level_counts_private_caches_once_per_thread():
    cpu = CpuInfo(
        model="test",
        architecture="x86_64",
        logical_cores=2,
        physical_cores=2,
        caches=(
            CacheLevel(1, "Data", 48 * 1024, 1),
            CacheLevel(2, "Unified", MiB, 1),
            CacheLevel(3, "Unified", 32 * MiB, 2),
        ),
    )
    assert cache_level_for(96 * 1024, cpu, threads=2) == "L1"  # two private 48 KiB L1s
    assert cache_level_for(96 * 1024, cpu, threads=1) == "L2"
    assert cache_level_for(2 * MiB, cpu, threads=2) == "L2"
    assert cache_level_for(32 * MiB, cpu, threads=2) == "L3"
    assert cache_level_for(64 * MiB, cpu, threads=2) == "DRAM"


# --- NVML through a fake pynvml ------------------------------------------------------------------


class _NVMLError(Exception):
    def __init__(self, value):
        super().__init__(value)
        self.value = value


def _fake_pynvml(*, init_error=None, power_supported=True):
    """A stand-in for nvidia-ml-py with one H100-like GPU. Units as NVML's: mW, MHz, bytes, C, %."""
    m = types.ModuleType("pynvml")
    m.NVMLError = _NVMLError
    m.NVML_ERROR_NOT_SUPPORTED, m.NVML_ERROR_NO_PERMISSION = 3, 4
    m.NVML_ERROR_DRIVER_NOT_LOADED, m.NVML_ERROR_LIBRARY_NOT_FOUND = 9, 12
    m.NVML_CLOCK_SM, m.NVML_CLOCK_MEM, m.NVML_TEMPERATURE_GPU = 1, 2, 0
    m.NVML_NVLINK_MAX_LINKS, m.NVML_FEATURE_ENABLED = 18, 1

    def init():
        if init_error is not None:
            raise _NVMLError(init_error)

    def handle(index):
        if index != 0:
            raise _NVMLError(2)
        return "gpu0"

    def power(_h):
        if not power_supported:
            raise _NVMLError(3)
        return 350_000

    def nvlink(_h, link):
        if link >= 12:
            raise _NVMLError(3)
        return 1 if link < 10 else 0

    m.nvmlInit, m.nvmlShutdown = init, lambda: None
    m.nvmlDeviceGetCount = lambda: 1
    m.nvmlDeviceGetHandleByIndex = handle
    m.nvmlSystemGetDriverVersion = lambda: "550.54.15"
    m.nvmlSystemGetCudaDriverVersion = lambda: 12040
    m.nvmlDeviceGetName = lambda h: "NVIDIA H100 80GB HBM3"
    m.nvmlDeviceGetUUID = lambda h: "GPU-a7bfde5d-8151-8a6d-fdfc-b31d020cd2f5"
    m.nvmlDeviceGetPciInfo = lambda h: types.SimpleNamespace(busId=b"00000000:41:00.0")
    m.nvmlDeviceGetMemoryInfo = lambda h: types.SimpleNamespace(total=81559 * MiB, used=1024 * MiB, free=0)
    m.nvmlDeviceGetClockInfo = lambda h, kind: {1: 1755, 2: 2619}[kind]
    m.nvmlDeviceGetMaxClockInfo = lambda h, kind: {1: 1980, 2: 2619}[kind]
    m.nvmlDeviceGetEnforcedPowerLimit = lambda h: 700_000
    m.nvmlDeviceGetPowerUsage = power
    m.nvmlDeviceGetTemperature = lambda h, sensor: 55
    m.nvmlDeviceGetUtilizationRates = lambda h: types.SimpleNamespace(gpu=97, memory=60)
    m.nvmlDeviceGetCurrPcieLinkGeneration = lambda h: 5
    m.nvmlDeviceGetCurrPcieLinkWidth = lambda h: 16
    m.nvmlDeviceGetMaxPcieLinkGeneration = lambda h: 5
    m.nvmlDeviceGetMaxPcieLinkWidth = lambda h: 16
    m.nvmlDeviceGetNvLinkState = nvlink
    m.nvmlDeviceGetCurrentClocksEventReasons = lambda h: 0x4 | 0x20
    return m


@pytest.fixture
def fake_nvml(monkeypatch):
    def install(**kwargs):
        reset_nvml_cache()
        monkeypatch.setitem(sys.modules, "pynvml", _fake_pynvml(**kwargs))

    yield install
    reset_nvml_cache()


def test_telemetry_converts_nvml_units_and_names_clock_limits(fake_nvml):
    fake_nvml()
    sample = read_telemetry(0)
    assert isinstance(sample, TelemetrySample)
    assert (sample.power_draw_w, sample.power_limit_w) == (350.0, 700.0)  # NVML reports milliwatts
    assert (sample.sm_clock_mhz, sample.temperature_c, sample.gpu_util_percent) == (1755, 55, 97)
    assert sample.memory_total_bytes == 81559 * MiB
    assert sample.clock_event_reasons == ("software power cap", "software thermal slowdown")


def test_nvml_device_list_reads_driver_pcie_and_active_nvlinks(fake_nvml):
    fake_nvml()
    (gpu,), state = nvml_devices()
    assert state.ok
    assert (gpu.driver_version, gpu.cuda_driver_version) == ("550.54.15", "12.4")
    assert (gpu.pcie_gen, gpu.pcie_width, gpu.pci_bus_id) == (5, 16, "00000000:41:00.0")
    assert gpu.nvlink_active_links == 10


def test_a_field_the_gpu_does_not_support_is_none_not_an_error(fake_nvml):
    fake_nvml(power_supported=False)
    sample = read_telemetry(0)
    assert sample.power_draw_w is None and sample.sm_clock_mhz == 1755


def test_a_bad_gpu_index_is_a_status(fake_nvml):
    fake_nvml()
    assert read_telemetry(3).code == status.NVML_ERROR


@pytest.mark.parametrize(
    ("code", "expected"), [(12, status.NO_DRIVER), (9, status.NO_DRIVER), (4, status.NVML_ERROR)]
)
def test_nvml_init_failures_become_explanations(fake_nvml, code, expected):
    fake_nvml(init_error=code)
    result = read_telemetry(0)
    assert isinstance(result, status.Status) and result.code == expected and result.message


def test_this_machine_without_a_driver_reports_no_driver():
    """The real nvidia-ml-py here finds no libnvidia-ml (no NVIDIA driver on CI)."""
    pytest.importorskip("pynvml")
    reset_nvml_cache()
    try:
        result = read_telemetry(0)
        if isinstance(result, TelemetrySample):
            pytest.skip("this machine has an NVIDIA driver")
        assert result.code == status.NO_DRIVER
    finally:
        reset_nvml_cache()


def _cuda_available() -> bool:
    try:
        import torch
    except ImportError:
        return False
    return torch.cuda.is_available()


@pytest.mark.skipif(not _cuda_available(), reason="needs a CUDA GPU")
def test_real_gpu_discovery_links_torch_and_nvml():
    from measure.device import discover

    report = discover()
    assert report.cuda and report.cuda[0].sm_count > 0 and report.cuda[0].l2_cache_bytes
    if report.nvml_status.ok:
        assert report.cuda[0].nvml is not None
        assert isinstance(read_telemetry(report.cuda[0].nvml.index), TelemetrySample)
