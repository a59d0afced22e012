"""Prose that pages show (Markdown with YAML front matter), kept out of page code.

A page's file ``content/<name>.md`` has front matter (title, intro, presets ...) and a body
split into sections by ``## <key>`` headings, so a page asks for ``page.section("notice")``
instead of holding words itself. ``[[term-id]]`` and ``[[term-id|text]]`` in the prose become
links to glossary terms (checked by the tests: every id must exist).
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass, field
from pathlib import Path

import frontmatter

from glossary.calc import render

CONTENT_DIR = Path(__file__).resolve().parent
TERM_LINK = re.compile(r"\[\[([a-z0-9-]+)(?:\|([^\]]+))?\]\]")
_SECTION = re.compile(r"^## +([\w-]+) *$", re.MULTILINE)


@dataclass(frozen=True)
class ContentPage:
    """A Markdown page: its front matter as a dict and its body with numbers computed."""

    name: str
    meta: dict = field(hash=False)
    body: str = ""
    sections: dict = field(default_factory=dict, hash=False)

    def section(self, key: str) -> str:
        """The text under ``## key`` (without the heading); KeyError names the file if missing."""
        try:
            return self.sections[key]
        except KeyError:
            raise KeyError(f"content/{self.name}.md has no '## {key}' section") from None

    def notice(self, view: str = "") -> str:
        """The "What to notice" text for the view on screen: ``## notice-<view>`` where the page has
        one (its bullets name only that view's controls), else the page's ``## notice``."""
        return self.sections.get(f"notice-{view}") or self.section("notice")


def _split_sections(body: str) -> tuple[str, dict[str, str]]:
    parts = _SECTION.split(body)
    intro, sections = parts[0].strip(), {}
    for key, text in zip(parts[1::2], parts[2::2], strict=True):
        sections[key] = text.strip()
    return intro, sections


@functools.lru_cache(maxsize=32)
def load_page(name: str) -> ContentPage:
    """Load ``content/<name>.md``; ``{{ expr }}`` numbers in the body are evaluated."""
    post = frontmatter.loads((CONTENT_DIR / f"{name}.md").read_text(encoding="utf-8"))
    body = render(post.content.strip())
    intro, sections = _split_sections(body)
    return ContentPage(name=name, meta=dict(post.metadata), body=intro, sections=sections)


def term_ids_linked(text: str) -> list[str]:
    """Every ``[[term-id]]`` written in ``text`` (for the content tests)."""
    return [m.group(1) for m in TERM_LINK.finditer(text)]


def link_terms(text: str, href_for_id, title_for_id) -> str:
    """Replace ``[[id]]`` / ``[[id|text]]`` with Markdown links; unknown ids stay plain text."""

    def replace(match: re.Match[str]) -> str:
        term_id, label = match.group(1), match.group(2)
        label = " ".join(label.split()) if label else label  # a label may wrap onto the next line
        title = title_for_id(term_id)
        if title is None:
            return label or term_id
        if not label:
            label = in_sentence(title, text[: match.start()])
        return f"[{label}]({href_for_id(term_id)})"

    return TERM_LINK.sub(replace, text)


def plain_terms(text: str, title_for_id) -> str:
    """``[[id]]`` / ``[[id|text]]`` as their words (the label, else the term's title, else the id):
    for places that show no links (a handout, a radio or bar label)."""
    return TERM_LINK.sub(
        lambda m: " ".join((m.group(2) or title_for_id(m.group(1)) or m.group(1)).split()), text
    )


_SENTENCE_START = re.compile(r"((^|\n)\s*([-*]\s+|\d+\.\s+)?|[.!?:]\s+|\*\*)$")


def in_sentence(title: str, before: str) -> str:
    """A term's title as it reads where it is linked: "Memory-bound" becomes "memory-bound" inside a
    sentence, while names with another capital ("KV cache", "Tensor Cores", "H100") keep theirs."""
    if _SENTENCE_START.search(before) or any(c.isupper() for c in title[1:]) or not title[:1].isupper():
        return title
    return title[0].lower() + title[1:]
