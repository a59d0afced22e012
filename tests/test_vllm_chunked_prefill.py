"""vLLM with chunked prefill off (``--no-enable-chunked-prefill``, ``LLM(enable_chunked_prefill=False)``).

The rule is vLLM 0.19.0's own (``vllm/engine/arg_utils.py:2180-2246``, the same in 0.29.0 at
2872-2961; ``config/scheduler.py`` ``verify_max_model_len`` 0.19.0:259-270): with chunked
prefill off and no max_num_batched_tokens given, the batch is max(max_model_len, the usage
context's default), capped at max_num_seqs x max_model_len; a smaller batch the user set is
refused. The profile run's forward pass is that many tokens, so the activation term and the KV
budget follow it. Checked on real start-ups: the swjeong9/LLMServingSim rows of
tests/data/vllm_heldout_s4.jsonl (Llama 3.2 1B, vLLM 0.19.0, chunked prefill off, max_model_len
8192, on an A10G and an L4).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from simulators.engines import EngineError, log_mismatches, log_settings, parse_vllm_log, vllm_startup
from simulators.engines.vllm import chunked_prefill_batched_tokens, scheduler_defaults
from simulators.presets import get_model_preset

DATA = Path(__file__).parent / "data"
ROWS = {
    json.loads(line)["id"]: json.loads(line)
    for line in (DATA / "vllm_heldout_s4.jsonl").read_text(encoding="utf-8").splitlines()
    if line
}
OFF_ROWS = [
    "swjeong9-llmservingsim-llama-3-2-1b-a10g-bs32-0.19.0",
    "swjeong9-llmservingsim-llama-3-2-1b-l4-bs32-0.19.0",
]
ON_ROW = "swjeong9-llmservingsim-llama-3-2-1b-a10g-chunked-bs1-0.19.0"
GiB = 2**30


def _text(row_id: str) -> str:
    return "\n".join(ROWS[row_id]["raw_lines"])


def _llama_1b() -> dict:
    return get_model_preset("llama-3.2-1b").config


def test_the_rule_as_arg_utils_writes_it():
    """arg_utils.py 0.19.0:2213-2230: only a default grows to max_model_len when chunked prefill
    is off, and every default is capped at max_num_seqs x max_model_len."""
    server_small = scheduler_defaults(22 * GiB, "NVIDIA A10G")[0]  # the server's 2,048 below 70 GiB
    assert server_small == 2048
    off = dict(max_num_seqs=32, enable_chunked_prefill=False)
    on = dict(max_num_seqs=32, enable_chunked_prefill=True)
    # the held-out rows' settings: max_model_len 8192, max_num_seqs 32
    assert chunked_prefill_batched_tokens(None, server_small, max_model_len=8192, **off) == 8192
    assert chunked_prefill_batched_tokens(None, server_small, max_model_len=8192, **on) == 2048
    # a context shorter than the default keeps the default ("use the default for higher throughput")
    assert chunked_prefill_batched_tokens(None, server_small, max_model_len=1024, **off) == 2048
    # the cap: one sequence of 1,024 tokens holds no more than 1,024 a step
    assert (
        chunked_prefill_batched_tokens(
            None, server_small, max_num_seqs=1, max_model_len=1024, enable_chunked_prefill=False
        )
        == 1024
    )
    # a value the user set is kept as given, on or off
    for flag in (True, False):
        assert (
            chunked_prefill_batched_tokens(
                16384, server_small, max_num_seqs=32, max_model_len=8192, enable_chunked_prefill=flag
            )
            == 16384
        )


@pytest.mark.parametrize("version", ["0.19.0", "0.21.0"])
def test_chunked_prefill_off_grows_the_profile_run_and_shrinks_the_cache(version):
    """The same server start-up (A10G, Llama 3.2 1B, 8,192 context) with chunked prefill off profiles
    a forward pass of 8,192 tokens instead of 2,048: a larger activation peak, fewer KV tokens, and
    the weights untouched. The 0.21-0.29 line resolves the batch by the same rule (0.29.0
    arg_utils.py:2915-2945)."""
    kw = dict(max_model_len=8192, max_num_seqs=32, version=version)
    on = vllm_startup(_llama_1b(), "a10g", **kw)
    off = vllm_startup(_llama_1b(), "a10g", enable_chunked_prefill=False, **kw)
    assert (on.max_num_batched_tokens, off.max_num_batched_tokens) == (2048, 8192)
    assert off.activation_bytes > on.activation_bytes
    assert off.kv_tokens < on.kv_tokens
    assert off.weights_bytes == on.weights_bytes
    assert off.verdict == on.verdict == "fits"


def test_a_batch_shorter_than_the_context_is_refused_as_vllm_refuses_it():
    """config/scheduler.py verify_max_model_len raises when chunked prefill is off and the batch
    the user set is below max_model_len; with it on, the same batch starts."""
    kw = dict(max_model_len=8192, max_num_batched_tokens=2048, version="0.19.0")
    off = vllm_startup(_llama_1b(), "a10g", enable_chunked_prefill=False, **kw)
    assert off.verdict == "refused"
    assert "max_num_batched_tokens (2048)" in off.message
    assert "max_model_len (8192)" in off.message
    assert "enable_chunked_prefill=False" in off.message
    assert vllm_startup(_llama_1b(), "a10g", **kw).verdict == "fits"


def test_a_hybrid_model_with_chunked_prefill_off_is_refused_naming_the_field():
    """Qwen 3.5's Gated DeltaNet layers: vLLM ties chunked prefill to prefix caching's
    mamba_cache_mode, which the ledger does not follow, so the combination is refused."""
    config = json.loads((DATA / "vllm_configs" / "qwen--qwen3.5-9b.json").read_text(encoding="utf-8"))
    kw = dict(max_model_len=8192, version="0.19.0", total_bytes=79.18 * GiB)
    assert vllm_startup(config, "h100-sxm", **kw).verdict == "fits"
    with pytest.raises(EngineError, match="enable_chunked_prefill=False"):
        vllm_startup(config, "h100-sxm", enable_chunked_prefill=False, **kw)


def test_the_parser_reads_the_flag_from_real_lines():
    """Each of vLLM's lines that says it: the non-default args, the engine's config line
    (config/vllm.py:1684) and the scheduler's "Chunked prefill is enabled" line."""
    lines = ROWS[OFF_ROWS[0]]["raw_lines"]
    args = next(line for line in lines if "non-default args" in line)
    engine = next(line for line in lines if "Initializing a V1 LLM engine" in line)
    assert "'enable_chunked_prefill': False" in args and "enable_chunked_prefill=False" in engine
    for line in (args, engine):
        parsed = parse_vllm_log(line, require_kv=False)
        assert parsed["enable_chunked_prefill"] is False
    scheduler = next(line for line in ROWS[ON_ROW]["raw_lines"] if "Chunked prefill is enabled" in line)
    parsed = parse_vllm_log(scheduler, require_kv=False)
    assert parsed["enable_chunked_prefill"] is True
    assert parsed["max_num_batched_tokens"] == 8192
    # the whole logs, as "Use this log's settings" takes them
    assert log_settings(parse_vllm_log(_text(OFF_ROWS[0])))["enable_chunked_prefill"] is False
    assert log_settings(parse_vllm_log(_text(ON_ROW)))["enable_chunked_prefill"] is True
    # a log that prints none of these lines says nothing about it
    kv_only = "\n".join(line for line in lines if "KV cache" in line)
    assert "enable_chunked_prefill" not in log_settings(parse_vllm_log(kv_only))


