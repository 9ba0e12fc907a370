"""Safe evaluation of the size formulas in problem specs ("M * N", "2 * sqrt(K)", "M*N <= 2**28")."""

import ast
import math
import operator

_BINARY = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.Div: operator.truediv,
    ast.FloorDiv: operator.floordiv,
    ast.Pow: operator.pow,
    ast.Mod: operator.mod,
}
_COMPARE = {ast.Lt: operator.lt, ast.LtE: operator.le, ast.Gt: operator.gt, ast.GtE: operator.ge, ast.Eq: operator.eq}
_FUNCTIONS = {"sqrt": math.sqrt, "log2": math.log2, "min": min, "max": max, "ceil": math.ceil}


def names_in(expression: str) -> set[str]:
    """The variable names an expression uses (function names excluded)."""
    tree = ast.parse(str(expression), mode="eval")
    called = {n.func.id for n in ast.walk(tree) if isinstance(n, ast.Call) and isinstance(n.func, ast.Name)}
    return {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)} - called


def evaluate(expression, variables: dict) -> float:
    """Evaluate an arithmetic or comparison formula over `variables`; anything else raises ValueError."""
    if isinstance(expression, (int, float)):
        return expression
    try:
        tree = ast.parse(str(expression), mode="eval")
    except SyntaxError as error:
        raise ValueError(f"not a formula: {expression!r}") from error
    return _eval(tree.body, variables, expression)


def _eval(node, variables, source):
    if isinstance(node, ast.Constant) and isinstance(node.value, (int, float)):
        return node.value
    if isinstance(node, ast.Name):
        if node.id not in variables:
            raise ValueError(f"unknown name {node.id!r} in {source!r}")
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
            right = _eval(right_node, variables, source)
            if type(op) not in _COMPARE or not _COMPARE[type(op)](left, right):
                return False
            left = right
        return True
    raise ValueError(f"unsupported syntax in {source!r}")
