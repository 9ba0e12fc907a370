"""The CUDA grader image made from this host's own toolchain, for a GPU node with a Docker engine but no registry
and no network (`make docker-host-cuda`; `make gpu-check` makes one when the engine has no grader image).

It collects what compiling and running a submission needs, and nothing else: a shell and a few commands, g++ with
its internal programs, headers and libraries, binutils, the CUDA install's compiler (nvcc, cicc, ptxas, ...),
headers and runtime, and every shared library these link (ldd). That tree is imported as `TAG-rootfs` through the
docker SDK, then `TAG` is built on it (ldconfig, the environment, /work) with no network. The GPU driver's
libraries are not in it: the container sandbox binds them at run time (grader/sandbox/docker_gpu.py).

    python3 scripts/host_image.py --tag kerneljudge-cuda:host [--tar rootfs.tar]
"""

from __future__ import annotations

import argparse
import glob
import io
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
import time

COMMANDS = "sh bash env cat head tail grep sed ls mkdir rm cp mv ln chmod chown id true false uname sort tr wc dirname basename ldd"
COMPILERS = "g++ gcc c++ cc cpp as ld ld.bfd nm objdump readelf strip ar ldconfig ldconfig.real"
GCC_PROGRAMS = ("cc1", "cc1plus", "collect2", "lto-wrapper", "lto1", "liblto_plugin.so")
MULTIARCH_GLOBS = (
    "crt*.o",
    "*crt1.o",
    "libc.so*",
    "libc_nonshared.a",
    "libm.so*",
    "libm-*.a",
    "libm.a",
    "libmvec.so*",
    "libdl.so*",
    "libdl.a",
    "libpthread.so*",
    "libpthread.a",
    "librt.so*",
    "librt.a",
    "libutil.so*",
    "libresolv.so*",
    "libgomp.so*",
    "libstdc++.so*",
    "libgcc_s.so*",
    "libatomic.so*",
)
CUDA_GLOBS = (
    "bin/nvcc",
    "bin/nvcc.profile",
    "bin/ptxas",
    "bin/fatbinary",
    "bin/nvlink",
    "bin/cudafe++",
    "bin/bin2c",
    "bin/crt",
    "bin/__nvcc_device_query",
    "nvvm/bin",
    "nvvm/libdevice",
    "nvvm/lib64",
    "nvvm/lib",
    "include",
    "lib64",
    "lib",
    "targets/*/include",
    "targets/*/lib",
)
CUDA_LIBRARIES = ("libcudart*", "libcudadevrt.a", "libculibos.a", "libnvvm*", "stubs")
DOCKERFILE = """FROM {rootfs}
ENV PATH=/usr/local/cuda/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \\
    LD_LIBRARY_PATH=/usr/local/cuda/lib64 LANG=C.UTF-8 NVIDIA_DRIVER_CAPABILITIES=compute,utility
RUN ldconfig && mkdir -p /work /tmp /home/judge && chmod 1777 /tmp && chown 10001:10001 /work /home/judge \\
 && g++ --version | head -n1 && nvcc --version | tail -n2
USER 10001:10001
WORKDIR /work
CMD ["sh"]
"""
ETC = {
    "etc/passwd": "root:x:0:0:root:/root:/bin/sh\njudge:x:10001:10001::/home/judge:/usr/sbin/nologin\n"
    "nobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\n",
    "etc/group": "root:x:0:\njudge:x:10001:\nnogroup:x:65534:\n",
    "etc/ld.so.conf": "include /etc/ld.so.conf.d/*.conf\n",
    "etc/ld.so.conf.d/cuda.conf": "/usr/local/cuda/lib64\n",
}


def canon(path: str) -> str:
    """The path with its folders resolved but not its last part (a link stays a link)."""
    return os.path.join(os.path.realpath(os.path.dirname(path)), os.path.basename(path))


