"""The course: every lesson loads and validates, answers are recomputed independently, and
malformed files fail with the file, the step and the field."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from lessons import LessonError, grade, load_lessons, parse_lesson_file
from lessons.loader import LESSONS_DIR
from tests.lesson_answers import ANSWERS, CHOICES

LESSON_FILES = sorted(LESSONS_DIR.glob("[0-9][0-9]-*.md"))
SEEDS = yaml.safe_load((Path(__file__).parent / "data" / "seed_concepts.yaml").read_text())
SEED_TERMS = sorted({term for pairs in SEEDS.values() for _, term in pairs})


def _questions(numeric: bool | None = None):
    """Every question and each of its variants, collected file by file, so one broken lesson fails
    its own tests, not the collection."""
    found = []
    for path in LESSON_FILES:
        try:
            lesson = parse_lesson_file(path)
        except LessonError:
            continue  # test_every_lesson_file_validates reports it
        for question in lesson.questions:
            if numeric is None or question.is_numeric == numeric:
                found += [(lesson, q) for q in (question, *question.variants())]
    return found


def _qid(item) -> str:
    return getattr(item, "id", "") + (f"[{item.variant_key}]" if getattr(item, "inputs", ()) else "")


@pytest.mark.parametrize("path", LESSON_FILES, ids=lambda p: p.name)
def test_every_lesson_file_validates(path):
    lesson = parse_lesson_file(path)
    assert 4 <= len(lesson.steps) <= 10
    assert 10 <= lesson.minutes <= 45, lesson.step_minutes


def test_the_course_has_at_least_ten_lessons_and_fifty_questions():
    lessons = load_lessons()
    assert len(lessons) >= 10, [lesson.id for lesson in lessons]
    assert sum(len(lesson.questions) for lesson in lessons) >= 50


@pytest.mark.parametrize(("lesson", "question"), _questions(numeric=True), ids=_qid)
def test_numeric_answer_is_recomputed_independently(lesson, question):
    """The lesson's expression and a direct simulators computation agree on every variant, and the
    tolerance is tight enough to reject 1.5 × answer + 1."""
    key = f"{lesson.id}/{question.id}"
    assert key in ANSWERS, f"tests/answers/ has no independent computation for {key}"
    expected = float(ANSWERS[key](**dict(question.inputs)))
    assert grade(question, expected), (key, question.variant_key, question.answer, expected)
    assert not grade(question, 1.5 * expected + 1), key


@pytest.mark.parametrize(("lesson", "question"), _questions(numeric=False), ids=_qid)
def test_choice_answer_is_recomputed_where_it_depends_on_the_inputs(lesson, question):
    """A choice whose right option changes with its inputs has an independent rule in
    tests/answers/ that picks the same option (by the position it is written in)."""
    key = f"{lesson.id}/{question.id}"
    origins = {v.options[v.answer].origin for v in (question, *question.variants())}
    if len(origins) > 1 or key in CHOICES:
        assert key in CHOICES, f"{key}: the right option depends on the inputs; add it to CHOICES"
        assert question.options[question.answer].origin == CHOICES[key](**dict(question.inputs)), (
            key,
            question.variant_key,
        )


def test_every_choice_question_has_exactly_one_right_option():
    for lesson in load_lessons():
        for question in lesson.questions:
            if question.is_numeric:
                continue
            right = [i for i in range(len(question.options)) if grade(question, i)]
            assert right == [question.answer], (lesson.id, question.id)


def test_every_seed_concept_is_taught_by_a_lesson():
    """Every concept of the five seed articles (tests/data/seed_concepts.yaml) is one of some
    lesson's terms, and the loader has checked that the lesson links it."""
    taught = {term for lesson in load_lessons() for term in lesson.terms}
    missing = [term for term in SEED_TERMS if term not in taught]
    assert not missing, f"seed concepts no lesson teaches: {missing}"


def test_grade_numbers_use_relative_tolerance_and_choices_use_the_index():
    lesson = parse_lesson_file(LESSONS_DIR / "03-roofline.md")
    ridge = next(q for q in lesson.questions if q.id == "ridge-h100")
    assert grade(ridge, ridge.answer * 1.04)
    assert not grade(ridge, ridge.answer * 1.06)
    assert not grade(ridge, None) and not grade(ridge, "abc") and not grade(ridge, float("nan"))
    choice = next(q for q in lesson.questions if q.id == "ridge-h200")
    assert grade(choice, choice.answer)
    assert not grade(choice, (choice.answer + 1) % len(choice.options))
    assert not grade(choice, True)


# -- malformed files -----------------------------------------------------------------------------

GOOD_STEP = """
## A step

Prose with a [[roofline-model|link]].
"""

FRONT = """---
id: broken
title: Broken
objectives: [Explain a thing, Compute a thing, Predict a thing]
prerequisites: []
terms: [roofline-model]
---
"""


def _write(tmp_path: Path, steps: str) -> Path:
    path = tmp_path / "01-broken.md"
    path.write_text(FRONT + GOOD_STEP * 3 + steps, encoding="utf-8")
    return path


