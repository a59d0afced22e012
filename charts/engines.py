"""Engine ledgers as bars: one stacked bar per engine (or per predicted/logged start-up), each
term of the engines' shared ``Ledger`` a segment, in GiB as the engines print them, against the
memory the device reports.

Pure builder returning a plain Plotly figure dict (charts/style.py); it reads only the ledger's
fields (``engine``, ``total_bytes``, ``terms`` with ``key``, ``label``, ``bytes``, ``cause``), so
every engine's ledger draws the same way.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from charts.memory import CAPACITY_COLOUR, FALLBACK_COLOUR, PART_COLOURS, ROW_LABEL_CHARS, _line_label, _vline
from charts.palette import OKABE_ITO
from charts.style import Spec, axis, figure, legend_name, wrap
from charts.style import title as chart_title

GIB = 2**30
# The engines' own terms beside the shared ones (weights, kv_cache, activations, overhead, cuda_graphs)
ENGINE_COLOURS: dict[str, str] = PART_COLOURS | {
    "cuda_context": OKABE_ITO[3],  # SGLang's CUDA context and NCCL (vLLM's non-torch part is grey)
    "static_slack": OKABE_ITO[6],  # SGLang's reserve for activations and graphs
    "unallocated_pool": "#DDDDDD",
}


def ledger_bars(
    rows: Sequence[tuple[str, Any]],
    *,
    headline: str,
    detail: str = "Stacked terms in GiB (2³⁰ bytes, as the engines print them); hover a term for its cause",
    capacity_bytes: float | None = None,
    capacity_label: str = "",
) -> Spec:
    """One horizontal stacked bar per (row label, ledger), each term in GiB, with the device's
    reported total as a dashed line. ``headline`` carries the computed point (the alt text reads
    it). Terms of zero bytes are left out; every term keeps one colour on every engine."""
    labels = [wrap(label, ROW_LABEL_CHARS) for label, _ in rows]
    data: list[dict[str, Any]] = []
    seen: set[str] = set()
    totals = []
    for (_, ledger), row in zip(rows, labels, strict=True):
        total = 0.0
        for term in ledger.terms:
            if term.bytes <= 0:
                continue
            total += term.bytes
            data.append(
                {
                    "type": "bar",
                    "y": [row],
                    "x": [term.bytes / GIB],
                    "orientation": "h",
                    "name": legend_name(_legend(term)),
                    "legendgroup": term.key,
                    "showlegend": term.key not in seen,
                    "marker": {
                        "color": ENGINE_COLOURS.get(term.key, FALLBACK_COLOUR),
                        "line": {"color": "rgba(0,0,0,0.45)", "width": 1},
                    },
                    "customdata": [[term.label, term.cause]],
                    "hovertemplate": (
                        "<b>%{customdata[0]}</b><br>%{x:,.2f} GiB<br>%{customdata[1]}<extra></extra>"
                    ),
                }
            )
            seen.add(term.key)
        totals.append(total)
    right_end = max([*totals, capacity_bytes or 0, 1.0]) / GIB
    shapes, annotations = [], []
    if capacity_bytes:
        x = capacity_bytes / GIB
        shapes.append(_vline(x, CAPACITY_COLOUR, "dash"))
        annotations.append(
            _line_label(
                x, right_end * 1.08, capacity_label or f"reports {x:,.2f} GiB", CAPACITY_COLOUR, top=True
            )
        )
    layout = {
        "title": chart_title(headline, detail),
        "height": 330 + 60 * len(rows),
        "barmode": "stack",
        "bargap": 0.45,
        "xaxis": axis("Memory per GPU (GiB = 2³⁰ bytes)", range=[0, right_end * 1.08]),
        "yaxis": axis("Engine", type="category", categoryorder="array", categoryarray=list(reversed(labels))),
        "shapes": shapes,
        "annotations": annotations,
    }
    return figure(data, layout)


_LEGEND = {
    "weights": "Weights",
    "kv_cache": "KV cache",
    "activations": "Activations / compute buffer",
    "overhead": "Outside PyTorch (CUDA, NCCL)",
    "cuda_graphs": "CUDA graphs",
    "cuda_context": "CUDA context, NCCL",
    "static_slack": "Reserve (1 − static fraction)",
    "unallocated_pool": "Pool left by page alignment",
}


def _legend(term: Any) -> str:
    """The legend names the kind of term (the same on every engine); the hover names the engine's own."""
    return _LEGEND.get(term.key, term.label)


def ledger_rows(rows: Sequence[tuple[str, Any]]) -> list[dict[str, Any]]:
    """The chart's numbers as a table: one row per term key, a GiB column per engine, and each
    engine's cause for it (what the side-by-side view shows under its chart)."""
    keys: list[str] = []
    for _, ledger in rows:
        for term in ledger.terms:
            if term.key not in keys:
                keys.append(term.key)
    out = []
    for key in keys:
        row: dict[str, Any] = {"Term": _LEGEND.get(key, key)}
        causes = []
        for name, ledger in rows:
            term = next((t for t in ledger.terms if t.key == key), None)
            row[f"{name} (GiB)"] = f"{term.bytes / GIB:,.2f}" if term else "—"
            if term:
                causes.append(f"{name}: {term.cause}")
        row["What allocates it"] = " · ".join(causes)
        out.append(row)
    total = {"Term": "Total"}
    for name, ledger in rows:
        total[f"{name} (GiB)"] = f"{sum(t.bytes for t in ledger.terms) / GIB:,.2f}"
    total["What allocates it"] = "the sum of the terms above, against the memory the device reports"
    out.append(total)
    return out
