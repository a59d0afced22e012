"""What quantization does to model quality: published perplexities, one row per measurement.

``data/quantization_quality.csv`` holds WikiText-2 perplexities of quantized LLaMA-family models
next to the FP16 baseline the same authors measured with the same code. Only numbers read in
the sources themselves are recorded; a cell that could not be read cleanly stays out.

Sources:

* Huang, Zheng, Ma, Qin et al., "An Empirical Study of LLaMA3 Quantization: From LLMs to MLLMs"
  (v1 title "How Good Are Low-bit Quantized LLaMA3 Models? An Empirical Study"),
  https://arxiv.org/abs/2404.14047, v3 of 13 Jan 2025: Table 1 (LLaMA3-8B), Table 2
  (LLaMA3-70B) and Table 5 (LLaMA-7B and LLaMA2-7B under the same settings: WikiText-2
  calibration, 128 samples of 2,048 tokens, group size 128 where grouped). Values are printed
  to one decimal there, so a small difference (5.5 → 5.7) carries about ±0.1 of rounding.
* llama.cpp pull request 6936, "perplexity: more statistics, added documentation",
  https://github.com/ggerganov/llama.cpp/pull/6936: the "LLaMA 2 vs. LLaMA 3 comparison"
  table, "Mean PPL ratio" row (quantized ÷ FP16 perplexity on the WikiText-2 test set), for
  the Q8_0 and Q4_K_M formats. These rows have metric ``wikitext2_ppl_ratio`` and baseline 1.

Columns: ``id`` (``<model_id>/<method>/w<bits>[g<group>]``), ``model_id``, ``model`` (display
name), ``generation`` (1, 2, 3 for LLaMA, Llama 2, Llama 3), ``method`` (``rtn`` = round to
nearest, ``gptq``, ``awq``, ``llama.cpp-q8_0``, ``llama.cpp-q4_k_m``), ``weight_bits``,
``group_size`` (weights per scale; ``-`` = one scale per output channel, the paper's "-"),
``metric``, ``value``, ``baseline`` (the FP16 value of the same metric), ``source`` (URL),
``table`` (where in the source), ``notes``.

Pure Python: no numpy, no I/O beyond reading the CSV once.
"""

from __future__ import annotations

import csv
import functools
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

DATA_PATH = Path(__file__).resolve().parent / "data" / "quantization_quality.csv"

COLUMNS = (
    "id",
    "model_id",
    "model",
    "generation",
    "method",
    "weight_bits",
    "group_size",
    "metric",
    "value",
    "baseline",
    "source",
    "table",
    "notes",
)
METHODS: dict[str, str] = {
    "rtn": "RTN",
    "gptq": "GPTQ",
    "awq": "AWQ",
    "llama.cpp-q8_0": "llama.cpp Q8_0",
    "llama.cpp-q4_k_m": "llama.cpp Q4_K_M",
}
METRICS: dict[str, str] = {
    "wikitext2_ppl": "WikiText-2 perplexity",
    "wikitext2_ppl_ratio": "WikiText-2 perplexity ÷ FP16 perplexity",
}
_ID = re.compile(r"^[a-z0-9.-]+/[a-z0-9._-]+/w\d+(g\d+)?$")


class QualityDataError(ValueError):
    """A bad cell or a missing row in the quality data; the message names the row and column."""


@dataclass(frozen=True)
class QualityRow:
    """One published measurement of a quantized model next to its FP16 baseline."""

    id: str
    model_id: str
    model: str
    generation: int
    method: str
    weight_bits: float
    group_size: int | None  # None: one scale per output channel
    metric: str
    value: float
    baseline: float
    source: str
    table: str
    notes: str = ""

    @property
    def relative_increase(self) -> float:
        """(value − baseline) ÷ baseline: 0.05 means 5 % worse than FP16."""
        return self.value / self.baseline - 1.0

    @property
    def method_name(self) -> str:
        return METHODS[self.method]


def _number(raw: Mapping[str, str], column: str, where: str) -> float:
    text = (raw.get(column) or "").strip()
    try:
        value = float(text)
    except ValueError:
        raise QualityDataError(f"{where}: column {column!r}: {text!r} is not a number") from None
    if not value > 0:
        raise QualityDataError(f"{where}: column {column!r}: {text!r} must be positive")
    return value


