"""One reader for any engine's start-up log: it recognises the engine and version, then hands the
text to that engine's own parser. A text it cannot place is said, never misread."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from simulators.engines.ledger import LogError

# (engine, a pattern only that engine prints, its parser) — tried in order; the first engine
# whose marker appears reads the text. Parsers return a dict of figures in bytes and counts.
_Parser = Callable[[str], dict[str, Any]]
_ENGINES: list[tuple[str, re.Pattern[str], Callable[[], _Parser]]] = []


def register(engine: str, marker: str, parser: Callable[[], _Parser]) -> None:
    """Add an engine to ``parse_log``: ``marker`` is a regex only its logs contain; ``parser`` is
    called lazily (returns the parser function) so importing this module stays light."""
    _ENGINES.append((engine, re.compile(marker), parser))


def _sglang_parser() -> _Parser:
    from simulators.engines.sglang import parse_sglang_log

    return parse_sglang_log


# SGLang before vLLM: SGLang logs may mention vllm (older releases imported its layers)
register(
    "sglang",
    r"KV Cache is allocated\.|max_total_num_tokens=|Load weight (?:begin|end)\. |server_args=ServerArgs\("
    r"|sglang is using nccl|Init torch distributed (?:begin|ends)",
    _sglang_parser,
)


def _vllm_parser() -> _Parser:
    from simulators.engines.vllm import parse_vllm_log

    return parse_vllm_log


def _llamacpp_parser() -> _Parser:
    from simulators.engines.llamacpp import parse_llamacpp_log

    return parse_llamacpp_log


# Ollama's logs carry llama.cpp's lines, so Ollama is tried first: its Go slog lines
# ("level=INFO source=server.go:...") with a llama.cpp or Ollama memory line.
register(
    "ollama",
    r"(?s)(?=.*level=\w+ source=\S+\.go:\d+)(?=.*(?:llama_model_loader:|load_tensors:|msg=\"model weights\""
    r"|msg=\"?offload|starting llama server|ollama))",
    _llamacpp_parser,
)
register(
    "llama.cpp",
    r"llama_model_loader:|load_tensors:|llm_load_tensors:|llama_kv_cache|llama_context:|print_info:"
    r"|llm_load_print_meta:|llama_new_context_with_model:|llama_init_from_model:",
    _llamacpp_parser,
)


register(
    "vllm",
    r"vLLM API server version|LLM engine \(v|\bvllm\b|GPU KV cache size|Available KV cache memory"
    r"|# GPU blocks:|num_gpu_blocks",
    _vllm_parser,
)


def detect_engine(text: str) -> str | None:
    """The engine whose marker the text carries, or None."""
    for engine, marker, _ in _ENGINES:
        if marker.search(text):
            return engine
    return None


def parse_log(text: str) -> dict[str, Any]:
    """Every memory figure of a start-up log, in bytes, with ``engine`` and ``version``.

    ``engine`` is "vllm", "sglang", "llama.cpp" or "ollama"; ``version`` is what the log prints
    (None when it prints none). Raises ``LogError`` when the text is no engine's start-up log this
    module can place, or when the engine's parser finds none of its memory lines.
    """
    if not isinstance(text, str) or not text.strip():
        raise LogError("the log is empty: paste the lines the engine printed as it started")
    for engine, marker, get_parser in _ENGINES:
        if marker.search(text):
            found = dict(get_parser()(text))
            found.setdefault("engine", engine)
            found.setdefault("version", None)
            return found
    raise LogError(
        "This text is not a start-up log of vLLM, SGLang, llama.cpp or Ollama that this app can read:"
        " paste the lines the engine printed as it started."
    )
