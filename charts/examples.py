"""Representative inputs for every chart builder, from the shipped data.

The chart gallery (tools/chart_gallery.py), the chart tests (tests/test_charts.py) and the speed
bench (bench/charts_speed.py) draw the same cases, so what is looked at, tested and timed is one
set. Inputs come from the presets, the accelerator catalog, the memory-hierarchy families and the
CPU sample in measure/samples/; each case is computed once per process. Nothing here is imported
by a page.

Two cases have no shipped measurement to draw from and say so in their label: the telemetry panel
(no NVML sample ships) and the pointer-chase latency sweep (no pointer-chase sample ships), whose
points are the family's own published latencies laid out as a staircase over its capacities.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
SAMPLE_PATH = ROOT / "measure" / "samples" / "cpu-amd-epyc-2vcpu.json"


@dataclass(frozen=True)
class Case:
    """One call of one builder: ``module.builder(*args, **kwargs)`` (module under charts/)."""

    name: str
    module: str
    builder: str
    args: tuple = ()
    kwargs: dict[str, Any] = field(default_factory=dict)
    new_keywords: tuple[str, ...] = ()  # keyword arguments the builder before the dict rewrite lacked
    note: str = ""

    def call(self, module: Any) -> Any:
        return getattr(module, self.builder)(*self.args, **self.kwargs)

    def old_kwargs(self) -> dict[str, Any]:
        return {k: v for k, v in self.kwargs.items() if k not in self.new_keywords}


@functools.cache
def sample() -> dict[str, Any]:
    """The shipped CPU measurement document (python -m measure --json on a 2-vCPU EPYC)."""
    return json.loads(SAMPLE_PATH.read_text())


def sample_records(kind: str) -> list[dict[str, Any]]:
    return [r for r in sample()["results"] if r.get("kind") == kind]


def _roofline_measured() -> list:
    from simulators.roofline import MeasuredPoint

    name = sample()["device"]["cpu"]["model"]
    return [
        MeasuredPoint(
            name=f"{name}: {r['dtype']} {r['m']}×{r['n']}×{r['k']}",
            intensity=float(r["intensity_flop_per_byte"]),
            achieved_flops=float(r["flops_per_s"]),
        )
        for r in sample_records("matmul")
    ]


def _ladder_measured() -> list:
    from simulators.hierarchy import MeasuredPoint

    to_level = {"L1": "l1", "L2": "l2", "DRAM": "host-memory"}
    best: dict[str, float] = {}
    for record in sample_records("bandwidth"):
        level = to_level.get(str(record.get("cache_hint")))
        if level:
            best[level] = max(best.get(level, 0.0), float(record["bytes_per_s"]))
    return [
        MeasuredPoint(f"EPYC sample: best {level}", level=level, bytes_per_s=v) for level, v in best.items()
    ]


def staircase_points(levels: list, sizes: list[int]) -> list[tuple[int, float]]:
    """(working-set bytes, ns per load): the published mid latency of the smallest chased level
    that holds the working set. Stands in for a pointer-chase measurement, which no shipped sample
    has."""
    from charts.hierarchy import CHASED_LEVELS, chase_capacity_bytes

    ladder = sorted(
        (lv for lv in levels if lv.level in CHASED_LEVELS and lv.has_latency and lv.capacity_bytes),
        key=lambda lv: (chase_capacity_bytes(lv, levels), lv.latency_s("mid")),
    )
    points = []
    for size in sizes:
        holder = next((lv for lv in ladder if size <= chase_capacity_bytes(lv, levels)), ladder[-1])
        points.append((size, holder.latency_s("mid") * 1e9))
    return points


@functools.cache
def cases() -> tuple[Case, ...]:
    """Every builder with representative inputs (several for the roofline)."""
    import numpy as np

    from simulators import hierarchy as hier
    from simulators import parallelism as par
    from simulators import quantization as q
    from simulators import roofline as rf
    from simulators.fit import inference
    from simulators.hardware import get_accelerator
    from simulators.llm_memory import kv_cache_bytes, weight_bytes
    from simulators.presets import get_model_preset

    h100, a100 = get_accelerator("h100-sxm"), get_accelerator("a100-80gb-sxm")
    llama8 = get_model_preset("llama-3-8b").spec
    llama70 = get_model_preset("llama-3-70b").spec
    ops = [op for name in ("matmul", "memory-bound") for op in rf.operation_set(name, "bf16")]
    batches = [2**k for k in range(13)]
    path = [rf.decode_step_op(llama8, b, 0) for b in batches]
    selected = rf.decode_step_op(llama8, 512, 0)
    out: list[Case] = [
        Case(
            "roofline: H100 + A100, example operations",
            "roofline",
            "roofline_figure",
            ([h100, a100], "bf16", ops),
        ),
        Case(
            "roofline: decode path of Llama 3 8B on H100, batch 512 selected",
            "roofline",
            "roofline_figure",
            ([h100], "bf16"),
            {"decode_path": path, "decode_selected": selected},
            new_keywords=("decode_path", "decode_selected"),
        ),
        Case(
            "roofline: CPU sample's measured matmuls on the H100 roof",
            "roofline",
            "roofline_figure",
            ([h100], "bf16", [], _roofline_measured()),
        ),
        Case(
            "decode batch sweep: Llama 3 8B on H100",
            "roofline",
            "decode_batch_figure",
            (llama8, h100, batches, "bf16", 0),
            {"selected_batch": 64},
        ),
    ]

    fit = inference(llama70, h100, batch=1, context=8192)
    assert fit.decode is not None
    out.append(
        Case(
            "will it fit: memory time vs compute time per decode step (Llama 3 70B, H100)",
            "memory",
            "decode_time_figure",
            (fit.decode.memory_time_s, fit.decode.compute_time_s),
            {"label": f"{llama70.name} on 1 × {h100.name}, batch 1, 8,192 tokens"},
        )
    )
    out.append(
        Case(
            "will it fit: memory bars (Llama 3 70B on one H100)",
            "memory",
            "memory_bars",
            ([(f"1 × {h100.name}", fit.memory)],),
            {
                "capacity_bytes": h100.memory_bytes,
                "capacity_label": f"{h100.name}: {h100.memory_bytes / 1e9:,.0f} GB",
                "budget_bytes": 0.9 * h100.memory_bytes,
                "budget_label": "engine takes 90%",
            },
        )
    )

    families = {f.id: f for f in hier.families()}
    fam = families["h100-sxm"]
    out += [
        Case(
            "hierarchy: ladder, H100 and RTX 4090",
            "hierarchy",
            "ladder_figure",
            ([fam, families["rtx-4090"]],),
        ),
        Case(
            "hierarchy: ladder, typical CPU with the EPYC sample's bandwidths",
            "hierarchy",
            "ladder_figure",
            ([families["cpu-norvig"]], _ladder_measured()),
        ),
        Case(
            "hierarchy: time to move N bytes (H100)", "hierarchy", "transfer_time_figure", (list(fam.levels),)
        ),
        Case(
            "hierarchy: Little's law, H100 and RTX 4090",
            "hierarchy",
            "littles_law_figure",
            ([fam, families["rtx-4090"]],),
        ),
        Case(
            "hierarchy: where Llama 3 70B lives on an H100 (8,192 tokens)",
            "hierarchy",
            "placement_figure",
            (
                hier.place_model(
                    weight_bytes(llama70, "bf16"),
                    kv_cache_bytes(llama70, 8192, 1, "bf16"),
                    fam.levels,
                    usable_fraction=0.9,
                ),
            ),
            {"family_name": fam.name},
        ),
        Case(
            "hierarchy: latency sweep (staircase from H100's published latencies, not a measurement)",
            "hierarchy",
            "latency_sweep_figure",
            (staircase_points(list(fam.levels), [2**k for k in range(12, 35)]), list(fam.levels)),
            {"device_label": "H100 SXM5, published latencies as a staircase (illustration)"},
        ),
    ]

    device = sample()["device"]
    out += [
        Case(
            "measured: bandwidth vs working set (EPYC sample)",
            "measure",
            "bandwidth_figure",
            (sample_records("bandwidth"), device["cpu"]["caches"]),
        ),
        Case(
            "measured: all-reduce (EPYC sample)",
            "measure",
            "allreduce_figure",
            (sample_records("allreduce"),),
        ),
        Case(
            "measured: telemetry (synthetic readings, no NVML sample ships)",
            "measure",
            "telemetry_figure",
            (_synthetic_telemetry(),),
        ),
    ]

    layout = par.Layout(
        dp=2,
        tp=8,
        pp=4,
        zero_stage=1,
        micro_batch=1,
        num_microbatches=16,
        seq=4096,
        nodes=8,
        gpus_per_node=8,
        sequence_parallel=True,
        recompute="selective",
    )
    terms = par.communication_per_step(llama70, layout)
    step = par.step_time(llama70, layout, h100, terms)
    out += [
        Case("parallelism: GPU grid (64 GPUs)", "parallelism", "gpu_grid_figure", (layout, "pp", llama70)),
        Case(
            "parallelism: GPU grid, 16 DP replicas (colour bar)",
            "parallelism",
            "gpu_grid_figure",
            (par.Layout(dp=16, tp=1, pp=1, nodes=2, gpus_per_node=8), "dp"),
        ),
        Case(
            "parallelism: pipeline (1F1B, 8 stages, 32 micro-batches)",
            "parallelism",
            "pipeline_gantt_figure",
            (par.pipeline_schedule(8, 32, "1f1b"), "1f1b"),
        ),
        Case(
            "parallelism: GPipe, 4 stages, 8 micro-batches",
            "parallelism",
            "pipeline_gantt_figure",
            (par.pipeline_schedule(4, 8, "gpipe"), "gpipe"),
        ),
        Case(
            "parallelism: memory per stage",
            "parallelism",
            "memory_breakdown_figure",
            (par.memory_by_stage(llama70, layout), h100.memory_bytes, f"{h100.name}: 80 GB"),
        ),
        Case("parallelism: communication vs compute", "parallelism", "comm_vs_compute_figure", (terms, step)),
    ]

    x = q.make_tensor("gaussian", (1024, 1024), 0)
    xq = q.quantize(x, "int8", "tensor", None, True)
    grid, _ = q.overlay_grid(x, "int8", "tensor", True)
    outliers = q.outlier_channels((512, 1024), 0, 8, 1)
    shown = np.unique(np.concatenate([np.arange(24), outliers]))
    alphas = np.round(np.linspace(0, 1, 21), 2)
    demo = q.outlier_matmul_demo(alpha=0.5)
    breakdown = llama8.param_breakdown()
    out += [
        Case(
            "quantization: values and the INT8 grid",
            "quantization",
            "value_histogram_figure",
            (q.histogram(x), grid),
            {"format_label": "INT8", "max_grid_lines": 80},
        ),
        Case(
            "quantization: error histogram (INT8)",
            "quantization",
            "error_histogram_figure",
            (q.histogram(xq - x),),
            {"scheme_label": "INT8"},
        ),
        Case(
            "quantization: accuracy vs storage",
            "quantization",
            "sqnr_vs_bits_figure",
            (q.evaluate_schemes(q.make_tensor("gaussian", (256, 1024), 0)),),
        ),
        Case(
            "quantization: error per channel",
            "quantization",
            "per_channel_error_figure",
            (q.outlier_channel_sqnr(), shown),
            {"outlier_channels": outliers},
        ),
        Case(
            "quantization: matmul error by scheme",
            "quantization",
            "matmul_error_figure",
            (demo, q.MATMUL_SCHEMES),
        ),
        Case(
            "quantization: SmoothQuant α sweep",
            "quantization",
            "smoothquant_alpha_figure",
            (alphas, q.outlier_alpha_sweep(alphas)),
            {"chosen_alpha": 0.5, "baseline_db": demo["w8a8"].sqnr_db},
        ),
        Case(
            "quantization: model size by format (Llama 3 8B)",
            "quantization",
            "model_size_figure",
            (q.model_sizes_by_scheme(breakdown.total, breakdown.linear_layers),),
            {"model_label": llama8.name},
        ),
    ]
    return tuple(out)


def _synthetic_telemetry(seconds: int = 60) -> list[dict[str, float]]:
    """A minute of made-up NVML-shaped readings (a load starting half-way), only to lay out the panels."""
    samples = []
    for t in range(seconds):
        busy = t >= seconds // 2
        samples.append(
            {
                "timestamp_s": 1000.0 + t,
                "gpu_util_percent": 97.0 if busy else 0.0,
                "memory_used_bytes": 61e9 if busy else 1e9,
                "power_draw_w": 620.0 if busy else 70.0,
                "temperature_c": 71.0 if busy else 34.0,
                "sm_clock_mhz": 1980.0 if busy else 345.0,
            }
        )
    return samples


def case_names() -> list[str]:
    return [c.name for c in cases()]


def builders() -> dict[str, Callable[..., dict]]:
    """name -> public builder in the current charts package, for every case."""
    import importlib

    return {c.name: getattr(importlib.import_module(f"charts.{c.module}"), c.builder) for c in cases()}
