"""The Live class page: a lecturer runs a room through the course's questions; students vote
from phones. Layout and widgets only: rooms, votes, ballots and limits live in classroom/, the
questions in lessons/, this browser's identity in ui/browser.py.

Addresses: ``class`` (join or start), ``class?room=CODE`` (everyone: a student, or the lecturer
whose browser holds the room's credential), ``class?room=CODE#host=TOKEN`` (a one-time lecturer
link for another screen: the token after ``#`` never reaches a server and leaves the address bar
on first open), ``class?room=CODE&record=1`` (the lecturer's printable record). Each view polls the
room in a fragment every ``POLL_SECONDS``; a database that stops answering is said in words, and
every open page recovers by itself when it answers again.
"""

from __future__ import annotations

import contextlib
import functools
import io
import logging
import os
import secrets
import time
from collections.abc import Callable
from typing import Any
from urllib.parse import urlsplit

import streamlit as st

from classroom import (
    Ballot,
    Outbox,
    Room,
    RoomError,
    Store,
    StoreUnavailable,
    client_address,
    course,
    normalise_code,
    open_store,
    valid_voter,
)
from classroom.ballot import COUNTED, LATE, MESSAGES, REFUSED, WAITING
from classroom.store import CODE_LENGTH, NEW_ROOMS, WRONG_CODES, asked_key, default_url
from classroom.tally import number_text, plain, record_rows, rounds, tally, to_csv
from lessons import load_lessons
from lessons.model import Question, grade
from ui.browser import class_ballot, class_link, class_live, trigger_value
from ui.controls import plain as escape
from ui.controls import term_markdown

log = logging.getLogger(__name__)
POLL_SECONDS = 2.0
PRESENCE_EVERY_S = 20.0  # a phone notes it has the room open at most this often
COUNTDOWNS_S = (30, 60)
OUTAGE = "The class's database is not answering"
PHASE_WORDS = {
    "voting": "Voting is open",
    "results": "Votes are in: results shown, answer hidden",
    "revoting": "Revote is open: discuss with a neighbour, then vote again",
    "revote-results": "Revote is in: results shown, answer hidden",
    "revealed": "The answer is revealed",
    "ended": "The class has ended",
}
LINK_KEY = "class-link"
PHASE_LINE = ".st-key-class-phase [data-testid='stCaptionContainer']"  # the focus goes here on a change
BALLOT_KEY = "class-ballot"
LIVE_KEY = "class-live"
# Session state of this page, one place: every key starts with "_class_".
_SID = "_class_sid"  # this page session's id (the browser says hello once per id)
_HELLO = "_class_hello"  # what the browser said: voter, lecturer credential, link token
_HOSTS = "_class_hosts"  # room code -> this browser's lecturer credential
_FORGET = "_class_forget"  # codes whose stored credential no longer works
_LINKS = "_class_links"  # one-time link tokens already handled
_INBOX = "_class_inbox"  # ballots the phone sent, not yet handled
_OUTBOX = "_class_outbox"  # classroom.Outbox: ballots waiting for the database
_ROOMS = "_class_rooms"  # code -> the room as last read (shown through an outage)
_SEEN = "_class_seen"  # when this phone last noted its presence
_SHOWN = "_class_shown"  # (code, question, variant, phase) last drawn: announce a change
_SAID = "_class_said"  # counter for announcement ids
_VOTED = "_class_voted"  # (count, time) the lecturer last heard
_NOTICE = "_class_notice"  # a message from a button's callback
_OUTAGE = "_class_outage"  # the last poll found the database not answering
_NEW_LINK = "_class_new_link"  # (code, token) of the lecturer link just made

# The class page's own look: the join code large enough to read from the back of a hall, a
# compact projector layout (question, results and answer above the fold at 1280×720), and the
# collapsed sidebar out of the Tab order on phones (it is off screen, yet Streamlit leaves its
# links focusable: 13 Tabs before the ballot).
_CSS = """
<style>
  .st-key-class-side strong { font-size: 1.5rem; }
  .st-key-class-title { position: absolute !important; width: 1px; height: 1px; overflow: hidden;
    clip: rect(0 0 0 0); white-space: nowrap; margin-bottom: -1rem; }
  .st-key-class-code p { font-family: "Source Code Pro", ui-monospace, monospace; white-space: nowrap;
    font-size: 3.3rem !important; font-weight: 700; letter-spacing: 0.06em; line-height: 1.1; margin: 0; }
  .st-key-class-code-large p { font-family: "Source Code Pro", ui-monospace, monospace; white-space: nowrap;
    font-size: 5.5rem !important; font-weight: 700; letter-spacing: 0.06em; line-height: 1.1; margin: 0; }
  .st-key-class-side [data-testid="stImage"] img, .st-key-class-qr-big [data-testid="stImage"] img {
    image-rendering: pixelated; }
  .st-key-class-side [data-testid="stCode"] code { font-size: 0.95rem; }
  .st-key-class-host h2 { font-size: 1.75rem !important; line-height: 1.25; padding: 0 0 0.3rem; }
  .st-key-class-host [data-testid="stMarkdownContainer"] p { font-size: 1.2rem !important; }
  .st-key-class-host [data-testid="stCaptionContainer"] { font-size: 1.05rem !important; }
  .st-key-class-host [data-testid="stMetricValue"] { font-size: 1.5rem !important; line-height: 1.1; }
  .st-key-class-host [data-testid="stMetricLabel"] p { font-size: 0.95rem !important; }
  .st-key-class-host [data-testid="stMetric"] { padding: 0; }
  /* Presenter view's top padding (3.9 rem) is header room this page does not need. */
  [data-testid="stAppViewContainer"] .stMainBlockContainer:has(.st-key-class-host) { padding-top: 2.2rem; }
  section[data-testid="stSidebar"][data-collapsed="true"],
  section[data-testid="stSidebar"][data-collapsed="true"] * { visibility: hidden !important; }
</style>
"""


