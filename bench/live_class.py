"""A live class under load: N students vote and revote from their "phones" while a lecturer watches.

    python -m bench.live_class --setup sqlite-1 --students 60
    python -m bench.live_class --setup pg-2 --students 100        # nginx → 2 replicas → PostgreSQL

Each student is a Streamlit websocket session, as a browser tab is (``bench.concurrency``'s
handshake), and does what the page's browser component (``ui/browser.py``) does: it opens
``class?room=CODE``, answers the page's ``hello`` with its own voter id (the id a phone keeps in
its storage), answers the fragment polls (``auto_rerun``: every 2 s, as the browser does), and
votes by sending the ballot component's ``vote`` trigger (the ballot, with an id per press) at a
random moment of a 10 s window; one in five then changes its vote. A vote the page reports as
waiting (the database not answering) is sent again every 4 s, as the phone does. The lecturer's
view is a session too, whose hello carries the room's lecturer credential; the bench reads the
"Voted" count from every redraw it receives. The lecturer's buttons are pressed through the store
(the credential's owner), so the students' side is what is measured.

Printed: votes counted against voters in each round (0 lost, 0 doubled: exactly one row per
student and round), how far behind the last completed vote the lecturer's tally is (p95), and the
students' run latencies (page load, fragment polls, votes; p50/p95).
``--setup sqlite-1`` starts one server on an SQLite store; ``pg-2`` starts a PostgreSQL server
(tests/pg_server.py) and ``deploy/run-local.sh start 2`` with ``GFG_CLASS_DB`` pointing at it;
``--url`` with ``--db`` uses a running deployment instead.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import random
import secrets
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.concurrency import StreamlitSession, percentile, start_server  # noqa: E402

PAGE = "class"
COMPONENT = "gfg_class_browser"  # ui/browser.py's component for the class page
WINDOW_S = 10.0
CHANGE_SHARE = 0.2


@dataclass
class Tab:
    """One websocket session on the Live class page, reading everything the server sends."""

    session: StreamlitSession
    query: str
    widgets: dict[str, object] = field(default_factory=dict)  # label -> widget proto
    # the page's browser component per mount ("link", "ballot", "live"): (id, fragment, data)
    components: dict[str, tuple[str, str, dict]] = field(default_factory=dict)
    outcomes: dict[str, str] = field(default_factory=dict)  # ballot id -> what the page said
    voted_log: list[tuple[float, int]] = field(default_factory=list)  # (time, N of "N of M")
    latencies: list[tuple[str, float]] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    _lock: asyncio.Lock = field(default_factory=asyncio.Lock)
    _finished: asyncio.Queue = field(default_factory=asyncio.Queue)
    _pollers: dict[str, asyncio.Task] = field(default_factory=dict)
    _closed: bool = False
    voter: str = ""
    pending: dict = field(default_factory=dict)

    async def reader(self) -> None:
        from streamlit.proto.ForwardMsg_pb2 import ForwardMsg

        ws = self.session._ws
        while True:
            try:
                data = await ws.recv()
            except Exception:
                self._closed = True
                return
            msg = ForwardMsg()
            msg.ParseFromString(data)
            kind = msg.WhichOneof("type")
            if kind == "delta" and msg.delta.WhichOneof("type") == "new_element":
                element = msg.delta.new_element
                which = element.WhichOneof("type")
                if which in ("radio", "button", "number_input"):
                    widget = getattr(element, which)
                    self.widgets[widget.label] = widget
                elif (
                    which == "bidi_component" and element.bidi_component.component_name == "gfg_class_browser"
                ):
                    data = json.loads(element.bidi_component.json or "{}")
                    self.components[data.get("mode", "")] = (
                        element.bidi_component.id,
                        msg.delta.fragment_id,
                        data,
                    )
                    for outcome in data.get("outcomes") or ():
                        self.outcomes[outcome["id"]] = outcome["status"]
                elif which == "metric" and element.metric.label == "Voted":
                    with contextlib.suppress(ValueError, IndexError):
                        self.voted_log.append((time.monotonic(), int(element.metric.body.split(" of ")[0])))
                elif which == "exception":
                    self.errors.append(element.exception.message[:200])
            elif kind == "auto_rerun" and msg.auto_rerun.fragment_id not in self._pollers:
                fragment, interval = msg.auto_rerun.fragment_id, msg.auto_rerun.interval
                self._pollers[fragment] = asyncio.create_task(self._poll(fragment, interval))
            elif kind == "script_finished":
                self._finished.put_nowait(msg.script_finished)

    async def run(
        self, what: str, *, widget_states=(), fragment_id: str = "", timeout_s: float = 60
    ) -> float:
        """Send one rerun (the whole page, or one fragment) and wait for it to finish."""
        from streamlit.proto.BackMsg_pb2 import BackMsg
        from streamlit.proto.ForwardMsg_pb2 import ForwardMsg

        async with self._lock:
            while not self._finished.empty():
                self._finished.get_nowait()
            back = BackMsg()
            state = back.rerun_script
            state.page_name = PAGE
            state.query_string = self.query
            if self.session.page_script_hash:
                state.page_script_hash = self.session.page_script_hash
            if fragment_id:
                state.fragment_id = fragment_id
                state.is_auto_rerun = True
            for widget in widget_states:
                state.widget_states.widgets.append(widget)
            state.context_info.timezone = "UTC"
            state.context_info.url = f"{self.session.base_url}/{PAGE}?{self.query}"
            start = time.monotonic()
            await self.session._ws.send(back.SerializeToString())
            deadline = start + timeout_s
            while True:
                status = await asyncio.wait_for(self._finished.get(), max(deadline - time.monotonic(), 0.01))
                if status != ForwardMsg.FINISHED_EARLY_FOR_RERUN:
                    break
            elapsed = time.monotonic() - start
            self.latencies.append((what, elapsed))
            return elapsed

    async def _poll(self, fragment_id: str, interval_s: float) -> None:
        while not self._closed:
            await asyncio.sleep(interval_s)
            try:
                await self.run("poll", fragment_id=fragment_id, timeout_s=10)
            except TimeoutError:
                # No answer: the fragment is no longer on the page (the lecturer's view polls in a
                # faster fragment while a round is open). A browser stops polling a fragment that
                # is gone; the page's next auto_rerun message starts it again.
                self._pollers.pop(fragment_id, None)
                return
            except Exception as exc:  # counted; the browser would poll again
                self.errors.append(f"poll: {type(exc).__name__}")

    async def close(self) -> None:
        self._closed = True
        for task in self._pollers.values():
            task.cancel()
        with contextlib.suppress(Exception):
            await asyncio.wait_for(self.session.close(), 5)


def trigger(component_id: str, event: str, value: object) -> list:
    """The widget states a browser sends for a component's ``setTriggerValue(event, value)``: the
    component's (empty) state and Streamlit's trigger aggregator for a components.v2 instance."""
    from streamlit.proto.WidgetStates_pb2 import WidgetState

    payload = json.dumps([{"event": event, "value": value}])
    return [
        WidgetState(id=component_id, json_value="{}"),
        WidgetState(id=f"$$STREAMLIT_INTERNAL_KEY_{component_id}__events", json_trigger_value=payload),
    ]


async def open_tab(
    base_url: str, query: str, voter: str, host: str | None = None
) -> tuple[Tab, asyncio.Task]:
    """A tab on the page, after its hello: this device's voter id (and lecturer credential)."""
    session = await StreamlitSession.connect(base_url)
    tab = Tab(session, query)
    tab.voter = voter
    reader = asyncio.create_task(tab.reader())
    await tab.run("load")
    link = tab.components.get("link")
    if link is None:
        tab.errors.append("no browser link on the page")
        return tab, reader
    hello = {"voter": voter, "host": host, "link": None, "pending": []}
    await tab.run("hello", widget_states=trigger(link[0], "hello", hello))
    return tab, reader


