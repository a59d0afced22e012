"""Every control of a page as data: its key, type, default and allowed values.

A page's controls are a ``ParamSet``. The same definitions drive the widgets, the address
(``?rf_batch=512&rf_sets=matmul``), presets (``?preset=<id>``) and the lesson views that embed a
page's chart, so a link always reproduces the view and a preset cannot name a control that does
not exist. Pure Python: no Streamlit here, so the round trip is tested without a browser.

Address encoding: a choice is its id, a multi-choice its ids joined by commas (``-`` for none), a
number as written, a switch ``true``/``false``, a text as typed (within its pattern). Only values
that differ from the default are written, so a fresh page opens on a short address.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

Kind = Literal["choice", "multi", "int", "float", "bool", "text"]
EMPTY_LIST = "-"  # how an explicitly empty multi-choice is written in an address
_TRUE = {"true", "1", "yes", "on"}
_FALSE = {"false", "0", "no", "off"}


class ParamError(ValueError):
    """A value for a control is not one it can take (the message says which and why)."""


@dataclass(frozen=True)
class Param:
    """One control. ``options`` are the ids a choice may take, ``labels`` how they are shown;
    ``title``/``help``/``widget`` say how its widget looks wherever it is drawn."""

    key: str
    kind: Kind
    default: Any
    options: tuple = ()
    labels: Mapping[Any, str] = field(default_factory=dict, hash=False, compare=False)
    lo: float | None = None
    hi: float | None = None
    step: float | None = None
    max_selections: int | None = None
    title: str = ""  # the widget's label
    help: str | None = None  # the widget's tooltip: defines any term a student may not know
    widget: str | None = None  # how a choice is drawn: selectbox (default), slider, segmented, pills, radio
    pattern: str | None = None  # a text control: the whole value must match (``hi`` is its longest length)

    def __post_init__(self) -> None:
        # A schema mistake is a programming error: fail at import, naming the control.
        try:
            object.__setattr__(self, "default", self.coerce(self.default))
        except ParamError as exc:
            raise ValueError(f"bad default for {self.key}: {exc}") from None

    def label(self, option: Any) -> str:
        """How an option is shown in a widget: its label, or the id (whole numbers with separators)."""
        if option in self.labels:
            return str(self.labels[option])
        return f"{option:,}" if isinstance(option, int) and not isinstance(option, bool) else str(option)

    def coerce(self, value: Any) -> Any:
        """``value`` (from a preset or a widget) as this control's type; ParamError if not allowed."""
        if self.kind == "choice":
            for option in self.options:
                if value == option or str(value) == str(option):
                    return option
            raise ParamError(f"{value!r} is not one of {_preview(self.options)}")
        if self.kind == "multi":
            if isinstance(value, str):
                value = [] if value in ("", EMPTY_LIST) else value.split(",")
            if not isinstance(value, Iterable):
                raise ParamError(f"{value!r} is not a list")
            chosen = []
            for item in value:
                match = next((o for o in self.options if item == o or str(item) == str(o)), None)
                if match is None:
                    raise ParamError(f"{item!r} is not one of {_preview(self.options)}")
                if match not in chosen:
                    chosen.append(match)
            if self.max_selections is not None and len(chosen) > self.max_selections:
                raise ParamError(f"at most {self.max_selections} may be chosen")
            return tuple(chosen)
        if self.kind == "bool":
            if isinstance(value, bool):
                return value
            text = str(value).strip().lower()
            if text in _TRUE:
                return True
            if text in _FALSE:
                return False
            raise ParamError(f"{value!r} is not true or false")
        if self.kind == "int":
            if isinstance(value, bool):
                raise ParamError(f"{value!r} is not a whole number")
            try:
                number = float(value)
            except (TypeError, ValueError):
                raise ParamError(f"{value!r} is not a whole number") from None
            if not math.isfinite(number) or number != int(number):
                raise ParamError(f"{value!r} is not a whole number")
            return self._in_range(int(number))
        if self.kind == "float":
            if isinstance(value, bool):
                raise ParamError(f"{value!r} is not a number")
            try:
                number = float(value)
            except (TypeError, ValueError):
                raise ParamError(f"{value!r} is not a number") from None
            if not math.isfinite(number):
                raise ParamError(f"{value!r} is not a finite number")
            if self.step:  # snap to the slider's grid so the widget can show it exactly
                base = self.lo or 0.0
                number = round(base + round((number - base) / self.step) * self.step, 10)
            return self._in_range(number)
        if self.kind == "text":
            text = "" if value is None else str(value).strip()
            longest = int(self.hi) if self.hi is not None else 200
            if len(text) > longest:
                raise ParamError(f"is {len(text):,} characters; at most {longest:,} are allowed")
            if self.pattern and not re.fullmatch(self.pattern, text):
                raise ParamError("has characters this control does not take")
            return text
        raise ParamError(f"unknown kind {self.kind!r}")

    def _in_range(self, number: float) -> Any:
        if self.lo is not None and number < self.lo:
            raise ParamError(f"{number:g} is below the smallest allowed value, {self.lo:g}")
        if self.hi is not None and number > self.hi:
            raise ParamError(f"{number:g} is above the largest allowed value, {self.hi:g}")
        return number

    def parse(self, text: str) -> Any:
        """A value read from the address; ParamError says what is wrong with it."""
        return self.coerce(text)

    def encode(self, value: Any) -> str:
        """The value as written in an address."""
        value = self.coerce(value)
        if self.kind == "multi":
            return ",".join(str(v) for v in value) or EMPTY_LIST
        if self.kind == "bool":
            return "true" if value else "false"
        if self.kind == "float":
            return format(value, "g")
        return str(value)


