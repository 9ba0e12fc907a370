"""The Python worker's failures in the user's terms (harness/python_errors.py), on the CPU: real Triton compile
errors from a file that plays the submission, Triton's OutOfResources, NVRTC's log as CuPy raises it, and a
launch CUDA refuses."""

from __future__ import annotations

import sys
import types
from pathlib import Path

import pytest
from conftest import REPO, read_fixture
from submission_modules import import_from as load

from harness import python_errors


def line_of(path: Path, text: str) -> int:
    """The 1-based line of `path` that holds `text`."""
    return next(i for i, line in enumerate(path.read_text().splitlines(), 1) if text in line)


def raised(call) -> BaseException:
    try:
        call()
    except BaseException as error:  # what the worker catches
        return error
    raise AssertionError("nothing was raised")


def assert_users_terms(message: str) -> None:
    assert "\n" not in message and "Traceback" not in message and "python_worker" not in message, message
    assert "site-packages" not in message and "code_generator" not in message, message


# A submission whose kernels Triton's frontend refuses; solve compiles them for an H100 (sm_90), which needs no GPU.
TRITON_SUBMISSION = """\
    import triton
    import triton.language as tl
    from triton.backends.compiler import GPUTarget


    @triton.jit
    def scale(x):
        return x * missing_factor


    @triton.jit
    def calls_a_broken_function(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
        offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        x = tl.load(x_ptr + offsets, mask=offsets < n)
        tl.store(y_ptr + offsets, scale(x), mask=offsets < n)


    @triton.jit
    def stores_with_a_bad_argument(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
        offsets = tl.arange(0, BLOCK)
        x = tl.load(x_ptr + offsets)
        tl.store(y_ptr + offsets, x, mask=offsets < n, bogus=1)


    def solve(kernel):
        signature = {"x_ptr": "*fp32", "y_ptr": "*fp32", "n": "i32", "BLOCK": "constexpr"}
        source = triton.compiler.ASTSource(kernel, signature=signature, constexprs={"BLOCK": 128})
        triton.compile(source, target=GPUTarget("cuda", 90, 32))
"""


@pytest.fixture(scope="module")
def triton_submission(tmp_path_factory) -> tuple[Path, types.ModuleType]:
    pytest.importorskip("triton")
    path = tmp_path_factory.mktemp("triton") / "submission.py"
    return path, load(path, TRITON_SUBMISSION)


def test_a_triton_compile_error_names_the_submissions_line_and_tritons_message(triton_submission):
    path, module = triton_submission
    error = raised(lambda: module.solve(module.stores_with_a_bad_argument))
    assert python_errors.is_a(error, "triton", "CompilationError")
    message = python_errors.describe(error, str(path), "in solve")
    assert_users_terms(message)
    bad = line_of(path, "bogus=1")
    assert f"stores_with_a_bad_argument, line {bad} of the submission" in message, message
    assert "store() got an unexpected keyword argument 'bogus'" in message, message
    assert f"launched in solve, at line {line_of(path, 'triton.compile(source')} of the submission" in message
    assert python_errors.user_traceback(error, str(path)) == ""  # the message says it all


def test_a_triton_compile_error_inside_a_called_function_names_that_functions_line(triton_submission):
    path, module = triton_submission
    error = raised(lambda: module.solve(module.calls_a_broken_function))
    message = python_errors.describe(error, str(path), "in solve")
    assert_users_terms(message)
    assert f"scale, line {line_of(path, 'missing_factor')} of the submission" in message, message
    assert "missing_factor is not defined" in message, message


def test_a_triton_compile_error_while_loading_says_so(tmp_path):
    pytest.importorskip("triton")
    path = tmp_path / "submission.py"
    source = TRITON_SUBMISSION + "\n    solve(stores_with_a_bad_argument)\n"
    error = raised(lambda: load(path, source))
    message = python_errors.describe(error, str(path), "while loading")
    assert f"line {line_of(path, 'bogus=1')} of the submission" in message, message
    assert f"launched while loading, at line {line_of(path, 'triton.compile(source')}" in message  # the innermost


