"""The command that fits (simulators/engines/commands.py): each flag found by searching the engine's
own start-up function, so one step less misses the target; the engine's own suggestions agree."""

import re

import pytest

from simulators import engines
from simulators.engines.commands import (
    commands_that_fit,
    llamacpp_command,
    llamacpp_log_lines,
    sglang_command,
    vllm_command,
    vllm_longest_context,
)
from simulators.presets import get_model_preset


def config(model: str) -> dict:
    return get_model_preset(model).config


def flag(cmd, name: str) -> str:
    return dict(cmd.flags)[name]


def test_vllm_takes_the_smallest_utilisation_that_holds_every_user():
    cfg = config("llama-3.1-8b")
    cmd = vllm_command(cfg, "h100-sxm", context=32768, users=8)
    assert cmd.verdict == "fits"
    util = float(flag(cmd, "--gpu-memory-utilization"))
    assert flag(cmd, "--max-model-len") == "32768" and flag(cmd, "--max-num-seqs") == "8"
    at = engines.vllm_startup(
        cfg, "h100-sxm", max_model_len=32768, max_num_seqs=8, gpu_memory_utilization=util
    )
    below = engines.vllm_startup(
        cfg, "h100-sxm", max_model_len=32768, max_num_seqs=8, gpu_memory_utilization=round(util - 0.01, 2)
    )
    assert at.verdict == "fits" and at.max_concurrency >= 8 > below.max_concurrency
    assert f"--gpu-memory-utilization {util:g}" in cmd.command
    assert f"GPU KV cache size: {at.kv_tokens:,} tokens" in cmd.lines


def test_vllm_that_cannot_fit_says_the_longest_context_as_vllm_estimates_it():
    """70B on 2 H100s at 128k x 4: no utilisation holds it; the search over vllm_startup finds the
    same longest context as vLLM's own 'estimated maximum model length is N'."""
    cfg = config("llama-3.1-70b")
    cmd = vllm_command(cfg, "h100-sxm", context=131072, users=4, tp=2)
    assert cmd.verdict == "does not fit"
    util = float(flag(cmd, "--gpu-memory-utilization"))
    refused = engines.vllm_startup(
        cfg, "h100-sxm", max_model_len=131072, tp=2, gpu_memory_utilization=util, max_num_seqs=4
    )
    estimate = int(re.search(r"estimated maximum model length is (\d+)", refused.message).group(1))
    longest = vllm_longest_context(
        cfg, "h100-sxm", ceiling=131072, tp=2, gpu_memory_utilization=util, max_num_seqs=4
    )
    assert longest == estimate
    assert f"{estimate:,} tokens" in cmd.message and "the same" in cmd.checks[0]
    ok = engines.vllm_startup(
        cfg, "h100-sxm", max_model_len=longest, tp=2, gpu_memory_utilization=util, max_num_seqs=4
    )
    assert ok.verdict != "refused"


def test_sglang_takes_the_smallest_fraction_from_its_own_minimum():
    cfg = config("llama-3.1-8b")
    cmd = sglang_command(cfg, "h100-sxm", context=32768, users=8)
    assert cmd.verdict == "fits"
    fraction = float(flag(cmd, "--mem-fraction-static"))
    kw = dict(context_length=32768, max_running_requests=8)
    at = engines.sglang_startup(cfg, "h100-sxm", mem_fraction_static=fraction, **kw)
    below = engines.sglang_startup(cfg, "h100-sxm", mem_fraction_static=round(fraction - 0.01, 2), **kw)
    assert at.max_total_num_tokens >= 8 * 32768 > below.max_total_num_tokens
    minimum = engines.sglang_min_mem_fraction(cfg, "h100-sxm")
    assert (
        minimum
        <= fraction
        <= engines.default_mem_fraction_static(engines.reported_memory_bytes("h100-sxm"))[
            "mem_fraction_static"
        ]
    )
    assert f"{minimum:.3f}" in cmd.checks[0]
    assert any(f"max_total_num_tokens={at.max_total_num_tokens}" in line for line in cmd.lines)


def test_sglang_command_for_a_hybrid_holds_every_request_at_once_not_only_their_tokens():
    """Qwen 3.5 27B on an H100, 8 requests of 4,096 tokens: the default fraction's pool holds their
    tokens, but its state cache caps SGLang at fewer running requests, so the command's fraction is
    the smallest whose cap reaches 8 (above the default: tight), never 'fits' at the default."""
    cfg = config("qwen3.5-27b")
    kw = dict(context_length=4096, max_running_requests=8)
    default = engines.sglang_startup(cfg, "h100-sxm", **kw)
    assert default.max_total_num_tokens >= 8 * 4096 and default.max_running_requests < 8
    cmd = sglang_command(cfg, "h100-sxm", context=4096, users=8)
    assert cmd.verdict != "fits"
    fraction = float(flag(cmd, "--mem-fraction-static"))
    at = engines.sglang_startup(cfg, "h100-sxm", mem_fraction_static=fraction, **kw)
    below = engines.sglang_startup(cfg, "h100-sxm", mem_fraction_static=round(fraction - 0.01, 2), **kw)
    assert at.max_running_requests >= 8 > below.max_running_requests
    assert f"max_running_requests {at.max_running_requests:,}" in cmd.message


