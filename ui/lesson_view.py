"""How a lesson is drawn: the course index, one step (prose, predict-then-reveal, live view, quiz),
the summary, review, the printable record and the "Plan a class" handout. The lessons page only
wires these together.

Progress is a ``lessons.progress`` record kept in session state under ``PROGRESS_KEY`` and mirrored
into the browser's storage (``ui.browser``): answers (the first try is what the score counts),
the step a learner was on, completed lessons and the review schedule. The address always names
the view (``lesson`` and ``step``, ``plan``, ``review``, ``record``) before anything is answered,
and answering never navigates.
"""

from __future__ import annotations

import contextlib
import math
import random
import re
import time
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from typing import Any

import streamlit as st

from content import load_page, plain_terms
from content.pages import PAGES
from content.schema import page_params
from glossary import terms_by_id
from lessons import Lesson, Outline, Question, Step, grade, load_lessons, outline, relative_error
from lessons import progress as course
from lessons.model import number_text
from ui.browser import browser_link
from ui.controls import term_markdown
from ui.presenter import is_presenting
from ui.state import GLOBAL_KEYS, PageState, current_url
from ui.views import get_view

PROGRESS_KEY = "course_progress"
REVEALED_KEY = "lesson_revealed"  # questions a teacher revealed in presenter view (this session only)
_LOADED_KEY = "_course_progress_loaded"
_SAVED_KEY = "_course_progress_saved"
_SEQ_KEY = "_course_progress_seq"
_ADDRESS_KEY = "_lessons_address"
_FLASH_KEY = "_progress_flash"
_FOCUS_KEY = "_lesson_focus"  # where the focus goes on the next run: {"target", "seq", ...}
LESSONS_PAGE = next(p for p in PAGES if p.url_path == "lessons")
CLASS_PAGE = next(p for p in PAGES if p.url_path == "class")
DONE = "done"  # ``step=done``: the lesson's summary
MAX_SEQUENCE = 80  # steps in a planned class carried in ``seq``


def progress() -> dict[str, Any]:
    """This learner's progress record (created on first use; restored from the browser on load)."""
    return st.session_state.setdefault(PROGRESS_KEY, course.empty())


def answers() -> dict[str, dict[str, Any]]:
    """This learner's answers, by ``"<lesson>/<question>"``."""
    return progress().setdefault("answers", {})


def _qkey(lesson: Lesson, question: Question) -> str:
    return course.key(lesson.id, question.id)


def _known() -> dict[str, list[str]]:
    return {lesson.id: [q.id for q in lesson.questions] for lesson in load_lessons()}


def lesson_progress(lesson: Lesson) -> tuple[int, int, int]:
    """(answered, right at the first try, questions) for ``lesson``."""
    return course.lesson_score(progress(), lesson.id, [q.id for q in lesson.questions])


def request_focus(target: str, **where: str) -> None:
    """Move the keyboard focus on the next run: ``"step"`` (the step's heading, after Next or
    Previous), ``"result"`` (the verdict of the question whose container key is ``where["box"]``)
    or ``"question"`` (that question's first answer control, after Try again)."""
    ss = st.session_state
    seq = (ss.get(_FOCUS_KEY) or {}).get("seq", 0) + 1
    ss[_FOCUS_KEY] = {"target": target, "seq": seq, **where}


def _focus_for(step: Step | None) -> dict[str, Any] | None:
    """The browser's focus instruction for this run, from the pending request."""
    request = st.session_state.get(_FOCUS_KEY)
    if not request:
        return None
    if request["target"] == "step" and step is not None:
        return {"selector": "[data-testid='stMain'] h2", "text": step.title, "seq": request["seq"]}
    if request["target"] == "question" and request.get("box"):  # its first answer control
        return {"selector": f".st-key-{request['box']} input", "block": "center", "seq": request["seq"]}
    if request["target"] == "result" and request.get("box"):
        return {
            "selector": f".st-key-{request['box']} [data-testid='stAlert']",
            "block": "center",
            "seq": request["seq"],
        }
    return None