@pytest.mark.parametrize("row_id", OFF_ROWS)
def test_the_chunked_off_rows_from_their_own_settings(row_id):
    """The two chunked-off start-ups scored as a server would take them (no ``offline``): the
    flag read from the log gives vLLM's 8,192 batched tokens, and the KV tokens land within 2 %
    of what the log printed; the server's chunked default of 2,048 would not."""
    row = ROWS[row_id]
    parsed = parse_vllm_log(_text(row_id))
    settings = log_settings(parsed)
    version = settings.pop("version")
    assert settings["enable_chunked_prefill"] is False
    assert "offline" not in settings
    s = vllm_startup(_llama_1b(), row["gpu"], version=version, **settings)
    assert s.max_num_batched_tokens == settings["max_model_len"] == 8192
    off = s.kv_tokens / parsed["kv_tokens"] - 1
    assert abs(off) <= 0.02, (row_id, off)
    assert abs(s.weights_bytes / parsed["weights_bytes"] - 1) <= 0.01
    chunked = vllm_startup(
        _llama_1b(), row["gpu"], version=version, **(settings | {"enable_chunked_prefill": True})
    )
    assert chunked.max_num_batched_tokens == 2048
    assert abs(chunked.kv_tokens / parsed["kv_tokens"] - 1) > abs(off)