def _in_words(draw: Callable[..., None]) -> Callable[..., None]:
    """Run a page part; an unexpected error is logged on the server and said in words on the page,
    never shown as a traceback (which would put file paths and database details on a projector)."""

    @functools.wraps(draw)
    def guarded(*args: Any, **kwargs: Any) -> None:
        try:
            draw(*args, **kwargs)
        except Exception:  # Streamlit's rerun and stop are BaseExceptions and pass through
            log.exception("live class: %s failed", draw.__name__)
            st.error(
                "Something went wrong on this part of the page; it was logged. It tries again by "
                "itself in a moment."
            )

    return guarded


@st.cache_resource(show_spinner=False)
def _open(url: str) -> Store:
    return open_store(url, connect=False)  # never fails for an outage: each call says so itself


def store() -> Store | None:
    """The class store, or None after saying on screen that its setting is unusable."""
    try:
        return _open(default_url())
    except StoreUnavailable as exc:
        st.error(f"Live classes are not set up right: {exc}. Everything else in the guide works as usual.")
        return None


@_in_words
def render() -> None:
    st.html(_CSS)
    ss = st.session_state
    ss.setdefault(_SID, secrets.token_urlsafe(8))
    s = store()
    code_text = st.query_params.get("room", "")
    code = normalise_code(code_text)
    if s is not None:
        _claim_links(s, code)
    class_link(
        key=LINK_KEY,
        sid=ss[_SID],
        room=code,
        hosts=dict(ss.get(_HOSTS, {})),
        forget=list(ss.get(_FORGET, [])),
        on_hello=_on_hello,
    )
    if s is None:
        st.title("Live class", anchor=False)
        return
    if not code_text:
        st.title("Live class", anchor=False)
        landing(s)
        return
    address = _address()
    try:
        if s.hits("code", address, WRONG_CODES[1]) >= WRONG_CODES[0]:
            st.title("Live class", anchor=False)
            st.error(_too_many_codes())
            landing(s)
            return
        room = s.room(code_text)
    except RoomError as exc:
        st.title("Live class", anchor=False)
        _count_wrong_code(s, address)
        st.error(f"Room “{escape(_short(code_text))}”: {exc}. Check the code on the lecturer's screen.")
        landing(s)
        return
    except StoreUnavailable:
        st.title("Live class", anchor=False)
        _outage_and_recover(code)
        return
    ss.setdefault(_ROOMS, {})[room.code] = room
    hello = ss.get(_HELLO)
    credential = ss.get(_HOSTS, {}).get(room.code) or (hello or {}).get("host")
    if credential:
        try:
            if s.is_host(room.code, credential):
                host_view(s, room, credential)
                return
        except StoreUnavailable:
            st.title("Live class", anchor=False)
            _outage_and_recover(room.code)
            return
        _forget_host(room.code)
    st.title("Live class", anchor=False)
    if hello is None:
        st.caption("Opening the room…")  # the browser's hello (its identity) arrives in a moment
        return
    student_view(s, room, hello["voter"])


def _on_hello() -> None:
    """The browser's hello (once per page session): its voter id, its lecturer credential for this
    room, a one-time lecturer link taken out of the address, and votes not yet heard back about."""
    value = trigger_value(LINK_KEY, "hello")
    if not isinstance(value, dict) or not valid_voter(value.get("voter")):
        return
    host, link = value.get("host"), value.get("link")
    st.session_state[_HELLO] = {
        "voter": value["voter"],
        "host": host if isinstance(host, str) and 0 < len(host) <= 128 else None,
        "link": link if isinstance(link, str) and 0 < len(link) <= 128 else None,
    }
    pending = value.get("pending")
    if isinstance(pending, list):
        st.session_state.setdefault(_INBOX, []).extend(pending[:20])


def _claim_links(s: Store, code: str) -> None:
    """Exchange a one-time lecturer link for this browser's credential: the token after ``#``
    (in the hello) or, from older links, ``host=`` in the query, which is dropped from the address."""
    ss = st.session_state
    legacy = st.query_params.get("host", "")
    if legacy:
        del st.query_params["host"]
    tokens = [t for t in (legacy, (ss.get(_HELLO) or {}).get("link")) if t]
    done = ss.setdefault(_LINKS, set())
    for token in tokens:
        if token in done or not code:
            continue
        try:
            credential = s.claim_host(code, token)
        except StoreUnavailable:
            continue  # tried again on the next run
        except RoomError:
            done.add(token)
            ss[_NOTICE] = (
                "That lecturer link does not control this room: it was used already, replaced by a newer "
                "one, or mistyped. Ask for a new one from a lecturer screen."
            )
            continue
        done.add(token)
        ss.setdefault(_HOSTS, {})[code] = credential


