"""The course's questions as a room asks them: which come in a lesson, in order, and each
variant's question (pure; reads lessons/, knows nothing of the page)."""

from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache

from lessons import lesson_by_id
from lessons.model import Question


def room_questions(lesson_id: str) -> tuple[Question, ...]:
    """The questions a room on this lesson asks, in the lesson's order (its predict, choice and
    number questions alike); empty for an unknown lesson."""
    lesson = lesson_by_id(lesson_id)
    return lesson.questions if lesson else ()


def question(lesson_id: str, question_id: str, variant: str = "") -> Question | None:
    """The question (on the variant whose key is ``variant``) of that lesson, or None."""
    for q in room_questions(lesson_id):
        if q.id == question_id:
            return q.variant(variant) if variant else q
    return None


def next_after(lesson_id: str, question_id: str) -> Question | None:
    """The question after ``question_id`` in the lesson, or None after the last."""
    questions = room_questions(lesson_id)
    ids = [q.id for q in questions]
    if question_id not in ids:
        return None
    index = ids.index(question_id) + 1
    return questions[index] if index < len(questions) else None


def another_variant(lesson_id: str, question_id: str, asked: set[str]) -> Question | None:
    """An equivalent question with new numbers: the first variant of ``question_id`` whose key is
    not in ``asked`` (the lesson's own numbers count as the key ""), or None when none is left."""
    base = question(lesson_id, question_id)
    if base is None:
        return None
    for q in (base, *base.variants()):
        key = q.variant_key if q.variant_index else ""
        if key not in asked:
            return q
    return None


def next_variant(lesson_id: str, question_id: str, asked: Sequence[str]) -> Question | None:
    """The question to ask for "same question, new numbers", given the variant keys a room has
    asked in order (the lesson's own numbers are ""): a variant never asked yet, else the one asked
    longest ago other than the last, so repeated presses cycle through every variant. None for a
    question without variants."""
    base = question(lesson_id, question_id)
    if base is None or not base.has_variants:
        return None
    fresh = another_variant(lesson_id, question_id, set(asked))
    if fresh is not None:
        return fresh
    last_asked = {key: i for i, key in enumerate(asked)}  # each key's latest position
    oldest = sorted((i, key) for key, i in last_asked.items() if key != asked[-1])
    return question(lesson_id, question_id, oldest[0][1]) if oldest else None


@lru_cache(maxsize=512)
def non_negative(lesson_id: str, question_id: str) -> bool:
    """Whether the quantity a number question asks for cannot be negative: no variant of it has a
    negative answer (every number question in the course asks for a size, a time, a rate, a count
    or a ratio). A negative vote on such a question is refused, not counted as a wrong answer."""
    base = question(lesson_id, question_id)
    if base is None or not base.is_numeric:
        return False
    return all(q.answer >= 0 for q in (base, *base.variants()))


def step_of(lesson_id: str, question_id: str):
    """(lesson, step) holding the question, or None: the room shows that step's live view."""
    lesson = lesson_by_id(lesson_id)
    if lesson is None:
        return None
    for step in lesson.steps:
        if any(q.id == question_id for q in step.questions):
            return lesson, step
    return None
