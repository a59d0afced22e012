"""Search finds terms the way people type them: acronyms, variants, plurals, typos."""

from pathlib import Path

import pytest
import yaml

from glossary import load_terms, search
from glossary.search import SearchIndex, compact, words

RANKING = yaml.safe_load((Path(__file__).parent / "data" / "search_ranking.yaml").read_text())


def test_ranking_set_is_large_enough():
    assert len(RANKING) >= 60


@pytest.mark.parametrize(("query", "expected"), RANKING, ids=[q for q, _ in RANKING])
def test_expected_term_in_top_three(query, expected):
    top = [t.id for t in search(query, limit=3)]
    assert expected in top, f"{query!r} -> {top}"


@pytest.mark.parametrize("variant", ["kv-cache", "KV cache", "kvcache", "KV-Caches", "kv_cache"])
def test_spelling_variants_share_one_key(variant):
    assert compact(variant) == "kvcache"


def test_british_spellings_become_american():
    assert words("quantisation optimiser normalised colour centre") == [
        "quantization",
        "optimizer",
        "normalized",
        "color",
        "center",
    ]


def test_exact_alias_beats_full_text():
    """An acronym typed exactly is the first result, not a page that merely mentions it."""
    for term in load_terms():
        for alias in term.aliases:
            if alias.isupper() and 2 <= len(alias) <= 5:
                assert search(alias, limit=1)[0].id == term.id, alias


def test_every_title_finds_itself_first():
    for term in load_terms():
        assert search(term.title, limit=1)[0].id == term.id, term.title


def test_empty_and_junk_queries_return_nothing_without_error():
    assert search("") == []
    assert search("   ") == []
    assert search("qqqqzzzz xxyyzz") == []
    assert search(None) == []  # type: ignore[arg-type]
    assert search("KV cache", limit=0) == []


def test_limit_is_respected():
    assert len(search("memory", limit=5)) == 5


def test_index_over_custom_terms_is_independent_of_the_shipped_glossary():
    terms = load_terms()[:3]
    index = SearchIndex(terms)
    assert index.search(terms[0].title, 1) == [terms[0]]
