"""A class on one server: rerun latency while N readers use the app at once.

    python -m bench.concurrency                   # starts `streamlit run app.py` on a free loopback port
    python -m bench.concurrency --sessions 1,5 --duration 30
    python -m bench.concurrency --url http://127.0.0.1:8500 --pid 4242,4243   # e.g. deploy/run-local.sh

Each session is what one browser tab does, spoken in Streamlit's own protocol (streamlit 1.67):

1. ``GET /`` and ``GET /_stcore/health`` with a cookie jar, as the page does before it connects. The
   health response sets the ``_streamlit_xsrf`` cookie; a proxy in front may set its sticky cookie.
2. A websocket to ``/_stcore/stream`` with ``Origin: <base URL>``, the cookies, and
   ``Sec-WebSocket-Protocol: streamlit, <xsrf cookie>`` (entry 1 is the subprotocol the server
   selects, entry 2 the XSRF token, entry 3 would be a session id to resume).
3. A ``BackMsg`` whose ``rerun_script`` is a ``ClientState``: ``page_name`` (the page's url path,
   ``""`` for the default page), ``page_script_hash`` (from the last ``navigation`` message;
   ``new_session`` carries the entry script's hash, which would open the default page),
   ``query_string`` and ``context_info``. The first run of a session is a teacher's link
   (``?preset=<id>``). Every later run moves one control through the URL with
   ``is_history_navigation`` set, as the browser does on back/forward; the app's state layer
   (ui/state.py) takes an address that differs from the one it last wrote as the new state.
4. ``ForwardMsg``\\ s until ``script_finished`` is ``FINISHED_SUCCESSFULLY`` (or
   ``FINISHED_WITH_COMPILE_ERROR``) for the run that ``new_session`` opened (``metadata.run``).
   ``FINISHED_EARLY_FOR_RERUN`` (a page that calls ``st.rerun``) keeps waiting.

Latency is send → that ``script_finished``. Errors: an ``Exception`` element in a delta (plain or
transient), a ``session_event.script_compilation_exception``, a compile error, ``page_not_found``
or a ``navigation`` that resolved another page than asked, a run past ``--timeout``, a dropped
websocket, a failed connect.

Query strings come from each page's presets (``params`` in ``content/<page>.md`` front matter: lists
joined by commas, booleans ``true``/``false``): a session picks a preset and sends all its
parameters and ``preset=<id>``, with one parameter moved to another value seen among that page's
presets (a number seen once is doubled or halved); ``preset=X&key=value`` opens the preset with that
control moved (ui/state.py). Widgets Streamlit itself binds to the URL (``query_param_key``) are
preferred when a page reports some. The glossary page opens a random term (``content.pages.term_href``) or the
list; the home page reruns as is. Session i gets page i mod n of ``content.pages.PAGES``, pages with
presets (the simulators) first; ``--pages`` keeps some. Under the table, "came back at another
value" counts moves that the server's returned URL contradicts.

For each session count: all sessions connect and load their page (``load p95``: a class opening the
link at once), then rerun with random think time for ``--duration`` seconds (runs still in flight at
the end finish and count). Server RSS is the peak of the server's process tree (sum over trees with
``--pid``), read from /proc every 0.25 s. Server CPU and bench CPU are the process time of the server
trees and of this client over the rerun phase, in cores busy: on a shared machine the client's
share is CPU the server did not get. Loopback only, bounded in sessions and time.
"""

from __future__ import annotations

import argparse
import asyncio
import ipaddress
import os
import random
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, urlencode, urlsplit

ROOT = Path(__file__).resolve().parent.parent

STREAM_PATH = "/_stcore/stream"
HEALTH_PATH = "/_stcore/health"
XSRF_COOKIE = "_streamlit_xsrf"
SUBPROTOCOL = "streamlit"
MAX_MESSAGE_BYTES = 256 * 2**20  # above Streamlit's own server.maxMessageSize default (200 MB)
MAX_SESSIONS = 200
MAX_DURATION_S = 900.0
DEFAULT_SESSIONS = (1, 5, 15, 30)
DEFAULT_THINK_S = (0.2, 1.0)  # the range issue 9's first measurement used
RSS_SAMPLE_S = 0.25


# --- where we may connect -----------------------------------------------------------------------