async def send_vote(tab: Tab) -> None:
    found = tab.components["ballot"]
    await tab.run("vote", widget_states=trigger(found[0], "vote", [tab.pending]), fragment_id=found[1])


async def vote(tab: Tab, choice: int) -> str | None:
    """Press Vote on the ballot the page shows (the component's ``vote`` trigger, run in its
    fragment, as the browser sends it); the press's id, or None when no ballot is open."""
    found = tab.components.get("ballot")
    spec = found[2].get("ballot") if found else None
    if not spec:
        return None
    tab.pending = {
        "id": secrets.token_urlsafe(9),
        "code": spec["code"],
        "question": spec["question"],
        "variant": spec["variant"],
        "round": spec["round"],
        "asking": spec.get("asking"),
        "answer": str(choice % len(spec["options"])),
        "confidence": None,
    }
    await send_vote(tab)
    return tab.pending["id"]


async def student(tab: Tab, rng: random.Random, go: asyncio.Event, options: int, done: list[float]) -> None:
    await go.wait()
    await asyncio.sleep(rng.uniform(0, WINDOW_S))
    for attempt in range(2 if rng.random() < CHANGE_SHARE else 1):
        pressed = await vote(tab, rng.randrange(options))
        if pressed is None:
            tab.errors.append("no ballot on the page")
            return
        for _ in range(15):  # kept on the phone while the page says "waiting": sent again
            if tab.outcomes.get(pressed, "waiting") != "waiting":
                break
            await asyncio.sleep(4)
            await send_vote(tab)
        if tab.outcomes.get(pressed) != "counted":
            tab.errors.append(f"vote {tab.outcomes.get(pressed, 'unanswered')}")
        if attempt == 0:
            done.append(time.monotonic())
        await asyncio.sleep(rng.uniform(0.5, 2))


