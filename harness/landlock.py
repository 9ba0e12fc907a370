"""Landlock for the Python worker: from the moment it is applied, this process and its children may execute only
the programs named (the JIT's compilers), whatever the submission does. The Python tracks need fork and exec
(Triton runs ptxas and the C compiler for its launcher), so the seccomp filter lets them through
(harness/python_seccomp.cpp) and Landlock limits what may run. Writes are already bounded by the sandbox: every
mount read-only but the run's own tmpfs, where the JIT caches live.

Landlock checks execution on the file the kernel opens to execute, the ELF interpreter (ld.so) included, so the
dynamic loader is always on the list.
"""

from __future__ import annotations

import ctypes
import os
import platform
import shutil
import subprocess
from collections.abc import Sequence
from pathlib import Path

_NUMBERS = {"x86_64": (444, 445, 446), "aarch64": (444, 445, 446)}  # create_ruleset, add_rule, restrict_self
LANDLOCK_ACCESS_FS_EXECUTE = 1 << 0
LANDLOCK_ACCESS_FS_REFER = 1 << 13  # ABI 2: link or rename a file into another directory
LANDLOCK_RULE_PATH_BENEATH = 1
LANDLOCK_CREATE_RULESET_VERSION = 1 << 0
PR_SET_NO_NEW_PRIVS = 38
LOADERS = ("/lib64/ld-linux-x86-64.so.2", "/lib/ld-linux-aarch64.so.1")
GCC_PARTS = ("cc1", "as", "collect2", "ld")  # what the C compiler driver runs to build a shared library


class LandlockError(OSError):
    pass


class _RulesetAttr(ctypes.Structure):
    _fields_ = [("handled_access_fs", ctypes.c_uint64)]


class _PathBeneathAttr(ctypes.Structure):
    _pack_ = 1
    _fields_ = [("allowed_access", ctypes.c_uint64), ("parent_fd", ctypes.c_int32)]


_libc = ctypes.CDLL(None, use_errno=True)
_libc.syscall.restype = ctypes.c_long


def _syscall(index: int, *args) -> int:
    numbers = _NUMBERS.get(platform.machine())
    if numbers is None:
        raise LandlockError(38, f"Landlock: not known on {platform.machine()}")
    result = _libc.syscall(ctypes.c_long(numbers[index]), *args)
    if result < 0:
        errno = ctypes.get_errno()
        raise LandlockError(errno, f"Landlock: {os.strerror(errno)}")
    return result


def abi_version() -> int:
    """The kernel's Landlock ABI (0 where it has none)."""
    try:
        return _syscall(0, None, ctypes.c_size_t(0), ctypes.c_uint32(LANDLOCK_CREATE_RULESET_VERSION))
    except LandlockError:
        return 0


def allow_only_executing(programs: list[str], movable_within: Sequence[str] = ()) -> None:
    """From now on, this process and its children execute only these files (and the dynamic loader); files may
    move between directories only beneath the folders `movable_within`. Under any Landlock domain a rename into
    another directory fails with EXDEV unless the ruleset handles and allows it (ABI 2's REFER right): on the
    H100 every Triton compile died so, moving its launcher from a temporary folder into its cache."""
    refer = LANDLOCK_ACCESS_FS_REFER if abi_version() >= 2 else 0
    attr = _RulesetAttr(LANDLOCK_ACCESS_FS_EXECUTE | refer)
    ruleset = _syscall(0, ctypes.byref(attr), ctypes.c_size_t(ctypes.sizeof(attr)), ctypes.c_uint32(0))
    try:
        rules = [(p, LANDLOCK_ACCESS_FS_EXECUTE) for p in [*programs, *LOADERS] if os.path.isfile(p)]
        rules += [(folder, refer) for folder in movable_within if refer and os.path.isdir(folder)]
        for path, access in sorted({(os.path.realpath(p), access) for p, access in rules}):
            fd = os.open(path, os.O_PATH | os.O_CLOEXEC)
            try:
                rule = _PathBeneathAttr(access, fd)
                _syscall(1, ctypes.c_int(ruleset), ctypes.c_int(LANDLOCK_RULE_PATH_BENEATH), ctypes.byref(rule), 0)
            finally:
                os.close(fd)
        if _libc.prctl(PR_SET_NO_NEW_PRIVS, ctypes.c_ulong(1), 0, 0, 0) != 0:
            raise LandlockError(ctypes.get_errno(), "no_new_privs")
        _syscall(2, ctypes.c_int(ruleset), ctypes.c_uint32(0))
    finally:
        os.close(ruleset)


def jit_programs(track: str) -> list[str]:
    """What the track's JIT executes: on triton its ptxas and the C compiler (with the programs the driver runs);
    on cupy nothing (NVRTC compiles in the process). Not ldconfig: Triton asks it where libcuda is only when
    TRITON_LIBCUDA_PATH is unset, and the worker sets it (python_frameworks.TorchFramework); on Ubuntu it is a
    shell script, which would need /bin/sh as well."""
    if track != "triton":
        return []
    found = [_triton_ptxas()]
    compiler = os.environ.get("CC") or shutil.which("cc") or shutil.which("gcc")
    if compiler:
        found.append(compiler)
        for part in GCC_PARTS:
            said = subprocess.run([compiler, f"-print-prog-name={part}"], capture_output=True, text=True).stdout
            found.append(shutil.which(said.strip()) or said.strip())
    return [os.path.realpath(p) for p in found if p and os.path.isfile(p)]


def _triton_ptxas() -> str:
    configured = os.environ.get("TRITON_PTXAS_PATH")
    if configured:
        return configured
    import triton

    return str(Path(triton.__file__).parent / "backends" / "nvidia" / "bin" / "ptxas")