def require_loopback(url: str) -> str:
    """The base URL (``http://host:port[/path]``, no trailing slash) if ``url`` is on loopback.

    Raises ``ValueError`` for anything else: only literal loopback addresses (127.0.0.0/8, ::1)
    and ``localhost`` resolving only to them are accepted, over plain http.
    """
    parts = urlsplit(url)
    if parts.scheme != "http":
        raise ValueError(f"refusing {url!r}: only http:// on loopback is allowed")
    host = parts.hostname
    if not host:
        raise ValueError(f"refusing {url!r}: no host")
    if host == "localhost":
        addresses = {info[4][0] for info in socket.getaddrinfo(host, parts.port or 80)}
    else:
        addresses = {host}
    try:
        loopback = bool(addresses) and all(ipaddress.ip_address(a).is_loopback for a in addresses)
    except ValueError:
        loopback = False
    if not loopback:
        raise ValueError(f"refusing {url!r}: not a loopback address (this load test stays on this machine)")
    return f"http://{parts.netloc}{parts.path.rstrip('/')}"


# --- one browser tab ----------------------------------------------------------------------------


@dataclass
class RunOutcome:
    """One script run as the client saw it: latency in seconds, the errors it carried, the query
    string the server left in the address bar (last ``page_info_changed``; None: it changed none),
    and the URL keys of the widgets drawn with ``bind="query-params"`` (``query_param_key``)."""

    latency_s: float
    errors: list[str]
    query_string: str | None
    bound_keys: set[str] = field(default_factory=set)


class RunTimeout(Exception):
    """No ``script_finished`` arrived within the timeout."""


async def _http_get(base_url: str, path: str, cookies: dict[str, str], timeout_s: float) -> int:
    """GET ``base_url + path`` (HTTP/1.1, no proxy); store Set-Cookie pairs in ``cookies``; status code."""
    parts = urlsplit(base_url)
    reader, writer = await asyncio.wait_for(
        asyncio.open_connection(parts.hostname, parts.port or 80), timeout_s
    )
    try:
        lines = [
            f"GET {parts.path}{path} HTTP/1.1",
            f"Host: {parts.netloc}",
            "User-Agent: gpu-field-guide-bench",
            "Accept: */*",
            "Connection: close",
        ]
        if cookies:
            lines.append("Cookie: " + "; ".join(f"{k}={v}" for k, v in cookies.items()))
        writer.write(("\r\n".join(lines) + "\r\n\r\n").encode("latin-1"))
        await writer.drain()
        head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), timeout_s)
        status_line, *header_lines = head.decode("latin-1").split("\r\n")
        for line in header_lines:
            name, _, value = line.partition(":")
            if name.strip().lower() == "set-cookie":
                pair = value.strip().split(";", 1)[0]
                key, _, cookie_value = pair.partition("=")
                cookies[key.strip()] = cookie_value.strip()
        await asyncio.wait_for(reader.read(), timeout_s)  # drain the body
        return int(status_line.split()[1])
    finally:
        writer.close()


def _exception_text(exc: Any) -> str:
    label = "warning" if exc.is_warning else "exception"
    message = " ".join(exc.message.split())[:160]
    return f"{label}: {exc.type}: {message}" if exc.type else f"{label}: {message}"


def forward_msg_errors(msg: Any) -> list[str]:
    """The errors one ``ForwardMsg`` carries: exception elements (plain or transient), a compilation
    exception event, ``page_not_found``. Script-finished statuses are handled by the caller."""
    kind = msg.WhichOneof("type")
    errors: list[str] = []
    if kind == "delta":
        delta = msg.delta
        which = delta.WhichOneof("type")
        if which == "new_element" and delta.new_element.WhichOneof("type") == "exception":
            errors.append(_exception_text(delta.new_element.exception))
        elif which == "new_transient":
            errors += [
                _exception_text(e.exception)
                for e in delta.new_transient.elements
                if e.WhichOneof("type") == "exception"
            ]
    elif kind == "session_event" and msg.session_event.WhichOneof("type") == "script_compilation_exception":
        errors.append("compile " + _exception_text(msg.session_event.script_compilation_exception))
    elif kind == "page_not_found":
        errors.append(f"page not found: {msg.page_not_found.page_name!r}")
    return errors


