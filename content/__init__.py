"""Prose that pages show (Markdown with YAML front matter), kept out of page code."""

from __future__ import annotations

import functools
from dataclasses import dataclass, field
from pathlib import Path

import frontmatter

from glossary.calc import render

CONTENT_DIR = Path(__file__).resolve().parent


@dataclass(frozen=True)
class ContentPage:
    """A Markdown page: its front matter as a dict and its body with numbers computed."""

    name: str
    meta: dict = field(hash=False)
    body: str = ""


@functools.lru_cache(maxsize=32)
def load_page(name: str) -> ContentPage:
    """Load ``content/<name>.md``; ``{{ expr }}`` numbers in the body are evaluated."""
    post = frontmatter.loads((CONTENT_DIR / f"{name}.md").read_text(encoding="utf-8"))
    return ContentPage(name=name, meta=dict(post.metadata), body=render(post.content.strip()))
