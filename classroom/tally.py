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

    labels: tuple[str, ...]  # an option's text, a group of numbers ("1.2 – 1.5 GB"), or a distance
    votes: tuple[int, ...]
    right: tuple[bool, ...]  # whether the answers in that row are right
    total: int
    correct: int  # votes that grade() marks right, each vote graded on its own
    sure: tuple[int, ...] = ()  # per row: votes that said "sure" (empty: not asked)
    unsure: tuple[int, ...] = ()
    answer_row: int | None = None  # the row that holds the right answer (shown once revealed)

    @property
    def share_right(self) -> float:
        return self.correct / self.total if self.total else 0.0


Confidence = dict[str, dict[str, int]]  # answer -> {"sure": n, "unsure": n, "": n}

# A revealed number question's rows: the right answer (± its tolerance) in a row of its own, the
# others by how far off they are, as factors of the answer (so one joke answer at 1000× lands in
# "over 10× too high" and moves no other row).
DISTANCE_ROWS = (
    "too low by over 10×",
    "too low by 2–10×",
    "too low, within 2×",
    "",  # the answer's own row, labelled with the answer
    "too high, within 2×",
    "too high by 2–10×",
    "too high by over 10×",
)
ANSWER_ROW = 3


def distance_row(question: Question, value: float) -> int:
    """Which of ``DISTANCE_ROWS`` a numeric vote falls in: ``ANSWER_ROW`` when ``grade`` marks it
    right, else too low or too high by a factor of the answer (within 2×, 2–10×, over 10×; a vote
    of the other sign than the answer, or any vote when the answer is 0, counts as over 10×)."""
    if grade(question, value):
        return ANSWER_ROW
    answer = float(question.answer)
    low = value < answer
    ratio = value / answer if answer else 0.0
    factor = max(ratio, 1 / ratio) if ratio > 0 else math.inf
    step = 0 if factor > 10 else 1 if factor > 2 else 2
    return step if low else len(DISTANCE_ROWS) - 1 - step


def answer_label(question: Question) -> str:
    """The right value and its tolerance, as the answer's row says it."""
    value = number_text(float(question.answer), question.unit)
    if question.tolerance:
        return f"{value} ± {question.tolerance * 100:g} % (the answer)"
    return f"{value} exactly (the answer)"


def tally(
    question: Question,
    counts: dict[str, int],
    *,
    bins_from: dict[str, int] | None = None,
    confidence: Confidence | None = None,
    revealed: bool = False,
) -> Tally:
    """Votes per option in the order the question shows them (every option listed, zeros
    included), or for a number question: before the reveal (``revealed`` False) per answer or
    group of neighbouring answers, smallest first, with far-off answers in groups of their own so
    one outlier does not squash the rest; once revealed, the answer's own row (± its tolerance,
    always listed) between the rows of answers too low and too high by a factor. The share right
    grades every vote on its own (``grade``), whatever its row. ``bins_from``: another round's
    counts whose answers shape the rows too, so the first vote and the revote share their rows
    (``rounds``). ``confidence``: the round's votes by answer and confidence
    (``Store.confidence``), summed per row into ``sure``/``unsure``."""
    total = sum(counts.values())
    answer_row = None
    if not question.is_numeric:
        labels = tuple(f"{chr(65 + i)}. {plain(option.text)}" for i, option in enumerate(question.options))
        keys = [[str(i)] for i in range(len(question.options))]
        votes = tuple(counts.get(str(i), 0) for i in range(len(question.options)))
        right = tuple(grade(question, i) for i in range(len(question.options)))
        correct = sum(n for i, n in enumerate(votes) if right[i])
        answer_row = int(question.answer)
    else:
        mine = _numbers(counts)
        others = _numbers(bins_from or {})
        correct = sum(n for v, n in mine.items() if grade(question, v))
        by_value: dict[float, list[str]] = {}
        for a in [*counts, *(confidence or {})]:
            if _finite(a) and a not in by_value.setdefault(float(a), []):
                by_value[float(a)].append(a)
        if revealed:
            used = {distance_row(question, v) for v in [*mine, *others]} | {ANSWER_ROW}
            rows = sorted(used)
            labels = tuple(answer_label(question) if r == ANSWER_ROW else DISTANCE_ROWS[r] for r in rows)
            seen = sorted({*mine, *by_value})
            members = [[v for v in seen if distance_row(question, v) == r] for r in rows]
            right = tuple(r == ANSWER_ROW for r in rows)
            answer_row = rows.index(ANSWER_ROW)
        else:
            members = _bins(sorted({*mine, *others}))
            labels = tuple(
                number_text(group[0], question.unit)
                if group[0] == group[-1]
                else f"{number_text(group[0], '')} – {number_text(group[-1], question.unit)}"
                for group in members
            )
            right = tuple(False for _ in members)  # not said before the reveal
        keys = [[k for v in group for k in by_value.get(v, [])] for group in members]
        votes = tuple(sum(mine.get(v, 0) for v in group) for group in members)
    sure = unsure = ()
    if confidence is not None:
        sure = tuple(sum(confidence.get(k, {}).get("sure", 0) for k in row) for row in keys)
        unsure = tuple(sum(confidence.get(k, {}).get("unsure", 0) for k in row) for row in keys)
    return Tally(labels, votes, right, total, correct, sure, unsure, answer_row)