class StreamlitSession:
    """One browser tab on a Streamlit server: a websocket speaking BackMsg/ForwardMsg protobufs."""

    def __init__(self, base_url: str, websocket: Any) -> None:
        self.base_url = base_url
        self._ws = websocket
        self.page_script_hash = ""
        self._page_name: str | None = None

    @classmethod
    async def connect(cls, base_url: str, *, timeout_s: float = 30.0) -> StreamlitSession:
        """Do what a browser does before its first run: GET the page and the health check (cookies),
        then open ``/_stcore/stream`` with the Origin, cookies and subprotocols Streamlit expects."""
        from websockets.asyncio.client import connect
        from websockets.typing import Origin, Subprotocol

        cookies: dict[str, str] = {}
        await _http_get(base_url, "/", cookies, timeout_s)
        status = await _http_get(base_url, HEALTH_PATH, cookies, timeout_s)
        if status != 200:
            raise ConnectionError(f"{HEALTH_PATH} answered {status}")
        protocols = [Subprotocol(SUBPROTOCOL)]
        if XSRF_COOKIE in cookies:
            protocols.append(Subprotocol(cookies[XSRF_COOKIE]))
        headers = {"Cookie": "; ".join(f"{k}={v}" for k, v in cookies.items())} if cookies else None
        websocket = await connect(
            "ws" + base_url[len("http") :] + STREAM_PATH,
            origin=Origin(f"http://{urlsplit(base_url).netloc}"),
            subprotocols=protocols,
            additional_headers=headers,
            max_size=MAX_MESSAGE_BYTES,
            ping_interval=None,  # a browser sends no pings; it answers the server's
            proxy=None,
            open_timeout=timeout_s,
        )
        return cls(base_url, websocket)

    async def run(
        self, page_name: str, query_string: str, *, history_navigation: bool = False, timeout_s: float = 60.0
    ) -> RunOutcome:
        """Send ``rerun_script`` for ``page_name`` with ``query_string``; wait for its ``script_finished``.

        Raises ``RunTimeout`` after ``timeout_s`` and websockets' ``ConnectionClosed`` on a drop.
        """
        from streamlit.proto.BackMsg_pb2 import BackMsg
        from streamlit.proto.ForwardMsg_pb2 import ForwardMsg

        back = BackMsg()
        state = back.rerun_script
        state.page_name = page_name
        if page_name == self._page_name and self.page_script_hash:
            state.page_script_hash = self.page_script_hash
        state.query_string = query_string
        state.is_history_navigation = history_navigation
        state.context_info.timezone = "UTC"
        state.context_info.timezone_offset = 0
        state.context_info.locale = "en-US"
        state.context_info.url = f"{self.base_url}/{page_name}" + (f"?{query_string}" if query_string else "")
        self._page_name = page_name

        errors: list[str] = []
        bound_keys: set[str] = set()
        final_query: str | None = None
        run_id: str | None = None
        start = time.perf_counter()
        deadline = start + timeout_s
        await self._ws.send(back.SerializeToString())
        while True:
            remaining = deadline - time.perf_counter()
            if remaining <= 0:
                raise RunTimeout(f"no script_finished within {timeout_s:.0f} s")
            try:
                data = await asyncio.wait_for(self._ws.recv(), remaining)
            except TimeoutError:
                raise RunTimeout(f"no script_finished within {timeout_s:.0f} s") from None
            msg = ForwardMsg()
            msg.ParseFromString(data)
            kind = msg.WhichOneof("type")
            errors += forward_msg_errors(msg)
            if kind == "new_session":
                run_id = msg.metadata.run.script_run_id if msg.metadata.HasField("run") else ""
            elif kind == "navigation":  # st.navigation resolved the page (new_session names app.py)
                nav = msg.navigation
                self.page_script_hash = nav.page_script_hash
                ran = [p.url_pathname for p in nav.app_pages if p.page_script_hash == nav.page_script_hash]
                if ran != [page_name]:
                    errors.append(f"ran page {ran}, asked for {page_name!r}")
            elif kind == "delta" and msg.delta.WhichOneof("type") == "new_element":
                element = msg.delta.new_element
                widget = getattr(element, element.WhichOneof("type") or "", None)
                key = getattr(widget, "query_param_key", "") if widget is not None else ""
                if key:
                    bound_keys.add(key)
            elif kind == "page_info_changed":
                final_query = msg.page_info_changed.query_string
            elif kind == "script_finished" and run_id is not None:
                if msg.metadata.HasField("run") and run_id and msg.metadata.run.script_run_id != run_id:
                    continue  # the end of a run other than ours
                status = msg.script_finished
                if status == ForwardMsg.FINISHED_EARLY_FOR_RERUN:
                    run_id = None  # the page asked for another run; wait for that one
                    continue
                if status == ForwardMsg.FINISHED_WITH_COMPILE_ERROR:
                    errors.append("script finished with a compile error")
                return RunOutcome(time.perf_counter() - start, errors, final_query, bound_keys)

    async def close(self) -> None:
        """Close the websocket (the server keeps the session a while for a reconnect, as for a tab)."""
        await self._ws.close()


