"""Read ``lessons/NN-<id>.md`` into validated ``Lesson``s.

A lesson file is Markdown with YAML front matter (``id``, ``title``, ``objectives``,
``prerequisites``, ``terms``); its minutes are computed from its words, questions and views
(``step_minutes``). Each ``## <title>`` heading starts a step. Inside a step, prose may
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
option needs feedback. Where several options are right (a design problem), each may say
``right: <expression>``: the options it makes true are accepted too, and ``answer`` (the one the
explanation calls best) must be one of them. A predict question comes before what it predicts:
the prose after it in the same step and the step's view are shown only once the learner has
committed an answer.
A step is drawn as prose, predict question, reveal, view, then its other questions, so no prose
may follow a choice or number question in the file (it would be shown above it).

Everything is checked at load: unknown pages, views, presets, controls and term ids, expressions
that fail, a question without explanation, a typed number in an option. ``LessonError`` names the
file, the step and the field.
"""

from __future__ import annotations

import functools
import hashlib
import itertools
import math
import random
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

import frontmatter
import yaml

from content import CONTENT_DIR, TERM_LINK, load_page
from glossary import terms_by_id
from glossary.calc import CALC_PATTERN, CalcError, evaluate, render
from lessons.functions import FUNCTIONS, LABELS
from lessons.model import Lesson, LessonError, Option, Question, Step, View

LESSONS_DIR = Path(__file__).resolve().parent
FILE_NAME = re.compile(r"^(\d\d)-([a-z0-9-]+)\.md$")
_STEP = re.compile(r"^## +(.+?) *$", re.MULTILINE)
_BLOCK = re.compile(r"^```(view|question)[ \t]*\n(.*?)^```[ \t]*$", re.MULTILINE | re.DOTALL)
_ID = re.compile(r"^[a-z0-9][a-z0-9-]*$")
_NAME = re.compile(r"^[a-z][a-z0-9_]*$")
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
QUESTION_FIELDS = {
    "id",
    "kind",
    "given",
    "require",
    "prompt",
    "options",
    "answer",
    "tolerance",
    "unit",
    "explanation",
    "fixed",
}
VIEW_FIELDS = {"page", "view", "preset", "controls", "caption"}


class _Where:
    """Where in a file we are, for error messages."""

    def __init__(self, file: str) -> None:
        self.file, self.step = file, ""

    def error(self, field: str, problem: str) -> LessonError:
        where = f"lessons/{self.file}" + (f", step “{self.step}”" if self.step else "")
        return LessonError(f"{where}, field {field}: {problem}")


def _render(text: str, where: _Where, field: str, names: Mapping[str, Any] | None = None) -> str:
    """Computed numbers in ``text``; unknown term ids are an error."""
    try:
        out = render(text, FUNCTIONS, names, LABELS)
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


def _number(value: Any, where: _Where, field: str, names: Mapping[str, Any] | None = None) -> float:
    if isinstance(value, bool):
        raise where.error(field, "must be a number or an expression")
    if isinstance(value, (int, float)):
        return float(value)
    try:
        return float(evaluate(str(value), FUNCTIONS, names))
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


