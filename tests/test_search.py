"""Search finds terms the way people type them: acronyms, variants, plurals, typos."""

from pathlib import Path

import pytest
import yaml

from glossary import load_terms, search, suggest
from glossary.search import SearchIndex, compact, words
from tests.pages import open_page

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


JUNK = [
    "<script>alert(1)</script>",  # listed 171 terms: "1" occurs in most bodies
    '"><img src=x onerror=alert(1)>',
    "' OR 1=1 --",
    "lorem ipsum dolor sit amet",
    "%%%% $$$ ###",
    "1",
    "x",
    "zzz-unknown-term",
]


@pytest.mark.parametrize("query", JUNK)
def test_junk_matches_nothing(query):
    assert search(query, limit=500) == []


def test_a_lone_number_still_helps_a_real_query():
    """Numbers are left out of full-text matching, not out of names: "FP8" and "H100" still work."""
    assert search("fp8", limit=1)[0].id == "fp8"
    assert search("H100 3.35 TB/s", limit=1)[0].id == "h100"


def test_full_text_needs_most_of_the_query():
    """A term that holds one word of two ("script" in a body, "alert" nowhere) is not a match."""
    assert search("script", limit=5)  # the word alone is found
    assert search("script alert", limit=5) == []


@pytest.mark.parametrize(
    ("typed", "expected"),
    [
        ("kv-cahce", "kv-cache"),
        ("flash-atention", "flash-attention"),
        ("tensr-core", "tensor-core"),
        ("GQA", "grouped-query-attention"),
    ],
)
def test_an_unknown_id_suggests_the_close_name(typed, expected):
    assert suggest(typed)[0].id == expected


@pytest.mark.parametrize(
    "typed", ["zzz-unknown-term", "<img src=x onerror=alert(1)>", "q", "paged-memory-bananas"]
)
def test_an_unknown_id_far_from_every_name_suggests_nothing(typed):
    assert suggest(typed) == []


def test_unknown_id_page_says_when_nothing_is_close():
    at = open_page("app_pages/glossary.py", timeout=120, term="zzz-unknown-term")
    assert not at.exception
    assert "No term has a name close to it." in at.warning[0].value
    assert [link.proto.label for link in at.main.get("page_link")] == ["Browse all terms"]


def test_unknown_id_page_offers_only_close_names():
    at = open_page("app_pages/glossary.py", timeout=120, term="kv-cahce")
    assert not at.exception
    assert "Terms with a close name:" in at.warning[0].value
    assert [link.proto.label for link in at.main.get("page_link")] == ["KV cache", "Browse all terms"]


@pytest.mark.parametrize("query", ["<script>alert(1)</script>", "' OR 1=1 --"])
def test_both_search_boxes_say_no_match_for_junk(query):
    """The Glossary page's box and the sidebar's box use one search, and both say so for junk."""
    at = open_page("app_pages/glossary.py", timeout=120)
    at.text_input(key="q").input(query).run()
    assert not at.exception
    assert any("No term matches that search" in i.value for i in at.info)
    assert not any("glossary?term=" in m.value for m in at.main.markdown)
    at.sidebar.text_input[0].input(query).run()
    assert not at.exception
    assert "No term matches" in at.sidebar.caption[0].value


def test_each_search_box_says_what_it_does():
    at = open_page("app_pages/glossary.py", timeout=120)
    assert "sidebar" in at.caption[0].value and "lists every matching term" in at.caption[0].value
    assert "Glossary page" in at.sidebar.text_input[0].help
