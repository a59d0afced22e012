"""The course's questions as a room asks them: which come in a lesson, in order, and each
variant's question (pure; reads lessons/, knows nothing of the page)."""

from __future__ import annotations

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


def step_of(lesson_id: str, question_id: str):
    """(lesson, step) holding the question, or None: the room shows that step's live view."""
    lesson = lesson_by_id(lesson_id)
    if lesson is None:
        return None
    for step in lesson.steps:
        if any(q.id == question_id for q in step.questions):
            return lesson, step
    return None