class Tree:
    """The host paths the image gets: files, links (as links, with what they point to) and whole folders."""

    def __init__(self):
        self.paths: set[str] = set()
        self.links = {p for p in ("/bin", "/sbin", "/lib", "/lib64", "/lib32", "/libx32") if os.path.islink(p)}

    def add(self, path: str) -> None:
        for _ in range(40):  # a chain of links, each added with what it points to
            path = canon(path)
            if path in self.paths or not os.path.lexists(path):
                return
            self.paths.add(path)
            if not os.path.islink(path):
                if os.path.isdir(path):
                    self.add_folder(path)
                return
            path = os.path.join(os.path.dirname(path), os.readlink(path))

    def add_libraries(self, folder: str, patterns: tuple[str, ...]) -> None:
        """A library folder (and the links that lead to it) with only the entries matching `patterns`."""
        path = canon(folder)
        while os.path.islink(path):
            self.paths.add(path)
            path = canon(os.path.join(os.path.dirname(path), os.readlink(path)))
        self.paths.add(path)
        for pattern in patterns:
            for item in glob.glob(os.path.join(path, pattern)):
                self.add(item)

    def add_folder(self, folder: str) -> None:
        for root, dirs, files in os.walk(folder):
            for name in dirs + files:
                full = os.path.join(root, name)
                if os.path.islink(full):
                    self.add(full)
                else:
                    self.paths.add(full)

    def elves(self) -> list[str]:
        found = []
        for path in sorted(self.paths):
            if os.path.isfile(path) and not os.path.islink(path) and (os.access(path, os.X_OK) or ".so" in path):
                with open(path, "rb") as f:
                    if f.read(4) == b"\x7fELF":
                        found.append(path)
        return found


def which(name: str) -> str | None:
    return shutil.which(name, path=os.environ.get("PATH", "") + ":/usr/sbin:/sbin")


def cuda_home() -> str:
    """The CUDA install nvcc belongs to: $CUDA_HOME, the folder above nvcc's, or /usr/local/cuda."""
    nvcc = which("nvcc")
    for candidate in (
        os.environ.get("CUDA_HOME", ""),
        os.path.dirname(os.path.dirname(os.path.realpath(nvcc))) if nvcc else "",
        "/usr/local/cuda",
    ):
        if candidate and os.path.isfile(os.path.join(candidate, "bin", "nvcc.profile")):
            return os.path.realpath(candidate)
    sys.exit("no CUDA install found (nvcc with bin/nvcc.profile): set CUDA_HOME")


def gcc_query(flag: str) -> str:
    return subprocess.run(["gcc", flag], capture_output=True, text=True, check=True).stdout.strip()


def collect() -> tuple[Tree, str]:
    tree = Tree()
    for name in (COMMANDS + " " + COMPILERS).split():
        if found := which(name):
            tree.add(found)
    for alternative in ("/etc/alternatives/cc", "/etc/alternatives/c++", "/etc/alternatives/cpp"):
        tree.add(alternative)
    for program in GCC_PROGRAMS:  # g++'s internal programs, and the folders they sit in whole
        found = gcc_query(f"-print-prog-name={program}")
        if os.path.isabs(found) and os.path.exists(found):
            tree.add(os.path.dirname(found))
    tree.add(os.path.dirname(gcc_query("-print-libgcc-file-name")))
    tree.add("/usr/include")
    multiarch = gcc_query("-print-multiarch") or "x86_64-linux-gnu"
    for folder in (f"/usr/lib/{multiarch}", f"/lib/{multiarch}", "/usr/lib64", "/lib64"):
        for pattern in MULTIARCH_GLOBS:
            for found in glob.glob(os.path.join(folder, pattern)):
                tree.add(found)
    home = cuda_home()
    for pattern in CUDA_GLOBS:
        for found in glob.glob(os.path.join(home, pattern)):
            if os.path.basename(found) in ("lib", "lib64") and os.path.isdir(found):
                tree.add_libraries(found, CUDA_LIBRARIES)  # the runtime, not the toolkit's other libraries
            else:
                tree.add(found)
    for elf in tree.elves():  # every shared library they link, with the loader
        said = subprocess.run(["ldd", elf], capture_output=True, text=True).stdout
        for line in said.splitlines():
            path = line.split("=>")[-1].strip().split(" (")[0].strip()
            if path.startswith("/"):
                tree.add(path)
    return tree, home


