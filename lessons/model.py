"""Lessons as frozen data: a lesson is steps; a step is prose, an optional live view and questions."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Literal

QuestionKind = Literal["choice", "number", "predict"]


class LessonError(ValueError):
    """A lesson file is malformed; the message names the file, the step and the field."""


@dataclass(frozen=True)
class Option:
    """One answer of a multiple-choice question and what a learner who picks it is told."""

    text: str
    feedback: str = ""


@dataclass(frozen=True)
class View:
    """A simulator view embedded in a step: ``page``'s ``view`` in its ``preset``, with ``controls``
    (control keys of that page) shown inline and a link that opens the full page in that state."""

    page: str
    view: str
    preset: str
    controls: tuple[str, ...] = ()
    caption: str = ""


@dataclass(frozen=True)
class Question:
    """A question. ``answer`` is the right option's index (choice) or the number (number, and a
    numeric predict); ``tolerance`` is relative. ``explanation`` is shown once answered.

    A ``predict`` question is asked before its step's view and reveal text are shown: with
    ``options`` it is graded like a choice, without them like a number.
    """

    id: str
    kind: QuestionKind
    prompt: str
    options: tuple[Option, ...] = ()
    answer: float | int = 0
    tolerance: float = 0.0
    unit: str = ""
    explanation: str = ""
    terms: tuple[str, ...] = ()  # glossary ids the explanation links (for "what to review")

    @property
    def is_numeric(self) -> bool:
        return self.kind == "number" or (self.kind == "predict" and not self.options)


@dataclass(frozen=True)
class Step:
    """One screen of a lesson. ``reveal`` is the prose shown after its predict question."""

    id: str
    title: str
    body: str
    view: View | None = None
    questions: tuple[Question, ...] = ()
    reveal: str = ""

    @property
    def predict(self) -> Question | None:
        return next((q for q in self.questions if q.kind == "predict"), None)


@dataclass(frozen=True)
class Lesson:
    """A lesson in course order (``number`` is its position, 1-based)."""

    id: str
    title: str
    minutes: int
    objectives: tuple[str, ...]
    prerequisites: tuple[str, ...]
    terms: tuple[str, ...]
    steps: tuple[Step, ...]
    number: int = 0
    file: str = field(default="", compare=False)

    @property
    def questions(self) -> tuple[Question, ...]:
        return tuple(q for s in self.steps for q in s.questions)


def grade(question: Question, response: float | int | None) -> bool:
    """Whether ``response`` is right: an option index for choices, a number within the relative
    tolerance for numeric questions. ``None`` or a non-number is wrong."""
    if response is None or isinstance(response, bool):
        return False
    if question.is_numeric:
        try:
            value = float(response)
        except (TypeError, ValueError):
            return False
        if not math.isfinite(value):
            return False
        return abs(value - question.answer) <= question.tolerance * abs(question.answer)
    return isinstance(response, int) and response == question.answer


def relative_error(question: Question, response: float) -> float:
    """How far off a numeric answer is, as a signed fraction of the right answer."""
    return (float(response) - question.answer) / question.answer if question.answer else math.inf