# --- what each session does ---------------------------------------------------------------------


def encode_param(value: Any) -> str:
    """A preset value as the app's URL holds it: lists joined by commas, booleans true/false."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, list | tuple):
        return ",".join(encode_param(v) for v in value)
    return str(value)


def _neighbours(value: Any) -> list[str]:
    """Other values for a number seen in only one preset: double and half (booleans flip)."""
    if isinstance(value, bool):
        return [encode_param(not value)]
    if isinstance(value, int | float) and value > 0:
        return [
            encode_param(v)
            for v in {value * 2, value // 2 if isinstance(value, int) else value / 2}
            if v and v != value
        ]
    return []


@dataclass(frozen=True)
class Move:
    """One rerun's request: the query string, and which parameter it moved to what (None: no move)."""

    query_string: str
    key: str | None = None
    value: str | None = None


@dataclass(frozen=True)
class PagePlan:
    """How sessions use one page: its ``page_name`` and the views they move between."""

    title: str
    url_path: str
    page_name: str
    presets: tuple[tuple[str, dict[str, str]], ...] = ()
    alternatives: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    queries: tuple[str, ...] = ("",)

    def first_query(self, rng: random.Random) -> str:
        """The link a session opens: a random preset (``?preset=<id>``), else one of ``queries``."""
        if self.presets:
            return urlencode({"preset": rng.choice(self.presets)[0]})
        return rng.choice(self.queries)

    def move(self, rng: random.Random, bound_keys: set[str] | frozenset[str] = frozenset()) -> Move:
        """A preset's full parameter set, ``preset=<id>`` included, with one parameter moved.

        The moved parameter is one whose widget the server reported as URL-bound
        (``bound_keys``; any parameter while none is known): Streamlit seeds those from the URL.
        Choice widgets that read the URL once per session follow ``preset=`` when it changes.
        """
        if not self.presets:
            return Move(rng.choice(self.queries))
        preset_id, params = rng.choice(self.presets)
        movable = [k for k in params if len(self.alternatives.get(k, ())) > 1]
        if bound_keys:
            movable = [k for k in movable if k in bound_keys]
        if not movable:
            return Move(urlencode({"preset": preset_id, **params}, safe=","))
        key = rng.choice(movable)
        value = rng.choice([v for v in self.alternatives[key] if v != params[key]])
        query = urlencode({"preset": preset_id, **params, key: value}, safe=",")
        return Move(query, key, value)


def page_plans() -> list[PagePlan]:
    """One plan per page of ``content.pages.PAGES`` in order, from the presets in ``content/<page>.md``."""
    if str(ROOT) not in sys.path:
        sys.path.insert(0, str(ROOT))
    import frontmatter

    from content.pages import GLOSSARY, PAGES, term_href
    from content.schema import page_params

    plans = []
    for info in PAGES:
        page_name = "" if info.default else info.url_path
        content = ROOT / "content" / f"{Path(info.path).stem}.md"
        raw_presets = []
        if content.exists():
            raw_presets = frontmatter.loads(content.read_text(encoding="utf-8")).metadata.get("presets") or []
        schema = page_params().get(info.url_path)

        def canonical(key: str, value: Any, schema=schema) -> str:
            """The value as the app writes it in the address (e.g. "-" for an empty list, "1" for 1.0)."""
            if schema is None or key not in schema:
                return encode_param(value)
            try:
                return schema[key].encode(schema[key].parse(encode_param(value)))
            except ValueError:
                return encode_param(value)

        presets = tuple((p["id"], {k: canonical(k, v) for k, v in p["params"].items()}) for p in raw_presets)
        seen: dict[str, dict[str, None]] = {}
        for _, params in presets:
            for key, value in params.items():
                seen.setdefault(key, {})[value] = None
        for p in raw_presets:
            for key, value in p["params"].items():
                if len(seen[key]) == 1:
                    seen[key].update(dict.fromkeys(canonical(key, n) for n in _neighbours(value)))
        if schema is not None:  # a doubled or halved number may leave the control's range: drop it
            for key, values in seen.items():
                for value in list(values):
                    try:
                        schema[key].parse(value)
                    except (KeyError, ValueError):
                        del values[value]
        queries: tuple[str, ...] = ("",)
        if info is GLOSSARY:
            from glossary import load_terms

            queries = ("", *(term_href(t.id).split("?", 1)[1] for t in load_terms()))
        plans.append(
            PagePlan(
                title=info.title,
                url_path=info.url_path,
                page_name=page_name,
                presets=presets,
                alternatives={k: tuple(v) for k, v in seen.items()},
                queries=queries,
            )
        )
    return plans


