"""What the room's votes say: answer labels, votes per answer, the share that was right (pure)."""

from __future__ import annotations

import math
from dataclasses import dataclass

from lessons.model import Question, grade, number_text


@dataclass(frozen=True)
class Tally:
    """One round's votes on one question."""

    labels: tuple[str, ...]  # an option's text, or a numeric bin ("1.2 – 1.5 GB")
    votes: tuple[int, ...]
    right: tuple[bool, ...]  # whether the answers in that row are right (False for a mixed bin)
    total: int
    correct: int  # votes that grade() marks right

    @property
    def share_right(self) -> float:
        return self.correct / self.total if self.total else 0.0


def tally(question: Question, counts: dict[str, int], *, bins_from: dict[str, int] | None = None) -> Tally:
    """Votes per option in the order the question shows them (every option listed, zeros
    included), or for a number question per answer or group of neighbouring answers, smallest
    first. ``bins_from``: another round's counts whose answers shape the groups too, so the
    first vote and the revote share their rows (``rounds``)."""
    total = sum(counts.values())
    if not question.is_numeric:
        labels = tuple(f"{chr(65 + i)}. {plain(option.text)}" for i, option in enumerate(question.options))
        votes = tuple(counts.get(str(i), 0) for i in range(len(question.options)))
        right = tuple(i == question.answer for i in range(len(question.options)))
        return Tally(labels, votes, right, total, votes[int(question.answer)] if votes else 0)
    mine = {float(a): n for a, n in counts.items() if _finite(a)}
    every = sorted({*mine, *(float(a) for a in (bins_from or {}) if _finite(a))})
    groups = _bins(every)
    labels = tuple(
        number_text(group[0], question.unit)
        if group[0] == group[-1]
        else f"{number_text(group[0], '')} – {number_text(group[-1], question.unit)}"
        for group in groups
    )
    votes = tuple(sum(mine.get(v, 0) for v in group) for group in groups)
    right = tuple(all(grade(question, v) for v in group) for group in groups)
    correct = sum(n for v, n in mine.items() if grade(question, v))
    return Tally(labels, votes, right, total, correct)


def rounds(question: Question, first: dict[str, int], second: dict[str, int]) -> tuple[Tally, Tally]:
    """The first vote and the revote on the same rows."""
    return tally(question, first, bins_from=second), tally(question, second, bins_from=first)


MAX_BINS = 6


def _bins(values: list[float]) -> list[list[float]]:
    """Distinct answers, or when there are more than ``MAX_BINS`` of them, ``MAX_BINS`` groups of
    neighbouring answers (equal steps on a log scale for positive answers, else linear), so forty
    students' numbers read as a histogram. Never centred on the right answer: that would give it
    away before the reveal."""
    if len(values) <= MAX_BINS:
        return [[v] for v in values]
    low, high = values[0], values[-1]
    if low > 0:
        position = [math.log(v / low) / math.log(high / low) for v in values]
    else:
        position = [(v - low) / (high - low) for v in values]
    groups: dict[int, list[float]] = {}
    for v, p in zip(values, position, strict=True):
        groups.setdefault(min(int(p * MAX_BINS), MAX_BINS - 1), []).append(v)
    return [groups[k] for k in sorted(groups)]


def plain(text: str) -> str:
    """Glossary links as their words (the term's title where the link gives none): a radio or bar
    label shows no links."""
    from content import plain_terms
    from glossary import terms_by_id

    known = terms_by_id()
    return plain_terms(text, lambda i: known[i].title if i in known else None)


def _finite(text: str) -> bool:
    try:
        return math.isfinite(float(text))
    except ValueError:
        return False