def parse_row(raw: Mapping[str, str], where: str) -> QualityRow:
    """One validated row; ``where`` (file, line and id) starts every error message."""
    for column in COLUMNS:
        if column not in raw or raw[column] is None:
            raise QualityDataError(f"{where}: column {column!r} is missing")
    for column in ("id", "model_id", "model", "method", "metric", "source", "table"):
        if not raw[column].strip():
            raise QualityDataError(f"{where}: column {column!r} is empty")
    row_id = raw["id"].strip()
    if not _ID.match(row_id):
        raise QualityDataError(
            f"{where}: column 'id': {row_id!r} is not <model_id>/<method>/w<bits>[g<group>]"
        )
    method = raw["method"].strip()
    if method not in METHODS:
        raise QualityDataError(f"{where}: column 'method': {method!r} is not one of {sorted(METHODS)}")
    metric = raw["metric"].strip()
    if metric not in METRICS:
        raise QualityDataError(f"{where}: column 'metric': {metric!r} is not one of {sorted(METRICS)}")
    generation_text = raw["generation"].strip()
    if not generation_text.isdigit() or not 1 <= int(generation_text) <= 9:
        raise QualityDataError(f"{where}: column 'generation': {generation_text!r} is not a generation 1–9")
    bits = _number(raw, "weight_bits", where)
    if bits > 16:
        raise QualityDataError(f"{where}: column 'weight_bits': {bits} is more than 16")
    group_text = raw["group_size"].strip()
    if group_text == "-":
        group: int | None = None
    elif group_text.isdigit() and int(group_text) > 0:
        group = int(group_text)
    else:
        raise QualityDataError(
            f"{where}: column 'group_size': {group_text!r} is not a positive integer or '-'"
        )
    value = _number(raw, "value", where)
    baseline = _number(raw, "baseline", where)
    if metric == "wikitext2_ppl_ratio" and baseline != 1:
        raise QualityDataError(f"{where}: column 'baseline': a ratio's baseline must be 1, got {baseline}")
    source = raw["source"].strip()
    if not source.startswith("https://"):
        raise QualityDataError(f"{where}: column 'source': {source!r} is not an https URL")
    expected_id = f"{raw['model_id'].strip()}/{method}/w{bits:g}" + (f"g{group}" if group else "")
    if row_id != expected_id:
        raise QualityDataError(f"{where}: column 'id': {row_id!r} does not match its cells ({expected_id!r})")
    return QualityRow(
        id=row_id,
        model_id=raw["model_id"].strip(),
        model=raw["model"].strip(),
        generation=int(generation_text),
        method=method,
        weight_bits=bits,
        group_size=group,
        metric=metric,
        value=value,
        baseline=baseline,
        source=source,
        table=raw["table"].strip(),
        notes=(raw.get("notes") or "").strip(),
    )


@functools.cache
def load_quality(path: Path = DATA_PATH) -> tuple[QualityRow, ...]:
    """Every row of the quality CSV, validated; raises QualityDataError naming row and column."""
    rows: list[QualityRow] = []
    seen: dict[str, int] = {}
    baselines: dict[tuple[str, str], float] = {}
    with path.open(newline="", encoding="utf-8") as handle:
        reader = csv.DictReader(handle)
        missing = [c for c in COLUMNS if c not in (reader.fieldnames or ())]
        if missing:
            raise QualityDataError(f"{path.name}: header lacks columns {missing}")
        for line, raw in enumerate(reader, start=2):
            where = f"{path.name}: line {line}, row {raw.get('id', '')!r}"
            row = parse_row(raw, where)
            if row.id in seen:
                raise QualityDataError(f"{where}: column 'id': duplicate of line {seen[row.id]}")
            seen[row.id] = line
            key = (row.model_id, row.source + row.metric)
            if key in baselines and baselines[key] != row.baseline:
                raise QualityDataError(
                    f"{where}: column 'baseline': {row.baseline} differs from {baselines[key]} "
                    f"given for {row.model_id} by the same source"
                )
            baselines[key] = row.baseline
            rows.append(row)
    if not rows:
        raise QualityDataError(f"{path.name}: no rows")
    return tuple(rows)


def quality_row(model_id: str, method: str, bits: float, group_size: int | None = 128) -> QualityRow:
    """The row for ``model_id`` quantized by ``method`` to ``bits`` with ``group_size`` weights per
    scale (None: one scale per output channel)."""
    for row in load_quality():
        if (row.model_id, row.method, row.weight_bits, row.group_size) == (
            model_id,
            method,
            bits,
            group_size,
        ):
            return row
    group = "per channel" if group_size is None else f"group {group_size}"
    raise QualityDataError(f"no quality row for {model_id} {method} {bits:g}-bit {group}")
