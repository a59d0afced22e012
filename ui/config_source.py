"""Where a reader's own config.json comes from, besides the upload box: a link, or the Hub.

- ``encode_config``/``decode_config``: a pasted config.json in the page's address (compact JSON,
  zlib-compressed, base64url), so a view of a pasted model can be shared by link like any other.
  A config is no secret, and a few kB compress to well under the 8 kB a proxy such as nginx takes
  in one request line (``large_client_header_buffers`` 8k by default); a larger one is said to be
  too large for a link, never cut.
- ``fetch_hub_config``: a model's ``config.json`` from the Hugging Face Hub by its id
  (``org/name``), from ``HF_ENDPOINT`` as huggingface_hub itself reads it (the tests serve a local
  directory laid out as the Hub is: ``/<org>/<name>/resolve/main/config.json``). Bounded in time
  and size, cached per process, and every failure a sentence: no internet here, a gated
  repository, no such model.

No Streamlit here: the page calls these and shows what they say.
"""

from __future__ import annotations

import base64
import binascii
import json
import os
import re
import urllib.error
import urllib.request
import zlib
from functools import lru_cache

from simulators.model_config import MAX_CONFIG_BYTES

LINK_CHARS = 6000  # the most a config may take in an address (the rest of the link fits beside it)
LINK_PATTERN = r"[A-Za-z0-9_-]*"
# A Hub repository id as the Hub allows it: an owner and a name of letters, digits, '.', '_', '-'
# (huggingface_hub's validate_repo_id: at most 96 characters each, no '--' or '..').
REPO_ID_PATTERN = r"(?:[A-Za-z0-9][A-Za-z0-9._-]{0,95}/[A-Za-z0-9][A-Za-z0-9._-]{0,95})?"
DEFAULT_ENDPOINT = "https://huggingface.co"
TIMEOUT_S = 8.0


class ConfigSourceError(ValueError):
    """A config that could not be had from a link or the Hub; the message says why in words."""


def encode_config(text: str) -> str | None:
    """The config as an address value, or None when it would not fit in a link."""
    try:
        compact = json.dumps(json.loads(text), separators=(",", ":"), ensure_ascii=False)
    except ValueError:
        compact = text  # not JSON: kept as typed, so the shared view shows the same refusal
    packed = base64.urlsafe_b64encode(zlib.compress(compact.encode("utf-8"), 9)).decode("ascii").rstrip("=")
    return packed if len(packed) <= LINK_CHARS else None


def decode_config(value: str) -> str:
    """The config text an address carries; ``ConfigSourceError`` for anything that is not one."""
    if not value or len(value) > LINK_CHARS or not re.fullmatch(LINK_PATTERN, value):
        raise ConfigSourceError("The config.json in this link is damaged (it was cut or edited).")
    try:
        packed = base64.urlsafe_b64decode(value + "=" * (-len(value) % 4))
        inflater = zlib.decompressobj()
        raw = inflater.decompress(packed, MAX_CONFIG_BYTES + 1)
        if len(raw) > MAX_CONFIG_BYTES or inflater.unconsumed_tail:
            raise ConfigSourceError(
                "The config.json in this link is larger than a config.json can be (1 MB)."
            )
        if not inflater.eof:
            raise ConfigSourceError("The config.json in this link is damaged (it was cut or edited).")
        return raw.decode("utf-8")
    except (binascii.Error, zlib.error, UnicodeDecodeError, ValueError) as exc:
        if isinstance(exc, ConfigSourceError):
            raise
        raise ConfigSourceError("The config.json in this link is damaged (it was cut or edited).") from None


def valid_repo_id(repo_id: str) -> bool:
    return bool(repo_id) and bool(re.fullmatch(REPO_ID_PATTERN, repo_id)) and ".." not in repo_id


def hub_endpoint() -> str:
    return (os.environ.get("HF_ENDPOINT") or DEFAULT_ENDPOINT).rstrip("/")


def fetch_hub_config(repo_id: str) -> str:
    """The text of ``repo_id``'s config.json on the Hub (main branch); ``ConfigSourceError`` says why not."""
    repo_id = (repo_id or "").strip()
    if not valid_repo_id(repo_id):
        raise ConfigSourceError(
            "A Hugging Face model id is an owner and a name, such as Qwen/Qwen3-32B"
            " (letters, digits, '.', '_' and '-')."
        )
    return _fetch(hub_endpoint(), repo_id)


@lru_cache(maxsize=64)
def _fetch(endpoint: str, repo_id: str) -> str:
    url = f"{endpoint}/{repo_id}/resolve/main/config.json"
    request = urllib.request.Request(url, headers={"User-Agent": "gpu-field-guide"})
    try:
        with urllib.request.urlopen(request, timeout=TIMEOUT_S) as response:
            body = response.read(MAX_CONFIG_BYTES + 1)
    except urllib.error.HTTPError as exc:
        if exc.code in (401, 403):
            raise ConfigSourceError(
                f"{repo_id} is gated or private on the Hub: accept its licence there, then paste or"
                " upload its config.json here."
            ) from None
        if exc.code == 404:
            raise ConfigSourceError(f"The Hub has no config.json for {repo_id}: check the id.") from None
        raise ConfigSourceError(
            f"The Hub answered {exc.code} for {repo_id}: try again, or paste the config."
        ) from None
    except (urllib.error.URLError, TimeoutError, OSError):
        raise ConfigSourceError(
            "The app cannot reach the Hugging Face Hub from here (no internet on this server?):"
            " paste or upload the config.json instead."
        ) from None
    if len(body) > MAX_CONFIG_BYTES:
        raise ConfigSourceError(f"{repo_id}'s config.json is over 1 MB: that is not a model config.")
    try:
        return body.decode("utf-8")
    except UnicodeDecodeError:
        raise ConfigSourceError(f"{repo_id}'s config.json is not text.") from None
