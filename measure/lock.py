"""One measurement at a time per server.

Two measurements at once disturb each other's timings (they share memory bandwidth, cores and
the GPU), and on a shared server one visitor's run would spoil another's. So every workload
takes this lock; a second caller is told "busy" instead of waiting.

Two layers: a thread lock for the sessions of one Streamlit server (they are threads of one
process), and an advisory file lock (`fcntl.flock`) so a `python -m measure` run in another
process on the same machine sees the server as busy too. Set `GPU_FIELD_GUIDE_LOCK_FILE` to
move the lock file (tests give each test its own). The holder's thread may take the lock again
(nested workloads inside the suite); the file lock is taken once.
"""

from __future__ import annotations

import json
import os
import tempfile
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO, Any

LOCK_FILE_ENV = "GPU_FIELD_GUIDE_LOCK_FILE"

_state_lock = threading.Lock()
_owner_thread: int | None = None
_depth = 0
_file: IO[str] | None = None
_label = ""
_since_s = 0.0


def lock_path() -> Path:
    """Where the cross-process lock file lives (env override, else the system temp dir)."""
    override = os.environ.get(LOCK_FILE_ENV)
    if override:
        return Path(override)
    return Path(tempfile.gettempdir()) / "gpu-field-guide-measure.lock"


def _lock_file() -> IO[str] | None:
    """Open and flock the lock file; None when another process holds it.

    Platforms without fcntl (Windows) get the thread lock only.
    """
    try:
        import fcntl
    except ImportError:
        return _NullFile()  # type: ignore[return-value]
    path = lock_path()
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        handle = open(path, "a+", encoding="utf-8")  # noqa: SIM115 - held open while locked
    except OSError:
        return _NullFile()  # type: ignore[return-value]
    try:
        fcntl.flock(handle.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        handle.close()
        return None
    return handle


class _NullFile:
    def seek(self, *_: Any) -> None: ...
    def truncate(self, *_: Any) -> None: ...
    def write(self, *_: Any) -> None: ...
    def flush(self) -> None: ...
    def close(self) -> None: ...


def try_acquire(label: str = "measurement") -> bool:
    """Take the measurement lock without waiting. True if this caller now holds it.

    The thread that holds it may call again (the depth is counted); each success needs a
    matching `release()`.
    """
    global _owner_thread, _depth, _file, _label, _since_s
    me = threading.get_ident()
    with _state_lock:
        if _depth > 0:
            if _owner_thread == me:
                _depth += 1
                return True
            return False
        handle = _lock_file()
        if handle is None:
            return False
        try:
            handle.seek(0)
            handle.truncate()
            handle.write(json.dumps({"pid": os.getpid(), "label": label, "since": time.time()}))
            handle.flush()
        except OSError:
            pass
        _file, _owner_thread, _depth, _label, _since_s = handle, me, 1, label, time.time()
        return True


def release() -> None:
    """Give the lock back (one level of nesting). Releasing when nothing is held does nothing."""
    global _owner_thread, _depth, _file, _label
    with _state_lock:
        if _depth == 0:
            return
        _depth -= 1
        if _depth > 0:
            return
        handle, _file, _owner_thread, _label = _file, None, None, ""
        if handle is not None:
            try:
                import fcntl

                fcntl.flock(handle.fileno(), fcntl.LOCK_UN)
            except (ImportError, OSError, AttributeError):
                pass
            handle.close()


def busy_info() -> dict[str, Any] | None:
    """Who holds the lock: {"label", "pid", "since", "held_s"} or None when it is free.

    Cheap enough for the page to call on every rerun. Reads the lock file written by the holder,
    which may be another process.
    """
    with _state_lock:
        if _depth > 0:
            return {"label": _label, "pid": os.getpid(), "since": _since_s, "held_s": time.time() - _since_s}
    handle = _lock_file()
    if handle is not None:
        # Free: we just took it, so give it straight back.
        try:
            import fcntl

            fcntl.flock(handle.fileno(), fcntl.LOCK_UN)
        except (ImportError, OSError, AttributeError):
            pass
        handle.close()
        return None
    try:
        info = json.loads(lock_path().read_text(encoding="utf-8") or "{}")
    except (OSError, ValueError):
        info = {}
    since = float(info.get("since", time.time()))
    return {
        "label": str(info.get("label", "measurement")),
        "pid": info.get("pid"),
        "since": since,
        "held_s": time.time() - since,
    }


@contextmanager
def measurement_slot(label: str = "measurement") -> Iterator[bool]:
    """`with measurement_slot("bandwidth") as got:` — `got` is False when the server is busy."""
    got = try_acquire(label)
    try:
        yield got
    finally:
        if got:
            release()
