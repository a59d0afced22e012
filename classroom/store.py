"""Rooms, rounds and votes on SQLAlchemy Core: one code path for SQLite and PostgreSQL.

A room follows one lesson's questions, paced by its host (the lecturer), through the
peer-instruction loop: vote alone → results (the answer still hidden) → revote → reveal → next.
Every change bumps the room's ``version``, so a page that polls only that number knows when to
redraw. A vote is one row keyed by (room, question, variant, round, voter), written as an upsert:
voting again replaces the vote, a retried vote lands once, and two replicas sharing one database
count every vote once.

The lecturer's control is a credential each lecturer browser keeps (only its SHA-256 is stored,
compared in constant time). A lecturer *link*, for opening control on another screen, is a
one-time token: opening it exchanges it for that browser's own credential, and a new link
replaces the old one.

Every read and write goes through one guard (``_connect``): a database that does not answer
becomes ``StoreUnavailable`` within about a second, with nothing of the server's internals in
its message.

Nothing here stores a name or anything personal: a voter is a random id the voter's browser
makes; rate limits keep a count per client address and time window, nothing else.
"""

from __future__ import annotations

import contextlib
import hashlib
import ipaddress
import math
import os
import secrets
import socket
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import sqlalchemy as sa
from sqlalchemy.engine import Connection, Engine

from classroom.numbers import NumberError, read_number

# A join code: 6 characters from an alphabet without look-alikes (no 0/O, 1/I/L, 2/Z, 5/S, 8/B),
# 25 characters → 25⁶ ≈ 244 million codes; with wrong guesses limited per client address
# (WRONG_CODES_ADDRESS) finding a live room by guessing takes years (``years_to_find_a_room``).
CODE_ALPHABET = "ACDEFGHJKMNPQRTUVWXY34679"
CODE_LENGTH = 6
ROOM_HOURS = 12.0  # a room expires this long after it was last used
PHASES = ("voting", "results", "revoting", "revote-results", "revealed", "ended")
OPEN_PHASES = ("voting", "revoting")
CLOSES_TO = {"voting": "results", "revoting": "revote-results"}  # what a countdown ends in
MAX_ID = 64  # longest question id, lesson id or voter id accepted
MAX_VARIANT = 512
NUMBER_RANGE = 1_000.0  # a numeric vote beyond ±1000 × the answer (or ±10⁶) is refused as noise
CONFIDENCE = ("sure", "unsure")
MAX_COUNTDOWN_S = 600.0
PRESENCE_S = 60.0  # "joined": phones that opened the room within this many seconds

# Rate limits, kept in the store so a reload, a new tab or another replica shares them: (requests
# allowed, window in seconds). Behind one campus NAT a whole class shares an address, so a limit
# per address is never what stops one student: each device (the voter id its browser keeps) has
# its own, smaller limit, and the address's limits are far above what a class's typos reach.
WRONG_CODES = (10, 60.0)  # wrong room codes from one device
WRONG_CODES_ADDRESS = ((40, 60.0), (120, 3600.0))  # wrong codes from one address: a minute, an hour
NEW_ROOMS = (20, 3600.0)  # rooms started by one device
NEW_ROOMS_ADDRESS = (200, 3600.0)  # by one address (a browser that holds a lecturer credential: exempt)
NEW_VOTERS = (100, 60.0)  # new voter ids in one room per minute (beyond: the vote waits and is resent)
LATE_GRACE_S = 600.0  # a vote pressed before its countdown ended counts if it arrives within this

CONNECT_TIMEOUT_S = 1.0  # reaching the database server's port
UNAVAILABLE = "the class's database is not answering"

metadata = sa.MetaData()
rooms = sa.Table(
    "gfg_rooms",
    metadata,
    sa.Column("code", sa.String(16), primary_key=True),
    # The current one-time lecturer link's hash ("" when none is open). Rooms made before the
    # credentials table hold their old host token's hash here: it still opens once.
    sa.Column("host_hash", sa.String(64), nullable=False),
    sa.Column("lesson_id", sa.String(MAX_ID), nullable=False),
    sa.Column("question_id", sa.String(MAX_ID), nullable=False),
    sa.Column("variant", sa.String(MAX_VARIANT), nullable=False, default=""),
    sa.Column("position", sa.Integer, nullable=False, default=0),  # how many questions came before
    sa.Column("phase", sa.String(16), nullable=False),
    sa.Column("version", sa.Integer, nullable=False, default=1),
    sa.Column("created", sa.Float, nullable=False),
    sa.Column("touched", sa.Float, nullable=False),
    sa.Column("round", sa.Integer, nullable=False, server_default="1"),  # 2 once a revote opened
    sa.Column("closes_at", sa.Float, nullable=True),  # a countdown's end (epoch seconds)
    sa.Column("asked", sa.Text, nullable=False, server_default=""),  # "question|variant" lines
    sa.Column("ask_confidence", sa.Boolean, nullable=False, server_default=sa.true()),
    sa.Column("show_spread", sa.Boolean, nullable=False, server_default=sa.false()),
    # The join link's key (``&k=``): a link that carries it opens the room even when the address
    # has used up its wrong-code limits (a script on the same campus NAT); "" for older rooms.
    sa.Column("join_key", sa.String(24), nullable=False, server_default=""),
)
votes = sa.Table(
    "gfg_votes",
    metadata,
    sa.Column("code", sa.String(16), primary_key=True),
    sa.Column("question_id", sa.String(MAX_ID), primary_key=True),
    sa.Column("variant", sa.String(MAX_VARIANT), primary_key=True),
    sa.Column("round", sa.Integer, primary_key=True),
    sa.Column("voter", sa.String(MAX_ID), primary_key=True),
    sa.Column("answer", sa.String(64), nullable=False),
    sa.Column("at", sa.Float, nullable=False),
    sa.Column("confidence", sa.String(8), nullable=True),  # "sure", "unsure" or not given
    sa.Column("typed", sa.String(64), nullable=True),  # a number vote as the student typed it
)
sa.Index("gfg_votes_by_round", votes.c.code, votes.c.question_id, votes.c.round)
hosts = sa.Table(  # one row per lecturer browser: the hash of the credential it keeps
    "gfg_hosts",
    metadata,
    sa.Column("code", sa.String(16), primary_key=True),
    sa.Column("credential_hash", sa.String(64), primary_key=True),
    sa.Column("created", sa.Float, nullable=False),
)
presence = sa.Table(  # when each phone last had the room open ("joined")
    "gfg_presence",
    metadata,
    sa.Column("code", sa.String(16), primary_key=True),
    sa.Column("voter", sa.String(MAX_ID), primary_key=True),
    sa.Column("seen", sa.Float, nullable=False),
)
limits = sa.Table(  # requests per client address and fixed time window
    "gfg_limits",
    metadata,
    sa.Column("kind", sa.String(16), primary_key=True),
    sa.Column("address", sa.String(64), primary_key=True),
    sa.Column("window", sa.Integer, primary_key=True),
    sa.Column("hits", sa.Integer, nullable=False),
    sa.Column("expires", sa.Float, nullable=False),  # when the window is over and can go
)


