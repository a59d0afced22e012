"""The class store on both engines it runs on: the embedded SQLite file and a real PostgreSQL
server the tests start (tests/pg_server.py). One code path, the same behaviour."""

from __future__ import annotations

import threading

import pytest

import classroom
from classroom import course
from classroom.store import CODE_ALPHABET, CODE_LENGTH, ROUND_OF_PHASE
from lessons import load_lessons
from tests.pg_server import PostgresServer, pg_bin

LESSON = "gpu-basics"


@pytest.fixture(scope="module")
def postgres():
    if pg_bin() is None:
        pytest.fail("PostgreSQL's server programs are missing: .ci/run installs Debian's postgresql")
    with PostgresServer() as server:
        yield server


@pytest.fixture(params=["sqlite", "postgresql"])
def store(request, tmp_path):
    if request.param == "sqlite":
        yield classroom.open_store(f"sqlite:///{tmp_path / 'class.sqlite3'}")
    else:
        server = request.getfixturevalue("postgres")
        store = classroom.open_store(server.url)
        yield store
        with store.engine.begin() as conn:  # each test starts from empty tables
            conn.exec_driver_sql("DELETE FROM gfg_votes; DELETE FROM gfg_rooms")
        store.engine.dispose()


def _choice_room(store):
    """A room on the first lesson whose first question is a choice question."""
    for lesson in load_lessons():
        first = course.room_questions(lesson.id)
        if first and not first[0].is_numeric:
            return store.create_room(lesson.id), first[0]
    raise AssertionError("no lesson starts with a choice question")


def test_a_new_room_opens_on_its_lessons_first_question_with_voting_open(store):
    room = store.create_room(LESSON)
    first = course.room_questions(LESSON)[0]
    assert (room.question_id, room.phase, room.round, room.position) == (first.id, "voting", 1, 0)
    assert len(room.code) == CODE_LENGTH and set(room.code) <= set(CODE_ALPHABET)
    assert len(room.host_token) >= 32
    seen = store.room(room.code.lower())  # typed codes are case-insensitive
    assert seen.code == room.code and seen.host_token == ""  # the token is never read back


def test_counts_are_one_vote_per_voter_and_round_and_a_second_vote_replaces_the_first(store):
    room, question = _choice_room(store)
    store.vote(room.code, "ann", 0)
    store.vote(room.code, "bob", 1)
    store.vote(room.code, "ann", 1)  # ann changes her mind
    store.vote(room.code, "cat", "1")
    assert classroom.Store.counts(store, room.code, question.id, 1) == {"1": 3}
    assert store.voters(room.code) == 3
    assert store.my_vote(room.code, "ann", question.id, 1) == "1"


def test_the_revote_is_round_two_and_round_one_is_kept(store):
    room, question = _choice_room(store)
    token = room.host_token
    store.vote(room.code, "ann", 0)
    store.vote(room.code, "bob", 0)
    store.set_phase(room.code, token, "results")
    with pytest.raises(classroom.RoomError, match="closed"):
        store.vote(room.code, "cat", 0)
    store.set_phase(room.code, token, "revoting")
    store.vote(room.code, "ann", 1)
    assert store.counts(room.code, question.id, 1) == {"0": 2}
    assert store.counts(room.code, question.id, 2) == {"1": 1}
    revealed = store.set_phase(room.code, token, "revealed")
    assert revealed.round == ROUND_OF_PHASE["revealed"] == 2


def test_only_the_host_token_controls_the_room(store):
    room = store.create_room(LESSON)
    other = store.create_room(LESSON)
    for token in ("", "guess", other.host_token, room.host_token[:-1]):
        with pytest.raises(classroom.RoomError, match="only the room's host"):
            store.set_phase(room.code, token, "results")
    assert store.room(room.code).phase == "voting"
    assert store.is_host(room.code, room.host_token) and not store.is_host(other.code, room.host_token)


def test_every_change_bumps_the_version_and_next_moves_on(store):
    room = store.create_room(LESSON)
    questions = course.room_questions(LESSON)
    v1 = store.version(room.code)
    store.set_phase(room.code, room.host_token, "results")
    v2 = store.version(room.code)
    moved = store.next_question(room.code, room.host_token, questions[1].id)
    assert v1 < v2 < moved.version
    assert (moved.question_id, moved.phase, moved.position) == (questions[1].id, "voting", 1)
    with pytest.raises(classroom.RoomError, match="not in the room's lesson"):
        store.next_question(room.code, room.host_token, "no-such-question")


