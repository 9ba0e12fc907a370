"""The JIT cache of the tracks whose kernels compile in the run (Track.jit_caches: Triton's and CuPy's cache
folders in the run's working folder), kept per source by the trusted side.

One entry per (track, the source's SHA-256, the toolchain: Python, the framework, the GPU and its driver), in the
build cache's folder (grader/build/cache.py: private, 0700, evicted least recently used with the builds). Before
a run the entry is copied into the run's folder; after it, what the run left in its cache folders replaces the
entry, copied by the grader's process: only regular files and folders are copied (a link, a FIFO or a device is
skipped, never followed: every file is opened relative to its folder's descriptor with O_NOFOLLOW), names are
single path components, and a tree beyond MAX_FILES entries, MAX_DEPTH levels or MAX_BYTES in all is not kept.
The entry's path comes from the key alone, never from a name the run chose, so no run reaches another source's
entry; the cache only saves compile time, and a run of the same source could write anything there itself.

Triton finds a compiled kernel through a group file (`__grp__NAME.json`) that names the kernel's files by absolute
path, always files beside it; each run has a folder of its own, so on the way in every such path is renamed to
where the file now lies (without that, every lookup missed and each run compiled every kernel again).
"""

from __future__ import annotations

import json
import os
import shutil
import stat
import tempfile
from pathlib import Path

from grader import tracks
from grader.build import cache
from grader.toolchain import Toolchain

KIND = "jit"
MAX_BYTES = cache.MAX_ENTRY_BYTES  # one entry's files in all
MAX_FILES = 4096  # files and folders of one entry
MAX_DEPTH = 16
MAX_NAME_BYTES = 255
GROUP_PREFIX = "__grp__"  # Triton's group files: JSON {"child_paths": {name: absolute path of a file beside it}}


class TooLarge(ValueError):
    """A tree beyond the bounds of one entry."""


def key(track: str, source_sha256: str, tools: Toolchain) -> str:
    """The entry's name: the track, the source's digest and the versions of what compiles and runs its kernels."""
    on = tracks.get(track)
    return cache.key(KIND, track, source_sha256, on.toolchain(tools), repr(sorted(on.device.describe(tools).items())))


def copy_in(track: str, entry_key: str, workdir: Path, uid: int | None) -> int:
    """The entry's cache folders into the run's working folder, owned by the run's `uid` where the grader is root;
    how many files. Nothing for a track without JIT caches or a source without an entry."""
    entry = cache.entry(KIND, entry_key)
    copied = 0
    for name in tracks.get(track).jit_caches:
        try:
            copied += _write_tree(_relocate_groups(_read_tree(entry / name), workdir / name), workdir / name, uid)
        except (OSError, TooLarge):
            continue  # absent, odd, or the run's folder full: the run compiles what is missing
    if copied:
        try:
            os.utime(entry)  # used: the last to be evicted
        except OSError:
            pass
    return copied


def copy_out(track: str, entry_key: str, workdir: Path) -> bool:
    """What the run left in its cache folders, as the entry (replacing the one before); whether it was kept."""
    names = tracks.get(track).jit_caches
    trees = {}
    for name in names:
        try:
            trees[name] = _read_tree(workdir / name)
        except TooLarge:
            return False
        except OSError:
            continue
    counts = [_count(tree) for tree in trees.values()]  # (files and folders, bytes) of each
    if not any(trees.values()) or sum(n for n, _ in counts) > MAX_FILES or sum(b for _, b in counts) > MAX_BYTES:
        return False
    entry = cache.entry(KIND, entry_key)
    try:
        staging = Path(tempfile.mkdtemp(prefix=".new-", dir=entry.parent))
    except OSError:
        return False
    try:
        for name, tree in trees.items():
            _write_tree(tree, staging / name, None)
        _replace(staging, entry)
    except OSError:
        return False  # the judge's disk full: the next run compiles afresh
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    cache.evict(keep=entry)
    return True


# A tree as read: {name: bytes (a file) | tree (a folder)}.
Tree = dict[str, "bytes | Tree"]


def _read_tree(root: Path) -> Tree:
    """The regular files and folders under `root` (itself a folder, not a link), bounded; OSError where `root` is
    not a folder, TooLarge beyond the bounds."""
    fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC)
    budget = {"files": MAX_FILES, "bytes": MAX_BYTES}
    try:
        return _read_folder(fd, 0, budget)
    finally:
        os.close(fd)