def sync_browser(*, keys: bool = False, step: Step | None = None) -> str | None:
    """Keep the progress record in this browser's storage. On the run after a page load the stored
    record arrives and is merged in; afterwards every change is written back. Returns "next" or
    "prev" when a presentation clicker key was pressed (``keys``: presenter view on a step). A
    pending focus request (``request_focus``) is carried out for ``step``, the step on screen."""
    ss = st.session_state
    text = course.dumps(progress())
    save = text if ss.get(_LOADED_KEY) and text != ss.get(_SAVED_KEY) else None
    if save is not None:
        ss[_SEQ_KEY] = ss.get(_SEQ_KEY, 0) + 1
    try:
        loaded, move = browser_link(save=save, seq=ss.get(_SEQ_KEY, 0), keys=keys, focus=_focus_for(step))
    except Exception:
        return None
    if save is not None:
        ss[_SAVED_KEY] = save
    if loaded is not None and not ss.get(_LOADED_KEY):
        ss[_LOADED_KEY] = True
        stored = course.empty()
        if loaded:
            with contextlib.suppress(course.ProgressError):  # a damaged record: start afresh
                stored = course.loads(loaded, _known())
        ss[PROGRESS_KEY] = course.merge(stored, progress())
        ss[_SAVED_KEY] = loaded
        st.rerun()
    return move


def step_link(lesson: Lesson | Outline, number: int | str) -> dict[str, str]:
    """Query parameters that open step ``number`` (1-based; ``"done"`` for the summary) of ``lesson``."""
    return {"lesson": lesson.id, "step": str(number)}


def ensure_address(query: Mapping[str, str]) -> None:
    """Make the browser's address say ``query`` (plus presenter view) before anything is answered.

    A link to the same page (Start, Continue, a planned step) changes what the script sees but not
    always the address bar; the next click would then rerun the old address. Writing the address
    whenever the view changes keeps the two together."""
    wanted = _with_app_keys(query)
    text = repr(sorted(wanted.items()))
    if (
        st.session_state.get(_ADDRESS_KEY) != text
        or {k: st.query_params.get(k) for k in st.query_params} != wanted
    ):
        st.query_params.from_dict(wanted)
        st.session_state[_ADDRESS_KEY] = text


# -- planned sequences -----------------------------------------------------------------------------


def parse_sequence(text: str | None, lessons: Sequence[Lesson]) -> list[tuple[str, int]]:
    """``seq=gpu-basics:1,roofline:3`` as (lesson id, step) pairs; anything unknown is dropped."""
    if not text:
        return []
    by_id = {lesson.id: lesson for lesson in lessons}
    found: list[tuple[str, int]] = []
    for item in str(text).split(",")[:MAX_SEQUENCE]:
        lesson_id, _, number = item.partition(":")
        lesson = by_id.get(lesson_id.strip())
        if lesson is not None and number.strip().isdigit() and 1 <= int(number) <= len(lesson.steps):
            found.append((lesson.id, int(number)))
    return found


def sequence_text(items: Sequence[tuple[str, int]]) -> str:
    """The ``seq`` value for a planned class."""
    return ",".join(f"{lesson_id}:{number}" for lesson_id, number in items)


def _neighbour(
    lesson: Lesson, number: int, sequence: Sequence[tuple[str, int]], offset: int
) -> dict[str, str] | None:
    """The address of the step before (-1) or after (+1) this one: in the planned sequence when the
    step is part of it, else in the lesson (after the last step: its summary)."""
    here = (lesson.id, number)
    if here in sequence:
        position = sequence.index(here) + offset
        if 0 <= position < len(sequence):
            target_id, target = sequence[position]
            return {"lesson": target_id, "step": str(target), "seq": sequence_text(sequence)}
        return None
    target = number + offset
    if target < 1:
        return None
    if target > len(lesson.steps):
        return step_link(lesson, DONE)
    return step_link(lesson, target)


def _with_app_keys(query: Mapping[str, str]) -> dict[str, str]:
    """``query`` plus the address keys that belong to the app, not the page (presenter view)."""
    return {k: st.query_params[k] for k in GLOBAL_KEYS if k in st.query_params} | dict(query)


def _go(query: Mapping[str, str]) -> None:
    st.query_params.from_dict(_with_app_keys(query))
    request_focus("step")


# -- the course index ----------------------------------------------------------------------------


