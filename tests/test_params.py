"""Controls as data (content/params.py, content/schema.py): address round trips, presets, bad input."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from content import load_page
from content.pages import PAGES
from content.params import EMPTY_LIST, Param, ParamError, ParamSet, active_preset, preset_state
from content.schema import page_params

PAGE_FILES = {p.url_path: p.file.stem for p in PAGES}
PRESETS = [
    (page, preset)
    for page in page_params()
    for preset in load_page(PAGE_FILES[page]).meta.get("presets") or []
]


def _values(param: Param) -> st.SearchStrategy:
    """Any value the control can take."""
    if param.kind == "choice":
        return st.sampled_from(param.options)
    if param.kind == "multi":
        limit = param.max_selections or len(param.options)
        return st.lists(st.sampled_from(param.options), unique=True, max_size=limit).map(tuple)
    if param.kind == "bool":
        return st.booleans()
    if param.kind == "int":
        return st.integers(int(param.lo), int(param.hi))
    if param.kind == "text":  # Will it fit?'s Hub id and pasted config: any text its pattern allows
        text = st.from_regex(param.pattern, fullmatch=True) if param.pattern else st.text()
        return text.filter(lambda t: len(t) <= (param.hi or 200))
    steps = round((param.hi - param.lo) / param.step)
    return st.integers(0, steps).map(lambda i: param.coerce(param.lo + i * param.step))


@st.composite
def _states(draw, params: ParamSet) -> dict:
    return {p.key: draw(_values(p)) for p in params.params}


@pytest.mark.parametrize("page", sorted(page_params()))
@settings(max_examples=60, deadline=None)
@given(data=st.data())
def test_any_state_survives_the_address(page, data):
    """state → address → state is the identity for every page's controls."""
    params = page_params()[page]
    state = data.draw(_states(params))
    query = params.to_query(state)
    assert all(isinstance(v, str) for v in query.values())
    back, problems = params.from_query(query)
    assert problems == []
    assert back == state


@pytest.mark.parametrize(("page", "preset"), PRESETS, ids=[f"{p}:{q['id']}" for p, q in PRESETS])
def test_every_preset_names_real_controls_and_values(page, preset):
    params = page_params()[page]
    state = preset_state(params, preset)
    assert active_preset(params, [preset], state) == preset["id"]
    back, problems = params.from_query(params.to_query(state))
    assert back == state and problems == []


def test_preset_ids_are_unique_per_page():
    for page in page_params():
        ids = [p["id"] for p in load_page(PAGE_FILES[page]).meta.get("presets") or []]
        assert len(ids) == len(set(ids)), page


def test_a_malformed_address_falls_back_to_defaults_and_says_why():
    params = page_params()["will-it-fit"]
    state, problems = params.from_query(
        {"fit_gpus": "two", "fit_batch": "-3", "fit_ctx": "12.5", "fit_gpu": "<script>", "fit_util": "nan"}
    )
    assert state == params.defaults()
    assert len(problems) == 5
    assert any("not a whole number" in p for p in problems)
    assert any("below the smallest" in p for p in problems)


def test_numbers_snap_to_the_slider_grid_and_respect_bounds():
    util = page_params()["will-it-fit"]["fit_util"]
    assert util.parse("0.904") == pytest.approx(0.9)
    with pytest.raises(ParamError):
        util.parse("0.99")


def test_an_empty_multi_choice_is_written_and_read_back():
    sets = page_params()["roofline"]["rf_sets"]
    assert sets.encode(()) == EMPTY_LIST
    assert sets.parse(EMPTY_LIST) == ()
    assert sets.parse("matmul,attention") == ("matmul", "attention")


def test_only_changed_controls_go_into_the_address():
    params = page_params()["roofline"]
    assert params.to_query(params.defaults()) == {}
    assert params.to_query(params.with_values({"rf_batch": 512})) == {"rf_batch": "512"}


def test_a_schema_mistake_fails_at_import():
    with pytest.raises(ValueError, match="bad default for x"):
        Param("x", "choice", "c", options=("a", "b"))
