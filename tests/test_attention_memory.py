"""The attention switch in the memory model: fused (FlashAttention) vs eager (score matrix in memory).

Measured figures come from simulators/data/measured/ (one H100, Hugging Face transformers 5.17,
random bf16 weights; how they were taken is in the README there).
"""

import json
from pathlib import Path

import pytest

from simulators import fit
from simulators.hardware import get_accelerator
from simulators.llm_memory import (
    ATTENTION_KINDS,
    attended_keys_per_layer,
    attention_score_bytes,
    inference_memory,
    resolve_attention,
    training_activation_bytes_per_layer,
    training_memory,
)
from simulators.presets import get_model_preset

MEASURED = Path(__file__).resolve().parents[1] / "simulators" / "data" / "measured"
LLAMA_3B = get_model_preset("llama-3.2-3b").spec
MISTRAL = get_model_preset("mistral-7b-v0.1").spec  # every layer slides, window 4,096
GEMMA_2 = get_model_preset("gemma-2-2b-it").spec  # even layers slide (window 4,096), odd are global


def _runs(name: str) -> list[dict]:
    return json.loads((MEASURED / name).read_text(encoding="utf-8"))


def _prefill(spec, prompt: int, attention: str) -> float:
    """One un-chunked prefill, tensors only, as the measured runs did it."""
    return inference_memory(
        spec,
        context_tokens=prompt,
        prefill_chunk_tokens=prompt,
        runtime_overhead_bytes=0,
        attention=attention,
    ).total_bytes


EAGER_VS_SDPA = {run["attn"]: run for run in _runs("h100-eager-vs-flash-llama-3.2-3b.json")}
PROMPT_3B = EAGER_VS_SDPA["eager"]["context"] - 32  # 8,160 tokens


def test_llama_3_2_3b_eager_prefill_matches_the_measured_23_78_gb():
    """Eager attention, 8,160 tokens on an H100: 23,780,860,928 B measured; within 10%."""
    measured = EAGER_VS_SDPA["eager"]["prefill_peak_meas"]
    assert _prefill(LLAMA_3B, PROMPT_3B, "eager") == pytest.approx(measured, rel=0.10)


def test_llama_3_2_3b_fused_prefill_matches_the_measured_8_01_gb():
    """SDPA (fused kernel), same prompt: 8,005,049,856 B measured; within 5%."""
    measured = EAGER_VS_SDPA["sdpa"]["prefill_peak_meas"]
    assert _prefill(LLAMA_3B, PROMPT_3B, "flash") == pytest.approx(measured, rel=0.05)


def test_what_eager_adds_matches_the_measured_difference():
    """Eager − SDPA peak, measured 15.78 GB: about one layer's score matrix and its fp32 softmax
    copies (24 heads × 8,160² scores), not all 28 layers' worth. Predicted within 5%."""
    measured = EAGER_VS_SDPA["eager"]["prefill_peak_meas"] - EAGER_VS_SDPA["sdpa"]["prefill_peak_meas"]
    predicted = _prefill(LLAMA_3B, PROMPT_3B, "eager") - _prefill(LLAMA_3B, PROMPT_3B, "flash")
    assert predicted == pytest.approx(measured, rel=0.05)


def test_a_sliding_window_caps_the_keys_a_chunk_attends_to():
    """Mistral-7B (window 4,096): a 2,048-token chunk at the end of 32k tokens spans at most
    4,095 + 2,048 keys in every layer; Llama-3.2-3B (no window) spans all 32,768."""
    assert set(attended_keys_per_layer(MISTRAL, 2048, 32768)) == {4095 + 2048}
    assert set(attended_keys_per_layer(LLAMA_3B, 2048, 32768)) == {32768}


def test_past_the_window_the_score_matrix_stops_growing_with_context():
    """Mistral's scores for a 2,048-token chunk are the same at 16k and 32k of context; a model
    without a window needs twice as much at twice the context."""
    mistral = [attention_score_bytes(MISTRAL, 2048, c) for c in (16384, 32768)]
    llama = [attention_score_bytes(LLAMA_3B, 2048, c) for c in (16384, 32768)]
    assert mistral[0] == mistral[1]
    assert llama[1] == pytest.approx(2 * llama[0], rel=1e-12)


