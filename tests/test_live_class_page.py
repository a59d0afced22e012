"""The Live class page, run by Streamlit's AppTest against a real store (SQLite; PostgreSQL for
the outage): a lecturer starts a room and paces it; students (whose browser identity is the
hello the page's browser component would send) see their results; what a visitor types is never
rendered as Markdown; rate limits hold across sessions; a database outage is said in words and
the page recovers by itself."""

from __future__ import annotations

import re

import pytest

import classroom
from classroom import course
from classroom.store import NEW_ROOMS, NEW_ROOMS_ADDRESS, WRONG_CODES, WRONG_CODES_ADDRESS
from classroom.tally import CSV_COLUMNS
from tests.pages import APP, open_page
from tests.pg_server import PostgresServer, pg_bin
from ui.class_view import _literal, _short

PAGE = "app_pages/live_class.py"
INJECTIONS = (
    "[x](//e.vil)",
    "<img src=x onerror=alert(1)>",
    "**bold** `code` # h",
    "<a href='//e.vil'>x</a>",
)


@pytest.fixture(autouse=True)
def data_dir(tmp_path, monkeypatch):
    monkeypatch.delenv("GFG_CLASS_DB", raising=False)
    monkeypatch.delenv("GFG_PUBLIC_URL", raising=False)
    monkeypatch.setenv("GFG_DATA_DIR", str(tmp_path))
    from ui.class_view import _open

    _open.clear()
    yield tmp_path
    _open.clear()


def _texts(at) -> str:
    parts = [m.value for m in at.markdown] + [c.value for c in at.caption]
    for kind in ("success", "info", "warning", "error"):
        parts += [e.value for e in at.get(kind)]
    return "\n".join(str(p) for p in parts)


def _button(at, label: str):
    return next(b for b in at.button if b.label == label)


def _phone(room_code: str, voter: str, **query: str):
    """A student's session: the hello its browser component sends (its voter id) is in session
    state before the page runs, as after the component's first trigger."""
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_file(APP, default_timeout=120)
    at.query_params.update({"room": room_code, **query})
    at.run()
    at.session_state["_class_hello"] = {"voter": voter, "host": None, "link": None}
    at.switch_page(PAGE)
    at.run()
    return at


def test_a_lecturer_starts_a_room_and_no_secret_is_in_the_address():
    at = open_page(PAGE)
    assert not at.exception
    _button(at, "Start a room").click().run()
    query = dict(at.query_params)
    assert set(query) == {"room"}  # the credential stays in this browser, never in an address
    room = classroom.open_store().room(query["room"])
    first = course.room_questions(room.lesson_id)[0]
    text = _texts(at)
    assert room.code in text and first.prompt in text
    assert [(m.label, m.value) for m in at.metric] == [("Joined", "0"), ("Voted", "0 of 0")]
    assert "Close voting, show results" in [b.label for b in at.button]
    assert not any(h.value.startswith("In the simulator") for h in at.subheader)  # not before the reveal
    credential = at.session_state["_class_hosts"][room.code]
    assert classroom.open_store().is_host(room.code, credential) and credential not in text


def test_students_see_their_result_after_the_reveal_and_glossary_links_stay_links():
    store = classroom.open_store()
    room = store.create_room("gpu-basics")
    question = course.question(room.lesson_id, room.question_id)
    right = int(question.answer)
    wrong = (right + 1) % len(question.options)
    ann, bob = _phone(room.code, "ann-0123456789abcdef"), _phone(room.code, "bob-0123456789abcdef")
    assert not ann.exception and question.prompt in _texts(ann)
    store.vote(room.code, "ann-0123456789abcdef", right)
    store.vote(room.code, "bob-0123456789abcdef", wrong)
    store.set_phase(room.code, room.host_token, "results")
    store.set_phase(room.code, room.host_token, "revealed")
    ann.run()
    bob.run()
    assert "Right" in _texts(ann) and "Not this time" in _texts(bob)
    assert "[[" not in _texts(ann)