def _read_folder(fd: int, depth: int, budget: dict[str, int]) -> Tree:
    if depth > MAX_DEPTH:
        raise TooLarge(f"folders deeper than {MAX_DEPTH}")
    tree: Tree = {}
    for name in sorted(os.listdir(fd)):
        if not _plain_name(name):
            continue
        budget["files"] -= 1
        if budget["files"] < 0:
            raise TooLarge(f"more than {MAX_FILES} files")
        try:
            child = os.open(name, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC, dir_fd=fd)
        except OSError:
            continue  # a link (ELOOP), or gone
        try:
            info = os.fstat(child)
            if stat.S_ISDIR(info.st_mode):
                tree[name] = _read_folder(child, depth + 1, budget)
            elif stat.S_ISREG(info.st_mode):
                budget["bytes"] -= info.st_size
                if budget["bytes"] < 0:
                    raise TooLarge(f"more than {MAX_BYTES >> 20} MiB")
                tree[name] = _read_file(child, info.st_size)
        finally:
            os.close(child)
    return tree


def _read_file(fd: int, size: int) -> bytes:
    """At most `size` bytes (the file may not grow while it is read)."""
    chunks, left = [], size
    while left > 0:
        chunk = os.read(fd, min(left, 1 << 20))
        if not chunk:
            break
        chunks.append(chunk)
        left -= len(chunk)
    return b"".join(chunks)


def _relocate_groups(tree: Tree, folder: Path) -> Tree:
    """The tree, to be written under `folder`, with each Triton group file's paths renamed into `folder`: a path
    becomes the file of the same name beside the group file. A group file that is not such JSON is left as it
    is (Triton then compiles that kernel again)."""
    relocated: Tree = {}
    for name, value in tree.items():
        if not isinstance(value, bytes):
            relocated[name] = _relocate_groups(value, folder / name)
        elif name.startswith(GROUP_PREFIX):
            relocated[name] = _relocated_group(value, folder)
        else:
            relocated[name] = value
    return relocated


def _relocated_group(data: bytes, folder: Path) -> bytes:
    try:
        group = json.loads(data)
        children = {child: str(folder / os.path.basename(path)) for child, path in group["child_paths"].items()}
    except (ValueError, TypeError, KeyError, AttributeError, RecursionError):
        return data
    return json.dumps({**group, "child_paths": children}).encode()


def _plain_name(name: str) -> bool:
    """One path component a folder may hold: not "." nor "..", no separator or NUL, not too long."""
    return (
        name not in ("", ".", "..")
        and "/" not in name
        and "\0" not in name
        and len(os.fsencode(name)) <= MAX_NAME_BYTES
    )


def _count(tree: Tree) -> tuple[int, int]:
    """(files and folders, bytes) of a tree."""
    files = size = 0
    for value in tree.values():
        files += 1
        if isinstance(value, bytes):
            size += len(value)
        else:
            more, more_size = _count(value)
            files, size = files + more, size + more_size
    return files, size


def _write_tree(tree: Tree, folder: Path, uid: int | None) -> int:
    """The tree under `folder` (created; folders 0700, files 0600, owned by `uid` where the grader is root); how
    many files. `folder` is a new path of the grader's choosing: nothing in it is followed."""
    folder.mkdir(mode=0o700, exist_ok=True)
    _own(folder, uid)
    written = 0
    for name, value in tree.items():
        path = folder / name
        if isinstance(value, bytes):
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
            with os.fdopen(fd, "wb") as file:
                file.write(value)
            _own(path, uid)
            written += 1
        else:
            written += _write_tree(value, path, uid)
    return written


def _own(path: Path, uid: int | None) -> None:
    if uid is not None and os.geteuid() == 0:
        os.chown(path, uid, uid, follow_symlinks=False)


def _replace(staging: Path, entry: Path) -> None:
    """`staging` in place of `entry`, by renames within one folder: a grader copying the entry in meanwhile sees
    the old one, none, or the new one. A concurrent grader that placed its own first keeps it."""
    old = entry.with_name(f".old-{entry.name}-{os.getpid()}")
    try:
        entry.rename(old)
    except FileNotFoundError:
        pass
    try:
        staging.rename(entry)
    except OSError:
        pass  # another grader's entry for the same key is as good
    shutil.rmtree(old, ignore_errors=True)
