"""Every number in README.md that the code knows is the code's number (issue 26: "100 questions"
against 101, "43 roofline devices" against the page's 36). Each test finds its claim in the README
by its wording (exactly once, so a reworded sentence fails here instead of going unchecked) and
compares it with what the app itself counts."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

README = (Path(__file__).resolve().parent.parent / "README.md").read_text(encoding="utf-8")


def claim(pattern: str) -> tuple[str, ...]:
    """The groups of the one place in the README that ``pattern`` matches (whitespace may wrap)."""
    found = re.findall(pattern.replace(" ", r"\s+"), README)
    assert len(found) == 1, f"{pattern!r} matches the README {len(found)} times"
    return found[0] if isinstance(found[0], tuple) else (found[0],)


@pytest.fixture(scope="module")
def lessons():
    from lessons import load_lessons

    return load_lessons()


def test_lessons_questions_variants_and_hours(lessons):
    """The home page's own arithmetic: minutes from words, questions and views (lessons.outline),
    shown as hours to one decimal."""
    from lessons.loader import outline

    questions = [q for lesson in lessons for q in lesson.questions]
    hours = sum(o.minutes for o in outline()) / 60
    assert claim(r"a (\d+)-lesson course") == (str(len(lessons)),)
    assert claim(r"about ([\d.]+) hours by its computed estimate, (\d+) questions") == (
        f"{hours:.1f}",
        str(len(questions)),
    )
    assert claim(r"\((\d[\d,]*) variants\)") == (f"{sum(len(q.variants()) for q in questions):,}",)


def test_glossary_terms_categories_and_diagrams():
    from charts.diagrams import builders
    from glossary import CATEGORIES, load_terms

    terms = load_terms()
    assert claim(r"(\d+) terms in (\d+) categories") == (str(len(terms)), str(len(CATEGORIES)))
    assert claim(r"(\d+) terms open with one of (\d+) diagrams") == (
        str(sum(1 for t in terms if t.diagram)),
        str(len(builders())),
    )


def test_model_presets_and_architecture_families():
    from simulators.model_config import EXACT_FAMILIES
    from simulators.presets import load_model_presets

    assert claim(r"\((\d+) presets, Gemma") == (str(len(load_model_presets())),)
    assert claim(r"exact for (\d+) architecture families") == (str(len(EXACT_FAMILIES)),)


def test_the_transformers_oracle_counts():
    pytest.importorskip("transformers", reason="transformers is a test dependency (requirements-dev.txt)")
    from tests.arch_oracle import decoder_only_text_types
    from tests.test_arch_oracle import REFUSED

    types = decoder_only_text_types()
    assert claim(r"all (\d+) decoder-only text architectures it ships: (\d+) exact, (\d+) refused") == (
        str(len(types)),
        str(len(types) - len(REFUSED)),
        str(len(REFUSED)),
    )


def test_roofline_devices_against_the_catalog():
    """The Roofline page offers the accelerators with a bandwidth and a sourced dense peak
    (content.schema.roofline_gpus), not the whole catalog."""
    from content.schema import roofline_gpus
    from simulators.hardware import load_catalog

    catalog = {a.id: a for a in load_catalog()}
    offered = [catalog[i] for i in roofline_gpus()]
    assert claim(r"(\d+) of the catalog's (\d+) accelerators, (\d{4})–(\d{4})") == (
        str(len(offered)),
        str(len(catalog)),
        str(min(a.year for a in offered)),
        str(max(a.year for a in offered)),
    )


def test_prepared_views():
    """tests/test_url_roundtrip.py opens every preset of every page."""
    from tests.test_url_roundtrip import CASES

    assert claim(r"a test opens all (\d+) prepared views") == (str(len(CASES)),)


def test_shipped_samples_are_each_named():
    from measure.samples import list_samples

    gpus = [s for s in list_samples() if s.device_type == "cuda"]
    cpus = [s for s in list_samples() if s.device_type == "cpu"]
    assert claim(r"`measure/samples/` ships real runs, each labelled with its machine: (\w+) GPU runs") == (
        {2: "two", 3: "three", 4: "four"}.get(len(gpus), str(len(gpus))),
    )
    assert claim(r"and (\w+) 2-vCPU CPUs") == (
        {1: "one", 2: "two", 3: "three"}.get(len(cpus), str(len(cpus))),
    )
    for sample in gpus:
        assert sample.device_name.removeprefix("NVIDIA ").split()[0] in README, sample.name
