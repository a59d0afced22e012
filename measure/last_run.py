"""The last finished run of the suite on this server, kept on disk so a reload of the page finds it.

A run measures the server's own hardware, so it belongs to the machine, not to one browser
session: the Your hardware page writes the finished document here and offers it again after a
reload (Streamlit starts a new session then, and session state is gone). One file,
``<GFG_DATA_DIR>/measure/last-run.json`` (default ``.data/``, as the class store's), replaced
atomically; read back through ``measure.results.load_results`` like an upload. Imports no torch.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from measure.results import load_results

DEFAULT_DATA_DIR = Path(__file__).resolve().parent.parent / ".data"
FILE_NAME = "last-run.json"


def last_run_path() -> Path:
    """Where the last run is kept: ``$GFG_DATA_DIR/measure/last-run.json``."""
    return Path(os.environ.get("GFG_DATA_DIR") or DEFAULT_DATA_DIR) / "measure" / FILE_NAME


def save_last_run(document: dict[str, Any]) -> Path | None:
    """Write ``document`` (a results document) as the last run; None when the disk refuses."""
    path = last_run_path()
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        partial = path.with_suffix(".json.partial")
        partial.write_text(json.dumps(document), encoding="utf-8")
        partial.replace(path)  # a reader never sees half a file
    except OSError:
        return None
    return path


def load_last_run() -> dict[str, Any] | None:
    """The last run, validated, as a plain document; None when there is none or it is unreadable."""
    path = last_run_path()
    try:
        text = path.read_text(encoding="utf-8")
        return json.loads(load_results(text).to_json())
    except (OSError, ValueError):
        return None
