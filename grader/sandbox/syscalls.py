"""The Linux calls the sandbox makes that Python's os module lacks, through libc (x86_64 and aarch64)."""

from __future__ import annotations

import ctypes
import os
import platform

CLONE_NEWNS = 0x00020000
CLONE_NEWIPC = 0x08000000
CLONE_NEWUSER = 0x10000000
CLONE_NEWPID = 0x20000000
CLONE_NEWNET = 0x40000000
MS_RDONLY, MS_NOSUID, MS_NODEV, MS_NOEXEC, MS_REMOUNT, MS_BIND, MS_REC, MS_PRIVATE = (
    1,
    2,
    4,
    8,
    32,
    4096,
    16384,
    1 << 18,
)
MNT_DETACH = 2
PR_SET_PDEATHSIG, PR_SET_DUMPABLE, PR_SET_NO_NEW_PRIVS = 1, 4, 38
KEYCTL_GET_KEYRING_ID, KEYCTL_JOIN_SESSION_KEYRING, KEYCTL_CLEAR = 0, 1, 7
KEY_SPEC_USER_KEYRING, KEY_SPEC_USER_SESSION_KEYRING = -4, -5
AT_RECURSIVE, MOUNT_ATTR_RDONLY = 0x8000, 0x1
_NUMBERS = {  # syscall numbers: keyctl, mount_setattr, pivot_root
    "x86_64": {"keyctl": 250, "mount_setattr": 442, "pivot_root": 155},
    "aarch64": {"keyctl": 219, "mount_setattr": 442, "pivot_root": 41},
}

_libc = ctypes.CDLL(None, use_errno=True)
_libc.syscall.restype = ctypes.c_long


def _check(result: int, what: str) -> int:
    if result < 0:
        errno = ctypes.get_errno()
        raise OSError(errno, f"{what}: {os.strerror(errno)}")
    return result


def _syscall(name: str, *args) -> int:
    number = _NUMBERS.get(platform.machine(), {}).get(name)
    if number is None:
        raise OSError(38, f"{name}: not known on {platform.machine()}")
    return _check(_libc.syscall(ctypes.c_long(number), *args), name)


def unshare(flags: int, what: str = "unshare") -> None:
    _check(_libc.unshare(flags), what)


def mount(source: str | None, target: str, fstype: str | None, flags: int, data: str | None, what: str) -> None:
    encode = lambda s: s.encode() if s is not None else None  # noqa: E731
    _check(_libc.mount(encode(source), target.encode(), encode(fstype), ctypes.c_ulong(flags), encode(data)), what)


def umount(target: str, flags: int = 0) -> None:
    _check(_libc.umount2(target.encode(), flags), f"umount {target}")


def pivot_root(new_root: str, put_old: str) -> None:
    """Make `new_root` this mount namespace's root, the old one mounted at `put_old` (glibc has no wrapper)."""
    _syscall("pivot_root", ctypes.c_char_p(new_root.encode()), ctypes.c_char_p(put_old.encode()))


def read_only_recursive(target: str) -> None:
    """Every mount at and under `target` read-only, in one call (mount_setattr, Linux 5.12)."""

    class MountAttr(ctypes.Structure):
        _fields_ = [
            ("attr_set", ctypes.c_uint64),
            ("attr_clr", ctypes.c_uint64),
            ("propagation", ctypes.c_uint64),
            ("userns_fd", ctypes.c_uint64),
        ]

    attr = MountAttr(MOUNT_ATTR_RDONLY, 0, 0, 0)
    AT_FDCWD = -100
    _syscall(
        "mount_setattr",
        ctypes.c_int(AT_FDCWD),
        ctypes.c_char_p(target.encode()),
        ctypes.c_uint(AT_RECURSIVE),
        ctypes.byref(attr),
        ctypes.c_size_t(ctypes.sizeof(attr)),
    )


def prctl(option: int, value: int) -> None:
    _check(_libc.prctl(option, ctypes.c_ulong(value), 0, 0, 0), f"prctl {option}")


def join_new_session_keyring() -> None:
    """A new, empty, anonymous session keyring for this process and its children."""
    _syscall("keyctl", ctypes.c_int(KEYCTL_JOIN_SESSION_KEYRING), ctypes.c_char_p(None))


def clear_user_keyrings() -> None:
    """Empty the calling uid's user and user-session keyrings (best effort: a kernel without keys has none)."""
    for keyring in (KEY_SPEC_USER_KEYRING, KEY_SPEC_USER_SESSION_KEYRING):
        try:
            _syscall("keyctl", ctypes.c_int(KEYCTL_CLEAR), ctypes.c_int(keyring))
        except OSError:
            pass
