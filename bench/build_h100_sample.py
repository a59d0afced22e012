"""Build the shipped H100 sample, measure/samples/h100-sxm-80gb.json, from the run's own files.

Inputs (the project's measurement notes, ../shared/measured/ beside the repository, 2026-11-23,
one H100 80GB HBM3 SXM, driver 580.159.04, CUDA 13.0, torch 2.11.0+cu130):
- h100-sxm-80gb-full.json: `python -m measure --device cuda --json` (full run) from this suite;
  copied as is, except that its small bandwidth points are marked launch-bound by the suite's
  own rule (measure.launch_bound).
- h100-pointer-chase-ns.json: ns per load per working set from a separate Triton pointer-chase
  script on the same GPU the same day; added as "latency" records.
- h100-decode-llama3-8b.json: decode steps of Llama-3.1-8B (random bf16 weights) from a separate
  script on the same GPU the same day; added as "decode" records. Bytes per step are recomputed
  with simulators.llm_memory (weights read per step + KV cache of the tokens in context), and the
  context each bound used is recovered from the bound it printed; the script checks that the
  recomputed bound equals the printed one.

Run: python -m bench.build_h100_sample [--measured ../shared/measured] [--out measure/samples/...]
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from measure.catalog import load_catalog  # noqa: E402
from measure.decode import datasheet_source  # noqa: E402
from measure.launch_bound import eager_launch_overhead_s, floors, launch_bound_fields  # noqa: E402
from measure.results import load_results  # noqa: E402
from measure.views import chase_capacities, chase_hint, family_for_accelerator  # noqa: E402

KiB = 1024
RUN_DATE = "2026-11-23"
PROVENANCE = f"separate script on the same GPU the same day ({RUN_DATE}), not this suite"
CHASE_METHOD = (
    "Triton pointer chase: one GPU thread walks a random cyclic permutation of 128-byte lines (every load's "
    "address is the previous load's value); 20,000 loads timed with CUDA events after one warm-up walk, "
    "minus a 10-load launch baseline"
)
DECODE_METHODS = {
    "eager": "hand-written greedy loop over a static KV cache (1,024 slots), eager PyTorch; 48 timed steps "
    "after 6 warm-up steps",
    "compiled": 'the same static-cache loop compiled with torch.compile(mode="reduce-overhead") '
    "(CUDA Graphs); 48 timed steps after 6 warm-up steps",
    "eager-dynamic": "transformers model.generate with the default dynamic cache (eager)",
}
MODEL = "Llama-3.1-8B (random bf16 weights, transformers 5.17)"
PROMPT_TOKENS = 512


def _bytes_from_key(key: str) -> int:
    if not key.endswith("KiB"):
        raise ValueError(f"unexpected working-set key {key!r}")
    return int(key.removesuffix("KiB")) * KiB


def latency_records(
    chase: dict[str, float], device: dict[str, Any], accelerator_id: str
) -> list[dict[str, Any]]:
    """One latency record per working set of the separate Triton chase, labelled from the H100
    family's own capacities (L1 256 KiB per SM, near L2 25 MiB, far L2 50 MiB; measure.views)."""
    capacities = chase_capacities(family_for_accelerator(accelerator_id), {"type": "cuda"})
    return [
        {
            "kind": "latency",
            "device": device["device"],
            "device_name": device["name"],
            "torch_version": device["torch_version"],
            "threads": 1,
            "bytes": _bytes_from_key(key),
            "ns": float(ns),
            "loads": 20_000,
            "line_bytes": 128,
            "method": CHASE_METHOD,
            "timer": "cuda_event",
            "cache_hint": chase_hint(_bytes_from_key(key), capacities),
            "source": f"{PROVENANCE}: h100-pointer-chase-ns.json",
            "notes": f"Provenance: {PROVENANCE}; the suite's own latency workload did not exist yet.",
        }
        for key, ns in chase.items()
    ]


