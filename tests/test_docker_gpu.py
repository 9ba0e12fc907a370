"""How a container gets the GPU (grader/sandbox/docker_gpu.py): a device request where the engine has the NVIDIA
runtime, else the device nodes and the driver's libraries, read-only; what `plan` says when neither can work. The
last test runs a container with the device-node path for real, a fake driver library and /dev/null standing in
for the GPU's nodes (no GPU here), and looks from inside."""

from __future__ import annotations

import os
from types import SimpleNamespace

import pytest

from grader.sandbox import container, docker_engine, docker_gpu, docker_run
from grader.sandbox import local as sandbox

TEST_IMAGE = os.environ.get("KERNELJUDGE_TEST_IMAGE", "kerneljudge-test:local")


def test_the_runtime_is_preferred_and_gives_one_gpu():
    access = docker_gpu.plan(1, runtime=True)
    assert access.kind == "runtime" and "NVIDIA container runtime" in access.why
    options = docker_gpu.create_options(access, 1, {})
    [request] = options["device_requests"]
    assert request["DeviceIDs"] == ["1"] and request["Capabilities"] == [["gpu"]]


def test_no_runtime_and_no_device_nodes_says_why(monkeypatch):
    monkeypatch.setattr(docker_gpu.os.path, "exists", lambda path: False)
    access = docker_gpu.plan(0, runtime=False)
    assert access.kind == "" and "/dev/nvidiactl" in access.why and "no NVIDIA container runtime" in access.why
    with pytest.raises(RuntimeError, match="no GPU can be given"):
        docker_gpu.create_options(access, 0, {})


def test_driver_libraries_are_the_64_bit_libcuda_and_libnvidia_ones(monkeypatch, tmp_path):
    real = {name: tmp_path / f"{name}.580.1" for name in ("libcuda.so.1", "libnvidia-ml.so.1", "libz.so.1")}
    for path in real.values():
        path.write_bytes(b"\x7fELF")
    listing = "\n".join(
        [f"\t{len(real)} libs found in cache `/etc/ld.so.cache'"]
        + [f"\t{name} (libc6,x86-64) => {path}" for name, path in real.items()]
        + [f"\tlibcuda.so.1 (libc6) => {tmp_path / 'i386' / 'libcuda.so.1'}"]
    )
    monkeypatch.setattr(docker_gpu.subprocess, "run", lambda *a, **k: SimpleNamespace(stdout=listing))
    docker_gpu.driver_libraries.cache_clear()
    try:
        found = dict((name, host) for host, name in docker_gpu.driver_libraries())
    finally:
        docker_gpu.driver_libraries.cache_clear()
    assert found == {"libcuda.so.1": str(real["libcuda.so.1"]), "libnvidia-ml.so.1": str(real["libnvidia-ml.so.1"])}


def test_device_nodes_and_libraries_are_bound_read_only(tmp_path):
    library = tmp_path / "libcuda.so.580"
    library.write_bytes(b"\x7fELF")
    access = docker_gpu.GpuAccess(
        "devices", "test", ("/dev/nvidia0:/dev/nvidia0:rwm",), ((str(library), "libcuda.so.1"),)
    )
    options = docker_gpu.create_options(access, 0, {"LD_LIBRARY_PATH": "/usr/local/cuda/lib64"})
    assert options["devices"] == ["/dev/nvidia0:/dev/nvidia0:rwm"]
    [mount] = options["mounts"]
    assert mount["Source"] == str(library) and mount["Target"] == f"{docker_gpu.LIBRARY_DIR}/libcuda.so.1"
    assert mount["ReadOnly"] is True
    assert options["environment"]["LD_LIBRARY_PATH"] == f"/usr/local/cuda/lib64:{docker_gpu.LIBRARY_DIR}"


@pytest.mark.docker
@pytest.mark.slow
def test_a_container_sees_the_bound_nodes_and_libraries_read_only(tmp_path, monkeypatch):
    version, why = container.engine()
    if version is None:
        pytest.skip(f"no Docker engine ({why})")
    if docker_engine.image_id(TEST_IMAGE) is None:
        pytest.skip(f"no {TEST_IMAGE} (tests/test_container.py builds it)")
    library = tmp_path / "libcuda.so.580"
    library.write_bytes(b"fake driver\n")
    library.chmod(0o644)
    tmp_path.chmod(0o755)
    access = docker_gpu.GpuAccess(
        "devices", "test", ("/dev/null:/dev/nvidiactl:rwm",), ((str(library), "libcuda.so.1"),)
    )
    options = docker_gpu.create_options(access, 0, docker_engine.image_env(TEST_IMAGE))
    monkeypatch.setattr(docker_run, "_gpu_options", lambda gpu, image: options)
    workdir = sandbox.new_workdir(None)
    script = f"""
import errno, os, stat
print("node", stat.S_ISCHR(os.stat("/dev/nvidiactl").st_mode))
print("library", open("{docker_gpu.LIBRARY_DIR}/libcuda.so.1").read().strip())
try:
    open("{docker_gpu.LIBRARY_DIR}/libcuda.so.1", "w")
    print("write", "ok")
except OSError as e:
    print("write", errno.errorcode[e.errno])
print("path", os.environ["LD_LIBRARY_PATH"])
"""
    try:
        outcome = docker_run.run(
            ["python3", "-c", script], workdir, limits=sandbox.Limits(wall_s=60), gpu=0, image=TEST_IMAGE
        )
    finally:
        sandbox.remove_workdir(workdir)
    said = dict(line.split(" ", 1) for line in outcome.stdout.splitlines() if " " in line)
    assert outcome.returncode == 0, outcome.stderr
    assert said["node"] == "True" and said["library"] == "fake driver"
    assert said["write"] in ("EROFS", "EACCES")
    assert said["path"].endswith(docker_gpu.LIBRARY_DIR)
    assert "GPU 0 only" in outcome.isolation
    assert library.read_text() == "fake driver\n"


@pytest.mark.docker
@pytest.mark.slow
def test_without_a_gpu_path_the_cuda_track_is_refused_with_the_reason():
    version, why = container.engine()
    if version is None:
        pytest.skip(f"no Docker engine ({why})")
    if docker_engine.image_id(TEST_IMAGE) is None:
        pytest.skip(f"no {TEST_IMAGE} (tests/test_container.py builds it)")
    if os.path.exists("/dev/nvidiactl") or docker_engine.nvidia_runtime():
        pytest.skip("this host can give a container its GPU")
    ok, why = container.available(gpu=True, image=TEST_IMAGE)
    assert not ok and "no container can have a GPU" in why and "/dev/nvidiactl" in why
    with pytest.raises(RuntimeError, match="no container can have a GPU"):
        container.choose("docker", "cuda", image=TEST_IMAGE)
    backend, how = container.choose("auto", "cuda", image=TEST_IMAGE)
    assert backend.kind == "local" and "no container can have a GPU" in how