def test_sglang_weights_too_large_is_said_with_its_minimum():
    cmd = sglang_command(config("llama-3.1-70b"), "rtx-4090", context=8192, users=1)
    assert cmd.verdict == "does not fit"
    # 70B in BF16 on one 24 GB card: the load itself runs out of memory, whatever the fraction
    assert "do not fit" in cmd.message and "--tp" in cmd.message and "no fraction starts it" in cmd.checks[0]


def test_llamacpp_keeps_the_most_layers_that_start_and_prints_what_its_parser_reads():
    cfg = config("llama-3.1-70b")
    cmd = llamacpp_command(cfg, "rtx-4090", context=8192, users=1)
    assert cmd.verdict == "offloads"
    ngl = int(flag(cmd, "-ngl"))
    kw = dict(n_ctx=8192, flash_attn=True, fit=False)
    assert engines.llamacpp_startup(cfg, "rtx-4090", n_gpu_layers=ngl, **kw).verdict == "offloads"
    assert engines.llamacpp_startup(cfg, "rtx-4090", n_gpu_layers=ngl + 1, **kw).verdict == "will not start"
    # llama.cpp's own --fit keeps 1 GiB free, so it puts no more layers on the GPU than the search
    fitted = engines.llamacpp_startup(cfg, "rtx-4090", n_ctx=8192, flash_attn=True)
    assert fitted.offloaded_layers <= ngl and f"{fitted.offloaded_layers}/81" in cmd.checks[0]
    parsed = engines.parse_log("\n".join(cmd.lines))
    s = cmd.startup
    assert parsed["engine"] == "llama.cpp" and parsed["offloaded_layers"] == s.offloaded_layers == ngl
    assert parsed["model_buffers"]["CUDA0"] == pytest.approx(s.gpu_devices[0].model_bytes, abs=0.01 * 2**20)
    assert parsed["kv_bytes"] == pytest.approx(s.kv_bytes, abs=0.02 * 2**20)


def test_llamacpp_quantizes_the_cache_before_it_offloads_and_splits_two_gpus():
    """70B at 128k x 4 on 2 H100s: an f16 cache does not fit, q8_0 does, every layer on the GPUs."""
    cfg = config("llama-3.1-70b")
    cmd = llamacpp_command(cfg, "h100-sxm", context=131072, users=4, n_gpus=2)
    assert cmd.verdict == "fits" and flag(cmd, "-ctk") == flag(cmd, "-ctv") == "q8_0"
    assert flag(cmd, "-c") == str(4 * 131072) and flag(cmd, "-np") == "4" and flag(cmd, "-ts") == "1,1"
    f16 = engines.llamacpp_startup(cfg, "h100-sxm", n_ctx=4 * 131072, n_parallel=4, n_gpus=2, fit=False)
    assert f16.verdict != "fits"


def test_llamacpp_keeps_the_fewest_experts_on_the_cpu():
    cfg = config("mixtral-8x7b")
    cmd = llamacpp_command(cfg, "rtx-4090", context=8192, users=1)
    n = int(flag(cmd, "--n-cpu-moe"))
    kv = flag(cmd, "-ctk")
    kw = dict(n_ctx=8192, flash_attn=True, fit=False, cache_type_k=kv, cache_type_v=kv)
    assert engines.llamacpp_startup(cfg, "rtx-4090", n_cpu_moe=n, **kw).verdict == "fits"
    assert engines.llamacpp_startup(cfg, "rtx-4090", n_cpu_moe=n - 1, **kw).verdict != "fits"


def test_log_lines_of_a_start_that_fails_say_so():
    s = engines.llamacpp_startup(config("llama-3.1-70b"), "rtx-4090", n_ctx=8192, n_gpu_layers=-1, fit=False)
    assert s.verdict == "will not start" and "cudaMalloc fails" in llamacpp_log_lines(s)[-1]


def test_every_engine_answers_or_refuses_by_name():
    out = commands_that_fit(config("gpt-oss-20b"), "h100-sxm", context=8192, users=4)
    assert not isinstance(out["vllm"], str)
    assert "mxfp4" in out["sglang"].lower()
    assert "gpt_oss" in out["llama.cpp"]
    for bad in (0, -1, True):
        with pytest.raises(engines.EngineError, match="context"):
            vllm_command(config("llama-3.1-8b"), "h100-sxm", context=bad, users=1)
    with pytest.raises(engines.EngineError, match="users"):
        sglang_command(config("llama-3.1-8b"), "h100-sxm", context=1024, users=0)


def test_vllm_command_follows_the_ledger_of_the_version_asked():
    """From 0.21 vLLM takes its graphs' estimate out of the KV budget: the same flags hold fewer
    tokens than on 0.19, and the command is searched on that ledger."""
    cfg = config("llama-3.1-8b")
    old = vllm_command(cfg, "h100-sxm", context=32768, users=8)
    new = vllm_command(cfg, "h100-sxm", context=32768, users=8, version="0.21+")
    assert new.version == "0.21+" and old.version == engines.VLLM_VERSION
    util = float(flag(new, "--gpu-memory-utilization"))
    at = engines.vllm_startup(
        cfg, "h100-sxm", max_model_len=32768, max_num_seqs=8, gpu_memory_utilization=util, version="0.21+"
    )
    assert at.max_concurrency >= 8 and new.startup.kv_tokens == at.kv_tokens
    same = engines.vllm_startup(
        cfg, "h100-sxm", max_model_len=32768, max_num_seqs=8, gpu_memory_utilization=util, version="0.19"
    )
    assert at.kv_tokens <= same.kv_tokens
