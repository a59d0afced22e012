"""Issue 30's acceptance on held-out vLLM start-ups (tests/data/vllm_heldout.jsonl).

Each row is a public start-up from a machine outside the llm-d study, kept with the page it came
from and the lines read there. None was looked at before the ledger was written, and nothing is
fitted to one: each is predicted from its own lines (``parse_vllm_log`` then ``log_settings``,
or the ``vllm serve`` command the page printed where no engine-config line was read), with the
model's sourced config and the device total the log printed, or else the GPU's sourced total
(``device_total``), said as such.

The acceptance: KV tokens within 2 % on at least 90 % of the vLLM 0.19 start-ups whose config
and device total are known, all within 5 %; weights within 1 %; other versions within 5 % or
refused with the reason. Where a log quotes "Available KV cache memory" but its "GPU KV cache
size" line was not in the part read, the memory is compared: the tokens are that memory divided
by the per-token page, so their error is the memory's.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from simulators import engines
from simulators.engines import EngineError, GiB, LogError, parse_vllm_log, vllm_startup
from simulators.presets import get_model_preset

HELD_OUT = Path(__file__).parent / "data" / "vllm_heldout.jsonl"
CONFIGS = HELD_OUT.parent / "vllm_configs"
# vllm_heldout.jsonl and its companions (vllm_heldout_*.jsonl: rows collected from other kinds
# of source, kept in their own files); every row is held out the same way.
ROWS = [
    json.loads(line)
    for path in sorted(HELD_OUT.parent.glob("vllm_heldout*.jsonl"))
    for line in path.read_text(encoding="utf-8").splitlines()
    if line
]


def _failed(row: dict) -> bool:
    return row.get("outcome") == "failed"


def _measured(row: dict) -> dict:
    return parse_vllm_log("\n".join(row["raw_lines"]), require_kv=not _failed(row))


def _settings(row: dict) -> dict:
    parsed = _measured(row)
    settings = engines.log_settings(parsed)
    settings.update(row.get("cli_settings") or {})
    if row.get("total_memory_gib"):
        settings["total_bytes"] = row["total_memory_gib"] * GiB
    settings["tp"] = settings.get("tp") or row.get("tp") or 1
    return settings


def _config(row: dict) -> dict:
    """The model's config: a preset, or a file in tests/data/vllm_configs with its SOURCES.tsv line."""
    if row.get("preset"):
        return get_model_preset(row["preset"]).config
    return json.loads((CONFIGS / row["config_file"]).read_text(encoding="utf-8"))


def _predict(row: dict) -> engines.VllmStartup:
    config = _config(row)
    settings = _settings(
        row
    )  # the version as the log printed it (with its engine before 0.19), else the row's
    version = settings.pop("version", None) or row.get("vllm_version") or "0.19"
    return vllm_startup(config, row["gpu"], version=version, **settings)


def _off(predicted: float, measured: float) -> float:
    return predicted / measured - 1


def _is_019(row: dict) -> bool:
    """A 0.19 release (0.19.0, 0.19.1): not a development build such as 0.19.1rc1.dev301."""
    return re.fullmatch(r"0\.19\.\d+", str(row.get("vllm_version") or "").strip()) is not None


def _total_known(row: dict) -> bool:
    return bool(row.get("total_memory_gib")) or engines.device_total(row["gpu"]) is not None


@pytest.mark.parametrize("row", ROWS, ids=lambda r: r["id"])
def test_each_held_out_row_keeps_its_source_and_its_lines(row):
    """A page that was read, the lines read there, marked held out; the measured terms come from
    those lines (parsed), never typed beside them."""
    assert row["batch"] == "held-out"
    assert row["source"].startswith("https://")
    assert row["raw_lines"]
    measured = _measured(row)
    if _failed(row):  # a start-up that failed printed no KV line, and the parser says so
        assert "kv_bytes" not in measured and "kv_tokens" not in measured
        with pytest.raises(LogError):
            parse_vllm_log("\n".join(row["raw_lines"]))
    else:
        assert "kv_bytes" in measured or "kv_tokens" in measured
    assert (row.get("preset") or row.get("config_file")) and row["config_source"]
    if row.get("config_file"):  # a config kept beside the tests names where it came from
        sources = (CONFIGS / "SOURCES.tsv").read_text(encoding="utf-8").splitlines()
        stem = row["config_file"].removesuffix(".json")
        assert any(line.split("\t")[0] == stem and "https://" in line for line in sources), stem
    assert row["gpu_source"]


def _tally() -> list[dict]:
    """Each start-up that printed its KV line, predicted from its own settings: the KV error
    (tokens, or the available memory where the tokens line was not read), the weights error, or
    the refusal; ``counted`` marks the 0.19 start-ups whose config and device total are known and
    that are still unseen: a row on which a cause was found carries ``seen`` (what, and the commit)
    and is printed but no longer counted as held out."""
    out = []
    for row in (r for r in ROWS if not _failed(r)):
        entry: dict = {"row": row, "counted": _is_019(row) and _total_known(row) and not row.get("seen")}
        measured = _measured(row)
        try:
            s = _predict(row)
        except EngineError as exc:
            entry["refused"] = str(exc)
            out.append(entry)
            continue
        entry["startup"] = s
        if "kv_tokens" in measured:
            entry["term"], entry["kv_off"] = "KV tokens", _off(s.kv_tokens, measured["kv_tokens"])
        else:
            entry["term"], entry["kv_off"] = "available KV memory", _off(s.kv_bytes, measured["kv_bytes"])
        if "weights_bytes" in measured:
            entry["w_off"] = _off(s.weights_bytes, measured["weights_bytes"])
        out.append(entry)
    return out


