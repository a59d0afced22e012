"""The course: lessons that walk through the simulators, with predict-then-reveal and checked quizzes.

Public API (pages, tests and outside checks call these):

- ``load_lessons() -> list[Lesson]`` — every lesson in course order, validated at load;
- ``grade(question, response) -> bool`` — numbers within the relative tolerance, choices by index;
- ``outline() -> list[Outline]`` — titles, minutes and linked terms only, without computing anything;
- ``Lesson``, ``Step``, ``Question``, ``Option``, ``View``, ``LessonError``.

The file format is described in ``lessons/loader.py``; the functions a lesson may call to compute
its numbers are in ``lessons/functions.py``.
"""

from lessons.loader import Outline, load_lessons, outline, parse_lesson_file
from lessons.model import Lesson, LessonError, Option, Question, Step, View, grade, relative_error

__all__ = [
    "Lesson",
    "LessonError",
    "Option",
    "Outline",
    "Question",
    "Step",
    "View",
    "grade",
    "load_lessons",
    "outline",
    "parse_lesson_file",
    "relative_error",
]


def lesson_by_id(lesson_id: str) -> Lesson | None:
    """The lesson with this id, or None."""
    return next((lesson for lesson in load_lessons() if lesson.id == lesson_id), None)


def lessons_teaching(term_id: str) -> list[Outline]:
    """Outlines of the lessons whose ``terms`` include this glossary term ("taught in lesson N")."""
    return [lesson for lesson in outline() if term_id in lesson.terms]
