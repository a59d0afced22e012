"""A page's controls in session state and in the address, kept in step on every run.

The address is the source of truth when it changes from outside (a shared link, a lesson's "open
in the full simulator", a teacher's ``?preset=``); between such changes the widgets are, and every
run writes their values back, so the address always reproduces what is on screen. Values live in
one dict per page (not only in widget keys, which Streamlit drops when a widget is not drawn), so a
control hidden for a while keeps its value and stays in the link.

Rules at the start of a run (``PageState.__init__``):
- ``?preset=<id>``: every control takes the preset's value or its default, except those the address
  also names (``?preset=X&par_intra=pcie-gen4-x16``); ``preset`` leaves the address (the full state
  replaces it).
- First visit in this session, or the page's part of the address differs from what the last run
  wrote: the address wins (unknown or malformed values are ignored and listed for the reader).
- The address has none of the page's parameters (the reader came back through the sidebar): the
  session's values stay.
- A stale address: a run of the same page, not a back/forward step, whose address is one this
  session showed before but not the last one written. The browser sends each rerun with the
  address it shows, so a control moved before the previous run's address reached it (a quick second
  click on a slow network) carries the old one; taken as new, it would undo both moves. The
  widgets win, and the run writes the address again.
"""

from __future__ import annotations

import contextlib
from collections.abc import Mapping, Sequence
from typing import Any
from urllib.parse import urlencode, urlsplit, urlunsplit

import streamlit as st

from content.params import ParamError, ParamSet, active_preset, preset_state

PRESET_PARAM = "preset"
GLOBAL_KEYS = ("present",)  # belong to the app, not to a page: kept as they are
# Address keys a page reads besides its controls (never reported as unknown): these, a prepared
# view, and Streamlit's own embedding options.
APP_QUERY_KEYS = frozenset({*GLOBAL_KEYS, PRESET_PARAM, "embed", "embed_options"})
CUSTOM = "_custom"
SEEN_KEEP = 32  # addresses of a page remembered as already shown (what a stale rerun can carry)
_PAGE_NOW, _PAGE_BEFORE = "_page_now", "_page_before"


def note_page(url_path: str) -> None:
    """Called by app.py on every run: which page runs now and which ran before, so a page can tell
    arriving (a link, the sidebar) from a rerun of itself."""
    ss = st.session_state
    ss[_PAGE_BEFORE], ss[_PAGE_NOW] = ss.get(_PAGE_NOW), url_path


def _history_navigation() -> bool:
    """Whether this run is the browser's back or forward step (Streamlit's own flag for it)."""
    from streamlit.runtime.scriptrunner_utils.script_run_context import get_script_run_ctx

    ctx = get_script_run_ctx()
    return bool(getattr(ctx, "is_history_navigation", False))


