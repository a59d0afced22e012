"""Measurements of the reader's own hardware: device discovery, live GPU telemetry, workloads
(memory bandwidth, pointer-chase latency, matmul, host<->device copies, launch overhead, decode
speed against its bandwidth bound, quantization, transformer-step memory, all-reduce), a CLI
(`python -m measure`), the versioned JSON results the app loads and the shipped samples
(measure.samples).

Importing this package (or any module in it) never imports torch, pynvml or psutil: the app's
pages import it at start-up, and the hosted app has no torch. Those libraries are imported
inside the functions that need them, and their absence comes back as a `Status`.

Workloads live in measure.workloads (bandwidth, matmul, host_device_copy, launch_overhead,
quantization_error), measure.latency (latency: a C program compiled here, or a Triton kernel),
measure.decode (decode), measure.transformer (transformer_memory), measure.collectives
(allreduce); measure.suite.run_suite runs them all and marks launch-bound bandwidth points
(measure.launch_bound). (The suite is not re-exported here so that
`python -m measure.collectives` does not find itself already imported.)
"""

from measure.catalog import datasheet_ratios, load_catalog, match_catalog
from measure.device import DeviceReport, TelemetrySample, discover, read_telemetry
from measure.env import HOSTED_NOTICE, cpu_info, is_hosted
from measure.lock import busy_info, measurement_slot, release, try_acquire
from measure.results import SCHEMA_VERSION, Results, load_results
from measure.status import Outcome, Status

__all__ = [
    "HOSTED_NOTICE",
    "SCHEMA_VERSION",
    "DeviceReport",
    "Outcome",
    "Results",
    "Status",
    "TelemetrySample",
    "busy_info",
    "cpu_info",
    "datasheet_ratios",
    "discover",
    "is_hosted",
    "load_catalog",
    "load_results",
    "match_catalog",
    "measurement_slot",
    "read_telemetry",
    "release",
    "try_acquire",
]
