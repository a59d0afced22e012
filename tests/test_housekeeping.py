"""The throttled full garbage collection that replaces Streamlit's collection after every run."""

from __future__ import annotations

import gc
import subprocess
import sys
from pathlib import Path

import pytest

from ui import housekeeping


def test_collects_at_most_once_per_interval(monkeypatch):
    calls = []
    monkeypatch.setattr(gc, "collect", lambda generation=2: calls.append(generation) or 0)
    clock = iter([100.0, 100.5, 101.9, 102.1])
    monkeypatch.setattr(housekeeping.time, "monotonic", lambda: next(clock))
    monkeypatch.setattr(housekeeping, "_last", [0.0])
    ran = [housekeeping.collect_now_and_then(2.0) for _ in range(4)]
    assert ran == [True, False, False, True]  # 100.0 runs; 100.5 and 101.9 are within 2 s; 102.1 runs
    assert calls == [2, 2]  # full collections (generation 2) only


def test_the_config_turns_off_the_collection_after_every_run():
    import tomllib
    from pathlib import Path

    config = tomllib.loads(
        (Path(__file__).resolve().parent.parent / ".streamlit" / "config.toml").read_text()
    )
    assert config["runner"]["postScriptGC"] is False
    assert config["runner"]["magicEnabled"] is False
    assert config["server"]["fileWatcherType"] == "none"


def _run(code: str) -> str:
    root = Path(__file__).resolve().parent.parent
    return subprocess.run(
        [sys.executable, "-c", code], cwd=root, capture_output=True, text=True, check=True, timeout=300
    ).stdout


# A large block freed, then one of the same size: unpinned, glibc serves the second from its heap
# (the threshold rose to the first's size) and keeps it resident after it is freed.
_LARGE_BLOCK_RSS = """
import sys
sys.path.insert(0, ".")
TUNE
def rss_kib():
    for line in open("/proc/self/status"):
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
block = bytearray(b"x") * (4 << 20)
del block
before = rss_kib()
block = bytearray(b"x") * (4 << 20)
del block
print(rss_kib() - before)
"""


def test_a_freed_large_block_goes_back_to_the_system():
    if not housekeeping.tune_malloc():
        pytest.skip("not glibc: mallopt is glibc's")
    tuned = int(_run(_LARGE_BLOCK_RSS.replace("TUNE", "import ui.housekeeping")))
    untuned = int(_run(_LARGE_BLOCK_RSS.replace("TUNE", "")))
    assert tuned < 512  # KiB: the 4 MiB block was unmapped when freed
    assert untuned > 2048  # the same program without the pin keeps it: the test can tell


def test_release_free_memory_calls_malloc_trim():
    assert housekeeping.release_free_memory() is (housekeeping._malloc_trim is not None)


def test_the_lessons_answer_reader_does_not_load_the_class_store():
    out = _run(
        "import sys; import classroom.numbers; a = 'sqlalchemy' in sys.modules\n"
        "from classroom import Store, open_store, deliver\n"
        "print(a, 'sqlalchemy' in sys.modules, Store.__module__, deliver.__module__)"
    )
    assert out.split() == ["False", "True", "classroom.store", "classroom.ballot"]
