"""Rooms, rounds and votes on SQLAlchemy Core: one code path for SQLite and PostgreSQL.

A room follows one lesson's questions, paced by its host (the lecturer), through the
peer-instruction loop: vote alone → results (the answer still hidden) → revote → reveal → next.
Every change bumps the room's ``version``, so a page that polls only that number knows when to
redraw. A vote is one row keyed by (room, question, round, voter), written as an upsert: voting
again replaces the vote, a reload never counts twice, and two replicas sharing one database count
every vote once.

Nothing here stores a name or anything personal: a voter is a random id the page makes.
"""

from __future__ import annotations

import hashlib
import math
import os
import secrets
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import Engine

# A join code: 6 characters from an alphabet without look-alikes (no 0/O, 1/I/L, 2/Z, 5/S, 8/B),
# 25 characters → 25⁶ ≈ 244 million codes; with a few live rooms and wrong guesses rate-limited
# per session (the page allows JOIN_ATTEMPTS a minute), guessing one is impractical.
CODE_ALPHABET = "ACDEFGHJKMNPQRTUVWXY34679"
CODE_LENGTH = 6
ROOM_HOURS = 12.0  # a room expires this long after it was last used
PHASES = ("voting", "results", "revoting", "revote-results", "revealed")
ROUND_OF_PHASE = {"voting": 1, "results": 1, "revoting": 2, "revote-results": 2, "revealed": 2}
MAX_ID = 64  # longest question id, lesson id, variant key or voter id accepted
NUMBER_RANGE = 1_000.0  # a numeric vote beyond ±1000 × the answer (or ±10⁶) is refused as noise

metadata = sa.MetaData()
rooms = sa.Table(
    "gfg_rooms",
    metadata,
    sa.Column("code", sa.String(16), primary_key=True),
    sa.Column("host_hash", sa.String(64), nullable=False),
    sa.Column("lesson_id", sa.String(MAX_ID), nullable=False),
    sa.Column("question_id", sa.String(MAX_ID), nullable=False),
    sa.Column("variant", sa.String(512), nullable=False, default=""),
    sa.Column("position", sa.Integer, nullable=False, default=0),  # how many questions came before
    sa.Column("phase", sa.String(16), nullable=False),
    sa.Column("version", sa.Integer, nullable=False, default=1),
    sa.Column("created", sa.Float, nullable=False),
    sa.Column("touched", sa.Float, nullable=False),
)
votes = sa.Table(
    "gfg_votes",
    metadata,
    sa.Column("code", sa.String(16), primary_key=True),
    sa.Column("question_id", sa.String(MAX_ID), primary_key=True),
    sa.Column("variant", sa.String(512), primary_key=True),
    sa.Column("round", sa.Integer, primary_key=True),
    sa.Column("voter", sa.String(MAX_ID), primary_key=True),
    sa.Column("answer", sa.String(64), nullable=False),
    sa.Column("at", sa.Float, nullable=False),
)
sa.Index("gfg_votes_by_round", votes.c.code, votes.c.question_id, votes.c.round)


class RoomError(ValueError):
    """A request the room refuses: unknown or expired code, wrong host token, a vote out of phase
    or out of range. The message is safe to show."""


class StoreUnavailable(RuntimeError):
    """The database cannot be reached; the message says so without internals."""


@dataclass(frozen=True)
class Room:
    """A room as a student may see it, plus ``host_token`` only on the object ``create_room``
    returns (the store keeps just its hash)."""

    code: str
    lesson_id: str
    question_id: str
    variant: str  # the question's variant key ("" for the lesson's own numbers)
    position: int  # 0 for the first question asked, 1 for the next, …
    phase: str
    version: int
    created: float
    touched: float
    host_token: str = ""

    @property
    def round(self) -> int:
        """1 while the first vote is open or shown, 2 from the revote on."""
        return ROUND_OF_PHASE[self.phase]

    @property
    def accepting_votes(self) -> bool:
        return self.phase in ("voting", "revoting")