def _combinations(raw: dict, where: _Where, qid: str) -> list[dict[str, Any]]:
    """The question's input combinations, the one the lesson shows first.

    ``given`` is a mapping of input name → list of values (every combination of them), or a list
    of mappings (exactly these combinations). ``require`` is an expression every kept
    combination must make true (non-zero).
    """
    given = raw.get("given")
    field = f"question {qid}.given"
    if given is None:
        if "require" in raw:
            raise where.error(f"question {qid}.require", "needs inputs: add given")
        return [{}]
    if isinstance(given, dict):
        names = list(given)
        lists = []
        for name in names:
            values = given[name]
            if not isinstance(values, list) or not values:
                raise where.error(field, f"{name}: a list of values is required")
            lists.append(values)
        combos = [dict(zip(names, values, strict=True)) for values in itertools.product(*lists)]
    elif isinstance(given, list) and given and all(isinstance(c, dict) for c in given):
        names = list(given[0])
        combos = [dict(c) for c in given]
        for combo in combos:
            if list(combo) != names:
                raise where.error(field, f"every combination names the same inputs ({', '.join(names)})")
    else:
        raise where.error(field, "must map each input to a list of values, or list combinations")
    for name in names:
        if not _NAME.match(str(name)) or name in FUNCTIONS or name in LABELS:
            raise where.error(field, f"{name!r} is not a usable input name")
    for combo in combos:
        for name, value in combo.items():
            if isinstance(value, bool) or not isinstance(value, (str, int, float)):
                raise where.error(field, f"{name}: {value!r} must be an id or a number")
    if len({tuple(c.items()) for c in combos}) != len(combos):
        raise where.error(field, "two combinations are the same")
    require = raw.get("require")
    if require is not None:
        kept = []
        for combo in combos:
            try:
                ok = evaluate(str(require), FUNCTIONS, combo)
            except CalcError as exc:
                raise where.error(f"question {qid}.require", f"with {combo}: {exc}") from None
            if ok:
                kept.append(combo)
        if not kept or kept[0] != combos[0]:
            raise where.error(
                f"question {qid}.require", "the first combination (the one the lesson shows) must pass it"
            )
        combos = kept
    return combos


_CALL = re.compile(r"\b([a-z_][a-z0-9_]*)\s*\(")


def _calls_models(raw: dict) -> bool:
    """Whether the prompt, options or answer take a number from the model functions."""
    texts = [str(raw.get("prompt") or ""), str(raw.get("answer") or "")]
    texts += [str(o.get("text", "")) for o in raw.get("options") or [] if isinstance(o, dict)]
    return any(m.group(1) in FUNCTIONS for text in texts for m in _CALL.finditer(text))


def _fixed(raw: dict, where: _Where, qid: str) -> str:
    reason = raw.get("fixed")
    if reason is None:
        return ""
    if not isinstance(reason, str) or len(reason.split()) < 3:
        raise where.error(f"question {qid}.fixed", "say in a sentence why it has no other inputs")
    if raw.get("given") is not None:
        raise where.error(f"question {qid}.fixed", "a question with given inputs is not fixed")
    return reason.strip()


def _shuffled(options: list[Option], answer: int, seed: str) -> tuple[tuple[Option, ...], int]:
    """Options in an order fixed by ``seed`` (the question and its inputs); the right one moves."""
    order = list(range(len(options)))
    random.Random(hashlib.sha256(seed.encode()).hexdigest()).shuffle(order)
    return tuple(options[i] for i in order), order.index(answer)


def _question(raw: Any, where: _Where, lesson_id: str = "") -> Question:
    """The question as a lesson shows it; its variants are built when first asked for."""
    if not isinstance(raw, dict):
        raise where.error("question", "must be a YAML mapping")
    unknown = set(raw) - QUESTION_FIELDS
    if unknown:
        raise where.error("question", f"unknown field(s) {sorted(unknown)}")
    qid = str(raw.get("id", ""))
    if not _ID.match(qid):
        raise where.error("question.id", f"{qid!r} must be lowercase letters, digits and hyphens")
    combos = _combinations(raw, where, qid)
    built: list[Question] = []
    context = _Where(where.file)
    context.step = where.step

    def build_all() -> tuple[Question, ...]:
        """The lesson's own question, then every other combination, each built once."""
        built.extend(
            _question_on(raw, context, lesson_id, combos[index], build_all, index)
            for index in range(len(built), len(combos))
        )
        return tuple(built)

    first = _question_on(raw, where, lesson_id, combos[0], build_all if len(combos) > 1 else None)
    built.append(first)
    return first


