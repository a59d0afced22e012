"""The course as a learner and a teacher meet it in a real browser: every way into a step keeps the
answer on the step, progress survives a reload, a second browser and an export/import, and a
presenter's slide keeps its question above the fold with a clicker moving through the plan."""

from __future__ import annotations

import json

import pytest

from lessons import load_lessons
from tests.e2e.conftest import settle

pytestmark = pytest.mark.e2e

FINISHED = """() => !document.querySelector('[data-testid="stStatusWidget"]')
    && !document.querySelector('[data-testid="stSkeleton"]')
    && !!document.querySelector('[data-testid="stHeading"], h1')"""
LESSONS = load_lessons()
STORAGE_KEY = "gfg-progress-v1"


def _settle(page, ms: int = 0) -> None:
    settle(page, at_least_ms=ms)


def _first_question(lesson):
    """The first question of ``lesson`` and its step number (predicts come first in a step)."""
    for number, step in enumerate(lesson.steps, start=1):
        if step.predict is not None:
            return number, step.predict
        if step.questions:
            return number, step.questions[0]
    raise AssertionError(f"{lesson.id} asks nothing")


def _answer(page, question) -> None:
    """Answer ``question`` right, as a learner would: type the number, or pick the right option."""
    if question.is_numeric:
        box = page.get_by_role("spinbutton").first
        box.fill(f"{question.answer:.6g}")
        box.press("Enter")
    else:
        page.get_by_role("radio", name=question.options[question.answer].text[:40], exact=False).first.check(
            force=True
        )
        page.get_by_role("button", name="Commit my prediction").or_(
            page.get_by_role("button", name="Check")
        ).first.click()
    _settle(page)


def _answered(page) -> int:
    return page.locator('[data-testid="stAlertContentSuccess"]').filter(has_text="Right").count()


@pytest.mark.parametrize("entry", ["lessons page", "plan a class"])
def test_answering_after_entering_from_the_lessons_page_or_a_plan_stays_on_the_step(app_url, browser, entry):
    context = browser.new_context(viewport={"width": 1440, "height": 900})
    page = context.new_page()
    lesson = LESSONS[2]
    number, question = _first_question(lesson)
    if entry == "lessons page":
        page.goto(f"{app_url}/lessons", wait_until="domcontentloaded")
        _settle(page)
        page.get_by_role("link", name="Start").nth(2).click()
    else:
        page.goto(f"{app_url}/lessons?plan=1", wait_until="domcontentloaded")
        _settle(page)
        page.get_by_role("combobox").first.click()  # add lesson 3 to the plan
        page.get_by_role("option", name=f"{lesson.number}. {lesson.title}").click()
        page.keyboard.press("Escape")
        _settle(page)
        assert "plan=1" in page.url, "changing the plan must not leave the planner"
        page.get_by_role("link", name=f"Lesson {lesson.number}, step {number}:").first.click()
    _settle(page)
    assert f"lesson={lesson.id}" in page.url and f"step={number}" in page.url, page.url
    if entry == "lessons page":
        _answer(page, question)
        assert _answered(page) == 1, "the answer is on the page"
    else:  # a plan's links open presenter view: the teacher reveals the answer
        assert "present=true" in page.url and "seq=" in page.url
        page.get_by_role("button", name="Reveal the answer").first.click()
        _settle(page)
        assert page.get_by_text("The model gives").or_(page.get_by_text("The answer:")).count() >= 1
    assert f"lesson={lesson.id}" in page.url and f"step={number}" in page.url, page.url
    context.close()


