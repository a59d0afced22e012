"""The class store on both engines it runs on: the embedded SQLite file and a real PostgreSQL
server the tests start (tests/pg_server.py), and stop and start again mid-test for the outage
tests. One code path, the same behaviour."""

from __future__ import annotations

import itertools
import threading
import time

import pytest
import sqlalchemy as sa

import classroom
from classroom import Ballot, Outbox, course, deliver
from classroom.ballot import COUNTED, LATE, REFUSED, WAITING
from classroom.store import CODE_ALPHABET, CODE_LENGTH, client_address
from classroom.tally import CSV_COLUMNS, median_confidence, summary_rows, to_csv, vote_rows
from lessons import load_lessons
from tests.pg_server import PostgresServer, pg_bin

LESSON = "gpu-basics"
ANN, BOB, CAT = "ann-0123456789abcdef", "bob-0123456789abcdef", "cat-0123456789abcdef"


@pytest.fixture(scope="module")
def postgres():
    if pg_bin() is None:
        pytest.fail("PostgreSQL's server programs are missing: .ci/run installs Debian's postgresql")
    with PostgresServer() as server:
        yield server


def _empty(store) -> None:
    with store.engine.begin() as conn:
        for table in ("gfg_votes", "gfg_hosts", "gfg_presence", "gfg_limits", "gfg_rooms"):
            conn.exec_driver_sql(f"DELETE FROM {table}")


@pytest.fixture(params=["sqlite", "postgresql"])
def store(request, tmp_path):
    if request.param == "sqlite":
        yield classroom.open_store(f"sqlite:///{tmp_path / 'class.sqlite3'}")
    else:
        server = request.getfixturevalue("postgres")
        store = classroom.open_store(server.url)
        _empty(store)  # each test starts from empty tables
        yield store
        store.engine.dispose()


def _choice_room(store, **kwargs):
    """A room on the first lesson whose first question is a choice question."""
    for lesson in load_lessons():
        first = course.room_questions(lesson.id)
        if first and not first[0].is_numeric:
            return store.create_room(lesson.id, **kwargs), first[0]
    raise AssertionError("no lesson starts with a choice question")


def _number_question():
    return next(q for lesson in load_lessons() for q in lesson.questions if q.is_numeric)


def test_a_new_room_opens_on_its_lessons_first_question_with_voting_open(store):
    room = store.create_room(LESSON)
    first = course.room_questions(LESSON)[0]
    assert (room.question_id, room.phase, room.round, room.position) == (first.id, "voting", 1, 0)
    assert len(room.code) == CODE_LENGTH and set(room.code) <= set(CODE_ALPHABET)
    assert len(room.host_token) >= 32
    seen = store.room(room.code.lower())  # typed codes are case-insensitive
    assert seen.code == room.code and seen.host_token == ""  # the credential is never read back
    assert store.is_host(room.code, room.host_token)


def test_counts_are_one_vote_per_voter_and_round_and_a_second_vote_replaces_the_first(store):
    room, question = _choice_room(store)
    store.vote(room.code, ANN, 0)
    store.vote(room.code, BOB, 1)
    store.vote(room.code, ANN, 1)  # ann changes her mind
    store.vote(room.code, CAT, "1")
    assert store.counts(room.code, question.id, 1) == {"1": 3}
    assert store.voters(room.code) == 3
    assert store.my_vote(room.code, ANN, question.id, 1) == "1"


def test_the_revote_is_round_two_and_round_one_is_kept(store):
    room, question = _choice_room(store)
    token = room.host_token
    store.vote(room.code, ANN, 0)
    store.vote(room.code, BOB, 0)
    store.set_phase(room.code, token, "results")
    with pytest.raises(classroom.VoteTooLate, match="closed"):
        store.vote(room.code, CAT, 0)
    store.set_phase(room.code, token, "revoting")
    store.vote(room.code, ANN, 1)
    assert store.counts(room.code, question.id, 1) == {"0": 2}
    assert store.counts(room.code, question.id, 2) == {"1": 1}
    assert store.set_phase(room.code, token, "revealed").round == 2


def test_a_reveal_without_a_revote_stays_round_one(store):
    """The lecturer's "Voted 0 of N" after a reveal with no revote: the round is the one voted in."""
    room, question = _choice_room(store)
    store.vote(room.code, ANN, 0)
    store.set_phase(room.code, room.host_token, "results")
    revealed = store.set_phase(room.code, room.host_token, "revealed")
    assert revealed.round == 1
    assert store.counts(room.code, question.id, revealed.round) == {"0": 1}


def test_only_a_lecturer_credential_controls_the_room(store):
    room = store.create_room(LESSON)
    other = store.create_room(LESSON)
    for token in ("", "guess", other.host_token, room.host_token[:-1], room.host_token + "x", "x" * 5000):
        with pytest.raises(classroom.RoomError, match="only the room's lecturer"):
            store.set_phase(room.code, token, "results")
    assert store.room(room.code).phase == "voting"
    assert store.is_host(room.code, room.host_token) and not store.is_host(other.code, room.host_token)