def _question_on(
    raw: dict,
    where: _Where,
    lesson_id: str,
    names: dict[str, Any],
    build: Any,
    index: int = 0,
) -> Question:
    qid = str(raw["id"])
    inputs = tuple(names.items())
    if names:
        shown = ", ".join(f"{k}={v}" for k, v in inputs)
        step = where.step
        where = _Where(where.file)
        where.step = f"{step} ({shown})" if step else shown
    kind = raw.get("kind")
    if kind not in ("choice", "number", "predict"):
        raise where.error(f"question {qid}.kind", f"{kind!r} must be choice, number or predict")
    prompt = _render(str(raw.get("prompt") or ""), where, f"question {qid}.prompt", names)
    if not prompt.strip():
        raise where.error(f"question {qid}.prompt", "is missing")
    explanation = _render(str(raw.get("explanation") or ""), where, f"question {qid}.explanation", names)
    if not explanation.strip():
        raise where.error(f"question {qid}.explanation", "is missing: every question explains its answer")
    shared = {  # what every variant of either kind carries besides its own numbers
        "inputs": inputs,
        "lesson": lesson_id,
        "computed": _calls_models(raw),
        "fixed": _fixed(raw, where, qid),
        "variant_index": index,
        "_build": build,
    }
    raw_options = raw.get("options") or []
    options: list[Option] = []
    for i, item in enumerate(raw_options):
        field = f"question {qid}.options[{i}]"
        if not isinstance(item, dict) or not str(item.get("text", "")).strip():
            raise where.error(field, "needs text (and feedback)")
        _check_option_text(str(item["text"]), where, field + ".text")
        unknown_option = set(item) - {"text", "feedback", "right"}
        if unknown_option:
            raise where.error(field, f"unknown field(s) {sorted(unknown_option)}")
        right = bool(_number(item["right"], where, field + ".right", names)) if "right" in item else False
        options.append(
            Option(
                text=_render(str(item["text"]), where, field + ".text", names),
                feedback=_render(str(item.get("feedback") or ""), where, field + ".feedback", names),
                origin=i,
                right=right,
            )
        )
    numeric = kind == "number" or (kind == "predict" and not options)
    if numeric:
        if options:
            raise where.error(f"question {qid}.options", "a number question has no options")
        if "answer" not in raw:
            raise where.error(f"question {qid}.answer", "is missing")
        answer = _number(raw["answer"], where, f"question {qid}.answer", names)
        if not answer or answer != answer or math.isinf(answer):
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
            **shared,
        )
    if len(options) < 2:
        raise where.error(f"question {qid}.options", "a choice needs at least two options")
    answer = raw.get("answer")
    if isinstance(answer, str):  # the right option depends on the inputs: an expression
        answer = _number(answer, where, f"question {qid}.answer", names)
        answer = int(answer) if float(answer).is_integer() else -1
    if not isinstance(answer, int) or isinstance(answer, bool) or not 0 <= answer < len(options):
        raise where.error(
            f"question {qid}.answer", f"must be the index of the right option (0–{len(options) - 1})"
        )
    if any("right" in item for item in raw_options) and not options[answer].right:
        raise where.error(
            f"question {qid}.answer", "the answer must be one of the options its right: accepts"
        )
    for i, option in enumerate(options):
        if i != answer and not option.feedback.strip():
            raise where.error(
                f"question {qid}.options[{i}].feedback", "every wrong option needs its own feedback"
            )
    if len({o.text for o in options}) != len(options):
        raise where.error(f"question {qid}.options", "two options have the same text")
    feedback = "\n".join(o.feedback for o in options)
    shuffled, answer = _shuffled(options, answer, f"{lesson_id}/{qid}?{urlencode(inputs)}")
    return Question(
        qid,
        kind,
        prompt,
        shuffled,
        answer,
        0.0,
        "",
        explanation,
        _linked_terms(explanation, prompt, feedback),
        **shared,
    )


READING_WORDS_PER_MINUTE = 150  # technical prose with numbers, read to understand, not skimmed
MINUTES_PER_CHOICE = 1.5  # read the options, choose, read the feedback and explanation
MINUTES_PER_NUMBER = 2.5  # work a number out (often on paper), then read the explanation
MINUTES_PER_VIEW = 1.0  # read a chart and move its controls