def _forget_host(code: str) -> None:
    """This browser's credential for ``code`` stopped working: drop it here and in the browser."""
    ss = st.session_state
    ss[_NOTICE] = (
        "This browser no longer controls this room (another lecturer screen signed it out). "
        "You are in it as a student."
    )
    ss.setdefault(_HOSTS, {}).pop(code, None)
    if code not in ss.setdefault(_FORGET, []):
        ss[_FORGET].append(code)
    if ss.get(_HELLO):
        ss[_HELLO]["host"] = None


def _address() -> str:
    """The client address rate limits count (``classroom.client_address``)."""
    peer = st.context.ip_address
    forwarded = st.context.headers.get("X-Forwarded-For") if st.context.headers else None
    return client_address(
        peer if isinstance(peer, str) else None, forwarded if isinstance(forwarded, str) else None
    )


def _count_wrong_code(s: Store, address: str) -> None:
    with contextlib.suppress(StoreUnavailable):
        s.hit("code", address, WRONG_CODES[1])


def _too_many_codes() -> str:
    return (
        f"Too many wrong room codes from your network: wait a minute before trying again "
        f"({WRONG_CODES[0]} tries a minute)."
    )


def _short(text: str) -> str:
    """A typed value shown back in a message: cut short, so a long forged value cannot fill the screen."""
    return text if len(text) <= 12 else text[:12] + "…"


def _outage_and_recover(code: str) -> None:
    st.warning(f"{OUTAGE} — this page opens the room by itself as soon as it answers again.")
    _recover(code)


@st.fragment(run_every=POLL_SECONDS)
@_in_words
def _recover(code: str) -> None:
    """Polls the room while the database is not answering; redraws the page when it answers."""
    s = store()
    if s is None:
        return
    try:
        s.version(code) if code else s.hits("code", "probe", 60)
    except StoreUnavailable:
        return
    st.rerun(scope="app")


# -- joining and starting -----------------------------------------------------------------------


def landing(s: Store) -> None:
    """Join a room by its code, or start one on a lesson."""
    join, start = st.columns(2, gap="large")
    with join:
        st.header("Join a class")
        with st.form("class-join", border=False):
            typed = st.text_input(
                "Room code (on the lecturer's screen)",
                max_chars=CODE_LENGTH + 3,
                placeholder="e.g. K7QX3D",
            )
            asked = st.form_submit_button("Join", type="primary")
        if asked:
            _join(s, typed)
    with start:
        st.header("Run a class")
        lessons = [lesson for lesson in load_lessons() if lesson.questions]
        wanted = st.query_params.get("lesson")
        index = next((i for i, lesson in enumerate(lessons) if lesson.id == wanted), 0)
        chosen = st.selectbox(
            "Lesson",
            lessons,
            index=index,
            format_func=lambda lesson: f"{lesson.number}. {lesson.title} ({len(lesson.questions)} questions)",
        )
        sure = st.checkbox(
            "Ask how sure each student is (optional for them)",
            value=True,
            help="Each vote can say “sure” or “not sure”; after the reveal you see both per answer.",
        )
        st.caption(
            "A room asks the lesson's questions one at a time: students vote alone, see the spread, "
            "discuss, vote again, then you reveal the simulator's answer. This browser keeps control of "
            "the room; rooms close 12 hours after their last use."
        )
        if st.button("Start a room", type="primary"):
            _start(s, chosen.id, sure)
    if st.session_state.get(_NOTICE):
        st.warning(st.session_state.pop(_NOTICE))


def _join(s: Store, typed: str) -> None:
    address = _address()
    try:
        if s.hits("code", address, WRONG_CODES[1]) >= WRONG_CODES[0]:
            st.error(_too_many_codes())
            return
        room = s.room(typed)
    except RoomError:
        _count_wrong_code(s, address)
        shown = escape(_short(typed.strip()))
        st.error(f"No live room has the code “{shown}”. Codes are {CODE_LENGTH} characters.")
        return
    except StoreUnavailable:
        st.error(f"{OUTAGE}: try again in a moment.")
        return
    st.query_params.from_dict({"room": room.code})
    st.rerun()


def _start(s: Store, lesson_id: str, ask_confidence: bool) -> None:
    try:
        if s.hit("room", _address(), NEW_ROOMS[1]) > NEW_ROOMS[0]:
            st.error(
                f"Too many rooms started from your network: at most {NEW_ROOMS[0]} an hour. "
                "Reopen a room you started (its address is in this browser's history)."
            )
            return
        room = s.create_room(lesson_id, ask_confidence=ask_confidence)
    except RoomError as exc:
        st.error(f"Could not start a room: {exc}.")
        return
    except StoreUnavailable:
        st.error(f"Could not start a room: {OUTAGE.lower()}. Try again in a moment.")
        return
    st.session_state.setdefault(_HOSTS, {})[room.code] = room.host_token
    st.query_params.from_dict({"room": room.code})
    st.rerun()


# -- the lecturer -------------------------------------------------------------------------------