def test_held_out_tally():
    """Every held-out start-up is predicted from its own lines (a 0.19 start-up is never refused;
    another version is within 5 % or refused with the reason), the ledger says each fits as it
    did, and gpt-oss's weights are named MXFP4. The tally is printed for the report; the bar
    itself is test_issue_30_held_out_acceptance."""
    tally = _tally()
    counted = [e for e in tally if e["counted"]]
    assert counted, "no held-out vLLM 0.19 start-up with a known config and device total"
    seen = sum(bool(r.get("seen")) for r in ROWS)
    print(
        f"\nheld-out vLLM start-ups: {len(ROWS)} rows, {len(counted)} counted (0.19, config, total known,"
        f" unseen); {seen} seen (a cause found on them), printed, not counted"
    )
    for e in tally:
        row = e["row"]
        if "refused" in e:
            assert not e["counted"], (row["id"], e["refused"])
            assert "vLLM" in e["refused"] or "version" in e["refused"]
            print(f"  {row['id']}{' (seen)' if row.get('seen') else ''}: refused: {e['refused']}")
            continue
        s = e["startup"]
        assert s.verdict == "fits", (row["id"], s.message)
        total = "log" if row.get("total_memory_gib") else f"{row['gpu']}'s sourced total"
        line = f"  {row['id']}{' (seen)' if row.get('seen') else ''}: {e['term']} {e['kv_off']:+.2%}"
        if "w_off" in e:
            line += f", weights {e['w_off']:+.2%} ({s.weights_label})"
        print(line + f"; device total from {total}; version {row.get('vllm_version') or 'not printed'}")
        if "gpt-oss" in row["model_id"]:
            assert "MXFP4" in s.weights_label
        if not e["counted"] and row.get("vllm_version"):
            assert abs(e["kv_off"]) <= 0.05, (row["id"], e["kv_off"])
    kv = [e["kv_off"] for e in counted]
    within_2, within_5 = sum(abs(v) <= 0.02 for v in kv), sum(abs(v) <= 0.05 for v in kv)
    w = [abs(e["w_off"]) <= 0.01 for e in counted if "w_off" in e]
    worst = max(counted, key=lambda e: abs(e["kv_off"]))
    print(
        f"  0.19 counted: n={len(counted)}, KV within 2 %: {within_2}, within 5 %: {within_5};",
        f"weights within 1 %: {sum(w)} of {len(w)}; worst {worst['kv_off']:+.2%} ({worst['row']['id']})",
    )


def test_issue_30_held_out_acceptance():
    """Issue 30's bar: KV within 2 % on >= 90 % of the 0.19 start-ups whose config and device
    total are known, all within 5 %, weights within 1 %."""
    counted = [e for e in _tally() if e["counted"]]
    assert len(counted) >= 10, f"only {len(counted)} held-out 0.19 start-ups"
    assert sum(abs(e["kv_off"]) <= 0.02 for e in counted) >= 0.9 * len(counted)
    assert all(abs(e["kv_off"]) <= 0.05 for e in counted)
    assert all(abs(e["w_off"]) <= 0.01 for e in counted if "w_off" in e)


@pytest.mark.parametrize("row", [r for r in ROWS if _failed(r)], ids=lambda r: r["id"])
def test_a_held_out_start_up_that_failed_is_not_said_to_fit(row):
    """A real start-up that failed (the log's own error) is refused by the ledger from the same
    settings and device total, with its weights within 1 % of what the log printed before it
    failed, and the reason names where it fails."""
    measured = _measured(row)
    s = _predict(row)
    assert s.verdict == "refused", s.message
    assert abs(_off(s.weights_bytes, measured["weights_bytes"])) <= 0.01
    if measured["weights_bytes"] < measured["total_bytes"]:  # it loaded, then failed
        assert "they load" in s.message and "profile run" in s.message


def test_qwen35_9b_weights_at_tp1_and_tp4_as_printed():
    """Qwen 3.5 9B's weights, vision tower and rotary table included, as two real start-ups
    printed them (tests/data/vllm_startups.jsonl: tengxun_open at TP 1 on vLLM 0.18, LAMBO at
    TP 4 over PCIe on 0.19.0), from the config tt-metal vendors (tests/data/vllm_configs)."""
    startups = {
        json.loads(line)["id"]: json.loads(line)
        for line in (HELD_OUT.parent / "vllm_startups.jsonl").read_text(encoding="utf-8").splitlines()
        if line
    }
    config = json.loads(
        (HELD_OUT.parent / "vllm_configs" / "qwen--qwen3.5-9b.json").read_text(encoding="utf-8")
    )
    layout = engines.vllm.weight_layout(config)
    spec = engines.vllm._as_spec(config, None)[0]
    for run, tp in (("tengxun-open-qwen3-5-9b-tp1-8192", 1), ("lambo-qwen3-5-9b-tp4-32768", 4)):
        printed = parse_vllm_log("\n".join(startups[run]["raw_lines"]))["weights_bytes"]
        predicted = sum(engines.vllm.vllm_weight_bytes(spec, layout, tp, config).values())
        assert abs(_off(predicted, printed)) <= 0.01, (run, predicted / GiB, printed / GiB)
