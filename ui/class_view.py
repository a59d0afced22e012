"""The Live class page: a lecturer runs a room through the course's questions; students vote
from phones. Layout and widgets only: rooms and votes live in classroom/, the questions in lessons/.

Addresses: ``class`` (join or start), ``class?room=CODE`` (a student; ``me=`` keeps their random
voter id across reloads and replicas), ``class?room=CODE&host=TOKEN`` (the lecturer). Each view
polls only the room's version number (and, for the lecturer, the vote count) in a fragment
every ``POLL_SECONDS``.
"""

from __future__ import annotations

import io
import secrets
import time
from typing import Any

import streamlit as st

from classroom import RoomError, Store, StoreUnavailable, course, normalise_code, open_store
from classroom.store import CODE_LENGTH, default_url
from classroom.tally import number_text, plain, rounds, tally
from lessons import load_lessons
from lessons.model import Question
from ui.chart import show
from ui.controls import term_markdown

POLL_SECONDS = 2.0
JOIN_ATTEMPTS = 5  # wrong codes a session may try in JOIN_WINDOW_S
JOIN_WINDOW_S = 60.0
_FAILURES = "_class_join_failures"
PHASE_WORDS = {
    "voting": "Voting is open",
    "results": "Votes are in: results shown, answer hidden",
    "revoting": "Revote is open: discuss with a neighbour, then vote again",
    "revote-results": "Revote is in: results shown, answer hidden",
    "revealed": "The answer is revealed",
}


@st.cache_resource(show_spinner=False)
def _open(url: str) -> Store:
    return open_store(url)


def store() -> Store | None:
    """The class store, or None after saying on screen that it cannot be reached."""
    try:
        return _open(default_url())
    except StoreUnavailable as exc:
        st.error(
            f"Live classes are not available right now: {exc}. Everything else in the guide works as "
            "usual; try this page again in a minute."
        )
        return None


def render() -> None:
    st.title("Live class")
    s = store()
    if s is None:
        return
    query = st.query_params
    code = query.get("room")
    if not code:
        landing(s)
        return
    try:
        room = s.room(code)
    except RoomError as exc:
        _count_failure()
        st.error(f"Room “{_short(code)}”: {exc}. Check the code on the lecturer's screen.")
        landing(s)
        return
    except StoreUnavailable as exc:
        st.error(f"Live classes are not available right now: {exc}.")
        return
    token = query.get("host", "")
    if token:
        if s.is_host(room.code, token):
            host_view(s, room.code, token)
            return
        st.warning("That lecturer link does not control this room: you are in it as a student.")
        del st.query_params["host"]
    student_view(s, room.code)


def _short(text: str) -> str:
    """A typed value shown back in a message: cut short, so a long forged value cannot fill the screen."""
    return text if len(text) <= 12 else text[:12] + "…"


# -- joining and starting -----------------------------------------------------------------------


def _recent_failures() -> list[float]:
    now = time.monotonic()
    kept = [t for t in st.session_state.get(_FAILURES, []) if now - t < JOIN_WINDOW_S]
    st.session_state[_FAILURES] = kept
    return kept


def _count_failure() -> None:
    st.session_state[_FAILURES] = [*_recent_failures(), time.monotonic()]


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
            if len(_recent_failures()) >= JOIN_ATTEMPTS:
                st.error(
                    f"Too many wrong codes: wait a minute before trying again "
                    f"({JOIN_ATTEMPTS} tries a minute)."
                )
            else:
                code = normalise_code(typed)
                try:
                    s.room(code)
                except RoomError:
                    _count_failure()
                    st.error(
                        f"No live room has the code “{_short(typed.strip())}”. "
                        f"Codes are {CODE_LENGTH} characters."
                    )
                else:
                    st.query_params.from_dict({"room": code, "me": _new_voter()})
                    st.rerun()
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
        st.caption(
            "A room asks the lesson's questions one at a time: students vote alone, see the spread, "
            "discuss, vote again, then you reveal the simulator's answer. Rooms close after 12 hours."
        )
        if st.button("Start a room", type="primary"):
            try:
                room = s.create_room(chosen.id)
            except (RoomError, StoreUnavailable) as exc:
                st.error(f"Could not start a room: {exc}.")
            else:
                st.query_params.from_dict({"room": room.code, "host": room.host_token})
                st.rerun()


def _new_voter() -> str:
    return secrets.token_urlsafe(9)


# -- the lecturer -------------------------------------------------------------------------------


