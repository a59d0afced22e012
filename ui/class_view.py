"""The Live class page: a lecturer runs a room through the course's questions; students vote
from phones. Layout and widgets only: rooms, votes, ballots and limits live in classroom/, the
questions in lessons/, this browser's identity in ui/browser.py.

Addresses: ``class`` (join or start), ``class?room=CODE`` (everyone: a student, or the lecturer
whose browser holds the room's credential; the join link and QR code add ``&k=KEY``, which joins
even when the network used up its wrong-code limits), ``class?room=CODE#host=TOKEN`` (a one-time lecturer
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
from classroom.store import CODE_LENGTH, asked_key, default_url
from classroom.tally import (
    answer_text,
    number_text,
    plain,
    right_answer_text,
    rounds,
    summary_rows,
    tally,
    to_csv,
    vote_rows,
)
from lessons import load_lessons
from lessons.model import Question, grade
from ui.browser import class_ballot, class_link, class_live, trigger_value
from ui.controls import plain as escape
from ui.controls import term_markdown

log = logging.getLogger(__name__)
POLL_SECONDS = 2.0
HOST_POLL_SECONDS = 0.5  # the lecturer's screen: a vote shows within about 0.5 s
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
_GOING = "_class_going"  # (code, time): the room this page just joined or started
_HELLO_NOW = "_class_hello_now"  # this run carries the browser's hello
GOING_SECONDS = 30.0  # how long a rerun sent before the browser saw the room's address is mended
_SEEN = "_class_seen"  # when this phone last noted its presence
_SHOWN = "_class_shown"  # (code, question, variant, phase) last drawn: announce a change
_SAID = "_class_said"  # counter for announcement ids
_VOTED = "_class_voted"  # (count, time) the lecturer last heard
_NOTICE = "_class_notice"  # a message from a button's callback
_OUTAGE = "_class_outage"  # the last poll found the database not answering
_NEW_LINK = "_class_new_link"  # (code, token) of the lecturer link just made
_COUNTED = "_class_counted"  # wrong codes this session already counted (a rerun counts none again)
_POLLS = "_class_polls"  # the lecturer's poll count: the projector notices when it stops

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
  /* The countdown, readable from the back of a hall. */
  .st-key-class-host .st-key-class-countdown [data-testid="stMarkdownContainer"] p {
    font-size: 2.6rem !important; font-weight: 700; line-height: 1.1; margin: 0; }
  .st-key-class-countdown strong { font-variant-numeric: tabular-nums; }
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
    if ss.pop(_HELLO_NOW, False) and not code_text:
        code_text = _still_going()
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
    known = code in ss.get(_ROOMS, {}) or code in ss.get(_HOSTS, {})  # this page has the room open
    try:
        refusal = "" if known else s.code_refusal(address, _device())
        if refusal and s.key_opens(code, st.query_params.get("k", "")):
            refusal = ""  # the join link (or QR code) with its key: it always joins
        if refusal:
            st.title("Live class", anchor=False)
            st.error(f"Too many wrong room codes: {refusal}.")
            landing(s)
            return
        room = s.room(code_text)
    except RoomError as exc:
        st.title("Live class", anchor=False)
        _count_wrong_code(s, address, code_text)
        st.error(f"Room {_literal(_short(code_text))}: {exc}. Check the code on the lecturer's screen.")
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


def _going(code: str) -> None:
    """Open ``code``'s room on this page (after a join or a start), and remember it for a moment."""
    st.session_state[_GOING] = (code, time.monotonic())
    st.query_params.from_dict({"room": code})
    st.rerun()


def _still_going() -> str:
    """The room this page joined or started a moment ago, for the browser's hello that comes
    without it ("" if none).

    The browser sends each rerun with the address it shows. Its hello, sent before it saw the
    room's address (a slow phone, Join pressed at once), would otherwise replace the join's own
    rerun (Streamlit keeps the newer query string when it folds two reruns into one) and land the
    student back on the form. Only the hello's run is mended, once and within ``GOING_SECONDS``:
    a run the reader starts without the room (a link, the back button) is the reader leaving."""
    going = st.session_state.pop(_GOING, None)
    if not going or time.monotonic() - going[1] > GOING_SECONDS:
        return ""
    st.query_params.from_dict({"room": going[0]})
    return going[0]


