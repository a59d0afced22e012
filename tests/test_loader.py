"""The loader rejects malformed term files and names the file and the field."""

from pathlib import Path

import pytest

from glossary.loader import TermFileError, load_terms_from, parse_term_file

BODY = (
    "A **widget** is a made-up unit used only by this test. It exists so that the loader has a "
    "body long enough to pass the word-count rule, which asks for at least eighty words in every "
    "entry. The body also needs a number with a unit, such as 3.35 TB/s of bandwidth on one chip, "
    "and a short explanation of why the concept matters for a bottleneck such as memory bandwidth "
    "or capacity. Here is a computed number: {{ 2 * 21 :d }} widgets, which the loader evaluates. "
    "That is enough words to be valid, with a few spare words after it."
)


def write(tmp_path: Path, name: str, front: str, body: str = BODY) -> Path:
    path = tmp_path / f"{name}.md"
    path.write_text(f"---\n{front}\n---\n{body}\n", encoding="utf-8")
    return path


def valid_front(term_id: str = "widget", **override: str) -> str:
    fields = {
        "id": term_id,
        "title": term_id.replace("-", " ").title(),
        "aliases": "[WGT]",
        "category": "gpu-hardware",
        "summary": "A widget is a test unit that exists only in this test.",
        "related": "[]",
        "sources": "[https://example.org/widget]",
    }
    fields.update(override)
    return "\n".join(f"{k}: {v}" for k, v in fields.items() if v is not None)


def test_valid_file_loads_into_a_frozen_term(tmp_path):
    term = parse_term_file(write(tmp_path, "widget", valid_front()))
    assert (term.id, term.aliases, term.category) == ("widget", ("WGT",), "gpu-hardware")
    assert "42 widgets" in term.body
    with pytest.raises(AttributeError):
        term.title = "changed"


@pytest.mark.parametrize(
    ("override", "field"),
    [
        ({"category": "gpus"}, "category"),
        ({"summary": '"' + "word " * 36 + 'end."'}, "summary"),
        ({"summary": "No full stop at the end"}, "summary"),
        ({"sources": "[]"}, "sources"),
        ({"sources": "[not-a-url]"}, "sources"),
        ({"aliases": "WGT"}, "aliases"),
        ({"aliases": "[Widget]"}, "aliases"),
        ({"related": "[widget]"}, "related"),
        ({"related": "[Not An Id]"}, "related"),
        ({"id": "other"}, "id"),
        ({"title": None}, "title"),
        ({"simulator": "roofline"}, "simulator"),
        ({"colour": "blue"}, "colour"),
    ],
)
def test_bad_field_is_named_with_the_file(tmp_path, override, field):
    path = write(tmp_path, "widget", valid_front(**override))
    with pytest.raises(TermFileError) as excinfo:
        parse_term_file(path)
    assert excinfo.value.field == field
    assert "widget.md" in str(excinfo.value) and f"'{field}'" in str(excinfo.value)


@pytest.mark.parametrize(
    ("body", "problem"),
    [
        ("Too short: 3 words.", "words"),
        (BODY + " <script>alert(1)</script>", "raw HTML"),
        (BODY.replace("{{ 2 * 21 :d }}", "{{ os.system('x') }}"), "computed number"),
        (BODY.replace("3.35", "many").replace("{{ 2 * 21 :d }}", "some"), "number"),
    ],
)
def test_bad_body_is_rejected(tmp_path, body, problem):
    with pytest.raises(TermFileError, match=problem) as excinfo:
        parse_term_file(write(tmp_path, "widget", valid_front(), body))
    assert excinfo.value.field == "body"


def test_unparseable_front_matter_names_the_file(tmp_path):
    path = tmp_path / "broken.md"
    path.write_text("---\nid: [unclosed\n---\nbody\n", encoding="utf-8")
    with pytest.raises(TermFileError, match=r"broken\.md: field 'front matter'"):
        parse_term_file(path)


def test_collection_rejects_dangling_related_and_shared_alias(tmp_path):
    write(tmp_path, "widget", valid_front(related="[gadget, nowhere]"))
    write(tmp_path, "gadget", valid_front("gadget", aliases="[wgt]"))
    with pytest.raises(ValueError) as excinfo:
        load_terms_from(tmp_path)
    message = str(excinfo.value)
    assert "'nowhere' is not a term id" in message
    assert "'WGT' is already a name of 'gadget'" in message


def test_load_sorts_by_title(tmp_path):
    write(tmp_path, "widget", valid_front())
    write(tmp_path, "gadget", valid_front("gadget", aliases="[]"))
    assert [t.id for t in load_terms_from(tmp_path)] == ["gadget", "widget"]
