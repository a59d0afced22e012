"""Diagrams of the glossary's LLM-inference terms: KV cache growth, paging, GQA, FlashAttention, MoE
routing, batching, prefill and decode, sliding windows and hybrid caches.

Every number drawn comes from the simulators (``simulators.llm_memory``, ``llm_speed``,
``parallelism``, ``roofline``), the model presets and the accelerator catalog; a builder only
chooses what to show. All return ``charts.diagrams.Diagram``.
"""

from __future__ import annotations

import math
import random
from collections.abc import Sequence
from typing import Any

from charts.diagrams import Diagram
from charts.diagrams.block_grid import (
    EMPTY_COLOUR,
    GB,
    OUTLINE,
    _check_range,
    _colour,
    _finish,
    _gb,
    _hidden,
    _ink,
    _legend_square,
    _note,
    _preset_spec,
    _rect,
)
from charts.palette import OKABE_ITO
from charts.style import (
    LABEL_BOX_TEXT,
    LABEL_FONT_PX,
    axis,
    decade_ticks,
    legend_name,
    plain_number,
    wrap,
)
from charts.style import title as chart_title
from simulators.hardware import get_accelerator
from simulators.llm_memory import (
    attention_score_bytes,
    kv_bytes_per_value,
    kv_cache_by_kind,
    kv_cache_bytes,
    weight_bytes,
)
from simulators.llm_speed import decode_step, expected_experts_touched
from simulators.model_config import LAYER_KINDS, ModelSpec
from simulators.roofline import attainable_flops, attention, decode_step_op, prefill_op
from simulators.units import binary_bytes

KV_COLOURS = {
    # (kind, newest?) -> colour: the token appended at this step in full colour, earlier ones light
    ("K", True): OKABE_ITO[0],
    ("V", True): OKABE_ITO[5],
    ("K", False): "#A6D1EE",
    ("V", False): "#F2C1A0",
}


def kv_cache_growth(
    *, model: str = "llama-3-8b", tokens: int = 8, context: int = 8192, kv_fmt: str = "bf16"
) -> Diagram:
    """The cache over decode steps: at step s the sequence holds s tokens, each with its K and its V
    in every layer that keeps it; the token appended at that step is drawn dark, the earlier ones
    light, so each row is one column longer than the row above (growth, not a uniform grid)."""
    _check_range("tokens", tokens, 1, 64)
    name, spec = _preset_spec(model)
    value = kv_bytes_per_value(kv_fmt)
    per_layer = [e * value for e in spec.kv_elements_per_token()]
    per_token = sum(per_layer)
    layers = spec.num_layers
    caching = [b for b in per_layer if b > 0]
    after = [kv_cache_bytes(spec, n, 1, kv_fmt) for n in range(1, tokens + 1)]
    total = kv_cache_bytes(spec, context, 1, kv_fmt)
    steps = [f"step {s}: {binary_bytes(b)}" for s, b in enumerate(after, start=1)]
    codes = {("K", False): 0, ("V", False): 1, ("K", True): 2, ("V", True): 3}
    z: list[list[float | None]] = []
    hover: list[list[str]] = []
    for step in range(1, tokens + 1):
        row: list[float | None] = []
        tips: list[str] = []
        for t in range(1, tokens + 1):
            for kind in ("K", "V"):
                held = t <= step
                newest = t == step
                row.append(codes[(kind, newest)] if held else None)
                tips.append(
                    f"Step {step}, token {t}, {kind}: "
                    + (
                        f"{binary_bytes(per_token / 2)} over {len(caching)} layers"
                        + (" (appended at this step)" if newest else "")
                        if held
                        else "not generated yet"
                    )
                )
        z.append(row)
        hover.append(tips)
    order = sorted(codes, key=codes.get)
    n = len(order) - 1
    scale = []
    for i, key in enumerate(order):  # a stepped scale: one flat colour per code
        scale += [[i / (n + 1), KV_COLOURS[key]], [(i + 1) / (n + 1), KV_COLOURS[key]]]
    x = [f"{t}{kind}" for t in range(1, tokens + 1) for kind in ("K", "V")]
    data = [
        {
            "type": "heatmap",
            "x": x,
            "y": steps,
            "z": z,
            "zmin": -0.5,
            "zmax": n + 0.5,
            "colorscale": scale,
            "showscale": False,
            "xgap": 2,
            "ygap": 3,
            "hovertext": hover,
            "hoverinfo": "text",
            "showlegend": False,
        },
        _legend_square("K of the token appended at this step", KV_COLOURS[("K", True)]),
        _legend_square("V of the token appended at this step", KV_COLOURS[("V", True)]),
        _legend_square("K kept from earlier steps", KV_COLOURS[("K", False)]),
        _legend_square("V kept from earlier steps", KV_COLOURS[("V", False)]),
    ]
    if caching and min(caching) == max(caching) and len(caching) == layers and not spec.uses_mla:
        shape = (
            f"each token: K and V in {layers} layers × {binary_bytes(caching[0])} ({spec.num_kv_heads} "
            f"KV heads × {spec.head_dim} values × {value:g} B × 2)"
        )
    elif caching:
        shape = (
            f"each token: K and V in {len(caching)} of {layers} layers, "
            f"{binary_bytes(min(caching))} to {binary_bytes(max(caching))} each"
        )
    else:
        shape = "no layer keeps per-token K and V"
    state = spec.state_bytes()
    detail = f"{shape}. After {context:,} tokens: {binary_bytes(total)} per sequence"
    if state:
        detail += f" (incl. {binary_bytes(state)} of fixed state)"
    layout = {
        "title": chart_title(f"{name}: the KV cache grows by {binary_bytes(per_token)} a token", detail),
        "height": 480,
        "showlegend": True,
        "legend": {"orientation": "h", "y": -0.2},
        "xaxis": axis("Token and its K and V, in arrival order", showgrid=False, type="category"),
        "yaxis": axis(
            "Decode step: cache size after it", autorange="reversed", showgrid=False, zeroline=False
        ),
    }
    table = (
        *({"tokens": s, "KV cache (bytes)": b} for s, b in enumerate(after, start=1)),
        {"tokens": context, "KV cache (bytes)": total},
    )
    alt = (
        f"{name}'s KV cache over {tokens} decode steps: each step appends one token's keys and values "
        f"to every layer that keeps them, {binary_bytes(per_token)} per token in {kv_fmt.upper()}, so the "
        f"cache grows from {binary_bytes(after[0])} after step 1 to {binary_bytes(after[-1])} after step "
        f"{tokens}; after {context:,} tokens one sequence's cache is {binary_bytes(total)}."
    )
    caption = (
        "Each decode step appends one token (dark: its K and its V) to what earlier steps left (light): "
        "the cache grows linearly with the context, and with the batch, one such cache per sequence. "
        "Nothing is recomputed: that is the point of the cache. Hover a cell for its bytes."
    )
    return Diagram("kv-cache-growth", _finish(data, layout), alt, table, caption)


