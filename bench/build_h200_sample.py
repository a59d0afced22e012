"""Build the shipped H200 sample, measure/samples/h200-sxm-141gb.json, from the run's own file.

Input (the project's measurement notes, ../shared/measured/ beside the repository, 2026-11-27, one
NVIDIA H200 141 GB HBM3e SXM, 132 SMs, 60 MiB L2 as the device reports it, driver 580.159.04,
CUDA 13.0, torch 2.11.0+cu130, 16-core Xeon host):
- h200-sxm-141gb-full.json: `python -m measure --device cuda --json` (full run, 135 records in
  20.7 s) from this suite, pointer chase and decode included. Copied record for record with two
  changes, both what the suite now writes itself: the pointer chase's `cache_hint` relabelled from
  the H200 family's own capacities (measure.views.label_gpu_chase: L1 256 KiB per SM, L2 60 MiB)
  where the run wrote "L2" for every working set up to the L2's size; and the bandwidth points'
  launch-bound marks, notes and hints recomputed by the current rule (measure.launch_bound: within
  2x the launch overhead and within 1.25x the run's fastest call).

Run: python -m bench.build_h200_sample [--measured ../shared/measured] [--out measure/samples/...]
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from measure.launch_bound import eager_launch_overhead_s, floors, launch_bound_fields  # noqa: E402
from measure.results import load_results  # noqa: E402
from measure.views import label_gpu_chase  # noqa: E402

SOURCE_FILE = "h200-sxm-141gb-full.json"
PROVENANCE = (
    "`python -m measure --device cuda --json` (full run, 2026-11-27) on one NVIDIA H200 141 GB HBM3e "
    "SXM (132 SMs, 60 MiB L2 as the device reports it), driver 580.159.04, CUDA 13.0, torch "
    "2.11.0+cu130, 16-core Xeon host; from the project's measurement notes (h200-sxm-141gb-full.json). "
    "Added by bench/build_h200_sample.py: the pointer chase's cache_hint relabelled from the H200 "
    "family's own capacities (the run had labelled its 4-128 KiB L1 hits 'L2') and launch-bound marks "
    "recomputed by measure.launch_bound's current rule."
)


def build(measured: Path) -> dict:
    text = (measured / SOURCE_FILE).read_text(encoding="utf-8")
    raw = json.loads(text)
    results = load_results(text)
    launch_s = eager_launch_overhead_s(results.records)
    if launch_s is None:
        raise SystemExit("the run has no eager launch-overhead record")
    fastest = floors(raw["results"])
    for record in raw["results"]:
        if record["kind"] == "bandwidth":
            record.update(launch_bound_fields(record, launch_s, fastest.get(record["op"])))
    match = (raw.get("device") or {}).get("catalog_match") or {}
    relabelled = label_gpu_chase(results.records, match.get("id"))
    doc = {**raw, "provenance": PROVENANCE}
    for original, record in zip(doc["results"], relabelled, strict=True):
        if record.kind == "latency":
            original["cache_hint"] = record.cache_hint
    load_results(json.dumps(doc))  # still a valid document
    return doc


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--measured", type=Path, default=ROOT.parent / "shared" / "measured")
    parser.add_argument("--out", type=Path, default=ROOT / "measure" / "samples" / "h200-sxm-141gb.json")
    args = parser.parse_args(argv)
    doc = build(args.measured)
    args.out.write_text(json.dumps(doc, indent=1) + "\n", encoding="utf-8")
    print(f"wrote {args.out} ({len(doc['results'])} records)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