def rounds(
    question: Question,
    first: dict[str, int],
    second: dict[str, int],
    confidence: tuple[Confidence | None, Confidence | None] = (None, None),
    *,
    revealed: bool = False,
) -> tuple[Tally, Tally]:
    """The first vote and the revote on the same rows."""
    return (
        tally(question, first, bins_from=second, confidence=confidence[0], revealed=revealed),
        tally(question, second, bins_from=first, confidence=confidence[1], revealed=revealed),
    )


def _numbers(counts: dict[str, int]) -> dict[float, int]:
    out: dict[float, int] = {}
    for a, n in counts.items():
        if _finite(a):
            out[float(a)] = out.get(float(a), 0) + n
    return out


def median_confidence(sure: int, unsure: int) -> str:
    """The median of the confidence the voters gave (sure above unsure): "sure", "unsure",
    "split" when as many said each, "" when none said."""
    if sure == unsure:
        return "split" if sure else ""
    return "sure" if sure > unsure else "unsure"


Ballot = tuple[int, str, str, int, str, str | None, str | None]
"""One vote as ``Store.ballots`` gives it: (asking, question id, variant, round, answer as
stored, answer as typed or None, confidence or None)."""

CSV_COLUMNS = (
    "question",
    "question_id",
    "variant",
    "round",
    "answer_typed",
    "answer",
    "right_answer",
    "right",
    "confidence",
    "round_share_right",
)


def _asking_rounds(
    askings: Iterable[tuple[int, Question, str]], ballots: Iterable[Ballot]
) -> list[tuple[int, Question, str, int, list[Ballot]]]:
    """(number, question, variant, round, its ballots) for each asking that has votes, in the
    order asked; ``number`` counts the askings that have votes, from 1."""
    grouped: dict[tuple[int, int], list[Ballot]] = {}
    for ballot in ballots:
        grouped.setdefault((ballot[0], ballot[3]), []).append(ballot)
    out = []
    number = 0
    for asking, question, variant in askings:
        voted = sorted(r for a, r in grouped if a == asking)
        if not voted:
            continue
        number += 1
        out.extend((number, question, variant, r, grouped[(asking, r)]) for r in voted)
    return out


def answer_text(question: Question, stored: str) -> str:
    """A stored vote as the course writes it: an option's letter and text, or the number with
    its unit."""
    if question.is_numeric:
        return number_text(float(stored), question.unit)
    index = int(stored)
    return f"{chr(65 + index)}. {plain(question.options[index].text)}"