def test_a_vote_is_checked_against_the_question(store):
    room, question = _choice_room(store)
    for bad in (len(question.options), -1, "1; DROP TABLE gfg_votes", 1.5, True, None, "<b>1</b>"):
        with pytest.raises(classroom.RoomError):
            store.vote(room.code, "ann", bad)
    with pytest.raises(classroom.RoomError, match="moved on"):
        store.vote(room.code, "ann", 0, question_id="another-question")
    assert store.counts(room.code, question.id, 1) == {}


def test_a_number_vote_must_be_finite_and_in_range():
    assert classroom.check_answer("3.5", right=4.0) == "3.5"
    assert classroom.check_answer(4000, right=4.0) == "4000.0"
    for bad in ("nan", "inf", 4001, "four", [1]):
        with pytest.raises(classroom.RoomError):
            classroom.check_answer(bad, right=4.0)


def test_wrong_and_malformed_codes_are_refused(store):
    for code in ("", "ABC", "0OIL15", "x" * 5000, None):
        with pytest.raises(classroom.RoomError):
            store.room(code)
    assert classroom.normalise_code("acd-efgh") == ""  # 7 characters
    assert classroom.normalise_code("acd-efb") == ""  # B is not in the alphabet (it looks like 8)
    assert classroom.normalise_code(" acd-E fg ") == "ACDEFG"


def test_rooms_expire_and_are_cleaned_up(store):
    now = [1_000_000.0]
    timed = classroom.Store(store.engine, room_hours=12, clock=lambda: now[0])
    room = timed.create_room(LESSON)
    timed.vote(room.code, "ann", 0) if not course.room_questions(LESSON)[0].is_numeric else None
    now[0] += 11 * 3600
    assert timed.room(room.code).code == room.code
    now[0] += 2 * 3600
    with pytest.raises(classroom.RoomError, match="no live room"):
        timed.room(room.code)
    assert timed.version(room.code) == 0
    timed.create_room(LESSON)  # starting a room clears the expired ones
    assert timed.cleanup() == 0
    now[0] = 1_000_000.0
    with pytest.raises(classroom.RoomError):
        timed.room(room.code)  # gone, not just hidden


def test_concurrent_votes_are_each_counted_once(store):
    room, question = _choice_room(store)
    errors = []

    def cast(start: int) -> None:
        try:
            for i in range(start, start + 20):
                store.vote(room.code, f"v{i}", i % 2)
                store.vote(room.code, f"v{i}", i % 2)  # a double submit
        except Exception as exc:
            errors.append(exc)

    threads = [threading.Thread(target=cast, args=(k * 20,)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors
    assert store.counts(room.code, question.id, 1) == {"0": 40, "1": 40}


def test_an_unreachable_database_is_a_clear_error():
    with pytest.raises(classroom.StoreUnavailable, match="cannot be reached"):
        classroom.open_store("postgresql+psycopg://nobody@127.0.0.1:1/none")
    with pytest.raises(classroom.StoreUnavailable, match="not usable"):
        classroom.open_store("not a url")


def test_the_default_store_is_an_sqlite_file_under_the_data_directory(tmp_path, monkeypatch):
    monkeypatch.delenv("GFG_CLASS_DB", raising=False)
    monkeypatch.setenv("GFG_DATA_DIR", str(tmp_path))
    store = classroom.open_store()
    assert store.dialect == "sqlite"
    assert (tmp_path / "classroom.sqlite3").exists()
    with store.engine.connect() as conn:
        assert conn.exec_driver_sql("PRAGMA journal_mode").scalar() == "wal"


def test_gfg_class_db_chooses_the_engine(postgres, monkeypatch):
    monkeypatch.setenv("GFG_CLASS_DB", postgres.url)
    assert classroom.open_store().dialect == "postgresql"


def test_another_variant_gives_new_numbers_until_none_is_left():
    q = next(q for lesson in load_lessons() for q in lesson.questions if q.has_variants)
    asked = {""}
    seen = []
    while (nxt := course.another_variant(q.lesson, q.id, asked)) is not None:
        asked.add(nxt.variant_key)
        seen.append(nxt.answer)
    assert len(seen) == len(q.variants())
    assert course.next_after(q.lesson, course.room_questions(q.lesson)[-1].id) is None