def test_credentials_and_links_are_stored_only_as_hashes(store):
    room = store.create_room(LESSON)
    link = store.new_host_link(room.code, room.host_token)
    second = store.claim_host(room.code, store.new_host_link(room.code, room.host_token))
    with store.engine.connect() as conn:
        stored = " ".join(
            str(value)
            for table in ("gfg_rooms", "gfg_hosts")
            for row in conn.exec_driver_sql(f"SELECT * FROM {table}")
            for value in row
        )
    for secret in (room.host_token, link, second):
        assert secret not in stored


def test_a_lecturer_link_opens_once_and_a_new_link_replaces_the_old(store):
    room = store.create_room(LESSON)
    old = store.new_host_link(room.code, room.host_token)
    new = store.new_host_link(room.code, room.host_token)  # "New lecturer link": the old one stops
    with pytest.raises(classroom.RoomError, match="does not open this room"):
        store.claim_host(room.code, old)
    projector = store.claim_host(room.code, new)
    assert store.is_host(room.code, projector) and projector != new
    with pytest.raises(classroom.RoomError, match="does not open this room"):
        store.claim_host(room.code, new)  # used: a photo of it is worth nothing
    other = store.create_room(LESSON)
    with pytest.raises(classroom.RoomError):
        store.claim_host(other.code, store.new_host_link(room.code, room.host_token))  # cross-room


def test_signing_out_other_screens_leaves_only_this_one(store):
    room = store.create_room(LESSON)
    projector = store.claim_host(room.code, store.new_host_link(room.code, room.host_token))
    assert store.sign_out_others(room.code, room.host_token) == 1
    assert store.is_host(room.code, room.host_token) and not store.is_host(room.code, projector)


def test_an_ended_room_takes_no_votes_and_no_commands_but_keeps_its_record(store):
    room, question = _choice_room(store)
    store.vote(room.code, ANN, 0)
    ended = store.end_room(room.code, room.host_token)
    assert ended.ended and not ended.accepting_votes
    with pytest.raises(classroom.VoteTooLate):
        store.vote(room.code, BOB, 0)
    with pytest.raises(classroom.RoomError, match="ended"):
        store.set_phase(room.code, room.host_token, "voting")
    assert store.counts(room.code, question.id, 1) == {"0": 1}


def test_every_change_bumps_the_version_and_next_moves_on(store):
    room = store.create_room(LESSON)
    questions = course.room_questions(LESSON)
    v1 = store.version(room.code)
    store.set_phase(room.code, room.host_token, "results")
    v2 = store.version(room.code)
    moved = store.next_question(room.code, room.host_token, questions[1].id)
    assert v1 < v2 < moved.version
    assert (moved.question_id, moved.phase, moved.position, moved.round) == (questions[1].id, "voting", 1, 1)
    assert moved.asked == (f"{questions[0].id}|", f"{questions[1].id}|")
    with pytest.raises(classroom.RoomError, match="not in the room's lesson"):
        store.next_question(room.code, room.host_token, "no-such-question")


def test_a_vote_is_checked_against_the_question(store):
    room, question = _choice_room(store)
    for bad in (len(question.options), -1, "1; DROP TABLE gfg_votes", 1.5, True, None, "<b>1</b>"):
        with pytest.raises(classroom.RoomError):
            store.vote(room.code, ANN, bad)
    with pytest.raises(classroom.VoteTooLate, match="moved on"):
        store.vote(room.code, ANN, 0, question_id="another-question")
    with pytest.raises(classroom.RoomError, match="confidence"):
        store.vote(room.code, ANN, 0, confidence="<script>")
    assert store.counts(room.code, question.id, 1) == {}


def test_a_negative_count_is_refused_where_the_quantity_cannot_be_negative(store):
    question = _number_question()
    assert course.non_negative(question.lesson, question.id)
    room = store.create_room(question.lesson, question.id)
    with pytest.raises(classroom.RoomError, match="cannot be negative"):
        store.vote(room.code, ANN, -4)
    store.vote(room.code, ANN, 0)
    assert store.counts(room.code, question.id, 1) == {"0.0": 1}


def test_a_number_vote_must_be_finite_and_in_range():
    assert classroom.check_answer("3.5", right=4.0) == "3.5"
    assert classroom.check_answer(4000, right=4.0) == "4000.0"
    for bad in ("nan", "inf", 4001, "four", [1], "9" * 100):
        with pytest.raises(classroom.RoomError):
            classroom.check_answer(bad, right=4.0)
    with pytest.raises(classroom.RoomError, match="negative"):
        classroom.check_answer(-1, right=4.0, non_negative=True)


