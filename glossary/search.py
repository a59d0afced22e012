"""Glossary search: exact names first, then prefixes, then fuzzy names, then full text.

Matching ignores case, spaces, hyphens and plurals ("kv-cache", "KV cache", "kvcache",
"KV caches"), accepts British spellings ("quantisation") and corrects typos word by word
against the glossary's own vocabulary ("bandwith" -> "bandwidth", "tensr core" -> "tensor
core"). Everything is precomputed once per process, so a query costs well under a
millisecond on a few hundred terms (see bench/search_latency.py).
"""

from __future__ import annotations

import functools
import math
import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

from rapidfuzz import fuzz, process

from glossary.loader import load_terms
from glossary.model import Term

_WORD = re.compile(r"\d+(?:\.\d+)+|[a-z0-9]+")
_BRITISH = [
    (re.compile(r"is(ation|ations|e|ed|es|er|ers|ing)$"), r"iz\1"),
    (re.compile(r"ys(e|ed|es|er|ing)$"), r"yz\1"),
    (re.compile(r"our(s?)$"), r"or\1"),
    (re.compile(r"tre(s?)$"), r"ter\1"),
    (re.compile(r"(el|al)l(ing|ed|er)$"), r"\1\2"),
]
_STOPWORDS = frozenset(
    {"a", "an", "and", "are", "as", "at", "be", "by", "can", "do", "does", "for", "from", "how", "i"}
    | {"in", "is", "it", "me", "my", "of", "on", "or", "the", "to", "versus", "vs", "what", "when"}
    | {"where", "which", "who", "why", "with"}
)
# Words whose trailing "s" is not a plural; stripping it would merge unrelated names.
_NOT_PLURAL = frozenset({"bus", "ops", "flops", "tops", "iops", "mps"})


def _american(word: str) -> str:
    if len(word) <= 4:
        return word
    for pattern, replacement in _BRITISH:
        new = pattern.sub(replacement, word)
        if new != word:
            return new
    return word


def _singular(word: str) -> str:
    if word.endswith("pus") and len(word) == 4:  # GPUs, CPUs, TPUs, NPUs
        return word[:-1]
    if len(word) <= 3 or word in _NOT_PLURAL or word.endswith(("ss", "us", "is")):
        return word
    if word.endswith("ies") and len(word) > 4:
        return word[:-3] + "y"
    if word.endswith("aches"):  # caches -> cache, but batches -> batch below
        return word[:-1]
    if word.endswith(("ches", "shes", "xes", "sses")):
        return word[:-2]
    if word.endswith("s"):
        return word[:-1]
    return word


def _informative(word: str) -> bool:
    """A word that can carry a full-text match: two or more characters, not a bare number."""
    return len(word) >= 2 and not re.fullmatch(r"[\d.]+", word)


def words(text: str) -> list[str]:
    """Lower-case, American-spelled, singular words of ``text`` (hyphens split words)."""
    text = text.casefold().replace("’", "'").replace("'s ", " ")
    return [_singular(_american(w)) for w in _WORD.findall(text.replace("_", " "))]


def compact(text: str) -> str:
    """One key per name: words joined with nothing ("KV-caches" -> "kvcache")."""
    return "".join(words(text))


@dataclass(frozen=True)
class _Entry:
    term: Term
    name_keys: tuple[str, ...]  # compact keys of title + aliases (title first)
    name_words: frozenset[str]
    summary_words: Counter
    body_words: Counter


