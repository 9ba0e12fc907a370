"""The layout's rules, checked on the source (docs/architecture.md): no import cycle between grader's modules,
nothing below grader/cli/ prints, every KERNELJUDGE_* variable is read through grader/settings.py, and no module
grows past 300 lines without saying why at its top.

The import graph counts every import, at module level or inside a function (a late import is still a
dependency); `from grader.x import y` is an edge to grader.x.y when that is a module, else to grader.x.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

GRADER = Path(__file__).resolve().parents[1] / "grader"
MAX_LINES = 300
LONG_REASON = "Longer than 300 lines"  # the phrase a long module's docstring uses to say why


def _modules() -> dict[str, Path]:
    found = {}
    for path in sorted(GRADER.rglob("*.py")):
        parts = path.relative_to(GRADER.parent).with_suffix("").parts
        if "migrations" in parts and "versions" in parts:
            continue  # Alembic revisions are data, not part of the graph
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        found[name] = path
    return found


MODULES = _modules()


def _imports(name: str, path: Path) -> set[str]:
    tree = ast.parse(path.read_text(), str(path))
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    edges: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                base = ".".join(
                    package.split(".")[: len(package.split(".")) - node.level + 1] + ([base] if base else [])
                )
            targets = [f"{base}.{alias.name}" if f"{base}.{alias.name}" in MODULES else base for alias in node.names]
        else:
            continue
        edges.update(t for t in targets if t in MODULES and t != name)
    return edges


def _cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One import cycle, as the list of modules along it, or None (depth-first search with colours)."""
    colour = dict.fromkeys(graph, 0)
    stack: list[str] = []

    def visit(node: str) -> list[str] | None:
        colour[node] = 1
        stack.append(node)
        for nxt in sorted(graph[node]):
            if colour[nxt] == 1:
                return [*stack[stack.index(nxt) :], nxt]
            if colour[nxt] == 0 and (found := visit(nxt)):
                return found
        stack.pop()
        colour[node] = 2
        return None

    for start in sorted(graph):
        if colour[start] == 0 and (found := visit(start)):
            return found
    return None


def test_the_cycle_finder_finds_a_cycle():
    assert _cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert _cycle({"a": {"b"}, "b": set()}) is None


def test_no_import_cycle_between_grader_modules():
    # A package's __init__ importing its own submodules is how packages re-export; only module-to-module
    # edges that are not parent-package edges can form a cycle worth reporting.
    graph = {
        name: {t for t in _imports(name, path) if not name.startswith(t + ".") and not t.startswith(name + ".")}
        for name, path in MODULES.items()
    }
    cycle = _cycle(graph)
    assert cycle is None, "import cycle: " + " -> ".join(cycle or [])


def _calls_print(path: Path) -> list[int]:
    lines = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Call):
            func = node.func
            if (isinstance(func, ast.Name) and func.id == "print") or (
                isinstance(func, ast.Attribute) and func.attr == "print" and not isinstance(func.value, ast.Constant)
            ):
                lines.append(node.lineno)
    return lines


@pytest.mark.parametrize(
    "name", [n for n in MODULES if not n.startswith("grader.cli") and n != "grader.cli"], ids=lambda n: n
)
def test_only_the_cli_prints(name):
    assert not _calls_print(MODULES[name]), f"{MODULES[name]} prints at lines {_calls_print(MODULES[name])}"


@pytest.mark.parametrize("name", list(MODULES), ids=lambda n: n)
def test_environment_is_read_only_through_settings(name):
    if name == "grader.settings":
        return
    text = MODULES[name].read_text()
    for line_number, line in enumerate(text.splitlines(), 1):
        code = line.split("#", 1)[0]
        assert not ('"KERNELJUDGE_' in code and ("environ" in code or "getenv" in code)), (
            f"{MODULES[name]}:{line_number} reads a KERNELJUDGE_* variable directly; use grader.settings"
        )


@pytest.mark.parametrize("name", list(MODULES), ids=lambda n: n)
def test_long_modules_say_why(name):
    path = MODULES[name]
    lines = len(path.read_text().splitlines())
    docstring = ast.get_docstring(ast.parse(path.read_text())) or ""
    assert lines <= MAX_LINES or LONG_REASON in docstring, (
        f"{path} has {lines} lines: split it, or say at its top why not ('{LONG_REASON}: ...')"
    )


