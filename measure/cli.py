"""`python -m measure [--device cpu|cuda|mps|auto] [--quick] [--json FILE]`: run the suite, print
a table, write the versioned JSON the app can load."""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from measure import status as st
from measure.env import HOSTED_NOTICE, is_hosted
from measure.results import Results, record_kind


def human_bytes(n: float) -> str:
    """Binary units (KiB, MiB, GiB), as working sets are powers of two."""
    for unit, scale in (("GiB", 1024**3), ("MiB", 1024**2), ("KiB", 1024)):
        if n >= scale:
            value = n / scale
            return f"{value:.4g} {unit}" if value >= 100 else f"{value:.3g} {unit}"
    return f"{n:.0f} B"


def human_seconds(s: float) -> str:
    if s >= 1:
        return f"{s:.3g} s"
    if s >= 1e-3:
        return f"{s * 1e3:.3g} ms"
    if s >= 1e-6:
        return f"{s * 1e6:.3g} us"
    return f"{s * 1e9:.3g} ns"


def format_table(headers: Sequence[str], rows: Sequence[Sequence[str]], right: set[int] | None = None) -> str:
    """Aligned plain-text table; columns in `right` are right-aligned (numbers)."""
    right = right if right is not None else set(range(1, len(headers)))
    widths = [
        max(len(str(h)), *(len(str(r[i])) for r in rows)) if rows else len(h) for i, h in enumerate(headers)
    ]

    def line(cells: Sequence[str]) -> str:
        return "  ".join(
            str(c).rjust(widths[i]) if i in right else str(c).ljust(widths[i]) for i, c in enumerate(cells)
        ).rstrip()

    return "\n".join([line(headers), line(["-" * w for w in widths]), *(line(r) for r in rows)])


def _spread(a: float, b: float, fmt: str = "{:.3g}") -> str:
    lo, hi = sorted((a, b))
    return f"{fmt.format(lo)}-{fmt.format(hi)}"