class RoomError(ValueError):
    """A request the room refuses: unknown or expired code, no lecturer control, a vote out of
    phase or out of range. The message is safe to show."""


class VoteTooLate(RoomError):
    """A vote for a round that has closed (or a question the lecturer has moved on from)."""


class VoteWaits(RoomError):
    """A vote the room cannot take this minute (too many new phones at once): kept on the phone
    and sent again, as through an outage."""


class StoreUnavailable(RuntimeError):
    """The database cannot be reached; the message says so without internals."""


@dataclass(frozen=True)
class Room:
    """A room as a student may see it, plus ``host_token`` (a lecturer credential) only on the
    object ``create_room`` returns (the store keeps just its hash)."""

    code: str
    lesson_id: str
    question_id: str
    variant: str  # the question's variant key ("" for the lesson's own numbers)
    position: int  # 0 for the first question asked, 1 for the next, …
    phase: str
    version: int
    created: float
    touched: float
    round: int = 1  # 1: the first vote; 2 once a revote was opened on this question
    closes_at: float | None = None  # when an open round's countdown ends
    asked: tuple[str, ...] = ()  # every "question|variant" this room has asked, in order
    ask_confidence: bool = True
    show_spread: bool = False  # phones show the class's spread once results are shown
    join_key: str = ""  # in the join link and QR code, not in the typed code
    host_token: str = ""

    @property
    def accepting_votes(self) -> bool:
        return self.phase in OPEN_PHASES

    @property
    def ended(self) -> bool:
        return self.phase == "ended"

    def seconds_left(self, now: float) -> float | None:
        """Seconds until the countdown closes voting, or None when no countdown runs."""
        if self.closes_at is None or not self.accepting_votes:
            return None
        return max(0.0, self.closes_at - now)

    def asked_variants(self, question_id: str) -> set[str]:
        """The variant keys of ``question_id`` this room has asked ("" for the lesson's own)."""
        return {key.split("|", 1)[1] for key in self.asked if key.split("|", 1)[0] == question_id}


def asked_key(question_id: str, variant: str) -> str:
    return f"{question_id}|{variant}"


def ballot_round(asking: int, round: int) -> int:
    """The ``round`` a vote row stores: each asking of a question (``Room.position``) has its own
    two rounds, so going back to a variant asked before opens a fresh ballot."""
    return 2 * int(asking) + int(round)


def split_round(stored: int) -> tuple[int, int]:
    """(asking, round 1 or 2) of a stored vote row's ``round``."""
    return (int(stored) - 1) // 2, (int(stored) - 1) % 2 + 1


def years_to_find_a_room(live_rooms: int) -> float:
    """Expected years one client address needs to find one of ``live_rooms`` live rooms by
    guessing codes at the most its wrong-code limits allow (the hourly limit, every hour of the
    year): about (codes + 1) / (live rooms + 1) guesses, drawn without repeats."""
    codes = len(CODE_ALPHABET) ** CODE_LENGTH
    per_year = min(allowed * (365.25 * 24 * 3600 / window) for allowed, window in WRONG_CODES_ADDRESS)
    return (codes + 1) / (live_rooms + 1) / per_year


