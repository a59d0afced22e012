"""The throttled full garbage collection that replaces Streamlit's collection after every run."""

from __future__ import annotations

import gc

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
