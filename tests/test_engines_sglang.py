"""SGLang's start-up (simulators/engines/sglang.py, following SGLang 0.5.23's source and, for older
logs, the 0.5.3, 0.4.4.post2, 0.4.0.post1 and 0.3.5 wheels where their rules differ) against
real SGLang start-up logs (tests/data/sglang_startups.jsonl: each row keeps its raw lines and
the URL it came from).

Thirty-six public logs are collected (tests/data/sglang_startups.jsonl and its companion
sglang_startups_more.jsonl) from H100 (SXM and NVL), H200, B200, GB300, L4, RTX 3090, RTX 4090,
MI300X, MI355X and unnamed 48 GB cards. Twenty-seven are predicted from their model's config.json,
every one within 1 % (-0.12 % to +0.86 %): among them QwQ-32B on 4 x L4 +0.00 % since the weights
follow SGLang's FP32 rotary table and the caching allocator's whole segments, Qwen3-235B-FP8
+0.46 %, Gemma 3 4B +0.11 %, Llama 3.3 70B +0.02 %, Qwen3-14B on 4 x RTX 4090 +0.04 %, Kimi K2.5
on 8 x MI355X +0.13 % (its MoonViT tower, projector and W4A16 routed experts as SGLang builds them,
``kimi_k25_weight_parts``: 73.37 GiB a rank against 73.58 printed), and fourteen runs of SGLang's
documentation CI +0.14 % to +0.25 %: Llama 3.2 1B, Llama 3.1 8B, Llama 2 7B chat + EAGLE,
gte-Qwen2-7B-instruct (embedding), Skywork-Reward-Llama-3.1-8B (reward) and Llama 3.2 11B Vision
(mllama: its cross-attention layers in the one pool, its vision tower from models/mllama.py,
+0.22 %), under the 0.3.5, 0.4.0.post1 and 0.4.4.post2 rules. Nine are refused with the reason in
the row, each because the log does not give what any prediction needs (``refused_for: input``,
``missing`` naming the fraction, the memory before the weights, the weights, a sourced config,
the release or the card, each checked against the raw lines); none is refused for a feature the
model lacks (``refused_for: model``). Issue 31's bar is judged on the 27 logs whose inputs are
known, a model refusal counting as a miss: 27 of 27 within 2 % (100 %), all within 5 %, so
test_issue_31_sglang_acceptance passes.

Every documentation-CI row prints 0.09-0.10 GiB more weights than predicted, whatever the model's
size (2.4 to 20.2 GiB); the cause is not found and nothing is fitted to it.

The two Qwen 3.5 logs print SGLang's Mamba pool ("Mamba Cache is allocated"): the state one
request slot takes (from Qwen3.5-397B-A17B's config, inferred from the bytes) times the printed
slots gives the printed conv and SSM sizes, and the 0.9 ratio rule gives back the printed slot
count from the log's own pools.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from simulators import engines
from simulators.engines import (
    EngineError,
    GiB,
    LogError,
    parse_log,
    parse_sglang_log,
    sglang_log_lines,
    sglang_min_mem_fraction,
    sglang_startup,
)
from simulators.engines.sglang import (
    DSA_PAGE_SIZE,
    MAMBA_FULL_MEMORY_RATIO,
    MAMBA_SLOTS_PER_REQUEST,
    SGLANG_RULES,
    SWA_FULL_TOKENS_RATIO,
    caching_allocator_reserved,
    default_mem_fraction_static,
    sglang_cell,
    sglang_dsa_cell,
    sglang_mamba_cache_size,
    sglang_mamba_state,
)
from simulators.engines.vllm import vllm_weight_bytes, weight_layout
from simulators.model_config import ModelSpec
from simulators.presets import get_model_preset

DATA = Path(__file__).parent / "data"
ROWS = {
    r["id"]: r
    for r in (
        json.loads(line)
        for path in sorted(DATA.glob("sglang_startups*.jsonl"))  # and companions (sglang_startups_*.jsonl)
        for line in path.read_text("utf-8").splitlines()
        if line
    )
}
QWEN3_235B_FP8 = json.loads((DATA / "vllm_configs" / "qwen--qwen3-235b-a22b-fp8.json").read_text("utf-8"))
QWEN3_32B = json.loads((DATA / "vllm_configs" / "qwen--qwen3-32b.json").read_text("utf-8"))


def _off(predicted: float, measured: float) -> float:
    return abs(predicted / measured - 1)


@pytest.mark.parametrize("row", list(ROWS.values()), ids=list(ROWS))
def test_every_row_has_its_source_and_raw_lines(row):
    assert row["source"].startswith("https://github.com/")
    assert row["raw_lines"] and row["kv_tokens"] > 0
    parsed = parse_log("\n".join(row["raw_lines"]))
    assert parsed["engine"] == "sglang"
    # older builds print no "#tokens" on the KV line (or no KV line): max_total_num_tokens then
    assert parsed.get("kv_tokens", parsed.get("max_total_num_tokens")) == row["kv_tokens"]


def test_parser_reads_every_memory_figure_in_bytes():
    row = ROWS["llms-in-clouds-qwq-32b-4xl4-tp4"]
    p = parse_sglang_log("\n".join(row["raw_lines"]))
    assert p["baseline_bytes"] == pytest.approx(21.63 * GiB)
    assert p["after_weights_bytes"] == pytest.approx(6.09 * GiB)
    assert p["weights_bytes"] == pytest.approx(15.54 * GiB)
    assert p["kv_bytes"] == pytest.approx(2 * 1.42 * GiB)
    assert p["after_pool_bytes"] == pytest.approx(2.09 * GiB)
    assert p["cuda_graph_bytes"] == pytest.approx(0.93 * GiB)
    assert p["distributed_bytes"] == pytest.approx(0.13 * GiB)
    assert (p["max_total_num_tokens"], p["context_len"], p["chunked_prefill_size"]) == (46611, 131072, 2048)
    assert (p["mem_fraction_static"], p["tp_size"], p["model_path"]) == (0.85, 4, "/home/model/Qwen/QwQ-32B")
    assert p["version"] is None  # the log prints none, and the parser says so


def test_parser_reads_the_version_and_an_mla_pool():
    text = (
        "sglang: 0.4.6.post1\n"
        "[2025-05-01 10:00:00 TP0] KV Cache is allocated. #tokens: 123456, KV size: 7.52 GB\n"
        "[2025-05-01 10:00:01 TP0] max_total_num_tokens=123456, chunked_prefill_size=8192,"
        " max_prefill_tokens=16384, max_running_requests=2048, context_len=163840,"
        " available_gpu_mem=10.25 GB\n"
    )
    p = parse_log(text)
    assert (p["engine"], p["version"]) == ("sglang", "0.4.6.post1")
    assert p["kv_bytes"] == pytest.approx(7.52 * GiB)
    assert p["available_gpu_mem_bytes"] == pytest.approx(10.25 * GiB)


def test_an_sglang_log_that_mentions_vllm_is_read_as_sglang():
    text = (
        "INFO 03-07 12:29:08 vllm platform detected\n"
        "[TP0] KV Cache is allocated. #tokens: 10, K size: 0.01 GB, V size: 0.01 GB"
    )
    assert parse_log(text)["engine"] == "sglang"


def test_an_sglang_log_without_memory_lines_is_said():
    with pytest.raises(LogError, match="none of its memory lines"):
        parse_sglang_log("[2025-03-08 12:29:12 TP0] sglang is using nccl==2.21.5")


def test_the_profile_rule_reproduces_the_log_it_came_from():
    """_profile_available_bytes on the log's own figures: (free after weights − baseline × (1 − f))
    divided by the bytes a token takes gives the printed #tokens. The bytes per token come from
    Qwen3-32B's config, which has QwQ-32B's KV geometry (64 layers, 8 KV heads of 128); the printed
    K size checks that geometry."""
    row = ROWS["llms-in-clouds-qwq-32b-4xl4-tp4"]
    p = parse_sglang_log("\n".join(row["raw_lines"]))
    cell = sglang_cell(ModelSpec.from_hf_config(QWEN3_32B), tp=row["tp"], kv_bytes=2)
    assert p["k_bytes"] == pytest.approx(row["kv_tokens"] * cell.full_bytes / 2, rel=0.005)
    rest = p["after_weights_bytes"] - p["baseline_bytes"] * (1 - p["mem_fraction_static"])
    # the log prints GB to 2 decimals: ±0.005 GB on each figure bounds the tokens
    slack = 0.005 * GiB * (1 + (1 - p["mem_fraction_static"])) / cell.bytes_per_token
    assert abs(rest / cell.bytes_per_token - row["kv_tokens"]) <= slack


def test_qwen3_235b_fp8_on_four_h100s_within_five_percent():
    """The issue's log (vLLM 8.11 GiB against SGLang 16.47 GiB on the same 4×H100), predicted from
    the config and the log's --mem-fraction-static 0.93 with the H100's reported total."""
    row = ROWS["vllm-21348-qwen3-235b-a22b-fp8-4xh100-tp4"]
    s = sglang_startup(QWEN3_235B_FP8, "h100-sxm", tp=4, mem_fraction_static=0.93)
    assert s.fits
    off = _off(s.max_total_num_tokens, row["kv_tokens"])
    print(
        f"\nQwen3-235B-A22B-FP8 TP4: {s.max_total_num_tokens:,} predicted,"
        f" {row['kv_tokens']:,} logged ({off:.2%})"
    )
    assert off <= 0.05
    # the per-token bytes are exact: the printed K size over the printed tokens
    printed_k = parse_log("\n".join(row["raw_lines"]))["k_bytes"]
    assert s.cell.full_bytes / 2 * row["kv_tokens"] == pytest.approx(printed_k, rel=0.005)


def test_default_fraction_follows_the_capacity_rules():
    h100 = engines.reported_memory_bytes("h100-sxm")
    d1 = default_mem_fraction_static(h100, tp=1)
    d4 = default_mem_fraction_static(h100, tp=4)
    assert d1["chunked_prefill_size"] == 8192 and d1["cuda_graph_max_bs"] == 256
    assert d4["cuda_graph_max_bs"] == 512
    # reserved MiB: 512 + 1.5 × 8192 + TP/8 GiB + 2 MiB per decode batch size + 8 MiB per prefill size
    assert d1["reserved_mib"] == 512 + 1.5 * 8192 + 128 + 2 * 256 + 8 * 58
    assert d1["mem_fraction_static"] == round((h100 / 2**20 - d1["reserved_mib"]) / (h100 / 2**20), 3)
    assert d4["mem_fraction_static"] < d1["mem_fraction_static"]
    small = default_mem_fraction_static(16 * GiB)
    assert (small["chunked_prefill_size"], small["cuda_graph_max_bs"]) == (2048, 8)
    assert small["reserved_mib"] < 10 * 1024  # the 10 GiB floor holds only above 60 GiB


def test_the_ledger_adds_up_to_the_device_total():
    s = sglang_startup(get_model_preset("llama-3.1-8b").config, "h100-sxm")
    ledger = s.ledger()
    assert ledger.engine == "sglang" and ledger.version == engines.SGLANG_VERSION
    assert ledger.used_bytes == pytest.approx(s.total_bytes, abs=s.cell.full_bytes * 2)
    assert ledger.get("cuda_context").kind == "measured"
    assert ledger.get("kv_cache").bytes == pytest.approx(s.kv_bytes)
    assert s.kv_bytes == (s.max_total_num_tokens + 1) * s.cell.full_bytes
    # Llama 3.1 8B: 32 layers × 8 KV heads × (128 + 128) × 2 bytes a token
    assert s.cell.full_bytes == 32 * 8 * 256 * 2
    lines = sglang_log_lines(s)
    back = parse_log("\n".join(lines))
    assert back["max_total_num_tokens"] == s.max_total_num_tokens


def test_weights_larger_than_the_free_memory_stop_the_load_not_the_profile():
    """DeepSeek V3.2's 630 GiB of FP8 weights on one H200: the load itself runs out of memory, so
    no 'Load weight end' line, no negative free memory, and no --mem-fraction-static above 1."""
    s = sglang_startup(get_model_preset("deepseek-v3.2").config, "h200-sxm")
    assert s.verdict == "refused" and s.weights_bytes > s.baseline_bytes
    assert (
        "do not fit" in s.message and "--tp" in s.message and "Raise --mem-fraction-static" not in s.message
    )
    lines = sglang_log_lines(s)
    assert lines[0].startswith("Load weight begin") and not any("Load weight end" in line for line in lines)
    assert not any("=-" in line for line in lines)


def test_fp8_kv_halves_the_cell_and_page_size_aligns():
    cfg = get_model_preset("llama-3.1-8b").config
    bf16 = sglang_startup(cfg, "h100-sxm", mem_fraction_static=0.8)
    fp8 = sglang_startup(cfg, "h100-sxm", mem_fraction_static=0.8, kv_cache_dtype="fp8_e4m3", page_size=64)
    assert fp8.cell.full_bytes * 2 == bf16.cell.full_bytes
    assert fp8.max_total_num_tokens % 64 == 0
    assert 2 * bf16.max_total_num_tokens - 64 <= fp8.max_total_num_tokens <= 2 * bf16.max_total_num_tokens + 1


def test_sliding_window_models_get_two_pools():
    cfg = get_model_preset("gemma-2-9b").config
    s = sglang_startup(cfg, "h100-sxm", mem_fraction_static=0.85)
    assert s.cell.arch == "SWA hybrid" and s.cell.swa_layers == s.cell.full_layers
    assert s.swa_tokens == int(s.max_total_num_tokens * SWA_FULL_TOKENS_RATIO)
    assert s.max_total_num_tokens == int(int(s.pool_bytes) // s.cell.bytes_per_token)


def test_mla_keeps_the_latent_whole_on_every_rank():
    cfg = get_model_preset("deepseek-v3").config
    spec = ModelSpec.from_hf_config(cfg)
    cell = sglang_cell(spec, tp=8, kv_bytes=2)
    assert cell.arch == "MLA"
    assert cell.full_bytes == spec.num_layers * (spec.kv_lora_rank + spec.qk_rope_head_dim) * 2


def test_weights_that_leave_no_pool_are_refused_with_sglangs_minimum():
    low = sglang_startup(QWEN3_235B_FP8, "h100-sxm", tp=4, mem_fraction_static=0.6)
    assert low.verdict == "refused" and "Raise --mem-fraction-static above" in low.message
    minimum = sglang_min_mem_fraction(QWEN3_235B_FP8, "h100-sxm", tp=4)
    assert f"above {minimum:.3f}" in low.message
    assert sglang_startup(QWEN3_235B_FP8, "h100-sxm", tp=4, mem_fraction_static=minimum + 0.001).fits
    below = sglang_startup(QWEN3_235B_FP8, "h100-sxm", tp=4, mem_fraction_static=minimum - 0.002)
    assert below.verdict == "refused"
    assert math.isclose(minimum, math.ceil(low.min_mem_fraction_static * 1000) / 1000)


def test_a_context_above_the_models_limit_is_refused():
    cfg = get_model_preset("llama-3.1-8b").config
    s = sglang_startup(cfg, "h100-sxm", context_length=10**7)
    assert s.verdict == "refused" and "context_length" in s.message


@pytest.mark.parametrize(
    ("preset", "kwargs", "field"),
    [
        ("llama-3.1-8b", {"kv_cache_dtype": "fp4_e2m1"}, "kv_cache_dtype"),
        ("llama-3.1-8b", {"kv_cache_dtype": "q4"}, "kv_cache_dtype"),
        ("llama-3.1-8b", {"tp": 0}, "tp"),
        ("llama-3.1-8b", {"page_size": 0}, "page_size"),
        ("llama-3.1-8b", {"mem_fraction_static": 1.5}, "mem_fraction_static"),
        ("qwen3-next-80b-a3b", {"rules": "0.5.3"}, "rules"),
        ("qwen3-next-80b-a3b", {"mamba_ssm_dtype": "int8"}, "mamba_ssm_dtype"),
        ("llama-3.1-8b", {"max_mamba_cache_size": 10}, "max_mamba_cache_size"),
        ("gpt-oss-20b", {}, "mxfp4"),
    ],
)
def test_what_is_not_modelled_is_refused_by_name(preset, kwargs, field):
    with pytest.raises(EngineError, match=field):
        sglang_startup(get_model_preset(preset).config, "h100-sxm", **kwargs)


def test_a_gpu_without_a_reported_total_is_refused_unless_given():
    from simulators.hardware import ACCELERATORS_CSV, parse_accelerators_csv

    cfg = get_model_preset("llama-3.1-8b").config
    unread = next(
        a.id for a in parse_accelerators_csv(ACCELERATORS_CSV) if engines.reported_memory_bytes(a.id) is None
    )
    with pytest.raises(EngineError, match="reports"):
        sglang_startup(cfg, unread)
    # any total the reader enters (here the H100's reading) is used as given
    given = sglang_startup(cfg, unread, total_bytes=engines.reported_memory_bytes("h100-sxm"))
    assert given.total_source == "given" and given.fits


# ---------------------------------------------------------------------------------------------
# Against real runs (issue 31, item 7): every collected log, predicted from its config.json
# ---------------------------------------------------------------------------------------------

ROOT = Path(__file__).resolve().parent.parent
MODELLED = {k: r for k, r in ROWS.items() if "refused" not in r}
REFUSED = {k: r for k, r in ROWS.items() if "refused" in r}


def _baseline(row: dict, parsed: dict) -> float | None:
    """The free memory before the weights, read from the log as the row says."""
    how = row["baseline_from"]
    if how.startswith("Load weight begin"):
        return parsed["baseline_min_bytes"]
    if how.startswith("Load weight end"):
        return parsed["after_weights_bytes"] + parsed["weights_bytes"]
    return None  # not printed: the device total less the measured overhead


def _predict(row: dict):
    cfg = json.loads((ROOT / row["config"]).read_text("utf-8"))
    if "architecture" in row:  # the class the log prints (Load weight end ... type=), over a stand-in config
        cfg["architectures"] = [row["architecture"]]
    parsed = parse_log("\n".join(row["raw_lines"]))
    s = sglang_startup(
        cfg,
        row["gpu_id"],
        tp=row["tp"],
        mem_fraction_static=row["mem_fraction_static"],
        kv_cache_dtype=row["kv_cache_dtype"],
        baseline_bytes=_baseline(row, parsed),
        rules=row["rules"],
        total_bytes=row.get("total_bytes"),  # a card with no sourced reading: the row says why (total_note)
        page_size=row.get("page_size"),
    )
    return s, parsed


def _tally() -> dict[str, float | None]:
    """Relative error of max_total_num_tokens per collected log (None: refused)."""
    out: dict[str, float | None] = {}
    for key, row in ROWS.items():
        if key in REFUSED:
            out[key] = None
            continue
        s, _ = _predict(row)
        out[key] = s.max_total_num_tokens / row["kv_tokens"] - 1
    return out


def test_collected_logs_are_fifteen_with_sources_and_every_refusal_says_why():
    assert len(ROWS) >= 15
    for row in REFUSED.values():
        assert len(row["refused"]) > 40  # a stated reason, not a flag
    for row in MODELLED.values():
        assert row["config"] and row["rules"] in SGLANG_RULES
        assert (ROOT / row["config"]).is_file()


PRINTS_POOL = {k: r for k, r in MODELLED.items() if any("size: " in line for line in r["raw_lines"])}


@pytest.mark.parametrize("row", list(PRINTS_POOL.values()), ids=list(PRINTS_POOL))
def test_the_per_token_bytes_match_the_printed_pool(row):
    """The pool each log prints (K size, or the MLA latent) over its tokens is the cell the model
    computes from the config, to the printed 2 decimals: the geometry is exact on every log."""
    s, parsed = _predict(row)
    printed = parsed.get("k_bytes", parsed.get("kv_bytes"))
    per = s.cell.full_bytes / 2 if "k_bytes" in parsed else s.cell.full_bytes
    # the pool holds tokens + one page (0.5.23 mem_cache/memory_pool.py: rows = size + page_size,
    # the padded page that absorbs dummy writes); it shows at 1.7 M tokens in 64-token pages
    rows = row["kv_tokens"] + (row.get("page_size") or 1)
    assert per * rows == pytest.approx(printed, abs=0.005 * GiB)


@pytest.mark.parametrize("row", list(MODELLED.values()), ids=list(MODELLED))
def test_each_modelled_log_within_two_percent(row):
    s, _ = _predict(row)
    off = _off(s.max_total_num_tokens, row["kv_tokens"])
    print(f"\n{row['id']}: {s.max_total_num_tokens:,} predicted, {row['kv_tokens']:,} logged ({off:.2%})")
    assert off <= 0.02


def test_qwq_weights_are_whole_allocator_segments_and_an_fp32_rotary_table():
    """QwQ-32B on 4 x L4 (SGLang 0.4.3.post4) printed "mem usage=15.54 GB" for 15.29 GiB of
    checkpoint a rank. The gap is two rules of that release, not a fitted term: its rotary
    cos/sin table stays in FP32 (131,072 positions x 128 x 4 bytes, twice vLLM's bf16 table),
    and get_available_gpu_memory measures free memory after empty_cache(), so each parameter
    holds a whole caching-allocator segment: per layer the 17.5 MiB QKV shard holds 18 MiB, the
    12.5 MiB output projection 14 MiB, gate/up 135 -> 136 MiB, down 67.5 -> 68 MiB."""
    row = ROWS["llms-in-clouds-qwq-32b-4xl4-tp4"]
    cfg = json.loads((ROOT / row["config"]).read_text("utf-8"))
    s, parsed = _predict(row)
    parts = s.weights_parts
    mib = 2**20
    assert parts["allocator_rounding"] == 64 * (0.5 + 1.5 + 1 + 0.5) * mib + 2 * 0.75 * mib
    assert parts["rotary_table"] == 131072 * 128 * 4
    assert s.weights_bytes == pytest.approx(parsed["weights_bytes"], abs=0.005 * GiB)
    # without the two rules (vLLM's reader alone) the weights miss by a quarter GiB
    plain = sum(vllm_weight_bytes(ModelSpec.from_hf_config(cfg), weight_layout(cfg), 4, cfg).values())
    assert parsed["weights_bytes"] - plain > 0.24 * GiB


def test_the_caching_allocator_rules():
    mib = 2**20
    # a request of 10 MiB or more gets its own segment rounded up to 2 MiB
    assert caching_allocator_reserved([int(17.5 * mib)]) == 18 * mib
    # 1.5 MiB left over splits off (more than 1 MiB) and a later request that fits takes it
    assert caching_allocator_reserved([int(12.5 * mib), int(1.25 * mib)]) == 14 * mib
    # requests between 1 and 10 MiB share 20 MiB segments; small ones share 2 MiB segments
    assert caching_allocator_reserved([3 * mib] * 6) == 20 * mib
    assert caching_allocator_reserved([3 * mib] * 7) == 40 * mib
    assert caching_allocator_reserved([4096] * 100) == 2 * mib
    # shards that are whole 2 MiB multiples waste nothing (Llama 3.1 70B at TP 8: 20, 16, 112, 56 MiB)
    assert caching_allocator_reserved([20 * mib, 16 * mib, 112 * mib, 56 * mib]) == 204 * mib


@pytest.mark.parametrize("row", [r for r in MODELLED.values() if "architecture" in r], ids=lambda r: r["id"])
def test_a_row_that_names_its_class_takes_it_from_the_log(row):
    assert f"type={row['architecture']}," in "\n".join(row["raw_lines"])


def test_a_reward_model_has_a_score_layer_instead_of_the_lm_head():
    """SGLang's LlamaForSequenceClassification (models/llama_reward.py) keeps LlamaModel and a
    num_labels x hidden score layer: the Llama 3.1 8B LM head's 128,256 x 4,096 bf16 rows
    (0.98 GiB) are not allocated, so the pool is that much larger."""
    causal = dict(get_model_preset("llama-3.1-8b").config)
    reward = {**causal, "architectures": ["LlamaForSequenceClassification"], "num_labels": 1}
    kw = {"mem_fraction_static": 0.88, "baseline_bytes": 78.81 * GiB, "rules": "0.4.4.post2"}
    c = sglang_startup(causal, "h100-sxm", **kw)
    r = sglang_startup(reward, "h100-sxm", **kw)
    assert c.weights_parts["lm_head"] == 128256 * 4096 * 2
    assert r.weights_parts["lm_head"] == 4096 * 2
    assert c.weights_bytes - r.weights_bytes == pytest.approx(128256 * 4096 * 2 - 4096 * 2)
    assert r.pool_bytes - c.pool_bytes == pytest.approx(c.weights_bytes - r.weights_bytes)
    # without num_labels or id2label, transformers' PretrainedConfig has two labels
    two = sglang_startup({**reward, "num_labels": None}, "h100-sxm", **kw)
    assert two.weights_parts["lm_head"] == 2 * 4096 * 2


def test_release_0_3_5_builds_its_own_lm_head_for_tied_models():
    """SGLang 0.3.4.post2 and 0.3.5 models/llama.py (line 305) and models/qwen2.py (line 276)
    always build a ParallelLMHead; 0.4.0.post1 shares the embedding (llama.py line 308). The docs
    CI's Llama 3.2 1B printed 2.91 GB of weights on 2024-11-02 and 2.42 GB on 2024-12-04: the
    128,256 x 2,048 bf16 head, 0.49 GiB, is the difference the rule gives."""
    cfg = get_model_preset("llama-3.2-1b").config
    kw = {"mem_fraction_static": 0.88, "baseline_bytes": 78.59 * GiB}
    old = sglang_startup(cfg, "h100-sxm", rules="0.3.5", **kw)
    new = sglang_startup(cfg, "h100-sxm", rules="0.4.0.post1", **kw)
    head = 128256 * 2048 * 2
    assert old.weights_parts["lm_head"] == head and new.weights_parts["lm_head"] == 0
    assert old.weights_bytes - new.weights_bytes == pytest.approx(head, abs=2 * 2**20)
    nov, dec = (
        parse_log("\n".join(ROWS[k]["raw_lines"]))
        for k in ("sglang-docs-llama-3.2-1b-h100-tp1-2024-11", "sglang-docs-llama-3.2-1b-h100-tp1-2024-12")
    )
    logged = (nov["baseline_bytes"] - nov["after_weights_bytes"]) - (
        dec["baseline_bytes"] - dec["after_weights_bytes"]
    )
    assert logged == pytest.approx(head, abs=0.01 * GiB)
    # a tied class whose 0.3.5 file was not read is refused under those rules
    with pytest.raises(EngineError, match="tie_word_embeddings"):
        sglang_startup(get_model_preset("gemma-2b").config, "h100-sxm", rules="0.3.5", **kw)
    # its default fraction: 0.83 from TP 8 (0.81 from 0.4.0)
    assert default_mem_fraction_static(80 * GiB, tp=8, rules="0.3.5")["mem_fraction_static"] == 0.83
    assert default_mem_fraction_static(80 * GiB, tp=1, rules="0.3.5")["mem_fraction_static"] == 0.88


def test_releases_before_0_4_2_keep_the_rotary_table_in_the_model_dtype():
    cfg = get_model_preset("llama-3.1-8b").config
    old = sglang_startup(cfg, "h100-sxm", rules="0.4.0.post1", mem_fraction_static=0.88)
    new = sglang_startup(cfg, "h100-sxm", rules="0.4.4.post2", mem_fraction_static=0.88)
    assert new.weights_parts["rotary_table"] == 131072 * 128 * 4
    assert old.weights_parts["rotary_table"] == 131072 * 128 * 2
    assert old.mem_fraction_static == new.mem_fraction_static == 0.88


def test_a_refused_log_is_refused_by_the_model_too():
    """A log refused for a model gap names the preset whose config the model refuses, and how."""
    for row in REFUSED.values():
        if row["refused_for"] != "model":
            continue
        with pytest.raises(EngineError, match=row["refused_match"]):
            sglang_startup(get_model_preset(row["refused_preset"]).config, "h100-sxm", tp=row["tp"])


# A refused log is refused for one of two reasons, said in its row (``refused_for``): "input", the
# log does not give what any prediction needs (``missing``: the fraction, the memory before the
# weights, the weights, a sourced config, the release or the card), or "model", the log gives them
# and the model lacks a feature. Issue 31's bar is judged on the logs whose inputs are known: the
# predicted ones, and every "model" refusal counted as a miss. An "input" refusal is no test of the
# model either way; each is checked below to lack what it says it lacks.
MISSING = ("fraction", "baseline", "weights", "config", "release", "card")


def _judged(tally: dict[str, float | None]) -> dict[str, float | None]:
    return {k: v for k, v in tally.items() if ROWS[k].get("refused_for") != "input"}


@pytest.mark.parametrize("row", list(REFUSED.values()), ids=list(REFUSED))
def test_a_refusal_for_a_missing_input_lacks_that_input(row):
    assert row["refused_for"] in ("input", "model")
    if row["refused_for"] == "model":
        return
    missing = row["missing"]
    assert missing and set(missing) <= set(MISSING), missing
    raw = "\n".join(row.get("raw_lines", []))
    if "fraction" in missing:  # not printed in server_args, not on the command line, not in the row
        assert "mem_fraction_static" not in raw and "mem-fraction-static" not in raw
        assert "mem_fraction_static" not in row
    if "baseline" in missing:  # neither "Load weight begin. avail mem=" nor "Load weight end ... mem usage="
        assert "Load weight begin" not in raw and "mem usage=" not in raw
    if "weights" in missing:
        assert "mem usage=" not in raw
    if "config" in missing:
        assert "config" not in row
    if "card" in missing:
        assert "gpu_id" not in row
    if "release" in missing:
        assert not row.get("sglang_version")


def test_tally_against_issue_31_sglang_bar():
    """Issue 31: max_total_num_tokens within 2 % on >= 90 % of the collected logs, all within 5 %.
    Printed as a tally over every log; the bar itself is asserted below."""
    tally = _tally()
    modelled = {k: v for k, v in tally.items() if v is not None}
    within2 = sum(abs(v) <= 0.02 for v in modelled.values())
    within5 = sum(abs(v) <= 0.05 for v in modelled.values())
    lines = [
        f"{k}: " + (f"refused ({ROWS[k]['refused_for']})" if v is None else f"{v:+.2%}")
        for k, v in tally.items()
    ]
    print("\n" + "\n".join(lines))
    judged = _judged(tally)
    print(
        f"{len(tally)} logs: {len(modelled)} predicted, {len(tally) - len(modelled)} refused"
        f" ({len(tally) - len(judged)} for a missing input, {len(judged) - len(modelled)} for a model gap);"
        f" within 2 %: {within2}, within 5 %: {within5}; judged: {len(judged)}"
    )
    assert within2 == within5 == len(modelled)  # every predicted log within 2 %


def test_issue_31_sglang_acceptance():
    """Issue 31: max_total_num_tokens within 2 % on >= 90 % of the collected logs, all within 5 %,
    judged on the logs whose inputs are known (a refusal for a model gap counts as a miss)."""
    judged = _judged(_tally())
    assert len(judged) >= 10
    assert sum(v is not None and abs(v) <= 0.02 for v in judged.values()) >= 0.9 * len(judged)
    assert all(v is not None and abs(v) <= 0.05 for v in judged.values())


def test_old_release_rules_follow_their_own_files():
    # 0.4.4.post2: the fraction by TP alone; a multimodal model's fraction x 0.95; one pool
    gemma = get_model_preset("gemma-2-9b").config
    old = sglang_startup(gemma, "h100-sxm", rules="0.4.4.post2", mem_fraction_static=0.85)
    new = sglang_startup(gemma, "h100-sxm", mem_fraction_static=0.85)
    assert old.cell.swa_layers == 0 and old.cell.full_layers == new.cell.full_layers + new.cell.swa_layers
    assert default_mem_fraction_static(80 * GiB, tp=8, rules="0.4.4.post2")["mem_fraction_static"] == 0.81
    g3 = json.loads((DATA / "vllm_configs" / "google--gemma-3-4b-it.json").read_text("utf-8"))
    s = sglang_startup(g3, "h200-sxm", rules="0.4.4.post2", mem_fraction_static=0.88)
    assert s.mem_fraction_static == pytest.approx(0.88 * 0.95)
    # 0.5.3 for an H200 (NVML 143,771 MiB) at TP 8: no prefill-graph term, the 10 GiB floor
    reserved = max(512 + 1.5 * 8192 + 2 * 512 + 8 / 8 * 1024, 10 * 1024)
    d = default_mem_fraction_static(143771 * 2**20, tp=8, rules="0.5.3")
    assert d["mem_fraction_static"] == round((143771 - reserved) / 143771, 3)
    with pytest.raises(EngineError, match="rules"):
        sglang_startup(gemma, "h100-sxm", rules="0.3.0")


def test_the_baseline_is_the_least_over_the_ranks_and_a_draft_is_not_one():
    text = "\n".join(ROWS["sglang-11716-llama-3.3-70b-8xh200-tp8"]["raw_lines"])
    p = parse_sglang_log(text)
    assert p["baseline_ranks"] == 8 and p["baseline_min_bytes"] == pytest.approx(137.29 * GiB)
    draft = parse_sglang_log("\n".join(ROWS["dgx-spark-laguna-s-2.1-int4-dflash-refused"]["raw_lines"]))
    assert draft["baseline_min_bytes"] == pytest.approx(115.36 * GiB)  # the draft's 47.83 is not it
    cfg = get_model_preset("llama-3.1-8b").config
    with pytest.raises(EngineError, match="baseline_bytes"):
        sglang_startup(cfg, "h100-sxm", baseline_bytes=10**15)


# ---------------------------------------------------------------------------------------------
# Hybrid linear attention (Qwen3-Next, Qwen 3.5): SGLang 0.5.23's Mamba pool beside the KV pool
# ---------------------------------------------------------------------------------------------

MAMBA_ROWS = {k: r for k, r in ROWS.items() if "mamba_config" in r}


def _mamba_of(row: dict):
    cfg = json.loads((ROOT / row["mamba_config"]).read_text("utf-8"))
    spec = ModelSpec.from_hf_config(cfg)
    state = sglang_mamba_state(cfg, spec, tp=row["tp"], mamba_ssm_dtype=row["mamba_ssm_dtype"])
    return cfg, spec, state, parse_log("\n".join(row["raw_lines"]))


def test_two_logs_print_the_mamba_pool():
    assert len(MAMBA_ROWS) >= 2
    for row in MAMBA_ROWS.values():
        assert "inferred" in row["mamba_config_note"]  # the logs do not name the checkpoint


@pytest.mark.parametrize("row", list(MAMBA_ROWS.values()), ids=list(MAMBA_ROWS))
def test_the_state_a_request_slot_takes_matches_the_printed_pool(row):
    """SGLang prints the conv and SSM states as allocated: max_mamba_cache_size + 1 slots (slot 0
    pads). The bytes a slot takes, from the config by Mamba2StateShape's rule, times the slots
    give both printed sizes to their 2 decimals, and the KV geometry gives the printed K size."""
    _, spec, state, p = _mamba_of(row)
    slots = p["max_mamba_cache_size"] + 1
    print(
        f"\n{row['id']}: conv {state.conv_bytes:,} B + ssm {state.ssm_bytes:,} B a slot;"
        f" x {slots}: {slots * state.conv_bytes / GiB:.4f} / {slots * state.ssm_bytes / GiB:.4f} GiB,"
        f" printed {p['mamba_conv_bytes'] / GiB:.2f} / {p['mamba_ssm_bytes'] / GiB:.2f}"
    )
    assert slots * state.conv_bytes == pytest.approx(p["mamba_conv_bytes"], abs=0.005 * GiB)
    assert slots * state.ssm_bytes == pytest.approx(p["mamba_ssm_bytes"], abs=0.005 * GiB)
    cell = sglang_cell(spec, tp=row["tp"], kv_bytes=2)
    assert cell.full_layers == 15 and cell.full_bytes == 15 * 2 * 256 * 2  # 1 KV head of 256 a GPU
    assert row["kv_tokens"] * cell.full_bytes / 2 == pytest.approx(p["k_bytes"], abs=0.005 * GiB)


@pytest.mark.parametrize("row", list(MAMBA_ROWS.values()), ids=list(MAMBA_ROWS))
def test_the_ratio_rule_gives_the_printed_slot_count(row):
    """_handle_max_mamba_cache: the Mamba pool takes 0.9 / 1.9 of the budget less one padding
    slot; what is left is the KV pool, whose whole tokens the log prints. The budget is
    therefore (slots + 1) x state + tokens x cell plus less than one cell, and at both ends of
    that range the rule gives back the printed max_mamba_cache_size."""
    _, spec, state, p = _mamba_of(row)
    cell = sglang_cell(spec, tp=row["tp"], kv_bytes=2)
    n = p["max_mamba_cache_size"]
    low = (n + 1) * state.per_request_bytes + row["kv_tokens"] * cell.full_bytes
    for budget in (low, low + cell.full_bytes - 1):
        assert sglang_mamba_cache_size(budget, state.per_request_bytes) == n
    # another ratio would not: 0.8 or 1.0 moves the count
    assert sglang_mamba_cache_size(low, state.per_request_bytes, 0.8) < n
    assert sglang_mamba_cache_size(low, state.per_request_bytes, 1.0) > n
    assert MAMBA_FULL_MEMORY_RATIO == 0.9


def test_the_ktransformers_checkpoint_is_identified_by_its_state_bytes():
    """The ktransformers log names Qwen3_5MoeForConditionalGeneration but not the size: of the
    Qwen 3.5 MoE presets only the 397B-A17B's state gives the printed 7.29 GiB."""
    row = ROWS["ktransformers-1870-qwen3.5-moe-2x4090-refused"]
    p = parse_log("\n".join(row["raw_lines"]))
    slots = p["max_mamba_cache_size"] + 1
    matches = []
    for preset in ("qwen3.5-35b-a3b", "qwen3.5-397b-a17b"):
        cfg = get_model_preset(preset).config
        assert cfg["architectures"] == ["Qwen3_5MoeForConditionalGeneration"]
        state = sglang_mamba_state(cfg, ModelSpec.from_hf_config(cfg), tp=2)
        if abs(slots * state.ssm_bytes - p["mamba_ssm_bytes"]) <= 0.005 * GiB:
            matches.append(preset)
    assert matches == ["qwen3.5-397b-a17b"]


def test_qwen_3_5_starts_with_a_mamba_pool_and_a_kv_pool():
    """Qwen3.5 27B on one H100 with SGLang's defaults: the state pool comes out of the budget
    first, the full-attention layers' KV gets the rest, and the requests are capped by the state
    slots (5 a request: 3 + the extra_buffer strategy's 2 tracking slots)."""
    cfg = get_model_preset("qwen3.5-27b").config
    s = sglang_startup(cfg, "h100-sxm")
    assert s.fits and s.mamba is not None
    m = s.mamba
    # 48 Gated DeltaNet layers: conv (48 x 128 + 2 x 16 x 128) x 3 bf16, SSM 48 x 128 x 128 fp32
    assert (m.layers, m.conv_shape, m.ssm_shape) == (48, (10240, 3), (48, 128, 128))
    assert m.per_request_bytes == 48 * (10240 * 3 * 2 + 48 * 128 * 128 * 4)
    # 16 full-attention layers x 4 KV heads x (256 + 256) x 2 bytes
    assert (s.cell.full_layers, s.cell.full_bytes) == (16, 16 * 4 * 512 * 2)
    budget = s.pool_bytes
    assert s.max_mamba_cache_size == sglang_mamba_cache_size(budget, m.per_request_bytes)
    kv_budget = budget - (s.max_mamba_cache_size + 1) * m.per_request_bytes
    assert s.max_total_num_tokens == int(kv_budget) // s.cell.full_bytes
    assert 0.9 * s.mamba_bytes < MAMBA_FULL_MEMORY_RATIO * s.kv_bytes < 1.1 * s.mamba_bytes
    assert s.max_running_requests == min(2048, s.max_mamba_cache_size // MAMBA_SLOTS_PER_REQUEST)
    # the multimodal checkpoint keeps SGLANG_VLM_CACHE_SIZE_MB (100 MiB) out of the budget
    assert s.mm_reserved_bytes == 100 * 2**20
    ledger = s.ledger()
    assert ledger.get("mamba_state").bytes == pytest.approx(s.mamba_bytes)
    assert ledger.used_bytes == pytest.approx(s.total_bytes, abs=m.per_request_bytes + s.cell.full_bytes)
    back = parse_log("\n".join(sglang_log_lines(s)))
    assert back["max_mamba_cache_size"] == s.max_mamba_cache_size
    assert back["mamba_ssm_bytes"] == pytest.approx(s.mamba_ssm_bytes, abs=0.005 * GiB)
    assert back["max_total_num_tokens"] == s.max_total_num_tokens


def test_mamba_flags_move_the_split():
    cfg = get_model_preset("qwen3-next-80b-a3b").config
    base = sglang_startup(cfg, "h100-sxm", tp=4)
    bf16 = sglang_startup(cfg, "h100-sxm", tp=4, mamba_ssm_dtype="bfloat16")
    assert bf16.mamba.ssm_bytes * 2 == base.mamba.ssm_bytes
    assert bf16.max_mamba_cache_size > 1.8 * base.max_mamba_cache_size
    fixed = sglang_startup(cfg, "h100-sxm", tp=4, max_mamba_cache_size=100)
    assert fixed.max_mamba_cache_size == 100 and fixed.max_running_requests == 20
    assert fixed.max_total_num_tokens > base.max_total_num_tokens
    less = sglang_startup(cfg, "h100-sxm", tp=4, mamba_full_memory_ratio=0.5)
    assert less.max_mamba_cache_size < base.max_mamba_cache_size


def test_a_hybrid_whose_weights_leave_no_state_is_refused_with_sglangs_words():
    # the weights load (27B in BF16 on an H100), but a fraction of 0.3 leaves nothing after them
    cfg = get_model_preset("qwen3.5-27b").config
    s = sglang_startup(cfg, "h100-sxm", mem_fraction_static=0.3)
    assert s.verdict == "refused" and s.weights_bytes < s.baseline_bytes
    assert "Not enough GPU memory for hybrid (mamba/linear-attention) state cache" in s.message
    assert "Raise --mem-fraction-static above" in s.message


def test_will_it_fit_shows_qwen_3_5_on_sglang():
    """The page's SGLang view sizes Qwen 3.5 (it refused every linear-attention model before)
    and prints the Mamba line SGLang prints."""
    from tests import pages
    from tests.pages import metrics

    at = pages.open_page(
        "app_pages/will_it_fit.py", fit_engine="sglang", fit_model="qwen3.5-27b", fit_ctx="32768"
    )
    assert not at.exception
    s = sglang_startup(get_model_preset("qwen3.5-27b").config, "h100-sxm", context_length=32768)
    assert s.fits and s.max_mamba_cache_size > 0
    assert metrics(at)["max_total_num_tokens"] == f"{s.max_total_num_tokens:,} tokens"
    line = f"Mamba Cache is allocated. max_mamba_cache_size: {s.max_mamba_cache_size},"
    assert any(line in c.value for c in at.code)


def test_nemotron_h_mamba_2_state_follows_its_config_class():
    """Nemotron 3 Nano (23 Mamba-2 layers, 64 heads of 64, state 128, 8 groups): SGLang 0.5.23's
    configs/nemotron_h.py builds the same Mamba2StateShape from mamba_num_heads, mamba_head_dim,
    n_groups and ssm_state_size; its config class has no mamba_ssm_dtype, so the SSM state is
    float32. At TP 4: conv (64 x 64 + 2 x 8 x 128) / 4 x 3 bf16, SSM 16 x 64 x 128 fp32 a layer."""
    cfg = get_model_preset("nemotron-3-nano-30b-a3b").config
    spec = ModelSpec.from_hf_config(cfg)
    m = sglang_mamba_state(cfg, spec, tp=4)
    assert (m.layers, m.conv_shape, m.ssm_shape, m.ssm_dtype) == (23, (1536, 3), (16, 64, 128), "float32")
    assert m.per_request_bytes == 23 * (1536 * 3 * 2 + 16 * 64 * 128 * 4)
    s = sglang_startup(cfg, "h100-sxm", tp=4)
    assert s.fits and s.cell.full_layers == 6 and s.max_mamba_cache_size > 0
    # another Mamba-2 family is refused by name, not sized with Nemotron-H's rule
    other = {**cfg, "architectures": ["FalconH1ForCausalLM"]}
    with pytest.raises(EngineError, match="architectures"):
        sglang_startup(other, "h100-sxm", tp=4)


# ---------------------------------------------------------------------------------------------
# Llama 3.2 Vision (mllama) under SGLang 0.4.0.post1: cross-attention layers in the one pool
# ---------------------------------------------------------------------------------------------

MLLAMA_ROW = "sglang-docs-llama-3.2-11b-vision-h100-tp1-2024-12"
MLLAMA_CONFIG = json.loads(
    (DATA / "sglang_configs" / "meta-llama--llama-3.2-11b-vision-instruct.json").read_text("utf-8")
)


def test_mllama_keeps_its_cross_attention_layers_in_the_one_pool():
    """SGLang 0.4.0.post1's profile_max_num_token sizes one MHA pool over text_config's 40 layers
    (the 8 cross-attention layers hold the image's K and V there too): 163,840 bytes a token. On
    the log's own printed figures (free memory before and after the weights, fraction 0.88 x 0.95
    for a multimodal model) that cell gives the printed max_total_num_tokens to the rounding of
    the two-decimal GB figures."""
    row = ROWS[MLLAMA_ROW]
    s, p = _predict(row)
    assert s.cell.full_bytes == 40 * 8 * (128 + 128) * 2 and s.cell.full_layers == 40
    assert s.mem_fraction_static == pytest.approx(0.88 * 0.95)
    rest = p["after_weights_bytes"] - p["baseline_bytes"] * (1 - s.mem_fraction_static)
    slack = 0.005 * GiB * (1 + (1 - s.mem_fraction_static)) / s.cell.full_bytes
    assert abs(rest / s.cell.full_bytes - row["kv_tokens"]) <= slack


def test_mllama_weights_follow_its_model_file():
    """models/mllama.py (0.4.0.post1): the vision tower's tile position embedding alone is
    (8 aspect ratios + 1) x 4 tiles x 1,601 positions x 1,280 in bf16 (141 MiB, whole on every
    rank); the projector is 7,680 x 4,096 + bias; the decoder's table has 8 more rows (128,264,
    padded to 128,320). The sum is within 0.6 % of the 20.16 GB the log prints (the docs CI's
    unexplained 0.09-0.10 GiB is the rest)."""
    row = ROWS[MLLAMA_ROW]
    s, p = _predict(row)
    parts = s.weights_parts
    tile = 9 * 4 * 1601 * 1280 * 2
    assert parts["vision_tower"] > tile
    assert parts["multi_modal_projector"] == (7680 * 4096 + 4096) * 2
    assert parts["embeddings_extra_rows"] == 64 * 4096 * 2
    assert parts["lm_head"] == 128256 * 4096 * 2
    printed = p["baseline_bytes"] - p["after_weights_bytes"]
    assert printed - 0.11 * GiB < s.weights_bytes < printed
    # at TP 2 the tower's matrices split, its embeddings do not
    s2 = sglang_startup(MLLAMA_CONFIG, "h100-sxm", tp=2, mem_fraction_static=0.88, rules="0.4.0.post1")
    assert tile < s2.weights_parts["vision_tower"] < parts["vision_tower"]


def test_mllama_outside_the_release_read_is_refused_by_name():
    with pytest.raises(EngineError, match="rules"):
        sglang_startup(MLLAMA_CONFIG, "h100-sxm", mem_fraction_static=0.88)
    broken = {**MLLAMA_CONFIG, "vision_config": {**MLLAMA_CONFIG["vision_config"]}}
    del broken["vision_config"]["num_global_layers"]
    with pytest.raises(EngineError, match=r"vision_config\.num_global_layers"):
        sglang_startup(broken, "h100-sxm", mem_fraction_static=0.88, rules="0.4.0.post1")


# ---------------------------------------------------------------------------------------------
# DeepSeek Sparse Attention (DeepSeek V3.2): SGLang 0.5.23's DSA pool, latent + indexer K cache
# ---------------------------------------------------------------------------------------------

DSA_ROW = "sglang-11309-deepseek-v3.2-exp-8xb200-refused"


def test_the_dsa_log_prints_the_latent_and_the_indexer_a_token():
    """sgl-project/sglang#11309 on 8 x B200 printed 975,424 tokens in 43.67 GB with the indexer
    counted, and main's run 1,462,784 tokens in 54.52 GB without it ("actually 65.49 GB"). The
    scaled FP8 DSA row (calculate_mla_kv_cache_dim: 512 FP8 + 4 scales of 4 bytes + 64 bf16 RoPE
    = 656 bytes) and the indexer (_compute_dsa_indexer_cell_size: 128 + 4 bytes) over 61 layers
    give all three printed sizes over the pool's tokens + one padding page; both token counts
    are whole 64-token pages."""
    row = ROWS[DSA_ROW]
    cfg = json.loads((ROOT / row["dsa_config"]).read_text("utf-8"))
    cell = sglang_dsa_cell(ModelSpec.from_hf_config(cfg), cfg, kv_dtype="fp8_e4m3", scaled_fp8=True)
    assert (cell.full_layers, cell.indexer_bytes) == (61, 61 * (128 + 4))
    assert cell.full_bytes == 61 * (512 + 512 // 128 * 4 + 64 * 2) + cell.indexer_bytes == 48068
    # the pool holds its size plus one page of slots (slot 0 pads), as the printed sizes count
    p = parse_log("\n".join(row["raw_lines"]))
    slots = row["kv_tokens"] + DSA_PAGE_SIZE
    assert slots * cell.full_bytes == pytest.approx(p["kv_bytes"], abs=0.005 * GiB)
    main = parse_log("\n".join(row["pre_pr_raw_lines"]))
    latent = cell.full_bytes - cell.indexer_bytes
    slots = main["kv_tokens"] + DSA_PAGE_SIZE
    assert slots * latent == pytest.approx(main["kv_bytes"], abs=0.005 * GiB)
    assert slots * cell.full_bytes == pytest.approx(65.49 * GiB, abs=0.005 * GiB)
    # counting the pages without the padding page would print 54.51 GB, not 54.52
    assert round(main["kv_tokens"] * latent / GiB, 2) != round(main["kv_bytes"] / GiB, 2)
    assert row["kv_tokens"] % DSA_PAGE_SIZE == main["kv_tokens"] % DSA_PAGE_SIZE == 0


def test_dsa_follows_sglang_0_5_23_defaults_by_gpu():
    """arg_groups/overrides.py: "auto" KV is fp8_e4m3 on Blackwell (trtllm, raw 576-byte rows)
    and bfloat16 on Hopper (1,152 bytes); FP8 on Hopper takes flashmla_kv's scaled 656-byte row;
    every layer adds the indexer's 132 bytes; pages are 64 tokens whatever was asked."""
    cfg = get_model_preset("deepseek-v3.2").config
    b200 = sglang_startup(cfg, "b200", tp=8)
    h200 = sglang_startup(cfg, "h200-sxm", tp=8)
    h200_fp8 = sglang_startup(cfg, "h200-sxm", tp=8, kv_cache_dtype="fp8_e4m3", page_size=1)
    assert b200.fits and h200.fits and h200_fp8.fits
    assert (b200.kv_cache_dtype, b200.cell.full_bytes) == ("fp8_e4m3", 61 * (576 + 132))
    assert (h200.kv_cache_dtype, h200.cell.full_bytes) == ("bfloat16", 61 * (1152 + 132))
    assert h200_fp8.cell.full_bytes == 48068 and h200_fp8.page_size == DSA_PAGE_SIZE
    assert any("page size 64" in n for n in h200_fp8.notes)
    for s in (b200, h200, h200_fp8):
        assert s.max_total_num_tokens % DSA_PAGE_SIZE == 0
        assert s.max_total_num_tokens == int(s.pool_bytes) // s.cell.full_bytes // 64 * 64
    # the same budget holds about 1.6 times the tokens at the scaled FP8 row
    assert h200_fp8.max_total_num_tokens / h200.max_total_num_tokens == pytest.approx(78324 / 48068, rel=0.01)
    line = next(x for x in sglang_log_lines(b200) if x.startswith("KV Cache is allocated"))
    assert "KV size" in line and parse_log(line)["kv_tokens"] == b200.max_total_num_tokens


@pytest.mark.parametrize(
    ("kwargs", "field"),
    [({"kv_cache_dtype": "fp8_e5m2"}, "kv_cache_dtype"), ({"rules": "0.5.3"}, "rules")],
)
def test_dsa_outside_what_sglang_accepts_or_what_was_read_is_refused(kwargs, field):
    with pytest.raises(EngineError, match=field):
        sglang_startup(get_model_preset("deepseek-v3.2").config, "h200-sxm", tp=8, **kwargs)
    other = {**get_model_preset("deepseek-v3.2").config, "architectures": ["GlmMoeDsaForCausalLM"]}
    with pytest.raises(EngineError, match="architectures"):
        sglang_startup(other, "h200-sxm", tp=8)


def test_will_it_fit_shows_deepseek_v3_2_on_sglang_with_its_indexer():
    """The page's SGLang view sizes DeepSeek V3.2 (it refused index_topk before): the pool line
    SGLang prints and the note that says what a token holds (latent and indexer bytes)."""
    from tests import pages
    from tests.pages import metrics

    at = pages.open_page(
        "app_pages/will_it_fit.py",
        fit_engine="sglang",
        fit_model="deepseek-v3.2",
        fit_gpu="b200",
        fit_gpus="8",
        fit_ctx="32768",
    )
    assert not at.exception
    s = sglang_startup(get_model_preset("deepseek-v3.2").config, "b200", tp=8, context_length=32768)
    assert s.fits and s.cell.indexer_bytes == 61 * 132
    assert metrics(at)["max_total_num_tokens"] == f"{s.max_total_num_tokens:,} tokens"
    line = f"KV Cache is allocated. #tokens: {s.max_total_num_tokens}, KV size"
    assert any(line in c.value for c in at.code)
    assert any("8,052 of indexer K cache a token" in i.value for i in at.info)


# ---------------------------------------------------------------------------------------------
# A speculative DFlash draft beside a sliding-window target (SGLang 0.5.16): the target's pools
# ---------------------------------------------------------------------------------------------

DFLASH_ROW = "dgx-spark-laguna-s-2.1-int4-dflash-refused"


def test_a_dflash_draft_stays_out_of_the_sliding_window_targets_budget():
    """Laguna-S-2.1 INT4 + a DFlash draft on a DGX Spark (SGLang 0.5.16). From the sourced config
    of the same architecture, sglang_cell gives the target's two pools: 12 full layers and 36
    sliding ones of 8 KV heads x 128, whose printed K sizes over (tokens + 1 padding slot) it
    reproduces, the sliding pool holding int(0.8 x the full tokens). 0.5.16's
    HybridSWAPoolConfigurator counts EAGLE/STANDALONE drafts only, so the budget, free memory
    after both models' weights less the baseline x (1 - 0.85), all goes to the target (its
    'SWAKVPool mem usage' 28.93 GB) and the draft's pool comes after. On the log's own figures
    that rule gives 185,980 tokens against 185,897 printed (+0.04 %): about 14 MB more is taken
    between the draft's 'Load weight end' and the profile (the DFlash draft runner is initialised
    there), which the log does not itemise."""
    import re

    row = ROWS[DFLASH_ROW]
    cfg = json.loads((ROOT / row["target_config"]).read_text("utf-8"))
    cell = sglang_cell(ModelSpec.from_hf_config(cfg), tp=1, kv_bytes=2)
    assert (cell.full_layers, cell.swa_layers) == (12, 36)
    assert (cell.full_bytes, cell.swa_bytes) == (12 * 8 * 256 * 2, 36 * 8 * 256 * 2)
    text = "\n".join(row["raw_lines"])
    pools = [
        (int(n), float(k) * GiB)
        for n, k in re.findall(r"KV Cache is allocated\..*?#tokens: (\d+), K size: ([0-9.]+) GB", text)
    ]
    (swa_tokens, swa_k), (full_tokens, full_k), (draft_tokens, _) = pools
    p = parse_log(text)
    assert full_tokens == draft_tokens == p["max_total_num_tokens"]
    assert swa_tokens == int(full_tokens * SWA_FULL_TOKENS_RATIO) == row["kv_tokens"]
    assert (full_tokens + 1) * cell.full_bytes / 2 == pytest.approx(full_k, abs=0.005 * GiB)
    assert (swa_tokens + 1) * cell.swa_bytes / 2 == pytest.approx(swa_k, abs=0.005 * GiB)
    # the budget: free memory after the draft's weights (the second 'Load weight end')
    after_draft = float(re.findall(r"Load weight end\..*?avail mem=([0-9.]+) GB", text)[1]) * GiB
    budget = after_draft - p["baseline_min_bytes"] * (1 - row["mem_fraction_static"])
    predicted = int(budget // cell.bytes_per_token)
    assert 0 < predicted / full_tokens - 1 < 0.001
    # had the draft's pool been in the budget (0.5.23's _dflash_draft_cell_size), far fewer tokens
    draft_cell = 2 * 2.13 * GiB / (draft_tokens + 1)
    assert int(budget // (cell.bytes_per_token + draft_cell)) < 0.9 * full_tokens


# ---------------------------------------------------------------------------------------------
# Kimi K2.5: MoonViT, its projector and the W4A16 routed experts as SGLang builds them
# ---------------------------------------------------------------------------------------------

KIMI = ROWS["amd-issues-kimi-k2.5-8xmi355x-tp8"]


def test_kimi_k25_weights_follow_sglangs_files():
    """compressed_tensors_wNa16_moe.py create_weights at TP 8: per MoE layer and rank, 384 experts
    of int32-packed int4 (w13 [E, 7168/8, 2 x 256], w2 [E, 256/8, 7168]) and bf16 group-32 scales;
    the ROCm Triton method keeps the four act-order tensors Marlin frees. The printed weights
    (73.58 GiB, every rank) are met within 0.3 %."""
    cfg = get_model_preset("kimi-k2.5").config
    s, parsed = _predict(KIMI)
    parts = s.weights_parts
    per_layer = 384 * (896 * 512 * 4 + 32 * 7168 * 4 + 224 * 512 * 2 + 8 * 7168 * 2)
    assert parts["experts"] == 60 * per_layer
    assert parts["expert_act_order_tensors"] == 60 * 384 * (7168 + 256) * 4 * 2
    # MoonViT: 27 blocks, MLP whole and attention over 8 ranks, plus patch and position tables
    block = 4 * 1152 + 2 * 1152 * 4304 + 4304 + 1152 + (3 * 1152 * 1152 + 3 * 1152) // 8 + 1152 * 144 + 1152
    tower = 27 * block + 3 * 14 * 14 * 1152 + 1152 + 64 * 64 * 1152 + 4 * 1152 + 2 * 1152
    assert parts["vision_tower"] == tower * 2
    assert parts["mm_projector"] == (2 * 1152 + 4608 * 4608 + 4608 + 7168 * 4608 + 7168) * 2
    assert parts["rotary_table"] == 4096 * 64 * 64 * 4
    assert s.weights_bytes == pytest.approx(parsed["weights_bytes"], rel=0.003)
    # the same checkpoint on Hopper takes the Marlin method, which frees the act-order tensors
    parts_marlin, sizes = engines.sglang.kimi_k25_weight_parts(cfg, 8, moe_backend="marlin")
    assert parts_marlin["expert_act_order_tensors"] == 0
    assert sum(v for k, v in parts_marlin.items() if k != "allocator_rounding") == sum(sizes)


def test_kimi_k25_moe_method_follows_the_platform():
    from simulators.engines.ledger import resolve_gpu
    from simulators.engines.sglang import kimi_k25_moe_backend

    assert kimi_k25_moe_backend(resolve_gpu("mi355x")) == "triton"  # "Using ... (ROCm)"
    assert kimi_k25_moe_backend(resolve_gpu("b200")) == "triton"  # the SM100 auto default
    assert kimi_k25_moe_backend(resolve_gpu("h100-sxm")) == "marlin"


def test_kimi_k25_default_fraction_is_the_printed_one():
    """0.5.3's default on the MI355X's 287.98 GiB (0.908) times adjust_mem_fraction_for_vlm's
    factor for KimiK25VisionConfig's 27 x 1152 tower gives the printed 0.8260405859375 exactly."""
    cfg = get_model_preset("kimi-k2.5").config
    total = engines.reported_memory_bytes("mi355x")
    got = default_mem_fraction_static(total, tp=8, mla=True, config=cfg, rules="0.5.3")
    assert got["mem_fraction_static"] == pytest.approx(KIMI["mem_fraction_static"], abs=1e-12)


@pytest.mark.parametrize(
    ("change", "field"),
    [
        ({"actorder": "group"}, "weights"),
        ({"num_bits": 8}, "weights"),
        ({"ignore": ["lm_head"]}, "ignore"),
    ],
)
def test_kimi_k25_outside_the_scheme_read_is_refused_by_name(change, field):
    import copy

    cfg = copy.deepcopy(dict(get_model_preset("kimi-k2.5").config))
    qc = cfg["text_config"]["quantization_config"]
    if "ignore" in change:
        qc["ignore"] = change["ignore"]
    else:
        qc["config_groups"]["group_0"]["weights"].update(change)
    with pytest.raises(EngineError, match=field):
        sglang_startup(cfg, "mi355x", tp=8)


def test_an_mrope_model_keeps_sglangs_own_table_size():
    """SGLang's MRotaryEmbedding (0.5.23 layers/rotary_embedding/mrope.py) builds its cos/sin table
    over max_position_embeddings, where vLLM's mrope.py enlarges it four times: Qwen 3.5 27B's
    table is 262,144 positions x 64 rotary dims (partial 0.25 of 256) x 4 bytes = 64 MiB on
    SGLang against vLLM's 256 MiB (rotary_table_bytes of the config as it stands)."""
    from simulators.engines.vllm import rotary_table_bytes

    preset = get_model_preset("qwen3.5-27b")
    s = sglang_startup(preset.config, "h100-sxm")
    assert s.weights_parts["rotary_table"] == 262144 * 64 * 4
    assert rotary_table_bytes(preset.spec, preset.config, 4) == 4 * 262144 * 64 * 4


def test_a_pcie_node_without_a_baseline_is_told_the_overhead_was_measured_on_nvlink():
    """The 4 x RTX 3090 log (SGLang 0.4.2.post1, no baseline printed) is refused for its missing
    baseline: the overhead measured on NVLink H100 nodes (1.80 GiB) misses it by a quarter, and a
    PCIe figure rests on one sourced machine only. A PCIe start-up without a baseline says so."""
    row = ROWS["junweiliang-deepseek-r1-distill-qwen-32b-4x3090-tp4-refused"]
    cfg = json.loads((DATA / "llamacpp_configs" / "qwen2.5-32b.json").read_text("utf-8"))
    s = sglang_startup(cfg, row["gpu_id"], tp=row["tp"], rules="0.4.4.post2")
    assert s.max_total_num_tokens / row["kv_tokens"] - 1 < -0.2
    assert any("measured on NVLink nodes" in n for n in s.notes)
    assert not any("measured on NVLink nodes" in n for n in sglang_startup(cfg, "h100-sxm", tp=4).notes)
    given = sglang_startup(cfg, "rtx-3090", tp=4, rules="0.4.4.post2", baseline_bytes=23.0 * GiB)
    assert not any("measured on NVLink nodes" in n for n in given.notes)