def course_index(lessons: Sequence[Lesson]) -> None:
    """Every lesson with its minutes, objectives and progress, what is due for review, and the
    learner's record (export, import, print)."""
    page = load_page("lessons")
    st.title(page.meta["title"])
    st.markdown(term_markdown(page.body))
    total_minutes = sum(lesson.minutes for lesson in lessons)
    total_questions = sum(len(lesson.questions) for lesson in lessons)
    st.caption(
        f"{len(lessons)} lessons · about {total_minutes / 60:.1f} hours · {total_questions} questions · "
        "minutes estimated from each lesson's words (150 a minute), questions and charts"
    )
    due = course.due_reviews(progress(), time.time())
    if due:
        st.page_link(
            LESSONS_PAGE.path,
            label=f"Review: {len(due)} question(s) due, on new numbers",
            icon=":material/replay:",
            query_params={"review": "1"},
        )
    links = st.columns(3)
    links[0].page_link(
        LESSONS_PAGE.path, label="Plan a class", icon=":material/event_note:", query_params={"plan": "1"}
    )
    links[1].page_link(
        LESSONS_PAGE.path, label="Review", icon=":material/replay:", query_params={"review": "1"}
    )
    links[2].page_link(
        LESSONS_PAGE.path,
        label="Your record",
        icon=":material/workspace_premium:",
        query_params={"record": "1"},
    )
    for lesson in lessons:
        answered, right, count = lesson_progress(lesson)
        with st.container(border=True):
            left, right_column = st.columns([5, 2], vertical_alignment="center")
            left.markdown(f"## {lesson.number}. {lesson.title}")
            left.caption(f"about {lesson.minutes} minutes · {len(lesson.steps)} steps · {count} questions")
            left.markdown("\n".join(f"- {objective}" for objective in lesson.objectives))
            if answered:
                right_column.progress(
                    answered / count, text=f"{answered} of {count} answered, {right} right first time"
                )
            last = progress().get("steps", {}).get(lesson.id)
            last = last if isinstance(last, int) and 1 <= last <= len(lesson.steps) else None
            right_column.page_link(
                LESSONS_PAGE.path,
                label=f"Continue at step {last}" if last and (answered or last > 1) else "Start",
                icon=":material/play_arrow:",
                query_params=step_link(lesson, last or 1),
                help=f"Lesson {lesson.number}: {lesson.title}",
            )
            if lesson.id in progress().get("done", {}):
                right_column.page_link(
                    LESSONS_PAGE.path,
                    label="Summary",
                    icon=":material/task_alt:",
                    query_params=step_link(lesson, DONE),
                    help="Your score and what you missed in this lesson",
                )
    progress_file_controls()


def progress_file_controls() -> None:
    """Export the record to a file and import it on another device (it never leaves the browser
    otherwise)."""
    flash = bool(st.session_state.get(_FLASH_KEY))
    with st.expander("Your progress: kept in this browser · move it to another device", expanded=flash):
        st.markdown(
            "Your answers, the step you were on and your review list are saved in this browser's "
            "storage, on this device only: no account, nothing on a server. To continue elsewhere, "
            "download the file here and import it there."
        )
        st.download_button(
            "Download my progress",
            course.dumps(progress()),
            "gpu-field-guide-progress.json",
            "application/json",
            key="progress_export",
            icon=":material/download:",
        )
        upload = st.file_uploader("Import a progress file", type=["json"], key="progress_import")
        if upload is not None and st.session_state.get("_progress_imported") != upload.file_id:
            try:
                imported = course.loads(upload.getvalue(), _known())
            except course.ProgressError as exc:
                st.error(f"That file was not imported: {exc}.")
            else:  # rerun, so this run's browser link saves it and every count above shows it
                st.session_state[PROGRESS_KEY] = imported
                st.session_state["_progress_imported"] = upload.file_id
                st.session_state[_FLASH_KEY] = (
                    f"Imported: {len(imported['answers'])} answers, {len(imported['done'])} lessons "
                    "completed. It replaced this browser's progress."
                )
                st.rerun()
        flash = st.session_state.pop(_FLASH_KEY, None)
        if flash:
            st.success(flash)


# -- one step --------------------------------------------------------------------------------------


def _embed(lesson: Lesson, step: Step) -> None:
    view = step.view
    if view is None:
        return
    page_file = next(p for p in PAGES if p.url_path == view.page).file.stem
    preset = next(p for p in load_page(page_file).meta["presets"] if p["id"] == view.preset)
    ns = f"lesson-{lesson.id}-{step.id}"
    state = PageState(
        page_params()[view.page], [preset], ns=ns, url=False, initial=preset.get("params") or {}
    )
    with st.container(border=True):
        prepare = get_view(view.page, view.view).prepare
        note = prepare(state) if prepare else ""
        if note:
            st.caption(note)
        if view.controls:
            columns = st.columns(min(len(view.controls), 4))
            for i, key in enumerate(view.controls):
                state.widget(key, container=columns[i % len(columns)])
        get_view(view.page, view.view).render(state, st, ns)
        if view.caption:
            st.caption(term_markdown(view.caption))
        page = next(p for p in PAGES if p.url_path == view.page)
        st.page_link(
            page.path,
            label=f"Open in the full simulator: {page.title}",
            icon=":material/open_in_new:",
            query_params=state.query(),
        )


