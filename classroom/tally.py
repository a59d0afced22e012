"""What the room's votes say: answer labels, votes per answer, the share that was right, how sure
the voters were, and the room's record as CSV rows (pure)."""

from __future__ import annotations

import csv
import io
import math
from collections.abc import Iterable
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
    sure: tuple[int, ...] = ()  # per row: votes that said "sure" (empty: not asked)
    unsure: tuple[int, ...] = ()

    @property
    def share_right(self) -> float:
        return self.correct / self.total if self.total else 0.0


Confidence = dict[str, dict[str, int]]  # answer -> {"sure": n, "unsure": n, "": n}


def tally(
    question: Question,
    counts: dict[str, int],
    *,
    bins_from: dict[str, int] | None = None,
    confidence: Confidence | None = None,
) -> Tally:
    """Votes per option in the order the question shows them (every option listed, zeros
    included), or for a number question per answer or group of neighbouring answers, smallest
    first. ``bins_from``: another round's counts whose answers shape the groups too, so the
    first vote and the revote share their rows (``rounds``). ``confidence``: the round's votes
    by answer and confidence (``Store.confidence``), summed per row into ``sure``/``unsure``."""
    total = sum(counts.values())
    if not question.is_numeric:
        labels = tuple(f"{chr(65 + i)}. {plain(option.text)}" for i, option in enumerate(question.options))
        keys = [[str(i)] for i in range(len(question.options))]
        votes = tuple(counts.get(str(i), 0) for i in range(len(question.options)))
        right = tuple(i == question.answer for i in range(len(question.options)))
        correct = votes[int(question.answer)] if votes else 0
    else:
        mine = {float(a): n for a, n in counts.items() if _finite(a)}
        every = sorted({*mine, *(float(a) for a in (bins_from or {}) if _finite(a))})
        groups = _bins(every)
        labels = tuple(
            number_text(group[0], question.unit)
            if group[0] == group[-1]
            else f"{number_text(group[0], '')} – {number_text(group[-1], question.unit)}"
            for group in groups
        )
        by_value = {float(a): a for a in [*counts, *(confidence or {})] if _finite(a)}
        keys = [[by_value[v] for v in group if v in by_value] for group in groups]
        votes = tuple(sum(mine.get(v, 0) for v in group) for group in groups)
        right = tuple(all(grade(question, v) for v in group) for group in groups)
        correct = sum(n for v, n in mine.items() if grade(question, v))
    sure = unsure = ()
    if confidence is not None:
        sure = tuple(sum(confidence.get(k, {}).get("sure", 0) for k in row) for row in keys)
        unsure = tuple(sum(confidence.get(k, {}).get("unsure", 0) for k in row) for row in keys)
    return Tally(labels, votes, right, total, correct, sure, unsure)


def rounds(
    question: Question,
    first: dict[str, int],
    second: dict[str, int],
    confidence: tuple[Confidence | None, Confidence | None] = (None, None),
) -> tuple[Tally, Tally]:
    """The first vote and the revote on the same rows."""
    return (
        tally(question, first, bins_from=second, confidence=confidence[0]),
        tally(question, second, bins_from=first, confidence=confidence[1]),
    )


def median_confidence(sure: int, unsure: int) -> str:
    """The median of the confidence the voters gave (sure above unsure): "sure", "unsure",
    "split" when as many said each, "" when none said."""
    if sure == unsure:
        return "split" if sure else ""
    return "sure" if sure > unsure else "unsure"


CSV_COLUMNS = (
    "question",
    "question_id",
    "variant",
    "round",
    "answer",
    "votes",
    "share_of_votes",
    "right",
    "round_share_right",
    "sure",
    "unsure",
    "median_confidence",
)


def record_rows(
    questions: Iterable[tuple[Question, str]], record: Iterable[tuple[str, str, int, str, str | None, int]]
) -> list[dict[str, object]]:
    """The room's results as rows, one per question, round and answer (every option of a choice
    question, zeros included): ``questions`` gives each (question, variant key) the room asked,
    ``record`` is ``Store.record``'s (question, variant, round, answer, confidence, votes). The
    right answer is stated for every row; share right is per round."""
    grouped: dict[tuple[str, str, int], Confidence] = {}
    for question_id, variant, round_number, answer, level, n in record:
        per_answer = grouped.setdefault((question_id, variant, round_number), {}).setdefault(answer, {})
        per_answer[level or ""] = per_answer.get(level or "", 0) + n
    rows: list[dict[str, object]] = []
    number = 0
    for question, variant in questions:
        rounds_voted = sorted(r for q, v, r in grouped if q == question.id and v == variant)
        if not rounds_voted:
            continue
        number += 1
        for round_number in rounds_voted:
            confidence = grouped[(question.id, variant, round_number)]
            counts = {answer: sum(levels.values()) for answer, levels in confidence.items()}
            result = tally(question, counts, confidence=confidence)
            for i, label in enumerate(result.labels):
                rows.append(
                    {
                        "question": number,
                        "question_id": question.id,
                        "variant": variant,
                        "round": "first vote" if round_number == 1 else "revote",
                        "answer": label,
                        "votes": result.votes[i],
                        "share_of_votes": round(result.votes[i] / result.total, 4) if result.total else 0.0,
                        "right": "yes" if result.right[i] else "no",
                        "round_share_right": round(result.share_right, 4),
                        "sure": result.sure[i],
                        "unsure": result.unsure[i],
                        "median_confidence": median_confidence(result.sure[i], result.unsure[i]),
                    }
                )
    return rows


def to_csv(rows: list[dict[str, object]]) -> str:
    """``record_rows`` as CSV text with a header line."""
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=CSV_COLUMNS, lineterminator="\n")
    writer.writeheader()
    writer.writerows(rows)
    return out.getvalue()


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