def spread_order(plans: Sequence[PagePlan], only: Sequence[str] = ()) -> list[PagePlan]:
    """The pages sessions are dealt to, in turn: pages with presets (the simulators, where a class
    moves controls) first, then the others; ``only`` keeps the pages with those url paths."""
    if only:
        unknown = set(only) - {p.url_path for p in plans}
        if unknown:
            raise ValueError(f"no page with url path {sorted(unknown)}; pages: {[p.url_path for p in plans]}")
        plans = [p for p in plans if p.url_path in only]
    return [p for p in plans if p.presets] + [p for p in plans if not p.presets]


# --- the server and its memory ------------------------------------------------------------------


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on right now."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@dataclass(frozen=True)
class ServerProcess:
    """A ``streamlit run`` this module started: its URL, pid and log file."""

    url: str
    pid: int
    log: Path


@contextmanager
def start_server(
    script: Path,
    *,
    port: int | None = None,
    cwd: Path | None = None,
    timeout_s: float = 120.0,
    malloc_arena_max: int = 2,
) -> Iterator[ServerProcess]:
    """Run ``streamlit run <script>`` headless on 127.0.0.1 until healthy; stop it on exit.

    The file watcher is off: a load test should not watch files that others are editing.
    ``malloc_arena_max`` sets ``MALLOC_ARENA_MAX`` as the Dockerfile and deploy/run-local.sh do
    (glibc keeps freed memory per thread arena, and every session's script runs on its own thread);
    0 leaves the environment as it is, as on Streamlit Community Cloud.
    """
    import urllib.request

    port = port or free_port()
    url = f"http://127.0.0.1:{port}"
    log = Path(tempfile.mkstemp(prefix="bench-concurrency-", suffix=".log")[1])
    with log.open("wb") as out:
        process = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "streamlit",
                "run",
                str(script),
                "--server.headless=true",
                "--server.address=127.0.0.1",
                f"--server.port={port}",
                "--server.fileWatcherType=none",
                "--server.runOnSave=false",
                "--browser.gatherUsageStats=false",
            ],
            cwd=cwd or script.parent,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
            env=os.environ | ({"MALLOC_ARENA_MAX": str(malloc_arena_max)} if malloc_arena_max else {}),
        )
    try:
        deadline = time.monotonic() + timeout_s
        opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
        while True:
            if process.poll() is not None:
                raise RuntimeError(f"streamlit exited ({process.returncode}): {log.read_text()[-2000:]}")
            try:
                with opener.open(url + HEALTH_PATH, timeout=2) as response:
                    if response.status == 200:
                        break
            except OSError:
                pass
            if time.monotonic() > deadline:
                raise RuntimeError(f"streamlit was not healthy within {timeout_s:.0f} s")
            time.sleep(0.3)
        yield ServerProcess(url, process.pid, log)
    finally:
        process.terminate()
        try:
            process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def process_tree(roots: Sequence[int]) -> set[int]:
    """``roots`` and all their living descendants, from /proc (Linux)."""
    parents: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        ppid = int(stat.rsplit(")", 1)[1].split()[1])
        parents.setdefault(ppid, []).append(int(entry.name))
    tree, todo = set(), [p for p in roots if Path(f"/proc/{p}").exists()]
    while todo:
        pid = todo.pop()
        if pid not in tree:
            tree.add(pid)
            todo += parents.get(pid, [])
    return tree


def rss_bytes(pids: set[int]) -> int:
    """Sum of VmRSS over ``pids`` in bytes (/proc/<pid>/status reports kB = KiB)."""
    total = 0
    for pid in pids:
        try:
            for line in Path(f"/proc/{pid}/status").read_text().splitlines():
                if line.startswith("VmRSS:"):
                    total += int(line.split()[1]) * 1024
                    break
        except OSError:
            continue
    return total


def cpu_seconds(pids: set[int]) -> float:
    """User + system CPU time of ``pids`` in seconds (/proc/<pid>/stat fields 14 and 15, in clock ticks)."""
    ticks = os.sysconf("SC_CLK_TCK")
    total = 0
    for pid in pids:
        try:
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        total += int(fields[11]) + int(fields[12])
    return total / ticks