def _hash(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def _clean_id(value: Any, what: str, limit: int = MAX_ID) -> str:
    if not isinstance(value, str) or not value or len(value) > limit or not value.isprintable():
        raise RoomError(f"{what} is not valid")
    return value


def _clean_variant(value: Any) -> str:
    if value == "" or value is None:
        return ""
    return _clean_id(value, "variant", MAX_VARIANT)


def normalise_code(text: Any) -> str:
    """A typed join code in its stored form (upper case, spaces and dashes dropped); "" if it
    cannot be one (wrong length or characters)."""
    if not isinstance(text, str) or len(text) > 4 * CODE_LENGTH:
        return ""
    code = text.strip().upper().replace("-", "").replace(" ", "")
    if len(code) != CODE_LENGTH or any(ch not in CODE_ALPHABET for ch in code):
        return ""
    return code


def check_answer(
    answer: Any, *, options: int = 0, right: float | None = None, non_negative: bool = False
) -> str:
    """A vote as stored: an option index (a question with ``options`` choices) or a finite number
    within ±``NUMBER_RANGE`` × the right answer (±10⁶ when the answer is 0), and not below 0 where
    the quantity cannot be negative (``non_negative``). ``RoomError`` for anything else."""
    if isinstance(answer, bool):
        raise RoomError("a vote is an option or a number")
    if options:
        if isinstance(answer, str) and answer.strip().isascii() and answer.strip().isdigit():
            answer = int(answer.strip())
        if not isinstance(answer, int) or not 0 <= answer < options:
            raise RoomError(f"a vote on this question is one of its {options} options")
        return str(answer)
    if isinstance(answer, str):
        try:
            value = read_number(answer)
        except NumberError as exc:
            raise RoomError(str(exc)) from exc
    elif isinstance(answer, int | float):
        value = float(answer)
    else:
        raise RoomError("a vote on this question is a number")
    limit = NUMBER_RANGE * abs(right) if right else 1e6
    if not math.isfinite(value) or abs(value) > limit:
        raise RoomError("that number is out of range for this question")
    if non_negative and value < 0:
        raise RoomError("this quantity cannot be negative")
    return repr(value)


def check_confidence(value: Any) -> str | None:
    """ "sure", "unsure" or None (not given); ``RoomError`` for anything else."""
    if value is None or value == "":
        return None
    if value not in CONFIDENCE:
        raise RoomError("confidence is sure or unsure")
    return value


def client_address(peer: str | None, forwarded_for: str | None, trusted: frozenset[str] | None = None) -> str:
    """The address a rate limit counts: the peer of the connection, or, when that peer is a proxy
    we run (loopback, or listed in ``GFG_TRUSTED_PROXIES``), the address that proxy put last in
    ``X-Forwarded-For`` (nginx's ``$proxy_add_x_forwarded_for`` appends the address it saw, so
    earlier entries are whatever the client sent and are ignored). IPv6 addresses count per /64."""
    trusted = trusted if trusted is not None else trusted_proxies()
    address = (peer or "127.0.0.1").strip()
    if _is_trusted(address, trusted) and forwarded_for:
        last = forwarded_for.split(",")[-1].strip()
        if last:
            address = last
    try:
        ip = ipaddress.ip_address(address)
    except ValueError:
        return address[:64]
    if ip.version == 6 and not ip.is_loopback:
        return str(ipaddress.ip_network(f"{ip}/64", strict=False))
    return str(ip)


def trusted_proxies() -> frozenset[str]:
    """Proxy addresses whose ``X-Forwarded-For`` is believed: loopback always, plus the
    comma-separated ``GFG_TRUSTED_PROXIES`` (e.g. the address nginx reaches a container from)."""
    extra = os.environ.get("GFG_TRUSTED_PROXIES", "")
    return frozenset({"127.0.0.1", "::1", *(a.strip() for a in extra.split(",") if a.strip())})


def _is_trusted(address: str, trusted: frozenset[str]) -> bool:
    if address in trusted:
        return True
    try:
        return ipaddress.ip_address(address).is_loopback
    except ValueError:
        return False


class Store:
    """Rooms and votes in one database (``open_store`` makes one)."""

    def __init__(
        self,
        engine: Engine,
        *,
        room_hours: float = ROOM_HOURS,
        clock: Callable[[], float] = time.time,
        connect: bool = True,
    ):
        self.engine = engine
        self.room_hours = room_hours
        self.clock = clock
        self._lock = threading.Lock()  # SQLite serialises writers; this keeps one process polite
        self._ready = False
        if connect:
            self._ensure_tables()

    @property
    def dialect(self) -> str:
        return self.engine.dialect.name

    # -- the one guard every read and write goes through ----------------------------------------

    @contextlib.contextmanager
    def _connect(self, write: bool = False) -> Iterator[Connection]:
        """A connection (a transaction when ``write``); any failure to reach or keep the
        database becomes ``StoreUnavailable``. Creates the tables on first success."""
        if not self._ready:
            self._ensure_tables()
        lock = self._lock if write and self.dialect == "sqlite" else None
        if lock is not None and not lock.acquire(timeout=10):
            raise StoreUnavailable(UNAVAILABLE)
        try:
            with self.engine.begin() if write else self.engine.connect() as conn:
                yield conn
        except _UNREACHABLE as exc:
            raise StoreUnavailable(UNAVAILABLE) from exc
        except sa.exc.DBAPIError as exc:
            if exc.connection_invalidated:
                raise StoreUnavailable(UNAVAILABLE) from exc
            raise
        finally:
            if lock is not None:
                lock.release()

    def _ensure_tables(self) -> None:
        try:
            with self.engine.begin() as conn:
                metadata.create_all(conn)
                _add_missing_columns(conn)
        except (*_UNREACHABLE, sa.exc.DBAPIError) as exc:
            raise StoreUnavailable(UNAVAILABLE) from exc
        self._ready = True

    # -- rooms ---------------------------------------------------------------------------------

    def create_room(
        self, lesson_id: str, question_id: str = "", variant: str = "", *, ask_confidence: bool = True
    ) -> Room:
        """A new room on ``lesson_id``, its first question (or ``question_id``) open for voting at
        once. The returned ``Room`` carries ``host_token``: the lecturer credential of the browser
        that started it."""
        from classroom import course

        lesson_id = _clean_id(lesson_id, "lesson id")
        variant = _clean_variant(variant)
        asked = course.room_questions(lesson_id)
        if not asked:
            raise RoomError("that lesson has no questions to ask")
        question_id = question_id or asked[0].id
        if course.question(lesson_id, question_id, variant) is None:
            raise RoomError("that question is not in the lesson")
        self.cleanup()  # expired rooms go when a new one starts: no scheduler needed
        credential = secrets.token_urlsafe(24)
        now = self.clock()
        for _ in range(20):
            code = "".join(secrets.choice(CODE_ALPHABET) for _ in range(CODE_LENGTH))
            row = {
                "code": code,
                "host_hash": "",
                "lesson_id": lesson_id,
                "question_id": question_id,
                "variant": variant,
                "position": 0,
                "phase": "voting",
                "version": 1,
                "created": now,
                "touched": now,
                "round": 1,
                "closes_at": None,
                "asked": asked_key(question_id, variant),
                "ask_confidence": bool(ask_confidence),
                "join_key": secrets.token_urlsafe(6),
            }
            try:
                with self._connect(write=True) as conn:
                    conn.execute(rooms.insert().values(**row))
                    conn.execute(
                        hosts.insert().values(code=code, credential_hash=_hash(credential), created=now)
                    )
            except sa.exc.IntegrityError:
                continue  # that code is taken: draw another
            return _room(row, host_token=credential)
        raise RoomError("could not find a free join code; try again")

    def room(self, code: str) -> Room:
        """The live room with this code; ``RoomError`` if there is none (or it has expired). An
        open round whose countdown has run out is closed here, by whichever reader sees it first."""
        code = normalise_code(code)
        if not code:
            raise RoomError("that is not a room code")
        with self._connect() as conn:
            row = conn.execute(sa.select(rooms).where(rooms.c.code == code)).mappings().first()
        if row is None or self._expired(row["touched"]):
            raise RoomError("no live room has that code")
        room = _room(row)
        if room.accepting_votes and room.closes_at is not None and self.clock() >= room.closes_at:
            with self._connect(write=True) as conn:
                conn.execute(
                    rooms.update()
                    .where(rooms.c.code == code, rooms.c.phase == room.phase, rooms.c.version == room.version)
                    # closes_at stays: a vote pressed before it, arriving late, is checked against it
                    .values(phase=CLOSES_TO[room.phase], version=rooms.c.version + 1)
                )
            return self.room(code)
        return room

    def version(self, code: str) -> int:
        """The room's version number (changes whenever its question or phase does); 0 if gone."""
        with self._connect() as conn:
            row = conn.execute(
                sa.select(rooms.c.version, rooms.c.touched).where(rooms.c.code == normalise_code(code))
            ).first()
        if row is None or self._expired(row.touched):
            return 0
        return int(row.version)

    # -- the lecturer's control ----------------------------------------------------------------

    def is_host(self, code: str, credential: str) -> bool:
        """Whether ``credential`` controls this room (each stored hash compared in constant time)."""
        if not isinstance(credential, str) or not credential or len(credential) > 128:
            return False
        wanted = _hash(credential)
        with self._connect() as conn:
            stored = conn.execute(
                sa.select(hosts.c.credential_hash).where(hosts.c.code == normalise_code(code))
            ).scalars()
            return any([secrets.compare_digest(h, wanted) for h in stored])

    def claim_host(self, code: str, link_token: str) -> str:
        """Exchange a one-time lecturer link for a credential this browser keeps (returned once;
        only its hash is stored). The link stops working. ``RoomError`` for a wrong, used or
        replaced link."""
        code = normalise_code(code)
        if not code or not isinstance(link_token, str) or not link_token or len(link_token) > 128:
            raise RoomError("that lecturer link does not open this room")
        self.room(code)  # a live room
        credential = secrets.token_urlsafe(24)
        with self._connect(write=True) as conn:
            stored = conn.execute(sa.select(rooms.c.host_hash).where(rooms.c.code == code)).scalar() or ""
            if not stored or not secrets.compare_digest(stored, _hash(link_token)):
                raise RoomError("that lecturer link does not open this room (used, replaced or wrong)")
            taken = conn.execute(
                rooms.update().where(rooms.c.code == code, rooms.c.host_hash == stored).values(host_hash="")
            )
            if taken.rowcount != 1:  # another screen opened it at the same moment
                raise RoomError("that lecturer link was just used")
            conn.execute(
                hosts.insert().values(code=code, credential_hash=_hash(credential), created=self.clock())
            )
        return credential

    def new_host_link(self, code: str, credential: str) -> str:
        """A new one-time lecturer link token (host only); the previous link stops working."""
        code = self._check_host(code, credential)
        token = secrets.token_urlsafe(24)
        with self._connect(write=True) as conn:
            conn.execute(rooms.update().where(rooms.c.code == code).values(host_hash=_hash(token)))
        return token

    def sign_out_others(self, code: str, credential: str) -> int:
        """Remove every other lecturer browser's control (and any open link); how many lost it."""
        code = self._check_host(code, credential)
        with self._connect(write=True) as conn:
            conn.execute(rooms.update().where(rooms.c.code == code).values(host_hash=""))
            gone = conn.execute(
                hosts.delete().where(hosts.c.code == code, hosts.c.credential_hash != _hash(credential))
            )
        return int(gone.rowcount or 0)

    def set_phase(self, code: str, credential: str, phase: str, *, countdown_s: float | None = None) -> Room:
        """Move the room to ``phase`` (host only). Opening the revote makes it round 2; an open
        round may carry a countdown (``countdown_s``) after which it closes by itself."""
        if phase not in PHASES or phase == "ended":
            raise RoomError(f"unknown phase {phase!r}")
        values: dict[str, Any] = {"phase": phase, "closes_at": self._closes_at(phase, countdown_s)}
        if phase == "revoting":
            values["round"] = 2
        return self._update(code, credential, **values)

    def start_countdown(self, code: str, credential: str, seconds: float) -> Room:
        """Close the open round in ``seconds`` (host only)."""
        room = self.room(code)
        if not room.accepting_votes:
            raise RoomError("no round is open")
        return self._update(code, credential, closes_at=self._closes_at(room.phase, seconds))

    def next_question(
        self,
        code: str,
        credential: str,
        question_id: str,
        variant: str = "",
        *,
        countdown_s: float | None = None,
    ) -> Room:
        """Ask the next question (host only): voting opens on it at once, round 1."""
        from classroom import course

        question_id = _clean_id(question_id, "question id")
        variant = _clean_variant(variant)
        room = self.room(code)
        if course.question(room.lesson_id, question_id, variant) is None:
            raise RoomError("that question is not in the room's lesson")
        asked = "\n".join([*room.asked, asked_key(question_id, variant)][-500:])
        return self._update(
            code,
            credential,
            question_id=question_id,
            variant=variant,
            position=room.position + 1,
            phase="voting",
            round=1,
            closes_at=self._closes_at("voting", countdown_s),
            asked=asked,
        )

    def end_room(self, code: str, credential: str) -> Room:
        """End the class (host only): no more votes; the record stays readable until it expires."""
        return self._update(code, credential, phase="ended", closes_at=None)

    def _closes_at(self, phase: str, countdown_s: float | None) -> float | None:
        if countdown_s is None or phase not in OPEN_PHASES:
            return None
        if not 0 < float(countdown_s) <= MAX_COUNTDOWN_S:
            raise RoomError(f"a countdown is 1 to {MAX_COUNTDOWN_S:.0f} seconds")
        return self.clock() + float(countdown_s)

    def _check_host(self, code: str, credential: str) -> str:
        code = normalise_code(code)
        if not self.is_host(code, credential):
            raise RoomError("only the room's lecturer can do that")
        return code

    def _update(self, code: str, credential: str, **values: Any) -> Room:
        code = self._check_host(code, credential)
        if self.room(code).ended:
            raise RoomError("this class has ended")
        with self._connect(write=True) as conn:
            conn.execute(
                rooms.update()
                .where(rooms.c.code == code)
                .values(**values, version=rooms.c.version + 1, touched=self.clock())
            )
        return self.room(code)

    # -- votes ---------------------------------------------------------------------------------

    def vote(
        self,
        code: str,
        voter: str,
        answer: Any,
        *,
        question_id: str | None = None,
        variant: str | None = None,
        round: int | None = None,
        confidence: str | None = None,
        asking: int | None = None,
        pressed_at: float | None = None,
    ) -> Room:
        """Record ``voter``'s answer for the room's current question and round, replacing an
        earlier vote of theirs in the same round (so a retried vote counts once). The answer is
        checked against the question (``check_answer``; a number may be typed as the course
        prints it, "270,336", and is kept as typed too). ``VoteTooLate`` when voting is closed,
        or when ``question_id``/``variant``/``round``/``asking`` (what the voter's screen showed)
        is not the open round any more; ``RoomError`` for a vote the question cannot take;
        ``VoteWaits`` when too many new voter ids came to the room this minute.

        A round closed by its countdown still takes a vote pressed before it ended
        (``pressed_at``, on this server's clock) that arrives late, e.g. after a database
        outage: only while the room shows that round's results, within ``LATE_GRACE_S`` of the
        end, and only from a phone this server last saw in the room between the round's last
        change (less ``PRESENCE_S``) and its end, pressed no earlier than that change."""
        from classroom import course

        voter = _clean_id(voter, "voter id")
        confidence = check_confidence(confidence)
        room = self.room(code)
        if question_id is not None and (question_id != room.question_id or (variant or "") != room.variant):
            raise VoteTooLate("the lecturer had moved on to another question")
        if asking is not None and int(asking) != room.position:
            raise VoteTooLate("the lecturer had moved on to another question")
        if round is not None and int(round) != room.round:
            raise VoteTooLate("voting had closed")
        asked = course.question(room.lesson_id, room.question_id, room.variant)
        if asked is None:
            raise RoomError("this room's question is no longer in the course")
        typed = answer.strip()[:64] if isinstance(answer, str) and asked.is_numeric else None
        answer = check_answer(
            answer,
            options=0 if asked.is_numeric else len(asked.options),
            right=float(asked.answer),
            non_negative=course.non_negative(room.lesson_id, room.question_id),
        )
        now = self.clock()
        late = not room.accepting_votes
        if late and not self._late_allowed(room, voter, pressed_at, now):
            raise VoteTooLate("voting had closed")
        row = {
            "code": room.code,
            "question_id": room.question_id,
            "variant": room.variant,
            "round": ballot_round(room.position, room.round),
            "voter": voter,
            "answer": answer,
            "at": now,
            "confidence": confidence if room.ask_confidence else None,
            "typed": typed if typed and typed != answer else None,
        }
        key = ("code", "question_id", "variant", "round", "voter")
        with self._connect(write=True) as conn:
            if self._too_many_new(conn, room.code, voter):
                raise _Waits()
            statement = self._insert(votes).values(**row)
            conn.execute(
                statement.on_conflict_do_update(
                    index_elements=list(key),
                    set_={
                        "answer": statement.excluded.answer,
                        "at": statement.excluded.at,
                        "confidence": statement.excluded.confidence,
                        "typed": statement.excluded.typed,
                    },
                )
            )
            # Only while the round is still open (or, for a late vote, still showing its results):
            # a vote racing the lecturer's next step is not counted.
            still = conn.execute(
                sa.select(
                    rooms.c.phase, rooms.c.round, rooms.c.closes_at, rooms.c.question_id, rooms.c.position
                ).where(rooms.c.code == room.code)
            ).first()
            if (
                still is None
                or still.round != room.round
                or still.question_id != room.question_id
                or still.position != room.position
                or (not late and still.phase not in OPEN_PHASES)
                or (late and still.phase != room.phase)
                or (not late and still.closes_at is not None and now >= still.closes_at)
            ):
                raise _RollBack()
        return room

    def _late_allowed(self, room: Room, voter: str, pressed_at: float | None, now: float) -> bool:
        """Whether a vote arriving after its round closed was pressed in time (``vote``)."""
        closed_to = CLOSES_TO["voting" if room.round == 1 else "revoting"]
        if pressed_at is None or room.closes_at is None or room.phase != closed_to:
            return False
        if (
            not math.isfinite(pressed_at)
            or pressed_at > room.closes_at
            or now > room.closes_at + LATE_GRACE_S
        ):
            return False
        since = room.touched - PRESENCE_S  # the round's last change (the countdown's start), less a poll gap
        if pressed_at < since:
            return False
        with self._connect() as conn:
            seen = conn.execute(
                sa.select(presence.c.seen).where(presence.c.code == room.code, presence.c.voter == voter)
            ).scalar()
        # Seen in the room during the round and not since it closed: a phone that polled after the
        # close would have sent its vote then; one that joined after it cannot have pressed in time.
        return seen is not None and since <= float(seen) <= room.closes_at

    def _too_many_new(self, conn: Connection, code: str, voter: str) -> bool:
        """Whether ``voter`` is a new id in the room beyond ``NEW_VOTERS`` this minute (counted)."""
        if not self._new_voter(conn, code, voter):
            return False
        return self._hit(conn, "voters", code, NEW_VOTERS[1]) > NEW_VOTERS[0]

    def _new_voter(self, conn: Connection, code: str, voter: str) -> bool:
        """Whether ``voter`` is new to the room: never seen in it, never voted in it."""
        known = (
            conn.execute(
                sa.select(presence.c.voter).where(presence.c.code == code, presence.c.voter == voter)
            ).first()
            or conn.execute(
                sa.select(votes.c.voter).where(votes.c.code == code, votes.c.voter == voter).limit(1)
            ).first()
        )
        return known is None

    def _asking(self, code: str, asking: int | None) -> int:
        return self.room(code).position if asking is None else int(asking)

    def counts(
        self,
        code: str,
        question_id: str,
        round: int,
        variant: str | None = None,
        *,
        asking: int | None = None,
    ) -> dict[str, int]:
        """Votes per answer for one question and round of a room (round 1: the first vote, 2: the
        revote) in one asking of it (``Room.position``; None: the room's current one).
        ``variant`` None: every variant's votes together."""
        code = normalise_code(code)
        stored = ballot_round(self._asking(code, asking), round)
        query = (
            sa.select(votes.c.answer, sa.func.count())
            .where(votes.c.code == code, votes.c.question_id == question_id, votes.c.round == stored)
            .group_by(votes.c.answer)
        )
        if variant is not None:
            query = query.where(votes.c.variant == variant)
        with self._connect() as conn:
            return {answer: int(n) for answer, n in conn.execute(query)}

    def unseen_voters(self, code: str, question_id: str, round: int, variant: str, asking: int) -> int:
        """Votes in one round from voter ids that never had the room open (no presence): a
        script, or one phone switching ids. A phone notes its presence before it votes."""
        code = normalise_code(code)
        query = sa.select(sa.func.count()).where(
            votes.c.code == code,
            votes.c.question_id == question_id,
            votes.c.variant == variant,
            votes.c.round == ballot_round(asking, round),
            ~sa.exists().where(presence.c.code == votes.c.code, presence.c.voter == votes.c.voter),
        )
        with self._connect() as conn:
            return int(conn.execute(query).scalar() or 0)

    def confidence(
        self, code: str, question_id: str, round: int, variant: str, *, asking: int | None = None
    ) -> dict[str, dict[str, int]]:
        """For each answer of one round, its votes by confidence ("sure", "unsure", "" for none)."""
        code = normalise_code(code)
        query = (
            sa.select(votes.c.answer, votes.c.confidence, sa.func.count())
            .where(
                votes.c.code == code,
                votes.c.question_id == question_id,
                votes.c.variant == variant,
                votes.c.round == ballot_round(self._asking(code, asking), round),
            )
            .group_by(votes.c.answer, votes.c.confidence)
        )
        out: dict[str, dict[str, int]] = {}
        with self._connect() as conn:
            for answer, level, n in conn.execute(query):
                out.setdefault(answer, {})[level or ""] = int(n)
        return out

    def ballots(self, code: str) -> list[tuple[int, str, str, int, str, str | None, str | None]]:
        """Every vote of the room, one row each: (asking, question, variant, round 1 or 2, answer
        as stored, answer as typed or None, confidence or None), in the order they were cast."""
        query = (
            sa.select(
                votes.c.round,
                votes.c.question_id,
                votes.c.variant,
                votes.c.answer,
                votes.c.typed,
                votes.c.confidence,
            )
            .where(votes.c.code == normalise_code(code))
            .order_by(votes.c.round, votes.c.at, votes.c.voter)
        )
        with self._connect() as conn:
            out = []
            for stored, q, v, answer, typed, level in conn.execute(query):
                asking, r = split_round(stored)
                out.append((asking, q, v, r, answer, typed, level))
            return out

    def my_vote(
        self,
        code: str,
        voter: str,
        question_id: str,
        round: int,
        variant: str = "",
        *,
        asking: int | None = None,
    ) -> str | None:
        """This voter's answer in that round (of the room's current asking, or ``asking``), or None."""
        code = normalise_code(code)
        with self._connect() as conn:
            return conn.execute(
                sa.select(votes.c.answer).where(
                    votes.c.code == code,
                    votes.c.question_id == question_id,
                    votes.c.variant == variant,
                    votes.c.round == ballot_round(self._asking(code, asking), round),
                    votes.c.voter == voter,
                )
            ).scalar()

    def discard_round(self, code: str, credential: str) -> Room:
        """Delete the current round's votes and open it again (host only): a round spoiled by a
        script or a wrong start."""
        code = self._check_host(code, credential)
        room = self.room(code)
        if room.ended:
            raise RoomError("this class has ended")
        if room.phase == "revealed":
            raise RoomError("the answer is out: ask the question again with new numbers instead")
        with self._connect(write=True) as conn:
            conn.execute(
                votes.delete().where(
                    votes.c.code == code,
                    votes.c.question_id == room.question_id,
                    votes.c.variant == room.variant,
                    votes.c.round == ballot_round(room.position, room.round),
                )
            )
        return self._update(
            code, credential, phase="voting" if room.round == 1 else "revoting", closes_at=None
        )

    def set_show_spread(self, code: str, credential: str, show: bool) -> Room:
        """Whether phones show the class's spread once results are shown (host only)."""
        return self._update(code, credential, show_spread=bool(show))

    def voters(self, code: str) -> int:
        """How many different voters have voted in this room so far."""
        with self._connect() as conn:
            return int(
                conn.execute(
                    sa.select(sa.func.count(sa.distinct(votes.c.voter))).where(
                        votes.c.code == normalise_code(code)
                    )
                ).scalar()
                or 0
            )

    # -- who is in the room --------------------------------------------------------------------

    def seen(self, code: str, voter: str) -> bool:
        """Note that ``voter``'s phone has the room open now; False (nothing noted) when it would
        be a new voter id beyond ``NEW_VOTERS`` this minute."""
        voter = _clean_id(voter, "voter id")
        code = normalise_code(code)
        with self._connect(write=True) as conn:
            if self._too_many_new(conn, code, voter):
                return False
            statement = self._insert(presence).values(code=code, voter=voter, seen=self.clock())
            conn.execute(
                statement.on_conflict_do_update(
                    index_elements=["code", "voter"], set_={"seen": statement.excluded.seen}
                )
            )
        return True

    def joined(self, code: str, within_s: float = PRESENCE_S) -> int:
        """Phones that had the room open in the last ``within_s`` seconds."""
        with self._connect() as conn:
            return int(
                conn.execute(
                    sa.select(sa.func.count()).where(
                        presence.c.code == normalise_code(code), presence.c.seen >= self.clock() - within_s
                    )
                ).scalar()
                or 0
            )

    # -- rate limits ---------------------------------------------------------------------------

    def hit(self, kind: str, address: str, window_s: float) -> int:
        """Count one request of ``kind`` from ``address`` in the current window; the count so far
        (this one included). Atomic across replicas: one upsert."""
        with self._connect(write=True) as conn:
            return self._hit(conn, kind, address, window_s)

    def _hit(self, conn: Connection, kind: str, address: str, window_s: float) -> int:
        window = int(self.clock() // window_s)
        expires = (window + 1) * window_s
        statement = self._insert(limits).values(
            kind=kind[:16], address=address[:64], window=window, hits=1, expires=expires
        )
        return int(
            conn.execute(
                statement.on_conflict_do_update(
                    index_elements=["kind", "address", "window"], set_={"hits": limits.c.hits + 1}
                ).returning(limits.c.hits)
            ).scalar()
            or 0
        )

    def hits(self, kind: str, address: str, window_s: float) -> int:
        """Requests of ``kind`` from ``address`` counted in the current window."""
        window = int(self.clock() // window_s)
        with self._connect() as conn:
            return int(
                conn.execute(
                    sa.select(limits.c.hits).where(
                        limits.c.kind == kind[:16],
                        limits.c.address == address[:64],
                        limits.c.window == window,
                    )
                ).scalar()
                or 0
            )

    # -- the limits a class meets: wrong codes and new rooms, per device and per address --------

    def code_refusal(self, address: str, device: str) -> str:
        """Why a code from this device and address is not looked up now ("" when it may be): the
        device typed ``WRONG_CODES`` wrong ones this minute, or the address passed one of
        ``WRONG_CODES_ADDRESS`` (only a script reaches those: a class's typos stay far below).
        A page already showing the room does not ask (its reruns never meet a limit)."""
        if self.hits("code", device, WRONG_CODES[1]) >= WRONG_CODES[0]:
            return f"this phone typed {WRONG_CODES[0]} wrong room codes in a minute: wait a minute"
        for (allowed, window), kind in zip(WRONG_CODES_ADDRESS, ("code-a-min", "code-a-hour"), strict=True):
            if self.hits(kind, address, window) >= allowed:
                span = "minute" if window <= 60 else "hour"
                return (
                    f"your network sent {allowed} wrong room codes this {span}: wait, or open the join link"
                )
        return ""

    def key_opens(self, code: str, key: Any) -> bool:
        """Whether ``key`` is the join key of the live room ``code`` (the join link's ``k``): such
        a link joins whatever the wrong-code limits say, since guessing a code and its key
        together (25⁶ × 2⁴⁸) is out of reach. Anything malformed is simply False."""
        if not isinstance(key, str) or not 0 < len(key) <= 24 or not key.isascii():
            return False
        try:
            room = self.room(code)
        except RoomError:
            return False
        return bool(room.join_key) and secrets.compare_digest(room.join_key, key)

    def wrong_code(self, address: str, device: str) -> None:
        """Count one wrong code against the device and the address."""
        self.hit("code", device, WRONG_CODES[1])
        for (_, window), kind in zip(WRONG_CODES_ADDRESS, ("code-a-min", "code-a-hour"), strict=True):
            self.hit(kind, address, window)

    def start_refusal(self, address: str, device: str, *, lecturer: bool = False) -> str:
        """Why this device may not start a room now ("" when it may): it started ``NEW_ROOMS``
        this hour, or (unless ``lecturer``: the browser holds a working lecturer credential) the
        address started ``NEW_ROOMS_ADDRESS``. Another student's rooms never stop a lecturer."""
        if self.hits("room", device, NEW_ROOMS[1]) >= NEW_ROOMS[0]:
            return f"this browser started {NEW_ROOMS[0]} rooms this hour; reopen one of them"
        if not lecturer and self.hits("room-a", address, NEW_ROOMS_ADDRESS[1]) >= NEW_ROOMS_ADDRESS[0]:
            return f"your network started {NEW_ROOMS_ADDRESS[0]} rooms this hour"
        return ""

    def room_started(self, address: str, device: str) -> None:
        """Count one room started against the device and the address."""
        self.hit("room", device, NEW_ROOMS[1])
        self.hit("room-a", address, NEW_ROOMS_ADDRESS[1])

    # -- housekeeping --------------------------------------------------------------------------

    def cleanup(self) -> int:
        """Delete expired rooms with their votes, lecturer credentials and presence, and finished
        rate-limit windows; the number of rooms deleted."""
        now = self.clock()
        cutoff = now - self.room_hours * 3600
        with self._connect(write=True) as conn:
            old = [r.code for r in conn.execute(sa.select(rooms.c.code).where(rooms.c.touched < cutoff))]
            if old:
                for table in (votes, hosts, presence):
                    conn.execute(table.delete().where(table.c.code.in_(old)))
                conn.execute(rooms.delete().where(rooms.c.code.in_(old)))
            conn.execute(presence.delete().where(presence.c.seen < now - 3600))
            conn.execute(limits.delete().where(limits.c.expires < now))
        return len(old)

    def _expired(self, touched: float) -> bool:
        return self.clock() - touched > self.room_hours * 3600

    def _insert(self, table: sa.Table):
        if self.dialect == "postgresql":
            from sqlalchemy.dialects.postgresql import insert
        else:
            from sqlalchemy.dialects.sqlite import insert
        return insert(table)


class _Waits(VoteWaits):
    def __init__(self) -> None:
        super().__init__(
            f"more than {NEW_VOTERS[0]} new phones joined this room in the last minute; "
            "your vote is kept on this phone and sent again in a moment"
        )


class _RollBack(VoteTooLate):
    """Raised inside a vote's transaction when the round closed while it was being written: the
    transaction rolls back, and the voter hears that voting had closed."""

    def __init__(self) -> None:
        super().__init__("voting had closed")


_UNREACHABLE = (sa.exc.OperationalError, sa.exc.InterfaceError, sa.exc.TimeoutError)


def _room(row: Any, host_token: str = "") -> Room:
    asked = tuple(line for line in (row["asked"] or "").split("\n") if line)
    return Room(
        code=row["code"],
        lesson_id=row["lesson_id"],
        question_id=row["question_id"],
        variant=row["variant"] or "",
        position=int(row["position"]),
        phase=row["phase"],
        version=int(row["version"]),
        created=float(row["created"]),
        touched=float(row["touched"]),
        round=int(row["round"] or 1),
        closes_at=None if row["closes_at"] is None else float(row["closes_at"]),
        asked=asked,
        ask_confidence=bool(row["ask_confidence"]),
        show_spread=bool(row.get("show_spread") or False),
        join_key=row.get("join_key") or "",
        host_token=host_token,
    )


def _add_missing_columns(conn: Connection) -> None:
    """Columns this version added to a table an earlier version created (ALTER TABLE ADD COLUMN:
    SQLite and PostgreSQL alike); each has a server default or is nullable."""
    inspector = sa.inspect(conn)
    for table in metadata.sorted_tables:
        present = {c["name"] for c in inspector.get_columns(table.name)}
        for column in table.columns:
            if column.name in present:
                continue
            kind = column.type.compile(dialect=conn.dialect)
            default = ""
            if column.server_default is not None:
                arg = column.server_default.arg
                text = arg.compile(dialect=conn.dialect) if hasattr(arg, "compile") else f"'{arg}'"
                default = f" DEFAULT {text} NOT NULL"
            conn.exec_driver_sql(f'ALTER TABLE {table.name} ADD COLUMN "{column.name}" {kind}{default}')


DEFAULT_DIR = Path(os.environ.get("GFG_DATA_DIR", Path(__file__).resolve().parent.parent / ".data"))


def default_url() -> str:
    """``GFG_CLASS_DB`` if set, else an SQLite file under ``GFG_DATA_DIR`` (default ``.data/``)."""
    url = os.environ.get("GFG_CLASS_DB", "").strip()
    if url:
        return url
    directory = Path(os.environ.get("GFG_DATA_DIR", DEFAULT_DIR))
    directory.mkdir(parents=True, exist_ok=True)
    return f"sqlite:///{directory / 'classroom.sqlite3'}"


def make_engine(url: str) -> Engine:
    """An engine for ``url``: SQLite in WAL mode with a busy timeout (several threads of one
    server, or two servers on one disk); PostgreSQL with pre-ping (a restarted server), a 1 s
    reach-the-port check before each new connection and a short wait for a free pooled one."""
    if url.startswith("sqlite"):
        engine = sa.create_engine(url, connect_args={"timeout": 5, "check_same_thread": False})

        @sa.event.listens_for(engine, "connect")
        def _pragmas(dbapi_connection, _record):  # pragma: no cover - runs inside SQLAlchemy
            cursor = dbapi_connection.cursor()
            cursor.execute("PRAGMA journal_mode=WAL")
            cursor.execute("PRAGMA synchronous=NORMAL")
            cursor.close()

        return engine
    engine = sa.create_engine(
        url, pool_pre_ping=True, pool_size=5, max_overflow=10, pool_timeout=5, connect_args=_pg_args(url)
    )
    if url.startswith("postgresql"):
        target = _host_port(url)

        @sa.event.listens_for(engine, "do_connect")
        def _reachable(dialect, _record, _cargs, _cparams):  # pragma: no cover - inside SQLAlchemy
            # libpq (and psycopg) wait at least 2 s for connect_timeout; a closed or silent port is
            # known within CONNECT_TIMEOUT_S here. Returning None lets the real connect go on.
            if target is None:
                return None
            try:
                socket.create_connection(target, timeout=CONNECT_TIMEOUT_S).close()
            except OSError as exc:
                raise dialect.loaded_dbapi.OperationalError("the database server does not answer") from exc
            return None

    return engine


def _host_port(url: str) -> tuple[str, int] | None:
    """(host, port) of a PostgreSQL URL with a TCP host; None for a Unix socket or no host."""
    parts = urlsplit(url)
    try:
        port = parts.port or 5432
    except ValueError:
        return None
    return (parts.hostname, port) if parts.hostname else None


def _pg_args(url: str) -> dict[str, Any]:
    # connect_timeout: libpq's smallest is 2 s; the port check above answers within 1 s first.
    return {"connect_timeout": 2} if url.startswith("postgresql") else {}


def open_store(url: str | None = None, *, connect: bool = True, **kwargs: Any) -> Store:
    """The class store at ``url`` (an SQLAlchemy URL); None: ``GFG_CLASS_DB``, else the SQLite
    default. Tables are created on first use. ``connect=True`` checks the database now
    (``StoreUnavailable`` if it cannot be reached); ``connect=False`` (the page) returns a store
    whose every call raises ``StoreUnavailable`` until the database answers, then works."""
    try:
        engine = make_engine(url or default_url())
    except (sa.exc.ArgumentError, ModuleNotFoundError) as exc:
        raise StoreUnavailable(f"the class database setting is not usable ({type(exc).__name__})") from exc
    try:
        return Store(engine, connect=connect, **kwargs)
    except StoreUnavailable:
        engine.dispose()
        raise