def test_wrong_and_malformed_codes_are_refused(store):
    for code in ("", "ABC", "0OIL15", "x" * 5000, None, "[x](//e.vil)"):
        with pytest.raises(classroom.RoomError):
            store.room(code)
    assert classroom.normalise_code("acd-efgh") == ""  # 7 characters
    assert classroom.normalise_code("acd-efb") == ""  # B is not in the alphabet (it looks like 8)
    assert classroom.normalise_code(" acd-E fg ") == "ACDEFG"


def test_a_countdown_closes_the_round_by_itself_and_a_late_vote_is_told_so(store):
    now = [1_000_000.0]
    timed = classroom.Store(store.engine, clock=lambda: now[0])
    room, question = _choice_room(timed)
    started = timed.start_countdown(room.code, room.host_token, 30)
    assert started.seconds_left(now[0]) == 30
    timed.vote(room.code, ANN, 0)
    now[0] += 31
    ballot = Ballot("press-1", room.code, question.id, "", 1, "1")
    assert deliver(timed, BOB, ballot).status == LATE  # pressed in time, arrived after the close
    closed = timed.room(room.code)
    assert closed.phase == "results" and closed.seconds_left(now[0]) is None
    assert timed.counts(room.code, question.id, 1) == {"0": 1}


def test_rooms_expire_and_are_cleaned_up(store):
    now = [1_000_000.0]
    timed = classroom.Store(store.engine, room_hours=12, clock=lambda: now[0])
    room = timed.create_room(LESSON)
    timed.seen(room.code, ANN)
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
    assert not timed.is_host(room.code, room.host_token)