def decode_records(
    decode: dict[str, Any], device: dict[str, Any], bandwidth: float, source: str
) -> list[dict]:
    """Decode records, bytes per step recomputed with simulators.llm_memory for Llama-3.1-8B."""
    from simulators import llm_memory, llm_speed
    from simulators.presets import get_model_preset

    spec = get_model_preset("llama-3.1-8b").spec
    per_token_kv = llm_memory.kv_cache_bytes(spec, 1, 1, "bf16")
    records = []
    for group, cache in (
        ("manual_loop_static_cache_prompt512", "static"),
        ("generate_eager_dynamic_cache_prompt512", "dynamic"),
    ):
        for row in decode[group]:
            batch = int(row["batch"])
            weights = llm_speed.weight_bytes_read_per_step(spec, batch, "bf16")
            printed = batch * bandwidth / float(row["bound_tok_s"])
            context = round((printed - weights) / (per_token_kv * batch))
            kv = llm_memory.kv_cache_bytes(spec, context, batch, "bf16")
            bound = batch * bandwidth / (weights + kv)
            if not math.isclose(bound, row["bound_tok_s"], rel_tol=1e-9):
                raise SystemExit(f"bound mismatch for {row}: recomputed {bound}")
            step_s = float(row["step_ms"]) / 1e3
            record = {
                "kind": "decode",
                "device": device["device"],
                "device_name": device["name"],
                "torch_version": device["torch_version"],
                "threads": device.get("threads", 0),
                "mode": "cuda_graph" if row["mode"] == "compiled" else "eager",
                "batch": batch,
                "step_s": step_s,
                "tok_s": float(row["tok_s"]),
                "bound_tok_s": bound,
                "fraction_of_bound": float(row["tok_s"]) / bound,
                "weights_bytes": round(weights),
                "kv_bytes": round(kv),
                "bytes_per_step": round(weights + kv),
                "bound_bandwidth_bytes_per_s": bandwidth,
                "bound_source": source,
                "context_tokens": context,
                "dtype": "bfloat16",
                "model": MODEL,
                "parameters": spec.param_breakdown().total,
                "cache": cache,
                "method": DECODE_METHODS[row["mode"]],
                "steps": 48 if cache == "static" else None,
                "timer": "",
                "source": f"{PROVENANCE}: h100-decode-llama3-8b.json ({group})",
                "notes": (
                    f"Provenance: {PROVENANCE}. Prompt {PROMPT_TOKENS} tokens; bytes per step = weights read "
                    "(simulators.llm_speed.weight_bytes_read_per_step) + KV cache of the "
                    f"{context} tokens in context at mid-run (kv_cache_bytes)."
                ),
            }
            if "warmup_s" in row:
                record["warmup_s"] = float(row["warmup_s"])
            records.append(record)
    return records


def build(measured: Path) -> dict[str, Any]:
    doc = json.loads((measured / "h100-sxm-80gb-full.json").read_text(encoding="utf-8"))
    chase = json.loads((measured / "h100-pointer-chase-ns.json").read_text(encoding="utf-8"))
    decode = json.loads((measured / "h100-decode-llama3-8b.json").read_text(encoding="utf-8"))
    load_results(json.dumps(doc))  # the suite's own file validates as it is
    device = {
        "device": doc["device"]["device"],
        "name": doc["device"]["name"],
        "torch_version": doc["device"]["torch_version"],
        "threads": doc["device"].get("threads", 0),
    }
    launch_s = eager_launch_overhead_s(doc["results"])
    if launch_s is None:
        raise SystemExit("the run has no eager launch-overhead record")
    fastest = floors(doc["results"])
    for record in doc["results"]:
        if record["kind"] == "bandwidth":
            record.update(launch_bound_fields(record, launch_s, fastest.get(record["op"])))
    row = next(r for r in load_catalog() if r["id"] == doc["device"]["catalog_match"]["id"])
    bandwidth = float(row["memory_bw_gbps"]) * 1e9
    latency = latency_records(chase, device, doc["device"]["catalog_match"]["id"])
    decodes = decode_records(decode, device, bandwidth, datasheet_source(row))
    doc["results"] += latency + decodes
    doc["statuses"] += [
        {
            "workload": "latency",
            "ok": True,
            "code": "ok",
            "message": f"{len(latency)} result(s), {PROVENANCE}",
        },
        {
            "workload": "decode",
            "ok": True,
            "code": "ok",
            "message": f"{len(decodes)} result(s), {PROVENANCE}",
        },
    ]
    doc["provenance"] = (
        f"`python -m measure --device cuda --json` (full run, {RUN_DATE}) on one NVIDIA H100 80GB HBM3 SXM "
        "(132 SMs, 50 MiB L2), driver 580.159.04, CUDA 13.0, torch 2.11.0+cu130, 16-core Xeon host. Added by "
        "bench/build_h100_sample.py: latency and decode records from a separate script on the same GPU the "
        "same day (each record's `source` says which); small bandwidth points marked launch-bound by "
        "measure.launch_bound."
    )
    return json.loads(load_results(json.dumps(doc)).to_json())


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--measured", type=Path, default=ROOT.parent / "shared" / "measured")
    parser.add_argument("--out", type=Path, default=ROOT / "measure" / "samples" / "h100-sxm-80gb.json")
    args = parser.parse_args()
    doc = build(args.measured)
    args.out.write_text(json.dumps(doc, indent=1, allow_nan=False) + "\n", encoding="utf-8")
    kinds: dict[str, int] = {}
    for record in doc["results"]:
        kinds[record["kind"]] = kinds.get(record["kind"], 0) + 1
    bound = sum(1 for r in doc["results"] if r.get("launch_bound"))
    print(f"Wrote {args.out}: {kinds}; {bound} bandwidth points launch-bound.")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
