"""Structured outcomes for everything in measure/: a status the page can print, never a traceback.

Every public function in measure/ either returns its result or a `Status` saying, in words a
reader can act on, what is missing and what to install. Nothing here imports torch or pynvml.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

INSTALL_MEASURE = "pip install -r requirements-measure.txt"
INSTALL_TORCH_CUDA = (
    "Install a CUDA build of PyTorch that matches your driver (see pytorch.org/get-started/locally), "
    "then `pip install -r requirements-measure.txt` for the rest."
)
INSTALL_NVML = "pip install nvidia-ml-py (it is in requirements-measure.txt)"

# Status codes. The page switches on these; the message is what it shows.
OK = "ok"
NO_TORCH = "no_torch"
NO_GPU = "no_gpu"
NO_DRIVER = "no_driver"
NO_NVML = "no_nvml"
NVML_ERROR = "nvml_error"
OOM = "oom"
BUSY = "busy"
CANCELLED = "cancelled"
UNSUPPORTED = "unsupported"
TIMEOUT = "timeout"
NO_COMPILER = "no_compiler"
ERROR = "error"


@dataclass(frozen=True)
class Status:
    """What happened, in words: `ok`, a machine-readable `code`, a `message` for the reader,
    an `install_hint` (what to install or do), and the raw exception text in `detail`."""

    ok: bool
    code: str
    message: str
    install_hint: str = ""
    detail: str = ""

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    def __str__(self) -> str:
        parts = [self.message]
        if self.install_hint:
            parts.append(f"Fix: {self.install_hint}")
        if self.detail:
            parts.append(f"({self.detail})")
        return " ".join(parts)


def ok(message: str = "ok") -> Status:
    return Status(True, OK, message)


def no_torch(exc: BaseException | None = None) -> Status:
    return Status(
        False,
        NO_TORCH,
        "PyTorch is not installed here, so nothing can be measured. The hosted app has no torch on "
        "purpose: run the app or `python -m measure` on your own machine to measure it.",
        INSTALL_MEASURE,
        _detail(exc),
    )


def no_gpu(device: str, explanation: str, exc: BaseException | None = None) -> Status:
    hint = INSTALL_TORCH_CUDA if device.startswith("cuda") else "Use --device cpu, or run on a Mac for mps."
    return Status(False, NO_GPU, explanation, hint, _detail(exc))


def oom(what: str, exc: BaseException | None = None) -> Status:
    return Status(
        False,
        OOM,
        f"Out of memory while running {what}: the device could not allocate the buffers the next size "
        "needs. Results finished before that are kept. Close other programs using the device or choose "
        "smaller sizes.",
        "Try --quick, or free device memory (other processes, notebooks).",
        _detail(exc),
    )


def busy(holder: str = "") -> Status:
    who = f" ({holder})" if holder else ""
    return Status(
        False,
        BUSY,
        f"Another measurement is running on this server{who}. One runs at a time so they do not disturb "
        "each other's timings; try again when it finishes.",
    )


def cancelled(what: str) -> Status:
    return Status(False, CANCELLED, f"{what} was cancelled; results up to that point are kept.")


def unsupported(message: str, hint: str = "") -> Status:
    return Status(False, UNSUPPORTED, message, hint)


def no_compiler(what: str) -> Status:
    """No C compiler on PATH: `what` (a small C program) cannot be built here."""
    return Status(
        False,
        NO_COMPILER,
        f"{what} is a small C program compiled on this machine, and no C compiler (cc, gcc or clang) "
        "was found, so it was skipped. Everything else still runs.",
        "Install one: `sudo apt install gcc` (Debian/Ubuntu), `xcode-select --install` (macOS), "
        "or set CC to a compiler's path.",
    )


def error(what: str, exc: BaseException) -> Status:
    return Status(
        False,
        ERROR,
        f"{what} failed with an unexpected error. The rest of the suite carries on.",
        "If this repeats, please report it with the detail below.",
        _detail(exc),
    )


def _detail(exc: BaseException | None) -> str:
    if exc is None:
        return ""
    text = f"{type(exc).__name__}: {exc}"
    return text if len(text) <= 500 else text[:497] + "..."


@dataclass(frozen=True)
class Outcome:
    """A workload's answer: the records it measured (possibly partial) and a status.

    `status.ok` is False when the workload could not run at all (no torch, busy) or stopped early
    (cancelled, out of memory); `records` then holds whatever finished before that.
    """

    records: tuple[Any, ...] = ()
    status: Status = field(default_factory=ok)

    @property
    def ok(self) -> bool:
        return self.status.ok