@pytest.mark.parametrize("name", list(MODULES), ids=lambda n: n)
def test_every_module_has_a_docstring(name):
    path = MODULES[name]
    if path.name == "__init__.py" and not path.read_text().strip():
        return  # an empty package marker
    assert ast.get_docstring(ast.parse(path.read_text())), f"{path} has no module docstring"


# The stages' packages from the bottom up (docs/architecture.md, "Layers"): a package may import its own layer's
# base modules and anything below it, never above. Packages on one line are peers that must not import each other
# (the base modules at the bottom excepted: settings is read by the others).
LAYERS = [
    [
        "grader",
        "grader.settings",
        "grader.identity",
        "grader.toolchain",
        "grader.torch_import",
        "grader.python_ast",
        "grader.interrupts",
    ],
    ["grader.tracks"],
    ["grader.verdict"],
    ["grader.problems"],
    ["grader.sandbox"],
    ["grader.build"],
    ["grader.run"],
    ["grader.perf"],
    ["grader.judge"],
    ["grader.profile", "grader.records"],
    ["grader.scale", "grader.study"],
    ["grader.site"],
    ["grader.web"],
    ["grader.cli"],
]


def _package(module: str) -> str:
    parts = module.split(".")
    return ".".join(parts[:2]) if len(parts) > 1 else module


def _layer(package: str) -> int:
    for index, layer in enumerate(LAYERS):
        if package in layer:
            return index
    raise AssertionError(f"{package} is in no layer of tests/test_architecture.py LAYERS: place it there")


def _upward_imports() -> list[str]:
    found = []
    for name, path in MODULES.items():
        here = _package(name)
        for target in _imports(name, path):
            there = _package(target)
            if here == there or there == "grader":
                continue
            if _layer(there) > _layer(here) or (_layer(there) == _layer(here) and _layer(here) > 0):
                found.append(f"{name} -> {target}")
    return sorted(found)


def test_every_package_has_a_layer():
    for name in MODULES:
        _layer(_package(name))


def test_layers_point_one_way():
    upward = _upward_imports()
    assert not upward, "imports that point up or sideways between layers:\n" + "\n".join(upward)


# grader.scale holds one subpackage per way of grading many (docs/architecture.md): they share grader.scale's own
# modules (jobs, topology, lifetime) and never import one another.
SCALE_FEATURES = ["grader.scale.warm", "grader.scale.batch", "grader.scale.distributed"]


def _feature(module: str) -> str | None:
    return next((f for f in SCALE_FEATURES if module == f or module.startswith(f + ".")), None)


def _imports_between_scale_features() -> list[str]:
    found = []
    for name, path in MODULES.items():
        here = _feature(name)
        for target in _imports(name, path) if name.startswith("grader.scale") else ():
            there = _feature(target)
            if (here is None and there is not None) or (here and there and here != there):
                found.append(f"{name} -> {target}")
    return sorted(found)


def test_scale_features_stand_apart():
    between = _imports_between_scale_features()
    assert not between, "imports between grader.scale's features (or from its shared modules into one):\n" + (
        "\n".join(between)
    )


def test_the_scale_check_sees_one_feature_import_another(tmp_path, monkeypatch):
    planted = tmp_path / "planted.py"
    planted.write_text('"""planted."""\nfrom grader.scale.batch import grade_many\n')
    monkeypatch.setitem(MODULES, "grader.scale.warm.planted", planted)
    assert "grader.scale.warm.planted -> grader.scale.batch.grade_many" in _imports_between_scale_features()


def test_the_layer_check_sees_an_upward_import(tmp_path, monkeypatch):
    # the rule's own test: a planted import of grader.cli from grader.verdict is reported
    planted = tmp_path / "planted.py"
    planted.write_text('"""planted."""\nfrom grader.cli import output\n')
    monkeypatch.setitem(MODULES, "grader.verdict.planted", planted)
    assert "grader.verdict.planted -> grader.cli.output" in _upward_imports()