def test_the_lecturer_paces_the_loop_and_sees_both_rounds_at_the_reveal():
    at = open_page(PAGE)
    _button(at, "Start a room").click().run()
    code = at.query_params["room"]
    store = classroom.open_store()
    room = store.room(code)
    question = course.question(room.lesson_id, room.question_id)
    for i, voter in enumerate(("a", "b", "c")):
        store.vote(code, f"{voter}-0123456789abcdef", i % len(question.options))
    at.run()
    assert [m.value for m in at.metric] == ["0", "3 of 3"]
    _button(at, "Close voting, show results").click().run()
    assert "answer stays hidden" in _texts(at) + str(at.get("plotly_chart"))
    _button(at, "Revote (after discussion)").click().run()
    store.vote(code, "a-0123456789abcdef", int(question.answer))
    at.run()
    assert [m.value for m in at.metric] == ["0", "1 of 3"]
    _button(at, "Close the revote, show results").click().run()
    _button(at, "Reveal the answer").click().run()
    text = _texts(at)
    assert "First vote:" in text and "Revote: **100%** right (1 of 1)" in text
    assert question.options[int(question.answer)].text in text
    step = course.step_of(room.lesson_id, question.id)[1]
    assert step.view is not None and f"In the simulator: {step.title}" in [h.value for h in at.subheader]
    assert not at.exception
    _button(at, "Next question").click().run()
    moved = store.room(code)
    assert moved.position == 1 and moved.phase == "voting" and moved.question_id != question.id


def test_a_reveal_without_a_revote_counts_the_first_vote_not_zero():
    at = open_page(PAGE)
    _button(at, "Start a room").click().run()
    code = at.query_params["room"]
    store = classroom.open_store()
    store.vote(code, "a-0123456789abcdef", 0)
    store.vote(code, "b-0123456789abcdef", 1)
    at.run()
    _button(at, "Close voting, show results").click().run()
    _button(at, "Reveal the answer").click().run()
    assert [m.value for m in at.metric] == ["0", "2 of 2"]  # was "Voted 0 of N"
    chart = at.get("plotly_chart")[0].proto.spec
    assert "Revote" not in chart  # no empty "Revote (0 votes)" series


def test_same_question_new_numbers_reaches_a_third_variant():
    q = next(q for lesson in course_lessons() for q in lesson.questions if len(q.variants()) >= 2)
    store = classroom.open_store()
    room = store.create_room(q.lesson, q.id)
    at = _phone(room.code, "lecturer-0123456789")
    at.session_state["_class_hosts"] = {room.code: room.host_token}
    at.run()
    asked = [""]
    for _ in range(3):
        store.set_phase(room.code, room.host_token, "revealed")
        at.run()
        _button(at, "Same question, new numbers").click().run()
        asked.append(store.room(room.code).variant)
    assert len(set(asked)) == 3, asked  # the old page alternated between two


def course_lessons():
    from lessons import load_lessons

    return load_lessons()


def test_an_old_style_lecturer_link_is_exchanged_once_and_leaves_the_address():
    store = classroom.open_store()
    room = store.create_room("gpu-basics")
    link = store.new_host_link(room.code, room.host_token)
    lecturer = open_page(PAGE, room=room.code, host=link)
    assert not lecturer.exception
    assert "host" not in dict(lecturer.query_params)
    assert "Close voting, show results" in [b.label for b in lecturer.button]
    assert store.is_host(room.code, lecturer.session_state["_class_hosts"][room.code])
    again = open_page(PAGE, room=room.code, host=link)  # the same link, a second time
    again.session_state["_class_hello"] = {"voter": "eve-0123456789abcdef", "host": None, "link": None}
    again.run()
    assert "does not control this room" in _texts(again)
    assert "Close voting, show results" not in [b.label for b in again.button]


def test_a_forged_host_token_controls_nothing():
    store = classroom.open_store()
    room = store.create_room("gpu-basics")
    student = _phone(room.code, "eve-0123456789abcdef", host="forged")
    assert not student.exception
    assert "does not control this room" in _texts(student)
    assert "Close voting, show results" not in [b.label for b in student.button]
    assert "host" not in dict(student.query_params)


