"""What of the host a sandboxed program sees when it gets a minimal root: the plan of one, as plain data.

A View names host paths to show read-only in an otherwise empty root: files (the loader's libraries, shown
executable), folders (shown with what is below them), device nodes, and the symbolic links on the way to any of
them (/lib -> usr/lib on a merged-/usr system), recreated as links so that every path the loader was told about
resolves inside as it does outside. `plan` turns a View into the ordered steps grader.sandbox.minimal_root
takes; it only reads symbolic links (through the `readlink` it is given), so the plan of any View, the CUDA
worker's included, can be checked on a machine without that hardware.

The views (grader.sandbox.runtime_libraries finds their contents on this host):
- the compiled CPU worker: its libraries and those of a library built with the judge's flags, the loader;
- the compiled CUDA worker: that, the CUDA runtime it links, the driver's user-space libraries, /dev/nvidia*
  and /sys (the driver reads the PCI topology there);
- the compile: /usr (the toolchain, headers, crt files) and the toolchains' own folders when outside /usr.
Besides what a View names, the root always has the run's working folder, private /tmp, /var/tmp and /dev/shm,
the few device nodes every program uses (DEVICES) and a /proc of the run's own PID namespace.
"""

from __future__ import annotations

import os
import posixpath
from collections.abc import Callable, Iterable
from dataclasses import dataclass

DEVICES = ("/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom")
DEV_LINKS = (("/dev/fd", "/proc/self/fd"), ("/dev/stdin", "/proc/self/fd/0"), ("/dev/stdout", "/proc/self/fd/1"))
CPU_TOPOLOGY = ("/sys/devices/system/cpu", "/sys/devices/system/node")  # what OpenMP may read about the cores
LOADER_FOLDERS = ("/bin", "/sbin", "/lib", "/lib64")  # links into /usr on a merged-/usr system
MAX_LINKS = 40  # symbolic links followed for one path (the kernel's own limit)


@dataclass(frozen=True)
class View:
    """Host paths shown read-only in a minimal root (see the module's docstring); `name` says which view."""

    name: str
    files: tuple[str, ...] = ()
    folders: tuple[str, ...] = ()
    devices: tuple[str, ...] = ()

    def library_path(self) -> str:
        """LD_LIBRARY_PATH inside: the folders of its libraries, so the loader needs no /etc/ld.so.cache."""
        seen: dict[str, None] = {}
        for path in self.files:
            if ".so" in posixpath.basename(path):
                seen.setdefault(posixpath.dirname(path))
        return ":".join(seen)


@dataclass(frozen=True)
class Step:
    """One step of building the root: "link" (path -> target), or show the host's `path` there as a "file",
    a "folder" (with everything below it) or a "device"."""

    kind: str
    path: str
    target: str = ""


def worker_view(
    name: str, libraries: Iterable[str], *, folders: Iterable[str] = (), devices: Iterable[str] = ()
) -> View:
    """A worker's view: these libraries (as the loader named them), folders and device nodes, sorted and unique."""
    return View(
        name,
        files=tuple(sorted(set(libraries))),
        folders=tuple(sorted(set(folders) | set(CPU_TOPOLOGY))),
        devices=tuple(sorted(set(devices))),
    )


def cpu_worker(libraries: Iterable[str]) -> View:
    return worker_view("cpu worker", libraries)


def cuda_worker(libraries: Iterable[str], driver_libraries: Iterable[str], nvidia_devices: Iterable[str]) -> View:
    """The CPU worker's view for the CUDA worker's libraries, the driver's libraries, its device nodes and /sys."""
    return worker_view("cuda worker", [*libraries, *driver_libraries], folders=("/sys",), devices=nvidia_devices)


def compile_view(toolchain_folders: Iterable[str], compilers: Iterable[str] = ()) -> View:
    """The compile: /usr and the toolchains' folders outside it (the loader's links /lib, /lib64, /bin come
    along as the links they are, or as folders where they are folders), and each compiler by the path it is run
    by, so that a link on the way to it outside those folders (/usr/local/cuda -> /etc/alternatives/cuda ->
    /usr/local/cuda-13.0, as Debian's alternatives lay CUDA out) is made in the root too."""
    folders = {"/usr", *LOADER_FOLDERS, *toolchain_folders}
    return View("compile", files=tuple(compilers), folders=tuple(sorted(_outermost(folders))))


def _outermost(folders: set[str]) -> set[str]:
    """Only the folders not inside another one of them."""
    normal = {posixpath.normpath(f) for f in folders}
    return {f for f in normal if not any(f != o and f.startswith(o.rstrip("/") + "/") for o in normal)}


def resolve(path: str, readlink: Callable[[str], str | None]) -> tuple[list[Step], str]:
    """(the links met on the way, the path with none left) for an absolute `path`. `readlink` gives a link's
    target, or None for anything that is not a link. Raises ValueError on a loop or a relative `path`."""
    if not path.startswith("/"):
        raise ValueError(f"not an absolute path: {path}")
    links: list[Step] = []
    pending = [part for part in path.split("/") if part]
    done = "/"
    followed = 0
    while pending:
        part = pending.pop(0)
        if part == ".":
            continue
        if part == "..":
            done = posixpath.dirname(done)
            continue
        here = posixpath.join(done, part)
        target = readlink(here)
        if target is None:
            done = here
            continue
        followed += 1
        if followed > MAX_LINKS:
            raise ValueError(f"too many symbolic links in {path}")
        links.append(Step("link", here, target))
        pending = [p for p in target.split("/") if p] + pending
        done = "/" if target.startswith("/") else done
    return links, done


def plan(view: View, readlink: Callable[[str], str | None] | None = None) -> list[Step]:
    """The steps that build `view`'s root: every link first (in the order met), then what is shown, folders
    first. A path that resolves into a shown folder (or to a path shown already) is not shown again, nor is a
    link inside a shown folder made (the folder brings the host's own)."""
    readlink = readlink or _host_readlink
    links: dict[str, Step] = {}
    wanted: list[Step] = []
    for kind, paths in (("folder", view.folders), ("file", view.files), ("device", view.devices)):
        for path in paths:
            met, real = resolve(path, readlink)
            for link in met:
                links.setdefault(link.path, link)
            wanted.append(Step(kind, real))
    folders = [s for s in wanted if s.kind == "folder"]
    shown: list[Step] = []
    for step in wanted:
        others = [f for f in folders if f.path != step.path]
        if not _inside(step.path, others) and step.path not in {s.path for s in shown}:
            shown.append(step)
    return [*(link for link in links.values() if not _inside(link.path, shown)), *shown]


def _inside(path: str, shown: list[Step]) -> bool:
    """Whether `path` is one of the `shown` paths or below a shown folder (where the host's own links are)."""
    return any(path == s.path or (s.kind == "folder" and path.startswith(s.path.rstrip("/") + "/")) for s in shown)


def _host_readlink(path: str) -> str | None:
    try:
        return os.readlink(path)
    except OSError:  # not a link, or not there (shown as missing when the root is built)
        return None
