"""A live class in real browsers: a lecturer and three students, each in their own browser
context, through the whole loop (join by code or link, vote, results, revote, reveal); and two app
servers sharing one PostgreSQL, students voting through each, the lecturer seeing every vote."""

from __future__ import annotations

import re
from urllib.parse import parse_qs, urlparse

import pytest

from classroom import course, open_store
from tests.e2e.conftest import DATA_DIRS, start_app, stop_app
from tests.pg_server import PostgresServer, pg_bin

pytestmark = pytest.mark.e2e
WAIT = 20_000  # ms: a fragment polls every 2 s; a rerun on this 2-core machine can take a few


def _lecturer(browser, url: str):
    context = browser.new_context(viewport={"width": 1280, "height": 720})
    page = context.new_page()
    page.goto(f"{url}/class", wait_until="domcontentloaded")
    page.get_by_role("button", name="Start a room").click()
    page.wait_for_url(re.compile(r"host="), timeout=WAIT)
    query = parse_qs(urlparse(page.url).query)
    return context, page, query["room"][0]


def _student(browser, url: str, code: str, *, typed: bool):
    context = browser.new_context(viewport={"width": 390, "height": 844}, is_mobile=True, has_touch=True)
    page = context.new_page()
    if typed:
        page.goto(f"{url}/class", wait_until="domcontentloaded")
        page.get_by_label("Room code (on the lecturer's screen)").fill(code.lower())
        page.get_by_role("button", name="Join").click()
    else:
        page.goto(f"{url}/class?room={code}", wait_until="domcontentloaded")
    page.get_by_role("button", name="Vote").wait_for(timeout=WAIT)
    return context, page


def _vote(page, option_text: str) -> None:
    page.get_by_text(option_text, exact=True).click()
    page.get_by_role("button", name="Vote").click()
    page.get_by_text("counted").wait_for(timeout=WAIT)


def _expect_text(page, text: str) -> None:
    page.get_by_text(text).first.wait_for(timeout=WAIT)


def test_the_whole_peer_instruction_loop_with_three_students(app_url, browser):
    contexts = []
    try:
        lecturer_context, lecturer, code = _lecturer(browser, app_url)
        contexts.append(lecturer_context)
        room = open_store_for_page(app_url).room(code)
        question = course.question(room.lesson_id, room.question_id)
        labels = [f"{chr(65 + i)}. {o.text}" for i, o in enumerate(question.options)]
        right, wrong = labels[int(question.answer)], labels[(int(question.answer) + 1) % len(labels)]
        students = []
        for i in range(3):
            context, page = _student(browser, app_url, code, typed=i == 0)
            contexts.append(context)
            students.append(page)
        for page, choice in zip(students, (wrong, wrong, right), strict=True):
            _vote(page, choice)
        _expect_text(lecturer, "3 of 3")
        lecturer.get_by_role("button", name="Close voting, show results").click()
        for page in students:
            _expect_text(page, "Waiting for the lecturer")
        _expect_text(lecturer, "answer stays hidden")
        lecturer.get_by_role("button", name="Revote (after discussion)").click()
        for page in students:
            page.get_by_role("button", name="Vote").wait_for(timeout=WAIT)
            _vote(page, right)
        _expect_text(lecturer, "3 of 3")
        lecturer.get_by_role("button", name="Close the revote, show results").click()
        lecturer.get_by_role("button", name="Reveal the answer").click()
        _expect_text(lecturer, "Revote: 100% right (3 of 3)")
        _expect_text(lecturer, "First vote: 33% right (1 of 3)")
        for page in students:
            _expect_text(page, "Right: you said")
        # A reload keeps a student's identity (their id is in the address): no second voter.
        students[0].reload(wait_until="domcontentloaded")
        _expect_text(students[0], "Right: you said")
        assert open_store_for_page(app_url).voters(code) == 3
    finally:
        for context in contexts:
            context.close()


def open_store_for_page(url: str):
    """The store the session's app uses: SQLite under its own GFG_DATA_DIR."""
    return open_store(f"sqlite:///{DATA_DIRS[url] / 'classroom.sqlite3'}")


def test_two_app_servers_share_one_postgresql_room(browser):
    if pg_bin() is None:
        pytest.fail("PostgreSQL's server programs are missing: .ci/run installs Debian's postgresql")
    with PostgresServer() as pg:
        servers = [start_app({"GFG_CLASS_DB": pg.url}) for _ in range(2)]
        contexts = []
        try:
            (url_a, _), (url_b, _) = servers
            lecturer_context, lecturer, code = _lecturer(browser, url_a)
            contexts.append(lecturer_context)
            store = open_store(pg.url)
            room = store.room(code)
            question = course.question(room.lesson_id, room.question_id)
            label = f"A. {question.options[0].text}"
            for url in (url_a, url_b, url_b):
                context, page = _student(browser, url, code, typed=False)
                contexts.append(context)
                _vote(page, label)
            _expect_text(lecturer, "3 of 3")
            assert store.counts(code, question.id, 1) == {"0": 3}
            store.engine.dispose()
        finally:
            for context in contexts:
                context.close()
            for _, process in servers:
                stop_app(process)