@st.cache_data(show_spinner=False, max_entries=64)
def qr_png(link: str) -> bytes:
    """The join link as a QR code (PNG), drawn by segno: 10 px per module, a quiet zone of 4."""
    import segno

    out = io.BytesIO()
    segno.make(link, error="m").save(out, kind="png", scale=10, border=4)
    return out.getvalue()


def public_base() -> tuple[str, bool]:
    """(the address students open, without the page; whether it is a loopback address a phone
    cannot open). ``GFG_PUBLIC_URL`` when set, else the address this page was opened at."""
    configured = os.environ.get("GFG_PUBLIC_URL", "").strip().rstrip("/")
    if configured:
        return configured, False
    parts = urlsplit(st.context.url or "")
    base = f"{parts.scheme}://{parts.netloc}" if parts.scheme and parts.netloc else ""
    path = parts.path.rstrip("/")
    if path.endswith("/class"):
        base += path[: -len("/class")]
    local = (parts.hostname or "") in ("localhost", "127.0.0.1", "::1", "0.0.0.0") or (
        parts.hostname or ""
    ).startswith("127.")
    return base, local


def join_link(code: str) -> str:
    """The address students open: ``<base>/class?room=CODE`` (relative if the base is unknown)."""
    base, _ = public_base()
    return f"{base}/class?room={code}" if base else f"class?room={code}"


def host_view(s: Store, room: Room, credential: str) -> None:
    if st.query_params.get("record") == "1":
        st.title("Live class: the record", anchor=False)
        _record(s, room, credential)
        return
    link = join_link(room.code)
    main, side = st.columns([2.75, 1], gap="medium")
    with side, st.container(key="class-side"):
        st.markdown("**Live class**")
        st.markdown("Join with the code")
        with st.container(key="class-code"):
            st.markdown(room.code)
        st.image(qr_png(link), width="stretch", alt=_qr_alt(room.code, link))
        st.code(link, language=None, wrap_lines=True)
        if public_base()[1]:
            st.warning(
                "Opened at localhost: phones cannot open this link. Open the page at this machine's "
                "network address, or set GFG_PUBLIC_URL."
            )
        if st.button("Show the QR code large", width="stretch"):
            _join_screen(room.code, link)
        _lecturer_tools(s, room, credential)
    shown = (room.question_id, room.variant, room.phase == "revealed", room.ended)
    with main, st.container(key="class-host"):
        with st.container(key="class-title"):  # the page's h1 first, for screen readers only
            st.title(f"Live class, room {room.code}", anchor=False)
        _host_live(s, room.code, credential, shown)
    if room.phase == "revealed":
        _step_view(room)


def _qr_alt(code: str, link: str) -> str:
    return f"QR code that opens the join link for room {code}: {link}"


@st.dialog("Join this class", width="large")
def _join_screen(code: str, link: str) -> None:
    """The join code and QR code filling the projected screen, for the back of a lecture hall."""
    with st.container(key="class-qr-big"):
        left, right = st.columns([1, 1], vertical_alignment="center")
        with left:
            st.image(qr_png(link), width="stretch", alt=_qr_alt(code, link))
        with right:
            st.markdown("Join with the code")
            with st.container(key="class-code-large"):
                st.markdown(code)
            st.code(link, language=None, wrap_lines=True)


def _lecturer_tools(s: Store, room: Room, credential: str) -> None:
    ss = st.session_state
    with st.popover("Lecturer tools", width="stretch"):
        st.download_button(
            "Results as CSV",
            data=lambda: _csv(s, room.code),
            file_name=f"class-{room.code}.csv",
            mime="text/csv",
            on_click="ignore",
            help="Per question and round: each answer's votes, the share right, and how sure voters were.",
        )
        st.link_button("Printable record", f"class?room={room.code}&record=1")
        st.divider()
        st.button(
            "New lecturer link",
            on_click=_act,
            args=(_new_link, s, room.code, credential),
            help="A link that opens lecturer control once, on another screen. The previous link stops.",
        )
        made = ss.get(_NEW_LINK)
        if made and made[0] == room.code:
            st.code(f"{join_link(room.code)}#host={made[1]}", language=None, wrap_lines=True)
            st.caption(
                "Open it once on the other screen; it then stops working. Keep it off the projector. "
                "The part after # is never sent to a server."
            )
        st.button(
            "Sign out other lecturer screens",
            on_click=_act,
            args=(s.sign_out_others, room.code, credential),
            help="Every other browser that controls this room loses control (this one keeps it).",
        )
        st.divider()
        st.button(
            "End the class",
            on_click=_act,
            args=(s.end_room, room.code, credential),
            help="No more votes; the results stay here (CSV, record) for 12 hours.",
        )


def _new_link(s: Store, code: str, credential: str) -> None:
    st.session_state[_NEW_LINK] = (code, s.new_host_link(code, credential))


def _act(action: Any, *args: Any, **kwargs: Any) -> None:
    """A button's callback: run ``action``; a refusal or an outage becomes a message on the page
    (a callback that raised would put a traceback there)."""
    try:
        action(*args, **kwargs)
    except RoomError as exc:
        st.session_state[_NOTICE] = f"That did not work: {exc}."
    except StoreUnavailable:
        st.session_state[_NOTICE] = f"{OUTAGE}: that did not happen. Try again in a moment."


