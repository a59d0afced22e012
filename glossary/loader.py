"""Load and validate glossary term files into frozen ``Term`` records.

Every field is checked at load time; a problem raises ``TermFileError`` naming
the file and the field, so a malformed term fails the test suite, not a page.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable
from pathlib import Path

import frontmatter
import yaml

from glossary.calc import CalcError, render
from glossary.model import CATEGORIES, SimulatorLink, Term

TERMS_DIR = Path(__file__).resolve().parent / "terms"

ID_PATTERN = re.compile(r"^[a-z0-9]+(?:-[a-z0-9]+)*$")
URL_PATTERN = re.compile(r"^https?://[^\s/$.?#][^\s]*\.[^\s]*$")
ALLOWED_FIELDS = {
    "id",
    "title",
    "aliases",
    "category",
    "summary",
    "related",
    "sources",
    "simulator",
    "diagram",
}
REQUIRED_FIELDS = ALLOWED_FIELDS - {"simulator", "diagram"}
SUMMARY_MAX_WORDS = 35
BODY_MIN_WORDS = 80
BODY_MAX_WORDS = 350


class TermFileError(ValueError):
    """A term file breaks the schema. The message names the file and the field."""

    def __init__(self, path: Path | str, field: str, problem: str) -> None:
        self.path = str(path)
        self.field = field
        self.problem = problem
        super().__init__(f"{self.path}: field '{field}': {problem}")


def word_count(markdown: str) -> int:
    """Words in Markdown prose, ignoring fenced code blocks and link targets."""
    without_code = re.sub(r"```.*?```", " ", markdown, flags=re.DOTALL)
    without_urls = re.sub(r"\]\([^)]*\)", "]", without_code)
    return len(re.findall(r"[\w][\w'’.\-/]*", without_urls))


def normalize_name(name: str) -> str:
    """Case-, space- and hyphen-insensitive key for a title or alias."""
    return re.sub(r"[\s\-_./]+", "", name.casefold())


def _string(meta: dict, field: str, path: Path) -> str:
    value = meta.get(field)
    if not isinstance(value, str) or not value.strip():
        raise TermFileError(path, field, f"must be a non-empty string, got {value!r}")
    return value.strip()


def _string_list(meta: dict, field: str, path: Path, *, min_items: int = 0) -> tuple[str, ...]:
    value = meta.get(field, [])
    if value is None:
        value = []
    if not isinstance(value, list):
        raise TermFileError(path, field, f"must be a list, got {type(value).__name__}")
    items = []
    for item in value:
        if isinstance(item, bool) or not isinstance(item, (str, int, float)) or not str(item).strip():
            raise TermFileError(path, field, f"every item must be a non-empty string, got {item!r}")
        items.append(str(item).strip())
    if len(items) < min_items:
        raise TermFileError(path, field, f"needs at least {min_items} item(s)")
    if len({i.casefold() for i in items}) != len(items):
        raise TermFileError(path, field, "has duplicate items")
    return tuple(items)


def _diagram(meta: dict, path: Path) -> str:
    """The ``diagram`` id, checked against the builders in charts/diagrams."""
    value = meta.get("diagram")
    if value is None:
        return ""
    if not isinstance(value, str) or not value.strip():
        raise TermFileError(path, "diagram", f"must be a diagram id, got {value!r}")
    from charts.diagrams import builders

    if value.strip() not in builders():
        raise TermFileError(path, "diagram", f"no diagram {value.strip()!r} in charts/diagrams")
    return value.strip()


def parse_term_file(path: Path) -> Term:
    """Parse one term file and check every field that does not need the other terms."""
    try:
        post = frontmatter.loads(path.read_text(encoding="utf-8"))
    except (yaml.YAMLError, UnicodeDecodeError, ValueError) as exc:
        raise TermFileError(path, "front matter", f"cannot be parsed: {exc}") from exc
    meta = dict(post.metadata)
    if not meta:
        raise TermFileError(path, "front matter", "is missing (start the file with a --- YAML block)")
    unknown = sorted(set(meta) - ALLOWED_FIELDS)
    if unknown:
        raise TermFileError(path, unknown[0], f"is not a known field (allowed: {sorted(ALLOWED_FIELDS)})")
    for field in sorted(REQUIRED_FIELDS):
        if field not in meta:
            raise TermFileError(path, field, "is required")

    term_id = _string(meta, "id", path)
    if not ID_PATTERN.match(term_id):
        raise TermFileError(path, "id", f"{term_id!r} must be lowercase words joined by hyphens")
    if term_id != path.stem:
        raise TermFileError(path, "id", f"{term_id!r} must equal the file name {path.stem!r}")
    title = _string(meta, "title", path)
    aliases = _string_list(meta, "aliases", path)
    if normalize_name(title) in {normalize_name(a) for a in aliases}:
        raise TermFileError(path, "aliases", "repeats the title")

    category = _string(meta, "category", path)
    if category not in CATEGORIES:
        raise TermFileError(path, "category", f"{category!r} is not one of {list(CATEGORIES)}")

    summary = _string(meta, "summary", path)
    if len(summary.split()) > SUMMARY_MAX_WORDS:
        raise TermFileError(path, "summary", f"has {len(summary.split())} words; at most {SUMMARY_MAX_WORDS}")
    if not summary.endswith((".", "?", "!")):
        raise TermFileError(path, "summary", "must be one sentence ending with a full stop")
    if "{{" in summary:
        raise TermFileError(path, "summary", "cannot hold computed {{ }} numbers; keep them in the body")

    related = _string_list(meta, "related", path)
    for rid in related:
        if not ID_PATTERN.match(rid):
            raise TermFileError(path, "related", f"{rid!r} is not a term id")
    if term_id in related:
        raise TermFileError(path, "related", "lists the term itself")

    sources = _string_list(meta, "sources", path, min_items=1)
    for url in sources:
        if not URL_PATTERN.match(url):
            raise TermFileError(path, "sources", f"{url!r} is not an http(s) URL")

    simulator = None
    if "simulator" in meta and meta["simulator"] is not None:
        sim = meta["simulator"]
        if not isinstance(sim, dict) or not isinstance(sim.get("page"), str) or not sim["page"].strip():
            raise TermFileError(
                path, "simulator", "must be a mapping with a 'page' string (and optional 'preset')"
            )
        preset = sim.get("preset")
        if preset is not None and not isinstance(preset, str):
            raise TermFileError(path, "simulator", "'preset' must be a string")
        extra = set(sim) - {"page", "preset"}
        if extra:
            raise TermFileError(path, "simulator", f"unknown keys {sorted(extra)}")
        simulator = SimulatorLink(page=sim["page"].strip(), preset=preset)

    try:
        body = render(post.content.strip())
    except CalcError as exc:
        raise TermFileError(path, "body", f"computed number: {exc}") from exc
    words = word_count(body)
    if not BODY_MIN_WORDS <= words <= BODY_MAX_WORDS:
        raise TermFileError(path, "body", f"has {words} words; must be {BODY_MIN_WORDS}-{BODY_MAX_WORDS}")
    prose = re.sub(r"```.*?```|`[^`\n]+`", " ", body, flags=re.DOTALL)
    if re.search(r"<[a-zA-Z/!]", prose):
        raise TermFileError(path, "body", "holds raw HTML; use Markdown (or a `code span` for <tags>)")
    if re.search(r"^#{1,2} ", prose, flags=re.MULTILINE):
        raise TermFileError(path, "body", "uses a # or ## heading; the page owns those, use ### at most")
    if not re.search(r"\d", body):
        raise TermFileError(path, "body", "needs at least one number with its unit")

    return Term(
        id=term_id,
        title=title,
        aliases=aliases,
        category=category,
        summary=summary,
        body=body,
        related=related,
        sources=sources,
        simulator=simulator,
        diagram=_diagram(meta, path),
        path=str(path),
    )


def check_collection(terms: Iterable[Term], known_ids: Iterable[str] = ()) -> list[str]:
    """Problems that need all terms at once: duplicate ids, shared aliases, dangling links.

    ``known_ids`` are extra ids that count as existing (used while terms are written
    in parallel). Returns one message per problem, naming the file and field.
    """
    terms = list(terms)
    problems: list[str] = []
    by_id: dict[str, Term] = {}
    for term in terms:
        if term.id in by_id:
            problems.append(f"{term.path}: field 'id': {term.id!r} also used by {by_id[term.id].path}")
        by_id[term.id] = term
    owner: dict[str, Term] = {}
    for term in terms:
        for name in term.names:
            key = normalize_name(name)
            other = owner.get(key)
            if other is not None and other.id != term.id:
                field = "title" if name == term.title else "aliases"
                problems.append(f"{term.path}: field '{field}': {name!r} is already a name of {other.id!r}")
            owner.setdefault(key, term)
    valid_ids = set(by_id) | set(known_ids)
    for term in terms:
        for rid in term.related:
            if rid not in valid_ids:
                problems.append(f"{term.path}: field 'related': {rid!r} is not a term id")
    return problems


def load_terms_from(directory: Path) -> list[Term]:
    """Load, validate and return every term in ``directory``, sorted by title.

    Raises TermFileError for the first malformed file, or ValueError listing every
    cross-term problem (duplicate names, related ids that do not exist).
    """
    paths = sorted(directory.glob("*.md"))
    terms = [parse_term_file(p) for p in paths]
    problems = check_collection(terms)
    if problems:
        raise ValueError("glossary has problems:\n" + "\n".join(problems))
    return sorted(terms, key=lambda t: t.title.casefold())


@functools.lru_cache(maxsize=1)
def _load_default() -> tuple[Term, ...]:
    return tuple(load_terms_from(TERMS_DIR))


def load_terms() -> list[Term]:
    """Every glossary term, validated and sorted by title; parsed once per process."""
    return list(_load_default())


def terms_by_id() -> dict[str, Term]:
    """Map of id to term for the default glossary."""
    return {t.id: t for t in _load_default()}