class PageState:
    """The controls of one page (or of one lesson step's embedded view, with ``ns`` and ``url=False``)."""

    def __init__(
        self,
        params: ParamSet,
        presets: Sequence[Mapping[str, Any]] = (),
        *,
        ns: str = "",
        url: bool = True,
        initial: Mapping[str, Any] | None = None,
    ) -> None:
        self.params = params
        self.presets = list(presets)
        self.ns = ns
        self.url = url
        self.problems: list[str] = []
        self._rewrite = False  # write the address even where it matches the one this run came with
        self._store = f"_state:{params.page}:{ns}"
        self._written = f"_url:{params.page}"
        self._seen = f"_url_seen:{params.page}"
        self._sync_in(initial)

    # -- state -------------------------------------------------------------------------------
    @property
    def values(self) -> dict[str, Any]:
        """Every control's current value (the page's model inputs)."""
        return st.session_state[self._store]

    def __getitem__(self, key: str) -> Any:
        return self.values[key]

    def wkey(self, key: str) -> str:
        """The widget key of a control (namespaced inside lesson steps)."""
        return f"{self.ns}:{key}" if self.ns else key

    def query(self) -> dict[str, str]:
        """The address parameters that reproduce the current state."""
        return self.params.to_query(self.values)

    def set_value(self, key: str, value: Any) -> None:
        """Set one control from the page's code (a value no widget of its own holds)."""
        value = self.params[key].coerce(value)
        self.values[key] = value
        st.session_state[self.wkey(key)] = _widget_value(value)

    def set_all(self, state: Mapping[str, Any]) -> None:
        """Replace every control's value (before its widget is drawn, or from a callback)."""
        st.session_state[self._store] = dict(state)
        for key, value in state.items():
            st.session_state[self.wkey(key)] = _widget_value(value)

    def _refresh_from_widgets(self) -> None:
        """Widget values the reader changed since the last run are the state now (so controls drawn
        above them, like the scenario select box, already see the change)."""
        values = st.session_state[self._store]
        for p in self.params.params:
            wk = self.wkey(p.key)
            if wk in st.session_state:
                with contextlib.suppress(ParamError):  # a stale widget value: keep the stored one
                    values[p.key] = p.coerce(st.session_state[wk])

    def _sync_in(self, initial: Mapping[str, Any] | None) -> None:
        ss = st.session_state
        if not self.url:
            if self._store not in ss:
                self.set_all(self.params.with_values(initial or {}))
            self._refresh_from_widgets()
            return
        wanted = st.query_params.get(PRESET_PARAM)
        if wanted is not None:  # sync_out rewrites the address without it, in one message
            preset = next((p for p in self.presets if p.get("id") == wanted), None)
            if preset is not None:
                # ?preset=X&key=value: the preset, with the controls the address names on top
                state = preset_state(self.params, preset)
                extra = self.params.query_part({k: st.query_params.get(k) for k in st.query_params})
                for key, text in extra.items():
                    try:
                        state[key] = self.params[key].parse(text)
                    except ParamError as exc:
                        self.problems.append(f"{key}={str(text)[:40]!r}: {exc}")
                self.set_all(state)
                ss[self._scenario_memory] = wanted
                ss[self._written] = None  # force the address to be rewritten in full
                return
            self.problems.append(f"this page has no prepared view called “{wanted[:60]}”")
        mine = self.params.query_part({k: st.query_params.get(k) for k in st.query_params})
        if self._store in ss and mine and mine != ss.get(self._written) and self._stale(mine):
            self._refresh_from_widgets()
            self._rewrite = True  # the browser shows the last address written, not this one
            return
        if self._store not in ss:
            self._remember(mine)
        if self._store not in ss or (mine and mine != ss.get(self._written)):
            state, problems = self.params.from_query(mine)
            self.problems += problems + self._unknown_keys()
            self.set_all(state)
        else:
            self._refresh_from_widgets()

    def _remember(self, address: Mapping[str, str]) -> None:
        seen = st.session_state.setdefault(self._seen, [])
        if address in seen:
            seen.remove(address)
        seen.append(dict(address))
        del seen[:-SEEN_KEEP]

    def _stale(self, address: Mapping[str, str]) -> bool:
        """An address this page showed before, arriving on a rerun of the page itself that is not
        a back/forward step: sent by a browser that had not yet seen the last one written."""
        ss = st.session_state
        rerun = ss.get(_PAGE_BEFORE) == ss.get(_PAGE_NOW)
        return rerun and address in ss.get(self._seen, []) and not _history_navigation()

    def _unknown_keys(self) -> list[str]:
        """One problem per key in the address that no control of this page reads (``?batch=``):
        said, with the control it most likely meant, instead of silently ignored."""
        problems = []
        for key in st.query_params:
            if key in self.params or key in APP_QUERY_KEYS:
                continue
            near = [p.key for p in self.params.params if p.key.endswith(f"_{key}") or key in p.key]
            hint = f" (did you mean {near[0]}?)" if near else ""
            problems.append(f"this page has no control called “{str(key)[:40]}”{hint}")
        return problems

    def sync_out(self) -> None:
        """After the widgets: write the state into the address (only what differs from defaults)."""
        if not self.url:
            return
        mine = self.query()
        current = {k: st.query_params.get(k) for k in st.query_params}
        wanted = {k: v for k, v in current.items() if k in GLOBAL_KEYS} | mine
        if wanted != current or self._rewrite:  # one message: each write made the browser redraw
            st.query_params.from_dict(wanted)
        st.session_state[self._written] = mine
        self._remember(mine)

    def show_problems(self) -> None:
        """Tell the reader which parts of the link were ignored (never a traceback)."""
        if self.problems:
            st.info(
                "Part of this link was ignored, so those controls show their defaults: "
                + "; ".join(p if len(p) <= 160 else p[:157] + "…" for p in self.problems[:5]),
                icon=":material/link_off:",
            )

    # -- widgets -----------------------------------------------------------------------------
    def widget(self, key: str, *, container: Any = None, label: str | None = None, **kwargs: Any) -> Any:
        """The control's widget as its schema describes it (title, help, kind, widget hint)."""
        p = self.params[key]
        label = label or p.title or key
        kwargs.setdefault("help", p.help)
        if p.kind == "choice":
            widget = (
                kwargs.pop("widget", None)
                or p.widget
                or ("slider" if all(isinstance(o, int) for o in p.options) else "selectbox")
            )
            return self.select(key, label, container=container, widget=widget, **kwargs)
        if p.kind == "multi":
            return self.multiselect(key, label, container=container, **kwargs)
        if p.kind == "int":
            return self.number(key, label, container=container, **kwargs)
        if p.kind == "float":
            return self.slider(key, label, container=container, **kwargs)
        if p.kind == "text":
            return self.text(key, label, container=container, **kwargs)
        return self.toggle(key, label, container=container, **kwargs)

    def _seed(self, key: str) -> str:
        wk = self.wkey(key)
        if wk not in st.session_state:
            st.session_state[wk] = _widget_value(self.values[key])
        return wk

    def _store_value(self, key: str, value: Any) -> Any:
        p = self.params[key]
        try:
            value = p.coerce(value) if value is not None else p.default
        except ParamError:
            value = p.default
        self.values[key] = value
        return value

    def select(
        self,
        key: str,
        label: str,
        *,
        container: Any = None,
        widget: str = "selectbox",
        help: str | None = None,
        disabled: bool = False,
        options: Sequence[Any] | None = None,
    ) -> Any:
        """A choice: select box, segmented control, pills or radio over the control's options."""
        p = self.params[key]
        choices = list(options) if options is not None else list(p.options)
        wk = self._seed(key)
        if st.session_state[wk] not in choices:  # a narrowed option list (e.g. per task)
            st.session_state[wk] = p.default if p.default in choices else choices[0]
        elif self.ns:
            # An embedded view (a lesson step): send the value with every run, so a browser that
            # mounts the box again shows the value in use, not the first option (seen in Chromium
            # on lesson 9's worked problem: the box read "HDR" while the chart used NDR)
            st.session_state[wk] = st.session_state[wk]
        target = container or st
        common = {"format_func": p.label, "key": wk, "help": help, "disabled": disabled}
        if widget == "segmented":
            value = target.segmented_control(label, choices, selection_mode="single", required=True, **common)
        elif widget == "pills":
            value = target.pills(label, choices, selection_mode="single", required=True, **common)
        elif widget == "radio":
            value = target.radio(label, choices, horizontal=True, **common)
        elif widget == "slider":
            value = target.select_slider(label, choices, **common)
        else:
            value = target.selectbox(label, choices, **common)
        return self._store_value(key, value)

    def multiselect(
        self,
        key: str,
        label: str,
        *,
        container: Any = None,
        help: str | None = None,
        placeholder: str = "",
        disabled: bool = False,
    ) -> tuple:
        """Several choices; the address holds their ids joined by commas."""
        p = self.params[key]
        wk = self._seed(key)
        value = (container or st).multiselect(
            label,
            list(p.options),
            format_func=p.label,
            key=wk,
            help=help,
            max_selections=p.max_selections,
            placeholder=placeholder or "Choose…",
            disabled=disabled,
        )
        return self._store_value(key, value)

    def number(
        self, key: str, label: str, *, container: Any = None, help: str | None = None, disabled: bool = False
    ) -> int:
        """A whole number in the control's range."""
        p = self.params[key]
        wk = self._seed(key)
        value = (container or st).number_input(
            label,
            min_value=int(p.lo),
            max_value=int(p.hi),
            step=int(p.step or 1),
            key=wk,
            help=help,
            disabled=disabled,
        )
        return self._store_value(key, value)

    def text(
        self,
        key: str,
        label: str,
        *,
        container: Any = None,
        help: str | None = None,
        disabled: bool = False,
        placeholder: str | None = None,
    ) -> str:
        """A short text (a model id): a value the control does not take is said and not used."""
        p = self.params[key]
        wk = self._seed(key)
        value = (container or st).text_input(
            label, key=wk, help=help, disabled=disabled, placeholder=placeholder, max_chars=int(p.hi or 200)
        )
        try:
            p.coerce(value)
        except ParamError as exc:
            (container or st).error(f"{label}: {exc}. It was not used.", icon=":material/error:")
        return self._store_value(key, value)

    def slider(
        self,
        key: str,
        label: str,
        *,
        container: Any = None,
        help: str | None = None,
        disabled: bool = False,
        format: str | None = None,
    ) -> float:
        """A number on a slider (the control's range and step)."""
        p = self.params[key]
        wk = self._seed(key)
        value = (container or st).slider(
            label,
            min_value=float(p.lo),
            max_value=float(p.hi),
            step=float(p.step or 0.01),
            key=wk,
            help=help,
            disabled=disabled,
            format=format,
        )
        return self._store_value(key, value)

    def toggle(
        self, key: str, label: str, *, container: Any = None, help: str | None = None, disabled: bool = False
    ) -> bool:
        """A switch."""
        wk = self._seed(key)
        value = (container or st).toggle(label, key=wk, help=help, disabled=disabled)
        return self._store_value(key, value)

    # -- presets -------------------------------------------------------------------------------
    @property
    def _scenario_memory(self) -> str:
        return f"_scenario:{self.params.page}:{self.ns}"

    def active_preset(self) -> str | None:
        """The preset whose full state is on screen now, if any."""
        return active_preset(self.params, self.presets, self.values)

    def apply_preset(self, preset_id: str) -> None:
        """Every control to the preset's value or its default (safe inside a widget callback)."""
        preset = next(p for p in self.presets if p["id"] == preset_id)
        self.set_all(preset_state(self.params, preset))
        st.session_state[self._scenario_memory] = preset_id

    def _on_scenario(self, widget_key: str) -> None:
        chosen = st.session_state.get(widget_key)
        if chosen and chosen != CUSTOM:
            self.apply_preset(chosen)

    def scenario_control(self, *, label: str = "Scenario", container: Any = None) -> str | None:
        """One select box over the page's prepared views (compact on a desktop, a projector and a phone).

        It shows which scenario is on screen ("your own settings" once a control moved away from
        it); choosing a scenario sets every control to it, so a class can always get back to it.
        """
        if not self.presets:
            return None
        active = self.active_preset()
        ids = [p["id"] for p in self.presets]
        own = "— default view —" if self.values == self.params.defaults() else "— your own settings —"
        labels = {p["id"]: p["label"] for p in self.presets} | {CUSTOM: own}
        key = self.wkey("_scenario")
        st.session_state[key] = active or CUSTOM
        (container or st).selectbox(
            label,
            [CUSTOM, *ids],
            format_func=labels.__getitem__,
            key=key,
            on_change=self._on_scenario,
            args=(key,),
            help="Prepared views. Each is also a link: add ?preset=<id> to this page's address.",
        )
        return active

    def share_link(self, *, container: Any = None) -> None:
        """A popover with the address of this exact view, ready to copy."""
        with (container or st).popover(
            "Share", icon=":material/link:", help="The address of this exact view"
        ):
            st.caption("This address opens the page exactly as it is now (copy it with the button).")
            st.code(current_url(self.query()), language=None, wrap_lines=True)


def _widget_value(value: Any) -> Any:
    return list(value) if isinstance(value, tuple) else value


def current_url(query: Mapping[str, str]) -> str:
    """This page's address in the reader's browser with ``query`` (and ``present`` if on)."""
    try:
        base = st.context.url or ""
    except Exception:  # outside a browser session (AppTest): a relative link still works
        base = ""
    parts = urlsplit(base)
    full = dict(query)
    if st.query_params.get("present"):
        full["present"] = st.query_params.get("present")
    return urlunsplit((parts.scheme, parts.netloc, parts.path, urlencode(full, safe=",-"), ""))