class ServerMeter:
    """Peak RSS of the server process trees, sampled in a thread; CPU seconds between marks."""

    def __init__(self, roots: Sequence[int]) -> None:
        self.roots = list(roots)
        self.peak_bytes = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._sample, daemon=True)

    def _sample(self) -> None:
        while not self._stop.is_set():
            self.peak_bytes = max(self.peak_bytes, rss_bytes(process_tree(self.roots)))
            self._stop.wait(RSS_SAMPLE_S)

    def __enter__(self) -> ServerMeter:
        if self.roots:
            self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join()

    def cpu_s(self) -> float:
        """CPU seconds the server trees have used so far."""
        return cpu_seconds(process_tree(self.roots))


# --- the load -----------------------------------------------------------------------------------


@dataclass
class LoadResult:
    """What one session count measured."""

    sessions: int
    rerun_latencies_s: list[float] = field(default_factory=list)
    load_latencies_s: list[float] = field(default_factory=list)
    errors: Counter = field(default_factory=Counter)
    moves: int = 0
    moves_contradicted: int = 0
    rerun_phase_s: float = 0.0
    server_cpu_s: float | None = None
    client_cpu_s: float = 0.0
    peak_rss_bytes: int | None = None


def contradicted(move: Move, query_string: str | None) -> bool:
    """Whether the address bar after the run holds the moved parameter at another value than sent.

    A bound widget's value is in the URL, except its default, which Streamlit leaves out; when the
    server changed nothing (``query_string`` None), the URL sent stands.
    """
    if move.key is None or query_string is None:
        return False
    returned = dict(parse_qsl(query_string)).get(move.key)
    return returned is not None and returned != move.value


async def _session(
    plan: PagePlan,
    base_url: str,
    rng: random.Random,
    result: LoadResult,
    loaded: asyncio.Barrier,
    phase: dict[str, float],
    think_s: tuple[float, float],
    timeout_s: float,
) -> None:
    """One tab: connect, open its page, wait for the class, then move controls until the end."""

    async def open_session() -> StreamlitSession | None:
        try:
            session = await StreamlitSession.connect(base_url, timeout_s=timeout_s)
            outcome = await session.run(plan.page_name, plan.first_query(rng), timeout_s=timeout_s)
        except Exception as exc:  # counted, and the tab tries again
            result.errors[_error_kind(exc)] += 1
            return None
        result.load_latencies_s.append(outcome.latency_s)
        result.errors.update(outcome.errors)
        bound_keys.update(outcome.bound_keys)
        return session

    bound_keys: set[str] = set()
    session = await open_session()
    await loaded.wait()
    await asyncio.sleep(rng.uniform(*think_s))
    try:
        while time.monotonic() < phase["end"]:
            if session is None:
                session = await open_session()
                if session is None:
                    await asyncio.sleep(1.0)
                    continue
            move = plan.move(rng, bound_keys)
            try:
                outcome = await session.run(
                    plan.page_name, move.query_string, history_navigation=True, timeout_s=timeout_s
                )
            except Exception as exc:
                result.errors[_error_kind(exc)] += 1
                await _close_quietly(session)
                session = None
                continue
            result.rerun_latencies_s.append(outcome.latency_s)
            result.errors.update(outcome.errors)
            bound_keys |= outcome.bound_keys
            if move.key is not None:
                result.moves += 1
                result.moves_contradicted += contradicted(move, outcome.query_string)
            await asyncio.sleep(rng.uniform(*think_s))
    finally:
        if session is not None:
            await _close_quietly(session)


def _error_kind(exc: BaseException) -> str:
    from websockets.exceptions import ConnectionClosed

    if isinstance(exc, RunTimeout):
        return "timeout"
    if isinstance(exc, ConnectionClosed):
        return f"disconnect ({exc.rcvd.code if exc.rcvd else 'no close frame'})"
    return f"connect/protocol: {type(exc).__name__}: {str(exc)[:120]}"


async def _close_quietly(session: StreamlitSession) -> None:
    with suppress(Exception):
        await asyncio.wait_for(session.close(), 10)


