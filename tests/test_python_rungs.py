"""The Python tracks' reference rungs (solutions/*/*.py): each passes its track's compile stage (byte-compiled,
solve's signature, the track's rules), and the CUDA source of each CuPy RawKernel or RawModule compiles with nvcc
and, where a libnvrtc is found (KJ_NVRTC names one, else the nvidia wheels' or the system's), with NVRTC as CuPy
compiles it. CuPy compiles only on the GPU, at the first call, so a typo would otherwise surface there; NVRTC is
the stricter of the two (no math.h, so no INFINITY; no host functions). Their numerics are checked on the CPU by
scripts/triton_interpret_rungs.py (Triton) or on the GPU."""

from __future__ import annotations

import ast
import ctypes
import ctypes.util
import os
import site
import subprocess
from pathlib import Path

import pytest

from grader.build import python_check
from grader.problems.catalog import load_problem
from grader.toolchain import detect
from grader.tracks import of_file as track_of
from harness.python_frameworks import CupyFramework

SOLUTIONS = Path(__file__).resolve().parents[1] / "solutions"
RUNGS = sorted(SOLUTIONS.glob("*/[0-9]*.py"))
CUPY_RUNGS = [path for path in RUNGS if track_of(path) == "cupy"]
KERNEL_CLASSES = {"RawKernel", "RawModule"}


def _name(path: Path) -> str:
    return f"{path.parent.name}/{path.name}"


def test_the_python_ladders_are_found():
    names = {_name(path) for path in RUNGS}
    for problem in ["vector-add", "softmax", "matmul", "attention"]:
        for track in ["triton", "cupy"]:
            assert len([n for n in names if n.startswith(f"{problem}/") and f"_{track}_" in n]) >= 2, (problem, track)


@pytest.mark.parametrize("path", RUNGS, ids=_name)
def test_each_python_rung_passes_its_tracks_compile_stage(path):
    track = track_of(path)
    assert track in ("triton", "cupy")
    checked = python_check.check(load_problem(path.parent.name), path.read_bytes(), path.name, track)
    assert (checked.compile_error, checked.refused) == ("", "")


def _kernel_sources(path: Path) -> list[str]:
    """The CUDA text given to each cupy.RawKernel(code, ...) or cupy.RawModule(code=...) of the file."""
    tree = ast.parse(path.read_text())
    constants = {  # NAME = "..." at the module's top level
        target.id: node.value
        for node in tree.body
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Constant)
        for target in node.targets
        if isinstance(target, ast.Name)
    }
    sources = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in KERNEL_CLASSES:
            code = node.args[0] if node.args else next(k.value for k in node.keywords if k.arg == "code")
            code = constants.get(code.id, code) if isinstance(code, ast.Name) else code
            assert isinstance(code, ast.Constant) and isinstance(code.value, str), f"{path}: the code is not a literal"
            sources.append(code.value)
    return sources


@pytest.mark.parametrize("path", CUPY_RUNGS, ids=_name)
def test_each_cupy_kernel_source_compiles_as_cuda(path, tmp_path):
    if not detect().nvcc:
        pytest.skip("no nvcc")
    sources = _kernel_sources(path)
    if path.name != "02_cupy_elementwise.py":  # an ElementwiseKernel's body is not a translation unit
        assert sources, f"{path}: no RawKernel or RawModule"
    for i, source in enumerate(sources):
        assert _nvcc_errors(source, tmp_path / f"kernel{i}.cu") == "", f"{_name(path)} kernel {i}"


def _nvcc_errors(source: str, unit: Path) -> str:
    """nvcc's complaints about a kernel source ('' if it compiles): -arch=sm_90 as the H100 compiles it;
    -Werror=all-warnings keeps NVRTC's stricter cases (an unused variable is a warning in both) visible."""
    unit.write_text(source)
    compiled = subprocess.run(
        ["nvcc", "-arch=sm_90", "-Werror=all-warnings", "-c", str(unit), "-o", str(unit.with_suffix(".o"))],
        capture_output=True,
        text=True,
    )
    return "" if compiled.returncode == 0 else compiled.stderr


def _nvrtc() -> ctypes.CDLL | None:
    candidates = [os.environ.get("KJ_NVRTC", "")]
    for root in site.getsitepackages():
        candidates += sorted(str(p) for p in Path(root).glob("nvidia/*/lib/libnvrtc.so*") if "alt" not in p.name)
    candidates.append(ctypes.util.find_library("nvrtc") or "")
    for candidate in filter(None, candidates):
        try:
            for builtins in sorted(Path(candidate).parent.glob("libnvrtc-builtins.so*")):  # dlopened by soname
                ctypes.CDLL(str(builtins), mode=ctypes.RTLD_GLOBAL)
            return ctypes.CDLL(candidate)
        except OSError:
            continue
    return None


@pytest.mark.parametrize("path", CUPY_RUNGS, ids=_name)
def test_each_cupy_kernel_source_compiles_with_nvrtc(path):
    nvrtc = _nvrtc()
    if nvrtc is None:
        pytest.skip("no libnvrtc (KJ_NVRTC=/path/to/libnvrtc.so names one)")
    for i, source in enumerate(_kernel_sources(path)):
        assert _nvrtc_errors(nvrtc, source) == "", f"{_name(path)} kernel {i}"


def _nvrtc_errors(nvrtc: ctypes.CDLL, source: str) -> str:
    """NVRTC's log for a kernel source that does not compile, as CuPy would compile it; '' if it does."""
    program = ctypes.c_void_p()
    assert nvrtc.nvrtcCreateProgram(ctypes.byref(program), source.encode(), b"kernel.cu", 0, None, None) == 0
    options = (ctypes.c_char_p * 1)(b"--gpu-architecture=sm_90")
    status = nvrtc.nvrtcCompileProgram(program, 1, options)
    size = ctypes.c_size_t()
    nvrtc.nvrtcGetProgramLogSize(program, ctypes.byref(size))
    log = ctypes.create_string_buffer(size.value)
    nvrtc.nvrtcGetProgramLog(program, log)
    nvrtc.nvrtcDestroyProgram(ctypes.byref(program))
    return "" if status == 0 else log.value.decode() or f"status {status}"


@pytest.mark.parametrize("name", ["TOUCH", "SPIN"])
def test_the_cupy_workers_calibration_kernels_compile(name, tmp_path):
    # compiled in the worker before any submission code, so a typo would only show on a GPU, for every submission
    source = getattr(CupyFramework, name)
    if detect().nvcc:
        assert _nvcc_errors(source, tmp_path / "kernel.cu") == ""
    nvrtc = _nvrtc()
    if nvrtc is None and not detect().nvcc:
        pytest.skip("neither nvcc nor libnvrtc")
    if nvrtc is not None:
        assert _nvrtc_errors(nvrtc, source) == ""
