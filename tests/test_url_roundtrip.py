"""A link reproduces the view: every preset of every page, opened, read back from the address and
opened again in a fresh session, shows the same controls and the same numbers (issue 10)."""

from __future__ import annotations

import pytest

from content import load_page
from content.pages import PAGES
from content.schema import page_params
from glossary import CATEGORIES
from tests.pages import metrics, open_page

INFO = {p.url_path: p for p in PAGES}
CASES = [
    (page, preset["id"])
    for page in page_params()
    for preset in load_page(INFO[page].file.stem).meta.get("presets") or []
]


def _address(at) -> dict[str, str]:
    return {k: (v[-1] if isinstance(v, list) else v) for k, v in at.query_params.items()}


def _state(at, page: str) -> dict:
    return dict(at.session_state[f"_state:{page}:"])


def _widgets(at, keys) -> dict:
    """Every drawn widget of the page's controls, by key, with its value."""
    found = {}
    for element in at.main:
        _collect(element, keys, found)
    return found


def _collect(node, keys, found) -> None:
    key = getattr(node, "key", None)
    if key in keys and hasattr(node, "value"):
        found[key] = node.value
    for child in getattr(node, "children", {}).values():
        _collect(child, keys, found)


@pytest.mark.parametrize(("page", "preset"), CASES, ids=[f"{p}:{q}" for p, q in CASES])
def test_a_preset_link_round_trips_through_the_address(page, preset):
    first = open_page(INFO[page].path, preset=preset)
    assert not first.exception, [e.value for e in first.exception]
    address = _address(first)
    assert "preset" not in address  # the full state replaced it
    second = open_page(INFO[page].path, **address)
    assert not second.exception
    assert _address(second) == address
    assert _state(second, page) == _state(first, page)
    keys = set(page_params()[page].keys)
    assert _widgets(second, keys) == _widgets(first, keys)
    assert metrics(second) == metrics(first)


def test_clicking_a_scenario_again_after_moving_a_control_restores_it():
    at = open_page(INFO["roofline"].path, preset="decode-batch-1")
    at.select_slider(key="rf_batch").set_value(64).run()
    assert at.selectbox(key="_scenario").value == "_custom"
    at.selectbox(key="_scenario").set_value("decode-batch-1").run()
    assert at.select_slider(key="rf_batch").value == 1
    assert at.selectbox(key="_scenario").value == "decode-batch-1"
    assert _address(at).get("rf_batch") is None  # back at the preset's batch 1 (the default)


def test_returning_through_the_sidebar_keeps_the_session_settings():
    at = open_page(INFO["roofline"].path, rf_batch="256")
    at.switch_page(INFO["will-it-fit"].path).run()
    at.query_params.clear()
    at.switch_page(INFO["roofline"].path).run()
    assert at.select_slider(key="rf_batch").value == 256
    assert _address(at)["rf_batch"] == "256"


def test_an_unknown_preset_and_bad_values_are_explained_not_raised():
    at = open_page(INFO["will-it-fit"].path, preset="nope", fit_gpus="many")
    assert not at.exception
    text = " ".join(i.value for i in at.info)
    assert "no prepared view called “nope”" in text and "fit_gpus" in text


@pytest.mark.parametrize("query", [{"batch": ""}, {"fit_batch": ""}])
def test_an_empty_or_unknown_control_in_the_address_is_said(query):
    """`?batch=` (empty, and no control of that name) was silently ignored (issue 26)."""
    at = open_page(INFO["will-it-fit"].path, **query)
    assert not at.exception
    text = " ".join(i.value for i in at.info)
    assert "Part of this link was ignored" in text
    if "batch" in query:
        assert "no control called “batch” (did you mean fit_batch?)" in text


def test_an_unknown_glossary_category_is_said_until_one_is_picked():
    at = open_page("app_pages/glossary.py", category="nope")
    assert not at.exception
    assert any("no category “nope”" in w.value for w in at.warning)
    at.run()
    assert any("no category “nope”" in w.value for w in at.warning)
    at.selectbox(key="category").set_value(next(iter(CATEGORIES))).run()
    assert not any("no category" in w.value for w in at.warning)


def test_a_rerun_carrying_an_address_the_browser_had_not_yet_replaced_undoes_nothing():
    """The browser sends each rerun with the address it shows. A control moved before the last
    run's address reached it (a quick second click on a slow network) comes with the address
    before: taken as a new link, it put back the first move and undid the second as well
    (batch 64 -> 8 and model 70B -> 8B). Both moves stay and the address is written again; an
    address this session showed before is still taken when the reader arrives from another page."""
    at = open_page(INFO["roofline"].path, rf_batch="8")
    at.select_slider(key="rf_batch").set_value(64).run()
    assert _address(at)["rf_batch"] == "64"
    at.query_params.clear()
    at.query_params.update({"rf_batch": "8"})  # what the browser still showed
    at.selectbox(key="rf_model").set_value("llama-3-70b").run()
    assert at.select_slider(key="rf_batch").value == 64
    assert at.selectbox(key="rf_model").value == "llama-3-70b"
    assert _address(at) == {"rf_batch": "64", "rf_model": "llama-3-70b"}
    at.query_params.clear()
    at.query_params.update({"rf_batch": "64"})  # a stale address with no move of its own
    at.run()
    assert at.select_slider(key="rf_batch").value == 64
    assert _address(at) == {"rf_batch": "64", "rf_model": "llama-3-70b"}  # written again
    at.switch_page(INFO["will-it-fit"].path).run()  # a link from another page to an earlier address
    at.query_params.clear()
    at.query_params.update({"rf_batch": "8"})
    at.switch_page(INFO["roofline"].path).run()
    assert at.select_slider(key="rf_batch").value == 8 and _address(at)["rf_batch"] == "8"
