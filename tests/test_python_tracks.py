"""The Python tracks without a GPU: how a file's track is told, the signature and starter in Python types,
the import rules a submission is checked against before it runs, and `grader init` for triton and cupy."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from grader.build import python_check
from grader.problems import starter
from grader.problems.catalog import load_problem
from grader.tracks import of_file as track_of

REPO = Path(__file__).resolve().parents[1]
TRITON_HEAD = "import torch\nimport triton\nimport triton.language as tl\n\n"
CUPY_HEAD = "import cupy\n\n"


@pytest.fixture(scope="module")
def softmax():
    return load_problem("softmax")


def test_the_track_follows_the_extension_and_a_py_files_imports(tmp_path):
    files = {
        "k.cu": "",
        "k.cpp": "",
        "t.py": "import triton\n",
        "c.py": "from cupy import RawKernel\n",
        "both.py": "import triton\nimport cupy\n",
        "neither.py": "import math\n",
        "broken.py": "def (:\n",
    }
    for name, text in files.items():
        (tmp_path / name).write_text(text)
    found = {name: track_of(tmp_path / name) for name in files}
    assert found == {
        "k.cu": "cuda",
        "k.cpp": "cpu",
        "t.py": "triton",
        "c.py": "cupy",
        "both.py": None,
        "neither.py": None,
        "broken.py": None,
    }


def test_the_signature_is_written_in_each_tracks_python_types(softmax):
    assert softmax.prototype(track="triton") == (
        "def solve(input: torch.Tensor, output: torch.Tensor, M: int, N: int) -> None"
    )
    assert (
        softmax.prototype(track="cupy")
        == "def solve(input: cupy.ndarray, output: cupy.ndarray, M: int, N: int) -> None"
    )


def test_the_python_tracks_run_the_cuda_tests_and_benchmarks(softmax):
    assert softmax.tests_for("triton") == softmax.tests_for("cuda") == softmax.tests_for("cupy")
    assert softmax.benchmarks_for("triton") == softmax.benchmarks_for("cuda") != []


@pytest.mark.parametrize("track", ["triton", "cupy"])
def test_the_starter_states_the_rules_and_passes_its_own_check(softmax, track):
    text = starter.starter(softmax, track)
    assert "Not allowed:" in text and "May import:" in text
    assert softmax.prototype(track=track) + ":" in text
    result = python_check.check(softmax, text.encode(), "solve.py", track)
    assert (result.compile_error, result.refused) == ("", "")


def test_the_triton_starter_shows_an_autotuned_kernel_that_its_rules_accept(softmax):
    text = starter.starter(softmax, "triton")
    shown = [line.removeprefix("#     ") for line in text.splitlines() if line.startswith("#     ")]
    assert shown[0].startswith("@triton.autotune(") and shown[-2] == "@triton.jit"
    kernel = (
        "\n".join(shown)
        + """
    i = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(y + i, tl.load(x + i, mask=i < N), mask=i < N)

def solve(input, output, M, N):
    kernel[lambda meta: (triton.cdiv(M * N, meta["BLOCK"]),)](input, output, M * N)
