"""Safe evaluation of the size formulas in problem specs ("M * N", "2 * sqrt(K)", "M*N <= 2**28").

Every failure, a name that is not a size, syntax that is not arithmetic or a division by zero alike, is a
FormulaError (a ValueError) naming the formula, so a spec's loader can say which field holds it.
"""

from __future__ import annotations

import ast
import math
import operator
from collections.abc import Callable
from typing import Any

from grader import python_ast

_BINARY: dict[type[ast.operator], Callable[[Any, Any], Any]] = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.Div: operator.truediv,
    ast.FloorDiv: operator.floordiv,
    ast.Pow: operator.pow,
    ast.Mod: operator.mod,
}
_COMPARE: dict[type[ast.cmpop], Callable[[Any, Any], bool]] = {
    ast.Lt: operator.lt,
    ast.LtE: operator.le,
    ast.Gt: operator.gt,
    ast.GtE: operator.ge,
    ast.Eq: operator.eq,
}
_FUNCTIONS: dict[str, Callable[..., Any]] = {
    "sqrt": math.sqrt,
    "log2": math.log2,
    "min": min,
    "max": max,
    "ceil": math.ceil,
}

Formula = str | int | float


class FormulaError(ValueError):
    """A formula that cannot be evaluated; the message quotes it."""


def names_in(expression: Formula) -> set[str]:
    """The variable names an expression uses (function names excluded)."""
    tree = _parse(expression)
    called = {n.func.id for n in ast.walk(tree) if isinstance(n, ast.Call) and isinstance(n.func, ast.Name)}
    return {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)} - called


def evaluate(expression: Formula, variables: dict) -> float:
    """Evaluate an arithmetic or comparison formula over `variables` (a comparison gives a bool)."""
    if isinstance(expression, (int, float)):
        return expression
    try:
        value = _eval(_parse(expression).body, variables, expression)
    except ZeroDivisionError as error:
        raise FormulaError(f"{expression!r} divides by zero") from error
    except (ArithmeticError, TypeError, ValueError) as error:
        if isinstance(error, FormulaError):
            raise
        raise FormulaError(f"{expression!r} cannot be evaluated: {error}") from error
    if not isinstance(value, (int, float)):  # (-1) ** 0.5 is complex
        raise FormulaError(f"{expression!r} is not a real number ({value})")
    return value


def count(expression: Formula, variables: dict) -> int:
    """A formula that must give a whole number >= 0 (a shape's dimension): its value as an int."""
    value = evaluate(expression, variables)
    if isinstance(value, bool) or not math.isfinite(value) or value < 0 or value != int(value):
        raise FormulaError(f"{expression!r} is {value:g}, not a whole number >= 0")
    return int(value)


def amount(expression: Formula, variables: dict) -> float:
    """A formula that must give a finite number >= 0 (a tolerance, a count of flops or bytes)."""
    value = evaluate(expression, variables)
    if isinstance(value, bool) or not math.isfinite(value) or value < 0:
        raise FormulaError(f"{expression!r} is {value}, not a finite number >= 0")
    return float(value)


def holds(expression: Formula, variables: dict) -> bool:
    """A formula that must be a comparison (a constraint): whether it holds."""
    value = evaluate(expression, variables)
    if not isinstance(value, bool):
        raise FormulaError(f"{expression!r} is not a comparison (such as 'N <= 1024')")
    return value


def _parse(expression: Formula) -> ast.Expression:
    try:
        return python_ast.parse_expression(str(expression))
    except SyntaxError as error:
        raise FormulaError(f"not a formula: {expression!r}") from error


def _eval(node: ast.AST, variables: dict, source: Formula) -> Any:
    if isinstance(node, ast.Constant) and isinstance(node.value, (int, float)) and not isinstance(node.value, bool):
        return node.value
    if isinstance(node, ast.Name):
        if node.id not in variables:
            raise FormulaError(f"unknown name {node.id!r} in {source!r}")
        return variables[node.id]
    if isinstance(node, ast.BinOp) and type(node.op) in _BINARY:
        return _BINARY[type(node.op)](_eval(node.left, variables, source), _eval(node.right, variables, source))
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        return -_eval(node.operand, variables, source)
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in _FUNCTIONS:
        return _FUNCTIONS[node.func.id](*(_eval(a, variables, source) for a in node.args))
    if isinstance(node, ast.Compare):
        left = _eval(node.left, variables, source)
        for op, right_node in zip(node.ops, node.comparators):
            if type(op) not in _COMPARE:
                raise FormulaError(f"unsupported comparison in {source!r}")
            right = _eval(right_node, variables, source)
            if not _COMPARE[type(op)](left, right):
                return False
            left = right
        return True
    raise FormulaError(f"unsupported syntax in {source!r}")
