"""Result files shipped with the app (`measure/samples/*.json`): real runs, each labelled by the
machine it measured, so a server without a GPU still has real points to draw. README.md here
says where each file comes from. Reading them imports no torch.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from measure.results import load_results

SAMPLES_DIR = Path(__file__).resolve().parent
# The runs the pages quote when the reader has loaded none (README.md here: how each was taken).
H100_SAMPLE = "h100-sxm-80gb.json"  # one H100 80GB HBM3 SXM
CPU_SAMPLE = "cpu-intel-xeon-2vcpu.json"  # the development machine, with latency and decode records


@dataclass(frozen=True)
class Sample:
    """One shipped results file: `name` is its file name; `device_type` "cpu", "cuda" or "mps";
    `created_utc` the run's timestamp (ISO 8601); `label` a one-line description for a picker."""

    name: str
    device_name: str
    device_type: str
    created_utc: str
    label: str
    record_count: int
    kinds: tuple[str, ...]


def _describe(name: str, doc: dict[str, Any]) -> Sample:
    device = doc.get("device") or {}
    device_name = str(device.get("name") or device.get("device") or "unknown device")
    device_type = str(device.get("type") or "")
    created = str(doc.get("created_utc") or "")
    results = doc.get("results") or []
    kinds = tuple(sorted({str(r.get("kind")) for r in results if isinstance(r, dict)}))
    run = "quick run" if doc.get("quick") else "full run"
    kind_word = {"cpu": "CPU", "cuda": "GPU", "mps": "Apple GPU"}.get(device_type, device_type or "device")
    label = f"{device_name} ({kind_word}), {run} of {created[:10] or 'unknown date'}, {len(results)} results"
    return Sample(
        name=name,
        device_name=device_name,
        device_type=device_type,
        created_utc=created,
        label=label,
        record_count=len(results),
        kinds=kinds,
    )


def list_samples(directory: Path | str | None = None) -> list[Sample]:
    """Every `*.json` file in measure/samples/ (or `directory`), sorted by file name.

    Reads each file's JSON (not validated here: `load_sample` validates); a file that is not a
    JSON object raises ValueError naming it, so a broken sample fails a test instead of vanishing.
    """
    folder = Path(directory) if directory is not None else SAMPLES_DIR
    samples = []
    for path in sorted(folder.glob("*.json")):
        try:
            doc = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            raise ValueError(f"sample {path.name}: {exc}") from exc
        if not isinstance(doc, dict):
            raise ValueError(f"sample {path.name}: not a JSON object")
        samples.append(_describe(path.name, doc))
    return samples


def load_sample(name: str, directory: Path | str | None = None) -> dict[str, Any]:
    """The sample file `name` (e.g. "h100-sxm-80gb.json"), validated by measure.results.load_results
    and returned as the plain JSON document the app keeps in session state.

    Raises ValueError for a name that is not a shipped sample (no paths) or an invalid file.
    """
    folder = Path(directory) if directory is not None else SAMPLES_DIR
    if Path(name).name != name or not name.endswith(".json"):
        raise ValueError(f"{name!r} is not a sample file name")
    path = folder / name
    if not path.is_file():
        known = ", ".join(s.name for s in list_samples(folder))
        raise ValueError(f"no sample {name!r}; the samples are: {known}")
    return json.loads(load_results(path.read_bytes()).to_json())
