"""A learner's progress record: first tries stay first, the review schedule spaces out, and a stored
or imported record is read defensively (a forged or damaged file never reaches the page as is)."""

from __future__ import annotations

import ast
import json
from pathlib import Path

import pytest

from lessons import progress as course

KNOWN = {"roofline": ["ridge-h100", "ridge-h200"], "gpu-basics": ["threads-in-flight"]}
DAY = course.DAY_S


def test_a_retry_never_turns_a_first_miss_into_a_first_success():
    record = course.empty()
    course.record_answer(
        record, "roofline/ridge-h100", variant="gpu=h100-sxm", response=1.0, correct=False, now=0
    )
    course.ask_again(record, "roofline/ridge-h100", "gpu=h200-sxm")
    assert record["answers"]["roofline/ridge-h100"]["open"] is True
    entry = course.record_answer(
        record, "roofline/ridge-h100", variant="gpu=h200-sxm", response=206.0, correct=True, now=10
    )
    assert entry == {
        "variant": "gpu=h200-sxm",
        "response": 206.0,
        "correct": True,
        "first_correct": False,
        "attempts": 2,
        "open": False,
        "at": 10.0,
    }
    assert course.lesson_score(record, "roofline", KNOWN["roofline"]) == (1, 0, 2)


def test_a_first_miss_is_reviewed_a_day_later_then_at_growing_gaps():
    record = course.empty()
    course.record_answer(record, "roofline/ridge-h100", variant="", response=1.0, correct=False, now=0)
    assert course.due_reviews(record, 0.5 * DAY) == []
    assert course.due_reviews(record, 1 * DAY) == ["roofline/ridge-h100"]
    now = 1 * DAY
    for days in course.REVIEW_DAYS[1:]:
        entry = course.record_review(record, "roofline/ridge-h100", correct=True, now=now)
        assert entry["due"] == now + days * DAY
        now = entry["due"]
    assert course.record_review(record, "roofline/ridge-h100", correct=True, now=now) is None
    assert course.next_review_at(record) is None


def test_a_wrong_review_answer_starts_the_gaps_again():
    record = course.empty()
    course.record_answer(record, "roofline/ridge-h100", variant="", response=1.0, correct=False, now=0)
    course.record_review(record, "roofline/ridge-h100", correct=True, now=DAY)
    entry = course.record_review(record, "roofline/ridge-h100", correct=False, now=5 * DAY)
    assert entry == {"due": 6 * DAY, "box": 0}


def test_a_right_first_answer_is_never_put_up_for_review():
    record = course.empty()
    course.record_answer(record, "roofline/ridge-h100", variant="", response=295.0, correct=True, now=0)
    assert record["review"] == {}


def test_the_record_round_trips_through_json():
    record = course.empty()
    course.record_answer(record, "roofline/ridge-h200", variant="", response=2, correct=False, now=5)
    record["steps"]["roofline"] = 3
    record["done"]["roofline"] = 7.0
    assert course.loads(course.dumps(record), KNOWN) == record


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("not json", "not JSON"),
        ("[1, 2]", "JSON object"),
        ('{"v": 99, "answers": {}}', "version-1"),
        ("x" * (course.MAX_BYTES + 1), "under"),
    ],
)
def test_what_is_not_a_progress_record_is_refused_with_a_reason(text, message):
    with pytest.raises(course.ProgressError, match=message):
        course.loads(text, KNOWN)


def test_a_forged_record_keeps_only_well_formed_entries_for_known_questions():
    forged = {
        "v": 1,
        "answers": {
            "roofline/ridge-h100": {
                "response": 295,
                "correct": True,
                "first_correct": True,
                "attempts": 1,
                "at": 1,
            },
            "roofline/<script>": {"response": 1, "attempts": 1, "at": 1},
            "nope/q": {"response": 1, "attempts": 1, "at": 1},
            "roofline/ridge-h200": {"response": float("nan"), "attempts": 1, "at": 1},
            "gpu-basics/threads-in-flight": {"response": 1, "attempts": -3, "at": 1},
        },
        "steps": {"roofline": 4, "gpu-basics": 10_000, "nope": 1, "x": "y"},
        "done": {"roofline": "yesterday"},
        "review": {"roofline/ridge-h100": {"due": 5, "box": 99}},
        "extra": "ignored",
    }
    clean = course.loads(json.dumps(forged), KNOWN)
    assert list(clean["answers"]) == ["roofline/ridge-h100"]
    assert clean["steps"] == {"roofline": 4}
    assert clean["done"] == {} and clean["review"] == {}
    assert set(clean) == {"v", "answers", "steps", "done", "review"}


def test_merging_keeps_the_latest_answer_and_the_earliest_first_try():
    stored, session = course.empty(), course.empty()
    course.record_answer(stored, "roofline/ridge-h100", variant="", response=1.0, correct=False, now=1)
    course.record_answer(session, "roofline/ridge-h100", variant="", response=295.0, correct=True, now=2)
    session["steps"]["roofline"] = 2
    merged = course.merge(stored, session)
    entry = merged["answers"]["roofline/ridge-h100"]
    assert entry["response"] == 295.0 and entry["first_correct"] is False
    assert merged["steps"] == {"roofline": 2}


def test_no_module_under_lessons_imports_the_ui():
    """Lessons know no screen: the page list and control schema they validate against live in
    content/, below both the lessons and the pages."""
    for path in (Path(__file__).resolve().parent.parent / "lessons").glob("*.py"):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            names = []
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                names = [node.module or ""]
            for name in names:
                assert not (name == "ui" or name.startswith("ui.")), f"{path.name} imports {name}"
                assert not name.startswith("streamlit"), f"{path.name} imports {name}"