def test_concurrent_votes_are_each_counted_once(store):
    room, question = _choice_room(store)
    errors = []

    def cast(start: int) -> None:
        try:
            for i in range(start, start + 20):
                store.vote(room.code, f"voter-{i:012d}", i % 2)
                store.vote(room.code, f"voter-{i:012d}", i % 2)  # a double submit
        except Exception as exc:
            errors.append(exc)

    threads = [threading.Thread(target=cast, args=(k * 20,)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors
    assert store.counts(room.code, question.id, 1) == {"0": 40, "1": 40}


def test_a_retried_ballot_counts_once_and_a_newer_press_replaces_it(store):
    room, question = _choice_room(store)
    outbox = Outbox()
    first = Ballot("press-1", room.code, question.id, "", 1, "0")
    assert outbox.send(store, ANN, first).status == COUNTED
    assert outbox.send(store, ANN, first).status == COUNTED  # the phone sent it again
    assert outbox.send(store, ANN, Ballot("press-2", room.code, question.id, "", 1, "1")).status == COUNTED
    assert store.counts(room.code, question.id, 1) == {"1": 1}
    refused = outbox.send(store, ANN, Ballot("press-3", room.code, question.id, "", 1, "99"))
    assert refused.status == REFUSED and "options" in refused.detail


def test_joined_counts_phones_seen_in_the_last_minute(store):
    now = [1_000_000.0]
    timed = classroom.Store(store.engine, clock=lambda: now[0])
    room = timed.create_room(LESSON)
    timed.seen(room.code, ANN)
    timed.seen(room.code, ANN)  # the same phone again
    now[0] += 50
    timed.seen(room.code, BOB)
    assert timed.joined(room.code) == 2
    now[0] += 20
    assert timed.joined(room.code) == 1  # ann's phone left 70 s ago


def test_rate_limits_are_shared_by_every_replica_and_windowed(store):
    now = [1_000_020.0]
    one = classroom.Store(store.engine, clock=lambda: now[0])
    two = classroom.Store(store.engine, clock=lambda: now[0])  # a second replica on the same database
    assert [one.hit("code", "203.0.113.9", 60) for _ in range(3)] == [1, 2, 3]
    assert two.hit("code", "203.0.113.9", 60) == 4
    assert two.hits("code", "203.0.113.9", 60) == 4 and two.hits("code", "203.0.113.10", 60) == 0
    now[0] += 60
    assert one.hits("code", "203.0.113.9", 60) == 0  # a new minute


def test_the_client_address_is_the_proxys_last_forwarded_entry_only_behind_a_trusted_proxy():
    trusted = frozenset({"127.0.0.1", "::1", "10.0.0.5"})
    assert client_address(None, None, trusted) == "127.0.0.1"
    # nginx appends the address it saw; anything before it is what the client claimed
    assert client_address("127.0.0.1", "6.6.6.6, 198.51.100.7", trusted) == "198.51.100.7"
    assert client_address("10.0.0.5", "198.51.100.7", trusted) == "198.51.100.7"
    assert client_address("198.51.100.8", "6.6.6.6", trusted) == "198.51.100.8"  # not our proxy
    assert client_address("2001:db8::1", None, trusted) == client_address("2001:db8::ffff", None, trusted)


def test_the_record_and_its_csv_give_votes_share_right_and_confidence_per_round(store):
    room, question = _choice_room(store)
    right = int(question.answer)
    wrong = (right + 1) % len(question.options)
    store.vote(room.code, ANN, right, confidence="sure")
    store.vote(room.code, BOB, wrong, confidence="sure")
    store.vote(room.code, CAT, wrong, confidence="unsure")
    store.set_phase(room.code, room.host_token, "results")
    store.set_phase(room.code, room.host_token, "revoting")
    store.vote(room.code, BOB, right)
    rows = summary_rows([(0, question, "")], store.ballots(room.code))
    assert len(rows) == 2 * len(question.options)  # every option, both rounds
    first_wrong = next(
        r for r in rows if r["round"] == "first vote" and r["answer"].startswith(chr(65 + wrong))
    )
    assert (first_wrong["votes"], first_wrong["sure"], first_wrong["unsure"]) == (2, 1, 1)
    assert first_wrong["median_confidence"] == "split" and first_wrong["right"] == "no"
    assert first_wrong["round_share_right"] == round(1 / 3, 4)
    revote_right = next(r for r in rows if r["round"] == "revote" and r["right"] == "yes")
    assert (revote_right["votes"], revote_right["round_share_right"]) == (1, 1.0)
    raw = vote_rows([(0, question, "")], store.ballots(room.code))
    text = to_csv(raw)
    assert text.splitlines()[0] == ",".join(CSV_COLUMNS) and len(text.splitlines()) == 1 + 4  # 4 votes
    assert (median_confidence(3, 1), median_confidence(0, 2), median_confidence(0, 0)) == (
        "sure",
        "unsure",
        "",
    )


def test_same_question_new_numbers_cycles_through_every_variant():
    q = next(q for lesson in load_lessons() for q in lesson.questions if len(q.variants()) >= 2)
    keys = {""} | {v.variant_key for v in q.variants()}
    asked = [""]
    for _ in range(2 * len(keys)):
        nxt = course.next_variant(q.lesson, q.id, asked)
        asked.append(nxt.variant_key if nxt.variant_index else "")
    assert set(asked[: len(keys)]) == keys  # every variant before any repeats
    assert set(asked[len(keys) : 2 * len(keys)]) == keys  # then again, all of them
    assert all(a != b for a, b in itertools.pairwise(asked))  # never the same twice running
    assert course.next_after(q.lesson, course.room_questions(q.lesson)[-1].id) is None


def test_a_ballot_from_a_phone_is_checked_before_it_reaches_the_store():
    good = {"id": "abcdefgh", "code": "acdefg", "question": "q", "variant": "", "round": 1, "answer": 2}
    assert Ballot.from_payload(good).slot == ("ACDEFG", "q", "", 1)
    for bad in (
        None,
        [],
        {**good, "id": "<img>"},
        {**good, "code": "[x](//e.vil)"},
        {**good, "round": 3},
        {**good, "answer": True},
        {**good, "answer": {"$gt": 1}},
        {**good, "question": "x" * 500},
    ):
        with pytest.raises(classroom.RoomError):
            Ballot.from_payload(bad)
    assert (
        classroom.valid_voter("a" * 22)
        and not classroom.valid_voter("ann")
        and not classroom.valid_voter(None)
    )


def test_tables_of_an_earlier_version_gain_the_new_columns_and_its_host_links_still_open(tmp_path):
    """A database the previous release created (no round, countdown, confidence or credentials):
    opening it adds what is missing, and a room's old host token opens it once as a link."""
    import hashlib

    url = f"sqlite:///{tmp_path / 'old.sqlite3'}"
    engine = sa.create_engine(url)
    with engine.begin() as conn:
        conn.exec_driver_sql(
            "CREATE TABLE gfg_rooms (code VARCHAR(16) PRIMARY KEY, host_hash VARCHAR(64) NOT NULL, "
            "lesson_id VARCHAR(64) NOT NULL, question_id VARCHAR(64) NOT NULL, "
            "variant VARCHAR(512) NOT NULL, "
            "position INTEGER NOT NULL, phase VARCHAR(16) NOT NULL, version INTEGER NOT NULL, "
            "created FLOAT NOT NULL, touched FLOAT NOT NULL)"
        )
        conn.exec_driver_sql(
            "CREATE TABLE gfg_votes (code VARCHAR(16), question_id VARCHAR(64), variant VARCHAR(512), "
            "round INTEGER, voter VARCHAR(64), answer VARCHAR(64) NOT NULL, at FLOAT NOT NULL, "
            "PRIMARY KEY (code, question_id, variant, round, voter))"
        )
        first = course.room_questions(LESSON)[0].id
        conn.exec_driver_sql(
            "INSERT INTO gfg_rooms VALUES ('ACDEFG', ?, ?, ?, '', 0, 'voting', 1, ?, ?)",
            (hashlib.sha256(b"old-token").hexdigest(), LESSON, first, time.time(), time.time()),
        )
    engine.dispose()
    store = classroom.open_store(url)
    room = store.room("ACDEFG")
    assert (room.round, room.closes_at, room.ask_confidence) == (1, None, True)
    credential = store.claim_host("ACDEFG", "old-token")
    assert store.is_host("ACDEFG", credential)
    store.vote("ACDEFG", ANN, 0, confidence="sure")
    assert store.confidence("ACDEFG", first, 1, "") == {"0": {"sure": 1}}


def test_an_unreachable_database_is_a_clear_error_within_a_second():
    started = time.monotonic()
    with pytest.raises(classroom.StoreUnavailable, match="not answering") as caught:
        classroom.open_store("postgresql+psycopg://nobody@127.0.0.1:1/none")
    assert time.monotonic() - started < 1.5
    assert "127.0.0.1" not in str(caught.value) and "psycopg" not in str(caught.value)
    with pytest.raises(classroom.StoreUnavailable, match="not usable"):
        classroom.open_store("not a url")


def test_postgresql_stopped_mid_class_waits_and_every_kept_vote_lands_once_after(postgres):
    """The outage the issue measured: PostgreSQL stopped with a class in a room. Every read and
    write says "not answering" within about a second (not a traceback after 5 s); a vote pressed
    then waits in the outbox and lands exactly once when the server is back; the same store object
    recovers by itself."""
    store = classroom.open_store(postgres.url, connect=False)
    _empty(store)
    room, question = _choice_room(store)
    outbox = Outbox()
    assert outbox.send(store, ANN, Ballot("press-a", room.code, question.id, "", 1, "0")).status == COUNTED
    postgres.halt()
    try:
        for call in (
            lambda: store.room(room.code),
            lambda: store.counts(room.code, question.id, 1),
            lambda: store.set_phase(room.code, room.host_token, "results"),
            lambda: store.hit("code", "198.51.100.1", 60),
        ):
            started = time.monotonic()
            with pytest.raises(classroom.StoreUnavailable, match="not answering"):
                call()
            assert time.monotonic() - started < 1.5
        kept = outbox.send(store, BOB, Ballot("press-b", room.code, question.id, "", 1, "1"))
        assert kept.status == WAITING and not kept.final
        assert [d.status for d in outbox.retry(store, BOB)] == [WAITING]
    finally:
        postgres.resume()
    assert [d.status for d in outbox.retry(store, BOB)] == [COUNTED]
    assert outbox.retry(store, BOB) == []  # nothing left waiting
    assert store.counts(room.code, question.id, 1) == {"0": 1, "1": 1}
    store.engine.dispose()


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


def test_the_vote_chart_is_a_valid_figure_with_counts_readable_on_their_bars():
    """charts/classroom.py's spec, compact (projector) and not, passes plotly's own validation; the
    counts inside bars are black on sky blue and white on blue, and after the reveal each count
    says how many were sure."""
    import plotly.graph_objects as go

    from charts.classroom import INSIDE_TEXT, votes_figure

    for compact in (False, True):
        spec = votes_figure(
            ("A. one", "B. two"), (3, 1), (4, 0), right=(True, False), sure=((2, 1), (4, 0)), compact=compact
        )
        go.Figure(spec)  # raises on anything plotly does not accept
        first, revote = spec["data"]
        assert first["text"] == ["3 (75%) · 2 sure", "1 (25%) · 1 sure"] and revote["text"][1] == "0 (0%)"
        assert [t["insidetextfont"]["color"] for t in spec["data"]] == [
            INSIDE_TEXT[first["marker"]["color"]],
            INSIDE_TEXT[revote["marker"]["color"]],
        ]
        headline = spec["layout"]["title"]["text"].replace("<br>", " ")
        assert "first vote: 75% right, revote: 100% right" in headline
    assert votes_figure(("A. one",), (1,))["layout"]["title"]["text"].startswith("1 vote")


# -- issue 32: a class that holds a real lecture hall ------------------------------------------

DAN, EVE = "dan-0123456789abcdef", "eve-0123456789abcdef"


def _voters(n: int, prefix: str = "phone") -> list[str]:
    return [f"{prefix}-{i:04d}-0123456789abcdef" for i in range(n)]


def _tolerant_number_question():
    """A number question with a tolerance (most of the course's): its room and the question."""
    return next(
        q
        for lesson in load_lessons()
        for q in lesson.questions
        if q.is_numeric and q.tolerance and q.answer > 0
    )


def _number_class(store, first: list[float], revote: list[float] | None = None):
    """A room on a number question; ``first`` (and ``revote``) voted by as many phones, each
    phone noting its presence first as the page does."""
    question = _tolerant_number_question()
    room = store.create_room(question.lesson, question.id)
    phones = _voters(max(len(first), len(revote or [])))
    for phone, value in zip(phones, first, strict=False):
        store.seen(room.code, phone)
        store.vote(room.code, phone, repr(value))
    store.set_phase(room.code, room.host_token, "results")
    if revote is not None:
        store.set_phase(room.code, room.host_token, "revoting")
        for phone, value in zip(phones, revote, strict=False):
            store.vote(room.code, phone, repr(value))
        store.set_phase(room.code, room.host_token, "revote-results")
    return room, question


def _ten_answers(question, right: int) -> list[float]:
    """``right`` right answers (within the tolerance), one joke answer at 1000×, the rest wrong
    (3× and 1/3 of the answer, alternately); ten in all."""
    a, t = question.answer, question.tolerance
    rights = [a, a * (1 + t / 2), a * (1 - t / 2), a * (1 + t * 0.9), a * (1 - t * 0.9), a * (1 + t / 4), a][
        :right
    ]
    joke = [a * 1000] if right < 10 else []
    wrong = [a * 3 if i % 2 else a / 3 for i in range(10 - right - len(joke))]
    return rights + joke + wrong


def test_number_answers_are_graded_one_by_one_and_the_answer_has_a_row_of_its_own(store):
    """Why 1: 270,000 and 270,336 (both right) shared a bin with 1e6 and the headline said 0 %."""
    from charts.classroom import votes_figure
    from classroom.tally import ANSWER_ROW, DISTANCE_ROWS, rounds

    question = _tolerant_number_question()
    first, revote = _ten_answers(question, 4), _ten_answers(question, 7)
    room, _ = _number_class(store, first, revote)
    counts = (store.counts(room.code, question.id, 1), store.counts(room.code, question.id, 2))
    one, two = rounds(question, *counts, revealed=True)
    assert (one.share_right, two.share_right) == (0.4, 0.7)
    assert one.right[one.answer_row] and one.votes[one.answer_row] == 4 and two.votes[two.answer_row] == 7
    assert "(the answer)" in one.labels[one.answer_row] and sum(one.right) == 1
    over = one.labels.index(DISTANCE_ROWS[-1])  # the joke answer, alone at over 10× too high
    assert one.votes[over] == 1 and two.votes[over] == 1
    assert one.labels.index(DISTANCE_ROWS[1]) < one.answer_row < one.labels.index(DISTANCE_ROWS[5])
    assert ANSWER_ROW == 3
    spec = votes_figure(one.labels, one.votes, two.votes, right=one.right, compact=True)
    headline = spec["layout"]["title"]["text"].replace("<br>", " ")
    assert "first vote: 40% right" in headline and "revote: 70% right" in headline
    # before the reveal: no row is marked, and the joke answer does not squash the others together
    hidden = rounds(question, *counts)[0]
    assert not any(hidden.right) and hidden.share_right == 0.4
    assert len(hidden.labels) >= 3 and hidden.votes[-1] == 1  # the 1000× answer in a group of its own


def test_the_csv_and_the_record_hold_every_raw_answer_its_grade_and_the_right_value(store):
    question = _tolerant_number_question()
    room, _ = _number_class(store, _ten_answers(question, 4), _ten_answers(question, 7))
    store.next_question(room.code, room.host_token, question.id)  # asked again: a third round
    store.vote(room.code, ANN, "1,000")
    ballots = store.ballots(room.code)
    rows = vote_rows([(0, question, ""), (1, question, "")], ballots)
    assert len(rows) == 21  # 10 + 10 raw votes, then the one of the second asking
    assert [r["round"] for r in rows[:20]] == ["first vote"] * 10 + ["revote"] * 10
    assert (
        sum(r["right"] == "yes" for r in rows[:10]) == 4
        and sum(r["right"] == "yes" for r in rows[10:20]) == 7
    )
    assert {r["right_answer"] for r in rows} == {classroom.tally.right_answer_text(question)}
    assert str(question.tolerance * 100).rstrip("0").rstrip(".") in rows[0]["right_answer"]
    assert rows[20]["question"] == 2 and rows[20]["answer_typed"] == "1,000"
    text = to_csv(rows)
    assert len(text.splitlines()) == 22 and text.splitlines()[0] == ",".join(CSV_COLUMNS)
    summary = summary_rows([(0, question, "")], ballots)
    answer_rows = [r for r in summary if r["right"] == "yes"]
    assert [r["votes"] for r in answer_rows] == [4, 7]


def test_numbers_are_read_as_the_course_prints_them_and_the_phone_reads_them_alike(store):
    """Why 3: "270,336" was stored as 270.336. The ballot's script reads with the same rules
    (run here by node), so what the phone shows before Vote is what the store counts."""
    import json
    import shutil
    import subprocess

    from classroom.numbers import NUMBER_JS, NumberError, read_number

    read = {
        "270,336": 270336.0,
        "270 336": 270336.0,
        "2.7e5": 270000.0,
        "270k": 270000.0,
        "2.7×10^5": 270000.0,
        "270\u202f336": 270336.0,
        "2,5": 2.5,
        "0,336": 0.336,
        "1.2e+06": 1.2e6,
    }
    refused = ["2²", "1.2.3", "1,234,5", "12 GB", "", "1e999"]
    for text, value in read.items():
        assert read_number(text) == value, text
    for text in refused:
        with pytest.raises(NumberError):
            read_number(text)
    with pytest.raises(NumberError, match="“²” cannot be part of a number"):
        read_number("2²")
    node = shutil.which("node")
    assert node, "node runs the ballot's number reader"
    script = NUMBER_JS + f"\nconsole.log(JSON.stringify({json.dumps([*read, *refused])}.map(gfgReadNumber)));"
    out = json.loads(subprocess.run([node, "-e", script], capture_output=True, text=True, check=True).stdout)
    for text, result in zip([*read, *refused], out, strict=True):
        if text in read:
            assert result == {"value": read[text]}, text
        else:
            with pytest.raises(NumberError) as python:
                read_number(text)
            assert result == {"error": str(python.value)}, text
    question = next(
        q for lesson in load_lessons() for q in lesson.questions if q.is_numeric and q.answer >= 1000
    )
    room = store.create_room(question.lesson, question.id)
    typed = f"{question.answer:,.0f}"  # as the course prints it
    store.vote(room.code, ANN, typed)
    (ballot,) = store.ballots(room.code)
    assert float(ballot[4]) == round(question.answer) and ballot[5] == typed


def test_a_stray_character_is_refused_in_words_never_as_an_error(store):
    """Why 7: "²" on a choice question reached int() and showed "Something went wrong"."""
    room, question = _choice_room(store)
    for bad in ("²", "1²", "١"):
        with pytest.raises(classroom.RoomError, match="one of its"):
            store.vote(room.code, ANN, bad)
    question = _tolerant_number_question()
    room = store.create_room(question.lesson, question.id)
    refused = deliver(store, ANN, Ballot("press-2", room.code, question.id, "", 1, "2²"))
    assert refused.status == REFUSED and "“²” cannot be part of a number" in refused.detail


def test_each_asking_is_its_own_ballot_and_returning_to_a_variant_starts_at_zero(store):
    """Why 4: going back to a variant showed its old votes ("Voted 5 of 5")."""
    question = next(q for lesson in load_lessons() for q in lesson.questions if q.has_variants)
    room = store.create_room(question.lesson, question.id)
    other = question.variants()[0]
    for voter in (ANN, BOB, CAT):
        store.vote(room.code, voter, repr(question.answer) if question.is_numeric else 0)
    store.set_phase(room.code, room.host_token, "revealed")
    store.next_question(room.code, room.host_token, question.id, other.variant_key)
    store.vote(room.code, ANN, repr(other.answer) if other.is_numeric else 0)
    back = store.next_question(room.code, room.host_token, question.id, "")
    assert back.position == 2
    assert store.counts(room.code, question.id, 1, "") == {}
    assert store.my_vote(room.code, ANN, question.id, 1, "") is None
    assert sum(store.counts(room.code, question.id, 1, "", asking=0).values()) == 3  # kept in the record
    stale = Ballot(
        "press-3", room.code, question.id, "", 1, "0" if not question.is_numeric else "1", asking=0
    )
    assert deliver(store, BOB, stale).status == LATE  # pressed at the first asking: not this one
    assert [b[0] for b in store.ballots(room.code)] == [0, 0, 0, 1]


def test_one_phone_of_wrong_codes_stops_only_that_phone_and_guessing_takes_years(store):
    """Why 2: ten wrong codes from one phone refused every classmate behind the same address."""
    from classroom.store import (
        CODE_ALPHABET,
        CODE_LENGTH,
        WRONG_CODES,
        WRONG_CODES_ADDRESS,
        years_to_find_a_room,
    )

    address = "198.51.100.20"
    for _ in range(WRONG_CODES[0]):
        assert store.code_refusal(address, "v:prankster") == ""
        store.wrong_code(address, "v:prankster")
    assert "wait a minute" in store.code_refusal(address, "v:prankster")
    assert store.code_refusal(address, "v:classmate") == ""  # the rest of the hall joins
    for i in range(WRONG_CODES_ADDRESS[0][0] - WRONG_CODES[0]):  # a script with a fresh id per guess
        store.wrong_code(address, f"s:{i}")
    assert "your network" in store.code_refusal(address, "v:classmate")
    # the limits' arithmetic: 25⁶ codes, at most WRONG_CODES_ADDRESS guesses per address
    assert len(CODE_ALPHABET) ** CODE_LENGTH == 244_140_625
    per_year = WRONG_CODES_ADDRESS[1][0] * 24 * 365.25
    assert years_to_find_a_room(100) == pytest.approx((25**6 + 1) / 101 / per_year)
    assert years_to_find_a_room(100) > 2 and years_to_find_a_room(10) > 20


def test_other_peoples_rooms_never_stop_a_lecturer(store):
    """Why 2: a classmate's 20 rooms stopped the lecturer from starting one for the hour."""
    from classroom.store import NEW_ROOMS, NEW_ROOMS_ADDRESS

    address = "198.51.100.21"
    for _ in range(NEW_ROOMS[0]):
        assert store.start_refusal(address, "v:classmate") == ""
        store.room_started(address, "v:classmate")
    assert "this browser started" in store.start_refusal(address, "v:classmate")
    assert store.start_refusal(address, "v:lecturer") == ""
    for i in range(NEW_ROOMS_ADDRESS[0]):  # a script, a fresh id per room
        store.room_started(address, f"s:{i}")
    assert "your network" in store.start_refusal(address, "v:newcomer")
    assert store.start_refusal(address, "v:lecturer", lecturer=True) == ""  # holds a credential


def test_new_voter_ids_per_room_are_capped_and_votes_from_ids_never_seen_are_counted(store):
    """Why 8: one socket switching ids cast 30 votes; the only sign was Voted above Joined."""
    from classroom.store import NEW_VOTERS

    room, question = _choice_room(store)
    store.seen(room.code, ANN)
    store.vote(room.code, ANN, 0)
    assert store.unseen_voters(room.code, question.id, 1, "", 0) == 0
    ids = _voters(NEW_VOTERS[0], "script")  # with ann, one more than the cap
    for voter in ids[:-2]:
        store.vote(room.code, voter, 1)  # never opened the room
    assert store.seen(room.code, ids[-2])  # the cap's last new id
    waits = deliver(store, ids[-1], Ballot("press-4", room.code, question.id, "", 1, "1"))
    assert waits.status == WAITING and "new phones" in waits.detail
    assert not store.seen(room.code, ids[-1])
    store.vote(room.code, ANN, 1)  # a phone already in the room still votes
    assert store.unseen_voters(room.code, question.id, 1, "", 0) == NEW_VOTERS[0] - 2
    assert sum(store.counts(room.code, question.id, 1).values()) == NEW_VOTERS[0] - 1


def test_the_lecturer_discards_a_round_and_it_opens_again(store):
    room, question = _choice_room(store)
    store.vote(room.code, ANN, 0)
    store.set_phase(room.code, room.host_token, "results")
    with pytest.raises(classroom.RoomError, match="lecturer"):
        store.discard_round(room.code, "not-the-credential")
    again = store.discard_round(room.code, room.host_token)
    assert again.phase == "voting" and store.counts(room.code, question.id, 1) == {}
    store.vote(room.code, BOB, 1)
    assert store.counts(room.code, question.id, 1) == {"1": 1}


def test_a_vote_pressed_before_the_countdown_ended_counts_when_it_arrives_after_an_outage(store):
    """Why 6: a countdown that ended during an outage refused the votes pressed in time."""
    now = [2_000_000.0]
    timed = classroom.Store(store.engine, clock=lambda: now[0])
    room, question = _choice_room(timed)
    for voter in (ANN, BOB, CAT):
        timed.seen(room.code, voter)
    timed.start_countdown(room.code, room.host_token, 30)
    now[0] += 25
    now[0] += 60  # the database was down from here; the countdown ended at +30
    assert timed.room(room.code).phase == "results"

    def ballot(ident: str, pressed_ago_s: float) -> dict:
        sent = 5_000_000
        return {
            "id": ident,
            "code": room.code,
            "question": question.id,
            "variant": "",
            "round": 1,
            "asking": 0,
            "answer": 0,
            "at": sent - int(pressed_ago_s * 1000),
            "sent": sent,
        }

    on_time = Ballot.from_payload(ballot("press-ann", 65), received_at=now[0])  # pressed at +20
    assert on_time.pressed_at == pytest.approx(2_000_020.0)
    assert deliver(timed, ANN, on_time).status == COUNTED
    late = Ballot.from_payload(ballot("press-bob", 50), received_at=now[0])  # pressed at +35
    assert deliver(timed, BOB, late).status == LATE
    never_seen = Ballot.from_payload(ballot("press-dan", 65), received_at=now[0])
    assert deliver(timed, DAN, never_seen).status == LATE  # not in the room when it closed
    timed.seen(room.code, EVE)  # joined after the close, then claims a press before it
    assert deliver(timed, EVE, Ballot.from_payload(ballot("press-eve", 65), now[0])).status == LATE
    assert deliver(timed, CAT, Ballot("press-cat", room.code, question.id, "", 1, "0")).status == LATE
    now[0] += 700  # past the grace
    assert deliver(timed, CAT, Ballot.from_payload(ballot("press-cat2", 765), now[0])).status == LATE
    assert timed.counts(room.code, question.id, 1) == {"0": 1}