def _show_result(question: Question, record: Mapping[str, Any]) -> None:
    response = record["response"]
    if question.is_numeric:
        off = relative_error(question, response)
        verdict = "Right" if record["correct"] else ("Too high" if off > 0 else "Too low")
        how_far = "" if record["correct"] else f" — {abs(off):.0%} {'over' if off > 0 else 'under'}"
        (st.success if record["correct"] else st.warning)(
            f"**{verdict}.** You said {number_text(response, question.unit)}; the model gives "
            f"{number_text(question.answer, question.unit)}{how_far} "
            f"(within {question.tolerance:.0%} counts as right)."
        )
    else:
        chosen = question.options[int(response)]
        if record["correct"]:
            st.success(f"**Right:** {term_markdown(chosen.text)}")
        else:
            st.warning(
                f"**Not quite:** {term_markdown(chosen.text)}\n\n{term_markdown(chosen.feedback)}\n\n"
                f"**The answer:** {term_markdown(question.options[question.answer].text)}"
            )
    st.markdown(term_markdown(question.explanation))


def widget_key(asked: Question) -> str:
    """The key of a question's answer form and field: ``<lesson>/<question>``, with ``-v<n>`` for a
    variant other than the lesson's own (a new variant gets fresh, empty widgets)."""
    base = course.key(asked.lesson, asked.id)
    return base if asked.variant_index == 0 else f"{base}-v{asked.variant_index}"


def current_variant(lesson: Lesson, question: Question) -> Question:
    """The variant this learner is being asked (the lesson's own until they ask for another)."""
    entry = answers().get(_qkey(lesson, question))
    if entry and entry.get("variant"):
        return question.variant(entry["variant"]) or question
    return question


def plain_prompt(prompt: str) -> str:
    """A question's prompt as plain text for an accessible name: ``[[id|text]]`` → text,
    ``[[id]]`` → the term's title, Markdown emphasis and code marks dropped."""
    from glossary import terms_by_id

    by_id = terms_by_id()

    def term(match: re.Match) -> str:
        inner = match.group(1)
        if "|" in inner:
            return inner.split("|", 1)[1]
        return by_id[inner].title if inner in by_id else inner

    text = re.sub(r"\[\[([^\]]+)\]\]", term, prompt)
    text = re.sub(r"\[([^\]]+)\]\([^)]*\)", r"\1", text)  # [text](url) → text
    return re.sub(r"[*_`$]", "", text).strip()


def _another(question: Question, asked: Question) -> Question:
    """A different variant than ``asked``, at random (the question itself when it has none)."""
    others = [v for v in (question, *question.variants()) if v.inputs != asked.inputs]
    return random.choice(others) if others else asked


def _retry(lesson: Lesson, question: Question, asked: Question, *, new_numbers: bool) -> None:
    target = _another(question, asked) if new_numbers else asked
    course.ask_again(progress(), _qkey(lesson, question), target.variant_key)


def _question(lesson: Lesson, question: Question, number: int, *, review: bool = False) -> bool:
    """Ask ``question`` (in the variant this learner is on); returns whether it has been answered
    (or revealed by the teacher). In ``review`` mode the answer moves the review schedule."""
    key = _qkey(lesson, question)
    entry = answers().get(key)
    asked = current_variant(lesson, question)
    answered = entry is not None and not entry.get("open")
    revealed = key in st.session_state.get(REVEALED_KEY, set())
    label = "Predict first" if question.kind == "predict" else f"Question {number}"
    box = "q-" + re.sub(r"[^A-Za-z0-9_-]", "-", key)  # a CSS class: st-key-<box>
    with st.container(border=True, key=box):
        st.markdown(f"**{label}.** {term_markdown(asked.prompt)}")
        if not answered and not revealed:
            if is_presenting() and not review:
                for i, option in enumerate(asked.options):
                    st.markdown(f"{chr(65 + i)}. {term_markdown(option.text)}")
                if st.button("Reveal the answer", key=f"reveal-{key}", type="primary"):
                    st.session_state.setdefault(REVEALED_KEY, set()).add(key)
                    request_focus("result", box=box)
                    st.rerun()
                return False
            wkey = widget_key(asked)
            with st.form(f"form-{wkey}", border=False, enter_to_submit=True):
                if asked.is_numeric:
                    response = st.number_input(
                        f"Your answer ({asked.unit})",
                        value=None,
                        step=None,
                        format="%g",
                        key=f"input-{wkey}",
                        placeholder="type a number, then press Enter",
                    )
                else:
                    # The group's accessible name carries the question, so a screen reader that
                    # lands on an option hears what is asked (the prompt above stays as it is).
                    response = st.radio(
                        f"{label}. {plain_prompt(asked.prompt)}",
                        range(len(asked.options)),
                        index=None,
                        format_func=lambda i: asked.options[i].text,
                        key=f"input-{wkey}",
                        label_visibility="collapsed",
                    )
                submitted = st.form_submit_button(
                    "Commit my prediction" if question.kind == "predict" else "Check", type="primary"
                )
            empty_key = f"empty-{wkey}"  # said until the learner submits an answer
            if submitted:
                if response is None:
                    st.session_state[empty_key] = True
                else:
                    st.session_state.pop(empty_key, None)
            if st.session_state.get(empty_key):
                st.warning("Choose or type an answer first.", icon=":material/touch_app:")
            if submitted:
                if response is None:
                    return False
                value = float(response) if asked.is_numeric else int(response)
                correct = grade(asked, value)
                now = time.time()
                if review:
                    course.record_review(progress(), key, correct=correct, now=now)
                course.record_answer(
                    progress(), key, variant=asked.variant_key, response=value, correct=correct, now=now
                )
                request_focus("result", box=box)
                st.rerun()
            return False
        if answered:
            _show_result(asked, entry)
            if entry["attempts"] > 1:
                first = "right" if entry["first_correct"] else "missed"
                st.caption(f"{entry['attempts']} tries; the first was {first} (the score counts the first).")
            has_others = bool(question.variants())
            if not entry["correct"]:
                if st.button("Try again" + (" on new numbers" if has_others else ""), key=f"retry-{key}"):
                    _retry(lesson, question, asked, new_numbers=has_others)
                    request_focus("question", box=box)  # not the page body: the question again
                    st.rerun()
            elif has_others and st.button(
                "Try another", key=f"another-{key}", help="The same question on other inputs: new numbers"
            ):
                _retry(lesson, question, asked, new_numbers=True)
                request_focus("question", box=box)
                st.rerun()
        else:
            if asked.is_numeric:
                st.success(f"**The model gives** {number_text(asked.answer, asked.unit)}.")
            else:
                st.success(f"**The answer:** {term_markdown(asked.options[asked.answer].text)}")
            st.markdown(term_markdown(asked.explanation))
        return True


