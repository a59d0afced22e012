"""measure/: import hygiene, the 'no torch' and 'no NVML' paths, the lock, hosting, the CLI end to end.

Workloads at tiny sizes are in test_measure_workloads.py, the results file in
test_measure_results.py, device and catalog matching in test_measure_device.py.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from pathlib import Path

import pytest

import measure
from measure import lock, status
from measure.device import discover, reset_nvml_cache
from measure.env import is_hosted
from measure.results import load_results
from measure.workloads import bandwidth, matmul

ROOT = Path(__file__).resolve().parent.parent
MEASURE_MODULES = sorted(
    "measure." + p.stem for p in (ROOT / "measure").glob("*.py") if p.stem not in {"__init__", "__main__"}
)


@pytest.fixture(autouse=True)
def _private_lock_file(tmp_path, monkeypatch):
    """Each test gets its own lock file, so parallel test processes never see each other as busy."""
    monkeypatch.setenv(lock.LOCK_FILE_ENV, str(tmp_path / "measure.lock"))


def _env(tmp_path: Path) -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = str(ROOT)
    env[lock.LOCK_FILE_ENV] = str(tmp_path / "measure.lock")
    return env


def _python(code: str, tmp_path: Path, timeout: int = 120) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", code],
        cwd=ROOT,
        env=_env(tmp_path),
        capture_output=True,
        text=True,
        timeout=timeout,
    )


# --- import hygiene ------------------------------------------------------------------------------


def test_importing_every_measure_module_loads_no_torch_nvml_or_psutil(tmp_path):
    """Pages import measure/ at start-up and the hosted app has no torch (issue 6)."""
    code = (
        "import importlib, sys\n"
        f"for name in ['measure', *{MEASURE_MODULES!r}]:\n"
        "    importlib.import_module(name)\n"
        "print(sorted(m for m in ('torch', 'pynvml', 'psutil') if m in sys.modules))\n"
    )
    result = _python(code, tmp_path)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "[]"


# --- no torch ------------------------------------------------------------------------------------


def test_without_torch_discovery_explains_what_to_install(monkeypatch):
    monkeypatch.setitem(sys.modules, "torch", None)  # `import torch` now raises ImportError
    report = discover(include_nvml=False)
    assert report.torch_status.code == status.NO_TORCH
    assert "pip install -r requirements-measure.txt" in report.torch_status.install_hint
    assert report.devices() == [] and report.cpu.logical_cores >= 1


def test_without_torch_a_workload_returns_a_status_instead_of_raising(monkeypatch):
    monkeypatch.setitem(sys.modules, "torch", None)
    outcome = bandwidth("cpu", sizes_bytes=[4096])
    assert (outcome.ok, outcome.status.code, outcome.records) == (False, status.NO_TORCH, ())


def test_cli_without_torch_prints_the_fix_and_no_traceback(tmp_path):
    code = (
        "import sys; sys.modules['torch'] = None\n"
        "from measure.cli import main\n"
        "raise SystemExit(main(['--quick']))\n"
    )
    result = _python(code, tmp_path)
    assert result.returncode == 1
    assert "pip install -r requirements-measure.txt" in result.stdout
    assert "Traceback" not in result.stdout + result.stderr


def test_asking_for_cuda_on_a_cpu_only_torch_explains_why(tmp_path):
    torch = pytest.importorskip("torch")
    if torch.cuda.is_available():
        pytest.skip("this machine has a CUDA GPU")
    outcome = matmul("cuda", shapes=[(8, 8, 8)], dtypes=["float32"])
    assert outcome.status.code == status.NO_GPU
    assert "CUDA" in outcome.status.install_hint


# --- no NVML -------------------------------------------------------------------------------------


@pytest.fixture
def fresh_nvml():
    reset_nvml_cache()
    yield
    reset_nvml_cache()


def test_without_nvidia_ml_py_telemetry_says_what_to_install(monkeypatch, fresh_nvml):
    monkeypatch.setitem(sys.modules, "pynvml", None)
    sample = measure.read_telemetry(0)
    assert isinstance(sample, status.Status)
    assert (sample.code, "nvidia-ml-py" in sample.install_hint) == (status.NO_NVML, True)


def test_discovery_reports_the_nvml_status_instead_of_raising(monkeypatch, fresh_nvml):
    monkeypatch.setitem(sys.modules, "pynvml", None)
    report = discover()
    assert report.nvml_status.code == status.NO_NVML and report.nvml == ()


# --- the lock ------------------------------------------------------------------------------------


def test_a_second_session_sees_busy_while_a_measurement_runs():
    assert lock.try_acquire("bandwidth")
    try:
        seen: list[object] = []
        other = threading.Thread(target=lambda: seen.append(bandwidth("cpu", sizes_bytes=[4096])))
        other.start()
        other.join()
        assert seen[0].status.code == status.BUSY
        assert lock.busy_info()["label"] == "bandwidth"
    finally:
        lock.release()
    assert lock.busy_info() is None


def test_the_holder_may_nest_workloads_inside_its_own_slot():
    with lock.measurement_slot("suite") as got:
        assert got
        outcome = bandwidth("cpu", ops=("copy",), sizes_bytes=[4096], repeats=2)
        assert outcome.ok, outcome.status
    assert lock.try_acquire("again")
    lock.release()


def test_another_process_sees_the_server_busy(tmp_path):
    with lock.measurement_slot("matmul") as got:
        assert got
        code = (
            "from measure.lock import try_acquire, busy_info\nprint(try_acquire('x'), busy_info()['label'])"
        )
        result = _python(code, tmp_path)
    assert result.stdout.split() == ["False", "matmul"], result.stderr


# --- hosting -------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("env", "expected"),
    [
        ({"GPU_FIELD_GUIDE_HOSTED": "1"}, True),
        ({"GPU_FIELD_GUIDE_HOSTED": "0", "HOSTNAME": "streamlit"}, False),
        ({"HOSTNAME": "streamlit"}, True),
        ({}, False),
    ],
)
def test_is_hosted(monkeypatch, env, expected):
    for name in ("GPU_FIELD_GUIDE_HOSTED", "HOSTNAME"):
        monkeypatch.delenv(name, raising=False)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    assert is_hosted() is expected


# --- CLI end to end ------------------------------------------------------------------------------


def test_cli_quick_cpu_run_writes_a_schema_1_file_the_app_loads(tmp_path):
    """`python -m measure --device cpu --quick --json FILE` (issue 6, item 4), with latency and decode
    records and launch-bound small bandwidth points (issue 12)."""
    out = tmp_path / "results.json"
    result = subprocess.run(
        [sys.executable, "-m", "measure", "--device", "cpu", "--quick", "--json", str(out)],
        cwd=ROOT,
        env=_env(tmp_path),
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "Traceback" not in result.stdout + result.stderr
    doc = json.loads(out.read_text())
    assert doc["schema"] == 1 and doc["device"]["type"] == "cpu"
    kinds = {r["kind"] for r in doc["results"]}
    assert {
        "bandwidth",
        "latency",
        "matmul",
        "allreduce",
        "launch_overhead",
        "decode",
        "quantization",
        "transformer_memory",
    } <= kinds
    for r in doc["results"]:
        if r["kind"] == "bandwidth":
            assert r["op"] in {"copy", "triad"} and isinstance(r["bytes"], int) and r["gb_per_s"] > 0
        if r["kind"] == "matmul":
            assert isinstance(r["m"], int) and r["tflops"] > 0 and r["dtype"] in {"float32", "bfloat16"}
    loaded = load_results(out.read_bytes())
    assert len(loaded.records) == len(doc["results"])
    assert "Memory bandwidth" in result.stdout and "All-reduce" in result.stdout
    assert "Latency (pointer chase" in result.stdout and "Decode (" in result.stdout
    small = next(r for r in doc["results"] if r["kind"] == "bandwidth" and r["bytes"] == 4096)
    assert small["launch_bound"] is True and small["cache_hint"] == "launch-bound"  # issue 12


def test_cli_table_aligns_columns_and_sizes_read_in_binary_units():
    from measure.cli import format_table, human_bytes

    table = format_table(["op", "GB/s"], [["copy", "5.0"], ["triad", "123.4"]])
    assert table.splitlines() == ["op      GB/s", "-----  -----", "copy     5.0", "triad  123.4"]
    assert [human_bytes(b) for b in (4096, 3 * 4 * 2**26, 1023 * 1024)] == ["4 KiB", "768 MiB", "1023 KiB"]
