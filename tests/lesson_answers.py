"""Every numeric lesson answer, recomputed straight from the simulators and data files.

``ANSWERS["<lesson-id>/<question-id>"](**inputs)`` computes the number a lesson's ``answer:`` expression
should give for the inputs of one variant (keyword arguments named as the question's ``given``),
WITHOUT going through lessons/functions.py — so a mistake in a lesson expression or
in a lesson function shows up as a mismatch. tests/test_lessons.py requires an entry for every
numeric question and checks that ``grade(question, value)`` is true and
``grade(question, 1.5 × value + 1)`` is false.
"""

from __future__ import annotations

from collections.abc import Callable
from importlib import import_module

ANSWERS: dict[str, Callable[..., float]] = {}
CHOICES: dict[str, Callable[..., int]] = {}
for _number in range(1, 13):
    try:
        _module = import_module(f"tests.answers.lesson_{_number:02d}")
    except ModuleNotFoundError:
        continue
    ANSWERS.update(_module.ANSWERS)
    CHOICES.update(getattr(_module, "CHOICES", {}))