async def run_load(
    base_url: str,
    plans: Sequence[PagePlan],
    sessions: int,
    *,
    duration_s: float,
    think_s: tuple[float, float] = DEFAULT_THINK_S,
    seed: int = 0,
    timeout_s: float = 60.0,
    meter: ServerMeter | None = None,
) -> LoadResult:
    """``sessions`` tabs spread over ``plans``: all load their page, then rerun for ``duration_s``.

    Runs in flight at the end finish (up to ``timeout_s``) and count.
    """
    result = LoadResult(sessions)
    loaded = asyncio.Barrier(sessions + 1)
    phase = {"end": float("inf")}
    tasks = [
        asyncio.create_task(
            _session(
                plans[i % len(plans)],
                base_url,
                random.Random(f"{seed}:{sessions}:{i}"),
                result,
                loaded,
                phase,
                think_s,
                timeout_s,
            )
        )
        for i in range(sessions)
    ]
    await loaded.wait()
    cpu_start = meter.cpu_s() if meter else None
    client_start = time.process_time()
    start = time.monotonic()
    phase["end"] = start + duration_s
    await asyncio.gather(*tasks)
    result.rerun_phase_s = time.monotonic() - start
    result.client_cpu_s = time.process_time() - client_start
    if meter:
        result.server_cpu_s = meter.cpu_s() - cpu_start
    return result


async def warm_up(base_url: str, plans: Sequence[PagePlan], timeout_s: float) -> list[str]:
    """Open every page once in one session (imports, caches); returns the errors seen."""
    errors: list[str] = []
    session = await StreamlitSession.connect(base_url, timeout_s=timeout_s)
    try:
        for plan in plans:
            outcome = await session.run(
                plan.page_name, plan.first_query(random.Random(0)), timeout_s=timeout_s
            )
            errors += outcome.errors
    finally:
        await _close_quietly(session)
    return errors


# --- the report ---------------------------------------------------------------------------------


def percentile(values: Sequence[float], q: float) -> float:
    """The q-th percentile (0–100) with linear interpolation (``statistics.quantiles``, inclusive)."""
    if len(values) == 1:
        return values[0]
    return statistics.quantiles(values, n=100, method="inclusive")[round(q) - 1]


def _ms(value_s: float | None) -> str:
    if value_s is None:
        return "–"
    return f"{value_s * 1e3:,.0f} ms" if value_s < 1 else f"{value_s:,.2f} s"


HEADER = (
    "| sessions | reruns | reruns/s | rerun p50 | rerun p95 | rerun max | load p95 | errors "
    "| server CPU | bench CPU | peak RSS |\n"
    "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
)


def table_row(result: LoadResult) -> str:
    """One Markdown table row: rerun latencies, the slowest 5 % of first loads, errors, the CPU of
    the server and of this client in cores busy over the rerun phase, and peak server RSS (MiB)."""
    reruns = sorted(result.rerun_latencies_s)
    loads = sorted(result.load_latencies_s)
    p50 = percentile(reruns, 50) if reruns else None
    p95 = percentile(reruns, 95) if reruns else None
    top = reruns[-1] if reruns else None
    load95 = percentile(loads, 95) if loads else None
    phase = result.rerun_phase_s or float("nan")
    server_cpu = f"{result.server_cpu_s / phase:.2f}" if result.server_cpu_s is not None else "n/a"
    rss = f"{result.peak_rss_bytes / 2**20:,.0f} MiB" if result.peak_rss_bytes else "n/a"
    return (
        f"| {result.sessions} | {len(reruns)} | {len(reruns) / phase:.1f} | {_ms(p50)} | {_ms(p95)} "
        f"| {_ms(top)} | {_ms(load95)} | {sum(result.errors.values())} | {server_cpu} "
        f"| {result.client_cpu_s / phase:.2f} | {rss} |"
    )


def _parse_sessions(text: str) -> list[int]:
    counts = [int(x) for x in text.split(",") if x.strip()]
    if not counts or any(not 1 <= n <= MAX_SESSIONS for n in counts):
        raise argparse.ArgumentTypeError(f"session counts must be 1..{MAX_SESSIONS}")
    return counts


def _parse_think(text: str) -> tuple[float, float]:
    low, _, high = text.replace(",", "-").partition("-")
    lo, hi = float(low), float(high or low)
    if not 0 <= lo <= hi <= 60:
        raise argparse.ArgumentTypeError("think time is LOW-HIGH seconds, 0 <= LOW <= HIGH <= 60")
    return lo, hi