def test_progress_survives_a_reload_a_second_browser_and_an_export_import(app_url, browser, tmp_path):
    lesson = LESSONS[0]
    context = browser.new_context(viewport={"width": 1440, "height": 900}, accept_downloads=True)
    page = context.new_page()
    answered_steps = []
    for number, step in enumerate(lesson.steps, start=1):
        if len(answered_steps) == 3:
            break
        if step.predict is None and not step.questions:
            continue
        question = step.predict or step.questions[0]
        page.goto(f"{app_url}/lessons?lesson={lesson.id}&step={number}", wait_until="domcontentloaded")
        _settle(page)
        _answer(page, question)
        assert _answered(page) >= 1, question.id
        answered_steps.append(number)
    last = answered_steps[-1]
    page.reload(wait_until="domcontentloaded")
    _settle(page, 1500)
    assert _answered(page) >= 1, "the answer is still there after a reload"
    for number in answered_steps[:-1]:  # and the other two, on their steps
        page.goto(f"{app_url}/lessons?lesson={lesson.id}&step={number}", wait_until="domcontentloaded")
        _settle(page, 1000)
        assert _answered(page) >= 1, f"step {number} lost its answer"
    page.goto(f"{app_url}/lessons?lesson={lesson.id}&step={last}", wait_until="domcontentloaded")
    _settle(page, 1500)
    stored = json.loads(page.evaluate(f"() => localStorage.getItem('{STORAGE_KEY}')"))
    assert len(stored["answers"]) == 3 and stored["steps"][lesson.id] == last

    # A second browser started from the first one's storage resumes at the same step.
    second = browser.new_context(
        viewport={"width": 1440, "height": 900}, storage_state=context.storage_state()
    )
    resumed = second.new_page()
    resumed.goto(f"{app_url}/lessons", wait_until="domcontentloaded")
    _settle(resumed, 1500)
    resumed.get_by_role("link", name=f"Continue at step {last}").first.click()
    _settle(resumed, 1200)
    assert f"step={last}" in resumed.url and _answered(resumed) >= 1
    second.close()

    # Export, then import into a fresh browser: the same progress.
    page.goto(f"{app_url}/lessons", wait_until="domcontentloaded")
    _settle(page, 1500)
    page.get_by_text("Your progress: kept in this browser").click()
    with page.expect_download() as download:
        page.get_by_role("button", name="Download my progress").click()
    path = tmp_path / "progress.json"
    download.value.save_as(path)
    exported = json.loads(path.read_text())
    assert exported["answers"] == stored["answers"]
    context.close()

    fresh = browser.new_context(viewport={"width": 1440, "height": 900})
    other = fresh.new_page()
    other.goto(f"{app_url}/lessons", wait_until="domcontentloaded")
    _settle(other, 1500)
    assert other.get_by_role("link", name=f"Continue at step {last}").count() == 0
    other.get_by_text("Your progress: kept in this browser").click()
    other.locator('[data-testid="stFileUploaderDropzoneInput"]').set_input_files(str(path))
    other.get_by_text("Imported: 3 answers").wait_for(timeout=30_000)
    _settle(other, 1500)
    restored = json.loads(other.evaluate(f"() => localStorage.getItem('{STORAGE_KEY}')"))
    assert restored["answers"] == stored["answers"] and restored["steps"] == stored["steps"]
    other.reload(wait_until="domcontentloaded")
    _settle(other, 1500)
    assert other.get_by_role("link", name=f"Continue at step {last}").count() == 1
    fresh.close()


def test_a_slide_keeps_its_question_above_the_fold_and_a_clicker_follows_the_plan(app_url, browser):
    context = browser.new_context(viewport={"width": 1280, "height": 720})
    page = context.new_page()
    slides = [
        (lesson, n)
        for lesson in LESSONS
        for n, step in enumerate(lesson.steps, start=1)
        if step.predict is not None and step.view is not None
    ][:3]
    seq = ",".join(f"{lesson.id}:{n}" for lesson, n in slides)
    first, number = slides[0]
    page.goto(f"{app_url}/lessons?lesson={first.id}&step={number}&seq={seq}&present=true")
    _settle(page, 1200)
    reveal = page.get_by_role("button", name="Reveal the answer").first
    box = reveal.bounding_box()
    assert box is not None and box["y"] + box["height"] <= 720, box
    page.evaluate("() => document.activeElement && document.activeElement.blur()")  # no control has focus
    page.keyboard.press("PageDown")
    page.wait_for_url(lambda url: f"lesson={slides[1][0].id}" in url and f"step={slides[1][1]}" in url)
    _settle(page, 1000)
    page.keyboard.press("ArrowRight")
    page.wait_for_url(lambda url: f"lesson={slides[2][0].id}" in url and f"step={slides[2][1]}" in url)
    _settle(page, 1000)
    page.keyboard.press("PageUp")
    page.wait_for_url(lambda url: f"lesson={slides[1][0].id}" in url and f"step={slides[1][1]}" in url)
    context.close()


def test_an_embedded_views_select_box_shows_the_value_in_use(app_url, browser):
    """Lesson 9's worked problem embeds the Parallelism view with the link between nodes at its
    default; the box must name that link, the one the chart computes with (Chromium used to
    display the first option, InfiniBand HDR, beside a chart computed for NDR)."""
    from simulators.hardware import get_interconnect
    from simulators.parallelism import DEFAULT_INTER_NODE_LINK

    lesson = next(item for item in LESSONS if item.id == "many-gpus")
    number = next(
        n
        for n, step in enumerate(lesson.steps, start=1)
        if step.view is not None and "par_inter" in step.view.controls
    )
    context = browser.new_context(viewport={"width": 1440, "height": 900})
    page = context.new_page()
    page.goto(f"{app_url}/lessons?lesson={lesson.id}&step={number}")
    _settle(page, 1500)
    box = page.locator('[data-testid="stSelectbox"] input').first
    box.wait_for(timeout=60_000)
    _settle(page, 1000)
    assert box.get_attribute("value") == get_interconnect(DEFAULT_INTER_NODE_LINK).name
    context.close()