def tables(results: Results) -> str:
    """All record kinds as aligned tables, in suite order."""
    out: list[str] = []
    recs = [r.to_dict() for r in results.records]

    def section(title: str, kind: str, headers: list[str], row: Any) -> None:
        rows = [row(r) for r in recs if r["kind"] == kind]
        if rows:
            out.append(f"\n{title}\n" + format_table(headers, rows))

    section(
        "Memory bandwidth (STREAM counting: copy 2, triad 3 words/element; warm cache)",
        "bandwidth",
        ["op", "working set", "fits in", "GB/s (median)", "p10-p90 GB/s", "best GB/s"],
        lambda r: [
            r["op"],
            human_bytes(r["bytes"]),
            r.get("cache_hint", ""),
            f"{r['gb_per_s']:.1f}",
            _spread(r["bytes"] / r["p90_s"] / 1e9, r["bytes"] / r["p10_s"] / 1e9, "{:.1f}"),
            f"{r['best_gb_per_s']:.1f}",
        ],
    )
    section(
        "Latency (pointer chase: one dependent load at a time over a random cycle of lines)",
        "latency",
        ["working set", "fits in", "ns per load", "p10-p90 ns", "line", "loads/sample"],
        lambda r: [
            human_bytes(r["bytes"]),
            r.get("cache_hint", ""),
            f"{r['ns']:.3g}",
            "" if r.get("p10_ns") is None else _spread(r["p10_ns"], r["p90_ns"]),
            f"{r.get('line_bytes', '')} B",
            f"{r['loads']:,}",
        ],
    )
    section(
        "Matmul (flops = 2mnk; FLOP/byte with each matrix moved once)",
        "matmul",
        ["dtype", "m x n x k", "shape", "TFLOP/s", "p10-p90", "FLOP/byte"],
        lambda r: [
            r["dtype"],
            f"{r['m']}x{r['n']}x{r['k']}",
            r.get("shape", ""),
            f"{r['tflops']:.3g}",
            _spread(r["flops"] / r["p90_s"] / 1e12, r["flops"] / r["p10_s"] / 1e12),
            f"{r['intensity_flop_per_byte']:.3g}",
        ],
    )
    section(
        "Host <-> device copies",
        "host_device_copy",
        ["direction", "host memory", "size", "GB/s (median)", "p10-p90 GB/s"],
        lambda r: [
            r["direction"],
            r["host_memory"],
            human_bytes(r["bytes"]),
            f"{r['gb_per_s']:.2f}",
            _spread(r["bytes"] / r["p90_s"] / 1e9, r["bytes"] / r["p10_s"] / 1e9, "{:.2f}"),
        ],
    )
    section(
        "Launch overhead (x.add_(1) on a 1-element tensor)",
        "launch_overhead",
        ["mode", "time per op", "p10-p90", "ops/s", "timer"],
        lambda r: [
            r["mode"],
            human_seconds(r["median_s"]),
            f"{human_seconds(r['p10_s'])}-{human_seconds(r['p90_s'])}",
            f"{r['ops_per_s']:,.0f}",
            r.get("timer", ""),
        ],
    )
    section(
        "Decode (random-weight Llama-style model; bound = batch x bandwidth / bytes read per step)",
        "decode",
        ["mode", "batch", "step", "tok/s", "bound tok/s", "of bound", "bytes/step"],
        lambda r: [
            r["mode"],
            str(r["batch"]),
            human_seconds(r["step_s"]),
            f"{r['tok_s']:,.4g}",
            "" if r.get("bound_tok_s") is None else f"{r['bound_tok_s']:,.4g}",
            "" if r.get("fraction_of_bound") is None else f"{r['fraction_of_bound']:.0%}",
            human_bytes(r.get("bytes_per_step") or r["weights_bytes"]),
        ],
    )
    sources = sorted(
        {
            f"{r['bound_bandwidth_bytes_per_s'] / 1e9:,.1f} GB/s, {r.get('bound_source', '')}"
            for r in recs
            if r["kind"] == "decode" and r.get("bound_bandwidth_bytes_per_s")
        }
    )
    if sources:
        out.append("Bound's bandwidth: " + "; ".join(sources))
    section(
        "Quantization error (round trip on a real tensor; model = uniform/float noise model)",
        "quantization",
        ["format", "granularity", "bits/elem", "SQNR dB", "model dB", "RMSE"],
        lambda r: [
            r["format"],
            r["granularity"],
            f"{r['bits_per_element']:.3g}",
            "lossless" if r["sqnr_db"] is None else f"{r['sqnr_db']:.2f}",
            "" if r.get("predicted_sqnr_db") is None else f"{r['predicted_sqnr_db']:.2f}",
            f"{r['rmse']:.3g}",
        ],
    )
    section(
        "Transformer step memory (random-weight Llama-style model)",
        "transformer_memory",
        ["mode", "layers x hidden", "batch x seq", "dtype", "params", "peak", "before step", "step time"],
        lambda r: [
            r["mode"] + (f" ({r['optimizer']})" if r["mode"] == "train" else ""),
            f"{r['config']['num_hidden_layers']}x{r['config']['hidden_size']}",
            f"{r['batch']}x{r['seq_len']}",
            r["dtype"],
            f"{r['parameters']:,}",
            human_bytes(r["peak_bytes"]),
            human_bytes(r["baseline_bytes"]),
            human_seconds(r["step_s"]),
        ],
    )
    section(
        "All-reduce (busbw = algbw x 2(n-1)/n, nccl-tests)",
        "allreduce",
        ["backend", "ranks", "size/rank", "time", "algbw GB/s", "busbw GB/s", "ring model"],
        lambda r: [
            r["backend"],
            str(r["world_size"]),
            human_bytes(r["bytes"]),
            human_seconds(r["median_s"]),
            f"{r['algbw_gb_per_s']:.2f}",
            f"{r['busbw_gb_per_s']:.2f}",
            "" if r.get("predicted_s") is None else human_seconds(r["predicted_s"]),
        ],
    )
    ratios = results.extra.get("datasheet_ratios") or []
    if ratios:
        out.append(
            "\nAgainst the datasheet\n"
            + format_table(
                ["quantity", "measured", "datasheet", "unit", "ratio"],
                [
                    [
                        q["quantity"],
                        f"{q['measured']:.3g}",
                        f"{q['datasheet']:.3g}",
                        q["unit"],
                        f"{q['ratio']:.0%}",
                    ]
                    for q in ratios
                ],
            )
        )
    return "\n".join(out)


