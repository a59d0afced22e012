"""The Live class page, run by Streamlit's AppTest against a real SQLite store: a lecturer starts
a room and paces it; students join by code, vote, change their vote, and see their result."""

from __future__ import annotations

import pytest

import classroom
from classroom import course
from tests.pages import open_page

PAGE = "app_pages/live_class.py"


@pytest.fixture(autouse=True)
def data_dir(tmp_path, monkeypatch):
    monkeypatch.delenv("GFG_CLASS_DB", raising=False)
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


def test_a_lecturer_starts_a_room_and_sees_the_code_and_first_question():
    at = open_page(PAGE)
    assert not at.exception
    _button(at, "Start a room").click().run()
    query = dict(at.query_params)
    assert set(query) == {"room", "host"}
    room = classroom.open_store().room(query["room"])
    first = course.room_questions(room.lesson_id)[0]
    text = _texts(at)
    assert f"## `{room.code}`" in text and f"?room={room.code}" in text
    assert first.prompt in text
    assert [m.value for m in at.metric] == ["0 of 0"]
    assert [b.label for b in at.button] == ["Close voting, show results"]
    assert not any(h.value.startswith("In the simulator") for h in at.subheader)  # not before the reveal
    assert query["host"] not in text  # the token is in the lecturer's address only


def test_students_vote_change_their_vote_and_see_the_result_after_the_reveal():
    store = classroom.open_store()
    room = store.create_room("gpu-basics")
    question = course.question(room.lesson_id, room.question_id)
    right = int(question.answer)
    wrong = (right + 1) % len(question.options)

    ann = open_page(PAGE, room=room.code, me="ann-1")
    assert not ann.exception and question.prompt in _texts(ann)
    ann.radio[0].set_value(wrong)
    _button(ann, "Vote").click().run()
    assert "counted" in _texts(ann)
    ann.radio[0].set_value(right)
    _button(ann, "Vote").click().run()  # a second vote replaces the first
    bob = open_page(PAGE, room=room.code, me="bob-2")
    bob.radio[0].set_value(wrong)
    _button(bob, "Vote").click().run()
    assert store.counts(room.code, question.id, 1) == {str(right): 1, str(wrong): 1}

    store.set_phase(room.code, room.host_token, "results")
    ann.run()
    assert "Waiting for the lecturer" in _texts(ann) and not ann.radio
    store.set_phase(room.code, room.host_token, "revealed")
    ann.run()
    bob.run()
    assert "Right" in _texts(ann) and "Not this time" in _texts(bob)
    assert "[[" not in _texts(ann)  # glossary links are links, never raw markup


def test_the_lecturer_paces_the_loop_and_sees_both_rounds_at_the_reveal():
    at = open_page(PAGE)
    _button(at, "Start a room").click().run()
    code, token = at.query_params["room"], at.query_params["host"]
    store = classroom.open_store()
    room = store.room(code)
    question = course.question(room.lesson_id, room.question_id)
    for i, voter in enumerate(("a", "b", "c")):
        store.vote(code, voter, i % len(question.options))
    at.run()
    assert [m.value for m in at.metric] == ["3 of 3"]
    _button(at, "Close voting, show results").click().run()
    assert "answer stays hidden" in _texts(at) or at.get("plotly_chart")
    _button(at, "Revote (after discussion)").click().run()
    store.vote(code, "a", int(question.answer))
    at.run()
    assert [m.value for m in at.metric] == ["1 of 3"]
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
    assert token == at.query_params["host"]


def test_a_wrong_code_says_so_and_a_forged_host_token_controls_nothing():
    at = open_page(PAGE, room="x" * 5000)
    assert not at.exception
    errors = " ".join(e.value for e in at.error)
    assert "not a room code" in errors and len(errors) < 300
    store = classroom.open_store()
    room = store.create_room("gpu-basics")
    student = open_page(PAGE, room=room.code, host="forged", me="eve-1")
    assert not student.exception
    assert "does not control this room" in _texts(student)
    assert "Close voting, show results" not in [b.label for b in student.button]
    assert "host" not in dict(student.query_params)


def test_wrong_codes_are_rate_limited_per_session():
    at = open_page(PAGE)
    for _ in range(6):
        at.text_input[0].set_value("ACDEFG")
        _button(at, "Join").click().run()
    assert "Too many wrong codes" in " ".join(e.value for e in at.error)


def test_an_unreachable_database_leaves_a_message_not_a_traceback(monkeypatch):
    monkeypatch.setenv("GFG_CLASS_DB", "postgresql+psycopg://nobody@127.0.0.1:1/none")
    at = open_page(PAGE)
    assert not at.exception
    assert "not available right now" in " ".join(e.value for e in at.error)


def test_plan_a_class_links_each_lesson_to_a_live_room():
    at = open_page("app_pages/lessons.py", plan="1")
    links = [link.proto for link in at.get("page_link") if link.proto.label.startswith("Run lesson")]
    assert links and links[0].query_string == "lesson=gpu-basics"
    room_page = open_page(PAGE, lesson="roofline")
    assert room_page.selectbox[0].value.id == "roofline"  # the lesson comes preselected


def test_the_load_tests_tally_lag_is_the_wait_until_the_lecturer_saw_each_vote():
    from bench.live_class import tally_lag

    log = [(1.0, 0), (2.0, 1), (4.0, 3)]
    assert tally_lag(log, [1.5, 1.8, 3.0]) == [0.5, 2.2, 1.0]
    assert tally_lag(log, [5.0]) == []  # never seen: not counted as current