def _nav(lesson: Lesson, number: int, sequence: Sequence[tuple[str, int]]) -> None:
    nav = st.columns([1, 1, 3])
    before = _neighbour(lesson, number, sequence, -1)
    after = _neighbour(lesson, number, sequence, +1)
    if before is not None:
        nav[0].button("← Previous", key="lesson-prev", on_click=_go, args=(before,), width="stretch")
    if after is not None:
        last = after.get("step") == DONE
        nav[1].button(
            "Finish" if last else "Next →",
            key="lesson-finish" if last else "lesson-next",
            type="primary",
            on_click=_go,
            args=(after,),
            width="stretch",
        )
    elif sequence:
        nav[1].caption("The end of the planned class.")


def render_step(lesson: Lesson, number: int, sequence: Sequence[tuple[str, int]] = ()) -> None:
    """Step ``number`` (1-based) of ``lesson``, with previous/next navigation (through the planned
    ``sequence`` when the step is part of one)."""
    steps = lesson.steps
    step = steps[number - 1]
    presenting = is_presenting()
    progress().setdefault("steps", {})[lesson.id] = number
    move = sync_browser(keys=presenting, step=step)
    if move is not None:
        target = _neighbour(lesson, number, sequence, +1 if move == "next" else -1)
        if target is not None:
            _go(target)
            st.rerun()
    top = st.columns([6, 2], vertical_alignment="center")
    top[0].page_link(LESSONS_PAGE.path, label="All lessons", icon=":material/arrow_back:", query_params={})
    with top[1]:
        where = f"Lesson {lesson.number} of {len(load_lessons())} · about {lesson.minutes} min"
        if (lesson.id, number) in sequence:
            where = f"Class step {sequence.index((lesson.id, number)) + 1} of {len(sequence)} · " + where
        st.caption(where)
    if not presenting:
        st.progress(number / len(steps), text=f"Step {number} of {len(steps)}")
        st.title(f"{lesson.number}. {lesson.title}")
        if number == 1:
            st.markdown(
                "**You will be able to:**\n" + "\n".join(f"- {objective}" for objective in lesson.objectives)
            )
    st.header(
        step.title if not presenting else f"{step.title} · step {number} of {len(steps)}", divider="gray"
    )
    predict = step.predict
    quiz_number = sum(1 for s in steps[: number - 1] for q in s.questions if q.kind != "predict")
    if presenting:
        _render_slide(lesson, step, predict, quiz_number)
    else:
        unlocked = True
        st.markdown(term_markdown(step.body))
        if predict is not None:
            unlocked = _question(lesson, predict, 0)
            if not unlocked:
                st.caption("Commit a prediction to see the chart and the answer.")
        if unlocked:
            _embed(lesson, step)
            if step.reveal:
                st.markdown(term_markdown(step.reveal))
            _step_diagrams(lesson, number)
            for question in step.questions:
                if question.kind != "predict":
                    quiz_number += 1
                    _question(lesson, question, quiz_number)
    _nav(lesson, number, sequence)
    if presenting:
        st.caption("PageDown / → next step · PageUp / ← previous step (a presentation clicker sends these).")