def test_tritons_out_of_resources_says_the_resource_what_was_asked_and_the_limit():
    errors = pytest.importorskip("triton.runtime.errors")
    message = python_errors.describe(errors.OutOfResources(262144, 232448, "shared memory"), "/nowhere.py", "in solve")
    assert message.startswith("out of resource: shared memory"), message  # the tutorial fixture's phrase
    assert "needs 262144 bytes" in message and "limit is 232448 bytes" in message, message


# NVRTC's log as CuPy's CompileException carries it: recorded with cupy-cuda12x 14.2.0 and NVRTC 12.9
# (nvidia-cuda-nvrtc-cu12) through cupy.cuda.compiler._NVRTCProgram.compile, the call a RawKernel's first launch
# makes, under the temporary file name CuPy gives the program (<tmp>/<hash>.cubin.cu). No GPU is needed for it.
KERNEL = """\
extern "C" __global__
void k(const float* a, float* b, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        float t = a[i];
        t = t * 2.0f;
        b[i] = x;
    }
}
"""
PROGRAM = "/tmp/tmpq1w2e3r4/5c0d2e9b7a1f4c3e8d6b0a9f7e2d1c4b.cubin.cu"
NVRTC_LOG = (
    f'{PROGRAM}(7): error: identifier "x" is undefined\n          b[i] = x;\n                 ^\n\n'
    f'1 error detected in the compilation of "{PROGRAM}".\n'
)
NVRTC_TWO_ERRORS_AND_A_WARNING = (
    f'{PROGRAM}(5): error: identifier "y" is undefined\n          b[i] = y + a[i];\n                 ^\n\n'
    f'{PROGRAM}(6): error: identifier "z" is undefined\n          b[i] += z;\n                  ^\n\n'
    f'{PROGRAM}(3): warning #177-D: variable "unused" was declared but never referenced\n      int unused = 3;\n'
    '          ^\n\nRemark: The warnings can be suppressed with "-diag-suppress <warning-number>"\n\n'
    f'2 errors detected in the compilation of "{PROGRAM}".\n'
)


def compile_exception() -> type[Exception]:
    """CuPy's CompileException where CuPy is installed; otherwise a class of that name, module and interface
    (cupy/cuda/compiler.py: __init__(msg, source, name, options, backend), str() is the log)."""
    try:
        from cupy.cuda.compiler import CompileException  # type: ignore[import-not-found]

        return CompileException
    except ImportError:

        class CompileException(Exception):
            def __init__(self, msg, source, name, options, backend="nvrtc"):
                self._msg, self.source, self.name, self.options, self.backend = msg, source, name, options, backend
                super().__init__()

            def __str__(self):
                return self._msg

        CompileException.__module__ = "cupy.cuda.compiler"
        return CompileException


def test_an_nvrtc_error_names_the_kernels_line_and_nvrtcs_message(tmp_path):
    exception = compile_exception()
    path = tmp_path / "submission.py"
    module = load(
        path,
        f"""\
        def solve(exception, log, source):
            raise exception(log, source, {PROGRAM!r}, ("-arch=sm_90",), "nvrtc")
        """,
    )
    error = raised(lambda: module.solve(exception, NVRTC_LOG, KERNEL))
    message = python_errors.describe(error, str(path), "in solve")
    assert_users_terms(message)
    assert "NVRTC could not compile the kernel: the kernel's line 7 (`b[i] = x;`)" in message, message
    assert 'error: identifier "x" is undefined' in message, message
    assert "compiled in solve, at line 2 of the submission" in message, message
    assert "/tmp/" not in message and "cubin" not in message, message  # CuPy's temporary file is not the user's


def test_an_nvrtc_error_names_the_first_error_and_counts_the_others():
    source = KERNEL.replace("int i =", "int unused = 3;\n    int i =")  # as the log's program, roughly
    error = compile_exception()(NVRTC_TWO_ERRORS_AND_A_WARNING, source, PROGRAM, (), "nvrtc")
    message = python_errors.describe(error, "/nowhere.py", "in solve")
    assert "the kernel's line 5" in message and 'identifier "y" is undefined (and 1 more)' in message, message
    assert "warning" not in message, message