@pytest.mark.parametrize(
    ("step", "message"),
    [
        (
            "## Bad view\n\nText.\n\n```view\npage: roofline\nview: roofline\npreset: no-such-preset\n```\n",
            "field view.preset",
        ),
        ('## Bad number\n\nText {{ ridge("no-such-gpu") }}.\n', "field body"),
        (
            "## No explanation\n\nText.\n\n```question\nid: q1\nkind: number\nprompt: How many?\n"
            "answer: 2 * 3\ntolerance: 0.05\nunit: x\n```\n",
            "question q1.explanation",
        ),
        (
            "## Missing feedback\n\nText.\n\n```question\nid: q2\nkind: choice\nprompt: Which?\n"
            "options:\n  - text: A\n    feedback: right\n  - text: B\nanswer: 0\n"
            "explanation: Because.\n```\n",
            "question q2.options[1].feedback",
        ),
        ("## Unknown term\n\nA [[no-such-term]] link.\n", "unknown glossary term"),
        (
            "## Typed number\n\nText.\n\n```question\nid: q3\nkind: choice\nprompt: Which?\n"
            "options:\n  - text: 295 FLOP/byte\n    feedback: ok\n  - text: B\n    feedback: no\nanswer: 0\n"
            "explanation: Because.\n```\n",
            "typed number",
        ),
    ],
    ids=[
        "unknown-preset",
        "failing-expression",
        "no-explanation",
        "no-feedback",
        "unknown-term",
        "typed-number",
    ],
)
def test_a_malformed_lesson_names_file_step_and_field(tmp_path, step, message):
    with pytest.raises(LessonError) as info:
        parse_lesson_file(_write(tmp_path, step))
    text = str(info.value)
    assert "lessons/01-broken.md" in text and "step “" in text and message in text, text


def test_the_outline_agrees_with_the_validated_course():
    """Home and term pages read the cheap outline; it must match what load_lessons validates."""
    from lessons import outline

    full = load_lessons()
    light = outline()
    assert [(o.id, o.number, o.title, o.minutes, o.terms) for o in light] == [
        (lesson.id, lesson.number, lesson.title, lesson.minutes, lesson.terms) for lesson in full
    ]
    for o, lesson in zip(light, full, strict=True):
        assert len(o.step_terms) == len(lesson.steps)
        for term in lesson.terms:
            step = lesson.steps[o.step_teaching(term) - 1]
            texts = step.body + step.reveal + "".join(q.prompt + q.explanation for q in step.questions)
            assert f"[[{term}" in texts or f"[[{term}|" in texts or o.step_teaching(term) == 1, (o.id, term)


# -- variants and option order -----------------------------------------------------------------


@pytest.mark.parametrize("path", LESSON_FILES, ids=lambda p: p.name)
def test_every_computed_question_can_be_asked_on_other_inputs(path):
    """A question whose numbers come from the models has ``given`` inputs (so "Try another" draws
    new numbers), or says in ``fixed`` why it has none."""
    lesson = parse_lesson_file(path)
    bare = [q.id for q in lesson.questions if q.computed and not q.variants() and not q.fixed]
    assert not bare, f"{lesson.file}: computed questions without variants or a fixed reason: {bare}"


def test_variants_are_new_numbers_and_keep_each_options_meaning():
    """Every variant differs from the question it re-asks (prompt and answer or options), keeps the
    same options as written (the same misconception in each), and grades its own answer."""
    for lesson in load_lessons():
        for question in lesson.questions:
            for variant in question.variants():
                assert variant.id == question.id and variant.kind == question.kind
                assert variant.inputs != question.inputs and variant.prompt != question.prompt, (
                    lesson.id,
                    question.id,
                    variant.variant_key,
                )
                assert sorted(o.origin for o in variant.options) == sorted(o.origin for o in question.options)
                assert grade(variant, variant.answer)
                assert question.variant(variant.variant_key) == variant


def test_the_right_option_is_spread_over_positions():
    """Options are shuffled per question and variant: the right one is not always first. With n
    options the right one should be first about 1/n of the time; we allow a generous margin."""
    positions = []
    expected_first = 0.0
    for lesson in load_lessons():
        for question in lesson.questions:
            if question.is_numeric:
                continue
            positions.append(question.answer)
            expected_first += 1 / len(question.options)
    first = positions.count(0)
    assert first <= 1.6 * expected_first + 2, (first, expected_first, len(positions))
    assert len(set(positions)) >= 3, positions
    shuffled_twice = parse_lesson_file(LESSON_FILES[0])
    assert [q.options for q in shuffled_twice.questions] == [
        q.options for q in load_lessons()[0].questions
    ], "the order must be stable across loads"


def test_the_right_option_is_not_given_away_by_its_length():
    """A learner should not find the answer by picking the longest option: the right one may be
    strictly the longest in at most 40% of the choice questions (chance is about a third)."""
    offenders = []
    asked = 0
    for lesson in load_lessons():
        for question in lesson.questions:
            if question.is_numeric:
                continue
            asked += 1
            lengths = [len(option.text) for option in question.options]
            right = lengths[question.answer]
            if all(right > length for i, length in enumerate(lengths) if i != question.answer):
                offenders.append(f"{lesson.file} {question.id} {lengths}")
    assert len(offenders) <= 0.4 * asked, (
        f"the right option is the longest in {len(offenders)} of {asked} questions:\n" + "\n".join(offenders)
    )