def _step_diagrams(lesson: Lesson, number: int) -> None:
    """The diagrams of the terms this step teaches (the first step of the lesson that links them),
    folded so they never crowd the step."""
    found = next((o for o in outline() if o.id == lesson.id), None)
    if found is None or number > len(found.step_terms):
        return
    by_id = terms_by_id()
    taught = sorted(
        t
        for t in found.step_terms[number - 1]
        if t in by_id and by_id[t].diagram and found.step_teaching(t) == number
    )
    for term_id in taught:
        term = by_id[term_id]
        with st.expander(f"Diagram: {term.title}"):
            from ui.diagram_view import show_diagram

            show_diagram(term.diagram, key=f"diagram-{lesson.id}-{number}-{term_id}")


def _render_slide(lesson: Lesson, step: Step, predict: Question | None, quiz_number: int) -> None:
    """Presenter view: a step is a slide. The question and its Reveal button come first on the
    left (above the fold on a 1280×720 projector); the chart is large on the right, with the step's
    text folded below the question for the teacher. A step without a chart shows its text there."""
    words, visual = st.columns([2, 3], gap="large")
    with words:
        unlocked = True
        if predict is not None:
            unlocked = _question(lesson, predict, 0)
        if unlocked:
            for question in step.questions:
                if question.kind != "predict":
                    quiz_number += 1
                    if not _question(lesson, question, quiz_number):
                        break  # one open question at a time on a slide
        if step.view is not None:
            with st.expander("The step's text", expanded=not step.questions):
                _slide_text(step, unlocked)
    with visual:
        if step.view is None:
            _slide_text(step, unlocked)
        elif unlocked:
            _embed(lesson, step)
        else:
            st.caption("Reveal the answer to show the chart.")


def _slide_text(step: Step, unlocked: bool) -> None:
    st.markdown(term_markdown(step.body))
    if unlocked and step.reveal:
        st.markdown(term_markdown(step.reveal))


def render_missing_step(lesson: Lesson, wanted: str) -> None:
    """``?step=`` names no step of this lesson: say so, with links to its steps."""
    st.page_link(LESSONS_PAGE.path, label="All lessons", icon=":material/arrow_back:", query_params={})
    st.title(f"{lesson.number}. {lesson.title}")
    st.warning(
        f"This lesson has {len(lesson.steps)} steps; there is no step “{wanted[:20]}”.",
        icon=":material/error:",
    )
    for n, step in enumerate(lesson.steps, start=1):
        st.page_link(LESSONS_PAGE.path, label=f"Step {n}: {step.title}", query_params=step_link(lesson, n))


def render_summary(lesson: Lesson, lessons: Sequence[Lesson]) -> None:
    """Score, a recap of every question missed at the first try with a link back to its step,
    "what to review" (their terms) and the way on."""
    sync_browser()
    answered, right, count = lesson_progress(lesson)
    record = progress()
    if answered and lesson.id not in record.setdefault("done", {}):
        record["done"][lesson.id] = time.time()
    st.page_link(LESSONS_PAGE.path, label="All lessons", icon=":material/arrow_back:", query_params={})
    st.title(f"{lesson.number}. {lesson.title}: done")
    cols = st.columns(3)
    cols[0].metric("Answered", f"{answered} of {count}")
    cols[1].metric("Right at the first try", f"{right} of {count}")
    cols[2].metric("Score", f"{right / count:.0%}" if count else "—")
    given = answers()
    where = {q.id: n for n, s in enumerate(lesson.steps, start=1) for q in s.questions}
    missed = [
        q
        for q in lesson.questions
        if _qkey(lesson, q) in given and not given[_qkey(lesson, q)]["first_correct"]
    ]
    unanswered = [q for q in lesson.questions if _qkey(lesson, q) not in given]
    if missed:
        st.header("What you missed at the first try", divider="gray")
        for question in missed:
            asked = current_variant(lesson, question)
            entry = given[_qkey(lesson, question)]
            now = "right on a later try" if entry["correct"] else "still open"
            prompt = " ".join(_plain(asked.prompt).split())
            st.markdown(f"- {prompt[:160]}{'…' if len(prompt) > 160 else ''} *({now})*")
            st.page_link(
                LESSONS_PAGE.path,
                label=f"Back to step {where[question.id]}: {lesson.steps[where[question.id] - 1].title}",
                query_params=step_link(lesson, where[question.id]),
                icon=":material/undo:",
            )
        st.caption(
            "Each missed question comes back on new numbers in Review, a day from now, then at longer gaps."
        )
    known = terms_by_id()
    review = list(dict.fromkeys(t for q in missed for t in q.terms if t in known))
    if review:
        st.header("What to review", divider="gray")
        st.markdown(term_markdown(" · ".join(f"[[{t}]]" for t in review)))
    elif answered == count:
        st.success("Everything right at the first try.")
    if unanswered:
        first = next(
            i for i, s in enumerate(lesson.steps, start=1) if any(q in unanswered for q in s.questions)
        )
        st.page_link(
            LESSONS_PAGE.path,
            label=f"{len(unanswered)} question(s) left — go to step {first}",
            query_params=step_link(lesson, first),
        )
    following = [other for other in lessons if other.number == lesson.number + 1]
    if following:
        st.page_link(
            LESSONS_PAGE.path,
            label=f"Next lesson: {following[0].number}. {following[0].title}",
            icon=":material/arrow_forward:",
            query_params=step_link(following[0], 1),
        )