@pytest.mark.parametrize("parameter", ["room", "host", "lesson", "record", "me", "present"])
def test_markdown_and_html_in_any_parameter_is_shown_as_text(parameter):
    store = classroom.open_store()
    room = store.create_room("gpu-basics")
    for payload in INJECTIONS:
        query = {"room": room.code, parameter: payload} if parameter != "room" else {"room": payload}
        at = open_page(PAGE, **query)
        assert not at.exception, at.exception
        shown = [e.value for e in at.error] + [m.value for m in at.markdown] + [w.value for w in at.warning]
        for value in shown:  # every character that could start a link, an image or a tag is escaped
            outside_code = re.sub(r"(`+)[^`].*?\1", "", value)  # a code span shows its text as typed
            assert not re.search(r"(?<!\\)(\]\(|<img|<a )", outside_code), value
        if parameter == "room":  # shown as typed, in a code span
            assert any(f"Room {_literal(_short(payload))}:" in e.value for e in at.error), payload


def test_one_phones_wrong_codes_stop_that_phone_and_never_a_classmates_valid_link():
    """Why 2: ten wrong codes from one phone refused every valid link behind the same address."""
    store = classroom.open_store()
    room = store.create_room("gpu-basics")
    prankster = open_page(PAGE)
    for i in range(WRONG_CODES[0]):
        prankster.text_input[0].set_value(f"ACDEF{'GHJKMNPQRT'[i]}")
        _button(prankster, "Join").click().run()  # a wrong code typed in the form
        assert "Too many" not in _texts(prankster)
    prankster.text_input[0].set_value(room.code)
    _button(prankster, "Join").click().run()
    assert "Too many wrong room codes: this phone" in _texts(prankster)  # this phone waits a minute
    classmate = _phone(room.code, "ann-0123456789abcdef")  # a classmate on the same address
    assert "Voting is open" in _texts(classmate) and "Too many" not in _texts(classmate)
    lecturer = _phone(room.code, "lecturer-0123456789")
    lecturer.session_state["_class_hosts"] = {room.code: room.host_token}
    lecturer.run()
    for _ in range(WRONG_CODES_ADDRESS[0][0]):  # then a script exhausts the address's minute
        store.wrong_code("127.0.0.1", "s:script")
    store.set_phase(room.code, room.host_token, "revealed")
    lecturer.run()  # the projector's next redraw (the reveal) never meets the limit
    assert "The answer:" in _texts(lecturer) and "Too many" not in _texts(lecturer)


def test_a_wrong_link_counts_once_however_often_the_page_reruns():
    """Why 2: a wrong link opened in a browser counted twice (the page runs again on hello)."""
    store = classroom.open_store()
    at = open_page(PAGE, room="ACDEFG")
    at.session_state["_class_hello"] = {"voter": "ann-0123456789abcdef", "host": None, "link": None}
    at.run()
    at.run()
    assert store.hits("code-a-min", "127.0.0.1", WRONG_CODES_ADDRESS[0][1]) == 1


def test_other_peoples_rooms_never_stop_the_lecturer_starting_one():
    """Why 2: a classmate's 20 rooms blocked the lecturer for the rest of the hour."""
    lecturer = open_page(PAGE)
    _button(lecturer, "Start a room").click().run()  # yesterday's room: this browser is a lecturer
    first = lecturer.query_params["room"]
    store = classroom.open_store()
    for _ in range(NEW_ROOMS[0]):
        store.room_started("127.0.0.1", "v:classmate-0123456789")
    classmate = _phone(first, "classmate-0123456789")
    classmate.query_params.clear()
    classmate.run()
    _button(classmate, "Start a room").click().run()
    assert "Too many rooms started: this browser" in _texts(classmate)
    for i in range(NEW_ROOMS_ADDRESS[0]):  # and a script that starts rooms with a fresh id each
        store.room_started("127.0.0.1", f"s:script-{i}")
    newcomer = open_page(PAGE)
    _button(newcomer, "Start a room").click().run()
    assert "your network started" in _texts(newcomer) and "room" not in dict(newcomer.query_params)
    lecturer.query_params.clear()
    lecturer.run()
    _button(lecturer, "Start a room").click().run()
    assert lecturer.query_params["room"] != first and "Too many" not in _texts(lecturer)


