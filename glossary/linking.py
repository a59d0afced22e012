"""Turn other terms' names in a Markdown body into links, first mention only.

Pure text in, text out: the page decides how a link looks (``href_for``). Code spans,
fenced code, existing links and the term's own names are never linked.
"""

from __future__ import annotations

import html
import re
from collections.abc import Callable, Iterable

from glossary.model import Term

# Names too generic to link on every page: they would link nearly every body to the same term.
UNLINKED_NAMES = frozenset(
    {"gpu", "gpus", "cpu", "core", "cores", "memory", "cache", "node", "device", "host", "token", "tokens"}
)
MAX_LINKS = 15
_PROTECTED = re.compile(
    r"```.*?```"  # fenced code
    r"|`[^`\n]+`"  # inline code
    r"|\[[^\]\n]*\]\([^)\n]*\)"  # Markdown links
    r"|<[^>\n]+>"  # tags (only ours: term bodies cannot hold raw HTML)
    r"|\{\{.*?\}\}",
    re.DOTALL,
)


def _name_pattern(name: str) -> str:
    escaped = re.escape(name).replace(r"\ ", r"[\s-]+").replace(r"\-", r"[\s-]?")
    return escaped + r"(?:e?s)?"


def build_matcher(terms: Iterable[Term]) -> tuple[re.Pattern[str], dict[str, str]]:
    """One regex over every linkable name, longest first, and a map from name to id.

    Acronyms (all capitals, digits allowed) match case-sensitively; other names do not.
    """
    names: dict[str, str] = {}
    for term in terms:
        for name in term.names:
            if len(name) < 2 or name.casefold() in UNLINKED_NAMES:
                continue
            names.setdefault(name, term.id)
    parts = []
    for name in sorted(names, key=len, reverse=True):
        is_acronym = name.upper() == name and any(c.isalpha() for c in name)
        if not is_acronym and len(name) < 4:
            continue
        pattern = _name_pattern(name)
        parts.append(pattern if is_acronym else f"(?i:{pattern})")
    regex = re.compile(r"(?<![\w/.-])(?:" + "|".join(parts) + r")(?![\w-])") if parts else re.compile(r"(?!)")
    lookup = {re.sub(r"[\s-]+", "", n).casefold(): i for n, i in names.items()}
    return regex, lookup


def _resolve(text: str, lookup: dict[str, str]) -> str | None:
    key = re.sub(r"[\s-]+", "", text).casefold()
    for candidate in (key, key.removesuffix("s"), key.removesuffix("es")):
        if candidate in lookup:
            return lookup[candidate]
    return None


def autolink(
    body: str,
    term: Term,
    terms: Iterable[Term],
    href_for: Callable[[Term], str],
    matcher: tuple[re.Pattern[str], dict[str, str]] | None = None,
) -> str:
    """Return ``body`` with the first mention of each other term wrapped in an HTML link.

    Links are ``<a href="..." target="_self" title="summary">text</a>`` so they open in
    the same tab and show the summary on hover; the text and title are HTML-escaped.
    """
    by_id = {t.id: t for t in terms}
    regex, lookup = matcher or build_matcher(by_id.values())
    own = {re.sub(r"[\s-]+", "", n).casefold() for n in term.names}
    linked: set[str] = set()
    out: list[str] = []
    position = 0

    def link_chunk(chunk: str) -> str:
        def replace(match: re.Match[str]) -> str:
            text = match.group(0)
            if re.sub(r"[\s-]+", "", text).casefold() in own or len(linked) >= MAX_LINKS:
                return text
            target_id = _resolve(text, lookup)
            if target_id is None or target_id == term.id or target_id in linked:
                return text
            linked.add(target_id)
            target = by_id[target_id]
            return (
                f'<a href="{html.escape(href_for(target))}" target="_self" '
                f'title="{html.escape(target.summary)}">{html.escape(text)}</a>'
            )

        return regex.sub(replace, chunk)

    for match in _PROTECTED.finditer(body):
        out.append(link_chunk(body[position : match.start()]))
        out.append(match.group(0))
        position = match.end()
    out.append(link_chunk(body[position:]))
    return "".join(out)