# -- review and the record -------------------------------------------------------------------------


def render_review(lessons: Sequence[Lesson]) -> None:
    """The questions due for review, each on new numbers where it has them (spaced retrieval)."""
    sync_browser()
    st.page_link(LESSONS_PAGE.path, label="All lessons", icon=":material/arrow_back:", query_params={})
    st.title("Review")
    st.markdown(
        "Questions you missed at the first try come back here a day later on new numbers; each right "
        "answer pushes the next review further out (1, 3, 7, then 21 days), a wrong one brings it back "
        "tomorrow. Retrieving an answer after a gap is what makes it stay."
    )
    by_id = {lesson.id: lesson for lesson in lessons}
    record = progress()
    now = time.time()
    due = course.due_reviews(record, now)
    shown = 0
    for qkey in due:
        lesson_id, question_id = qkey.split("/")
        lesson = by_id.get(lesson_id)
        question = next((q for q in lesson.questions if q.id == question_id), None) if lesson else None
        if question is None:
            continue
        entry = answers().get(qkey)
        if entry is not None and not entry.get("open") and entry.get("at", 0) < record["review"][qkey]["due"]:
            # due again: ask it afresh on other inputs
            asked = current_variant(lesson, question)
            course.ask_again(record, qkey, _another(question, asked).variant_key)
        shown += 1
        st.caption(f"Lesson {lesson.number}: {lesson.title}")
        _question(lesson, question, shown, review=True)
    if not shown:
        upcoming = course.next_review_at(record)
        if upcoming is None:
            st.success("Nothing to review: every question you answered was right at the first try.")
        else:
            when = datetime.fromtimestamp(upcoming, tz=UTC).strftime("%Y-%m-%d %H:%M UTC")
            st.info(f"Nothing due now. The next review falls due on {when}.")


def render_record(lessons: Sequence[Lesson]) -> None:
    """A printable record of the lessons completed, with scores (from this browser's progress)."""
    sync_browser()
    st.page_link(LESSONS_PAGE.path, label="All lessons", icon=":material/arrow_back:", query_params={})
    st.title("Your record")
    record = progress()
    rows = []
    for lesson in lessons:
        answered, right, count = lesson_progress(lesson)
        done = record.get("done", {}).get(lesson.id)
        rows.append(
            {
                "Lesson": f"{lesson.number}. {lesson.title}",
                "Completed": datetime.fromtimestamp(done, tz=UTC).strftime("%Y-%m-%d") if done else "—",
                "Answered": f"{answered} of {count}",
                "Right at the first try": f"{right} of {count}",
                "Score": f"{right / count:.0%}" if answered else "—",
            }
        )
    table = _record_table(rows)
    completed = sum(1 for row in rows if row["Completed"] != "—")
    total_right = sum(lesson_progress(lesson)[1] for lesson in lessons)
    total = sum(len(lesson.questions) for lesson in lessons)
    st.markdown(
        f"**{completed} of {len(lessons)} lessons completed; {total_right} of {total} questions right at "
        "the first try.** Scores count first tries only. Print this page (Ctrl+P) for a paper copy."
    )
    st.table(table)
    header = "| " + " | ".join(table.columns) + " |\n|" + "---|" * len(table.columns) + "\n"
    body = "".join("| " + " | ".join(str(v) for v in row) + " |\n" for row in table.itertuples(index=False))
    markdown = "# GPU Field Guide: course record\n\n" + header + body
    st.download_button(
        "Download the record (Markdown)", markdown, "gpu-field-guide-record.md", "text/markdown"
    )
    progress_file_controls()