@pytest.mark.parametrize("typed", [":skull:", ":red[x]", "`:a:`"])
def test_an_echoed_code_is_shown_literally(typed):
    """Why 7: `:skull:` and `:red[…]` took effect in an echoed room code."""
    at = open_page(PAGE, room=typed)
    (error,) = [e.value for e in at.error if "Room" in e.value]
    fence = "``" if "`" in typed else "`"
    assert f"{fence}{' ' if '`' in typed else ''}{typed}" in error  # inside a code span: shown as typed
    at = open_page(PAGE)
    at.text_input[0].set_value(typed)
    _button(at, "Join").click().run()
    assert any(f"{fence}{' ' if '`' in typed else ''}{typed}" in e.value for e in at.error)


@pytest.mark.parametrize("credential", ["é" * 20, "tok\x00en-0123456789ab", "x" * 500, "a b\u202ec"])
def test_odd_characters_in_a_lecturer_credential_or_link_are_refused_in_words(credential):
    """Why 7: an odd character in a lecturer credential showed "Something went wrong"."""
    store = classroom.open_store()
    room = store.create_room("gpu-basics")
    at = _phone(room.code, "eve-0123456789abcdef")
    at.session_state["_class_hello"] = {
        "voter": "eve-0123456789abcdef",
        "host": credential,
        "link": credential,
    }
    at.run()
    assert not at.exception and "Something went wrong" not in _texts(at)
    assert "Close voting, show results" not in [b.label for b in at.button]
    assert "Voting is open" in _texts(at)
    at = open_page(PAGE, room=room.code, host=credential)  # the old ?host= form
    assert not at.exception and "Something went wrong" not in _texts(at)


def test_returning_to_a_variant_shows_voted_0():
    """Why 4: going back to a variant showed "Voted 5 of 5" before anyone voted."""
    q = next(q for lesson in course_lessons() for q in lesson.questions if q.has_variants)
    store = classroom.open_store()
    room = store.create_room(q.lesson, q.id)
    for voter in ("a", "b", "c"):
        store.seen(room.code, f"{voter}-0123456789abcdef")
        store.vote(room.code, f"{voter}-0123456789abcdef", repr(q.answer) if q.is_numeric else 0)
    at = _phone(room.code, "lecturer-0123456789")
    at.session_state["_class_hosts"] = {room.code: room.host_token}
    at.run()
    assert at.metric[1].value.startswith("3 of ")
    store.set_phase(room.code, room.host_token, "revealed")
    store.next_question(room.code, room.host_token, q.id, q.variants()[0].variant_key)
    store.next_question(room.code, room.host_token, q.id, "")  # back to the lesson's own numbers
    at.run()
    assert at.metric[1].value.startswith("0 of ")  # a fresh ballot: was "3 of 3" (the old votes)
    phone = _phone(room.code, "a-0123456789abcdef")
    assert "counted" not in _texts(phone)


def test_the_projector_flags_votes_from_ids_that_never_joined():
    """Why 8: one socket switching ids cast 30 votes; only "Joined 1 · Voted 30 of 30" showed it."""
    store = classroom.open_store()
    room = store.create_room("gpu-basics")
    store.seen(room.code, "ann-0123456789abcdef")
    store.vote(room.code, "ann-0123456789abcdef", 0)
    for i in range(30):
        store.vote(room.code, f"script-{i:03d}-0123456789abcdef", 1)
    at = _phone(room.code, "lecturer-0123456789")
    at.session_state["_class_hosts"] = {room.code: room.host_token}
    at.run()
    assert "30 votes in this round from voter ids that never joined" in _texts(at)
    _button(at, "Discard this round").click().run()
    assert store.counts(room.code, room.question_id, 1) == {} and store.room(room.code).phase == "voting"
    assert "never joined" not in _texts(at)


