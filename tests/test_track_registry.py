"""A track is one object (grader/tracks/): a new one is its own definition and one registration, and nothing
else in grader/ names a track.

The toy track below is defined here, in the test, as a C++ variant (its files end in .toy, g++ told the
language) and registered with one call; then `--track`, the file's implied track, `grader init`'s starter, the
web API's starters and a real grading in the local sandbox know it, with no other file edited. The AST scan at
the end is what keeps it so: no module of grader/ outside grader/tracks/ writes a registered track's name as a
string, so no stage can decide anything by comparing names.
"""

from __future__ import annotations

import ast
import dataclasses
import importlib
import json
import re
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from grader import tracks
from grader.build import compiler
from grader.cli.main import app
from grader.problems import starter
from grader.problems.catalog import load_problem
from grader.toolchain import Toolchain
from grader.tracks import cpu
from grader.tracks.base import Starter

GRADER = Path(__file__).resolve().parents[1] / "grader"
REPO = GRADER.parent
runner = CliRunner()


def _toy_command(tools: Toolchain) -> list[str]:
    """The CPU track's g++ command, told that a .toy file is C++."""
    gxx, *flags = cpu.TRACK.compiled.command(tools)
    return [gxx, "-x", "c++", *flags]


assert cpu.TRACK.compiled is not None
TOY = dataclasses.replace(
    cpu.TRACK,
    name="toy",
    title="Toy C++",
    extensions=(".toy",),
    starter=Starter("// the toy track's own header\n", "Toy pointers are host pointers."),
    compiled=dataclasses.replace(cpu.TRACK.compiled, command=_toy_command),
)


@pytest.fixture
def toy(monkeypatch):
    """The registry with the toy track added (the one line a new track adds to grader/tracks/__init__.py)."""
    monkeypatch.setattr(tracks, "_REGISTRY", dict(tracks._REGISTRY))
    tracks.register(TOY)
    return TOY


@pytest.fixture
def private_folders(tmp_path, monkeypatch):
    for name in ("DATA", "CACHE", "RUNS"):
        (tmp_path / name).mkdir()
        monkeypatch.setenv(f"KERNELJUDGE_{name}", str(tmp_path / name))


def test_the_built_in_tracks_are_registered_in_order():
    assert tracks.names() == ("cuda", "cpu", "triton", "cupy")
    assert [t.device.name for t in tracks.every()] == ["cuda", "cpu", "cuda", "cuda"]
    assert [t.name for t in tracks.every() if t.is_python] == ["triton", "cupy"]


def test_a_track_is_compiled_or_python_never_both_or_neither():
    with pytest.raises(ValueError, match="exactly one of"):
        dataclasses.replace(TOY, compiled=None)
    with pytest.raises(ValueError, match="registered already"):
        tracks.register(cpu.TRACK)


def test_an_unknown_track_is_named_with_the_known_ones():
    with pytest.raises(KeyError, match=re.escape("unknown track 'fortran' (tracks: cuda, cpu, triton, cupy)")):
        tracks.get("fortran")


def test_a_registered_toy_track_is_chosen_by_its_extension_and_by_name(toy, tmp_path):
    assert tracks.of_file(tmp_path / "mine.toy") == "toy"
    assert tracks.of_file(tmp_path / "mine.cpp") == "cpu"  # the others keep theirs
    result = runner.invoke(app, ["init", "vector-add", "--track", "fortran", "-o", str(tmp_path / "x.toy")])
    assert result.exit_code == 2 and "unknown track 'fortran'" in result.output and "toy" in result.output