# vLLM's default KV block: CacheConfig.DEFAULT_BLOCK_SIZE = 16 tokens
# (https://docs.vllm.ai/en/stable/api/vllm/config/cache/).
VLLM_DEFAULT_BLOCK_TOKENS = 16


MAX_LOGICAL_BLOCKS = 12


def paged_block_tables(lengths: Sequence[int], block_tokens: int) -> list[list[int]]:
    """Block tables of sequences that grow one token at a time, in turn, from one pool of blocks.

    A sequence takes the next free physical block whenever its last block is full (or it has
    none), so the tables of sequences growing side by side interleave.
    """
    tables: list[list[int]] = [[] for _ in lengths]
    next_free = 0
    for step in range(max(lengths, default=0)):
        for s, length in enumerate(lengths):
            if step < length and step % block_tokens == 0:
                tables[s].append(next_free)
                next_free += 1
    return tables


def paged_kv(
    *,
    model: str = "llama-3-8b",
    tokens: int = 50,
    other_tokens: int = 40,
    block_tokens: int = VLLM_DEFAULT_BLOCK_TOKENS,
    reserved_tokens: int = 8192,
    kv_fmt: str = "bf16",
) -> Diagram:
    """Sequence A's KV cache in fixed-size blocks, its block table, and the shared physical pool."""
    _check_range("block_tokens", block_tokens, 1, 64)
    _check_range("tokens", tokens, 1, MAX_LOGICAL_BLOCKS * block_tokens)
    _check_range("other_tokens", other_tokens, 0, MAX_LOGICAL_BLOCKS * block_tokens)
    if reserved_tokens < tokens:
        raise ValueError(f"reserved_tokens ({reserved_tokens:,}) must be at least tokens ({tokens:,})")
    name, spec = _preset_spec(model)
    per_token = sum(spec.kv_elements_per_token()) * kv_bytes_per_value(kv_fmt)
    table_a, table_b = paged_block_tables([tokens, other_tokens], block_tokens)
    blocks = len(table_a)
    pool = len(table_a) + len(table_b)
    empty = blocks * block_tokens - tokens
    block_bytes = block_tokens * per_token
    wasted = empty * per_token
    contiguous_waste = (reserved_tokens - tokens) * per_token
    colour_a, colour_b = OKABE_ITO[0], OKABE_ITO[1]
    shapes: list[dict[str, Any]] = []
    notes: list[dict[str, Any]] = []
    width = block_tokens
    pitch = 1.0
    top = 0.9  # room for the heading above the first row
    for i, physical in enumerate(table_a):
        y0 = top + i * pitch
        used = min(block_tokens, tokens - i * block_tokens)
        for slot in range(block_tokens):
            fill = colour_a if slot < used else EMPTY_COLOUR
            shapes.append(_rect(slot, y0 + 0.32, slot + 1, y0 + 0.92, fill))
        label = f"Logical block {i} → physical block {physical}"
        if used < block_tokens:
            label += f": {block_tokens - used} empty slots"
        notes.append(_note(0, y0 + 0.16, label, xanchor="left", yanchor="middle"))
    notes.insert(
        0,
        _note(
            0,
            0.35,
            f"<b>Sequence A: {tokens} tokens in {blocks} blocks of {block_tokens}</b>",
            xanchor="left",
        ),
    )
    pool_top = top + blocks * pitch + 0.5
    notes.append(_note(0, pool_top, "<b>Physical blocks in GPU memory (shared pool)</b>", xanchor="left"))
    owner = {p: ("A", i) for i, p in enumerate(table_a)} | {p: ("B", i) for i, p in enumerate(table_b)}
    cell = width / pool
    for p in range(pool):
        who, index = owner[p]
        fill = colour_a if who == "A" else colour_b
        shapes.append(_rect(p * cell, pool_top + 0.3, (p + 1) * cell, pool_top + 1.2, fill))
        notes.append(
            _note((p + 0.5) * cell, pool_top + 0.75, f"{who}{index}", colour=_ink(fill), size=LABEL_FONT_PX)
        )
    bottom = pool_top + 1.3
    data = [
        _legend_square("slot holding a token's K and V (sequence A)", colour_a),
        _legend_square("empty slot: reserved, unused", EMPTY_COLOUR),
        _legend_square("block of sequence B (growing alongside)", colour_b),
    ]
    layout = {
        "title": chart_title(
            f"PagedAttention: {blocks} blocks, {empty} empty slots ({binary_bytes(wasted)})",
            f"{name}: {binary_bytes(block_bytes)} per block of {block_tokens} tokens across all "
            f"{spec.num_layers} layers ({binary_bytes(block_bytes / spec.num_layers)} per layer)",
        ),
        "height": 230 + 34 * (blocks + 2),
        "shapes": shapes,
        "annotations": notes,
        "xaxis": _hidden(-0.2, width + 0.2),
        "yaxis": _hidden(bottom + 0.1, -0.1),
        "plot_bgcolor": "rgba(0,0,0,0)",
    }
    rows: list[dict[str, Any]] = []
    for who, table, length in (("A", table_a, tokens), ("B", table_b, other_tokens)):
        for i, physical in enumerate(table):
            stored = min(block_tokens, length - i * block_tokens)
            rows.append(
                {
                    "sequence": who,
                    "logical block": i,
                    "physical block": physical,
                    "tokens stored": stored,
                    "empty slots": block_tokens - stored,
                    "block size (bytes)": block_bytes,
                }
            )
    alt = (
        f"Sequence A's {tokens} tokens fill {blocks} blocks of {block_tokens} tokens "
        f"({binary_bytes(block_bytes)} each for {name} across its {spec.num_layers} layers, "
        f"{binary_bytes(block_bytes / spec.num_layers)} in each layer); its block table maps them to "
        f"physical blocks {', '.join(map(str, table_a))}, interleaved with sequence B's. Only the last "
        f"block is partly empty: {empty} slots, {binary_bytes(wasted)}, against "
        f"{binary_bytes(contiguous_waste)} left unused by a contiguous {reserved_tokens:,}-token reservation."
    )
    caption = (
        f"A sequence takes a new block only when its last one is full, so at most {block_tokens - 1} "
        f"slots per sequence sit empty. Block size {block_tokens} is vLLM's default "
        "(CacheConfig.DEFAULT_BLOCK_SIZE); vLLM keeps one such block per layer, so a block's bytes "
        "here add up every layer's. Paging as in Kwon et al. 2023, 'Efficient Memory "
        "Management for Large Language Model Serving with PagedAttention' (arXiv 2309.06180)."
    )
    return Diagram("paged-kv", _finish(data, layout), alt, tuple(rows), caption)


