"""What goes into a minimal root on this host (grader.sandbox.views), found once per grader process.

The libraries are those the loader names for trusted programs only, never for a submission: the worker binary,
and a probe library built from a fixed source with the judge's own compile command and `--no-as-needed`, so that
every library that command links (the C and C++ runtimes, libm, libgcc_s, OpenMP; the CUDA runtime) is named,
whether or not a given submission uses it. A submission's library can need no other: the judge links it with
`-z defs` against those alone. The CUDA worker's view adds the driver's user-space libraries as the loader's
cache lists them (libcuda.so*, libnvidia-*.so*: the CUDA runtime opens libcuda by name, and libcuda its
JIT compiler) with the libraries they need, and the /dev/nvidia* device nodes.
"""

from __future__ import annotations

import functools
import glob
import hashlib
import os
import re
import shutil
import subprocess
import tempfile
from pathlib import Path

from grader import settings, tracks
from grader.sandbox import docker_gpu, views

PROBE_SOURCE = """\
#include <cmath>
#include <cstdio>
#include <stdexcept>
#include <string>
#include <vector>
extern "C" double kerneljudge_probe(int n) {
    std::vector<double> v(n);
    double s = 0;
#pragma omp parallel for reduction(+ : s)
    for (int i = 0; i < n; ++i) s += std::exp(static_cast<double>(i));
    if (s < 0) throw std::runtime_error(std::to_string(s));
    std::printf("%f", s);
    return s;
}
"""
NO_AS_NEEDED = {"g++": ["-Wl,--no-as-needed"], "nvcc": ["-Xlinker", "--no-as-needed"]}
_LDD_PATH = re.compile(r"(?:=>\s*)?(/\S+)\s+\(0x[0-9a-f]+\)")
LOADER_TIMEOUT_S = 60


class ViewError(RuntimeError):
    """The minimal root's contents could not be found on this host: the judge's failure, not the submission's."""


def loader_libraries(programs: list[Path], library_path: str = "", *, strict: bool = True) -> list[str]:
    """Every library the loader would map for these trusted programs (ldd), the loader itself included. A
    library the loader cannot find is an error when `strict`, else left out (the driver's graphics libraries
    need toolkits a compute host lacks; CUDA never loads them)."""
    env = {"PATH": "/usr/bin:/bin", **({"LD_LIBRARY_PATH": library_path} if library_path else {})}
    try:
        said = subprocess.run(
            ["ldd", *map(str, programs)], capture_output=True, text=True, env=env, timeout=LOADER_TIMEOUT_S
        )
    except (OSError, subprocess.TimeoutExpired) as error:
        raise ViewError(f"could not list the libraries of {', '.join(map(str, programs))}: {error}") from None
    if strict and (said.returncode != 0 or "not found" in said.stdout):
        raise ViewError(f"the loader cannot resolve every library of these programs: {said.stdout}{said.stderr}")
    return sorted(set(parse_ldd(said.stdout)))


def parse_ldd(text: str) -> list[str]:
    """The absolute paths ldd printed ("libc.so.6 => /lib/.../libc.so.6 (0x...)", "/lib64/ld-linux... (0x...)")."""
    return [m.group(1) for line in text.splitlines() if (m := _LDD_PATH.search(line))]


def driver_libraries(ldconfig_output: str) -> list[str]:
    """The NVIDIA driver's 64-bit user-space libraries listed in `ldconfig -p`'s output, by the path the loader
    finds them at (the prefixes the container's GPU access binds: grader.sandbox.docker_gpu)."""
    found = []
    for line in ldconfig_output.splitlines():
        name, _, rest = line.strip().partition(" (")
        kind, _, path = rest.partition(") => ")
        if name.startswith(docker_gpu.DRIVER_LIBRARIES) and ("x86-64" in kind or "64bit" in kind):
            found.append(path.strip())
    return sorted(set(found))


def nvidia_devices(dev: str = "/dev") -> list[str]:
    """The NVIDIA device nodes (/dev/nvidia0, nvidiactl, nvidia-uvm, nvidia-caps/*)."""
    found = [p for p in glob.glob(f"{dev}/nvidia*") if not os.path.isdir(p)]
    found += glob.glob(f"{dev}/nvidia-caps/*")
    return sorted(found)


@functools.lru_cache(maxsize=8)
def worker_view(track: str, worker: Path, compile_argv: tuple[str, ...], library_path: str = "") -> views.View:
    """The view of the compiled worker `worker` of `track` (the GPU's where its device is the GPU), whose
    submissions are built by `compile_argv` (the judge's compile command, without its input and output)."""
    probe = _probe_library(compile_argv)
    libraries = loader_libraries([worker, probe], library_path)
    if not tracks.get(track).device.gpu:
        return views.cpu_worker(libraries)
    driver = driver_libraries(_ldconfig())
    if driver:
        needed = loader_libraries([Path(p) for p in driver], library_path, strict=False)
        libraries = sorted({*libraries, *needed})
    return views.cuda_worker(libraries, driver, nvidia_devices())


@functools.lru_cache(maxsize=1)
def compile_view(compilers: tuple[str, ...]) -> views.View:
    """The compile's view: /usr, and the folder of each compiler's installation where it lies outside /usr."""
    folders = []
    for compiler in compilers:
        real = Path(compiler).resolve()
        if not str(real).startswith("/usr/"):
            folders.append(str(real.parent.parent))
    return views.compile_view(folders, compilers)


def _ldconfig() -> str:
    for ldconfig in ("/sbin/ldconfig", "/usr/sbin/ldconfig", shutil.which("ldconfig")):
        if ldconfig and os.path.exists(ldconfig):
            try:
                return subprocess.run([ldconfig, "-p"], capture_output=True, text=True, timeout=30).stdout
            except (OSError, subprocess.TimeoutExpired):
                continue
    return ""


def _probe_library(compile_argv: tuple[str, ...]) -> Path:
    """The probe built by `compile_argv` (cached by the command, in the grader's own cache folder)."""
    compiler = compile_argv[0]
    cuda = os.path.basename(compiler).startswith("nvcc")
    argv = [*compile_argv, *NO_AS_NEEDED["nvcc" if cuda else "g++"]]
    digest = hashlib.sha256("\0".join([*argv, PROBE_SOURCE]).encode()).hexdigest()[:32]
    folder = Path(settings.CACHE.get()) / "views" / digest
    target = folder / "probe.so"
    if target.is_file():
        return target
    folder.mkdir(parents=True, exist_ok=True)
    folder.parent.chmod(0o700)
    with tempfile.TemporaryDirectory() as scratch:
        source = Path(scratch) / ("probe.cu" if cuda else "probe.cpp")
        source.write_text(PROBE_SOURCE)
        built = Path(scratch) / "probe.so"
        try:
            said = subprocess.run(
                [*argv, str(source), "-o", str(built)], capture_output=True, text=True, timeout=300, cwd=scratch
            )
        except (OSError, subprocess.TimeoutExpired) as error:
            raise ViewError(f"could not build the library probe with {compiler}: {error}") from None
        if said.returncode != 0:
            raise ViewError(f"the library probe did not build with {' '.join(argv)}: {said.stderr[-2000:]}")
        with tempfile.NamedTemporaryFile(dir=folder, delete=False) as kept:
            kept.write(built.read_bytes())
    os.replace(kept.name, target)  # atomic: graders may build the same probe at once
    return target