"""
    )
    result = python_check.check(softmax, (TRITON_HEAD + kernel).encode(), "mine.py", "triton")
    assert (result.compile_error, result.refused) == ("", "")
    assert "Compiling and autotuning" in text  # the call rule that says where the tuning happens


def test_a_bfloat16_buffer_is_its_raw_bits_on_cupy():
    text = starter.starter(load_problem("gemm-fp16"), "cupy")
    assert "cupy.float16" in text  # gemm-fp16's inputs are half; CuPy has them
    assert "bfloat16 buffer is its raw bits (cupy.uint16)" in text


def _refusal(problem, body: str, track: str) -> str:
    head = TRITON_HEAD if track == "triton" else CUPY_HEAD
    result = python_check.check(problem, (head + body).encode(), "mine.py", track)
    assert not result.compile_error, result.compile_error
    return result.refused


HONEST_TRITON = """
@triton.jit
def kernel(x, y, n, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    row = tl.load(x + offsets, mask=offsets < n, other=-float("inf"))
    e = tl.exp(row - tl.max(row, axis=0))
    tl.store(y + offsets, (e / tl.sum(e, axis=0)).to(tl.float32), mask=offsets < n)

def solve(input, output, M, N):
    scratch = torch.empty((M,), dtype=torch.float32, device=input.device)
    kernel[(M,)](input, output, N, BLOCK=triton.next_power_of_2(N))
"""


def test_an_honest_triton_kernel_may_compute_inside_its_kernel(softmax):
    assert _refusal(softmax, HONEST_TRITON, "triton") == ""


@pytest.mark.parametrize(
    ("body", "named"),
    [
        ("def solve(input, output, M, N):\n    torch.softmax(input, 1, out=output)\n", "torch.softmax is not allowed"),
        ("import torch.nn.functional as F\ndef solve(input, output, M, N):\n    pass\n", "import torch.nn.functional"),
        (
            "def solve(input, output, M, N):\n    output.copy_(input.softmax(1))\n",
            ".copy_ is not allowed outside a kernel",
        ),
        ("def solve(input, output, M, N):\n    output.copy_(input @ input)\n", "`@`"),
        (
            "torch.cuda.Event.elapsed_time = lambda a, b: 0.001\ndef solve(input, output, M, N):\n    pass\n",
            "torch.cuda.Event.elapsed_time",
        ),
        (
            "import grader.judge.check\ndef solve(input, output, M, N):\n    pass\n",
            "`import grader.judge.check` is not allowed",
        ),
        ("def solve(input, output, M, N):\n    open('/etc/passwd').read()\n", "open is not allowed"),
        ("def solve(input, output, M, N):\n    getattr(torch, 'soft' + 'max')(input, 1)\n", "getattr is not allowed"),
        ("t = torch\ndef solve(input, output, M, N):\n    t.softmax(input, 1)\n", "the module torch may only be used"),
        ("def solve(input, output, M, N):\n    input.__class__\n", "__class__ is not allowed"),
        ("from torch import softmax\ndef solve(input, output, M, N):\n    pass\n", "torch.softmax is not allowed"),
        ("import os\ndef solve(input, output, M, N):\n    pass\n", "`import os` is not allowed"),
        ("def solve(input, output, M, N):\n    torch.cuda.comm.reduce_add([input])\n", "torch.cuda.comm"),
        ("def solve(input, output, M, N):\n    kernel._compile()\n", "the attribute _compile is not allowed"),
    ],
)
def test_the_triton_track_refuses_library_solves_and_reaching_around_the_rules(softmax, body, named):
    refused = _refusal(softmax, body, "triton")
    assert refused.startswith("the submission breaks its track's rules:")
    assert named in refused
    assert "Triton track: solve receives PyTorch CUDA tensors" in refused  # the rules come with the refusal


def test_the_official_triton_fused_softmax_tutorial_passes_the_rules(softmax):
    # device properties through triton.runtime.driver, warmup and _init_handles: nothing in it computes the answer
    # outside its kernel, and with the judge's clock outside the worker nothing in it can forge a time
    source = (REPO / "tests/adversarial/softmax/triton_tutorial_fused_softmax.py").read_bytes()
    result = python_check.check(softmax, source, "tutorial.py", "triton")
    assert (result.compile_error, result.refused) == ("", "")


@pytest.mark.parametrize(
    "body",
    [
        "def solve(input, output, M, N):\n    s = torch.cuda.Stream()\n    with torch.cuda.stream(s):\n        pass\n"
        "    torch.cuda.synchronize()\n",
        "import triton.testing\ndef solve(input, output, M, N):\n    pass\n"
        "ms = triton.testing.do_bench(lambda: None)\n",
        "def solve(input, output, M, N):\n    e = torch.cuda.Event(enable_timing=True)\n    e.record()\n",
    ],
    ids=["streams", "do_bench", "events"],
)
def test_the_triton_track_allows_streams_events_and_its_own_benchmarks(softmax, body):
    assert _refusal(softmax, body, "triton") == ""


@pytest.mark.parametrize(
    ("body", "named"),
    [
        ("def solve(input, output, M, N):\n    cupy.matmul(input, input, out=output)\n", "cupy.matmul is not allowed"),
        ("def solve(input, output, M, N):\n    output[...] = cupy.linalg.norm(input)\n", "cupy.linalg.norm"),
        ("def solve(input, output, M, N):\n    output[...] = input.sum(axis=1)\n", ".sum is not allowed"),
        ("def solve(input, output, M, N):\n    cupy.cuda.cublas.sgemm()\n", "cupy.cuda.cublas"),
        ("def solve(input, output, M, N):\n    output.set(input.get())\n", ".get is not allowed"),
    ],
)
def test_the_cupy_track_refuses_library_routines(softmax, body, named):
    assert named in _refusal(softmax, body, "cupy")


def test_an_honest_cupy_raw_kernel_passes(softmax):
    body = (
        'K = cupy.RawKernel(r"""extern "C" __global__ void k(const float* x, float* y, int n) {}""", "k")\n'
        "def solve(input, output, M, N):\n"
        "    K(((M + 255) // 256,), (256,), (input, output, cupy.int32(N)))\n"
    )
    assert _refusal(softmax, body, "cupy") == ""


@pytest.mark.parametrize(
    ("source", "said"),
    [
        ("import triton\ndef solve(input, output, M, N)\n    pass\n", "mine.py:2:"),
        ("import triton\ndef solve_it(input, output, M, N):\n    pass\n", "no top-level function solve"),
        ("import triton\ndef solve(input, output):\n    pass\n", "solve takes 2 positional arguments"),
    ],
)
def test_a_source_that_cannot_be_called_is_a_compile_error_naming_the_line_or_the_signature(softmax, source, said):
    result = python_check.check(softmax, source.encode(), "mine.py", "triton")
    assert said in result.compile_error
    if "positional" in said or "no top-level" in said:
        assert "def solve(input: torch.Tensor, output: torch.Tensor, M: int, N: int) -> None" in result.compile_error


@pytest.mark.parametrize("track", ["triton", "cupy"])
def test_grader_init_writes_the_tracks_starter(tmp_path, track):
    run = subprocess.run(
        [sys.executable, "-m", "grader.cli.main", "init", "softmax", "--track", track],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        env={"PATH": "/usr/bin:/bin", "PYTHONPATH": str(REPO)},
    )
    assert run.returncode == 0, run.stderr
    written = tmp_path / "softmax.py"
    assert f"wrote softmax.py ({track} track)" in run.stdout
    assert track_of(written) == track  # the file says its own track: `grader test softmax softmax.py` finds it


def test_a_py_file_that_names_no_framework_asks_for_the_track(tmp_path):
    run = subprocess.run(
        [sys.executable, "-m", "grader.cli.main", "init", "softmax", "-o", "mine.py"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        env={"PATH": "/usr/bin:/bin", "PYTHONPATH": str(REPO)},
    )
    assert run.returncode == 2
    assert "--track triton or --track cupy" in run.stderr + run.stdout


@pytest.fixture
def private_folder():
    """A fresh 0700 folder in /tmp, whose parents others can search (pytest's own tmp_path lies under a private
    folder, which would be what blocks)."""
    folder = Path(tempfile.mkdtemp(dir="/tmp"))
    yield folder
    shutil.rmtree(folder)


def test_what_the_sandboxs_uid_cannot_reach_is_named(private_folder):
    from grader.sandbox.reachable import blocked

    private_folder.chmod(0o755)
    private = private_folder / "home"
    private.mkdir(mode=0o700)
    (private / "python").write_bytes(b"")
    secret = private_folder / "secret"
    secret.write_text("")
    secret.chmod(0o600)
    assert blocked(Path("/bin/sh"), execute=True) == ""
    assert blocked(private / "python", execute=True) == f"{private} is drwx------"
    assert blocked(secret) == f"{secret} is -rw-------"


@pytest.mark.skipif(os.geteuid() != 0, reason="the sandbox switches to a uid of its own only when run as root")
def test_an_interpreter_the_sandbox_cannot_run_is_the_judges_failure_not_the_submissions(
    softmax, monkeypatch, private_folder
):
    """A venv made from pyenv under a 0700 /root: the worker died with `Permission denied` on the interpreter,
    which the verdict charged to the submission as a runtime error."""
    from grader.judge import pipeline
    from grader.run.supervised import JudgeError

    home = private_folder  # 0700, like a private home
    (home / "python3").write_bytes(b"")
    monkeypatch.setattr(sys, "executable", str(home / "python3"))
    source = (REPO / "solutions" / "softmax" / "02_triton_online.py").read_bytes()
    with pytest.raises(JudgeError) as refused:
        pipeline.grade(softmax, source, "02_triton_online.py", track="triton", sandbox_kind="local")
    said = str(refused.value)
    assert f"runs this interpreter ({home / 'python3'}) as the sandbox's uid" in said
    assert f"{home} is drwx------" in said and "make setup PYTHON=/usr/bin/python3" in said
