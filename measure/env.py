"""Facts about the machine that need no torch: hosting, the CPU and its caches, free memory.

Nothing here imports torch or pynvml. psutil is used when it happens to be installed, imported
inside the function; without it Linux's /proc and /sys (and `sysctl` on macOS) answer.
"""

from __future__ import annotations

import os
import platform
import re
import subprocess
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

HOSTED_ENV = "GPU_FIELD_GUIDE_HOSTED"


def is_hosted() -> bool:
    """True when the app runs on a shared host (Streamlit Community Cloud), not the reader's machine.

    Order: `GPU_FIELD_GUIDE_HOSTED` ("1"/"true" or "0"/"false") wins when set; otherwise two
    markers that public Community Cloud apps rely on, neither documented by Streamlit:
    the repository is checked out under /mount/src/ (visible in Community Cloud's own deploy
    log, github.com/streamlit/streamlit/issues/8414) and `HOSTNAME` is "streamlit".
    """
    override = os.environ.get(HOSTED_ENV, "").strip().lower()
    if override in {"1", "true", "yes", "on"}:
        return True
    if override in {"0", "false", "no", "off"}:
        return False
    if os.environ.get("HOSTNAME") == "streamlit":
        return True
    here = Path(__file__).resolve().as_posix()
    return here.startswith("/mount/src/") or Path.cwd().as_posix().startswith("/mount/src/")


HOSTED_NOTICE = (
    "This app is running on a shared server, so these measurements describe that server, "
    "not the computer you are reading this on. To measure your own machine, run "
    "`pip install -r requirements-measure.txt` and `python -m measure`, then upload the JSON here."
)


def available_memory_bytes() -> int | None:
    """Memory the OS could give a new allocation now (bytes), or None when unknown.

    psutil's `virtual_memory().available` if psutil is installed, else MemAvailable from
    /proc/meminfo (Linux), else None.
    """
    try:
        import psutil

        return int(psutil.virtual_memory().available)
    except Exception:
        pass
    try:
        with open("/proc/meminfo", encoding="ascii") as handle:
            for line in handle:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    return None


