"""Computed numbers inside Markdown: ``{{ 989.5 / 3.35 :.0f }}`` renders as ``295``.

Glossary and lesson text never types a derived number; it writes the arithmetic
from sourced inputs and this module evaluates it at load time. Only numeric
literals, + - * / // % **, unary signs, parentheses and a few pure functions
(min, max, round, abs, log2, log10, sqrt) are allowed: no names, no calls to
anything else, so a content file cannot run code. Lessons pass ``functions``: a
whitelist of model functions (``lessons/functions.py``) that take numbers and
quoted ids (``kv_bytes_per_token("llama-3-8b")``) and return a number.
"""

from __future__ import annotations

import ast
import math
import operator
import re
from collections.abc import Callable, Mapping

CALC_PATTERN = re.compile(r"\{\{\s*(?P<expr>[^{}]+?)\s*(?::(?P<fmt>[^{}:]*?))?\s*\}\}")

_BINARY = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.Div: operator.truediv,
    ast.FloorDiv: operator.floordiv,
    ast.Mod: operator.mod,
    ast.Pow: operator.pow,
}
_UNARY = {ast.UAdd: operator.pos, ast.USub: operator.neg}
_FUNCTIONS = {
    "min": min,
    "max": max,
    "round": round,
    "abs": abs,
    "log2": math.log2,
    "log10": math.log10,
    "sqrt": math.sqrt,
}


class CalcError(ValueError):
    """An expression in content text is not plain arithmetic, or fails to evaluate."""


def evaluate(expression: str, functions: Mapping[str, Callable[..., float]] | None = None) -> float:
    """Return the value of a plain arithmetic ``expression``.

    ``functions`` adds named functions callable with numbers and quoted strings (positional or
    keyword arguments); strings are allowed only as such arguments. Raises CalcError for
    anything else, or when a call fails.
    """
    allowed = _FUNCTIONS | dict(functions or {})
    try:
        tree = ast.parse(expression.strip(), mode="eval")
    except SyntaxError as exc:
        raise CalcError(f"not an arithmetic expression: {expression!r}") from exc

    def walk(node: ast.AST) -> float:
        if isinstance(node, ast.Expression):
            return walk(node.body)
        if isinstance(node, ast.Constant) and type(node.value) in (int, float):
            return node.value
        if isinstance(node, ast.BinOp) and type(node.op) in _BINARY:
            left, right = walk(node.left), walk(node.right)
            if isinstance(node.op, ast.Pow) and abs(right) > 64:
                raise CalcError(f"exponent too large in {expression!r}")
            return _BINARY[type(node.op)](left, right)
        if isinstance(node, ast.UnaryOp) and type(node.op) in _UNARY:
            return _UNARY[type(node.op)](walk(node.operand))
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in allowed:
            args = [argument(a) for a in node.args]
            kwargs = {k.arg: argument(k.value) for k in node.keywords if k.arg is not None}
            if len(kwargs) != len(node.keywords):
                raise CalcError(f"**kwargs are not allowed in {expression!r}")
            result = allowed[node.func.id](*args, **kwargs)
            if isinstance(result, bool) or not isinstance(result, (int, float)):
                raise CalcError(f"{node.func.id}(...) did not return a number in {expression!r}")
            return result
        raise CalcError(f"only arithmetic on numbers is allowed, got {expression!r}")

    def argument(node: ast.AST) -> float | str:
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and functions:
            return node.value
        return walk(node)

    try:
        return walk(tree)
    except (ZeroDivisionError, OverflowError, TypeError, ValueError, KeyError) as exc:
        if isinstance(exc, CalcError):
            raise
        raise CalcError(f"{expression!r} cannot be evaluated: {exc}") from exc


def render(text: str, functions: Mapping[str, Callable[..., float]] | None = None) -> str:
    """Replace every ``{{ expr :fmt }}`` in ``text`` with its formatted value.

    ``fmt`` is a Python format spec (default ``,.3g``); e.g. ``{{ 2*32*8*128*2 :,d }}``.
    Raises CalcError naming the expression that failed.
    """

    def substitute(match: re.Match[str]) -> str:
        value = evaluate(match.group("expr"), functions)
        fmt = (match.group("fmt") or ",.3g").strip()
        if fmt.endswith("d"):
            if abs(value - round(value)) > 1e-9:
                raise CalcError(f"{match.group('expr')!r} = {value} is not an integer but uses :{fmt}")
            value = round(value)
        try:
            return format(value, fmt)
        except ValueError as exc:
            raise CalcError(f"bad format {fmt!r} for {match.group('expr')!r}") from exc

    return CALC_PATTERN.sub(substitute, text)