def _uniform_attention(spec: ModelSpec, name: str) -> None:
    if spec.uses_mla:
        raise ValueError(f"{name} uses multi-head latent attention: it caches a latent, not KV heads")
    if spec.layer_kv_elements or spec.layer_kv_heads or spec.layer_heads or spec.layer_head_dims:
        raise ValueError(f"{name} has layers of different shapes; pick a model with uniform attention")


def gqa_sharing(*, model: str = "llama-3-8b", context: int = 8192) -> Diagram:
    """Query heads above the KV head each group shares, with the cache saved against MHA."""
    name, spec = _preset_spec(model)
    _uniform_attention(spec, name)
    heads, kv_heads = spec.num_heads, spec.num_kv_heads
    group = heads // kv_heads
    gqa = spec.kv_cache_bytes_per_token()
    mha_spec = spec.with_overrides(num_kv_heads=heads)
    mha = mha_spec.kv_cache_bytes_per_token()
    shapes: list[dict[str, Any]] = []
    notes: list[dict[str, Any]] = []
    gap = 0.12
    for q in range(heads):
        fill = _colour(q // group)
        shapes.append(_rect(q + gap / 2, 0.5, q + 1 - gap / 2, 1.4, fill, line={"width": 0}))
    for k in range(kv_heads):
        fill = _colour(k)
        shapes.append(_rect(k * group + gap / 2, 2.2, (k + 1) * group - gap / 2, 3.1, fill))
        # bracket: the group's query heads above this KV head
        shapes.append(
            {
                "type": "path",
                "xref": "x",
                "yref": "y",
                "path": f"M {k * group + 0.3},1.55 L {k * group + 0.3},1.8 L {(k + 1) * group - 0.3},1.8 "
                f"L {(k + 1) * group - 0.3},1.55 M {(k + 0.5) * group},1.8 L {(k + 0.5) * group},2.15",
                "line": {"color": OUTLINE, "width": 1.5},
            }
        )
        if group * 360 / heads >= 26:  # room for a label at phone width (about 360 px of plot)
            notes.append(_note((k + 0.5) * group, 2.65, f"KV {k + 1}", colour=_ink(fill)))
    notes.append(_note(0, 0.2, f"<b>{heads} query heads</b>", xanchor="left"))
    notes.append(
        _note(
            0,
            3.45,
            f"<b>{kv_heads} KV head{'s' if kv_heads != 1 else ''}</b>: each shared by {group} query "
            f"head{'s' if group != 1 else ''}",
            xanchor="left",
        )
    )
    kind = (
        "multi-head attention"
        if group == 1
        else "multi-query"
        if kv_heads == 1
        else f"GQA, groups of {group}"
    )
    layout = {
        "title": chart_title(
            f"{name}: {heads} query heads share {kv_heads} KV heads",
            f"{kind}: KV cache {binary_bytes(gqa)} per token, not {binary_bytes(mha)} ({mha / gqa:g}× less)",
        ),
        "height": 360,
        "showlegend": False,
        "shapes": shapes,
        "annotations": notes,
        "xaxis": _hidden(-0.2, heads + 0.2),
        "yaxis": _hidden(3.7, 0),
        "plot_bgcolor": "rgba(0,0,0,0)",
    }
    at_gqa = kv_cache_bytes(spec, context)
    at_mha = kv_cache_bytes(mha_spec, context)
    table = (
        {
            "attention": f"as built ({kv_heads} KV heads)",
            "KV heads": kv_heads,
            "KV cache per token (bytes)": gqa,
            f"KV cache at {context:,} tokens (bytes)": at_gqa,
        },
        {
            "attention": f"multi-head ({heads} KV heads)",
            "KV heads": heads,
            "KV cache per token (bytes)": mha,
            f"KV cache at {context:,} tokens (bytes)": at_mha,
        },
    )
    alt = (
        f"{name} has {heads} query heads and {kv_heads} key-value heads: each group of {group} query heads "
        f"reads the same keys and values, so the KV cache is {binary_bytes(gqa)} per token instead of "
        f"{binary_bytes(mha)}, {binary_bytes(at_gqa)} instead of {binary_bytes(at_mha)} "
        f"at {context:,} tokens."
    )
    caption = (
        "Colours and brackets group the query heads that share one KV head. Fewer KV heads shrink the "
        "cache and the bytes each decode step reads. Grouping as in Ainslie et al. 2023, 'GQA' "
        "(arXiv 2305.13245)."
    )
    return Diagram("gqa-sharing", _finish([], layout), alt, table, caption)


def flash_attention(*, model: str = "llama-3-8b", context: int = 8192, gpu: str = "h100-sxm") -> Diagram:
    """Bytes one layer's attention moves through device memory for a prompt, naive vs tiled."""
    if isinstance(context, bool) or not isinstance(context, int) or context < 1:
        raise ValueError(f"context must be a positive whole number, got {context!r}")
    name, spec = _preset_spec(model)
    _uniform_attention(spec, name)
    acc = get_accelerator(gpu)
    heads, kv_heads, d = spec.num_heads, spec.num_kv_heads, spec.head_dim
    naive = attention(1, heads, kv_heads, context, context, d, flash=False)
    flash = attention(1, heads, kv_heads, context, context, d, flash=True)
    qkvo = flash.bytes
    scores = naive.bytes - flash.bytes
    held = attention_score_bytes(spec, context, context)
    bw = acc.memory_bandwidth_bytes_per_s
    columns = ["Naive", "FlashAttention"]
    data = [
        {
            "type": "bar",
            "x": columns,
            "y": [qkvo / GB, qkvo / GB],
            "name": legend_name("Q, K, V read and output written"),
            "marker": {"color": OKABE_ITO[0]},
            "hovertemplate": "%{y:,.3f} GB: Q, K, V and O<extra></extra>",
        },
        {
            "type": "bar",
            "x": columns,
            "y": [scores / GB, 0.0],
            "name": legend_name("score matrix S and softmax P, written to memory and read back"),
            "marker": {"color": OKABE_ITO[5]},
            "hovertemplate": "%{y:,.3f} GB: S and P<extra></extra>",
        },
    ]
    top = naive.bytes / GB
    notes = [
        {
            "x": column,
            "y": total / GB,
            "xref": "x",
            "yref": "y",
            "text": f"{_gb(total)}<br>{total / bw * 1e3:,.3g} ms",
            "showarrow": False,
            "yanchor": "bottom",
            "yshift": 4,
        }
        for total, column in ((naive.bytes, columns[0]), (flash.bytes, columns[1]))
    ]
    layout = {
        "title": chart_title(
            f"FlashAttention moves at least {naive.bytes / flash.bytes:,.0f}× fewer bytes",
            f"{name}, one layer, {context:,}-token prompt; times at {acc.name}'s {bw / 1e12:,.3g} TB/s",
        ),
        "barmode": "stack",
        "bargap": 0.35,
        "height": 480,
        "annotations": notes,
        "xaxis": axis("Attention kernel"),
        "yaxis": axis("GB through device memory, per layer", range=[0, top * 1.3], rangemode="tozero"),
    }
    table = (
        {
            "kernel": "naive (eager)",
            "Q, K, V, O bytes": qkvo,
            "S and P bytes": scores,
            "total bytes": naive.bytes,
            "FLOP per byte": naive.intensity,
            "time at memory bandwidth (s)": naive.bytes / bw,
        },
        {
            "kernel": "FlashAttention",
            "Q, K, V, O bytes": qkvo,
            "S and P bytes": 0.0,
            "total bytes": flash.bytes,
            "FLOP per byte": flash.intensity,
            "time at memory bandwidth (s)": flash.bytes / bw,
        },
        {
            "kernel": "eager peak memory for scores (largest layer, 10 B per score)",
            "Q, K, V, O bytes": None,
            "S and P bytes": held,
            "total bytes": held,
            "FLOP per byte": None,
            "time at memory bandwidth (s)": None,
        },
    )
    alt = (
        f"For one layer of {name} on a {context:,}-token prompt, naive attention moves {_gb(naive.bytes)} "
        f"through device memory, {_gb(scores)} of it the score matrix; FlashAttention keeps the scores on "
        f"chip and moves at least {_gb(flash.bytes)} (each of Q, K, V and O once: a lower bound), "
        f"{naive.bytes / flash.bytes:,.0f} times less."
    )
    caption = (
        "Same FLOPs, different bytes: the naive kernel writes the heads × tokens × tokens scores and "
        "probabilities to memory and reads them back; the tiled kernel computes them block by block in "
        "on-chip SRAM. The FlashAttention bar is a lower bound on its traffic: it counts Q, K, V and O "
        "crossing memory once, while the kernel re-reads K and V for every block of queries, "
        "Θ(N²d²/M) bytes for SRAM of M (Dao et al. 2022, Theorem 2). "
        f"Eager PyTorch attention also holds {_gb(held)} of scores at its peak."
    )
    return Diagram("flash-attention", _finish(data, layout), alt, table, caption)


def moe_routing(*, model: str = "mixtral-8x7b", tokens: int = 6, seed: int = 0) -> Diagram:
    """Tokens × experts: each token's row marks the k experts it runs (an example routing)."""
    _check_range("tokens", tokens, 1, 10)
    name, spec = _preset_spec(model)
    if not spec.is_moe:
        raise ValueError(f"{name} is not a mixture of experts")
    experts, k = spec.num_experts, spec.experts_per_token
    rng = random.Random(seed)
    picks = [sorted(rng.sample(range(experts), k)) for _ in range(tokens)]
    used = sorted({e for p in picks for e in p})
    expected = expected_experts_touched(experts, k, tokens)
    active, total = spec.param_count(active=True), spec.param_count()
    mark = experts <= 32
    z = [[1 if e in p else 0 for e in range(experts)] for p in picks]
    text = [["●" if e in p else "" for e in range(experts)] for p in picks]
    data = [
        {
            "type": "heatmap",
            "x": list(range(1, experts + 1)),
            "y": [f"Token {t + 1}" for t in range(tokens)],
            "z": z,
            "zmin": 0,
            "zmax": 1,
            "colorscale": [
                [0.0, EMPTY_COLOUR],
                [0.5, EMPTY_COLOUR],
                [0.5, OKABE_ITO[0]],
                [1.0, OKABE_ITO[0]],
            ],
            "showscale": False,
            "xgap": 2 if experts <= 64 else 0,
            "ygap": 2,
            "text": text,
            "texttemplate": "%{text}" if mark else "",
            "textfont": {"color": "white", "size": LABEL_FONT_PX},
            "hovertemplate": "%{y}, expert %{x}: %{customdata}<extra></extra>",
            "customdata": [["runs this expert" if v else "skips it" for v in row] for row in z],
            "name": "routing",
            "showlegend": False,
        }
    ]
    layout = {
        "title": chart_title(
            f"{name}: each token runs {k} of {experts} experts in every layer",
            f"{active / 1e9:,.1f}B of {total / 1e9:,.1f}B parameters active per token; these {tokens} "
            f"tokens used {len(used)} experts (uniform routing: {expected:,.1f} expected)",
        ),
        "height": 230 + 32 * tokens,
        "showlegend": False,
        "xaxis": axis(
            "Expert (● = token runs it)" if mark else "Expert (dark line = token runs it)",
            dtick=1 if experts <= 16 else None,
            showgrid=False,
        ),
        "yaxis": axis("", autorange="reversed", showgrid=False),
    }
    table = (
        *(
            {"token": t + 1, "experts run": ", ".join(str(e + 1) for e in p), "experts skipped": experts - k}
            for t, p in enumerate(picks)
        ),
        {
            "token": "all",
            "experts run": f"{len(used)} distinct (expected {expected:.2f} under uniform routing)",
            "experts skipped": experts - len(used),
        },
    )
    alt = (
        f"A grid of {tokens} tokens by {experts} experts of one layer of {name}: that layer's router sends "
        f"each token to {k} experts (every MoE layer chooses again), so {active / 1e9:,.1f}B of its "
        f"{total / 1e9:,.1f}B parameters work per token; together these tokens used {len(used)} of the "
        f"{experts} experts."
    )
    caption = (
        f"The router is learned; the picks drawn here are one layer's, a seeded random example (seed "
        f"{seed}), not a trace. Each MoE layer has its own router and picks its {k} experts afresh. "
        "A batch touches more experts than one token, which is why MoE decode at large batch reads "
        "nearly all the weights."
    )
    return Diagram("moe-routing", _finish(data, layout), alt, table, caption)


def batching_tpot(
    *,
    model: str = "llama-3-8b",
    gpu: str = "h100-sxm",
    context: int = 1024,
    max_batch: int = 256,
    weight_fmt: str = "bf16",
    dtype: str = "bf16",
) -> Diagram:
    """Decode step time (= time per output token) against the batch size, memory and compute bounds."""
    _check_range("max_batch", max_batch, 1, 4096)
    name, spec = _preset_spec(model)
    acc = get_accelerator(gpu)
    bw, peak = acc.memory_bandwidth_bytes_per_s, acc.peak_flops(dtype)
    batches = [2**i for i in range(int(math.log2(max_batch)) + 1)]
    capacity = acc.memory_bytes
    weights = weight_bytes(spec, weight_fmt)
    fits = [b for b in batches if capacity is None or weights + kv_cache_bytes(spec, context, b) <= capacity]
    if not fits:
        raise ValueError(f"{name} with a {context:,}-token context does not fit in {acc.name}'s memory")
    steps = [
        decode_step(
            spec,
            bandwidth_bytes_per_s=bw,
            peak_flops=peak,
            batch=b,
            context_tokens=context,
            weight_fmt=weight_fmt,
        )
        for b in fits
    ]
    ms = [s.step_time_s * 1e3 for s in steps]
    data = [
        {
            "type": "scatter",
            "x": fits,
            "y": ms,
            "mode": "lines+markers",
            "line": {"color": OKABE_ITO[0], "width": 3},
            "marker": {"size": 9},
            "name": legend_name("Time per step = time per output token"),
            "customdata": [[s.tokens_per_s, s.bound] for s in steps],
            "hovertemplate": "batch %{x}: %{y:,.2f} ms per token, %{customdata[0]:,.0f} tokens/s "
            "(%{customdata[1]}-bound)<extra></extra>",
        },
        {
            "type": "scatter",
            "x": fits,
            "y": [s.memory_time_s * 1e3 for s in steps],
            "mode": "lines",
            "line": {"color": OKABE_ITO[1], "width": 2, "dash": "dash"},
            "name": legend_name("Reading weights + KV cache (memory bound)"),
            "hovertemplate": "batch %{x}: memory %{y:,.2f} ms<extra></extra>",
        },
        {
            "type": "scatter",
            "x": fits,
            "y": [s.compute_time_s * 1e3 for s in steps],
            "mode": "lines",
            "line": {"color": OKABE_ITO[2], "width": 2, "dash": "dot"},
            "name": legend_name("FLOPs at peak (compute bound)"),
            "hovertemplate": "batch %{x}: compute %{y:,.2f} ms<extra></extra>",
        },
    ]
    first, last = steps[0], steps[-1]
    notes = [
        {
            "x": math.log10(s.batch),
            "y": s.step_time_s * 1e3,
            "xref": "x",
            "yref": "y",
            "text": f"{s.tokens_per_s:,.0f} tok/s",
            "showarrow": False,
            "yanchor": "bottom",
            "yshift": 6,
            "xanchor": "left" if s is first else "right",
        }
        for s in ((first, last) if len(steps) > 1 else (first,))
    ]
    dropped = len(batches) - len(fits)
    layout = {
        "title": chart_title(
            f"Batch {last.batch}: {last.step_time_s * 1e3:,.3g} ms per token vs "
            f"{first.step_time_s * 1e3:,.3g} ms at batch 1",
            f"{name} on {acc.name}, {context:,}-token context: "
            f"{last.tokens_per_s / first.tokens_per_s:,.0f}× the tokens per second",
        ),
        "height": 500,
        "annotations": notes,
        "xaxis": axis("Batch size (sequences decoded together)", type="log", tickvals=fits, ticktext=fits),
        "yaxis": axis("Time per decode step (ms)", rangemode="tozero", range=[0, max(ms) * 1.25]),
    }
    table = tuple(
        {
            "batch": s.batch,
            "step time = TPOT (s)": s.step_time_s,
            "memory time (s)": s.memory_time_s,
            "compute time (s)": s.compute_time_s,
            "tokens per second": s.tokens_per_s,
            "bound": s.bound,
        }
        for s in steps
    )
    alt = (
        f"Time per decode step for {name} on {acc.name} at a {context:,}-token context: "
        f"{first.step_time_s * 1e3:,.3g} ms at batch 1 and {last.step_time_s * 1e3:,.3g} ms at batch "
        f"{last.batch}, so the batch gets {last.tokens_per_s / first.tokens_per_s:,.0f} times the tokens per "
        "second for a small rise in each user's time per output token."
    )
    caption = (
        "Each step reads all the weights once, whatever the batch, so while decode is memory-bound more "
        "sequences ride along almost free; the KV cache each one adds makes the step slowly longer. "
        "Roofline bounds, not measurements"
        + (f"; {dropped} larger batch sizes do not fit in memory and are left out." if dropped else ".")
    )
    return Diagram("batching-tpot", _finish(data, layout), alt, table, caption)


def prefill_vs_decode(
    *,
    model: str = "llama-3-8b",
    gpu: str = "h100-sxm",
    prompt_tokens: int = 2048,
    context: int = 2048,
    batch: int = 1,
    dtype: str = "bf16",
) -> Diagram:
    """Prefill and one decode step as points on the GPU's roofline."""
    name, spec = _preset_spec(model)
    acc = get_accelerator(gpu)
    peak, bw = acc.peak_flops(dtype), acc.memory_bandwidth_bytes_per_s
    ridge = acc.ridge_point(dtype)
    prefill = prefill_op(spec, prompt_tokens)
    decode = decode_step_op(spec, batch, context)
    low = min(decode.intensity, ridge) / 4
    high = max(prefill.intensity, ridge) * 4
    xs = [low * (high / low) ** (i / 60) for i in range(61)]
    roof = [attainable_flops(x, peak, bw) / 1e12 for x in xs]
    points = (
        # Prefill sits on the flat roof right of the ridge marker: its label goes above its own square,
        # not to the left, where it read as the ridge's label (diagram review 2026-11).
        ("Decode", decode, OKABE_ITO[5], "middle right"),
        ("Prefill", prefill, OKABE_ITO[0], "top center"),
    )
    data: list[dict[str, Any]] = [
        {
            "type": "scatter",
            "x": xs,
            "y": roof,
            "mode": "lines",
            "line": {"color": OUTLINE, "width": 3},
            "name": legend_name(f"{acc.name} roof: {dtype.upper()} peak and memory bandwidth"),
            "hoverinfo": "skip",
        },
        {
            "type": "scatter",
            "x": [ridge],
            "y": [peak / 1e12],
            "mode": "markers+text",
            "marker": {"size": 10, "symbol": "circle-open", "color": OUTLINE, "line": {"width": 2}},
            "text": [f"ridge {ridge:,.0f}"],
            "textposition": "bottom right",
            "name": legend_name(f"Ridge point: {ridge:,.0f} FLOP/byte"),
            "hovertemplate": "ridge %{x:,.0f} FLOP/byte<extra></extra>",
        },
    ]
    for label, op, colour, position in points:
        on_roof = op.attainable_flops(peak, bw) / 1e12
        data.append(
            {
                "type": "scatter",
                "x": [op.intensity],
                "y": [on_roof],
                "mode": "markers+text",
                "marker": {
                    "size": 14,
                    "color": colour,
                    "symbol": "diamond" if label == "Decode" else "square",
                },
                "text": [f"{label}: {plain_number(op.intensity)} FLOP/B"],
                "textposition": position,
                "name": legend_name(f"{label}: {op.bound(peak, bw)}-bound"),
                "hovertemplate": f"{op.name}<br>%{{x:,.1f}} FLOP/byte, %{{y:,.0f}} TFLOP/s<extra></extra>",
            }
        )
    ys = [min(roof), peak / 1e12]
    layout = {
        "title": chart_title(
            f"Prefill: {plain_number(prefill.intensity)} FLOP/byte; decode: {decode.intensity:,.3g}",
            f"{name} on {acc.name}: ridge at {ridge:,.0f} FLOP/byte",
        ),
        "height": 500,
        "xaxis": axis("Arithmetic intensity (FLOP per byte, log)", **decade_ticks(low, high)),
        "yaxis": axis("Attainable TFLOP/s (log)", **decade_ticks(ys[0], ys[1] * 10)),
    }
    table = (
        *(
            {
                "phase": label,
                "operation": op.name,
                "FLOPs": op.flops,
                "bytes": op.bytes,
                "FLOP per byte": op.intensity,
                "attainable FLOP/s": op.attainable_flops(peak, bw),
                "bound": op.bound(peak, bw),
            }
            for label, op, _, _ in points
        ),
        {"phase": "ridge", "operation": acc.name, "FLOP per byte": ridge, "attainable FLOP/s": peak},
    )
    alt = (
        f"On {acc.name}'s roofline (ridge {ridge:,.0f} FLOP/byte), {name}'s prefill of {prompt_tokens:,} "
        f"tokens does {prefill.intensity:,.0f} FLOP per byte and is {prefill.bound(peak, bw)}-bound, while a "
        f"decode step at batch {batch} does {decode.intensity:,.2f} and is {decode.bound(peak, bw)}-bound."
    )
    caption = (
        "Prefill multiplies every weight by all the prompt's tokens at once; decode reads every weight "
        "(and the KV cache) to produce one token per sequence, so it sits far left on the memory slope."
    )
    return Diagram("prefill-vs-decode", _finish(data, layout), alt, table, caption)


def _kind_tokens(spec: ModelSpec, context: int) -> dict[str, int]:
    """Tokens one layer of each kind keeps at ``context`` (kind key -> tokens)."""
    out: dict[str, int] = {}
    for kind, kept in zip(spec.kinds(), spec.cached_tokens_per_layer(context), strict=True):
        out.setdefault(kind, kept)
    return out


def sliding_window_cache(*, model: str = "gemma-2-9b", max_context: int | None = None) -> Diagram:
    """Tokens a layer keeps against the context, one line per layer kind: sliding layers level off."""
    name, spec = _preset_spec(model)
    if "sliding" not in spec.kinds():
        raise ValueError(f"{name} has no sliding-window layers")
    window = spec.sliding_window
    longest = max_context or spec.max_positions or 4 * window
    if longest < 1:
        raise ValueError(f"max_context must be positive, got {longest!r}")
    contexts = sorted({0, min(window, longest), longest, longest // 2})
    kinds = list(dict.fromkeys(spec.kinds()))
    by_kind = kv_cache_by_kind(spec, contexts)
    labels = dict(zip(kinds, by_kind.layers, strict=True))  # kind key -> label of kv_cache_by_kind
    kept = {c: _kind_tokens(spec, c) for c in contexts}
    data = []
    for index, kind in enumerate(kinds):
        label = labels[kind]
        count = by_kind.layers[label]
        ys = [kept[c][kind] for c in contexts]
        data.append(
            {
                "type": "scatter",
                "x": contexts,
                "y": ys,
                "mode": "lines+markers",
                "line": {"color": _colour(index), "width": 3, "dash": "solid" if index == 0 else "dash"},
                "name": legend_name(
                    f"{LAYER_KINDS.get(kind, kind)} layers ({count}): {ys[-1]:,} tokens kept"
                ),
                "hovertemplate": f"{label}: %{{y:,}} tokens kept at %{{x:,}}<extra></extra>",
            }
        )
    total, naive = by_kind.total[-1], by_kind.naive[-1]
    layout = {
        "title": chart_title(
            f"{name}: sliding layers keep at most {window:,} tokens",
            f"At {longest:,} tokens the cache is {_gb(total)} per sequence, not {_gb(naive)}",
        ),
        "height": 460,
        "xaxis": axis("Context (tokens)", rangemode="tozero"),
        "yaxis": axis("Tokens kept per layer", rangemode="tozero"),
    }
    table = tuple(
        {"context (tokens)": c}
        | {f"tokens kept per {LAYER_KINDS.get(kind, kind)} layer": kept[c][kind] for kind in kinds}
        | {f"cache, {label} (bytes)": by_kind.parts[label][i] for label in by_kind.parts}
        | {
            "cache total (bytes)": by_kind.total[i],
            "if every layer kept every token (bytes)": by_kind.naive[i],
        }
        for i, c in enumerate(contexts)
    )
    counts = ", ".join(f"{by_kind.layers[labels[k]]} {LAYER_KINDS.get(k, k)}" for k in kinds)
    alt = (
        f"{name} has {counts} layers: a sliding-window layer keeps at most the last {window:,} tokens "
        f"while a full-attention layer keeps them all, so at {longest:,} tokens one sequence's cache is "
        f"{_gb(total)} instead of {_gb(naive)}."
    )
    caption = (
        "Below the window every layer keeps every token; past it, sliding layers stop growing. Formulas "
        "that multiply every layer by the whole context overstate the cache of such models."
    )
    return Diagram("sliding-window-cache", _finish(data, layout), alt, table, caption)


# One letter per layer kind for the layer grid (a label beside the colour, not a number).
KIND_LETTERS = {
    "full": "A",
    "sliding": "W",
    "chunked": "C",
    "mla": "L",
    "linear": "Li",
    "ssm": "S",
    "recurrent": "R",
    "shared": "=",
    "none": "–",
}


def hybrid_cache(*, model: str = "nemotron-3-nano-30b-a3b", context: int = 131_072) -> Diagram:
    """The model's layers by kind (top) and the cache each kind keeps at ``context`` (bottom)."""
    if isinstance(context, bool) or not isinstance(context, int) or context < 1:
        raise ValueError(f"context must be a positive whole number, got {context!r}")
    name, spec = _preset_spec(model)
    kinds = spec.kinds()
    order = list(dict.fromkeys(kinds))
    if len(order) < 2:
        raise ValueError(f"{name} has only one kind of layer; a hybrid mixes several")
    by_kind = kv_cache_by_kind(spec, [context])
    none_layers = {i for i, kind in enumerate(kinds) if kind == "none"}
    moe = bool(none_layers) and none_layers <= set(spec.moe_layers or ())

    def kind_name(kind: str) -> str:
        # Layers without a token mixer are MLP or MoE blocks; say which (Nemotron-H's "E" layers are MoE).
        if kind == "none":
            if moe:
                return (
                    f"MoE FFN, {spec.experts_per_token} of {spec.num_experts} experts (no token mixer)"
                    if spec.num_experts
                    else "MoE FFN (no token mixer)"
                )
            return "MLP only (no token mixer)"
        return LAYER_KINDS.get(kind, kind)

    def letter(kind: str) -> str:
        return "E" if kind == "none" and moe else KIND_LETTERS.get(kind, "?")

    labels = dict(zip(order, by_kind.layers, strict=True))  # kind key -> kv_cache_by_kind label
    light = [c for c in OKABE_ITO if _ink(c) != "white"]
    colour = {kind: light[i % len(light)] for i, kind in enumerate(order)}
    layers = spec.num_layers
    columns = min(layers, 13)
    rows = math.ceil(layers / columns)
    z: list[list[float | None]] = [[None] * columns for _ in range(rows)]
    text = [[""] * columns for _ in range(rows)]
    hover = [[""] * columns for _ in range(rows)]
    for i, kind in enumerate(kinds):
        r, c = divmod(i, columns)
        z[r][c] = float(order.index(kind))
        text[r][c] = letter(kind)
        hover[r][c] = f"Layer {i}: {kind_name(kind)}"
    scale: list[list[Any]] = []
    for i, kind in enumerate(order):
        scale += [[i / len(order), colour[kind]], [(i + 1) / len(order), colour[kind]]]
    data: list[dict[str, Any]] = [
        {
            "type": "heatmap",
            "xaxis": "x",
            "yaxis": "y",
            "x": list(range(columns)),
            "y": list(range(rows)),
            "z": z,
            "zmin": -0.5,
            "zmax": len(order) - 0.5,
            "colorscale": scale,
            "showscale": False,
            "xgap": 2,
            "ygap": 2,
            "text": text,
            "texttemplate": "%{text}",
            "textfont": {"size": LABEL_FONT_PX, "color": LABEL_BOX_TEXT},
            "hovertext": hover,
            "hoverinfo": "text",
            "showlegend": False,
            "name": "layers",
        }
    ]
    bar_labels = [f"{letter(kind)}: {by_kind.layers[labels[kind]]} {kind_name(kind)}" for kind in order]
    values = [by_kind.parts[labels[kind]][0] for kind in order]
    naive_label = f"all {layers} as full attention"
    data.append(
        {
            "type": "bar",
            "xaxis": "x2",
            "yaxis": "y2",
            "x": [wrap(b, 12) for b in bar_labels] + [wrap(naive_label, 12)],
            "y": [v / GB for v in values] + [by_kind.naive[0] / GB],
            "marker": {
                "color": [colour[k] for k in order] + [EMPTY_COLOUR],
                "line": {"color": OUTLINE, "width": 1},
            },
            "text": [_gb(v) if v else "none" for v in values] + [_gb(by_kind.naive[0])],
            "textposition": "outside",
            "cliponaxis": False,
            "showlegend": False,
            "name": "cache",
            "hovertemplate": "%{x}: %{y:,.3f} GB<extra></extra>",
        }
    )
    total = by_kind.total[0]
    layout = {
        "title": chart_title(
            f"{name}: {_gb(total)} of cache at {context:,} tokens",
            f"not {_gb(by_kind.naive[0])}: only {sum(1 for k in kinds if k in ('full', 'mla'))} of {layers} "
            "layers keep every token",
        ),
        "height": 520,
        "showlegend": False,
        "xaxis": _hidden(-0.5, columns - 0.5, anchor="y"),
        "yaxis": _hidden(rows - 0.5, -0.5, domain=[0.62, 1.0], anchor="x"),
        "xaxis2": axis("", anchor="y2", tickangle=0),
        "yaxis2": axis(
            "Cache per sequence (GB)", domain=[0.0, 0.5], anchor="x2", range=[0, by_kind.naive[0] / GB * 1.25]
        ),
        "annotations": [
            {
                "xref": "paper",
                "yref": "paper",
                "x": 0,
                "y": 0.6,
                "yanchor": "top",
                "xanchor": "left",
                "showarrow": False,
                "text": f"Layers 0–{layers - 1} in order, lettered by kind",
            }
        ],
    }
    table = (
        *tuple(
            {
                "layer kind": kind_name(kind),
                "layers": by_kind.layers[labels[kind]],
                f"cache at {context:,} tokens (bytes)": by_kind.parts[labels[kind]][0],
            }
            for kind in order
        ),
        {
            "layer kind": "all layers as full attention",
            "layers": layers,
            f"cache at {context:,} tokens (bytes)": by_kind.naive[0],
        },
    )
    counts = ", ".join(f"{by_kind.layers[labels[k]]} {kind_name(k)}" for k in order)
    alt = (
        f"{name} has {layers} layers: {counts}. At {context:,} tokens one sequence's cache is {_gb(total)}, "
        f"against {_gb(by_kind.naive[0])} if every layer were full attention; the fixed-state layers keep "
        f"{_gb(spec.state_bytes())} whatever the context."
    )
    caption = (
        "Letters name each layer's kind. Only the attention layers grow with the context; state-space "
        "layers keep a fixed-size state and layers without a token mixer (MLP or MoE) keep nothing, so a "
        "hybrid's cache is a fraction of a transformer's of the same depth."
    )
    return Diagram("hybrid-cache", _finish(data, layout), alt, table, caption)


DIAGRAMS = {
    "kv-cache-growth": kv_cache_growth,
    "paged-kv": paged_kv,
    "gqa-sharing": gqa_sharing,
    "flash-attention": flash_attention,
    "moe-routing": moe_routing,
    "batching-tpot": batching_tpot,
    "prefill-vs-decode": prefill_vs_decode,
    "sliding-window-cache": sliding_window_cache,
    "hybrid-cache": hybrid_cache,
}