def total_memory_bytes() -> int | None:
    """Installed memory (bytes), or None when unknown."""
    try:
        import psutil

        return int(psutil.virtual_memory().total)
    except Exception:
        pass
    try:
        return int(os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES"))
    except (ValueError, OSError, AttributeError):
        return None


@dataclass(frozen=True)
class CacheLevel:
    """One CPU cache: level 1-3, type ("Data", "Instruction", "Unified"), size of one instance in
    bytes, and how many logical CPUs share one instance (1 for a private cache)."""

    level: int
    type: str
    size_bytes: int
    shared_by_cpus: int = 1


@dataclass(frozen=True)
class CpuInfo:
    model: str
    architecture: str
    logical_cores: int
    physical_cores: int | None
    caches: tuple[CacheLevel, ...] = ()
    memory_total_bytes: int | None = None
    memory_available_bytes: int | None = None
    os: str = ""
    notes: tuple[str, ...] = field(default_factory=tuple)

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["caches"] = [asdict(c) for c in self.caches]
        data["notes"] = list(self.notes)
        return data

    def data_caches(self) -> list[CacheLevel]:
        """Data and unified caches, smallest level first (what a bandwidth sweep can see)."""
        return sorted((c for c in self.caches if c.type != "Instruction"), key=lambda c: c.level)


_SIZE_RE = re.compile(r"^\s*(\d+)\s*([KMG]?)", re.IGNORECASE)


def _parse_size(text: str) -> int | None:
    match = _SIZE_RE.match(text)
    if not match:
        return None
    scale = {"": 1, "K": 1024, "M": 1024**2, "G": 1024**3}[match.group(2).upper()]
    return int(match.group(1)) * scale


def _count_cpu_list(text: str) -> int:
    """Number of CPUs in a Linux cpu list such as "0-3,8"."""
    total = 0
    for part in text.strip().split(","):
        if not part:
            continue
        if "-" in part:
            lo, hi = part.split("-", 1)
            total += int(hi) - int(lo) + 1
        else:
            total += 1
    return max(total, 1)


def _linux_caches(root: Path = Path("/sys/devices/system/cpu/cpu0/cache")) -> list[CacheLevel]:
    caches = []
    for index in sorted(root.glob("index*")):
        try:
            level = int((index / "level").read_text())
            kind = (index / "type").read_text().strip()
            size = _parse_size((index / "size").read_text())
            shared = index / "shared_cpu_list"
            shared_by = _count_cpu_list(shared.read_text()) if shared.exists() else 1
        except (OSError, ValueError):
            continue
        if size:
            caches.append(CacheLevel(level, kind, size, shared_by))
    return caches


def _sysctl(name: str) -> str | None:
    try:
        out = subprocess.run(["sysctl", "-n", name], capture_output=True, text=True, timeout=2, check=False)
    except (OSError, subprocess.SubprocessError):
        return None
    if out.returncode != 0:
        return None
    return out.stdout.strip() or None


def _linux_model() -> str | None:
    try:
        with open("/proc/cpuinfo", encoding="utf-8", errors="replace") as handle:
            for line in handle:
                if line.lower().startswith(("model name", "hardware", "cpu model")):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return None


def _linux_physical_cores() -> int | None:
    try:
        seen = set()
        phys = core = None
        with open("/proc/cpuinfo", encoding="utf-8", errors="replace") as handle:
            for line in handle:
                if line.startswith("physical id"):
                    phys = line.split(":", 1)[1].strip()
                elif line.startswith("core id"):
                    core = line.split(":", 1)[1].strip()
                elif not line.strip():
                    if core is not None:
                        seen.add((phys, core))
                    phys = core = None
        if core is not None:
            seen.add((phys, core))
        return len(seen) or None
    except OSError:
        return None


def cpu_info() -> CpuInfo:
    """Model, core counts, caches and memory of this CPU, from whatever the OS offers.

    Linux: /proc/cpuinfo and /sys/devices/system/cpu/cpu0/cache (sizes per instance, with the
    number of CPUs sharing each). macOS: sysctl machdep.cpu.brand_string, hw.physicalcpu and
    hw.l1dcachesize/hw.l2cachesize/hw.l3cachesize (a shared/private split is not reported there).
    Missing facts are None or empty, never an exception.
    """
    notes: list[str] = []
    system = platform.system()
    logical = os.cpu_count() or 1
    model = None
    physical = None
    caches: list[CacheLevel] = []
    if system == "Linux":
        model = _linux_model()
        physical = _linux_physical_cores()
        caches = _linux_caches()
    elif system == "Darwin":
        model = _sysctl("machdep.cpu.brand_string")
        phys_text = _sysctl("hw.physicalcpu")
        physical = int(phys_text) if phys_text and phys_text.isdigit() else None
        for level, key in ((1, "hw.l1dcachesize"), (2, "hw.l2cachesize"), (3, "hw.l3cachesize")):
            value = _sysctl(key)
            if value and value.isdigit() and int(value) > 0:
                caches.append(CacheLevel(level, "Data" if level == 1 else "Unified", int(value), 1))
        if caches:
            notes.append("macOS reports cache sizes without saying which are shared.")
    if not model:
        model = platform.processor() or platform.machine() or "unknown CPU"
    if not caches:
        notes.append("Cache sizes are not available on this system.")
    return CpuInfo(
        model=model,
        architecture=platform.machine(),
        logical_cores=logical,
        physical_cores=physical,
        caches=tuple(caches),
        memory_total_bytes=total_memory_bytes(),
        memory_available_bytes=available_memory_bytes(),
        os=f"{system} {platform.release()}".strip(),
        notes=tuple(notes),
    )


def cache_level_for(working_set_bytes: int, cpu: CpuInfo, threads: int) -> str:
    """The smallest CPU cache level that holds `working_set_bytes`, else "DRAM".

    A private cache (shared by one CPU) counts once per thread in use, since each thread streams
    its own slice; a shared cache counts once. This is a label for the plot, not a model.
    """
    for cache in cpu.data_caches():
        instances = max(1, min(threads, cpu.logical_cores) // max(cache.shared_by_cpus, 1))
        if working_set_bytes <= cache.size_bytes * instances:
            return f"L{cache.level}"
    return "DRAM"