def _on_hello() -> None:
    """The browser's hello (once per page session): its voter id, its lecturer credential for this
    room, a one-time lecturer link taken out of the address, and votes not yet heard back about."""
    value = trigger_value(LINK_KEY, "hello")
    if not isinstance(value, dict) or not valid_voter(value.get("voter")):
        return
    st.session_state[_HELLO_NOW] = True
    before = st.session_state.get(_HELLO)
    # A page session keeps the voter id of its first hello: a socket that says hello again with
    # other ids is one voter, not thirty.
    voter = before["voter"] if before else value["voter"]
    host, link, lecturer = value.get("host"), value.get("link"), value.get("lecturer")
    st.session_state[_HELLO] = {
        "voter": voter,
        "host": host if _token_like(host) else None,
        "link": link if _token_like(link) else None,
        "lecturer": lecturer
        if isinstance(lecturer, dict)
        and normalise_code(lecturer.get("code"))
        and _token_like(lecturer.get("cred"))
        else None,
    }
    pending = value.get("pending")
    if isinstance(pending, list):
        st.session_state.setdefault(_INBOX, []).extend(pending[:20])


def _token_like(value: Any) -> bool:
    """Whether ``value`` has the shape of a credential or link token the browser keeps (what
    ``secrets.token_urlsafe`` makes); anything else is ignored, never looked up."""
    return isinstance(value, str) and 0 < len(value) <= 128 and value.isascii() and value.isprintable()


def _device() -> str:
    """What a per-device limit counts: this browser's voter id, or this page session's id before
    the browser has said hello (a script that never does gets a new one per session)."""
    ss = st.session_state
    hello = ss.get(_HELLO) or {}
    return f"v:{hello['voter']}" if hello.get("voter") else f"s:{ss.get(_SID, '')}"


def _claim_links(s: Store, code: str) -> None:
    """Exchange a one-time lecturer link for this browser's credential: the token after ``#``
    (in the hello) or, from older links, ``host=`` in the query, which is dropped from the address."""
    ss = st.session_state
    legacy = st.query_params.get("host", "")
    if legacy:
        del st.query_params["host"]
    tokens = [t for t in (legacy, (ss.get(_HELLO) or {}).get("link")) if t]
    for token in [t for t in tokens if not _token_like(t)]:
        tokens.remove(token)
        if token not in ss.setdefault(_LINKS, set()):
            ss[_LINKS].add(token)
            ss[_NOTICE] = (
                "That lecturer link does not control this room: it has characters no link of ours has."
            )
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


def _count_wrong_code(s: Store, address: str, text: str) -> None:
    """Count a wrong code once per page session and text: a rerun of the same wrong link (the
    browser's hello reruns the page) is not a second guess."""
    counted = st.session_state.setdefault(_COUNTED, set())
    if text in counted:
        return
    counted.add(text)
    with contextlib.suppress(StoreUnavailable):
        s.wrong_code(address, _device())


def _literal(text: str) -> str:
    """A typed value shown back inside a message, exactly as typed: in a code span, where neither
    Markdown, HTML, emoji shortcodes (``:skull:``) nor colour directives (``:red[x]``) take effect."""
    import re

    text = " ".join(text.split())
    if not text:
        return "(empty)"
    fence = "`" * (max((len(run) for run in re.findall(r"`+", text)), default=0) + 1)
    return f"{fence} {text} {fence}" if "`" in text else f"{fence}{text}{fence}"


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
        refusal = s.code_refusal(address, _device())
        if refusal:
            st.error(f"Too many wrong room codes: {refusal}.")
            return
        room = s.room(typed)
    except RoomError:
        _count_wrong_code(s, address, typed.strip())
        shown = _literal(_short(typed.strip()))
        st.error(f"No live room has the code {shown}. Codes are {CODE_LENGTH} characters.")
        return
    except StoreUnavailable:
        st.error(f"{OUTAGE}: try again in a moment.")
        return
    _going(room.code)


def _is_lecturer(s: Store) -> bool:
    """Whether this browser holds a working lecturer credential for some live room (one it
    started or opened by a lecturer link): such a browser is never stopped by the rooms other
    people on its network started."""
    ss = st.session_state
    held = list(ss.get(_HOSTS, {}).items())
    kept = (ss.get(_HELLO) or {}).get("lecturer")
    if kept:
        held.append((kept["code"], kept["cred"]))
    for code, credential in held[-3:]:
        with contextlib.suppress(RoomError):
            if s.is_host(code, credential):
                return True
    return False