def _hash(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def _clean_id(value: Any, what: str, limit: int = MAX_ID) -> str:
    if not isinstance(value, str) or not value or len(value) > limit or not value.isprintable():
        raise RoomError(f"{what} is not valid")
    return value


def normalise_code(text: Any) -> str:
    """A typed join code in its stored form (upper case, spaces and dashes dropped); "" if it
    cannot be one (wrong length or characters)."""
    if not isinstance(text, str):
        return ""
    code = text.strip().upper().replace("-", "").replace(" ", "")
    if len(code) != CODE_LENGTH or any(ch not in CODE_ALPHABET for ch in code):
        return ""
    return code


def check_answer(answer: Any, *, options: int = 0, right: float | None = None) -> str:
    """A vote as stored: an option index (a question with ``options`` choices) or a finite number
    within ±``NUMBER_RANGE`` × the right answer (±10⁶ when the answer is 0). ``RoomError`` for
    anything else."""
    if isinstance(answer, bool):
        raise RoomError("a vote is an option or a number")
    if options:
        if isinstance(answer, str) and answer.strip().isdigit():
            answer = int(answer.strip())
        if not isinstance(answer, int) or not 0 <= answer < options:
            raise RoomError(f"a vote on this question is one of its {options} options")
        return str(answer)
    try:
        value = float(answer)
    except (TypeError, ValueError) as exc:
        raise RoomError("a vote on this question is a number") from exc
    limit = NUMBER_RANGE * abs(right) if right else 1e6
    if not math.isfinite(value) or abs(value) > limit:
        raise RoomError("that number is out of range for this question")
    return repr(value)


class Store:
    """Rooms and votes in one database (``open_store`` makes one)."""

    def __init__(
        self, engine: Engine, *, room_hours: float = ROOM_HOURS, clock: Callable[[], float] = time.time
    ):
        self.engine = engine
        self.room_hours = room_hours
        self.clock = clock
        self._lock = threading.Lock()  # SQLite serialises writers; this keeps one process polite
        try:
            metadata.create_all(engine)
        except sa.exc.OperationalError as exc:
            raise StoreUnavailable("the class database cannot be reached") from exc

    @property
    def dialect(self) -> str:
        return self.engine.dialect.name

    # -- rooms ---------------------------------------------------------------------------------

    def create_room(self, lesson_id: str, question_id: str = "", variant: str = "") -> Room:
        """A new room on ``lesson_id``, its first question (or ``question_id``) open for voting at
        once. The returned ``Room`` carries ``host_token``, shown only to its host."""
        from classroom import course

        lesson_id = _clean_id(lesson_id, "lesson id")
        asked = course.room_questions(lesson_id)
        if not asked:
            raise RoomError("that lesson has no questions to ask")
        question_id = question_id or asked[0].id
        if course.question(lesson_id, question_id, variant) is None:
            raise RoomError("that question is not in the lesson")
        self.cleanup()  # expired rooms go when a new one starts: no scheduler needed
        token = secrets.token_urlsafe(24)
        now = self.clock()
        for _ in range(20):
            code = "".join(secrets.choice(CODE_ALPHABET) for _ in range(CODE_LENGTH))
            row = {
                "code": code,
                "host_hash": _hash(token),
                "lesson_id": lesson_id,
                "question_id": question_id,
                "variant": variant,
                "position": 0,
                "phase": "voting",
                "version": 1,
                "created": now,
                "touched": now,
            }
            try:
                with self._write() as conn:
                    conn.execute(rooms.insert().values(**row))
            except sa.exc.IntegrityError:
                continue  # that code is taken: draw another
            return Room(**{k: v for k, v in row.items() if k != "host_hash"}, host_token=token)
        raise RoomError("could not find a free join code; try again")

    def room(self, code: str) -> Room:
        """The live room with this code; ``RoomError`` if there is none (or it has expired)."""
        code = normalise_code(code)
        if not code:
            raise RoomError("that is not a room code")
        with self._read() as conn:
            row = conn.execute(sa.select(rooms).where(rooms.c.code == code)).mappings().first()
        if row is None or self._expired(row["touched"]):
            raise RoomError("no live room has that code")
        return Room(**{k: v for k, v in row.items() if k != "host_hash"})

    def version(self, code: str) -> int:
        """The room's version number (changes whenever its question or phase does); 0 if gone."""
        with self._read() as conn:
            row = conn.execute(
                sa.select(rooms.c.version, rooms.c.touched).where(rooms.c.code == code)
            ).first()
        if row is None or self._expired(row.touched):
            return 0
        return int(row.version)

    def is_host(self, code: str, token: str) -> bool:
        """Whether ``token`` controls this room (compared in constant time)."""
        if not isinstance(token, str) or not token:
            return False
        with self._read() as conn:
            stored = conn.execute(sa.select(rooms.c.host_hash).where(rooms.c.code == code)).scalar()
        return stored is not None and secrets.compare_digest(stored, _hash(token))

    def set_phase(self, code: str, token: str, phase: str) -> Room:
        """Move the room to ``phase`` (host only)."""
        if phase not in PHASES:
            raise RoomError(f"unknown phase {phase!r}")
        return self._update(code, token, phase=phase)

    def next_question(self, code: str, token: str, question_id: str, variant: str = "") -> Room:
        """Ask the next question (host only): voting opens on it at once."""
        from classroom import course

        question_id = _clean_id(question_id, "question id")
        room = self.room(code)
        if course.question(room.lesson_id, question_id, variant) is None:
            raise RoomError("that question is not in the room's lesson")
        return self._update(
            code, token, question_id=question_id, variant=variant, position=room.position + 1, phase="voting"
        )

    def _update(self, code: str, token: str, **values: Any) -> Room:
        code = normalise_code(code)
        if not self.is_host(code, token):
            raise RoomError("only the room's host can do that")
        with self._write() as conn:
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
    ) -> Room:
        """Record ``voter``'s answer for the room's current question and round, replacing an
        earlier vote of theirs in the same round. The answer is checked against the question (an
        option index, or a number in range: ``check_answer``). Refused (``RoomError``) when voting
        is closed, or when ``question_id``/``variant`` (what the voter's screen showed) is not the
        current question any more."""
        from classroom import course

        voter = _clean_id(voter, "voter id")
        room = self.room(code)
        if not room.accepting_votes:
            raise RoomError("voting is closed")
        if question_id is not None and (question_id != room.question_id or (variant or "") != room.variant):
            raise RoomError("the lecturer has moved on to another question")
        asked = course.question(room.lesson_id, room.question_id, room.variant)
        if asked is None:
            raise RoomError("this room's question is no longer in the course")
        answer = check_answer(
            answer, options=0 if asked.is_numeric else len(asked.options), right=float(asked.answer)
        )
        row = {
            "code": room.code,
            "question_id": room.question_id,
            "variant": room.variant,
            "round": room.round,
            "voter": voter,
            "answer": answer,
            "at": self.clock(),
        }
        key = ("code", "question_id", "variant", "round", "voter")
        with self._write() as conn:
            if self.dialect == "postgresql":
                from sqlalchemy.dialects.postgresql import insert
            else:
                from sqlalchemy.dialects.sqlite import insert
            statement = insert(votes).values(**row)
            conn.execute(
                statement.on_conflict_do_update(
                    index_elements=list(key),
                    set_={"answer": statement.excluded.answer, "at": statement.excluded.at},
                )
            )
        return room

    def counts(self, code: str, question_id: str, round: int, variant: str | None = None) -> dict[str, int]:
        """Votes per answer for one question and round of a room (round 1: the first vote, 2: the
        revote). ``variant`` None: the room's variant of that question if it is the current one,
        else every variant's votes together."""
        code = normalise_code(code)
        query = (
            sa.select(votes.c.answer, sa.func.count())
            .where(votes.c.code == code, votes.c.question_id == question_id, votes.c.round == int(round))
            .group_by(votes.c.answer)
        )
        if variant is not None:
            query = query.where(votes.c.variant == variant)
        with self._read() as conn:
            return {answer: int(n) for answer, n in conn.execute(query)}

    def my_vote(self, code: str, voter: str, question_id: str, round: int, variant: str = "") -> str | None:
        """This voter's answer in that round, or None."""
        with self._read() as conn:
            return conn.execute(
                sa.select(votes.c.answer).where(
                    votes.c.code == normalise_code(code),
                    votes.c.question_id == question_id,
                    votes.c.variant == variant,
                    votes.c.round == int(round),
                    votes.c.voter == voter,
                )
            ).scalar()

    def voters(self, code: str) -> int:
        """How many different voters have voted in this room so far (the room's size)."""
        with self._read() as conn:
            return int(
                conn.execute(
                    sa.select(sa.func.count(sa.distinct(votes.c.voter))).where(
                        votes.c.code == normalise_code(code)
                    )
                ).scalar()
                or 0
            )

    # -- housekeeping --------------------------------------------------------------------------

    def cleanup(self) -> int:
        """Delete expired rooms and their votes; the number of rooms deleted."""
        cutoff = self.clock() - self.room_hours * 3600
        with self._write() as conn:
            old = [r.code for r in conn.execute(sa.select(rooms.c.code).where(rooms.c.touched < cutoff))]
            if old:
                conn.execute(votes.delete().where(votes.c.code.in_(old)))
                conn.execute(rooms.delete().where(rooms.c.code.in_(old)))
        return len(old)

    def _expired(self, touched: float) -> bool:
        return self.clock() - touched > self.room_hours * 3600

    def _read(self):
        return _Guard(self.engine.connect())

    def _write(self):
        return _Guard(self.engine.begin(), self._lock if self.dialect == "sqlite" else None)