def _csv(s: Store, code: str) -> str:
    try:
        room = s.room(code)
        return to_csv(record_rows(_asked_questions(room), s.record(code)))
    except (RoomError, StoreUnavailable) as exc:
        return f"error\n{exc}\n"


def _asked_questions(room: Room) -> list[tuple[Question, str]]:
    out = []
    for key in dict.fromkeys(room.asked or (asked_key(room.question_id, room.variant),)):
        question_id, variant = key.split("|", 1)
        question = course.question(room.lesson_id, question_id, variant)
        if question is not None:
            out.append((question, variant))
    return out


def _step_view(room: Room) -> None:
    """The live view of the step that teaches the question, once its answer is out (a chart shown
    before the vote could give a predict question's answer away). Drawn outside the poll, so it
    redraws only when the room moves on."""
    from ui.lesson_view import _embed

    found = course.step_of(room.lesson_id, room.question_id)
    if found is not None and found[1].view is not None:
        st.subheader(f"In the simulator: {found[1].title}")
        _embed(*found)


@st.fragment(run_every=POLL_SECONDS)
@_in_words
def _host_live(s: Store, code: str, credential: str, shown: tuple[str, str, bool, bool]) -> None:
    ss = st.session_state
    try:
        room = s.room(code)
        if not s.is_host(code, credential):
            _forget_host(code)
            st.rerun(scope="app")
    except RoomError as exc:
        st.error(f"This room is not available: {exc}.")
        return
    except StoreUnavailable:
        ss[_OUTAGE] = True
        st.warning(
            f"{OUTAGE}. Votes pressed now are kept on the students' phones and sent when it answers; "
            "this page recovers by itself."
        )
        _announce_once("outage", f"{OUTAGE}.")
        known = ss.get(_ROOMS, {}).get(code)
        asked = known and course.question(known.lesson_id, known.question_id, known.variant)
        if asked:  # the question stays on the projector through the outage
            st.caption(PHASE_WORDS[known.phase])
            st.markdown(f"## {term_markdown(asked.prompt)}")
            _options(asked)
        return
    ss.setdefault(_ROOMS, {})[code] = room
    if (
        ss.pop(_OUTAGE, False)
        or (room.question_id, room.variant, room.phase == "revealed", room.ended) != shown
    ):
        st.rerun(scope="app")  # back from an outage, or the question or the reveal changed the page
    if ss.get(_NOTICE):
        st.warning(ss.pop(_NOTICE))
    if room.ended:
        _ended(s, room, credential)
        return
    question = course.question(room.lesson_id, room.question_id, room.variant)
    if question is None:
        st.error("This room's question is no longer in the course.")
        return
    try:
        first = s.counts(code, question.id, 1, room.variant)
        second = s.counts(code, question.id, 2, room.variant) if room.round == 2 else {}
        joined = s.joined(code)
        sure: tuple[Any, Any] = (None, None)
        if room.phase == "revealed" and room.ask_confidence:
            sure = (
                s.confidence(code, question.id, 1, room.variant),
                s.confidence(code, question.id, 2, room.variant),
            )
    except StoreUnavailable:
        st.warning(f"{OUTAGE}; this page recovers by itself.")
        ss[_OUTAGE] = True
        return
    lesson_questions = course.room_questions(room.lesson_id)
    number = next((i for i, q in enumerate(lesson_questions) if q.id == question.id), 0) + 1
    voted = sum((second if room.round == 2 else first).values())
    # Of how many: the phones in the room, or at least everyone who voted on this question so far.
    of = max(joined, voted, sum(first.values()))
    left = room.seconds_left(s.clock())
    phase = PHASE_WORDS[room.phase] + (f" · closes in {left:.0f} s" if left is not None else "")
    with st.container(key="class-phase"):
        st.caption(f"Question {number} of {len(lesson_questions)} · {phase}")
    st.markdown(f"## {term_markdown(question.prompt)}")
    results = room.phase in ("results", "revote-results", "revealed") and bool(first or second)
    if not results:
        _options(question)
    with st.container(horizontal=True, vertical_alignment="center", gap="medium", key="class-controls"):
        _host_controls(s, room, question, credential)
        st.space("stretch")
        st.metric("Joined", joined, help="phones that had the room open in the last minute", width="content")
        st.metric("Voted", f"{voted} of {of}", help="votes in this round", width="content")
    if room.phase == "revealed":
        _reveal(question, short=True)
        if results:
            _results(question, first, second if room.round == 2 else None, True, sure)
        st.markdown(term_markdown(question.explanation))
    elif results:
        _results(
            question, first, second if room.phase != "results" and room.round == 2 else None, False, sure
        )
    _lecturer_announcements(room, voted, of)


def _options(question: Question) -> None:
    if not question.is_numeric:
        st.markdown(
            "\n\n".join(f"**{chr(65 + i)}.** {term_markdown(o.text)}" for i, o in enumerate(question.options))
        )
    elif question.unit:
        st.caption(f"Answer in {question.unit}.")