async def wait_for_new_ballot(tab: Tab, round_number: int, timeout_s: float = 15) -> bool:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        found = tab.components.get("ballot")
        spec = found[2].get("ballot") if found else None
        if spec and spec["round"] == round_number:
            return True
        await asyncio.sleep(0.2)
    return False


def tally_lag(log: list[tuple[float, int]], done: list[float]) -> list[float]:
    """For the k-th completed vote, how long until the lecturer's screen showed at least k."""
    lags = []
    for k, at in enumerate(sorted(done), start=1):
        seen = next((t for t, n in log if n >= k and t >= at), None)
        if seen is not None:
            lags.append(seen - at)
    return lags


async def run_class(
    base_url: str, db_url: str, students: int, seed: int = 0, kill_pid_file: Path | None = None
) -> dict:
    from classroom import course, open_store

    store = open_store(db_url)
    lesson = next(
        lesson_id
        for lesson_id in ("gpu-basics", "prefill-decode", "roofline")
        if not course.room_questions(lesson_id)[0].is_numeric
    )
    room = store.create_room(lesson)
    options = len(course.question(room.lesson_id, room.question_id).options)
    lecturer, lecturer_reader = await open_tab(
        base_url, f"room={room.code}", secrets.token_urlsafe(16), host=room.host_token
    )
    rng = random.Random(seed)
    tabs: list[Tab] = []
    readers = []
    for _ in range(students):  # students arrive over a few seconds, as a class does
        tab, reader = await open_tab(base_url, f"room={room.code}", secrets.token_urlsafe(16))
        tabs.append(tab)
        readers.append(reader)
    report: dict = {"students": students, "rounds": []}
    for round_number in (1, 2):
        if round_number == 2:
            store.set_phase(room.code, room.host_token, "results")
            await asyncio.sleep(3)
            if kill_pid_file is not None:
                report["killed"] = kill_replica(kill_pid_file)
                await asyncio.sleep(2)
                report["rejoined"] = 0
                for i, tab in enumerate(tabs):  # a dropped phone reloads its link: same room, same id
                    if tab._closed or tab.session._ws.close_code is not None:
                        await tab.close()
                        tabs[i], reader = await open_tab(base_url, tab.query, tab.voter)
                        readers.append(reader)
                        report["rejoined"] += 1
                if lecturer._closed or lecturer.session._ws.close_code is not None:
                    lecturer, lecturer_reader = await open_tab(
                        base_url, lecturer.query, lecturer.voter, host=room.host_token
                    )
                report["round1_after_kill"] = sum(store.counts(room.code, room.question_id, 1).values())
            store.set_phase(room.code, room.host_token, "revoting")
            ready = await asyncio.gather(*(wait_for_new_ballot(t, 2) for t in tabs))
            report["revote_ballot_missing"] = sum(not r for r in ready)
        go = asyncio.Event()
        done: list[float] = []
        log_start = len(lecturer.voted_log)
        tasks = [
            asyncio.create_task(student(t, random.Random(rng.random()), go, options, done)) for t in tabs
        ]
        go.set()
        await asyncio.gather(*tasks)
        await asyncio.sleep(4)  # the lecturer's next polls
        counts = store.counts(room.code, room.question_id, round_number)
        lags = tally_lag(lecturer.voted_log[log_start:], done)
        report["rounds"].append(
            {
                "round": round_number,
                "votes_counted": sum(counts.values()),
                "voters": students,
                "tally_lag_p50_s": percentile(lags, 50) if lags else None,
                "tally_lag_p95_s": percentile(lags, 95) if lags else None,
                "tally_seen": len(lags),
            }
        )
    latencies = [s for t in tabs for what, s in t.latencies]
    votes = [s for t in tabs for what, s in t.latencies if what == "vote"]
    report |= {
        "student_runs": len(latencies),
        "student_p50_s": percentile(latencies, 50),
        "student_p95_s": percentile(latencies, 95),
        "vote_p95_s": percentile(votes, 95),
        "errors": sum(len(t.errors) for t in tabs) + len(lecturer.errors),
        "error_examples": sorted({e for t in tabs for e in t.errors})[:5],
    }
    for tab in [*tabs, lecturer]:
        await tab.close()
    for reader in [*readers, lecturer_reader]:
        reader.cancel()
    store.engine.dispose()
    return report


