"""The minimal root of the compiled workers and of the compile (grader.sandbox.views, minimal_root,
runtime_libraries): its plan as data, the CUDA worker's too (checked here without a GPU), and, as root, what a
program in it can and cannot reach: none of the host's files or libraries, nothing it wrote mapped executable.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from grader.build import compiler
from grader.problems.catalog import load_problem
from grader.run import binaries
from grader.sandbox import layers, local, runtime_libraries, views
from grader.sandbox.base import Limits
from grader.toolchain import detect

HOST = {  # a merged-/usr host as links: path -> target
    "/lib": "usr/lib",
    "/lib64": "usr/lib64",
    "/bin": "usr/bin",
    "/usr/lib64/ld-linux-x86-64.so.2": "/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2",
    "/usr/lib/x86_64-linux-gnu/libcuda.so.1": "libcuda.so.580.65.06",
}
LDD = """\
\tlinux-vdso.so.1 (0x00007ffd6b3f2000)
\tlibcudart.so.13 => /usr/local/cuda-13.0/lib/libcudart.so.13 (0x00007f0d1c000000)
\tlibstdc++.so.6 => /lib/x86_64-linux-gnu/libstdc++.so.6 (0x00007f0d1bc00000)
\tlibc.so.6 => /lib/x86_64-linux-gnu/libc.so.6 (0x00007f0d1ba1e000)
\t/lib64/ld-linux-x86-64.so.2 (0x00007f0d1c3f5000)
"""
LDCONFIG = """\
1234 libs found in cache `/etc/ld.so.cache'
\tlibnvidia-ptxjitcompiler.so.1 (libc6,x86-64) => /lib/x86_64-linux-gnu/libnvidia-ptxjitcompiler.so.1
\tlibnvidia-ml.so.1 (libc6,x86-64) => /lib/x86_64-linux-gnu/libnvidia-ml.so.1
\tlibcuda.so.1 (libc6,x86-64) => /usr/lib/x86_64-linux-gnu/libcuda.so.1
\tlibcudart.so.13 (libc6,x86-64) => /usr/local/cuda-13.0/lib/libcudart.so.13
\tlibopenblas.so.0 (libc6,x86-64) => /lib/x86_64-linux-gnu/libopenblas.so.0
"""


def test_a_path_through_links_is_shown_at_its_real_place_and_the_links_are_recreated():
    links, real = views.resolve("/lib64/ld-linux-x86-64.so.2", HOST.get)
    assert real == "/usr/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2"
    assert [(s.path, s.target) for s in links] == [
        ("/lib64", "usr/lib64"),
        ("/usr/lib64/ld-linux-x86-64.so.2", "/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2"),
        ("/lib", "usr/lib"),
    ]
    with pytest.raises(ValueError, match="too many symbolic links"):
        views.resolve("/loop", {"/loop": "/loop"}.get)


def test_the_cuda_workers_plan_shows_its_libraries_the_drivers_and_its_devices_only(tmp_path):
    for name in ("nvidia0", "nvidiactl", "nvidia-uvm", "nvidia-caps/nvidia-cap1", "null"):
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).touch()
    libraries = runtime_libraries.parse_ldd(LDD)
    driver = runtime_libraries.driver_libraries(LDCONFIG)
    devices = runtime_libraries.nvidia_devices(str(tmp_path))
    view = views.cuda_worker(libraries, driver, devices)
    steps = views.plan(view, HOST.get)
    shown = {s.path: s.kind for s in steps if s.kind != "link"}
    assert driver == [
        "/lib/x86_64-linux-gnu/libnvidia-ml.so.1",
        "/lib/x86_64-linux-gnu/libnvidia-ptxjitcompiler.so.1",
        "/usr/lib/x86_64-linux-gnu/libcuda.so.1",
    ]
    assert shown == {
        "/sys": "folder",
        "/usr/local/cuda-13.0/lib/libcudart.so.13": "file",
        "/usr/lib/x86_64-linux-gnu/libstdc++.so.6": "file",
        "/usr/lib/x86_64-linux-gnu/libc.so.6": "file",
        "/usr/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2": "file",
        "/usr/lib/x86_64-linux-gnu/libnvidia-ml.so.1": "file",
        "/usr/lib/x86_64-linux-gnu/libnvidia-ptxjitcompiler.so.1": "file",
        "/usr/lib/x86_64-linux-gnu/libcuda.so.580.65.06": "file",
        **{str(tmp_path / n): "device" for n in ("nvidia-caps/nvidia-cap1", "nvidia-uvm", "nvidia0", "nvidiactl")},
    }
    assert {(s.path, s.target) for s in steps if s.kind == "link"} >= {
        ("/lib", "usr/lib"),
        ("/usr/lib/x86_64-linux-gnu/libcuda.so.1", "libcuda.so.580.65.06"),
    }
    assert "libopenblas" not in str(steps)
    assert view.library_path().split(":") == [
        "/lib/x86_64-linux-gnu",
        "/lib64",
        "/usr/lib/x86_64-linux-gnu",
        "/usr/local/cuda-13.0/lib",
    ]


def test_the_compile_view_is_usr_and_toolchains_outside_it():
    view = views.compile_view(["/opt/nvidia/cuda-13.0", "/usr/local/cuda-13.0"])
    assert view.folders == ("/bin", "/lib", "/lib64", "/opt/nvidia/cuda-13.0", "/sbin", "/usr")
    steps = views.plan(view, HOST.get)
    assert [s.path for s in steps if s.kind == "folder"] == ["/opt/nvidia/cuda-13.0", "/sbin", "/usr"]


def test_the_compile_view_makes_the_links_on_the_way_to_a_compiler():
    # Debian's alternatives: /usr/local/cuda -> /etc/alternatives/cuda -> /usr/local/cuda-13.0. /usr brings its
    # own link, but the one in /etc must be made, or nvcc is "not found" in the compile's root.
    host = {**HOST, "/usr/local/cuda": "/etc/alternatives/cuda", "/etc/alternatives/cuda": "/usr/local/cuda-13.0"}
    view = views.compile_view([], ["/usr/local/cuda/bin/nvcc", "/usr/bin/g++"])
    steps = views.plan(view, host.get)
    assert views.Step("link", "/etc/alternatives/cuda", "/usr/local/cuda-13.0") in steps
    assert not [s for s in steps if s.kind == "file"]  # both compilers lie inside /usr, which is shown whole


# --- for real, as root --------------------------------------------------------------------------------------

needs_mounts = pytest.mark.skipif(
    not ({layers.MOUNTS, layers.PID} <= layers.in_force()), reason="the minimal root needs root's mount namespace"
)
LOOK = r"""
#include <dirent.h>
#include <dlfcn.h>
#include <fcntl.h>
#include <unistd.h>
#include <cerrno>
#include <cstdio>
#include <cstring>
// Each argument is a question; each answer is one line: "QUESTION yes" or "QUESTION no: why".
int main(int argc, char** argv) {
    for (int i = 1; i < argc; ++i) {
        const char* q = argv[i];
        const char* path = q + 3;
        const char* why = nullptr;
        if (!strncmp(q, "rd:", 3)) {  // read the file
            int fd = open(path, O_RDONLY);
            char c;
            if (fd < 0 || read(fd, &c, 1) != 1) why = strerror(errno);
        } else if (!strncmp(q, "ls:", 3)) {  // list the folder
            DIR* d = opendir(path);
            if (!d) why = strerror(errno); else closedir(d);
        } else if (!strncmp(q, "wr:", 3)) {  // write a copy of this program there, executable
            int in = open("/proc/self/exe", O_RDONLY), out = open(path, O_CREAT | O_WRONLY | O_TRUNC, 0755);
            char b[65536];
            ssize_t n;
            if (out < 0) why = strerror(errno);
            while (out >= 0 && (n = read(in, b, sizeof b)) > 0) write(out, b, n);
            close(in);
            close(out);
        } else if (!strncmp(q, "dl:", 3)) {  // load it as a library
            if (!dlopen(path, RTLD_NOW)) why = dlerror();
        } else if (!strncmp(q, "ex:", 3)) {  // run it
            int pipefd[2];
            pipe(pipefd);
            pid_t child = fork();
            if (child == 0) {
                execl(path, path, (char*)0);
                int e = errno;
                write(pipefd[1], &e, sizeof e);
                _exit(1);
            }
            close(pipefd[1]);
            int e = 0;
            if (read(pipefd[0], &e, sizeof e) == sizeof e) why = strerror(e);
        }
        printf("%s %s%s\n", q, why ? "no: " : "yes", why ? why : "");
    }
}
"""


@pytest.fixture(autouse=True)
def runs_folder(tmp_path, monkeypatch):
    monkeypatch.setenv("KERNELJUDGE_RUNS", str(tmp_path / "runs"))


@pytest.fixture(scope="module")
def look(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("look")
    (folder / "look.cpp").write_text(LOOK)
    subprocess.run(["g++", "-O1", "-o", str(folder / "look"), str(folder / "look.cpp")], check=True)
    return folder / "look"


def cpu_view() -> views.View:
    flags = tuple(compiler.submission_flags("cpu", detect()))
    return runtime_libraries.worker_view("cpu", binaries.worker("cpu"), flags)


def answers(look: Path, view: views.View, *questions: str) -> dict[str, str]:
    """Ask `look` (placed in the run's folder as the grader places the worker) in a minimal root."""
    uid = local.sandbox_uid()
    workdir = local.new_workdir(uid)
    shutil.copyfile(look, workdir / "look")
    (workdir / "look").chmod(0o555)
    try:
        outcome = local.run(["./look", *questions], workdir, limits=Limits(wall_s=30, view=view), uid=uid)
    finally:
        local.remove_workdir(workdir)
    assert outcome.returncode == 0, outcome
    assert f"minimal root ({view.name})" in outcome.isolation
    return dict(line.split(" ", 1) for line in outcome.stdout.splitlines())


def a_host_library_outside(view: views.View) -> str:
    """A library the host's loader knows and the view lacks (libz, libpython, ...)."""
    listed = subprocess.run(["ldconfig", "-p"], capture_output=True, text=True).stdout
    for line in listed.splitlines()[1:]:
        path = line.partition(" => ")[2].strip()
        if path and os.path.isfile(path) and os.path.basename(path) not in {os.path.basename(f) for f in view.files}:
            return path
    pytest.skip("the host's loader lists no library outside the view")


@needs_mounts
def test_the_cpu_worker_sees_its_libraries_and_folder_and_nothing_else_of_the_host(look):
    view = cpu_view()
    other = a_host_library_outside(view)
    said = answers(
        look,
        view,
        "rd:/etc/passwd",
        "rd:/etc/ld.so.cache",
        f"rd:{Path(__file__)}",
        f"dl:{other}",
        "dl:libgomp.so.1",
        "dl:libm.so.6",
        "ls:/home",
        "ls:/opt",
        "ls:..",
        "rd:./look",
    )
    for question in ("rd:/etc/passwd", "rd:/etc/ld.so.cache", f"rd:{Path(__file__)}", "ls:/home", "ls:/opt"):
        assert said[question] == "no: No such file or directory", question
    assert said[f"dl:{other}"].endswith("cannot open shared object file: No such file or directory")
    assert said["dl:libgomp.so.1"] == "yes" and said["dl:libm.so.6"] == "yes"
    assert said["ls:.."] == "no: Permission denied", "the folders above the run's list other runs"
    assert said["rd:./look"] == "yes"


@needs_mounts
def test_nothing_the_program_writes_can_be_run_or_loaded(look):
    said = answers(
        look,
        cpu_view(),
        "wr:./copy",
        "ex:./copy",
        "dl:./copy",
        "wr:/tmp/copy",
        "ex:/tmp/copy",
        "wr:/dev/shm/copy",
        "dl:/dev/shm/copy",
        "wr:/usr/copy",
        "wr:/copy",
        "wr:/dev/null",
        "ex:./look",
    )
    assert said["wr:./copy"] == said["wr:/tmp/copy"] == said["wr:/dev/shm/copy"] == "yes"
    assert said["ex:./copy"] == said["ex:/tmp/copy"] == "no: Permission denied"
    assert "failed to map segment from shared object" in said["dl:./copy"]
    assert "failed to map segment from shared object" in said["dl:/dev/shm/copy"]
    assert said["wr:/usr/copy"] == said["wr:/copy"] == "no: Read-only file system"
    assert said["ex:./look"] == "yes", "the grader's own programs stay executable"
    assert said["wr:/dev/null"] == "yes", "a device on the read-only root is still written to"


@needs_mounts
def test_the_compile_cannot_read_or_quote_host_files(tmp_path, monkeypatch):
    monkeypatch.setenv("KERNELJUDGE_CACHE", str(tmp_path / "cache"))
    hostname = Path("/etc/hostname").read_text().strip() if Path("/etc/hostname").is_file() else ""
    source = b'#include "/etc/hostname"\nvoid solve(const float*, float*, int, int) {}\n'
    build = compiler.build_submission(load_problem("softmax"), source, "k.cpp", "cpu")
    assert not build.ok
    assert "No such file or directory" in build.log
    assert not hostname or hostname not in build.log


@pytest.mark.gpu
@needs_mounts
def test_the_cuda_worker_sees_the_driver_and_its_devices_and_no_host_library(look):
    tools = detect()
    flags = tuple(compiler.submission_flags("cuda", tools))
    view = runtime_libraries.worker_view("cuda", binaries.worker("cuda"), flags, tools.cuda_lib_dir)
    assert any(os.path.basename(f).startswith("libcuda.so") for f in view.files), view
    assert any(d.startswith("/dev/nvidiactl") for d in view.devices), view
    said = answers(
        look,
        view,
        "dl:libcuda.so.1",
        "dl:libcudart.so." + next(f for f in view.files if "libcudart.so." in f).rsplit("libcudart.so.", 1)[1],
        "rd:/dev/nvidiactl",
        "ls:/sys/bus/pci/devices",
        "rd:/etc/passwd",
        f"dl:{a_host_library_outside(view)}",
    )
    assert said["dl:libcuda.so.1"] == "yes", said
    assert all(v == "yes" for k, v in said.items() if k.startswith("dl:libcudart")), said
    assert said["rd:/dev/nvidiactl"] != "no: No such file or directory", said
    assert said["ls:/sys/bus/pci/devices"] == "yes", said
    assert said["rd:/etc/passwd"] == "no: No such file or directory"
    assert next(v for k, v in said.items() if k.startswith("dl:/")).endswith(
        "cannot open shared object file: No such file or directory"
    )
