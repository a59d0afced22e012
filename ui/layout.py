"""The shape every simulator page shares: the answer first, then how to change it.

Normal view (1440×900): title and a one-line lede, the scenario pills and a share link, one row of
main controls (the rest folded into "More settings"), then the verdict (a row of metrics) and the
main chart with its "What to notice" beside it — all above the fold. On a phone (up to 640 px wide,
where the columns stack) the verdict and the chart come before the control panel. Presenter view: the verdict
and the chart come straight after the title and the controls fold into an expander under them.
Containers are created in screen order and filled in the order the script needs.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import streamlit as st

from content import ContentPage
from ui.controls import term_markdown
from ui.presenter import is_presenting
from ui.state import PageState

CONTROLS_KEY = "sim-controls"  # CSS class st-key-sim-controls: the control panel
ANSWER_KEY = "sim-answer"  # CSS class st-key-sim-answer: the verdict and the main chart


@dataclass
class SimulatorLayout:
    """Where a page puts things; every attribute is a Streamlit container."""

    controls: Any
    advanced: Any
    verdict: Any
    main: Any
    notice: Any
    more: Any
    presenting: bool


def simulator_layout(
    page: ContentPage,
    state: PageState,
    *,
    advanced_label: str = "More settings",
    answer_first: bool = True,
    controls_beside_verdict: bool = False,
) -> SimulatorLayout:
    """Title, lede and the page's containers in screen order (see the module docstring).

    ``answer_first``: on a phone, the verdict and chart before the control panel (simulators);
    False where the controls choose what there is to see (Your hardware's sections).
    ``controls_beside_verdict``: on a phone, the control panel right under the verdict and the
    chart after it (Will it fit?, whose verdict, chart and log lines put the model select three
    screens below the answer); the desktop order is the same either way."""
    presenting = is_presenting()
    lede = page.meta.get("lede")
    if presenting:
        st.title(page.meta["title"])
        state.show_problems()
        verdict = st.container()
        main = st.container()
        notice = st.container()
        box = st.expander("Controls and scenarios", icon=":material/tune:")
        top = box.columns([3, 1], vertical_alignment="bottom")
        state.scenario_control(container=top[0])
        state.share_link(container=top[1])
        controls = box.container()
        advanced = box.container()
    else:
        head, side = st.columns([3, 2], vertical_alignment="bottom", gap="medium")
        head.title(page.meta["title"])
        if lede:
            head.markdown(term_markdown(lede))
        picker = side.columns([3, 2], vertical_alignment="bottom")
        state.scenario_control(container=picker[0])
        state.share_link(container=picker[1])
        state.show_problems()
        # Keyed, so that on a phone the style sheet (ui/presenter.py, PHONE_ORDER_CSS) puts the
        # answer above the control panel: stacked, the panel pushed the first result 909-1,379 px
        # down an 844 px screen.
        box = st.container(border=True, key=CONTROLS_KEY if answer_first else None)
        controls = box.container()
        advanced = box.expander(advanced_label, icon=":material/tune:")
        answer = st.container(key=ANSWER_KEY if answer_first else None)
        verdict = answer.container()
        if answer_first and controls_beside_verdict:
            # the chart row is the answer's sibling, so the phone style sheet orders it after the panel
            answer = st.container()
        chart_column, notice_column = answer.columns([5, 2], gap="medium")
        main, notice = chart_column.container(), notice_column.container()
    more = st.container()
    return SimulatorLayout(controls, advanced, verdict, main, notice, more, presenting)


def notice_box(text: str, container: Any = None, title: str = "What to notice") -> None:
    """The short 'what to notice' list that sits beside (or under) the chart it is about."""
    with (container or st).container(border=True):
        st.markdown(f"**{title}**")
        st.markdown(term_markdown(text))