def _host_controls(s: Store, room: Room, question: Question, credential: str) -> None:
    def go(phase: str) -> None:
        _act(s.set_phase, room.code, credential, phase)

    cols = [st, st, st]  # the buttons sit in a horizontal container and wrap
    if room.phase in ("voting", "revoting"):
        label = "Close voting, show results" if room.phase == "voting" else "Close the revote, show results"
        target = "results" if room.phase == "voting" else "revote-results"
        cols[0].button(label, on_click=go, args=(target,), type="primary")
        for col, seconds in zip(cols[1:], COUNTDOWNS_S, strict=True):
            col.button(
                f"Close in {seconds} s",
                on_click=_act,
                args=(s.start_countdown, room.code, credential, seconds),
                help="A countdown on every phone; voting closes by itself when it ends.",
            )
    elif room.phase == "results":
        cols[0].button("Revote (after discussion)", on_click=go, args=("revoting",), type="primary")
        cols[1].button("Reveal the answer", on_click=go, args=("revealed",))
    elif room.phase == "revote-results":
        cols[0].button("Reveal the answer", on_click=go, args=("revealed",), type="primary")
    elif room.phase == "revealed":
        following = course.next_after(room.lesson_id, question.id)
        if following is not None:
            cols[0].button(
                "Next question",
                on_click=_act,
                args=(s.next_question, room.code, credential, following.id),
                type="primary",
            )
        else:
            cols[0].markdown("That was the lesson's last question.")
        asked = [key.split("|", 1)[1] for key in room.asked if key.split("|", 1)[0] == question.id]
        again = course.next_variant(room.lesson_id, question.id, asked or [room.variant])
        if again is not None:
            cols[1].button(
                "Same question, new numbers",
                on_click=_act,
                args=(
                    s.next_question,
                    room.code,
                    credential,
                    again.id,
                    _variant_key(again),
                ),
                help="An equivalent question on other inputs: did the idea stick?",
            )


def _results(
    question: Question,
    first: dict[str, int],
    second: dict[str, int] | None,
    revealed: bool,
    sure: tuple[Any, Any],
) -> None:
    from charts.classroom import votes_figure

    if second is not None:
        one, two = rounds(question, first, second, sure)
    else:
        one, two = tally(question, first, confidence=sure[0]), None
    spec = votes_figure(
        one.labels,
        one.votes,
        two.votes if two else None,
        right=one.right if revealed else None,
        question="" if revealed else "each answer's votes (the answer stays hidden until you reveal it)",
        sure=(one.sure or None, two.sure if two else None) if revealed else None,
        compact=True,
    )
    _draw_votes(spec, one, two)
    if revealed:
        cells = [f"First vote: **{one.share_right:.0%}** right ({one.correct} of {one.total})"]
        if two is not None and two.total:
            cells.append(f"Revote: **{two.share_right:.0%}** right ({two.correct} of {two.total})")
        st.markdown(" · ".join(cells))


def _draw_votes(spec: dict[str, Any], one: Any, two: Any) -> None:
    """``ui.chart.show`` for the projector: the same title, theme and presenter passes, at the
    chart's own compact height (``show`` keeps a phone's least plot height, 260 px, which pushes
    the results below a projector's fold), and an alt text that reads every answer's count."""
    from charts.contrast import for_theme
    from charts.style import detach_title, scale_fonts
    from ui.chart import CONFIG, _Prebuilt, title_html
    from ui.presenter import PRESENTER_SCALE, is_presenting, theme_scheme

    height = spec["layout"]["height"]
    spec, headline, detail = detach_title(spec)
    spec["layout"]["height"] = height
    if is_presenting():
        spec = scale_fonts(spec, PRESENTER_SCALE)
        spec["layout"]["height"] = round(height * PRESENTER_SCALE)  # the labels' lines grow with the font
    spec = for_theme(spec, theme_scheme())
    st.markdown(title_html(headline, detail), unsafe_allow_html=True)
    rows = [
        f"{label}: {votes} in the first vote" + (f", {two.votes[i]} in the revote" if two else "")
        for i, (label, votes) in enumerate(zip(one.labels, one.votes, strict=True))
    ]
    alt = f"Bar chart, votes per answer. {headline}. " + "; ".join(rows) + "."
    st.plotly_chart(_Prebuilt(spec), key="class-votes", config=CONFIG, width="stretch", alt=alt)


def _reveal(question: Question, short: bool = False) -> None:
    if question.is_numeric:
        st.success(f"**The model's answer:** {number_text(question.answer, question.unit)}")
    else:
        st.success(f"**The answer:** {term_markdown(question.options[int(question.answer)].text)}")
    if not short:
        st.markdown(term_markdown(question.explanation))


def _lecturer_announcements(room: Room, voted: int, of: int) -> None:
    """Screen readers hear a change of phase, and the vote count at most every 8 s; after a button
    press the focus moves to the phase line instead of dropping to the page."""
    ss = st.session_state
    state = (room.code, room.question_id, room.variant, room.phase)
    announce = focus = None
    if ss.get(_SHOWN) != state:
        if ss.get(_SHOWN) is not None:
            announce = _say(PHASE_WORDS[room.phase])
            focus = {
                "id": announce["id"],
                "selector": PHASE_LINE,
            }
        ss[_SHOWN] = state
    elif room.accepting_votes:
        last = ss.get(_VOTED, (voted, 0.0))
        if last[0] != voted and time.monotonic() - last[1] >= 8:
            announce = _say(f"{voted} of {of} have voted")
            ss[_VOTED] = (voted, time.monotonic())
        elif _VOTED not in ss:
            ss[_VOTED] = (voted, 0.0)
    class_live(key=LIVE_KEY, announce=announce, focus=focus)