def cupy_launch_failure(tmp_path, monkeypatch, said: str, attributes: dict) -> str:
    """describe() of a launch that raises CuPy's CUDADriverError with the text `said` (driver.pyx: the error's
    name and cuGetErrorString's text, joined by ': '), at the line of the submission that calls a RawKernel with
    `attributes`, on a device with an H100's limits."""

    class RawKernel:
        name = "row_softmax"

        def __init__(self):
            self.attributes = attributes

    class CUDADriverError(RuntimeError):
        pass

    RawKernel.__module__, CUDADriverError.__module__ = "cupy._core.raw", "cupy_backends.cuda.api.driver"
    properties = {
        "regsPerBlock": 65536,
        "sharedMemPerBlock": 49152,
        "sharedMemPerBlockOptin": 232448,
        "maxThreadsPerBlock": 1024,
    }
    runtime = types.SimpleNamespace(getDevice=lambda: 0, getDeviceProperties=lambda device: properties)
    monkeypatch.setitem(sys.modules, "cupy", types.SimpleNamespace(cuda=types.SimpleNamespace(runtime=runtime)))
    path = tmp_path / "submission.py"
    module = load(
        path,
        """\
        def solve(kernel, fails):
            kernel((1,), (1024,), (), shared_mem=0) if fails(kernel) else None
        """,
    )

    def fails(kernel):
        raise CUDADriverError(said)

    error = raised(lambda: module.solve(RawKernel(), fails))
    message = python_errors.describe(error, str(path), "in solve")
    assert_users_terms(message)
    assert "at line 2 of the submission" in message, message
    return message


def test_a_launch_with_too_many_registers_says_the_kernels_registers_and_the_limits(tmp_path, monkeypatch):
    message = cupy_launch_failure(
        tmp_path,
        monkeypatch,
        "CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES: too many resources requested for launch",
        {"num_regs": 128, "max_threads_per_block": 512, "shared_size_bytes": 0},
    )
    assert message.startswith("out of resources: registers"), message
    assert "row_softmax uses 128 registers a thread" in message and "at most 512 threads" in message, message
    assert "65536 registers a block" in message, message


def test_a_launch_above_the_shared_memory_limit_says_the_kernels_and_the_devices_figures(tmp_path, monkeypatch):
    message = cupy_launch_failure(
        tmp_path,
        monkeypatch,
        "CUDA_ERROR_INVALID_VALUE: invalid argument",
        {"shared_size_bytes": 1024, "max_dynamic_shared_size_bytes": 48128},
    )
    assert "shared memory" in message and "1024 bytes of static shared memory" in message, message
    assert "48128 bytes of dynamic shared memory" in message, message
    assert "49152 bytes a block, 232448 with max_dynamic_shared_size_bytes raised" in message, message


def test_another_error_names_the_innermost_line_of_the_submission_and_shows_only_its_frames(tmp_path):
    path = tmp_path / "submission.py"
    module = load(
        path,
        """\
        def helper(n):
            return 1 / n


        def solve(n):
            return helper(n)
        """,
    )
    error = raised(lambda: module.solve(0))
    message = python_errors.describe(error, str(path), "in solve")
    assert message == "ZeroDivisionError raised in solve, at line 2 of the submission: division by zero"
    shown = python_errors.user_traceback(error, str(path))
    assert shown.count(str(path)) == 2 and "test_python_errors" not in shown, shown
    assert shown.rstrip().endswith("ZeroDivisionError: division by zero"), shown


def test_the_triton_compile_error_fixtures_header_states_the_message_its_kernel_gives(tmp_path):
    # tests/adversarial/softmax/triton_compile_error.py runs on a GPU; its kernel's compile error needs none
    triton = pytest.importorskip("triton")
    from triton.backends.compiler import GPUTarget

    fixture = read_fixture(REPO / "tests/adversarial/softmax/triton_compile_error.py")
    path = tmp_path / "submission.py"
    module = load(path, fixture.path.read_text())
    signature = {"x": "*fp32", "y": "*fp32", "n": "i32", "BLOCK": "i32"}  # a launch with N = 5 (BLOCK 8)
    source = triton.compiler.ASTSource(module.softmax_rows, signature=signature)
    error = raised(lambda: triton.compile(source, target=GPUTarget("cuda", 90, 32)))
    message = python_errors.describe(error, str(path), "in solve")
    assert fixture.message in message and "arange's arguments must be of type tl.constexpr" in message, message
