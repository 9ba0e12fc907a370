"""The build cache: compiled libraries, compile logs and harnesses, keyed by hash of what made them.

Private to the grader: the folders are 0700 and the files 0600, owned by the grader's uid, so that no
submission (which runs as another uid) can load another user's compiled library or read their compile log;
a cache found with looser modes (an older version, a volume made by Docker) is tightened on first use.
Bounded: one entry's file may hold at most MAX_ENTRY_BYTES, and the whole cache MAX_CACHE_BYTES, the least
recently used entries going first (an entry's folder is touched each time it is used). The Python tracks' JIT
caches (grader/run/jit_cache.py) are entries of this cache too, under jit/, each a tree of files.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import tempfile
from pathlib import Path

from grader import settings

MAX_ENTRY_BYTES = 256 << 20  # one library, log or harness
MAX_CACHE_BYTES = 8 << 30  # everything under builds/, runners/ and jit/
KINDS = ("builds", "runners", "jit")


class TooLarge(ValueError):
    """A file larger than the cache takes for one entry."""


def cache_root() -> Path:
    """The cache folder ($KERNELJUDGE_CACHE), created or tightened to 0700."""
    root = Path(settings.CACHE.get())
    _private_folder(root)
    return root


def _private_folder(folder: Path) -> None:
    folder.mkdir(mode=0o700, parents=True, exist_ok=True)
    if folder.stat().st_mode & 0o077:
        folder.chmod(0o700)


def key(*parts: str | bytes) -> str:
    digest = hashlib.sha256()
    for part in parts:
        digest.update(part.encode() if isinstance(part, str) else part)
        digest.update(b"\0")
    return digest.hexdigest()[:32]


def entry(kind: str, name: str) -> Path:
    """The folder of one cache entry (not created)."""
    folder = cache_root() / kind
    _private_folder(folder)
    return folder / name


def lookup(folder: Path, name: str) -> Path | None:
    """The cached file, made private if it was not, and its entry marked as just used; None when absent."""
    path = folder / name
    try:
        info = path.lstat()
    except OSError:
        return None
    if not path.is_file() or path.is_symlink() or info.st_uid != os.geteuid():
        return None
    if info.st_mode & 0o077:
        path.chmod(0o600)
    if folder.stat().st_mode & 0o077:
        folder.chmod(0o700)
    try:
        os.utime(folder)
    except OSError:
        pass
    return path


def store(folder: Path, name: str, data: bytes) -> Path:
    """Write a cache file atomically (concurrent graders may build the same source), 0600, then evict the least
    recently used entries beyond MAX_CACHE_BYTES. TooLarge for more than MAX_ENTRY_BYTES."""
    if len(data) > MAX_ENTRY_BYTES:
        raise TooLarge(f"{len(data) >> 20} MiB is more than the {MAX_ENTRY_BYTES >> 20} MiB a cache entry may hold")
    _private_folder(folder)
    with tempfile.NamedTemporaryFile(dir=folder, delete=False) as tmp:  # created 0600
        tmp.write(data)
    os.replace(tmp.name, folder / name)
    evict(keep=folder)
    return folder / name


def _size(folder: Path) -> int:
    """Bytes of the files under `folder`, at any depth (links not followed)."""
    total = 0
    for parent, _folders, files in os.walk(folder):
        for name in files:
            try:
                total += os.lstat(os.path.join(parent, name)).st_size
            except OSError:
                continue
    return total


def evict(limit: int | None = None, keep: Path | None = None) -> int:
    """Remove least recently used entries until the cache holds at most `limit` bytes (MAX_CACHE_BYTES);
    never `keep`. Returns how many entries went."""
    limit = MAX_CACHE_BYTES if limit is None else limit
    root = cache_root()
    entries = []
    for kind in KINDS:
        try:
            # a name starting with "." is one being written or removed (jit_cache's staging)
            entries += [
                p for p in (root / kind).iterdir() if p.is_dir() and not p.is_symlink() and not p.name.startswith(".")
            ]
        except OSError:
            continue
    sized = []
    for folder in entries:
        try:
            sized.append((folder.stat().st_mtime, _size(folder), folder))
        except OSError:
            continue
    total = sum(size for _used, size, _folder in sized)
    removed = 0
    for _used, size, folder in sorted(sized, key=lambda item: item[0]):
        if total <= limit:
            break
        if keep is not None and folder == keep:
            continue
        shutil.rmtree(folder, ignore_errors=True)
        total -= size
        removed += 1
    return removed