def _say(text: str) -> dict[str, str]:
    ss = st.session_state
    ss[_SAID] = ss.get(_SAID, 0) + 1
    return {"id": f"{ss[_SID]}-{ss[_SAID]}", "text": text}


def _announce_once(kind: str, text: str) -> None:
    key = f"_class_announced_{kind}"
    if not st.session_state.get(key):
        st.session_state[key] = True
        class_live(key=LIVE_KEY, announce=_say(text), focus=None)


def _ended(s: Store, room: Room, credential: str) -> None:
    st.markdown("## The class has ended")
    st.caption("No more votes. The results stay here for 12 hours: download them, or print the record.")
    _record(s, room, credential, heading=False)
    if st.button("Start a new room", type="primary"):
        st.query_params.clear()
        st.rerun(scope="app")


def _record(s: Store, room: Room, credential: str, heading: bool = True) -> None:
    """The room's record: each question asked, its votes per answer in each round, the share right
    and how sure voters were; printable (the sidebar and buttons do not print)."""
    import pandas as pd

    try:
        rows = record_rows(_asked_questions(room), s.record(room.code))
    except StoreUnavailable:
        st.warning(f"{OUTAGE}: the record cannot be read now. Reload this page in a minute.")
        return
    if heading:
        st.caption(f"Room {room.code} · lesson {room.lesson_id} · printed from the Live class page")
    if not rows:
        st.info("No votes yet.")
    questions = {q.id + "|" + v: q for q, v in _asked_questions(room)}
    keys = dict.fromkeys(f"{r['question_id']}|{r['variant']}" for r in rows)
    for number, key in enumerate(keys, start=1):
        question = questions[key]
        mine = [r for r in rows if f"{r['question_id']}|{r['variant']}" == key]
        st.markdown(f"**{number}. {term_markdown(question.prompt)}**")
        table = pd.DataFrame(
            {
                "Answer": [("✓ " if r["right"] == "yes" else "") + str(r["answer"]) for r in mine],
                "Round": [r["round"] for r in mine],
                "Votes": [r["votes"] for r in mine],
                "Share": [f"{float(r['share_of_votes']):.0%}" for r in mine],
                "Sure / not sure": [f"{r['sure']} / {r['unsure']}" for r in mine],
                "Median confidence": [r["median_confidence"] or "—" for r in mine],
            }
        )
        st.dataframe(table, hide_index=True, width="stretch")
        shares = {str(r["round"]): float(r["round_share_right"]) for r in mine}
        st.caption(" · ".join(f"{name}: {share:.0%} right" for name, share in shares.items()))
    st.download_button(
        "Results as CSV",
        data=lambda: _csv(s, room.code),
        file_name=f"class-{room.code}.csv",
        mime="text/csv",
        on_click="ignore",
        key="class-csv-record",
    )
    if heading:
        st.link_button("Back to the room", f"class?room={room.code}")


# -- a student ----------------------------------------------------------------------------------


def student_view(s: Store, room: Room, voter: str) -> None:
    if st.session_state.get(_NOTICE):
        st.warning(st.session_state.pop(_NOTICE))
    st.caption(f"Room {room.code} · no name is asked or stored")
    _student_live(s, room.code, voter)


def _on_vote() -> None:
    """A press of Vote (or the phone sending again a vote it has not heard back about)."""
    value = trigger_value(BALLOT_KEY, "vote")
    if isinstance(value, list):
        st.session_state.setdefault(_INBOX, []).extend(value[:10])


def _deliver_inbox(s: Store, voter: str) -> Outbox:
    ss = st.session_state
    outbox: Outbox = ss.setdefault(_OUTBOX, Outbox())
    inbox, ss[_INBOX] = ss.get(_INBOX, []), []
    for payload in inbox:
        try:
            ballot = Ballot.from_payload(payload)
        except RoomError:
            continue  # not a vote this page made
        outbox.send(s, voter, ballot)
    if outbox.waiting:
        outbox.retry(s, voter)
    return outbox


@st.fragment(run_every=POLL_SECONDS)
@_in_words
def _student_live(s: Store, code: str, voter: str) -> None:
    ss = st.session_state
    outbox = _deliver_inbox(s, voter)
    outage = False
    try:
        room = s.room(code)
        ss.setdefault(_ROOMS, {})[code] = room
        if time.monotonic() - ss.get(_SEEN, -1e9) >= PRESENCE_EVERY_S:
            s.seen(code, voter)
            ss[_SEEN] = time.monotonic()
    except RoomError as exc:
        st.error(f"This room is not available: {exc}.")
        return
    except StoreUnavailable:
        outage = True
        room = ss.get(_ROOMS, {}).get(code)
    if room is None:
        st.warning(f"{OUTAGE}. This page recovers by itself.")
        return
    question = course.question(room.lesson_id, room.question_id, room.variant)
    if question is None:
        st.error("This room's question is no longer in the course.")
        return
    mine = None
    if not outage:
        try:
            mine = s.my_vote(code, voter, question.id, room.round, room.variant)
        except StoreUnavailable:
            outage = True
    if outage:
        st.warning(
            f"{OUTAGE} — your vote is kept on this phone and will be sent. This page recovers by itself."
        )
    with st.container(key="class-phase"):
        st.caption(PHASE_WORDS[room.phase])
    if room.ended:
        st.info("The lecturer has ended this class. Thank you for taking part!")
        _ballot(room, question, None, outbox, outage)
        return
    st.markdown(f"**{term_markdown(question.prompt)}**")
    _ballot(room, question, mine, outbox, outage)
    if room.phase == "revealed" and not outage:
        _own_result(s, room, question, voter)