def _start(s: Store, lesson_id: str, ask_confidence: bool) -> None:
    address, device = _address(), _device()
    try:
        refusal = s.start_refusal(address, device, lecturer=_is_lecturer(s))
        if refusal:
            st.error(f"Too many rooms started: {refusal}. A room you started is in this browser's history.")
            return
        room = s.create_room(lesson_id, ask_confidence=ask_confidence)
        s.room_started(address, device)
    except RoomError as exc:
        st.error(f"Could not start a room: {exc}.")
        return
    except StoreUnavailable:
        st.error(f"Could not start a room: {OUTAGE.lower()}. Try again in a moment.")
        return
    st.session_state.setdefault(_HOSTS, {})[room.code] = room.host_token
    _going(room.code)


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


def join_link(code: str, key: str = "") -> str:
    """The address students open: ``<base>/class?room=CODE&k=KEY`` (relative if the base is
    unknown); the key lets the link join even when the network used up its wrong-code limits."""
    base, _ = public_base()
    query = f"room={code}" + (f"&k={key}" if key else "")
    return f"{base}/class?{query}" if base else f"class?{query}"


def host_view(s: Store, room: Room, credential: str) -> None:
    if st.query_params.get("record") == "1":
        st.title("Live class: the record", anchor=False)
        _record(s, room, credential)
        return
    link = join_link(room.code, room.join_key)
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
    shown = _shape(room)
    with main, st.container(key="class-host"):
        with st.container(key="class-title"):  # the page's h1 first, for screen readers only
            st.title(f"Live class, room {room.code}", anchor=False)
        if room.ended:  # nothing changes any more: the record is drawn once, not polled
            _ended(s, room, credential)
        else:
            _host_live(s, room.code, credential, shown)
    if room.phase == "revealed":
        _step_view(room)


def _shape(room: Room) -> tuple[Any, ...]:
    """What, when it changes, redraws the whole lecturer page (not just its poll): the question,
    its asking, whether the answer is out, whether the class ended."""
    return (room.question_id, room.variant, room.position, room.phase == "revealed", room.ended)


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
            help="Every vote: the answer as typed and as read, the right answer, right or not, how sure.",
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
            "Discard this round",
            on_click=_act,
            args=(s.discard_round, room.code, credential),
            disabled=room.phase in ("revealed", "ended"),
            help="Deletes this round's votes (a script's, or a false start) and opens the round again.",
        )
        st.toggle(
            "Phones show the class's spread after results",
            value=room.show_spread,
            key=f"class-spread-{room.code}",
            on_change=lambda: _act(
                s.set_show_spread,
                room.code,
                credential,
                bool(st.session_state.get(f"class-spread-{room.code}")),
            ),
            help="Once you show results, each phone shows how the class voted (the answer stays hidden).",
        )
        st.divider()
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
    """Every vote as a row: the answer as typed and as read, the right answer, its grade."""
    try:
        room = s.room(code)
        return to_csv(vote_rows(_askings(room), s.ballots(code)))
    except (RoomError, StoreUnavailable) as exc:
        return f"error\n{exc}\n"


def _askings(room: Room) -> list[tuple[int, Question, str]]:
    """(asking, question, variant) for every time the room asked a question, in order (the
    position of each in ``Room.asked``)."""
    out = []
    for asking, key in enumerate(room.asked or (asked_key(room.question_id, room.variant),)):
        question_id, variant = key.split("|", 1)
        question = course.question(room.lesson_id, question_id, variant)
        if question is not None:
            out.append((asking, question, variant))
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