def _preview(options: Sequence[Any], limit: int = 6) -> str:
    shown = ", ".join(str(o) for o in options[:limit])
    return shown + (f" … ({len(options)} in all)" if len(options) > limit else "")


@dataclass(frozen=True)
class ParamSet:
    """The controls of one page (``page`` is its url_path), in the order they are shown."""

    page: str
    params: tuple[Param, ...]

    def __post_init__(self) -> None:
        keys = [p.key for p in self.params]
        if len(set(keys)) != len(keys):
            raise ValueError(f"{self.page}: a control key is used twice")

    def __contains__(self, key: object) -> bool:
        return any(p.key == key for p in self.params)

    def __getitem__(self, key: str) -> Param:
        for p in self.params:
            if p.key == key:
                return p
        raise KeyError(f"{self.page} has no control {key!r}")

    @property
    def keys(self) -> tuple[str, ...]:
        return tuple(p.key for p in self.params)

    def defaults(self) -> dict[str, Any]:
        """Every control at its default value."""
        return {p.key: p.default for p in self.params}

    def with_values(self, values: Mapping[str, Any]) -> dict[str, Any]:
        """Defaults overlaid with ``values``; ParamError names the first bad key or value."""
        state = self.defaults()
        for key, value in values.items():
            if key not in self:
                raise ParamError(f"{self.page} has no control {key!r}")
            try:
                state[key] = self[key].coerce(value)
            except ParamError as exc:
                raise ParamError(f"{key}: {exc}") from None
        return state

    def from_query(self, query: Mapping[str, str]) -> tuple[dict[str, Any], list[str]]:
        """State from an address: defaults, overlaid with every parameter that parses.

        Returns the state and one readable problem per parameter that was ignored.
        """
        state, problems = self.defaults(), []
        for key, text in query.items():
            if key not in self:
                continue
            try:
                state[key] = self[key].parse(text)
            except ParamError as exc:
                problems.append(f"{key}={str(text)[:40]!r}: {exc}")
        return state, problems

    def to_query(self, state: Mapping[str, Any]) -> dict[str, str]:
        """The address for ``state``: every control whose value differs from its default."""
        query = {}
        for p in self.params:
            if p.key in state:
                value = p.coerce(state[p.key])
                if value != p.default:
                    query[p.key] = p.encode(value)
        return query

    def query_part(self, query: Mapping[str, str]) -> dict[str, str]:
        """The entries of an address that belong to this page."""
        return {k: v for k, v in query.items() if k in self}


def preset_state(params: ParamSet, preset: Mapping[str, Any]) -> dict[str, Any]:
    """The full state a preset opens: every control at its default except those it names."""
    try:
        return params.with_values(preset.get("params") or {})
    except ParamError as exc:
        raise ParamError(f"preset {preset.get('id')!r} on {params.page}: {exc}") from None


def active_preset(
    params: ParamSet, presets: Sequence[Mapping[str, Any]], state: Mapping[str, Any]
) -> str | None:
    """The id of the first preset whose full state equals ``state`` (None when none does)."""
    for preset in presets:
        try:
            if preset_state(params, preset) == dict(state):
                return preset["id"]
        except ParamError:
            continue
    return None