def _ballot(room: Room, question: Question, mine: str | None, outbox: Outbox, outage: bool) -> None:
    """The vote form (while a round is open) and what became of this phone's vote, in the ballot
    component; a phase change is announced and the focus moved to the phase line."""
    ss = st.session_state
    slot = (room.code, question.id, room.variant, room.round)
    latest = next((d for d in reversed(outbox.outcomes.values()) if d.ballot.slot == slot), None)
    status = _vote_status(room, question, mine, latest, outage)
    spec = None
    if room.accepting_votes:
        spec = {
            "key": f"{room.code}|{question.id}|{room.variant}|{room.round}",
            "code": room.code,
            "question": question.id,
            "variant": room.variant,
            "round": room.round,
            "kind": "number" if question.is_numeric else "choice",
            "label": f"Your answer ({question.unit})"
            if question.is_numeric and question.unit
            else "Your answer",
            "options": [f"{chr(65 + i)}. {plain(o.text)}" for i, o in enumerate(question.options)],
            "min": 0 if course.non_negative(room.lesson_id, question.id) else None,
            "confidence": room.ask_confidence,
            "selected": _selected(question, mine),
        }
    state = (room.code, room.question_id, room.variant, room.phase)
    announce = focus = None
    if ss.get(_SHOWN) != state:
        if ss.get(_SHOWN) is not None:
            announce = _say(PHASE_WORDS[room.phase])
            focus = {
                "id": announce["id"],
                "selector": PHASE_LINE,
            }
        ss[_SHOWN] = state
    class_ballot(
        key=BALLOT_KEY,
        data={
            "sid": ss[_SID],
            "room": room.code,
            "ballot": spec,
            "status": status,
            "outcomes": [{"id": d.ballot.id, "status": d.status} for d in outbox.outcomes.values()],
            "countdown_s": room.seconds_left(time.time()),
            "announce": announce,
            "focus": focus,
        },
        on_vote=_on_vote,
    )


def _selected(question: Question, mine: str | None) -> str | None:
    if mine is None:
        return None
    return f"{float(mine):g}" if question.is_numeric else mine


def _vote_status(
    room: Room, question: Question, mine: str | None, latest: Any, outage: bool
) -> dict[str, str]:
    """What the phone says about its vote: counted, kept and waiting, too late, refused, or none."""
    if latest is not None and latest.status == WAITING:
        return {"kind": "warning", "text": MESSAGES[WAITING]}
    if latest is not None and latest.status == LATE:
        return {"kind": "warning", "text": MESSAGES[LATE]}
    if latest is not None and latest.status == REFUSED:
        return {"kind": "error", "text": f"Your vote was not counted: {latest.detail}."}
    sent = latest is not None and latest.status == COUNTED
    if mine is None and sent and outage:
        mine = latest.ballot.answer
    if room.accepting_votes:
        if mine is None:
            return {"kind": "info", "text": ""}
        return {"kind": "success", "text": f"Your vote: {_answer_text(question, mine)} — {MESSAGES[COUNTED]}"}
    if room.ended or room.phase == "revealed":
        return {"kind": "info", "text": ""}
    if mine is not None:
        return {
            "kind": "info",
            "text": f"Your vote: {_answer_text(question, mine)}. Waiting for the lecturer…",
        }
    return {"kind": "info", "text": "Waiting for the lecturer…"}


def _own_result(s: Store, room: Room, question: Question, voter: str) -> None:
    try:
        last = s.my_vote(room.code, voter, question.id, 2, room.variant) if room.round == 2 else None
        first = s.my_vote(room.code, voter, question.id, 1, room.variant)
    except StoreUnavailable:
        return
    answer = last if last is not None else first
    if answer is None:
        st.info("You did not vote on this one.")
    else:
        response: float | int = float(answer) if question.is_numeric else int(answer)
        ok = grade(question, response)
        (st.success if ok else st.warning)(
            f"{'Right' if ok else 'Not this time'}: you said **{escape(_answer_text(question, answer))}**."
        )
    _reveal(question)


def _answer_text(question: Question, stored: str) -> str:
    if question.is_numeric:
        return number_text(float(stored), question.unit)
    index = int(stored)
    return f"{chr(65 + index)}. {plain(question.options[index].text)}"


def _variant_key(question: Question) -> str:
    """The key a room stores for a variant ("" for the lesson's own numbers)."""
    return question.variant_key if question.variant_index else ""