@st.cache_data(show_spinner=False, max_entries=64)
def qr_png(link: str) -> bytes:
    """The join link as a QR code (PNG), drawn by segno."""
    import segno

    out = io.BytesIO()
    segno.make(link, error="m").save(out, kind="png", scale=8, border=2)
    return out.getvalue()


def join_link(code: str) -> str:
    """The address students open: this page's URL with ``?room=CODE`` (relative if unknown)."""
    base = st.context.url or "class"
    return f"{base}?room={code}"


def host_view(s: Store, code: str, token: str) -> None:
    link = join_link(code)
    try:
        room = s.room(code)
    except (RoomError, StoreUnavailable) as exc:
        st.error(f"This room is not available: {exc}.")
        return
    main, side = st.columns([3, 1], gap="large")
    with side:
        st.markdown(f"**Join at** `{link}`")
        st.markdown(f"Code\n## `{code}`")
        st.image(qr_png(link), caption=f"QR code of the join link for room {code}", width=220)
    shown = (room.question_id, room.variant, room.phase == "revealed")
    with main:
        _host_live(s, code, token, shown)
        if room.phase == "revealed":
            _step_view(room)


def _step_view(room: Any) -> None:
    """The live view of the step that teaches the question, once its answer is out (a chart shown
    before the vote could give a predict question's answer away). Drawn outside the poll, so it
    redraws only when the room moves on."""
    from ui.lesson_view import _embed

    found = course.step_of(room.lesson_id, room.question_id)
    if found is not None and found[1].view is not None:
        st.subheader(f"In the simulator: {found[1].title}")
        _embed(*found)


@st.fragment(run_every=POLL_SECONDS)
def _host_live(s: Store, code: str, token: str, shown: tuple[str, str, bool]) -> None:
    try:
        room = s.room(code)
    except (RoomError, StoreUnavailable) as exc:
        st.error(f"This room is not available: {exc}.")
        return
    if (room.question_id, room.variant, room.phase == "revealed") != shown:
        st.rerun(scope="app")  # the question or the reveal changed what is drawn outside the poll
    question = course.question(room.lesson_id, room.question_id, room.variant)
    if question is None:
        st.error("This room's question is no longer in the course.")
        return
    lesson_questions = course.room_questions(room.lesson_id)
    number = next((i for i, q in enumerate(lesson_questions) if q.id == question.id), 0) + 1
    st.caption(f"Question {number} of {len(lesson_questions)} · {PHASE_WORDS[room.phase]}")
    _prompt(question)
    first = s.counts(code, question.id, 1, room.variant)
    second = s.counts(code, question.id, 2, room.variant)
    in_room = s.voters(code)
    voted = sum((second if room.round == 2 else first).values())
    st.metric("Voted", f"{voted} of {in_room}", help="students who have voted in this room so far")
    _host_controls(s, room, question, token)
    if room.phase in ("results", "revote-results", "revealed") and (first or second):
        _results(question, first, second if room.phase != "results" else None, room.phase == "revealed")
    if room.phase == "revealed":
        _reveal(question)


def _host_controls(s: Store, room: Any, question: Question, token: str) -> None:
    def go(phase: str) -> None:
        s.set_phase(room.code, token, phase)

    cols = st.columns(3)
    if room.phase == "voting":
        cols[0].button("Close voting, show results", on_click=go, args=("results",), type="primary")
    elif room.phase == "results":
        cols[0].button("Revote (after discussion)", on_click=go, args=("revoting",), type="primary")
        cols[1].button("Reveal the answer", on_click=go, args=("revealed",))
    elif room.phase == "revoting":
        cols[0].button(
            "Close the revote, show results", on_click=go, args=("revote-results",), type="primary"
        )
    elif room.phase == "revote-results":
        cols[0].button("Reveal the answer", on_click=go, args=("revealed",), type="primary")
    else:
        following = course.next_after(room.lesson_id, question.id)
        if following is not None:
            cols[0].button(
                "Next question",
                on_click=lambda: s.next_question(room.code, token, following.id),
                type="primary",
            )
        else:
            cols[0].markdown("That was the lesson's last question.")
        asked = {room.variant}
        again = course.another_variant(room.lesson_id, question.id, asked | {""})
        if again is not None:
            cols[1].button(
                "Same question, new numbers",
                on_click=lambda: s.next_question(room.code, token, again.id, again.variant_key),
                help="An equivalent question on other inputs: did the idea stick?",
            )