def header(results: Results) -> str:
    d = results.device
    lines = [
        f"Device: {d.get('name', '?')} ({d.get('device', '?')}), torch {d.get('torch_version', '?')}, "
        f"{d.get('threads', '?')} threads"
    ]
    cpu = d.get("cpu") or {}
    if cpu.get("caches"):
        caches = ", ".join(
            f"L{c['level']}{'d' if c['type'] == 'Data' else ''} {human_bytes(c['size_bytes'])}"
            + (f" (shared by {c['shared_by_cpus']})" if c["shared_by_cpus"] > 1 else "")
            for c in cpu["caches"]
            if c["type"] != "Instruction"
        )
        lines.append(
            f"CPU: {cpu.get('model')}, {cpu.get('logical_cores')} logical cores; "
            f"caches per instance: {caches}"
        )
    if d.get("catalog_match"):
        lines.append(f"Catalog row: {d['catalog_match']['name']} ({d['catalog_match']['reason']})")
    return "\n".join(lines)


def statuses_text(results: Results) -> str:
    lines = []
    for s in results.statuses:
        if not s.get("ok", True) or s.get("code") != st.OK:
            lines.append(
                f"- {s['workload']}: {s['message']}"
                + (f" Fix: {s['install_hint']}" if s.get("install_hint") else "")
            )
        elif "skipped" in s.get("message", ""):
            lines.append(f"- {s['workload']}: {s['message']}")
    return ("\nNotes\n" + "\n".join(lines)) if lines else ""


def info_text() -> str:
    from measure.device import discover

    report = discover()
    lines = [f"CPU: {report.cpu.model} ({report.cpu.logical_cores} logical cores)"]
    for label, status in (
        ("torch", report.torch_status),
        ("CUDA", report.cuda_status),
        ("NVML", report.nvml_status),
        ("MPS", report.mps_status),
    ):
        lines.append(f"{label}: {status}")
    for d in report.cuda:
        lines.append(
            f"  cuda:{d.index} {d.name}, {human_bytes(d.total_memory_bytes)}, {d.sm_count} SMs, "
            f"L2 {human_bytes(d.l2_cache_bytes or 0)}, "
            f"compute capability {d.compute_capability[0]}.{d.compute_capability[1]}"
        )
    lines.append(f"Devices you can measure here: {', '.join(report.devices()) or 'none'}")
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m measure", description="Measure this machine for GPU Field Guide."
    )
    parser.add_argument("--device", default="cpu", help="cpu, cuda, cuda:N, mps or auto (default: cpu)")
    parser.add_argument(
        "--quick", action="store_true", help="small sizes: about half a minute on a 2-core CPU"
    )
    parser.add_argument("--json", type=Path, metavar="FILE", help="write the results as versioned JSON")
    parser.add_argument(
        "--only",
        help="comma-separated workloads (bandwidth,latency,matmul,host_device_copy,"
        "launch_overhead,decode,quantization,transformer_memory,allreduce)",
    )
    parser.add_argument("--info", action="store_true", help="describe the devices found and exit")
    args = parser.parse_args(argv)

    if args.info:
        print(info_text())
        return 0
    from measure.suite import run_suite

    if is_hosted():
        print(HOSTED_NOTICE)
    workloads = [w.strip() for w in args.only.split(",")] if args.only else None
    started = time.perf_counter()

    def progress(fraction: float, message: str) -> None:
        print(f"\r[{fraction:4.0%}] {message[:70]:<70}", end="", file=sys.stderr, flush=True)

    outcome = run_suite(
        args.device, quick=args.quick, workloads=workloads, progress=progress if sys.stderr.isatty() else None
    )
    if sys.stderr.isatty():
        print(file=sys.stderr)
    if isinstance(outcome, st.Status):
        print(f"Cannot measure: {outcome.message}")
        if outcome.install_hint:
            print(f"Fix: {outcome.install_hint}")
        if outcome.detail:
            print(f"Detail: {outcome.detail}")
        return 2 if outcome.code == st.BUSY else 1
    print(header(outcome))
    print(tables(outcome))
    notes = statuses_text(outcome)
    if notes:
        print(notes)
    print(
        f"\n{len(outcome.records)} results in {time.perf_counter() - started:.1f} s "
        f"({', '.join(sorted({record_kind(r) for r in outcome.records}))})."
    )
    if args.json:
        args.json.write_text(outcome.to_json() + "\n", encoding="utf-8")
        print(f"Wrote {args.json} (schema {outcome.schema}).")
    return 0
