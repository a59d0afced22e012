"""Lessons as frozen data: a lesson is steps; a step is prose, an optional live view and questions."""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Literal
from urllib.parse import urlencode

QuestionKind = Literal["choice", "number", "predict"]
Input = tuple[str, str | int | float]  # one input of a question: ("gpu", "h200-sxm"), ("batch", 64)


class LessonError(ValueError):
    """A lesson file is malformed; the message names the file, the step and the field."""


@dataclass(frozen=True)
class Option:
    """One answer of a multiple-choice question and what a learner who picks it is told."""

    text: str
    feedback: str = ""
    origin: int = 0  # its position as written: the same misconception in every variant and shuffle
    right: bool = False  # also accepted (a design question with several right designs, ``right:``)


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

    Options are shown in a shuffled order, fixed per question and variant; ``answer`` indexes the
    shuffled tuple and each option's ``origin`` says where it was written. A question whose
    numbers come from inputs (``given:`` in its block) has ``inputs`` and can be re-asked on
    others: ``variants()``.
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
    inputs: tuple[Input, ...] = ()  # this variant's inputs, in the order the block gives them
    lesson: str = ""  # the id of the lesson it belongs to
    computed: bool = False  # its prompt, options or answer call the model functions
    fixed: str = ""  # why a computed question has no other inputs (``fixed:`` in its block)
    variant_index: int = 0  # 0: the inputs the lesson shows; 1, 2, …: the others in ``given`` order
    _build: Callable[[], tuple[Question, ...]] | None = field(
        default=None, compare=False, repr=False, hash=False
    )

    @property
    def is_numeric(self) -> bool:
        return self.kind == "number" or (self.kind == "predict" and not self.options)

    @property
    def variant_key(self) -> str:
        """Its inputs as an address-style string (``gpu=h200-sxm&batch=64``); "" without inputs."""
        return urlencode(self.inputs)

    @property
    def has_variants(self) -> bool:
        """Whether the question can be re-asked on other inputs."""
        return bool(self.variants())

    def variants(self) -> tuple[Question, ...]:
        """The same question on every other valid combination of its inputs: each with its own
        prompt, options, answer, tolerance and explanation, computed by the same functions, so
        ``grade()`` works on it unchanged. Empty for a question without inputs."""
        if self._build is None:
            return ()
        return tuple(q for q in self._build() if q.inputs != self.inputs)

    def variant(self, key: str) -> Question | None:
        """The variant whose ``variant_key`` is ``key`` (this question for its own key), or None."""
        if key == self.variant_key:
            return self
        return next((q for q in self.variants() if q.variant_key == key), None)


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
    step_minutes: tuple[float, ...] = ()  # computed from each step's words, questions and views

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
    if not isinstance(response, int):
        return False
    if response == question.answer:
        return True
    return 0 <= response < len(question.options) and question.options[response].right


def number_text(value: float, unit: str) -> str:
    """A number as the course writes it: three significant figures, thousands separated, its unit
    after it (none for "x" or "count")."""
    if value != 0 and (abs(value) >= 1e6 or abs(value) < 1e-3):
        text = f"{value:,.3g}"
    elif abs(value) >= 100:
        text = f"{value:,.0f}"
    else:
        text = f"{value:,.3g}"
    return f"{text} {unit}" if unit and unit not in ("x", "count") else text


def relative_error(question: Question, response: float) -> float:
    """How far off a numeric answer is, as a signed fraction of the right answer."""
    return (float(response) - question.answer) / question.answer if question.answer else math.inf
