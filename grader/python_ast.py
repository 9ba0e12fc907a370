"""Python's parser behind one lock, for every part of the grader that reads Python source as a tree.

CPython 3.11 keeps the state of the C-to-Python tree conversion per interpreter, so two threads in `ast.parse` at
once can fail with "SystemError: AST constructor recursion depth mismatch" (a web server's request threads, or
a thread pool loading problems). A lock around the parse costs nothing next to the parse.
"""

from __future__ import annotations

import ast
import threading

_LOCK = threading.Lock()


def parse_module(source: str | bytes, filename: str = "<unknown>") -> ast.Module:
    with _LOCK:
        return ast.parse(source, filename=filename)


def parse_expression(source: str) -> ast.Expression:
    with _LOCK:
        return ast.parse(source, mode="eval")