def kill_replica(pid_file: Path) -> int:
    """Kill one replica (SIGKILL: a crash, not a clean stop); its pid."""
    import signal

    pid = int(pid_file.read_text().strip())
    os.kill(pid, signal.SIGKILL)
    return pid


@contextlib.contextmanager
def setup(kind: str):
    """(app URL, store URL) for ``sqlite-1`` (one server) or ``pg-2`` (nginx, two replicas, PostgreSQL)."""
    if kind == "sqlite-1":
        data = tempfile.mkdtemp(prefix="gfg-class-")
        os.environ["GFG_DATA_DIR"], os.environ["GFG_CLASS_DB"] = data, ""
        with start_server(ROOT / "app.py", cwd=ROOT) as server:
            yield server.url, f"sqlite:///{data}/classroom.sqlite3"
        return
    from tests.pg_server import PostgresServer

    with PostgresServer() as pg:
        run_dir = tempfile.mkdtemp(prefix="gfg-deploy-")
        env = os.environ | {"GFG_CLASS_DB": pg.url, "RUN_DIR": run_dir}
        script = str(ROOT / "deploy" / "run-local.sh")
        subprocess.run([script, "start", "2", "8590"], check=True, env=env, cwd=ROOT)
        os.environ["GFG_BENCH_RUN_DIR"] = run_dir
        try:
            yield "http://127.0.0.1:8590", pg.url
        finally:
            subprocess.run([script, "stop"], env=env, cwd=ROOT, check=False)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--setup", choices=("sqlite-1", "pg-2"), default="sqlite-1")
    parser.add_argument("--url", help="a running deployment (needs --db)")
    parser.add_argument("--db", help="its GFG_CLASS_DB")
    parser.add_argument("--students", type=int, default=60)
    parser.add_argument(
        "--kill-replica", action="store_true", help="pg-2: kill replica 1 between the vote and the revote"
    )
    args = parser.parse_args(argv)
    if args.url:
        report = asyncio.run(run_class(args.url, args.db, args.students))
    else:
        with setup(args.setup) as (url, db):
            victim = None
            if args.kill_replica and args.setup == "pg-2":
                victim = Path(os.environ["GFG_BENCH_RUN_DIR"]) / "replica-8601.pid"
            report = asyncio.run(run_class(url, db, args.students, kill_pid_file=victim))
    print(f"setup: {args.url or args.setup}, {args.students} students")
    for r in report["rounds"]:
        lost = r["voters"] - r["votes_counted"]
        lag = (
            "none seen"
            if r["tally_lag_p95_s"] is None
            else f"p50 {r['tally_lag_p50_s']:.2f} s, p95 {r['tally_lag_p95_s']:.2f} s"
        )
        print(
            f"round {r['round']}: {r['votes_counted']} votes counted for {r['voters']} voters "
            f"({max(lost, 0)} lost, {max(-lost, 0)} doubled); lecturer's tally behind the vote: "
            f"{lag} "
            f"({r['tally_seen']} votes seen)"
        )
    print(
        f"students' runs: {report['student_runs']}, p50 {report['student_p50_s'] * 1000:.0f} ms, "
        f"p95 {report['student_p95_s'] * 1000:.0f} ms (votes p95 {report['vote_p95_s'] * 1000:.0f} ms); "
        f"errors {report['errors']} {report['error_examples']}"
    )
    if "killed" in report:
        print(
            f"killed replica pid {report['killed']} after the first vote: {report['rejoined']} students "
            f"rejoined by their link through nginx; first-round votes still recorded: "
            f"{report['round1_after_kill']} of {args.students}"
        )
    if "revote_ballot_missing" in report:
        print(f"students who never saw the revote ballot: {report['revote_ballot_missing']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