class SearchIndex:
    """Precomputed lookup tables over a list of terms."""

    def __init__(self, terms: Sequence[Term]) -> None:
        self.entries = [
            _Entry(
                term=t,
                name_keys=tuple(dict.fromkeys(compact(n) for n in t.names)),
                name_words=frozenset(w for n in t.names for w in words(n)),
                summary_words=Counter(words(t.summary)),
                body_words=Counter(words(t.body)),
            )
            for t in terms
        ]
        self.exact: dict[str, list[tuple[int, bool]]] = {}
        for i, entry in enumerate(self.entries):
            for j, key in enumerate(entry.name_keys):
                self.exact.setdefault(key, []).append((i, j == 0))
        # Names as word sequences, to find a name written inside a longer query.
        self.phrases: dict[tuple[str, ...], list[int]] = {}
        for i, entry in enumerate(self.entries):
            for name in entry.term.names:
                phrase = tuple(words(name))
                if phrase and i not in self.phrases.get(phrase, []):
                    self.phrases.setdefault(phrase, []).append(i)
        self.name_choices = [(key, i) for i, e in enumerate(self.entries) for key in e.name_keys]
        self.name_keys_list = [key for key, _ in self.name_choices]
        document_frequency: Counter = Counter()
        for entry in self.entries:
            document_frequency.update(set(entry.body_words) | set(entry.summary_words) | entry.name_words)
        n = max(len(self.entries), 1)
        self.idf = {w: math.log(1 + n / df) for w, df in document_frequency.items()}
        # Vocabulary for typo correction: name words count most, then any word used twice.
        self.vocabulary = sorted(
            {w for e in self.entries for w in e.name_words}
            | {w for w, df in document_frequency.items() if df >= 2 and len(w) > 3}
        )
        self.vocabulary_set = frozenset(self.vocabulary)

    def correct(self, query_words: list[str]) -> list[str]:
        """Replace unknown words by the closest vocabulary word (edit similarity >= 80)."""
        corrected = []
        for w in query_words:
            if w in self.vocabulary_set or len(w) < 4 or w.isdigit():
                corrected.append(w)
                continue
            best = process.extractOne(w, self.vocabulary, scorer=fuzz.ratio, score_cutoff=80)
            corrected.append(best[0] if best else w)
        return corrected

    def search(self, query: str, limit: int = 10) -> list[Term]:
        query_words = [w for w in words(query) if w]
        if not query_words or limit <= 0:
            return []
        scores: dict[int, float] = {}

        def offer(index: int, score: float) -> None:
            if score > scores.get(index, 0.0):
                scores[index] = score

        variants = [query_words]
        corrected = self.correct(query_words)
        if corrected != query_words:
            variants.append(corrected)
        for rank, variant in enumerate(variants):
            penalty = 5.0 * rank  # a corrected spelling ranks just below the literal one
            key = "".join(variant)
            # 1. exact title or alias (title slightly ahead of alias)
            for index, is_title in self.exact.get(key, ()):
                offer(index, 1000.0 - penalty + (1.0 if is_title else 0.0))
            # 1b. same, ignoring stop words ("what is a warp")
            content = [w for w in variant if w not in _STOPWORDS]
            if content and content != variant:
                for index, is_title in self.exact.get("".join(content), ()):
                    offer(index, 990.0 - penalty + (1.0 if is_title else 0.0))
            # 2. a name that starts with the query (type-ahead): shorter names first
            if len(key) >= 3:
                for name_key, index in self.name_choices:
                    if name_key.startswith(key) and name_key != key:
                        offer(index, 900.0 - penalty - min(len(name_key) - len(key), 50))
            # 2b. a name written inside a longer query ("GPU glossary", "HBM on H100"):
            # longer names first, so "memory bandwidth" beats "memory"
            if len(variant) > 1:
                for start in range(len(variant)):
                    for end in range(start + 1, min(len(variant), start + 6) + 1):
                        phrase = tuple(variant[start:end])
                        if len(phrase) == len(variant):
                            continue
                        for index in self.phrases.get(phrase, ()):
                            offer(index, 700.0 - penalty + 20.0 * len(phrase) + len("".join(phrase)))
            # 3. fuzzy match on whole names
            for _name_key, score, position in process.extract(
                key, self.name_keys_list, scorer=fuzz.ratio, limit=8, score_cutoff=78
            ):
                offer(self.name_choices[position][1], 500.0 + score - penalty)
            # 4. full text: every query word weighted by rarity and where it occurs.
            # Only informative words count (not a lone digit, letter or number: "1" occurs in
            # most bodies), and a term must hold more than half of them, so junk such as
            # "<script>alert(1)</script>" matches nothing instead of every page with a "1".
            content = list(dict.fromkeys(w for w in (content or variant) if _informative(w)))
            for index, entry in enumerate(self.entries):
                if not content:
                    break
                total, matched = 0.0, 0
                for w in content:
                    idf = self.idf.get(w)
                    if idf is None:
                        continue
                    hit = 3.0 * (w in entry.name_words)
                    hit += 1.5 * min(entry.summary_words.get(w, 0), 2)
                    hit += 0.5 * min(entry.body_words.get(w, 0), 4)
                    if hit:
                        matched += 1
                        total += hit * idf
                if matched and 2 * matched > len(content):
                    coverage = matched / len(content)
                    offer(index, min(total * coverage * coverage, 400.0) - penalty)
        ranked = sorted(scores.items(), key=lambda item: (-item[1], self.entries[item[0]].term.title))
        return [self.entries[i].term for i, _ in ranked[:limit]]

    def suggest(self, text: str, limit: int = 5) -> list[Term]:
        """Terms whose title or alias is close to ``text`` (an id or name typed wrong).

        Names only, never full text: a mistyped id ("kv-cahce") finds "KV cache", and
        anything not close to a name ("zzz-unknown-term") finds nothing.
        """
        key = compact(text)
        if len(key) < 2 or limit <= 0:
            return []
        scores: dict[int, float] = {}
        for index, is_title in self.exact.get(key, ()):
            scores[index] = max(scores.get(index, 0.0), 1000.0 + is_title)
        if len(key) >= 3:
            for name_key, index in self.name_choices:
                if name_key.startswith(key) and name_key != key:
                    scores[index] = max(scores.get(index, 0.0), 900.0 - min(len(name_key) - len(key), 50))
        for _name_key, score, position in process.extract(
            key, self.name_keys_list, scorer=fuzz.ratio, limit=limit * 2, score_cutoff=_SUGGEST_CUTOFF
        ):
            index = self.name_choices[position][1]
            scores[index] = max(scores.get(index, 0.0), 500.0 + score)
        ranked = sorted(scores.items(), key=lambda item: (-item[1], self.entries[item[0]].term.title))
        return [self.entries[i].term for i, _ in ranked[:limit]]


# Edit similarity (0-100) a name needs to be offered for a mistyped id: one or two slips
# in a name ("kvcahce" ~ "kvcache" scores 86); "sparseattention" ~ "pagedattention" scores 83
# on the shared "attention" alone, so it is not offered.
_SUGGEST_CUTOFF = 85


@functools.lru_cache(maxsize=1)
def default_index() -> SearchIndex:
    """The index over the shipped glossary, built once per process."""
    return SearchIndex(load_terms())


def search(query: str, limit: int = 10) -> list[Term]:
    """Terms matching ``query``, best first, at most ``limit``.

    Order: exact title/alias/acronym, then names starting with the query, then fuzzy
    name matches, then full-text matches in summaries and bodies.
    """
    if not isinstance(query, str):
        return []
    return default_index().search(query[:200], limit)


def suggest(text: str, limit: int = 5) -> list[Term]:
    """Terms whose name is close to ``text`` (for an unknown ``?term=`` id); often none."""
    if not isinstance(text, str):
        return []
    return default_index().suggest(text[:200], limit)