def right_answer_text(question: Question) -> str:
    """The right answer: the number with its tolerance, or the right option(s)."""
    if question.is_numeric:
        return answer_label(question).removesuffix(" (the answer)")
    return " or ".join(
        answer_text(question, str(i)) for i in range(len(question.options)) if grade(question, i)
    )


def vote_rows(
    askings: Iterable[tuple[int, Question, str]], ballots: Iterable[Ballot]
) -> list[dict[str, object]]:
    """Every vote of the room as a row (the CSV): which question and round, the answer as typed
    and as read, the right answer (with its tolerance), whether this vote is right, its
    confidence, and the round's share right. ``askings``: (asking, question, variant) for each
    time the room asked a question (``Room.position``), ``ballots``: ``Store.ballots``."""
    rows: list[dict[str, object]] = []
    for number, question, variant, round_number, mine in _asking_rounds(askings, ballots):
        grades = [grade(question, float(b[4]) if question.is_numeric else int(b[4])) for b in mine]
        share = round(sum(grades) / len(grades), 4) if grades else 0.0
        for ballot, ok in zip(mine, grades, strict=True):
            rows.append(
                {
                    "question": number,
                    "question_id": question.id,
                    "variant": variant,
                    "round": "first vote" if round_number == 1 else "revote",
                    "answer_typed": ballot[5] or "",
                    "answer": answer_text(question, ballot[4]),
                    "right_answer": right_answer_text(question),
                    "right": "yes" if ok else "no",
                    "confidence": ballot[6] or "",
                    "round_share_right": share,
                }
            )
    return rows


def summary_rows(
    askings: Iterable[tuple[int, Question, str]], ballots: Iterable[Ballot]
) -> list[dict[str, object]]:
    """The printable record's tables: for each asking and round, a row per answer (every option
    of a choice question, zeros included; a number question's rows as revealed: the answer's own
    row and the distances), with its votes, share, whether right, and how sure the voters were."""
    rows: list[dict[str, object]] = []
    for number, question, variant, round_number, mine in _asking_rounds(askings, ballots):
        confidence: Confidence = {}
        for ballot in mine:
            per = confidence.setdefault(ballot[4], {})
            per[ballot[6] or ""] = per.get(ballot[6] or "", 0) + 1
        counts = {answer: sum(levels.values()) for answer, levels in confidence.items()}
        result = tally(question, counts, confidence=confidence, revealed=True)
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
    """``vote_rows`` as CSV text with a header line."""
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=CSV_COLUMNS, lineterminator="\n")
    writer.writeheader()
    writer.writerows(rows)
    return out.getvalue()


MAX_BINS = 6
SPREAD = 10.0  # answers beyond this factor of the median go to an end group of their own


def _bins(values: list[float]) -> list[list[float]]:
    """Distinct answers, or when there are more than ``MAX_BINS`` of them, at most ``MAX_BINS``
    groups of neighbouring answers: answers within ``SPREAD``× of the median in equal steps on a
    log scale (positive answers) or in groups of equal size (others), answers further off in a
    group at each end, so one joke answer does not squash every other into one group. Never
    centred on the right answer: that would give it away before the reveal."""
    if len(values) <= MAX_BINS:
        return [[v] for v in values]
    if values[0] <= 0:
        size = math.ceil(len(values) / MAX_BINS)
        return [values[i : i + size] for i in range(0, len(values), size)]
    median = values[len(values) // 2]
    below = [v for v in values if v < median / SPREAD]
    above = [v for v in values if v > median * SPREAD]
    middle = [v for v in values if median / SPREAD <= v <= median * SPREAD]
    steps = MAX_BINS - bool(below) - bool(above)
    low, high = middle[0], middle[-1]
    groups: dict[int, list[float]] = {}
    for v in middle:
        p = math.log(v / low) / math.log(high / low) if high > low else 0.0
        groups.setdefault(min(int(p * steps), steps - 1), []).append(v)
    ends = ([below] if below else [], [above] if above else [])
    return [*ends[0], *(groups[k] for k in sorted(groups)), *ends[1]]


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
