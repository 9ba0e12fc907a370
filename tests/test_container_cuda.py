"""The CUDA grader image, for real, with no registry and no GPU: built on the locally made Debian base with nvcc,
its headers and the CUDA runtime from NVIDIA's wheels on PyPI (`make docker-cuda-local`), then every CUDA ladder
rung and every CUDA fixture compiled inside containers of it, by the image's nvcc; a compile error comes back
with the same diagnostics as outside; the supervised worker is built in the image and links the image's CUDA runtime.

Marked `docker` and `slow`, skipped with the reason where no engine answers (.ci/docker-setup.sh starts one);
.ci/docker-cuda.sh builds the image and runs this file.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from conftest import read_fixture

from grader.build import compiler
from grader.problems.catalog import load_problem
from grader.run import binaries
from grader.sandbox import container, docker_engine, docker_run
from grader.sandbox import local as sandbox
from grader.toolchain import detect

pytestmark = [pytest.mark.docker, pytest.mark.slow]

REPO = Path(__file__).resolve().parents[1]
CUDA_IMAGE = os.environ.get("KERNELJUDGE_TEST_CUDA_IMAGE", "kerneljudge-cuda:test")
TEST_BASE = os.environ.get("KERNELJUDGE_TEST_BASE", "kerneljudge-base:bookworm")
BUILD_TIMEOUT_S = 1800
LADDERS = sorted(REPO.glob("solutions/*/*.cu"))
FIXTURES = sorted(p for folder in ("tests/fixtures", "tests/adversarial") for p in (REPO / folder).rglob("*.cu"))
BROKEN = b"""__global__ void k(float* y) { y[threadIdx.x] = undeclared_name; }
void solve(const float* input, float* output, int M, int N) { k<<<1, 1>>>(output) }
"""


@pytest.fixture(scope="session")
def cuda_image() -> str:
    """The CUDA image, built once per session on the local base (reused when Docker's cache has it)."""
    version, why = container.engine()
    if version is None:
        pytest.skip(f"no Docker engine can be reached ({why}); .ci/docker-setup.sh installs and starts one")
    if not shutil.which("make") or not shutil.which("docker"):
        pytest.skip("the image is built through docker.mk, which needs make and the docker command")
    started = time.monotonic()
    built = subprocess.run(
        ["make", "--no-print-directory", "-f", str(REPO / "docker.mk"), "docker-cuda-local"]
        + [f"LOCAL_BASE={TEST_BASE}", f"CUDA_IMAGE={CUDA_IMAGE}"],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=BUILD_TIMEOUT_S,
    )
    if built.returncode != 0 and container.image_id(TEST_BASE) is None and not shutil.which("debootstrap"):
        pytest.skip(f"no base image and no debootstrap to make one:\n{built.stderr[-1000:]}")
    assert built.returncode == 0, f"building {CUDA_IMAGE} failed:\n{built.stdout[-4000:]}\n{built.stderr[-4000:]}"
    print(f"\n[{CUDA_IMAGE} ready in {time.monotonic() - started:.1f} s]")
    return CUDA_IMAGE


@pytest.fixture
def backend(cuda_image, tmp_path, monkeypatch):
    """The container Backend of the CUDA image, its builds in a cache of this test's own; records each argv."""
    monkeypatch.setenv("KERNELJUDGE_CACHE", str(tmp_path / "cache"))
    calls: list[list[str]] = []
    real_run = docker_run.run

    def recording(argv, workdir, **kwargs):
        calls.append(list(argv))
        return real_run(argv, workdir, **kwargs)

    monkeypatch.setattr(docker_run, "run", recording)
    chosen, _ = container.choose("docker", "cpu", image=cuda_image)  # cpu: no GPU here, nothing to run on one
    return chosen, calls


def _compile(backend, path: Path) -> compiler.Build:
    problem = read_fixture(path).problem if path in FIXTURES else path.parent.name
    return compiler.build_submission(load_problem(problem), path.read_bytes(), path.name, "cuda", run=backend)


def test_the_images_nvcc_compiles(backend):
    chosen, calls = backend
    assert chosen.compiler("cuda").startswith("Cuda compilation tools, release 13.0"), chosen.compiler("cuda")
    build = _compile(chosen, LADDERS[0])
    assert build.ok, build.log
    assert calls and calls[0][:4] == ["sh", "-c", calls[0][2], "sh"] and calls[0][4] == "nvcc", calls[0]


def test_every_ladder_rung_and_fixture_compiles_in_the_container(backend):
    chosen, _ = backend
    with ThreadPoolExecutor(max_workers=max(2, os.cpu_count() or 2)) as pool:
        builds = dict(zip(LADDERS + FIXTURES, pool.map(lambda p: _compile(chosen, p), LADDERS + FIXTURES)))
    wrong = []
    for path, build in builds.items():
        expected = "compile_error" not in (read_fixture(path).expect if path in FIXTURES else "")
        if build.ok != expected:
            wrong.append(f"{path.relative_to(REPO)}: {'compiled' if build.ok else build.log[-600:]}")
    assert not wrong, "\n".join(wrong)
    assert len(builds) == len(LADDERS) + len(FIXTURES) and len(LADDERS) >= 10


def test_a_compile_error_reads_the_same_inside_and_outside(backend):
    chosen, _ = backend
    if not detect().nvcc:
        pytest.skip("no nvcc on this host to compare with")
    problem = load_problem("softmax")
    inside = compiler.build_submission(problem, BROKEN, "broken.cu", "cuda", run=chosen)
    outside = compiler.build_submission(problem, BROKEN, "broken.cu", "cuda", run=sandbox.run)
    assert not inside.ok and not outside.ok
    assert 'broken.cu(1): error: identifier "undeclared_name" is undefined' in inside.log, inside.log
    host_version = detect().nvcc_version.split(", ")[-1]
    if host_version not in chosen.compiler("cuda"):
        pytest.skip(f"this host's nvcc ({host_version}) is not the image's: their messages may differ")
    assert inside.log == outside.log


def test_the_worker_links_the_images_cuda_runtime(backend, cuda_image):
    chosen, _ = backend
    built = binaries.worker("cuda", chosen)  # built in the image; its supervisor stays on the host
    workdir = sandbox.new_workdir(None)
    try:
        shutil.copy(built, workdir / "worker")
        (workdir / "worker").chmod(0o555)
        outcome = chosen(["ldd", "./worker"], workdir, limits=sandbox.Limits(wall_s=60))
    finally:
        sandbox.remove_workdir(workdir)
    assert outcome.returncode == 0, outcome.stderr
    linked = {line.split()[0]: line.split()[2] for line in outcome.stdout.splitlines() if " => " in line}
    assert linked["libcudart.so.13"].startswith("/usr/local/cuda"), outcome.stdout
    assert docker_engine.image_env(cuda_image)["LD_LIBRARY_PATH"].startswith("/usr/local/cuda")