def _parse_pids(text: str) -> list[int]:
    return [int(x) for x in text.split(",") if x.strip()]


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    """The command line (see the module docstring)."""
    parser = argparse.ArgumentParser(prog="python -m bench.concurrency", description=__doc__.split("\n")[0])
    parser.add_argument(
        "--sessions",
        type=_parse_sessions,
        default=list(DEFAULT_SESSIONS),
        help="session counts to run in turn against one server (default 1,5,15,30)",
    )
    parser.add_argument(
        "--duration",
        type=float,
        default=60.0,
        help="seconds of reruns per session count, after every session loaded (default 60)",
    )
    parser.add_argument("--url", help="an already running app (loopback only); default: start one")
    parser.add_argument(
        "--pid",
        type=_parse_pids,
        default=[],
        help="with --url: server pids, comma-separated; RSS and CPU are read from their trees",
    )
    parser.add_argument(
        "--pages",
        type=lambda text: [x.strip() for x in text.split(",") if x.strip()],
        default=[],
        help="only these pages (url paths, comma-separated, e.g. roofline,will-it-fit); default: all",
    )
    parser.add_argument("--seed", type=int, default=0, help="random seed (default 0)")
    parser.add_argument(
        "--malloc-arena-max",
        type=int,
        default=2,
        help="MALLOC_ARENA_MAX for the server this starts, as the Dockerfile and deploy/run-local.sh "
        "set it (default 2; 0 = leave unset, as on Streamlit Community Cloud)",
    )
    parser.add_argument(
        "--think",
        type=_parse_think,
        default=DEFAULT_THINK_S,
        help="think time between a session's reruns, LOW-HIGH seconds (default 0.2-1.0)",
    )
    parser.add_argument(
        "--timeout",
        type=float,
        default=60.0,
        help="seconds a run may take before it counts as a timeout error (default 60)",
    )
    args = parser.parse_args(argv)
    if not 1 <= args.duration <= MAX_DURATION_S:
        parser.error(f"--duration must be 1..{MAX_DURATION_S:.0f} s")
    if not 1 <= args.timeout <= 600:
        parser.error("--timeout must be 1..600 s")
    if args.pid and not args.url:
        parser.error("--pid goes with --url (without --url the server's pid is known)")
    return args


def _measure(base_url: str, pids: Sequence[int], args: argparse.Namespace, plans: list[PagePlan]) -> int:
    warm = asyncio.run(warm_up(base_url, plans, args.timeout))
    if warm:
        print(f"warm-up errors: {Counter(warm).most_common(5)}")
    print(HEADER, flush=True)
    results = []
    for count in args.sessions:
        with ServerMeter(pids) as meter:
            result = asyncio.run(
                run_load(
                    base_url,
                    plans,
                    count,
                    duration_s=args.duration,
                    think_s=args.think,
                    seed=args.seed,
                    timeout_s=args.timeout,
                    meter=meter if pids else None,
                )
            )
        result.peak_rss_bytes = meter.peak_bytes if pids else None
        results.append(result)
        print(table_row(result), flush=True)
    print()
    for result in results:
        line = (
            f"{result.sessions} sessions: {result.moves} reruns moved a URL-bound parameter, "
            f"{result.moves_contradicted} came back at another value"
        )
        if result.errors:
            line += "; errors: " + "; ".join(f"{n}× {kind}" for kind, n in result.errors.most_common(5))
        print(line)
    return 1 if any(r.errors for r in results) else 0


def main(argv: Sequence[str] | None = None) -> int:
    """Run the load for each session count and print the table; 1 if any error, 2 on a refused URL."""
    args = parse_args(argv)
    try:
        plans = spread_order(page_plans(), args.pages)
    except ValueError as exc:
        print(exc, file=sys.stderr)
        return 2
    print(
        f"cores: {os.cpu_count()} · think {args.think[0]:g}–{args.think[1]:g} s · "
        f"{args.duration:g} s of reruns per count · seed {args.seed} · "
        f"pages: {', '.join(p.title for p in plans)}"
    )
    if args.url:
        try:
            base_url = require_loopback(args.url)
        except ValueError as exc:
            print(exc, file=sys.stderr)
            return 2
        print(
            f"server: {base_url}"
            + (
                f" (pids {', '.join(map(str, args.pid))})" if args.pid else " (RSS and CPU n/a without --pid)"
            ),
            flush=True,
        )
        return _measure(base_url, args.pid, args, plans)
    with start_server(ROOT / "app.py", cwd=ROOT, malloc_arena_max=args.malloc_arena_max) as server:
        arenas = (
            f"MALLOC_ARENA_MAX={args.malloc_arena_max}" if args.malloc_arena_max else "MALLOC_ARENA_MAX unset"
        )
        print(f"server: streamlit run app.py at {server.url} (pid {server.pid}, {arenas}, log {server.log})")
        return _measure(server.url, [server.pid], args, plans)


if __name__ == "__main__":
    sys.exit(main())