def test_grader_init_writes_the_toy_tracks_starter(toy, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    result = runner.invoke(app, ["init", "vector-add", "--track", "toy"])
    assert result.exit_code == 0, result.output
    written = (tmp_path / "vector-add.toy").read_text()  # the track's own extension
    assert "(toy track)" in written and "// the toy track's own header" in written
    assert "Toy pointers are host pointers." in written
    assert "void solve(const float* A, const float* B, float* C, int N)" in written


def test_the_web_api_offers_the_toy_starter(toy):
    from grader.web import api

    starters = api.problem("vector-add")["starters"]
    assert list(starters) == ["cuda", "cpu", "triton", "cupy", "toy"]
    assert starters["toy"] == starter.starter(load_problem("vector-add"), "toy")
    assert "// the toy track's own header" in starters["toy"]


def test_the_toy_track_compiles_with_its_own_command(toy, private_folders):
    if shutil.which("g++") is None:
        pytest.skip("no g++")
    problem = load_problem("vector-add")
    source = (REPO / "solutions" / "vector-add" / "01_naive.cpp").read_bytes()
    build = compiler.build_submission(problem, source, "mine.toy", "toy")
    assert build.ok, build.log
    assert build.library is not None and build.library.is_file()


@pytest.mark.slow
def test_a_toy_track_submission_is_graded_and_accepted(toy, private_folders, tmp_path):
    if shutil.which("g++") is None:
        pytest.skip("no g++")
    path = tmp_path / "mine.toy"
    shutil.copyfile(REPO / "solutions" / "vector-add" / "01_naive.cpp", path)
    result = runner.invoke(app, ["test", "vector-add", str(path), "--json"])
    verdict = json.loads(result.stdout)
    assert verdict["track"] == "toy" and verdict["status"] == "accepted", verdict["message"]
    assert "-x c++" in verdict["toolchain"]["flags"]


# --- the enforcement: no module outside grader/tracks/ names a track ---------------------------------------------

# Strings equal to a track's name that are not track names, each with why. Kept short on purpose: a new entry
# needs a reason a reviewer accepts.
NOT_TRACK_NAMES = {
    "grader/problems/python_rules.py": {"cuda", "cpu"},  # tensor methods a Python submission may not call
    "grader/sandbox/docker_command.py": {"cpu"},  # Docker's name of the CPU-time rlimit
    "grader/settings.py": {"cuda"},  # the GPU jobs' Celery queue's default name (settings sits below tracks)
}


def _torch_device_strings(tree: ast.AST) -> set[int]:
    """ids of the string constants that name a PyTorch device (torch.device("cuda"), device="cpu", a parameter
    `device` defaulting to "cpu", x.device.type == "cpu"): devices of PyTorch, not tracks."""
    found: set[int] = set()

    def mark(node: ast.AST | None) -> None:
        for inner in ast.walk(node) if node is not None else ():
            if isinstance(inner, ast.Constant):
                found.add(id(inner))

    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            func = node.func
            if isinstance(func, ast.Attribute) and func.attr == "device" and getattr(func.value, "id", "") == "torch":
                for arg in node.args:
                    mark(arg)
            for keyword in node.keywords:
                if keyword.arg == "device":
                    mark(keyword.value)
        elif isinstance(node, ast.arguments):
            positional = [*node.posonlyargs, *node.args]
            for arg, default in zip(positional[len(positional) - len(node.defaults) :], node.defaults, strict=True):
                if arg.arg == "device":
                    mark(default)
            for arg, kw_default in zip(node.kwonlyargs, node.kw_defaults, strict=True):
                if arg.arg == "device":
                    mark(kw_default)
        elif isinstance(node, ast.Compare):
            sides = [node.left, *node.comparators]
            if any(isinstance(side, ast.Attribute) and side.attr == "type" for side in sides):
                for side in sides:
                    mark(side)
    return found


def track_names_written(source: str, where: str, names: set[str]) -> list[str]:
    """'where:line: 'name'' for each string constant of `source` (the module at `where`, relative to the
    repository) equal to one of `names`, PyTorch's devices and NOT_TRACK_NAMES aside."""
    tree = ast.parse(source, where)
    devices = _torch_device_strings(tree)
    allowed = NOT_TRACK_NAMES.get(where, set())
    return [
        f"{where}:{node.lineno}: {node.value!r}"
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant)
        and node.value in names
        and node.value not in allowed
        and id(node) not in devices
    ]


def _outside_the_tracks_package() -> list[Path]:
    return [p for p in sorted(GRADER.rglob("*.py")) if (GRADER / "tracks") not in p.parents]


def test_no_module_outside_the_tracks_package_writes_a_track_name(toy):
    names = set(tracks.names())  # the toy's too: a stage that special-cased it by name would be found
    found = [
        line
        for path in _outside_the_tracks_package()
        for line in track_names_written(path.read_text(), path.relative_to(REPO).as_posix(), names)
    ]
    assert not found, "ask the Track (grader.tracks.get(name)) instead of comparing names:\n" + "\n".join(found)


def test_every_exception_is_still_needed():
    names = set(tracks.names())
    for relative, allowed in NOT_TRACK_NAMES.items():
        tree = ast.parse((REPO / relative).read_text())
        used = {n.value for n in ast.walk(tree) if isinstance(n, ast.Constant) and n.value in names}
        assert allowed <= used, f"{relative} no longer writes {sorted(allowed - used)}: drop it from NOT_TRACK_NAMES"


def test_the_scan_finds_a_planted_comparison_and_spares_pytorch_devices():
    planted = (
        '"""planted."""\n'
        "import torch\n"
        "def f(track, device='cpu'):\n"
        "    torch.zeros(1, device='cuda')\n"
        "    if torch.device('cuda' if track else 'cpu').type == 'cpu':\n"
        "        return 0\n"
        "    return 1 if track == 'cupy' else 2\n"
    )
    assert track_names_written(planted, "grader/judge/planted.py", set(tracks.names())) == [
        "grader/judge/planted.py:7: 'cupy'"
    ]


def test_a_built_in_track_is_its_own_file_and_one_line_in_the_registry():
    """Every module of grader/tracks/ that defines a TRACK is registered by its name in BUILT_IN, and nothing
    else is: a new track is that file and that one line."""
    defining = {p.stem for p in (GRADER / "tracks").glob("*.py") if re.search(r"^TRACK\b", p.read_text(), re.M)}
    assert defining == set(tracks.BUILT_IN)
    modules = [importlib.import_module(f"grader.tracks.{name}") for name in tracks.BUILT_IN]
    assert tracks.names()[: len(modules)] == tuple(module.TRACK.name for module in modules)