def write_tar(tree: Tree, home: str, out) -> int:
    """The tree as a tar (parents first, then files, links as links); returns the bytes of file content."""
    size = 0
    with tarfile.open(fileobj=out, mode="w|") as tar:
        parents: set[str] = set()
        for path in sorted(tree.paths):
            parent = os.path.dirname(path)
            while parent not in ("/", "") and parent not in parents:
                parents.add(parent)
                parent = os.path.dirname(parent)
        for link in sorted(tree.links):
            tar.add(link, arcname=link.lstrip("/"), recursive=False)
        for folder in sorted(parents - tree.paths):
            tar.add(folder, arcname=folder.lstrip("/"), recursive=False)
        for path in sorted(tree.paths):
            tar.add(path, arcname=path.lstrip("/"), recursive=False)
            if os.path.isfile(path) and not os.path.islink(path):
                size += os.path.getsize(path)
        extra = dict(ETC)
        if home != "/usr/local/cuda" and canon("/usr/local/cuda") not in tree.paths:
            extra["usr/local/cuda"] = home  # a link to the install, where the image's PATH looks
        for name, text in extra.items():
            info = tarfile.TarInfo(name)
            if name == "usr/local/cuda":
                info.type, info.linkname = tarfile.SYMTYPE, text
                tar.addfile(info)
            else:
                data = text.encode()
                info.size, info.mode = len(data), 0o644
                tar.addfile(info, io.BytesIO(data))
        for folder in ("tmp", "work", "home", "root", "dev", "proc", "sys", "etc/ld.so.conf.d"):
            info = tarfile.TarInfo(folder)
            info.type, info.mode = tarfile.DIRTYPE, 0o1777 if folder == "tmp" else 0o755
            tar.addfile(info)
    return size


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tag", default="kerneljudge-cuda:host")
    parser.add_argument("--tar", help="also keep the root filesystem's tar here")
    args = parser.parse_args()
    started = time.monotonic()
    tree, home = collect()
    print(f"host-image: {len(tree.paths)} paths from this host (CUDA at {home})", flush=True)
    with tempfile.TemporaryDirectory() as scratch:
        path = args.tar or os.path.join(scratch, "rootfs.tar")
        with open(path, "wb") as out:
            size = write_tar(tree, home, out)
        print(f"host-image: rootfs {size >> 20} MiB of files, tar {os.path.getsize(path) >> 20} MiB", flush=True)
        import docker

        client = docker.from_env(timeout=1800)
        repository, _, tag = args.tag.partition(":")
        rootfs = f"{repository}:{tag or 'latest'}-rootfs"
        client.api.import_image_from_file(path, repository=repository, tag=f"{tag or 'latest'}-rootfs")
        print(f"host-image: imported {rootfs} ({time.monotonic() - started:.0f} s)", flush=True)
    context = io.BytesIO(DOCKERFILE.format(rootfs=rootfs).encode())
    try:
        image, logs = client.images.build(fileobj=context, tag=args.tag, network_mode="none", rm=True, forcerm=True)
    except docker.errors.BuildError as error:
        logs, image = error.build_log, None
    for chunk in logs:
        if "stream" in chunk and chunk["stream"].strip():
            print("host-image: " + chunk["stream"].rstrip(), flush=True)
    if image is None:
        print(f"host-image: building {args.tag} on {rootfs} failed", flush=True)
        return 1
    print(f"host-image: built {args.tag} {image.id[:19]} in {time.monotonic() - started:.0f} s", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
