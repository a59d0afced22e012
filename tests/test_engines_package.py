"""simulators.engines as a package: one ledger type shared by the engines, one parse_log."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from simulators import engines
from simulators.engines import Ledger, LogError, Term, parse_log

DATA = Path(__file__).parent / "data"


def _first_vllm_log() -> str:
    row = json.loads((DATA / "vllm_startups.jsonl").read_text(encoding="utf-8").splitlines()[0])
    return "\n".join(row["raw_lines"])


def test_parse_log_recognises_a_real_vllm_log_and_reads_it_as_parse_vllm_log_does():
    text = _first_vllm_log()
    parsed = parse_log(text)
    assert parsed["engine"] == "vllm"
    direct = engines.parse_vllm_log(text)
    for key in ("kv_bytes", "kv_tokens"):
        assert parsed[key] == direct[key]


@pytest.mark.parametrize(
    "text", ["", "   ", "hello world\nnothing here", "<script>alert(1)</script>", "INFO 12:00 started"]
)
def test_parse_log_says_what_it_cannot_place(text):
    with pytest.raises(LogError):
        parse_log(text)


def test_a_vllm_startup_is_a_shared_ledger_whose_terms_add_up():
    from simulators.presets import get_model_preset

    config = get_model_preset("gpt-oss-20b").config
    startup = engines.vllm_startup(config, "h100-sxm", max_model_len=8192)
    assert startup.fits
    ledger = startup.ledger()
    assert isinstance(ledger, Ledger) and ledger.engine == "vllm"
    assert all(isinstance(t, Term) and t.cause and t.source for t in ledger)
    expected = (
        startup.weights_bytes
        + startup.activation_bytes
        + startup.non_torch_bytes
        + startup.kv_bytes
        + startup.cuda_graph_bytes
    )
    assert ledger.used_bytes == pytest.approx(expected)
    assert {t.kind for t in ledger} <= {"derived", "measured"}


def test_a_measured_term_must_carry_its_range():
    with pytest.raises(ValueError, match="range"):
        Term("x", "X", 1.0, "cause", "source", kind="measured")
    term = Term("x", "X", 1.0, "cause", "source", kind="measured", low=0.5, high=2.0)
    ledger = Ledger("vllm", "0.19.0", "h100-sxm", 1.5, (term,))
    assert ledger.tight  # 0.5 <= 1.5 < 2.0: the range straddles the total