def test_ending_the_class_shows_the_record_and_exports_csv():
    at = open_page(PAGE)
    _button(at, "Start a room").click().run()
    code = at.query_params["room"]
    store = classroom.open_store()
    store.vote(code, "a-0123456789abcdef", 0, confidence="sure")
    at.run()
    _button(at, "End the class").click().run()
    assert store.room(code).ended and "The class has ended" in _texts(at)
    from ui.class_view import _csv

    lines = _csv(store, code).splitlines()
    assert lines[0] == ",".join(CSV_COLUMNS) and "answer_typed" in lines[0] and "right_answer" in lines[0]
    import csv

    (row,) = list(csv.DictReader(lines))  # one raw vote
    assert (row["confidence"], row["right"], row["round"]) == ("sure", "yes", "first vote")
    student = _phone(code, "b-0123456789abcdef")
    assert "ended this class" in _texts(student)


def test_an_unreachable_database_is_said_in_words_and_the_page_recovers_by_itself(monkeypatch):
    if pg_bin() is None:
        pytest.fail("PostgreSQL's server programs are missing: .ci/run installs Debian's postgresql")
    with PostgresServer() as pg:
        monkeypatch.setenv("GFG_CLASS_DB", pg.url)
        store = classroom.open_store(pg.url)
        room = store.create_room("gpu-basics")
        pg.halt()
        try:
            phone = _phone(room.code, "ann-0123456789abcdef")
            lecturer = _phone(room.code, "lecturer-0123456789")
            lecturer.session_state["_class_hosts"] = {room.code: room.host_token}
            lecturer.run()
            assert not phone.exception and not lecturer.exception
            for at in (phone, lecturer):
                text = _texts(at)
                assert "not answering" in text
                assert "OperationalError" not in text and str(pg.port) not in text
        finally:
            pg.resume()
        phone.run()  # the next poll
        assert "not answering" not in _texts(phone) and room.code in _texts(phone)
        store.engine.dispose()


def test_the_join_link_uses_gfg_public_url(monkeypatch):
    monkeypatch.setenv("GFG_PUBLIC_URL", "https://class.example.edu/guide/")
    at = open_page(PAGE)
    _button(at, "Start a room").click().run()
    code = at.query_params["room"]
    key = classroom.open_store().room(code).join_key
    assert f"https://class.example.edu/guide/class?room={code}&k={key}" in [c.value for c in at.code]
    assert "localhost" not in _texts(at)
    qr = at.get("image")[0]  # the QR code, with its text alternative
    assert "QR code that opens the join link" in str(qr.proto)
    _button(at, "Show the QR code large").click().run()  # the join screen for the back of the hall
    assert not at.exception
    assert sum(code in str(m.value) for m in at.markdown) >= 2  # the code, large, in the dialog too


@pytest.mark.parametrize(
    "url, shown",
    [
        (
            "postgresql+psycopg://gfg:s3cr3t@db.example.edu:5432/gfg",
            "postgresql+psycopg://gfg:***@db.example.edu:5432/gfg",
        ),
        ("postgresql+psycopg://gfg:p@ss@db/gfg", "postgresql+psycopg://gfg:***@db/gfg"),
        ("postgresql+psycopg:///gfg?host=/run/pg&password=s3cr3t", "postgresql+psycopg:///gfg?***"),
        ("postgresql+psycopg://gfg@db/gfg", "postgresql+psycopg://gfg@db/gfg"),
    ],
)
def test_run_local_never_prints_the_stores_password(url, shown):
    """Why 7: `deploy/run-local.sh start` printed GFG_CLASS_DB with its password."""
    import os
    import subprocess
    from pathlib import Path

    script = Path(__file__).resolve().parent.parent / "deploy" / "run-local.sh"
    out = subprocess.run(
        ["bash", str(script), "store"],
        env={**os.environ, "GFG_CLASS_DB": url},
        capture_output=True,
        text=True,
    )
    assert out.returncode == 0 and out.stdout.strip() == f"live classes: {shown}"
    assert "s3cr3t" not in out.stdout and "p@ss" not in out.stdout
    start = script.read_text()
    assert 'echo "live classes: $(store_words)"' in start and '$GFG_CLASS_DB"' not in start.replace(
        "printf '%s\\n' \"$GFG_CLASS_DB\"", ""
    )


