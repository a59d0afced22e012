"""Computed numbers inside Markdown: ``{{ 989.5 / 3.35 :.0f }}`` renders as ``295``.

Glossary and lesson text never types a derived number; it writes the arithmetic
from sourced inputs and this module evaluates it at load time. Only numeric
literals, + - * / // % **, unary signs, parentheses and a few pure functions
(min, max, round, abs, log2, log10, sqrt) are allowed: no names, no calls to
anything else, so a content file cannot run code. Lessons pass ``functions``: a
whitelist of model functions (``lessons/functions.py``) that take numbers and
quoted ids (``kv_bytes_per_token("llama-3-8b")``) and return a number.

A lesson question with variants also passes ``names``: its inputs (``gpu`` →
``"h200"``, ``batch`` → 64), usable wherever a literal is, and ``labels``: functions
that return text (``{{ gpu_name(gpu) }}`` → "H200 SXM"), allowed only as a whole
``{{ }}`` in rendered text. Comparisons (``a > b``) give 1 or 0.
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
_COMPARE = {
    ast.Lt: operator.lt,
    ast.LtE: operator.le,
    ast.Gt: operator.gt,
    ast.GtE: operator.ge,
    ast.Eq: operator.eq,
    ast.NotEq: operator.ne,
}
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


Value = float | int | str


def evaluate(
    expression: str,
    functions: Mapping[str, Callable[..., float]] | None = None,
    names: Mapping[str, Value] | None = None,
) -> float:
    """Return the value of a plain arithmetic ``expression``.

    ``functions`` adds named functions callable with numbers and quoted strings (positional or
    keyword arguments); strings are allowed only as such arguments. ``names`` binds inputs: a
    number may stand anywhere a literal may, a string only where a quoted string may. Raises
    CalcError for anything else, or when a call fails.
    """
    allowed = _FUNCTIONS | dict(functions or {})
    bound = dict(names or {})
    try:
        tree = ast.parse(expression.strip(), mode="eval")
    except SyntaxError as exc:
        raise CalcError(f"not an arithmetic expression: {expression!r}") from exc

    def walk(node: ast.AST) -> float:
        if isinstance(node, ast.Expression):
            return walk(node.body)
        if isinstance(node, ast.Constant) and type(node.value) in (int, float):
            return node.value
        if isinstance(node, ast.Name) and node.id in bound and node.id not in allowed:
            value = bound[node.id]
            if isinstance(value, bool) or not isinstance(value, (int, float)):
                raise CalcError(f"{node.id} is text ({value!r}): only a function takes it, in {expression!r}")
            return value
        if isinstance(node, ast.Compare) and len(node.ops) == 1 and type(node.ops[0]) in _COMPARE:
            return int(_COMPARE[type(node.ops[0])](walk(node.left), walk(node.comparators[0])))
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
        if isinstance(node, ast.Name) and isinstance(bound.get(node.id), str) and functions:
            return bound[node.id]
        return walk(node)

    try:
        return walk(tree)
    except (ZeroDivisionError, OverflowError, TypeError, ValueError, KeyError) as exc:
        if isinstance(exc, CalcError):
            raise
        raise CalcError(f"{expression!r} cannot be evaluated: {exc}") from exc


_LABEL_CALL = re.compile(r"^\s*([a-z_][a-z0-9_]*)\s*\(")


def render(
    text: str,
    functions: Mapping[str, Callable[..., float]] | None = None,
    names: Mapping[str, Value] | None = None,
    labels: Mapping[str, Callable[..., str]] | None = None,
) -> str:
    """Replace every ``{{ expr :fmt }}`` in ``text`` with its formatted value.

    ``fmt`` is a Python format spec (default ``,.3g``; ``,d`` for a bare whole-number input);
    e.g. ``{{ 2*32*8*128*2 :,d }}``. ``{{ label(args) }}`` with a function of ``labels`` inserts
    its text; ``{{ name }}`` of a text input inserts it as it is. Raises CalcError naming the
    expression that failed.
    """
    bound = dict(names or {})
    texts = dict(labels or {})

    def substitute(match: re.Match[str]) -> str:
        expr = match.group("expr").strip()
        call = _LABEL_CALL.match(expr)
        if call and call.group(1) in texts:
            if match.group("fmt"):
                raise CalcError(f"{expr!r} is text: it takes no format")
            return _label(expr, texts, functions, bound)
        if expr in bound and isinstance(bound[expr], str):
            return str(bound[expr])
        value = evaluate(expr, functions, bound)
        default = ",d" if expr in bound and isinstance(bound[expr], int) else ",.3g"
        fmt = (match.group("fmt") or default).strip()
        if fmt.endswith("d"):
            if abs(value - round(value)) > 1e-9:
                raise CalcError(f"{match.group('expr')!r} = {value} is not an integer but uses :{fmt}")
            value = round(value)
        try:
            return format(value, fmt)
        except ValueError as exc:
            raise CalcError(f"bad format {fmt!r} for {match.group('expr')!r}") from exc

    return CALC_PATTERN.sub(substitute, text)


def _label(
    expr: str,
    labels: Mapping[str, Callable[..., str]],
    functions: Mapping[str, Callable[..., float]] | None,
    names: Mapping[str, Value],
) -> str:
    """The text of ``label(arg, …)``: its arguments are evaluated like a function's."""
    try:
        node = ast.parse(expr, mode="eval").body
    except SyntaxError as exc:
        raise CalcError(f"not an expression: {expr!r}") from exc
    if not isinstance(node, ast.Call) or not isinstance(node.func, ast.Name) or node.keywords:
        raise CalcError(f"{expr!r}: a text function takes positional arguments only")
    args: list[Value] = []
    for arg in node.args:
        if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
            args.append(arg.value)
        elif isinstance(arg, ast.Name) and isinstance(names.get(arg.id), str):
            args.append(names[arg.id])
        else:
            args.append(evaluate(ast.unparse(arg), functions, names))
    try:
        result = labels[node.func.id](*args)
    except (KeyError, TypeError, ValueError) as exc:
        raise CalcError(f"{expr!r} cannot be evaluated: {exc}") from exc
    if not isinstance(result, str):
        raise CalcError(f"{node.func.id}(...) did not return text in {expr!r}")
    return result
