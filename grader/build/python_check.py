"""The compile stage of the Python tracks: byte-compile the submission and check it against its track's rules.

Nothing of the submission runs here: the source is compiled to bytecode (a syntax error is a compile error,
with its line) and its syntax tree is read. The rules (grader/problems/python_rules.py) hold on the names the
source writes: what it imports, which attributes of those modules it reaches, that no module is passed around
as a value (so no name the check did not see can be reached through it), no attribute starting with `_`, no
builtin that reaches objects by a name made at run time (getattr, eval, ...), no tensor method that computes
and no `@` outside a kernel. Bodies of kernels (`@triton.jit`) are compiled by Triton, not run by Python: the
compute rules do not apply inside them, the others do. What a name cannot show (operators on tensors, `x + y`)
is refused at run time by harness/python_guard.py.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field

from grader import python_ast
from grader.problems.python_rules import (
    ALLOWED_PRIVATE_ATTRIBUTES,
    COMPUTE_METHODS,
    FORBIDDEN_BUILTINS,
    Rules,
    rules_for,
)
from grader.problems.spec import Problem

MAX_FINDINGS = 5  # shown in the verdict's message
ALLOWED_DUNDER_NAMES = frozenset({"__name__"})


@dataclass
class Result:
    compile_error: str = ""  # the source does not compile, or has no usable solve
    refused: str = ""  # it compiles, but breaks the track's rules


def check(problem: Problem, source: bytes, filename: str, track: str) -> Result:
    """Byte-compile `source` and check it against `track`'s rules and `problem`'s signature."""
    try:
        text = source.decode("utf-8")
        compile(text, filename, "exec", dont_inherit=True)
        tree = python_ast.parse_module(text, filename)
    except SyntaxError as error:
        return Result(compile_error=f"{filename}:{error.lineno}:{error.offset or 0}: syntax error: {error.msg}")
    except (ValueError, UnicodeDecodeError) as error:
        return Result(compile_error=f"{filename}: cannot be compiled: {error}")
    except (RecursionError, MemoryError):
        return Result(compile_error=f"{filename}: nested too deeply to be compiled")
    signature_error = _solve_error(problem, tree, filename, track)
    if signature_error:
        return Result(compile_error=signature_error)
    rules = rules_for(track)
    checker = _Checker(rules)
    checker.visit(tree)
    if not checker.findings:
        return Result()
    shown = checker.findings[:MAX_FINDINGS]
    more = len(checker.findings) - len(shown)
    lines = [f"{filename}:{line}: {message}" for line, message in shown]
    lines += [f"... and {more} more"] if more else []
    lines.append(f"The {track} track's rules (also in the starter: grader init {problem.slug} --track {track}):")
    lines.append(rules.summary)
    return Result(refused="the submission breaks its track's rules:\n" + "\n".join(lines))


def _solve_error(problem: Problem, tree: ast.Module, filename: str, track: str) -> str:
    """Why the module's `solve` cannot be called with the problem's arguments ('' when it can)."""
    expected = problem.prototype(track=track)
    solve = next((n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == "solve"), None)
    if solve is None:
        return f"{filename}: no top-level function solve; kerneljudge calls `{expected}`"
    arguments = solve.args
    positional = len(arguments.posonlyargs) + len(arguments.args)
    takes = positional == len(problem.signature) or (arguments.vararg and positional <= len(problem.signature))
    required_keywords = any(default is None for default in arguments.kw_defaults)
    if not takes or required_keywords:
        return (
            f"{filename}:{solve.lineno}: solve takes {positional} positional arguments; kerneljudge calls `{expected}`"
        )
    return ""


@dataclass
class _Checker(ast.NodeVisitor):
    rules: Rules
    aliases: dict[str, str] = field(default_factory=dict)  # a name bound by an import -> what it stands for
    findings: list[tuple[int, str]] = field(default_factory=list)
    in_kernel: int = 0

    def refuse(self, node: ast.AST, message: str) -> None:
        self.findings.append((getattr(node, "lineno", 0), message))

    # --- imports ------------------------------------------------------------------------------------------

    def visit_Import(self, node: ast.Import) -> None:
        for alias in node.names:
            if alias.name not in self.rules.modules:
                self.refuse(node, f"`import {alias.name}` is not allowed on the {self.rules.track} track")
                continue
            if alias.asname:
                self.aliases[alias.asname] = alias.name
            else:
                root = alias.name.split(".")[0]
                self.aliases[root] = root

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        module = node.module or ""
        if node.level or module not in self.rules.modules:
            self.refuse(
                node, f"`from {'.' * node.level}{module} import ...` is not allowed on the {self.rules.track} track"
            )
            return
        for alias in node.names:
            full = f"{module}.{alias.name}"
            if alias.name == "*":
                self.refuse(node, f"`from {module} import *` is not allowed: import the names you use")
            elif full in self.rules.modules or self._reachable(full):
                self.aliases[alias.asname or alias.name] = full
            else:
                self.refuse(node, f"{full} is not allowed on the {self.rules.track} track")

    # --- names and attributes -----------------------------------------------------------------------------

    def _reachable(self, dotted: str) -> bool:
        if any(part.startswith("_") for part in dotted.split(".")):
            return False
        if dotted in self.rules.allowed or dotted in self.rules.namespaces:
            return True
        return any(dotted.startswith(space + ".") for space in self.rules.namespaces)

    def _module_value(self, dotted: str) -> bool:
        """Whether a name stands for a module whose attributes are checked one by one (not a namespace)."""
        return dotted in self.rules.modules and not self._reachable(dotted)

    def visit_Name(self, node: ast.Name) -> None:
        if node.id in FORBIDDEN_BUILTINS:
            self.refuse(node, f"{node.id} is not allowed: it reaches names the check cannot see")
        elif node.id.startswith("__") and node.id not in ALLOWED_DUNDER_NAMES:
            self.refuse(node, f"{node.id} is not allowed")
        elif node.id in self.aliases and self._module_value(self.aliases[node.id]):
            self.refuse(node, f"the module {self.aliases[node.id]} may only be used through its allowed names")

    def visit_Attribute(self, node: ast.Attribute) -> None:
        dotted = self._module_chain(node)
        if dotted is not None:
            if not self._reachable(dotted):
                self.refuse(node, f"{dotted} is not allowed on the {self.rules.track} track")
            elif not isinstance(node.ctx, ast.Load):
                self.refuse(node, f"{dotted} may not be assigned or deleted")
            return
        if node.attr.startswith("_") and node.attr not in ALLOWED_PRIVATE_ATTRIBUTES:
            self.refuse(node, f"the attribute {node.attr} is not allowed (no attribute starting with _)")
        elif node.attr in COMPUTE_METHODS and not self.in_kernel:
            self.refuse(
                node,
                f".{node.attr} is not allowed outside a kernel: compute in your own kernels "
                f"(the {self.rules.track} track's rules)",
            )
        self.generic_visit(node)

    def _module_chain(self, node: ast.Attribute) -> str | None:
        """'torch.cuda.Event' for an attribute chain that starts at an imported module, else None."""
        parts = [node.attr]
        value = node.value
        while isinstance(value, ast.Attribute):
            parts.append(value.attr)
            value = value.value
        if isinstance(value, ast.Name) and value.id in self.aliases:
            return ".".join([self.aliases[value.id], *reversed(parts)])
        return None

    # --- operators and kernels ----------------------------------------------------------------------------

    def visit_BinOp(self, node: ast.BinOp) -> None:
        if isinstance(node.op, ast.MatMult) and not self.in_kernel:
            self.refuse(node, "`@` (a library matrix product) is not allowed outside a kernel")
        self.generic_visit(node)

    def visit_AugAssign(self, node: ast.AugAssign) -> None:
        if isinstance(node.op, ast.MatMult) and not self.in_kernel:
            self.refuse(node, "`@=` (a library matrix product) is not allowed outside a kernel")
        self.generic_visit(node)

    def visit_FunctionDef(self, node: ast.FunctionDef) -> None:
        for decorator in node.decorator_list:
            self.visit(decorator)
        kernel = any(self._is_kernel_decorator(d) for d in node.decorator_list)
        self.in_kernel += kernel
        for child in (node.args, *node.body, *([node.returns] if node.returns else [])):
            self.visit(child)
        self.in_kernel -= kernel

    visit_AsyncFunctionDef = visit_FunctionDef  # type: ignore[assignment]

    def _is_kernel_decorator(self, decorator: ast.expr) -> bool:
        target = decorator.func if isinstance(decorator, ast.Call) else decorator
        if isinstance(target, ast.Name):
            dotted = self.aliases.get(target.id)
        elif isinstance(target, ast.Attribute):
            dotted = self._module_chain(target)
        else:
            dotted = None
        return dotted in self.rules.kernel_decorators