def _results(
    question: Question, first: dict[str, int], second: dict[str, int] | None, revealed: bool
) -> None:
    from charts.classroom import votes_figure

    if second is not None:
        one, two = rounds(question, first, second)
    else:
        one, two = tally(question, first), None
    spec = votes_figure(
        one.labels,
        one.votes,
        two.votes if two else None,
        right=one.right if revealed else None,
        question="each answer's votes"
        + ("" if revealed else " (the answer stays hidden until you reveal it)"),
    )
    show(spec, key="class-votes")
    if revealed:
        cells = [f"First vote: **{one.share_right:.0%}** right ({one.correct} of {one.total})"]
        if two is not None and two.total:
            cells.append(f"Revote: **{two.share_right:.0%}** right ({two.correct} of {two.total})")
        st.markdown(" · ".join(cells))


def _reveal(question: Question) -> None:
    if question.is_numeric:
        st.success(f"**The model's answer:** {number_text(question.answer, question.unit)}")
    else:
        st.success(f"**The answer:** {term_markdown(question.options[int(question.answer)].text)}")
    st.markdown(term_markdown(question.explanation))


def _prompt(question: Question) -> None:
    st.markdown(f"## {question.prompt}")
    if not question.is_numeric:
        st.markdown(
            "\n\n".join(f"**{chr(65 + i)}.** {option.text}" for i, option in enumerate(question.options))
        )
    elif question.unit:
        st.caption(f"Answer in {question.unit}.")


# -- a student ----------------------------------------------------------------------------------


def student_view(s: Store, code: str) -> None:
    voter = st.query_params.get("me", "")
    if not voter or len(voter) > 24 or not voter.replace("-", "").replace("_", "").isalnum():
        voter = _new_voter()
        st.query_params["me"] = voter  # kept in the address: a reload or another replica keeps it
    st.caption(f"Room {code} · no name is asked or stored")
    _student_live(s, code, voter)


@st.fragment(run_every=POLL_SECONDS)
def _student_live(s: Store, code: str, voter: str) -> None:
    try:
        room = s.room(code)
    except (RoomError, StoreUnavailable) as exc:
        st.error(f"This room is not available: {exc}.")
        return
    question = course.question(room.lesson_id, room.question_id, room.variant)
    if question is None:
        st.error("This room's question is no longer in the course.")
        return
    mine = s.my_vote(code, voter, question.id, room.round, room.variant)
    st.caption(PHASE_WORDS[room.phase])
    st.markdown(f"**{term_markdown(question.prompt)}**")
    if room.accepting_votes:
        _ballot(s, room, question, voter, mine)
    elif room.phase == "revealed":
        _own_result(s, room, question, voter)
    else:
        if mine is not None:
            st.info(f"Your vote: **{_answer_text(question, mine)}**. Waiting for the lecturer…")
        else:
            st.info("Waiting for the lecturer…")


def _ballot(s: Store, room: Any, question: Question, voter: str, mine: str | None) -> None:
    key = f"ballot-{room.code}-{question.id}-{room.variant}-{room.round}"
    with st.form(key, border=False):
        if question.is_numeric:
            value = st.number_input(
                f"Your answer ({question.unit})" if question.unit else "Your answer",
                value=None,
                format="%g",
                key=key + "-n",
            )
        else:
            value = st.radio(
                "Your answer",
                range(len(question.options)),
                index=None,
                format_func=lambda i: f"{chr(65 + i)}. {plain(question.options[i].text)}",
                key=key + "-c",
            )
        sent = st.form_submit_button("Vote", type="primary")
    if sent:
        if value is None:
            st.warning("Choose or type an answer first.")
        else:
            try:
                s.vote(room.code, voter, value, question_id=question.id, variant=room.variant)
            except (RoomError, StoreUnavailable) as exc:
                st.error(f"Your vote was not counted: {exc}.")
                return
            mine = s.my_vote(room.code, voter, question.id, room.round, room.variant)
    if mine is not None:
        st.success(
            f"Your vote: **{_answer_text(question, mine)}** — counted. You can change it until voting closes."
        )


def _own_result(s: Store, room: Any, question: Question, voter: str) -> None:
    from lessons.model import grade

    last = s.my_vote(room.code, voter, question.id, 2, room.variant)
    first = s.my_vote(room.code, voter, question.id, 1, room.variant)
    answer = last if last is not None else first
    if answer is None:
        st.info("You did not vote on this one.")
    else:
        response: float | int = float(answer) if question.is_numeric else int(answer)
        ok = grade(question, response)
        (st.success if ok else st.warning)(
            f"{'Right' if ok else 'Not this time'}: you said **{_answer_text(question, answer)}**."
        )
    _reveal(question)


def _answer_text(question: Question, stored: str) -> str:
    if question.is_numeric:
        return number_text(float(stored), question.unit)
    index = int(stored)
    return f"{chr(65 + index)}. {plain(question.options[index].text)}"
