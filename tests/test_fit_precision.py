"""Will it fit? never prices a tensor-core format at another unit's peak without saying so."""

from simulators import fit
from simulators.hardware import get_accelerator, load_catalog
from simulators.presets import get_model_preset


def test_a10g_has_no_bf16_figure_and_says_so():
    """NVIDIA publishes no A10G datasheet (accelerators.csv notes): the catalog has only its FP32
    vector peak. Borrowing it gave a time to first token of 8.1 s against the A10's 2.0 s, so the
    page shows no prefill time and says "No BF16 figure"."""
    spec = get_model_preset("llama-3-8b").spec
    result = fit.inference(spec, get_accelerator("a10g"), weight_fmt="bf16", context=8192)
    assert result.prefill_s is None
    assert "No BF16 figure for A10G" in result.speed_help
    prefill_row = next(r for r in fit.speed_table(result) if r["Quantity"].startswith("Prefill"))
    assert "No BF16 figure for A10G" in prefill_row["Value"]
    h100 = fit.inference(spec, get_accelerator("h100-sxm"), weight_fmt="bf16", context=8192)
    chosen = [a for a in load_catalog() if a.memory_bytes and a.memory_bandwidth_bytes_per_s]
    rows = {r["Accelerator"]: r for r in fit.catalog_table(h100, chosen)}
    assert rows["A10G"]["Peak used"] == "no BF16 figure" and rows["H100 SXM (80GB)"]["Peak used"] == "BF16"


def test_fallbacks_stay_on_the_tensor_cores_and_are_named():
    """T4 has FP16 tensor cores but no BF16 figure: a BF16 model runs (and is priced) in FP16,
    and the note says so; no format other than fp32 ever lands on the FP32 vector peak."""
    t4 = get_accelerator("t4")
    assert fit.compute_dtype(t4, "bf16") == "fp16"
    assert "T4 has no BF16 figure" in fit.precision_note(t4, "bf16")
    for gpu_id in ("a10g", "k80", "m60", "rtx-pro-6000-blackwell"):
        for fmt in ("bf16", "fp16", "fp8", "int4", "nf4"):
            assert fit.compute_dtype(get_accelerator(gpu_id), fmt) != "fp32"
    assert fit.precision_note(get_accelerator("h100-sxm"), "bf16") == ""
