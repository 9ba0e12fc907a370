"""A problem's reference.py: checked at load without running it, imported (with PyTorch) on first use.

`check` compiles the file and looks for a top-level `reference`, so a syntax error or a missing function is a
SpecError when the spec loads, at no cost in imports; `load` imports it when grading, selftest or bench first
needs it, and turns whatever goes wrong then into the same kind of SpecError, naming the file and the line.
"""

from __future__ import annotations

import ast
import importlib.util
import traceback
from pathlib import Path
from types import ModuleType

from grader import python_ast
from grader.problems.errors import SpecError


def check(path: Path) -> None:
    """Compile reference.py without running it: a SpecError if it is missing, does not parse, or never
    defines `reference` at its top level (one with `import *` is given the benefit of the doubt)."""
    if not path.is_file():
        raise SpecError(f"{path}: missing: every problem needs a reference")
    try:
        tree = python_ast.parse_module(path.read_bytes(), str(path))
        compile(tree, str(path), "exec")  # what parsing lets through: `return` outside a function, etc.
    except SyntaxError as error:
        raise SpecError(f"{path}:{error.lineno}: syntax error: {error.msg}") from error
    except (ValueError, OSError) as error:
        raise SpecError(f"{path}: cannot be read as Python: {error}") from error
    names = top_level_names(tree.body)
    if "reference" not in names and "*" not in names:
        raise SpecError(f"{path}: defines no `reference` function")


def top_level_names(body: list[ast.stmt]) -> set[str]:
    """The names a module's statements bind outside any function or class (including in if/try/with blocks),
    with "*" for a star import."""
    names: set[str] = set()
    for node in body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            names.update((alias.asname or alias.name).split(".")[0] for alias in node.names)
        elif isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            names.update(n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name))
        else:
            for field in ("body", "orelse", "finalbody", "handlers"):
                names |= top_level_names(getattr(node, field, []))
    return names


def load(path: Path, module_name: str) -> ModuleType:
    """Import reference.py; any failure is a SpecError naming the file and, where there is one, the line
    (the same message whether the file was broken before load_problem compiled it or after)."""
    if not path.is_file():
        raise SpecError(f"{path}: missing: every problem needs a reference")
    module_spec = importlib.util.spec_from_file_location(module_name, path)
    if module_spec is None or module_spec.loader is None:
        raise SpecError(f"{path}: cannot be imported")
    module = importlib.util.module_from_spec(module_spec)
    try:
        module_spec.loader.exec_module(module)
    except SyntaxError as error:
        raise SpecError(f"{path}:{error.lineno}: syntax error: {error.msg}") from error
    except Exception as error:
        frames = [f for f in traceback.extract_tb(error.__traceback__) if f.filename == str(path)]
        line = f":{frames[-1].lineno}" if frames else ""
        raise SpecError(f"{path}{line}: {type(error).__name__} while importing: {error}") from error
    if not callable(getattr(module, "reference", None)):
        raise SpecError(f"{path}: defines no `reference` function")
    return module
