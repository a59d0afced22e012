"""How each glossary source was checked, and whether it is a primary source.

``glossary/sources-checked.tsv`` has one line per source URL: the URL, its kind and
how someone looked at it. ``primary`` is the maker's own page (a vendor's docs,
datasheet or blog, a standard, a paper, the project's own repository or model
card); ``secondary`` is anyone else's account of it (a news story, a personal blog,
a third-party re-upload, another glossary). The glossary page marks secondary ones.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from pathlib import Path

SOURCES_CHECKED = Path(__file__).resolve().parent / "sources-checked.tsv"
KINDS = ("primary", "secondary")


@dataclass(frozen=True)
class CheckedSource:
    """One line of sources-checked.tsv."""

    url: str
    kind: str
    how: str


@functools.lru_cache(maxsize=1)
def checked_sources() -> dict[str, CheckedSource]:
    """URL -> its line in sources-checked.tsv (kind and how it was checked)."""
    rows: dict[str, CheckedSource] = {}
    for line in SOURCES_CHECKED.read_text(encoding="utf-8").splitlines()[1:]:
        url, _, rest = line.partition("\t")
        kind, _, how = rest.partition("\t")
        rows[url] = CheckedSource(url=url, kind=kind.strip(), how=how.strip())
    return rows


def is_secondary(url: str) -> bool:
    """True when the source is marked secondary (or is not recorded at all)."""
    row = checked_sources().get(url)
    return row is None or row.kind != "primary"
