"""How a container gets one GPU, the way the NVIDIA container runtime gives it: a device request (`--gpus`)
where the engine has the NVIDIA runtime; else the GPU's device nodes and the driver's user-space libraries
(libcuda.so*, libnvidia-*.so*, as `ldconfig -p` lists them), bound read-only into the container. `plan` says
which path this machine takes and why; `create_options` turns it into the container's options.

The device-node path assumes the engine runs on this host (its local socket): the nodes and libraries are
this machine's.
"""

from __future__ import annotations

import functools
import os
import shutil
import subprocess
from dataclasses import dataclass, field

LIBRARY_DIR = "/usr/local/nvidia/lib64"  # where the driver's libraries appear inside (the NVIDIA images' path)
CONTROL_NODES = ("/dev/nvidiactl", "/dev/nvidia-uvm", "/dev/nvidia-uvm-tools", "/dev/nvidia-modeset")
DRIVER_LIBRARIES = ("libcuda.so", "libnvidia-")  # name prefixes of the driver's user-space part


@dataclass(frozen=True)
class GpuAccess:
    kind: str  # "runtime" (device request), "devices" (nodes and libraries bound), or "" (none possible)
    why: str  # one line: which path and why, or why none
    devices: tuple[str, ...] = ()  # host:container:rwm
    libraries: tuple[tuple[str, str], ...] = field(default_factory=tuple)  # (host file, name inside LIBRARY_DIR)


def plan(gpu: int, runtime: bool) -> GpuAccess:
    """The way a container of this host gets GPU `gpu`; `runtime`: the engine has the NVIDIA runtime."""
    if runtime:
        return GpuAccess("runtime", f"device request for GPU {gpu} (the engine has the NVIDIA container runtime)")
    node = f"/dev/nvidia{_minor(gpu)}"
    if not os.path.exists("/dev/nvidiactl") or not os.path.exists(node):
        return GpuAccess("", f"no NVIDIA container runtime, and no {node} and /dev/nvidiactl on this host")
    libraries = driver_libraries()
    if not any(name.startswith("libcuda.so") for _, name in libraries):
        return GpuAccess(
            "", "no NVIDIA container runtime, and no libcuda.so of the driver in ldconfig -p or LD_LIBRARY_PATH"
        )
    devices = tuple(f"{path}:{path}:rwm" for path in (node, *CONTROL_NODES) if os.path.exists(path))
    return GpuAccess(
        "devices",
        f"{node} and {len(devices) - 1} control nodes, {len(libraries)} driver libraries bound read-only at "
        f"{LIBRARY_DIR} (no NVIDIA container runtime on the engine)",
        devices,
        libraries,
    )


def create_options(access: GpuAccess, gpu: int, image_env: dict[str, str]) -> dict:
    """The container's options (docker SDK names) for `access`: device_requests, or devices, mounts and env."""
    if access.kind == "runtime":
        from docker.types import DeviceRequest

        request = DeviceRequest(device_ids=[str(gpu)], capabilities=[["gpu"]])
        return {"device_requests": [request], "environment": {"NVIDIA_DRIVER_CAPABILITIES": "compute,utility"}}
    if access.kind != "devices":
        raise RuntimeError(f"no GPU can be given to a container here: {access.why}")
    from docker.types import Mount

    mounts = [Mount(f"{LIBRARY_DIR}/{name}", host, type="bind", read_only=True) for host, name in access.libraries]
    path = ":".join(p for p in (image_env.get("LD_LIBRARY_PATH", ""), LIBRARY_DIR) if p)
    return {"devices": list(access.devices), "mounts": mounts, "environment": {"LD_LIBRARY_PATH": path}}


@functools.lru_cache(maxsize=1)
def driver_libraries() -> tuple[tuple[str, str], ...]:
    """(the real file, the name it is loaded by) of each 64-bit libcuda.so* and libnvidia-*.so*: those
    `ldconfig -p` lists, else those in the folders the loader is told of (LD_LIBRARY_PATH, the NVIDIA images'
    /usr/local/nvidia/lib64), as on hosts whose driver is not in ld.so.cache."""
    found: dict[str, str] = {}
    for name, path in _ldconfig_listing():
        real = os.path.realpath(path)
        if name.startswith(DRIVER_LIBRARIES) and os.path.isfile(real):
            found.setdefault(name, real)
    if not any(name.startswith("libcuda.so") for name in found):
        folders = os.environ.get("LD_LIBRARY_PATH", "").split(":") + [
            "/usr/local/nvidia/lib64",
            "/usr/local/nvidia/lib",
        ]
        for folder in filter(os.path.isdir, folders):
            for entry in sorted(os.listdir(folder)):
                real = os.path.realpath(os.path.join(folder, entry))
                if entry.startswith(DRIVER_LIBRARIES) and ".so" in entry and os.path.isfile(real):
                    found.setdefault(entry, real)
    return tuple(sorted((real, name) for name, real in found.items()))


def _ldconfig_listing() -> list[tuple[str, str]]:
    """(name, path) of each 64-bit library in the loader's cache."""
    ldconfig = shutil.which("ldconfig") or next(
        (p for p in ("/sbin/ldconfig", "/usr/sbin/ldconfig") if os.path.exists(p)), "ldconfig"
    )
    try:
        listed = subprocess.run(
            [ldconfig, "-p"], capture_output=True, text=True, timeout=30, stdin=subprocess.DEVNULL
        ).stdout
    except (OSError, subprocess.SubprocessError):
        return []
    pairs = []
    for line in listed.splitlines():
        name, _, rest = line.strip().partition(" (")
        kind, _, path = rest.partition(") => ")
        if "x86-64" in kind or "64bit" in kind:
            pairs.append((name, path.strip()))
    return pairs


def _minor(gpu: int) -> int:
    """The minor number of GPU `gpu` (its /dev/nvidiaN), from NVML; `gpu` itself where NVML cannot say."""
    try:
        import pynvml

        pynvml.nvmlInit()
        try:
            return int(pynvml.nvmlDeviceGetMinorNumber(pynvml.nvmlDeviceGetHandleByIndex(gpu)))
        finally:
            pynvml.nvmlShutdown()
    except Exception:
        return gpu