class _Guard:
    """A connection context that turns "cannot reach the database" into ``StoreUnavailable``."""

    def __init__(self, context: Any, lock: threading.Lock | None = None) -> None:
        self.context = context
        self.lock = lock

    def __enter__(self):
        if self.lock:
            self.lock.acquire()
        try:
            return self.context.__enter__()
        except (sa.exc.OperationalError, sa.exc.InterfaceError) as exc:
            if self.lock:
                self.lock.release()
            raise StoreUnavailable("the class database cannot be reached") from exc

    def __exit__(self, *exc_info):
        try:
            return self.context.__exit__(*exc_info)
        except (sa.exc.OperationalError, sa.exc.InterfaceError) as exc:
            raise StoreUnavailable("the class database cannot be reached") from exc
        finally:
            if self.lock:
                self.lock.release()


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
    server, or two servers on one disk), PostgreSQL with pre-ping (a restarted server)."""
    if url.startswith("sqlite"):
        engine = sa.create_engine(url, connect_args={"timeout": 10, "check_same_thread": False})

        @sa.event.listens_for(engine, "connect")
        def _pragmas(dbapi_connection, _record):  # pragma: no cover - runs inside SQLAlchemy
            cursor = dbapi_connection.cursor()
            cursor.execute("PRAGMA journal_mode=WAL")
            cursor.execute("PRAGMA synchronous=NORMAL")
            cursor.close()

        return engine
    return sa.create_engine(url, pool_pre_ping=True, pool_size=5, max_overflow=10, connect_args=_pg_args(url))


def _pg_args(url: str) -> dict[str, Any]:
    return {"connect_timeout": 5} if url.startswith("postgresql") else {}


def open_store(url: str | None = None, **kwargs: Any) -> Store:
    """The class store at ``url`` (an SQLAlchemy URL); None: ``GFG_CLASS_DB``, else the SQLite
    default. Tables are created on first use. ``StoreUnavailable`` if it cannot be reached."""
    try:
        engine = make_engine(url or default_url())
    except (sa.exc.ArgumentError, ModuleNotFoundError) as exc:
        raise StoreUnavailable(f"the class database setting is not usable ({type(exc).__name__})") from exc
    return Store(engine, **kwargs)
