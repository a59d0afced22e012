"""A reader's own config.json from a link or from the Hub: the view of a pasted model can be shared,
and a model id is read from a server laid out as the Hugging Face Hub (here a local one)."""

from __future__ import annotations

import base64
import http.server
import json
import threading
import zlib
from pathlib import Path
from typing import ClassVar

import pytest

from simulators.presets import get_model_preset
from tests.pages import open_page
from ui import config_source
from ui.config_source import ConfigSourceError, decode_config, encode_config, fetch_hub_config

PAGE = "app_pages/will_it_fit.py"
QWEN = Path(__file__).parent / "data" / "vllm_configs" / "qwen--qwen3-32b.json"


def _text(preset: str) -> str:
    return json.dumps(get_model_preset(preset).config, indent=2)


def test_a_config_packs_into_a_short_link_value_and_back():
    text = _text("llama-3.1-8b")
    packed = encode_config(text)
    assert packed is not None and len(packed) < 1500  # a few kB of JSON: well inside a link
    assert json.loads(decode_config(packed)) == json.loads(text)
    assert encode_config(decode_config(packed)) == packed  # stable: a reopened link is the same link


@pytest.mark.parametrize(
    "forged",
    [
        "AAAA",  # base64 of no zlib stream
        "eJzLSM3JyQcABiwCFQ"[:-3],  # a real stream, cut
        "not valid!",  # outside the alphabet
        base64.urlsafe_b64encode(zlib.compress(b"\xff\xfe" * 10)).decode().rstrip("="),  # not UTF-8
        base64.urlsafe_b64encode(zlib.compress(b" " * 2_000_000, 9)).decode().rstrip("="),  # a bomb
    ],
)
def test_a_forged_link_value_is_refused_in_words(forged):
    with pytest.raises(ConfigSourceError):
        decode_config(forged)


def test_a_config_too_large_for_a_link_is_not_cut():
    rng = __import__("random").Random(7)
    big = json.dumps({f"k{i}": rng.random() for i in range(3000)})
    assert encode_config(big) is None


class _Hub(http.server.BaseHTTPRequestHandler):
    files: ClassVar[dict[str, tuple[int, bytes]]] = {}

    def do_GET(self):
        code, body = self.files.get(self.path, (404, b"Entry not found"))
        self.send_response(code)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


@pytest.fixture()
def hub(monkeypatch):
    _Hub.files = {
        "/Qwen/Qwen3-32B/resolve/main/config.json": (200, QWEN.read_bytes()),
        "/meta-llama/Llama-3.3-70B-Instruct/resolve/main/config.json": (401, b"gated"),
    }
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Hub)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    monkeypatch.setenv("HF_ENDPOINT", f"http://127.0.0.1:{server.server_address[1]}")
    config_source._fetch.cache_clear()
    yield server
    server.shutdown()
    config_source._fetch.cache_clear()


def test_a_model_id_is_read_from_the_hub_layout(hub):
    assert json.loads(fetch_hub_config("Qwen/Qwen3-32B")) == json.loads(QWEN.read_text())
    with pytest.raises(ConfigSourceError, match="gated"):
        fetch_hub_config("meta-llama/Llama-3.3-70B-Instruct")
    with pytest.raises(ConfigSourceError, match=r"no config\.json"):
        fetch_hub_config("nobody/nothing")
    with pytest.raises(ConfigSourceError, match="owner and a name"):
        fetch_hub_config("../../etc/passwd")


def test_no_internet_is_said_not_shown_as_a_traceback(monkeypatch):
    # a port nothing listens on: the connection is refused at once, as with no network
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    monkeypatch.setenv("HF_ENDPOINT", f"http://127.0.0.1:{port}")
    config_source._fetch.cache_clear()
    with pytest.raises(ConfigSourceError, match="cannot reach the Hugging Face Hub"):
        fetch_hub_config("Qwen/Qwen3-32B")


def test_the_page_reads_a_model_id_from_the_hub_and_keeps_it_in_the_address(hub):
    at = open_page(PAGE, fit_model="custom", fit_hf="Qwen/Qwen3-32B", fit_engine="ideal")
    assert not at.exception
    assert any("Read from the Hugging Face Hub" in c.value for c in at.caption)
    assert at.query_params["fit_hf"] == "Qwen/Qwen3-32B"
    assert not at.error


def test_the_page_says_a_gated_model_in_words(hub):
    at = open_page(PAGE, fit_model="custom", fit_hf="meta-llama/Llama-3.3-70B-Instruct", fit_engine="ideal")
    assert not at.exception
    assert any("gated" in e.value for e in at.error)


def test_a_pasted_configs_view_is_shared_by_link_and_reopens_the_same():
    text = _text("qwen3-8b")
    at = open_page(PAGE, fit_model="custom", fit_engine="ideal")
    at.text_area(key="fit_paste").input(text).run()
    assert not at.exception
    packed = at.query_params["fit_cfg"]
    assert json.loads(decode_config(packed)) == json.loads(text)
    verdict = [m.value for m in at.get("metric")]
    # a new browser opens the link: the same config, the same numbers
    again = open_page(PAGE, fit_model="custom", fit_engine="ideal", fit_cfg=packed)
    assert not again.exception
    assert json.loads(again.text_area(key="fit_paste").value) == json.loads(text)
    assert [m.value for m in again.get("metric")] == verdict


def test_a_damaged_config_link_is_said_not_a_traceback():
    at = open_page(PAGE, fit_model="custom", fit_engine="ideal", fit_cfg="AAAA")
    assert not at.exception
    assert any("damaged" in e.value for e in at.error)