def _record_table(rows: list[dict[str, str]]) -> Any:
    import pandas as pd

    return pd.DataFrame(rows)


# -- planning a class ------------------------------------------------------------------------------


def _plain(text: str) -> str:
    """Term links as their words, for a printed handout."""
    known = terms_by_id()
    return plain_terms(text, lambda i: known[i].title if i in known else None)


def handout(chosen: Sequence[tuple[Lesson, Step, int]], *, with_answers: bool) -> str:
    """Markdown: the chosen steps' questions (and, for the key, answers and explanations)."""
    lines = ["# " + ("Answer key" if with_answers else "Questions"), ""]
    current = None
    for lesson, step, number in chosen:
        if lesson.id != current:
            lines += [f"## Lesson {lesson.number}: {lesson.title}", ""]
            current = lesson.id
        lines += [f"### Step {number}: {step.title}", ""]
        for question in step.questions:
            kind = "Predict" if question.kind == "predict" else "Question"
            lines.append(f"**{kind}.** {_plain(question.prompt)}")
            for i, option in enumerate(question.options):
                lines.append(f"- {chr(65 + i)}. {_plain(option.text)}")
            if question.is_numeric and not with_answers:
                lines.append(f"- Answer (in {question.unit}): ____________")
            if with_answers:
                if question.is_numeric:
                    lines.append(
                        f"- **Answer:** {number_text(question.answer, question.unit)} "
                        f"(±{question.tolerance:.0%})"
                    )
                else:
                    lines.append(f"- **Answer:** {chr(65 + question.answer)}")
                lines.append(f"- {_plain(question.explanation)}")
            lines.append("")
    return "\n".join(lines)


def plan_a_class(lessons: Sequence[Lesson]) -> None:
    """Pick lessons and steps; get the ordered step links and a printable handout with its key."""
    page = load_page("lessons")
    st.page_link(LESSONS_PAGE.path, label="All lessons", icon=":material/arrow_back:", query_params={})
    st.title("Plan a class")
    st.markdown(term_markdown(page.section("plan")))
    by_id = {lesson.id: lesson for lesson in lessons}
    picked = st.multiselect(
        "Lessons",
        list(by_id),
        default=[lessons[0].id],
        format_func=lambda i: f"{by_id[i].number}. {by_id[i].title}",
        key="plan_lessons",
    )
    chosen: list[tuple[Lesson, Step, int]] = []
    for lesson_id in picked:
        lesson = by_id[lesson_id]
        titles = [f"{n}. {s.title}" for n, s in enumerate(lesson.steps, start=1)]
        keep = st.multiselect(
            f"Steps of lesson {lesson.number}", titles, default=titles, key=f"plan_steps_{lesson.id}"
        )
        chosen += [(lesson, s, n) for n, s in enumerate(lesson.steps, start=1) if titles[n - 1] in keep]
    if not chosen:
        st.info("Pick at least one lesson and step.")
        return
    minutes = sum(lesson.step_minutes[number - 1] for lesson, _, number in chosen)
    st.header(f"The class: {len(chosen)} steps, about {math.ceil(minutes)} minutes", divider="gray")
    st.caption(
        "Each link opens its step in presenter view; Next, Previous and a clicker's keys (PageDown, "
        "PageUp, arrows) then follow this plan."
    )
    for lesson_id in dict.fromkeys(lesson.id for lesson, _, _ in chosen):
        lesson = by_id[lesson_id]
        if lesson.questions:
            st.page_link(
                CLASS_PAGE.path,
                label=f"Run lesson {lesson.number}'s {len(lesson.questions)} questions live "
                "(students vote from phones)",
                icon=":material/how_to_vote:",
                query_params={"lesson": lesson.id},
            )
    sequence = sequence_text([(lesson.id, number) for lesson, _, number in chosen])
    links = []
    for i, (lesson, step, number) in enumerate(chosen, start=1):
        query = step_link(lesson, number) | {"seq": sequence, "present": "true"}
        url = current_url(query)
        links.append(f"{i}. {lesson.title} — {step.title}: {url}")
        st.page_link(
            LESSONS_PAGE.path,
            label=f"{i}. Lesson {lesson.number}, step {number}: {step.title}",
            query_params=query,
        )
    c1, c2, c3 = st.columns(3)
    c1.download_button(
        "Handout (questions)",
        handout(chosen, with_answers=False),
        "handout.md",
        "text/markdown",
        key="plan_handout",
    )
    c2.download_button(
        "Answer key", handout(chosen, with_answers=True), "answer-key.md", "text/markdown", key="plan_key"
    )
    c3.download_button("Step links", "\n".join(links), "class-links.txt", "text/plain", key="plan_links")
