"""Read ``lessons/NN-<id>.md`` into validated ``Lesson``s.

A lesson file is Markdown with YAML front matter (``id``, ``title``, ``minutes``, ``objectives``,
``prerequisites``, ``terms``). Each ``## <title>`` heading starts a step. Inside a step, prose may
hold ``[[term-id]]`` links and ``{{ expr :fmt }}`` numbers, where ``expr`` may call the model
functions of ``lessons/functions.py``; fenced blocks add structure:

    ```view                         ```question
    page: roofline                  id: ridge-h100
    view: roofline                  kind: number          # choice | number | predict
    preset: decode-batch-1          prompt: What is …?
    controls: [rf_batch]            answer: ridge("h100-sxm", "bf16")
    caption: optional text          tolerance: 0.05       # relative
    ```                             unit: FLOP/byte
                                    explanation: |
                                      Why, with [[ridge-point]] links.
                                    ```

A choice question has ``options: [{text, feedback}, …]`` and ``answer: <index>``; every wrong
option needs feedback. A predict question comes before what it predicts: the prose after it in
the same step and the step's view are shown only once the learner has committed an answer.

Everything is checked at load: unknown pages, views, presets, controls and term ids, expressions
that fail, a question without explanation, a typed number in an option. ``LessonError`` names the
file, the step and the field.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import frontmatter
import yaml

from content import CONTENT_DIR, TERM_LINK, load_page
from glossary import terms_by_id
from glossary.calc import CalcError, evaluate, render
from lessons.functions import FUNCTIONS
from lessons.model import Lesson, LessonError, Option, Question, Step, View

LESSONS_DIR = Path(__file__).resolve().parent
FILE_NAME = re.compile(r"^(\d\d)-([a-z0-9-]+)\.md$")
_STEP = re.compile(r"^## +(.+?) *$", re.MULTILINE)
_BLOCK = re.compile(r"^```(view|question)[ \t]*\n(.*?)^```[ \t]*$", re.MULTILINE | re.DOTALL)
_ID = re.compile(r"^[a-z0-9][a-z0-9-]*$")
# A number typed into an option (not inside {{ }}, not part of a name like H100, FP8 or 70B).
_TYPED_NUMBER = re.compile(r"(?<![\w.{])(\d[\d,]*(?:\.\d+)?)(?![\w])")
OBJECTIVE_VERBS = frozenset(
    (
        "Apply",
        "Calculate",
        "Choose",
        "Compare",
        "Compute",
        "Connect",
        "Decide",
        "Describe",
        "Design",
        "Diagnose",
        "Distinguish",
        "Draw",
        "Estimate",
        "Explain",
        "Find",
        "Identify",
        "Interpret",
        "Judge",
        "List",
        "Locate",
        "Measure",
        "Name",
        "Pick",
        "Place",
        "Plan",
        "Predict",
        "Read",
        "Reason",
        "Recognize",
        "Relate",
        "Say",
        "Size",
        "Sketch",
        "Spot",
        "State",
        "Tell",
        "Trace",
        "Use",
        "Weigh",
        "Work",
    )
)
QUESTION_FIELDS = {"id", "kind", "prompt", "options", "answer", "tolerance", "unit", "explanation"}
VIEW_FIELDS = {"page", "view", "preset", "controls", "caption"}


class _Where:
    """Where in a file we are, for error messages."""

    def __init__(self, file: str) -> None:
        self.file, self.step = file, ""

    def error(self, field: str, problem: str) -> LessonError:
        where = f"lessons/{self.file}" + (f", step “{self.step}”" if self.step else "")
        return LessonError(f"{where}, field {field}: {problem}")


def _render(text: str, where: _Where, field: str) -> str:
    """Computed numbers in ``text``; unknown term ids are an error."""
    try:
        out = render(text, FUNCTIONS)
    except CalcError as exc:
        raise where.error(field, str(exc)) from None
    known = terms_by_id()
    for match in TERM_LINK.finditer(out):
        if match.group(1) not in known:
            raise where.error(field, f"unknown glossary term [[{match.group(1)}]]")
    return out


def _linked_terms(*texts: str) -> tuple[str, ...]:
    found: list[str] = []
    for text in texts:
        for match in TERM_LINK.finditer(text):
            if match.group(1) not in found:
                found.append(match.group(1))
    return tuple(found)


def _number(value: Any, where: _Where, field: str) -> float:
    if isinstance(value, bool):
        raise where.error(field, "must be a number or an expression")
    if isinstance(value, (int, float)):
        return float(value)
    try:
        return float(evaluate(str(value), FUNCTIONS))
    except CalcError as exc:
        raise where.error(field, str(exc)) from None


def _check_option_text(text: str, where: _Where, field: str) -> None:
    stripped = re.sub(r"\{\{.*?\}\}", "", text)
    for match in _TYPED_NUMBER.finditer(stripped):
        digits = match.group(1).replace(",", "")
        if float(digits) >= 10:
            raise where.error(
                field, f"typed number {match.group(1)!r}: write it as a {{{{ }}}} expression from the models"
            )


def _question(raw: Any, where: _Where) -> Question:
    if not isinstance(raw, dict):
        raise where.error("question", "must be a YAML mapping")
    unknown = set(raw) - QUESTION_FIELDS
    if unknown:
        raise where.error("question", f"unknown field(s) {sorted(unknown)}")
    qid = str(raw.get("id", ""))
    if not _ID.match(qid):
        raise where.error("question.id", f"{qid!r} must be lowercase letters, digits and hyphens")
    kind = raw.get("kind")
    if kind not in ("choice", "number", "predict"):
        raise where.error(f"question {qid}.kind", f"{kind!r} must be choice, number or predict")
    prompt = _render(str(raw.get("prompt") or ""), where, f"question {qid}.prompt")
    if not prompt.strip():
        raise where.error(f"question {qid}.prompt", "is missing")
    explanation = _render(str(raw.get("explanation") or ""), where, f"question {qid}.explanation")
    if not explanation.strip():
        raise where.error(f"question {qid}.explanation", "is missing: every question explains its answer")
    raw_options = raw.get("options") or []
    options: list[Option] = []
    for i, item in enumerate(raw_options):
        field = f"question {qid}.options[{i}]"
        if not isinstance(item, dict) or not str(item.get("text", "")).strip():
            raise where.error(field, "needs text (and feedback)")
        _check_option_text(str(item["text"]), where, field + ".text")
        options.append(
            Option(
                text=_render(str(item["text"]), where, field + ".text"),
                feedback=_render(str(item.get("feedback") or ""), where, field + ".feedback"),
            )
        )
    numeric = kind == "number" or (kind == "predict" and not options)
    if numeric:
        if options:
            raise where.error(f"question {qid}.options", "a number question has no options")
        if "answer" not in raw:
            raise where.error(f"question {qid}.answer", "is missing")
        answer = _number(raw["answer"], where, f"question {qid}.answer")
        if not answer or answer != answer:
            raise where.error(f"question {qid}.answer", f"evaluates to {answer}: not a usable answer")
        tolerance = raw.get("tolerance")
        if not isinstance(tolerance, (int, float)) or isinstance(tolerance, bool) or not 0 < tolerance < 0.5:
            raise where.error(
                f"question {qid}.tolerance", "a relative tolerance between 0 and 0.5 is required"
            )
        unit = str(raw.get("unit") or "").strip()
        if not unit:
            raise where.error(f"question {qid}.unit", "is missing (write 'x' or 'count' for a pure number)")
        return Question(
            qid,
            kind,
            prompt,
            (),
            answer,
            float(tolerance),
            unit,
            explanation,
            _linked_terms(explanation, prompt),
        )
    if len(options) < 2:
        raise where.error(f"question {qid}.options", "a choice needs at least two options")
    answer = raw.get("answer")
    if not isinstance(answer, int) or isinstance(answer, bool) or not 0 <= answer < len(options):
        raise where.error(
            f"question {qid}.answer", f"must be the index of the right option (0–{len(options) - 1})"
        )
    for i, option in enumerate(options):
        if i != answer and not option.feedback.strip():
            raise where.error(
                f"question {qid}.options[{i}].feedback", "every wrong option needs its own feedback"
            )
    if len({o.text for o in options}) != len(options):
        raise where.error(f"question {qid}.options", "two options have the same text")
    feedback = "\n".join(o.feedback for o in options)
    return Question(
        qid,
        kind,
        prompt,
        tuple(options),
        answer,
        0.0,
        "",
        explanation,
        _linked_terms(explanation, prompt, feedback),
    )


@functools.cache
def _page_presets(page: str) -> dict[str, dict]:
    from ui.nav import PAGES

    info = next(p for p in PAGES if p.url_path == page)
    name = info.file.stem
    if not (CONTENT_DIR / f"{name}.md").exists():
        return {}
    return {p["id"]: p for p in load_page(name).meta.get("presets") or []}


def _view(raw: Any, where: _Where) -> View:
    from ui.nav import PAGES
    from ui.schema import page_params

    if not isinstance(raw, dict):
        raise where.error("view", "must be a YAML mapping")
    unknown = set(raw) - VIEW_FIELDS
    if unknown:
        raise where.error("view", f"unknown field(s) {sorted(unknown)}")
    page = str(raw.get("page", ""))
    info = next((p for p in PAGES if p.url_path == page and p.views), None)
    if info is None:
        pages = ", ".join(p.url_path for p in PAGES if p.views)
        raise where.error("view.page", f"{page!r} is not a page with views ({pages})")
    name = str(raw.get("view", ""))
    if name not in info.views:
        raise where.error("view.view", f"{page} has no view {name!r} (it has {', '.join(info.views)})")
    preset = str(raw.get("preset", ""))
    presets = _page_presets(page)
    if preset not in presets:
        raise where.error("view.preset", f"{page} has no preset {preset!r} (it has {', '.join(presets)})")
    controls = raw.get("controls") or []
    if isinstance(controls, str):
        controls = [controls]
    params = page_params()[page]
    for key in controls:
        if key not in params:
            raise where.error("view.controls", f"{page} has no control {key!r}")
    caption = _render(str(raw.get("caption") or ""), where, "view.caption")
    return View(page, name, preset, tuple(str(c) for c in controls), caption)


def _slug(title: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", title.lower()).strip("-")[:60] or "step"


def _step(title: str, text: str, where: _Where) -> Step:
    where.step = title
    body_parts: list[str] = []
    reveal_parts: list[str] = []
    view: View | None = None
    questions: list[Question] = []
    position = 0
    seen_predict = False
    for match in _BLOCK.finditer(text):
        prose = text[position : match.start()].strip()
        if prose:
            (reveal_parts if seen_predict else body_parts).append(prose)
        position = match.end()
        try:
            raw = yaml.safe_load(match.group(2))
        except yaml.YAMLError as exc:
            raise where.error(match.group(1), f"is not valid YAML: {exc}") from None
        if match.group(1) == "view":
            if view is not None:
                raise where.error("view", "a step holds at most one view")
            view = _view(raw, where)
        else:
            question = _question(raw, where)
            if question.kind == "predict":
                if seen_predict:
                    raise where.error("question", "a step holds at most one predict question")
                seen_predict = True
            questions.append(question)
    tail = text[position:].strip()
    if tail:
        (reveal_parts if seen_predict else body_parts).append(tail)
    if "```" in _BLOCK.sub("", text):
        raise where.error("block", "a fenced block must be ```view or ```question (and closed)")
    body = _render("\n\n".join(body_parts), where, "body")
    reveal = _render("\n\n".join(reveal_parts), where, "reveal")
    if not body.strip():
        raise where.error("body", "a step needs some prose before its view and questions")
    if seen_predict and view is None and not reveal.strip():
        raise where.error("reveal", "a predict question needs something to reveal: a view or prose after it")
    return Step(_slug(title), title, body, view, tuple(questions), reveal)


def _strings(value: Any, where: _Where, field: str) -> tuple[str, ...]:
    if value is None:
        return ()
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise where.error(field, "must be a list of strings")
    return tuple(value)


def parse_lesson_file(path: Path) -> Lesson:
    """One lesson file, validated on its own (prerequisites are checked by ``load_lessons``)."""
    where = _Where(path.name)
    match = FILE_NAME.match(path.name)
    if not match:
        raise where.error("file name", "must be NN-<id>.md")
    try:
        post = frontmatter.loads(path.read_text(encoding="utf-8"))
    except (yaml.YAMLError, ValueError) as exc:
        raise where.error("front matter", f"is not valid YAML: {exc}") from None
    meta = post.metadata
    lesson_id = str(meta.get("id", ""))
    if lesson_id != match.group(2):
        raise where.error("id", f"{lesson_id!r} must match the file name ({match.group(2)!r})")
    title = str(meta.get("title") or "").strip()
    if not title:
        raise where.error("title", "is missing")
    minutes = meta.get("minutes")
    if not isinstance(minutes, int) or not 10 <= minutes <= 20:
        raise where.error("minutes", f"{minutes!r} must be a whole number from 10 to 20")
    objectives = _strings(meta.get("objectives"), where, "objectives")
    if not 3 <= len(objectives) <= 5:
        raise where.error("objectives", f"{len(objectives)} given: 3 to 5 are required")
    for objective in objectives:
        first = objective.split()[0] if objective.split() else ""
        if first not in OBJECTIVE_VERBS:
            raise where.error("objectives", f"“{objective}” must start with a verb (e.g. Explain, Compute)")
    prerequisites = _strings(meta.get("prerequisites"), where, "prerequisites")
    terms = _strings(meta.get("terms"), where, "terms")
    known = terms_by_id()
    for term in terms:
        if term not in known:
            raise where.error("terms", f"unknown glossary term {term!r}")
    parts = _STEP.split(post.content)
    if parts[0].strip():
        raise where.error("body", "text before the first '## step' heading")
    steps = [_step(t, body, where) for t, body in zip(parts[1::2], parts[2::2], strict=True)]
    where.step = ""
    if not 4 <= len(steps) <= 10:
        raise where.error("steps", f"{len(steps)} steps: a lesson has 4 to 10")
    ids = [s.id for s in steps]
    if len(set(ids)) != len(ids):
        raise where.error("steps", "two steps have the same title")
    question_ids = [q.id for s in steps for q in s.questions]
    if len(set(question_ids)) != len(question_ids):
        raise where.error("questions", "two questions have the same id")
    texts = [s.body + s.reveal for s in steps]
    texts += [
        q.prompt + q.explanation + "".join(o.feedback for o in q.options) for s in steps for q in s.questions
    ]
    linked = set(_linked_terms(*texts))
    missing = [t for t in terms if t not in linked]
    if missing:
        raise where.error("terms", f"{missing} are listed but never linked as [[term]] in a step")
    return Lesson(
        lesson_id,
        title,
        minutes,
        objectives,
        prerequisites,
        terms,
        tuple(steps),
        number=int(match.group(1)),
        file=path.name,
    )


def check_course(lessons: Iterable[Lesson]) -> list[Lesson]:
    """Course order by file number; prerequisites must name earlier lessons."""
    ordered = sorted(lessons, key=lambda lesson: lesson.number)
    seen: set[str] = set()
    for position, lesson in enumerate(ordered, start=1):
        if lesson.number != position:
            raise LessonError(f"lessons/{lesson.file}: lessons are numbered 01, 02, … without gaps")
        for prerequisite in lesson.prerequisites:
            if prerequisite not in seen:
                raise LessonError(
                    f"lessons/{lesson.file}, field prerequisites: {prerequisite!r} is not an earlier lesson"
                )
        seen.add(lesson.id)
    return ordered


@functools.cache
def _load(directory: str) -> tuple[Lesson, ...]:
    files = sorted(Path(directory).glob("[0-9][0-9]-*.md"))
    return tuple(check_course(parse_lesson_file(path) for path in files))


@dataclass(frozen=True)
class Outline:
    """A lesson as the home page and term pages need it: read from front matter and headings only,
    without evaluating its numbers (``load_lessons`` does that, once, for the Lessons page)."""

    id: str
    number: int
    title: str
    minutes: int
    terms: tuple[str, ...]
    step_terms: tuple[frozenset[str], ...]  # the [[term]] ids each step links, in step order

    def step_teaching(self, term_id: str) -> int:
        """The first step (1-based) that links ``term_id``, else 1."""
        return next((n for n, ids in enumerate(self.step_terms, start=1) if term_id in ids), 1)


@functools.cache
def _outline(directory: str) -> tuple[Outline, ...]:
    found = []
    for path in sorted(Path(directory).glob("[0-9][0-9]-*.md")):
        match = FILE_NAME.match(path.name)
        if not match:
            continue
        post = frontmatter.loads(path.read_text(encoding="utf-8"))
        parts = _STEP.split(post.content)
        found.append(
            Outline(
                id=str(post.metadata.get("id", match.group(2))),
                number=int(match.group(1)),
                title=str(post.metadata.get("title", "")),
                minutes=int(post.metadata.get("minutes") or 0),
                terms=tuple(post.metadata.get("terms") or ()),
                step_terms=tuple(
                    frozenset(m.group(1) for m in TERM_LINK.finditer(body)) for body in parts[2::2]
                ),
            )
        )
    return tuple(found)


def outline(directory: Path | str | None = None) -> list[Outline]:
    """Every lesson's outline in course order, without validating or computing anything (cheap).

    The tests validate every file through ``load_lessons``; this is what pages that only list or
    link lessons read.
    """
    return list(_outline(str(directory or LESSONS_DIR)))


def load_lessons(directory: Path | str | None = None) -> list[Lesson]:
    """Every lesson in course order, validated (LessonError names the file, step and field).

    The shipped lessons are parsed once per process.
    """
    return list(_load(str(directory or LESSONS_DIR)))
