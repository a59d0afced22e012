"""Every chart states its point in text: a screen reader hears its alt text (the computed
headline, the axes, the series), and its numbers are one click away as a table (issue 19)."""

from __future__ import annotations

import pytest

from charts.style import chart_alt, chart_table
from content.pages import PAGES
from tests.pages import open_page

CHART_PAGES = [p for p in PAGES if p.views]


@pytest.mark.parametrize("info", CHART_PAGES, ids=[p.url_path for p in CHART_PAGES])
def test_every_chart_on_every_page_has_alt_text_with_its_numbers(info):
    at = open_page(info.path, timeout=60)
    assert not at.exception
    charts = at.get("plotly_chart")
    assert charts, f"{info.path} draws no chart"
    for chart in charts:
        alt = chart.proto.alt
        assert len(alt) > 20, (info.path, alt)
        assert any(ch.isdigit() for ch in alt), f"{info.path}: alt states no number: {alt!r}"


def test_the_numbers_behind_a_chart_are_one_click_away():
    at = open_page("app_pages/will_it_fit.py", timeout=60)
    toggles = [t for t in at.toggle if t.label == "Show the numbers behind this chart"]
    assert len(toggles) == len(at.get("plotly_chart"))  # one per chart

    def chart_tables():
        return [d.value for d in at.dataframe if "Series" in d.value.columns]

    assert chart_tables() == []  # built only when asked for
    toggles[0].set_value(True).run()
    (table,) = chart_tables()
    assert len(table) > 0 and table.shape[1] >= 3


def test_alt_and_table_come_from_the_spec_itself():
    spec = {
        "data": [{"type": "bar", "x": ["A", "B"], "y": [3, 5], "name": "First vote (8 votes)"}],
        "layout": {
            "title": {"text": "8 votes<br><span style='font-size:14px'>each answer's votes</span>"},
            "xaxis": {"title": {"text": "answer"}},
            "yaxis": {"title": {"text": "votes"}},
        },
    }
    assert chart_alt(spec) == (
        "8 votes. each answer's votes. Chart of votes against answer. Series: First vote (8 votes)."
    )
    assert chart_table(spec) == [
        {"Series": "First vote (8 votes)", "answer": "A", "votes": 3},
        {"Series": "First vote (8 votes)", "answer": "B", "votes": 5},
    ]


def test_a_heatmaps_table_has_a_row_per_cell_with_what_it_holds():
    """Issue 26: the GPU grid's table was a raw dump (a whole row of ranks in one cell, legend
    placeholders as rows); now one row per GPU with its node, index, label and hover details."""
    from charts.parallelism import gpu_grid_figure
    from simulators.parallelism import Layout

    rows = chart_table(gpu_grid_figure(Layout(dp=2, tp=8, pp=4, nodes=8, gpus_per_node=8), "pp"))
    assert len(rows) == 64 and all(r["Series"] == "GPU" for r in rows)
    first = rows[0]
    assert (first["Node"], first["GPU within the node (local index)"], first["Label"]) == (0, 0, "0")
    assert "PP stage 1" in first["Details"] and "<br>" not in first["Details"]


def test_a_huge_bad_value_in_a_link_is_echoed_cut_short():
    at = open_page("app_pages/roofline.py", timeout=60, **{"rf_gpus": "x" * 5000})
    assert not at.exception
    notices = [i.value for i in at.info if "Part of this link was ignored" in i.value]
    assert notices and len(notices[0]) < 400


def _diagram_terms():
    from glossary import load_terms

    return [t for t in load_terms() if t.diagram]


def test_thirty_core_terms_have_a_computed_diagram():
    assert len({t.diagram for t in _diagram_terms()}) >= 30


@pytest.mark.parametrize("term", _diagram_terms(), ids=lambda t: t.id)
def test_each_term_page_draws_its_diagram_with_alt_text(term):
    at = open_page("app_pages/glossary.py", timeout=60, term=term.id)
    assert not at.exception, [e.value for e in at.exception]
    charts = at.get("plotly_chart")
    assert charts and len(charts[0].proto.alt) > 20


def test_the_lesson_step_that_teaches_a_term_shows_its_diagram():
    at = open_page("app_pages/lessons.py", timeout=60, lesson="gpu-basics", step="2")
    assert not at.exception
    labels = [e.label for e in at.expander]
    assert "Diagram: Streaming Multiprocessor" in labels and "Diagram: Warp" in labels
