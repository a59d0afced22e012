"""Content lint over the shipped glossary: schema, links, names, sources, seed coverage."""

import re
from collections import Counter
from pathlib import Path

import pytest
import yaml

from glossary import CATEGORIES, load_terms, search, terms_by_id
from glossary.loader import TERMS_DIR, check_collection, normalize_name, parse_term_file

SEEDS = yaml.safe_load((Path(__file__).parent / "data" / "seed_concepts.yaml").read_text())
SEED_PAIRS = [(concept, term_id) for pairs in SEEDS.values() for concept, term_id in pairs]


@pytest.mark.parametrize("path", sorted(TERMS_DIR.glob("*.md")), ids=lambda p: p.name)
def test_every_term_file_is_valid(path):
    parse_term_file(path)  # raises TermFileError naming the file and field


def test_collection_has_no_cross_term_problems():
    assert check_collection(parse_term_file(p) for p in TERMS_DIR.glob("*.md")) == []


def test_at_least_220_terms_in_all_ten_categories():
    terms = load_terms()
    per_category = Counter(t.category for t in terms)
    assert len(terms) >= 220
    assert set(per_category) == set(CATEGORIES)
    assert min(per_category.values()) >= 8, per_category


def test_no_name_is_claimed_by_two_terms():
    owners: dict[str, str] = {}
    for term in load_terms():
        for name in term.names:
            key = normalize_name(name)
            assert owners.setdefault(key, term.id) == term.id, f"{name!r}: {owners[key]} and {term.id}"


def test_sources_are_urls_and_not_placeholders():
    for term in load_terms():
        for url in term.sources:
            assert re.match(r"^https?://[\w.-]+\.[a-z]{2,}(/|$)", url), (term.id, url)
            assert "example." not in url and "..." not in url, (term.id, url)


def test_related_links_resolve_and_are_not_duplicated():
    by_id = terms_by_id()
    for term in load_terms():
        assert all(r in by_id for r in term.related), term.id
        assert len(set(term.related)) == len(term.related), term.id


def test_seed_list_covers_all_five_seed_articles():
    assert len(SEEDS) == 5
    assert len(SEED_PAIRS) >= 80


@pytest.mark.parametrize(("concept", "term_id"), SEED_PAIRS, ids=[c for c, _ in SEED_PAIRS])
def test_seed_concept_is_in_the_top_three(concept, term_id):
    assert term_id in terms_by_id(), f"no term {term_id!r} for seed concept {concept!r}"
    top = [t.id for t in search(concept, limit=3)]
    assert term_id in top, f"{concept!r} -> {top}"


def test_overloaded_words_are_disambiguated():
    """CUDA, Tensor Core, node, FLOPS, Triton and kernel each have a term that says which meaning."""
    by_id = terms_by_id()
    checks = {
        "cuda": ["programming model", "platform"],
        "tensor-core": ["TPU"],
        "nvlink-domain": ["node"],
        "flops": ["FLOP/s"],
        "triton-language": ["Inference Server"],
        "kernel": ["operating system"],
    }
    for term_id, phrases in checks.items():
        text = by_id[term_id].body + by_id[term_id].summary
        for phrase in phrases:
            assert phrase.casefold() in text.casefold(), (term_id, phrase)


def test_page_prose_links_only_to_terms_that_exist():
    """[[term-id]] links in content/*.md resolve to glossary terms."""
    from content import CONTENT_DIR, term_ids_linked

    by_id = terms_by_id()
    for path in sorted(CONTENT_DIR.glob("*.md")):
        for term_id in term_ids_linked(path.read_text(encoding="utf-8")):
            assert term_id in by_id, f"{path.name}: [[{term_id}]] is not a glossary term"


def test_every_try_it_link_opens_a_real_page_and_preset():
    """A term's simulator link names a page in the navigation and a preset that page defines."""
    from pathlib import Path as _Path

    from content import load_page
    from content.pages import PAGES

    pages = {p.url_path: p for p in PAGES}
    for term in load_terms():
        if term.simulator is None:
            continue
        assert term.simulator.page in pages, (term.id, term.simulator.page)
        presets = {
            p["id"] for p in load_page(_Path(pages[term.simulator.page].path).stem).meta.get("presets", [])
        }
        assert term.simulator.preset in presets, (term.id, term.simulator.preset)


def test_page_prose_leaves_no_unresolved_term_brackets():
    """Every [[...]] in content/*.md becomes a link, including labels that wrap across lines."""
    from content import CONTENT_DIR, link_terms

    by_id = terms_by_id()
    for path in sorted(CONTENT_DIR.glob("*.md")):
        rendered = link_terms(path.read_text(encoding="utf-8"), lambda i: i, lambda i: by_id[i].title)
        assert "[[" not in rendered, path.name


def test_every_source_url_records_how_it_was_checked():
    """glossary/sources-checked.tsv has a line per source URL saying how someone looked at it."""
    from glossary.sources import checked_sources

    checked = checked_sources()
    for term in load_terms():
        for url in term.sources:
            assert url in checked and checked[url].how, (
                f"{term.id}: {url} has no line in glossary/sources-checked.tsv"
            )


def test_every_source_is_marked_primary_or_secondary():
    """Issue 34: every term's sources are primary or marked, so the page can say which."""
    from glossary.sources import KINDS, checked_sources

    checked = checked_sources()
    for term in load_terms():
        for url in term.sources:
            assert checked[url].kind in KINDS, f"{term.id}: {url} has kind {checked[url].kind!r}"


def test_known_secondary_hosts_are_never_marked_primary():
    """A news story, a personal blog or a third-party re-upload cannot pass as primary."""
    from glossary.sources import checked_sources

    for url, row in checked_sources().items():
        if any(
            host in url
            for host in ("modal.com/gpu-glossary", "stas00/ml-engineering", "NbAiLab/", "pandyamarut/")
        ):
            assert row.kind == "secondary", url


def test_every_term_has_a_primary_source():
    """Each term rests on at least one maker's page, paper or repository."""
    from glossary.sources import is_secondary

    lacking = sorted(t.id for t in load_terms() if all(is_secondary(url) for url in t.sources))
    # Apple publishes its chips' bandwidths, and the UALink Consortium its specification, on
    # pages that are not in the searchable corpora (the specification sits behind a form);
    # these terms rest on reports of them, each marked secondary on the page.
    assert lacking == ["apple-silicon", "system-memory", "ualink"], lacking


def test_a_linked_title_reads_naturally_inside_a_sentence():
    from content import in_sentence

    assert in_sentence("Memory-bound", "the step is deeply ") == "memory-bound"
    assert in_sentence("Memory-bound", "It ends here. ") == "Memory-bound"  # a sentence starts
    assert in_sentence("Ridge point", "- ") == "Ridge point"  # a list item starts
    assert in_sentence("KV cache", "the ") == "KV cache"  # a name with another capital stays
    assert in_sentence("Tensor Cores", "uses ") == "Tensor Cores"