def _host_poll(s: Store, code: str, credential: str, shown: tuple[Any, ...]) -> None:
    ss = st.session_state
    ss[_POLLS] = ss.get(_POLLS, 0) + 1
    try:
        room = s.room(code)
        # The credential is checked every POLL_SECONDS, not on every fast poll.
        if time.monotonic() - ss.get("_class_host_checked", -1e9) >= POLL_SECONDS:
            if not s.is_host(code, credential):
                _forget_host(code)
                st.rerun(scope="app")
            ss["_class_host_checked"] = time.monotonic()
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
        class_live(key=LIVE_KEY, announce=None, focus=None, beat=ss[_POLLS])
        return
    ss.setdefault(_ROOMS, {})[code] = room
    if ss.pop(_OUTAGE, False) or _shape(room) != shown:
        st.rerun(scope="app")  # back from an outage, or the question, the reveal or the round changed
    if ss.get(_NOTICE):
        st.warning(ss.pop(_NOTICE))
    if room.ended:
        _ended(s, room, credential)
        return
    question = course.question(room.lesson_id, room.question_id, room.variant)
    if question is None:
        st.error("This room's question is no longer in the course.")
        return
    asking = room.position
    try:
        first = s.counts(code, question.id, 1, room.variant, asking=asking)
        second = s.counts(code, question.id, 2, room.variant, asking=asking) if room.round == 2 else {}
        joined = s.joined(code)
        unseen = s.unseen_voters(code, question.id, room.round, room.variant, asking)
        sure: tuple[Any, Any] = (None, None)
        if room.phase == "revealed" and room.ask_confidence:
            sure = (
                s.confidence(code, question.id, 1, room.variant, asking=asking),
                s.confidence(code, question.id, 2, room.variant, asking=asking),
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
    with st.container(key="class-phase"):
        st.caption(f"Question {number} of {len(lesson_questions)} · {PHASE_WORDS[room.phase]}")
    if left is not None:
        with st.container(key="class-countdown"):
            st.markdown(f"Voting closes in **{int(left) // 60}:{int(left) % 60:02d}**")
    st.markdown(f"## {term_markdown(question.prompt)}")
    results = room.phase in ("results", "revote-results", "revealed") and bool(first or second)
    if not results:
        _options(question)
    with st.container(horizontal=True, vertical_alignment="center", gap="medium", key="class-controls"):
        _host_controls(s, room, question, credential)
        st.space("stretch")
        st.metric("Joined", joined, help="phones that had the room open in the last minute", width="content")
        st.metric("Voted", f"{voted} of {of}", help="votes in this round", width="content")
    if unseen:
        st.warning(
            f"{unseen} {'vote' if unseen == 1 else 'votes'} in this round from voter ids that never joined "
            "the room (a script, or one phone switching ids): Lecturer tools › Discard this round."
        )
    if room.phase == "revealed":
        if results:
            _results(question, first, second if room.round == 2 else None, True, sure)
        else:
            _reveal(question, short=True)
        st.markdown(term_markdown(question.explanation))
    elif results:
        _results(
            question, first, second if room.phase != "results" and room.round == 2 else None, False, sure
        )
    _lecturer_announcements(room, voted, of)


@st.fragment(run_every=HOST_POLL_SECONDS)
@_in_words
def _host_live(s: Store, code: str, credential: str, shown: tuple[Any, ...]) -> None:
    """The lecturer's screen, polled every HOST_POLL_SECONDS: a vote shows within about that
    (the 2 s poll set the tally's lag before)."""
    _host_poll(s, code, credential, shown)


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
        one, two = rounds(question, first, second, sure, revealed=revealed)
    else:
        one, two = tally(question, first, confidence=sure[0], revealed=revealed), None
    if revealed:  # the answer and the share right first, in one line: above a projector's fold
        cells = [f"First vote: **{one.share_right:.0%}** right ({one.correct} of {one.total})"]
        if two is not None and two.total:
            cells.append(f"Revote: **{two.share_right:.0%}** right ({two.correct} of {two.total})")
        with st.container(key="class-headline"):
            st.success(f"**The answer: {_answer_words(question)}** · " + " · ".join(cells))
    labels = list(one.labels)
    if revealed and one.answer_row is not None and question.is_numeric:  # the marked row says the shares
        shares = [f"{one.share_right:.0%}"]
        if two is not None and two.total:
            shares.append(f"{two.share_right:.0%}")
        marked = labels[one.answer_row].removesuffix(" (the answer)")  # the ✓ marks it
        labels[one.answer_row] = f"{marked} · {' → '.join(shares)} right"
    spec = votes_figure(
        tuple(labels),
        one.votes,
        two.votes if two else None,
        right=one.right if revealed else None,
        question="" if revealed else "each answer's votes (the answer stays hidden until you reveal it)",
        sure=(one.sure or None, two.sure if two else None) if revealed else None,
        compact=True,
    )
    _draw_votes(spec, one, two, titled=not revealed)  # revealed: the headline above says it


def _answer_words(question: Question) -> str:
    """The right answer as Markdown: the number ± its tolerance, or the option's text."""
    if question.is_numeric:
        return escape(right_answer_text(question))
    return term_markdown(question.options[int(question.answer)].text)


PROJECTOR_CHART_PX = 300  # the vote chart's most height in presenter view: it stays above a 720 px fold


def _draw_votes(spec: dict[str, Any], one: Any, two: Any, *, titled: bool = True) -> None:
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
        # the labels' lines grow with the font; many rows get thinner bars, not a chart below the fold
        spec["layout"]["height"] = min(round(height * PRESENTER_SCALE), PROJECTOR_CHART_PX)
        spec["layout"]["uniformtext"] = {"mode": "show", "minsize": 11}  # counts stay readable
    spec = for_theme(spec, theme_scheme())
    if titled:
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
    class_live(key=LIVE_KEY, announce=announce, focus=focus, beat=ss.get(_POLLS, 0))


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
        st.session_state.pop(_GOING, None)
        st.query_params.clear()
        st.rerun(scope="app")


def _record(s: Store, room: Room, credential: str, heading: bool = True) -> None:
    """The room's record: each asking of a question, its votes per answer (a number question's
    as revealed: the answer's own row and the distances) in each round, the share right and how
    sure voters were, then every raw answer with its grade and the right answer; printable (the
    sidebar and buttons do not print)."""
    import pandas as pd

    askings = _askings(room)
    try:
        ballots = s.ballots(room.code)
    except StoreUnavailable:
        st.warning(f"{OUTAGE}: the record cannot be read now. Reload this page in a minute.")
        return
    rows, raw = summary_rows(askings, ballots), vote_rows(askings, ballots)
    if heading:
        st.caption(f"Room {room.code} · lesson {room.lesson_id} · printed from the Live class page")
    if not rows:
        st.info("No votes yet.")
    by_number: dict[int, Question] = {}
    for asking, question, _variant in askings:
        if any(b[0] == asking for b in ballots):
            by_number[len(by_number) + 1] = question
    for number, question in by_number.items():
        mine = [r for r in rows if r["question"] == number]
        votes_of = [r for r in raw if r["question"] == number]
        st.markdown(f"**{number}. {term_markdown(question.prompt)}**")
        st.caption(f"Right answer: {escape(right_answer_text(question))}")
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
        st.dataframe(
            pd.DataFrame(
                {
                    "Round": [r["round"] for r in votes_of],
                    "Typed": [r["answer_typed"] or "—" for r in votes_of],
                    "Read as": [r["answer"] for r in votes_of],
                    "Right": [r["right"] for r in votes_of],
                    "Sure": [r["confidence"] or "—" for r in votes_of],
                }
            ),
            hide_index=True,
            width="stretch",
            key=f"class-raw-{number}",
        )
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
            ballot = Ballot.from_payload(payload, received_at=s.clock())
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
    # Votes first, then presence: a vote pressed before a countdown ended and kept through an
    # outage is checked against when the server last saw this phone before it (Store.vote). A
    # phone notes its presence on its first run, before it can show a ballot, so a vote from an
    # id that never did is flagged on the projector.
    outbox = _deliver_inbox(s, voter)
    outage = False
    try:
        if time.monotonic() - ss.get(_SEEN, -1e9) >= PRESENCE_EVERY_S and s.seen(code, voter):
            ss[_SEEN] = time.monotonic()
        room = s.room(code)
        ss.setdefault(_ROOMS, {})[code] = room
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
            mine = s.my_vote(code, voter, question.id, room.round, room.variant, asking=room.position)
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
    if room.show_spread and not outage and room.phase in ("results", "revote-results", "revealed"):
        _class_spread(s, room, question)


def _class_spread(s: Store, room: Room, question: Question) -> None:
    """The class's votes on a phone, once the lecturer shows results and has chosen to share them
    (the answer marked only after the reveal)."""
    try:
        first = s.counts(room.code, question.id, 1, room.variant, asking=room.position)
        second = s.counts(room.code, question.id, 2, room.variant, asking=room.position)
    except StoreUnavailable:
        return
    if not (first or second):
        return
    st.markdown("**How the class voted**")
    both = room.round == 2 and room.phase != "results"
    _results(question, first, second if both else None, room.phase == "revealed", (None, None))


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
            "key": f"{room.code}|{question.id}|{room.variant}|{room.position}|{room.round}",
            "code": room.code,
            "question": question.id,
            "variant": room.variant,
            "round": room.round,
            "asking": room.position,
            "kind": "number" if question.is_numeric else "choice",
            "label": f"Your answer ({question.unit})"
            if question.is_numeric and question.unit
            else "Your answer",
            "unit": question.unit if question.unit not in ("x", "count") else "",
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
        return {
            "kind": "warning",
            "text": f"Your vote waits: {latest.detail}." if latest.detail else MESSAGES[WAITING],
        }
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
        asking = room.position
        last = (
            s.my_vote(room.code, voter, question.id, 2, room.variant, asking=asking)
            if room.round == 2
            else None
        )
        first = s.my_vote(room.code, voter, question.id, 1, room.variant, asking=asking)
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
    return answer_text(question, stored)


def _variant_key(question: Question) -> str:
    """The key a room stores for a variant ("" for the lesson's own numbers)."""
    return question.variant_key if question.variant_index else ""