def test_a_log_with_chunked_prefill_off_is_named_before_any_term():
    """The page models chunked prefill on unless told: a log that ran with it off is said."""
    parsed = parse_vllm_log(_text(OFF_ROWS[0]))
    said = log_mismatches(parsed, {"version": "0.19", "enable_chunked_prefill": True})
    assert any("chunked prefill" in line and "False" in line for line in said), said
    same = log_mismatches(parsed, {"version": "0.19", "enable_chunked_prefill": False})
    assert not any("chunked prefill" in line for line in same), same


def _batch_caption(at) -> str:
    return next(c.value for c in at.caption if "Batch limits" in c.value).replace("\\", "")


def test_the_page_carries_the_flag_from_a_pasted_log():
    """Will it fit?: the chunked-off A10G log is said to differ from the page (chunked prefill on
    by default) before any term; 'Use this log's settings' ticks --no-enable-chunked-prefill, the
    ledger's batch becomes the context (8,192 tokens), the mismatch is gone and the KV tokens
    agree with the log's 556,288 within 2 %."""
    from tests import pages

    at = pages.open_page(
        "app_pages/will_it_fit.py", fit_engine="vllm", fit_model="llama-3.2-1b", fit_gpu="a10g"
    )
    at.text_area(key="fit_vllm_log").input(_text(OFF_ROWS[0])).run()
    assert not at.exception
    warning = " ".join(w.value for w in at.warning).replace("\\", "")
    assert "chunked prefill (enable_chunked_prefill): the log used False, the page True" in warning
    assert "max_num_batched_tokens 2,048" in _batch_caption(at)
    at.button(key="fit_use_log").click().run()
    assert not at.exception
    assert at.toggle(key="fit_nochunk").value is True
    warning = " ".join(w.value for w in at.warning).replace("\\", "")
    assert "chunked prefill" not in warning
    assert "max_num_batched_tokens 8,192" in _batch_caption(at)
    table = next(d.value for d in at.dataframe if "Your log" in d.value.columns)
    kv = table[table["Term"] == "kv tokens"].iloc[0]
    assert kv["Your log"] == "556,288 tokens" and kv["Agrees"] == "yes"


def test_the_160_gib_tier_by_release():
    """vLLM's server on a device of at least 160 GiB (a B200 reports 178.35 GiB): 16,384 batched
    tokens from 0.28.0 (0.29.0's arg_utils.py:2698-2707), 8,192 on 0.19 and 0.27; the family id
    "0.21+" cannot choose and is refused naming max_num_batched_tokens, unless the user set it.
    The LLM class (offline) takes 16,384 in every release; an H200 (139.8 GiB) is below the tier."""
    config = get_model_preset("gpt-oss-20b").config  # on the V1 model runner through 0.29
    batched = {
        v: vllm_startup(config, "b200", max_model_len=8192, version=v).max_num_batched_tokens
        for v in ("0.19", "0.27.1", "0.28.0", "0.29.0")
    }
    assert batched == {"0.19": 8192, "0.27.1": 8192, "0.28.0": 16384, "0.29.0": 16384}
    with pytest.raises(EngineError, match="max_num_batched_tokens: on a device of 160 GiB"):
        vllm_startup(config, "b200", max_model_len=8192, version="0.21+")
    chosen = vllm_startup(config, "b200", max_model_len=8192, version="0.21+", max_num_batched_tokens=4096)
    assert (chosen.max_num_batched_tokens, chosen.max_num_seqs) == (4096, 1024)
    offline = vllm_startup(config, "b200", max_model_len=8192, version="0.21+", offline=True)
    assert offline.max_num_batched_tokens == 16384
    assert (
        vllm_startup(config, "h200-sxm", max_model_len=8192, version="0.21+").max_num_batched_tokens == 8192
    )