def test_gemma_2_peak_scores_come_from_a_global_layer():
    """With alternating local and global layers, the peak is the largest layer's matrix: a
    global layer's, so capping the local ones leaves the peak unchanged."""
    capped = set(attended_keys_per_layer(GEMMA_2, 2048, 32768))
    assert capped == {4095 + 2048, 32768}
    uncapped = GEMMA_2.with_overrides(sliding_window=0, sliding_layers=())
    assert attention_score_bytes(GEMMA_2, 2048, 32768) == attention_score_bytes(uncapped, 2048, 32768)


def test_one_prefill_of_a_whole_prompt_spans_all_of_it_even_with_a_window():
    """transformers returns the whole prompt's keys to a sliding layer on the first pass
    (DynamicSlidingWindowLayer.update), so the window does not shrink that matrix."""
    assert set(attended_keys_per_layer(MISTRAL, 8160, 8160)) == {8160}


def test_eager_memory_grows_with_the_square_of_a_whole_prompt():
    """Without chunking the score matrix is prompt × prompt: 4× the prompt, 16× the scores."""
    part = [
        inference_memory(LLAMA_3B, context_tokens=n, prefill_chunk_tokens=n, attention="eager").get(
            "attention_scores"
        )
        for n in (2048, 8192)
    ]
    assert part[1] / part[0] == pytest.approx(16, rel=0.01)


def test_the_default_is_flash_and_reproduces_the_predictions_made_before_the_switch():
    """Every ``prefill_peak_pred`` in the measured files was written by this project's
    ``inference_memory`` before the attention switch existed (context as in the row, no CUDA
    context); the default and ``attention="flash"`` still give exactly those bytes."""
    runs = _runs("h100-hf-models-vs-fit.json") + list(EAGER_VS_SDPA.values())
    for run in runs:
        spec = get_model_preset(run["preset"]).spec
        default = inference_memory(spec, context_tokens=run["context"], runtime_overhead_bytes=0)
        flash = inference_memory(
            spec, context_tokens=run["context"], runtime_overhead_bytes=0, attention="flash"
        )
        assert default.total_bytes == flash.total_bytes == run["prefill_peak_pred"], run["preset"]
        assert [p.key for p in default.parts] == ["weights", "kv_cache", "activations", "overhead"]


def test_training_attention_kinds_match_the_old_flash_switch():
    """attention="flash"/"eager" give the same bytes as flash_attention=True/False always did."""
    for flash, kind in ((True, "flash"), (False, "eager")):
        old = training_memory(LLAMA_3B, seq=4096, flash_attention=flash)
        new = training_memory(LLAMA_3B, seq=4096, attention=kind)
        assert old.total_bytes == new.total_bytes
        assert training_activation_bytes_per_layer(
            LLAMA_3B, 4096, 1, flash_attention=flash
        ) == training_activation_bytes_per_layer(LLAMA_3B, 4096, 1, attention=kind)
    assert training_memory(LLAMA_3B).total_bytes == training_memory(LLAMA_3B, attention="flash").total_bytes


def test_fit_results_say_which_attention_they_assumed():
    h100 = get_accelerator("h100-sxm")
    eager = fit.inference(LLAMA_3B, h100, context=8192, attention="eager")
    flash = fit.inference(LLAMA_3B, h100, context=8192)
    assert (flash.attention, eager.attention) == ("flash", "eager")
    assert eager.attention_label == ATTENTION_KINDS["eager"]
    assert "Attention scores (eager)" in [row["Part"] for row in fit.parts_table(eager.memory)]
    assert fit.training(LLAMA_3B, h100, flash_attention=False).attention == "eager"


@pytest.mark.parametrize("bad", ["Flash", "sdpa", "", None, 1])
def test_an_unknown_attention_kind_is_a_clear_value_error(bad):
    with pytest.raises(ValueError, match=r"attention must be 'flash'.*or 'eager'"):
        inference_memory(LLAMA_3B, attention=bad)


def test_contradicting_switches_are_refused():
    with pytest.raises(ValueError, match="contradicts"):
        resolve_attention("flash", flash_attention=False)
    with pytest.raises(ValueError, match="contradicts"):
        training_memory(LLAMA_3B, attention="eager", flash_attention=True)