def test_phones_show_the_class_spread_after_results_only_when_the_lecturer_chooses():
    store = classroom.open_store()
    room = store.create_room("gpu-basics")
    for voter in ("a", "b", "c"):
        store.vote(room.code, f"{voter}-0123456789abcdef", 0 if voter == "a" else 1)
    store.set_phase(room.code, room.host_token, "results")
    phone = _phone(room.code, "a-0123456789abcdef")
    assert "How the class voted" not in _texts(phone) and not phone.get("plotly_chart")
    store.set_show_spread(room.code, room.host_token, True)
    phone.run()
    assert "How the class voted" in _texts(phone)
    chart = phone.get("plotly_chart")[0].proto.spec
    assert "answer stays hidden" in _texts(phone) + chart and "\\u2713" not in chart  # the answer hidden
    store.set_phase(room.code, room.host_token, "revealed")
    phone.run()
    assert "\\u2713" in phone.get("plotly_chart")[0].proto.spec  # ✓ marks the answer


def test_the_join_link_joins_even_when_a_script_used_up_the_networks_wrong_codes():
    """Why 2: a valid link always joins. Its key (``&k=``, in the link and the QR code, never in
    the typed code) opens the room whatever the address's wrong-code limits say."""
    store = classroom.open_store()
    room = store.create_room("gpu-basics")
    assert len(room.join_key) >= 8
    for _ in range(WRONG_CODES_ADDRESS[1][0]):  # a script on the same NAT used up the hour
        store.wrong_code("127.0.0.1", "s:script")
    by_link = _phone(room.code, "ann-0123456789abcdef", k=room.join_key)
    assert "Voting is open" in _texts(by_link) and "Too many" not in _texts(by_link)
    for key in ("", "wrong-key", "é" * 8, room.join_key + "x"):
        refused = _phone(room.code, "bob-0123456789abcdef", k=key)
        assert "Too many wrong room codes: your network" in _texts(refused) and not refused.exception
    other = store.create_room("gpu-basics")
    crossed = _phone(other.code, "cat-0123456789abcdef", k=room.join_key)  # another room's key
    assert "Too many wrong room codes" in _texts(crossed)


def test_a_rerun_sent_before_the_browser_saw_the_rooms_address_still_opens_the_room():
    """CI failure (2026-11-29, test_the_whole_peer_instruction_loop_with_three_students): a phone
    typed the code and pressed Join, and its hello, sent with the address it still showed (no
    room), replaced the join's rerun (Streamlit keeps the newer query string when it folds two
    reruns): the student was back on the form. The hello's run without the room is mended; a
    run the reader starts without it is the reader leaving."""
    store = classroom.open_store()
    room = store.create_room("gpu-basics")
    at = open_page(PAGE)
    at.text_input[0].set_value(room.code.lower())
    _button(at, "Join").click().run()
    assert at.query_params["room"] == room.code
    at.query_params.clear()  # the hello's rerun, with the address as it was before Join
    at.session_state["_class_hello"] = {"voter": "amy-0123456789abcdef", "host": None, "link": None}
    at.session_state["_class_hello_now"] = True  # what the hello's callback notes for its run
    at.run()
    assert not at.exception and at.query_params.get("room") == room.code
    assert "Join" not in [b.label for b in at.button]
    assert f"Room {room.code}" in _texts(at) and "Voting is open" in _texts(at)
    at.query_params.clear()  # the reader leaves (no hello in this run): the form again
    at.run()
    assert "Join" in [b.label for b in at.button] and not at.query_params.get("room")
    lecturer = open_page(PAGE)  # the same for a lecturer's Start a room
    _button(lecturer, "Start a room").click().run()
    code = lecturer.query_params["room"]
    lecturer.query_params.clear()
    lecturer.session_state["_class_hello_now"] = True
    lecturer.run()
    assert lecturer.query_params.get("room") == code and "Close voting, show results" in [
        b.label for b in lecturer.button
    ]