# libyaml's loader where PyYAML was built with it (the wheels are): the same safe subset, about 3×
# faster on the course's question blocks, which the home page's outline reads on a cold start.
_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def _yaml(text: str) -> Any:
    return yaml.load(text, Loader=_LOADER)


def step_minutes(text: str) -> float:
    """Minutes a learner needs for one step's raw text: its words at a reading pace, plus time
    for each question (more for a number to work out) and each live view."""
    minutes = 0.0
    words = 0
    position = 0
    for match in _BLOCK.finditer(text):
        words += _words(text[position : match.start()])
        position = match.end()
        if match.group(1) == "view":
            minutes += MINUTES_PER_VIEW
            continue
        try:
            raw = _yaml(match.group(2))
        except yaml.YAMLError:
            continue  # parse_lesson_file reports it
        if not isinstance(raw, dict):
            continue
        options = raw.get("options") or []
        minutes += MINUTES_PER_CHOICE if options else MINUTES_PER_NUMBER
        words += _words(str(raw.get("prompt") or "")) + _words(str(raw.get("explanation") or ""))
        words += sum(_words(str(o.get("text", ""))) for o in options if isinstance(o, dict))
    words += _words(text[position:])
    return minutes + words / READING_WORDS_PER_MINUTE


def _words(text: str) -> int:
    return len(CALC_PATTERN.sub(" n ", text).split())


@functools.cache
def _page_presets(page: str) -> dict[str, dict]:
    from content.pages import PAGES

    info = next(p for p in PAGES if p.url_path == page)
    name = info.file.stem
    if not (CONTENT_DIR / f"{name}.md").exists():
        return {}
    return {p["id"]: p for p in load_page(name).meta.get("presets") or []}


def _view(raw: Any, where: _Where) -> View:
    from content.pages import PAGES
    from content.schema import page_params

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


def _step(title: str, text: str, where: _Where, lesson_id: str = "") -> Step:
    where.step = title
    body_parts: list[str] = []
    reveal_parts: list[str] = []
    view: View | None = None
    questions: list[Question] = []
    position = 0
    seen_predict = False
    asked = ""  # the last question that is not a predict question: no prose may follow it

    def no_prose_after_question(prose: str) -> None:
        # A step is drawn as its prose, its predict question and reveal, its view, then its other
        # questions: prose written after one of those would appear above it, and may answer it.
        if asked:
            first = prose.strip().splitlines()[0][:60]
            raise where.error(
                "body",
                f"prose after question {asked} (“{first}…”) would be shown above it: move it before "
                "the question, into its explanation, or into the next step",
            )

    for match in _BLOCK.finditer(text):
        prose = text[position : match.start()].strip()
        if prose:
            no_prose_after_question(prose)
            (reveal_parts if seen_predict else body_parts).append(prose)
        position = match.end()
        try:
            raw = _yaml(match.group(2))
        except yaml.YAMLError as exc:
            raise where.error(match.group(1), f"is not valid YAML: {exc}") from None
        if match.group(1) == "view":
            if view is not None:
                raise where.error("view", "a step holds at most one view")
            view = _view(raw, where)
        else:
            question = _question(raw, where, lesson_id)
            if question.kind == "predict":
                if seen_predict:
                    raise where.error("question", "a step holds at most one predict question")
                seen_predict = True
            else:
                asked = question.id
            questions.append(question)
    tail = text[position:].strip()
    if tail:
        no_prose_after_question(tail)
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
    if "minutes" in meta:
        raise where.error("minutes", "is computed from the lesson's words, questions and views: remove it")
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
    steps = [_step(t, body, where, lesson_id) for t, body in zip(parts[1::2], parts[2::2], strict=True)]
    per_step = tuple(step_minutes(body) for body in parts[2::2])
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
        math.ceil(sum(per_step)),
        objectives,
        prerequisites,
        terms,
        tuple(steps),
        number=int(match.group(1)),
        file=path.name,
        step_minutes=per_step,
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
                minutes=math.ceil(sum(step_minutes(body) for body in parts[2::2])),
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
