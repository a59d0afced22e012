"""A learner's progress through the course as plain data: answers, the step they were on, what to
review and when. Pure Python (no Streamlit): the page keeps it in the browser's storage, and a
learner can export it to a file and import it elsewhere.

The record (``PROGRESS_VERSION`` 1) is a JSON object::

    {"v": 1,
     "answers": {"<lesson>/<question>": {"variant": "gpu=h200-sxm", "response": 206.0,
                 "correct": true, "first_correct": false, "attempts": 2, "open": false,
                 "at": 1764000000.0}},
     "steps": {"<lesson>": 3},              # the step a learner was last on
     "done": {"<lesson>": 1764000000.0},    # when the lesson's summary was reached
     "review": {"<lesson>/<question>": {"due": 1764086400.0, "box": 0}}}

``first_correct`` is the first try and never changes: a retry, or the same question on new numbers,
cannot turn a miss into a first-time success. A question missed at the first try joins the review
list, due a day later; each right answer on review moves it to a longer interval
(``REVIEW_DAYS``, Leitner boxes), a wrong one sends it back to a day. Spaced retrieval beats
re-reading at delays of days (Roediger & Karpicke 2006; Cepeda et al. 2006).
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Mapping
from typing import Any

PROGRESS_VERSION = 1
REVIEW_DAYS = (1, 3, 7, 21)  # days until the next review after 0, 1, 2, 3 right answers in a row
DAY_S = 86_400.0
MAX_BYTES = 256 * 1024  # an imported file larger than this is not a progress file
MAX_ENTRIES = 2_000
_MAX_TEXT = 200


class ProgressError(ValueError):
    """The data is not a progress record this app wrote (the message says what is wrong)."""


def empty() -> dict[str, Any]:
    """A record with nothing in it."""
    return {"v": PROGRESS_VERSION, "answers": {}, "steps": {}, "done": {}, "review": {}}


def key(lesson_id: str, question_id: str) -> str:
    """The record key of a question: ``"<lesson>/<question>"``."""
    return f"{lesson_id}/{question_id}"


# -- answering ------------------------------------------------------------------------------------


def record_answer(
    progress: dict[str, Any],
    qkey: str,
    *,
    variant: str,
    response: float | int,
    correct: bool,
    now: float,
) -> dict[str, Any]:
    """Record an answer to the question ``qkey`` on the inputs ``variant``; returns its entry.

    The first answer ever given fixes ``first_correct``; later answers (retries, new numbers)
    only update the latest response. A first miss puts the question on the review list."""
    answers = progress.setdefault("answers", {})
    previous = answers.get(qkey)
    entry = {
        "variant": variant,
        "response": response,
        "correct": bool(correct),
        "first_correct": previous["first_correct"] if previous else bool(correct),
        "attempts": (previous["attempts"] if previous else 0) + 1,
        "open": False,
        "at": float(now),
    }
    answers[qkey] = entry
    if previous is None and not correct:
        progress.setdefault("review", {})[qkey] = {"due": now + REVIEW_DAYS[0] * DAY_S, "box": 0}
    return entry


def ask_again(progress: dict[str, Any], qkey: str, variant: str) -> None:
    """Show ``qkey`` unanswered again, on the inputs ``variant`` (Try again / Try another); the
    history (first try, attempts) stays."""
    entry = progress.setdefault("answers", {}).get(qkey)
    if entry is not None:
        entry["open"] = True
        entry["variant"] = variant


def record_review(progress: dict[str, Any], qkey: str, *, correct: bool, now: float) -> dict[str, Any] | None:
    """Move ``qkey`` along the review schedule after a review answer; returns its new entry, or
    None when it has left the list (right at the longest interval)."""
    review = progress.setdefault("review", {})
    box = review.get(qkey, {}).get("box", 0)
    if not correct:
        review[qkey] = {"due": now + REVIEW_DAYS[0] * DAY_S, "box": 0}
        return review[qkey]
    box += 1
    if box >= len(REVIEW_DAYS):
        review.pop(qkey, None)
        return None
    review[qkey] = {"due": now + REVIEW_DAYS[box] * DAY_S, "box": box}
    return review[qkey]


def due_reviews(progress: Mapping[str, Any], now: float) -> list[str]:
    """Question keys whose review is due, the longest overdue first."""
    review = progress.get("review", {})
    return sorted((k for k, v in review.items() if v["due"] <= now), key=lambda k: review[k]["due"])


def next_review_at(progress: Mapping[str, Any]) -> float | None:
    """When the next review falls due (seconds since the epoch), or None when none is planned."""
    dues = [v["due"] for v in progress.get("review", {}).values()]
    return min(dues) if dues else None


# -- scores ---------------------------------------------------------------------------------------


def lesson_score(
    progress: Mapping[str, Any], lesson_id: str, question_ids: Iterable[str]
) -> tuple[int, int, int]:
    """(answered, right at the first try, questions) for one lesson."""
    ids = list(question_ids)
    answers = progress.get("answers", {})
    given = [answers[key(lesson_id, q)] for q in ids if key(lesson_id, q) in answers]
    return len(given), sum(1 for a in given if a["first_correct"]), len(ids)


# -- storage --------------------------------------------------------------------------------------


def dumps(progress: Mapping[str, Any]) -> str:
    """The record as compact JSON (what the browser stores and an export file holds)."""
    return json.dumps(progress, separators=(",", ":"), sort_keys=True)


def loads(text: str | bytes, known: Mapping[str, Iterable[str]] | None = None) -> dict[str, Any]:
    """Read a stored or imported record, keeping only what is well-formed.

    ``known`` maps lesson ids to their question ids: entries for anything else (a lesson renamed
    since, a forged file) are dropped. Raises ProgressError when the text is not a progress record
    at all (not JSON, not an object, another version, too large)."""
    if isinstance(text, bytes):
        if len(text) > MAX_BYTES:
            raise ProgressError(f"the file is {len(text):,} bytes; a progress file is under {MAX_BYTES:,}")
        try:
            text = text.decode("utf-8")
        except UnicodeDecodeError:
            raise ProgressError("the file is not text (UTF-8)") from None
    if len(text) > MAX_BYTES:
        raise ProgressError(f"the data is {len(text):,} characters; a progress record is under {MAX_BYTES:,}")
    try:
        raw = json.loads(text)
    except (json.JSONDecodeError, RecursionError):
        raise ProgressError("the file is not JSON") from None
    if not isinstance(raw, dict):
        raise ProgressError("the file does not hold a progress record (a JSON object)")
    if raw.get("v") != PROGRESS_VERSION:
        raise ProgressError(f"the file is not a version-{PROGRESS_VERSION} progress record of this course")
    return _clean(raw, known)


def _finite(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    value = float(value)
    return value if math.isfinite(value) else None


def _clean(raw: Mapping[str, Any], known: Mapping[str, Iterable[str]] | None) -> dict[str, Any]:
    lessons = {lesson: set(questions) for lesson, questions in (known or {}).items()}

    def known_question(qkey: Any) -> bool:
        if not isinstance(qkey, str) or qkey.count("/") != 1 or len(qkey) > _MAX_TEXT:
            return False
        lesson, question = qkey.split("/")
        return known is None or question in lessons.get(lesson, ())

    def known_lesson(lesson: Any) -> bool:
        return isinstance(lesson, str) and len(lesson) <= _MAX_TEXT and (known is None or lesson in lessons)

    out = empty()
    for qkey, entry in list(_mapping(raw.get("answers")).items())[:MAX_ENTRIES]:
        if not known_question(qkey) or not isinstance(entry, dict):
            continue
        response = entry.get("response")
        if not isinstance(response, str) and _finite(response) is None:
            continue
        attempts = entry.get("attempts")
        at = _finite(entry.get("at"))
        variant = entry.get("variant", "")
        if not isinstance(attempts, int) or isinstance(attempts, bool) or attempts < 1 or at is None:
            continue
        if not isinstance(variant, str) or len(variant) > _MAX_TEXT:
            continue
        out["answers"][qkey] = {
            "variant": variant,
            "response": response
            if isinstance(response, int) and not isinstance(response, bool)
            else float(response),
            "correct": entry.get("correct") is True,
            "first_correct": entry.get("first_correct") is True,
            "attempts": min(attempts, 10_000),
            "open": entry.get("open") is True,
            "at": at,
        }
    for lesson, step in _mapping(raw.get("steps")).items():
        if known_lesson(lesson) and isinstance(step, int) and not isinstance(step, bool) and 1 <= step <= 100:
            out["steps"][lesson] = step
    for lesson, at in _mapping(raw.get("done")).items():
        if known_lesson(lesson) and _finite(at) is not None:
            out["done"][lesson] = float(at)
    for qkey, entry in list(_mapping(raw.get("review")).items())[:MAX_ENTRIES]:
        if not known_question(qkey) or not isinstance(entry, dict):
            continue
        due, box = _finite(entry.get("due")), entry.get("box")
        if (
            due is None
            or not isinstance(box, int)
            or isinstance(box, bool)
            or not 0 <= box < len(REVIEW_DAYS)
        ):
            continue
        out["review"][qkey] = {"due": due, "box": box}
    return out


def _mapping(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, dict) else {}


def merge(stored: Mapping[str, Any], session: Mapping[str, Any]) -> dict[str, Any]:
    """Both records in one: for each answer and review, the most recent; steps and completions
    from either (the session's win). Used when a browser's stored record arrives after a learner
    has already answered something in this session."""
    out = empty()
    for part in ("steps", "done"):
        out[part] = {**stored.get(part, {}), **session.get(part, {})}
    answers = dict(stored.get("answers", {}))
    for qkey, entry in session.get("answers", {}).items():
        earlier = answers.get(qkey)
        if earlier is None or entry["at"] >= earlier["at"]:
            answers[qkey] = dict(entry)
            if earlier is not None:  # the first try is whichever came first
                answers[qkey]["first_correct"] = earlier["first_correct"]
    out["answers"] = answers
    out["review"] = {**stored.get("review", {}), **session.get("review", {})}
    return out
